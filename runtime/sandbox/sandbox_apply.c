/* --workspace --apply: the changes of the upper layer copied back into the host directory, by
 * the rules of /out (sandbox_collect.c), with the host directory as the destination that must
 * never be left:
 *
 * - the directory is the descriptor opened at the start (a path swapped for a symlink, or the
 *   directory renamed away, during the run redirects nothing);
 * - every lookup in it is openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
 *   RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV) from its descriptor: no symlink, no "..", no
 *   other mount is ever passed;
 * - the upper layer is the sandbox's (hostile): only regular files with one link and
 *   directories are copied, a symlink, fifo, socket or device is listed, never made; a file is
 *   read through O_NOFOLLOW and checked to be the entry the diff examined;
 * - nothing is written through an existing name: a new file is made beside its name (O_EXCL)
 *   and renamed over it (a hard link or a symlink the host put there is replaced, never
 *   written through); a deletion is unlinkat, which removes a link, never its target;
 * - an entry whose dev, inode, type, mode, size, mtime or ctime differ from what they were
 *   when the run started (the snapshot) changed on the host meanwhile: it is kept, and listed;
 *   a directory is judged by dev, inode and type (its times move with its entries);
 * - protected paths (.git, --protect) are never touched, whatever the upper layer says. */
#include "build.h"

#include "sandbox.h"

#include "cleanup.h"
#include "dir.h"
#include "paths.h"
#include "fileio.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define RESOLVE (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV)
#define CHUNK (128 * 1024)
#define MAX_DEPTH 64
#define KEPT_LISTED 1000
/* What the apply makes: the sandbox's mode bits without set-id, sticky or world-write. */
#define MODE_MASK 0775

/* ---- the snapshot ---- */

static uint64_t hash_path(const char *p)
{
  uint64_t h = 1469598103934665603ull;
  for (; *p; p++)
    h = (h ^ (unsigned char)*p) * 1099511628211ull;
  return h;
}

void sr_sandbox_apply_snapshot_release(struct sr_ws_snapshot *s)
{
  for (size_t i = 0; i < s->n_git; i++)
    free(s->git[i]);
  free(s->git);
  free(s->v);
  free(s->names);
  memset(s, 0, sizeof(*s));
}

static struct sr_ws_snap_entry *find(struct sr_ws_snapshot *s, const char *path)
{
  if (s->cap == 0)
    return NULL;
  uint64_t h = hash_path(path);
  for (size_t i = h & (s->cap - 1);; i = (i + 1) & (s->cap - 1)) {
    struct sr_ws_snap_entry *e = &s->v[i];
    if (!e->used)
      return NULL;
    if (e->hash == h && strcmp(s->names + e->off, path) == 0)
      return e;
  }
}

static int grow(struct sr_ws_snapshot *s)
{
  size_t nc = s->cap ? s->cap * 2 : 1024;
  struct sr_ws_snap_entry *nv = calloc(nc, sizeof(*nv));
  if (nv == NULL)
    return -1;
  for (size_t i = 0; i < s->cap; i++) {
    if (!s->v[i].used)
      continue;
    size_t j = s->v[i].hash & (nc - 1);
    while (nv[j].used)
      j = (j + 1) & (nc - 1);
    nv[j] = s->v[i];
  }
  free(s->v);
  s->v = nv;
  s->cap = nc;
  return 0;
}

/* The entry of path, added if new; NULL when out of memory. */
static struct sr_ws_snap_entry *put(struct sr_ws_snapshot *s, const char *path,
                                    const struct stat *st)
{
  struct sr_ws_snap_entry *e = find(s, path);
  if (e == NULL) {
    if ((s->n + 1) * 2 > s->cap && grow(s) < 0)
      return NULL;
    size_t len = strlen(path) + 1;
    if (s->names_len + len > s->names_cap) {
      size_t nc = s->names_cap ? s->names_cap * 2 : 64 * 1024;
      while (nc < s->names_len + len)
        nc *= 2;
      char *nn = realloc(s->names, nc);
      if (nn == NULL)
        return NULL;
      s->names = nn;
      s->names_cap = nc;
    }
    memcpy(s->names + s->names_len, path, len);
    uint64_t h = hash_path(path);
    size_t i = h & (s->cap - 1);
    while (s->v[i].used)
      i = (i + 1) & (s->cap - 1);
    e = &s->v[i];
    *e = (struct sr_ws_snap_entry){.hash = h, .off = s->names_len, .used = true};
    s->names_len += len;
    s->n++;
  }
  e->dev = st->st_dev;
  e->ino = st->st_ino;
  e->mode = st->st_mode;
  e->size = st->st_size;
  e->mtime = st->st_mtim;
  e->ctime = st->st_ctim;
  return e;
}

