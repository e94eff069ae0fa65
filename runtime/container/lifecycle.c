#include "build.h"

#include "lifecycle.h"

#include "cgroup.h"
#include "cgroup_systemd.h"
#include "cleanup.h"
#include "hooks.h"
#include "log.h"
#include "sha256.h"
#include "supervisor.h"
#include "fileio.h"
#include "pidfd.h"
#include "proc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


static const char *status_names[] = {[SR_STATUS_CREATING] = "creating",
                                     [SR_STATUS_CREATED] = "created",
                                     [SR_STATUS_RUNNING] = "running",
                                     [SR_STATUS_PAUSED] = "paused",
                                     [SR_STATUS_STOPPED] = "stopped"};

const char *sr_container_status_name(enum sr_status s)
{
  return status_names[s];
}

int sr_container_open_cgroup(const struct sr_container *c, struct sr_cgroup **cg, sr_error_t *err)
{
  *cg = NULL;
  if (c->rec->cgroup_version == 0)
    return 0;
  return sr_cgroup_new(SR_CGROUP_ROOT, c->rec->cgroup_path, cg, err);
}

/* The process's (procfd: its /proc/PID) user namespace is the one whose nsfs inode is ino.
 * By the link's text ("user:[INO]"), not by stat: following the link makes the kernel find or
 * make the namespace's inode, and list asks once per container.  Every namespace is on the one
 * nsfs: its inode number names it. */
static bool userns_is_at(int procfd, ino_t ino)
{
  char link[64];
  ssize_t n = readlinkat(procfd, "ns/user", link, sizeof(link) - 1);
  if (n <= 0)
    return false;
  link[n] = '\0';
  unsigned long long got;
  char end;
  return sscanf(link, "user:[%llu%c", &got, &end) == 2 && end == ']' &&
         got == (unsigned long long)ino;
}

static bool userns_is_ours_at(int procfd)
{
  struct stat b;
  return stat("/proc/self/ns/user", &b) == 0 && userns_is_at(procfd, b.st_ino);
}

bool sr_container_pid_userns_is_ours(pid_t pid)
{
  _cleanup_close_ int fd = sr_proc_open(pid);
  return fd >= 0 && userns_is_ours_at(fd);
}

void sr_container_host_scan(struct sr_container_host *h)
{
  *h = (struct sr_container_host){0};
  sr_error_t e = NULL;
  h->have_layout = sr_cgroup_layout_scan(SR_CGROUP_ROOT, &h->layout, &e) == 0;
  sr_error_free(&e);
  struct stat st;
  if (stat("/proc/self/ns/user", &st) == 0) {
    h->userns_ino = st.st_ino;
    h->have_userns = true;
  }
}

void sr_container_host_release(struct sr_container_host *h)
{
  sr_cgroup_layout_release(&h->layout);
  *h = (struct sr_container_host){0};
}

static bool path_at_or_below(const char *cg, const char *path)
{
  size_t n = strlen(path);
  return strncmp(cg, path, n) == 0 && (cg[n] == '\0' || cg[n] == '/');
}

/* Is the process (procfd: its /proc/PID) in the cgroup at path (or one below it)?  v2: its
 * "0::" line; v1: a controller's. */
static bool in_cgroup_at(int procfd, int version, const char *path)
{
  /* One read, not stdio's buffered lines (list reads one per container). */
  char text[16384];
  sr_proc_text_at(procfd, "cgroup", text, sizeof(text), false, "");
  char *save = NULL;
  for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    char *ctl = strchr(line, ':');
    char *cg = ctl ? strchr(ctl + 1, ':') : NULL;
    if (cg == NULL)
      continue;
    bool unified = strncmp(line, "0:", 2) == 0;
    if (unified != (version == 2))
      continue;
    if (path_at_or_below(cg + 1, path))
      return true;
  }
  return false;
}

/* Whether the host has a v1 cpuset hierarchy: then /proc/PID/cpuset is a process's line of it. */
static bool layout_has_v1_cpuset(const struct sr_cgroup_layout *l)
{
  for (size_t i = 0; l && l->version == 1 && i < l->n; i++) {
    const char *c = strstr(l->names[i], "cpuset");
    if (c && (c == l->names[i] || c[-1] == ',') && (c[6] == '\0' || c[6] == ','))
      return true;
  }
  return false;
}

