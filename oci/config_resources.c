#include "build.h"

#include "config_parse.h"

#include <errno.h>
#include <string.h>

#define GET_I64(o, p, k, min, max, dst)                                                            \
  sr_json_get_i64((o), (p), (k), (min), (max), false, &(dst).v, &(dst).set, err)
#define GET_U64(o, p, k, max, dst) sr_json_get_u64((o), (p), (k), (max), false, &(dst).v, &(dst).set, err)

/* path is "" for the document of `update --resources`: "devices[0]", not ".devices[0]". */
#define SEP(path) ((path)[0] ? "." : "")

static int device_rule_item(struct sr_arena *a, yajl_val v, const char *ip, void *items,
                            size_t i, void *ctx, sr_error_t *err)
{
  (void)ctx;
  struct sr_device_rule *d = (struct sr_device_rule *)items + i;
  char *type = NULL, *access = NULL;
  bool has_allow;
  if (sr_json_get_bool(v, ip, "allow", &d->allow, &has_allow, err) < 0 ||
      sr_json_get_string(a, v, ip, "type", false, &type, err) < 0 ||
      sr_json_get_string(a, v, ip, "access", false, &access, err) < 0)
    return -1;
  if (!has_allow)
    return sr_error_config_at(err, ip, "allow", "required");
  d->type = 'a';
  if (type && type[0]) {
    if (strlen(type) != 1 || strchr("acb", type[0]) == NULL)
      return sr_error_config_at(err, ip, "type", "unknown device type \"%s\" (a, c or b)", type);
    d->type = type[0];
  }
  bool has;
  if (sr_json_get_i64(v, ip, "major", -1, UINT32_MAX, false, &d->major, &has, err) < 0)
    return -1;
  if (!has)
    d->major = -1;
  if (sr_json_get_i64(v, ip, "minor", -1, UINT32_MAX, false, &d->minor, &has, err) < 0)
    return -1;
  if (!has)
    d->minor = -1;
  if (access == NULL || access[0] == '\0')
    access = "rwm";
  size_t len = strlen(access);
  if (len > 3 || strspn(access, "rwm") != len)
    return sr_error_config_at(err, ip, "access", "\"%s\" is not a combination of r, w and m",
                              access);
  memcpy(d->access, access, len + 1);
  return 0;
}

static int parse_device_rules(struct sr_arena *a, yajl_val obj, const char *path,
                              struct sr_resources *r, sr_error_t *err)
{
  void *items;
  if (sr_json_walk_objects(a, obj, path, "devices", sizeof(*r->devices), &items, &r->n_devices,
                           device_rule_item, NULL, err) < 0)
    return -1;
  r->devices = items;
  return 0;
}

static int parse_memory(yajl_val obj, const char *path, struct sr_resources *r, sr_error_t *err)
{
  if (GET_I64(obj, path, "limit", -1, INT64_MAX, r->memory.limit) < 0 ||
      GET_I64(obj, path, "reservation", -1, INT64_MAX, r->memory.reservation) < 0 ||
      GET_I64(obj, path, "swap", -1, INT64_MAX, r->memory.swap) < 0 ||
      GET_I64(obj, path, "kernel", -1, INT64_MAX, r->memory.kernel) < 0 ||
      GET_I64(obj, path, "kernelTCP", -1, INT64_MAX, r->memory.kernel_tcp) < 0 ||
      GET_U64(obj, path, "swappiness", 100, r->memory.swappiness) < 0 ||
      sr_json_get_bool(obj, path, "disableOOMKiller", &r->memory.disable_oom_killer,
                       &r->memory.has_disable_oom_killer, err) < 0 ||
      sr_json_get_bool(obj, path, "useHierarchy", &r->memory.use_hierarchy,
                       &r->memory.has_use_hierarchy, err) < 0 ||
      sr_json_get_bool(obj, path, "checkBeforeUpdate", &r->memory.check_before_update, NULL,
                       err) < 0)
    return -1;
  return 0;
}

static int parse_cpu(struct sr_arena *a, yajl_val obj, const char *path, struct sr_resources *r,
                     sr_error_t *err)
{
  if (GET_U64(obj, path, "shares", UINT64_MAX, r->cpu.shares) < 0 ||
      GET_I64(obj, path, "quota", -1, INT64_MAX, r->cpu.quota) < 0 ||
      GET_U64(obj, path, "burst", UINT64_MAX, r->cpu.burst) < 0 ||
      GET_U64(obj, path, "period", UINT64_MAX, r->cpu.period) < 0 ||
      GET_I64(obj, path, "realtimeRuntime", -1, INT64_MAX, r->cpu.realtime_runtime) < 0 ||
      GET_U64(obj, path, "realtimePeriod", UINT64_MAX, r->cpu.realtime_period) < 0 ||
      GET_I64(obj, path, "idle", 0, 1, r->cpu.idle) < 0 ||
      sr_json_get_string(a, obj, path, "cpus", false, &r->cpu.cpus, err) < 0 ||
      sr_json_get_string(a, obj, path, "mems", false, &r->cpu.mems, err) < 0)
    return -1;
  const char *lists[] = {r->cpu.cpus, r->cpu.mems};
  for (int i = 0; i < 2; i++)
    if (lists[i] && strspn(lists[i], "0123456789,-") != strlen(lists[i]))
      return sr_error_config_at(err, path, i ? "mems" : "cpus",
                                "\"%s\" is not a list such as 0-3,7", lists[i]);
  return 0;
}