/* Below a --protect path (or the top .git): already read-only inside as a whole. */
static bool below_protect(const char *path, char *const *protect, size_t n_protect)
{
  for (size_t i = 0; i < n_protect; i++) {
    size_t l = strlen(protect[i]);
    if (strncmp(path, protect[i], l) == 0 && path[l] == '/')
      return true;
  }
  return false;
}

bool sr_sandbox_apply_protected(const char *path, char *const *protect, size_t n_protect)
{
  /* Every .git, not only HOST's own: a workspace may hold more than one repository (or the
   * code may make one below it), and a hook or core.fsmonitor there runs on the host. */
  for (const char *c = path; c; c = strchr(c, '/') ? strchr(c, '/') + 1 : NULL)
    if (strncmp(c, ".git", 4) == 0 && (c[4] == '/' || c[4] == '\0'))
      return true;
  for (size_t i = 0; i < n_protect; i++) {
    size_t l = strlen(protect[i]);
    if (strncmp(path, protect[i], l) == 0 && (path[l] == '/' || path[l] == '\0'))
      return true;
  }
  return false;
}

/* A .git below the top (its hooks and config run on the host at the owner's next git
 * command there): listed, to be made read-only inside as the top one is. */
static int nested_git(struct sr_ws_snapshot *s, const char *path, sr_error_t *err)
{
  if (s->n_git >= SR_WS_NESTED_GIT_MAX)
    return sr_error_make(err, E2BIG,
                         "--workspace: the directory holds more than %d .git below its top "
                         "(each is made read-only inside): give one repository's directory",
                         SR_WS_NESTED_GIT_MAX);
  char **nv = realloc(s->git, (s->n_git + 1) * sizeof(char *));
  if (nv == NULL)
    return sr_error_make(err, ENOMEM, "--workspace: the snapshot");
  s->git = nv;
  if ((s->git[s->n_git] = strdup(path)) == NULL)
    return sr_error_make(err, ENOMEM, "--workspace: the snapshot");
  s->n_git++;
  return 0;
}

struct snap_walk {
  struct sr_ws_snapshot *s;
  char *const *protect;
  size_t n_protect;
  char path[PATH_MAX];
};

static int snap_dir(struct snap_walk *w, int dir, size_t plen, int depth, sr_error_t *err)
{
  _cleanup_dir_ DIR *d = sr_dir_open_fd(dir);
  if (d == NULL)
    return sr_error_sys(err, "--workspace: read `%s`", plen ? w->path : ".");
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
      continue;
    size_t nlen = strlen(de->d_name);
    if (plen + nlen + 2 > sizeof(w->path))
      continue; /* not in the snapshot: --apply refuses it as changed */
    if (plen)
      w->path[plen] = '/';
    memcpy(w->path + plen + (plen ? 1 : 0), de->d_name, nlen + 1);
    size_t clen = plen + (plen ? 1 : 0) + nlen;
    struct stat st;
    int r = 0;
    if (plen && strcmp(de->d_name, ".git") == 0 &&
        !below_protect(w->path, w->protect, w->n_protect) &&
        fstatat(dir, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode)))
      r = nested_git(w->s, w->path, err);
    else if (!sr_sandbox_apply_protected(w->path, w->protect, w->n_protect) &&
             fstatat(dir, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
      if (w->s->n >= SR_WS_SNAPSHOT_MAX)
        r = sr_error_make(err, E2BIG,
                          "--workspace: the directory holds more than %d entries (outside the "
                          "protected paths)",
                          SR_WS_SNAPSHOT_MAX);
      else if (put(w->s, w->path, &st) == NULL)
        r = sr_error_make(err, ENOMEM, "--workspace: the snapshot");
      else if (S_ISDIR(st.st_mode) && depth < MAX_DEPTH) {
        _cleanup_close_ int sub = sr_paths_openat2(
            dir, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0, RESOLVE);
        if (sub >= 0)
          r = snap_dir(w, sub, clen, depth + 1, err);
      }
    }
    w->path[plen] = '\0';
    if (r < 0)
      return -1;
  }
  return 0;
}

