/* The policy's devices (section 9: nodes and cgroup device rules) and resource limits
 * (section 10: pids, memory and CPU floors and ceilings). */
#include "build.h"

#include "policy_apply_internal.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- 9. Devices -------------------------------------------------------------------------- */

static bool device_allowed(const struct sr_policy_profile *p, char type, int64_t major,
                           int64_t minor)
{
  for (size_t i = 0; i < p->n_devices; i++) {
    const struct sr_policy_device *d = &p->devices[i];
    if (d->type == type && d->major == major && (d->minor < 0 || d->minor == minor))
      return true;
  }
  return false;
}

int sr_policy_apply_resources_check_devices(struct sr_pa_ctx *x, const struct sr_linux *l)
{
  const char *name = x->name;
  for (size_t i = 0; i < l->n_devices; i++) {
    const struct sr_device *d = &l->devices[i];
    char *field = P("linux.devices[%zu]", i);
    if (d->type == 'p')
      continue; /* a FIFO is no device */
    char type = d->type == 'u' ? 'c' : d->type;
    char *asked = P("\"%s (%c %" PRId64 ":%" PRId64 ")\"", d->path, d->type, d->major, d->minor);
    /* Dropping it would be a --device that silently is not there: refused. */
    if (!device_allowed(x->p, type, d->major, d->minor))
      TRY(sr_policy_apply_refuse(x, field, asked,
                                 "linux.devices[%zu]: %s device \"%s\" (%c %" PRId64 ":%" PRId64
                                 ") is not "
                                 "allowed by profile \"%s\" (profiles.%s.devices.allowed)",
                                 i, type == 'b' ? "block" : "character", d->path, d->type, d->major,
                                 d->minor, name, name));
    else
      TRY(sr_policy_apply_allow(x, field, asked, P("in profiles.%s.devices.allowed", name)));
  }
  return 0;
}

bool sr_policy_apply_resources_rule_covered(const struct sr_policy_profile *p,
                                            const struct sr_device_rule *r)
{
  if (!r->allow)
    return true;
  if (r->type == 'a' || r->major < 0)
    return false;
  return device_allowed(p, r->type, r->major, r->minor);
}

/* The part of an allow rule that an allowed device covers. */
static bool rule_intersect(const struct sr_device_rule *r, const struct sr_policy_device *d,
                           struct sr_device_rule *out)
{
  if ((r->type != 'a' && r->type != d->type) || (r->major >= 0 && r->major != d->major))
    return false;
  int64_t minor;
  if (d->minor < 0)
    minor = r->minor;
  else if (r->minor < 0 || r->minor == d->minor)
    minor = d->minor;
  else
    return false;
  *out = (struct sr_device_rule){true, d->type, d->major, minor, ""};
  memcpy(out->access, r->access, sizeof(out->access));
  return true;
}

static int apply_device_rules(struct sr_pa_ctx *x, struct sr_resources *r)
{
  const char *field = "linux.resources.devices";
  if (r == NULL || r->n_devices == 0)
    return 0;
  size_t uncovered = 0;
  for (size_t i = 0; i < r->n_devices; i++)
    uncovered += !sr_policy_apply_resources_rule_covered(x->p, &r->devices[i]);
  char *asked = sr_policy_render_text_rules(x->a, r->devices, r->n_devices);
  if (uncovered == 0)
    return sr_policy_apply_allow(
        x, field, asked, P("every allow rule is within profiles.%s.devices.allowed", x->name));
  /* "a *:* rwm" (privileged) or a block device: each such rule becomes the allowed nodes it
   * reaches, after a deny-all; deny rules stay. */
  size_t cap = 1 + r->n_devices + uncovered * x->p->n_devices;
  struct sr_device_rule *v = sr_arena_array(x->a, cap, sizeof(*v));
  size_t n = 0;
  if (v == NULL)
    return sr_policy_apply_oom(x);
  const struct sr_device_rule *first = &r->devices[0];
  if (first->allow || first->type != 'a' || first->major >= 0 || first->minor >= 0 ||
      strcmp(first->access, "rwm") != 0)
    v[n++] = (struct sr_device_rule){false, 'a', -1, -1, "rwm"};
  for (size_t i = 0; i < r->n_devices; i++) {
    if (sr_policy_apply_resources_rule_covered(x->p, &r->devices[i])) {
      v[n++] = r->devices[i];
      continue;
    }
    for (size_t d = 0; d < x->p->n_devices; d++)
      if (rule_intersect(&r->devices[i], &x->p->devices[d], &v[n]))
        n++;
  }
  int ch = sr_policy_apply_change(
      x, field, asked, sr_policy_render_text_rules(x->a, v, n),
      P("allow rules beyond profiles.%s.devices.allowed (every device, block devices, "
        "...) are narrowed to the allowed nodes",
        x->name));
  TRY(ch);
  if (ch) {
    r->devices = v;
    r->n_devices = n;
  }
  return 0;
}

