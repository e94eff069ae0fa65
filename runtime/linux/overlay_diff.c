/* The change an overlay's upper layer holds against its lower (overlay_diff.h).
 *
 * A directory is read in one of two modes.  Merged (an upper directory over a lower one, not
 * opaque): a lower entry the upper does not name is still there; a whiteout deletes the entry
 * of its name.  Hidden (below an opaque directory, or a directory that replaced a non-directory
 * or was made anew): the lower's entries are gone, so each lower name the upper does not name
 * (or whites out) is a deletion.  An upper entry over a lower one of the same type is modified
 * if its permission bits, size or bytes (a symlink: its target) differ; of another type it is a
 * deletion followed by an addition.
 *
 * Only trusted.overlay.opaque counts: the overlay is mounted in the trusted namespace, and the
 * user.* xattrs (user.overlay.opaque among them) are what its user could set on its files. */
#include "build.h"

#include "overlay_diff.h"

#include "cleanup.h"
#include "dir.h"
#include "paths.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#define RESOLVE (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV)
#define CHUNK (64 * 1024)

struct dw {
  const struct sr_odiff_limits *lim;
  struct sr_odiff *out;
  char *path; /* (max_depth + 2) * (NAME_MAX + 1) */
  char *a, *b; /* CHUNK each */
  uint64_t examined, max_examined;
  uint64_t compared; /* bytes, of lim->max_compare_bytes */
};

const char *sr_overlay_diff_kind_name(enum sr_odiff_kind k)
{
  return k == SR_ODIFF_ADDED ? "added" : k == SR_ODIFF_MODIFIED ? "modified" : "deleted";
}

const char *sr_overlay_diff_type_name(mode_t m)
{
  switch (m & S_IFMT) {
  case S_IFREG:
    return "file";
  case S_IFDIR:
    return "directory";
  case S_IFLNK:
    return "symlink";
  case S_IFIFO:
    return "fifo";
  case S_IFSOCK:
    return "socket";
  }
  return "device";
}

void sr_overlay_diff_release(struct sr_odiff *d)
{
  for (size_t i = 0; i < d->n; i++)
    free(d->v[i].path);
  free(d->v);
  memset(d, 0, sizeof(*d));
}

static void stop(struct dw *w, const char *reason)
{
  if (!w->out->truncated) {
    w->out->truncated = true;
    w->out->reason = reason;
  }
}

/* 0: listed; 1: a bound was reached (the walk stops); -1: out of memory. */
static int add(struct dw *w, size_t plen, enum sr_odiff_kind kind, const struct stat *st,
               sr_error_t *err)
{
  struct sr_odiff *d = w->out;
  if (d->n >= w->lim->max_entries) {
    stop(w, "more changed entries than the diff lists");
    return 1;
  }
  if (plen > w->lim->max_path_bytes - d->path_bytes) {
    stop(w, "the changed entries' paths are longer in all than the diff lists");
    return 1;
  }
  if (d->n == d->cap) {
    size_t nc = d->cap ? d->cap * 2 : 64;
    struct sr_odiff_entry *nv = realloc(d->v, nc * sizeof(*nv));
    if (nv == NULL)
      return sr_error_make(err, ENOMEM, "overlay diff");
    d->v = nv;
    d->cap = nc;
  }
  char *p = strndup(w->path, plen);
  if (p == NULL)
    return sr_error_make(err, ENOMEM, "overlay diff");
  uint64_t size = S_ISREG(st->st_mode) || S_ISLNK(st->st_mode) ? (uint64_t)st->st_size : 0;
  d->v[d->n++] = (struct sr_odiff_entry){.path = p,
                                         .kind = kind,
                                         .mode = st->st_mode & (S_IFMT | 07777),
                                         .size = size,
                                         .nlink = kind == SR_ODIFF_DELETED ? 1 : st->st_nlink};
  d->path_bytes += plen;
  return 0;
}

static bool is_whiteout(const struct stat *st)
{
  return S_ISCHR(st->st_mode) && st->st_rdev == makedev(0, 0);
}

static int open_checked(int dir, const char *name, int flags, const struct stat *want)
{
  int fd = sr_paths_openat2(dir, name, flags | O_NOFOLLOW | O_CLOEXEC, 0, RESOLVE);
  struct stat got;
  if (fd >= 0 && (fstat(fd, &got) < 0 || got.st_dev != want->st_dev ||
                  got.st_ino != want->st_ino ||
                  (got.st_mode & S_IFMT) != (want->st_mode & S_IFMT))) {
    close(fd);
    errno = ESTALE;
    return -1;
  }
  return fd;
}