int sr_sandbox_apply_snapshot_take(int dir, char *const *protect, size_t n_protect,
                                   struct sr_ws_snapshot *s, sr_error_t *err)
{
  memset(s, 0, sizeof(*s));
  struct stat st;
  /* dir may be a mount's O_PATH descriptor: read through one that can list. */
  _cleanup_close_ int rd = openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (rd < 0 || fstat(rd, &st) < 0)
    return sr_error_sys(err, "--workspace: stat");
  _cleanup_free_ struct snap_walk *w = calloc(1, sizeof(*w));
  if (w == NULL || put(s, "", &st) == NULL)
    return sr_error_make(err, ENOMEM, "--workspace: the snapshot");
  w->s = s;
  w->protect = protect;
  w->n_protect = n_protect;
  return snap_dir(w, rd, 0, 0, err);
}

/* ---- the apply ---- */

struct ap {
  int host, upper;
  struct sr_ws_snapshot *snap;
  char *const *protect;
  size_t n_protect;
  struct sr_ws_apply *res;
  char *buf;
  const char *prefix; /* of the temporaries: this run's, on record (sandbox_apply_record.c) */
  int *stop;          /* the caller's signal, once one came */
  unsigned tmp_seq;
  uint64_t max_bytes, bytes;
};

static bool same_object(const struct stat *st, const struct sr_ws_snap_entry *e)
{
  return st->st_dev == e->dev && st->st_ino == e->ino &&
         (st->st_mode & S_IFMT) == (e->mode & S_IFMT);
}

/* Unchanged since the run started: a directory by its identity, anything else by its times
 * and size as well. */
static bool unchanged(const struct stat *st, const struct sr_ws_snap_entry *e)
{
  if (e == NULL || e->created || e->removed || !same_object(st, e))
    return false;
  if (S_ISDIR(st->st_mode))
    return true;
  return st->st_mode == e->mode && st->st_size == e->size &&
         st->st_mtim.tv_sec == e->mtime.tv_sec && st->st_mtim.tv_nsec == e->mtime.tv_nsec &&
         st->st_ctim.tv_sec == e->ctime.tv_sec && st->st_ctim.tv_nsec == e->ctime.tv_nsec;
}

static int keep(struct ap *a, const char *path, mode_t mode, const char *reason, sr_error_t *err)
{
  struct sr_ws_apply *r = a->res;
  r->refused++;
  r->complete = false;
  if (r->n_kept >= KEPT_LISTED) {
    r->kept_not_listed++;
    return 0;
  }
  if (r->n_kept == r->cap_kept) {
    size_t nc = r->cap_kept ? r->cap_kept * 2 : 16;
    struct sr_collect_entry *nv = realloc(r->kept, nc * sizeof(*nv));
    if (nv == NULL)
      return sr_error_make(err, ENOMEM, "--apply");
    r->kept = nv;
    r->cap_kept = nc;
  }
  char *p = strdup(path);
  if (p == NULL)
    return sr_error_make(err, ENOMEM, "--apply");
  r->kept[r->n_kept++] = (struct sr_collect_entry){p, sr_overlay_diff_type_name(mode), 0, reason};
  return 0;
}

static const char *const CHANGED = "changed on the host during the run: not applied";
static const char *const STOPPED = "seerun was stopped by the caller's signal during the apply: "
                                   "not applied";

/* The parent directory of path in host (O_PATH), checked to be the one the run started with
 * (or one this apply made); -1 with *why when it is not. */
