/* A container the state root holds, as the commands on an existing container (start, kill,
 * delete, exec, update, ...) and the sandbox open it: loaded, its events audited and its hooks
 * gated under the profile recorded at its create. */
#ifndef SEERUN_STORED_H
#define SEERUN_STORED_H

#include <stdbool.h>

#include "error.h"
#include "hooks.h"
#include "invocation.h"
#include "policy_run.h"
#include "statedir.h"

/* Opens the state root and loads a container (locked or not).  The container owns rootfd. */
int sr_stored_open(const struct sr_invocation *inv, const char *id, bool lock,
                   struct sr_container **out, sr_error_t *err);
void sr_stored_close(struct sr_container *c);
static inline void sr_stored_closep(struct sr_container **c)
{
  if (*c)
    sr_stored_close(*c);
}
#define _cleanup_stored_ __attribute__((cleanup(sr_stored_closep)))

/* Whether the state root holds a container `id` (true unless it surely does not). */
bool sr_stored_exists(const struct sr_invocation *inv, const char *id);

/* For a command on an existing container: the policy, with the profile recorded at its create
 * (an error if the policy no longer has it; the invocation's own if the recorded one does not
 * enforce and that one does), and the audit set up for this container.  prev (or NULL): this
 * invocation's earlier load, whose parse is reused if the policy's bytes are the same
 * (sr_policy_run_load_reusing). */
int sr_stored_policy_load(const struct sr_invocation *inv, const struct sr_container *c,
                          struct sr_policy_ctx *pc, struct sr_policy_ctx *prev, sr_error_t *err);

/* An audit event about an existing container, before the action (kill, delete, ...), under
 * the profile recorded at its create. */
int sr_stored_audit(const struct sr_invocation *inv, const struct sr_container *c,
                    const char *event, const char *const *fields, sr_error_t *err);

/* The gate for hooks read back from c's state directory (start, delete): c's profile, every
 * decision audited under it, a refused hook skipped.  A policy that cannot be loaded (or no
 * longer has the profile) leaves gate->profile NULL, with a warning: no hook of the host runs.
 * prev as for sr_stored_policy_load.  Release pc with sr_policy_run_ctx_release. */
void sr_stored_hook_gate(const struct sr_invocation *inv, const struct sr_container *c,
                         struct sr_policy_ctx *pc, struct sr_policy_ctx *prev,
                         struct sr_hook_gate *gate);

/* After delete: the container's user namespace range waits for its id in the registry (the
 * policy's grace period).  Failures are warnings: the container is gone either way. */
void sr_stored_release_userns(const struct sr_invocation *inv, const char *id);
/* The same with the policy this invocation has loaded already (NULL: it is loaded): the
 * registry's place is the policy's, whatever the profile. */
struct sr_policy;
void sr_stored_release_userns_with(const struct sr_invocation *inv, const struct sr_policy *policy,
                                   const char *id);

/* delete: the activity record a killed supervisor left, as an incomplete audit event. */
void sr_stored_activity_settle(const struct sr_invocation *inv, const struct sr_container *c);

#endif
