/* The policy applied to a config (see policy_apply.h): recording decisions, and the sections
 * that judge the process -- annotations, no new privileges, capabilities, seccomp, sysctls;
 * sr_policy_apply runs every section in order.  The others are in policy_apply_*.c
 * (policy_apply_internal.h lists them). */
#include "build.h"

#include "policy_apply_internal.h"

#include "names.h"

#include <errno.h>
#include <inttypes.h>
#include <seccomp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Recording decisions ----------------------------------------------------------------- */

int sr_policy_apply_oom(struct sr_pa_ctx *x)
{
  return sr_error_make(x->err, ENOMEM, "policy: record a decision");
}

/* NULL texts are allocations that failed (absent values are written "null"). */
static int record(struct sr_pa_ctx *x, enum sr_decision_kind kind, const char *field,
                  const char *asked, const char *applied, const char *reason)
{
  struct sr_decisions *d = x->out;
  if (field == NULL || asked == NULL || reason == NULL ||
      (applied == NULL && kind != SR_DECISION_REFUSED))
    return sr_policy_apply_oom(x);
  if (d->n == d->cap) {
    size_t cap = d->cap ? d->cap * 2 : 32;
    struct sr_decision *list = sr_arena_array(x->a, cap, sizeof(*list));
    if (list == NULL)
      return sr_policy_apply_oom(x);
    if (d->n)
      memcpy(list, d->list, d->n * sizeof(*list));
    d->list = list;
    d->cap = cap;
  }
  d->list[d->n++] = (struct sr_decision){kind, field, asked, applied, reason};
  return 0;
}

int sr_policy_apply_allow(struct sr_pa_ctx *x, const char *field, const char *asked,
                          const char *reason)
{
  return record(x, SR_DECISION_ALLOWED, field, asked, asked, reason);
}

int sr_policy_apply_change(struct sr_pa_ctx *x, const char *field, const char *asked,
                           const char *applied, const char *reason)
{
  if (x->p->enforce)
    return record(x, SR_DECISION_ENFORCED, field, asked, applied, reason) < 0 ? -1 : 1;
  return record(x, SR_DECISION_ALLOWED, field, asked, applied, "permissive") < 0 ? -1 : 0;
}

__attribute__((format(printf, 4, 5))) int sr_policy_apply_refuse(struct sr_pa_ctx *x,
                                                                 const char *field,
                                                                 const char *asked, const char *fmt,
                                                                 ...)
{
  va_list ap;
  char *msg = NULL;
  va_start(ap, fmt);
  int n = vasprintf(&msg, fmt, ap);
  va_end(ap);
  if (n < 0)
    return sr_policy_apply_oom(x);
  char *amsg = sr_arena_strdup(x->a, msg);
  free(msg);
  if (amsg == NULL)
    return sr_policy_apply_oom(x);
  if (!x->p->enforce)
    return record(x, SR_DECISION_ALLOWED, field, asked, sr_arena_printf(x->a, "refused: %s", amsg),
                  "permissive");
  if (record(x, SR_DECISION_REFUSED, field, asked, NULL, amsg) < 0)
    return -1;
  return sr_error_policy(x->err, field, "%s", amsg);
}

void sr_policy_apply_ctx_init(struct sr_pa_ctx *x, const struct sr_policy_profile *p,
                              struct sr_arena *a, struct sr_decisions *out, sr_error_t *err)
{
  memset(x, 0, sizeof(*x));
  x->p = p;
  x->a = a;
  x->out = out;
  x->err = err;
  x->name = p->name ? p->name : "(unnamed)";
}

/* ---- 14. Annotations --------------------------------------------------------------------- */

static int check_annotations(struct sr_pa_ctx *x, const struct sr_config *c, struct requests *rq)
{
  static const char prefix[] = "io.seerun.";
  for (size_t i = 0; i < c->n_annotations; i++) {
    const char *k = c->annotation_keys[i], *v = c->annotation_values[i];
    if (strncmp(k, prefix, sizeof(prefix) - 1) != 0)
      continue; /* other annotations are the engine's business */
    char *field = P("annotations.%s", k);
    char *asked = sr_policy_render_text_str(x->a, v);
    if (strcmp(k, SR_ANNOTATION_NETWORK) == 0) {
      if (strcmp(v, "none") == 0)
        rq->network = NET_NONE;
      else if (strcmp(v, "enabled") == 0)
        rq->network = NET_ENABLED;
      else if (strcmp(v, "proxy") == 0)
        rq->network = NET_PROXY;
      else
        TRY(sr_policy_apply_refuse(
            x, field, asked, "annotation %s=%s: unknown value (\"none\", \"enabled\" or \"proxy\")",
            k, v));
    } else if (strcmp(k, SR_ANNOTATION_EGRESS_ALLOW) == 0) {
      TRY(sr_policy_apply_egress_parse_allow(x, v, rq));
    } else if (strcmp(k, SR_ANNOTATION_TMP_SIZE) == 0) {
      if (sr_policy_parse_size(v, &rq->tmp_size) < 0 || rq->tmp_size == 0)
        TRY(sr_policy_apply_refuse(
            x, field, asked,
            "annotation %s=%s: not a size (bytes, or a number with a k, m, g or t "
            "suffix)",
            k, v));
      else {
        rq->has_tmp_size = true;
        rq->tmp_size_text = v;
      }
    } else
      /* A typo must not pass for a request that was granted. */
      TRY(sr_policy_apply_refuse(
          x, field, asked,
          "annotation %s=%s: unknown seerun annotation (known: %s, %s, %s; a "
          "profile is chosen by the operator's bindings, not by an annotation)",
          k, v, SR_ANNOTATION_NETWORK, SR_ANNOTATION_EGRESS_ALLOW, SR_ANNOTATION_TMP_SIZE));
  }
  return 0;
}

