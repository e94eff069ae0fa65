/* One sandbox, from the operator's policy to the result: the steps of `seerun sandbox`, in
 * order.
 *
 * 1. The policy is loaded; a sandbox runs only under an enforcing profile.
 * 2. The runtime moves into a mount namespace of its own (sandbox_slot.c), removes what
 *    killed sandboxes left in the state root, and reserves the id with its slot (bundle).
 * 3. --workspace's directory is opened and its snapshot taken (sandbox_workspace.c); the root
 *    filesystem (sandbox_rootfs.c) and config.json (sandbox_config.c) are generated;
 *    the config is parsed and the policy applied to it, its decisions audited, exactly as for
 *    `run` (sr_prepare_create, whose decisions the result also needs).
 * 4. The workspace's overlay and /out are made (sandbox_collect.c); the container is created,
 *    started (the slot goes while the command runs) and waited for, with --timeout
 *    (sandbox_supervise.c).
 * 5. The cgroup's figures are read, the container deleted (every process is gone when that
 *    returns) and its user namespace range released; then the workspace's changes are read
 *    (and with --apply copied back, sandbox_apply.c) and /out is copied to --out.
 * On a failure anywhere, what was made is removed again (undo). */
#include "build.h"

#include "sandbox.h"

#include "cleanup.h"
#include "json.h"
#include "lifecycle.h"
#include "log.h"
#include "policy_run.h"
#include "prepare.h"
#include "sealed.h"
#include "statedir.h"
#include "activity.h"
#include "supervisor.h"
#include "terminal.h"
#include "stored.h"
#include "fileio.h"
#include "proc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DEFAULT_TMP_SIZE (64ull << 20)

/* The cgroup is named for the id and the state root: two state roots both have sandbox-0. */
static void cgroup_path(struct sr_sandbox *s)
{
  uint32_t h = 2166136261u;
  for (const unsigned char *p = (const unsigned char *)s->ws.real_root; *p; p++)
    h = (h ^ *p) * 16777619u;
  snprintf(s->cgroup_path, sizeof(s->cgroup_path), "/%s-%08x", s->ws.id, h);
}

static char *decisions_text(const struct sr_decisions *d, sr_error_t *err)
{
  _cleanup_gen_ sr_json_gen_t g = NULL;
  if (sr_json_gen_new(&g, false, err) < 0)
    return NULL;
  sr_policy_render_json(d, g);
  const unsigned char *buf;
  size_t n;
  if (sr_json_gen_buf(g, &buf, &n, err) < 0) {
    sr_error_wrap(err, "sandbox: the policy's decisions");
    return NULL;
  }
  char *s = strndup((const char *)buf, n);
  if (s == NULL)
    sr_error_make(err, ENOMEM, "sandbox: the policy's decisions");
  return s;
}

/* --allow-host: the root caller's names for the proxy (trusted like an engine), where the
 * profile lets the caller add names; an address of a refused class never, whoever names it. */
static int allow_hosts(struct sr_sandbox *s, sr_error_t *err)
{
  const struct sr_sandbox_opts *o = s->o;
  const struct sr_policy_profile *p = s->pc.profile;
  if (o->n_allow_hosts == 0)
    return 0;
  if (!s->ctx.egress_proxy)
    return sr_error_make(err, 0, "--allow-host: profile \"%s\" gives this sandbox no egress "
                                 "proxy (profiles.%s.network.proxy)", p->name, p->name);
  if (!p->network.egress.caller_may_allow)
    return sr_error_make(err, 0, "--allow-host: not allowed by profile \"%s\" "
                                 "(profiles.%s.network.egress.callerMayAllow is false)",
                         p->name, p->name);
  for (size_t i = 0; i < o->n_allow_hosts; i++) {
    const struct sr_egress_host *h = &o->allow_hosts[i];
    const char *why;
    char buf[64];
    if (h->is_ip && !sr_policy_egress_address_allowed(&p->network.egress, &h->ip, false, &why))
      return sr_error_make(err, 0,
                           "--allow-host %s: a %s address, which the proxy refuses "
                           "whoever allows it (profiles.%s.network.egress."
                           "allowAddresses)",
                           sr_policy_egress_ipaddr_format(&h->ip, buf, sizeof(buf)), why, p->name);
  }
  s->ctx.egress_extra = o->allow_hosts;
  s->ctx.n_egress_extra = o->n_allow_hosts;
  const char *fields[] = {"field", "--allow-host", "applied", "added to the proxy's allow list",
                          NULL};
  return sr_audit_event(&s->pc.audit, "sandbox-allow-host", fields, err);
}

