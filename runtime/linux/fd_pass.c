#include "build.h"

#include "fd_pass.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>

ssize_t sr_fd_pass_send_some(int sock, int fd, const char *data, size_t len)
{
  struct iovec iov = {(void *)data, len};
  union {
    struct cmsghdr h;
    char buf[CMSG_SPACE(sizeof(int))];
  } u;
  memset(&u, 0, sizeof(u));
  struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
  if (fd >= 0) {
    m.msg_control = u.buf;
    m.msg_controllen = sizeof(u.buf);
    struct cmsghdr *h = CMSG_FIRSTHDR(&m);
    h->cmsg_level = SOL_SOCKET;
    h->cmsg_type = SCM_RIGHTS;
    h->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(h), &fd, sizeof(int));
  }
  ssize_t n;
  while ((n = sendmsg(sock, &m, MSG_NOSIGNAL)) < 0 && errno == EINTR)
    ;
  return n;
}

int sr_fd_pass_send(int sock, int fd, const char *data, size_t len)
{
  return sr_fd_pass_send_some(sock, fd, data, len) == (ssize_t)len ? 0 : -1;
}

int sr_fd_pass_recv(int sock, int flags, char *data, size_t size, size_t *got)
{
  struct iovec iov = {data, size};
  union {
    struct cmsghdr h;
    char buf[CMSG_SPACE(sizeof(int))];
  } u;
  struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
                     .msg_controllen = sizeof(u.buf)};
  ssize_t n;
  while ((n = recvmsg(sock, &m, flags | MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
    ;
  *got = n > 0 ? (size_t)n : 0;
  if (n <= 0)
    return -1;
  struct cmsghdr *h = CMSG_FIRSTHDR(&m);
  if (h == NULL || h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_RIGHTS ||
      h->cmsg_len != CMSG_LEN(sizeof(int)))
    return -1;
  int fd;
  memcpy(&fd, CMSG_DATA(h), sizeof(fd));
  return fd;
}
