/* The container's side of create: the intermediate (two-step path only) and the init, which
 * sets up the container from inside its namespaces, waits for start, and execs the process. */
#include "build.h"

#include "container.h"

#include "caps.h"
#include "cleanup.h"
#include "hooks.h"
#include "landlock.h"
#include "log.h"
#include "loopback.h"
#include "mounts.h"
#include "passwd.h"
#include "paths.h"
#include "process_attrs.h"
#include "process_exec.h"
#include "sync.h"
#include "terminal.h"
#include "fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/keyctl.h>
#include <linux/magic.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The child's last word: the error goes to the parent, then the child exits. */
__attribute__((noreturn)) static void child_fail(int sync_fd, sr_error_t *err)
{
  sr_sync_send_error(sync_fd, *err);
  _exit(1);
}

/* The parent's descriptors that the container's processes must not hold: the state directory
 * (its flock would outlive the create, blocking every later command on the container). */
static void close_parent_fds(struct sr_create_ctx *ctx)
{
  if (ctx->container) {
    close(ctx->container->dirfd);
    close(ctx->container->rootfd);
  }
  if (ctx->cgroup_dir_fd >= 0)
    close(ctx->cgroup_dir_fd);
  /* The supervisor's end: a container holding it could hand the supervisor listeners of its
   * own making. */
  if (ctx->activity_sock[0] >= 0)
    close(ctx->activity_sock[0]);
}

/* Dies with the parent while the parent is still creating us (cleared before "ready"). */
static int die_with_parent(sr_error_t *err)
{
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
    return sr_error_sys(err, "prctl PR_SET_PDEATHSIG");
  return 0;
}

static int open_proc_handle(int *out, sr_error_t *err);
static int write_sysctl(int proc_fd, const char *key, const char *value, sr_error_t *err);

/* A network namespace joined by path (CNI, netavark, `ip netns add`) belongs to the user
 * namespace that made it -- the host's --, not to the container's new one, whose root may not
 * write its sysctls (EACCES).  The intermediate writes them while it is still host root in that
 * namespace, before it unshares the user namespace; the init leaves them. */
static bool net_sysctl_of_joined_netns(const struct sr_create_ctx *ctx, const char *key)
{
  return ctx->ns.new_userns && ctx->ns.join_fd[SR_NS_NET] >= 0 &&
         sr_config_sysctl_namespace(key) == SR_NS_NET;
}

/* net.ipv4.ping_group_range names gids of the writer's user namespace: the container's gids
 * (what config.json names) are written as the host gids its gidMappings map them to. */
static int host_ping_group_range(const struct sr_linux *l, const char *value, char *out,
                                 size_t size, sr_error_t *err)
{
  unsigned long g[2];
  if (sscanf(value, "%lu %lu", &g[0], &g[1]) != 2)
    return sr_error_make(err, 0, "linux.sysctl: net.ipv4.ping_group_range: \"%s\" is not two "
                                 "gids", value);
  for (int i = 0; i < 2; i++) {
    bool mapped = false;
    for (size_t m = 0; m < l->n_gid_mappings && !mapped; m++) {
      const struct sr_id_map *map = &l->gid_mappings[m];
      if (g[i] >= map->container_id && g[i] - map->container_id < map->size) {
        g[i] = map->host_id + (g[i] - map->container_id);
        mapped = true;
      }
    }
    if (!mapped)
      return sr_error_make(err, 0, "linux.sysctl: net.ipv4.ping_group_range: gid %lu is not "
                                   "mapped in the container's user namespace", g[i]);
  }
  snprintf(out, size, "%lu %lu", g[0], g[1]);
  return 0;
}

static int write_joined_net_sysctls(const struct sr_create_ctx *ctx, sr_error_t *err)
{
  const struct sr_linux *l = &ctx->config->linux_;
  _cleanup_close_ int proc_fd = -1;
  for (size_t i = 0; i < l->n_sysctl; i++) {
    const char *key = l->sysctl_keys[i], *value = l->sysctl_values[i];
    char host[64];
    if (!net_sysctl_of_joined_netns(ctx, key))
      continue;
    if (proc_fd < 0 && open_proc_handle(&proc_fd, err) < 0)
      return -1;
    if (strcmp(key, "net.ipv4.ping_group_range") == 0 ||
        strcmp(key, "net/ipv4/ping_group_range") == 0) {
      if (host_ping_group_range(l, value, host, sizeof(host), err) < 0)
        return -1;
      value = host;
    }
    if (write_sysctl(proc_fd, key, value, err) < 0)
      return -1;
  }
  return 0;
}

