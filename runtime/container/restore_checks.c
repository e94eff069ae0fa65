/* restore: the checks of the restored tasks while CRIU still holds them stopped, and the
 * kill when one fails (see checkpoint.h for what is checked, and restore.c for the rest). */
#include "build.h"

#include "restore_internal.h"

#include "cleanup.h"
#include "criu_common.h"
#include "mountapi.h"
#include "fileio.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef HAVE_CRIU

/* libcriu's notify callback has no argument of the caller's: the one restore in progress in
 * this process (a command restores one container) is reached through this pointer. */
static struct restore_run *current_restore;

void sr_restore_checks_begin(struct restore_run *run)
{
  current_restore = run;
}

void sr_restore_checks_end(void)
{
  current_restore = NULL;
}

static int fail(struct restore_run *run, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static int fail(struct restore_run *run, const char *fmt, ...)
{
  if (run->failed[0] == '\0') {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(run->failed, sizeof(run->failed), fmt, ap);
    va_end(ap);
  }
  return -1;
}

/* ---- checks on the stopped, restored tasks ------------------------------------------------ */

static int check_map(struct restore_run *run, const char *file, const struct sr_id_map *m, size_t n)
{
  char path[64], buf[4096];
  size_t len;
  sr_error_t e = NULL;
  snprintf(path, sizeof(path), "/proc/%d/%s", run->pid, file);
  if (sr_fileio_read_small_at(AT_FDCWD, path, buf, sizeof(buf), &len, &e) < 0) {
    sr_error_free(&e);
    return fail(run, "read `%s`", path);
  }
  buf[len < sizeof(buf) ? len : sizeof(buf) - 1] = '\0';
  size_t i = 0;
  char *save = NULL;
  for (char *l = strtok_r(buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save), i++) {
    unsigned long a, b, c;
    if (sscanf(l, "%lu %lu %lu", &a, &b, &c) != 3 || i >= n || a != m[i].container_id ||
        b != m[i].host_id || c != m[i].size)
      return fail(run,
                  "the image's user namespace maps (%s: `%s`) are not the ones the policy "
                  "decided for this container (%s %" PRIu32 " %" PRIu32 " %" PRIu32 "): "
                  "seerun does not rewrite an image's user namespace; restore it under the "
                  "id it was checkpointed as, while its range is still that id's",
                  file, l, i < n ? "first" : "nothing beyond", i < n ? m[i].container_id : 0,
                  i < n ? m[i].host_id : 0, i < n ? m[i].size : 0);
  }
  if (i != n)
    return fail(run, "the image's user namespace (%s) has %zu maps, the policy decided %zu", file,
                i, n);
  return 0;
}

static int check_namespaces(struct restore_run *run)
{
  static const char *const files[SR_NS_COUNT] = {
      [SR_NS_USER] = "user", [SR_NS_MOUNT] = "mnt", [SR_NS_PID] = "pid",      [SR_NS_NET] = "net",
      [SR_NS_IPC] = "ipc",   [SR_NS_UTS] = "uts",   [SR_NS_CGROUP] = "cgroup"};
  const struct sr_linux *l = &run->ctx->config->linux_;
  for (int k = 0; k < SR_NS_COUNT; k++) {
    if (files[k] == NULL || !l->namespaces[k].present)
      continue;
    char theirs[64], ours[64];
    snprintf(theirs, sizeof(theirs), "/proc/%d/ns/%s", run->pid, files[k]);
    snprintf(ours, sizeof(ours), "/proc/self/ns/%s", files[k]);
    struct stat a, b;
    if (stat(theirs, &a) < 0 || stat(ours, &b) < 0)
      return fail(run, "stat `%s`: %s", theirs, strerror(errno));
    /* An image of a task left in the host's namespace would put it there. */
    if (a.st_ino == b.st_ino && a.st_dev == b.st_dev)
      return fail(run,
                  "the image puts the container in the host's %s namespace; the policy "
                  "decided a new one (linux.namespaces)",
                  files[k]);
  }
  return 0;
}

static bool allowed_virtual_fs(const char *t)
{
  static const char *const ok[] = {"proc",   "sysfs",  "tmpfs",  "devpts",
                                   "mqueue", "cgroup", "cgroup2"};
  for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
    if (strcmp(t, ok[i]) == 0)
      return true;
  return false;
}

static const struct sr_mountinfo *mount_at(const struct sr_mountinfo *m, size_t n, const char *p)
{
  const struct sr_mountinfo *found = NULL;
  for (size_t i = 0; i < n; i++)
    if (strcmp(m[i].point, p) == 0)
      found = &m[i]; /* the last one is on top */
  return found;
}

/* A masked or read-only path must be covered (by a mount at it) unless the image's root
 * filesystem and mounts do not have it. */
static int check_paths(struct restore_run *run, const struct sr_mountinfo *m, size_t n,
                       char **paths, size_t np, bool want_ro, const char *field)
{
  for (size_t i = 0; i < np; i++) {
    const struct sr_mountinfo *mi = mount_at(m, n, paths[i]);
    if (mi && (!want_ro || mi->readonly))
      continue;
    char p[PATH_MAX];
    snprintf(p, sizeof(p), "/proc/%d/root%s", run->pid, paths[i]);
    struct stat st;
    if (mi == NULL && lstat(p, &st) < 0 && errno == ENOENT)
      continue;
    return fail(run, "%s: `%s` is not %s in the restored container", field, paths[i],
                want_ro ? "read-only" : "masked");
  }
  return 0;
}

/* Only what the policy decided: the root seerun gave, the binds it gave (by mount point and
 * device), and the kernel's virtual filesystems; an image asking CRIU to mount anything else
 * (a host disk, devtmpfs) is refused. */
static int check_mounts(struct restore_run *run)
{
  _cleanup_criu_mounts_ struct sr_criu_mounts mounts = {NULL, 0};
  sr_error_t e = NULL;
  if (sr_criu_mountinfo_read(run->pid, &mounts.m, &mounts.n, &e) < 0) {
    _cleanup_free_ char *t = sr_error_text(e);
    sr_error_free(&e);
    return fail(run, "%s", t ? t : "mountinfo");
  }
  const struct sr_mountinfo *m = mounts.m;
  size_t n = mounts.n;
  int r = 0;
  for (size_t i = 0; i < n && r == 0; i++) {
    dev_t d = makedev(m[i].major, m[i].minor);
    if (strcmp(m[i].point, "/") == 0) {
      if (d != run->root_dev)
        r = fail(run, "the restored root filesystem is not the one the policy decided "
                      "(root.path)");
      continue;
    }
    size_t k = 0;
    while (k < run->n_ext && strcmp(run->ext_key[k], m[i].point) != 0)
      k++;
    if (k < run->n_ext) {
      if (d != run->ext_dev[k] && !allowed_virtual_fs(m[i].fstype))
        r = fail(run, "the mount at `%s` is not the one the policy decided", m[i].point);
      continue;
    }
    if (!allowed_virtual_fs(m[i].fstype))
      r = fail(run, "the image mounts %s at `%s`, which the policy did not decide (mounts)",
               m[i].fstype, m[i].point);
  }
  const struct sr_linux *l = &run->ctx->config->linux_;
  const struct sr_mountinfo *root = mount_at(m, n, "/");
  if (r == 0 && run->ctx->config->root_readonly && (root == NULL || !root->readonly))
    r = fail(run, "the restored root filesystem is writable; root.readonly is decided");
  if (r == 0)
    r = check_paths(run, m, n, l->masked_paths, l->n_masked_paths, false, "linux.maskedPaths");
  if (r == 0)
    r = check_paths(run, m, n, l->readonly_paths, l->n_readonly_paths, true, "linux.readonlyPaths");
  return r;
}

/* CRIU 4.1.1 restores a read-only root read-write (its issue 2632): put back, inside the
 * restored mount namespace, while the tasks are still stopped. */
static int remount_root_readonly(struct restore_run *run)
{
  char path[64];
  snprintf(path, sizeof(path), "/proc/%d/ns/mnt", run->pid);
  _cleanup_close_ int ns = open(path, O_RDONLY | O_CLOEXEC);
  if (ns < 0)
    return fail(run, "open `%s`: %s", path, strerror(errno));
  pid_t child = fork();
  if (child < 0)
    return fail(run, "fork: %s", strerror(errno));
  if (child == 0) {
    /* setns into a mount namespace moves root and cwd to its root: "/" is the container's. */
    struct sr_mount_attr attr = {.attr_set = MOUNT_ATTR_RDONLY};
    if (setns(ns, CLONE_NEWNS) < 0 || sr_mountapi_mount_setattr(AT_FDCWD, "/", 0, &attr) < 0)
      _exit(errno ? errno : 1);
    _exit(0);
  }
  int status;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR)
    ;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return fail(run, "make the restored root filesystem read-only again: %s",
                WIFEXITED(status) ? strerror(WEXITSTATUS(status)) : "the helper was killed");
  return 0;
}

