#include "build.h"

#include "util.h"

#include "cleanup.h"
#include "paths.h"

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

/* Reads until len bytes or the end of the file: how many were read, -1 with errno on error. */
static ssize_t read_upto(int fd, void *buf, size_t len)
{
  size_t got = 0;
  while (got < len) {
    ssize_t r = read(fd, (char *)buf + got, len - got);
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0)
      return -1;
    if (r == 0)
      break;
    got += (size_t)r;
  }
  return (ssize_t)got;
}

int sr_read_file_at(int dirfd, const char *path, size_t max, char **buf, size_t *len,
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
  _cleanup_free_ char *b = malloc(cap + 1);
  if (b == NULL)
    return sr_error_make(err, ENOMEM, "read `%s`", path);
  ssize_t got = read_upto(fd, b, cap);
  if (got < 0)
    return sr_error_sys(err, "read `%s`", path);
  if ((size_t)got == cap) {
    /* The file grew after fstat: read one more byte to tell. */
    char extra;
    ssize_t more = read_upto(fd, &extra, 1);
    if (more < 0)
      return sr_error_sys(err, "read `%s`", path);
    if (more > 0)
      return sr_error_make(err, 0, "`%s`: changed while being read", path);
  }
  b[got] = '\0';
  *buf = steal_ptr(b);
  *len = (size_t)got;
  return 0;
}

int sr_read_small_file_at(int dirfd, const char *path, char *buf, size_t size, size_t *len,
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

int sr_write_all(int fd, const void *data, size_t len)
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

int sr_write_file_at(int dirfd, const char *path, const void *data, size_t len, int flags,
                     sr_error_t *err)
{
  _cleanup_close_ int fd = openat(dirfd, path, O_WRONLY | O_CLOEXEC | O_NOCTTY | flags, 0644);
  if (fd < 0)
    return sr_error_sys(err, "open `%s`", path);
  if (sr_write_all(fd, data, len) < 0)
    return sr_error_sys(err, "write `%s`", path);
  return 0;
}

int sr_write_file_atomic(int dirfd, const char *name, const void *data, size_t len, mode_t mode,
                         sr_error_t *err)
{
  char tmp[PATH_MAX];
  if ((size_t)snprintf(tmp, sizeof(tmp), ".%s.%d.tmp", name, getpid()) >= sizeof(tmp))
    return sr_error_make(err, ENAMETOOLONG, "write `%s`", name);
  _cleanup_close_ int fd =
      openat(dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
  if (fd < 0)
    return sr_error_sys(err, "create `%s`", tmp);
  if (sr_write_all(fd, data, len) < 0 || fchmod(fd, mode) < 0) {
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

int sr_write_file_new(int dirfd, const char *name, const void *data, size_t len, mode_t mode,
                      sr_error_t *err)
{
  _cleanup_close_ int fd =
      openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
  if (fd < 0)
    return sr_error_sys(err, "create `%s`", name);
  if (sr_write_all(fd, data, len) < 0 || fchmod(fd, mode) < 0) {
    int saved = errno;
    unlinkat(dirfd, name, 0);
    return sr_error_make(err, saved, "write `%s`", name);
  }
  return 0;
}

int sr_mkdir_p(const char *path, mode_t mode, sr_error_t *err)
{
  char buf[PATH_MAX];
  size_t len = strlen(path);
  if (len == 0 || len >= sizeof(buf))
    return sr_error_make(err, ENAMETOOLONG, "mkdir `%s`", path);
  memcpy(buf, path, len + 1);
  for (char *p = buf + 1;; p++) {
    if (*p == '/' || *p == '\0') {
      char saved = *p;
      *p = '\0';
      if (mkdir(buf, mode) < 0 && errno != EEXIST)
        return sr_error_sys(err, "mkdir `%s`", buf);
      *p = saved;
      if (saved == '\0')
        break;
    }
  }
  struct stat st;
  if (stat(path, &st) < 0)
    return sr_error_sys(err, "stat `%s`", path);
  if (!S_ISDIR(st.st_mode))
    return sr_error_make(err, ENOTDIR, "`%s`", path);
  return 0;
}

int sr_proc_stat(pid_t pid, uint64_t *start_time, char *state)
{
  char path[64], buf[1024];
  snprintf(path, sizeof(path), "/proc/%d/stat", pid);
  _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    errno = ESRCH;
    return -1;
  }
  ssize_t n = read(fd, buf, sizeof(buf) - 1);
  if (n <= 0) {
    errno = ESRCH;
    return -1;
  }
  buf[n] = '\0';
  /* comm may contain spaces and parentheses: fields start after the last ')'. */
  char *p = strrchr(buf, ')');
  if (p == NULL || p[1] != ' ') {
    errno = EINVAL;
    return -1;
  }
  p += 2;
  if (state)
    *state = *p;
  /* p is field 3 (state); start time is field 22. */
  for (int field = 3; field < 22; field++) {
    p = strchr(p, ' ');
    if (p == NULL) {
      errno = EINVAL;
      return -1;
    }
    p++;
  }
  if (start_time)
    *start_time = strtoull(p, NULL, 10);
  return 0;
}

bool sr_proc_is(pid_t pid, uint64_t start_time)
{
  uint64_t st;
  char state;
  if (pid <= 0 || sr_proc_stat(pid, &st, &state) < 0)
    return false;
  return st == start_time && state != 'Z' && state != 'X';
}

void sr_time_rfc3339(char *buf, size_t size, const struct timespec *ts)
{
  struct tm tm;
  gmtime_r(&ts->tv_sec, &tm);
  char base[32];
  strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
  /* Go's RFC3339Nano drops trailing zeros of the fraction. */
  char frac[16] = "";
  if (ts->tv_nsec) {
    snprintf(frac, sizeof(frac), ".%09ld", ts->tv_nsec);
    size_t l = strlen(frac);
    while (l > 1 && frac[l - 1] == '0')
      frac[--l] = '\0';
  }
  snprintf(buf, size, "%s%sZ", base, frac);
}

void sr_now_rfc3339(char *buf, size_t size)
{
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  sr_time_rfc3339(buf, size, &ts);
}

int sr_pidfd_open(pid_t pid)
{
  return (int)syscall(SYS_pidfd_open, pid, 0);
}

int sr_pidfd_send_signal(int pidfd, int sig)
{
  return (int)syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
}

bool sr_parse_uint(const char *s, unsigned long long max, unsigned long long *out)
{
  if (s == NULL || *s < '0' || *s > '9')
    return false;
  errno = 0;
  char *end;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || *end != '\0' || v > max)
    return false;
  *out = v;
  return true;
}

/* Connects to the socket at path (what it is shown as: name). */
static int connect_unix(const char *path, const char *name, const char *what, int *out,
                        sr_error_t *err)
{
  struct sockaddr_un addr = {.sun_family = AF_UNIX};
  if (strlen(path) >= sizeof(addr.sun_path))
    return sr_error_make(err, ENAMETOOLONG, "%s `%s`", what, name);
  strcpy(addr.sun_path, path);
  _cleanup_close_ int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return sr_error_sys(err, "%s: socket", what);
  /* A listener whose queue is full (anyone who can make a socket can fill it) must not hang
   * the runtime: a unix connect waits at most SO_SNDTIMEO, then fails with EAGAIN.  The
   * bound stays for the sends that follow (a peer that never reads). */
  struct timeval tv = {.tv_sec = SR_CONNECT_TIMEOUT_S};
  if (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0)
    return sr_error_sys(err, "%s: socket timeout", what);
  if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK)
      return sr_error_make(err, errno,
                           "%s: connect `%s`: no answer within %d s (its listen queue is full)",
                           what, name, SR_CONNECT_TIMEOUT_S);
    return sr_error_sys(err, "%s: connect `%s`", what, name);
  }
  *out = steal_fd(fd);
  return 0;
}