static int weight_device_item(struct sr_arena *a, yajl_val v, const char *ip, void *items,
                              size_t i, void *ctx, sr_error_t *err)
{
  (void)a, (void)ctx;
  struct sr_weight_device *d = (struct sr_weight_device *)items + i;
  if (sr_json_get_i64(v, ip, "major", 0, UINT32_MAX, true, &d->major, NULL, err) < 0 ||
      sr_json_get_i64(v, ip, "minor", 0, UINT32_MAX, true, &d->minor, NULL, err) < 0 ||
      GET_U64(v, ip, "weight", UINT16_MAX, d->weight) < 0 ||
      GET_U64(v, ip, "leafWeight", UINT16_MAX, d->leaf_weight) < 0)
    return -1;
  return 0;
}

static int parse_weight_devices(struct sr_arena *a, yajl_val obj, const char *path,
                                struct sr_resources *r, sr_error_t *err)
{
  void *items;
  if (sr_json_walk_objects(a, obj, path, "weightDevice", sizeof(*r->block_io.weight_devices),
                           &items, &r->block_io.n_weight_devices, weight_device_item, NULL,
                           err) < 0)
    return -1;
  r->block_io.weight_devices = items;
  return 0;
}

static int throttle_item(struct sr_arena *a, yajl_val v, const char *ip, void *items, size_t i,
                         void *ctx, sr_error_t *err)
{
  (void)a, (void)ctx;
  struct sr_throttle_device *d = (struct sr_throttle_device *)items + i;
  if (sr_json_get_i64(v, ip, "major", 0, UINT32_MAX, true, &d->major, NULL, err) < 0 ||
      sr_json_get_i64(v, ip, "minor", 0, UINT32_MAX, true, &d->minor, NULL, err) < 0 ||
      sr_json_get_u64(v, ip, "rate", UINT64_MAX, true, &d->rate, NULL, err) < 0)
    return -1;
  return 0;
}

static int parse_throttle(struct sr_arena *a, yajl_val obj, const char *path, const char *key,
                          struct sr_throttle_device **out, size_t *count, sr_error_t *err)
{
  void *items;
  if (sr_json_walk_objects(a, obj, path, key, sizeof(**out), &items, count, throttle_item, NULL,
                           err) < 0)
    return -1;
  *out = items;
  return 0;
}

static int parse_block_io(struct sr_arena *a, yajl_val obj, const char *path,
                          struct sr_resources *r, sr_error_t *err)
{
  static const char *throttle_keys[4] = {"throttleReadBpsDevice", "throttleWriteBpsDevice",
                                         "throttleReadIOPSDevice", "throttleWriteIOPSDevice"};
  if (GET_U64(obj, path, "weight", UINT16_MAX, r->block_io.weight) < 0 ||
      GET_U64(obj, path, "leafWeight", UINT16_MAX, r->block_io.leaf_weight) < 0 ||
      parse_weight_devices(a, obj, path, r, err) < 0)
    return -1;
  for (int i = 0; i < 4; i++)
    if (parse_throttle(a, obj, path, throttle_keys[i], &r->block_io.throttle[i],
                       &r->block_io.n_throttle[i], err) < 0)
      return -1;
  return 0;
}

static int hugepage_item(struct sr_arena *a, yajl_val v, const char *ip, void *items, size_t i,
                         void *ctx, sr_error_t *err)
{
  (void)ctx;
  struct sr_hugepage_limit *h = (struct sr_hugepage_limit *)items + i;
  if (sr_json_get_string(a, v, ip, "pageSize", true, &h->page_size, err) < 0 ||
      sr_json_get_u64(v, ip, "limit", UINT64_MAX, true, &h->limit, NULL, err) < 0)
    return -1;
  /* The page size names a cgroup file (hugetlb.<size>.limit_in_bytes): no path tricks. */
  if (h->page_size[0] == '\0' || strpbrk(h->page_size, "/.") != NULL)
    return sr_error_config_at(err, ip, "pageSize", "invalid page size \"%s\"", h->page_size);
  return 0;
}