static int read_status(pid_t tid, char *buf, size_t size)
{
  char path[64];
  size_t len;
  sr_error_t e = NULL;
  snprintf(path, sizeof(path), "/proc/%d/status", tid);
  if (sr_fileio_read_small_at(AT_FDCWD, path, buf, size, &len, &e) < 0) {
    sr_error_free(&e);
    return -1;
  }
  buf[len < size ? len : size - 1] = '\0';
  return 0;
}

static bool field_u64(const char *status, const char *key, int base, uint64_t *out)
{
  const char *p = strstr(status, key);
  if (p == NULL)
    return false;
  *out = strtoull(p + strlen(key), NULL, base);
  return true;
}

static bool in_maps(const struct sr_id_map *m, size_t n, unsigned long id)
{
  for (size_t i = 0; i < n; i++)
    if (id >= m[i].host_id && id - m[i].host_id < m[i].size)
      return true;
  return false;
}

/* One restored task: ids, capabilities, no_new_privs, seccomp, cgroup. */
static int check_task(struct restore_run *run, pid_t tid)
{
  const struct sr_create_ctx *ctx = run->ctx;
  const struct sr_config *c = ctx->config;
  char st[8192];
  if (read_status(tid, st, sizeof(st)) < 0)
    return fail(run, "read /proc/%d/status", tid);
  /* A child dumped unreaped comes back a zombie with CRIU's credentials (it runs no code, so
   * CRIU restores none): nothing to hold a capability with. */
  if (strstr(st, "\nState:\tZ") != NULL || strstr(st, "\nState:\tX") != NULL)
    return 0;
  const struct sr_linux *l = &c->linux_;
  if (l->namespaces[SR_NS_USER].present) {
    static const char *const keys[] = {"\nUid:", "\nGid:"};
    for (int k = 0; k < 2; k++) {
      const char *p = strstr(st, keys[k]);
      unsigned long v[4];
      if (p == NULL || sscanf(p + 5, "%lu %lu %lu %lu", &v[0], &v[1], &v[2], &v[3]) != 4)
        return fail(run, "task %d: no %s", tid, keys[k] + 1);
      for (int j = 0; j < 4; j++)
        if (!in_maps(k ? l->gid_mappings : l->uid_mappings,
                     k ? l->n_gid_mappings : l->n_uid_mappings, v[j]))
          return fail(run, "task %d holds host %s %lu, outside the container's range", tid,
                      k ? "gid" : "uid", v[j]);
    }
  }
  uint64_t bounding =
      c->process->capabilities ? c->process->capabilities->sets[SR_CAP_BOUNDING] : 0;
  static const char *const caps[] = {
      "\nCapInh:", "\nCapPrm:", "\nCapEff:", "\nCapBnd:", "\nCapAmb:"};
  for (size_t k = 0; k < sizeof(caps) / sizeof(caps[0]); k++) {
    uint64_t v;
    if (!field_u64(st, caps[k], 16, &v))
      return fail(run, "task %d: no %s", tid, caps[k] + 1);
    if (v & ~bounding)
      return fail(run,
                  "task %d holds capabilities %#" PRIx64 " (%s) beyond those decided "
                  "(process.capabilities.bounding %#" PRIx64 ")",
                  tid, v & ~bounding, caps[k] + 1, bounding);
  }
  uint64_t v;
  if (c->process->no_new_privileges && (!field_u64(st, "\nNoNewPrivs:", 10, &v) || v != 1))
    return fail(run, "task %d runs without no_new_privs (process.noNewPrivileges)", tid);
  if ((ctx->builtin_seccomp || l->seccomp) && (!field_u64(st, "\nSeccomp:", 10, &v) || v != 2))
    return fail(run,
                "task %d runs without its seccomp filter (the built-in filter is "
                "mandatory)",
                tid);
  /* Every task in the container's cgroup (its limits), in every hierarchy. */
  char path[64], buf[4096];
  size_t len;
  sr_error_t e = NULL;
  snprintf(path, sizeof(path), "/proc/%d/cgroup", tid);
  if (sr_fileio_read_small_at(AT_FDCWD, path, buf, sizeof(buf), &len, &e) < 0) {
    sr_error_free(&e);
    return fail(run, "read `%s`", path);
  }
  buf[len < sizeof(buf) ? len : sizeof(buf) - 1] = '\0';
  const char *cg = ctx->cgroup->path;
  size_t cl = strlen(cg);
  char *save = NULL;
  for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    char *p = strchr(line, ':');
    p = p ? strchr(p + 1, ':') : NULL;
    if (p == NULL)
      continue;
    p++;
    if (strstr(line, ":name=") != NULL && strncmp(p, cg, cl) != 0)
      continue; /* named hierarchies (name=systemd) carry no limits */
    if (strncmp(p, cg, cl) != 0 || (p[cl] != '\0' && p[cl] != '/'))
      return fail(run, "task %d is in cgroup `%s`, outside the container's `%s`", tid, line, cg);
  }
  return 0;
}