int sr_connect_unix(const char *path, const char *what, int *out, sr_error_t *err)
{
  return connect_unix(path, path, what, out, err);
}

int sr_connect_unix_once(const char *path, const char *what, int *out, char **resolved,
                         sr_error_t *err)
{
  /* One lookup, magic links refused: the socket is the inode this descriptor holds. */
  _cleanup_close_ int pfd =
      sr_openat2(AT_FDCWD, path, O_PATH | O_CLOEXEC, 0, RESOLVE_NO_MAGICLINKS);
  if (pfd < 0)
    return sr_error_sys(err, "%s `%s`", what, path);
  struct stat st;
  if (fstat(pfd, &st) < 0)
    return sr_error_sys(err, "%s `%s`", what, path);
  if (!S_ISSOCK(st.st_mode))
    return sr_error_make(err, ENOTSOCK, "%s `%s`: not a unix socket", what, path);
  /* connect() by /proc/self/fd/N resolves that magic link of our own descriptor to the very
   * inode opened above, never the name again (and fits sun_path whatever the name's length). */
  char via[64];
  snprintf(via, sizeof(via), "/proc/self/fd/%d", pfd);
  if (resolved) {
    char name[PATH_MAX];
    ssize_t n = readlink(via, name, sizeof(name) - 1);
    *resolved = strndup(n > 0 ? name : path, n > 0 ? (size_t)n : strlen(path));
  }
  return connect_unix(via, path, what, out, err);
}

DIR *sr_opendir_fd(int dirfd)
{
  /* A new open file description: its offset is its own, so a stream never resumes where
   * another one stopped. */
  int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return NULL;
  DIR *d = fdopendir(fd);
  if (d == NULL) {
    int saved = errno;
    close(fd);
    errno = saved;
  }
  return d;
}

int sr_exit_status(int status, int otherwise)
{
  if (WIFEXITED(status))
    return WEXITSTATUS(status);
  if (WIFSIGNALED(status))
    return 128 + WTERMSIG(status);
  return otherwise;
}
