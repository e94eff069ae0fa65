/* Internal to oci/policy_apply*.c and runtime/policy/policy_render.c: what the sections of the
 * policy share.  The public interface is policy_apply.h.
 *
 * sr_policy_apply runs the sections in order over one context (struct sr_pa_ctx); each appends
 * its decisions through sr_policy_apply_allow, sr_policy_apply_change and sr_policy_apply_refuse.
 * One concern per file:
 *
 *   policy_apply.c             recording decisions, annotations (14), no new privileges,
 *                              capabilities, seccomp (4, 5, 3), sysctls (11), and
 *                              sr_policy_apply, which runs the sections
 *   policy_apply_namespaces.c  namespaces (7) and the network (2)
 *   policy_apply_egress.c      egress through seerun's proxy (2b)
 *   policy_apply_mounts.c      mounts and cwd (8, 12), the read-only root and its tmpfs (1),
 *                              masked and read-only paths (6)
 *   policy_apply_resources.c   devices and device rules (9), pids and memory limits (10)
 *   policy_apply_update.c      `update` and `exec`
 *   policy_apply_landlock.c    Landlock (16)
 *   policy_apply_hooks.c       hooks (13): the allow list, interpreters, the environment
 *   policy_render.c            the short JSON texts of asked and applied values; decisions as
 *                              JSON
 *
 * The numbers are those of the table in contrib/policy/README.md.
 */
#ifndef SEERUN_POLICY_APPLY_INTERNAL_H
#define SEERUN_POLICY_APPLY_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "arena.h"
#include "config.h"
#include "error.h"
#include "policy.h"
#include "policy_apply.h"

/* ---- Recording decisions (policy_apply.c) ------------------------------------------------ */

struct sr_pa_ctx {
  const struct sr_policy_profile *p;
  struct sr_arena *a;
  struct sr_decisions *out;
  sr_error_t *err;
  const char *name; /* the profile's */
  /* What the container ends up with, for the checks that depend on it. */
  bool own_net, own_ipc, own_uts;
};

void sr_policy_apply_ctx_init(struct sr_pa_ctx *x, const struct sr_policy_profile *p,
                              struct sr_arena *a, struct sr_decisions *out, sr_error_t *err);

/* Out of memory while recording: -1 with the error. */
int sr_policy_apply_oom(struct sr_pa_ctx *x);

/* Kept as asked.  NULL texts are allocations that failed (absent values are written "null"). */
int sr_policy_apply_allow(struct sr_pa_ctx *x, const char *field, const char *asked,
                          const char *reason);

/* A change the profile makes to the config.  Returns 1: make it; 0: the profile is permissive
 * (recorded as what would have been applied), leave the config alone; -1: error. */
int sr_policy_apply_change(struct sr_pa_ctx *x, const char *field, const char *asked,
                           const char *applied, const char *reason);

/* A request the profile forbids.  Returns -1 with the error (also recorded); in a permissive
 * profile records what would have happened and returns 0. */
__attribute__((format(printf, 4, 5))) int sr_policy_apply_refuse(struct sr_pa_ctx *x,
                                                                 const char *field,
                                                                 const char *asked, const char *fmt,
                                                                 ...);

/* A text in the context's arena (NULL when out of memory, which recording reports). */
#define P(...) sr_arena_printf(x->a, __VA_ARGS__)
#define TRY(e)                                                                                     \
  do {                                                                                             \
    if ((e) < 0)                                                                                   \
      return -1;                                                                                   \
  } while (0)

static inline bool sr_policy_apply_in_list(char **v, size_t n, const char *s)
{
  for (size_t i = 0; i < n; i++)
    if (strcmp(v[i], s) == 0)
      return true;
  return false;
}

/* What the annotations (section 14) request, for the sections that grant it. */
enum net_request { NET_UNSET, NET_NONE, NET_ENABLED, NET_PROXY };

struct requests {
  enum net_request network;
  /* io.seerun.egress.allow: only narrows the profile's network.egress.allow */
  bool has_egress_allow;
  struct sr_egress_host *egress_allow;
  size_t n_egress_allow;
  bool has_tmp_size;
  uint64_t tmp_size;
  const char *tmp_size_text;
};

/* ---- The sections ------------------------------------------------------------------------ */

/* The process (policy_apply.c), also applied to an exec's process. */
int sr_policy_apply_force_nnp(struct sr_pa_ctx *x, struct sr_process *proc);
/* Every set intersected with ceiling.  Dropping is what --cap-drop does: nothing is refused.
 * why: why a capability is dropped; within: why the sets pass as they are. */