static bool read_full(int fd, char *buf, size_t n)
{
  size_t got = 0;
  while (got < n) {
    ssize_t r = read(fd, buf + got, n - got);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      return false;
    got += (size_t)r;
  }
  return true;
}

/* Whether two regular files of the same size hold different bytes (unreadable: different). */
static bool bytes_differ(struct dw *w, int udir, int ldir, const char *name, const struct stat *us,
                         const struct stat *ls)
{
  _cleanup_close_ int u = open_checked(udir, name, O_RDONLY | O_NONBLOCK, us);
  _cleanup_close_ int l = open_checked(ldir, name, O_RDONLY | O_NONBLOCK, ls);
  if (u < 0 || l < 0)
    return true;
  for (uint64_t left = (uint64_t)us->st_size; left > 0;) {
    size_t n = left < CHUNK ? (size_t)left : CHUNK;
    if (!read_full(u, w->a, n) || !read_full(l, w->b, n) || memcmp(w->a, w->b, n) != 0)
      return true;
    left -= n;
  }
  return false;
}

static bool link_differs(int udir, int ldir, const char *name)
{
  char a[PATH_MAX], b[PATH_MAX];
  ssize_t na = readlinkat(udir, name, a, sizeof(a));
  ssize_t nb = readlinkat(ldir, name, b, sizeof(b));
  return na < 0 || nb < 0 || na != nb || memcmp(a, b, (size_t)na) != 0;
}

static bool modified(struct dw *w, int udir, int ldir, const char *name, const struct stat *us,
                     const struct stat *ls)
{
  if ((us->st_mode & 07777) != (ls->st_mode & 07777))
    return true;
  if (S_ISREG(us->st_mode)) {
    if (us->st_size != ls->st_size)
      return true;
    if ((uint64_t)us->st_size > w->lim->max_compare_bytes - w->compared)
      return true; /* not read: listed as modified, which applying changes nothing of */
    w->compared += (uint64_t)us->st_size;
    return bytes_differ(w, udir, ldir, name, us, ls);
  }
  if (S_ISLNK(us->st_mode))
    return link_differs(udir, ldir, name);
  if (S_ISCHR(us->st_mode) || S_ISBLK(us->st_mode))
    return us->st_rdev != ls->st_rdev;
  return false;
}

static bool opaque(int dirfd)
{
  char v[4];
  ssize_t n = fgetxattr(dirfd, "trusted.overlay.opaque", v, sizeof(v));
  return n == 1 && v[0] == 'y';
}

/* The child's path in w->path (after plen bytes); its length, or 0 when it would not fit. */
static size_t child_path(struct dw *w, size_t plen, const char *name)
{
  size_t nlen = strlen(name);
  size_t size = ((size_t)w->lim->max_depth + 2) * (NAME_MAX + 1);
  if (plen + nlen + 2 > size)
    return 0;
  if (plen)
    w->path[plen] = '/';
  memcpy(w->path + plen + (plen ? 1 : 0), name, nlen + 1);
  return plen + (plen ? 1 : 0) + nlen;
}

static int walk(struct dw *w, int udir, int ldir, bool hidden, size_t plen, int depth,
                sr_error_t *err);

static int open_dir_fd(int dir, const char *name, const struct stat *st)
{
  return open_checked(dir, name, O_RDONLY | O_DIRECTORY, st);
}

/* Every lower entry the upper does not name (or whites out): deleted. */
static int hidden_deletions(struct dw *w, int udir, int ldir, size_t plen, sr_error_t *err)
{
  _cleanup_dir_ DIR *d = sr_dir_open_fd(ldir);
  if (d == NULL)
    return 0; /* an unreadable lower directory: nothing of it to list */
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
      continue;
    if (++w->examined > w->max_examined) {
      stop(w, "more entries than the diff examines");
      return 1;
    }
    struct stat us, ls;
    if (fstatat(ldir, de->d_name, &ls, AT_SYMLINK_NOFOLLOW) < 0)
      continue;
    if (fstatat(udir, de->d_name, &us, AT_SYMLINK_NOFOLLOW) == 0 && !is_whiteout(&us))
      continue; /* named by the upper: judged with its entries */
    size_t clen = child_path(w, plen, de->d_name);
    if (clen == 0) {
      stop(w, "a path longer than the diff lists");
      return 1;
    }
    int r = add(w, clen, SR_ODIFF_DELETED, &ls, err);
    w->path[plen] = '\0';
    if (r != 0)
      return r;
  }
  return 0;
}