static int open_parent(struct ap *a, const char *path, const char **name, const char **why)
{
  const char *slash = strrchr(path, '/');
  char dir[PATH_MAX];
  if (slash == NULL) {
    snprintf(dir, sizeof(dir), "%s", "");
    *name = path;
  } else {
    snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
    *name = slash + 1;
  }
  int fd =
      sr_paths_openat2(a->host, dir[0] ? dir : ".", O_PATH | O_DIRECTORY | O_CLOEXEC, 0, RESOLVE);
  if (fd < 0) {
    *why = errno == ELOOP   ? "a symbolic link on its way on the host: not applied"
           : errno == EXDEV ? "another filesystem mounted on its way on the host: not applied"
                            : "its directory is gone on the host: not applied";
    return -1;
  }
  struct stat st;
  const struct sr_ws_snap_entry *e = find(a->snap, dir);
  if (fstat(fd, &st) < 0 || e == NULL || e->removed || !same_object(&st, e)) {
    close(fd);
    *why = "its directory changed on the host during the run: not applied";
    return -1;
  }
  return fd;
}

/* A file of the apply's own beside name: the run's prefix (on record before the first is made,
 * so that a killed apply's is found again) and a number, made with O_EXCL (a name already
 * there is skipped, never opened). */
static int make_tmp(struct ap *a, int dir, char *buf, size_t size)
{
  for (int attempt = 0; attempt < 16; attempt++) {
    snprintf(buf, size, "%s%u", a->prefix, a->tmp_seq++);
    int fd = sr_paths_openat2(dir, buf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600,
                              RESOLVE);
    if (fd >= 0 || errno != EEXIST)
      return fd;
  }
  return -1;
}

/* A rename's failure that says the host changed the target meanwhile (a directory now, or a
 * name taken), rather than that the host cannot be written. */
static bool changed_errno(int e)
{
  return e == EEXIST || e == EISDIR || e == ENOTDIR || e == ENOTEMPTY || e == EBUSY ||
         e == ENOENT;
}

/* The upper's file at path, opened and checked to be what the diff listed. */
static int open_upper_file(struct ap *a, const struct sr_odiff_entry *e, struct stat *st)
{
  int fd = sr_paths_openat2(a->upper, e->path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0,
                            RESOLVE);
  if (fd < 0)
    return -1;
  if (fstat(fd, st) < 0 || !S_ISREG(st->st_mode) || st->st_nlink != 1 ||
      (uint64_t)st->st_size != e->size) {
    close(fd);
    return -1;
  }
  return fd;
}

/* A regular file added or modified: written beside its name, then renamed over it. */
static int apply_file(struct ap *a, const struct sr_odiff_entry *e, struct sr_ws_outcome *out,
                      sr_error_t *err)
{
  if (e->nlink != 1) {
    out->reason = "a file with more than one link: not applied";
    return 0;
  }
  if (e->size > a->max_bytes - a->bytes) {
    out->reason = "larger than what is left of --workspace-size for the apply: not applied";
    return 0;
  }
  struct stat ust;
  _cleanup_close_ int in = open_upper_file(a, e, &ust);
  if (in < 0) {
    out->reason = "changed or unreadable in the upper layer: not applied";
    return 0;
  }
  const char *name;
  _cleanup_close_ int dir = open_parent(a, e->path, &name, &out->reason);
  if (dir < 0)
    return 0;
  struct stat cur, dst;
  bool exists = fstatat(dir, name, &cur, AT_SYMLINK_NOFOLLOW) == 0;
  struct sr_ws_snap_entry *se = find(a->snap, e->path);
  if (e->kind == SR_ODIFF_ADDED ? exists || (se && !se->removed) : !exists || !unchanged(&cur, se)) {
    out->reason = CHANGED;
    return 0;
  }
  if (fstat(dir, &dst) < 0)
    return sr_error_sys(err, "--apply: stat the directory of `%s`", e->path);
  char tmp[96];
  _cleanup_close_ int fd = make_tmp(a, dir, tmp, sizeof(tmp));
  if (fd < 0)
    return sr_error_sys(err, "--apply: create a file beside `%s`", e->path);
  int saved = 0;
  for (uint64_t left = e->size; left > 0 && saved == 0;) {
    /* The caller's signal: this file rolled back (its temporary removed), nothing after it. */
    if (*a->stop || (*a->stop = sr_sandbox_supervise_stop_signal()) != 0) {
      unlinkat(dir, tmp, 0);
      out->reason = STOPPED;
      return 0;
    }
    ssize_t n = read(in, a->buf, left < CHUNK ? (size_t)left : CHUNK);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      saved = n < 0 ? errno : EIO;
      break;
    }
    if (sr_fileio_write_all(fd, a->buf, (size_t)n) < 0)
      saved = errno;
    left -= (uint64_t)n;
  }
  /* Owned as the file it replaces, or as its directory. */
  uid_t uid = exists ? cur.st_uid : dst.st_uid;
  gid_t gid = exists ? cur.st_gid : dst.st_gid;
  if (saved == 0 && (fchown(fd, uid, gid) < 0 || fchmod(fd, e->mode & MODE_MASK) < 0))
    saved = errno;
  if (saved == 0 && exists) {
    /* Looked at once more right before the rename: a change since is the host's. */
    if (fstatat(dir, name, &cur, AT_SYMLINK_NOFOLLOW) < 0 || !unchanged(&cur, se)) {
      unlinkat(dir, tmp, 0);
      out->reason = CHANGED;
      return 0;
    }
    if (renameat(dir, tmp, dir, name) < 0)
      saved = errno;
  } else if (saved == 0 && renameat2(dir, tmp, dir, name, RENAME_NOREPLACE) < 0)
    saved = errno;
  if (saved && changed_errno(saved)) {
    unlinkat(dir, tmp, 0);
    out->reason = CHANGED;
    return 0;
  }
  if (saved) {
    unlinkat(dir, tmp, 0);
    return sr_error_make(err, saved, "--apply: write `%s`", e->path);
  }
  if (se)
    se->removed = false;
  a->bytes += e->size;
  out->applied = true;
  return 0;
}

