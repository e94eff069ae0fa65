#include "build.h"

#include "config_parse.h"
#include "names.h"

#include <errno.h>
#include <string.h>

static const char *cap_set_keys[SR_CAP_SET_COUNT] = {
    [SR_CAP_EFFECTIVE] = "effective",     [SR_CAP_BOUNDING] = "bounding",
    [SR_CAP_INHERITABLE] = "inheritable", [SR_CAP_PERMITTED] = "permitted",
    [SR_CAP_AMBIENT] = "ambient",
};

static int parse_capabilities(struct sr_arena *a, yajl_val obj, const char *path,
                              struct sr_capabilities *caps, sr_error_t *err)
{
  for (int s = 0; s < SR_CAP_SET_COUNT; s++) {
    char **names;
    size_t n;
    if (sr_json_get_strv(a, obj, path, cap_set_keys[s], false, &names, &n, err) < 0)
      return -1;
    for (size_t i = 0; i < n; i++) {
      int64_t cap;
      if (!sr_names_lookup(SR_NAMES(sr_names_capability), names[i], &cap)) {
        char k[SR_ELEM_KEY_MAX];
        return sr_error_config_at(err, path, sr_config_elem_key(k, cap_set_keys[s], i),
                                  "unknown capability \"%s\"", names[i]);
      }
      caps->sets[s] |= UINT64_C(1) << cap;
    }
  }
  return 0;
}

static int rlimit_item(struct sr_arena *a, yajl_val v, const char *ip, void *items, size_t i,
                       void *ctx, sr_error_t *err)
{
  (void)ctx;
  struct sr_rlimit *rl = items, *r = &rl[i];
  char *type;
  int64_t res;
  if (sr_json_get_string(a, v, ip, "type", true, &type, err) < 0 ||
      sr_json_get_u64(v, ip, "soft", UINT64_MAX, true, &r->soft, NULL, err) < 0 ||
      sr_json_get_u64(v, ip, "hard", UINT64_MAX, true, &r->hard, NULL, err) < 0)
    return -1;
  if (!sr_names_lookup(SR_NAMES(sr_names_rlimit), type, &res))
    return sr_error_config_at(err, ip, "type", "unknown rlimit \"%s\"", type);
  r->resource = (int)res;
  for (size_t j = 0; j < i; j++)
    if (rl[j].resource == r->resource)
      return sr_error_config_at(err, ip, "type", "duplicate rlimit \"%s\"", type);
  if (r->soft > r->hard)
    return sr_error_config_at(err, ip, NULL, "soft limit exceeds the hard limit");
  return 0;
}

static int parse_rlimits(struct sr_arena *a, yajl_val obj, const char *path, struct sr_process *p,
                         sr_error_t *err)
{
  void *items;
  if (sr_json_walk_objects(a, obj, path, "rlimits", sizeof(*p->rlimits), &items, &p->n_rlimits,
                           rlimit_item, NULL, err) < 0)
    return -1;
  p->rlimits = items;
  return 0;
}

static int parse_user(struct sr_arena *a, yajl_val obj, const char *path, struct sr_user *u,
                      sr_error_t *err)
{
  yajl_val v;
  char *up = sr_json_path(a, path, "user");
  if (up == NULL)
    return SR_OOM(err, path);
  if (sr_json_get_object(obj, path, "user", true, &v, err) < 0)
    return -1;
  uint64_t n;
  if (sr_json_get_u64(v, up, "uid", UINT32_MAX, true, &n, NULL, err) < 0)
    return -1;
  u->uid = (uint32_t)n;
  if (sr_json_get_u64(v, up, "gid", UINT32_MAX, true, &n, NULL, err) < 0)
    return -1;
  u->gid = (uint32_t)n;
  if (sr_json_get_u64(v, up, "umask", 07777, false, &n, &u->has_umask, err) < 0)
    return -1;
  u->umask = (uint32_t)n;
  if (sr_json_get_string(a, v, up, "username", false, &u->username, err) < 0)
    return -1;
  yajl_val arr;
  if (sr_json_get_array(v, up, "additionalGids", false, &arr, err) < 0)
    return -1;
  if (arr) {
    size_t cnt = arr->u.array.len;
    u->additional_gids = sr_arena_array(a, cnt ? cnt : 1, sizeof(uint32_t));
    if (u->additional_gids == NULL)
      return SR_OOM(err, up);
    for (size_t i = 0; i < cnt; i++) {
      char *ip = sr_arena_printf(a, "%s.additionalGids[%zu]", up, i);
      if (ip == NULL)
        return SR_OOM(err, up);
      if (sr_json_as_u64(arr->u.array.values[i], ip, UINT32_MAX, &n, err) < 0)
        return -1;
      u->additional_gids[i] = (uint32_t)n;
    }
    u->n_additional_gids = cnt;
  }
  return 0;
}

