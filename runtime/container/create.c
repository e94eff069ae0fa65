/* The runtime's side of create: prepare on the host, record, clone, answer the container's
 * requests (maps, hooks), and leave either a created container or nothing at all. */
#include "build.h"

#include "container.h"
#include "create_steps.h"

#include "caps.h"
#include "cgroup_systemd.h"
#include "audit.h"
#include "cleanup.h"
#include "hooks.h"
#include "json.h"
#include "lifecycle.h"
#include "log.h"
#include "lsm.h"
#include "paths.h"
#include "process_attrs.h"
#include "rootfs_overlay.h"
#include "state.h"
#include "activity.h"
#include "cgroup.h"
#include "supervisor.h"
#include "sync.h"
#include "pidfd.h"
#include "proc.h"
#include "rfc3339.h"
#include "unix_socket.h"
#include "fileio.h"

#include <errno.h>
#include <net/if.h>
#include <sched.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <linux/sched.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

/* The OCI state of the container being created. */
static struct sr_oci_state create_state(const struct sr_create_ctx *ctx, const char *status,
                                        pid_t pid)
{
  return (struct sr_oci_state){
      .id = ctx->o->id,
      .status = status,
      .pid = pid,
      .bundle = ctx->o->bundle,
      .rootfs = ctx->rootfs,
      .created = ctx->created,
      .owner = "",
      .annotation_keys = ctx->config->annotation_keys,
      .annotation_values = ctx->config->annotation_values,
      .n_annotations = ctx->config->n_annotations,
  };
}

int sr_create_state_json(const struct sr_create_ctx *ctx, const char *status, pid_t pid,
                         char **out, sr_error_t *err)
{
  struct sr_oci_state s = create_state(ctx, status, pid);
  size_t len;
  return sr_state_json(&s, false, out, &len, err);
}

int sr_create_notify_state_json(const struct sr_create_ctx *ctx, char **out, sr_error_t *err)
{
  struct sr_oci_state s = create_state(ctx, "creating", ctx->host_pid);
  const struct sr_seccomp *sc = ctx->config->linux_.seccomp;
  return sr_state_process_json(&s, ctx->host_pid, sc ? sc->listener_metadata : NULL, out, err);
}

/* linux.resources.devices for the cgroup, with the default nodes (sr_cgroup_create_device_rules:
 * the config's linux.devices may be created, not opened, so a deny-all keeps them out of reach). */
static int device_rules(struct sr_create_ctx *ctx, struct sr_resources *out, sr_error_t *err)
{
  const struct sr_linux *l = &ctx->config->linux_;
  return sr_cgroup_create_device_rules(l->resources, l->devices, l->n_devices, &ctx->config->arena,
                                       out, err);
}

/* A cgroup that existed before the container: a frozen one would freeze the init before it
 * reports (create would wait forever), so it is refused as runc refuses it; one with
 * processes in it is shared with another container or program, which runc only warns about
 * (their limits, and `kill --all` or delete of either, reach both).  made: every directory of
 * it was made by this create (exclusively), so it holds no process to warn about, but it is
 * frozen if its parent is. */
static int check_existing_cgroup(struct sr_create_ctx *ctx, bool made, sr_error_t *err)
{
  bool frozen = false;
  if (sr_cgroup_is_frozen(ctx->cgroup, &frozen, err) < 0)
    return -1;
  if (frozen)
    return sr_error_make(err, 0,
                         "linux.cgroupsPath: the cgroup `%s` is frozen: a container "
                         "cannot be created in a frozen cgroup (thaw it first)",
                         ctx->cgroup->path);
  if (made)
    return 0;
  _cleanup_free_ pid_t *pids = NULL;
  size_t n = 0;
  if (sr_cgroup_pids(ctx->cgroup, &pids, &n, err) < 0)
    return -1;
  if (n > 0)
    sr_warn("container \"%s\": its cgroup `%s` is not empty: %zu process(es) found (pid %d): "
            "it is shared with another container or program",
            ctx->o->id, ctx->cgroup->path, n, (int)pids[0]);
  return 0;
}

/* linux.cgroupsPath names a cgroup that exists: refused under an enforcing profile, audited. */
static int refuse_existing_cgroup(struct sr_create_ctx *ctx, sr_error_t *err)
{
  sr_error_free(err);
  sr_error_policy(err, "linux.cgroupsPath",
                  "linux.cgroupsPath: the cgroup `%s` exists already: under profile \"%s\" a "
                  "container's cgroup must be one seerun creates (joining an existing one, a "
                  "host service's or another container's, would put the container's limits on "
                  "its processes, and kill --all and delete would kill them)",
                  ctx->cgroup->path, ctx->profile ? ctx->profile : "?");
  if (ctx->audit) {
    _cleanup_free_ char *text = sr_error_text(*err);
    char asked[PATH_MAX + 8];
    snprintf(asked, sizeof(asked), "\"%s\"", ctx->cgroup->path);
    sr_error_t e = NULL;
    if (sr_audit_refusal(ctx->audit, "linux.cgroupsPath", asked, text ? text : "", &e) < 0)
      sr_error_free(&e);
  }
  return -1;
}

/* Before the first record: whether a cgroup that must be new is there already, so that the
 * first record can call the cgroup ours (one state write fewer than recording that apart). */
static int precheck_cgroup(struct sr_create_ctx *ctx, sr_error_t *err)
{
  ctx->cgroup_existed = false;
  bool exclusive = ctx->cgroup_must_be_new && !ctx->inv->systemd_cgroup;
  return exclusive ? sr_cgroup_exists(ctx->cgroup, &ctx->cgroup_existed, err) : 0;
}

