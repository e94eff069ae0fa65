/* The host paths a filesystem mount names in its options (overlay's lowerdir, lowerdir+,
 * datadir+, upperdir, workdir), split out of the mount's data the one way seerun then mounts
 * it: the policy judges, and the runtime opens, exactly these paths.  A second parser (the
 * kernel's, of a string seerun would hand it) is how "lowerdir=/ok\,upperdir=/etc" would mean
 * one thing to the judge and another to the mount.  Pure: no I/O. */
#ifndef SEERUN_MOUNT_PATHS_H
#define SEERUN_MOUNT_PATHS_H

#include "config.h"

enum sr_mount_path_kind {
  SR_MOUNT_PATH_LOWER,   /* a lower layer, top first: fsconfig "lowerdir+" */
  SR_MOUNT_PATH_DATA,    /* a data-only lower layer ("::" or "datadir+"): "datadir+" */
  SR_MOUNT_PATH_UPPER,   /* "upperdir" */
  SR_MOUNT_PATH_WORK,    /* "workdir" */
  SR_MOUNT_PATH_UNJUDGED /* a path in another type's options, which the kernel opens by name */
};

struct sr_mount_path {
  enum sr_mount_path_kind kind;
  const char *key; /* the fsconfig key the runtime passes the descriptor as (overlay); the
                      option's own key otherwise */
  char *path;      /* unescaped: "\:" is ':', "\," is ',', "\\" is '\' */
  char *option;    /* the option as written ("upperdir=/var/lib/x"), for messages */
};

struct sr_mount_data {
  struct sr_mount_path *paths; /* in the order given (lower layers top first) */
  size_t n_paths;
  char **plain; /* every other option, "key" or "key=value", as the runtime passes it */
  size_t n_plain;
};

bool sr_mount_paths_is_overlay(const struct sr_mount *m);

/* Splits m->opts.data.  overlay: options are separated by commas not escaped with a
 * backslash, lowerdir's layers by unescaped colons ("::" starts the data-only layers), as
 * overlayfs reads them; given twice, or lowerdir mixed with lowerdir+/datadir+, is an error
 * naming field.  Other types: split on every comma (as their options are passed), and an
 * option whose key ends in "dir" or "dir+" or whose value is an absolute path is returned as
 * SR_MOUNT_PATH_UNJUDGED. */
int sr_mount_paths_data_split(struct sr_arena *a, const struct sr_mount *m, const char *field,
                              struct sr_mount_data *out, sr_error_t *err);

/* A filesystem type whose source the kernel opens as a path (a block device, a file): every
 * type but those whose source is only a name (tmpfs, proc, overlay, ...). */
bool sr_mount_paths_source_is_path(const struct sr_mount *m);

#endif