/* An upper directory entry against the lower's of the same name (ldir -1: none). */
static int entry(struct dw *w, int udir, int ldir, bool hidden, const char *name, size_t clen,
                 int depth, sr_error_t *err)
{
  struct stat us, ls;
  if (fstatat(udir, name, &us, AT_SYMLINK_NOFOLLOW) < 0)
    return 0; /* gone since it was read: nothing can change the upper, so never */
  bool lower = ldir >= 0 && fstatat(ldir, name, &ls, AT_SYMLINK_NOFOLLOW) == 0;
  if (is_whiteout(&us)) {
    /* Hidden: its lower entry is a deletion already (hidden_deletions). */
    return !hidden && lower ? add(w, clen, SR_ODIFF_DELETED, &ls, err) : 0;
  }
  int r;
  bool same_type = lower && (us.st_mode & S_IFMT) == (ls.st_mode & S_IFMT);
  if (lower && !same_type && (r = add(w, clen, SR_ODIFF_DELETED, &ls, err)) != 0)
    return r;
  if (!same_type)
    r = add(w, clen, SR_ODIFF_ADDED, &us, err);
  else if (S_ISDIR(us.st_mode))
    r = (us.st_mode & 07777) != (ls.st_mode & 07777) ? add(w, clen, SR_ODIFF_MODIFIED, &us, err)
                                                       : 0;
  else
    r = modified(w, udir, ldir, name, &us, &ls) ? add(w, clen, SR_ODIFF_MODIFIED, &us, err) : 0;
  if (r != 0 || !S_ISDIR(us.st_mode))
    return r;
  if (depth + 1 > w->lim->max_depth) {
    stop(w, "directories nested deeper than the diff reads");
    return 1;
  }
  _cleanup_close_ int usub = open_dir_fd(udir, name, &us);
  if (usub < 0)
    return sr_error_sys(err, "overlay diff: open the upper directory `%s`", w->path);
  _cleanup_close_ int lsub = same_type ? open_dir_fd(ldir, name, &ls) : -1;
  /* A directory made anew (none of that type below) hides nothing; an opaque one, or any
   * below a hidden one, hides the lower's. */
  bool sub_hidden = same_type && (hidden || opaque(usub));
  return walk(w, usub, lsub, sub_hidden, clen, depth + 1, err);
}

static int walk(struct dw *w, int udir, int ldir, bool hidden, size_t plen, int depth,
                sr_error_t *err)
{
  int r;
  if (hidden && ldir >= 0 && (r = hidden_deletions(w, udir, ldir, plen, err)) != 0)
    return r;
  _cleanup_dir_ DIR *d = sr_dir_open_fd(udir);
  if (d == NULL)
    return sr_error_sys(err, "overlay diff: read the upper directory `%s`", plen ? w->path : ".");
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
      continue;
    if (++w->examined > w->max_examined) {
      stop(w, "more entries than the diff examines");
      return 1;
    }
    size_t clen = child_path(w, plen, de->d_name);
    if (clen == 0) {
      stop(w, "a path longer than the diff lists");
      return 1;
    }
    r = entry(w, udir, ldir, hidden, de->d_name, clen, depth, err);
    w->path[plen] = '\0';
    if (r != 0)
      return r;
  }
  return 0;
}

/* By path, bytewise (a directory comes before what is below it: its path is their prefix);
 * of one path, the deletion before the addition that replaced it. */
static int by_path(const void *a, const void *b)
{
  const struct sr_odiff_entry *x = a, *y = b;
  int c = strcmp(x->path, y->path);
  if (c != 0)
    return c;
  return (x->kind != SR_ODIFF_DELETED) - (y->kind != SR_ODIFF_DELETED);
}

int sr_overlay_diff(int upper, int lower, const struct sr_odiff_limits *lim, struct sr_odiff *out,
                    sr_error_t *err)
{
  memset(out, 0, sizeof(*out));
  size_t size = ((size_t)lim->max_depth + 2) * (NAME_MAX + 1);
  _cleanup_free_ char *path = calloc(1, size);
  _cleanup_free_ char *a = malloc(CHUNK);
  _cleanup_free_ char *b = malloc(CHUNK);
  if (path == NULL || a == NULL || b == NULL)
    return sr_error_make(err, ENOMEM, "overlay diff");
  struct dw w = {.lim = lim, .out = out, .path = path, .a = a, .b = b};
  w.max_examined = (uint64_t)lim->max_entries * 10 + 100000;
  /* The top is merged unless the upper's is opaque. */
  int r = walk(&w, upper, lower, opaque(upper), 0, 0, err);
  if (r < 0) {
    sr_overlay_diff_release(out);
    return -1;
  }
  if (out->n > 1)
    qsort(out->v, out->n, sizeof(*out->v), by_path);
  return 0;
}