int sr_create_setup_cgroup(struct sr_create_ctx *ctx, sr_error_t *err)
{
  struct sr_state_record *rec = ctx->container->rec;
  bool exclusive = ctx->cgroup_must_be_new && !ctx->inv->systemd_cgroup;
  /* Refused after publishing, so that a taken id is reported as such first.  The first record
   * (written after precheck_cgroup found no such cgroup) calls it ours before it exists, so
   * that a crash right after mkdir still removes it, and never one that was there before: only
   * host root makes cgroups here, so the mkdir below failing with EEXIST after the check is a
   * host race, refused alike. */
  if (ctx->cgroup_existed)
    return refuse_existing_cgroup(ctx, err);
  ctx->cgroup_attempted = true;
  /* With systemd the scope is made around the first child, once it exists (start_scope). */
  if (ctx->inv->systemd_cgroup)
    return 0;
  bool created = false;
  if (exclusive) {
    if (sr_cgroup_create_new(ctx->cgroup, err) < 0) {
      if ((*err)->status != EEXIST)
        return -1;
      rec->cgroup_created = false; /* not ours: create_abort must leave it */
      sr_error_t e = NULL;
      if (sr_statedir_save(ctx->container, &e) < 0)
        sr_error_free(&e);
      return refuse_existing_cgroup(ctx, err);
    }
    created = true;
  } else if (sr_cgroup_create(ctx->cgroup, &created, err) < 0) {
    return -1;
  }
  SR_KILL_POINT("create.after-cgroup");
  if (!created) {
    rec->cgroup_created = false;
    if (sr_statedir_save(ctx->container, err) < 0)
      return -1;
  }
  if (check_existing_cgroup(ctx, exclusive, err) < 0)
    return -1;
  struct sr_resources res;
  if (device_rules(ctx, &res, err) < 0 ||
      sr_cgroup_apply_resources(ctx->cgroup, &res, false, err) < 0)
    return -1;
  SR_KILL_POINT("create.after-resources");
  return sr_cgroup_open_dir(ctx->cgroup, &ctx->cgroup_dir_fd, err);
}

/* --systemd-cgroup: systemd makes the scope with the first child in it; the resources are then
 * written into it as on cgroupfs (the scope is delegated). */
static int start_scope(struct sr_create_ctx *ctx, pid_t child, sr_error_t *err)
{
  struct sr_systemd_unit u;
  if (sr_systemd_parse(ctx->config->linux_.cgroups_path, ctx->o->id, &u, err) < 0)
    return -1;
  char description[128];
  snprintf(description, sizeof(description), "seerun container %.100s", ctx->o->id);
  int r = sr_systemd_start_scope(&u, child, description, err);
  sr_systemd_unit_release(&u);
  /* On v1 systemd makes the scope only in the hierarchies it manages (not cpuset, freezer,
   * net_cls, ...): the rest are made and joined as on cgroupfs, as runc does.  Where systemd
   * made it already, both steps change nothing. */
  bool created = false;
  struct sr_resources res;
  if (r < 0 || sr_cgroup_create(ctx->cgroup, &created, err) < 0 ||
      sr_cgroup_attach(ctx->cgroup, child, err) < 0 || device_rules(ctx, &res, err) < 0 ||
      sr_cgroup_apply_resources(ctx->cgroup, &res, false, err) < 0)
    return -1;
  return 0;
}

/* Kills what the create made and removes it: processes, cgroup, state. */
/* activity.sock in the container's state directory, for exec's hand-overs: through the
 * directory's descriptor (a path of any length; the directory we hold, not a lookup). */
static int activity_listen(struct sr_create_ctx *ctx, sr_error_t *err)
{
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return sr_error_sys(err, "activity: socket");
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/%s", ctx->container->dirfd,
           SR_ACT_SOCKET);
  if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 16) < 0) {
    sr_error_sys(err, "activity: listen on %s in the state directory", SR_ACT_SOCKET);
    close(fd);
    return -1;
  }
  ctx->activity_listen = fd;
  return 0;
}

/* The cgroup directories the record reads (memory and pids events, the processes). */
static void activity_cgroup(struct sr_create_ctx *ctx, int *memory_fd, int *pids_fd)
{
  struct sr_cg_dir m = {.fd = -1}, p = {.fd = -1};
  sr_error_t e = NULL;
  bool v2 = ctx->cgroup->version == 2;
  if (sr_cgroup_dir_open(&m, SR_CGROUP_ROOT, v2 ? NULL : "memory", ctx->cgroup->path, &e) < 0)
    sr_error_free(&e);
  if (sr_cgroup_dir_open(&p, SR_CGROUP_ROOT, v2 ? NULL : "pids", ctx->cgroup->path, &e) < 0)
    sr_error_free(&e);
  *memory_fd = m.fd;
  *pids_fd = p.fd;
}

/* The cgroup's pids.max, as the kernel has it now; 0: none (or not readable). */
static uint64_t pids_limit(int pids_dirfd)
{
  char buf[32];
  size_t len = 0;
  sr_error_t e = NULL;
  if (pids_dirfd < 0 ||
      sr_fileio_read_small_at(pids_dirfd, "pids.max", buf, sizeof(buf), &len, &e) < 0) {
    sr_error_free(&e);
    return 0;
  }
  char *end = NULL;
  unsigned long long v = strtoull(buf, &end, 10);
  return end != buf && (*end == '\n' || *end == '\0') ? v : 0;
}

/* What the supervisor opens for the activity record, in its own process right after the fork
 * (supervisor.h: while create goes on), before it is ready: the socket for exec's hand-overs,
 * the proc connector (CAP_NET_ADMIN, which it drops later), the writable places. */
