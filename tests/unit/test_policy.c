/* The operator's policy: how a policy file is read (and refused), which profile a runtime
 * invocation gets, and what a profile does to the config.json a tenant influences -- each
 * hardening step against a hostile config, and the configs podman, Docker and ctr really write,
 * which must run under the default profile with nothing refused (a network the engine configured
 * only when the container asks for it: no network beyond loopback unless an annotation asks for
 * it and the operator's policy allows it).
 *
 * Runs under ASan/LSan/UBSan.  The shipped policy files are read from contrib/policy under the
 * source directory: argv[1], or $SEERUN_SRCDIR, or $srcdir (automake), or ".".
 */
#include "build.h"

#include <dirent.h>
#include <linux/capability.h>
#include <linux/mount.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>

#include "config.h"
#include "json.h"
#include "policy.h"
#include "policy_apply.h"
#include "fixtures.h"
#include "unit.h"

#define CAP(c) (UINT64_C(1) << (c))

static const char *srcdir = ".";

/* ---------------------------------------------------------------------------------------------
 * Helpers
 */

static char *read_text(const char *path)
{
  FILE *f = fopen(path, "r");
  if (f == NULL)
    return NULL;
  char *buf = NULL;
  size_t cap = 0, len = 0;
  for (;;) {
    if (len + 4096 + 1 > cap) {
      cap = cap ? cap * 2 : 8192;
      char *nb = realloc(buf, cap);
      if (nb == NULL)
        break;
      buf = nb;
    }
    size_t n = fread(buf + len, 1, cap - len - 1, f);
    len += n;
    if (n == 0)
      break;
  }
  fclose(f);
  if (buf)
    buf[len] = '\0';
  return buf;
}

static struct sr_policy *policy_of(const char *json)
{
  struct sr_policy *p = NULL;
  sr_error_t err = NULL;
  CHECK_OK(sr_policy_parse(json, strlen(json), "policy.json", &p, &err), err);
  sr_error_free(&err);
  return p;
}

/* The policy is refused with exactly this error text. */
#define POLICY_REFUSED(json, expected)                                                             \
  do {                                                                                             \
    const char *unit_j_ = (json);                                                                  \
    struct sr_policy *unit_p_ = NULL;                                                              \
    sr_error_t unit_x_ = NULL;                                                                     \
    CHECK(sr_policy_parse(unit_j_, strlen(unit_j_), "policy.json", &unit_p_, &unit_x_) < 0);       \
    CHECK(unit_p_ == NULL);                                                                        \
    char *unit_t_ = unit_x_ ? sr_error_text(unit_x_) : NULL;                                       \
    CHECK_STR_EQ(unit_t_, (expected));                                                             \
    free(unit_t_);                                                                                 \
    sr_error_free(&unit_x_);                                                                       \
    if (unit_p_)                                                                                   \
      sr_policy_free(unit_p_);                                                                     \
  } while (0)

/* A policy file with one profile "p" whose body is given. */
static const char *policy_with_profile(const char *body)
{
  static char buf[16384];
  snprintf(buf, sizeof(buf),
           "{\"version\": 1, \"defaultProfile\": \"p\", \"profiles\": {\"p\": %s}}", body);
  return buf;
}

/* The document; NULL (and a failed check) when the generator failed. */
static char *gen_text(sr_json_gen_t g)
{
  const unsigned char *buf;
  size_t len;
  sr_error_t err = NULL;
  CHECK_OK(sr_json_gen_buf(g, &buf, &len, &err), err);
  if (err) {
    sr_error_free(&err);
    return NULL;
  }
  return strndup((const char *)buf, len);
}

static char *policy_json_text(const struct sr_policy *p)
{
  sr_error_t err = NULL;
  sr_json_gen_t g;
  if (sr_json_gen_new(&g, false, &err) < 0) {
    sr_error_free(&err);
    return NULL;
  }
  sr_policy_to_json(p, g);
  char *s = gen_text(g);
  sr_json_gen_freep(&g);
  return s;
}

static char *profile_json_text(const struct sr_policy_profile *p)
{
  sr_error_t err = NULL;
  sr_json_gen_t g;
  if (sr_json_gen_new(&g, false, &err) < 0) {
    sr_error_free(&err);
    return NULL;
  }
  sr_policy_profile_to_json(p, g);
  char *s = gen_text(g);
  sr_json_gen_freep(&g);
  return s;
}

static struct sr_config *config_of(const char *json)
{
  struct sr_config *c = NULL;
  sr_error_t err = NULL;
  CHECK_OK(sr_config_parse(json, strlen(json), "config.json", &c, &err), err);
  sr_error_free(&err);
  return c;
}

/* Facts of a host where nothing is denied and every hook is on a trusted path. */
struct host {
  struct sr_policy_mount_fact mounts[64];
  struct sr_policy_hook_fact hooks[SR_HOOK_COUNT][8];
  struct sr_policy_facts facts;
};

static struct sr_policy_facts *benign_host(struct host *h)
{
  memset(h, 0, sizeof(*h));
  h->facts.mounts = h->mounts;
  for (int k = 0; k < SR_HOOK_COUNT; k++) {
    for (int i = 0; i < 8; i++)
      h->hooks[k][i].trusted_path = true;
    h->facts.hooks[k] = h->hooks[k];
  }
  return &h->facts;
}

/* One application of a profile to a config. */
struct run {
  struct sr_config *c;
  struct sr_decisions d;
  sr_error_t err;
  int ret;
  char *err_text;
};

static void run_parse(struct run *r, const char *config_json)
{
  memset(r, 0, sizeof(*r));
  r->c = config_of(config_json);
}

static void run_policy(struct run *r, const struct sr_policy_profile *p,
                       const struct sr_policy_facts *facts)
{
  if (r->c == NULL || p == NULL) {
    r->ret = -2;
    return;
  }
  r->ret = sr_policy_apply(p, facts, r->c, &r->d, &r->err);
  r->err_text = r->err ? sr_error_text(r->err) : NULL;
}

static void run_apply(struct run *r, const struct sr_policy_profile *p, const char *config_json,
                      const struct sr_policy_facts *facts)
{
  run_parse(r, config_json);
  run_policy(r, p, facts);
}

/* The config parser already refuses sysctls that are not namespaced; the policy refuses them
 * again (a config may come from elsewhere than the parser), which a test shows by adding one
 * after parsing. */
static void add_sysctl(struct sr_config *c, const char *key, const char *value)
{
  struct sr_linux *l = &c->linux_;
  char **k = sr_arena_array(&c->arena, l->n_sysctl + 2, sizeof(char *));
  char **v = sr_arena_array(&c->arena, l->n_sysctl + 2, sizeof(char *));
  if (k == NULL || v == NULL)
    abort();
  for (size_t i = 0; i < l->n_sysctl; i++) {
    k[i] = l->sysctl_keys[i];
    v[i] = l->sysctl_values[i];
  }
  k[l->n_sysctl] = (char *)key;
  v[l->n_sysctl] = (char *)value;
  l->sysctl_keys = k;
  l->sysctl_values = v;
  l->n_sysctl++;
}

static void run_done(struct run *r)
{
  free(r->err_text);
  sr_error_free(&r->err);
  if (r->c)
    sr_config_free(r->c);
  memset(r, 0, sizeof(*r));
}

/* The last decision about field; NULL when there is none. */
static const struct sr_decision *decision(const struct sr_decisions *d, const char *field)
{
  for (size_t i = d->n; i-- > 0;)
    if (strcmp(d->list[i].field, field) == 0)
      return &d->list[i];
  return NULL;
}

static size_t count_kind(const struct sr_decisions *d, enum sr_decision_kind k)
{
  size_t n = 0;
  for (size_t i = 0; i < d->n; i++)
    n += d->list[i].kind == k;
  return n;
}

static void dump_decisions(const struct sr_decisions *d)
{
  for (size_t i = 0; i < d->n; i++)
    fprintf(stderr, "  %-8s %s: %s -> %s (%s)\n", sr_policy_render_kind_name(d->list[i].kind),
            d->list[i].field, d->list[i].asked, d->list[i].applied ? d->list[i].applied : "-",
            d->list[i].reason);
}

/* A decision about field of this kind; asked and applied compared when not NULL. */
#define CHECK_DECISION(d, field, kind_, asked_, applied_)                                          \
  do {                                                                                             \
    const struct sr_decision *unit_d_ = decision((d), (field));                                    \
    CHECK(unit_d_ != NULL);                                                                        \
    if (unit_d_ == NULL) {                                                                         \
      fprintf(stderr, "  no decision about %s among:\n", (field));                                 \
      dump_decisions(d);                                                                           \
      break;                                                                                       \
    }                                                                                              \
    CHECK_STR_EQ(sr_policy_render_kind_name(unit_d_->kind), sr_policy_render_kind_name(kind_));    \
    if ((asked_) != NULL)                                                                          \
      CHECK_STR_EQ(unit_d_->asked, (const char *)(asked_));                                        \
    if ((applied_) != NULL)                                                                        \
      CHECK_STR_EQ(unit_d_->applied, (const char *)(applied_));                                    \
  } while (0)

/* The refusal: -1, this exact error, of kind SR_ERR_POLICY about field (what code that handles
 * it tests), and the refusal is the last decision, about field. */
#define CHECK_REFUSED(r, field_, text_)                                                            \
  do {                                                                                             \
    CHECK_INT_EQ((r)->ret, -1);                                                                    \
    CHECK_STR_EQ((r)->err_text, (text_));                                                          \
    CHECK_INT_EQ(sr_error_kind((r)->err), SR_ERR_POLICY);                                          \
    CHECK_STR_EQ((r)->err ? (r)->err->field : NULL, (field_));                                     \
    CHECK((r)->d.n > 0);                                                                           \
    if ((r)->d.n > 0) {                                                                            \
      const struct sr_decision *unit_l_ = &(r)->d.list[(r)->d.n - 1];                              \
      CHECK_INT_EQ(unit_l_->kind, SR_DECISION_REFUSED);                                            \
      CHECK_STR_EQ(unit_l_->field, (field_));                                                      \
      CHECK_STR_EQ(unit_l_->reason, (text_));                                                      \
      CHECK(unit_l_->applied == NULL);                                                             \
    }                                                                                              \
  } while (0)

/* Applies profile p to config_json on facts, checks the refusal as CHECK_REFUSED, and frees. */
#define APPLY_REFUSED(r, p, config_json, facts, field_, text_)                                     \
  do {                                                                                             \
    run_apply((r), (p), (config_json), (facts));                                                   \
    CHECK_REFUSED((r), field_, text_);                                                             \
    run_done(r);                                                                                   \
  } while (0)

/* The built-in policy, parsed once. */
static struct sr_policy *builtin;

static const struct sr_policy_profile *profile(const char *name)
{
  const struct sr_policy_profile *p = builtin ? sr_policy_profile(builtin, name) : NULL;
  CHECK(p != NULL);
  return p;
}

/* The example policy with every risk class, parsed once. */
static struct sr_policy *classes;

static const struct sr_policy_profile *class_profile(const char *name)
{
  const struct sr_policy_profile *p = classes ? sr_policy_profile(classes, name) : NULL;
  CHECK(p != NULL);
  return p;
}

#define OMIT UNIT_OMIT

/* A small clean config (it passes the default profile with little to enforce) with some
 * top-level members replaced, added or (OMIT) removed.  Static buffer until the next call. */
#define CONFIG_WITH(...) config_with(__VA_ARGS__, (const char *)NULL)
#define CLEAN_CONFIG config_with((const char *)NULL)

static const char *config_with(const char *key, ...)
{
  static char buf[64 * 1024];
  struct unit_member m[32] = {
      // clang-format off
      {"ociVersion", JSON("1.2.0")},
      {"root", JSON({"path": "rootfs", "readonly": true})},
      {"process", JSON({"user": {"uid": 0, "gid": 0}, "args": ["sh"], "cwd": "/",
                        "noNewPrivileges": true,
                        "capabilities": {"bounding": ["CAP_CHOWN", "CAP_KILL"],
                                         "effective": ["CAP_CHOWN", "CAP_KILL"],
                                         "permitted": ["CAP_CHOWN", "CAP_KILL"]}})},
      {"mounts", JSON([{"destination": "/proc", "type": "proc", "source": "proc"},
                       {"destination": "/tmp", "type": "tmpfs", "source": "tmpfs"},
                       {"destination": "/var/tmp", "type": "tmpfs", "source": "tmpfs"},
                       {"destination": "/run", "type": "tmpfs", "source": "tmpfs"}])},
      {"linux", JSON({"namespaces": [{"type": "mount"}, {"type": "pid"}, {"type": "ipc"},
                                     {"type": "uts"}, {"type": "cgroup"}, {"type": "network"}],
                      "seccomp": {"defaultAction": "SCMP_ACT_ERRNO",
                                  "syscalls": [{"names": ["read", "write", "exit_group"],
                                                "action": "SCMP_ACT_ALLOW"}]},
                      "maskedPaths": ["/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys",
                                      "/proc/latency_stats", "/proc/timer_list",
                                      "/proc/timer_stats", "/proc/sched_debug", "/proc/scsi",
                                      "/sys/firmware", "/sys/devices/virtual/powercap"],
                      "readonlyPaths": ["/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys",
                                        "/proc/sysrq-trigger"],
                      "resources": {"pids": {"limit": 100}, "memory": {"limit": 1048576}}})},
      // clang-format on
  };
  va_list ap;
  va_start(ap, key);
  unit_config_merge(buf, sizeof(buf), m, 5, sizeof(m) / sizeof(m[0]), key, ap);
  va_end(ap);
  return buf;
}

/* linux with these namespaces and otherwise the clean config's. */
static const char *linux_with_namespaces(const char *namespaces)
{
  static char buf[4096];
  snprintf(buf, sizeof(buf),
           "{\"namespaces\": %s, \"seccomp\": {\"defaultAction\": \"SCMP_ACT_ERRNO\"}, "
           "\"resources\": {\"pids\": {\"limit\": 100}, \"memory\": {\"limit\": 1048576}}}",
           namespaces);
  return buf;
}

/* config.json's linux: a namespace of its own for all but user and time, then REST's members
 * ("" for none). */
#define PRIVATE_NS                                                                                 \
  "[{\"type\": \"mount\"}, {\"type\": \"pid\"}, {\"type\": \"ipc\"}, {\"type\": \"uts\"}, "               \
  "{\"type\": \"cgroup\"}, {\"type\": \"network\"}]"
static const char *private_linux(const char *rest)
{
  static char buf[4096];
  snprintf(buf, sizeof(buf), "{\"namespaces\": " PRIVATE_NS "%s%s}", rest[0] ? ", " : "", rest);
  return buf;
}

static int ns_present(const struct sr_config *c, enum sr_ns_kind k)
{
  return c->linux_.namespaces[k].present;
}

/* The tests below are full of JSON, laid out by hand: clang-format would space it out as C. */
// clang-format off

/* ---------------------------------------------------------------------------------------------
 * The policy file
 */

static void the_built_in_policy_is_contrib_default_json(void)
{
  char path[4096];
  snprintf(path, sizeof(path), "%s/contrib/policy/default.json", srcdir);
  char *text = read_text(path);
  CHECK(text != NULL);
  if (text == NULL) {
    fprintf(stderr, "  cannot read %s (pass the source directory as argv[1])\n", path);
    return;
  }
  struct sr_policy *shipped = policy_of(text);
  char *a = shipped ? policy_json_text(shipped) : NULL;
  char *b = builtin ? policy_json_text(builtin) : NULL;
  CHECK(a != NULL && b != NULL);
  CHECK_STR_EQ(a, b);
  /* Byte for byte, too: the C text is generated from the file. */
  CHECK_STR_EQ(text, sr_policy_default_json);
  free(a);
  free(b);
  free(text);
  if (shipped)
    sr_policy_free(shipped);
}

static void every_shipped_policy_file_parses(void)
{
  char dir[4096];
  snprintf(dir, sizeof(dir), "%s/contrib/policy", srcdir);
  DIR *d = opendir(dir);
  CHECK(d != NULL);
  if (d == NULL)
    return;
  int files = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    size_t n = strlen(e->d_name);
    if (n < 5 || strcmp(e->d_name + n - 5, ".json") != 0)
      continue;
    char path[8192];
    snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
    char *text = read_text(path);
    CHECK(text != NULL);
    if (text == NULL)
      continue;
    struct sr_policy *p = NULL;
    sr_error_t err = NULL;
    int r = sr_policy_parse(text, strlen(text), e->d_name, &p, &err);
    CHECK_OK(r, err);
    if (r == 0) {
      files++;
      /* What `policy show` prints reads back as the same policy. */
      char *shown = policy_json_text(p);
      struct sr_policy *again = shown ? policy_of(shown) : NULL;
      char *shown2 = again ? policy_json_text(again) : NULL;
      CHECK_STR_EQ(shown2, shown);
      free(shown);
      free(shown2);
      if (again)
        sr_policy_free(again);
      sr_policy_free(p);
    }
    sr_error_free(&err);
    free(text);
  }
  closedir(d);
  CHECK(files >= 2);
}

static void the_risk_classes_are_documented_profiles(void)
{
  static const char *names[] = {
      "default",         "trusted-internal", "third-party-dependency", "untrusted-user-code",
      "network-service", "permissive"};
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
    const struct sr_policy_profile *p = class_profile(names[i]);
    if (p)
      CHECK(p->description[0] != '\0');
  }
  const struct sr_policy_profile *perm = class_profile("permissive");
  if (perm) {
    CHECK(!perm->enforce);
    CHECK_STR_EQ(perm->base, "default");
  }
  const struct sr_policy_profile *untrusted = class_profile("untrusted-user-code");
  if (untrusted) {
    CHECK(untrusted->enforce);
    CHECK(!untrusted->network.allow);
    CHECK_UINT_EQ(untrusted->capabilities, CAP(CAP_CHOWN) | CAP(CAP_DAC_OVERRIDE) |
                                               CAP(CAP_FOWNER) | CAP(CAP_KILL) | CAP(CAP_SETGID) |
                                               CAP(CAP_SETUID));
    CHECK_INT_EQ(untrusted->pids.def, 512);
    CHECK_INT_EQ(untrusted->memory.max, INT64_C(2) << 30);
    /* Only the two Docker sets in every container, both confined to its network namespace. */
    CHECK_INT_EQ(untrusted->n_sysctls, 2);
    /* Inherited from default. */
    CHECK_INT_EQ(untrusted->n_masked_paths, 11);
    CHECK(untrusted->rootfs.readonly);
  }
  /* The built-in policy has no profile looser than default. */
  CHECK(builtin && sr_policy_profile(builtin, "permissive") == NULL);
  CHECK(builtin && sr_policy_profile(builtin, "trusted-internal") == NULL);
}

static void a_profile_that_says_nothing_gets_the_hardened_defaults(void)
{
  struct sr_policy *pol = policy_of(policy_with_profile("{}"));
  if (pol == NULL)
    return;
  const struct sr_policy_profile *p = sr_policy_profile(pol, "p");
  CHECK(p != NULL);
  CHECK_STR_EQ(pol->audit_log, SR_POLICY_DEFAULT_AUDIT_LOG);
  CHECK(p->enforce);
  CHECK(p->rootfs.readonly);
  CHECK_INT_EQ(p->rootfs.n_tmpfs, 3);
  CHECK_STR_EQ(p->rootfs.tmpfs[0].path, "/tmp");
  CHECK_UINT_EQ(p->rootfs.tmpfs[0].size, 64u << 20);
  CHECK_UINT_EQ(p->rootfs.tmpfs[0].max_size, 64u << 20);
  CHECK_UINT_EQ(p->rootfs.tmpfs[0].mode, 01777);
  CHECK_STR_EQ(p->rootfs.tmpfs[2].path, "/run");
  CHECK_UINT_EQ(p->rootfs.tmpfs[2].mode, 0755);
  /* Absent means safe: no network unless a profile grants it, and then only on request. */
  CHECK(!p->network.allow);
  CHECK(p->network.on_request);
  CHECK(!p->network.allow_host);
  CHECK_UINT_EQ(p->capabilities, CAP(CAP_CHOWN) | CAP(CAP_DAC_OVERRIDE) | CAP(CAP_FOWNER) |
                                     CAP(CAP_FSETID) | CAP(CAP_KILL) | CAP(CAP_SETGID) |
                                     CAP(CAP_SETUID) | CAP(CAP_SETPCAP) |
                                     CAP(CAP_NET_BIND_SERVICE) | CAP(CAP_SYS_CHROOT) |
                                     CAP(CAP_AUDIT_WRITE) | CAP(CAP_SETFCAP));
  CHECK_INT_EQ(p->n_devices, 9);
  CHECK_INT_EQ(p->n_masked_paths, 11);
  CHECK_INT_EQ(p->n_readonly_paths, 5);
  CHECK(p->pids.has_default && p->pids.def == 4096 && !p->pids.has_max);
  CHECK(p->memory.has_default && p->memory.def == INT64_C(4) << 30 && !p->memory.has_max);
  CHECK_INT_EQ(p->n_sysctls, 10);
  CHECK_INT_EQ(p->n_hooks_allowed, 0); /* absent: no hook runs */
  /* The built-in "default" differs from these by granting the network to a container that asks
   * for it (annotation io.seerun.network=enabled). */
  const struct sr_policy_profile *def = profile("default");
  if (def) {
    char *mine = profile_json_text(p), *theirs = profile_json_text(def);
    CHECK(mine && strstr(mine, "\"network\":{\"allow\":false,\"onRequest\":true,"
                               "\"allowHost\":false,") != NULL);
    CHECK(theirs && strstr(theirs, "\"network\":{\"allow\":true,\"onRequest\":true,"
                                   "\"allowHost\":false,") != NULL);
    free(mine);
    free(theirs);
  }
  sr_policy_free(pol);
}

static void a_profile_inherits_from_its_base_key_by_key(void)
{
    const char *json = JSON({
    "version": 1, "defaultProfile": "child", "auditLog": "/var/log/x.jsonl",
    "bindings": {"binaries": {"seerun-c": "child"}, "roots": {"/run/c/": "child"}},
    "profiles": {
      "parent": {"network": {"allow": true, "onRequest": false, "allowHost": true},
                 "capabilities": {"allowed": ["CAP_KILL", "CAP_NET_RAW"]},
                 "resources": {"pids": {"default": 10, "max": 20}},
                 "devices": {"allowed": ["null", {"type": "c", "major": 195, "minor": 0},
                                         {"type": "b", "major": 8}]}},
      "child": {"base": "parent", "network": {"allowHost": false},
                "resources": {"memory": {"default": 1000, "max": "1k"}},
                "hooks": {"allowedPaths": ["/usr/bin/hook"]}}
    }
  });
    struct sr_policy *pol = policy_of(json);
  if (pol == NULL)
    return;
  const struct sr_policy_profile *c = sr_policy_profile(pol, "child");
  CHECK(c != NULL);
  if (c == NULL) {
    sr_policy_free(pol);
    return;
  }
  CHECK_STR_EQ(c->base, "parent");
  CHECK(c->network.allow);       /* from parent */
  CHECK(!c->network.on_request); /* from parent */
  CHECK(!c->network.allow_host); /* its own */
  CHECK_UINT_EQ(c->capabilities, CAP(CAP_KILL) | CAP(CAP_NET_RAW));
  CHECK(c->pids.has_default && c->pids.def == 10 && c->pids.has_max && c->pids.max == 20);
  CHECK(c->memory.def == 1000 && c->memory.max == 1024);
  CHECK_INT_EQ(c->n_devices, 3);
  CHECK(c->devices[1].name == NULL && c->devices[1].type == 'c' && c->devices[1].major == 195 &&
        c->devices[1].minor == 0);
  CHECK(c->devices[2].type == 'b' && c->devices[2].minor == -1);
  CHECK(c->n_hooks_allowed == 1 && !c->hooks_allowed[0].has_args);
  CHECK_STR_EQ(pol->root_keys[0], "/run/c");
  CHECK_STR_EQ(pol->audit_log, "/var/log/x.jsonl");
  sr_policy_free(pol);
}

/* network.onRequest: absent is true (network only where the container asks for it); false
 * grants the profile's network without asking.  Read, inherited and shown like any knob. */