static int apply_dir(struct ap *a, const struct sr_odiff_entry *e, struct sr_ws_outcome *out,
                     sr_error_t *err)
{
  const char *name;
  _cleanup_close_ int dir = open_parent(a, e->path, &name, &out->reason);
  if (dir < 0)
    return 0;
  struct sr_ws_snap_entry *se = find(a->snap, e->path);
  struct stat st, dst;
  if (e->kind == SR_ODIFF_MODIFIED) {
    _cleanup_close_ int fd =
        sr_paths_openat2(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0, RESOLVE);
    if (fd < 0 || fstat(fd, &st) < 0 || !unchanged(&st, se) || st.st_mode != se->mode) {
      out->reason = CHANGED;
      return 0;
    }
    if (fchmod(fd, e->mode & MODE_MASK) < 0)
      return sr_error_sys(err, "--apply: chmod `%s`", e->path);
    se->mode = st.st_mode;
    out->applied = true;
    return 0;
  }
  if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0 || (se && !se->removed)) {
    out->reason = CHANGED;
    return 0;
  }
  if (fstat(dir, &dst) < 0)
    return sr_error_sys(err, "--apply: stat the directory of `%s`", e->path);
  if (mkdirat(dir, name, 0700) < 0) {
    if (errno == EEXIST) {
      out->reason = CHANGED;
      return 0;
    }
    return sr_error_sys(err, "--apply: mkdir `%s`", e->path);
  }
  _cleanup_close_ int fd =
      sr_paths_openat2(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0, RESOLVE);
  /* The one just made (root's, empty), not one put in its place since. */
  if (fd < 0 || fstat(fd, &st) < 0 || st.st_uid != geteuid() || st.st_nlink != 2) {
    out->reason = CHANGED;
    return 0;
  }
  if (fchown(fd, dst.st_uid, dst.st_gid) < 0 || fchmod(fd, e->mode & MODE_MASK) < 0)
    return sr_error_sys(err, "--apply: chown or chmod `%s`", e->path);
  se = put(a->snap, e->path, &st);
  if (se == NULL)
    return sr_error_make(err, ENOMEM, "--apply");
  se->created = true;
  se->removed = false;
  out->applied = true;
  return 0;
}

/* Deletes name (path) in dir, a directory with everything below it that is as it was; 1:
 * gone, 0: kept (listed when it is not the entry itself). */
