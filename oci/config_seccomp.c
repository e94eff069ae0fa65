#include "build.h"

#include "config_parse.h"
#include "names.h"

#include <errno.h>
#include <seccomp.h>
#include <string.h>

/* Folds errnoRet into the action: ERRNO without errnoRet means EPERM, as in runc and crun. */
static int parse_action(struct sr_arena *a, yajl_val obj, const char *path, const char *key,
                        const char *errno_key, uint32_t *out, bool *notify, sr_error_t *err)
{
  char *name;
  int64_t act;
  uint64_t ret;
  bool has_ret;
  if (sr_json_get_string(a, obj, path, key, true, &name, err) < 0 ||
      sr_json_get_u64(obj, path, errno_key, 4095, false, &ret, &has_ret, err) < 0)
    return -1;
  if (!sr_names_lookup(SR_NAMES(sr_names_seccomp_action), name, &act))
    return sr_error_config_at(err, path, key, "unknown seccomp action \"%s\"", name);
  if ((uint32_t)act == SCMP_ACT_ERRNO(0))
    *out = SCMP_ACT_ERRNO(has_ret ? (uint32_t)ret : EPERM);
  else if ((uint32_t)act == SCMP_ACT_TRACE(0))
    *out = SCMP_ACT_TRACE(has_ret ? (uint32_t)ret : EPERM);
  else
    *out = (uint32_t)act;
  if (*out == SCMP_ACT_NOTIFY)
    *notify = true;
  return 0;
}

static int parse_rule(struct sr_arena *a, yajl_val v, const char *path, struct sr_seccomp *s,
                      struct sr_seccomp_rule *r, sr_error_t *err)
{
  if (sr_json_want_object(v, path, err) < 0 ||
      sr_json_get_strv(a, v, path, "names", true, &r->names, &r->n_names, err) < 0 ||
      parse_action(a, v, path, "action", "errnoRet", &r->action, &s->uses_notify, err) < 0)
    return -1;
  char k[SR_ELEM_KEY_MAX];
  for (size_t i = 0; i < r->n_names; i++)
    if (seccomp_syscall_resolve_name(r->names[i]) == __NR_SCMP_ERROR)
      return sr_error_config_at(err, path, sr_config_elem_key(k, "names", i),
                                "unknown syscall \"%s\"", r->names[i]);
  /* The runtime's own write of the listener's state (and the agent's logging, often) would
   * wait for an agent that has not got the descriptor yet: a deadlock, refused as runc does. */
  for (size_t i = 0; i < r->n_names && r->action == SCMP_ACT_NOTIFY; i++)
    if (strcmp(r->names[i], "write") == 0)
      return sr_error_make(err, 0,
                           "%s.names[%zu]: SCMP_ACT_NOTIFY cannot be used for the write "
                           "syscall (the runtime would deadlock)",
                           path, i);
  yajl_val arr;
  if (sr_json_get_array(v, path, "args", false, &arr, err) < 0)
    return -1;
  if (arr == NULL)
    return 0;
  size_t n = arr->u.array.len;
  if (n > 6 * 8)
    return sr_error_config_at(err, path, "args", "too many argument conditions");
  r->args = sr_arena_array(a, n ? n : 1, sizeof(struct sr_seccomp_arg));
  if (r->args == NULL)
    return SR_OOM(err, path);
  for (size_t i = 0; i < n; i++) {
    yajl_val e = arr->u.array.values[i];
    struct sr_seccomp_arg *arg = &r->args[i];
    char *ip = sr_arena_printf(a, "%s.args[%zu]", path, i);
    char *op;
    uint64_t idx;
    int64_t opv;
    if (ip == NULL)
      return SR_OOM(err, path);
    if (sr_json_want_object(e, ip, err) < 0 ||
        sr_json_get_u64(e, ip, "index", 5, true, &idx, NULL, err) < 0 ||
        sr_json_get_u64(e, ip, "value", UINT64_MAX, true, &arg->value, NULL, err) < 0 ||
        sr_json_get_u64(e, ip, "valueTwo", UINT64_MAX, false, &arg->value_two, NULL, err) < 0 ||
        sr_json_get_string(a, e, ip, "op", true, &op, err) < 0)
      return -1;
    if (!sr_names_lookup(SR_NAMES(sr_names_seccomp_op), op, &opv))
      return sr_error_config_at(err, ip, "op", "unknown seccomp operator \"%s\"", op);
    arg->index = (unsigned)idx;
    arg->op = (int)opv;
  }
  r->n_args = n;
  return 0;
}

static int rule_item(struct sr_arena *a, yajl_val v, const char *ip, void *items, size_t i,
                     void *ctx, sr_error_t *err)
{
  return parse_rule(a, v, ip, ctx, (struct sr_seccomp_rule *)items + i, err);
}

int sr_config_seccomp_parse(struct sr_arena *a, yajl_val obj, const char *path,
                            struct sr_seccomp *s, sr_error_t *err)
{
  if (parse_action(a, obj, path, "defaultAction", "defaultErrnoRet", &s->default_action,
                   &s->uses_notify, err) < 0)
    return -1;
  char **names;
  size_t n;
  if (sr_json_get_strv(a, obj, path, "architectures", false, &names, &n, err) < 0)
    return -1;
  s->architectures = sr_arena_array(a, n ? n : 1, sizeof(uint32_t));
  if (s->architectures == NULL)
    return SR_OOM(err, path);
  char k[SR_ELEM_KEY_MAX];
  for (size_t i = 0; i < n; i++) {
    int64_t arch;
    if (!sr_names_lookup(SR_NAMES(sr_names_seccomp_arch), names[i], &arch))
      return sr_error_config_at(err, path, sr_config_elem_key(k, "architectures", i),
                                "unknown architecture \"%s\"", names[i]);
    s->architectures[i] = (uint32_t)arch;
  }
  s->n_architectures = n;
  if (sr_json_get_strv(a, obj, path, "flags", false, &names, &n, err) < 0)
    return -1;
  for (size_t i = 0; i < n; i++) {
    int64_t flag;
    if (!sr_names_lookup(SR_NAMES(sr_names_seccomp_flag), names[i], &flag))
      return sr_error_config_at(err, path, sr_config_elem_key(k, "flags", i),
                                "unknown seccomp flag \"%s\"", names[i]);
    s->flags |= (unsigned)flag;
  }
  if (sr_json_get_string(a, obj, path, "listenerPath", false, &s->listener_path, err) < 0 ||
      sr_json_get_string(a, obj, path, "listenerMetadata", false, &s->listener_metadata, err) < 0)
    return -1;
  void *items;
  if (sr_json_walk_objects(a, obj, path, "syscalls", sizeof(*s->rules), &items, &s->n_rules,
                           rule_item, s, err) < 0)
    return -1;
  s->rules = items;
  if (s->uses_notify && (s->listener_path == NULL || s->listener_path[0] == '\0'))
    return sr_error_config_at(err, path, "listenerPath",
                              "required when an action is SCMP_ACT_NOTIFY");
  if (s->listener_path && s->listener_path[0] && s->listener_path[0] != '/')
    return sr_error_config_at(err, path, "listenerPath", "must be an absolute path");
  return 0;
}