/* ---- 4, 5, 3. No new privileges, capabilities, seccomp ----------------------------------- */

int sr_policy_apply_force_nnp(struct sr_pa_ctx *x, struct sr_process *proc)
{
  if (proc->no_new_privileges)
    return sr_policy_apply_allow(x, "process.noNewPrivileges", "true", "as asked");
  int r = sr_policy_apply_change(x, "process.noNewPrivileges", "false", "true",
                                 "setuid binaries and file capabilities cannot raise privileges");
  if (r > 0)
    proc->no_new_privileges = true;
  return r < 0 ? -1 : 0;
}

static const char *cap_set_names[SR_CAP_SET_COUNT] = {
    [SR_CAP_EFFECTIVE] = "effective",     [SR_CAP_BOUNDING] = "bounding",
    [SR_CAP_INHERITABLE] = "inheritable", [SR_CAP_PERMITTED] = "permitted",
    [SR_CAP_AMBIENT] = "ambient",
};

int sr_policy_apply_limit_caps(struct sr_pa_ctx *x, struct sr_process *proc, uint64_t ceiling,
                               const char *why, const char *within)
{
  struct sr_capabilities *caps = proc->capabilities;
  if (caps == NULL)
    return sr_policy_apply_allow(x, "process.capabilities", "null", "no capabilities");
  bool any = false;
  uint64_t all = 0;
  for (int s = 0; s < SR_CAP_SET_COUNT; s++) {
    all |= caps->sets[s];
    uint64_t drop = caps->sets[s] & ~ceiling;
    if (drop == 0)
      continue;
    any = true;
    int r =
        sr_policy_apply_change(x, P("process.capabilities.%s", cap_set_names[s]),
                               sr_policy_render_text_caps(x->a, caps->sets[s]),
                               sr_policy_render_text_caps(x->a, caps->sets[s] & ceiling),
                               P("dropped %s: %s", sr_policy_render_names_caps(x->a, drop), why));
    TRY(r);
    if (r)
      caps->sets[s] &= ceiling;
  }
  if (!any)
    TRY(sr_policy_apply_allow(x, "process.capabilities", sr_policy_render_text_caps(x->a, all),
                              within));
  return 0;
}

static bool is_allow_action(uint32_t a)
{
  return a == SCMP_ACT_ALLOW || a == SCMP_ACT_LOG;
}

static const char *action_name(uint32_t a)
{
  if ((a & 0xffff0000u) == SCMP_ACT_ERRNO(0))
    return "SCMP_ACT_ERRNO";
  if ((a & 0xffff0000u) == SCMP_ACT_TRACE(0))
    return "SCMP_ACT_TRACE";
  const char *n = sr_names_of(SR_NAMES(sr_names_seccomp_action), a);
  return n ? n : "?";
}

static int record_seccomp(struct sr_pa_ctx *x, const struct sr_seccomp *s)
{
  const char *field = "linux.seccomp";
  if (s == NULL)
    return sr_policy_apply_change(
               x, field, "null", "\"built-in default filter\"",
               "seccomp is mandatory: the runtime installs its built-in default filter") < 0
               ? -1
               : 0;
  bool allow_all = is_allow_action(s->default_action);
  for (size_t i = 0; i < s->n_rules && allow_all; i++)
    allow_all = is_allow_action(s->rules[i].action);
  char *asked =
      P("{\"defaultAction\":\"%s\",\"rules\":%zu}", action_name(s->default_action), s->n_rules);
  if (allow_all)
    return sr_policy_apply_change(
               x, field, asked, "\"built-in default filter, then the config's\"",
               "the config's filter allows every system call: the built-in default filter "
               "is installed as well") < 0
               ? -1
               : 0;
  return sr_policy_apply_allow(
      x, field, asked,
      "kept, and installed in addition to the built-in default filter (together they "
      "can only narrow)");
}

/* ---- 11. Sysctls ------------------------------------------------------------------------- */

static bool sysctl_allowed(const struct sr_policy_profile *p, const char *key)
{
  for (size_t i = 0; i < p->n_sysctls; i++) {
    const char *pat = p->sysctls[i];
    size_t n = strlen(pat);
    if (n && pat[n - 1] == '*' ? strncmp(key, pat, n - 1) == 0 : strcmp(key, pat) == 0)
      return true;
  }
  return false;
}

