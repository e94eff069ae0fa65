#include "build.h"

#include "fileio.h"

#include "cleanup.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

/* Reads until len bytes or the end of the file: how many were read, -1 with errno on error.
 * end: where a read that stops short of what was asked is taken for the end, without a read of
 * its own (SIZE_MAX: only a read of 0 is). */
static ssize_t read_upto_end(int fd, void *buf, size_t len, size_t end)
{
  size_t got = 0;
  while (got < len) {
    size_t want = len - got;
    ssize_t r = read(fd, (char *)buf + got, want);
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0)
      return -1;
    if (r == 0)
      break;
    got += (size_t)r;
    if ((size_t)r < want && got == end)
      break;
  }
  return (ssize_t)got;
}

static ssize_t read_upto(int fd, void *buf, size_t len)
{
  return read_upto_end(fd, buf, len, SIZE_MAX);
}

int sr_fileio_read_at(int dirfd, const char *path, size_t max, char **buf, size_t *len,
                      sr_error_t *err)
{
  /* O_NONBLOCK: opening a FIFO must not wait for a writer. */
  _cleanup_close_ int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0)
    return sr_error_sys(err, "open `%s`", path);
  struct stat st;
  if (fstat(fd, &st) < 0)
    return sr_error_sys(err, "stat `%s`", path);
  if (!S_ISREG(st.st_mode))
    return sr_error_make(err, 0, "`%s`: not a regular file", path);
  if ((uint64_t)st.st_size > max)
    return sr_error_make(err, 0, "`%s`: too large (%" PRIu64 " bytes, the limit is %zu)", path,
                         (uint64_t)st.st_size, max);
  size_t cap = (size_t)st.st_size;
  _cleanup_free_ char *b = malloc(cap + 2);
  if (b == NULL)
    return sr_error_make(err, ENOMEM, "read `%s`", path);
  /* One byte more than fstat said, in one read where the file is whole: a read that stops
   * short with cap bytes in is the end as fstat saw it, with no read of its own for the end
   * (every state and config read paid one); a byte more: the file grew after fstat. */
  ssize_t got = read_upto_end(fd, b, cap + 1, cap);
  if (got < 0)
    return sr_error_sys(err, "read `%s`", path);
  if ((size_t)got > cap)
    return sr_error_make(err, 0, "`%s`: changed while being read", path);
  b[got] = '\0';
  *buf = steal_ptr(b);
  *len = (size_t)got;
  return 0;
}

int sr_fileio_read_small_at(int dirfd, const char *path, char *buf, size_t size, size_t *len,
                            sr_error_t *err)
{
  _cleanup_close_ int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0)
    return sr_error_sys(err, "open `%s`", path);
  ssize_t got = read_upto(fd, buf, size - 1);
  if (got < 0)
    return sr_error_sys(err, "read `%s`", path);
  buf[got] = '\0';
  if (len)
    *len = (size_t)got;
  return 0;
}

int sr_fileio_write_all(int fd, const void *data, size_t len)
{
  const char *p = data;
  while (len > 0) {
    ssize_t w = write(fd, p, len);
    if (w < 0 && errno == EINTR)
      continue;
    if (w < 0)
      return -1;
    p += w;
    len -= (size_t)w;
  }
  return 0;
}

int sr_fileio_write_at(int dirfd, const char *path, const void *data, size_t len, int flags,
                       sr_error_t *err)
{
  _cleanup_close_ int fd = openat(dirfd, path, O_WRONLY | O_CLOEXEC | O_NOCTTY | flags, 0644);
  if (fd < 0)
    return sr_error_sys(err, "open `%s`", path);
  if (sr_fileio_write_all(fd, data, len) < 0)
    return sr_error_sys(err, "write `%s`", path);
  return 0;
}

int sr_fileio_write_atomic(int dirfd, const char *name, const void *data, size_t len, mode_t mode,
                           sr_error_t *err)
{
  char tmp[PATH_MAX];
  if ((size_t)snprintf(tmp, sizeof(tmp), ".%s.%d.tmp", name, getpid()) >= sizeof(tmp))
    return sr_error_make(err, ENAMETOOLONG, "write `%s`", name);
  _cleanup_close_ int fd =
      openat(dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
  if (fd < 0)
    return sr_error_sys(err, "create `%s`", tmp);
  if (sr_fileio_write_all(fd, data, len) < 0 || fchmod(fd, mode) < 0) {
    int saved = errno;
    unlinkat(dirfd, tmp, 0);
    return sr_error_make(err, saved, "write `%s`", name);
  }
  if (renameat(dirfd, tmp, dirfd, name) < 0) {
    int saved = errno;
    unlinkat(dirfd, tmp, 0);
    return sr_error_make(err, saved, "rename `%s` to `%s`", tmp, name);
  }
  return 0;
}

int sr_fileio_write_new(int dirfd, const char *name, const void *data, size_t len, mode_t mode,
                        sr_error_t *err)
{
  _cleanup_close_ int fd =
      openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
  if (fd < 0)
    return sr_error_sys(err, "create `%s`", name);
  if (sr_fileio_write_all(fd, data, len) < 0 || fchmod(fd, mode) < 0) {
    int saved = errno;
    unlinkat(dirfd, name, 0);
    return sr_error_make(err, saved, "write `%s`", name);
  }
  return 0;
}