static int prepare_activity(void *data, struct sr_supervisor_config *sc, sr_error_t *err)
{
  static struct sr_act_places places; /* the supervisor's: sc->places points here */
  struct sr_create_ctx *ctx = data;
  if (activity_listen(ctx, err) < 0)
    return -1;
  sc->activity_listen = ctx->activity_listen;
  /* The programs executed, for the init's pid namespace.  Without one, not watched. */
  char ns[64];
  struct stat st;
  snprintf(ns, sizeof(ns), "/proc/%d/ns/pid", ctx->init_pid);
  sr_error_t e = NULL;
  /* Followed in the kernel where eBPF can (none of the host's other processes wakes the
   * supervisor then); else by the events and the pid namespace. */
  if (stat(ns, &st) == 0 && sr_activity_exec_socket(&sc->exec_fd, ctx->init_pid,
                                                    pids_limit(sc->cg_pids_fd),
                                                    &sc->exec_map_fd, &e) == 0)
    sc->pidns = (uint64_t)st.st_ino;
  sr_error_free(&e);
  /* Files changed: the writable places, opened before any of the container's code has run
   * (activity_files.h).  Without them the record says so. */
  places = (struct sr_act_places){.mntns_fd = -1};
  if (sr_activity_places_open(ctx->init_pid, ctx->init_pidfd, ctx->activity_outputs, &places,
                              &e) == 0)
    sc->places = &places;
  else
    sc->files_unseen = "the container's mount table could not be read at create";
  for (size_t i = 0; sc->places && i < ctx->n_activity_places; i++) {
    const struct sr_act_place_in *x = &ctx->activity_places[i];
    int fd = fcntl(x->fd, F_DUPFD_CLOEXEC, 3);
    int lower = x->lower_fd >= 0 ? fcntl(x->lower_fd, F_DUPFD_CLOEXEC, 3) : -1;
    bool dup_failed = fd < 0 || (x->lower_fd >= 0 && lower < 0);
    if (dup_failed) {
      if (fd >= 0)
        close(fd);
      if (lower >= 0)
        close(lower);
    }
    /* sr_activity_places_add takes both descriptors over, also when it fails. */
    if (dup_failed ||
        sr_activity_places_add(&places, x->label, x->kind, x->role, fd, lower, &e) < 0) {
      sr_activity_places_close(&places);
      sc->places = NULL;
      sc->files_unseen = "a place the caller named could not be opened";
    }
  }
  sr_error_free(&e);
  return 0;
}

/* The container's supervisor, serving its egress proxy and keeping its activity record from
 * outside: started once the init's network namespace exists, recorded before the container is
 * "created" (and ready before create returns: sr_create).  It ends with the init; delete stops
 * it too. */
