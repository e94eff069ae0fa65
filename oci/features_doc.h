/* The OCI features document (features.md) that `seerun features` prints: what this build
 * implements, decided at compile time, never claiming what it does not do. */
#ifndef SEERUN_FEATURES_DOC_H
#define SEERUN_FEATURES_DOC_H

#include "error.h"

int sr_features_json(char **out, sr_error_t *err);

#endif