static int parse_scheduler(struct sr_arena *a, yajl_val v, const char *path, struct sr_scheduler *s,
                           sr_error_t *err)
{
  char *policy;
  int64_t n;
  if (sr_json_get_string(a, v, path, "policy", true, &policy, err) < 0)
    return -1;
  if (!sr_names_lookup(SR_NAMES(sr_names_sched_policy), policy, &n))
    return sr_error_config_at(err, path, "policy", "unknown scheduling policy \"%s\"", policy);
  s->policy = (int)n;
  if (sr_json_get_i64(v, path, "nice", -20, 19, false, &n, NULL, err) < 0)
    return -1;
  s->nice = sr_json_field(v, "nice") ? (int32_t)n : 0;
  if (sr_json_get_i64(v, path, "priority", INT32_MIN, INT32_MAX, false, &n, NULL, err) < 0)
    return -1;
  s->priority = sr_json_field(v, "priority") ? (int32_t)n : 0;
  if (sr_json_get_u64(v, path, "runtime", UINT64_MAX, false, &s->runtime, NULL, err) < 0 ||
      sr_json_get_u64(v, path, "deadline", UINT64_MAX, false, &s->deadline, NULL, err) < 0 ||
      sr_json_get_u64(v, path, "period", UINT64_MAX, false, &s->period, NULL, err) < 0)
    return -1;
  char **flags;
  size_t nf;
  if (sr_json_get_strv(a, v, path, "flags", false, &flags, &nf, err) < 0)
    return -1;
  for (size_t i = 0; i < nf; i++) {
    if (!sr_names_lookup(SR_NAMES(sr_names_sched_flag), flags[i], &n)) {
      char k[SR_ELEM_KEY_MAX];
      return sr_error_config_at(err, path, sr_config_elem_key(k, "flags", i),
                                "unknown scheduler flag \"%s\"", flags[i]);
    }
    s->flags |= (uint64_t)n;
  }
  return 0;
}

static int parse_io_priority(struct sr_arena *a, yajl_val v, const char *path,
                             struct sr_io_priority *io, sr_error_t *err)
{
  char *klass;
  int64_t n;
  if (sr_json_get_string(a, v, path, "class", true, &klass, err) < 0)
    return -1;
  if (!sr_names_lookup(SR_NAMES(sr_names_ioprio_class), klass, &n))
    return sr_error_config_at(err, path, "class", "unknown I/O priority class \"%s\"", klass);
  io->klass = (int)n;
  if (sr_json_get_i64(v, path, "priority", 0, 7, true, &n, NULL, err) < 0)
    return -1;
  io->priority = (int)n;
  return 0;
}