/* What `run` does through sr_prepare_create, keeping the decisions for the result. */
static int enforce_policy(struct sr_sandbox *s, sr_error_t *err)
{
  /* Never needed: every sandbox runs in a user namespace.  Checked, not assumed. */
  if (sr_sealed_needed(s->ctx.config))
    return sr_error_make(err, 0, "sandbox: the config would leave the sandbox without a user "
                                 "namespace");
  struct sr_decisions d = {0};
  /* Also when it fails: the range may have been taken before a later step failed (releasing
   * one that was not taken changes nothing). */
  s->range_taken = true;
  int r = sr_prepare_create(&s->g, &s->ctx, &s->pc, &d, err);
  sr_error_t derr = NULL;
  s->decisions_json = decisions_text(&d, &derr);
  if (r == 0 && derr) {
    /* The result would not say what the policy decided: no run without it. */
    *err = derr;
    return -1;
  }
  sr_error_free(&derr);
  if (r < 0)
    return -1;
  /* What the sandbox hands back: its changes are the run's outputs in the activity record. */
  static const char *const outputs[] = {SR_SANDBOX_OUT, NULL};
  s->ctx.activity_outputs = outputs;
  return allow_hosts(s, err);
}

/* The host ids the sandbox user maps to, for the owner of /out; -1 when it has none. */
static void sandbox_host_ids(const struct sr_config *c, uid_t *uid, gid_t *gid)
{
  *uid = (uid_t)-1;
  *gid = (gid_t)-1;
  const struct sr_linux *l = &c->linux_;
  for (size_t i = 0; i < l->n_uid_mappings; i++) {
    const struct sr_id_map *m = &l->uid_mappings[i];
    if (SR_SANDBOX_UID >= m->container_id && SR_SANDBOX_UID - m->container_id < m->size)
      *uid = m->host_id + (SR_SANDBOX_UID - m->container_id);
  }
  for (size_t i = 0; i < l->n_gid_mappings; i++) {
    const struct sr_id_map *m = &l->gid_mappings[i];
    if (SR_SANDBOX_UID >= m->container_id && SR_SANDBOX_UID - m->container_id < m->size)
      *gid = m->host_id + (SR_SANDBOX_UID - m->container_id);
  }
  if (*uid == (uid_t)-1 || *gid == (gid_t)-1)
    *uid = (uid_t)-1;
}

/* The first entry of a directory other than . and .. (into name); false: it is empty. */
static bool first_entry(int fd, char *name, size_t size)
{
  _cleanup_close_ int dup = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  _cleanup_dir_ DIR *d = dup >= 0 ? fdopendir(dup) : NULL;
  if (d == NULL)
    return false;
  dup = -1; /* the DIR's now */
  struct dirent *de;
  while ((de = readdir(d)) != NULL)
    if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0) {
      snprintf(name, size, "%s", de->d_name);
      return true;
    }
  return false;
}

/* HOSTDIR: made if missing (one level), never followed if it is a symlink; refused when it
 * holds anything unless overwrite (old files mixed with new ones would pass for this run's). */
static int open_out_dir(const char *path, bool overwrite, int *fd, sr_error_t *err)
{
  if (mkdir(path, 0755) < 0 && errno != EEXIST)
    return sr_error_sys(err, "--out `%s`", path);
  *fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (*fd < 0) {
    int saved = errno;
    struct stat st;
    if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
      return sr_error_make(err, 0, "--out `%s`: a symlink (give the directory itself)", path);
    return sr_error_make(err, saved, "--out `%s`", path);
  }
  char name[256];
  if (!overwrite && first_entry(*fd, name, sizeof(name)))
    return sr_error_make(err, 0,
                         "--out `%s`: the directory is not empty (it holds `%s`): give an "
                         "empty or new directory, or --out-overwrite",
                         path, name);
  return 0;
}

/* Whether the profile mounts a tmpfs at /tmp (with the read-only root the sandbox asks for). */
static bool profile_has_tmp(const struct sr_policy_profile *p)
{
  if (!p->rootfs.readonly)
    return false;
  for (size_t i = 0; i < p->rootfs.n_tmpfs; i++)
    if (strcmp(p->rootfs.tmpfs[i].path, "/tmp") == 0)
      return true;
  return false;
}

