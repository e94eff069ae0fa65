/* The policy for a container that already runs: `update` (new resource limits stay within the
 * profile, or are refused) and `exec` (a new process gains nothing beyond what create
 * decided). */
#include "build.h"

#include "policy_apply_internal.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* ---- update ------------------------------------------------------------------------------ */

static int update_limit(struct sr_pa_ctx *x, const char *field, const char *knob, int64_t value,
                        const struct sr_policy_limit *l)
{
  const char *name = x->name;
  char *asked = sr_policy_render_text_i64(x->a, value >= 0, value);
  if (value < 0 && l->has_default)
    return sr_policy_apply_refuse(
        x, field, asked,
        "update: %s: the limit cannot be removed (profile \"%s\" requires one: "
        "profiles.%s.resources.%s.default)",
        field, name, name, knob);
  if (value >= 0 && l->has_max && value > l->max)
    return sr_policy_apply_refuse(x, field, asked,
                                  "update: %s: %" PRId64 " is above the ceiling of profile \"%s\" "
                                  "(profiles.%s.resources.%s.max is %" PRId64 ")",
                                  field, value, name, name, knob, l->max);
  return sr_policy_apply_allow(x, field, asked, P("within profiles.%s.resources.%s", name, knob));
}

/* The CPUs quota/period allows against profiles.<p>.resources.cpu (the period: the update's,
 * else the default). */
static int update_cpu(struct sr_pa_ctx *x, const struct sr_resources *r)
{
  const struct sr_policy_limit *l = &x->p->cpu;
  const char *name = x->name, *field = "linux.resources.cpu.quota";
  uint64_t period = r->cpu.period.set && r->cpu.period.v ? r->cpu.period.v : SR_PA_CPU_PERIOD;
  int64_t milli = sr_policy_apply_resources_cpu_milli(r->cpu.quota.v, period);
  char *asked = sr_policy_render_text_i64(x->a, true, r->cpu.quota.v);
  if (milli < 0 && l->has_default)
    return sr_policy_apply_refuse(
        x, field, asked,
        "update: %s: the CPU limit cannot be removed (profile \"%s\" requires "
        "one: profiles.%s.resources.cpu.default)",
        field, name, name);
  if (milli >= 0 && l->has_max && milli > l->max)
    return sr_policy_apply_refuse(
        x, field, asked,
        "update: %s: %" PRId64 " us per %" PRIu64 " us is %g CPUs, above the "
        "ceiling of profile \"%s\" (profiles.%s.resources.cpu.max is %g)",
        field, r->cpu.quota.v, period, (double)milli / 1000.0, name, name, (double)l->max / 1000.0);
  return sr_policy_apply_allow(x, field, asked, P("within profiles.%s.resources.cpu", name));
}

int sr_policy_apply_update_check(const struct sr_policy_profile *p, struct sr_arena *a,
                                 const struct sr_resources *requested, struct sr_resources *applied,
                                 struct sr_decisions *out, sr_error_t *err)
{
  struct sr_pa_ctx ctx, *x = &ctx;
  sr_policy_apply_ctx_init(x, p, a, out, err);
  const struct sr_resources *r = requested;
  /* Unset fields stay as they are: only what the update sets is judged. */
  if (r->pids_limit.set)
    TRY(update_limit(x, "linux.resources.pids.limit", "pids",
                     r->pids_limit.v > 0 ? r->pids_limit.v : -1, &p->pids));
  if (r->memory.limit.set)
    TRY(update_limit(x, "linux.resources.memory.limit", "memory",
                     r->memory.limit.v > 0 ? r->memory.limit.v : -1, &p->memory));
  if (r->cpu.quota.set)
    TRY(update_cpu(x, r));
  for (size_t i = 0; i < r->n_unified; i++) {
    const char *k = r->unified_keys[i], *knob;
    char q[32] = "";
    unsigned long long period = 0;
    if (strcmp(k, "cpu.max") == 0 && sscanf(r->unified_values[i], "%31s %llu", q, &period) >= 1 &&
        (strcmp(q, "max") == 0 || sr_policy_apply_resources_unified_value(q) >= 0)) {
      struct sr_resources cpu = {0};
      cpu.cpu.quota = (sr_opt_i64){
          true, strcmp(q, "max") == 0 ? -1 : sr_policy_apply_resources_unified_value(q)};
      cpu.cpu.period = (sr_opt_u64){period > 0, period};
      TRY(update_cpu(x, &cpu));
      continue;
    }
    const struct sr_policy_limit *l = sr_policy_apply_resources_unified_limit(p, k, &knob);
    int64_t v = l ? sr_policy_apply_resources_unified_value(r->unified_values[i]) : -2;
    if (v != -2)
      TRY(update_limit(x, P("linux.resources.unified.%s", k), knob, v, l));
  }
  for (size_t i = 0; i < r->n_devices; i++)
    if (!sr_policy_apply_resources_rule_covered(p, &r->devices[i]))
      TRY(sr_policy_apply_refuse(
          x, P("linux.resources.devices[%zu]", i),
          sr_policy_render_text_rules(a, &r->devices[i], 1),
          "update: linux.resources.devices[%zu]: an allow rule beyond profile \"%s\" "
          "(profiles.%s.devices.allowed)",
          i, x->name, x->name));
  *applied = *requested;
  return 0;
}

/* ---- exec -------------------------------------------------------------------------------- */

static bool same_str(const char *a, const char *b)
{
  return (a == NULL || b == NULL) ? a == b : strcmp(a, b) == 0;
}

static int keep_label(struct sr_pa_ctx *x, const char *field, char **label, const char *created,
                      const char *what)
{
  if (same_str(*label, created))
    return 0;
  int r = sr_policy_apply_change(x, field, sr_policy_render_text_str(x->a, *label),
                                 sr_policy_render_text_str(x->a, created),
                                 P("an exec keeps the %s decided at create", what));
  TRY(r);
  if (r && created) {
    *label = sr_arena_strdup(x->a, created);
    if (*label == NULL)
      return sr_policy_apply_oom(x);
  } else if (r)
    *label = NULL;
  return 0;
}

int sr_policy_apply_update_exec(const struct sr_policy_profile *p, struct sr_arena *a,
                                const struct sr_process *created, struct sr_process *e,
                                struct sr_decisions *out, sr_error_t *err)
{
  struct sr_pa_ctx ctx, *x = &ctx;
  sr_policy_apply_ctx_init(x, p, a, out, err);
  TRY(sr_policy_apply_mounts_check_cwd(x, e));
  TRY(sr_policy_apply_force_nnp(x, e));
  /* The bounding set decided at create is the ceiling of every process of the container. */
  uint64_t ceiling = created && created->capabilities
                         ? created->capabilities->sets[SR_CAP_BOUNDING] & p->capabilities
                         : 0;
  TRY(sr_policy_apply_limit_caps(
      x, e, ceiling, "beyond the bounding set the container was created with",
      "every capability is in the bounding set the container was created with"));
  /* "unconfined" in process.json must not lift the container's confinement. */
  TRY(keep_label(x, "process.apparmorProfile", &e->apparmor_profile,
                 created ? created->apparmor_profile : NULL, "AppArmor profile"));
  TRY(keep_label(x, "process.selinuxLabel", &e->selinux_label,
                 created ? created->selinux_label : NULL, "SELinux label"));
  return 0;
}