/* The restored tree, from the init down (children of every thread). */
static int check_tasks(struct restore_run *run, pid_t pid, int depth)
{
  if (depth > 64)
    return fail(run, "the restored process tree is too deep");
  char path[64];
  snprintf(path, sizeof(path), "/proc/%d/task", pid);
  _cleanup_dir_ DIR *d = opendir(path);
  if (d == NULL)
    return fail(run, "open `%s`: %s", path, strerror(errno));
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    if (de->d_name[0] == '.')
      continue;
    pid_t tid = atoi(de->d_name);
    if (check_task(run, tid) < 0)
      return -1;
    char cp[96], buf[4096];
    size_t len;
    sr_error_t e = NULL;
    snprintf(cp, sizeof(cp), "/proc/%d/task/%d/children", pid, tid);
    if (sr_fileio_read_small_at(AT_FDCWD, cp, buf, sizeof(buf), &len, &e) < 0) {
      sr_error_free(&e);
      return fail(run, "read `%s`", cp);
    }
    buf[len < sizeof(buf) ? len : sizeof(buf) - 1] = '\0';
    char *save = NULL;
    for (char *t = strtok_r(buf, " \n", &save); t; t = strtok_r(NULL, " \n", &save))
      if (check_task(run, atoi(t)) < 0 || check_tasks(run, atoi(t), depth + 1) < 0)
        return -1;
  }
  return 0;
}

