/* The operator's policy in the runtime: loading it (the file must be root-owned and writable
 * by root only), selecting the profile the engine entry is bound to, applying it to a config
 * with the host's facts, and recording every decision in the audit log before acting. */
#ifndef SEERUN_POLICY_RUN_H
#define SEERUN_POLICY_RUN_H

#include "audit.h"
#include "config.h"
#include "error.h"
#include "invocation.h"
#include "policy.h"
#include "policy_apply.h"
#include "policy_facts.h"

struct sr_policy_ctx {
  struct sr_policy *policy;
  const struct sr_policy_profile *profile;
  struct sr_audit audit;
  /* The bytes the policy was parsed from (the file's, read by descriptor, in owned_bytes; or
   * the built-in text), for a later load in the same invocation to reuse the parse. */
  const char *bytes;
  char *owned_bytes;
  size_t len;
};

/* The profile this invocation is bound to: --profile, else the engine entry's binding by
 * the program's name and the state root (sr_policy_select). */
int sr_policy_run_select_bound(const struct sr_policy *policy, const struct sr_invocation *inv,
                               const struct sr_policy_profile **out, sr_error_t *err);

/* On a failure pc holds nothing (no release needed). */
int sr_policy_run_load(const struct sr_invocation *inv, struct sr_policy_ctx *pc, sr_error_t *err);
/* The same, the policy read again; prev (or NULL), a policy this invocation loaded before,
 * gives up its parse to pc when the bytes read now are the bytes it was parsed from (run's
 * delete after its create).  A policy changed meanwhile is parsed anew. */
int sr_policy_run_load_reusing(const struct sr_invocation *inv, struct sr_policy_ctx *pc,
                           struct sr_policy_ctx *prev, sr_error_t *err);
void sr_policy_run_ctx_release(struct sr_policy_ctx *pc);
/* For a context initialised {0} (or loaded): released at the end of its scope. */
#define _cleanup_policy_ctx_ __attribute__((cleanup(sr_policy_run_ctx_release)))

/* create/run: applies the profile to c (in place) and audits the decisions.  A refusal is
 * audited, then returned as the error.  Records in->state_root among the state roots (not
 * for a dry run), and denies every recorded one as a bind source. */
int sr_policy_run_create(struct sr_policy_ctx *pc, struct sr_config *c,
                         const struct sr_facts_input *in, struct sr_decisions *d, sr_error_t *err);

#endif