static int check_sysctls(struct sr_pa_ctx *x, const struct sr_linux *l)
{
  const char *name = x->name;
  for (size_t i = 0; i < l->n_sysctl; i++) {
    const char *key = l->sysctl_keys[i];
    char *norm = sr_arena_strdup(x->a, key); /* "net/ipv4/ip_forward" is "net.ipv4.ip_forward" */
    char *field = P("linux.sysctl.%s", key);
    char *asked = sr_policy_render_text_str(x->a, l->sysctl_values[i]);
    if (norm == NULL)
      return sr_policy_apply_oom(x);
    for (char *s = norm; *s; s++)
      if (*s == '/')
        *s = '.';
    bool net = strncmp(norm, "net.", 4) == 0;
    bool ipc = strncmp(norm, "kernel.shm", 10) == 0 || strncmp(norm, "kernel.msg", 10) == 0 ||
               strcmp(norm, "kernel.sem") == 0 || strncmp(norm, "fs.mqueue.", 10) == 0;
    bool uts = strcmp(norm, "kernel.hostname") == 0 || strcmp(norm, "kernel.domainname") == 0;
    if (!sysctl_allowed(x->p, norm))
      TRY(sr_policy_apply_refuse(
          x, field, asked,
          "linux.sysctl.%s: not allowed by profile \"%s\" (profiles.%s.sysctls.allowed)", key, name,
          name));
    else if ((net && !x->own_net) || (ipc && !x->own_ipc) || (uts && !x->own_uts))
      TRY(sr_policy_apply_refuse(
          x, field, asked,
          "linux.sysctl.%s: needs the container's own %s namespace (it would change the "
          "host's)",
          key,
          net   ? "network"
          : ipc ? "ipc"
                : "uts"));
    else
      TRY(sr_policy_apply_allow(x, field, asked,
                                P("namespaced, in profiles.%s.sysctls.allowed", name)));
  }
  return 0;
}

/* ---- Running the sections ---------------------------------------------------------------- */

int sr_policy_apply(const struct sr_policy_profile *p, const struct sr_policy_facts *facts,
                    struct sr_config *c, struct sr_decisions *out, sr_error_t *err)
{
  struct sr_pa_ctx ctx, *x = &ctx;
  struct requests rq = {.network = NET_UNSET};
  sr_policy_apply_ctx_init(x, p, &c->arena, out, err);
  struct sr_linux *l = &c->linux_;

  /* Binds are judged with the facts of their index in config.json, so before the tmpfs are
   * added (sr_policy_apply_mounts_rootfs puts them first). */
  TRY(check_annotations(x, c, &rq));
  TRY(sr_policy_apply_namespaces(x, facts, c));
  TRY(sr_policy_apply_namespaces_network(x, facts, c, &rq));
  TRY(sr_policy_apply_egress(x, c, &rq));
  TRY(sr_policy_apply_mounts(x, facts, c));
  TRY(sr_policy_apply_mounts_check_root(x, facts, c));
  TRY(sr_policy_apply_mounts_check_cwd(x, c->process));
  TRY(sr_policy_apply_mounts_rootfs(x, c, &rq));
  if (c->process) {
    TRY(sr_policy_apply_force_nnp(x, c->process));
    TRY(sr_policy_apply_limit_caps(
        x, c->process, p->capabilities, P("not in profiles.%s.capabilities.allowed", x->name),
        P("every capability is in profiles.%s.capabilities.allowed", x->name)));
  }
  TRY(record_seccomp(x, l->seccomp));
  TRY(sr_policy_apply_mounts_check_listener(x, facts, c));
  TRY(sr_policy_apply_mounts_union_paths(x, "linux.maskedPaths", "maskedPaths", &l->masked_paths,
                                         &l->n_masked_paths, p->masked_paths, p->n_masked_paths));
  TRY(sr_policy_apply_mounts_union_paths(x, "linux.readonlyPaths", "readonlyPaths",
                                         &l->readonly_paths, &l->n_readonly_paths,
                                         p->readonly_paths, p->n_readonly_paths));
  TRY(sr_policy_apply_resources_check_devices(x, l));
  TRY(sr_policy_apply_resources(x, c));
  TRY(check_sysctls(x, l));
  TRY(sr_policy_apply_hooks_check(x, facts, &c->hooks));
  TRY(sr_policy_apply_landlock_in_ctx(x, facts ? facts->landlock_abi : 0, !x->own_net));
  return 0;
}

bool sr_policy_apply_network_granted(const struct sr_decisions *d)
{
  return d->network_granted;
}

bool sr_policy_apply_builtin_seccomp(const struct sr_policy_profile *p)
{
  return p->enforce;
}

bool sr_policy_apply_activity_record(const struct sr_policy_profile *p)
{
  return p->enforce && p->activity_record;
}