static void network_on_request_is_read_defaults_to_true_and_is_inherited(void)
{
  const char *json = JSON({
    "version": 1, "defaultProfile": "asks",
    "profiles": {
      "asks": {"network": {"allow": true}},
      "null-is-absent": {"network": {"allow": true, "onRequest": null}},
      "service": {"network": {"allow": true, "onRequest": false}},
      "service-child": {"base": "service", "network": {"allowHost": false}},
      "asks-again": {"base": "service", "network": {"onRequest": true}}
    }
  });
  struct sr_policy *pol = policy_of(json);
  if (pol == NULL)
    return;
  static const struct {
    const char *name;
    bool allow, on_request;
  } want[] = {
      {"asks", true, true},          {"null-is-absent", true, true}, {"service", true, false},
      {"service-child", true, false}, {"asks-again", true, true},
  };
  for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
    const struct sr_policy_profile *p = sr_policy_profile(pol, want[i].name);
    CHECK(p != NULL);
    if (p == NULL)
      continue;
    CHECK(p->network.allow == want[i].allow);
    CHECK(p->network.on_request == want[i].on_request);
    if (p->network.on_request != want[i].on_request)
      fprintf(stderr, "  profile %s: onRequest is %d\n", want[i].name, p->network.on_request);
  }
  /* `policy show` prints it, and what it prints reads back the same. */
  const struct sr_policy_profile *svc = sr_policy_profile(pol, "service-child");
  char *text = svc ? profile_json_text(svc) : NULL;
  CHECK(text && strstr(text, "\"network\":{\"allow\":true,\"onRequest\":false,"
                             "\"allowHost\":false,") != NULL);
  free(text);
  char *all = policy_json_text(pol);
  struct sr_policy *again = all ? policy_of(all) : NULL;
  const struct sr_policy_profile *p2 = again ? sr_policy_profile(again, "service-child") : NULL;
  CHECK(p2 && !p2->network.on_request);
  p2 = again ? sr_policy_profile(again, "asks") : NULL;
  CHECK(p2 && p2->network.on_request);
  free(all);
  if (again)
    sr_policy_free(again);
  sr_policy_free(pol);

  /* A wrong type in a base is named where it is written. */
  POLICY_REFUSED(JSON({
                   "version": 1,
                   "defaultProfile": "a",
                   "profiles": {"a": {"base": "b"}, "b": {"network": {"onRequest": "false"}}}
                 }),
                 "policy.json: profiles.b.network.onRequest: must be a boolean");
}

/* The promise: no network beyond loopback unless the container asks for it and the operator's
 * policy allows it.  Only network-service, for engine entries that cannot pass annotations
 * (Docker's), grants it without asking; the operator binds an entry to it on purpose. */
static void the_built_in_profiles_grant_network_only_on_request(void)
{
  static const struct {
    const char *name;
    bool allow, on_request;
  } want[] = {
      {"default", true, true},
      {"third-party-dependency", true, true},
      {"untrusted-user-code", false, true},
      {"network-service", true, false},
  };
  for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
    const struct sr_policy_profile *p = profile(want[i].name);
    if (p == NULL)
      continue;
    CHECK(p->network.allow == want[i].allow);
    CHECK(p->network.on_request == want[i].on_request);
    CHECK(!p->network.allow_host);
  }
  /* The same in the example file (trusted-internal and permissive inherit default's). */
  static const char *asks[] = {"default", "trusted-internal", "third-party-dependency",
                               "permissive"};
  for (size_t i = 0; i < sizeof(asks) / sizeof(asks[0]); i++) {
    const struct sr_policy_profile *p = class_profile(asks[i]);
    if (p)
      CHECK(p->network.allow && p->network.on_request);
  }
  const struct sr_policy_profile *svc = class_profile("network-service");
  if (svc)
    CHECK(svc->network.allow && !svc->network.on_request);
}

static void a_bad_policy_file_is_refused_naming_the_key(void)
{
  POLICY_REFUSED("", "policy.json: invalid JSON: parse error: premature EOF");
  POLICY_REFUSED("[]", "policy.json: document: must be an object");
  POLICY_REFUSED(
      JSON({"version": 1, "defaultProfile": "p", "profiles": {"p": {}}, "profils": {}}),
      "policy.json: profils: unknown key");
  POLICY_REFUSED(JSON({"defaultProfile": "p", "profiles": {"p": {}}}),
                 "policy.json: version: required");
  POLICY_REFUSED(JSON({"version": 2, "defaultProfile": "p", "profiles": {"p": {}}}),
                 "policy.json: version: 2 is not supported (this seerun reads 1)");
  POLICY_REFUSED(JSON({"version": "1", "defaultProfile": "p", "profiles": {"p": {}}}),
                 "policy.json: version: must be an integer");
  POLICY_REFUSED(JSON({"version": 1, "defaultProfile": "q", "profiles": {"p": {}}}),
                 "policy.json: defaultProfile: unknown profile \"q\"");
  POLICY_REFUSED(JSON({"version": 1, "defaultProfile": "p", "profiles": {}}),
                 "policy.json: profiles: must name at least one profile");
  POLICY_REFUSED(JSON({
                   "version": 1,
                   "defaultProfile": "p",
                   "auditLog": "audit.log",
                   "profiles": {"p": {}}
                 }),
                 "policy.json: auditLog: must be an absolute path, got \"audit.log\"");
  POLICY_REFUSED(JSON({
                   "version": 1,
                   "defaultProfile": "p",
                   "profiles": {"p": {}},
                   "bindings": {"binaries": {"seerun-x": "nope"}}
                 }),
                 "policy.json: bindings.binaries.seerun-x: unknown profile \"nope\"");
  POLICY_REFUSED(JSON({
                   "version": 1,
                   "defaultProfile": "p",
                   "profiles": {"p": {}},
                   "bindings": {"binaries": {"/usr/bin/seerun": "p"}}
                 }),
                 "policy.json: bindings.binaries./usr/bin/seerun: must be a binary name "
                 "without \"/\"");
  POLICY_REFUSED(JSON({
                   "version": 1,
                   "defaultProfile": "p",
                   "profiles": {"p": {}},
                   "bindings": {"roots": {"run/x": "p"}}
                 }),
                 "policy.json: bindings.roots.run/x: must be an absolute directory");
  POLICY_REFUSED(JSON({
                   "version": 1,
                   "defaultProfile": "p",
                   "profiles": {"p": {}},
                   "bindings": {"roots": {"/run/x": "p", "/run/x/": "p"}}
                 }),
                 "policy.json: bindings.roots./run/x/: the same directory is bound twice");
  POLICY_REFUSED(JSON({
                   "version": 1,
                   "defaultProfile": "p",
                   "profiles": {"p": {}},
                   "bindings": {"root": {}}
                 }),
                 "policy.json: bindings.root: unknown key");
  /* Which of two keys counts must not depend on the reader. */
  POLICY_REFUSED(JSON({"version": 1, "defaultProfile": "p", "profiles": {"p": {}, "p": {}}}),
                 "policy.json: invalid JSON: profiles: duplicate key \"p\"");
  POLICY_REFUSED(JSON({"version": 1, "defaultProfile": "p", "profiles": {"p": {}, "-x": {}}}),
                 "policy.json: profiles.-x: a profile name is 1 to 64 letters, digits, \".\", "
                 "\"_\" or \"-\", not starting with \".\" or \"-\"");
  POLICY_REFUSED("{\"version\": 1, \"defaultProfile\": \"p\", /* c */ \"profiles\": {\"p\": {}}}",
                 "policy.json: invalid JSON: comments are not allowed");

  /* Profiles: unknown keys at every level, wrong types, unknown names. */
  POLICY_REFUSED(policy_with_profile(JSON({"netwrok": {}})),
                 "policy.json: profiles.p.netwrok: unknown key");
  POLICY_REFUSED(policy_with_profile(JSON({"enforce": true, "enforce": false})),
                 "policy.json: invalid JSON: profiles.p: duplicate key \"enforce\"");
  POLICY_REFUSED(policy_with_profile(JSON({"network": {"allowhost": true}})),
                 "policy.json: profiles.p.network.allowhost: unknown key");
  POLICY_REFUSED(policy_with_profile(JSON({"network": {"allow": "yes"}})),
                 "policy.json: profiles.p.network.allow: must be a boolean");
  POLICY_REFUSED(policy_with_profile(JSON({"network": true})),
                 "policy.json: profiles.p.network: must be an object");
  POLICY_REFUSED(policy_with_profile(JSON({"network": {"allow": true, "onRequest": "no"}})),
                 "policy.json: profiles.p.network.onRequest: must be a boolean");
  POLICY_REFUSED(policy_with_profile(JSON({"network": {"onRequest": 0}})),
                 "policy.json: profiles.p.network.onRequest: must be a boolean");
  POLICY_REFUSED(policy_with_profile(JSON({"network": {"onrequest": false}})),
                 "policy.json: profiles.p.network.onrequest: unknown key");
  POLICY_REFUSED(policy_with_profile(JSON({"enforce": 0})),
                 "policy.json: profiles.p.enforce: must be a boolean");
  POLICY_REFUSED(policy_with_profile(JSON({"description": 7})),
                 "policy.json: profiles.p.description: must be a string");
  POLICY_REFUSED(
      policy_with_profile(JSON(
          {"capabilities": {"allowed": ["CAP_CHOWN", "CAP_KILL", "CAP_SETUID", "CAP_FOO"]}})),
      "policy.json: profiles.p.capabilities.allowed[3]: unknown capability "
      "\"CAP_FOO\"");
  POLICY_REFUSED(policy_with_profile(JSON({"capabilities": {"allowed": ["SYS_ADMIN"]}})),
                 "policy.json: profiles.p.capabilities.allowed[0]: unknown capability "
                 "\"SYS_ADMIN\"");
  POLICY_REFUSED(policy_with_profile(JSON({"capabilities": {"allowed": "CAP_KILL"}})),
                 "policy.json: profiles.p.capabilities.allowed: must be an array");
  POLICY_REFUSED(policy_with_profile(JSON({"capabilities": {"allow": []}})),
                 "policy.json: profiles.p.capabilities.allow: unknown key");
  POLICY_REFUSED(
      policy_with_profile(JSON({"rootfs": {"tmpfs": [{"path": "/tmp", "sise": 1}]}})),
      "policy.json: profiles.p.rootfs.tmpfs[0].sise: unknown key");
  POLICY_REFUSED(policy_with_profile(JSON(
                     {"rootfs": {"tmpfs": [{"path": "tmp", "size": 1, "mode": "1777"}]}})),
                 "policy.json: profiles.p.rootfs.tmpfs[0].path: must be a clean absolute path "
                 "below /, got \"tmp\"");
  POLICY_REFUSED(
      policy_with_profile(
          JSON({"rootfs": {"tmpfs": [{"path": "/tmp", "size": "64q", "mode": "1777"}]}})),
      "policy.json: profiles.p.rootfs.tmpfs[0].size: \"64q\" is not a size (bytes, or "
      "a number with a k, m, g or t suffix)");
  POLICY_REFUSED(policy_with_profile(JSON(
                     {"rootfs": {"tmpfs": [{"path": "/tmp", "size": 0, "mode": "1777"}]}})),
                 "policy.json: profiles.p.rootfs.tmpfs[0].size: must be greater than zero");
  POLICY_REFUSED(
      policy_with_profile(JSON({
        "rootfs":
            {"tmpfs": [{"path": "/tmp", "size": "1m", "maxSize": "1k", "mode": "1777"}]}
      })),
      "policy.json: profiles.p.rootfs.tmpfs[0].maxSize: smaller than size");
  POLICY_REFUSED(
      policy_with_profile(
          JSON({"rootfs": {"tmpfs": [{"path": "/tmp", "size": "1m", "mode": "1779"}]}})),
      "policy.json: profiles.p.rootfs.tmpfs[0].mode: \"1779\" is not an octal mode "
      "like \"1777\"");
  POLICY_REFUSED(policy_with_profile(JSON({
                   "rootfs": {
                     "tmpfs": [
                       {"path": "/tmp", "size": "1m", "mode": "1777"},
                       {"path": "/tmp", "size": "1m", "mode": "1777"}
                     ]
                   }
                 })),
                 "policy.json: profiles.p.rootfs.tmpfs[1].path: duplicate tmpfs \"/tmp\"");
  POLICY_REFUSED(policy_with_profile(JSON({"namespaces": {"allowHost": ["pid", "network"]}})),
                 "policy.json: profiles.p.namespaces.allowHost[1]: \"network\" is not one of pid, "
                 "ipc, uts, cgroup");
  POLICY_REFUSED(policy_with_profile(JSON({"namespaces": {"allowJoin": ["net"]}})),
                 "policy.json: profiles.p.namespaces.allowJoin[0]: \"net\" is not one of user, "
                 "mount, pid, ipc, uts, cgroup, time");
  POLICY_REFUSED(policy_with_profile(JSON({"devices": {"allowed": ["null", "sda"]}})),
                 "policy.json: profiles.p.devices.allowed[1]: unknown device \"sda\" (null, zero, "
                 "full, random, urandom, tty, console, ptmx, pts, fuse, tun, kvm, or {\"type\", "
                 "\"major\", \"minor\"})");
  POLICY_REFUSED(
      policy_with_profile(JSON({"devices": {"allowed": [{"type": "a", "major": 1}]}})),
      "policy.json: profiles.p.devices.allowed[0].type: \"a\" is not \"c\" or \"b\"");
  POLICY_REFUSED(policy_with_profile(JSON(
                     {"devices": {"allowed": [{"type": "c", "major": 1, "mnior": 3}]}})),
                 "policy.json: profiles.p.devices.allowed[0].mnior: unknown key");
  POLICY_REFUSED(policy_with_profile(JSON({"readonlyPaths": ["/proc/sys/.."]})),
                 "policy.json: profiles.p.readonlyPaths[0]: must be a clean absolute path, got "
                 "\"/proc/sys/..\"");
  POLICY_REFUSED(policy_with_profile(JSON({"readonlyPaths": ["/proc/sys/"]})),
                 "policy.json: profiles.p.readonlyPaths[0]: must be a clean absolute path, got "
                 "\"/proc/sys/\"");
  POLICY_REFUSED(policy_with_profile(JSON({"maskedPaths": ["/proc/kcore", "proc/keys"]})),
                 "policy.json: profiles.p.maskedPaths[1]: must be a clean absolute path, got "
                 "\"proc/keys\"");
  POLICY_REFUSED(policy_with_profile(JSON({"resources": {"pids": {"default": 0}}})),
                 "policy.json: profiles.p.resources.pids.default: 0 is out of range [1, "
                 "9223372036854775807]");
  POLICY_REFUSED(policy_with_profile(JSON({"resources": {"pids": {"default": 10, "max": 5}}})),
                 "policy.json: profiles.p.resources.pids: default is above max");
  POLICY_REFUSED(policy_with_profile(JSON({"resources": {"memory": {"max": "lots"}}})),
                 "policy.json: profiles.p.resources.memory.max: \"lots\" is not a size (bytes, or "
                 "a number with a k, m, g or t suffix)");
  POLICY_REFUSED(policy_with_profile(JSON({"resources": {"gpu": {}}})),
                 "policy.json: profiles.p.resources.gpu: unknown key");
  POLICY_REFUSED(policy_with_profile(JSON({"resources": {"cpu": {"default": "lots"}}})),
                 "policy.json: profiles.p.resources.cpu.default: must be a number of CPUs "
                 "between 0.001 and 65536");
  POLICY_REFUSED(policy_with_profile(JSON({"resources": {"cpu": {"default": 0}}})),
                 "policy.json: profiles.p.resources.cpu.default: must be a number of CPUs "
                 "between 0.001 and 65536");
  POLICY_REFUSED(policy_with_profile(JSON({"resources": {"cpu": {"default": 2, "max": 1.5}}})),
                 "policy.json: profiles.p.resources.cpu: default is above max");
  POLICY_REFUSED(policy_with_profile(JSON({"resources": {"cpu": {"min": 1}}})),
                 "policy.json: profiles.p.resources.cpu.min: unknown key");
  POLICY_REFUSED(policy_with_profile(JSON({"sysctls": {"allowed": ["kernel.*.x"]}})),
                 "policy.json: profiles.p.sysctls.allowed[0]: \"kernel.*.x\" is not a sysctl key "
                 "or a prefix ending in \"*\"");
  POLICY_REFUSED(policy_with_profile(JSON({"hooks": {"allowedPaths": ["hook"]}})),
                 "policy.json: profiles.p.hooks.allowedPaths[0]: must be a clean absolute path, "
                 "got \"hook\"");

  /* Inheritance: unknown bases and cycles. */
  POLICY_REFUSED(
      JSON({"version": 1, "defaultProfile": "p", "profiles": {"p": {"base": "nope"}}}),
      "policy.json: profiles.p.base: unknown profile \"nope\"");
  POLICY_REFUSED(JSON({
                   "version": 1,
                   "defaultProfile": "a",
                   "profiles": {"a": {"base": "b"}, "b": {"base": "a"}}
                 }),
                 "policy.json: profiles.a.base: inheritance cycle through \"a\"");
  POLICY_REFUSED(JSON({"version": 1, "defaultProfile": "a", "profiles": {"a": {"base": "a"}}}),
                 "policy.json: profiles.a.base: inheritance cycle through \"a\"");
  /* A type error in a base is named where it is written. */
  POLICY_REFUSED(JSON({
                   "version": 1,
                   "defaultProfile": "a",
                   "profiles": {"a": {"base": "b"}, "b": {"network": {"allow": 1}}}
                 }),
                 "policy.json: profiles.b.network.allow: must be a boolean");
}

static void sizes_read_as_bytes(void)
{
  uint64_t v;
  CHECK(sr_policy_parse_size("64m", &v) == 0 && v == 64u << 20);
  CHECK(sr_policy_parse_size("1G", &v) == 0 && v == UINT64_C(1) << 30);
  CHECK(sr_policy_parse_size("2t", &v) == 0 && v == UINT64_C(2) << 40);
  CHECK(sr_policy_parse_size("4096", &v) == 0 && v == 4096);
  CHECK(sr_policy_parse_size("", &v) < 0);
  CHECK(sr_policy_parse_size("m", &v) < 0);
  CHECK(sr_policy_parse_size("1mb", &v) < 0);
  CHECK(sr_policy_parse_size("-1", &v) < 0);
  CHECK(sr_policy_parse_size("99999999999999999999", &v) < 0);
  CHECK(sr_policy_parse_size("17179869184g", &v) < 0);
}

/* ---------------------------------------------------------------------------------------------
 * Selection
 */

#define SELECTED(pol, cli, argv0, root, expected)                                                  \
  do {                                                                                             \
    const struct sr_policy_profile *unit_p_ = NULL;                                                \
    sr_error_t unit_x_ = NULL;                                                                     \
    CHECK_OK(sr_policy_select((pol), (cli), (argv0), (root), &unit_p_, &unit_x_), unit_x_);        \
    CHECK_STR_EQ(unit_p_ ? unit_p_->name : NULL, (expected));                                      \
    sr_error_free(&unit_x_);                                                                       \
  } while (0)

#define NOT_SELECTED(pol, cli, argv0, root, expected)                                              \
  do {                                                                                             \
    const struct sr_policy_profile *unit_p_ = NULL;                                                \
    sr_error_t unit_x_ = NULL;                                                                     \
    CHECK(sr_policy_select((pol), (cli), (argv0), (root), &unit_p_, &unit_x_) < 0);                \
    CHECK(unit_p_ == NULL);                                                                        \
    char *unit_t_ = unit_x_ ? sr_error_text(unit_x_) : NULL;                                       \
    CHECK_STR_EQ(unit_t_, (expected));                                                             \
    free(unit_t_);                                                                                 \
    sr_error_free(&unit_x_);                                                                       \
  } while (0)

static void the_operator_binds_engine_entries_to_profiles(void)
{
  struct sr_policy *pol = classes;
  if (pol == NULL)
    return;
  /* Nothing bound: the default profile. */
  SELECTED(pol, NULL, "seerun", NULL, "default");
  SELECTED(pol, NULL, NULL, "/run/seerun", "default");
  /* The engine's runtime entry names a binary (a symlink to seerun)... */
  SELECTED(pol, NULL, "seerun-untrusted", NULL, "untrusted-user-code");
  SELECTED(pol, NULL, "seerun-audit", NULL, "permissive");
  /* ... or a --root (containerd's shim passes its runtime's root)... */
  SELECTED(pol, NULL, "seerun", "/run/containerd/seerun-untrusted", "untrusted-user-code");
  SELECTED(pol, NULL, "seerun", "/run/containerd//seerun-untrusted/", "untrusted-user-code");
  SELECTED(pol, NULL, "seerun-untrusted", "/run/containerd/seerun-untrusted",
           "untrusted-user-code");
  /* ... or --profile in its runtime arguments. */
  SELECTED(pol, "network-service", "seerun", "/run/seerun", "network-service");
  SELECTED(pol, "untrusted-user-code", "seerun-untrusted", "/run/containerd/seerun-untrusted",
           "untrusted-user-code");
  NOT_SELECTED(pol, "nope", "seerun", NULL, "--profile: unknown profile \"nope\"");
  /* Bindings that disagree are the operator's mistake: nothing runs. */
  NOT_SELECTED(pol, "permissive", "seerun-untrusted", NULL,
               "policy: --profile permissive selects profile \"permissive\" but "
               "bindings.binaries.seerun-untrusted selects \"untrusted-user-code\"; the "
               "operator's bindings must agree");
  NOT_SELECTED(pol, NULL, "seerun-trusted", "/run/containerd/seerun-untrusted",
               "policy: bindings.binaries.seerun-trusted selects profile \"trusted-internal\" but "
               "bindings.roots./run/containerd/seerun-untrusted selects \"untrusted-user-code\"; "
               "the operator's bindings must agree");
  /* A binding pins: --profile cannot leave it (podman --runtime-flag passes flags through). */
  struct sr_policy *pinned = policy_of(JSON({
    "version": 1,
    "defaultProfile": "default",
    "bindings": {"binaries": {"seerun": "default"}},
    "profiles": {"default": {}, "permissive": {"enforce": false}}
  }));
  if (pinned) {
    SELECTED(pinned, "default", "seerun", NULL, "default");
    NOT_SELECTED(pinned, "permissive", "seerun", NULL,
                 "policy: --profile permissive selects profile \"permissive\" but "
                 "bindings.binaries.seerun selects \"default\"; the operator's bindings must "
                 "agree");
    SELECTED(pinned, "permissive", "seerun-other", NULL, "permissive");
    sr_policy_free(pinned);
  }
  /* The built-in policy. */
  if (builtin) {
    SELECTED(builtin, NULL, "seerun", "/run/seerun", "default");
    SELECTED(builtin, NULL, "seerun-untrusted", NULL, "untrusted-user-code");
    /* A second engine entry for the network without asking (Docker's): a symlink by name. */
    SELECTED(builtin, NULL, "seerun-network-service", NULL, "network-service");
    SELECTED(builtin, "network-service", "seerun", NULL, "network-service");
    NOT_SELECTED(builtin, "permissive", "seerun", NULL,
                 "--profile: unknown profile \"permissive\"");
  }
}

/* ---------------------------------------------------------------------------------------------
 * What the default profile does to a clean config
 */

static void a_clean_config_passes_the_default_profile_untouched_but_for_the_audit(void)
{
  struct host h;
  struct run r;
  run_apply(&r, profile("default"), CLEAN_CONFIG, benign_host(&h));
  CHECK_INT_EQ(r.ret, 0);
  CHECK(r.err == NULL);
  CHECK_INT_EQ(count_kind(&r.d, SR_DECISION_REFUSED), 0);
  CHECK_INT_EQ(count_kind(&r.d, SR_DECISION_ENFORCED), 0);
  if (r.d.n == 0 || count_kind(&r.d, SR_DECISION_ENFORCED) != 0)
    dump_decisions(&r.d);
  /* It did not ask for network: its new network namespace keeps loopback only. */
  CHECK(!r.d.network_granted);
  CHECK(!sr_policy_apply_network_granted(&r.d));
  CHECK_DECISION(&r.d, "root.readonly", SR_DECISION_ALLOWED, "true", "true");
  CHECK_DECISION(&r.d, "linux.seccomp", SR_DECISION_ALLOWED,
                 "{\"defaultAction\":\"SCMP_ACT_ERRNO\",\"rules\":1}", NULL);
  CHECK_DECISION(&r.d, "process.capabilities", SR_DECISION_ALLOWED, "[\"CAP_CHOWN\",\"CAP_KILL\"]",
                 NULL);
  CHECK_DECISION(&r.d, "mounts[destination=/tmp]", SR_DECISION_ALLOWED, "\"/tmp\"", NULL);
  if (r.c) {
    CHECK_INT_EQ(r.c->n_mounts, 4);
    CHECK_INT_EQ(r.c->linux_.resources->pids_limit.v, 100);
  }
  run_done(&r);

  /* The same config asking for network: granted, and still nothing to enforce. */
  run_apply(&r, profile("default"),
            CONFIG_WITH("annotations", JSON({"io.seerun.network": "enabled"})), benign_host(&h));
  CHECK_INT_EQ(r.ret, 0);
  CHECK_INT_EQ(count_kind(&r.d, SR_DECISION_REFUSED), 0);
  CHECK_INT_EQ(count_kind(&r.d, SR_DECISION_ENFORCED), 0);
  CHECK(r.d.network_granted);
  CHECK(sr_policy_apply_network_granted(&r.d));
  CHECK_DECISION(&r.d, "annotations.io.seerun.network", SR_DECISION_ALLOWED, "\"enabled\"",
                 "\"enabled\"");
  run_done(&r);
}

