#include "build.h"

#include "paths.h"

#include "path.h"

#include "cleanup.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

int sr_paths_openat2(int dirfd, const char *path, int flags, mode_t mode,
                     unsigned long long resolve)
{
  struct open_how how = {.flags = (unsigned long long)flags | O_CLOEXEC, .resolve = resolve};
  if (flags & (O_CREAT | O_TMPFILE))
    how.mode = mode;
  int fd;
  do
    fd = (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
  while (fd < 0 && errno == EAGAIN);
  return fd;
}

#define IN_ROOT (RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS)

void sr_paths_fd_path(char *buf, size_t size, int fd)
{
  snprintf(buf, size, "/proc/self/fd/%d", fd);
}

int sr_paths_open_in_root(int rootfd, const char *path, int flags, int *out, sr_error_t *err)
{
  int fd = sr_paths_openat2(rootfd, path, flags, 0, IN_ROOT);
  if (fd < 0)
    return sr_error_sys(err, "open `%s` in the container", path);
  *out = fd;
  return 0;
}

static int check_kind(int fd, enum sr_mkpath_kind kind, const char *path, sr_error_t *err)
{
  struct stat st;
  if (fstat(fd, &st) < 0)
    return sr_error_sys(err, "stat `/%s` in the container", path);
  if (kind == SR_MKPATH_DIR && !S_ISDIR(st.st_mode))
    return sr_error_make(err, ENOTDIR, "`/%s` in the container", path);
  if (kind == SR_MKPATH_FILE && S_ISDIR(st.st_mode))
    return sr_error_make(err, EISDIR, "`/%s` in the container", path);
  return 0;
}

/* fd, just opened for path (negative: the open failed, errno says why), into *out when it is
 * of kind; closed when it is not. */
static int hand_out(int fd, enum sr_mkpath_kind kind, const char *path, int *out, sr_error_t *err)
{
  if (fd < 0)
    return sr_error_sys(err, "open `/%s` in the container", path);
  if (check_kind(fd, kind, path, err) < 0) {
    close(fd);
    return -1;
  }
  *out = fd;
  return 0;
}

static int mkpath(int rootfd, char *path, enum sr_mkpath_kind kind, int depth, int *out,
                  sr_error_t *err);

/* `path` (relative to the root) ends in `name`, a dangling symlink in `parent`: as runc, its
 * target is made, inside the root: an absolute target is taken from the root, a relative one
 * from the symlink's directory, ".." never above the root, and every step resolved in the root
 * again (a symlink out of the root lands inside it, CVE-2021-30465 class).  Then `path` is
 * opened through the symlink, in the root. */
static int make_symlink_target(int rootfd, int parent, char *path, const char *name,
                               enum sr_mkpath_kind kind, int depth, int *out, sr_error_t *err)
{
  char link[PATH_MAX];
  ssize_t n = readlinkat(parent, name, link, sizeof(link) - 1);
  if (n < 0)
    return sr_error_sys(err, "read the symlink `/%s` in the container", path);
  link[n] = '\0';
  char target[PATH_MAX];
  size_t dirlen = (size_t)(name - path);
  int len = link[0] == '/' ? snprintf(target, sizeof(target), "%s", link)
                           : snprintf(target, sizeof(target), "/%.*s%s", (int)dirlen, path, link);
  if (len < 0 || (size_t)len >= sizeof(target))
    return sr_error_make(err, ENAMETOOLONG, "the target of the symlink `/%s` in the container",
                         path);
  sr_path_clean(target, target);
  char *rel = target;
  while (*rel == '/')
    rel++;
  if (*rel) {
    _cleanup_close_ int made = -1;
    if (mkpath(rootfd, rel, kind, depth + 1, &made, err) < 0)
      return sr_error_wrap(err, "`/%s` in the container is a dangling symlink", path);
  }
  return hand_out(sr_paths_openat2(rootfd, path, O_PATH, 0, IN_ROOT), kind, path, out, err);
}

static int mkpath(int rootfd, char *path, enum sr_mkpath_kind kind, int depth, int *out,
                  sr_error_t *err)
{
  if (depth > 255)
    return sr_error_make(err, ELOOP, "`/%s` in the container", path);
  int fd = sr_paths_openat2(rootfd, path, O_PATH, 0, IN_ROOT);
  if (fd >= 0)
    return hand_out(fd, kind, path, out, err);
  if (errno != ENOENT)
    return sr_error_sys(err, "resolve `/%s` in the container", path);

  char *slash = strrchr(path, '/');
  char *name;
  _cleanup_close_ int parent = -1;
  if (slash == NULL || slash == path) {
    parent = fcntl(rootfd, F_DUPFD_CLOEXEC, 3);
    if (parent < 0)
      return sr_error_sys(err, "dup");
    name = slash ? slash + 1 : path;
  } else {
    *slash = '\0';
    int r = mkpath(rootfd, path, SR_MKPATH_DIR, depth + 1, &parent, err);
    *slash = '/';
    if (r < 0)
      return -1;
    name = slash + 1;
  }
  /* Created beneath a verified directory; a racing symlink swap makes these fail (EEXIST, or
   * ELOOP on the open below), never escape. */
  int r;
  if (kind == SR_MKPATH_DIR)
    r = mkdirat(parent, name, 0755);
  else {
    r = openat(parent, name, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (r >= 0)
      close(r);
  }
  if (r < 0 && errno != EEXIST)
    return sr_error_sys(err, "create `/%s` in the container", path);
  /* No O_NOFOLLOW: with O_PATH it would open a symlink itself (and report it as "not a
   * directory"); RESOLVE_NO_SYMLINKS refuses it with ELOOP instead, which is what is left when
   * the name is a symlink that did not resolve above, a dangling one. */
  fd = sr_paths_openat2(parent, name, O_PATH, 0, RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS);
  if (fd < 0 && errno == ELOOP)
    return make_symlink_target(rootfd, parent, path, name, kind, depth, out, err);
  return hand_out(fd, kind, path, out, err);
}

int sr_paths_mkpath_in_root(int rootfd, const char *path, enum sr_mkpath_kind kind, int *out,
                            sr_error_t *err)
{
  char buf[PATH_MAX + 1];
  if (strlen(path) >= PATH_MAX)
    return sr_error_make(err, ENAMETOOLONG, "`%s`", path);
  sr_path_clean(path, buf);
  /* Relative to root from here on: "/a/b" -> "a/b"; "/" is the root itself. */
  char *rel = buf;
  while (*rel == '/')
    rel++;
  if (*rel == '\0') {
    if (kind != SR_MKPATH_DIR)
      return sr_error_make(err, EISDIR, "`%s` in the container", path);
    int fd = fcntl(rootfd, F_DUPFD_CLOEXEC, 3);
    if (fd < 0)
      return sr_error_sys(err, "dup");
    *out = fd;
    return 0;
  }
  return mkpath(rootfd, rel, kind, 0, out, err);
}

/* Whether the object fd is, or lies below (by its ".." chain), the inode (dev, ino). */
bool sr_paths_at_or_below(int fd, dev_t dev, ino_t ino)
{
  struct stat st;
  if (fstat(fd, &st) < 0)
    return false;
  if (st.st_dev == dev && st.st_ino == ino)
    return true;
  _cleanup_close_ int cur = openat(fd, "..", O_PATH | O_CLOEXEC);
  struct stat prev = st;
  for (int depth = 0; cur >= 0 && depth < 256; depth++) {
    if (fstat(cur, &st) < 0 || (st.st_dev == prev.st_dev && st.st_ino == prev.st_ino))
      return false; /* the root */
    if (st.st_dev == dev && st.st_ino == ino)
      return true;
    prev = st;
    int parent = openat(cur, "..", O_PATH | O_CLOEXEC);
    close(cur);
    cur = parent;
  }
  return false;
}