/* in_cgroup_at for a v1 cgroup, from the cpuset hierarchy's line alone where the host has one:
 * the kernel writes /proc/PID/cgroup's line for every hierarchy (ten here, under a global lock),
 * and list reads one per container.  A match is a line in_cgroup_at accepts; anything else
 * asks the whole file. */
static bool in_v1_cgroup_at(int procfd, const char *path, const struct sr_cgroup_layout *l)
{
  if (layout_has_v1_cpuset(l)) {
    char cg[4096];
    sr_proc_text_at(procfd, "cpuset", cg, sizeof(cg), false, "\n");
    if (path_at_or_below(cg, path))
      return true;
  }
  return in_cgroup_at(procfd, 1, path);
}

/* The pid the record names is the container's init: alive with the recorded start time, in a
 * user namespace of its own when create saw it in one, and in the container's cgroup.  The
 * record comes from the index (statedir.h); this is the second look, at the process itself, so
 * that kill, delete and exec never reach a host process. */
static bool init_is_the_containers_in(const struct sr_state_record *r,
                                      const struct sr_container_host *h)
{
  /* Every fact through one /proc/PID: all of them are of the process whose start time is
   * checked, even if the pid is reused meanwhile. */
  _cleanup_close_ int fd = sr_proc_open(r->pid);
  if (!sr_proc_is_at(fd, r->pid_start))
    return false;
  if (r->own_userns &&
      (h && h->have_userns ? userns_is_at(fd, h->userns_ino) : userns_is_ours_at(fd)))
    return false;
  if (r->cgroup_version == 1 && h && h->have_layout)
    return in_v1_cgroup_at(fd, r->cgroup_path, &h->layout);
  return r->cgroup_version == 0 || in_cgroup_at(fd, r->cgroup_version, r->cgroup_path);
}

static bool init_is_the_containers(const struct sr_state_record *r)
{
  return init_is_the_containers_in(r, NULL);
}

enum sr_status sr_container_observe(const struct sr_container *c, pid_t *live_pid)
{
  return sr_container_observe_in(c, NULL, live_pid);
}

enum sr_status sr_container_observe_in(const struct sr_container *c,
                                       const struct sr_container_host *host, pid_t *live_pid)
{
  const struct sr_cgroup_layout *layout = host && host->have_layout ? &host->layout : NULL;
  const struct sr_state_record *r = c->rec;
  *live_pid = 0;
  if (r->phase == SR_PHASE_CREATING) {
    /* A create still at work; if its process is gone, the container never came to be (and a
     * half-made init dies with it: not the container's pid). */
    if (r->creator_pid <= 0 || !sr_proc_is(r->creator_pid, r->creator_start))
      return SR_STATUS_STOPPED;
    if (init_is_the_containers_in(r, host))
      *live_pid = r->pid;
    return SR_STATUS_CREATING;
  }
  if (!init_is_the_containers_in(r, host))
    return SR_STATUS_STOPPED;
  *live_pid = r->pid;
  if (faccessat(c->dirfd, "exec.fifo", F_OK, AT_SYMLINK_NOFOLLOW) == 0)
    return SR_STATUS_CREATED;
  _cleanup_cgroup_ struct sr_cgroup *cg = NULL;
  sr_error_t err = NULL;
  bool frozen = false;
  int opened = layout == NULL || c->rec->cgroup_version == 0
                   ? sr_container_open_cgroup(c, &cg, &err)
                   : sr_cgroup_new_in(layout, SR_CGROUP_ROOT, c->rec->cgroup_path, &cg, &err);
  if (opened == 0 && cg)
    sr_cgroup_is_frozen(cg, &frozen, &err);
  sr_error_free(&err);
  return frozen ? SR_STATUS_PAUSED : SR_STATUS_RUNNING;
}

enum sr_status sr_container_status(const struct sr_container *c)
{
  pid_t pid;
  return sr_container_observe(c, &pid);
}

pid_t sr_container_live_pid(const struct sr_container *c)
{
  const struct sr_state_record *r = c->rec;
  if (r->pid <= 0)
    return 0;
  if (r->phase == SR_PHASE_CREATING) {
    pid_t pid;
    sr_container_observe(c, &pid);
    return pid;
  }
  return init_is_the_containers(r) ? r->pid : 0;
}

