/* OCI hooks: each runs with the container's state on stdin, its own args and env, and its
 * timeout; a failure is an error naming the hook, with what it wrote to stderr. */
#ifndef SEERUN_HOOKS_H
#define SEERUN_HOOKS_H

#include "config.h"
#include "error.h"

int sr_hooks_run(const struct sr_hooks *hooks, enum sr_hook_kind kind, const char *state_json,
                 sr_error_t *err);

#endif