int sr_config_process_parse(struct sr_arena *a, yajl_val obj, const char *path,
                            struct sr_process *p, sr_error_t *err)
{
#define SUB(key) sr_json_path(a, path, key)
  yajl_val v;
  if (sr_json_get_bool(obj, path, "terminal", &p->terminal, NULL, err) < 0)
    return -1;
  if (sr_json_get_object(obj, path, "consoleSize", false, &v, err) < 0)
    return -1;
  if (v) {
    char *cp = SUB("consoleSize");
    uint64_t n;
    if (cp == NULL)
      return SR_OOM(err, path);
    p->has_console_size = true;
    if (sr_json_get_u64(v, cp, "height", UINT16_MAX, true, &n, NULL, err) < 0)
      return -1;
    p->console_height = (uint32_t)n;
    if (sr_json_get_u64(v, cp, "width", UINT16_MAX, true, &n, NULL, err) < 0)
      return -1;
    p->console_width = (uint32_t)n;
  }
  if (parse_user(a, obj, path, &p->user, err) < 0)
    return -1;
  if (sr_json_get_strv(a, obj, path, "args", false, &p->args, &p->n_args, err) < 0 ||
      sr_json_get_strv(a, obj, path, "env", false, &p->env, &p->n_env, err) < 0 ||
      sr_json_get_string(a, obj, path, "cwd", true, &p->cwd, err) < 0)
    return -1;
  if (p->n_args == 0 || p->args[0][0] == '\0')
    return sr_error_config_at(err, path, "args", "must be a non-empty array");
  if (p->cwd[0] != '/')
    return sr_error_config_at(err, path, "cwd", "must be an absolute path, got \"%s\"", p->cwd);
  for (size_t i = 0; i < p->n_env; i++)
    if (strchr(p->env[i], '=') == NULL || p->env[i][0] == '=') {
      char k[SR_ELEM_KEY_MAX];
      return sr_error_config_at(err, path, sr_config_elem_key(k, "env", i),
                                "\"%s\" is not of the form NAME=VALUE", p->env[i]);
    }

  if (sr_json_get_object(obj, path, "capabilities", false, &v, err) < 0)
    return -1;
  if (v) {
    char *cp = SUB("capabilities");
    p->capabilities = sr_arena_alloc(a, sizeof(*p->capabilities));
    if (cp == NULL || p->capabilities == NULL)
      return SR_OOM(err, path);
    if (parse_capabilities(a, v, cp, p->capabilities, err) < 0)
      return -1;
  }
  if (parse_rlimits(a, obj, path, p, err) < 0)
    return -1;
  if (sr_json_get_bool(obj, path, "noNewPrivileges", &p->no_new_privileges, NULL, err) < 0)
    return -1;
  int64_t oom;
  if (sr_json_get_i64(obj, path, "oomScoreAdj", -1000, 1000, false, &oom, &p->has_oom_score_adj,
                      err) < 0)
    return -1;
  p->oom_score_adj = (int)oom;
  if (sr_json_get_string(a, obj, path, "apparmorProfile", false, &p->apparmor_profile, err) < 0 ||
      sr_json_get_string(a, obj, path, "selinuxLabel", false, &p->selinux_label, err) < 0)
    return -1;

  if (sr_json_get_object(obj, path, "scheduler", false, &v, err) < 0)
    return -1;
  if (v) {
    char *sp = SUB("scheduler");
    p->scheduler = sr_arena_alloc(a, sizeof(*p->scheduler));
    if (sp == NULL || p->scheduler == NULL)
      return SR_OOM(err, path);
    if (parse_scheduler(a, v, sp, p->scheduler, err) < 0)
      return -1;
  }
  if (sr_json_get_object(obj, path, "ioPriority", false, &v, err) < 0)
    return -1;
  if (v) {
    char *ip = SUB("ioPriority");
    p->io_priority = sr_arena_alloc(a, sizeof(*p->io_priority));
    if (ip == NULL || p->io_priority == NULL)
      return SR_OOM(err, path);
    if (parse_io_priority(a, v, ip, p->io_priority, err) < 0)
      return -1;
  }
  if (sr_json_get_object(obj, path, "execCPUAffinity", false, &v, err) < 0)
    return -1;
  if (v) {
    char *ap = SUB("execCPUAffinity");
    if (ap == NULL)
      return SR_OOM(err, path);
    if (sr_json_get_string(a, v, ap, "initial", false, &p->cpu_affinity_initial, err) < 0 ||
        sr_json_get_string(a, v, ap, "final", false, &p->cpu_affinity_final, err) < 0)
      return -1;
  }
  return 0;
#undef SUB
}