static int start_supervisor(struct sr_create_ctx *ctx, sr_error_t *err)
{
  struct sr_supervisor_config sc = {
      .audit = ctx->audit,
      .profile = ctx->profile,
      .egress = ctx->egress_proxy ? ctx->egress : NULL,
      .narrow = ctx->egress_narrow,
      .n_narrow = ctx->n_egress_narrow,
      .extra = ctx->egress_extra,
      .n_extra = ctx->n_egress_extra,
      .init_pidfd = ctx->init_pidfd,
      .activity = ctx->activity,
      .activity_sock = ctx->activity_sock[0],
      .activity_listen = -1,
      .state_dirfd = -1,
      .cg_memory_fd = -1,
      .cg_pids_fd = -1,
      .exec_fd = -1,
      .exec_map_fd = -1,
      .init_pid = ctx->init_pid,
      .seccomp_unseen = ctx->activity_unseen,
      .prepare = ctx->activity ? prepare_activity : NULL,
      .prepare_data = ctx,
  };
  /* Where the supervisor leaves its records (egress.json, activity.json): a file of its own
   * (the directory's descriptor carries the container's lock (flock), which a copy held by the
   * supervisor would keep for as long as it lives). */
  sc.state_dirfd = openat(ctx->container->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (sc.state_dirfd < 0)
    return sr_error_sys(err, "supervisor: open the state directory");
  if (ctx->activity)
    activity_cgroup(ctx, &sc.cg_memory_fd, &sc.cg_pids_fd);
  struct sr_state_record *rec = ctx->container->rec;
  int r = sr_supervisor_start(&sc, &rec->supervisor_pid, &rec->supervisor_start,
                              &ctx->supervisor_ready, err);
  if (sc.cg_memory_fd >= 0)
    close(sc.cg_memory_fd);
  if (sc.cg_pids_fd >= 0)
    close(sc.cg_pids_fd);
  close(sc.state_dirfd);
  if (r < 0)
    return sr_error_wrap(err, ctx->egress_proxy ? "egress proxy" : "activity record");
  ctx->supervisor_pid = rec->supervisor_pid;
  rec->egress_proxy = ctx->egress_proxy;
  rec->supervisor_activity = ctx->activity;
  /* No kill point: a create killed from here on leaves a supervisor that ends with the init,
   * which delete --force kills. */
  return 0;
}

void sr_create_abort(struct sr_create_ctx *ctx)
{
  sr_error_t e = NULL;
  pid_t pids[2] = {ctx->init_pid, ctx->child_pid};
  for (int i = 0; i < 2; i++)
    if (pids[i] > 0)
      kill(pids[i], SIGKILL);
  for (int i = 0; i < 2; i++)
    if (pids[i] > 0)
      while (waitpid(pids[i], NULL, 0) < 0 && errno == EINTR)
        ;
  /* After the init: it then ends by itself. */
  if (ctx->supervisor_pid > 0)
    sr_supervisor_stop(ctx->supervisor_pid, ctx->container->rec->supervisor_start,
                       ctx->activity ? ctx->container->dirfd : -1);
  bool systemd = ctx->inv->systemd_cgroup;
  if (ctx->cgroup && ctx->container && ctx->container->rec->cgroup_created &&
      ctx->cgroup_attempted &&
      (sr_cgroup_destroy(ctx->cgroup, !systemd, &e) < 0 ||
       (systemd && (sr_systemd_stop_scope_of(ctx->cgroup->path, &e) < 0 ||
                    sr_cgroup_destroy(ctx->cgroup, true, &e) < 0)))) {
    _cleanup_free_ char *t = sr_error_text(e);
    sr_warn("cleanup after a failed create: %s", t ? t : "");
    sr_error_free(&e);
  }
  if (ctx->container && sr_statedir_remove_dir(ctx->container, &e) < 0) {
    _cleanup_free_ char *t = sr_error_text(e);
    sr_warn("cleanup after a failed create: %s", t ? t : "");
    sr_error_free(&e);
  }
}

static pid_t clone_child(struct sr_create_ctx *ctx, sr_error_t *err)
{
  int pidfd = -1;
  struct clone_args args = {
      .flags = (uint64_t)(ctx->ns.two_step ? 0 : ctx->ns.clone_flags) | CLONE_PIDFD,
      .pidfd = (uint64_t)(uintptr_t)&pidfd,
      .exit_signal = SIGCHLD,
  };
  if (ctx->cgroup_dir_fd >= 0) {
    args.flags |= CLONE_INTO_CGROUP;
    args.cgroup = (uint64_t)ctx->cgroup_dir_fd;
  }
  /* Buffered output must not be written twice, by us and by the child. */
  fflush(NULL);
  pid_t pid = (pid_t)syscall(SYS_clone3, &args, sizeof(args));
  if (pid < 0)
    return sr_error_sys(err, "clone the container process (namespaces %#llx)",
                        (unsigned long long)args.flags);
  if (pid == 0) {
    if (ctx->ns.two_step)
      sr_init_intermediate_main(ctx);
    sr_init_main(ctx, false);
  }
  ctx->child_pid = pid;
  if (!ctx->ns.two_step) {
    ctx->init_pid = pid;
    ctx->init_pidfd = pidfd;
  } else
    close(pidfd);
  return pid;
}

/* The image's files keep their owners inside where the root filesystem can be idmapped; where
 * it cannot, host-owned files appear as nobody, which is recorded. */
static int idmap_rootfs(struct sr_create_ctx *ctx, pid_t pid, sr_error_t *err)
{
  if (ctx->rootfs_tree_fd < 0 || ctx->rootfs_idmapped || !ctx->rootfs_idmap_wanted)
    return 0;
  sr_error_t e = NULL;
  if (sr_mount_rootfs_idmap(ctx->rootfs_tree_fd, pid, &e) == 0) {
    const char *fields[] = {"field", "root.path", "applied", "idmapped to the container's user "
                            "namespace", NULL};
    return sr_audit_event(ctx->audit, "rootfs-idmap", fields, err);
  }
  /* The clone stays: the tree judged is the tree the init gets, idmapped or not. */
  _cleanup_free_ char *why = sr_error_text(e);
  sr_error_free(&e);
  const char *fields[] = {"field", "root.path", "applied", "unmapped: host-owned files appear as "
                          "nobody", "reason", why ? why : "", NULL};
  return sr_audit_event(ctx->audit, "rootfs-unmapped", fields, err);
}

static int map_userns(struct sr_create_ctx *ctx, pid_t pid, sr_error_t *err)
{
  if (sr_ns_userns_write_maps(pid, &ctx->config->linux_, err) < 0 ||
      idmap_rootfs(ctx, pid, err) < 0)
    return -1;
  return sr_mount_binds_idmap(&ctx->binds, ctx->config, pid, err);
}

/* Each hook is judged again from the descriptor it is executed by: the policy's decision
 * was about what the path opened then, and the path may name another file now. */
static struct sr_hook_gate hook_gate(const struct sr_create_ctx *ctx)
{
  return (struct sr_hook_gate){.profile = ctx->hook_profile,
                               .audit = ctx->audit,
                               .places = {ctx->o->bundle, ctx->rootfs, ctx->inv->root}};
}

static int run_runtime_hooks(struct sr_create_ctx *ctx, sr_error_t *err)
{
  const struct sr_hooks *h = &ctx->config->hooks;
  if (h->n[SR_HOOK_PRESTART] == 0 && h->n[SR_HOOK_CREATE_RUNTIME] == 0)
    return 0;
  _cleanup_free_ char *state = NULL;
  /* runtime.md: "created" is after step 2 (the environment made); these hooks are steps 3
   * and 4 (crun says "created" too; runc says "creating"). */
  if (sr_create_state_json(ctx, "created", ctx->init_pid, &state, err) < 0)
    return -1;
  struct sr_hook_gate gate = hook_gate(ctx);
  if (sr_hooks_run(h, SR_HOOK_PRESTART, &gate, state, err) < 0 ||
      sr_hooks_run(h, SR_HOOK_CREATE_RUNTIME, &gate, state, err) < 0)
    return -1;
  return 0;
}

/* The init runs the createContainer hooks in the container's user namespace, where host files
 * are not what they are on the host (root's show as nobody's): the parent judges and opens
 * them, and the init executes those descriptors. */
static int prepare_container_hooks(struct sr_create_ctx *ctx, sr_error_t *err)
{
  struct sr_hook_gate gate = hook_gate(ctx);
  return sr_hooks_prepare(&ctx->config->hooks, SR_HOOK_CREATE_CONTAINER, &gate,
                          &ctx->container_hooks, err);
}

/* A container without a network grant must still have only loopback after the hooks ran
 * (Docker, CNI and others connect networks from hooks): a child enters its network namespace
 * and lists the interfaces. */
static int check_loopback_only(struct sr_create_ctx *ctx, sr_error_t *err)
{
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) < 0)
    return sr_error_sys(err, "pipe");
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return sr_error_sys(err, "fork");
  }
  if (pid == 0) {
    close(fds[0]);
    if (setns(ctx->init_pidfd, CLONE_NEWNET) < 0)
      _exit(2);
    struct if_nameindex *ifs = if_nameindex();
    if (ifs == NULL)
      _exit(2);
    int others = 0;
    for (struct if_nameindex *i = ifs; i->if_index; i++)
      if (strcmp(i->if_name, "lo") != 0) {
        dprintf(fds[1], "%s%s", others ? ", " : "", i->if_name);
        others++;
      }
    _exit(others ? 1 : 0);
  }
  close(fds[1]);
  char names[512] = "";
  ssize_t n = read(fds[0], names, sizeof(names) - 1);
  names[n > 0 ? n : 0] = '\0';
  close(fds[0]);
  int status;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
    ;
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
    return 0;
  if (WIFEXITED(status) && WEXITSTATUS(status) == 1)
    return sr_error_make(err, 0, "policy \"%s\": the container has no network grant, but after "
                                 "the hooks its network namespace has interfaces besides lo: %s",
                         ctx->profile, names);
  return sr_error_make(err, 0, "check the container's network interfaces: failed");
}

