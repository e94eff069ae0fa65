#include "build.h"

#include "policy.h"

#include "cleanup.h"
#include "default_devices.h"
#include "json.h"
#include "names.h"
#include "path.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#define OOM(err, what) sr_error_make((err), ENOMEM, "%s", (what))

/* What a profile gets for every knob it (and its bases) leave out: the hardened defaults.  It
 * is the last link of every profile's chain, so "absent" always means "safe".  The network is
 * denied here; the built-in "default" profile grants it explicitly (engines configure one). */
static const char baseline_json[] =
    "{\"enforce\": true,"
    " \"rootfs\": {\"readonly\": true, \"tmpfs\": ["
    "   {\"path\": \"/tmp\", \"size\": \"64m\", \"mode\": \"1777\"},"
    "   {\"path\": \"/var/tmp\", \"size\": \"64m\", \"mode\": \"1777\"},"
    "   {\"path\": \"/run\", \"size\": \"16m\", \"mode\": \"755\"}]},"
    " \"network\": {\"allow\": false, \"onRequest\": true, \"allowHost\": false,"
    "   \"proxy\": false, \"mode\": \"none\", \"egress\": {\"allow\": [], \"deny\": [],"
    "   \"pins\": {}, \"allowAddresses\": [], \"callerMayAllow\": false}},"
    " \"namespaces\": {\"allowHost\": [], \"allowJoin\": [], \"requireUser\": false},"
    " \"capabilities\": {\"allowed\": [\"CAP_CHOWN\", \"CAP_DAC_OVERRIDE\", \"CAP_FOWNER\","
    "   \"CAP_FSETID\", \"CAP_KILL\", \"CAP_SETGID\", \"CAP_SETUID\", \"CAP_SETPCAP\","
    "   \"CAP_NET_BIND_SERVICE\", \"CAP_SYS_CHROOT\", \"CAP_AUDIT_WRITE\", \"CAP_SETFCAP\"]},"
    " \"devices\": {\"allowed\": [\"null\", \"zero\", \"full\", \"random\", \"urandom\", \"tty\","
    "   \"console\", \"ptmx\", \"pts\"]},"
    " \"mounts\": {\"allowedTypes\": [\"proc\", \"sysfs\", \"tmpfs\", \"devpts\", \"mqueue\","
    "   \"cgroup\", \"cgroup2\"], \"idmappable\": []},"
    " \"maskedPaths\": [\"/proc/acpi\", \"/proc/asound\", \"/proc/kcore\", \"/proc/keys\","
    "   \"/proc/latency_stats\", \"/proc/timer_list\", \"/proc/timer_stats\","
    "   \"/proc/sched_debug\", \"/proc/scsi\", \"/sys/firmware\","
    "   \"/sys/devices/virtual/powercap\"],"
    " \"readonlyPaths\": [\"/proc/bus\", \"/proc/fs\", \"/proc/irq\", \"/proc/sys\","
    "   \"/proc/sysrq-trigger\"],"
    " \"resources\": {\"pids\": {\"default\": 4096}, \"memory\": {\"default\": \"4g\"}},"
    " \"sysctls\": {\"allowed\": [\"kernel.msgmax\", \"kernel.msgmnb\", \"kernel.msgmni\","
    "   \"kernel.sem\", \"kernel.shmall\", \"kernel.shmmax\", \"kernel.shmmni\","
    "   \"kernel.shm_rmid_forced\", \"fs.mqueue.*\", \"net.*\"]},"
    " \"hooks\": {\"allowedPaths\": []},"
    " \"landlock\": true, \"restoreWithoutLandlock\": true, \"activity\": {\"record\": true}}";
#define BASELINE_PATH "(built-in defaults)"

/* Besides every container's own devices (oci/default_devices.h), names a profile may grant. */
static const struct sr_policy_device device_names[] = {
    {"fuse", 'c', 10, 229},
    {"tun", 'c', 10, 200},
    {"kvm", 'c', 10, 232},
};

bool sr_policy_device_by_name(const char *name, struct sr_policy_device *out)
{
  const struct sr_default_device *def = sr_default_devices_find(name);
  if (def) {
    *out = (struct sr_policy_device){def->name, def->type, def->major, def->minor};
    return true;
  }
  for (size_t i = 0; i < sizeof(device_names) / sizeof(device_names[0]); i++)
    if (strcmp(device_names[i].name, name) == 0) {
      *out = device_names[i];
      return true;
    }
  return false;
}

int sr_policy_parse_size(const char *s, uint64_t *out)
{
  uint64_t n = 0;
  const char *p = s;
  if (*p < '0' || *p > '9')
    return -1;
  for (; *p >= '0' && *p <= '9'; p++) {
    if (n > (UINT64_MAX - 9) / 10)
      return -1;
    n = n * 10 + (uint64_t)(*p - '0');
  }
  unsigned shift = 0;
  switch (*p) {
  case '\0':
    break;
  case 'k':
  case 'K':
    shift = 10;
    break;
  case 'm':
  case 'M':
    shift = 20;
    break;
  case 'g':
  case 'G':
    shift = 30;
    break;
  case 't':
  case 'T':
    shift = 40;
    break;
  default:
    return -1;
  }
  if (*p && p[1] != '\0')
    return -1;
  if (n > (UINT64_MAX >> shift))
    return -1;
  *out = n << shift;
  return 0;
}

/* ---- Strict keys ----------------------------------------------------------------------- */

static int check_keys(yajl_val obj, const char *path, const char *const *keys, sr_error_t *err)
{
  if (obj == NULL || !YAJL_IS_OBJECT(obj))
    return 0; /* the typed getter names the type error */
  for (size_t i = 0; i < obj->u.object.len; i++) {
    const char *k = obj->u.object.keys[i];
    bool known = false;
    for (const char *const *p = keys; *p && !known; p++)
      known = strcmp(*p, k) == 0;
    if (!known)
      return sr_error_make(err, 0, "%s%s%s: unknown key", path, path[0] ? "." : "", k);
  }
  return 0;
}

/* Checks the keys of obj[key] (an object) against keys; absent or not an object: nothing. */
static int check_sub_keys(struct sr_arena *a, yajl_val obj, const char *path, const char *key,
                          const char *const *keys, sr_error_t *err)
{
  yajl_val v = sr_json_field(obj, key);
  if (v == NULL || !YAJL_IS_OBJECT(v))
    return 0;
  char *sp = sr_json_path(a, path, key);
  if (sp == NULL)
    return OOM(err, path);
  return check_keys(v, sp, keys, err);
}

/* Every key of one profile as written (before inheritance), so an error names where the
 * typo is. */
