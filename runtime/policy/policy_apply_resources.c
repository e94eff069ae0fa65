/* The policy's devices (section 9: nodes and cgroup device rules) and resource limits
 * (section 10: pids and memory floors and ceilings). */
#include "build.h"

#include "policy_apply_internal.h"

#include <inttypes.h>
#include <stdbool.h>
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

int sr_pa_check_devices(struct sr_pa_ctx *x, const struct sr_linux *l)
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
      TRY(sr_pa_refuse(x, field, asked,
                       "linux.devices[%zu]: %s device \"%s\" (%c %" PRId64 ":%" PRId64 ") is not "
                       "allowed by profile \"%s\" (profiles.%s.devices.allowed)",
                       i, type == 'b' ? "block" : "character", d->path, d->type, d->major, d->minor,
                       name, name));
    else
      TRY(sr_pa_allow(x, field, asked, P("in profiles.%s.devices.allowed", name)));
  }
  return 0;
}

bool sr_pa_rule_covered(const struct sr_policy_profile *p, const struct sr_device_rule *r)
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
    uncovered += !sr_pa_rule_covered(x->p, &r->devices[i]);
  char *asked = sr_pa_text_rules(x->a, r->devices, r->n_devices);
  if (uncovered == 0)
    return sr_pa_allow(x, field, asked,
                       P("every allow rule is within profiles.%s.devices.allowed", x->name));
  /* "a *:* rwm" (privileged) or a block device: each such rule becomes the allowed nodes it
   * reaches, after a deny-all; deny rules stay. */
  size_t cap = 1 + r->n_devices + uncovered * x->p->n_devices;
  struct sr_device_rule *v = sr_arena_array(x->a, cap, sizeof(*v));
  size_t n = 0;
  if (v == NULL)
    return sr_pa_oom(x);
  const struct sr_device_rule *first = &r->devices[0];
  if (first->allow || first->type != 'a' || first->major >= 0 || first->minor >= 0 ||
      strcmp(first->access, "rwm") != 0)
    v[n++] = (struct sr_device_rule){false, 'a', -1, -1, "rwm"};
  for (size_t i = 0; i < r->n_devices; i++) {
    if (sr_pa_rule_covered(x->p, &r->devices[i])) {
      v[n++] = r->devices[i];
      continue;
    }
    for (size_t d = 0; d < x->p->n_devices; d++)
      if (rule_intersect(&r->devices[i], &x->p->devices[d], &v[n]))
        n++;
  }
  int ch =
      sr_pa_change(x, field, asked, sr_pa_text_rules(x->a, v, n),
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
      return sr_pa_allow(x, field, asked,
                         P("no limit (profiles.%s.resources.%s has no default)", name, knob));
    int r = sr_pa_change(
        x, field, asked, sr_pa_text_i64(x->a, true, l->def),
        P("no limit asked: the profile's applies (profiles.%s.resources.%s.default)", name, knob));
    TRY(r);
    *out = l->def;
    *changed = r > 0;
    return 0;
  }
  if (l->has_max && value > l->max) {
    int r =
        sr_pa_change(x, field, asked, sr_pa_text_i64(x->a, true, l->max),
                     P("above the ceiling, lowered (profiles.%s.resources.%s.max)", name, knob));
    TRY(r);
    *out = l->max;
    *changed = r > 0;
    return 0;
  }
  return sr_pa_allow(x, field, asked, P("within profiles.%s.resources.%s", name, knob));
}

const struct sr_policy_limit *sr_pa_unified_limit(const struct sr_policy_profile *p,
                                                  const char *key, const char **knob)
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

int64_t sr_pa_unified_value(const char *v)
{
  if (strcmp(v, "max") == 0)
    return -1;
  size_t n = strlen(v);
  if (n == 0 || n > 18 || strspn(v, "0123456789") != n)
    return -2;
  return (int64_t)strtoll(v, NULL, 10);
}

int sr_pa_apply_resources(struct sr_pa_ctx *x, struct sr_config *c)
{
  struct sr_resources dummy = {0};
  struct sr_resources *r = c->linux_.resources;
  bool floors = x->p->pids.has_default || x->p->memory.has_default;
  if (r == NULL && x->p->enforce && floors) {
    r = c->linux_.resources = sr_arena_alloc(x->a, sizeof(*r));
    if (r == NULL)
      return sr_pa_oom(x);
  } else if (r == NULL)
    r = &dummy;
  TRY(apply_device_rules(x, r));

  int64_t v;
  bool changed;
  /* pids.limit: 0 and -1 both mean no limit to runc; memory.limit likewise. */
  bool pset = r->pids_limit.set && r->pids_limit.v > 0;
  TRY(floor_ceiling(x, "linux.resources.pids.limit", "pids",
                    sr_pa_text_i64(x->a, r->pids_limit.set, r->pids_limit.v),
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
                    sr_pa_text_i64(x->a, r->memory.limit.set, r->memory.limit.v),
                    mset ? r->memory.limit.v : -1, &mem, &v, &changed));
  if (changed)
    r->memory.limit = (sr_opt_i64){true, v};

  /* unified is written last and wins: "pids.max": "max" must not lift the floor. */
  for (size_t i = 0; i < r->n_unified; i++) {
    const char *k = r->unified_keys[i], *knob;
    const struct sr_policy_limit *l = sr_pa_unified_limit(x->p, k, &knob);
    int64_t uv = l ? sr_pa_unified_value(r->unified_values[i]) : -2;
    if (uv == -2)
      continue;
    TRY(floor_ceiling(x, P("linux.resources.unified.%s", k), knob,
                      sr_pa_text_str(x->a, r->unified_values[i]), uv, l, &v, &changed));
    if (changed) {
      r->unified_values[i] = P("%" PRId64, v);
      if (r->unified_values[i] == NULL)
        return sr_pa_oom(x);
    }
  }
  return 0;
}
