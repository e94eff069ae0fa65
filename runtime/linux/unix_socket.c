#include "build.h"

#include "unix_socket.h"

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

int sr_unix_socket_connect(const char *path, const char *what, int *out, sr_error_t *err)
{
  struct sockaddr_un addr = {.sun_family = AF_UNIX};
  if (strlen(path) >= sizeof(addr.sun_path))
    return sr_error_make(err, ENAMETOOLONG, "%s `%s`", what, path);
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
                           what, path, SR_CONNECT_TIMEOUT_S);
    return sr_error_sys(err, "%s: connect `%s`", what, path);
  }
  *out = steal_fd(fd);
  return 0;
}
