#include "build.h"

#include "unix_socket.h"

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

int sr_unix_socket_connect(const char *path, const char *what, int *out, sr_error_t *err)
{
  return connect_unix(path, path, what, out, err);
}

static int connect_once(const char *path, const char *what, const struct stat *want, int *out,
                        char **resolved, sr_error_t *err);

int sr_unix_socket_connect_once(const char *path, const char *what, int *out, char **resolved,
                                sr_error_t *err)
{
  return connect_once(path, what, NULL, out, resolved, err);
}

int sr_unix_socket_connect_inode(const char *path, const char *what, uint64_t dev, uint64_t ino,
                                 int *out, sr_error_t *err)
{
  struct stat want = {.st_dev = (dev_t)dev, .st_ino = (ino_t)ino};
  return connect_once(path, what, &want, out, NULL, err);
}

static int connect_once(const char *path, const char *what, const struct stat *want, int *out,
                        char **resolved, sr_error_t *err)
{
  /* One lookup, magic links refused: the socket is the inode this descriptor holds. */
  _cleanup_close_ int pfd =
      sr_paths_openat2(AT_FDCWD, path, O_PATH | O_CLOEXEC, 0, RESOLVE_NO_MAGICLINKS);
  if (pfd < 0)
    return sr_error_sys(err, "%s `%s`", what, path);
  struct stat st;
  if (fstat(pfd, &st) < 0)
    return sr_error_sys(err, "%s `%s`", what, path);
  if (!S_ISSOCK(st.st_mode))
    return sr_error_make(err, ENOTSOCK, "%s `%s`: not a unix socket", what, path);
  if (want && (st.st_dev != want->st_dev || st.st_ino != want->st_ino))
    return sr_error_make(err, EXDEV,
                         "%s `%s` is no longer the socket the policy judged at create (it was "
                         "replaced since): not connected to",
                         what, path);
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
