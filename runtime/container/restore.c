/* restore: a container created by the policy like a new one, whose processes CRIU brings back
 * from an image directory (untrusted input: see checkpoint.h for what is checked, and when). */
#include "build.h"

#include "checkpoint.h"

#include "cleanup.h"
#include "create_steps.h"
#include "criu_common.h"
#include "json.h"
#include "log.h"
#include "mountapi.h"
#include "namespaces.h"
#include "seccomp_default.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef HAVE_CRIU
#include <criu.h>

#define MAX_EXT 256

/* What the checks need while CRIU holds the restored tasks stopped. */
struct restore_run {
  struct sr_create_ctx *ctx;
  pid_t pid;      /* the restored init, from "post-restore" */
  dev_t root_dev; /* the root filesystem seerun handed CRIU */
  size_t n_ext;
  const char *ext_key[MAX_EXT]; /* mount points CRIU binds from what seerun gives */
  dev_t ext_dev[MAX_EXT];
  char failed[1024]; /* the first failed check; the restore is aborted */
  bool killed_criu;  /* its mounts in the work directory are left to remove */
};

/* libcriu's notify callback has no argument of the caller's: the one restore in progress in
 * this process (a command restores one container) is reached through this pointer, set only
 * around criu_local_restore_child. */
static struct restore_run *current_restore;