void sr_container_config_digest_hex(const char *text, size_t len, char hex[2 * SR_SHA256_LEN + 1])
{
  uint8_t d[SR_SHA256_LEN];
  sr_sha256(text, len, d);
  for (size_t i = 0; i < SR_SHA256_LEN; i++)
    snprintf(hex + 2 * i, 3, "%02x", d[i]);
}

int sr_container_load_config(const struct sr_container *c, struct sr_config **out,
                             sr_error_t *err)
{
  _cleanup_free_ char *buf = NULL;
  size_t len;
  if (c->dirfd < 0)
    return sr_error_make(err, 0, "container \"%s\": config.json: its state directory is gone",
                         c->id);
  if (sr_fileio_read_at(c->dirfd, "config.json", SR_MAX_CONFIG_SIZE, &buf, &len, err) < 0)
    return sr_error_wrap(err, "container \"%s\"", c->id);
  /* The copy is read back for hooks (run as host root), exec's process and seccomp filter:
   * rewritten, it would widen what create applied; the index (statedir.h) keeps its digest. */
  char hex[2 * SR_SHA256_LEN + 1];
  sr_container_config_digest_hex(buf, len, hex);
  if (c->rec->config_digest == NULL)
    return sr_error_make(err, 0, "container \"%s\": config.json: its index records no digest "
                                 "of the copy to check it against: refusing it",
                         c->id);
  if (strcmp(hex, c->rec->config_digest) != 0)
    return sr_error_make(err, 0, "container \"%s\": config.json: the copy is not what create "
                                 "kept (its digest differs from the index's): refusing it",
                         c->id);
  if (sr_config_parse(buf, len, "config.json", out, err) < 0)
    return sr_error_wrap(err, "container \"%s\"", c->id);
  return 0;
}

static int state_json_as(const struct sr_container *c, const char *status, pid_t pid,
                         bool pretty, char **out, sr_error_t *err)
{
  const struct sr_state_record *r = c->rec;
  struct sr_oci_state s = {
      .id = r->id,
      .status = status,
      .pid = pid,
      .bundle = r->bundle,
      .rootfs = r->rootfs,
      .created = r->created,
      .owner = r->owner,
      .annotation_keys = r->annotation_keys,
      .annotation_values = r->annotation_values,
      .n_annotations = r->n_annotations,
  };
  size_t len;
  return sr_state_json(&s, pretty, out, &len, err);
}

int sr_container_state_json(const struct sr_container *c, bool pretty, char **out,
                            sr_error_t *err)
{
  pid_t pid;
  enum sr_status status = sr_container_observe(c, &pid);
  return state_json_as(c, sr_container_status_name(status), pid, pretty, out, err);
}

/* A pidfd of the init, taken only if the pid is still the container's: signals then reach
 * the right process even if it exits and its pid is reused meanwhile. */
static int open_init_pidfd(const struct sr_container *c, int *out, sr_error_t *err)
{
  const struct sr_state_record *r = c->rec;
  int fd = r->pid > 0 ? sr_pidfd_open(r->pid) : -1;
  if (fd < 0 || !init_is_the_containers(r)) {
    if (fd >= 0)
      close(fd);
    return sr_error_make(err, ESRCH, "container \"%s\" is not running", c->id);
  }
  *out = fd;
  return 0;
}

static int run_hooks_with_state(const struct sr_container *c, const struct sr_config *config,
                                enum sr_hook_kind kind, const struct sr_hook_gate *gate,
                                sr_error_t *err)
{
  if (config == NULL || config->hooks.n[kind] == 0)
    return 0;
  _cleanup_free_ char *state = NULL;
  if (sr_container_state_json(c, false, &state, err) < 0)
    return -1;
  return sr_hooks_run(&config->hooks, kind, gate, state, err);
}

/* ociVersion 1.3 made a failed poststart hook fatal; before, it was a warning. */
static bool poststart_failure_is_fatal(const struct sr_config *config)
{
  unsigned major = 0, minor = 0;
  if (config->oci_version == NULL || sscanf(config->oci_version, "%u.%u", &major, &minor) != 2)
    return true;
  return major > 1 || (major == 1 && minor >= 3);
}