/* Steps 1 and 2: the policy, the runtime's own mount namespace, the state root (cleared of
 * what killed sandboxes left), the id and its workspace. */
static int prepare(struct sr_sandbox *s, sr_error_t *err)
{
  struct sr_sandbox_opts *o = s->o;
  if (sr_sandbox_audit_run_id(s->run_id, err) < 0)
    return -1;
  s->res.run_id = s->run_id;
  if (sr_policy_run_load(&s->g, &s->pc, err) < 0)
    return -1;
  /* Every line of this run names it: its container id is a slot that the next run reuses. */
  s->pc.audit.run_id = s->run_id;
  if (!s->pc.profile->enforce)
    return sr_error_make(err, 0,
                         "sandbox: profile \"%s\" does not enforce (enforce: false): a "
                         "sandbox runs only under an enforcing profile",
                         s->pc.profile->name);
  o->own_tmp = !profile_has_tmp(s->pc.profile);
  if (o->own_tmp && o->own_tmp_size == 0)
    o->own_tmp_size = DEFAULT_TMP_SIZE;
  if (sr_sandbox_slot_private_mounts(err) < 0 ||
      sr_statedir_open_root(s->g.root, true, &s->ws.rootfd, err) < 0)
    return -1;
  char real[PATH_MAX];
  if (realpath(s->g.root, real) == NULL)
    return sr_error_sys(err, "state directory `%s`", s->g.root);
  s->ws.real_root = strdup(real);
  if (s->ws.real_root == NULL)
    return sr_error_make(err, ENOMEM, "sandbox");
  sr_sandbox_slot_reap_stale(&s->g, s->ws.rootfd, s->ws.real_root);
  if (sr_sandbox_slot_reserve(&s->g, &s->ws, o->name, err) < 0)
    return -1;
  s->res.id = s->ws.id;
  s->co.id = s->ws.id;
  s->co.bundle = s->ws.bundle;
  cgroup_path(s);
  /* The request on record before anything of it is made (or refused). */
  s->pc.audit.id = s->ws.id;
  return sr_sandbox_audit_start(&s->pc.audit, o, &s->caller, s->out_abs, err);
}

/* Step 3: the root filesystem and the config, policed. */
static int make_config(struct sr_sandbox *s, const char *out_source, sr_error_t *err)
{
  struct sr_sandbox_opts *o = s->o;
  char target[PATH_MAX];
  snprintf(target, sizeof(target), "%s/rootfs", s->ws.bundle);
  if (o->rootfs_dir == NULL && sr_sandbox_rootfs_build(o, target, &s->sys, err) < 0)
    return -1;
  s->rootfs = strdup(o->rootfs_dir ? o->rootfs_dir : target);
  if (s->rootfs == NULL)
    return sr_error_make(err, ENOMEM, "sandbox");
  struct sr_sandbox_config_in in = {.o = o,
                                    .id = s->ws.id,
                                    .rootfs = s->rootfs,
                                    .out_source = o->out_dir ? out_source : NULL,
                                    .ws_source = o->ws_host ? s->cow.host_abs : NULL,
                                    .cgroup_path = s->cgroup_path,
                                    .sys = o->rootfs_dir ? NULL : &s->sys};
  if (sr_sandbox_config_text(&in, &s->ctx.config_text, &s->ctx.config_len, err) < 0 ||
      sr_config_parse(s->ctx.config_text, s->ctx.config_len, "config.json", &s->ctx.config, err) <
          0)
    return sr_error_wrap(err, "sandbox");
  s->ro_first_mount = (long)s->ctx.config->n_mounts - (long)o->n_ro;
  if (enforce_policy(s, err) < 0)
    return -1;
  const struct sr_resources *r = s->ctx.config->linux_.resources;
  s->res.memory_limit = r && r->memory.limit.set ? r->memory.limit.v : -1;
  s->res.pids_limit = r && r->pids_limit.set ? r->pids_limit.v : -1;
  /* As applied (the profile's resources.cpu default, or its ceiling), per the result's period. */
  if (r && r->cpu.quota.set && r->cpu.quota.v > 0) {
    uint64_t period = r->cpu.period.set && r->cpu.period.v ? r->cpu.period.v : 100000;
    s->res.cpu_quota_us =
        (uint64_t)((unsigned __int128)r->cpu.quota.v * SR_SANDBOX_CPU_PERIOD_US / period);
  } else
    s->res.cpu_quota_us = 0;
  return 0;
}