/* On the two-step path the init (CLONE_PARENT) holds the children's end of the channel too,
 * and waits for us: an intermediate that dies before it sends the init's pid would leave the
 * channel open and create waiting forever.  So its exit is watched as well. */
static int recv_from_intermediate(int fd, int pidfd, struct sr_sync_msg *m, sr_error_t *err)
{
  struct pollfd p[2] = {{fd, POLLIN, 0}, {pidfd, POLLIN, 0}};
  while (poll(p, pidfd >= 0 ? 2 : 1, -1) < 0)
    if (errno != EINTR)
      return sr_error_sys(err, "sync: poll");
  if (!(p[0].revents & (POLLIN | POLLHUP | POLLERR)))
    return sr_error_peer_gone(err, "the container process exited during setup");
  return sr_sync_recv(fd, m, err);
}

/* Talks the container processes through their setup, up to "ready". */
static int drive_children(struct sr_create_ctx *ctx, sr_error_t *err)
{
  int fd = ctx->sync[0];
  pid_t child = ctx->child_pid;
  if (ctx->inv->systemd_cgroup) {
    if (start_scope(ctx, child, err) < 0)
      return -1;
  } else if (ctx->cgroup_dir_fd < 0 && sr_cgroup_attach(ctx->cgroup, child, err) < 0)
    return -1;
  if (!ctx->ns.two_step && ctx->ns.new_userns && map_userns(ctx, child, err) < 0)
    return -1;
  SR_KILL_POINT("create.before-go");
  if (sr_sync_send(fd, SYNC_GO, 0, err) < 0)
    return -1;
  if (ctx->ns.two_step) {
    struct sr_sync_msg m;
    _cleanup_close_ int child_pidfd = sr_pidfd_open(child);
    for (;;) {
      if (recv_from_intermediate(fd, child_pidfd, &m, err) < 0)
        return -1;
      if (m.type == SYNC_USERNS_READY) {
        if (map_userns(ctx, child, err) < 0 || sr_sync_send(fd, SYNC_USERNS_DONE, 0, err) < 0)
          return -1;
        SR_KILL_POINT("create.after-maps");
      } else if (m.type == SYNC_INIT_PID) {
        ctx->init_pid = m.value;
        break;
      } else
        return sr_error_make(err, 0, "sync: unexpected message %u from the intermediate", m.type);
    }
    int status;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR)
      ;
    ctx->child_pid = 0;
    /* The fast path has it from clone; `run` waits on it and the network check enters it. */
    ctx->init_pidfd = sr_pidfd_open(ctx->init_pid);
    if (ctx->init_pidfd < 0)
      return sr_error_sys(err, "pidfd_open %d", ctx->init_pid);
    SR_KILL_POINT("create.after-intermediate");
  }
  struct sr_state_record *rec = ctx->container->rec;
  rec->pid = ctx->init_pid;
  if (sr_proc_stat(ctx->init_pid, &rec->pid_start, NULL) < 0)
    return sr_error_sys(err, "read the start time of the container process %d", ctx->init_pid);
  /* Seen now, for kill and delete to check later that the pid they act on is still in it. */
  rec->own_userns = !sr_container_pid_userns_is_ours(ctx->init_pid);
  if (sr_statedir_save(ctx->container, err) < 0)
    return -1;
  SR_KILL_POINT("create.after-init-pid");
  if (sr_process_attrs_set_oom_score_adj(ctx->config->process, ctx->init_pid, err) < 0)
    return -1;
  /* In a user namespace (new or joined) the init opens the fifo as the container's root. */
  if (ctx->config->linux_.namespaces[SR_NS_USER].present &&
      sr_ns_userns_chown_to_root(ctx->init_pid, ctx->container->dirfd, "exec.fifo", err) < 0)
    return -1;
  if (sr_sync_send(fd, SYNC_INIT_INFO, ctx->init_pid, err) < 0 ||
      sr_sync_expect(fd, SYNC_HOOKS, NULL, err) < 0)
    return -1;
  if (run_runtime_hooks(ctx, err) < 0)
    return -1;
  SR_KILL_POINT("create.after-runtime-hooks");
  const struct sr_hooks *h = &ctx->config->hooks;
  const struct sr_namespace *net = &ctx->config->linux_.namespaces[SR_NS_NET];
  bool may_have_changed = h->n[SR_HOOK_PRESTART] || h->n[SR_HOOK_CREATE_RUNTIME] || net->path;
  if (ctx->profile && !ctx->network_granted && net->present && may_have_changed &&
      check_loopback_only(ctx, err) < 0)
    return -1;
  if (sr_sync_send(fd, SYNC_HOOKS_DONE, 0, err) < 0 || sr_sync_expect(fd, SYNC_READY, NULL, err) < 0)
    return -1;
  SR_KILL_POINT("create.after-ready");
  return 0;
}

static bool under_dir(const char *path, const char *dir)
{
  size_t l = strlen(dir);
  while (l > 1 && dir[l - 1] == '/')
    l--;
  return strcmp(dir, "/") == 0 ||
         (strncmp(path, dir, l) == 0 && (path[l] == '/' || path[l] == '\0'));
}