static int delete_tree(struct ap *a, int dir, const char *name, char *path, size_t plen,
                       int depth, bool top, const char **why, sr_error_t *err)
{
  struct stat st;
  struct sr_ws_snap_entry *se = find(a->snap, path);
  const char *reason = NULL;
  if (sr_sandbox_apply_protected(path, a->protect, a->n_protect))
    reason = "a protected path: not deleted";
  else if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !unchanged(&st, se))
    reason = top ? CHANGED : "changed on the host during the run: not deleted";
  else if (S_ISDIR(st.st_mode) && depth >= MAX_DEPTH)
    reason = "nested too deep: not deleted";
  if (reason) {
    if (top) {
      *why = reason;
      return 0;
    }
    return keep(a, path, se ? se->mode : 0, reason, err) < 0 ? -1 : 0;
  }
  if (S_ISDIR(st.st_mode)) {
    _cleanup_close_ int sub =
        sr_paths_openat2(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0, RESOLVE);
    struct stat got;
    if (sub < 0 || fstat(sub, &got) < 0 || got.st_dev != st.st_dev || got.st_ino != st.st_ino) {
      *why = CHANGED;
      return top ? 0 : keep(a, path, st.st_mode, "changed on the host during the run: not "
                                                 "deleted", err) < 0 ? -1 : 0;
    }
    _cleanup_dir_ DIR *d = sr_dir_open_fd(sub);
    if (d == NULL)
      return sr_error_sys(err, "--apply: read `%s`", path);
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
      if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
        continue;
      size_t nlen = strlen(de->d_name);
      if (plen + nlen + 2 > PATH_MAX) {
        if (keep(a, path, st.st_mode, "a path too long below it: not deleted", err) < 0)
          return -1;
        continue;
      }
      path[plen] = '/';
      memcpy(path + plen + 1, de->d_name, nlen + 1);
      const char *ignored;
      int r = delete_tree(a, sub, de->d_name, path, plen + 1 + nlen, depth + 1, false, &ignored,
                          err);
      path[plen] = '\0';
      if (r < 0)
        return -1;
    }
  }
  if (unlinkat(dir, name, S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0) < 0) {
    if (errno == ENOTEMPTY || errno == EEXIST) {
      *why = "kept: entries below it changed on the host or are protected (listed)";
      return 0;
    }
    return sr_error_sys(err, "--apply: delete `%s`", path);
  }
  se->removed = true;
  return 1;
}

static int apply_delete(struct ap *a, const struct sr_odiff_entry *e, struct sr_ws_outcome *out,
                        sr_error_t *err)
{
  const char *name;
  _cleanup_close_ int dir = open_parent(a, e->path, &name, &out->reason);
  if (dir < 0)
    return 0;
  char path[PATH_MAX];
  if (snprintf(path, sizeof(path), "%s", e->path) >= (int)sizeof(path)) {
    out->reason = "a path too long: not applied";
    return 0;
  }
  int r = delete_tree(a, dir, name, path, strlen(path), 0, true, &out->reason, err);
  if (r < 0)
    return -1;
  out->applied = r == 1;
  return 0;
}

static int apply_one(struct ap *a, const struct sr_odiff_entry *e, struct sr_ws_outcome *out,
                     sr_error_t *err)
{
  if (sr_sandbox_apply_protected(e->path, a->protect, a->n_protect)) {
    out->reason = "a protected path: not applied";
    return 0;
  }
  if (strlen(e->path) >= PATH_MAX) {
    out->reason = "a path too long: not applied";
    return 0;
  }
  if (e->kind == SR_ODIFF_DELETED)
    return apply_delete(a, e, out, err);
  if (S_ISREG(e->mode))
    return apply_file(a, e, out, err);
  if (S_ISDIR(e->mode))
    return apply_dir(a, e, out, err);
  out->reason = S_ISLNK(e->mode) ? "a symbolic link: listed, not applied"
                                 : "not a regular file or directory: not applied";
  return 0;
}

static int cmp_str(const void *x, const void *y)
{
  return strcmp(*(char *const *)x, *(char *const *)y);
}