/* ---------------------------------------------------------------------------------------------
 * 1. Read-only root
 */

static void a_writable_root_becomes_read_only_with_tmpfs_where_nothing_is_mounted(void)
{
  struct host h;
  struct run r;
  run_apply(&r, profile("default"),
            CONFIG_WITH("root", JSON({"path": "rootfs"}), "mounts",
                        JSON([{"destination": "/proc", "type": "proc", "source": "proc"}])),
            benign_host(&h));
  CHECK_INT_EQ(r.ret, 0);
  CHECK_DECISION(&r.d, "root.readonly", SR_DECISION_ENFORCED, "false", "true");
  CHECK_DECISION(&r.d, "mounts[destination=/tmp]", SR_DECISION_ENFORCED, "null",
                 "{\"destination\":\"/tmp\",\"type\":\"tmpfs\",\"source\":\"tmpfs\",\"options\":"
                 "[\"nosuid\",\"nodev\",\"mode=1777\",\"size=67108864\"]}");
  CHECK_DECISION(&r.d, "mounts[destination=/var/tmp]", SR_DECISION_ENFORCED, "null", NULL);
  CHECK_DECISION(&r.d, "mounts[destination=/run]", SR_DECISION_ENFORCED, "null",
                 "{\"destination\":\"/run\",\"type\":\"tmpfs\",\"source\":\"tmpfs\",\"options\":"
                 "[\"nosuid\",\"nodev\",\"mode=755\",\"size=16777216\"]}");
  if (r.c) {
    CHECK(r.c->root_readonly);
    CHECK_INT_EQ(r.c->n_mounts, 4);
    /* The tmpfs come first: what config.json mounts through a symlink into them lands on top. */
    CHECK_STR_EQ(r.c->mounts[0].destination, "/tmp");
    CHECK_STR_EQ(r.c->mounts[0].type, "tmpfs");
    CHECK_UINT_EQ(r.c->mounts[0].opts.flags & (MS_NOSUID | MS_NODEV), MS_NOSUID | MS_NODEV);
    CHECK_STR_EQ(r.c->mounts[0].opts.data, "mode=1777,size=67108864");
    CHECK_STR_EQ(r.c->mounts[1].destination, "/var/tmp");
    CHECK_STR_EQ(r.c->mounts[2].destination, "/run");
    CHECK_STR_EQ(r.c->mounts[2].opts.data, "mode=755,size=16777216");
    CHECK_STR_EQ(r.c->mounts[3].destination, "/proc");
  }
  run_done(&r);
}

static void podmans_containerenv_keeps_run_as_the_image_has_it(void)
{
  struct host h;
  struct run r;
  run_apply(
      &r, profile("default"),
      CONFIG_WITH(
          "root", JSON({"path": "rootfs"}), "mounts", JSON([
            {"destination": "/proc", "type": "proc", "source": "proc"}, {
              "destination": "/run/.containerenv",
              "type": "bind",
              "source": "/run/containers/storage/x/userdata/.containerenv",
              "options": ["bind", "rprivate"]
            },
            {"destination": "/var", "type": "bind", "source": "/srv/var", "options": ["rbind"]},
            {"destination": "/tmp/", "type": "tmpfs", "source": "tmpfs"}
          ])),
      benign_host(&h));
  CHECK_INT_EQ(r.ret, 0);
  CHECK_DECISION(&r.d, "mounts[destination=/run]", SR_DECISION_ALLOWED, "\"/run/.containerenv\"",
                 NULL);
  /* Below a bind of /var: the directory is the bind's, not the image's. */
  CHECK_DECISION(&r.d, "mounts[destination=/var/tmp]", SR_DECISION_ALLOWED, "\"/var\"", NULL);
  CHECK_DECISION(&r.d, "mounts[destination=/tmp]", SR_DECISION_ALLOWED, "\"/tmp\"", NULL);
  if (r.c) {
    CHECK(r.c->root_readonly);
    CHECK_INT_EQ(r.c->n_mounts, 4);
  }
  run_done(&r);
}

static void the_tmp_size_annotation_asks_within_the_profiles_ceiling(void)
{
  struct host h;
  struct run r;
  const char *mounts = JSON([{"destination": "/proc", "type": "proc", "source": "proc"}]);
  run_apply(&r, profile("default"),
            CONFIG_WITH("mounts", mounts, "annotations", JSON({"io.seerun.tmp-size": "512m"})),
            benign_host(&h));
  CHECK_INT_EQ(r.ret, 0);
  CHECK_DECISION(&r.d, "annotations.io.seerun.tmp-size", SR_DECISION_ALLOWED, "\"512m\"", NULL);
  if (r.c && r.c->n_mounts == 4)
    CHECK_STR_EQ(r.c->mounts[0].opts.data, "mode=1777,size=536870912");
  run_done(&r);

  APPLY_REFUSED(&r, profile("untrusted-user-code"),
                CONFIG_WITH("mounts", mounts, "annotations", JSON({"io.seerun.tmp-size": "512m"})),
                benign_host(&h), "annotations.io.seerun.tmp-size",
                "annotation io.seerun.tmp-size=512m: not allowed by profile "
                "\"untrusted-user-code\" (profiles.untrusted-user-code.rootfs.tmpfs[0].maxSize is "
                "268435456)");

  APPLY_REFUSED(&r, profile("default"),
                CONFIG_WITH("mounts", mounts, "annotations", JSON({"io.seerun.tmp-size": "big"})),
                benign_host(&h), "annotations.io.seerun.tmp-size",
                "annotation io.seerun.tmp-size=big: not a size (bytes, or a number with a k, m, "
                "g or t suffix)");
}

/* ---------------------------------------------------------------------------------------------
 * 2. Network
 */

static void host_network_becomes_a_new_namespace_with_loopback_only(void)
{
  struct host h;
  struct run r;
  run_apply(&r, profile("default"),
            CONFIG_WITH("linux", linux_with_namespaces(JSON([
                          {"type": "mount"}, {"type": "pid"}, {"type": "ipc"}, {"type": "uts"},
                          {"type": "cgroup"}
                        ]))),
            benign_host(&h));
  CHECK_INT_EQ(r.ret, 0);
  CHECK_DECISION(&r.d, "linux.namespaces.network", SR_DECISION_ENFORCED, "\"host\"",
                 "\"new (loopback only)\"");
  CHECK(!r.d.network_granted);
  if (r.c) {
    CHECK(ns_present(r.c, SR_NS_NET));
    CHECK(r.c->linux_.namespaces[SR_NS_NET].path == NULL);
  }
  run_done(&r);

  /* A profile may allow the host's network. */
  struct sr_policy *pol =
      policy_of(policy_with_profile(JSON({"network": {"allow": true, "allowHost": true}})));
  if (pol) {
    run_apply(&r, sr_policy_profile(pol, "p"),
              CONFIG_WITH("linux", linux_with_namespaces(JSON([
                            {"type": "mount"}, {"type": "pid"}, {"type": "ipc"},
                            {"type": "uts"}, {"type": "cgroup"}
                          ]))),
              benign_host(&h));
    CHECK_INT_EQ(r.ret, 0);
    CHECK_DECISION(&r.d, "linux.namespaces.network", SR_DECISION_ALLOWED, "\"host\"", "\"host\"");
    CHECK(r.d.network_granted);
    if (r.c)
      CHECK(!ns_present(r.c, SR_NS_NET));
    run_done(&r);
    sr_policy_free(pol);
  }
}

/* A new network namespace: loopback only, unless the container asks for network (annotation
 * io.seerun.network=enabled) and the profile allows it -- or the profile grants it without
 * asking (network.onRequest false).  The runtime checks after the hooks that a container
 * without the grant sees only lo. */
static void a_new_network_namespace_has_network_only_if_asked_and_allowed(void)
{
  struct host h;
  struct run r;
  /* The default profile allows network, on request: not asked, loopback only, and the
   * decision says why. */
  run_apply(&r, profile("default"), CLEAN_CONFIG, benign_host(&h));
  CHECK_INT_EQ(r.ret, 0);
  CHECK_DECISION(&r.d, "linux.namespaces.network", SR_DECISION_ALLOWED, "\"new\"", "\"new\"");
  CHECK(!r.d.network_granted);
  const struct sr_decision *d = decision(&r.d, "linux.namespaces.network");
  CHECK_STR_EQ(d ? d->reason : NULL,
               "a new network namespace with loopback only (no annotation "
               "io.seerun.network=enabled (profiles.default.network.onRequest))");
  CHECK(decision(&r.d, "annotations.io.seerun.network") == NULL);
  if (r.c) {
    CHECK(ns_present(r.c, SR_NS_NET));
    CHECK(r.c->linux_.namespaces[SR_NS_NET].path == NULL);
  }
  run_done(&r);

  /* Asked for: granted. */
  run_apply(&r, profile("default"),
            CONFIG_WITH("annotations", JSON({"io.seerun.network": "enabled"})), benign_host(&h));
  CHECK_INT_EQ(r.ret, 0);
  CHECK_DECISION(&r.d, "linux.namespaces.network", SR_DECISION_ALLOWED, "\"new\"", "\"new\"");
  d = decision(&r.d, "linux.namespaces.network");
  CHECK_STR_EQ(d ? d->reason : NULL,
               "a new network namespace; network granted (profiles.default.network.allow)");
  CHECK_DECISION(&r.d, "annotations.io.seerun.network", SR_DECISION_ALLOWED, "\"enabled\"", NULL);
  CHECK(r.d.network_granted);
  run_done(&r);

  /* network-service (onRequest false) grants it without asking. */
  run_apply(&r, profile("network-service"), CLEAN_CONFIG, benign_host(&h));
  CHECK_INT_EQ(r.ret, 0);
  CHECK_DECISION(&r.d, "linux.namespaces.network", SR_DECISION_ALLOWED, "\"new\"", "\"new\"");
  CHECK(r.d.network_granted);
  run_done(&r);

  /* A profile that denies network: loopback only, asked or not (asking is refused, below). */
  run_apply(&r, profile("untrusted-user-code"), CLEAN_CONFIG, benign_host(&h));
  CHECK_INT_EQ(r.ret, 0);
  CHECK(!r.d.network_granted);
  d = decision(&r.d, "linux.namespaces.network");
  CHECK_STR_EQ(d ? d->reason : NULL,
               "a new network namespace with loopback only "
               "(profiles.untrusted-user-code.network.allow is false)");
  run_done(&r);

  /* Asking for less is always allowed, even where network comes without asking. */
  run_apply(&r, profile("default"),
            CONFIG_WITH("annotations", JSON({"io.seerun.network": "none"})), benign_host(&h));
  CHECK_INT_EQ(r.ret, 0);
  CHECK_DECISION(&r.d, "annotations.io.seerun.network", SR_DECISION_ALLOWED, "\"none\"", NULL);
  CHECK(!r.d.network_granted);
  run_done(&r);
  run_apply(&r, profile("network-service"),
            CONFIG_WITH("annotations", JSON({"io.seerun.network": "none"})), benign_host(&h));
  CHECK_INT_EQ(r.ret, 0);
  CHECK_DECISION(&r.d, "annotations.io.seerun.network", SR_DECISION_ALLOWED, "\"none\"", NULL);
  CHECK(!r.d.network_granted);
  run_done(&r);

  /* A profile of the operator's own: onRequest absent is true. */
  struct sr_policy *pol = policy_of(policy_with_profile(JSON({"network": {"allow": true}})));
  if (pol) {
    run_apply(&r, sr_policy_profile(pol, "p"), CLEAN_CONFIG, benign_host(&h));
    CHECK_INT_EQ(r.ret, 0);
    CHECK(!r.d.network_granted);
    run_done(&r);
    run_apply(&r, sr_policy_profile(pol, "p"),
              CONFIG_WITH("annotations", JSON({"io.seerun.network": "enabled"})),
              benign_host(&h));
    CHECK_INT_EQ(r.ret, 0);
    CHECK(r.d.network_granted);
    run_done(&r);
    sr_policy_free(pol);
  }
}

/* A network namespace the engine configured (CNI, netavark, slirp4netns) is a request for
 * network: refused rather than neutralised where the profile does not grant it, since the
 * engine would report a network that is not there. */
static void a_foreign_network_namespace_path_is_a_request_for_network(void)
{
  struct host h;
  struct run r;
  const char *ns = JSON([
    {"type": "mount"}, {"type": "pid"}, {"type": "ipc"}, {"type": "uts"}, {"type": "cgroup"},
    {"type": "network", "path": "/run/netns/cni-1234"}
  ]);
  char linux_[4096];
  snprintf(linux_, sizeof(linux_), "%s", linux_with_namespaces(ns));

  /* The default profile, without the annotation: refused, saying how to ask. */
  run_apply(&r, profile("default"), CONFIG_WITH("linux", linux_), benign_host(&h));
  CHECK_REFUSED(&r, "linux.namespaces.network",
                "linux.namespaces.network: path \"/run/netns/cni-1234\": the engine configured a "
                "network, which profile \"default\" does not grant (no annotation "
                "io.seerun.network=enabled (profiles.default.network.onRequest))");
  CHECK(!r.d.network_granted);
  run_done(&r);

  /* With it: allowed, network granted. */
  run_apply(&r, profile("default"),
            CONFIG_WITH("linux", linux_, "annotations", JSON({"io.seerun.network": "enabled"})),
            benign_host(&h));
  CHECK_INT_EQ(r.ret, 0);
  CHECK_INT_EQ(count_kind(&r.d, SR_DECISION_REFUSED), 0);
  CHECK_DECISION(&r.d, "linux.namespaces.network", SR_DECISION_ALLOWED, "\"/run/netns/cni-1234\"",
                 "\"/run/netns/cni-1234\"");
  CHECK_DECISION(&r.d, "annotations.io.seerun.network", SR_DECISION_ALLOWED, "\"enabled\"", NULL);
  CHECK(r.d.network_granted);
  if (r.c)
    CHECK_STR_EQ(r.c->linux_.namespaces[SR_NS_NET].path, "/run/netns/cni-1234");
  run_done(&r);

  /* network-service grants it without asking. */
  run_apply(&r, profile("network-service"), CONFIG_WITH("linux", linux_), benign_host(&h));
  CHECK_INT_EQ(r.ret, 0);
  CHECK_DECISION(&r.d, "linux.namespaces.network", SR_DECISION_ALLOWED, "\"/run/netns/cni-1234\"",
                 NULL);
  CHECK(r.d.network_granted);
  run_done(&r);

  /* A profile that denies network refuses it, asked or not. */
  APPLY_REFUSED(&r, profile("untrusted-user-code"), CONFIG_WITH("linux", linux_), benign_host(&h),
                "linux.namespaces.network",
                "linux.namespaces.network: path \"/run/netns/cni-1234\": the engine configured a "
                "network, which profile \"untrusted-user-code\" does not grant "
                "(profiles.untrusted-user-code.network.allow is false)");
  APPLY_REFUSED(&r, profile("untrusted-user-code"),
                CONFIG_WITH("linux", linux_, "annotations", JSON({"io.seerun.network": "enabled"})),
                benign_host(&h), "linux.namespaces.network",
                "linux.namespaces.network: path \"/run/netns/cni-1234\": the engine configured a "
                "network, which profile \"untrusted-user-code\" does not grant "
                "(profiles.untrusted-user-code.network.allow is false)");

  /* Asking for loopback only in a namespace that has network is a contradiction: refused. */
  APPLY_REFUSED(&r, profile("network-service"),
                CONFIG_WITH("linux", linux_, "annotations", JSON({"io.seerun.network": "none"})),
                benign_host(&h), "annotations.io.seerun.network",
                "annotation io.seerun.network=none: linux.namespaces.network is a namespace that "
                "has network");
}

static void the_hosts_network_namespace_by_path_is_refused(void)
{
  struct host h;
  struct run r;
  struct sr_policy_facts *f = benign_host(&h);
  f->ns[SR_NS_NET].is_host = true;
  const char *linux_ = linux_with_namespaces(JSON([
    {"type": "mount"}, {"type": "pid"}, {"type": "ipc"}, {"type": "uts"}, {"type": "cgroup"},
    {"type": "network", "path": "/proc/1/ns/net"}
  ]));
  APPLY_REFUSED(&r, profile("default"), CONFIG_WITH("linux", linux_), f,
                "linux.namespaces.network",
                "linux.namespaces.network: path \"/proc/1/ns/net\" is the host's network "
                "namespace, not allowed by profile \"default\" (profiles.default.network.allowHost "
                "is false)");
}

static void a_pod_joins_another_seerun_containers_network(void)
{
  struct host h;
  struct run r;
  struct sr_policy_facts *f = benign_host(&h);
  f->ns[SR_NS_NET].is_seerun_container = true;
  f->ns[SR_NS_NET].container_has_network = true;
  f->ns[SR_NS_IPC].is_seerun_container = true;
  f->ns[SR_NS_UTS].is_seerun_container = true;
    const char *ns = JSON([{"type": "mount"}, {"type": "pid"},
                         {"type": "ipc", "path": "/proc/4242/ns/ipc"},
                         {"type": "uts", "path": "/proc/4242/ns/uts"}, {"type": "cgroup"},
                         {"type": "network", "path": "/proc/4242/ns/net"}]);
    char linux_[4096];
  snprintf(linux_, sizeof(linux_), "%s", linux_with_namespaces(ns));
  /* The pod has network: the container must ask for it too (Kubernetes puts the pod's
   * annotations on each of its containers). */
  run_apply(&r, profile("default"),
            CONFIG_WITH("linux", linux_, "annotations", JSON({"io.seerun.network": "enabled"})),
            f);
  CHECK_INT_EQ(r.ret, 0);
  CHECK(r.d.network_granted);
  CHECK_DECISION(&r.d, "linux.namespaces.network", SR_DECISION_ALLOWED, "\"/proc/4242/ns/net\"",
                 NULL);
  CHECK_DECISION(&r.d, "linux.namespaces.ipc", SR_DECISION_ALLOWED, "\"/proc/4242/ns/ipc\"", NULL);
  run_done(&r);

  /* Without asking, it would get network it did not ask for: refused, saying how to ask. */
  APPLY_REFUSED(&r, profile("default"), CONFIG_WITH("linux", linux_), f,
                "linux.namespaces.network",
                "linux.namespaces.network: path \"/proc/4242/ns/net\" joins a seerun container "
                "that has network, not allowed by profile \"default\" (no annotation "
                "io.seerun.network=enabled (profiles.default.network.onRequest))");

  /* network-service grants it without asking. */
  run_apply(&r, profile("network-service"), CONFIG_WITH("linux", linux_), f);
  CHECK_INT_EQ(r.ret, 0);
  CHECK(r.d.network_granted);
  run_done(&r);

  /* A strict profile cannot join a pod that has network. */
  APPLY_REFUSED(&r, profile("untrusted-user-code"), CONFIG_WITH("linux", linux_), f,
                "linux.namespaces.network",
                "linux.namespaces.network: path \"/proc/4242/ns/net\" joins a seerun container "
                "that has network, not allowed by profile \"untrusted-user-code\" "
                "(profiles.untrusted-user-code.network.allow is false)");

  /* A pod without network: loopback only, and asking for network is refused early. */
  f->ns[SR_NS_NET].container_has_network = false;
  run_apply(&r, profile("untrusted-user-code"), CONFIG_WITH("linux", linux_), f);
  CHECK_INT_EQ(r.ret, 0);
  CHECK(!r.d.network_granted);
  run_done(&r);
  run_apply(&r, profile("default"), CONFIG_WITH("linux", linux_), f);
  CHECK_INT_EQ(r.ret, 0);
  CHECK(!r.d.network_granted);
  run_done(&r);
  APPLY_REFUSED(&r, profile("default"),
                CONFIG_WITH("linux", linux_, "annotations", JSON({"io.seerun.network": "enabled"})),
                f, "annotations.io.seerun.network",
                "annotation io.seerun.network=enabled: the container would have loopback only "
                "(the pod's network namespace has loopback only)");
}

static void the_network_annotation_only_requests_what_the_profile_allows(void)
{
  struct host h;
  struct run r;
  APPLY_REFUSED(&r, profile("untrusted-user-code"),
                CONFIG_WITH("annotations", JSON({"io.seerun.network": "enabled"})), benign_host(&h),
                "annotations.io.seerun.network",
                "annotation io.seerun.network=enabled: not allowed by profile "
                "\"untrusted-user-code\" (profiles.untrusted-user-code.network.allow is false)");

  run_apply(&r, profile("default"),
            CONFIG_WITH("annotations", JSON({"io.seerun.network": "enabled"})), benign_host(&h));
  CHECK_INT_EQ(r.ret, 0);
  CHECK_DECISION(&r.d, "annotations.io.seerun.network", SR_DECISION_ALLOWED, "\"enabled\"", NULL);
  CHECK(r.d.network_granted);
  run_done(&r);

  /* Asking where the profile grants network anyway is fine too. */
  run_apply(&r, profile("network-service"),
            CONFIG_WITH("annotations", JSON({"io.seerun.network": "enabled"})), benign_host(&h));
  CHECK_INT_EQ(r.ret, 0);
  CHECK_DECISION(&r.d, "annotations.io.seerun.network", SR_DECISION_ALLOWED, "\"enabled\"", NULL);
  CHECK(r.d.network_granted);
  run_done(&r);

  APPLY_REFUSED(&r, profile("default"),
                CONFIG_WITH("annotations", JSON({"io.seerun.network": "outbound"})),
                benign_host(&h),
                "annotations.io.seerun.network",
                "annotation io.seerun.network=outbound: unknown value (\"none\", \"enabled\" or \"proxy\")");

  /* Asked for network, but host network is neutralised to loopback: refused, not silent. */
  APPLY_REFUSED(&r, profile("default"),
                CONFIG_WITH("annotations", JSON({"io.seerun.network": "enabled"}), "linux",
                            linux_with_namespaces(JSON([
                              {"type": "mount"}, {"type": "pid"}, {"type": "ipc"}, {"type": "uts"},
                              {"type": "cgroup"}
                            ]))),
                benign_host(&h),
                "annotations.io.seerun.network",
                "annotation io.seerun.network=enabled: the container would have loopback only "
                "(host network is replaced by a new network namespace with loopback only "
                "(profiles.default.network.allowHost is false))");
}

static void unknown_seerun_annotations_are_refused_and_others_ignored(void)
{
  struct host h;
  struct run r;
  run_apply(&r, profile("default"),
            CONFIG_WITH("annotations", JSON({"org.example.x": "1", "io.seerun.netwrok": "none"})),
            benign_host(&h));
  CHECK_REFUSED(&r, "annotations.io.seerun.netwrok",
                "annotation io.seerun.netwrok=none: unknown seerun annotation (known: "
                "io.seerun.network, io.seerun.egress.allow, io.seerun.tmp-size; a profile is "
                "chosen by the operator's bindings, not by an annotation)");
  CHECK(decision(&r.d, "annotations.org.example.x") == NULL);
  run_done(&r);

  run_apply(&r, profile("untrusted-user-code"),
            CONFIG_WITH("annotations", JSON({"io.seerun.profile": "permissive"})),
            benign_host(&h));
  CHECK_INT_EQ(r.ret, -1);
  CHECK(r.err_text && strstr(r.err_text, "annotation io.seerun.profile=permissive: unknown"));
  run_done(&r);
}

/* ---------------------------------------------------------------------------------------------
 * 3, 4, 5. Seccomp, no_new_privileges, capabilities
 */