/* A root filesystem that cannot be idmapped keeps its host owners, which the container's root
 * cannot write: the mount points it lacks are made now, as host root, inside it (resolved in
 * the root: never outside).  Those below another mount of the config are that mount's. */
static int precreate_mountpoints(struct sr_create_ctx *ctx, sr_error_t *err)
{
  const struct sr_config *c = ctx->config;
  int root = ctx->host.root_fd; /* the root the policy judged */
  for (size_t i = 0; i < c->n_mounts; i++) {
    const struct sr_mount *m = &c->mounts[i];
    bool below_earlier = false;
    for (size_t j = 0; j < i && !below_earlier; j++)
      below_earlier = under_dir(m->destination, c->mounts[j].destination);
    if (below_earlier)
      continue;
    bool file = (m->opts.bind || m->opts.rbind) && i < ctx->binds.n && !ctx->binds.is_dir[i];
    _cleanup_close_ int fd = -1;
    if (sr_paths_mkpath_in_root(root, m->destination, file ? SR_MKPATH_FILE : SR_MKPATH_DIR, &fd,
                                err) < 0)
      return sr_error_wrap(err, "%s: mount point", m->field);
  }
  return 0;
}

/* The engine's overlay root: the mount points first (as host root, through the engine's
 * overlay: the container's root could not make them in the read-only root), then the root
 * rebuilt read-only from idmapped layers; where that cannot be done (a writable root, an older
 * kernel, layers on a filesystem without idmapped mounts), the engine's overlay as it is, its
 * host-owned files appearing as nobody, on record. */
static int prepare_overlay_rootfs(struct sr_create_ctx *ctx, sr_error_t *err)
{
  if (precreate_mountpoints(ctx, err) < 0)
    return -1;
  _cleanup_error_ sr_error_t e = NULL;
  if (!ctx->config->root_readonly)
    sr_error_make(&e, 0, "a writable overlay root cannot be rebuilt while the engine's overlay "
                         "holds its upper directory");
  else if (sr_rootfs_overlay_idmapped(ctx->rootfs, ctx->host.root_fd, &ctx->config->linux_,
                                      &ctx->rootfs_tree_fd, &e) == 0) {
    ctx->rootfs_idmapped = true;
    const char *fields[] = {"field", "root.path", "applied", "overlay rebuilt read-only from "
                            "layers idmapped to the container's user namespace", NULL};
    return sr_audit_event(ctx->audit, "rootfs-idmap", fields, err);
  }
  _cleanup_free_ char *why = sr_error_text(e);
  const char *fields[] = {"field", "root.path", "applied", "unmapped: host-owned files appear "
                          "as nobody", "reason", why ? why : "", NULL};
  return sr_audit_event(ctx->audit, "rootfs-unmapped", fields, err);
}

/* A container process that died without a word was killed or exited: say how, and name the
 * memory limit, the usual reason for a SIGKILL (the OOM killer). */
static void explain_setup_death(struct sr_create_ctx *ctx, sr_error_t *err)
{
  const struct sr_resources *r = ctx->config->linux_.resources;
  char hint[128] = "";
  if (r && r->memory.limit.set && r->memory.limit.v > 0)
    snprintf(hint, sizeof(hint), "out of memory? (linux.resources.memory.limit is %lld bytes)",
             (long long)r->memory.limit.v);
  sr_sync_explain_exit(err, ctx->child_pid > 0 ? ctx->child_pid : ctx->init_pid,
                       hint[0] ? hint : NULL);
}

int sr_create_console_connect(struct sr_create_ctx *ctx, sr_error_t *err)
{
  /* Resolved once, first of all, and held: the name is not looked up again after the policy,
   * the binds and the cgroup (a path component swapped meanwhile would get the pty master and
   * a connection from host root). */
  if (ctx->o->console_socket == NULL || ctx->console_fd >= 0)
    return 0;
  return sr_unix_socket_connect_once(ctx->o->console_socket, "--console-socket", &ctx->console_fd,
                                     &ctx->console_name, err);
}