__attribute__((noreturn)) void sr_init_intermediate_main(struct sr_create_ctx *ctx)
{
  sr_error_t err = NULL;
  int fd = ctx->sync[1];
  const struct sr_ns_plan *ns = &ctx->ns;
  close(ctx->sync[0]);
  close_parent_fds(ctx);
  if (die_with_parent(&err) < 0 || sr_sync_expect(fd, SYNC_GO, NULL, &err) < 0)
    child_fail(fd, &err);
  SR_KILL_POINT("intermediate.after-go");
  /* A joined user namespace first, then the other joined namespaces while we still hold the
   * privileges they need, then the new user namespace that will own the new ones. */
  if (sr_ns_join(ns, true, &err) < 0 || sr_ns_join(ns, false, &err) < 0 ||
      write_joined_net_sysctls(ctx, &err) < 0)
    child_fail(fd, &err);
  if (ns->new_userns) {
    if (unshare(CLONE_NEWUSER) < 0) {
      sr_error_sys(&err, "unshare user namespace");
      child_fail(fd, &err);
    }
    if (sr_sync_send(fd, SYNC_USERNS_READY, 0, &err) < 0 ||
        sr_sync_expect(fd, SYNC_USERNS_DONE, NULL, &err) < 0)
      child_fail(fd, &err);
    SR_KILL_POINT("intermediate.after-userns");
  }
  int flags = ns->unshare_flags & ~CLONE_NEWUSER;
  if (flags && unshare(flags) < 0) {
    sr_error_sys(&err, "unshare namespaces (flags %#x)", flags);
    child_fail(fd, &err);
  }
  if (ns->time_offsets && sr_ns_write_time_offsets(&ctx->config->linux_, &err) < 0)
    child_fail(fd, &err);
  SR_KILL_POINT("intermediate.after-unshare");
  /* CLONE_PARENT: the init is the runtime's child, as on the fast path. */
  struct clone_args args = {.flags = CLONE_PARENT, .exit_signal = 0};
  pid_t pid = (pid_t)syscall(SYS_clone3, &args, sizeof(args));
  if (pid < 0) {
    sr_error_sys(&err, "clone the container init");
    child_fail(fd, &err);
  }
  if (pid == 0)
    sr_init_main(ctx, true);
  SR_KILL_POINT("intermediate.after-clone");
  if (sr_sync_send(fd, SYNC_INIT_PID, pid, &err) < 0)
    _exit(1);
  _exit(0);
}

/* A procfs instance we can trust for writes under /proc, taken before the root filesystem
 * (which the tenant controls) is in place: a tenant's /proc is never written through. */
static int open_proc_handle(int *out, sr_error_t *err)
{
  int fd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return sr_error_sys(err, "open /proc");
  struct statfs sfs;
  struct stat st;
  if (fstatfs(fd, &sfs) < 0 || sfs.f_type != PROC_SUPER_MAGIC || fstat(fd, &st) < 0 ||
      st.st_ino != 1) {
    close(fd);
    return sr_error_make(err, 0, "/proc is not the root of a procfs");
  }
  *out = fd;
  return 0;
}

/* Writes one sysctl through the trusted procfs handle; "a.b.c" is sys/a/b/c. */
static int write_sysctl(int proc_fd, const char *key, const char *value, sr_error_t *err)
{
  char rel[512];
  int n = snprintf(rel, sizeof(rel), "sys/%s", key);
  if (n < 0 || (size_t)n >= sizeof(rel))
    return sr_error_make(err, ENAMETOOLONG, "linux.sysctl: %s", key);
  /* "net.ipv4.conf.eth0.100.rp_filter" cannot say which dot is a name's: a key that already
   * uses "/" (as runc allows) is taken as it is. */
  if (strchr(key, '/') == NULL)
    for (char *c = rel + 4; *c; c++)
      if (*c == '.')
        *c = '/';
  if (sr_process_attrs_write_proc(proc_fd, rel, value, err) < 0)
    return sr_error_wrap(err, "linux.sysctl: %s", key);
  return 0;
}

