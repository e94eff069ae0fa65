/* What an overlay's upper layer changed in its lower: the entries added, modified and
 * deleted, read from the two directories alone (the overlay itself need not exist any more).
 *
 * The upper layer must be one overlayfs wrote with redirect_dir=off and metacopy=off (a plain
 * tree: every file whole, no renames recorded as redirects), in the trusted.overlay.*
 * namespace: a whiteout (a character device 0/0) deletes the lower entry of its name, and a
 * directory with trusted.overlay.opaque=y hides every lower entry below it.  Its content is
 * taken as hostile (the overlay's user wrote it): names are any bytes, the walk is bounded in
 * entries, path bytes and depth, nothing is followed, and no file is opened but regular files
 * (O_NOFOLLOW, checked to be the entry examined).
 *
 * Used by the sandbox's workspace (--workspace, --apply) and meant for anything else that
 * wants to say which files a run changed. */
#ifndef SEERUN_OVERLAY_DIFF_H
#define SEERUN_OVERLAY_DIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"

enum sr_odiff_kind { SR_ODIFF_ADDED, SR_ODIFF_MODIFIED, SR_ODIFF_DELETED };

struct sr_odiff_entry {
  char *path; /* relative to the top, raw bytes (any but NUL and '/' in a name) */
  enum sr_odiff_kind kind;
  /* The upper's entry (deleted: the lower's): S_IFMT and the permission bits. */
  mode_t mode;
  uint64_t size;  /* regular files: bytes; symlinks: the target's length; else 0 */
  nlink_t nlink;  /* the upper's (1 for a deletion) */
};

struct sr_odiff_limits {
  size_t max_entries;    /* entries listed */
  size_t max_path_bytes; /* the sum of their paths' lengths */
  int max_depth;         /* directories below the top */
  /* Bytes compared to tell a copied-up file from a modified one; past it (a sparse file of a
   * terabyte, say), a file of the same size is taken as modified. */
  uint64_t max_compare_bytes;
};

struct sr_odiff {
  struct sr_odiff_entry *v; /* by path, bytewise (parents before what is below them; of one
                               path, its deletion before the addition of another type); a
                               deleted directory is one entry (all below it went with it) */
  size_t n, cap;
  size_t path_bytes;
  bool truncated;      /* a bound was reached: the list is not the whole change */
  const char *reason;  /* why, when truncated */
};

#define SR_ODIFF_LIMITS_DEFAULT                                                                    \
  {.max_entries = 100000, .max_path_bytes = 32u << 20, .max_depth = 64,                          \
   .max_compare_bytes = 4ull << 30}

/* The change of upper (the overlay's upperdir) against lower (its lowerdir), both directory
 * descriptors.  -1 on an error (out of memory, an unreadable directory of the upper); a bound
 * reached is no error (out->truncated). */
int sr_overlay_diff(int upper, int lower, const struct sr_odiff_limits *lim, struct sr_odiff *out,
                    sr_error_t *err);
void sr_overlay_diff_release(struct sr_odiff *d);

const char *sr_overlay_diff_kind_name(enum sr_odiff_kind k);
/* "file", "directory", "symlink", "fifo", "socket", "device". */
const char *sr_overlay_diff_type_name(mode_t mode);

#endif