/* ---- 10. Resources ----------------------------------------------------------------------- */

/* value < 0 (or unset): no limit. */
static int floor_ceiling(struct sr_pa_ctx *x, const char *field, const char *knob,
                         const char *asked, int64_t value, const struct sr_policy_limit *l,
                         int64_t *out, bool *changed)
{
  const char *name = x->name;
  *changed = false;
  if (value < 0) {
    if (!l->has_default)
      return sr_policy_apply_allow(
          x, field, asked, P("no limit (profiles.%s.resources.%s has no default)", name, knob));
    int r = sr_policy_apply_change(
        x, field, asked, sr_policy_render_text_i64(x->a, true, l->def),
        P("no limit asked: the profile's applies (profiles.%s.resources.%s.default)", name, knob));
    TRY(r);
    *out = l->def;
    *changed = r > 0;
    return 0;
  }
  if (l->has_max && value > l->max) {
    int r = sr_policy_apply_change(
        x, field, asked, sr_policy_render_text_i64(x->a, true, l->max),
        P("above the ceiling, lowered (profiles.%s.resources.%s.max)", name, knob));
    TRY(r);
    *out = l->max;
    *changed = r > 0;
    return 0;
  }
  return sr_policy_apply_allow(x, field, asked, P("within profiles.%s.resources.%s", name, knob));
}

const struct sr_policy_limit *
sr_policy_apply_resources_unified_limit(const struct sr_policy_profile *p, const char *key,
                                        const char **knob)
{
  if (strcmp(key, "pids.max") == 0) {
    *knob = "pids";
    return &p->pids;
  }
  if (strcmp(key, "memory.max") == 0) {
    *knob = "memory";
    return &p->memory;
  }
  return NULL;
}

int64_t sr_policy_apply_resources_unified_value(const char *v)
{
  if (strcmp(v, "max") == 0)
    return -1;
  size_t n = strlen(v);
  if (n == 0 || n > 18 || strspn(v, "0123456789") != n)
    return -2;
  return (int64_t)strtoll(v, NULL, 10);
}

/* CPUs in thousandths that quota/period allow (rounded up); -1: no limit. */
int64_t sr_policy_apply_resources_cpu_milli(int64_t quota, uint64_t period)
{
  if (quota <= 0)
    return -1;
  if (period == 0)
    period = SR_PA_CPU_PERIOD;
  unsigned __int128 m = ((unsigned __int128)quota * 1000 + period - 1) / period;
  return m > INT64_MAX ? INT64_MAX : (int64_t)m;
}

/* The quota for milli thousandths of a CPU per period (at least the kernel's 1 ms). */
static int64_t cpu_quota(int64_t milli, uint64_t period)
{
  unsigned __int128 q = (unsigned __int128)milli * period / 1000;
  return q < 1000 ? 1000 : q > INT64_MAX ? INT64_MAX : (int64_t)q;
}

/* linux.resources.cpu.quota (over cpu.period) against profiles.<p>.resources.cpu: no limit
 * asked gets the default, above the ceiling is lowered; the decision is in the config's own
 * terms (the quota, microseconds per period). */
static int apply_cpu(struct sr_pa_ctx *x, struct sr_resources *r)
{
  const struct sr_policy_limit *l = &x->p->cpu;
  const char *name = x->name, *field = "linux.resources.cpu.quota";
  uint64_t period = r->cpu.period.set && r->cpu.period.v > 0 ? r->cpu.period.v : SR_PA_CPU_PERIOD;
  int64_t have =
      sr_policy_apply_resources_cpu_milli(r->cpu.quota.set ? r->cpu.quota.v : -1, period);
  char *asked = sr_policy_render_text_i64(x->a, r->cpu.quota.set, r->cpu.quota.v);
  int64_t want;
  const char *why;
  if (have < 0) {
    if (!l->has_default)
      return sr_policy_apply_allow(x, field, asked,
                                   P("no limit (profiles.%s.resources.cpu has no default)", name));
    want = l->def;
    why = P("no limit asked: the profile's applies (profiles.%s.resources.cpu.default: %g, per "
            "period of %" PRIu64 " us)",
            name, (double)l->def / 1000.0, period);
  } else if (l->has_max && have > l->max) {
    want = l->max;
    why = P("above the ceiling, lowered (profiles.%s.resources.cpu.max: %g)", name,
            (double)l->max / 1000.0);
  } else
    return sr_policy_apply_allow(x, field, asked, P("within profiles.%s.resources.cpu", name));
  int64_t quota = cpu_quota(want, period);
  int ch =
      sr_policy_apply_change(x, field, asked, sr_policy_render_text_i64(x->a, true, quota), why);
  TRY(ch);
  if (ch) {
    r->cpu.quota = (sr_opt_i64){true, quota};
    r->cpu.period = (sr_opt_u64){true, period};
  }
  return 0;
}

