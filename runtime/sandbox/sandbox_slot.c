/* The sandbox's place in the state root, and the cleanup of what a killed sandbox left.
 *
 * A sandbox's container is an ordinary container of the state root (listed, deletable); what
 * only the sandbox has is its workspace:
 *
 *   <root>/.sandbox-new.<pid>-<start>/<pid>-<start>/{rootfs,out}   while the id is chosen
 *   <root>/.sandbox.<id>/<pid>-<start>/{rootfs,out}                 from then until created
 *
 * The inner directory is the container's bundle: its name, recorded in the container's state,
 * names the runtime process that supervises the sandbox (pid and start time, so that a reused
 * pid is not mistaken for it).  The workspace is made complete under a temporary name and
 * renamed into place with RENAME_NOREPLACE, which reserves the id: at most one runtime holds
 * `.sandbox.<id>`, and it checks the container id is free (or an orphan, which it removes)
 * while holding it.  Once the container exists its state directory holds the id, and the
 * workspace goes (renamed back to its temporary name first, so that a half-removed workspace
 * still names its owner): from then on a killed runtime leaves only an ordinary container,
 * which the next sandbox (or delete --force) removes.  Whatever is left of a workspace whose
 * runtime is gone, the next sandbox removes.  Mounts are made in the runtime's own mount
 * namespace, so a killed runtime leaves none. */
#include "build.h"

#include "sandbox.h"

#include "cleanup.h"
#include "lifecycle.h"
#include "log.h"
#include "statedir.h"
#include "stored.h"
#include "dir.h"
#include "proc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#define RES_PREFIX ".sandbox."
#define NEW_PREFIX ".sandbox-new."
/* Default ids are sandbox-0, sandbox-1, ...: reusing them reuses their user namespace ranges
 * in the registry, instead of taking a new range (held for the policy's grace period) per
 * run. */
#define MAX_SLOTS 4096

int sr_sandbox_slot_private_mounts(sr_error_t *err)
{
  if (unshare(CLONE_NEWNS) < 0)
    return sr_error_sys(err, "sandbox: unshare the mount namespace");
  /* A slave: the host's mounts still show up here; nothing mounted here reaches the host. */
  if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0)
    return sr_error_sys(err, "sandbox: make the runtime's mounts slaves of the host's");
  return 0;
}

static bool parse_owner(const char *s, pid_t *pid, uint64_t *start)
{
  char *end;
  errno = 0;
  long p = strtol(s, &end, 10);
  if (errno || end == s || *end != '-' || p <= 0 || p > INT32_MAX)
    return false;
  const char *t = end + 1;
  unsigned long long st = strtoull(t, &end, 10);
  if (errno || end == t || *end != '\0')
    return false;
  *pid = (pid_t)p;
  *start = st;
  return true;
}

/* A token that does not parse is no sandbox's: never touched. */
static bool owner_dead(const char *token)
{
  pid_t pid;
  uint64_t start;
  return parse_owner(token, &pid, &start) && !sr_proc_is(pid, start);
}

bool sr_sandbox_slot_bundle_orphaned(const char *real_root, const char *bundle)
{
  size_t rl = strlen(real_root);
  if (strncmp(bundle, real_root, rl) != 0 || bundle[rl] != '/' ||
      strncmp(bundle + rl + 1, RES_PREFIX, strlen(RES_PREFIX)) != 0)
    return false;
  const char *id_part = bundle + rl + 1 + strlen(RES_PREFIX);
  const char *slash = strchr(id_part, '/');
  if (slash == NULL || strchr(slash + 1, '/') != NULL)
    return false;
  return owner_dead(slash + 1);
}

/* Removes the workspace tree below dirfd (directories and files only, a few levels), then the
 * directory name in parent.  The last rmdir fails (ENOTEMPTY) if name has meanwhile become
 * another, live workspace: a live workspace is never empty. */
