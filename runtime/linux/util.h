/* Small file, process and time helpers shared by the runtime. */
#ifndef SEERUN_UTIL_H
#define SEERUN_UTIL_H

#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"

/* config.json, process.json, policy files: a cap keeps a huge or endless file from eating
 * memory. */
#define SR_MAX_CONFIG_SIZE (4u << 20)

/* Reads a regular file whole (NUL-terminated).  A FIFO, device, directory or a file larger than
 * max is an error at once: nothing blocks and nothing unbounded is read. */
int sr_read_file_at(int dirfd, const char *path, size_t max, char **buf, size_t *len,
                    sr_error_t *err);
/* Reads a small file whose size stat cannot tell (procfs, cgroupfs). */
int sr_read_small_file_at(int dirfd, const char *path, char *buf, size_t size, size_t *len,
                          sr_error_t *err);
/* Writes name in dirfd atomically: a temporary file in the same directory, then rename. */
int sr_write_file_atomic(int dirfd, const char *name, const void *data, size_t len, mode_t mode,
                         sr_error_t *err);
/* Creates name in dirfd (it must not exist) and writes it, without the temporary and the
 * rename: for a directory nobody reads yet (unpublished), or an empty marker file, whose
 * existence is the news.  A failed write removes it. */
int sr_write_file_new(int dirfd, const char *name, const void *data, size_t len, mode_t mode,
                      sr_error_t *err);
/* Opens, writes all, closes. */
int sr_write_file_at(int dirfd, const char *path, const void *data, size_t len, int flags,
                     sr_error_t *err);
int sr_write_all(int fd, const void *data, size_t len);
/* A stream connection to the unix socket at path; errors start with what ("--console-socket"). */
/* sr_connect_unix waits at most this long for a listener (and a send to it). */
#define SR_CONNECT_TIMEOUT_S 5
int sr_connect_unix(const char *path, const char *what, int *out, sr_error_t *err);
/* The same for a path resolved once (O_PATH, no magic links), which must be a unix socket,
 * connected through that descriptor; *resolved (may be NULL): its name on the host. */
int sr_connect_unix_once(const char *path, const char *what, int *out, char **resolved,
                         sr_error_t *err);
int sr_mkdir_p(const char *path, mode_t mode, sr_error_t *err);

/* Process start time (field 22 of /proc/PID/stat) and state letter; -1 with ESRCH when the
 * process does not exist. */
int sr_proc_stat(pid_t pid, uint64_t *start_time, char *state);
/* True when pid is alive (not a zombie) and started at start_time: a reused pid is not
 * mistaken for the container. */
bool sr_proc_is(pid_t pid, uint64_t start_time);

/* RFC 3339 with nanoseconds, UTC, as Go's time.RFC3339Nano writes it. */
void sr_time_rfc3339(char *buf, size_t size, const struct timespec *ts);
void sr_now_rfc3339(char *buf, size_t size);

int sr_pidfd_open(pid_t pid);
int sr_pidfd_send_signal(int pidfd, int sig);

/* The string is a non-negative decimal integer that fits in *out. */
bool sr_parse_uint(const char *s, unsigned long long max, unsigned long long *out);

/* A directory stream of dirfd's directory, read from its start whatever was read of it before
 * (dirfd is neither consumed nor moved); NULL with errno set. */
DIR *sr_opendir_fd(int dirfd);

/* A wait status as a process exit status: the code, or 128+N for a signal; `otherwise` for
 * anything else. */
int sr_exit_status(int status, int otherwise);

#endif
