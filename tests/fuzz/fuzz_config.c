/* libFuzzer target: config.json (and the exec --process and update --resources documents)
 * from untrusted bytes.
 *
 * Whatever the input, the parser must not crash, leak or hit undefined behaviour, and it must
 * keep its contract: success hands out a config and no error; failure hands out an error whose
 * text names the file, and nothing else.
 *
 * A config that parses then goes through what consumes it without touching the host: the pure
 * policy (runtime/policy) under every built-in profile and a permissive one, with no host facts
 * and with fixed ones (some binds denied, some namespace paths the host's, some hooks
 * untrusted), the rendering of its decisions, the `update` check of its resources, the
 * `exec` policy of the same bytes read as a process document, and what the runtime derives
 * from the config before touching the host (device rules, cgroup path, systemd unit).  A config
 * without `process`, `linux.resources` or `linux.seccomp` crashed `create` once (issue 13):
 * optional objects are where such bugs live.  Each refusal must be an error and the last decision.
 */
// Build (from the top of the tree, after ./configure so that build/build.h exists):
//   clang -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE -include build/build.h \
//     -Ibuild -Ioci tests/fuzz/fuzz_config.c oci/*.c \
//     $(pkg-config --cflags --libs yajl libseccomp) -o fuzz_config
//   ./fuzz_config -max_len=65536 tests/fuzz/corpus/config/
#include "build.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup.h"
#include "cgroup_systemd.h"
#include "config.h"
#include "policy.h"
#include "policy_apply.h"

static void check_refusal(sr_error_t err, const char *what)
{
  char *text = sr_error_text(err);
  /* An error that does not say which file it is about is a bug too. */
  if (err == NULL || text == NULL || strncmp(text, what, strlen(what)) != 0)
    abort();
  free(text);
}

/* The built-in policy, parsed once (the harness's only state; seerun parses it per call). */
static const struct sr_policy *builtin_policy(void)
{
  static struct sr_policy *p;
  if (p == NULL) {
    sr_error_t err = NULL;
    if (sr_policy_parse_default(&p, &err) < 0 || p == NULL || p->n_profiles == 0)
      abort();
  }
  return p;
}

static void render_decisions(const struct sr_decisions *d)
{
  _cleanup_gen_ sr_json_gen_t g = NULL;
  sr_error_t err = NULL;
  if (sr_json_gen_new(&g, false, &err) < 0)
    abort();
  if (sr_policy_render_json(d, g) < 0)
    abort();
}

/* Host facts that vary with the config's shape but not with the host: the i-th bind source
 * denied, a symlink out or fine; the namespace paths alternately the host's and another seerun
 * container's; every other hook untrusted. */
static void fixed_facts(struct sr_config *c, struct sr_policy_facts *f)
{
  memset(f, 0, sizeof(*f));
  f->mounts = sr_arena_array(&c->arena, c->n_mounts + 1, sizeof(*f->mounts));
  if (f->mounts == NULL)
    abort();
  for (size_t i = 0; i < c->n_mounts; i++) {
    f->mounts[i].source_denied = i % 3 == 1;
    f->mounts[i].denied_path = i % 3 == 1 ? "/root" : NULL;
    f->mounts[i].source_is_symlink_out = i % 3 == 2;
    f->mounts[i].source_on_proc_or_sysfs = i % 5 == 4;
  }
  for (int k = 0; k < SR_NS_COUNT; k++) {
    f->ns[k].is_host = k % 2 == 0;
    f->ns[k].is_seerun_container = k % 2 == 1;
    f->ns[k].container_has_network = k % 4 == 1;
    f->ns[k].container_pid = k % 2 == 1 ? 4242 : 0;
  }
  for (int k = 0; k < SR_HOOK_COUNT; k++) {
    f->hooks[k] = sr_arena_array(&c->arena, c->hooks.n[k] + 1, sizeof(*f->hooks[k]));
    if (f->hooks[k] == NULL)
      abort();
    for (size_t i = 0; i < c->hooks.n[k]; i++)
      f->hooks[k][i].trusted_path = i % 2 == 0;
  }
}

/* What the runtime derives from the config before it touches the host: the device rules of
 * the cgroup, the cgroup path (from a fixed /proc/self/cgroup) and the systemd unit. */
static void runtime_consumers(struct sr_config *c)
{
  sr_error_t err = NULL;
  struct sr_resources res;
  const struct sr_linux *l = &c->linux_;
  if (sr_cgroup_create_device_rules(l->resources, l->devices, l->n_devices, &c->arena, &res, &err) <
      0)
    sr_error_free(&err);
  else if (res.n_devices < 9)
    abort(); /* the default nodes are always there */
  char *path = NULL;
  if (sr_cgroup_resolve_path_in("12:pids:/user.slice\n0::/user.slice/session-1.scope\n",
                                l->cgroups_path, "fuzz-id", &path, &err) < 0) {
    check_refusal(err, "");
    sr_error_free(&err);
  } else if (path == NULL || path[0] != '/') {
    abort();
  }
  free(path);
  struct sr_systemd_unit u = {0};
  if (sr_systemd_parse(l->cgroups_path, "fuzz-id", &u, &err) < 0)
    sr_error_free(&err);
  sr_systemd_unit_release(&u);
}