#define ALL_CAPS JSON(["CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_DAC_READ_SEARCH", "CAP_FOWNER",  \
  "CAP_FSETID", "CAP_KILL", "CAP_SETGID", "CAP_SETUID", "CAP_SETPCAP", "CAP_LINUX_IMMUTABLE",  \
  "CAP_NET_BIND_SERVICE", "CAP_NET_BROADCAST", "CAP_NET_ADMIN", "CAP_NET_RAW", "CAP_IPC_LOCK", \
  "CAP_IPC_OWNER", "CAP_SYS_MODULE", "CAP_SYS_RAWIO", "CAP_SYS_CHROOT", "CAP_SYS_PTRACE",      \
  "CAP_SYS_PACCT", "CAP_SYS_ADMIN", "CAP_SYS_BOOT", "CAP_SYS_NICE", "CAP_SYS_RESOURCE",        \
  "CAP_SYS_TIME", "CAP_SYS_TTY_CONFIG", "CAP_MKNOD", "CAP_LEASE", "CAP_AUDIT_WRITE",           \
  "CAP_AUDIT_CONTROL", "CAP_SETFCAP", "CAP_MAC_OVERRIDE", "CAP_MAC_ADMIN", "CAP_SYSLOG",       \
  "CAP_WAKE_ALARM", "CAP_BLOCK_SUSPEND", "CAP_AUDIT_READ", "CAP_PERFMON", "CAP_BPF",           \
  "CAP_CHECKPOINT_RESTORE"])

static const char *process_with_all_caps(bool nnp, const char *cwd)
{
  static char buf[8192];
  snprintf(buf, sizeof(buf),
           "{\"user\": {\"uid\": 0, \"gid\": 0}, \"args\": [\"sh\"], \"cwd\": \"%s\", "
           "\"noNewPrivileges\": %s, \"capabilities\": {\"bounding\": %s, \"effective\": %s, "
           "\"inheritable\": %s, \"permitted\": %s, \"ambient\": %s}}",
           cwd, nnp ? "true" : "false", ALL_CAPS, ALL_CAPS, ALL_CAPS, ALL_CAPS, ALL_CAPS);
  return buf;
}

#define DEFAULT_CAPS                                                                               \
  (CAP(CAP_CHOWN) | CAP(CAP_DAC_OVERRIDE) | CAP(CAP_FOWNER) | CAP(CAP_FSETID) | CAP(CAP_KILL) |    \
   CAP(CAP_SETGID) | CAP(CAP_SETUID) | CAP(CAP_SETPCAP) | CAP(CAP_NET_BIND_SERVICE) |              \
   CAP(CAP_SYS_CHROOT) | CAP(CAP_AUDIT_WRITE) | CAP(CAP_SETFCAP))

static void every_capability_asked_is_cut_to_the_profiles_set(void)
{
  struct host h;
  struct run r;
  run_apply(&r, profile("default"), CONFIG_WITH("process", process_with_all_caps(false, "/")),
            benign_host(&h));
  CHECK_INT_EQ(r.ret, 0);
  static const char *sets[] = {"effective", "bounding", "inheritable", "permitted", "ambient"};
  for (size_t s = 0; s < 5; s++) {
    char field[64];
    snprintf(field, sizeof(field), "process.capabilities.%s", sets[s]);
    CHECK_DECISION(&r.d, field, SR_DECISION_ENFORCED, NULL,
                   "[\"CAP_CHOWN\",\"CAP_DAC_OVERRIDE\",\"CAP_FOWNER\",\"CAP_FSETID\","
                   "\"CAP_KILL\",\"CAP_SETGID\",\"CAP_SETUID\",\"CAP_SETPCAP\","
                   "\"CAP_NET_BIND_SERVICE\",\"CAP_SYS_CHROOT\",\"CAP_AUDIT_WRITE\","
                   "\"CAP_SETFCAP\"]");
  }
  const struct sr_decision *d = decision(&r.d, "process.capabilities.bounding");
  if (d) {
    CHECK(strstr(d->asked, "\"CAP_SYS_ADMIN\"") != NULL);
    CHECK(strstr(d->reason, "dropped CAP_DAC_READ_SEARCH, CAP_LINUX_IMMUTABLE") == d->reason);
    CHECK(strstr(d->reason, "CAP_SYS_ADMIN") != NULL);
    CHECK(strstr(d->reason, "not in profiles.default.capabilities.allowed") != NULL);
  }
  if (r.c && r.c->process && r.c->process->capabilities)
    for (int s = 0; s < SR_CAP_SET_COUNT; s++)
      CHECK_UINT_EQ(r.c->process->capabilities->sets[s], DEFAULT_CAPS);
  /* And the other defaults of a careless config. */
  CHECK_DECISION(&r.d, "process.noNewPrivileges", SR_DECISION_ENFORCED, "false", "true");
  if (r.c && r.c->process)
    CHECK(r.c->process->no_new_privileges);
  run_done(&r);
}

static void seccomp_is_recorded_as_mandatory(void)
{
  struct host h;
  struct run r;
  /* No filter: the runtime's built-in one. */
  run_apply(&r, profile("default"),
            CONFIG_WITH("linux", JSON({
                          "namespaces": [
                            {"type": "mount"}, {"type": "pid"}, {"type": "ipc"},
                            {"type": "uts"}, {"type": "cgroup"}, {"type": "network"}
                          ]
                        })),
            benign_host(&h));
  CHECK_INT_EQ(r.ret, 0);
  CHECK_DECISION(&r.d, "linux.seccomp", SR_DECISION_ENFORCED, "null",
                 "\"built-in default filter\"");
  run_done(&r);
  CHECK(sr_policy_apply_builtin_seccomp(profile("default")));
  CHECK(!sr_policy_apply_builtin_seccomp(class_profile("permissive")));

  /* An allow-all filter is recorded as such. */
  run_apply(&r, profile("default"),
            CONFIG_WITH("linux", JSON({
                          "namespaces": [
                            {"type": "mount"}, {"type": "pid"}, {"type": "ipc"},
                            {"type": "uts"}, {"type": "cgroup"}, {"type": "network"}
                          ],
                          "seccomp": {
                            "defaultAction": "SCMP_ACT_ALLOW",
                            "syscalls": [{"names": ["ptrace"], "action": "SCMP_ACT_LOG"}]
                          }
                        })),
            benign_host(&h));
  CHECK_INT_EQ(r.ret, 0);
  CHECK_DECISION(&r.d, "linux.seccomp", SR_DECISION_ENFORCED,
                 "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"rules\":1}",
                 "\"built-in default filter, then the config's\"");
  if (r.c)
    CHECK(r.c->linux_.seccomp != NULL);
  run_done(&r);
}

/* ---------------------------------------------------------------------------------------------
 * 6. Masked and read-only paths
 */

static void masked_and_read_only_paths_are_always_added(void)
{
  struct host h;
  struct run r;
  run_apply(&r, profile("default"),
            CONFIG_WITH("linux", JSON({
                          "namespaces": [
                            {"type": "mount"}, {"type": "pid"}, {"type": "ipc"},
                            {"type": "uts"}, {"type": "cgroup"}, {"type": "network"}
                          ],
                          "maskedPaths": [],
                          "readonlyPaths": ["/proc/sys/", "/proc/x"]
                        })),
            benign_host(&h));
  CHECK_INT_EQ(r.ret, 0);
  CHECK_DECISION(&r.d, "linux.maskedPaths", SR_DECISION_ENFORCED, "[]",
                 "[\"/proc/acpi\",\"/proc/asound\",\"/proc/kcore\",\"/proc/keys\","
                 "\"/proc/latency_stats\",\"/proc/timer_list\",\"/proc/timer_stats\","
                 "\"/proc/sched_debug\",\"/proc/scsi\",\"/sys/firmware\","
                 "\"/sys/devices/virtual/powercap\"]");
  /* A union without duplicates ("/proc/sys/" is /proc/sys). */
  CHECK_DECISION(&r.d, "linux.readonlyPaths", SR_DECISION_ENFORCED, "[\"/proc/sys/\",\"/proc/x\"]",
                 "[\"/proc/sys/\",\"/proc/x\",\"/proc/bus\",\"/proc/fs\",\"/proc/irq\","
                 "\"/proc/sysrq-trigger\"]");
  if (r.c) {
    CHECK_INT_EQ(r.c->linux_.n_masked_paths, 11);
    CHECK_INT_EQ(r.c->linux_.n_readonly_paths, 6);
    CHECK(r.c->linux_.masked_paths[11] == NULL);
    CHECK(r.c->linux_.readonly_paths[6] == NULL);
  }
  run_done(&r);
}

/* ---------------------------------------------------------------------------------------------
 * 7. Host namespaces
 */

static void host_pid_ipc_uts_and_cgroup_namespaces_become_new_ones(void)
{
  struct host h;
  struct run r;
  struct sr_policy_facts *f = benign_host(&h);
  f->ns[SR_NS_UTS].is_host = true;
  run_apply(&r, profile("default"), CONFIG_WITH("linux", linux_with_namespaces(JSON([
                                                  {"type": "mount"}, {"type": "network"},
                                                  {"type": "uts", "path": "/proc/1/ns/uts"}
                                                ]))),
            f);
  CHECK_INT_EQ(r.ret, 0);
  CHECK_DECISION(&r.d, "linux.namespaces.pid", SR_DECISION_ENFORCED, "\"host\"", "\"new\"");
  CHECK_DECISION(&r.d, "linux.namespaces.ipc", SR_DECISION_ENFORCED, "\"host\"", "\"new\"");
  CHECK_DECISION(&r.d, "linux.namespaces.cgroup", SR_DECISION_ENFORCED, "\"host\"", "\"new\"");
  CHECK_DECISION(&r.d, "linux.namespaces.uts", SR_DECISION_ENFORCED, "\"/proc/1/ns/uts\"",
                 "\"new\"");
  const struct sr_decision *d = decision(&r.d, "linux.namespaces.pid");
  CHECK(d &&
        strcmp(d->reason, "the host's pid namespace is replaced by a new one "
                          "(profiles.default.namespaces.allowHost does not list \"pid\")") == 0);
  if (r.c) {
    for (int k = SR_NS_MOUNT; k <= SR_NS_CGROUP; k++) {
      CHECK(ns_present(r.c, k));
      CHECK(r.c->linux_.namespaces[k].path == NULL);
    }
  }
  run_done(&r);

  /* A profile may keep the host's pid namespace (a monitoring agent). */
  struct sr_policy *pol =
      policy_of(policy_with_profile(JSON({"namespaces": {"allowHost": ["pid"]}})));
  if (pol) {
    run_apply(&r, sr_policy_profile(pol, "p"),
              CONFIG_WITH("linux", linux_with_namespaces(JSON([
                            {"type": "mount"}, {"type": "network"}, {"type": "ipc"},
                            {"type": "uts"}, {"type": "cgroup"}
                          ]))),
              benign_host(&h));
    CHECK_INT_EQ(r.ret, 0);
    CHECK_DECISION(&r.d, "linux.namespaces.pid", SR_DECISION_ALLOWED, "\"host\"", "\"host\"");
    if (r.c)
      CHECK(!ns_present(r.c, SR_NS_PID));
    run_done(&r);
    sr_policy_free(pol);
  }
}

static void joining_a_namespace_that_is_no_containers_is_refused(void)
{
  struct host h;
  struct run r;
  run_apply(
      &r, profile("default"),
      CONFIG_WITH("linux", linux_with_namespaces(JSON([
                    {"type": "mount"}, {"type": "network"}, {"type": "ipc"}, {"type": "uts"},
                    {"type": "cgroup"}, {"type": "pid", "path": "/proc/777/ns/pid"}
                  ]))),
      benign_host(&h));
  CHECK_REFUSED(&r, "linux.namespaces.pid",
                "linux.namespaces.pid: path \"/proc/777/ns/pid\" is no seerun container's "
                "namespace; joining it is not allowed by profile \"default\" "
                "(profiles.default.namespaces.allowJoin does not list \"pid\")");
  run_done(&r);

  struct sr_policy_facts *f = benign_host(&h);
  f->ns[SR_NS_MOUNT].is_host = true;
  run_apply(
      &r, profile("default"),
      CONFIG_WITH("linux", linux_with_namespaces(JSON([
                    {"type": "mount", "path": "/proc/1/ns/mnt"}, {"type": "network"},
                    {"type": "pid"}, {"type": "ipc"}, {"type": "uts"}, {"type": "cgroup"}
                  ]))),
      f);
  CHECK_REFUSED(&r, "linux.namespaces.mount",
                "linux.namespaces.mount: path \"/proc/1/ns/mnt\" is the host's mount namespace, "
                "which no profile allows");
  run_done(&r);
}

/* ---------------------------------------------------------------------------------------------
 * 8, 12. Bind mounts, /proc paths
 */

/* Issue 13, classes 5, 7, 8: the facts say what the object is and where it lies; the policy
 * refuses sockets, FIFOs, daemon socket directories and multiply-linked files unless the
 * profile's mounts.allowSockets / mounts.allowHardLinks list them, and judges root.path like a
 * bind source. */
static void host_objects_are_judged_by_what_they_are(void)
{
  struct host h;
  struct run r;
  const char *one_bind =
      CONFIG_WITH("mounts", JSON([{"destination": "/x", "type": "bind", "source": "/srv/x",
                                   "options": ["bind"]}]));
  struct sr_policy_facts *f = benign_host(&h);
  h.mounts[0].resolved = "/srv/x";
  h.mounts[0].is_socket = true;
  APPLY_REFUSED(&r, profile("default"), one_bind, f, "mounts[0].source",
                "mounts[0].source: \"/srv/x\" is a unix socket: it would connect the container to "
                "a host process (profiles.default.mounts.allowSockets lists the directories whose "
                "sockets and FIFOs may be bound)");
  f = benign_host(&h);
  h.mounts[0].resolved = "/srv/x";
  h.mounts[0].is_fifo = true;
  APPLY_REFUSED(&r, profile("default"), one_bind, f, "mounts[0].source",
                "mounts[0].source: \"/srv/x\" is a FIFO: it would connect the container to "
                "a host process (profiles.default.mounts.allowSockets lists the directories whose "
                "sockets and FIFOs may be bound)");
  f = benign_host(&h);
  h.mounts[0].resolved = "/srv/x";
  h.mounts[0].socket_dir = "/run/dbus";
  APPLY_REFUSED(&r, profile("default"), one_bind, f, "mounts[0].source",
                "mounts[0].source: \"/srv/x\" is, contains or is below the daemon socket directory "
                "\"/run/dbus\": it would connect the container to host daemons "
                "(profiles.default.mounts.allowSockets lists the directories that may be bound)");
  f = benign_host(&h);
  h.mounts[0].resolved = "/srv/x";
  h.mounts[0].hard_links = 2;
  h.mounts[0].hard_link_tree = "/root";
  APPLY_REFUSED(&r, profile("default"), one_bind, f, "mounts[0].source",
                "mounts[0].source: \"/srv/x\" is a regular file with 2 hard links on the "
                "filesystem of the denied host path \"/root\": another of its names may lie "
                "below it (profiles.default.mounts.allowHardLinks lists paths that may be bound "
                "anyway)");
  f = benign_host(&h);
  h.mounts[0].resolved = "/srv/x";
  h.mounts[0].location_unknown = true;
  APPLY_REFUSED(&r, profile("default"), one_bind, f, "mounts[0].source",
                "mounts[0].source: \"/srv/x\": where it lies in its filesystem cannot be told "
                "(deleted, or outside the runtime's root), so it cannot be told apart from a "
                "denied host path");

  /* The knobs allow them by the object's own name (not the config's). */
  struct sr_policy *pol = policy_of(policy_with_profile(
      "{\"mounts\": {\"allowSockets\": [\"/srv\"], \"allowHardLinks\": [\"/srv/x\"]}}"));
  const struct sr_policy_profile *p = pol ? sr_policy_profile(pol, "p") : NULL;
  CHECK(p != NULL);
  f = benign_host(&h);
  h.mounts[0].resolved = "/srv/x";
  h.mounts[0].is_socket = true;
  run_apply(&r, p, one_bind, f);
  CHECK_INT_EQ(r.ret, 0);
  CHECK_DECISION(&r.d, "mounts[0].source", SR_DECISION_ALLOWED, NULL, NULL);
  run_done(&r);
  f = benign_host(&h);
  h.mounts[0].resolved = "/srv/x";
  h.mounts[0].hard_links = 3;
  run_apply(&r, p, one_bind, f);
  CHECK_INT_EQ(r.ret, 0);
  run_done(&r);
  f = benign_host(&h);
  h.mounts[0].resolved = "/elsewhere/x"; /* the name config.json gives does not count */
  h.mounts[0].is_socket = true;
  run_apply(&r, p, one_bind, f);
  CHECK_INT_EQ(r.ret, -1);
  run_done(&r);
  if (pol)
    sr_policy_free(pol);
  POLICY_REFUSED(policy_with_profile("{\"mounts\": {\"allowSockets\": [\"run/x\"]}}"),
                 "policy.json: profiles.p.mounts.allowSockets[0]: must be a clean absolute path, "
                 "got \"run/x\"");

  /* root.path: like a bind source. */
  f = benign_host(&h);
  h.facts.have_root = true;
  h.facts.root.resolved = "/";
  h.facts.root.source_denied = true;
  h.facts.root.denied_path = "/";
  APPLY_REFUSED(&r, profile("default"), CLEAN_CONFIG, f, "root.path",
                "root.path: \"rootfs\" is or contains the denied host path \"/\"");
  f = benign_host(&h);
  h.facts.have_root = true;
  h.facts.root.resolved = "/srv/bundle/rootfs";
  h.facts.root_idmappable = "the bundle";
  run_apply(&r, profile("default"), CLEAN_CONFIG, f);
  CHECK_INT_EQ(r.ret, 0);
  CHECK_DECISION(&r.d, "root.path", SR_DECISION_ALLOWED, "\"rootfs\"", NULL);
  CHECK(r.d.rootfs_idmap);
  run_done(&r);
  /* A host directory outside the bundle and rootfs.idmapPaths: mounted, never idmapped (the
   * container's root would be on-disk root there). */
  f = benign_host(&h);
  h.facts.have_root = true;
  h.facts.root.resolved = "/srv/secrets";
  run_apply(&r, profile("default"), CLEAN_CONFIG, f);
  CHECK_INT_EQ(r.ret, 0);
  CHECK(!r.d.rootfs_idmap);
  const struct sr_decision *nd = NULL;
  for (size_t i = 0; i < r.d.n; i++)
    if (strcmp(r.d.list[i].field, "root.path") == 0 && r.d.list[i].kind == SR_DECISION_ENFORCED)
      nd = &r.d.list[i];
  CHECK(nd && strcmp(nd->applied, "\"not idmapped\"") == 0 &&
        strstr(nd->reason, "rootfs.idmapPaths"));
  run_done(&r);
}

static void a_bind_of_a_denied_host_path_is_refused(void)
{
  struct host h;
  struct run r;
  struct sr_policy_facts *f = benign_host(&h);
  h.mounts[1].source_denied = true;
  h.mounts[1].denied_path = "/etc/seerun";
  APPLY_REFUSED(&r, profile("default"),
                CONFIG_WITH("mounts", JSON([
                              {"destination": "/proc", "type": "proc", "source": "proc"}, {
                                "destination": "/host",
                                "type": "bind",
                                "source": "/",
                                "options": ["rbind", "rw"]
                              }
                            ])),
                f,
                "mounts[1].source",
                "mounts[1].source: \"/\" is or contains the denied host path \"/etc/seerun\"");

  /* Without facts nothing is known about the host: a bind is refused, not assumed safe. */
  run_apply(
      &r, profile("default"),
      CONFIG_WITH(
          "mounts", JSON([
            {"destination": "/data", "type": "bind", "source": "/srv/data", "options": ["bind"]}
          ])),
      NULL);
  CHECK_REFUSED(&r, "mounts[0].source",
                "mounts[0].source: \"/srv/data\": no host facts were computed for this bind "
                "(runtime error)");
  run_done(&r);

  f = benign_host(&h);
  h.mounts[0].source_is_symlink_out = true;
  run_apply(
      &r, profile("default"),
      CONFIG_WITH(
          "mounts", JSON([
            {"destination": "/data", "type": "bind", "source": "data", "options": ["bind"]}
          ])),
      f);
  CHECK_REFUSED(&r, "mounts[0].source",
                "mounts[0].source: \"data\" resolves through a symbolic link that leads out of "
                "the directory it names");
  run_done(&r);

  APPLY_REFUSED(&r, profile("default"), CONFIG_WITH("mounts", JSON([{
                                                      "destination": "/data",
                                                      "type": "bind",
                                                      "source": "rootfs/../../etc",
                                                      "options": ["bind"]
                                                    }])),
                benign_host(&h),
                "mounts[0].source",
                "mounts[0].source: \"rootfs/../../etc\": a source relative to the bundle must "
                "not contain \"..\"");
}

/* Mapping ids is granting them: a mount line "containerID hostID size" lets a process holding
 * host id hostID+k act on disk as containerID+k. */
#define USERNS_LINUX(uid_maps)                                                                     \
  "{\"namespaces\": [{\"type\": \"mount\"}, {\"type\": \"user\"}, {\"type\": \"network\"}],"     \
  " \"uidMappings\": " uid_maps ", \"gidMappings\": " uid_maps "}"
#define OWN_MAPS "[{\"containerID\": 0, \"hostID\": 200000, \"size\": 65536}]"
#define IDMAP_BIND(maps)                                                                           \
  "[{\"destination\": \"/proc\", \"type\": \"proc\", \"source\": \"proc\"},"                     \
  " {\"destination\": \"/v\", \"type\": \"bind\", \"source\": \"/srv/v\","                       \
  "  \"options\": [\"rbind\", \"ro\", \"idmap\"]" maps "}]"

static void an_idmapped_bind_may_only_let_the_container_act_as_ids_it_holds(void)
{
  struct host h;
  struct run r;
  struct sr_policy_facts *f = benign_host(&h);
  /* "idmap" without mappings, read-only too: the container's own namespace, on-disk 0 is its
   * root. */
  APPLY_REFUSED(&r, profile("default"),
                CONFIG_WITH("linux", USERNS_LINUX(OWN_MAPS), "mounts", IDMAP_BIND("")), f,
                "mounts[1].options",
                "mounts[1].options: an idmapped bind of \"/srv/v\" lets the container act as "
                "on-disk uid 0, outside the host ids its user namespace maps: not allowed by "
                "profile \"default\" (no directory of profiles.default.mounts.idmappable is "
                "above the source)");
  /* Explicit mappings onto the container's root, the other way round from "host id 0". */
  APPLY_REFUSED(&r, profile("default"),
                CONFIG_WITH("linux", USERNS_LINUX(OWN_MAPS), "mounts",
                            IDMAP_BIND(", \"uidMappings\": " OWN_MAPS ", \"gidMappings\": " OWN_MAPS)),
                f, "mounts[1].uidMappings",
                "mounts[1].uidMappings: an idmapped bind of \"/srv/v\" lets the container act "
                "as on-disk uid 0, outside the host ids its user namespace maps: not allowed by "
                "profile \"default\" (no directory of profiles.default.mounts.idmappable is "
                "above the source)");
  /* Part of a range: the first id outside is named. */
  APPLY_REFUSED(&r, profile("default"),
                CONFIG_WITH("linux", USERNS_LINUX(OWN_MAPS), "mounts",
                            IDMAP_BIND(", \"uidMappings\": [{\"containerID\": 200010, "
                                       "\"hostID\": 200000, \"size\": 65536}], "
                                       "\"gidMappings\": [{\"containerID\": 200000, "
                                       "\"hostID\": 200000, \"size\": 65536}]")),
                f, "mounts[1].uidMappings",
                "mounts[1].uidMappings: an idmapped bind of \"/srv/v\" lets the container act "
                "as on-disk uid 265536, outside the host ids its user namespace maps: not "
                "allowed by profile \"default\" (no directory of "
                "profiles.default.mounts.idmappable is above the source)");
  /* No user namespace in the config: its host ids are seerun's to choose; only identity. */
  APPLY_REFUSED(&r, profile("default"),
                CONFIG_WITH("mounts", IDMAP_BIND(", \"uidMappings\": [{\"containerID\": 0, "
                                                 "\"hostID\": 1073741824, \"size\": 65536}], "
                                                 "\"gidMappings\": [{\"containerID\": 0, "
                                                 "\"hostID\": 1073741824, \"size\": 65536}]")),
                f, "mounts[1].uidMappings",
                "mounts[1].uidMappings: an idmapped bind of \"/srv/v\" lets the container act "
                "as on-disk uid 0, and its host ids are not in config.json (then only identity "
                "mappings are allowed): not allowed by profile \"default\" (no directory of "
                "profiles.default.mounts.idmappable is above the source)");
  /* Identity over its own range; a mount that only shifts within it. */
  run_apply(&r, profile("default"),
            CONFIG_WITH("linux",
                        USERNS_LINUX("[{\"containerID\": 0, \"hostID\": 200000, \"size\": 100},"
                                     " {\"containerID\": 100, \"hostID\": 200100, \"size\": 100}]"),
                        "mounts",
                        IDMAP_BIND(", \"uidMappings\": [{\"containerID\": 200050, "
                                   "\"hostID\": 200000, \"size\": 150}], "
                                   "\"gidMappings\": [{\"containerID\": 200000, "
                                   "\"hostID\": 200000, \"size\": 200}]")),
            f);
  CHECK_INT_EQ(r.ret, 0);
  CHECK(decision(&r.d, "mounts[1].uidMappings") != NULL &&
        decision(&r.d, "mounts[1].uidMappings")->kind == SR_DECISION_ALLOWED);
  run_done(&r);
  /* Below a directory the profile lists, anything: the fact says so. */
  h.mounts[1].idmappable = "/var/lib/containers/storage/volumes";
  run_apply(&r, profile("default"),
            CONFIG_WITH("linux", USERNS_LINUX(OWN_MAPS), "mounts", IDMAP_BIND("")), f);
  CHECK_INT_EQ(r.ret, 0);
  const struct sr_decision *d = decision(&r.d, "mounts[1].options");
  for (size_t i = r.d.n; d && i-- > 0;)
    if (strcmp(r.d.list[i].field, "mounts[1].options") == 0 &&
        strcmp(r.d.list[i].asked, "\"idmap\"") == 0)
      d = &r.d.list[i];
  CHECK(d != NULL && d->kind == SR_DECISION_ALLOWED &&
        strstr(d->reason, "profiles.default.mounts.idmappable") != NULL);
  run_done(&r);
}