static int check_profile_keys(struct sr_arena *a, yajl_val v, const char *path, sr_error_t *err)
{
  static const char *const top[] = {
      "base",          "description",  "enforce", "rootfs", "network",
      "namespaces",    "capabilities", "devices", "mounts", "maskedPaths",
      "readonlyPaths", "resources",    "sysctls", "hooks",  "landlock",
      "restoreWithoutLandlock", "activity", NULL};
  static const char *const rootfs[] = {"readonly", "tmpfs", "idmapPaths", NULL};
  static const char *const tmpfs[] = {"path", "size", "maxSize", "mode", "noexec", NULL};
  static const char *const network[] = {"allow", "onRequest", "allowHost", "proxy",
                                        "mode",  "egress",    NULL};
  static const char *const egress[] = {"allow",          "deny",        "pins",
                                       "allowAddresses", "bindAddress", "callerMayAllow",
                                       NULL};
  static const char *const namespaces[] = {"allowHost", "allowJoin", "requireUser", NULL};
  static const char *const allowed[] = {"allowed", NULL};
  static const char *const device[] = {"type", "major", "minor", NULL};
  static const char *const mounts[] = {"allowedTypes", "idmappable", "allowSockets",
                                       "allowHardLinks", NULL};
  static const char *const resources[] = {"pids", "memory", "cpu", NULL};
  static const char *const limit[] = {"default", "max", NULL};
  static const char *const hooks[] = {"allowedPaths", NULL};
  static const char *const activity[] = {"record", NULL};

  if (sr_json_want_object(v, path, err) < 0 || check_keys(v, path, top, err) < 0 ||
      check_sub_keys(a, v, path, "rootfs", rootfs, err) < 0 ||
      check_sub_keys(a, v, path, "network", network, err) < 0 ||
      check_sub_keys(a, v, path, "namespaces", namespaces, err) < 0 ||
      check_sub_keys(a, v, path, "capabilities", allowed, err) < 0 ||
      check_sub_keys(a, v, path, "devices", allowed, err) < 0 ||
      check_sub_keys(a, v, path, "mounts", mounts, err) < 0 ||
      check_sub_keys(a, v, path, "resources", resources, err) < 0 ||
      check_sub_keys(a, v, path, "sysctls", allowed, err) < 0 ||
      check_sub_keys(a, v, path, "hooks", hooks, err) < 0 ||
      check_sub_keys(a, v, path, "activity", activity, err) < 0)
    return -1;
  yajl_val nv = sr_json_field(v, "network");
  char *np = sr_json_path(a, path, "network");
  if (np == NULL)
    return OOM(err, path);
  if (check_sub_keys(a, nv, np, "egress", egress, err) < 0)
    return -1;
  yajl_val r = sr_json_field(v, "resources");
  char *rp = sr_json_path(a, path, "resources");
  if (rp == NULL)
    return OOM(err, path);
  if (check_sub_keys(a, r, rp, "pids", limit, err) < 0 ||
      check_sub_keys(a, r, rp, "memory", limit, err) < 0 ||
      check_sub_keys(a, r, rp, "cpu", limit, err) < 0)
    return -1;
  /* Objects inside arrays: rootfs.tmpfs[i], devices.allowed[i]. */
  struct {
    const char *outer, *inner;
    const char *const *keys;
  } arrays[] = {{"rootfs", "tmpfs", tmpfs}, {"devices", "allowed", device}};
  for (size_t k = 0; k < sizeof(arrays) / sizeof(arrays[0]); k++) {
    yajl_val arr = sr_json_field(sr_json_field(v, arrays[k].outer), arrays[k].inner);
    if (arr == NULL || !YAJL_IS_ARRAY(arr))
      continue;
    for (size_t i = 0; i < arr->u.array.len; i++) {
      char *ip = sr_arena_printf(a, "%s.%s.%s[%zu]", path, arrays[k].outer, arrays[k].inner, i);
      if (ip == NULL)
        return OOM(err, path);
      if (check_keys(arr->u.array.values[i], ip, arrays[k].keys, err) < 0)
        return -1;
    }
  }
  return 0;
}

/* ---- Chains: a profile, its bases, then the baseline ------------------------------------ */

#define MAX_CHAIN 10 /* the baseline, the profile and up to 8 bases */

struct chain {
  size_t n;
  yajl_val obj[MAX_CHAIN]; /* NULL where that link lacks the object */
  const char *path[MAX_CHAIN];
};

/* The first link that has key: its object (where the value is) and path. */
static yajl_val chain_find(const struct chain *ch, const char *key, yajl_val *owner,
                           const char **path)
{
  for (size_t i = 0; i < ch->n; i++) {
    yajl_val v = sr_json_field(ch->obj[i], key);
    if (v) {
      *owner = ch->obj[i];
      *path = ch->path[i];
      return v;
    }
  }
  return NULL;
}

/* The chain of the objects under key, each link type-checked. */
static int chain_sub(struct sr_arena *a, const struct chain *ch, const char *key, struct chain *out,
                     sr_error_t *err)
{
  out->n = ch->n;
  for (size_t i = 0; i < ch->n; i++) {
    out->path[i] = sr_json_path(a, ch->path[i], key);
    if (out->path[i] == NULL)
      return OOM(err, ch->path[i]);
    if (sr_json_get_object(ch->obj[i], ch->path[i], key, false, &out->obj[i], err) < 0)
      return -1;
  }
  return 0;
}

static int chain_bool(const struct chain *ch, const char *key, bool *out, sr_error_t *err)
{
  yajl_val owner;
  const char *path;
  if (chain_find(ch, key, &owner, &path) == NULL)
    return sr_error_make(err, 0, "%s: no value (internal error)", key);
  return sr_json_get_bool(owner, path, key, out, NULL, err);
}

static int chain_strv(struct sr_arena *a, const struct chain *ch, const char *key, char ***out,
                      size_t *n, const char **path, sr_error_t *err)
{
  yajl_val owner;
  const char *p = NULL;
  *out = NULL;
  *n = 0;
  if (chain_find(ch, key, &owner, &p) == NULL) {
    if (path)
      *path = NULL;
    return 0;
  }
  if (path) {
    *path = sr_json_path(a, p, key);
    if (*path == NULL)
      return OOM(err, p);
  }
  return sr_json_get_strv(a, owner, p, key, true, out, n, err);
}

/* The array under key in the first link that has it, walked as sr_json_walk_array does (each
 * element checked to be an object first when objects is set). */
static int chain_walk(struct sr_arena *a, const struct chain *ch, const char *key, bool objects,
                      size_t size, void **items, size_t *n, sr_json_item_fn item,
                      sr_error_t *err)
{
  yajl_val owner;
  const char *path;
  *items = NULL;
  *n = 0;
  if (chain_find(ch, key, &owner, &path) == NULL)
    return 0;
  return (objects ? sr_json_walk_objects : sr_json_walk_array)(a, owner, path, key, size, items,
                                                               n, item, NULL, err);
}

/* ---- Profile knobs ---------------------------------------------------------------------- */

static int get_size(yajl_val owner, const char *path, const char *key, uint64_t *out,
                    sr_error_t *err)
{
  yajl_val v = sr_json_field(owner, key);
  if (v && YAJL_IS_NUMBER(v)) {
    if (sr_json_get_u64(owner, path, key, UINT64_MAX, true, out, NULL, err) < 0)
      return -1;
  } else if (v && YAJL_IS_STRING(v)) {
    if (sr_policy_parse_size(v->u.string, out) < 0)
      return sr_error_make(err, 0,
                           "%s.%s: \"%s\" is not a size (bytes, or a number with a k, m, g "
                           "or t suffix)",
                           path, key, v->u.string);
  } else
    return sr_error_make(err, 0, "%s.%s: must be a size (an integer or a string like \"64m\")",
                         path, key);
  if (*out == 0)
    return sr_error_make(err, 0, "%s.%s: must be greater than zero", path, key);
  return 0;
}