/* The index (in config.json, and of the policy's host objects) of the bind of source at
 * dest; -1: none. */
static long mount_index(const struct sr_sandbox *s, const char *source, const char *dest)
{
  const struct sr_config *c = s->ctx.config;
  for (size_t i = 0; i < c->n_mounts; i++) {
    size_t idx;
    char end;
    if (c->mounts[i].source == NULL || strcmp(c->mounts[i].source, source) != 0 ||
        strcmp(c->mounts[i].destination, dest) != 0 ||
        sscanf(c->mounts[i].field, "mounts[%zu%c", &idx, &end) != 2 || end != ']')
      continue;
    return (long)idx;
  }
  return -1;
}

/* The /out bind is the tmpfs seerun just mounted over the directory the policy judged (its
 * owner comes from the user namespace the policy decided): the container gets that mount,
 * seerun's own, through its descriptor. */
static int use_out_mount(struct sr_sandbox *s, const char *out_source, sr_error_t *err)
{
  long idx = mount_index(s, out_source, SR_SANDBOX_OUT);
  if (idx < 0)
    return sr_error_make(err, 0, "sandbox /out: no bind of `%s` in the config", out_source);
  if (sr_policy_facts_objects_replace_mount(&s->ctx.host, (size_t)idx, s->out_fd) < 0)
    return sr_error_sys(err, "sandbox /out");
  return 0;
}

/* --workspace: the policy judged the bind of HOST; the container gets seerun's overlay of the
 * very directory it judged. */
static int use_workspace(struct sr_sandbox *s, uid_t uid, gid_t gid, sr_error_t *err)
{
  long idx = mount_index(s, s->cow.host_abs, s->o->ws_dest);
  if (idx < 0 || (size_t)idx >= s->ctx.host.n_mounts)
    return sr_error_make(err, 0, "--workspace: no bind of `%s` in the config", s->cow.host_abs);
  char target[PATH_MAX];
  snprintf(target, sizeof(target), "%s/" SR_SANDBOX_WS_MOUNT, s->ws.bundle);
  if (sr_sandbox_workspace_mount(s->o, &s->cow, uid, gid, target, s->ctx.host.mount_fd[idx], err) <
      0)
    return -1;
  if (sr_policy_facts_objects_replace_mount(&s->ctx.host, (size_t)idx, s->cow.overlay) < 0)
    return sr_error_sys(err, "--workspace");
  /* The activity record's files: the workspace's changes are its upper layer against the
   * lower one (an output), not a walk of the merged mount against a baseline. */
  s->ctx.activity_places[0] = (struct sr_act_place_in){.label = s->o->ws_dest,
                                                        .kind = "upper",
                                                        .role = "output",
                                                        .fd = s->cow.upper,
                                                        .lower_fd = s->cow.lower};
  s->ctx.n_activity_places = 1;
  return 0;
}

/* Step 4, up to the container's existence: HOSTDIR (checked before anything runs), /out,
 * create. */
static int create(struct sr_sandbox *s, sr_error_t *err)
{
  struct sr_sandbox_opts *o = s->o;
  char out_source[PATH_MAX];
  snprintf(out_source, sizeof(out_source), "%s/out", s->ws.bundle);
  if (o->out_dir && open_out_dir(o->out_dir, o->out_overwrite, &s->dst_fd, err) < 0)
    return -1;
  /* The workspace as it is before anything of the sandbox runs. */
  if (o->ws_host && sr_sandbox_workspace_open(o, &s->caller, &s->cow, err) < 0)
    return -1;
  if (make_config(s, out_source, err) < 0)
    return -1;
  uid_t uid;
  gid_t gid;
  sandbox_host_ids(s->ctx.config, &uid, &gid);
  if (o->ws_host && use_workspace(s, uid, gid, err) < 0)
    return -1;
  if (o->out_dir) {
    uint64_t size =
        o->out_max_bytes > SR_SANDBOX_OUT_MIN_SIZE ? o->out_max_bytes : SR_SANDBOX_OUT_MIN_SIZE;
    if (sr_sandbox_collect_out_create(size, uid, gid, out_source, &s->out_fd, err) < 0 ||
        use_out_mount(s, out_source, err) < 0)
      return -1;
  }
  if (sr_sandbox_supervise_block_signals(err) < 0)
    return -1;
  /* --tty: the init allocates the pty from the container's devpts and sends the master. */
  _cleanup_close_ int console = -1;
  if (o->tty && sr_terminal_console_pair(false, &console, &s->ctx.console_fd, err) < 0)
    return -1;
  /* The container's process inherits the pipes, never the caller's descriptors. */
  if (sr_sandbox_stdio_open(&s->stdio, err) < 0)
    return -1;
  int r = sr_create(&s->ctx, err);
  sr_sandbox_stdio_restore(&s->stdio);
  if (r < 0)
    return -1;
  s->created = true;
  int master = -1;
  if (o->tty && (sr_terminal_recv_master(console, &master, err) < 0 ||
                 sr_sandbox_stdio_use_tty(&s->stdio, master, err) < 0))
    return -1;
  return sr_sandbox_watchdog_start(&s->watchdog, s->ctx.init_pidfd, s->cgroup_path, err);
}