static void every_bind_gets_nosuid_and_nodev(void)
{
  struct host h;
  struct run r;
  run_apply(&r, profile("default"),
            CONFIG_WITH("mounts", JSON([
                          {
                            "destination": "/a",
                            "type": "bind",
                            "source": "/srv/a",
                            "options": ["bind", "ro", "suid", "dev"]
                          },
                          {
                            "destination": "/b",
                            "type": "bind",
                            "source": "/srv/b",
                            "options": ["rbind", "rprivate"]
                          },
                          {
                            "destination": "/c",
                            "type": "bind",
                            "source": "/srv/c",
                            "options": ["bind", "nosuid", "nodev", "noexec"]
                          },
                          {"destination": "/tmp", "type": "tmpfs", "source": "tmpfs"},
                          {"destination": "/var/tmp", "type": "tmpfs", "source": "tmpfs"},
                          {"destination": "/run", "type": "tmpfs", "source": "tmpfs"}
                        ])),
            benign_host(&h));
  CHECK_INT_EQ(r.ret, 0);
  CHECK_DECISION(&r.d, "mounts[0].options", SR_DECISION_ENFORCED,
                 "[\"bind\",\"ro\",\"suid\",\"dev\"]", "[\"bind\",\"ro\",\"nosuid\",\"nodev\"]");
  CHECK_DECISION(&r.d, "mounts[1].options", SR_DECISION_ENFORCED, "[\"rbind\",\"rprivate\"]",
                 "[\"rbind\",\"rprivate\",\"nosuid\",\"nodev\",\"rnosuid\",\"rnodev\"]");
  CHECK(decision(&r.d, "mounts[2].options") == NULL);
  CHECK_DECISION(&r.d, "mounts[2].source", SR_DECISION_ALLOWED, "\"/srv/c\"", NULL);
  if (r.c && r.c->n_mounts == 6) {
    const struct sr_mount *a = &r.c->mounts[0], *b = &r.c->mounts[1];
    CHECK_UINT_EQ(a->opts.flags & (MS_NOSUID | MS_NODEV | MS_RDONLY),
                  MS_NOSUID | MS_NODEV | MS_RDONLY);
    CHECK_UINT_EQ(a->opts.clear & (MS_NOSUID | MS_NODEV), 0);
    CHECK(a->opts.bind);
    CHECK_UINT_EQ(b->opts.rec_attr_set & (MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV),
                  MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
    CHECK(b->opts.rbind);
    CHECK_UINT_EQ(b->opts.propagation, MS_PRIVATE | MS_REC);
    CHECK_INT_EQ(b->n_options, 6);
  }
  run_done(&r);
}

static void binds_and_working_directories_through_proc_are_refused(void)
{
  struct host h;
  struct run r;
  APPLY_REFUSED(&r, profile("default"), CONFIG_WITH("mounts", JSON([{
                                                      "destination": "/x",
                                                      "type": "bind",
                                                      "source": "/proc/self/fd/3",
                                                      "options": ["bind"]
                                                    }])),
                benign_host(&h),
                "mounts[0].source",
                "mounts[0].source: \"/proc/self/fd/3\" is under /proc (or /dev/fd): a "
                "/proc/self/fd or /proc/<pid>/root path can reach the host's filesystem "
                "(CVE-2024-21626 class)");
  run_apply(&r, profile("default"), CONFIG_WITH("mounts", JSON([{
                                                  "destination": "/x",
                                                  "type": "bind",
                                                  "source": "//dev/../proc/1/root",
                                                  "options": ["bind"]
                                                }])),
            benign_host(&h));
  CHECK_INT_EQ(r.ret, -1);
  run_done(&r);

  run_apply(
      &r, profile("default"),
      CONFIG_WITH(
          "process",
          JSON({"user": {"uid": 0, "gid": 0}, "args": ["sh"], "cwd": "/proc/self/fd/3"})),
      benign_host(&h));
  CHECK_REFUSED(&r, "process.cwd",
                "process.cwd: \"/proc/self/fd/3\" is under /proc (or /dev/fd): a descriptor the "
                "runtime leaked there is a host directory (CVE-2024-21626)");
  run_done(&r);
  run_apply(
      &r, profile("default"),
      CONFIG_WITH("process",
                  JSON({"user": {"uid": 0, "gid": 0}, "args": ["sh"], "cwd": "/dev/fd/7/.."})),
      benign_host(&h));
  CHECK_INT_EQ(r.ret, -1);
  run_done(&r);
  /* Not merely a prefix: /procfs is an ordinary directory. */
  run_apply(&r, profile("default"), CONFIG_WITH("process", JSON({
                                                  "user": {"uid": 0, "gid": 0},
                                                  "args": ["sh"],
                                                  "cwd": "/procfs",
                                                  "noNewPrivileges": true
                                                })),
            benign_host(&h));
  CHECK_INT_EQ(r.ret, 0);
  run_done(&r);
}

static void a_filesystem_the_profile_does_not_list_is_refused(void)
{
  struct host h;
  struct run r;
  run_apply(
      &r, profile("default"),
      CONFIG_WITH("mounts",
                  JSON([{"destination": "/disk", "type": "ext4", "source": "/dev/sda1"}])),
      benign_host(&h));
  CHECK_REFUSED(&r, "mounts[0].type",
                "mounts[0].type: filesystem type \"ext4\" is not allowed by profile \"default\" "
                "(profiles.default.mounts.allowedTypes)");
  run_done(&r);
}

/* The masks name /proc and /sys: a second proc or sysfs elsewhere, or a bind of the host's
 * sysfs, would carry none of them (issue 13). */
static void proc_and_sysfs_exist_only_at_proc_and_sys(void)
{
  struct host h;
  struct run r;
  APPLY_REFUSED(&r, profile("default"),
                CONFIG_WITH("mounts", JSON([
                              {"destination": "/proc", "type": "proc", "source": "proc"},
                              {"destination": "/p2", "type": "proc", "source": "proc"}
                            ])),
                benign_host(&h), "mounts[1].destination",
                "mounts[1].destination: a proc filesystem at \"/p2\": proc is mounted only "
                "at /proc and sysfs only at /sys (profile \"default\": the masked and read-only "
                "paths name /proc and /sys, an instance elsewhere would carry none of them)");
  APPLY_REFUSED(&r, profile("default"),
                CONFIG_WITH("mounts", JSON([{"destination": "/sys/kernel/../kernel",
                                             "type": "sysfs", "source": "sysfs"}])),
                benign_host(&h), "mounts[0].destination",
                "mounts[0].destination: a sysfs filesystem at \"/sys/kernel\": proc "
                "is mounted only at /proc and sysfs only at /sys (profile \"default\": the "
                "masked and read-only paths name /proc and /sys, an instance elsewhere would "
                "carry none of them)");
  /* Their own places, however spelled; other types anywhere. */
  run_apply(&r, profile("default"),
            CONFIG_WITH("mounts", JSON([
                          {"destination": "/proc/", "type": "proc", "source": "proc"},
                          {"destination": "//sys/.", "type": "sysfs", "source": "sysfs"},
                          {"destination": "/c2", "type": "cgroup2", "source": "cgroup2"},
                          {"destination": "/m2", "type": "mqueue", "source": "mqueue"}
                        ])),
            benign_host(&h));
  CHECK_INT_EQ(r.ret, 0);
  run_done(&r);
  /* Permissive: recorded, not refused. */
  struct sr_policy_profile permissive = *profile("default");
  permissive.enforce = false;
  run_apply(&r, &permissive,
            CONFIG_WITH("mounts", JSON([{"destination": "/p2", "type": "proc", "source": "proc"}])),
            benign_host(&h));
  CHECK_INT_EQ(r.ret, 0);
  const struct sr_decision *d = decision(&r.d, "mounts[0].destination");
  CHECK(d && d->kind == SR_DECISION_ALLOWED && strcmp(d->reason, "permissive") == 0);
  run_done(&r);
  /* A bind whose source the runtime found on proc or sysfs. */
  struct sr_policy_facts *f = benign_host(&h);
  h.mounts[0].source_on_proc_or_sysfs = true;
  APPLY_REFUSED(&r, profile("default"),
                CONFIG_WITH("mounts", JSON([{"destination": "/fw", "type": "bind",
                                             "source": "/srv/fw", "options": ["rbind", "ro"]}])),
                f, "mounts[0].source",
                "mounts[0].source: \"/srv/fw\" is on the host's proc or sysfs filesystem: the "
                "masked and read-only paths name /proc and /sys, a view of it elsewhere would "
                "carry none of them");
}

/* ---------------------------------------------------------------------------------------------
 * 9. Devices
 */

static void an_allow_all_device_rule_is_narrowed_to_the_allowed_nodes(void)
{
  struct host h;
  struct run r;
  run_apply(&r, profile("default"),
            CONFIG_WITH("linux", JSON({
                          "namespaces": [
                            {"type": "mount"}, {"type": "pid"}, {"type": "ipc"},
                            {"type": "uts"}, {"type": "cgroup"}, {"type": "network"}
                          ],
                          "resources": {"devices": [{"allow": true, "access": "rwm"}]}
                        })),
            benign_host(&h));
  CHECK_INT_EQ(r.ret, 0);
  CHECK_DECISION(&r.d, "linux.resources.devices", SR_DECISION_ENFORCED, "[\"allow a *:* rwm\"]",
                 "[\"deny a *:* rwm\",\"allow c 1:3 rwm\",\"allow c 1:5 rwm\",\"allow c 1:7 rwm\","
                 "\"allow c 1:8 rwm\",\"allow c 1:9 rwm\",\"allow c 5:0 rwm\",\"allow c 5:1 rwm\","
                 "\"allow c 5:2 rwm\",\"allow c 136:* rwm\"]");
  if (r.c && r.c->linux_.resources) {
    CHECK_INT_EQ(r.c->linux_.resources->n_devices, 10);
    CHECK(!r.c->linux_.resources->devices[0].allow);
  }
  run_done(&r);

  /* Block devices and wildcards narrowed; deny rules and allowed nodes stay as they are. */
  run_apply(&r, profile("default"),
            CONFIG_WITH(
                "linux", JSON({
                  "namespaces": [
                    {"type": "mount"}, {"type": "pid"}, {"type": "ipc"}, {"type": "uts"},
                    {"type": "cgroup"}, {"type": "network"}
                  ],
                  "resources": {
                    "devices": [
                      {"allow": false, "access": "rwm"},
                      {"allow": true, "type": "b", "major": 8, "minor": 0, "access": "rw"},
                      {"allow": true, "type": "c", "major": 1, "access": "m"},
                      {"allow": true, "type": "c", "major": 136, "minor": 3, "access": "rwm"},
                      {"allow": false, "type": "c", "major": 1, "minor": 7, "access": "rwm"}
                    ]
                  }
                })),
            benign_host(&h));
  CHECK_INT_EQ(r.ret, 0);
  CHECK_DECISION(&r.d, "linux.resources.devices", SR_DECISION_ENFORCED, NULL,
                 "[\"deny a *:* rwm\",\"allow c 1:3 m\",\"allow c 1:5 m\",\"allow c 1:7 m\","
                 "\"allow c 1:8 m\",\"allow c 1:9 m\",\"allow c 136:3 rwm\","
                 "\"deny c 1:7 rwm\"]");
  run_done(&r);
}

static void a_device_the_profile_does_not_allow_is_refused(void)
{
  struct host h;
  struct run r;
  run_apply(&r, profile("default"),
            CONFIG_WITH("linux", private_linux(JSON(
                "devices": [{"type": "c", "path": "/dev/null2", "major": 1, "minor": 3},
                            {"type": "p", "path": "/dev/fifo"},
                            {"type": "b", "path": "/dev/sda", "major": 8, "minor": 0}]))),
            benign_host(&h));
  /* Dropping it would be a --device that silently is not there. */
  CHECK_REFUSED(&r, "linux.devices[2]",
                "linux.devices[2]: block device \"/dev/sda\" (b 8:0) is not allowed by profile "
                "\"default\" (profiles.default.devices.allowed)");
  CHECK_DECISION(&r.d, "linux.devices[0]", SR_DECISION_ALLOWED, "\"/dev/null2 (c 1:3)\"", NULL);
  run_done(&r);

  const char *fuse = JSON("devices": [{"type": "c", "path": "/dev/fuse", "major": 10, "minor": 229}]);
  APPLY_REFUSED(&r, profile("default"), CONFIG_WITH("linux", private_linux(fuse)), benign_host(&h),
                "linux.devices[0]",
                "linux.devices[0]: character device \"/dev/fuse\" (c 10:229) is not allowed by "
                "profile \"default\" (profiles.default.devices.allowed)");
  run_apply(&r, class_profile("trusted-internal"), CONFIG_WITH("linux", private_linux(fuse)),
            benign_host(&h));
  CHECK_INT_EQ(r.ret, 0);
  run_done(&r);
}

/* ---------------------------------------------------------------------------------------------
 * 10. Resources
 */

/* Missing limits get the profile's, high ones its ceiling (pids, memory, memory+swap, CPU, and
 * the same through unified, which is written last and would win); within the bounds, as asked. */
struct limit_case {
  const char *name, *profile, *linux_rest;
  struct {
    const char *field;
    enum sr_decision_kind kind;
    const char *asked, *applied;
  } want[4];
  const char *no_decision;       /* a field left alone */
  int64_t pids, memory, quota;   /* the config's values after: 0 for not checked */
  uint64_t period;
  const char *unified0;          /* unified_values[0] after: NULL for not checked */
  bool no_quota;                 /* no CPU limit at all */
};

static const struct limit_case limit_cases[] = {
    {"missing limits get the profile's", "default", "",
     {{"linux.resources.pids.limit", SR_DECISION_ENFORCED, "null", "4096"},
      {"linux.resources.memory.limit", SR_DECISION_ENFORCED, "null", "4294967296"}},
     NULL, 4096, INT64_C(4) << 30, 0, 0, NULL, false},
    {"high limits get the ceiling, also through unified", "network-service",
     JSON("resources": {"pids": {"limit": -1}, "memory": {"limit": 107374182400},
                        "unified": {"pids.max": "max", "memory.max": "1000", "memory.high": "max"}}),
     {{"linux.resources.pids.limit", SR_DECISION_ENFORCED, "-1", "4096"},
      {"linux.resources.memory.limit", SR_DECISION_ENFORCED, "107374182400", "68719476736"},
      {"linux.resources.unified.pids.max", SR_DECISION_ENFORCED, "\"max\"", "4096"},
      {"linux.resources.unified.memory.max", SR_DECISION_ALLOWED, "\"1000\"", NULL}},
     "linux.resources.unified.memory.high", 0, INT64_C(64) << 30, 0, 0, "4096", false},
    /* memory+swap below the default: the limit becomes it, the kernel refusing a swap limit
     * below the memory limit. */
    {"a swap limit below the default lowers the memory limit", "default",
     JSON("resources": {"memory": {"swap": 1073741824}}),
     {{"linux.resources.memory.limit", SR_DECISION_ENFORCED, "null", "1073741824"}},
     NULL, 0, 0, 0, 0, NULL, false},
    {"no CPU quota gets the default CPUs' worth per period", "untrusted-user-code", "",
     {{"linux.resources.cpu.quota", SR_DECISION_ENFORCED, "null", "100000"},
      {"linux.resources.pids.limit", SR_DECISION_ENFORCED, "null", "256"}},
     NULL, 0, 0, 100000, 100000, NULL, false},
    /* 5 CPUs lowered to the ceiling, 2, in the config's own period. */
    {"a CPU quota above the ceiling is lowered, also through cpu.max", "untrusted-user-code",
     JSON("resources": {"cpu": {"quota": 250000, "period": 50000},
                        "unified": {"cpu.max": "max 100000"}}),
     {{"linux.resources.cpu.quota", SR_DECISION_ENFORCED, "250000", "100000"},
      {"linux.resources.unified.cpu.max", SR_DECISION_ENFORCED, "\"max 100000\"",
       "\"100000 100000\""}},
     NULL, 0, 0, 100000, 50000, "100000 100000", false},
    {"a CPU quota within the bounds is as asked", "untrusted-user-code",
     JSON("resources": {"cpu": {"quota": 150000}}),
     {{"linux.resources.cpu.quota", SR_DECISION_ALLOWED, "150000", NULL}},
     NULL, 0, 0, 0, 0, NULL, false},
    {"a profile without the CPU knob sets no CPU limit", "default", "",
     {{"linux.resources.cpu.quota", SR_DECISION_ALLOWED, "null", NULL}},
     NULL, 0, 0, 0, 0, NULL, true},
};

static void limits_are_floored_and_capped(void)
{
  for (size_t i = 0; i < sizeof(limit_cases) / sizeof(limit_cases[0]); i++) {
    const struct limit_case *lc = &limit_cases[i];
    unit_current = lc->name;
    struct host h;
    struct run r;
    run_apply(&r, profile(lc->profile), CONFIG_WITH("linux", private_linux(lc->linux_rest)),
              benign_host(&h));
    CHECK_INT_EQ(r.ret, 0);
    for (size_t k = 0; k < 4 && lc->want[k].field; k++)
      CHECK_DECISION(&r.d, lc->want[k].field, lc->want[k].kind, lc->want[k].asked,
                     lc->want[k].applied);
    if (lc->no_decision)
      CHECK(decision(&r.d, lc->no_decision) == NULL);
    const struct sr_resources *res = r.c ? r.c->linux_.resources : NULL;
    CHECK(res != NULL);
    if (res && lc->pids) {
      CHECK(res->pids_limit.set);
      CHECK_INT_EQ(res->pids_limit.v, lc->pids);
    }
    if (res && lc->memory)
      CHECK_INT_EQ(res->memory.limit.v, lc->memory);
    if (res && lc->quota)
      CHECK_INT_EQ(res->cpu.quota.v, lc->quota);
    if (res && lc->period)
      CHECK_UINT_EQ(res->cpu.period.v, lc->period);
    if (res && lc->unified0)
      CHECK_STR_EQ(res->unified_values ? res->unified_values[0] : NULL, lc->unified0);
    if (res && lc->no_quota)
      CHECK(!res->cpu.quota.set);
    run_done(&r);
  }
}

/* update is refused a CPU limit above the ceiling, or none at all. */
static void an_update_cannot_lift_the_cpu_ceiling(void)
{
  const struct sr_policy_profile *p = profile("untrusted-user-code");
  if (p == NULL)
    return;
  struct sr_arena a = {0};
  struct sr_decisions d = {0};
  sr_error_t err = NULL;
  struct sr_resources req = {0}, applied = {0};
  req.cpu.quota = (sr_opt_i64){true, 300000};
  CHECK(sr_policy_apply_update_check(p, &a, &req, &applied, &d, &err) < 0);
  CHECK_ERR_CONTAINS(err, "update: linux.resources.cpu.quota: 300000 us per 100000 us is 3 CPUs, "
                          "above the ceiling of profile \"untrusted-user-code\" "
                          "(profiles.untrusted-user-code.resources.cpu.max is 2)");
  sr_error_free(&err);
  d = (struct sr_decisions){0};
  memset(&req, 0, sizeof(req));
  req.cpu.quota = (sr_opt_i64){true, -1};
  CHECK(sr_policy_apply_update_check(p, &a, &req, &applied, &d, &err) < 0);
  CHECK_ERR_CONTAINS(err, "the CPU limit cannot be removed");
  sr_error_free(&err);
  d = (struct sr_decisions){0};
  memset(&req, 0, sizeof(req));
  req.cpu.quota = (sr_opt_i64){true, 150000};
  CHECK_OK(sr_policy_apply_update_check(p, &a, &req, &applied, &d, &err), err);
  sr_error_free(&err);
  sr_arena_release(&a);
}

static void an_update_cannot_lift_a_limit_above_the_ceiling(void)
{
  const struct sr_policy_profile *p = profile("network-service");
  if (p == NULL)
    return;
  struct sr_arena a = {0};
  struct sr_decisions d = {0};
  sr_error_t err = NULL;
  struct sr_resources req = {0}, applied = {0};
  req.memory.limit = (sr_opt_i64){true, INT64_C(100) << 30};
  CHECK(sr_policy_apply_update_check(p, &a, &req, &applied, &d, &err) < 0);
  CHECK_ERR_CONTAINS(err, "update: linux.resources.memory.limit: 107374182400 is above the "
                          "ceiling of profile \"network-service\" "
                          "(profiles.network-service.resources.memory.max is 68719476736)");
  CHECK(d.n == 1 && d.list[0].kind == SR_DECISION_REFUSED);
  sr_error_free(&err);

  /* Removing a limit the profile requires is lifting it. */
  d = (struct sr_decisions){0};
  memset(&req, 0, sizeof(req));
  req.pids_limit = (sr_opt_i64){true, -1};
  CHECK(sr_policy_apply_update_check(p, &a, &req, &applied, &d, &err) < 0);
  CHECK_ERR_CONTAINS(err, "update: linux.resources.pids.limit: the limit cannot be removed "
                          "(profile \"network-service\" requires one: "
                          "profiles.network-service.resources.pids.default)");
  sr_error_free(&err);

  /* An allow-all device rule in an update. */
  d = (struct sr_decisions){0};
  memset(&req, 0, sizeof(req));
  struct sr_device_rule all = {true, 'a', -1, -1, "rwm"};
  req.devices = &all;
  req.n_devices = 1;
  CHECK(sr_policy_apply_update_check(p, &a, &req, &applied, &d, &err) < 0);
  CHECK_ERR_CONTAINS(err, "update: linux.resources.devices[0]: an allow rule beyond profile "
                          "\"network-service\" (profiles.network-service.devices.allowed)");
  sr_error_free(&err);

  /* Within the ceiling: applied as asked. */
  d = (struct sr_decisions){0};
  memset(&req, 0, sizeof(req));
  req.memory.limit = (sr_opt_i64){true, INT64_C(8) << 30};
  req.pids_limit = (sr_opt_i64){true, 2000};
  req.cpu.shares = (sr_opt_u64){true, 512};
  CHECK_OK(sr_policy_apply_update_check(p, &a, &req, &applied, &d, &err), err);
  CHECK_INT_EQ(applied.memory.limit.v, INT64_C(8) << 30);
  CHECK_INT_EQ(applied.pids_limit.v, 2000);
  CHECK_UINT_EQ(applied.cpu.shares.v, 512);
  CHECK_INT_EQ(d.n, 2);
  CHECK_INT_EQ(count_kind(&d, SR_DECISION_ALLOWED), 2);
  sr_error_free(&err);

  /* Permissive: recorded, not refused. */
  d = (struct sr_decisions){0};
  memset(&req, 0, sizeof(req));
  req.memory.limit = (sr_opt_i64){true, -1};
  struct sr_policy *pol = policy_of(policy_with_profile(JSON({"enforce": false})));
  if (pol) {
    CHECK_OK(sr_policy_apply_update_check(sr_policy_profile(pol, "p"), &a, &req, &applied, &d, &err),
             err);
    CHECK(d.n == 1 && d.list[0].kind == SR_DECISION_ALLOWED &&
          strcmp(d.list[0].reason, "permissive") == 0);
    sr_policy_free(pol);
  }
  sr_error_free(&err);
  sr_arena_release(&a);
}

/* ---------------------------------------------------------------------------------------------
 * 11. Sysctls
 */

static void only_namespaced_sysctls_on_the_allowlist_pass(void)
{
  struct host h;
  struct run r;
  char linux_[4096];
  run_parse(&r, CONFIG_WITH("linux", private_linux(JSON(
                                         "sysctl": {"net.ipv4.ip_forward": "1", "kernel/shmmax": "1000"}))));
  if (r.c)
    add_sysctl(r.c, "kernel.core_pattern", "|/tmp/x");
  run_policy(&r, profile("default"), benign_host(&h));
  CHECK_REFUSED(&r, "linux.sysctl.kernel.core_pattern",
                "linux.sysctl.kernel.core_pattern: not allowed by profile \"default\" "
                "(profiles.default.sysctls.allowed)");
  CHECK_DECISION(&r.d, "linux.sysctl.net.ipv4.ip_forward", SR_DECISION_ALLOWED, "\"1\"", NULL);
  CHECK_DECISION(&r.d, "linux.sysctl.kernel/shmmax", SR_DECISION_ALLOWED, "\"1000\"", NULL);
  run_done(&r);

  /* Namespaced, but not on this profile's list. */
  APPLY_REFUSED(&r, profile("default"),
                CONFIG_WITH("linux", private_linux(JSON("sysctl": {"kernel.domainname": "example.org"}))),
                benign_host(&h),
                "linux.sysctl.kernel.domainname",
                "linux.sysctl.kernel.domainname: not allowed by profile \"default\" "
                "(profiles.default.sysctls.allowed)");
  APPLY_REFUSED(&r, profile("untrusted-user-code"),
                CONFIG_WITH("linux", private_linux(JSON(
                                         "sysctl": {"net.ipv4.ping_group_range": "0 0", "kernel.shmmax": "1000"}))),
                benign_host(&h),
                "linux.sysctl.kernel.shmmax",
                "linux.sysctl.kernel.shmmax: not allowed by profile "
                "\"untrusted-user-code\" (profiles.untrusted-user-code.sysctls.allowed)");

  /* net.* would change the host's when the container joins the host's network namespace (a
   * profile may allow that), kernel.shm* likewise with the host's ipc namespace. */
  struct sr_policy *pol = policy_of(policy_with_profile(JSON(
      {"network": {"allow": true, "allowHost": true}, "namespaces": {"allowHost": ["ipc"]}})));
  if (pol) {
    struct sr_policy_facts *f = benign_host(&h);
    f->ns[SR_NS_NET].is_host = true;
    f->ns[SR_NS_IPC].is_host = true;
    snprintf(linux_, sizeof(linux_),
             "{\"namespaces\": [{\"type\": \"mount\"}, {\"type\": \"network\", \"path\": "
             "\"/proc/1/ns/net\"}, {\"type\": \"ipc\"}], \"sysctl\": {\"net.ipv4.ip_forward\": "
             "\"1\"}}");
    run_apply(&r, sr_policy_profile(pol, "p"), CONFIG_WITH("linux", linux_), f);
    CHECK_DECISION(&r.d, "linux.namespaces.network", SR_DECISION_ALLOWED, "\"/proc/1/ns/net\"",
                   NULL);
    CHECK_REFUSED(&r, "linux.sysctl.net.ipv4.ip_forward",
                  "linux.sysctl.net.ipv4.ip_forward: needs the container's own network namespace "
                  "(it would change the host's)");
    run_done(&r);
    snprintf(linux_, sizeof(linux_),
             "{\"namespaces\": [{\"type\": \"mount\"}, {\"type\": \"network\"}, {\"type\": "
             "\"ipc\", \"path\": \"/proc/1/ns/ipc\"}], \"sysctl\": {\"fs.mqueue.msg_max\": "
             "\"100\"}}");
    APPLY_REFUSED(&r, sr_policy_profile(pol, "p"), CONFIG_WITH("linux", linux_), f,
                  "linux.sysctl.fs.mqueue.msg_max",
                  "linux.sysctl.fs.mqueue.msg_max: needs the container's own ipc namespace (it "
                  "would change the host's)");
    sr_policy_free(pol);
  }
}

/* ---------------------------------------------------------------------------------------------
 * 13. Hooks
 */

static void a_hook_not_on_a_trusted_path_is_refused(void)
{
  struct host h;
  struct run r;
  struct sr_policy *pol = policy_of(policy_with_profile(
      JSON({"hooks": {"allowedPaths": ["/usr/libexec/oci/hook", "/tmp/evil"]}})));
  if (pol == NULL)
    return;
  struct sr_policy_facts *f = benign_host(&h);
  h.hooks[SR_HOOK_CREATE_RUNTIME][1].trusted_path = false;
  h.hooks[SR_HOOK_CREATE_RUNTIME][1].untrusted = "it is in the bundle";
  run_apply(
      &r, sr_policy_profile(pol, "p"),
      CONFIG_WITH(
          "hooks", JSON({
            "createRuntime":
                [{"path": "/usr/libexec/oci/hook"}, {"path": "/tmp/evil", "args": ["evil"]}]
          })),
      f);
  /* Listed, but not trusted: the place, not the list, says it is the tenant's. */
  CHECK_REFUSED(&r, "hooks.createRuntime[1].path",
                "hooks.createRuntime[1].path: \"/tmp/evil\" is not on a trusted path (a "
                "root-owned file in root-owned directories no other user can write, outside the "
                "bundle and the rootfs): it is in the bundle");
  CHECK_DECISION(&r.d, "hooks.createRuntime[0].path", SR_DECISION_ALLOWED,
                 "\"/usr/libexec/oci/hook\"", NULL);
  run_done(&r);
  sr_policy_free(pol);
}

static void only_the_hooks_a_profile_lists_run(void)
{
  struct host h;
  struct run r;
  /* No allowedPaths: no hook runs, trusted or not; the refusal says how to allow one. */
  run_apply(&r, class_profile("trusted-internal"),
            CONFIG_WITH("hooks", JSON({"prestart": [{"path": "/usr/bin/nvidia-hook"}]})),
            benign_host(&h));
  CHECK_REFUSED(&r, "hooks.prestart[0].path",
                "hooks.prestart[0].path: \"/usr/bin/nvidia-hook\" is not allowed by profile "
                "\"trusted-internal\" (to allow it, list the file in "
                "profiles.trusted-internal.hooks.allowedPaths, as a path or as {\"path\": ..., "
                "\"args\": [...]} to constrain its arguments)");
  run_done(&r);

  struct sr_policy *pol = policy_of(policy_with_profile(JSON({
    "hooks": {"allowedPaths": [
      "/usr/bin/nvidia-hook", "/bin/sh",
      {"path": "/usr/bin/setkey", "args": ["setkey", "-exec-root=*", "*"]}
    ]}
  })));
  if (pol == NULL)
    return;
  const struct sr_policy_profile *p = sr_policy_profile(pol, "p");
  run_apply(
      &r, p,
      CONFIG_WITH("hooks",
                  JSON({"prestart": [{"path": "/usr/bin/nvidia-hook"}, {"path": "/usr/bin/other"}]})),
      benign_host(&h));
  CHECK_DECISION(&r.d, "hooks.prestart[0].path", SR_DECISION_ALLOWED, NULL, NULL);
  CHECK_REFUSED(&r, "hooks.prestart[1].path",
                "hooks.prestart[1].path: \"/usr/bin/other\" is not allowed by profile \"p\" (to "
                "allow it, list the file in profiles.p.hooks.allowedPaths, as a path or as "
                "{\"path\": ..., \"args\": [...]} to constrain its arguments)");
  run_done(&r);

  /* An entry names the file the path resolves to (the runtime's fact). */
  struct sr_policy_facts *f = benign_host(&h);
  h.hooks[SR_HOOK_PRESTART][0].resolved = "/usr/bin/setkey";
  run_apply(&r, p,
            CONFIG_WITH("hooks", JSON({"prestart": [{"path": "/proc/99/exe", "args": [
                                                      "setkey", "-exec-root=/run/d", "abc"]}]})),
            f);
  CHECK_INT_EQ(r.ret, 0);
  CHECK_DECISION(&r.d, "hooks.prestart[0].path", SR_DECISION_ALLOWED, "\"/proc/99/exe\"", NULL);
  run_done(&r);
  /* Its args patterns: exact, or a prefix ending in "*"; as many as the hook has. */
  const char *bad_args[] = {
      JSON({"prestart": [{"path": "/usr/bin/setkey", "args": ["setkey", "-x", "abc"]}]}),
      JSON({"prestart": [{"path": "/usr/bin/setkey", "args": ["setkey", "-exec-root=/a"]}]}),
      JSON({"prestart": [{"path": "/usr/bin/setkey",
                          "args": ["setkey", "-exec-root=/a", "b", "c"]}]}),
  };
  for (size_t i = 0; i < sizeof(bad_args) / sizeof(bad_args[0]); i++) {
    run_apply(&r, p, CONFIG_WITH("hooks", bad_args[i]), benign_host(&h));
    CHECK_REFUSED(&r, "hooks.prestart[0].path",
                  "hooks.prestart[0].path: \"/usr/bin/setkey\": its args are not allowed by "
                  "profile \"p\" (the \"args\" of its entries in profiles.p.hooks.allowedPaths)");
    run_done(&r);
  }

  /* An interpreter runs whatever its arguments say: its path alone allows nothing. */
  run_apply(&r, p,
            CONFIG_WITH("hooks", JSON({"poststop": [{"path": "/bin/sh",
                                                     "args": ["sh", "-c", "id"]}]})),
            benign_host(&h));
  CHECK_REFUSED(&r, "hooks.poststop[0].path",
                "hooks.poststop[0].path: \"/bin/sh\" is an interpreter or launcher, which runs "
                "whatever its arguments say: an entry of profiles.p.hooks.allowedPaths allows it "
                "only with \"args\" patterns that match this hook's args");
  run_done(&r);
  CHECK(sr_policy_apply_hooks_is_interpreter("/usr/bin/python3.11"));
  CHECK(sr_policy_apply_hooks_is_interpreter("/usr/bin/env"));
  CHECK(sr_policy_apply_hooks_is_interpreter("/bin/busybox"));
  CHECK(!sr_policy_apply_hooks_is_interpreter("/usr/sbin/dockerd"));
  sr_policy_free(pol);

  /* The policy file: an entry is a path or {path, args}. */
  POLICY_REFUSED(policy_with_profile(JSON({"hooks": {"allowedPaths": [{"path": "/x", "arg": []}]}})),
                 "policy.json: profiles.p.hooks.allowedPaths[0].arg: unknown key");
  POLICY_REFUSED(policy_with_profile(JSON({"hooks": {"allowedPaths": [{"path": "/x",
                                                                       "args": ["a*b"]}]}})),
                 "policy.json: profiles.p.hooks.allowedPaths[0].args[0]: \"a*b\": \"*\" may only "
                 "end a pattern (a prefix)");
  POLICY_REFUSED(policy_with_profile(JSON({"hooks": {"allowedPaths": [3]}})),
                 "policy.json: profiles.p.hooks.allowedPaths[0]: must be a path or an object "
                 "{\"path\", \"args\"}");
}

static void a_hooks_environment_cannot_make_it_run_other_code(void)
{
  struct host h;
  struct run r;
  struct sr_policy *pol = policy_of(policy_with_profile(JSON({
    "hooks": {"allowedPaths": ["/usr/bin/hook",
                               {"path": "/usr/bin/gpu-hook", "env": ["GPU_*", "LD_PRELOAD"]}]}
  })));
  if (pol == NULL)
    return;
  struct sr_policy_facts *f = benign_host(&h);
  f->tenant_dirs[0] = "/b/rootfs";
  run_apply(&r, sr_policy_profile(pol, "p"),
            CONFIG_WITH("hooks", JSON({"prestart": [{"path": "/usr/bin/hook", "env": [
                                          "LD_PRELOAD=/b/rootfs/lib/evil.so", "HOME=/root",
                                          "PYTHONPATH=/x", "BASH_ENV=/x", "CFG=/b/rootfs/etc/x",
                                          "PATH=.:/usr/bin", "not-a-name=1", "GCONV_PATH=/x",
                                          "A=/proc/1/root/x", "PATH=/usr/bin:/bin",
                                          "GPU_DEVICES=all", "LC_ALL=C"]}]})),
            f);
  CHECK_INT_EQ(r.ret, 0);
  /* An allowlist: a name the entry does not list (GPU_DEVICES) is dropped too. */
  CHECK_DECISION(&r.d, "hooks.prestart[0].env", SR_DECISION_ENFORCED, NULL,
                 "[\"HOME=/root\",\"PATH=/usr/bin:/bin\",\"LC_ALL=C\"]");
  if (r.c) {
    const struct sr_hook *hk = &r.c->hooks.list[SR_HOOK_PRESTART][0];
    CHECK_INT_EQ(hk->n_env, 3);
    CHECK_STR_EQ(hk->env[1], "PATH=/usr/bin:/bin");
    CHECK(hk->env[3] == NULL);
  }
  run_done(&r);
  /* The entry's "env" adds names; the loader's never pass. */
  run_apply(&r, sr_policy_profile(pol, "p"),
            CONFIG_WITH("hooks", JSON({"prestart": [{"path": "/usr/bin/gpu-hook", "env": [
                                          "GPU_DEVICES=all", "LD_PRELOAD=/usr/lib/x.so"]}]})),
            benign_host(&h));
  CHECK_INT_EQ(r.ret, 0);
  CHECK_DECISION(&r.d, "hooks.prestart[0].env", SR_DECISION_ENFORCED, NULL,
                 "[\"GPU_DEVICES=all\"]");
  run_done(&r);
  POLICY_REFUSED(policy_with_profile(JSON({"hooks": {"allowedPaths": [{"path": "/x",
                                                                       "env": ["A-B"]}]}})),
                 "policy.json: profiles.p.hooks.allowedPaths[0].env[0]: \"A-B\" is not a variable "
                 "name or a prefix ending in \"*\"");
  sr_policy_free(pol);
}

static void a_start_container_hook_is_matched_by_its_name_in_the_container(void)
{
  struct host h;
  struct run r;
  struct sr_policy *pol =
      policy_of(policy_with_profile(JSON({"hooks": {"allowedPaths": ["/usr/bin/inside"]}})));
  if (pol == NULL)
    return;
  /* No host fact (it is a file of the container): judged by the path as written. */
  struct sr_policy_facts *f = benign_host(&h);
  f->hooks[SR_HOOK_START_CONTAINER] = NULL;
  run_apply(&r, sr_policy_profile(pol, "p"),
            CONFIG_WITH("hooks", JSON({"startContainer": [{"path": "/usr/bin/inside"},
                                                          {"path": "/bin/other"}]})),
            f);
  CHECK_DECISION(&r.d, "hooks.startContainer[0].path", SR_DECISION_ALLOWED, NULL, NULL);
  CHECK_INT_EQ(r.ret, -1);
  CHECK(r.err_text && strstr(r.err_text, "a startContainer hook is a file of the container"));
  run_done(&r);
  sr_policy_free(pol);
}

/* ---------------------------------------------------------------------------------------------
 * 15. exec
 */

static void an_exec_gains_nothing_beyond_what_create_decided(void)
{
  const struct sr_policy_profile *p = profile("default");
  struct host h;
  struct run r;
  /* The container as create left it. */
  run_apply(&r, p,
            CONFIG_WITH("process", JSON({
                          "user": {"uid": 1000, "gid": 1000},
                          "args": ["app"],
                          "cwd": "/",
                          "apparmorProfile": "containers-default",
                          "capabilities": {
                            "bounding": ["CAP_KILL", "CAP_NET_BIND_SERVICE", "CAP_SYS_ADMIN"],
                            "permitted": ["CAP_KILL"]
                          }
                        })),
            benign_host(&h));
  CHECK_INT_EQ(r.ret, 0);
  if (r.c == NULL || r.c->process == NULL) {
    run_done(&r);
    return;
  }
  struct sr_arena a = {0};
  struct sr_process *e = NULL;
  sr_error_t err = NULL;
  char proc[8192];
  snprintf(proc, sizeof(proc),
           "{\"user\": {\"uid\": 0, \"gid\": 0}, \"args\": [\"sh\"], \"cwd\": \"/\", "
           "\"apparmorProfile\": \"unconfined\", \"capabilities\": {\"bounding\": %s, "
           "\"effective\": %s, \"permitted\": %s}}",
           ALL_CAPS, ALL_CAPS, ALL_CAPS);
  CHECK_OK(sr_config_parse_process(proc, strlen(proc), "process.json", &a, &e, &err), err);
  if (e) {
    struct sr_decisions d = {0};
    CHECK_OK(sr_policy_apply_update_exec(p, &a, r.c->process, e, &d, &err), err);
    uint64_t want = CAP(CAP_KILL) | CAP(CAP_NET_BIND_SERVICE);
    CHECK_UINT_EQ(e->capabilities->sets[SR_CAP_BOUNDING], want);
    CHECK_UINT_EQ(e->capabilities->sets[SR_CAP_EFFECTIVE], want);
    CHECK_UINT_EQ(e->capabilities->sets[SR_CAP_PERMITTED], want);
    CHECK(e->no_new_privileges);
    CHECK_STR_EQ(e->apparmor_profile, "containers-default");
    CHECK_DECISION(&d, "process.capabilities.effective", SR_DECISION_ENFORCED, NULL,
                   "[\"CAP_KILL\",\"CAP_NET_BIND_SERVICE\"]");
    CHECK_DECISION(&d, "process.noNewPrivileges", SR_DECISION_ENFORCED, "false", "true");
    CHECK_DECISION(&d, "process.apparmorProfile", SR_DECISION_ENFORCED, "\"unconfined\"",
                   "\"containers-default\"");
    const struct sr_decision *cd = decision(&d, "process.capabilities.bounding");
    CHECK(cd && strstr(cd->reason, "beyond the bounding set the container was created with"));

    /* An exec in a leaked descriptor. */
    d = (struct sr_decisions){0};
    e->cwd = "/proc/self/fd/5";
    CHECK(sr_policy_apply_update_exec(p, &a, r.c->process, e, &d, &err) < 0);
    CHECK_ERR_CONTAINS(err, "process.cwd: \"/proc/self/fd/5\" is under /proc");
    sr_error_free(&err);
  }
  sr_error_free(&err);
  sr_arena_release(&a);
  run_done(&r);
}

/* ---------------------------------------------------------------------------------------------
 * The permissive profile
 */

/* Everything a careless or hostile engine could send, in one config. */
static const char HOSTILE_LINUX[] = JSON({
  "namespaces": [{"type": "mount"}, {"type": "uts", "path": "/proc/1/ns/uts"}],
  "maskedPaths": [], "readonlyPaths": [],
  "resources": {"devices": [{"allow": true, "access": "rwm"}]},
  "devices": [{"type": "b", "path": "/dev/sda", "major": 8, "minor": 0}],
  "sysctl": {"kernel.domainname": "evil.example"},
  "seccomp": {"defaultAction": "SCMP_ACT_ALLOW"}
});

static const char *hostile_config(void)
{
  return CONFIG_WITH(
      "root", JSON({"path": "rootfs"}), "process", process_with_all_caps(false, "/proc/self/fd/3"),
      "mounts", JSON([
        {"destination": "/proc", "type": "proc", "source": "proc"},
        {"destination": "/host", "type": "bind", "source": "/", "options": ["rbind", "rw"]},
        {"destination": "/disk", "type": "ext4", "source": "/dev/sda1"}
      ]),
      "hooks", JSON({"prestart": [{"path": "/tmp/evil"}]}), "linux", HOSTILE_LINUX,
      "annotations", JSON({"io.seerun.network": "enabled", "io.seerun.bogus": "1"}));
}

static void the_permissive_profile_changes_nothing_but_records_everything(void)
{
  const struct sr_policy_profile *p = class_profile("permissive");
  struct host h;
  struct sr_policy_facts *f = benign_host(&h);
  f->ns[SR_NS_UTS].is_host = true;
  h.mounts[1].source_denied = true;
  h.mounts[1].denied_path = "/etc/seerun";
  h.hooks[SR_HOOK_PRESTART][0].trusted_path = false;

  struct run r, untouched;
  run_apply(&r, p, hostile_config(), f);
  CHECK_INT_EQ(r.ret, 0);
  CHECK(r.err == NULL);
  CHECK_INT_EQ(count_kind(&r.d, SR_DECISION_REFUSED), 0);
  CHECK_INT_EQ(count_kind(&r.d, SR_DECISION_ENFORCED), 0);
  /* Nothing enforced: the runtime's loopback check must not fire either. */
  CHECK(r.d.network_granted);

  /* Field by field, the config is what was asked. */
  memset(&untouched, 0, sizeof(untouched));
  untouched.c = config_of(hostile_config());
  if (r.c && untouched.c) {
    const struct sr_config *a = r.c, *b = untouched.c;
    CHECK(!a->root_readonly);
    CHECK_INT_EQ(a->n_mounts, b->n_mounts);
    for (size_t i = 0; i < a->n_mounts && i < b->n_mounts; i++) {
      CHECK_STR_EQ(a->mounts[i].destination, b->mounts[i].destination);
      CHECK_INT_EQ(a->mounts[i].n_options, b->mounts[i].n_options);
      CHECK_UINT_EQ(a->mounts[i].opts.flags, b->mounts[i].opts.flags);
    }
    CHECK(!a->process->no_new_privileges);
    for (int s = 0; s < SR_CAP_SET_COUNT; s++)
      CHECK_UINT_EQ(a->process->capabilities->sets[s], b->process->capabilities->sets[s]);
    for (int k = 0; k < SR_NS_COUNT; k++) {
      CHECK_INT_EQ(a->linux_.namespaces[k].present, b->linux_.namespaces[k].present);
      CHECK_STR_EQ(a->linux_.namespaces[k].path, b->linux_.namespaces[k].path);
    }
    CHECK_INT_EQ(a->linux_.n_masked_paths, 0);
    CHECK_INT_EQ(a->linux_.n_readonly_paths, 0);
    CHECK_INT_EQ(a->linux_.resources->n_devices, 1);
    CHECK(a->linux_.resources->devices[0].allow);
    CHECK(!a->linux_.resources->pids_limit.set);
    CHECK(!a->linux_.resources->memory.limit.set);
  }
  if (untouched.c)
    sr_config_free(untouched.c);

  /* Every decision is recorded, as what would have happened. */
  const struct {
    const char *field, *applied_prefix;
  } expected[] = {
      {"annotations.io.seerun.bogus", "refused: annotation io.seerun.bogus=1: unknown seerun "},
      {"linux.namespaces.pid", "\"new\""},
      {"linux.namespaces.uts", "\"new\""},
      {"linux.namespaces.network", "\"new (loopback only)\""},
      {"annotations.io.seerun.network", "refused: annotation io.seerun.network=enabled: the "},
      {"mounts[1].source", "refused: mounts[1].source: \"/\" is or contains the denied host "},
      {"mounts[1].options", "[\"rbind\",\"rw\",\"nosuid\",\"nodev\",\"rnosuid\",\"rnodev\"]"},
      {"mounts[2].type", "refused: mounts[2].type: filesystem type \"ext4\""},
      {"process.cwd", "refused: process.cwd: \"/proc/self/fd/3\" is under /proc"},
      {"root.readonly", "true"},
      {"mounts[destination=/tmp]", "{\"destination\":\"/tmp\""},
      {"process.noNewPrivileges", "true"},
      {"process.capabilities.bounding", "[\"CAP_CHOWN\""},
      {"linux.seccomp", "\"built-in default filter, then the config's\""},
      {"linux.maskedPaths", "[\"/proc/acpi\""},
      {"linux.readonlyPaths", "[\"/proc/bus\""},
      {"linux.devices[0]", "refused: linux.devices[0]: block device \"/dev/sda\""},
      {"linux.resources.devices", "[\"deny a *:* rwm\",\"allow c 1:3 rwm\""},
      {"linux.resources.pids.limit", "4096"},
      {"linux.resources.memory.limit", "4294967296"},
      {"linux.sysctl.kernel.domainname", "refused: linux.sysctl.kernel.domainname: not "},
      {"hooks.prestart[0].path", "refused: hooks.prestart[0].path: \"/tmp/evil\" is not on a "},
  };
  for (size_t i = 0; i < sizeof(expected) / sizeof(expected[0]); i++) {
    const struct sr_decision *d = decision(&r.d, expected[i].field);
    CHECK(d != NULL);
    if (d == NULL) {
      fprintf(stderr, "  no decision about %s\n", expected[i].field);
      continue;
    }
    CHECK_INT_EQ(d->kind, SR_DECISION_ALLOWED);
    CHECK_STR_EQ(d->reason, "permissive");
    CHECK(d->applied &&
          strncmp(d->applied, expected[i].applied_prefix, strlen(expected[i].applied_prefix)) == 0);
    if (d->applied &&
        strncmp(d->applied, expected[i].applied_prefix, strlen(expected[i].applied_prefix)) != 0)
      fprintf(stderr, "  %s: applied is %s\n", d->field, d->applied);
  }
  run_done(&r);

  /* The same config under the default profile: the first refusal stops it. */
  f = benign_host(&h);
  f->ns[SR_NS_UTS].is_host = true;
  run_apply(&r, profile("default"), hostile_config(), f);
  CHECK_REFUSED(&r, "annotations.io.seerun.bogus",
                "annotation io.seerun.bogus=1: unknown seerun annotation (known: "
                "io.seerun.network, io.seerun.egress.allow, io.seerun.tmp-size; a profile is "
                "chosen by the operator's bindings, not by an annotation)");
  run_done(&r);
}

/* A hostile config with nothing that must be refused: all neutralised under the default. */
static void a_careless_config_is_neutralised_item_by_item(void)
{
  struct host h;
  struct sr_policy_facts *f = benign_host(&h);
  f->ns[SR_NS_UTS].is_host = true;
  struct run r;
  run_apply(&r, profile("default"),
            CONFIG_WITH("root", JSON({"path": "rootfs"}), "process",
                        process_with_all_caps(false, "/"), "mounts", JSON([
                          {"destination": "/proc", "type": "proc", "source": "proc"}, {
                            "destination": "/data",
                            "type": "bind",
                            "source": "/srv/data",
                            "options": ["rbind", "rw"]
                          }
                        ]),
                        "linux", JSON({
                          "namespaces":
                              [{"type": "mount"}, {"type": "uts", "path": "/proc/1/ns/uts"}],
                          "maskedPaths": [],
                          "readonlyPaths": [],
                          "resources": {"devices": [{"allow": true, "access": "rwm"}]}
                        })),
            f);
  CHECK_INT_EQ(r.ret, 0);
  CHECK_INT_EQ(count_kind(&r.d, SR_DECISION_REFUSED), 0);
  static const char *enforced[] = {"linux.namespaces.pid",
                                   "linux.namespaces.ipc",
                                   "linux.namespaces.uts",
                                   "linux.namespaces.cgroup",
                                   "linux.namespaces.network",
                                   "mounts[1].options",
                                   "root.readonly",
                                   "mounts[destination=/tmp]",
                                   "mounts[destination=/var/tmp]",
                                   "mounts[destination=/run]",
                                   "process.noNewPrivileges",
                                   "process.capabilities.ambient",
                                   "linux.seccomp",
                                   "linux.maskedPaths",
                                   "linux.readonlyPaths",
                                   "linux.resources.devices",
                                   "linux.resources.pids.limit",
                                   "linux.resources.memory.limit"};
  for (size_t i = 0; i < sizeof(enforced) / sizeof(enforced[0]); i++)
    CHECK_DECISION(&r.d, enforced[i], SR_DECISION_ENFORCED, NULL, NULL);
  CHECK(!r.d.network_granted);
  if (r.c) {
    CHECK_INT_EQ(r.c->n_mounts, 5);
    for (int k = SR_NS_MOUNT; k <= SR_NS_CGROUP; k++)
      CHECK(ns_present(r.c, k) && r.c->linux_.namespaces[k].path == NULL);
  }
  run_done(&r);
}

/* ---------------------------------------------------------------------------------------------
 * What engines really write passes the default profile: only enforced and allowed decisions
 * (a network the engine configured, where the container asks for it)
 */

/* podman 4.3 (Debian 12), rootful, `podman run -it debian sh`. */
static const char PODMAN_4_3[] = JSON({
  "ociVersion": "1.0.2-dev",
  "process": {
    "terminal": true,
    "user": {"uid": 0, "gid": 0, "additionalGids": [0, 1, 2, 3, 4, 6, 10, 11, 20, 26, 27]},
    "args": ["sh"],
    "env": ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "TERM=xterm",
            "container=podman", "HOME=/root", "HOSTNAME=5f0d3b1c9a2e"],
    "cwd": "/",
    "capabilities": {
      "bounding": ["CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FOWNER", "CAP_FSETID", "CAP_KILL",
                   "CAP_NET_BIND_SERVICE", "CAP_SETFCAP", "CAP_SETGID", "CAP_SETPCAP",
                   "CAP_SETUID", "CAP_SYS_CHROOT"],
      "effective": ["CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FOWNER", "CAP_FSETID", "CAP_KILL",
                    "CAP_NET_BIND_SERVICE", "CAP_SETFCAP", "CAP_SETGID", "CAP_SETPCAP",
                    "CAP_SETUID", "CAP_SYS_CHROOT"],
      "permitted": ["CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FOWNER", "CAP_FSETID", "CAP_KILL",
                    "CAP_NET_BIND_SERVICE", "CAP_SETFCAP", "CAP_SETGID", "CAP_SETPCAP",
                    "CAP_SETUID", "CAP_SYS_CHROOT"]
    },
    "rlimits": [{"type": "RLIMIT_NOFILE", "hard": 1048576, "soft": 1048576},
                {"type": "RLIMIT_NPROC", "hard": 4194304, "soft": 4194304}],
    "apparmorProfile": "containers-default-0.50.1",
    "oomScoreAdj": 0
  },
  "root": {"path": "/var/lib/containers/storage/overlay/3c1e2b0a/merged"},
  "hostname": "5f0d3b1c9a2e",
  "mounts": [
    {"destination": "/proc", "type": "proc", "source": "proc",
     "options": ["nosuid", "noexec", "nodev"]},
    {"destination": "/dev", "type": "tmpfs", "source": "tmpfs",
     "options": ["nosuid", "strictatime", "mode=755", "size=65536k"]},
    {"destination": "/sys", "type": "sysfs", "source": "sysfs",
     "options": ["nosuid", "noexec", "nodev", "ro"]},
    {"destination": "/dev/pts", "type": "devpts", "source": "devpts",
     "options": ["nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", "gid=5"]},
    {"destination": "/dev/mqueue", "type": "mqueue", "source": "mqueue",
     "options": ["nosuid", "noexec", "nodev"]},
    {"destination": "/etc/resolv.conf", "type": "bind",
     "source": "/run/containers/storage/overlay-containers/5f0d3b1c9a2e/userdata/resolv.conf",
     "options": ["bind", "rprivate"]},
    {"destination": "/etc/hosts", "type": "bind",
     "source": "/run/containers/storage/overlay-containers/5f0d3b1c9a2e/userdata/hosts",
     "options": ["bind", "rprivate"]},
    {"destination": "/dev/shm", "type": "bind",
     "source": "/var/lib/containers/storage/overlay-containers/5f0d3b1c9a2e/userdata/shm",
     "options": ["bind", "rprivate", "nosuid", "noexec", "nodev"]},
    {"destination": "/etc/hostname", "type": "bind",
     "source": "/run/containers/storage/overlay-containers/5f0d3b1c9a2e/userdata/hostname",
     "options": ["bind", "rprivate"]},
    {"destination": "/run/.containerenv", "type": "bind",
     "source": "/run/containers/storage/overlay-containers/5f0d3b1c9a2e/userdata/.containerenv",
     "options": ["bind", "rprivate"]},
    {"destination": "/sys/fs/cgroup", "type": "cgroup", "source": "cgroup",
     "options": ["rprivate", "nosuid", "noexec", "nodev", "relatime", "ro"]}
  ],
  "annotations": {
    "io.container.manager": "libpod",
    "io.kubernetes.cri-o.Created": "2024-03-01T10:00:00.000000000Z",
    "io.kubernetes.cri-o.TTY": "true",
    "io.podman.annotations.autoremove": "FALSE",
    "io.podman.annotations.init": "FALSE",
    "io.podman.annotations.privileged": "FALSE",
    "io.podman.annotations.publish-all": "FALSE",
    "org.opencontainers.image.stopSignal": "15"
  },
  "linux": {
    "sysctl": {"net.ipv4.ping_group_range": "0 0"},
    "resources": {"devices": [{"allow": false, "access": "rwm"}], "pids": {"limit": 2048}},
    "cgroupsPath": "machine.slice:libpod:5f0d3b1c9a2e",
    "namespaces": [{"type": "pid"},
                   {"type": "network", "path": "/run/netns/netns-8f1d2c3b-aa01-4b7e-9d3f-2e6c5a1b0f77"},
                   {"type": "ipc"}, {"type": "uts"}, {"type": "mount"}, {"type": "cgroup"}],
    "seccomp": {
      "defaultAction": "SCMP_ACT_ERRNO", "defaultErrnoRet": 38,
      "architectures": ["SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"],
      "syscalls": [
        {"names": ["bdflush", "io_pgetevents", "kexec_file_load", "kexec_load", "migrate_pages",
                   "move_pages", "nfsservctl", "nice", "oldfstat", "oldlstat", "oldolduname",
                   "oldstat", "olduname", "pciconfig_iobase", "pciconfig_read",
                   "pciconfig_write", "sgetmask", "ssetmask", "swapcontext", "swapoff",
                   "swapon", "sysfs", "uselib", "userfaultfd", "ustat", "vm86", "vm86old",
                   "vmsplice"],
         "action": "SCMP_ACT_ERRNO", "errnoRet": 1},
        {"names": ["_llseek", "_newselect", "accept", "accept4", "access", "adjtimex", "alarm",
                   "bind", "brk", "capget", "capset", "chdir", "chmod", "chown", "clock_getres",
                   "clock_gettime", "clock_nanosleep", "clone", "clone3", "close", "connect",
                   "copy_file_range", "creat", "dup", "dup2", "dup3", "epoll_create",
                   "epoll_ctl", "epoll_pwait", "epoll_wait", "eventfd", "eventfd2", "execve",
                   "execveat", "exit", "exit_group", "faccessat", "faccessat2", "fadvise64",
                   "fallocate", "fchdir", "fchmod", "fchmodat", "fchown", "fchownat", "fcntl",
                   "fdatasync", "flock", "fork", "fstat", "fstatfs", "fsync", "ftruncate",
                   "futex", "getcwd", "getdents", "getdents64", "getegid", "geteuid", "getgid",
                   "getgroups", "getpeername", "getpgid", "getpgrp", "getpid", "getppid",
                   "getrandom", "getrlimit", "getsockname", "getsockopt", "gettid",
                   "gettimeofday", "getuid", "ioctl", "kill", "lseek", "lstat", "madvise",
                   "mkdir", "mkdirat", "mmap", "mprotect", "munmap", "nanosleep", "newfstatat",
                   "open", "openat", "openat2", "pipe", "pipe2", "poll", "ppoll", "prctl",
                   "pread64", "prlimit64", "pselect6", "pwrite64", "read", "readlink",
                   "readlinkat", "recvfrom", "recvmsg", "rename", "renameat", "renameat2",
                   "rmdir", "rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "sched_yield",
                   "select", "sendmsg", "sendto", "set_robust_list", "set_tid_address",
                   "setgid", "setgroups", "setsockopt", "setuid", "sigaltstack", "socket",
                   "socketpair", "stat", "statfs", "statx", "symlink", "symlinkat", "sysinfo",
                   "tgkill", "umask", "uname", "unlink", "unlinkat", "utimensat", "wait4",
                   "write", "writev"],
         "action": "SCMP_ACT_ALLOW"},
        {"names": ["personality"], "action": "SCMP_ACT_ALLOW",
         "args": [{"index": 0, "value": 0, "op": "SCMP_CMP_EQ"}]},
        {"names": ["arch_prctl", "modify_ldt"], "action": "SCMP_ACT_ALLOW"}
      ]
    },
    "maskedPaths": ["/proc/acpi", "/proc/kcore", "/proc/keys", "/proc/latency_stats",
                    "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug", "/proc/scsi",
                    "/sys/firmware", "/sys/fs/selinux", "/sys/dev/block"],
    "readonlyPaths": ["/proc/asound", "/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys",
                      "/proc/sysrq-trigger"]
  }
});