int sr_policy_apply_limit_caps(struct sr_pa_ctx *x, struct sr_process *proc, uint64_t ceiling,
                               const char *why, const char *within);

/* policy_apply_namespaces.c: they set x->own_ipc, own_uts and own_net, which the sysctls
 * (run later) read. */
int sr_policy_apply_namespaces(struct sr_pa_ctx *x, const struct sr_policy_facts *facts,
                               struct sr_config *c);
int sr_policy_apply_namespaces_network(struct sr_pa_ctx *x, const struct sr_policy_facts *facts,
                                       struct sr_config *c, const struct requests *rq);
/* policy_apply_egress.c: egress through seerun's proxy (after the network). */
int sr_policy_apply_egress(struct sr_pa_ctx *x, struct sr_config *c, const struct requests *rq);
int sr_policy_apply_egress_parse_allow(struct sr_pa_ctx *x, const char *value, struct requests *rq);

/* policy_apply_mounts.c */
int sr_policy_apply_mounts(struct sr_pa_ctx *x, const struct sr_policy_facts *facts,
                           struct sr_config *c);
int sr_policy_apply_mounts_check_cwd(struct sr_pa_ctx *x, const struct sr_process *proc);
/* root.path, judged like a bind source (a rootfs that is a symlink to, or a view of, /). */
int sr_policy_apply_mounts_check_listener(struct sr_pa_ctx *x, const struct sr_policy_facts *facts,
                                          const struct sr_config *c);
int sr_policy_apply_mounts_check_root(struct sr_pa_ctx *x, const struct sr_policy_facts *facts,
                                      const struct sr_config *c);
int sr_policy_apply_mounts_rootfs(struct sr_pa_ctx *x, struct sr_config *c,
                                  const struct requests *rq);
int sr_policy_apply_mounts_union_paths(struct sr_pa_ctx *x, const char *field, const char *knob,
                                       char ***v, size_t *n, char **add, size_t n_add);

/* policy_apply_resources.c */
int sr_policy_apply_resources_check_devices(struct sr_pa_ctx *x, const struct sr_linux *l);
int sr_policy_apply_resources(struct sr_pa_ctx *x, struct sr_config *c);
/* An allow rule that only reaches nodes the profile allows (deny rules: always). */
bool sr_policy_apply_resources_rule_covered(const struct sr_policy_profile *p,
                                            const struct sr_device_rule *r);
/* The profile's limit that a unified key sets ("pids.max", "memory.max") and the knob it is
 * under; NULL for every other key. */
const struct sr_policy_limit *
sr_policy_apply_resources_unified_limit(const struct sr_policy_profile *p, const char *key,
                                        const char **knob);
/* A cgroup v2 value: "max" -> -1, digits -> the number; -2 for anything else. */
int64_t sr_policy_apply_resources_unified_value(const char *v);
/* The CPUs (in thousandths, rounded up) a cpu.quota over cpu.period allows; -1: no limit
 * (quota <= 0).  Period 0: the default. */
#define SR_PA_CPU_PERIOD 100000
int64_t sr_policy_apply_resources_cpu_milli(int64_t quota, uint64_t period);

/* policy_apply_landlock.c: after the network (it reads whether the host's is kept) */
int sr_policy_apply_landlock_in_ctx(struct sr_pa_ctx *x, int abi, bool host_network);
/* policy_apply_hooks.c */
int sr_policy_apply_hooks_check_one(struct sr_pa_ctx *x, const struct sr_policy_facts *facts,
                                    enum sr_hook_kind k, size_t i, struct sr_hook *h);
int sr_policy_apply_hooks_check(struct sr_pa_ctx *x, const struct sr_policy_facts *facts,
                                struct sr_hooks *h);

/* ---- Texts (policy_render.c) ------------------------------------------------------------- */

/* Short JSON texts in arena a; NULL when out of memory. */
char *sr_policy_render_text_str(struct sr_arena *a, const char *s); /* NULL s: "null" */
char *sr_policy_render_text_strv(struct sr_arena *a, char **v, size_t n);
char *sr_policy_render_text_caps(struct sr_arena *a, uint64_t caps);
/* Capability names without JSON quoting, for reasons: "CAP_SYS_ADMIN, CAP_NET_RAW". */
char *sr_policy_render_names_caps(struct sr_arena *a, uint64_t caps);
char *sr_policy_render_text_rules(struct sr_arena *a, const struct sr_device_rule *r, size_t n);
char *sr_policy_render_text_mount(struct sr_arena *a, const struct sr_mount *m);
char *sr_policy_render_text_i64(struct sr_arena *a, bool set, int64_t v); /* !set: "null" */

#endif
