/* OCI hooks: each runs with the container's state on stdin, its own args and env, and its
 * timeout; a failure is an error naming the hook, with what it wrote to stderr. */
#ifndef SEERUN_HOOKS_H
#define SEERUN_HOOKS_H

#include "config.h"
#include "error.h"

/* Runs the hooks of `kind` in order, `state_json` on each one's stdin, and waits for each
 * (a timeout kills the hook's whole process group).  The first failure stops the others and is
 * the error, except for poststop, where every hook runs and the error lists all failures. */
int sr_hooks_run(const struct sr_hooks *hooks, enum sr_hook_kind kind, const char *state_json,
                 sr_error_t *err);

#endif