/* Docker 20.10, `docker run -it debian sh` on cgroup v2: binds from its per-container
 * directory, and libnetwork's prestart hook, whose path is dockerd's own /proc/<pid>/exe (the
 * runtime's fact resolves it to /usr/bin/dockerd: root-owned, trusted). */
static const char DOCKER_20_10[] = JSON({
  "ociVersion": "1.0.2-dev",
  "process": {
    "terminal": true,
    "user": {"uid": 0, "gid": 0},
    "args": ["sh"],
    "env": ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "HOSTNAME=0123456789ab", "TERM=xterm"],
    "cwd": "/",
    "capabilities": {
      "bounding": ["CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FSETID", "CAP_FOWNER", "CAP_MKNOD",
                   "CAP_NET_RAW", "CAP_SETGID", "CAP_SETUID", "CAP_SETFCAP", "CAP_SETPCAP",
                   "CAP_NET_BIND_SERVICE", "CAP_SYS_CHROOT", "CAP_KILL", "CAP_AUDIT_WRITE"],
      "effective": ["CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FSETID", "CAP_FOWNER", "CAP_MKNOD",
                    "CAP_NET_RAW", "CAP_SETGID", "CAP_SETUID", "CAP_SETFCAP", "CAP_SETPCAP",
                    "CAP_NET_BIND_SERVICE", "CAP_SYS_CHROOT", "CAP_KILL", "CAP_AUDIT_WRITE"],
      "inheritable": ["CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FSETID", "CAP_FOWNER", "CAP_MKNOD",
                      "CAP_NET_RAW", "CAP_SETGID", "CAP_SETUID", "CAP_SETFCAP", "CAP_SETPCAP",
                      "CAP_NET_BIND_SERVICE", "CAP_SYS_CHROOT", "CAP_KILL", "CAP_AUDIT_WRITE"],
      "permitted": ["CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FSETID", "CAP_FOWNER", "CAP_MKNOD",
                    "CAP_NET_RAW", "CAP_SETGID", "CAP_SETUID", "CAP_SETFCAP", "CAP_SETPCAP",
                    "CAP_NET_BIND_SERVICE", "CAP_SYS_CHROOT", "CAP_KILL", "CAP_AUDIT_WRITE"]
    },
    "apparmorProfile": "docker-default",
    "oomScoreAdj": 0
  },
  "root": {"path": "/var/lib/docker/overlay2/9a8b7c6d5e4f/merged"},
  "hostname": "0123456789ab",
  "mounts": [
    {"destination": "/proc", "type": "proc", "source": "proc",
     "options": ["nosuid", "noexec", "nodev"]},
    {"destination": "/dev", "type": "tmpfs", "source": "tmpfs",
     "options": ["nosuid", "strictatime", "mode=755", "size=65536k"]},
    {"destination": "/dev/pts", "type": "devpts", "source": "devpts",
     "options": ["nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", "gid=5"]},
    {"destination": "/sys", "type": "sysfs", "source": "sysfs",
     "options": ["nosuid", "noexec", "nodev", "ro"]},
    {"destination": "/sys/fs/cgroup", "type": "cgroup", "source": "cgroup",
     "options": ["ro", "nosuid", "noexec", "nodev"]},
    {"destination": "/dev/mqueue", "type": "mqueue", "source": "mqueue",
     "options": ["nosuid", "noexec", "nodev"]},
    {"destination": "/dev/shm", "type": "bind",
     "source": "/var/lib/docker/containers/0123456789ab/mounts/shm",
     "options": ["rbind", "rprivate"]},
    {"destination": "/etc/resolv.conf", "type": "bind",
     "source": "/var/lib/docker/containers/0123456789ab/resolv.conf",
     "options": ["rbind", "rprivate"]},
    {"destination": "/etc/hostname", "type": "bind",
     "source": "/var/lib/docker/containers/0123456789ab/hostname",
     "options": ["rbind", "rprivate"]},
    {"destination": "/etc/hosts", "type": "bind",
     "source": "/var/lib/docker/containers/0123456789ab/hosts",
     "options": ["rbind", "rprivate"]}
  ],
  "hooks": {
    "prestart": [{"path": "/proc/1042/exe",
                  "args": ["libnetwork-setkey", "-exec-root=/var/run/docker", "0123456789ab",
                           "5d7e3a2b1c0f"]}]
  },
  "linux": {
    "resources": {
      "devices": [{"allow": false, "access": "rwm"},
                  {"allow": true, "type": "c", "major": 1, "minor": 5, "access": "rwm"},
                  {"allow": true, "type": "c", "major": 1, "minor": 3, "access": "rwm"},
                  {"allow": true, "type": "c", "major": 1, "minor": 9, "access": "rwm"},
                  {"allow": true, "type": "c", "major": 1, "minor": 8, "access": "rwm"},
                  {"allow": true, "type": "c", "major": 5, "minor": 0, "access": "rwm"},
                  {"allow": true, "type": "c", "major": 5, "minor": 1, "access": "rwm"},
                  {"allow": false, "type": "c", "major": 10, "minor": 229, "access": "rwm"}],
      "memory": {"disableOOMKiller": false},
      "cpu": {"shares": 0},
      "blockIO": {"weight": 0}
    },
    "cgroupsPath": "system.slice:docker:0123456789ab",
    "namespaces": [{"type": "mount"}, {"type": "network"}, {"type": "uts"}, {"type": "pid"},
                   {"type": "ipc"}, {"type": "cgroup"}],
    "seccomp": {
      "defaultAction": "SCMP_ACT_ERRNO", "defaultErrnoRet": 1,
      "architectures": ["SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"],
      "syscalls": [
        {"names": ["accept", "accept4", "access", "arch_prctl", "bind", "brk", "capget",
                   "capset", "chdir", "chmod", "chown", "clock_gettime", "clone", "close",
                   "connect", "dup", "dup2", "dup3", "epoll_create1", "epoll_ctl",
                   "epoll_pwait", "execve", "exit", "exit_group", "fchown", "fcntl", "fstat",
                   "futex", "getcwd", "getdents64", "getpid", "getppid", "getuid", "ioctl",
                   "kill", "lseek", "mmap", "mprotect", "munmap", "nanosleep", "newfstatat",
                   "openat", "pipe2", "prctl", "pread64", "read", "readlink", "rt_sigaction",
                   "rt_sigprocmask", "rt_sigreturn", "set_robust_list", "set_tid_address",
                   "setgid", "setgroups", "setuid", "socket", "stat", "uname", "wait4",
                   "write"],
         "action": "SCMP_ACT_ALLOW"},
        {"names": ["personality"], "action": "SCMP_ACT_ALLOW",
         "args": [{"index": 0, "value": 8, "op": "SCMP_CMP_EQ"}]},
        {"names": ["clone"], "action": "SCMP_ACT_ALLOW",
         "args": [{"index": 0, "value": 2114060288, "op": "SCMP_CMP_MASKED_EQ"}]}
      ]
    },
    "maskedPaths": ["/proc/asound", "/proc/acpi", "/proc/kcore", "/proc/keys",
                    "/proc/latency_stats", "/proc/timer_list", "/proc/timer_stats",
                    "/proc/sched_debug", "/proc/scsi", "/sys/firmware"],
    "readonlyPaths": ["/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"]
  }
});