static int tmpfs_item(struct sr_arena *a, yajl_val v, const char *ip, void *items, size_t i,
                      void *ctx, sr_error_t *err)
{
  (void)ctx;
  struct sr_policy_tmpfs *tmpfs = items, *t = &tmpfs[i];
  char *mode;
  if (sr_json_get_string(a, v, ip, "path", true, &t->path, err) < 0 ||
      get_size(v, ip, "size", &t->size, err) < 0 ||
      sr_json_get_string(a, v, ip, "mode", true, &mode, err) < 0 ||
      sr_json_get_bool(v, ip, "noexec", &t->noexec, NULL, err) < 0)
    return -1;
  if (!sr_path_is_clean(t->path) || strcmp(t->path, "/") == 0)
    return sr_error_make(err, 0, "%s.path: must be a clean absolute path below /, got \"%s\"", ip,
                         t->path);
  t->max_size = t->size;
  if (sr_json_field(v, "maxSize") && get_size(v, ip, "maxSize", &t->max_size, err) < 0)
    return -1;
  if (t->max_size < t->size)
    return sr_error_make(err, 0, "%s.maxSize: smaller than size", ip);
  size_t ml = strlen(mode);
  char *end;
  unsigned long m = strtoul(mode, &end, 8);
  if (ml == 0 || ml > 4 || strspn(mode, "01234567") != ml || *end != '\0' || m > 07777)
    return sr_error_make(err, 0, "%s.mode: \"%s\" is not an octal mode like \"1777\"", ip, mode);
  t->mode = (uint32_t)m;
  for (size_t j = 0; j < i; j++)
    if (strcmp(tmpfs[j].path, t->path) == 0)
      return sr_error_make(err, 0, "%s.path: duplicate tmpfs \"%s\"", ip, t->path);
  return 0;
}

static int parse_tmpfs(struct sr_arena *a, const struct chain *rootfs, struct sr_policy_profile *p,
                       sr_error_t *err)
{
  void *items;
  if (chain_walk(a, rootfs, "tmpfs", true, sizeof(*p->rootfs.tmpfs), &items, &p->rootfs.n_tmpfs,
                 tmpfs_item, err) < 0)
    return -1;
  p->rootfs.tmpfs = items;
  return 0;
}

/* A list of namespace names into flags; only the kinds in `valid` may appear. */
static int parse_ns_list(struct sr_arena *a, const struct chain *ns, const char *key,
                         const enum sr_ns_kind *valid, size_t n_valid, bool *out, sr_error_t *err)
{
  char **names;
  size_t n;
  const char *path;
  if (chain_strv(a, ns, key, &names, &n, &path, err) < 0)
    return -1;
  for (size_t i = 0; i < n; i++) {
    bool found = false;
    for (size_t k = 0; k < n_valid && !found; k++)
      if (strcmp(sr_config_ns_name(valid[k]), names[i]) == 0) {
        out[valid[k]] = true;
        found = true;
      }
    if (!found) {
      char list[128] = "";
      for (size_t k = 0; k < n_valid; k++)
        snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", k ? ", " : "",
                 sr_config_ns_name(valid[k]));
      return sr_error_make(err, 0, "%s[%zu]: \"%s\" is not one of %s", path, i, names[i], list);
    }
  }
  return 0;
}

static int parse_namespaces(struct sr_arena *a, const struct chain *ch, struct sr_policy_profile *p,
                            sr_error_t *err)
{
  static const enum sr_ns_kind host_ok[] = {SR_NS_PID, SR_NS_IPC, SR_NS_UTS, SR_NS_CGROUP};
  static const enum sr_ns_kind join_ok[] = {SR_NS_USER, SR_NS_MOUNT,  SR_NS_PID, SR_NS_IPC,
                                            SR_NS_UTS,  SR_NS_CGROUP, SR_NS_TIME};
  struct chain ns;
  if (chain_sub(a, ch, "namespaces", &ns, err) < 0 ||
      parse_ns_list(a, &ns, "allowHost", host_ok, sizeof(host_ok) / sizeof(host_ok[0]),
                    p->namespaces.allow_host, err) < 0 ||
      parse_ns_list(a, &ns, "allowJoin", join_ok, sizeof(join_ok) / sizeof(join_ok[0]),
                    p->namespaces.allow_join, err) < 0 ||
      chain_bool(&ns, "requireUser", &p->namespaces.require_user, err) < 0)
    return -1;
  return 0;
}

static int parse_capabilities(struct sr_arena *a, const struct chain *ch,
                              struct sr_policy_profile *p, sr_error_t *err)
{
  struct chain caps;
  char **names;
  size_t n;
  const char *path;
  if (chain_sub(a, ch, "capabilities", &caps, err) < 0 ||
      chain_strv(a, &caps, "allowed", &names, &n, &path, err) < 0)
    return -1;
  for (size_t i = 0; i < n; i++) {
    int64_t cap;
    if (!sr_names_lookup(SR_NAMES(sr_names_capability), names[i], &cap))
      return sr_error_make(err, 0, "%s[%zu]: unknown capability \"%s\"", path, i, names[i]);
    p->capabilities |= UINT64_C(1) << cap;
  }
  return 0;
}

static int device_item(struct sr_arena *a, yajl_val v, const char *ip, void *items, size_t i,
                       void *ctx, sr_error_t *err)
{
  (void)ctx;
  struct sr_policy_device *d = (struct sr_policy_device *)items + i;
  if (v && YAJL_IS_STRING(v)) {
    if (!sr_policy_device_by_name(v->u.string, d))
      return sr_error_make(err, 0,
                           "%s: unknown device \"%s\" (null, zero, full, random, urandom, "
                           "tty, console, ptmx, pts, fuse, tun, kvm, or {\"type\", \"major\", "
                           "\"minor\"})",
                           ip, v->u.string);
    return 0;
  }
  if (v == NULL || !YAJL_IS_OBJECT(v))
    return sr_error_make(err, 0, "%s: must be a device name or an object", ip);
  char *type;
  bool has_minor;
  if (sr_json_get_string(a, v, ip, "type", true, &type, err) < 0 ||
      sr_json_get_i64(v, ip, "major", 0, 4095, true, &d->major, NULL, err) < 0 ||
      sr_json_get_i64(v, ip, "minor", -1, (1 << 20) - 1, false, &d->minor, &has_minor, err) < 0)
    return -1;
  if (strcmp(type, "c") != 0 && strcmp(type, "b") != 0)
    return sr_error_make(err, 0, "%s.type: \"%s\" is not \"c\" or \"b\"", ip, type);
  d->type = type[0];
  if (!has_minor)
    d->minor = -1;
  return 0;
}

static int parse_devices(struct sr_arena *a, const struct chain *ch, struct sr_policy_profile *p,
                         sr_error_t *err)
{
  struct chain dev;
  void *items;
  if (chain_sub(a, ch, "devices", &dev, err) < 0 ||
      chain_walk(a, &dev, "allowed", false, sizeof(*p->devices), &items, &p->n_devices,
                 device_item, err) < 0)
    return -1;
  p->devices = items;
  return 0;
}

static int parse_paths(struct sr_arena *a, const struct chain *ch, const char *key, char ***out,
                       size_t *n, sr_error_t *err)
{
  const char *path;
  if (chain_strv(a, ch, key, out, n, &path, err) < 0)
    return -1;
  for (size_t i = 0; i < *n; i++)
    if (!sr_path_is_clean((*out)[i]))
      return sr_error_make(err, 0, "%s[%zu]: must be a clean absolute path, got \"%s\"", path, i,
                           (*out)[i]);
  return 0;
}

/* One value of a limit (its "default" or "max", v under key in owner at path) into *out. */
typedef int (*limit_value_fn)(yajl_val owner, const char *path, const char *key, yajl_val v,
                              int64_t *out, sr_error_t *err);

static int count_value(yajl_val owner, const char *path, const char *key, yajl_val v,
                       int64_t *out, sr_error_t *err)
{
  (void)v;
  return sr_json_get_i64(owner, path, key, 1, INT64_MAX, true, out, NULL, err);
}

static int size_value(yajl_val owner, const char *path, const char *key, yajl_val v,
                      int64_t *out, sr_error_t *err)
{
  (void)v;
  uint64_t u;
  if (get_size(owner, path, key, &u, err) < 0)
    return -1;
  if (u > INT64_MAX)
    return sr_error_make(err, 0, "%s.%s: too large", path, key);
  *out = (int64_t)u;
  return 0;
}

