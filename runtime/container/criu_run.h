/* checkpoint and restore as the commands run them: the stored container opened and audited
 * (checkpoint), or a create whose policy, audit and Landlock decision come first (restore).
 * The machinery is checkpoint.h's. */
#ifndef SEERUN_CRIU_RUN_H
#define SEERUN_CRIU_RUN_H

#include "checkpoint.h"
#include "container.h"
#include "error.h"
#include "invocation.h"

/* checkpoint ID: audited ("checkpoint", and "checkpoint-failed" with the reason); the user
 * namespace range released unless o->leave_running. */
int sr_criu_run_checkpoint(const struct sr_invocation *inv, const char *id,
                           const struct sr_criu_opts *o, sr_error_t *err);

/* restore ID from the bundle at bundle_arg (create's options in co, whose id is the new
 * container's and must be free): the bundle judged by the policy as a create, the Landlock
 * decision audited, the restore audited ("restored" or "restore-failed"); on failure nothing
 * is left (sr_prepare_failed).  *status: the init's exit status when not detached. */
int sr_criu_run_restore(const struct sr_invocation *inv, struct sr_create_opts *co,
                        const char *bundle_arg, const struct sr_criu_opts *o, int *status,
                        sr_error_t *err);

#endif