/* `ctr run -t docker.io/library/debian:12 x sh` (containerd 1.6): close to `runc spec`, with
 * WithDefaultUnixDevices (tuntap allowed), a /run tmpfs, no seccomp, no cgroup namespace. */
static const char CTR_1_6[] = JSON({
  "ociVersion": "1.0.2-dev",
  "process": {
    "terminal": true,
    "user": {"uid": 0, "gid": 0},
    "args": ["sh"],
    "env": ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],
    "cwd": "/",
    "capabilities": {
      "bounding": ["CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FSETID", "CAP_FOWNER", "CAP_MKNOD",
                   "CAP_NET_RAW", "CAP_SETGID", "CAP_SETUID", "CAP_SETFCAP", "CAP_SETPCAP",
                   "CAP_NET_BIND_SERVICE", "CAP_SYS_CHROOT", "CAP_KILL", "CAP_AUDIT_WRITE"],
      "effective": ["CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FSETID", "CAP_FOWNER", "CAP_MKNOD",
                    "CAP_NET_RAW", "CAP_SETGID", "CAP_SETUID", "CAP_SETFCAP", "CAP_SETPCAP",
                    "CAP_NET_BIND_SERVICE", "CAP_SYS_CHROOT", "CAP_KILL", "CAP_AUDIT_WRITE"],
      "permitted": ["CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FSETID", "CAP_FOWNER", "CAP_MKNOD",
                    "CAP_NET_RAW", "CAP_SETGID", "CAP_SETUID", "CAP_SETFCAP", "CAP_SETPCAP",
                    "CAP_NET_BIND_SERVICE", "CAP_SYS_CHROOT", "CAP_KILL", "CAP_AUDIT_WRITE"]
    },
    "rlimits": [{"type": "RLIMIT_NOFILE", "hard": 1024, "soft": 1024}],
    "noNewPrivileges": true
  },
  "root": {"path": "rootfs"},
  "mounts": [
    {"destination": "/proc", "type": "proc", "source": "proc",
     "options": ["nosuid", "noexec", "nodev"]},
    {"destination": "/dev", "type": "tmpfs", "source": "tmpfs",
     "options": ["nosuid", "strictatime", "mode=755", "size=65536k"]},
    {"destination": "/dev/pts", "type": "devpts", "source": "devpts",
     "options": ["nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", "gid=5"]},
    {"destination": "/dev/shm", "type": "tmpfs", "source": "shm",
     "options": ["nosuid", "noexec", "nodev", "mode=1777", "size=65536k"]},
    {"destination": "/dev/mqueue", "type": "mqueue", "source": "mqueue",
     "options": ["nosuid", "noexec", "nodev"]},
    {"destination": "/sys", "type": "sysfs", "source": "sysfs",
     "options": ["nosuid", "noexec", "nodev", "ro"]},
    {"destination": "/run", "type": "tmpfs", "source": "tmpfs",
     "options": ["nosuid", "strictatime", "mode=755", "size=65536k"]}
  ],
  "linux": {
    "resources": {
      "devices": [{"allow": false, "access": "rwm"},
                  {"allow": true, "type": "c", "major": 1, "minor": 3, "access": "rwm"},
                  {"allow": true, "type": "c", "major": 1, "minor": 8, "access": "rwm"},
                  {"allow": true, "type": "c", "major": 1, "minor": 7, "access": "rwm"},
                  {"allow": true, "type": "c", "major": 5, "minor": 0, "access": "rwm"},
                  {"allow": true, "type": "c", "major": 1, "minor": 5, "access": "rwm"},
                  {"allow": true, "type": "c", "major": 1, "minor": 9, "access": "rwm"},
                  {"allow": true, "type": "c", "major": 5, "minor": 1, "access": "rwm"},
                  {"allow": true, "type": "c", "major": 136, "access": "rwm"},
                  {"allow": true, "type": "c", "major": 5, "minor": 2, "access": "rwm"},
                  {"allow": true, "type": "c", "major": 10, "minor": 200, "access": "rwm"}]
    },
    "cgroupsPath": "/default/x",
    "namespaces": [{"type": "pid"}, {"type": "ipc"}, {"type": "uts"}, {"type": "mount"},
                   {"type": "network"}],
    "maskedPaths": ["/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys",
                    "/proc/latency_stats", "/proc/timer_list", "/proc/timer_stats",
                    "/proc/sched_debug", "/sys/firmware", "/proc/scsi"],
    "readonlyPaths": ["/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"]
  }
});

/* An engine's config with one piece of its text replaced (it must be there once).  Static
 * buffer until the next call. */
static const char *config_edited(const char *config, const char *from, const char *to)
{
  static char buf[64 * 1024];
  const char *at = strstr(config, from);
  if (at == NULL || strstr(at + 1, from) != NULL ||
      strlen(config) - strlen(from) + strlen(to) >= sizeof(buf))
    abort();
  snprintf(buf, sizeof(buf), "%.*s%s%s", (int)(at - config), config, to, at + strlen(from));
  return buf;
}