/* CPUs (1, 0.5, 2.5), kept in thousandths. */
static int cpu_value(yajl_val owner, const char *path, const char *key, yajl_val v,
                     int64_t *out, sr_error_t *err)
{
  (void)owner;
  char *end = NULL;
  double d = YAJL_IS_NUMBER(v) && v->u.number.r ? strtod(v->u.number.r, &end) : -1;
  if (end == NULL || *end != '\0' || !(d >= 0.001) || d > 65536)
    return sr_error_make(err, 0, "%s.%s: must be a number of CPUs between 0.001 and 65536", path,
                         key);
  *out = (int64_t)(d * 1000 + 0.5);
  return 0;
}

/* resources.KEY: its default and max, each from the first link that has it. */
static int parse_limit(struct sr_arena *a, const struct chain *res, const char *key,
                       limit_value_fn value, struct sr_policy_limit *l, sr_error_t *err)
{
  struct chain lim;
  if (chain_sub(a, res, key, &lim, err) < 0)
    return -1;
  const char *names[2] = {"default", "max"};
  bool *has[2] = {&l->has_default, &l->has_max};
  int64_t *val[2] = {&l->def, &l->max};
  for (int k = 0; k < 2; k++) {
    yajl_val owner;
    const char *path;
    yajl_val v = chain_find(&lim, names[k], &owner, &path);
    if (v == NULL)
      continue;
    if (value(owner, path, names[k], v, val[k], err) < 0)
      return -1;
    *has[k] = true;
  }
  if (l->has_default && l->has_max && l->def > l->max)
    return sr_error_make(err, 0, "%s: default is above max", lim.path[0]);
  return 0;
}

static int parse_sysctls(struct sr_arena *a, const struct chain *ch, struct sr_policy_profile *p,
                         sr_error_t *err)
{
  struct chain s;
  const char *path;
  if (chain_sub(a, ch, "sysctls", &s, err) < 0 ||
      chain_strv(a, &s, "allowed", &p->sysctls, &p->n_sysctls, &path, err) < 0)
    return -1;
  for (size_t i = 0; i < p->n_sysctls; i++) {
    const char *k = p->sysctls[i];
    const char *star = strchr(k, '*');
    if (k[0] == '\0' || k[0] == '*' || (star && star[1] != '\0') || strchr(k, '/'))
      return sr_error_make(
          err, 0, "%s[%zu]: \"%s\" is not a sysctl key or a prefix ending in \"*\"", path, i, k);
  }
  return 0;
}

/* hooks.allowedPaths: each entry a path, or {"path", "args"}. */
static int parse_hook_allow(struct sr_arena *a, yajl_val v, const char *ip,
                            struct sr_policy_hook_allow *h, sr_error_t *err)
{
  static const char *const keys[] = {"path", "args", "env", NULL};
  if (v && YAJL_IS_STRING(v)) {
    h->path = sr_arena_strdup(a, v->u.string);
    if (h->path == NULL)
      return OOM(err, ip);
  } else if (v && YAJL_IS_OBJECT(v)) {
    if (check_keys(v, ip, keys, err) < 0 ||
        sr_json_get_string(a, v, ip, "path", true, &h->path, err) < 0 ||
        sr_json_get_strv(a, v, ip, "args", false, &h->args, &h->n_args, err) < 0 ||
        sr_json_get_strv(a, v, ip, "env", false, &h->env, &h->n_env, err) < 0)
      return -1;
    for (size_t j = 0; j < h->n_env; j++) {
      const char *e = h->env[j];
      size_t n = strlen(e), name = strspn(e, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                                "0123456789_");
      if (n == 0 || (e[0] >= '0' && e[0] <= '9') ||
          !(name == n || (name == n - 1 && e[n - 1] == '*')))
        return sr_error_make(err, 0,
                             "%s.env[%zu]: \"%s\" is not a variable name or a prefix ending in "
                             "\"*\"",
                             ip, j, e);
    }
    h->has_args = sr_json_field(v, "args") != NULL;
    for (size_t j = 0; j < h->n_args; j++) {
      const char *star = strchr(h->args[j], '*');
      if (star && star[1] != '\0')
        return sr_error_make(err, 0,
                             "%s.args[%zu]: \"%s\": \"*\" may only end a pattern (a prefix)", ip,
                             j, h->args[j]);
    }
  } else
    return sr_error_make(err, 0, "%s: must be a path or an object {\"path\", \"args\"}", ip);
  if (!sr_path_is_clean(h->path))
    return sr_error_make(err, 0, "%s: must be a clean absolute path, got \"%s\"", ip, h->path);
  return 0;
}

static int hook_allow_item(struct sr_arena *a, yajl_val v, const char *ip, void *items,
                           size_t i, void *ctx, sr_error_t *err)
{
  (void)ctx;
  return parse_hook_allow(a, v, ip, (struct sr_policy_hook_allow *)items + i, err);
}

static int parse_hooks(struct sr_arena *a, const struct chain *ch, struct sr_policy_profile *p,
                       sr_error_t *err)
{
  struct chain h;
  void *items;
  if (chain_sub(a, ch, "hooks", &h, err) < 0 ||
      chain_walk(a, &h, "allowedPaths", false, sizeof(*p->hooks_allowed), &items,
                 &p->n_hooks_allowed, hook_allow_item, err) < 0)
    return -1;
  p->hooks_allowed = items;
  return 0;
}

/* network.egress: host entries, pins and address ranges, each checked where it is written. */
static int parse_hosts(struct sr_arena *a, const struct chain *eg, const char *key,
                       struct sr_egress_host **out, size_t *n, sr_error_t *err)
{
  char **v;
  size_t nv;
  const char *path;
  if (chain_strv(a, eg, key, &v, &nv, &path, err) < 0)
    return -1;
  *out = sr_arena_array(a, nv ? nv : 1, sizeof(**out));
  if (*out == NULL)
    return OOM(err, key);
  for (size_t i = 0; i < nv; i++) {
    char *ip = sr_arena_printf(a, "%s[%zu]", path, i);
    if (ip == NULL)
      return OOM(err, key);
    if (sr_policy_egress_host_parse(a, v[i], ip, &(*out)[i], err) < 0)
      return -1;
  }
  *n = nv;
  return 0;
}