/* unified "cpu.max" ("QUOTA PERIOD" or "max PERIOD"), written last: judged as the quota is. */
static int apply_unified_cpu(struct sr_pa_ctx *x, struct sr_resources *r, size_t i)
{
  const struct sr_policy_limit *l = &x->p->cpu;
  const char *v = r->unified_values[i];
  char q[32] = "";
  unsigned long long period = SR_PA_CPU_PERIOD;
  if (sscanf(v, "%31s %llu", q, &period) < 1 || period == 0)
    return 0; /* not a value the kernel takes either */
  int64_t have =
      strcmp(q, "max") == 0
          ? -1
          : sr_policy_apply_resources_cpu_milli(sr_policy_apply_resources_unified_value(q), period);
  if (sr_policy_apply_resources_unified_value(q) == -2)
    return 0;
  const char *field = P("linux.resources.unified.cpu.max");
  int64_t want;
  if (have < 0 && l->has_default)
    want = l->def;
  else if (have >= 0 && l->has_max && have > l->max)
    want = l->max;
  else
    return sr_policy_apply_allow(x, field, sr_policy_render_text_str(x->a, v),
                                 P("within profiles.%s.resources.cpu", x->name));
  char *nv = P("%" PRId64 " %llu", cpu_quota(want, period), period);
  int ch = sr_policy_apply_change(
      x, field, sr_policy_render_text_str(x->a, v), sr_policy_render_text_str(x->a, nv),
      P("%s (profiles.%s.resources.cpu.%s)",
        have < 0 ? "no limit asked: the profile's applies" : "above the ceiling, lowered", x->name,
        have < 0 ? "default" : "max"));
  TRY(ch);
  if (ch)
    r->unified_values[i] = nv;
  return 0;
}

int sr_policy_apply_resources(struct sr_pa_ctx *x, struct sr_config *c)
{
  struct sr_resources dummy = {0};
  struct sr_resources *r = c->linux_.resources;
  bool floors = x->p->pids.has_default || x->p->memory.has_default || x->p->cpu.has_default;
  if (r == NULL && x->p->enforce && floors) {
    r = c->linux_.resources = sr_arena_alloc(x->a, sizeof(*r));
    if (r == NULL)
      return sr_policy_apply_oom(x);
  } else if (r == NULL)
    r = &dummy;
  TRY(apply_device_rules(x, r));

  int64_t v;
  bool changed;
  /* pids.limit: 0 and -1 both mean no limit to runc; memory.limit likewise. */
  bool pset = r->pids_limit.set && r->pids_limit.v > 0;
  TRY(floor_ceiling(x, "linux.resources.pids.limit", "pids",
                    sr_policy_render_text_i64(x->a, r->pids_limit.set, r->pids_limit.v),
                    pset ? r->pids_limit.v : -1, &x->p->pids, &v, &changed));
  if (changed)
    r->pids_limit = (sr_opt_i64){true, v};
  /* memory.swap is memory+swap and must not be below the limit; when set, it bounds the memory
   * already, so a default limit above it becomes it. */
  struct sr_policy_limit mem = x->p->memory;
  if (mem.has_default && r->memory.swap.set && r->memory.swap.v > 0 && r->memory.swap.v < mem.def)
    mem.def = r->memory.swap.v;
  bool mset = r->memory.limit.set && r->memory.limit.v > 0;
  TRY(floor_ceiling(x, "linux.resources.memory.limit", "memory",
                    sr_policy_render_text_i64(x->a, r->memory.limit.set, r->memory.limit.v),
                    mset ? r->memory.limit.v : -1, &mem, &v, &changed));
  if (changed)
    r->memory.limit = (sr_opt_i64){true, v};
  TRY(apply_cpu(x, r));

  /* unified is written last and wins: "pids.max": "max" must not lift the floor. */
  for (size_t i = 0; i < r->n_unified; i++) {
    const char *k = r->unified_keys[i], *knob;
    if (strcmp(k, "cpu.max") == 0) {
      TRY(apply_unified_cpu(x, r, i));
      continue;
    }
    const struct sr_policy_limit *l = sr_policy_apply_resources_unified_limit(x->p, k, &knob);
    int64_t uv = l ? sr_policy_apply_resources_unified_value(r->unified_values[i]) : -2;
    if (uv == -2)
      continue;
    TRY(floor_ceiling(x, P("linux.resources.unified.%s", k), knob,
                      sr_policy_render_text_str(x->a, r->unified_values[i]), uv, l, &v, &changed));
    if (changed) {
      r->unified_values[i] = P("%" PRId64, v);
      if (r->unified_values[i] == NULL)
        return sr_policy_apply_oom(x);
    }
  }
  return 0;
}
