/* The OCI features document (features.md) that `seerun features` prints: what this build
 * implements, never claiming what it does not do.  The one fact found at run time is whether
 * the systemd cgroup driver can work: it needs libsystemd, loaded on demand. */
#ifndef SEERUN_FEATURES_DOC_H
#define SEERUN_FEATURES_DOC_H

#include <stdbool.h>

#include "error.h"

/* checkpoint: built with libcriu and the criu binary usable (`criu check`). */
int sr_features_doc_json(bool systemd_driver, bool checkpoint, char **out, sr_error_t *err);

#endif