/* runtime.md lifecycle step 9, as the config's ociVersion says: from 1.3, a failed hook stops
 * the container and the lifecycle continues at step 12 (destroyed, then the poststop hooks);
 * up to 1.2, a warning, and the remaining hooks run as if it had succeeded. */
static int run_poststart(struct sr_container *c, const struct sr_config *config,
                         const struct sr_hook_gate *gate, sr_error_t *err)
{
  if (config == NULL || config->hooks.n[SR_HOOK_POSTSTART] == 0)
    return 0;
  /* The state at step 9: the program was executed ("running", runtime.md: after step 8),
   * with its pid, even when it has exited already (`true`): what the hooks get does not
   * depend on a race with the process (crun does the same; `state` tells the present). */
  _cleanup_free_ char *state = NULL;
  if (state_json_as(c, "running", c->rec->pid, false, &state, err) < 0)
    return -1;
  if (!poststart_failure_is_fatal(config)) {
    sr_error_t e = NULL;
    if (sr_hooks_run_all(&config->hooks, SR_HOOK_POSTSTART, gate, state, &e) < 0) {
      _cleanup_free_ char *t = sr_error_text(e);
      sr_warn("start container \"%s\": %s (ociVersion %s: a warning, the container runs)",
              c->id, t ? t : "", config->oci_version);
      sr_error_free(&e);
    }
    return 0;
  }
  if (sr_hooks_run(&config->hooks, SR_HOOK_POSTSTART, gate, state, err) == 0)
    return 0;
  sr_error_t e = NULL;
  sr_container_kill(c, SIGKILL, true, &e);
  sr_error_free(&e);
  if (sr_container_delete(c, true, gate, &e) < 0) {
    _cleanup_free_ char *t = sr_error_text(e);
    sr_warn("start container \"%s\": destroy after the failed poststart hook: %s", c->id,
            t ? t : "");
    sr_error_free(&e);
  }
  return sr_error_wrap(err, "start container \"%s\" (stopped and destroyed)", c->id);
}

int sr_container_start(struct sr_container *c, const struct sr_config *config,
                       const struct sr_hook_gate *gate, sr_error_t *err)
{
  if (c->damage)
    return sr_error_make(err, 0, "container \"%s\": %s", c->id, c->damage);
  enum sr_status st = sr_container_status(c);
  if (st != SR_STATUS_CREATED)
    return sr_error_make(err, 0, "cannot start container \"%s\": it is %s, not created", c->id,
                         sr_container_status_name(st));
  _cleanup_close_ int pidfd = -1;
  if (open_init_pidfd(c, &pidfd, err) < 0)
    return -1;
  /* Non-blocking: a reader open never waits, and a dead init cannot hang us. */
  _cleanup_close_ int fifo = openat(c->dirfd, "exec.fifo", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fifo < 0)
    return sr_error_sys(err, "start container \"%s\": open exec.fifo", c->id);
  char msg[4096];
  size_t used = 0;
  bool released = false, exited = false;
  for (;;) {
    struct pollfd p[2] = {{fifo, POLLIN, 0}, {pidfd, POLLIN, 0}};
    if (poll(p, 2, -1) < 0) {
      if (errno == EINTR)
        continue;
      return sr_error_sys(err, "start container \"%s\": poll", c->id);
    }
    if (p[0].revents & (POLLIN | POLLHUP)) {
      ssize_t n = read(fifo, msg + used, sizeof(msg) - 1 - used);
      if (n > 0) {
        if (!released) {
          released = true;
          unlinkat(c->dirfd, "exec.fifo", 0);
        }
        used += (size_t)n;
        if (used < sizeof(msg) - 1)
          continue;
      }
      if (n == 0 && released)
        break; /* the init's end closed: it exec'd, or failed and said why */
      if (n < 0 && errno != EAGAIN && errno != EINTR)
        return sr_error_sys(err, "start container \"%s\": read exec.fifo", c->id);
    }
    if (p[1].revents & POLLIN) {
      exited = true;
      /* Collect whatever the init wrote before it died. */
      ssize_t n;
      while (used < sizeof(msg) - 1 && (n = read(fifo, msg + used, sizeof(msg) - 1 - used)) > 0)
        used += (size_t)n;
      if (used && !released) {
        released = true;
        unlinkat(c->dirfd, "exec.fifo", 0);
      }
      break;
    }
  }
  msg[used] = '\0';
  /* The init writes "0" when released, then its error text if it cannot exec. */
  if (used > 1)
    return sr_error_make(err, 0, "start container \"%s\": %s", c->id, msg + 1);
  if (!released || (exited && used == 0))
    return sr_error_make(err, 0, "start container \"%s\": the container process exited before "
                                 "it was started", c->id);
  return run_poststart(c, config, gate, err);
}