int sr_create_prepare(struct sr_create_ctx *ctx, sr_error_t *err)
{
  const struct sr_config *c = ctx->config;
  if (c->process == NULL)
    return sr_error_make(err, 0, "config.json: process: required to create a container");
  /* Here, not in the init: the runtime's log is the engine's, the init's stderr the
   * container's. */
  sr_caps_warn_ungrantable(c->process);
  sr_lsm_log_ignored(c->process);
  if (c->process->terminal && ctx->console_fd < 0 && ctx->o->console_socket == NULL)
    return sr_error_make(err, 0, "cannot allocate a terminal without --console-socket "
                                 "(process.terminal is true)");
  if (c->root_path[0] == '/')
    ctx->rootfs = strdup(c->root_path);
  else if (asprintf(&ctx->rootfs, "%s/%s", ctx->o->bundle, c->root_path) < 0)
    ctx->rootfs = NULL;
  if (ctx->rootfs == NULL)
    return sr_error_make(err, ENOMEM, "root.path");
  /* The root the policy judged, opened once (O_DIRECTORY) by the policy's facts: never looked
   * up by name again (a rootfs swapped for a symlink to / after the check). */
  if (ctx->host.root_fd < 0)
    return sr_error_make(err, ctx->host.root_errno ? ctx->host.root_errno : EBADF,
                         "root.path `%s`", ctx->rootfs);
  bool userns = c->linux_.namespaces[SR_NS_USER].present;
  /* Without a mount namespace (permissive only) the config's mounts and devices are not made:
   * they would land on the host's and outlive the container. */
  bool own_mounts = c->linux_.namespaces[SR_NS_MOUNT].present;
  if (!own_mounts && (c->n_mounts || c->linux_.n_devices))
    sr_warn("linux.namespaces: no mount namespace: the container has the runtime's mounts "
            "(its root is root.path, by chroot); mounts and linux.devices are not made");
  if (sr_ns_plan_make(&c->linux_, &(struct sr_ns_opened){ctx->host.ns_fd, ctx->host.ns_error},
                      &ctx->ns, err) < 0 ||
      sr_ns_check_names(c, &ctx->ns, err) < 0 ||
      (own_mounts &&
       (sr_mount_binds_prepare(c,
                               &(struct sr_bind_sources){ctx->host.mount_fd, ctx->host.mount_errno,
                                                         ctx->host.n_mounts, ctx->host.path_fd,
                                                         ctx->host.path_errno, ctx->host.n_paths,
                                                         ctx->o->bundle},
                               &ctx->binds, err) < 0 ||
        sr_devices_prepare(c, userns, &ctx->devs, err) < 0)))
    return -1;
  _cleanup_free_ char *cgpath = NULL;
  if (sr_cgroup_resolve_path(c->linux_.cgroups_path, ctx->o->id, ctx->inv->systemd_cgroup, &cgpath,
                             err) < 0 ||
      sr_cgroup_new(SR_CGROUP_ROOT, cgpath, &ctx->cgroup, err) < 0)
    return -1;
  if (ctx->o->console_socket && ctx->console_fd < 0 &&
      sr_create_console_connect(ctx, err) < 0)
    return -1;
  if (ctx->o->console_socket) {
    const char *fields[] = {"path", ctx->o->console_socket, "resolved",
                            ctx->console_name ? ctx->console_name : "", NULL};
    if (sr_audit_event(ctx->audit, "console-socket", fields, err) < 0)
      return -1;
  }
  /* A plain directory is idmapped once the user namespace exists; overlayfs (the engines'
   * image layers) cannot be, so it is rebuilt from idmapped layers here. */
  struct statfs sfs;
  if (own_mounts && ctx->ns.new_userns && !ctx->rootfs_no_idmap &&
      fstatfs(ctx->host.root_fd, &sfs) == 0 && sfs.f_type == OVERLAYFS_SUPER_MAGIC &&
      prepare_overlay_rootfs(ctx, err) < 0)
    return -1;
  /* Otherwise a detached clone of the very tree the policy judged; the init attaches it. */
  if (own_mounts && ctx->rootfs_tree_fd < 0) {
    if (sr_mount_rootfs_prepare_tree(ctx->host.root_fd, ctx->rootfs, &ctx->rootfs_tree_fd, err) < 0)
      return -1;
    ctx->rootfs_idmap_wanted = ctx->ns.new_userns && !ctx->rootfs_no_idmap &&
                               !(fstatfs(ctx->host.root_fd, &sfs) == 0 &&
                                 sfs.f_type == OVERLAYFS_SUPER_MAGIC);
  }
  const struct sr_seccomp *sc = c->linux_.seccomp;
  if (sc && sc->uses_notify) {
    /* Through the descriptor the policy judged: the name may point elsewhere by now. */
    if (ctx->host.listener_fd < 0)
      return sr_error_make(err, ctx->host.listener_errno, "linux.seccomp.listenerPath `%s`",
                           sc->listener_path ? sc->listener_path : "");
    char via[64];
    snprintf(via, sizeof(via), "/proc/self/fd/%d", ctx->host.listener_fd);
    if (sr_unix_socket_connect(via, "linux.seccomp.listenerPath", &ctx->notify_fd, err) < 0)
      return sr_error_wrap(err, "linux.seccomp.listenerPath `%s`", sc->listener_path);
  }
  return 0;
}

int sr_create_record_begin(struct sr_create_ctx *ctx, int rootfd, sr_error_t *err)
{
  if (precheck_cgroup(ctx, err) < 0)
    return -1;
  _cleanup_record_ struct sr_state_record *rec = sr_state_record_new();
  if (rec == NULL)
    return sr_error_make(err, ENOMEM, "state");
  struct sr_arena *a = &rec->arena;
  sr_rfc3339_now(ctx->created, sizeof(ctx->created));
  rec->id = sr_arena_strdup(a, ctx->o->id);
  rec->bundle = sr_arena_strdup(a, ctx->o->bundle);
  rec->rootfs = sr_arena_strdup(a, ctx->rootfs);
  rec->created = sr_arena_strdup(a, ctx->created);
  rec->owner = "";
  rec->phase = SR_PHASE_CREATING;
  rec->creator_pid = getpid();
  if (sr_proc_stat(rec->creator_pid, &rec->creator_start, NULL) < 0)
    return sr_error_sys(err, "read own start time");
  rec->cgroup_version = ctx->cgroup->version;
  rec->cgroup_path = sr_arena_strdup(a, ctx->cgroup->path);
  rec->cgroup_created = !ctx->cgroup_existed; /* see sr_create_setup_cgroup */
  rec->systemd_cgroup = ctx->inv->systemd_cgroup;
  if (ctx->profile) {
    rec->profile = sr_arena_strdup(a, ctx->profile);
    rec->network_granted = ctx->network_granted;
    rec->builtin_seccomp = ctx->builtin_seccomp;
    rec->landlock_abi = ctx->landlock.abi;
    const struct sr_capabilities *caps = ctx->config->process->capabilities;
    rec->has_decided_caps = true;
    for (int i = 0; i < SR_CAP_SET_COUNT; i++)
      rec->decided_caps[i] = caps ? caps->sets[i] : 0;
  }
  char digest[65];
  sr_container_config_digest_hex(ctx->config_text ? ctx->config_text : "", ctx->config_len, digest);
  rec->config_digest = sr_arena_strdup(a, digest);
  rec->annotation_keys = ctx->config->annotation_keys;
  rec->annotation_values = ctx->config->annotation_values;
  rec->n_annotations = ctx->config->n_annotations;
  struct stat lst;
  if (ctx->host.listener_fd >= 0 && fstat(ctx->host.listener_fd, &lst) == 0) {
    rec->listener_dev = lst.st_dev;
    rec->listener_ino = lst.st_ino;
  }
  if (rec->id == NULL || rec->bundle == NULL || rec->rootfs == NULL || rec->created == NULL ||
      rec->cgroup_path == NULL || rec->config_digest == NULL)
    return sr_error_make(err, ENOMEM, "state");
  if (sr_statedir_begin(rootfd, ctx->o->id, rec, ctx->config_text, ctx->config_len, &ctx->container,
                        err) < 0)
    return -1;
  ctx->container->rec = steal_ptr(rec);
  return 0;
}

