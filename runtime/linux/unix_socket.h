/* Stream connections to unix sockets, bounded in time. */
#ifndef SEERUN_UNIX_SOCKET_H
#define SEERUN_UNIX_SOCKET_H

#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "error.h"

/* A stream connection to the unix socket at path; errors start with what ("--console-socket"). */
/* sr_unix_socket_connect waits at most this long for a listener (and a send to it). */
#define SR_CONNECT_TIMEOUT_S 5
int sr_unix_socket_connect(const char *path, const char *what, int *out, sr_error_t *err);
/* The same for a path resolved once (O_PATH, no magic links), which must be a unix socket,
 * connected through that descriptor; *resolved (may be NULL): its name on the host. */
int sr_unix_socket_connect_once(const char *path, const char *what, int *out, char **resolved,
                                sr_error_t *err);
/* sr_unix_socket_connect_once to the socket (dev, ino) only: a name that leads elsewhere by
 * now (swapped for a symlink to another socket) is refused, never connected to. */
int sr_unix_socket_connect_inode(const char *path, const char *what, uint64_t dev, uint64_t ino,
                                 int *out, sr_error_t *err);

#endif