/* The directories (relative to host) the apply may write a file in, once each. */
static int temp_dirs(const struct sr_odiff *diff, char *const *protect, size_t n_protect,
                     char ***dirs, size_t *n, sr_error_t *err)
{
  *n = 0;
  *dirs = calloc(diff->n + 1, sizeof(char *));
  if (*dirs == NULL)
    return sr_error_make(err, ENOMEM, "--apply");
  for (size_t i = 0; i < diff->n; i++) {
    const struct sr_odiff_entry *e = &diff->v[i];
    if (e->kind == SR_ODIFF_DELETED || !S_ISREG(e->mode) ||
        sr_sandbox_apply_protected(e->path, protect, n_protect))
      continue;
    const char *slash = strrchr(e->path, '/');
    char *d = strndup(e->path, slash ? (size_t)(slash - e->path) : 0);
    if (d == NULL)
      return sr_error_make(err, ENOMEM, "--apply");
    (*dirs)[(*n)++] = d;
  }
  qsort(*dirs, *n, sizeof(char *), cmp_str);
  size_t k = 0;
  for (size_t i = 0; i < *n; i++) {
    if (k > 0 && strcmp((*dirs)[k - 1], (*dirs)[i]) == 0)
      free((*dirs)[i]);
    else
      (*dirs)[k++] = (*dirs)[i];
  }
  (*dirs)[k] = NULL;
  *n = k;
  return 0;
}

static void record_removep(struct sr_ws_apply_record **rec)
{
  if (*rec)
    sr_sandbox_apply_record_remove(*rec);
}

int sr_sandbox_apply(int host, int upper, const struct sr_odiff *diff, struct sr_ws_snapshot *snap,
                     char *const *protect, size_t n_protect, uint64_t max_bytes,
                     const char *refuse_all, struct sr_ws_apply_record *rec, int *stop,
                     struct sr_ws_apply *res, sr_error_t *err)
{
  memset(res, 0, sizeof(*res));
  res->done = true;
  res->complete = true;
  res->v = calloc(diff->n ? diff->n : 1, sizeof(*res->v));
  _cleanup_free_ char *buf = malloc(CHUNK);
  if (res->v == NULL || buf == NULL)
    return sr_error_make(err, ENOMEM, "--apply");
  struct ap a = {.host = host,
                 .upper = upper,
                 .snap = snap,
                 .protect = protect,
                 .n_protect = n_protect,
                 .res = res,
                 .buf = buf,
                 .prefix = rec->prefix,
                 .stop = stop,
                 .max_bytes = max_bytes};
  /* Where its temporaries will be, on record before the first is made: a runtime killed
   * while writing one leaves a record the next sandbox or gc removes it by. */
  __attribute__((cleanup(record_removep))) struct sr_ws_apply_record *written = NULL;
  if (!refuse_all && !diff->truncated) {
    _cleanup_strv_ char **dirs = NULL;
    size_t n_dirs;
    if (temp_dirs(diff, protect, n_protect, &dirs, &n_dirs, err) < 0)
      return -1;
    if (n_dirs > 0) {
      if (sr_sandbox_apply_record_write(rec, dirs, n_dirs, err) < 0)
        return -1;
      written = rec;
    }
  }
  for (size_t i = 0; i < diff->n; i++) {
    struct sr_ws_outcome *out = &res->v[i];
    /* Part of a change is no change to apply: a checkout half edited is worse than none. */
    if (refuse_all)
      out->reason = refuse_all;
    else if (diff->truncated)
      out->reason = "the list of changes is incomplete: nothing applied";
    else if (*stop || (*stop = sr_sandbox_supervise_stop_signal()) != 0)
      out->reason = STOPPED;
    else if (apply_one(&a, &diff->v[i], out, err) < 0)
      return -1;
    if (out->applied)
      res->applied++;
    else {
      res->refused++;
      res->complete = false;
    }
  }
  if (diff->truncated || refuse_all)
    res->complete = false;
  return 0;
}

void sr_sandbox_apply_release(struct sr_ws_apply *res)
{
  for (size_t i = 0; i < res->n_kept; i++)
    free(res->kept[i].path);
  free(res->kept);
  free(res->v);
  memset(res, 0, sizeof(*res));
}
