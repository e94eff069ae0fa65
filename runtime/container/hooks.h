/* OCI hooks: each runs with the container's state on stdin, its own args and env, and its
 * timeout; a failure is an error naming the hook, with what it wrote to stderr.
 *
 * A hook of the runtime's namespaces is opened once, judged from that descriptor against the
 * profile (hook_files.h, sr_policy_apply_hooks_check_hook) and executed by that descriptor
 * (execveat); a script's interpreter likewise.  startContainer hooks, files of the container, run
 * by their path inside it. */
#ifndef SEERUN_HOOKS_H
#define SEERUN_HOOKS_H

#include "arena.h"
#include "audit.h"
#include "config.h"
#include "error.h"
#include "hook_files.h"
#include "policy.h"

/* What a hook is judged against where it runs. */
struct sr_hook_gate {
  const struct sr_policy_profile *profile; /* NULL: no policy; no hook of the host runs */
  /* The profile this invocation is bound to, when it is not `profile` (which a state
   * directory names): a hook read back from there runs only if both allow it. */
  const struct sr_policy_profile *also;
  const struct sr_audit *audit;            /* where refusals (and re-judgements) are recorded */
  struct sr_hook_places places;
  /* What is read back from a state directory (start, delete): every decision is recorded, and
   * a refused hook is skipped with a warning instead of failing the command. */
  bool rejudge;
};

/* The hooks of one kind, judged and opened, ready to run (the createContainer hooks are
 * prepared by the parent and run by the init, whose view of the host's files is not to be
 * trusted: it is in the container's user namespace). */
struct sr_hook_ready {
  const struct sr_hook *hook; /* path, args, timeout */
  size_t index;
  char **env; /* as the policy left it */
  size_t n_env;
  struct sr_hook_file file;
};

struct sr_hook_batch {
  enum sr_hook_kind kind;
  struct sr_hook_ready *v;
  size_t n;
  struct sr_arena arena;
  bool keep_going; /* run every hook, failures or not (always for poststop) */
};

/* Judges and opens the hooks of `kind`.  A refusal is an error, or with gate->rejudge a
 * warning and the hook left out. */
int sr_hooks_prepare(const struct sr_hooks *hooks, enum sr_hook_kind kind,
                     const struct sr_hook_gate *gate, struct sr_hook_batch *out, sr_error_t *err);
void sr_hooks_batch_release(struct sr_hook_batch *b);

/* Runs the batch in order, `state_json` on each one's stdin, and waits for each (a timeout
 * kills the hook's whole process group).  The first failure stops the others and is the error,
 * except for poststop, where every hook runs and the error lists all failures. */
int sr_hooks_run_batch(const struct sr_hook_batch *b, const char *state_json, sr_error_t *err);

/* sr_hooks_prepare, then every hook of the batch even after a failure (the error lists all
 * failures), as poststop: a poststart hook of a config before ociVersion 1.3. */
int sr_hooks_run_all(const struct sr_hooks *hooks, enum sr_hook_kind kind,
                     const struct sr_hook_gate *gate, const char *state_json, sr_error_t *err);

/* sr_hooks_prepare, then sr_hooks_run_batch. */
int sr_hooks_run(const struct sr_hooks *hooks, enum sr_hook_kind kind,
                 const struct sr_hook_gate *gate, const char *state_json, sr_error_t *err);

#endif