#define PODMAN_NETNS "/run/netns/netns-8f1d2c3b-aa01-4b7e-9d3f-2e6c5a1b0f77"

/* `podman run --annotation io.seerun.network=enabled ...` (or containers.conf's
 * [containers] annotations). */
static const char *podman_asking_for_network(void)
{
  return config_edited(PODMAN_4_3, "\"annotations\": {",
                       "\"annotations\": {\"io.seerun.network\": \"enabled\", ");
}

/* podman with its default network (CNI on Debian 12) passes the path of the namespace it
 * configured: a request for network, which the default profile grants only to a container that
 * asks for it.  Without the annotation: refused up front, saying how to ask (rather than a
 * container whose network podman reports but that is not there). */
static void podman_4_3s_network_needs_the_annotation_under_the_default_profile(void)
{
  struct host h;
  struct run r;
  run_apply(&r, profile("default"), PODMAN_4_3, benign_host(&h));
  CHECK_REFUSED(&r, "linux.namespaces.network",
                "linux.namespaces.network: path \"" PODMAN_NETNS "\": the engine configured a "
                "network, which profile \"default\" does not grant (no annotation "
                "io.seerun.network=enabled (profiles.default.network.onRequest))");
  CHECK_INT_EQ(count_kind(&r.d, SR_DECISION_REFUSED), 1);
  CHECK(!r.d.network_granted);
  run_done(&r);

  /* A runtime entry bound to network-service grants it without asking. */
  run_apply(&r, profile("network-service"), PODMAN_4_3, benign_host(&h));
  CHECK_INT_EQ(r.ret, 0);
  if (r.err_text)
    fprintf(stderr, "  %s\n", r.err_text);
  CHECK_INT_EQ(count_kind(&r.d, SR_DECISION_REFUSED), 0);
  CHECK(r.d.network_granted);
  run_done(&r);
}

/* With the annotation, podman's config runs with nothing refused. */
static void podman_4_3s_config_runs_under_the_default_profile(void)
{
  struct host h;
  struct run r;
  run_apply(&r, profile("default"), podman_asking_for_network(), benign_host(&h));
  CHECK_INT_EQ(r.ret, 0);
  CHECK(r.err == NULL);
  if (r.err_text)
    fprintf(stderr, "  %s\n", r.err_text);
  CHECK_INT_EQ(count_kind(&r.d, SR_DECISION_REFUSED), 0);
  /* The namespace podman's network stack configured: asked for, granted. */
  CHECK_DECISION(&r.d, "linux.namespaces.network", SR_DECISION_ALLOWED, "\"" PODMAN_NETNS "\"",
                 NULL);
  CHECK_DECISION(&r.d, "annotations.io.seerun.network", SR_DECISION_ALLOWED, "\"enabled\"", NULL);
  CHECK(r.d.network_granted);
  /* Its capabilities are all within the default set. */
  CHECK_DECISION(&r.d, "process.capabilities", SR_DECISION_ALLOWED, NULL, NULL);
  CHECK_DECISION(&r.d, "linux.seccomp", SR_DECISION_ALLOWED,
                 "{\"defaultAction\":\"SCMP_ACT_ERRNO\",\"rules\":4}", NULL);
  CHECK_DECISION(&r.d, "linux.sysctl.net.ipv4.ping_group_range", SR_DECISION_ALLOWED, "\"0 0\"",
                 NULL);
  /* /run/.containerenv keeps /run; /tmp and /var/tmp get a tmpfs. */
  CHECK_DECISION(&r.d, "mounts[destination=/run]", SR_DECISION_ALLOWED, "\"/run/.containerenv\"",
                 NULL);
  CHECK_DECISION(&r.d, "mounts[destination=/tmp]", SR_DECISION_ENFORCED, NULL, NULL);
  CHECK_DECISION(&r.d, "root.readonly", SR_DECISION_ENFORCED, "false", "true");
  /* Its shm bind already has nosuid,nodev; the others get them. */
  CHECK(decision(&r.d, "mounts[7].options") == NULL);
  CHECK_DECISION(&r.d, "mounts[5].options", SR_DECISION_ENFORCED, "[\"bind\",\"rprivate\"]",
                 "[\"bind\",\"rprivate\",\"nosuid\",\"nodev\"]");
  CHECK_DECISION(&r.d, "process.noNewPrivileges", SR_DECISION_ENFORCED, "false", "true");
  CHECK_DECISION(&r.d, "linux.resources.pids.limit", SR_DECISION_ALLOWED, "2048", "2048");
  CHECK_DECISION(&r.d, "linux.maskedPaths", SR_DECISION_ENFORCED, NULL, NULL);
  CHECK_DECISION(&r.d, "linux.resources.devices", SR_DECISION_ALLOWED, "[\"deny a *:* rwm\"]",
                 NULL);
  if (r.c) {
    CHECK_INT_EQ(r.c->n_mounts, 13);
    CHECK_STR_EQ(r.c->linux_.namespaces[SR_NS_NET].path, PODMAN_NETNS);
    CHECK_STR_EQ(r.c->process->apparmor_profile, "containers-default-0.50.1");
  }
  run_done(&r);
}

/* `podman run --network=none`: no namespace path, a new namespace the runtime makes, loopback
 * only -- nothing to ask for, nothing refused. */
static void podman_4_3s_config_without_network_runs_under_the_default_profile(void)
{
  struct host h;
  struct run r;
  run_apply(&r, profile("default"),
            config_edited(PODMAN_4_3, "{\"type\": \"network\", \"path\": \"" PODMAN_NETNS "\"}",
                          "{\"type\": \"network\"}"),
            benign_host(&h));
  CHECK_INT_EQ(r.ret, 0);
  CHECK(r.err == NULL);
  if (r.err_text)
    fprintf(stderr, "  %s\n", r.err_text);
  CHECK_INT_EQ(count_kind(&r.d, SR_DECISION_REFUSED), 0);
  CHECK_DECISION(&r.d, "linux.namespaces.network", SR_DECISION_ALLOWED, "\"new\"", "\"new\"");
  CHECK(!r.d.network_granted);
  CHECK_DECISION(&r.d, "process.capabilities", SR_DECISION_ALLOWED, NULL, NULL);
  CHECK_DECISION(&r.d, "linux.sysctl.net.ipv4.ping_group_range", SR_DECISION_ALLOWED, "\"0 0\"",
                 NULL);
  if (r.c) {
    CHECK_INT_EQ(r.c->n_mounts, 13);
    CHECK(ns_present(r.c, SR_NS_NET));
    CHECK(r.c->linux_.namespaces[SR_NS_NET].path == NULL);
  }
  run_done(&r);
}

static void docker_20_10s_config_runs_under_the_default_profile(void)
{
  struct host h;
  struct run r;
  /* Its libnetwork-setkey hook is /proc/<dockerd pid>/exe, which the runtime resolves to
   * dockerd's binary: the entry of the default profile names it. */
  struct sr_policy_facts *docker_host = benign_host(&h);
  h.hooks[SR_HOOK_PRESTART][0].resolved = "/usr/sbin/dockerd";
  run_apply(&r, profile("default"), DOCKER_20_10, docker_host);
  CHECK_INT_EQ(r.ret, 0);
  if (r.err_text)
    fprintf(stderr, "  %s\n", r.err_text);
  CHECK_INT_EQ(count_kind(&r.d, SR_DECISION_REFUSED), 0);
  /* A new namespace, which libnetwork configures from its prestart hook.  Docker 20.10 cannot
   * pass annotations (`docker run --annotation` came with Docker 24), so under the default
   * profile the container does not get network: the policy lets the config through, and the
   * runtime checks after the hooks that only lo is there -- `--network=none` runs; a bridge
   * network is refused at that check.  Network for Docker comes from a runtime entry bound to
   * network-service (below). */
  CHECK_DECISION(&r.d, "linux.namespaces.network", SR_DECISION_ALLOWED, "\"new\"", "\"new\"");
  CHECK(!r.d.network_granted);
  const struct sr_decision *nd = decision(&r.d, "linux.namespaces.network");
  CHECK_STR_EQ(nd ? nd->reason : NULL,
               "a new network namespace with loopback only (no annotation "
               "io.seerun.network=enabled (profiles.default.network.onRequest))");
  CHECK_DECISION(&r.d, "hooks.prestart[0].path", SR_DECISION_ALLOWED, "\"/proc/1042/exe\"", NULL);
  /* MKNOD and NET_RAW are dropped, as with --cap-drop. */
  const struct sr_decision *d = decision(&r.d, "process.capabilities.bounding");
  CHECK(d && d->kind == SR_DECISION_ENFORCED);
  CHECK(d && strncmp(d->reason, "dropped CAP_NET_RAW, CAP_MKNOD: ", 32) == 0);
  CHECK_DECISION(&r.d, "mounts[destination=/run]", SR_DECISION_ENFORCED, NULL, NULL);
  CHECK_DECISION(&r.d, "mounts[6].options", SR_DECISION_ENFORCED, "[\"rbind\",\"rprivate\"]",
                 "[\"rbind\",\"rprivate\",\"nosuid\",\"nodev\",\"rnosuid\",\"rnodev\"]");
  /* Its device rules already stay within the allowed nodes. */
  CHECK_DECISION(&r.d, "linux.resources.devices", SR_DECISION_ALLOWED, NULL, NULL);
  CHECK_DECISION(&r.d, "linux.maskedPaths", SR_DECISION_ENFORCED, NULL,
                 "[\"/proc/asound\",\"/proc/acpi\",\"/proc/kcore\",\"/proc/keys\","
                 "\"/proc/latency_stats\",\"/proc/timer_list\",\"/proc/timer_stats\","
                 "\"/proc/sched_debug\",\"/proc/scsi\",\"/sys/firmware\","
                 "\"/sys/devices/virtual/powercap\"]");
  CHECK_DECISION(&r.d, "linux.readonlyPaths", SR_DECISION_ALLOWED, NULL, NULL);
  if (r.c) {
    CHECK_INT_EQ(r.c->n_mounts, 13);
    CHECK_STR_EQ(r.c->hooks.list[SR_HOOK_PRESTART][0].path, "/proc/1042/exe");
  }
  run_done(&r);

  /* The operator's second Docker runtime entry, bound to network-service (a seerun symlink
   * named seerun-network-service, or --profile network-service in its runtimeArgs): the
   * network libnetwork configures is granted without asking. */
  docker_host = benign_host(&h);
  h.hooks[SR_HOOK_PRESTART][0].resolved = "/usr/sbin/dockerd";
  run_apply(&r, profile("network-service"), DOCKER_20_10, docker_host);
  CHECK_INT_EQ(r.ret, 0);
  if (r.err_text)
    fprintf(stderr, "  %s\n", r.err_text);
  CHECK_INT_EQ(count_kind(&r.d, SR_DECISION_REFUSED), 0);
  CHECK_DECISION(&r.d, "linux.namespaces.network", SR_DECISION_ALLOWED, "\"new\"", "\"new\"");
  CHECK(r.d.network_granted);
  run_done(&r);
}

static void ctrs_config_runs_under_the_default_profile(void)
{
  struct host h;
  struct run r;
  run_apply(&r, profile("default"), CTR_1_6, benign_host(&h));
  CHECK_INT_EQ(r.ret, 0);
  if (r.err_text)
    fprintf(stderr, "  %s\n", r.err_text);
  CHECK_INT_EQ(count_kind(&r.d, SR_DECISION_REFUSED), 0);
  CHECK_DECISION(&r.d, "linux.seccomp", SR_DECISION_ENFORCED, "null",
                 "\"built-in default filter\"");
  CHECK_DECISION(&r.d, "linux.namespaces.cgroup", SR_DECISION_ENFORCED, "\"host\"", "\"new\"");
  CHECK_DECISION(&r.d, "mounts[destination=/run]", SR_DECISION_ALLOWED, "\"/run\"", NULL);
  /* containerd's default allows /dev/net/tun; the default profile does not. */
  CHECK_DECISION(&r.d, "linux.resources.devices", SR_DECISION_ENFORCED, NULL, NULL);
  const struct sr_decision *d = decision(&r.d, "linux.resources.devices");
  CHECK(d && strstr(d->asked, "\"allow c 10:200 rwm\"") != NULL);
  CHECK(d && d->applied && strstr(d->applied, "10:200") == NULL);
  CHECK(d && d->applied && strstr(d->applied, "\"allow c 136:* rwm\"") != NULL);
  /* ctr configures no network (without --cni) and asks for none: loopback only. */
  CHECK(!r.d.network_granted);
  if (r.c)
    CHECK_INT_EQ(r.c->n_mounts, 9);
  run_done(&r);
}

/* ---------------------------------------------------------------------------------------------
 * Output
 */

static void decisions_are_written_as_a_json_array(void)
{
  struct run r;
  run_apply(&r, profile("default"),
            CONFIG_WITH("linux", linux_with_namespaces(JSON([
                          {"type": "mount"}, {"type": "pid"}, {"type": "ipc"}, {"type": "uts"},
                          {"type": "cgroup"}
                        ])),
                        "hooks", JSON({"poststop": [{"path": "/tmp/x\"y"}]})),
            NULL);
  CHECK_INT_EQ(r.ret, -1);
  sr_error_t err = NULL;
  sr_json_gen_t g;
  CHECK_OK(sr_json_gen_new(&g, false, &err), err);
  sr_policy_render_json(&r.d, g);
  char *text = gen_text(g);
  sr_json_gen_freep(&g);
  yajl_val root = NULL;
  CHECK_OK(sr_json_parse(text, strlen(text), &root, &err), err);
  CHECK(root && YAJL_IS_ARRAY(root) && root->u.array.len == r.d.n);
  if (root && YAJL_IS_ARRAY(root) && root->u.array.len > 0) {
    yajl_val last = root->u.array.values[root->u.array.len - 1];
    CHECK_STR_EQ(YAJL_GET_STRING(sr_json_field(last, "kind")), "refused");
    CHECK_STR_EQ(YAJL_GET_STRING(sr_json_field(last, "field")), "hooks.poststop[0].path");
    CHECK_STR_EQ(YAJL_GET_STRING(sr_json_field(last, "asked")), "\"/tmp/x\\\"y\"");
    CHECK(sr_json_field(last, "applied") == NULL); /* null */
    yajl_val first = root->u.array.values[0];
    CHECK_STR_EQ(YAJL_GET_STRING(sr_json_field(first, "kind")), "enforced");
    CHECK_STR_EQ(YAJL_GET_STRING(sr_json_field(first, "field")), "linux.namespaces.network");
    CHECK_STR_EQ(YAJL_GET_STRING(sr_json_field(first, "applied")), "\"new (loopback only)\"");
  }
  if (root)
    yajl_tree_free(root);
  free(text);
  sr_error_free(&err);
  run_done(&r);
}

static void policy_show_prints_the_resolved_profile(void)
{
  const struct sr_policy_profile *p = profile("untrusted-user-code");
  if (p == NULL)
    return;
  char *text = profile_json_text(p);
  CHECK(text != NULL);
  if (text) {
    /* Inheritance resolved: every knob explicit, no base. */
    CHECK(strstr(text, "\"base\"") == NULL);
    CHECK(strstr(text, "\"network\":{\"allow\":false,\"onRequest\":true,\"allowHost\":false,") !=
          NULL);
    CHECK(strstr(text, "\"maskedPaths\":[\"/proc/acpi\"") != NULL);
    CHECK(strstr(text, "\"pids\":{\"default\":256,\"max\":1024}") != NULL);
    CHECK(strstr(text, "\"cpu\":{\"default\":1,\"max\":2}") != NULL);
    const struct sr_policy_profile *svc = profile("network-service");
    char *svc_text = svc ? profile_json_text(svc) : NULL;
    CHECK(svc_text && strstr(svc_text, "\"network\":{\"allow\":true,\"onRequest\":false,"
                                       "\"allowHost\":false,") != NULL);
    free(svc_text);
    /* And it reads back as the same profile. */
    char *body = NULL;
    if (asprintf(&body, "{\"version\": 1, \"defaultProfile\": \"p\", \"profiles\": {\"p\": %s}}",
                 text) > 0) {
      struct sr_policy *pol = policy_of(body);
      char *again = pol ? profile_json_text(sr_policy_profile(pol, "p")) : NULL;
      CHECK_STR_EQ(again, text);
      free(again);
      if (pol)
        sr_policy_free(pol);
    }
    free(body);
  }
  free(text);
}

// clang-format on

/* Landlock comes from the profile's knob and the kernel's ABI (a fact); a kernel without it is
 * a notice, never a refusal; scoping of abstract unix sockets only with the host's network. */
static void landlock_is_decided_from_the_knob_and_the_kernel(void)
{
  struct host h;
  struct run r;
  struct sr_policy_facts *f = benign_host(&h);
  f->landlock_abi = 7;
  run_apply(&r, profile("default"), CLEAN_CONFIG, f);
  CHECK_INT_EQ(r.ret, 0);
  CHECK_DECISION(&r.d, "landlock", SR_DECISION_ENFORCED, "null",
                 "{\"abi\":7,\"filesystem\":\"beneath /\",\"scoped\":[]}");
  CHECK_INT_EQ(r.d.landlock_abi, 7);
  CHECK(!r.d.landlock_scope_abstract_unix);
  run_done(&r);

  f->landlock_abi = 0;
  run_apply(&r, profile("default"), CLEAN_CONFIG, f);
  CHECK_INT_EQ(r.ret, 0);
  CHECK_DECISION(&r.d, "landlock", SR_DECISION_ALLOWED, "null", "null");
  const struct sr_decision *d = decision(&r.d, "landlock");
  CHECK(d && strstr(d->reason, "the kernel has no Landlock"));
  CHECK_INT_EQ(r.d.landlock_abi, 0);
  run_done(&r);

  /* An older ABI names what it leaves uncovered. */
  f->landlock_abi = 2;
  run_apply(&r, profile("default"), CLEAN_CONFIG, f);
  d = decision(&r.d, "landlock");
  CHECK(d && strstr(d->reason, "truncate (ABI 3)"));
  CHECK_INT_EQ(r.d.landlock_abi, 2);
  run_done(&r);

  /* The knob, and the permissive profile. */
  f->landlock_abi = 7;
  struct sr_policy *pol = policy_of(policy_with_profile(JSON({"landlock": false})));
  if (pol) {
    run_apply(&r, sr_policy_profile(pol, "p"), CLEAN_CONFIG, f);
    CHECK_DECISION(&r.d, "landlock", SR_DECISION_ALLOWED, "null", "null");
    CHECK_INT_EQ(r.d.landlock_abi, 0);
    run_done(&r);
    sr_policy_free(pol);
  }
  if (classes) {
    run_apply(&r, sr_policy_profile(classes, "permissive"), CLEAN_CONFIG, f);
    CHECK_INT_EQ(r.d.landlock_abi, 0);
    run_done(&r);
    run_apply(&r, sr_policy_profile(classes, "untrusted-user-code"), CLEAN_CONFIG, f);
    CHECK_INT_EQ(r.d.landlock_abi, 7);
    run_done(&r);
  }

  /* With the host's network kept, abstract unix sockets are scoped (ABI 6+). */
  pol = policy_of(policy_with_profile(JSON({"network": {"allow": true, "allowHost": true}})));
  if (pol) {
    run_apply(&r, sr_policy_profile(pol, "p"),
              CONFIG_WITH("linux", linux_with_namespaces(JSON([
                            {"type": "mount"}, {"type": "pid"}, {"type": "ipc"},
                            {"type": "uts"}, {"type": "cgroup"}
                          ]))),
              f);
    CHECK_INT_EQ(r.ret, 0);
    CHECK(r.d.landlock_scope_abstract_unix);
    run_done(&r);
    sr_policy_free(pol);
  }
}

int main(int argc, char **argv)
{
  if (argc > 1)
    srcdir = argv[1];
  else if (getenv("SEERUN_SRCDIR"))
    srcdir = getenv("SEERUN_SRCDIR");
  else if (getenv("srcdir"))
    srcdir = getenv("srcdir");

  sr_error_t err = NULL;
  if (sr_policy_parse_default(&builtin, &err) < 0) {
    char *t = sr_error_text(err);
    fprintf(stderr, "the built-in policy does not parse: %s\n", t ? t : "?");
    free(t);
    sr_error_free(&err);
    return 1;
  }
  char path[4096];
  snprintf(path, sizeof(path), "%s/contrib/policy/risk-classes.json", srcdir);
  char *text = read_text(path);
  if (text)
    classes = policy_of(text);
  else
    fprintf(stderr, "cannot read %s (pass the source directory as argv[1])\n", path);
  free(text);

  RUN(the_built_in_policy_is_contrib_default_json);
  RUN(every_shipped_policy_file_parses);
  RUN(the_risk_classes_are_documented_profiles);
  RUN(a_profile_that_says_nothing_gets_the_hardened_defaults);
  RUN(a_profile_inherits_from_its_base_key_by_key);
  RUN(network_on_request_is_read_defaults_to_true_and_is_inherited);
  RUN(the_built_in_profiles_grant_network_only_on_request);
  RUN(a_bad_policy_file_is_refused_naming_the_key);
  RUN(sizes_read_as_bytes);
  RUN(the_operator_binds_engine_entries_to_profiles);

  RUN(a_clean_config_passes_the_default_profile_untouched_but_for_the_audit);
  RUN(a_writable_root_becomes_read_only_with_tmpfs_where_nothing_is_mounted);
  RUN(podmans_containerenv_keeps_run_as_the_image_has_it);
  RUN(the_tmp_size_annotation_asks_within_the_profiles_ceiling);
  RUN(host_network_becomes_a_new_namespace_with_loopback_only);
  RUN(a_new_network_namespace_has_network_only_if_asked_and_allowed);
  RUN(a_foreign_network_namespace_path_is_a_request_for_network);
  RUN(the_hosts_network_namespace_by_path_is_refused);
  RUN(a_pod_joins_another_seerun_containers_network);
  RUN(the_network_annotation_only_requests_what_the_profile_allows);
  RUN(unknown_seerun_annotations_are_refused_and_others_ignored);
  RUN(every_capability_asked_is_cut_to_the_profiles_set);
  RUN(seccomp_is_recorded_as_mandatory);
  RUN(masked_and_read_only_paths_are_always_added);
  RUN(host_pid_ipc_uts_and_cgroup_namespaces_become_new_ones);
  RUN(joining_a_namespace_that_is_no_containers_is_refused);
  RUN(a_bind_of_a_denied_host_path_is_refused);
  RUN(an_idmapped_bind_may_only_let_the_container_act_as_ids_it_holds);
  RUN(host_objects_are_judged_by_what_they_are);
  RUN(every_bind_gets_nosuid_and_nodev);
  RUN(binds_and_working_directories_through_proc_are_refused);
  RUN(a_filesystem_the_profile_does_not_list_is_refused);
  RUN(proc_and_sysfs_exist_only_at_proc_and_sys);
  RUN(an_allow_all_device_rule_is_narrowed_to_the_allowed_nodes);
  RUN(a_device_the_profile_does_not_allow_is_refused);
  RUN(limits_are_floored_and_capped);
  RUN(an_update_cannot_lift_the_cpu_ceiling);
  RUN(an_update_cannot_lift_a_limit_above_the_ceiling);
  RUN(only_namespaced_sysctls_on_the_allowlist_pass);
  RUN(a_hook_not_on_a_trusted_path_is_refused);
  RUN(only_the_hooks_a_profile_lists_run);
  RUN(a_hooks_environment_cannot_make_it_run_other_code);
  RUN(a_start_container_hook_is_matched_by_its_name_in_the_container);
  RUN(an_exec_gains_nothing_beyond_what_create_decided);
  RUN(the_permissive_profile_changes_nothing_but_records_everything);
  RUN(a_careless_config_is_neutralised_item_by_item);
  RUN(podman_4_3s_network_needs_the_annotation_under_the_default_profile);
  RUN(podman_4_3s_config_runs_under_the_default_profile);
  RUN(podman_4_3s_config_without_network_runs_under_the_default_profile);
  RUN(docker_20_10s_config_runs_under_the_default_profile);
  RUN(ctrs_config_runs_under_the_default_profile);
  RUN(decisions_are_written_as_a_json_array);
  RUN(policy_show_prints_the_resolved_profile);
  RUN(landlock_is_decided_from_the_knob_and_the_kernel);

  if (classes)
    sr_policy_free(classes);
  sr_policy_free(builtin);
  return unit_report();
}