int sr_container_kill(struct sr_container *c, int sig, bool all, sr_error_t *err)
{
  if (c->damage)
    return sr_error_make(err, 0, "container \"%s\": %s", c->id, c->damage);
  enum sr_status st = sr_container_status(c);
  if (st == SR_STATUS_STOPPED || st == SR_STATUS_CREATING)
    return sr_error_make(err, ESRCH, "container \"%s\" not running", c->id);
  /* Only a cgroup seerun made is the container's alone: one it joined (linux.cgroupsPath
   * naming a host service's) holds processes kill --all must not reach. */
  if (all && !c->rec->cgroup_created && c->rec->cgroup_version != 0)
    sr_warn("kill --all: container \"%s\": its cgroup `%s` was not made by seerun: only its "
            "init is signalled",
            c->id, c->rec->cgroup_path ? c->rec->cgroup_path : "?");
  if (all && c->rec->cgroup_created) {
    _cleanup_cgroup_ struct sr_cgroup *cg = NULL;
    if (sr_container_open_cgroup(c, &cg, err) < 0)
      return -1;
    if (cg)
      return sr_cgroup_signal_all(cg, sig, err);
  }
  _cleanup_close_ int pidfd = -1;
  if (open_init_pidfd(c, &pidfd, err) < 0)
    return -1;
  if (sr_pidfd_send_signal(pidfd, sig) < 0)
    return sr_error_sys(err, "kill container \"%s\" (signal %d)", c->id, sig);
  /* A frozen process only dies once thawed. */
  if (sig == SIGKILL && st == SR_STATUS_PAUSED && c->rec->cgroup_created) {
    _cleanup_cgroup_ struct sr_cgroup *cg = NULL;
    if (sr_container_open_cgroup(c, &cg, err) == 0 && cg)
      sr_cgroup_freeze(cg, false, err);
    sr_error_free(err);
  }
  return 0;
}

static void wait_gone(int pidfd)
{
  struct pollfd p = {pidfd, POLLIN, 0};
  while (poll(&p, 1, 5000) < 0 && errno == EINTR)
    ;
}