static int parse_egress(struct sr_arena *a, const struct chain *net, struct sr_policy_profile *p,
                        sr_error_t *err)
{
  struct chain eg;
  struct sr_egress *e = &p->network.egress;
  yajl_val owner, v;
  const char *path;
  char *mode;
  if (chain_bool(net, "proxy", &p->network.proxy, err) < 0)
    return -1;
  if (chain_find(net, "mode", &owner, &path) == NULL ||
      sr_json_get_string(a, owner, path, "mode", true, &mode, err) < 0)
    return -1;
  if (strcmp(mode, "proxy") != 0 && strcmp(mode, "none") != 0)
    return sr_error_make(err, 0, "%s.mode: \"%s\" is not \"none\" or \"proxy\"", path, mode);
  p->network.mode_proxy = strcmp(mode, "proxy") == 0;
  if (chain_sub(a, net, "egress", &eg, err) < 0 ||
      parse_hosts(a, &eg, "allow", &e->allow, &e->n_allow, err) < 0 ||
      parse_hosts(a, &eg, "deny", &e->deny, &e->n_deny, err) < 0 ||
      chain_bool(&eg, "callerMayAllow", &e->caller_may_allow, err) < 0)
    return -1;
  char **ranges;
  if (chain_strv(a, &eg, "allowAddresses", &ranges, &e->n_allow_addresses, &path, err) < 0)
    return -1;
  e->allow_addresses = sr_arena_array(a, e->n_allow_addresses ? e->n_allow_addresses : 1,
                                      sizeof(*e->allow_addresses));
  if (e->allow_addresses == NULL)
    return OOM(err, "network.egress");
  for (size_t i = 0; i < e->n_allow_addresses; i++)
    if (sr_policy_egress_cidr_parse(ranges[i], &e->allow_addresses[i]) < 0)
      return sr_error_make(err, 0, "%s[%zu]: \"%s\" is not an address or a range like "
                                   "\"10.0.0.0/8\"", path, i, ranges[i]);
  if ((v = chain_find(&eg, "pins", &owner, &path)) != NULL) {
    char *pp = sr_json_path(a, path, "pins");
    if (pp == NULL)
      return OOM(err, path);
    if (!YAJL_IS_OBJECT(v))
      return sr_error_make(err, 0, "%s: must be an object of host name -> address", pp);
    size_t n = v->u.object.len;
    e->pins = sr_arena_array(a, n ? n : 1, sizeof(*e->pins));
    if (e->pins == NULL)
      return OOM(err, pp);
    for (size_t i = 0; i < n; i++) {
      yajl_val addr = v->u.object.values[i];
      struct sr_egress_host h;
      char *ip = sr_arena_printf(a, "%s.%s", pp, v->u.object.keys[i]);
      if (ip == NULL)
        return OOM(err, pp);
      if (sr_policy_egress_host_parse(a, v->u.object.keys[i], ip, &h, err) < 0)
        return -1;
      if (h.wildcard || h.is_ip || h.port)
        return sr_error_make(err, 0, "%s: a pin names one host, without a port", ip);
      if (!YAJL_IS_STRING(addr) ||
          sr_policy_egress_ipaddr_parse(addr->u.string, &e->pins[i].addr) < 0)
        return sr_error_make(err, 0, "%s: must be an IP address", ip);
      e->pins[i].name = h.name;
    }
    e->n_pins = n;
  }
  if ((v = chain_find(&eg, "bindAddress", &owner, &path)) != NULL) {
    struct sr_ipaddr b;
    if (sr_json_get_string(a, owner, path, "bindAddress", true, &e->bind_address, err) < 0)
      return -1;
    if (sr_policy_egress_ipaddr_parse(e->bind_address, &b) < 0)
      return sr_error_make(err, 0, "%s.bindAddress: \"%s\" is not an IP address", path,
                           e->bind_address);
  }
  return 0;
}

static int parse_profile(struct sr_arena *a, const struct chain *ch, struct sr_policy_profile *p,
                         sr_error_t *err)
{
  struct chain rootfs, net, mounts, res, act;
  /* The description is the profile's own: a child does not inherit its base's. */
  if (sr_json_get_string(a, ch->obj[0], ch->path[0], "description", false, &p->description, err) <
      0)
    return -1;
  if (chain_bool(ch, "enforce", &p->enforce, err) < 0 ||
      chain_sub(a, ch, "rootfs", &rootfs, err) < 0 ||
      chain_bool(&rootfs, "readonly", &p->rootfs.readonly, err) < 0 ||
      parse_paths(a, &rootfs, "idmapPaths", &p->rootfs.idmap_paths, &p->rootfs.n_idmap_paths,
                  err) < 0 ||
      parse_tmpfs(a, &rootfs, p, err) < 0 || chain_sub(a, ch, "network", &net, err) < 0 ||
      chain_bool(&net, "allow", &p->network.allow, err) < 0 ||
      chain_bool(&net, "onRequest", &p->network.on_request, err) < 0 ||
      chain_bool(&net, "allowHost", &p->network.allow_host, err) < 0 ||
      parse_egress(a, &net, p, err) < 0 ||
      parse_namespaces(a, ch, p, err) < 0 || parse_capabilities(a, ch, p, err) < 0 ||
      parse_devices(a, ch, p, err) < 0 || chain_sub(a, ch, "mounts", &mounts, err) < 0 ||
      chain_strv(a, &mounts, "allowedTypes", &p->mount_types, &p->n_mount_types, NULL, err) < 0 ||
      parse_paths(a, &mounts, "idmappable", &p->idmappable, &p->n_idmappable, err) < 0 ||
      parse_paths(a, &mounts, "allowSockets", &p->allow_sockets, &p->n_allow_sockets, err) < 0 ||
      parse_paths(a, &mounts, "allowHardLinks", &p->allow_hard_links, &p->n_allow_hard_links,
                  err) < 0 ||
      parse_paths(a, ch, "maskedPaths", &p->masked_paths, &p->n_masked_paths, err) < 0 ||
      parse_paths(a, ch, "readonlyPaths", &p->readonly_paths, &p->n_readonly_paths, err) < 0 ||
      chain_sub(a, ch, "resources", &res, err) < 0 ||
      parse_limit(a, &res, "pids", count_value, &p->pids, err) < 0 ||
      parse_limit(a, &res, "memory", size_value, &p->memory, err) < 0 ||
      parse_sysctls(a, ch, p, err) < 0 || parse_hooks(a, ch, p, err) < 0 ||
      chain_bool(ch, "landlock", &p->landlock, err) < 0 ||
      chain_bool(ch, "restoreWithoutLandlock", &p->restore_without_landlock, err) < 0 ||
      chain_sub(a, ch, "activity", &act, err) < 0 ||
      chain_bool(&act, "record", &p->activity_record, err) < 0)
    return -1;
  if (parse_limit(a, &res, "cpu", cpu_value, &p->cpu, err) < 0)
    return -1;
  if (p->description == NULL)
    p->description = "";
  return 0;
}

/* ---- The file ---------------------------------------------------------------------------- */

