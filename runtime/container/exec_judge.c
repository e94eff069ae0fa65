/* seerun exec's judgement: the new process against what was decided at the container's create. */
#include "build.h"

#include "exec_judge.h"

#include "audit.h"
#include "cleanup.h"
#include "landlock.h"
#include "lifecycle.h"
#include "policy_run.h"
#include "stored.h"

int sr_exec_judge(const struct sr_invocation *inv, const struct sr_container *ct,
                  struct sr_config *config, struct sr_process *p, struct sr_exec_opts *o,
                  sr_error_t *err)
{
  _cleanup_policy_ctx_ struct sr_policy_ctx pc = {0};
  if (sr_stored_policy_load(inv, ct, &pc, NULL, err) < 0)
    return -1;
  /* The seccomp floor is the profile's: a rewritten state.json ("builtinSeccomp": false)
   * must not take the filter off an exec'd process. */
  o->builtin_seccomp = sr_policy_apply_builtin_seccomp(pc.profile);
  o->require_own_userns = pc.profile->enforce;
  if (pc.profile && config->process) {
    struct sr_process created = *config->process;
    struct sr_capabilities caps;
    if (ct->rec->has_decided_caps) {
      for (int i = 0; i < SR_CAP_SET_COUNT; i++)
        caps.sets[i] = ct->rec->decided_caps[i];
      created.capabilities = &caps;
    }
    struct sr_decisions d = {0};
    sr_error_t refusal = NULL;
    int r = sr_policy_apply_update_exec(pc.profile, &config->arena, &created, p, &d, &refusal);
    /* Decided again from the profile and the kernel, not read back from the state. */
    if (r == 0)
      r = sr_policy_apply_landlock(pc.profile, &config->arena, sr_landlock_abi(),
                                   sr_exec_in_our_netns(ct), &d, &refusal);
    o->landlock.abi = d.landlock_abi;
    o->landlock.scope_abstract_unix = d.landlock_scope_abstract_unix;
    if (sr_audit_decisions(&pc.audit, &d, err) < 0) {
      sr_error_free(&refusal);
      return -1;
    }
    if (r < 0) {
      *err = refusal;
      return -1;
    }
  }
  /* Its clients go through the container's egress proxy, like the init's. */
  if (ct->rec->egress_proxy && sr_policy_apply_egress_proxy_env(&config->arena, p, err) < 0)
    return -1;
  const char *fields[] = {"command", p->args[0], NULL};
  return sr_audit_event(&pc.audit, "exec", fields, err);
}