static void kill_tree(pid_t pid, int depth)
{
  char path[64];
  snprintf(path, sizeof(path), "/proc/%d/task", pid);
  _cleanup_dir_ DIR *d = depth < 64 ? opendir(path) : NULL;
  struct dirent *de;
  while (d && (de = readdir(d)) != NULL) {
    if (de->d_name[0] == '.')
      continue;
    char cp[320], buf[4096];
    size_t len;
    sr_error_t e = NULL;
    snprintf(cp, sizeof(cp), "/proc/%d/task/%s/children", pid, de->d_name);
    if (sr_fileio_read_small_at(AT_FDCWD, cp, buf, sizeof(buf), &len, &e) < 0) {
      sr_error_free(&e);
      continue;
    }
    buf[len < sizeof(buf) ? len : sizeof(buf) - 1] = '\0';
    char *save = NULL;
    for (char *t = strtok_r(buf, " \n", &save); t; t = strtok_r(NULL, " \n", &save))
      kill_tree(atoi(t), depth + 1);
  }
  kill(pid, SIGKILL);
}

/* A failed check while CRIU still traces the tasks: every task gets SIGKILL, then so does
 * CRIU, their tracer (killing only the tasks would deadlock: CRIU waits for the init, which
 * waits for its children, which wait for their tracer).  Detached by the tracer's death, they
 * die of the pending SIGKILL before running a single instruction of their own. */
