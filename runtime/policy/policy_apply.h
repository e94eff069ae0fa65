/* The policy applied to a parsed config: config in, config + decisions out.
 *
 * Pure: no I/O, no globals, deterministic.  What the host looks like (is this namespace path
 * the host's? is this bind source denied? is this hook on a trusted path?) the runtime finds
 * out first and passes in as facts.  Every decision -- enforced, allowed or refused -- is
 * appended to a list that the runtime writes to the audit log.
 *
 * A request the profile forbids is neutralised where nothing is lost and no engine is misled
 * (capabilities dropped, a host namespace replaced by a new one, nosuid/nodev added ...), and
 * refused otherwise, with an error naming the field, and for an annotation the annotation and
 * the policy key.
 */
#ifndef SEERUN_POLICY_APPLY_H
#define SEERUN_POLICY_APPLY_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h"
#include "error.h"
#include "json.h"
#include "policy.h"

enum sr_decision_kind { SR_DECISION_ENFORCED, SR_DECISION_ALLOWED, SR_DECISION_REFUSED };

struct sr_decision {
  enum sr_decision_kind kind;
  const char *field;   /* "process.capabilities.bounding", "mounts[3].source", ... */
  const char *asked;   /* short JSON text: "[\"CAP_SYS_ADMIN\",\"CAP_CHOWN\"]", "false" */
  const char *applied; /* likewise; for a refusal NULL; in a permissive profile, what would
                          have been applied ("refused: <message>" for a refusal) */
  const char *reason;  /* "permissive" for what a permissive profile let through */
};

struct sr_decisions {
  struct sr_decision *list; /* in the arena of the call that filled it */
  size_t n, cap;
  /* Set by sr_policy_apply: whether the container may have more than loopback.  The runtime
   * checks after the hooks that a container without the grant sees only lo. */
  bool network_granted;
};

/* Host facts the runtime computed; the policy does no I/O. */
struct sr_policy_mount_fact {
  bool source_denied;
  const char *denied_path;    /* the denied host path the source is or contains */
  bool source_is_symlink_out; /* resolving the source left the directory it names (a symlink
                                 out of the bundle, ...) */
};

struct sr_policy_ns_fact {
  bool is_host;               /* same inode as /proc/1/ns/<type> */
  bool is_seerun_container;   /* belongs to another live seerun container */
  bool container_has_network; /* that container was granted network */
  int container_pid;           /* that container's init (the runtime uses it for pods) */
};

struct sr_policy_hook_fact {
  bool trusted_path; /* root-owned file in root-owned directories no other user can write,
                        outside the bundle and rootfs */
};

struct sr_policy_facts {
  struct sr_policy_mount_fact *mounts;              /* one per config->mounts[i] */
  struct sr_policy_ns_fact ns[SR_NS_COUNT];         /* for namespaces given by path */
  struct sr_policy_hook_fact *hooks[SR_HOOK_COUNT]; /* one per hook */
  bool have_network_grant_check;                    /* reserved */
};

/* Applies profile p to c in place (allocating in c->arena), appending every decision to out
 * (also in c->arena).  Returns -1 with an error on the first refusal, which is then the last
 * decision in out.  facts may be NULL: nothing is then known about the host, and what needs a
 * fact (a bind mount, a hook, a namespace path) is judged as the least trusted case. */
int sr_policy_apply(const struct sr_policy_profile *p, const struct sr_policy_facts *facts,
                    struct sr_config *c, struct sr_decisions *out, sr_error_t *err);

/* `update`: new resource limits must stay within the profile.  An update that lifts a limit
 * above a ceiling (or removes a limit the profile requires, or allows a device the profile
 * does not) is refused, not lowered: the update would otherwise report success for a value
 * that is not there.  On success *applied = *requested.  Decisions are allocated in a. */
int sr_policy_check_update(const struct sr_policy_profile *p, struct sr_arena *a,
                           const struct sr_resources *requested, struct sr_resources *applied,
                           struct sr_decisions *out, sr_error_t *err);

/* `exec`: the new process cannot have capabilities beyond the bounding set decided at create
 * (nor beyond the profile), always has no_new_privileges, keeps the LSM labels decided at
 * create, and cannot start in a directory under /proc.  created: the container's process as
 * the policy left it; exec_process is changed in place (allocations in a). */
int sr_policy_apply_exec(const struct sr_policy_profile *p, struct sr_arena *a,
                         const struct sr_process *created, struct sr_process *exec_process,
                         struct sr_decisions *out, sr_error_t *err);

bool sr_policy_network_granted(const struct sr_decisions *d);

/* Whether the runtime installs its built-in seccomp filter (besides any of the config):
 * always, unless the profile is permissive. */
bool sr_policy_builtin_seccomp(const struct sr_policy_profile *p);

const char *sr_decision_kind_name(enum sr_decision_kind k); /* "enforced", ... */

/* An array of {kind, field, asked, applied, reason}. */
int sr_decisions_to_json(const struct sr_decisions *d, sr_json_gen_t g);

/* The known annotations, which only request what the profile allows. */
#define SR_ANNOTATION_NETWORK "io.seerun.network"   /* "none" or "enabled" */
#define SR_ANNOTATION_TMP_SIZE "io.seerun.tmp-size" /* a size: the /tmp tmpfs */

#endif
