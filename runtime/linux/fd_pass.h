/* One descriptor with a few bytes of data over a unix socket (SCM_RIGHTS). */
#ifndef SEERUN_LINUX_FD_PASS_H
#define SEERUN_LINUX_FD_PASS_H

#include <stddef.h>
#include <sys/types.h>

/* Sends `fd` with `len` bytes of `data` (no SIGPIPE, EINTR retried): 0, or -1 with errno. */
int sr_fd_pass_send(int sock, int fd, const char *data, size_t len);

/* One sendmsg of `len` bytes of `data`, with `fd` when it is not negative (no SIGPIPE, EINTR
 * retried): how many bytes went (the descriptor with them), or -1 with errno.  For a sender
 * that carries on after a short write without the descriptor. */
ssize_t sr_fd_pass_send_some(int sock, int fd, const char *data, size_t len);

/* Receives up to `size` bytes into `data` (*got: how many; 0 at EOF or on error) and the one
 * descriptor that came with them (close-on-exec), returned; -1 when none came. */
int sr_fd_pass_recv(int sock, int flags, char *data, size_t size, size_t *got);

#endif