/* The config's seccomp filter, compiled here (or read from the cache under the state root):
 * the container process only loads it, with no libseccomp and no directory of ours. */
static int prepare_seccomp(struct sr_create_ctx *ctx, int rootfd, sr_error_t *err)
{
  _cleanup_close_ int cache = ctx->config->linux_.seccomp ? sr_seccomp_cache_open(rootfd) : -1;
  return sr_seccomp_cache_prepare(ctx->config->linux_.seccomp, cache, &ctx->seccomp_prog, err);
}

/* The steps after the container directory is published, up to the record of a created
 * container; on failure the caller undoes them all (sr_create_abort). */
static int create_published(struct sr_create_ctx *ctx, sr_error_t *err)
{
  int dirfd = ctx->container->dirfd;
  if (mkfifoat(dirfd, "exec.fifo", 0600) < 0)
    return sr_error_sys(err, "create exec.fifo");
  ctx->fifo_fd = openat(dirfd, "exec.fifo", O_PATH | O_CLOEXEC);
  if (ctx->fifo_fd < 0)
    return sr_error_sys(err, "open exec.fifo");
  SR_KILL_POINT("create.after-fifo");

  if (sr_create_setup_cgroup(ctx, err) < 0 || sr_sync_pair(ctx->sync, err) < 0 ||
      prepare_container_hooks(ctx, err) < 0)
    return -1;
  /* The init hands its seccomp listener over on this pair at start (activity.h). */
  if (ctx->activity &&
      socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ctx->activity_sock) < 0)
    return sr_error_sys(err, "activity: socketpair");
  if (clone_child(ctx, err) < 0)
    return -1;
  SR_KILL_POINT("create.after-clone");
  close(ctx->sync[1]);
  ctx->sync[1] = -1;
  if (drive_children(ctx, err) < 0) {
    explain_setup_death(ctx, err);
    return -1;
  }
  if (ctx->o->pid_file && sr_statedir_write_pid_file(ctx->o->pid_file, ctx->init_pid, err) < 0)
    return -1;
  SR_KILL_POINT("create.after-pid-file");
  if ((ctx->egress_proxy || ctx->activity) && start_supervisor(ctx, err) < 0)
    return -1;
  ctx->container->rec->phase = SR_PHASE_CREATED;
  ctx->container->rec->creator_pid = 0;
  if (sr_statedir_save(ctx->container, err) < 0)
    return -1;
  /* The supervisor's baseline, taken meanwhile, before the container is ours no more: the
   * lock we hold keeps `start` out until create returns. */
  if (ctx->supervisor_ready >= 0 &&
      sr_supervisor_ready(ctx->supervisor_pid, &ctx->supervisor_ready, err) < 0)
    return sr_error_wrap(err, ctx->egress_proxy ? "egress proxy" : "activity record");
  return 0;
}

int sr_create(struct sr_create_ctx *ctx, sr_error_t *err)
{
  if (sr_create_prepare(ctx, err) < 0)
    return -1;
  _cleanup_close_ int rootfd = -1;
  if (sr_statedir_open_root(ctx->inv->root, true, &rootfd, err) < 0)
    return -1;
  if (prepare_seccomp(ctx, rootfd, err) < 0 || sr_create_record_begin(ctx, rootfd, err) < 0)
    return -1;
  /* The container holds the state root now (sr_create_ctx_release closes it). */
  rootfd = -1;
  SR_KILL_POINT("create.after-publish");
  /* From here on the container directory exists: any failure removes everything. */
  if (create_published(ctx, err) < 0) {
    sr_create_abort(ctx);
    return -1;
  }
  SR_KILL_POINT("create.after-created");
  return 0;
}

void sr_create_ctx_release(struct sr_create_ctx *ctx)
{
  int *fds[] = {&ctx->sync[0],    &ctx->sync[1],         &ctx->fifo_fd,
                &ctx->console_fd, &ctx->notify_fd,       &ctx->cgroup_dir_fd,
                &ctx->init_pidfd, &ctx->rootfs_tree_fd, &ctx->activity_sock[0],
                &ctx->activity_sock[1], &ctx->activity_listen, &ctx->supervisor_ready};
  for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
    if (*fds[i] >= 0) {
      close(*fds[i]);
      *fds[i] = -1;
    }
  free(ctx->console_name);
  ctx->console_name = NULL;
  sr_ns_plan_close(&ctx->ns);
  sr_mount_bind_plan_close(&ctx->binds);
  sr_policy_facts_objects_close(&ctx->host);
  sr_devices_plan_close(&ctx->devs);
  if (ctx->cgroup)
    sr_cgroup_free(ctx->cgroup);
  ctx->cgroup = NULL;
  if (ctx->container) {
    int rootfd = ctx->container->rootfd;
    sr_statedir_free(ctx->container);
    if (rootfd >= 0)
      close(rootfd);
  }
  ctx->container = NULL;
  sr_seccomp_cache_prog_release(&ctx->seccomp_prog);
  sr_hooks_batch_release(&ctx->container_hooks);
  free(ctx->rootfs);
  ctx->rootfs = NULL;
  if (ctx->config)
    sr_config_free(ctx->config);
  ctx->config = NULL;
  free(ctx->config_text);
  ctx->config_text = NULL;
}
