/* Splits OCI mount option strings into mount(2) flags, propagation, recursive mount_setattr
 * attributes and filesystem data. */
#ifndef SEERUN_MOUNT_OPTIONS_H
#define SEERUN_MOUNT_OPTIONS_H

#include "config.h"

int sr_mount_options_parse(struct sr_arena *a, char **options, size_t n, const char *path,
                           struct sr_mount_opts *out, sr_error_t *err);

/* The i-th option name seerun recognises (for `features`); NULL past the end. */
const char *sr_mount_options_name(size_t i);

/* Propagation name (shared, rslave, ...) to MS_* flags; -1 when unknown. */
long sr_mount_options_propagation(const char *name);

#endif
