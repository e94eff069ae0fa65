#include "build.h"

#include "update.h"

#include "cgroup.h"
#include "lifecycle.h"
#include "policy_run.h"
#include "stored.h"

static int judge(const struct sr_invocation *inv, const struct sr_container *ct, struct sr_arena *a,
                 const struct sr_resources *r, struct sr_resources *applied, sr_error_t *err)
{
  _cleanup_policy_ctx_ struct sr_policy_ctx pc = {0};
  if (sr_stored_policy_load(inv, ct, &pc, NULL, err) < 0)
    return -1;
  struct sr_decisions d = {0};
  sr_error_t refusal = NULL;
  int pr = pc.profile ? sr_policy_apply_update_check(pc.profile, a, r, applied, &d, &refusal) : 0;
  if (!pc.profile)
    *applied = *r;
  if (sr_audit_decisions(&pc.audit, &d, err) < 0 ||
      (pr == 0 && sr_audit_event(&pc.audit, "update", NULL, err) < 0)) {
    sr_error_free(&refusal);
    return -1;
  }
  if (pr < 0) {
    *err = refusal;
    return -1;
  }
  return 0;
}

int sr_update_resources(const struct sr_invocation *inv, const char *id, struct sr_arena *a,
                        const struct sr_resources *r, sr_error_t *err)
{
  _cleanup_stored_ struct sr_container *ct = NULL;
  if (sr_stored_open(inv, id, true, &ct, err) < 0)
    return -1;
  if (sr_container_status(ct) == SR_STATUS_STOPPED)
    return sr_error_make(err, 0, "container \"%s\" not running", id);
  if (ct->rec->cgroup_version == 0)
    return sr_error_make(err, 0, "container \"%s\" has no cgroup", id);
  /* The new limits must stay within the profile the container was created under. */
  struct sr_resources applied;
  if (judge(inv, ct, a, r, &applied, err) < 0)
    return -1;
  _cleanup_cgroup_ struct sr_cgroup *cg = NULL;
  if (sr_cgroup_new(SR_CGROUP_ROOT, ct->rec->cgroup_path, &cg, err) < 0)
    return -1;
  return sr_cgroup_apply_resources(cg, &applied, true, err);
}