/* Writes linux.sysctl, but those the intermediate wrote (net_sysctl_of_joined_netns). */
static int apply_sysctls(const struct sr_create_ctx *ctx, int proc_fd, sr_error_t *err)
{
  const struct sr_linux *l = &ctx->config->linux_;
  for (size_t i = 0; i < l->n_sysctl; i++)
    if (!net_sysctl_of_joined_netns(ctx, l->sysctl_keys[i]) &&
        write_sysctl(proc_fd, l->sysctl_keys[i], l->sysctl_values[i], err) < 0)
      return -1;
  return 0;
}

static int set_names(const struct sr_config *c, sr_error_t *err)
{
  if (c->hostname && sethostname(c->hostname, strlen(c->hostname)) < 0)
    return sr_error_sys(err, "hostname: sethostname \"%s\"", c->hostname);
  if (c->domainname && setdomainname(c->domainname, strlen(c->domainname)) < 0)
    return sr_error_sys(err, "domainname: setdomainname \"%s\"", c->domainname);
  return 0;
}

/* In a user namespace, act as the container's root from here on, if it is mapped. */
static int become_userns_root(const struct sr_config *c, sr_error_t *err)
{
  bool uid0 = false, gid0 = false;
  for (size_t i = 0; i < c->linux_.n_uid_mappings; i++)
    if (c->linux_.uid_mappings[i].container_id == 0)
      uid0 = true;
  for (size_t i = 0; i < c->linux_.n_gid_mappings; i++)
    if (c->linux_.gid_mappings[i].container_id == 0)
      gid0 = true;
  if (c->linux_.namespaces[SR_NS_USER].path) {
    uid0 = gid0 = true; /* a joined namespace: its owner decided its maps */
  }
  if (gid0 && setresgid(0, 0, 0) < 0)
    return sr_error_sys(err, "setresgid 0 in the user namespace");
  if (uid0 && setresuid(0, 0, 0) < 0)
    return sr_error_sys(err, "setresuid 0 in the user namespace");
  return 0;
}