/* Removes the container (killing what is left); true when it is gone. */
static bool remove_container(struct sr_sandbox *s)
{
  sr_error_t err = NULL;
  _cleanup_stored_ struct sr_container *c = NULL;
  if (sr_stored_open(&s->g, s->ws.id, true, &c, &err) < 0) {
    bool gone = err->status == ENOENT;
    if (!gone) {
      _cleanup_free_ char *t = sr_error_text(err);
      sr_warn("sandbox: remove container \"%s\": %s", s->ws.id, t ? t : "");
    }
    sr_error_free(&err);
    return gone;
  }
  if (sr_container_delete(c, true, NULL, &err) < 0) {
    _cleanup_free_ char *t = sr_error_text(err);
    sr_warn("sandbox: remove container \"%s\": %s", s->ws.id, t ? t : "");
    sr_error_free(&err);
    return false;
  }
  s->created = false;
  return true;
}

/* The egress proxy's record, for the result: the supervisor writes it once the init has gone,
 * so it is waited for (sr_supervisor_stop) before the file is read. */
static void collect_egress(struct sr_sandbox *s)
{
  sr_error_t err = NULL;
  _cleanup_stored_ struct sr_container *c = NULL;
  if (sr_stored_open(&s->g, s->ws.id, true, &c, &err) < 0) {
    sr_error_free(&err);
    return;
  }
  if (c->rec == NULL || c->rec->supervisor_pid <= 0)
    return;
  sr_supervisor_stop(c->rec->supervisor_pid, c->rec->supervisor_start,
                     c->rec->supervisor_activity ? c->dirfd : -1);
  size_t len;
  /* What the code tried (the activity record), when the supervisor kept one. */
  if (c->rec->supervisor_activity &&
      sr_fileio_read_at(c->dirfd, SR_ACT_FILE, 1 << 20, &s->activity_json, &len, &err) == 0)
    s->res.activity_json = s->activity_json;
  sr_error_free(&err);
  if (!c->rec->egress_proxy)
    return;
  if (sr_fileio_read_at(c->dirfd, SR_SUPERVISOR_EGRESS_FILE, 1 << 20, &s->egress_json, &len, &err) <
      0) {
    _cleanup_free_ char *t = sr_error_text(err);
    sr_warn("sandbox: the egress record: %s", t ? t : "");
    sr_error_free(&err);
    return;
  }
  s->res.egress_json = s->egress_json;
}