static void free_opts(criu_opts **o)
{
  if (*o)
    criu_local_free_opts(*o);
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
  if (sr_read_small_file_at(AT_FDCWD, path, buf, sizeof(buf), &len, &e) < 0) {
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
  struct sr_mountinfo *m = NULL;
  size_t n = 0;
  sr_error_t e = NULL;
  if (sr_mountinfo_read(run->pid, &m, &n, &e) < 0) {
    _cleanup_free_ char *t = sr_error_text(e);
    sr_error_free(&e);
    return fail(run, "%s", t ? t : "mountinfo");
  }
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
  sr_mountinfo_free(m, n);
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
    if (setns(ns, CLONE_NEWNS) < 0 || sr_mount_setattr(AT_FDCWD, "/", 0, &attr) < 0)
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
  if (sr_read_small_file_at(AT_FDCWD, path, buf, size, &len, &e) < 0) {
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
  if (sr_read_small_file_at(AT_FDCWD, path, buf, sizeof(buf), &len, &e) < 0) {
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
    if (sr_read_small_file_at(AT_FDCWD, cp, buf, sizeof(buf), &len, &e) < 0) {
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
    if (sr_read_small_file_at(AT_FDCWD, cp, buf, sizeof(buf), &len, &e) < 0) {
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
    if (sr_read_small_file_at(AT_FDCWD, ppath, pbuf, sizeof(pbuf), &plen, &e) == 0) {
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
static int notify(char *action, criu_notify_arg_t na)
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

/* ---- preparing what CRIU is given --------------------------------------------------------- */

struct restore_mounts {
  char dir[PATH_MAX]; /* a private tmpfs under /run/seerun-restore */
  bool made, mounted;
  char (*paths)[PATH_MAX];
  size_t n;
};

static void restore_mounts_release(struct restore_mounts *rm)
{
  if (rm->mounted && umount2(rm->dir, MNT_DETACH) < 0)
    sr_warn("unmount `%s`: %s", rm->dir, strerror(errno));
  if (rm->made)
    rmdir(rm->dir);
  rm->mounted = rm->made = false;
  free(rm->paths);
  rm->paths = NULL;
}

/* The mounts seerun hands CRIU live under a private tmpfs (nothing attached there propagates
 * to the host's peers, nor from them into the container) in a directory of root's under /run
 * that others may only traverse: CRIU opens them from inside the container's user namespace,
 * as its root, who cannot reach the state directory or an engine's 0700 image directories.
 * The tmpfs itself is open to the container's root group only. */
#define SR_RESTORE_MOUNTS_DIR "/run/seerun-restore"

/* A restore killed midway leaves its directory (and tmpfs) behind: swept by the next restore
 * once the process that made it is gone, as create sweeps its temporaries. */
static void sweep_stale(int top)
{
  _cleanup_dir_ DIR *d = sr_opendir_fd(top);
  if (d == NULL)
    return;
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    char *dot;
    long pid = strtol(de->d_name, &dot, 10);
    if (de->d_name[0] == '.' || pid <= 0 || *dot != '.' || kill((pid_t)pid, 0) == 0 ||
        errno != ESRCH)
      continue;
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/%s", SR_RESTORE_MOUNTS_DIR, de->d_name);
    umount2(path, MNT_DETACH | UMOUNT_NOFOLLOW);
    unlinkat(top, de->d_name, AT_REMOVEDIR);
  }
}

static int restore_mounts_begin(struct restore_mounts *rm, const char *id, const struct sr_linux *l,
                                size_t max, sr_error_t *err)
{
  if (mkdir(SR_RESTORE_MOUNTS_DIR, 0711) < 0 && errno != EEXIST)
    return sr_error_sys(err, "mkdir `%s`", SR_RESTORE_MOUNTS_DIR);
  _cleanup_close_ int top =
      open(SR_RESTORE_MOUNTS_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  struct stat st;
  if (top < 0 || fstat(top, &st) < 0)
    return sr_error_sys(err, "open `%s`", SR_RESTORE_MOUNTS_DIR);
  /* Someone else's directory there could watch or swap what CRIU mounts. */
  if (st.st_uid != 0 || (st.st_mode & 022))
    return sr_error_make(err, EPERM, "`%s`: not root's alone", SR_RESTORE_MOUNTS_DIR);
  sweep_stale(top);
  char name[NAME_MAX + 1];
  if ((size_t)snprintf(name, sizeof(name), "%d.%.200s", getpid(), id) >= sizeof(name))
    return sr_error_make(err, ENAMETOOLONG, "restore: `%s`", id);
  snprintf(rm->dir, sizeof(rm->dir), "%s/%s", SR_RESTORE_MOUNTS_DIR, name);
  if (mkdirat(top, name, 0700) < 0)
    return sr_error_sys(err, "mkdir `%s`", rm->dir);
  rm->made = true;
  char opt[32] = "0";
  if (l->namespaces[SR_NS_USER].present && l->n_gid_mappings > 0)
    snprintf(opt, sizeof(opt), "%" PRIu32, l->gid_mappings[0].host_id);
  _cleanup_close_ int fs = sr_fsopen("tmpfs", FSOPEN_CLOEXEC);
  if (fs < 0 || sr_fsconfig(fs, FSCONFIG_SET_STRING, "mode", "0750", 0) < 0 ||
      sr_fsconfig(fs, FSCONFIG_SET_STRING, "gid", opt, 0) < 0 ||
      sr_fsconfig(fs, FSCONFIG_SET_STRING, "size", "64k", 0) < 0 ||
      sr_fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
    return sr_error_sys(err, "tmpfs for `%s`", rm->dir);
  _cleanup_close_ int mnt = sr_fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
  if (mnt < 0)
    return sr_error_sys(err, "fsmount tmpfs for `%s`", rm->dir);
  struct sr_mount_attr prop = {.propagation = MS_PRIVATE};
  _cleanup_close_ int target = openat(top, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (target < 0 || sr_mount_setattr(mnt, "", AT_EMPTY_PATH, &prop) < 0 ||
      sr_attach_mount(mnt, target) < 0)
    return sr_error_sys(err, "mount tmpfs on `%s`", rm->dir);
  rm->mounted = true;
  rm->paths = calloc(max + 1, sizeof(*rm->paths));
  if (rm->paths == NULL)
    return sr_error_make(err, ENOMEM, "restore mounts");
  return 0;
}

/* Attaches tree at <dir>/<name> (a directory or a file) and returns its path. */
static int attach_tree(struct restore_mounts *rm, int tree, bool dir, const char *name,
                       const char **path, sr_error_t *err)
{
  char *p = rm->paths[rm->n];
  if (snprintf(p, PATH_MAX, "%s/%s", rm->dir, name) >= PATH_MAX)
    return sr_error_make(err, ENAMETOOLONG, "restore: `%s`", name);
  int fd = dir ? mkdir(p, 0700) : open(p, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
  if (fd < 0)
    return sr_error_sys(err, "create `%s`", p);
  if (!dir)
    close(fd);
  _cleanup_close_ int target = open(p, O_PATH | O_CLOEXEC | O_NOFOLLOW);
  if (target < 0 || sr_attach_mount(tree, target) < 0)
    return sr_error_sys(err, "attach `%s`", p);
  rm->n++;
  *path = p;
  return 0;
}

/* The idmapped trees a new container would get: the root filesystem and the "idmap" binds,
 * idmapped with a throwaway user namespace holding the decided maps (the restored one does
 * not exist yet); the root read-only as decided. */
static int idmap_trees(struct sr_create_ctx *ctx, sr_error_t *err)
{
  const struct sr_config *c = ctx->config;
  _cleanup_close_ int userns = -1;
  if (ctx->ns.new_userns && sr_userns_open_with_maps(&c->linux_, &userns, err) < 0)
    return sr_error_wrap(err, "restore: user namespace for the idmapped mounts");
  if (ctx->rootfs_tree_fd < 0) {
    ctx->rootfs_tree_fd =
        sr_open_tree(AT_FDCWD, ctx->rootfs, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
    if (ctx->rootfs_tree_fd < 0)
      return sr_error_sys(err, "bind root filesystem `%s`", ctx->rootfs);
  } else if (!ctx->rootfs_idmapped && userns >= 0) {
    struct sr_mount_attr attr = {.attr_set = MOUNT_ATTR_IDMAP, .userns_fd = (uint64_t)userns};
    if (sr_mount_setattr(ctx->rootfs_tree_fd, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr) < 0)
      return sr_error_sys(err, "idmap the root filesystem");
  }
  if (c->root_readonly) {
    struct sr_mount_attr ro = {.attr_set = MOUNT_ATTR_RDONLY};
    if (sr_mount_setattr(ctx->rootfs_tree_fd, "", AT_EMPTY_PATH, &ro) < 0)
      return sr_error_sys(err, "root filesystem read-only");
  }
  for (size_t i = 0; i < ctx->binds.n; i++) {
    const struct sr_mount *m = &c->mounts[i];
    if (ctx->binds.tree_fd[i] < 0 || !(m->opts.idmap || m->opts.ridmap))
      continue;
    if (m->n_uid_mappings > 0 || userns < 0)
      return sr_error_make(err, EOPNOTSUPP,
                           "%s: restore: an idmapped bind with its own "
                           "mappings is not supported",
                           m->field);
    struct sr_mount_attr attr = {.attr_set = MOUNT_ATTR_IDMAP, .userns_fd = (uint64_t)userns};
    unsigned flags = AT_EMPTY_PATH | (m->opts.ridmap ? AT_RECURSIVE : 0);
    if (sr_mount_setattr(ctx->binds.tree_fd[i], "", flags, &attr) < 0)
      return sr_error_sys(err, "%s: idmap `%s`", m->field, m->destination);
  }
  return 0;
}

static int add_ext(struct restore_run *run, criu_opts *opts, const char *key, const char *val,
                   sr_error_t *err)
{
  struct stat st;
  if (run->n_ext >= MAX_EXT)
    return sr_error_make(err, E2BIG, "restore: more than %d external mounts", MAX_EXT);
  if (stat(val, &st) < 0)
    return sr_error_sys(err, "restore: `%s`", val);
  if (criu_local_add_ext_mount(opts, key, val) < 0)
    return sr_error_make(err, ENOMEM, "criu: external mount %s", key);
  run->ext_key[run->n_ext] = key;
  run->ext_dev[run->n_ext] = st.st_dev;
  run->n_ext++;
  return 0;
}

/* Every mount CRIU binds from outside, by mount point: the bind sources and device nodes seerun
 * opened for this config, /dev/null for masked files.  An image naming any other mount point
 * as external finds no mapping, and CRIU fails. */
static int external_mounts(struct restore_run *run, criu_opts *opts, struct restore_mounts *rm,
                           sr_error_t *err)
{
  struct sr_create_ctx *ctx = run->ctx;
  const struct sr_config *c = ctx->config;
  char name[64];
  const char *path;
  for (size_t i = 0; i < ctx->binds.n; i++) {
    if (ctx->binds.tree_fd[i] < 0)
      continue;
    snprintf(name, sizeof(name), "bind-%zu", i);
    if (attach_tree(rm, ctx->binds.tree_fd[i], ctx->binds.is_dir[i], name, &path, err) < 0 ||
        add_ext(run, opts, c->mounts[i].destination, path, err) < 0)
      return -1;
  }
  for (size_t i = 0; i < ctx->devs.n; i++) {
    if (ctx->devs.host_node_fd == NULL || ctx->devs.host_node_fd[i] < 0)
      continue;
    snprintf(name, sizeof(name), "dev-%zu", i);
    if (attach_tree(rm, ctx->devs.host_node_fd[i], false, name, &path, err) < 0 ||
        add_ext(run, opts, ctx->devs.devices[i].path, path, err) < 0)
      return -1;
  }
  for (size_t i = 0; i < c->linux_.n_masked_paths; i++)
    if (add_ext(run, opts, c->linux_.masked_paths[i], "/dev/null", err) < 0)
      return -1;
  return 0;
}

/* ---- the image's user namespace, read before CRIU starts -------------------------------- */

static bool pb_varint(const unsigned char **p, const unsigned char *end, uint64_t *v)
{
  *v = 0;
  for (int shift = 0; shift < 64 && *p < end; shift += 7) {
    unsigned char b = *(*p)++;
    *v |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80))
      return true;
  }
  return false;
}

/* One uid_gid_extent {first = 1, lower_first = 2, count = 3}. */
static bool pb_extent(const unsigned char *p, const unsigned char *end, struct sr_id_map *m)
{
  while (p < end) {
    uint64_t key, v;
    if (!pb_varint(&p, end, &key) || (key & 7) != 0 || !pb_varint(&p, end, &v) || v > UINT32_MAX)
      return false;
    if ((key >> 3) == 1)
      m->container_id = (uint32_t)v;
    else if ((key >> 3) == 2)
      m->host_id = (uint32_t)v;
    else if ((key >> 3) == 3)
      m->size = (uint32_t)v;
  }
  return true;
}

/* The maps of the image's user namespace must be the ones the policy decided for this id:
 * seerun never rewrites them (the image's files and memory hold ids of that range), and a
 * restore under another id, which the registry gives another range, is refused.  The same is
 * checked again on the restored namespace itself (post-restore): this early look only gives a
 * clear answer before CRIU starts (a restore on another range fails in CRIU otherwise). */
static int check_image_userns(int imgfd, const struct sr_linux *l, sr_error_t *err)
{
  if (!l->namespaces[SR_NS_USER].present)
    return 0;
  _cleanup_dir_ DIR *d = sr_opendir_fd(imgfd);
  if (d == NULL)
    return sr_error_sys(err, "--image-path: read");
  struct dirent *de;
  char name[NAME_MAX + 1] = "";
  while ((de = readdir(d)) != NULL)
    if (strncmp(de->d_name, "userns-", 7) == 0 && strstr(de->d_name, ".img"))
      snprintf(name, sizeof(name), "%s", de->d_name);
  if (name[0] == '\0')
    return sr_error_make(err, EPERM,
                         "restore: refused: the image has no user namespace; the "
                         "policy decided one (linux.namespaces)");
  _cleanup_free_ char *buf = NULL;
  size_t len;
  if (sr_read_file_at(imgfd, name, 1 << 20, &buf, &len, err) < 0)
    return sr_error_wrap(err, "--image-path");
  /* Two magics, then one entry: its length and the message. */
  const unsigned char *p = (const unsigned char *)buf + 12, *end = (const unsigned char *)buf + len;
  uint32_t msg_len;
  if (len < 12 || (memcpy(&msg_len, buf + 8, 4), msg_len > len - 12))
    return sr_error_make(err, EINVAL, "--image-path: `%s`: not a CRIU image", name);
  end = p + msg_len;
  const struct sr_id_map *want[2] = {l->uid_mappings, l->gid_mappings};
  size_t n_want[2] = {l->n_uid_mappings, l->n_gid_mappings}, seen[2] = {0, 0};
  while (p < end) {
    uint64_t key, sub;
    if (!pb_varint(&p, end, &key) || (key & 7) != 2 || !pb_varint(&p, end, &sub) ||
        sub > (uint64_t)(end - p))
      return sr_error_make(err, EINVAL, "--image-path: `%s`: cannot parse", name);
    int k = (int)(key >> 3) - 1;
    struct sr_id_map m = {0};
    if (k < 0 || k > 1 || !pb_extent(p, p + sub, &m))
      return sr_error_make(err, EINVAL, "--image-path: `%s`: cannot parse", name);
    p += sub;
    size_t i = seen[k]++;
    if (i >= n_want[k] || m.container_id != want[k][i].container_id ||
        m.host_id != want[k][i].host_id || m.size != want[k][i].size)
      return sr_error_make(
          err, EPERM,
          "restore: refused: the image's user namespace maps (%s: `%" PRIu32 " %" PRIu32 " %" PRIu32
          "`) are not the ones the policy decided for this id (%s): seerun does "
          "not rewrite an image's user namespace; restore it under the id it was checkpointed "
          "as, while its range is still that id's",
          k ? "gid_map" : "uid_map", m.container_id, m.host_id, m.size,
          i < n_want[k] ? "another range" : "fewer maps");
  }
  if (seen[0] != n_want[0] || seen[1] != n_want[1])
    return sr_error_make(err, EPERM,
                         "restore: refused: the image's user namespace has other "
                         "maps than the policy decided");
  return 0;
}

/* One seccomp_filter {bytes filter = 1; uint32 prev = 2; uint32 flags = 3}. */
struct img_filter {
  const unsigned char *prog;
  size_t len;
  bool has_prev;
  uint64_t prev;
};

static bool pb_filter(const unsigned char *p, const unsigned char *end, struct img_filter *f)
{
  while (p < end) {
    uint64_t key, v;
    if (!pb_varint(&p, end, &key))
      return false;
    if ((key & 7) == 2) {
      if (!pb_varint(&p, end, &v) || v > (uint64_t)(end - p))
        return false;
      if ((key >> 3) == 1) {
        f->prog = p;
        f->len = (size_t)v;
      }
      p += v;
    } else if ((key & 7) == 0) {
      if (!pb_varint(&p, end, &v))
        return false;
      if ((key >> 3) == 2) {
        f->has_prev = true;
        f->prev = v;
      }
    } else
      return false;
  }
  return f->prog != NULL;
}

/* The next field of a protobuf message: its number, and its value (varint) or bytes. */
static bool pb_next(const unsigned char **p, const unsigned char *end, uint64_t *field, uint64_t *v,
                    const unsigned char **sub, size_t *sub_len)
{
  uint64_t key;
  if (!pb_varint(p, end, &key))
    return false;
  *field = key >> 3;
  switch (key & 7) {
  case 0:
    return pb_varint(p, end, v);
  case 1:
    if (end - *p < 8)
      return false;
    *p += 8;
    return true;
  case 2:
    if (!pb_varint(p, end, v) || *v > (uint64_t)(end - *p))
      return false;
    *sub = *p;
    *sub_len = (size_t)*v;
    *p += *v;
    return true;
  case 5:
    if (end - *p < 4)
      return false;
    *p += 4;
    return true;
  }
  return false;
}

/* A thread's stack: its filter in seccomp.img and those below it through `prev` (CRIU
 * writes a stack newest first and points each older one at the newer, so the index a thread
 * names is its oldest filter, where the built-in one must be). */
static bool stack_has_builtin(const struct img_filter *f, size_t n, uint64_t idx)
{
  size_t want = sr_seccomp_default_prog_len * sizeof(struct sock_filter);
  for (size_t steps = 0; idx < n && steps <= n; steps++) {
    if (f[idx].len == want && memcmp(f[idx].prog, sr_seccomp_default_prog, want) == 0)
      return true;
    if (!f[idx].has_prev)
      return false;
    idx = f[idx].prev;
  }
  return false;
}

/* Every thread of the image (core-*.img: thread_core.seccomp_mode/seccomp_filter, or the
 * task's old_seccomp_* of older images) in filter mode on a stack holding the built-in
 * filter. */
static int check_core_seccomp(int imgfd, const struct img_filter *f, size_t n, sr_error_t *err)
{
  _cleanup_dir_ DIR *d = sr_opendir_fd(imgfd);
  if (d == NULL)
    return sr_error_sys(err, "--image-path: read");
  struct dirent *de;
  size_t cores = 0;
  while ((de = readdir(d)) != NULL) {
    if (strncmp(de->d_name, "core-", 5) != 0 || !strstr(de->d_name, ".img"))
      continue;
    _cleanup_free_ char *buf = NULL;
    size_t len;
    if (sr_read_file_at(imgfd, de->d_name, 16 << 20, &buf, &len, err) < 0)
      return sr_error_wrap(err, "--image-path");
    uint32_t msg_len;
    if (len < 12 || (memcpy(&msg_len, buf + 8, 4), msg_len > len - 12))
      return sr_error_make(err, EINVAL, "--image-path: `%s`: not a CRIU image", de->d_name);
    const unsigned char *p = (const unsigned char *)buf + 12, *end = p + msg_len;
    uint64_t mode = 0, idx = UINT64_MAX, old_mode = 0, old_idx = UINT64_MAX, state = 1;
    bool has_mode = false;
    while (p < end) {
      uint64_t field, v = 0;
      const unsigned char *sub = NULL;
      size_t sl = 0;
      if (!pb_next(&p, end, &field, &v, &sub, &sl))
        return sr_error_make(err, EINVAL, "--image-path: `%s`: cannot parse", de->d_name);
      if ((field != 3 && field != 5) || sub == NULL)
        continue;
      for (const unsigned char *q = sub, *qe = sub + sl; q < qe;) {
        uint64_t f2, v2 = 0;
        const unsigned char *s2 = NULL;
        size_t l2 = 0;
        if (!pb_next(&q, qe, &f2, &v2, &s2, &l2))
          return sr_error_make(err, EINVAL, "--image-path: `%s`: cannot parse", de->d_name);
        if (field == 5 && f2 == 11)
          mode = v2, has_mode = true;
        else if (field == 5 && f2 == 12)
          idx = v2;
        else if (field == 3 && f2 == 11)
          old_mode = v2;
        else if (field == 3 && f2 == 12)
          old_idx = v2;
        else if (field == 3 && f2 == 1)
          state = v2;
      }
    }
    if (!has_mode)
      mode = old_mode, idx = old_idx;
    cores++;
    /* Zombies (6), dead tasks (2) and CRIU's helpers (7) never run again: nothing to filter. */
    if (state == 2 || state == 6 || state == 7)
      continue;
    if (mode != 2 || !stack_has_builtin(f, n, idx))
      return sr_error_make(err, EPERM,
                           "restore: refused: a thread of the image (%s) runs %s: seerun's "
                           "built-in seccomp filter is mandatory",
                           de->d_name,
                           mode != 2 ? "without a seccomp filter"
                                     : "a filter stack that does not hold the built-in filter");
  }
  if (cores == 0)
    return sr_error_make(err, EINVAL, "--image-path: no core-*.img: not a checkpoint");
  return 0;
}

/* Every thread's filter stack in the image (seccomp.img, through the index in its core image)
 * must hold seerun's built-in filter, byte for byte: an image whose tasks carry
 * another filter, or none, would run them without the mandatory one.  Seccomp: 2 on the
 * restored tasks (pre-resume) says a filter is there; this says it is ours. */
static int check_image_seccomp(int imgfd, bool builtin, sr_error_t *err)
{
  if (!builtin)
    return 0;
  _cleanup_free_ char *buf = NULL;
  size_t len;
  sr_error_t e = NULL;
  if (sr_read_file_at(imgfd, "seccomp.img", 16 << 20, &buf, &len, &e) < 0) {
    sr_error_free(&e);
    return sr_error_make(err, EPERM,
                         "restore: refused: the image holds no seccomp filter "
                         "(seccomp.img); seerun's built-in filter is mandatory");
  }
  uint32_t msg_len;
  if (len < 12 || (memcpy(&msg_len, buf + 8, 4), msg_len > len - 12))
    return sr_error_make(err, EINVAL, "--image-path: seccomp.img: not a CRIU image");
  const unsigned char *p = (const unsigned char *)buf + 12, *end = p + msg_len;
  size_t n = 0, cap = 0;
  _cleanup_free_ struct img_filter *f = NULL;
  while (p < end) {
    uint64_t key, sub;
    if (!pb_varint(&p, end, &key) || key != ((1 << 3) | 2) || !pb_varint(&p, end, &sub) ||
        sub > (uint64_t)(end - p))
      return sr_error_make(err, EINVAL, "--image-path: seccomp.img: cannot parse");
    if (n == cap) {
      cap = cap ? 2 * cap : 8;
      struct img_filter *nf = realloc(f, cap * sizeof(*f));
      if (nf == NULL)
        return sr_error_make(err, ENOMEM, "seccomp.img");
      f = nf;
    }
    f[n] = (struct img_filter){0};
    if (!pb_filter(p, p + sub, &f[n]))
      return sr_error_make(err, EINVAL, "--image-path: seccomp.img: cannot parse");
    p += sub;
    n++;
  }
  if (n == 0)
    return sr_error_make(err, EPERM,
                         "restore: refused: the image's tasks carry no seccomp "
                         "filter; seerun's built-in filter is mandatory");
  return check_core_seccomp(imgfd, f, n, err);
}

/* CRIU's tasks read images from inside the new user namespace: before the maps are written
 * with their host uid 0 but no capability over host files (only the owner's bits count), after
 * as the container's root (runc's 0600 directory fails: "timens-0.img: Permission denied").
 * The directory, owned by root, is made searchable by the owner and by the group of the
 * container's mapped root, nobody else. */
static int make_images_searchable(int imgfd, const struct sr_linux *l, sr_error_t *err)
{
  struct stat st;
  if (fstat(imgfd, &st) < 0)
    return sr_error_sys(err, "--image-path: stat");
  if (st.st_uid != 0)
    return 0;
  if (l->namespaces[SR_NS_USER].present && l->n_gid_mappings > 0 &&
      fchown(imgfd, 0, l->gid_mappings[0].host_id) < 0)
    return sr_error_sys(err, "--image-path: chgrp to the container's root group");
  if (fchmod(imgfd, 0750) < 0)
    return sr_error_sys(err, "--image-path: chmod 0750");
  return 0;
}

/* descriptors.json (runc's: what the init's fds 0-2 were) and seerun-stdio.json (which were
 * declared external): each gets the restoring process's own fd of that number.  Untrusted:
 * names only select which of the image's files become our stdio. */
static int inherit_stdio(criu_opts *opts, int imgfd, int dups[3], sr_error_t *err)
{
  _cleanup_free_ char *desc = NULL, *ext = NULL;
  size_t len;
  sr_error_t e = NULL;
  yajl_val dv = NULL, ev = NULL;
  if (sr_read_file_at(imgfd, "descriptors.json", 64 << 10, &desc, &len, &e) == 0)
    sr_json_parse(desc, len, &dv, &e);
  sr_error_free(&e);
  if (sr_read_file_at(imgfd, "seerun-stdio.json", 64 << 10, &ext, &len, &e) == 0)
    sr_json_parse(ext, len, &ev, &e);
  sr_error_free(&e);
  const char *stdio_path[] = {"stdio", NULL};
  yajl_val ea = ev ? yajl_tree_get(ev, stdio_path, yajl_t_array) : NULL;
  int r = 0;
  for (int fd = 0; fd < 3 && r == 0; fd++) {
    const char *key = NULL;
    if (dv && YAJL_IS_ARRAY(dv) && YAJL_GET_ARRAY(dv)->len > (size_t)fd) {
      const char *s = YAJL_GET_STRING(YAJL_GET_ARRAY(dv)->values[fd]);
      if (s && strncmp(s, "pipe:[", 6) == 0)
        key = s;
    }
    if (key == NULL && ea && YAJL_GET_ARRAY(ea)->len > (size_t)fd) {
      const char *s = YAJL_GET_STRING(YAJL_GET_ARRAY(ea)->values[fd]);
      /* Keyed by the path CRIU 4.1 gives an external file (its name without the first
       * character): then CRIU hands over our descriptor itself, where with the name it would
       * reopen it through /proc/self/fd with the dumped flags, and O_NOFOLLOW fails there. */
      if (s && strncmp(s, "file[", 5) == 0)
        key = s + 1;
    }
    if (key == NULL)
      continue;
    dups[fd] = fcntl(fd, F_DUPFD, 3); /* inherited by criu: not close-on-exec */
    if (dups[fd] < 0)
      r = sr_error_sys(err, "restore: dup fd %d", fd);
    else if (criu_local_add_inherit_fd(opts, dups[fd], key) < 0)
      r = sr_error_make(err, ENOMEM, "criu: inherit-fd");
  }
  if (dv)
    yajl_tree_free(dv);
  if (ev)
    yajl_tree_free(ev);
  return r;
}

static int set_opts(struct restore_run *run, criu_opts *opts, const struct sr_criu_opts *o,
                    const char *binary, int cg_mode, int imgfd, int workfd, const char *root,
                    sr_error_t *err)
{
  if (criu_local_set_service_binary(opts, binary) < 0 ||
      criu_local_set_log_file(opts, "restore.log") < 0 || criu_local_set_root(opts, root) < 0 ||
      criu_local_add_cg_root(opts, NULL, run->ctx->cgroup->path) < 0)
    return sr_error_make(err, ENOMEM, "criu options");
  criu_local_set_images_dir_fd(opts, imgfd);
  criu_local_set_work_dir_fd(opts, workfd);
  criu_local_set_log_level(opts, 4);
  criu_local_set_tcp_established(opts, o->tcp_established);
  criu_local_set_ext_unix_sk(opts, o->ext_unix_sk);
  criu_local_set_shell_job(opts, o->shell_job);
  criu_local_set_file_locks(opts, o->file_locks);
  criu_local_set_manage_cgroups(opts, true);
  criu_local_set_manage_cgroups_mode(opts, (enum criu_cg_mode)cg_mode);
  criu_local_set_notify_cb(opts, notify);
  return 0;
}

static int refuse_options(struct sr_create_ctx *ctx, const struct sr_criu_opts *o,
                          const char **binary, int *cg_mode, sr_error_t *err)
{
  if (sr_criu_refuse_unsupported(o, true, err) < 0 || sr_criu_binary(o, binary, err) < 0 ||
      sr_criu_cg_mode(o->manage_cgroups_mode, cg_mode, err) < 0)
    return -1;
  /* The cgroup's limits are the policy's: an image's cgroup settings must not replace them. */
  if (*cg_mode == CRIU_CG_MODE_FULL || *cg_mode == CRIU_CG_MODE_STRICT)
    return sr_error_make(err, EPERM,
                         "restore --manage-cgroups-mode %s: refused: the image's "
                         "cgroup settings would replace the limits the policy "
                         "decided (use soft or ignore)",
                         o->manage_cgroups_mode);
  if (ctx->egress_proxy)
    return sr_error_make(err, EOPNOTSUPP,
                         "restore: the policy decides egress through seerun's "
                         "proxy (decided.egressProxy), whose supervisor seerun "
                         "does not restart after a restore");
  for (int k = 0; k < SR_NS_COUNT; k++)
    if (ctx->config->linux_.namespaces[k].path)
      return sr_error_make(err, EOPNOTSUPP,
                           "restore: linux.namespaces: joining an existing "
                           "%s namespace is not supported by restore",
                           sr_ns_name(k));
  if (ctx->config->process == NULL)
    return sr_error_make(err, 0, "config.json: process: required to restore a container");
  if (ctx->config->process->terminal && !o->shell_job)
    return sr_error_make(err, EOPNOTSUPP,
                         "restore: process.terminal: a container with a "
                         "terminal is not supported by restore");
  return 0;
}

/* A CRIU killed midway leaves its cgroup yard mounted in the work directory. */
static void remove_criu_leftovers(int workfd)
{
  _cleanup_dir_ DIR *d = sr_opendir_fd(workfd);
  struct dirent *de;
  while (d && (de = readdir(d)) != NULL) {
    if (strncmp(de->d_name, ".criu.cgyard.", 13) != 0)
      continue;
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "/proc/self/fd/%d/%s", workfd, de->d_name);
    if (umount2(path, MNT_DETACH) < 0 && errno != EINVAL)
      sr_warn("unmount CRIU's `%s`: %s", de->d_name, strerror(errno));
    unlinkat(workfd, de->d_name, AT_REMOVEDIR);
  }
}

int sr_container_restore(struct sr_create_ctx *ctx, const struct sr_criu_opts *o, int *status,
                         sr_error_t *err)
{
  const char *binary;
  int cg_mode;
  if (refuse_options(ctx, o, &binary, &cg_mode, err) < 0)
    return -1;
  const char *image = o->image_path ? o->image_path : "checkpoint";
  const char *work = o->work_path ? o->work_path : image;
  _cleanup_close_ int imgfd = open(image, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (imgfd < 0)
    return sr_error_sys(err, "--image-path `%s`", image);
  _cleanup_close_ int workfd = o->work_path ? open(work, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
                                            : fcntl(imgfd, F_DUPFD_CLOEXEC, 3);
  if (workfd < 0)
    return sr_error_sys(err, "--work-path `%s`", work);
  if (check_image_userns(imgfd, &ctx->config->linux_, err) < 0 ||
      check_image_seccomp(imgfd, ctx->builtin_seccomp, err) < 0)
    return -1;
  int rootfd = -1;
  if (sr_create_prepare(ctx, err) < 0 ||
      sr_statedir_open_root(ctx->g->root, true, &rootfd, err) < 0)
    return -1;
  if (sr_create_record_begin(ctx, rootfd, err) < 0) {
    close(rootfd);
    return -1;
  }
  /* From here on the container directory exists: any failure removes everything. */
  struct restore_run *run = calloc(1, sizeof(*run));
  struct restore_mounts rm = {0};
  _cleanup_(free_opts) criu_opts *opts = NULL;
  int dups[3] = {-1, -1, -1};
  const char *root_path = NULL;
  struct stat st;
  pid_t pid = -1;
  int r = -1;
  if (run == NULL) {
    sr_error_make(err, ENOMEM, "restore");
    goto out;
  }
  run->ctx = ctx;
  if (sr_create_setup_cgroup(ctx, err) < 0 || idmap_trees(ctx, err) < 0 ||
      restore_mounts_begin(&rm, ctx->o->id, &ctx->config->linux_, ctx->binds.n + ctx->devs.n + 1,
                           err) < 0 ||
      attach_tree(&rm, ctx->rootfs_tree_fd, true, "root", &root_path, err) < 0)
    goto out;
  if (stat(root_path, &st) < 0) {
    sr_error_sys(err, "restore: `%s`", root_path);
    goto out;
  }
  run->root_dev = st.st_dev;
  if (criu_local_init_opts(&opts) < 0) {
    sr_error_make(err, ENOMEM, "criu options");
    goto out;
  }
  if (set_opts(run, opts, o, binary, cg_mode, imgfd, workfd, root_path, err) < 0 ||
      external_mounts(run, opts, &rm, err) < 0 || inherit_stdio(opts, imgfd, dups, err) < 0 ||
      make_images_searchable(imgfd, &ctx->config->linux_, err) < 0)
    goto out;
  current_restore = run;
  pid = criu_local_restore_child(opts);
  current_restore = NULL;
  if (pid > 0)
    ctx->init_pid = pid;
  else if (run->pid > 0)
    ctx->init_pid = run->pid;
  if (run->failed[0]) {
    sr_error_make(err, EPERM, "restore `%s`: refused: %s; the restored processes were killed",
                  ctx->o->id, run->failed);
    goto out;
  }
  if (pid <= 0) {
    sr_error_make(err, 0, "restore `%s`: criu restore failed", ctx->o->id);
    sr_criu_explain(workfd, work, "restore.log", err);
    goto out;
  }
  struct sr_state_record *rec = ctx->container->rec;
  rec->pid = pid;
  if (sr_proc_stat(pid, &rec->pid_start, NULL) < 0) {
    sr_error_sys(err, "read the start time of the restored process %d", pid);
    goto out;
  }
  rec->phase = SR_PHASE_CREATED;
  rec->creator_pid = 0;
  if (sr_container_save(ctx->container, err) < 0 ||
      (ctx->o->pid_file && sr_write_pid_file(ctx->o->pid_file, pid, err) < 0))
    goto out;
  r = 0;
out:
  for (int i = 0; i < 3; i++)
    if (dups[i] >= 0)
      close(dups[i]);
  if (run && run->killed_criu)
    remove_criu_leftovers(workfd);
  restore_mounts_release(&rm);
  free(run);
  if (r < 0) {
    sr_create_abort(ctx);
    return -1;
  }
  *status = 0;
  if (!o->detach) {
    int ws;
    while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
      ;
    *status = ws;
  }
  return 0;
}

#else

int sr_container_restore(struct sr_create_ctx *ctx, const struct sr_criu_opts *o, int *status,
                         sr_error_t *err)
{
  (void)ctx;
  (void)status;
  const char *b;
  return sr_criu_binary(o, &b, err);
}

#endif
