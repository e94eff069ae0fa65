/* Reading and writing whole files and buffers, bounded and EINTR-safe. */
#ifndef SEERUN_FILEIO_H
#define SEERUN_FILEIO_H

#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "error.h"

/* config.json, process.json, policy files: a cap keeps a huge or endless file from eating
 * memory. */
#define SR_MAX_CONFIG_SIZE (4u << 20)

/* Reads a regular file whole (NUL-terminated).  A FIFO, device, directory or a file larger than
 * max is an error at once: nothing blocks and nothing unbounded is read. */
int sr_fileio_read_at(int dirfd, const char *path, size_t max, char **buf, size_t *len,
                      sr_error_t *err);
/* Reads a small file whose size stat cannot tell (procfs, cgroupfs). */
int sr_fileio_read_small_at(int dirfd, const char *path, char *buf, size_t size, size_t *len,
                            sr_error_t *err);
int sr_fileio_write_all(int fd, const void *data, size_t len);
/* Opens, writes all, closes. */
int sr_fileio_write_at(int dirfd, const char *path, const void *data, size_t len, int flags,
                       sr_error_t *err);
/* Writes name in dirfd atomically: a temporary file in the same directory, then rename. */
int sr_fileio_write_atomic(int dirfd, const char *name, const void *data, size_t len, mode_t mode,
                           sr_error_t *err);
/* Creates name in dirfd (it must not exist) and writes it, without the temporary and the
 * rename: for a directory nobody reads yet (unpublished), or an empty marker file, whose
 * existence is the news.  A failed write removes it. */
int sr_fileio_write_new(int dirfd, const char *name, const void *data, size_t len, mode_t mode,
                        sr_error_t *err);

#endif