static void kill_stopped_tree(struct restore_run *run)
{
  char st[8192];
  uint64_t tracer = 0;
  if (read_status(run->pid, st, sizeof(st)) == 0)
    field_u64(st, "\nTracerPid:", 10, &tracer);
  kill_tree(run->pid, 0);
  /* Only our own child: libcriu's criu swrk. */
  if (tracer > 0) {
    char ppath[64], pbuf[1024];
    size_t plen;
    sr_error_t e = NULL;
    snprintf(ppath, sizeof(ppath), "/proc/%" PRIu64 "/stat", tracer);
    if (sr_fileio_read_small_at(AT_FDCWD, ppath, pbuf, sizeof(pbuf), &plen, &e) == 0) {
      pbuf[plen < sizeof(pbuf) ? plen : sizeof(pbuf) - 1] = '\0';
      const char *rp = strrchr(pbuf, ')');
      int ppid = 0;
      if (rp && sscanf(rp + 1, " %*c %d", &ppid) == 1 && ppid == getpid())
        kill((pid_t)tracer, SIGKILL);
    }
    sr_error_free(&e);
  }
  run->killed_criu = true;
}

/* "post-restore": namespaces, maps and mounts exist, the tasks wait in CRIU's restorer; a
 * failure here makes CRIU abort and kill them.  "pre-resume": their credentials, seccomp
 * filters and cgroups are restored and they are stopped at sigreturn; CRIU only logs a failed
 * answer there, so seerun kills them itself (SIGKILL: they never run again). */
int sr_restore_checks_notify(char *action, criu_notify_arg_t na)
{
  struct restore_run *run = current_restore;
  if (run == NULL)
    return 0;
  const struct sr_config *c = run->ctx->config;
  if (strcmp(action, "post-restore") == 0) {
    run->pid = criu_notify_pid(na);
    if (run->pid <= 0)
      return fail(run, "criu did not say which process it restored");
    const struct sr_linux *l = &c->linux_;
    if (l->namespaces[SR_NS_USER].present &&
        (check_map(run, "uid_map", l->uid_mappings, l->n_uid_mappings) < 0 ||
         check_map(run, "gid_map", l->gid_mappings, l->n_gid_mappings) < 0))
      return -1;
    if (check_namespaces(run) < 0)
      return -1;
    /* Test-only fault (never set by an engine): proves a failure here aborts the restore. */
    const char *fault = getenv("SEERUN_TEST_RESTORE_FAULT");
    if (fault && strcmp(fault, "remount") == 0)
      return fail(run, "make the restored root filesystem read-only again: injected failure "
                       "(SEERUN_TEST_RESTORE_FAULT)");
    if (c->root_readonly && remount_root_readonly(run) < 0)
      return -1;
    return check_mounts(run);
  }
  if (strcmp(action, "pre-resume") == 0 && run->pid > 0) {
    if (check_tasks(run, run->pid, 0) < 0) {
      kill_stopped_tree(run);
      return -1;
    }
  }
  return 0;
}

#endif