static bool valid_profile_name(const char *n)
{
  size_t len = strlen(n);
  return len > 0 && len <= 64 && n[0] != '.' && n[0] != '-' &&
         strspn(n, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == len;
}

static yajl_val profile_json(yajl_val profiles, const char *name)
{
  return sr_json_field(profiles, name);
}

/* profile, base, base of base... then the baseline. */
static int build_chain(struct sr_arena *a, yajl_val profiles, const char *name, yajl_val baseline,
                       struct chain *ch, char **base, sr_error_t *err)
{
  const char *cur = name;
  ch->n = 0;
  *base = NULL;
  while (cur) {
    yajl_val v = profile_json(profiles, cur);
    char *path = sr_arena_printf(a, "profiles.%s", cur);
    char *next;
    if (path == NULL)
      return OOM(err, "profiles");
    for (size_t i = 0; i < ch->n; i++)
      if (ch->obj[i] == v)
        return sr_error_make(err, 0, "profiles.%s.base: inheritance cycle through \"%s\"", name,
                             cur);
    if (ch->n == MAX_CHAIN - 1)
      return sr_error_make(err, 0, "profiles.%s.base: more than %d levels of inheritance", name,
                           MAX_CHAIN - 2);
    ch->obj[ch->n] = v;
    ch->path[ch->n] = path;
    ch->n++;
    if (sr_json_get_string(a, v, path, "base", false, &next, err) < 0)
      return -1;
    if (next && profile_json(profiles, next) == NULL)
      return sr_error_make(err, 0, "%s.base: unknown profile \"%s\"", path, next);
    if (cur == name)
      *base = next;
    cur = next;
  }
  ch->obj[ch->n] = baseline;
  ch->path[ch->n] = BASELINE_PATH;
  ch->n++;
  return 0;
}

/* "/run/x/" and "/run//x" bind the same --root as "/run/x". */
static char *clean_root(struct sr_arena *a, const char *dir)
{
  char *s = sr_arena_strdup(a, dir);
  if (s == NULL)
    return NULL;
  char *w = s;
  for (const char *r = dir; *r; r++)
    if (!(*r == '/' && w > s && w[-1] == '/'))
      *w++ = *r;
  *w = '\0';
  while (w - s > 1 && w[-1] == '/')
    *--w = '\0';
  return s;
}

static int parse_bindings(struct sr_arena *a, yajl_val root, struct sr_policy *pol,
                          yajl_val profiles, sr_error_t *err)
{
  static const char *const keys[] = {"binaries", "roots", NULL};
  yajl_val b;
  if (sr_json_get_object(root, "", "bindings", false, &b, err) < 0 ||
      check_keys(b, "bindings", keys, err) < 0)
    return -1;
  if (b == NULL)
    return 0;
  if (sr_json_get_string_map(a, b, "bindings", "binaries", &pol->binary_keys, &pol->binary_values,
                             &pol->n_binaries, err) < 0 ||
      sr_json_get_string_map(a, b, "bindings", "roots", &pol->root_keys, &pol->root_values,
                             &pol->n_roots, err) < 0)
    return -1;
  for (size_t i = 0; i < pol->n_binaries; i++) {
    const char *k = pol->binary_keys[i];
    if (k[0] == '\0' || strchr(k, '/'))
      return sr_error_make(err, 0, "bindings.binaries.%s: must be a binary name without \"/\"", k);
    if (profile_json(profiles, pol->binary_values[i]) == NULL)
      return sr_error_make(err, 0, "bindings.binaries.%s: unknown profile \"%s\"", k,
                           pol->binary_values[i]);
  }
  for (size_t i = 0; i < pol->n_roots; i++) {
    const char *k = pol->root_keys[i];
    if (k[0] != '/')
      return sr_error_make(err, 0, "bindings.roots.%s: must be an absolute directory", k);
    if (profile_json(profiles, pol->root_values[i]) == NULL)
      return sr_error_make(err, 0, "bindings.roots.%s: unknown profile \"%s\"", k,
                           pol->root_values[i]);
    pol->root_keys[i] = clean_root(a, k);
    if (pol->root_keys[i] == NULL)
      return OOM(err, "bindings.roots");
    for (size_t j = 0; j < i; j++)
      if (strcmp(pol->root_keys[j], pol->root_keys[i]) == 0)
        return sr_error_make(err, 0, "bindings.roots.%s: the same directory is bound twice", k);
  }
  return 0;
}

static int parse_userns(struct sr_arena *a, yajl_val root, struct sr_policy *pol, sr_error_t *err)
{
  static const char *const keys[] = {"registry", "first", "size", "count", "graceSeconds", NULL};
  struct sr_userns_pool *u = &pol->userns;
  const char *path = "userNamespaces";
  yajl_val v;
  u->registry = SR_USERNS_DEFAULT_REGISTRY;
  u->first = UINT64_C(1) << 30;
  u->size = 65536;
  u->count = 16384;
  u->grace_seconds = 86400;
  if (sr_json_get_object(root, "", path, false, &v, err) < 0 || check_keys(v, path, keys, err) < 0)
    return -1;
  if (v == NULL)
    return 0;
  char *registry = NULL;
  if (sr_json_get_string(a, v, path, "registry", false, &registry, err) < 0)
    return -1;
  if (registry) {
    if (registry[0] != '/')
      return sr_error_make(err, 0, "userNamespaces.registry: must be an absolute path");
    u->registry = registry;
  }
  /* An absent key leaves the default in place (the getters write only what they read). */
  if (sr_json_get_u64(v, path, "first", UINT32_MAX - 1, false, &u->first, NULL, err) < 0 ||
      sr_json_get_u64(v, path, "size", UINT32_MAX, false, &u->size, NULL, err) < 0 ||
      sr_json_get_u64(v, path, "count", UINT32_MAX, false, &u->count, NULL, err) < 0 ||
      sr_json_get_i64(v, path, "graceSeconds", 0, INT64_MAX, false, &u->grace_seconds, NULL,
                      err) < 0)
    return -1;
  /* Host uid 0 is what the ranges keep containers away from; 65535 and below are the host's
   * own users. */
  if (u->size < 1 || u->count < 1)
    return sr_error_make(err, 0, "userNamespaces: size and count must be at least 1");
  if (u->first <= 65535)
    return sr_error_make(err, 0, "userNamespaces.first: %" PRIu64 " overlaps the host's ordinary "
                                 "ids (it must be above 65535)", u->first);
  if (u->first + u->size * u->count > UINT32_MAX)
    return sr_error_make(err, 0, "userNamespaces: first + size * count goes past 4294967295");
  return 0;
}

static int parse_policy(struct sr_policy *pol, yajl_val root, sr_error_t *err)
{
  static const char *const top[] = {"version",  "defaultProfile", "auditLog",
                                    "bindings", "profiles",       "userNamespaces", NULL};
  struct sr_arena *a = &pol->arena;
  _cleanup_yajl_ yajl_val baseline = NULL;
  yajl_val profiles;
  sr_error_t berr = NULL;

  if (sr_json_want_object(root, "", err) < 0 || check_keys(root, "", top, err) < 0)
    return -1;
  if (sr_json_get_i64(root, "", "version", 1, INT32_MAX, true, &pol->version, NULL, err) < 0)
    return -1;
  if (pol->version != SR_POLICY_VERSION)
    return sr_error_make(err, 0, "version: %" PRId64 " is not supported (this seerun reads %d)",
                         pol->version, SR_POLICY_VERSION);
  if (sr_json_get_object(root, "", "profiles", true, &profiles, err) < 0)
    return -1;
  if (profiles->u.object.len == 0)
    return sr_error_make(err, 0, "profiles: must name at least one profile");
  if (sr_json_get_string(a, root, "", "defaultProfile", true, &pol->default_profile, err) < 0)
    return -1;
  if (profile_json(profiles, pol->default_profile) == NULL)
    return sr_error_make(err, 0, "defaultProfile: unknown profile \"%s\"", pol->default_profile);
  if (sr_json_get_string(a, root, "", "auditLog", false, &pol->audit_log, err) < 0)
    return -1;
  if (pol->audit_log == NULL)
    pol->audit_log = SR_POLICY_DEFAULT_AUDIT_LOG;
  if (pol->audit_log[0] != '/')
    return sr_error_make(err, 0, "auditLog: must be an absolute path, got \"%s\"", pol->audit_log);
  if (parse_bindings(a, root, pol, profiles, err) < 0 || parse_userns(a, root, pol, err) < 0)
    return -1;

  if (sr_json_parse(baseline_json, strlen(baseline_json), &baseline, &berr) < 0) {
    sr_error_free(&berr);
    return sr_error_make(err, 0, "built-in defaults do not parse (internal error)");
  }
  size_t n = profiles->u.object.len;
  pol->profiles = sr_arena_array(a, n, sizeof(*pol->profiles));
  if (pol->profiles == NULL)
    return OOM(err, "profiles");
  for (size_t i = 0; i < n; i++) {
    const char *name = profiles->u.object.keys[i];
    char *path = sr_arena_printf(a, "profiles.%s", name);
    if (path == NULL)
      return OOM(err, "profiles");
    if (!valid_profile_name(name))
      return sr_error_make(err, 0,
                           "%s: a profile name is 1 to 64 letters, digits, \".\", \"_\" or "
                           "\"-\", not starting with \".\" or \"-\"",
                           path);
    if (check_profile_keys(a, profiles->u.object.values[i], path, err) < 0)
      return -1;
  }
  for (size_t i = 0; i < n; i++) {
    struct sr_policy_profile *p = &pol->profiles[i];
    struct chain ch;
    p->name = sr_arena_strdup(a, profiles->u.object.keys[i]);
    if (p->name == NULL)
      return OOM(err, "profiles");
    if (build_chain(a, profiles, p->name, baseline, &ch, &p->base, err) < 0 ||
        parse_profile(a, &ch, p, err) < 0)
      return -1;
  }
  pol->n_profiles = n;
  return 0;
}

int sr_policy_parse(const char *buf, size_t len, const char *what, struct sr_policy **out,
                    sr_error_t *err)
{
  _cleanup_yajl_ yajl_val root = NULL;
  _cleanup_policy_ struct sr_policy *pol = calloc(1, sizeof(*pol));
  *out = NULL;
  if (pol == NULL)
    return sr_error_make(err, ENOMEM, "%s", what);
  /* sr_json_parse refuses duplicate keys: in a policy, which of two counts must not depend on
   * the reader. */
  if (sr_json_parse(buf, len, &root, err) < 0 || parse_policy(pol, root, err) < 0)
    return sr_error_wrap(err, "%s", what);
  *out = steal_ptr(pol);
  return 0;
}

int sr_policy_parse_default(struct sr_policy **out, sr_error_t *err)
{
  return sr_policy_parse(sr_policy_default_json, strlen(sr_policy_default_json), "built-in policy",
                         out, err);
}

void sr_policy_free(struct sr_policy *p)
{
  sr_arena_release(&p->arena);
  free(p);
}

const struct sr_policy_profile *sr_policy_profile(const struct sr_policy *p, const char *name)
{
  for (size_t i = 0; i < p->n_profiles; i++)
    if (strcmp(p->profiles[i].name, name) == 0)
      return &p->profiles[i];
  return NULL;
}

/* ---- Selection --------------------------------------------------------------------------- */

int sr_policy_select(const struct sr_policy *p, const char *cli_profile, const char *argv0_basename,
                     const char *root_dir, const struct sr_policy_profile **out, sr_error_t *err)
{
  struct {
    const char *profile;
    char how[160];
  } found[3];
  size_t n = 0;
  *out = NULL;
  if (cli_profile && cli_profile[0]) {
    if (sr_policy_profile(p, cli_profile) == NULL)
      return sr_error_make(err, 0, "--profile: unknown profile \"%s\"", cli_profile);
    found[n].profile = cli_profile;
    snprintf(found[n++].how, sizeof(found[0].how), "--profile %s", cli_profile);
  }
  if (argv0_basename)
    for (size_t i = 0; i < p->n_binaries; i++)
      if (strcmp(p->binary_keys[i], argv0_basename) == 0) {
        found[n].profile = p->binary_values[i];
        snprintf(found[n++].how, sizeof(found[0].how), "bindings.binaries.%s", argv0_basename);
        break;
      }
  if (root_dir && root_dir[0]) {
    struct sr_arena tmp = {0};
    char *clean = clean_root(&tmp, root_dir);
    for (size_t i = 0; clean && i < p->n_roots; i++)
      if (strcmp(p->root_keys[i], clean) == 0) {
        found[n].profile = p->root_values[i];
        snprintf(found[n++].how, sizeof(found[0].how), "bindings.roots.%s", p->root_keys[i]);
        break;
      }
    sr_arena_release(&tmp);
    if (clean == NULL)
      return sr_error_make(err, ENOMEM, "select a profile");
  }
  for (size_t i = 1; i < n; i++)
    if (strcmp(found[i].profile, found[0].profile) != 0)
      return sr_error_make(err, 0,
                           "policy: %s selects profile \"%s\" but %s selects \"%s\"; the "
                           "operator's bindings must agree",
                           found[0].how, found[0].profile, found[i].how, found[i].profile);
  *out = sr_policy_profile(p, n ? found[0].profile : p->default_profile);
  if (*out == NULL)
    return sr_error_make(err, 0, "policy: profile \"%s\" not found (internal error)",
                         n ? found[0].profile : p->default_profile);
  return 0;
}

/* ---- Output ------------------------------------------------------------------------------ */

static void put_strv(sr_json_gen_t g, const char *key, char **v, size_t n)
{
  sr_json_put_key(g, key);
  sr_json_array_open(g);
  for (size_t i = 0; i < n; i++)
    sr_json_put_string(g, v[i]);
  sr_json_array_close(g);
}

static void put_ns_list(sr_json_gen_t g, const char *key, const bool *set)
{
  sr_json_put_key(g, key);
  sr_json_array_open(g);
  for (int k = 0; k < SR_NS_COUNT; k++)
    if (set[k])
      sr_json_put_string(g, sr_config_ns_name(k));
  sr_json_array_close(g);
}

static void put_limit(sr_json_gen_t g, const char *key, const struct sr_policy_limit *l)
{
  sr_json_put_key(g, key);
  sr_json_map_open(g);
  if (l->has_default)
    sr_json_put_kv_i64(g, "default", l->def);
  if (l->has_max)
    sr_json_put_kv_i64(g, "max", l->max);
  sr_json_map_close(g);
}

static void put_hosts(sr_json_gen_t g, const char *key, const struct sr_egress_host *h, size_t n)
{
  char buf[300], ip[64];
  sr_json_put_key(g, key);
  sr_json_array_open(g);
  for (size_t i = 0; i < n; i++) {
    const char *name =
        h[i].is_ip ? sr_policy_egress_ipaddr_format(&h[i].ip, ip, sizeof(ip)) : h[i].name;
    bool v6 = h[i].is_ip && h[i].ip.family == AF_INET6;
    int k = snprintf(buf, sizeof(buf), "%s%s%s%s", h[i].wildcard ? "*." : "", v6 ? "[" : "",
                     name, v6 ? "]" : "");
    if (h[i].port && k > 0 && (size_t)k < sizeof(buf))
      snprintf(buf + k, sizeof(buf) - (size_t)k, ":%u", h[i].port);
    sr_json_put_string(g, buf);
  }
  sr_json_array_close(g);
}

static void put_egress(sr_json_gen_t g, const struct sr_egress *e)
{
  char buf[64];
  sr_json_put_key(g, "egress");
  sr_json_map_open(g);
  put_hosts(g, "allow", e->allow, e->n_allow);
  put_hosts(g, "deny", e->deny, e->n_deny);
  sr_json_put_key(g, "pins");
  sr_json_map_open(g);
  for (size_t i = 0; i < e->n_pins; i++)
    sr_json_put_kv_string(g, e->pins[i].name,
                          sr_policy_egress_ipaddr_format(&e->pins[i].addr, buf, sizeof(buf)));
  sr_json_map_close(g);
  sr_json_put_key(g, "allowAddresses");
  sr_json_array_open(g);
  for (size_t i = 0; i < e->n_allow_addresses; i++) {
    char r[80];
    snprintf(r, sizeof(r), "%s/%u",
             sr_policy_egress_ipaddr_format(&e->allow_addresses[i].addr, buf, sizeof(buf)),
             e->allow_addresses[i].prefix);
    sr_json_put_string(g, r);
  }
  sr_json_array_close(g);
  if (e->bind_address)
    sr_json_put_kv_string(g, "bindAddress", e->bind_address);
  sr_json_put_kv_bool(g, "callerMayAllow", e->caller_may_allow);
  sr_json_map_close(g);
}

int sr_policy_profile_to_json(const struct sr_policy_profile *p, sr_json_gen_t g)
{
  char mode[8];
  sr_json_map_open(g);
  sr_json_put_kv_string(g, "description", p->description);
  sr_json_put_kv_bool(g, "enforce", p->enforce);

  sr_json_put_key(g, "rootfs");
  sr_json_map_open(g);
  sr_json_put_kv_bool(g, "readonly", p->rootfs.readonly);
  sr_json_put_key(g, "tmpfs");
  sr_json_array_open(g);
  for (size_t i = 0; i < p->rootfs.n_tmpfs; i++) {
    const struct sr_policy_tmpfs *t = &p->rootfs.tmpfs[i];
    sr_json_map_open(g);
    sr_json_put_kv_string(g, "path", t->path);
    sr_json_put_kv_u64(g, "size", t->size);
    sr_json_put_kv_u64(g, "maxSize", t->max_size);
    snprintf(mode, sizeof(mode), "%o", (unsigned)t->mode);
    sr_json_put_kv_string(g, "mode", mode);
    sr_json_put_kv_bool(g, "noexec", t->noexec);
    sr_json_map_close(g);
  }
  sr_json_array_close(g);
  put_strv(g, "idmapPaths", p->rootfs.idmap_paths, p->rootfs.n_idmap_paths);
  sr_json_map_close(g);

  sr_json_put_key(g, "network");
  sr_json_map_open(g);
  sr_json_put_kv_bool(g, "allow", p->network.allow);
  sr_json_put_kv_bool(g, "onRequest", p->network.on_request);
  sr_json_put_kv_bool(g, "allowHost", p->network.allow_host);
  sr_json_put_kv_bool(g, "proxy", p->network.proxy);
  sr_json_put_kv_string(g, "mode", p->network.mode_proxy ? "proxy" : "none");
  put_egress(g, &p->network.egress);
  sr_json_map_close(g);

  sr_json_put_key(g, "namespaces");
  sr_json_map_open(g);
  put_ns_list(g, "allowHost", p->namespaces.allow_host);
  put_ns_list(g, "allowJoin", p->namespaces.allow_join);
  sr_json_put_kv_bool(g, "requireUser", p->namespaces.require_user);
  sr_json_map_close(g);

  sr_json_put_key(g, "capabilities");
  sr_json_map_open(g);
  sr_json_put_key(g, "allowed");
  sr_json_array_open(g);
  for (int c = 0; c < 64; c++)
    if (p->capabilities & (UINT64_C(1) << c)) {
      const char *name = sr_names_of(SR_NAMES(sr_names_capability), c);
      if (name)
        sr_json_put_string(g, name);
    }
  sr_json_array_close(g);
  sr_json_map_close(g);

  sr_json_put_key(g, "devices");
  sr_json_map_open(g);
  sr_json_put_key(g, "allowed");
  sr_json_array_open(g);
  for (size_t i = 0; i < p->n_devices; i++) {
    const struct sr_policy_device *d = &p->devices[i];
    if (d->name) {
      sr_json_put_string(g, d->name);
      continue;
    }
    char type[2] = {d->type, '\0'};
    sr_json_map_open(g);
    sr_json_put_kv_string(g, "type", type);
    sr_json_put_kv_i64(g, "major", d->major);
    sr_json_put_kv_i64(g, "minor", d->minor);
    sr_json_map_close(g);
  }
  sr_json_array_close(g);
  sr_json_map_close(g);

  sr_json_put_key(g, "mounts");
  sr_json_map_open(g);
  put_strv(g, "allowedTypes", p->mount_types, p->n_mount_types);
  put_strv(g, "idmappable", p->idmappable, p->n_idmappable);
  put_strv(g, "allowSockets", p->allow_sockets, p->n_allow_sockets);
  put_strv(g, "allowHardLinks", p->allow_hard_links, p->n_allow_hard_links);
  sr_json_map_close(g);
  put_strv(g, "maskedPaths", p->masked_paths, p->n_masked_paths);
  put_strv(g, "readonlyPaths", p->readonly_paths, p->n_readonly_paths);

  sr_json_put_key(g, "resources");
  sr_json_map_open(g);
  put_limit(g, "pids", &p->pids);
  put_limit(g, "memory", &p->memory);
  sr_json_put_key(g, "cpu");
  sr_json_map_open(g);
  const char *names[2] = {"default", "max"};
  const bool has[2] = {p->cpu.has_default, p->cpu.has_max};
  const int64_t val[2] = {p->cpu.def, p->cpu.max};
  for (int k = 0; k < 2; k++)
    if (has[k]) {
      char num[32];
      int n = snprintf(num, sizeof(num), "%g", (double)val[k] / 1000.0);
      sr_json_put_key(g, names[k]);
      sr_json_put_raw(g, num, (size_t)n);
    }
  sr_json_map_close(g);
  sr_json_map_close(g);

  sr_json_put_key(g, "sysctls");
  sr_json_map_open(g);
  put_strv(g, "allowed", p->sysctls, p->n_sysctls);
  sr_json_map_close(g);

  sr_json_put_key(g, "hooks");
  sr_json_map_open(g);
  sr_json_put_key(g, "allowedPaths");
  sr_json_array_open(g);
  for (size_t i = 0; i < p->n_hooks_allowed; i++) {
    const struct sr_policy_hook_allow *h = &p->hooks_allowed[i];
    if (!h->has_args && h->n_env == 0) {
      sr_json_put_string(g, h->path);
      continue;
    }
    sr_json_map_open(g);
    sr_json_put_kv_string(g, "path", h->path);
    if (h->has_args)
      put_strv(g, "args", h->args, h->n_args);
    if (h->n_env)
      put_strv(g, "env", h->env, h->n_env);
    sr_json_map_close(g);
  }
  sr_json_array_close(g);
  sr_json_map_close(g);
  sr_json_put_kv_bool(g, "landlock", p->landlock);
  sr_json_put_kv_bool(g, "restoreWithoutLandlock", p->restore_without_landlock);
  sr_json_put_key(g, "activity");
  sr_json_map_open(g);
  sr_json_put_kv_bool(g, "record", p->activity_record);
  sr_json_map_close(g);

  sr_json_map_close(g);
  return 0;
}

static void put_map(sr_json_gen_t g, const char *key, char **k, char **v, size_t n)
{
  sr_json_put_key(g, key);
  sr_json_map_open(g);
  for (size_t i = 0; i < n; i++)
    sr_json_put_kv_string(g, k[i], v[i]);
  sr_json_map_close(g);
}

int sr_policy_to_json(const struct sr_policy *p, sr_json_gen_t g)
{
  sr_json_map_open(g);
  sr_json_put_kv_i64(g, "version", p->version);
  sr_json_put_kv_string(g, "defaultProfile", p->default_profile);
  sr_json_put_kv_string(g, "auditLog", p->audit_log);
  sr_json_put_key(g, "userNamespaces");
  sr_json_map_open(g);
  sr_json_put_kv_string(g, "registry", p->userns.registry);
  sr_json_put_kv_u64(g, "first", p->userns.first);
  sr_json_put_kv_u64(g, "size", p->userns.size);
  sr_json_put_kv_u64(g, "count", p->userns.count);
  sr_json_put_kv_i64(g, "graceSeconds", p->userns.grace_seconds);
  sr_json_map_close(g);
  sr_json_put_key(g, "bindings");
  sr_json_map_open(g);
  put_map(g, "binaries", p->binary_keys, p->binary_values, p->n_binaries);
  put_map(g, "roots", p->root_keys, p->root_values, p->n_roots);
  sr_json_map_close(g);
  sr_json_put_key(g, "profiles");
  sr_json_map_open(g);
  for (size_t i = 0; i < p->n_profiles; i++) {
    sr_json_put_key(g, p->profiles[i].name);
    sr_policy_profile_to_json(&p->profiles[i], g);
  }
  sr_json_map_close(g);
  sr_json_map_close(g);
  return 0;
}