/* Everything up to "ready": runs with the sync channel open, errors go to the parent. */
static int init_setup(struct sr_create_ctx *ctx, bool after_intermediate, int *proc_fd,
                      int *landlock_fd, char **exec_path, struct stat *runtime_exe,
                      sr_error_t *err)
{
  const struct sr_config *c = ctx->config;
  int fd = ctx->sync[1];
  int32_t host_pid;
  _cleanup_close_ int root_fd = -1;

  if (!after_intermediate && sr_sync_expect(fd, SYNC_GO, NULL, err) < 0)
    return -1;
  if (sr_sync_expect(fd, SYNC_INIT_INFO, &host_pid, err) < 0)
    return -1;
  ctx->host_pid = host_pid;
  SR_KILL_POINT("init.after-info");
  /* Keep the runtime's memory and descriptors from the container's other processes (exec)
   * until our execve. */
  if (prctl(PR_SET_DUMPABLE, 0) < 0)
    return sr_error_sys(err, "prctl PR_SET_DUMPABLE");
  if (!after_intermediate && sr_ns_join(&ctx->ns, false, err) < 0)
    return -1;
  if (ctx->ns.new_cgroupns && unshare(CLONE_NEWCGROUP) < 0)
    return sr_error_sys(err, "unshare cgroup namespace");
  if (setsid() < 0)
    return sr_error_sys(err, "setsid");
  /* A new network namespace has its loopback down; runc and crun bring it up (hooks, and the
   * processes inside, expect 127.0.0.1 to work).  A joined one is its owner's business. */
  if (((ctx->ns.clone_flags | ctx->ns.unshare_flags) & CLONE_NEWNET) && sr_loopback_up(err) < 0)
    return -1;
  if (!ctx->o->no_new_keyring) {
    /* Containers must not share the host's session keyring. */
    char name[64];
    snprintf(name, sizeof(name), "_ses.%.50s", ctx->o->id);
    if (syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, name) < 0 && errno != ENOSYS &&
        errno != EPERM && errno != EACCES)
      return sr_error_sys(err, "join a new session keyring");
  }
  if (open_proc_handle(proc_fd, err) < 0 || sr_process_exec_runtime_identity(runtime_exe, err) < 0)
    return -1;
  /* Without a mount namespace (permissive only: the policy refuses it otherwise) the
   * container has the runtime's mounts, as runtime.md says: nothing is mounted, pivoted or made
   * there; its root is still root.path (chroot, below), as runc does. */
  bool own_mounts = c->linux_.namespaces[SR_NS_MOUNT].present;
  if (own_mounts && sr_mount_rootfs_attach(ctx->rootfs, ctx->rootfs_tree_fd, &root_fd, err) < 0)
    return -1;
  SR_KILL_POINT("init.after-rootfs");
  bool in_userns = c->linux_.namespaces[SR_NS_USER].present;
  if (in_userns && become_userns_root(c, err) < 0)
    return -1;
  if (own_mounts && (sr_mounts_apply(c, &ctx->binds, root_fd, ctx->cgroup, err) < 0 ||
                     sr_devices_create(&ctx->devs, root_fd, err) < 0))
    return -1;
  SR_KILL_POINT("init.after-mounts");
  if (set_names(c, err) < 0)
    return -1;

  /* prestart and createRuntime run in the parent, in the runtime's namespaces. */
  if (sr_sync_send(fd, SYNC_HOOKS, 0, err) < 0 || sr_sync_expect(fd, SYNC_HOOKS_DONE, NULL, err) < 0)
    return -1;
  SR_KILL_POINT("init.after-hooks");
  /* runtime.md: a hook in the container's namespaces gets the pid the container sees. */
  if (ctx->container_hooks.n) {
    _cleanup_free_ char *state = NULL;
    /* Step 5 of runtime.md's lifecycle: "created", as for prestart and createRuntime. */
    if (sr_create_state_json(ctx, "created", getpid(), &state, err) < 0 ||
        sr_hooks_run_batch(&ctx->container_hooks, state, err) < 0)
      return -1;
  }
  /* The hooks' descriptors are host files: none stays in the container. */
  sr_hooks_batch_release(&ctx->container_hooks);
  /* A missing process.cwd is made, inside the root, as runc does (as the container's root,
   * before the identity change; resolved in the root: no symlink leads out). */
  const struct sr_process *p = c->process;
  _cleanup_close_ int cwd_fd = -1;
  int new_root = own_mounts ? root_fd : ctx->host.root_fd;
  if (p->cwd && p->cwd[0] == '/' &&
      sr_paths_mkpath_in_root(new_root, p->cwd, SR_MKPATH_DIR, &cwd_fd, err) < 0)
    return sr_error_wrap(err, "process.cwd");
  if (own_mounts && (sr_mount_rootfs_pivot(root_fd, ctx->o->no_pivot, err) < 0 ||
                     sr_mount_rootfs_finish(c, err) < 0))
    return -1;
  /* No mount namespace: the pty comes from the host's devpts (the root has no /dev/pts of its
   * own), then root.path becomes the root, as runc's chroot. */
  if (!own_mounts && ((p->terminal && sr_terminal_setup(ctx->console_fd, p, false, err) < 0) ||
                      sr_mount_rootfs_chroot(ctx->host.root_fd, err) < 0))
    return -1;
  SR_KILL_POINT("init.after-pivot");
  /* Built now that "/" is the container's and every mount is made; applied after start. */
  if (ctx->landlock.abi && sr_landlock_prepare(&ctx->landlock, landlock_fd, err) < 0)
    return -1;
  if (apply_sysctls(ctx, *proc_fd, err) < 0)
    return -1;

  if (own_mounts && p->terminal && sr_terminal_setup(ctx->console_fd, p, true, err) < 0)
    return -1;
  if (own_mounts && sr_mount_rootfs_dev_readonly(c, err) < 0)
    return -1;
  /* oom_score_adj: written by the parent (create.c), which can. */
  if (sr_process_attrs_apply(p, &c->linux_, *proc_fd, err) < 0)
    return -1;
  if (sr_process_exec_enter_cwd(p->cwd, err) < 0 ||
      sr_process_exec_find_executable(p, exec_path, err) < 0)
    return -1;
  SR_KILL_POINT("init.after-process");
  /* From here on the container outlives the runtime process, unless it is to die with it (set
   * again after the credentials changed, which clears it; an exec without new privileges
   * keeps it). */
  if (prctl(PR_SET_PDEATHSIG, ctx->o->die_with_runtime ? SIGKILL : 0) < 0)
    return sr_error_sys(err, "prctl PR_SET_PDEATHSIG");
  return 0;
}

