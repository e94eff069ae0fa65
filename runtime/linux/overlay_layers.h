/* The layers of an engine's overlayfs root filesystem, read back from the mount's options.
 *
 * overlayfs cannot be idmapped itself, but its layers can (Linux 5.19+), and a detached
 * idmapped mount can be a layer (6.x): so the runtime rebuilds the engine's overlay from
 * idmapped copies of its layers, and the image's files keep their owners inside the user
 * namespace.  This file only reads the options (a pure function, unit-tested); rootfs_overlay.c
 * does the mounting. */
#ifndef SEERUN_OVERLAY_LAYERS_H
#define SEERUN_OVERLAY_LAYERS_H

#include <stdbool.h>
#include <stddef.h>

#include "arena.h"
#include "error.h"

#define SR_OVERLAY_MAX_LAYERS 500 /* the kernel's limit on lower layers */

struct sr_overlay_layers {
  struct sr_arena arena;
  char **lower; /* absolute paths, top first */
  size_t n_lower;
  char *upper;    /* NULL: none */
  bool metacopy;  /* metacopy=on: lower layers may hold metadata-only copies */
  bool userxattr; /* the overlay's xattrs are user.overlay.*, not trusted.overlay.* */
};

/* Parses the super options of an overlay mount as /proc/self/mountinfo shows them (octal
 * escapes, "lowerdir=a:b" with "\:" for a colon in a name, or "lowerdir+=a" once per layer).
 * Relative layer paths are taken relative to base (the engine mounted from its storage
 * directory); base NULL refuses them.  Data-only layers (datadir+) are refused. */
int sr_overlay_layers_parse(const char *superopts, const char *base,
                            struct sr_overlay_layers *out, sr_error_t *err);
void sr_overlay_layers_release(struct sr_overlay_layers *l);

/* The super options field of a /proc/self/mountinfo line if it is mount `mnt_id`'s (the line
 * is cut at its newline), else NULL. */
const char *sr_overlay_layers_superopts(char *line, unsigned long long mnt_id);

#endif