/* Steps 4 and 5: start, wait, read the figures, delete, collect. */
static int run(struct sr_sandbox *s, sr_error_t *err)
{
  struct sr_sandbox_opts *o = s->o;
  if (sr_audit_event(&s->pc.audit, "start", NULL, err) < 0)
    return -1;
  int64_t started = sr_sandbox_supervise_now_ns();
  if (sr_container_start(s->ctx.container, s->ctx.config, NULL, err) < 0)
    return -1;
  /* The container's state directory holds the id now; the workspace goes while the command
   * runs. */
  sr_sandbox_slot_remove(&s->ws);
  pid_t pid = s->ctx.init_pid;
  _cleanup_close_ int pidfd = s->ctx.init_pidfd;
  s->ctx.init_pidfd = -1;
  sr_create_ctx_release(&s->ctx); /* releases the container's lock: it runs */
  s->res.ran = true;
  struct sr_sandbox_wait w;
  s->res.stdio = &s->stdio;
  int r = sr_sandbox_supervise(pid, pidfd, s->cgroup_path, o->timeout_ms, o->kill_after_ms, started,
                               &s->stdio, &w, err);
  /* The command is reaped (or supervising failed, and the container is removed next): the
   * watchdog would only hit a later sandbox of the same cgroup. */
  sr_sandbox_watchdog_stop(&s->watchdog);
  if (r < 0)
    return -1;
  s->res.status = w.status;
  s->res.exit_code = w.caller_signal ? 128 + w.caller_signal
                     : w.timed_out   ? SR_SANDBOX_EXIT_TIMEOUT
                                     : sr_proc_exit_status(w.status, 255);
  s->res.timed_out = w.timed_out;
  s->res.interrupted = w.interrupted;
  s->res.caller_signal = w.caller_signal;
  s->res.wall_ns = w.wall_ns;
  s->res.ru = w.ru;
  sr_error_t e = NULL;
  if (sr_sandbox_supervise_cgroup_usage(s->cgroup_path, &s->res.usage, &e) < 0) {
    _cleanup_free_ char *t = sr_error_text(e);
    sr_warn("sandbox: read the cgroup's figures: %s", t ? t : "");
    sr_error_free(&e);
  }
  if (sr_audit_event_int(&s->pc.audit, "exit", "status", s->res.exit_code, &e) < 0)
    sr_error_free(&e);
  collect_egress(s);
  if (!remove_container(s))
    return sr_error_make(err, 0,
                         "sandbox: container \"%s\" could not be removed: /out is not "
                         "collected",
                         s->ws.id);
  /* Into the registry of the policy the range was taken under (this run's load): not read
   * and parsed once more. */
  sr_stored_release_userns_with(&s->g, s->pc.policy, s->ws.id);
  s->range_taken = false;
  /* Nothing can change the workspace's upper layer any more: the changes, and --apply; a
   * command killed midway may have left its files half written: listed, never applied. */
  const char *unfinished =
      s->res.timed_out         ? "the command was killed at --timeout: nothing applied"
      : s->res.caller_signal   ? "the command was stopped by seerun's signal: nothing applied"
      : s->res.usage.oom_kills ? "the command was killed out of memory: nothing applied"
                               : NULL;
  struct sr_ws_apply_record rec = {.rootfd = s->ws.rootfd,
                                   .owner = s->ws.owner,
                                   .host_path = s->cow.host_abs,
                                   .host_st = s->cow.host_st};
  sr_sandbox_apply_record_tmp_prefix(s->run_id, rec.prefix, sizeof(rec.prefix));
  int stop = 0;
  if (o->ws_host && sr_sandbox_workspace_finish(o, &s->cow, unfinished, &rec, &stop, err) < 0)
    return -1;
  if (stop && !s->res.caller_signal) {
    /* Stopped during the apply (each file is whole or not there): as a signal during the run. */
    s->res.caller_signal = stop;
    s->res.exit_code = 128 + stop;
  }
  if (o->out_dir) {
    /* Every process of the sandbox is dead (its cgroup is gone): the tree is final. */
    _cleanup_close_ int src = openat(s->out_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (src < 0)
      return sr_error_sys(err, "sandbox: open /out");
    if (sr_sandbox_collect(src, s->dst_fd, o->out_max_bytes, o->out_max_files, o->out_overwrite,
                           &s->collected, err) < 0)
      return -1;
    s->res.out = &s->collected;
  }
  return 0;
}

/* After a failure: nothing of the sandbox stays behind. */
static void undo(struct sr_sandbox *s)
{
  sr_sandbox_watchdog_stop(&s->watchdog);
  /* seerun's own messages of a failed create are in the pipe: the caller gets them. */
  sr_sandbox_stdio_flush(&s->stdio);
  if (s->created) {
    if (s->ctx.container) {
      sr_error_t e = NULL;
      if (sr_container_delete(s->ctx.container, true, NULL, &e) < 0)
        sr_error_free(&e);
      else
        s->created = false;
    }
    if (s->created)
      remove_container(s);
  }
  sr_create_ctx_release(&s->ctx);
  sr_sandbox_slot_remove(&s->ws);
  /* A container that could not be removed keeps its range: released, it could be handed to
   * another container while this one still runs on it. */
  if (s->range_taken && !s->created)
    sr_stored_release_userns_with(&s->g, s->pc.policy, s->ws.id);
  s->range_taken = false;
}

/* A command the container's init could not execute (the error's kind, process_exec.c): 127
 * when it does not exist in the sandbox, 126 when it is not executable there; anything else
 * is seerun's own failure. */
static int exec_failure_status(const struct sr_error_s *e)
{
  switch (sr_error_kind(e)) {
  case SR_ERR_NOT_FOUND:
    return SR_SANDBOX_EXIT_NOTFOUND;
  case SR_ERR_NOT_EXECUTABLE:
    return SR_SANDBOX_EXIT_NOEXEC;
  default:
    return SR_SANDBOX_EXIT_RUNTIME;
  }
}

void sr_sandbox_run_init(struct sr_sandbox *s, const struct sr_invocation *g, const char *profile,
                         struct sr_sandbox_opts *o)
{
  memset(s, 0, sizeof(*s));
  s->g = *g;
  /* The sandbox names its cgroup itself (cgroupsPath), never in systemd's syntax. */
  s->g.systemd_cgroup = false;
  if (profile)
    s->g.profile = profile;
  s->o = o;
  s->out_fd = s->dst_fd = -1;
  s->ws.rootfd = -1;
  sr_sandbox_workspace_init(&s->cow);
  s->res.o = o;
  s->res.ws = o->ws_host ? &s->cow : NULL;
  s->watchdog.fd = -1;
  s->ro_first_mount = -1;
  sr_sandbox_stdio_init(&s->stdio, o->output_max_bytes);
  /* The sandbox's command dies with this process (sandbox_watchdog.c). */
  s->co.die_with_runtime = true;
  s->ctx = (struct sr_create_ctx)SR_PREPARE_CTX(&s->g, &s->co);
  s->res.argv = o->argv;
  s->res.argc = o->argc;
  sr_sandbox_audit_caller_init(&s->caller);
  s->res.caller = &s->caller;
  s->out_abs = o->out_dir ? sr_sandbox_audit_abs_path(&s->caller, o->out_dir) : NULL;
  s->res.timeout_ms = o->timeout_ms;
  s->res.kill_after_ms = o->kill_after_ms;
  s->res.output_max_bytes = o->output_max_bytes;
  s->res.cpu_quota_us = o->cpu_quota_us;
  s->res.out_dir = s->out_abs ? s->out_abs : o->out_dir;
  s->res.memory_limit = s->res.pids_limit = -1;
}

int sr_sandbox_run(struct sr_sandbox *s, sr_error_t *err)
{
  int r = prepare(s, err);
  if (r == 0)
    r = create(s, err);
  if (r == 0)
    r = run(s, err);
  if (r < 0) {
    undo(s);
    _cleanup_free_ char *text = sr_error_text(*err);
    free(s->error);
    s->error = text ? steal_ptr(text) : strdup("out of memory");
    s->res.error = s->error;
    s->res.exit_code = exec_failure_status(*err);
  }
  s->res.profile = s->pc.profile ? s->pc.profile->name : s->g.profile;
  s->res.decisions_json = s->decisions_json;
  /* The result goes on record, whatever it is (if there is a policy to say where). */
  if (s->pc.policy) {
    sr_error_t e = NULL;
    if (sr_sandbox_result_audit(&s->pc.audit, &s->res, &e) < 0) {
      _cleanup_free_ char *t = sr_error_text(e);
      sr_warn("sandbox: %s", t ? t : "audit log");
      sr_error_free(&e);
    }
  }
  return r;
}

void sr_sandbox_run_release(struct sr_sandbox *s)
{
  sr_create_ctx_release(&s->ctx);
  sr_sandbox_watchdog_stop(&s->watchdog);
  sr_sandbox_stdio_release(&s->stdio);
  sr_sandbox_collect_result_free(&s->collected);
  sr_sandbox_workspace_release(&s->cow);
  if (s->out_fd >= 0)
    close(s->out_fd);
  if (s->dst_fd >= 0)
    close(s->dst_fd);
  s->out_fd = s->dst_fd = -1;
  sr_sandbox_slot_release(&s->ws);
  sr_sandbox_rootfs_sysdirs_free(&s->sys);
  sr_policy_run_ctx_release(&s->pc);
  sr_sandbox_audit_caller_release(&s->caller);
  free(s->out_abs);
  s->out_abs = NULL;
  free(s->rootfs);
  free(s->decisions_json);
  free(s->egress_json);
  free(s->activity_json);
  free(s->error);
  s->rootfs = s->decisions_json = s->egress_json = s->activity_json = s->error = NULL;
}