/* After start: report to `start` through the exec fifo; the write end closes at execve. */
__attribute__((noreturn)) static void start_fail(int fifo, sr_error_t *err)
{
  _cleanup_free_ char *text = sr_error_text(*err);
  if (fifo >= 0 && text)
    sr_fileio_write_all(fifo, text, strlen(text));
  if (text)
    dprintf(2, "seerun: %s\n", text);
  _exit(127);
}

__attribute__((noreturn)) void sr_init_main(struct sr_create_ctx *ctx, bool after_intermediate)
{
  sr_error_t err = NULL;
  int fd = ctx->sync[1];
  int proc_fd = -1, landlock_fd = -1;
  char *exec_path = NULL;
  struct sr_exec_target target = {.notify_sock = -1, .activity_sock = -1};
  if (!after_intermediate) {
    close(ctx->sync[0]);
    close_parent_fds(ctx);
  }
  if (die_with_parent(&err) < 0 ||
      init_setup(ctx, after_intermediate, &proc_fd, &landlock_fd, &exec_path,
                 &target.runtime_exe, &err) < 0)
    child_fail(fd, &err);
  SR_KILL_POINT("init.before-ready");
  if (sr_sync_send(fd, SYNC_READY, 0, &err) < 0)
    _exit(1);
  close(fd);
  SR_KILL_POINT("init.after-ready");

  /* Wait for start: opening the fifo for writing blocks until `start` opens it. */
  char rel[64];
  snprintf(rel, sizeof(rel), "self/fd/%d", ctx->fifo_fd);
  int fifo;
  do
    fifo = openat(proc_fd, rel, O_WRONLY | O_CLOEXEC);
  while (fifo < 0 && errno == EINTR);
  if (fifo < 0)
    _exit(1);
  close(ctx->fifo_fd);
  close(proc_fd);
  if (sr_fileio_write_all(fifo, "0", 1) < 0)
    _exit(1);

  const struct sr_config *c = ctx->config;
  /* A host descriptor leaked in grants nothing beneath it.  Only now: the exec fifo (in the
   * state directory, on the host) had to be opened first; before the startContainer hooks,
   * the config's programs, and before the identity change, no_new_privs and seccomp. */
  if (landlock_fd >= 0 && sr_landlock_restrict(&ctx->landlock, landlock_fd, ctx->o->preserve_fds,
                                               c->process->no_new_privileges, &err) < 0)
    start_fail(fifo, &err);
  if (c->hooks.n[SR_HOOK_START_CONTAINER]) {
    _cleanup_free_ char *state = NULL;
    if (sr_create_state_json(ctx, "created", getpid(), &state, &err) < 0 ||
        sr_hooks_run(&c->hooks, SR_HOOK_START_CONTAINER, NULL, state, &err) < 0)
      start_fail(fifo, &err);
  }
  _cleanup_free_ char *notify_state = NULL;
  if (ctx->notify_fd >= 0 && sr_create_notify_state_json(ctx, &notify_state, &err) < 0)
    start_fail(fifo, &err);
  /* HOME from the container's /etc/passwd unless the config sets it, as runc does. */
  struct sr_process proc = *c->process;
  _cleanup_free_ char **env = NULL;
  _cleanup_free_ char *home = NULL;
  env = sr_passwd_env_with_home(proc.env, proc.n_env, proc.user.uid, &proc.n_env, &home);
  if (env)
    proc.env = env;
  target.process = &proc;
  target.seccomp = c->linux_.seccomp;
  target.seccomp_prog = &ctx->seccomp_prog;
  target.builtin_seccomp = ctx->builtin_seccomp;
  target.notify_sock = ctx->notify_fd;
  target.activity_sock = ctx->activity_sock[1];
  target.notify_state = notify_state;
  target.exec_path = exec_path;
  target.preserve_fds = ctx->o->preserve_fds;
  target.die_with_parent = ctx->o->die_with_runtime;
  sr_process_exec(&target, &err);
  start_fail(fifo, &err);
}