static void remove_contents(int dirfd, int depth)
{
  _cleanup_dir_ DIR *d = sr_dir_open_fd(dirfd);
  if (d == NULL)
    return;
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
      continue;
    if (unlinkat(dirfd, de->d_name, 0) == 0 || errno != EISDIR)
      continue;
    if (depth < 4) {
      _cleanup_close_ int sub =
          openat(dirfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (sub >= 0)
        remove_contents(sub, depth + 1);
    }
    unlinkat(dirfd, de->d_name, AT_REMOVEDIR);
  }
}

static void remove_tree(int parent, const char *name)
{
  _cleanup_close_ int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return;
  remove_contents(fd, 0);
  unlinkat(parent, name, AT_REMOVEDIR);
}

/* A reservation whose supervisor is dead (or that has none): its owner directory goes (through the
 * descriptor of the reservation we looked at), then the reservation itself if it is still that one.
 * If the runtime died before its container existed, the user namespace range the policy may already
 * have taken for the id is released (while the reservation still keeps the id from anyone
 * else); a container of that id is left to reap_container, which releases it in turn. */
static bool reap_reservation(const struct sr_invocation *g, int rootfd, const char *name)
{
  _cleanup_close_ int fd = openat(rootfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return errno == ENOENT;
  _cleanup_dir_ DIR *d = sr_dir_open_fd(fd);
  if (d == NULL)
    return false;
  struct dirent *de;
  bool alive = false;
  while ((de = readdir(d)) != NULL) {
    if (de->d_name[0] == '.')
      continue;
    if (owner_dead(de->d_name)) {
      _cleanup_close_ int sub =
          openat(fd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (sub >= 0)
        remove_contents(sub, 1);
      unlinkat(fd, de->d_name, AT_REMOVEDIR);
    } else
      alive = true;
  }
  /* A reservation is made whole (renamed into place) and renamed away before it is taken
   * apart, so one without an owner is nobody's. */
  if (alive)
    return false;
  const char *id = name + strlen(RES_PREFIX);
  if (faccessat(rootfd, id, F_OK, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT)
    sr_stored_release_userns(g, id);
  return unlinkat(rootfd, name, AT_REMOVEDIR) == 0 || errno == ENOENT;
}

/* As delete --force does, for a container whose sandbox runtime is gone. */
static void reap_container(const struct sr_invocation *g, const char *id, const char *real_root)
{
  sr_error_t err = NULL;
  _cleanup_stored_ struct sr_container *c = NULL;
  if (sr_stored_open(g, id, true, &c, &err) < 0) {
    sr_error_free(&err);
    return;
  }
  /* Checked again under the lock: it may have been deleted and the id reused meanwhile. */
  if (c->rec->bundle == NULL || !sr_sandbox_slot_bundle_orphaned(real_root, c->rec->bundle))
    return;
  const char *fields[] = {"force", "true", "reason", "its sandbox runtime is gone", NULL};
  if (sr_stored_audit(g, c, "delete", fields, &err) < 0 ||
      sr_container_delete(c, true, NULL, &err) < 0) {
    _cleanup_free_ char *t = sr_error_text(err);
    sr_warn("sandbox: remove the orphaned sandbox \"%s\": %s", id, t ? t : "");
    sr_error_free(&err);
    return;
  }
  sr_stored_release_userns(g, id);
}

/* An empty container directory nobody holds is what a delete killed midway leaves (its
 * records go last, the directory after them); a reaper killed while deleting an orphan leaves
 * one too.  rmdir takes only an empty directory, and a live delete holds the lock. */
static void remove_if_abandoned(int rootfd, const char *id)
{
  _cleanup_close_ int fd = openat(rootfd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0)
    unlinkat(rootfd, id, AT_REMOVEDIR);
}

static bool is_orphaned_container(int rootfd, const char *id, const char *real_root)
{
  sr_error_t err = NULL;
  _cleanup_container_ struct sr_container *c = NULL;
  if (sr_statedir_load(rootfd, id, false, &c, &err) < 0) {
    sr_error_free(&err);
    remove_if_abandoned(rootfd, id);
    return false;
  }
  return c->rec->bundle && sr_sandbox_slot_bundle_orphaned(real_root, c->rec->bundle);
}

void sr_sandbox_slot_reap_stale(const struct sr_invocation *g, int rootfd, const char *real_root)
{
  _cleanup_dir_ DIR *d = sr_dir_open_fd(rootfd);
  if (d == NULL)
    return;
  _cleanup_strv_ char **orphans = NULL;
  size_t n = 0;
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    const char *name = de->d_name;
    if (strncmp(name, NEW_PREFIX, strlen(NEW_PREFIX)) == 0) {
      if (owner_dead(name + strlen(NEW_PREFIX)))
        remove_tree(rootfd, name);
    } else if (strncmp(name, RES_PREFIX, strlen(RES_PREFIX)) == 0) {
      reap_reservation(g, rootfd, name);
    } else if (name[0] != '.' && (de->d_type == DT_DIR || de->d_type == DT_UNKNOWN) &&
               is_orphaned_container(rootfd, name, real_root)) {
      char **nv = realloc(orphans, (n + 2) * sizeof(char *));
      if (nv == NULL)
        break;
      orphans = nv;
      orphans[n] = strdup(name);
      orphans[n + 1] = NULL;
      if (orphans[n])
        n++;
    }
  }
  for (size_t i = 0; i < n; i++)
    reap_container(g, orphans[i], real_root);
}

int sr_sandbox_slot_gc(const struct sr_invocation *g, sr_error_t *err)
{
  struct stat st;
  if (stat(g->root, &st) < 0 && errno == ENOENT)
    return 0; /* no state root: no sandbox ever left anything */
  _cleanup_close_ int rootfd = -1;
  if (sr_statedir_open_root(g->root, false, &rootfd, err) < 0)
    return -1;
  char real[PATH_MAX];
  if (realpath(g->root, real) == NULL)
    return sr_error_sys(err, "state directory `%s`", g->root);
  sr_sandbox_slot_reap_stale(g, rootfd, real);
  return 0;
}

static int make_workspace(struct sr_sandbox_ws *ws, const char *owner, sr_error_t *err)
{
  if (mkdirat(ws->rootfd, ws->tmp_name, 0700) < 0)
    return sr_error_sys(err, "sandbox: create the workspace `%s`", ws->tmp_name);
  _cleanup_close_ int tmp =
      openat(ws->rootfd, ws->tmp_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (tmp < 0 || mkdirat(tmp, owner, 0700) < 0)
    return sr_error_sys(err, "sandbox: create the workspace `%s`", ws->tmp_name);
  _cleanup_close_ int b = openat(tmp, owner, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (b < 0 || mkdirat(b, "rootfs", 0700) < 0 || mkdirat(b, "out", 0700) < 0 ||
      mkdirat(b, SR_SANDBOX_WS_MOUNT, 0700) < 0)
    return sr_error_sys(err, "sandbox: create the workspace `%s`", ws->tmp_name);
  return 0;
}

/* 1: reserved, with the id free; 0: taken by something alive; -1: error. */
static int try_id(const struct sr_invocation *g, struct sr_sandbox_ws *ws, const char *id,
                  sr_error_t *err)
{
  _cleanup_free_ char *res = NULL;
  if (asprintf(&res, RES_PREFIX "%s", id) < 0)
    return sr_error_make(err, ENOMEM, "sandbox");
  for (int attempt = 0;; attempt++) {
    if (renameat2(ws->rootfd, ws->tmp_name, ws->rootfd, res, RENAME_NOREPLACE) == 0)
      break;
    if (errno != EEXIST)
      return sr_error_sys(err, "sandbox: reserve the id \"%s\"", id);
    /* Another runtime's workspace: alive, or left by one that was killed. */
    if (attempt > 0 || !reap_reservation(g, ws->rootfd, res))
      return 0;
  }
  if (faccessat(ws->rootfd, id, F_OK, AT_SYMLINK_NOFOLLOW) == 0) {
    if (is_orphaned_container(ws->rootfd, id, ws->real_root))
      reap_container(g, id, ws->real_root);
    if (faccessat(ws->rootfd, id, F_OK, AT_SYMLINK_NOFOLLOW) == 0) {
      /* In use: give the reservation back. */
      if (renameat2(ws->rootfd, res, ws->rootfd, ws->tmp_name, RENAME_NOREPLACE) < 0) {
        sr_error_sys(err, "sandbox: release the reservation `%s`", res);
        ws->reservation = steal_ptr(res); /* still ours: removed with the workspace */
        free(ws->tmp_name);
        ws->tmp_name = NULL;
        return -1;
      }
      return 0;
    }
  }
  ws->reservation = steal_ptr(res);
  return 1;
}

int sr_sandbox_slot_reserve(const struct sr_invocation *g, struct sr_sandbox_ws *ws,
                            const char *name, sr_error_t *err)
{
  char owner[64];
  uint64_t start;
  if (sr_proc_stat(getpid(), &start, NULL) < 0)
    return sr_error_sys(err, "sandbox: read own start time");
  snprintf(owner, sizeof(owner), "%d-%llu", (int)getpid(), (unsigned long long)start);
  if (asprintf(&ws->tmp_name, NEW_PREFIX "%s", owner) < 0) {
    ws->tmp_name = NULL;
    return sr_error_make(err, ENOMEM, "sandbox");
  }
  if (make_workspace(ws, owner, err) < 0)
    return -1;
  int r = 0;
  if (name) {
    r = try_id(g, ws, name, err);
    if (r == 0)
      return sr_error_make(err, EEXIST, "container with id \"%s\" already exists", name);
    snprintf(ws->id, sizeof(ws->id), "%s", name);
  } else {
    for (int slot = 0; slot < MAX_SLOTS && r == 0; slot++) {
      snprintf(ws->id, sizeof(ws->id), "sandbox-%d", slot);
      r = try_id(g, ws, ws->id, err);
    }
    if (r == 0)
      return sr_error_make(err, EBUSY, "sandbox: all %d sandbox ids are in use", MAX_SLOTS);
  }
  if (r < 0)
    return -1;
  if (asprintf(&ws->bundle, "%s/%s/%s", ws->real_root, ws->reservation, owner) < 0) {
    ws->bundle = NULL;
    return sr_error_make(err, ENOMEM, "sandbox");
  }
  return 0;
}

void sr_sandbox_slot_remove(struct sr_sandbox_ws *ws)
{
  if (ws->rootfd < 0 || (ws->reservation == NULL && ws->tmp_name == NULL))
    return;
  if (ws->bundle) {
    const char *mps[] = {"rootfs", "out", SR_SANDBOX_WS_MOUNT};
    for (size_t i = 0; i < sizeof(mps) / sizeof(mps[0]); i++) {
      char p[PATH_MAX];
      snprintf(p, sizeof(p), "%s/%s", ws->bundle, mps[i]);
      /* Only in our own mount namespace: the container has its own copies. */
      while (umount2(p, MNT_DETACH | UMOUNT_NOFOLLOW) == 0)
        ;
    }
  }
  if (ws->reservation) {
    /* Renamed back to the name that says whose it is before it is taken apart: a runtime
     * killed midway leaves something the next one recognises.  The id is the container's
     * state directory's by now, or was never used. */
    if (ws->tmp_name &&
        renameat2(ws->rootfd, ws->reservation, ws->rootfd, ws->tmp_name, RENAME_NOREPLACE) == 0) {
      free(ws->reservation);
      ws->reservation = NULL;
    } else {
      remove_tree(ws->rootfd, ws->reservation);
      free(ws->reservation);
      ws->reservation = NULL;
    }
  }
  if (ws->tmp_name) {
    remove_tree(ws->rootfd, ws->tmp_name);
    free(ws->tmp_name);
    ws->tmp_name = NULL;
  }
}

void sr_sandbox_slot_release(struct sr_sandbox_ws *ws)
{
  sr_sandbox_slot_remove(ws);
  if (ws->rootfd >= 0)
    close(ws->rootfd);
  ws->rootfd = -1;
  free(ws->real_root);
  free(ws->bundle);
  ws->real_root = NULL;
  ws->bundle = NULL;
}
