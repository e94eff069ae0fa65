/* Path operations inside the container's root filesystem, which the tenant controls: every
 * lookup goes through openat2 with RESOLVE_IN_ROOT, so that a symlink (or "..") can never lead
 * out of it, and what is created is created beneath an already verified directory descriptor
 * (the symlink-exchange races of CVE-2021-30465 and its kin). */
#ifndef SEERUN_PATHS_H
#define SEERUN_PATHS_H

#include <linux/openat2.h>
#include <stdbool.h>
#include <sys/types.h>

#include "error.h"

int sr_paths_openat2(int dirfd, const char *path, int flags, mode_t mode,
                     unsigned long long resolve);

/* Opens path resolved inside root (flags as for open; O_CLOEXEC is added). */
int sr_paths_open_in_root(int rootfd, const char *path, int flags, int *out, sr_error_t *err);

enum sr_mkpath_kind { SR_MKPATH_DIR, SR_MKPATH_FILE };

/* Resolves path inside root, creating what is missing (directories 0755; the last component as
 * kind, a file with mode 0644), and returns an O_PATH descriptor of it.  An existing last
 * component of the other kind is an error, as is a dangling symlink. */
int sr_paths_mkpath_in_root(int rootfd, const char *path, enum sr_mkpath_kind kind, int *out,
                            sr_error_t *err);

/* "/proc/self/fd/N" for an fd, for the few interfaces that only take paths. */
void sr_paths_fd_path(char *buf, size_t size, int fd);

/* Whether the object fd is, or lies below (by its ".." chain, which crosses mount points
 * upwards), the inode (dev, ino): a place judged by the object, never by a path's text. */
bool sr_paths_at_or_below(int fd, dev_t dev, ino_t ino);

#endif