static int parse_hugepages(struct sr_arena *a, yajl_val obj, const char *path,
                           struct sr_resources *r, sr_error_t *err)
{
  void *items;
  if (sr_json_walk_objects(a, obj, path, "hugepageLimits", sizeof(*r->hugepage_limits), &items,
                           &r->n_hugepage_limits, hugepage_item, NULL, err) < 0)
    return -1;
  r->hugepage_limits = items;
  return 0;
}

static int priority_item(struct sr_arena *a, yajl_val v, const char *ip, void *items, size_t i,
                         void *ctx, sr_error_t *err)
{
  (void)ctx;
  struct sr_net_priority *p = (struct sr_net_priority *)items + i;
  uint64_t u;
  if (sr_json_get_string(a, v, ip, "name", true, &p->name, err) < 0 ||
      sr_json_get_u64(v, ip, "priority", UINT32_MAX, true, &u, NULL, err) < 0)
    return -1;
  p->priority = (uint32_t)u;
  return 0;
}

static int parse_network(struct sr_arena *a, yajl_val obj, const char *path,
                         struct sr_resources *r, sr_error_t *err)
{
  uint64_t u;
  if (sr_json_get_u64(obj, path, "classID", UINT32_MAX, false, &u, &r->network.has_class_id,
                      err) < 0)
    return -1;
  r->network.class_id = (uint32_t)u;
  void *items;
  if (sr_json_walk_objects(a, obj, path, "priorities", sizeof(*r->network.priorities), &items,
                           &r->network.n_priorities, priority_item, NULL, err) < 0)
    return -1;
  r->network.priorities = items;
  return 0;
}

static int parse_rdma(struct sr_arena *a, yajl_val obj, const char *path, struct sr_resources *r,
                      sr_error_t *err)
{
  yajl_val m;
  if (sr_json_get_object(obj, path, "rdma", false, &m, err) < 0)
    return -1;
  if (m == NULL)
    return 0;
  size_t n = m->u.object.len;
  r->rdma = sr_arena_array(a, n ? n : 1, sizeof(struct sr_rdma_limit));
  if (r->rdma == NULL)
    return SR_OOM(err, path);
  for (size_t i = 0; i < n; i++) {
    struct sr_rdma_limit *l = &r->rdma[i];
    char *ip = sr_arena_printf(a, "%s%srdma.%s", path, SEP(path), m->u.object.keys[i]);
    l->device = sr_arena_strdup(a, m->u.object.keys[i]);
    if (ip == NULL || l->device == NULL)
      return SR_OOM(err, path);
    yajl_val v = m->u.object.values[i];
    if (sr_json_want_object(v, ip, err) < 0 ||
        GET_U64(v, ip, "hcaHandles", UINT32_MAX, l->hca_handles) < 0 ||
        GET_U64(v, ip, "hcaObjects", UINT32_MAX, l->hca_objects) < 0)
      return -1;
  }
  r->n_rdma = n;
  return 0;
}

int sr_config_resources_parse(struct sr_arena *a, yajl_val obj, const char *path,
                              struct sr_resources *r, sr_error_t *err)
{
  yajl_val v;
  char *sub;
  if (parse_device_rules(a, obj, path, r, err) < 0)
    return -1;
#define SECTION(key, call)                                                                         \
  do {                                                                                             \
    if (sr_json_get_object(obj, path, key, false, &v, err) < 0)                                    \
      return -1;                                                                                   \
    if (v) {                                                                                       \
      sub = sr_json_path(a, path, key);                                                            \
      if (sub == NULL)                                                                             \
        return SR_OOM(err, path);                                                                  \
      if (call < 0)                                                                                \
        return -1;                                                                                 \
    }                                                                                              \
  } while (0)
  SECTION("memory", parse_memory(v, sub, r, err));
  SECTION("cpu", parse_cpu(a, v, sub, r, err));
  SECTION("pids", GET_I64(v, sub, "limit", -1, INT64_MAX, r->pids_limit));
  SECTION("blockIO", parse_block_io(a, v, sub, r, err));
  SECTION("network", parse_network(a, v, sub, r, err));
#undef SECTION
  if (parse_hugepages(a, obj, path, r, err) < 0 || parse_rdma(a, obj, path, r, err) < 0 ||
      sr_json_get_string_map(a, obj, path, "unified", &r->unified_keys, &r->unified_values,
                             &r->n_unified, err) < 0)
    return -1;
  for (size_t i = 0; i < r->n_unified; i++) {
    const char *k = r->unified_keys[i];
    /* A key names a file in the container's cgroup directory, never a path out of it. */
    if (k[0] == '\0' || k[0] == '.' || strchr(k, '/') != NULL || strchr(k, '.') == NULL) {
      char *up = sr_json_path(a, path, "unified");
      if (up == NULL)
        return SR_OOM(err, path);
      return sr_error_config(err, up, k, "%s: invalid key \"%s\"", up, k);
    }
  }
  return 0;
}