/* One profile over a fresh parse of the input (the policy changes the config in place). */
static void apply_profile(const uint8_t *data, size_t size, const struct sr_policy_profile *p,
                          bool with_facts)
{
  struct sr_config *c = NULL;
  sr_error_t err = NULL;
  if (sr_config_parse((const char *)data, size, "config.json", &c, &err) < 0)
    abort(); /* it parsed a moment ago */
  struct sr_policy_facts facts;
  if (with_facts)
    fixed_facts(c, &facts);
  struct sr_decisions d = {0};
  int r = sr_policy_apply(p, with_facts ? &facts : NULL, c, &d, &err);
  if (r < 0) {
    if (err == NULL || d.n == 0 || d.list[d.n - 1].kind != SR_DECISION_REFUSED)
      abort();
    check_refusal(err, "");
    sr_error_free(&err);
  } else if (err != NULL) {
    abort();
  }
  for (size_t i = 0; i < d.n; i++)
    if (d.list[i].field == NULL)
      abort();
  render_decisions(&d);
  (void)sr_policy_apply_network_granted(&d);
  runtime_consumers(c);

  /* What `update` and `exec` then judge: the decided resources, the decided process. */
  if (r == 0 && c->linux_.resources) {
    struct sr_resources applied;
    struct sr_decisions du = {0};
    if (sr_policy_apply_update_check(p, &c->arena, c->linux_.resources, &applied, &du, &err) < 0)
      sr_error_free(&err);
    render_decisions(&du);
  }
  if (r == 0) {
    struct sr_process *ep = NULL;
    if (sr_config_parse_process((const char *)data, size, "process.json", &c->arena, &ep, &err) ==
        0) {
      struct sr_decisions de = {0};
      if (sr_policy_apply_update_exec(p, &c->arena, c->process, ep, &de, &err) < 0)
        sr_error_free(&err);
      render_decisions(&de);
    } else {
      sr_error_free(&err);
    }
  }
  sr_config_free(c);
}

static void apply_policy(const uint8_t *data, size_t size)
{
  const struct sr_policy *pol = builtin_policy();
  for (size_t i = 0; i < pol->n_profiles; i++) {
    apply_profile(data, size, &pol->profiles[i], false);
    apply_profile(data, size, &pol->profiles[i], true);
  }
  /* The permissive form of the first profile: every would-be refusal becomes a record. */
  struct sr_policy_profile permissive = pol->profiles[0];
  permissive.enforce = false;
  apply_profile(data, size, &permissive, true);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  struct sr_config *c = NULL;
  sr_error_t err = NULL;
  if (sr_config_parse((const char *)data, size, "config.json", &c, &err) == 0) {
    if (c == NULL || err != NULL)
      abort();
    for (size_t i = 0; i < c->n_annotations; i++)
      if (sr_config_annotation(c, c->annotation_keys[i]) == NULL)
        abort();
    sr_config_free(c);
    apply_policy(data, size);
  } else {
    if (c != NULL)
      abort();
    check_refusal(err, "config.json: ");
    sr_error_free(&err);
  }

  struct sr_arena a = {0};
  struct sr_process *p = NULL;
  if (sr_config_parse_process((const char *)data, size, "process.json", &a, &p, &err) == 0) {
    if (p == NULL || err != NULL || p->n_args == 0 || p->args[p->n_args] != NULL)
      abort();
  } else {
    check_refusal(err, "process.json: ");
    sr_error_free(&err);
  }
  sr_arena_release(&a);

  /* The same bytes as `update --resources` reads them, judged by every built-in profile. */
  struct sr_arena ra = {0};
  struct sr_resources *r = NULL;
  if (sr_config_update_parse_resources((const char *)data, size, "--resources", &ra, &r, &err) ==
      0) {
    if (r == NULL || err != NULL)
      abort();
    const struct sr_policy *pol = builtin_policy();
    for (size_t i = 0; i < pol->n_profiles; i++) {
      struct sr_resources applied;
      struct sr_decisions du = {0};
      if (sr_policy_apply_update_check(&pol->profiles[i], &ra, r, &applied, &du, &err) < 0) {
        if (du.n == 0 || du.list[du.n - 1].kind != SR_DECISION_REFUSED)
          abort();
        check_refusal(err, "");
        sr_error_free(&err);
      }
      render_decisions(&du);
    }
  } else {
    check_refusal(err, "--resources: ");
    sr_error_free(&err);
  }
  sr_arena_release(&ra);
  return 0;
}