int sr_container_delete(struct sr_container *c, bool force, const struct sr_hook_gate *gate,
                        sr_error_t *err)
{
  if (c->removed)
    return 0; /* destroyed already (a failed poststart hook), and `run` cleans up after it */
  if (c->damage) {
    if (!force)
      return sr_error_make(err, 0, "container \"%s\": %s: only `delete --force` removes it",
                           c->id, c->damage);
    sr_warn("delete: container \"%s\": %s: removing it from %s", c->id, c->damage,
            c->rec->cgroup_version || c->rec->pid ? "what its index records"
                                                  : "its directory alone");
  }
  if (c->unverified)
    sr_warn("delete: %s", c->unverified);
  enum sr_status st = sr_container_status(c);
  /* A created container is killed and deleted without --force, as runc does (containerd's
   * runc shim deletes created tasks so). */
  if (st != SR_STATUS_STOPPED && st != SR_STATUS_CREATED && !force)
    return sr_error_make(err, 0, "cannot delete container \"%s\" that is not stopped: %s", c->id,
                         sr_container_status_name(st));
  /* The config is needed for poststop hooks; a corrupt or missing one must not block the
   * cleanup. */
  _cleanup_config_ struct sr_config *config = NULL;
  sr_error_t cfg_err = NULL;
  if (sr_container_load_config(c, &config, &cfg_err) < 0) {
    _cleanup_free_ char *t = sr_error_text(cfg_err);
    sr_warn("delete: %s (poststop hooks skipped)", t ? t : "");
    sr_error_free(&cfg_err);
    /* A copy that is not what create kept is a decision too: on record. */
    sr_error_t ae = NULL;
    if (gate && gate->audit &&
        sr_audit_refusal(gate->audit, "config.json", "\"the state directory's copy\"",
                         t ? t : "config.json: refused", &ae) < 0)
      sr_error_free(&ae);
  }
  if (st != SR_STATUS_STOPPED || c->rec->pid > 0) {
    int pidfd = -1;
    sr_error_t e = NULL;
    if (open_init_pidfd(c, &pidfd, &e) == 0) {
      sr_pidfd_send_signal(pidfd, SIGKILL);
      if (st == SR_STATUS_PAUSED && c->rec->cgroup_created) {
        _cleanup_cgroup_ struct sr_cgroup *cg = NULL;
        if (sr_container_open_cgroup(c, &cg, &e) == 0 && cg)
          sr_cgroup_freeze(cg, false, &e);
      }
      wait_gone(pidfd);
      close(pidfd);
    }
    sr_error_free(&e);
  }
  SR_KILL_POINT("delete.after-kill");
  /* It ends with the init; a supervisor that is still there (its init was never started, or
   * it is stuck) is stopped here. */
  sr_supervisor_stop(c->rec->supervisor_pid, c->rec->supervisor_start,
                     c->rec->supervisor_activity ? c->dirfd : -1);
  _cleanup_cgroup_ struct sr_cgroup *cg = NULL;
  /* A cgroup seerun did not make is left as it is: killing what is in it, or removing it,
   * would reach processes that are not the container's (its init is killed above). */
  if (c->rec->cgroup_created && sr_container_open_cgroup(c, &cg, err) < 0)
    return -1;
  if (cg) {
    /* A systemd scope is stopped first (systemd removes what it made), then what is left of
     * it is removed: on v1 the hierarchies systemd does not manage were seerun's to make. */
    bool systemd = c->rec->systemd_cgroup;
    int r = sr_cgroup_destroy(cg, !systemd, err);
    if (r == 0 && systemd) {
      r = sr_systemd_stop_scope_of(c->rec->cgroup_path, err);
      if (r == 0)
        r = sr_cgroup_destroy(cg, true, err);
    }
    if (r < 0)
      return sr_error_wrap(err, "delete container \"%s\"", c->id);
  }
  SR_KILL_POINT("delete.after-cgroup");
  if (config && config->hooks.n[SR_HOOK_POSTSTOP]) {
    sr_error_t e = NULL;
    if (run_hooks_with_state(c, config, SR_HOOK_POSTSTOP, gate, &e) < 0) {
      _cleanup_free_ char *t = sr_error_text(e);
      sr_warn("poststop hook: %s", t ? t : "");
      sr_error_free(&e);
    }
  }
  SR_KILL_POINT("delete.before-remove-dir");
  return sr_statedir_remove_dir(c, err);
}

int sr_container_recover(const char *root, const char *id, struct sr_container **out,
                         sr_error_t *err)
{
  _cleanup_close_ int rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (rootfd < 0) {
    if (errno == ENOENT)
      return sr_error_make(err, ENOENT, "container \"%s\" does not exist", id);
    return sr_error_sys(err, "open state directory `%s`", root);
  }
  struct sr_container *c = NULL;
  if (sr_statedir_load_damaged(rootfd, id, &c, err) < 0)
    return -1;
  if (c->rec == NULL) {
    struct sr_state_record *rec = sr_state_record_new();
    if (rec == NULL) {
      sr_statedir_free(c);
      return sr_error_make(err, ENOMEM, "container \"%s\"", id);
    }
    /* Not creating, no init known: "stopped"; what the cgroup holds is killed with it. */
    rec->phase = SR_PHASE_CREATED;
    rec->id = sr_arena_strdup(&rec->arena, id);
    rec->bundle = rec->rootfs = rec->created = rec->owner = "";
    c->rec = rec;
    /* No guess from the config.json copy, which anyone who rewrote the records could have
     * rewritten too: the cgroup it would name is left alone, and said so. */
    sr_warn("delete: container \"%s\": neither its index nor its records are usable: only its "
            "directory is removed (a process or cgroup it had is left alone)",
            id);
  }
  steal_fd(rootfd); /* the container's now (c->rootfd) */
  *out = c;
  return 0;
}
