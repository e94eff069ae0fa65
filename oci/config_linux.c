#include "build.h"

#include "config_parse.h"
#include "mount_options.h"
#include "path.h"

#include <errno.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/personality.h>

static int id_map_item(struct sr_arena *a, yajl_val v, const char *ip, void *items, size_t i,
                       void *ctx, sr_error_t *err)
{
  (void)a, (void)ctx;
  uint64_t c, h, s;
  if (sr_json_get_u64(v, ip, "containerID", UINT32_MAX, true, &c, NULL, err) < 0 ||
      sr_json_get_u64(v, ip, "hostID", UINT32_MAX, true, &h, NULL, err) < 0 ||
      sr_json_get_u64(v, ip, "size", UINT32_MAX, true, &s, NULL, err) < 0)
    return -1;
  if (s == 0)
    return sr_error_config_at(err, ip, "size", "must be greater than zero");
  if (c + s - 1 > UINT32_MAX || h + s - 1 > UINT32_MAX)
    return sr_error_config_at(err, ip, NULL, "range goes past 4294967295");
  ((struct sr_id_map *)items)[i] = (struct sr_id_map){(uint32_t)c, (uint32_t)h, (uint32_t)s};
  return 0;
}

int sr_config_linux_parse_id_maps(struct sr_arena *a, yajl_val obj, const char *path,
                                  const char *key, struct sr_id_map **out, size_t *n,
                                  sr_error_t *err)
{
  void *items;
  if (sr_json_walk_objects(a, obj, path, key, sizeof(**out), &items, n, id_map_item, NULL,
                           err) < 0)
    return -1;
  *out = items;
  return 0;
}

static int parse_namespaces(struct sr_arena *a, yajl_val obj, const char *path,
                            struct sr_linux *l, sr_error_t *err)
{
  yajl_val arr;
  if (sr_json_get_array(obj, path, "namespaces", false, &arr, err) < 0)
    return -1;
  if (arr == NULL)
    return 0;
  for (size_t i = 0; i < arr->u.array.len; i++) {
    yajl_val v = arr->u.array.values[i];
    char *ip = sr_arena_printf(a, "%s.namespaces[%zu]", path, i);
    char *type, *nspath;
    if (ip == NULL)
      return SR_OOM(err, path);
    if (sr_json_want_object(v, ip, err) < 0 ||
        sr_json_get_string(a, v, ip, "type", true, &type, err) < 0 ||
        sr_json_get_string(a, v, ip, "path", false, &nspath, err) < 0)
      return -1;
    int k;
    for (k = 0; k < SR_NS_COUNT; k++)
      if (strcmp(sr_config_ns_name(k), type) == 0)
        break;
    if (k == SR_NS_COUNT)
      return sr_error_config_at(err, ip, "type", "unknown namespace type \"%s\"", type);
    if (l->namespaces[k].present)
      return sr_error_config_at(err, ip, "type", "duplicate namespace \"%s\"", type);
    if (nspath && nspath[0] == '\0')
      nspath = NULL;
    if (nspath && nspath[0] != '/')
      return sr_error_config_at(err, ip, "path", "must be an absolute path, got \"%s\"", nspath);
    l->namespaces[k].present = true;
    l->namespaces[k].path = nspath;
  }
  return 0;
}

static int parse_time_offsets(struct sr_arena *a, yajl_val obj, const char *path,
                              struct sr_linux *l, sr_error_t *err)
{
  yajl_val t;
  if (sr_json_get_object(obj, path, "timeOffsets", false, &t, err) < 0)
    return -1;
  if (t == NULL)
    return 0;
  for (size_t i = 0; i < t->u.object.len; i++) {
    const char *clock = t->u.object.keys[i];
    struct sr_time_offset *off;
    if (strcmp(clock, "monotonic") == 0)
      off = &l->time_monotonic;
    else if (strcmp(clock, "boottime") == 0)
      off = &l->time_boottime;
    else {
      char *tp = sr_json_path(a, path, "timeOffsets");
      return tp ? sr_error_config_at(err, tp, clock, "unknown clock (monotonic or boottime)")
                : SR_OOM(err, path);
    }
    char *cp = sr_arena_printf(a, "%s.timeOffsets.%s", path, clock);
    yajl_val v = t->u.object.values[i];
    uint64_t ns;
    if (cp == NULL)
      return SR_OOM(err, path);
    if (sr_json_want_object(v, cp, err) < 0 ||
        sr_json_get_i64(v, cp, "secs", INT64_MIN, INT64_MAX, false, &off->secs, NULL, err) < 0 ||
        sr_json_get_u64(v, cp, "nanosecs", 999999999, false, &ns, NULL, err) < 0)
      return -1;
    off->nanosecs = sr_json_field(v, "nanosecs") ? (uint32_t)ns : 0;
    off->set = true;
  }
  return 0;
}

static int device_item(struct sr_arena *a, yajl_val v, const char *ip, void *items, size_t i,
                       void *ctx, sr_error_t *err)
{
  (void)ctx;
  struct sr_device *d = (struct sr_device *)items + i;
  char *type;
  uint64_t u;
  if (sr_json_get_string(a, v, ip, "type", true, &type, err) < 0 ||
      sr_json_get_string(a, v, ip, "path", true, &d->path, err) < 0)
    return -1;
  if (strlen(type) != 1 || strchr("cbup", type[0]) == NULL)
    return sr_error_config_at(err, ip, "type", "unknown device type \"%s\" (c, b, u or p)", type);
  d->type = type[0];
  bool need_numbers = d->type != 'p';
  if (sr_json_get_i64(v, ip, "major", 0, UINT32_MAX, need_numbers, &d->major, NULL, err) < 0 ||
      sr_json_get_i64(v, ip, "minor", 0, UINT32_MAX, need_numbers, &d->minor, NULL, err) < 0)
    return -1;
  if (sr_json_get_u64(v, ip, "fileMode", 07777, false, &u, &d->has_file_mode, err) < 0)
    return -1;
  d->file_mode = (uint32_t)u;
  if (sr_json_get_u64(v, ip, "uid", UINT32_MAX, false, &u, &d->has_uid, err) < 0)
    return -1;
  d->uid = (uint32_t)u;
  if (sr_json_get_u64(v, ip, "gid", UINT32_MAX, false, &u, &d->has_gid, err) < 0)
    return -1;
  d->gid = (uint32_t)u;
  /* Cleaned as runc's filepath.Clean does: "/dev/x/" and "/dev//./x" name /dev/x, for the
   * node, its cgroup rule and the policy alike (oci/common/path.h). */
  if (d->path[0] == '/')
    sr_path_clean(d->path, d->path);
  if (d->path[0] != '/' || strcmp(d->path, "/") == 0)
    return sr_error_config_at(err, ip, "path", "must be an absolute path below /, got \"%s\"",
                              d->path);
  return 0;
}

static int parse_devices(struct sr_arena *a, yajl_val obj, const char *path, struct sr_linux *l,
                         sr_error_t *err)
{
  void *items;
  if (sr_json_walk_objects(a, obj, path, "devices", sizeof(*l->devices), &items, &l->n_devices,
                           device_item, NULL, err) < 0)
    return -1;
  l->devices = items;
  return 0;
}

static int parse_personality(struct sr_arena *a, yajl_val obj, const char *path,
                             struct sr_linux *l, sr_error_t *err)
{
  yajl_val v;
  if (sr_json_get_object(obj, path, "personality", false, &v, err) < 0)
    return -1;
  if (v == NULL)
    return 0;
  char *pp = sr_json_path(a, path, "personality");
  char *domain;
  char **flags;
  size_t nf;
  if (pp == NULL)
    return SR_OOM(err, path);
  if (sr_json_get_string(a, v, pp, "domain", true, &domain, err) < 0 ||
      sr_json_get_strv(a, v, pp, "flags", false, &flags, &nf, err) < 0)
    return -1;
  if (strcmp(domain, "LINUX") == 0)
    l->personality = PER_LINUX;
  else if (strcmp(domain, "LINUX32") == 0)
    l->personality = PER_LINUX32;
  else
    return sr_error_config_at(err, pp, "domain",
                              "unknown execution domain \"%s\" (LINUX or LINUX32)", domain);
  if (nf > 0)
    return sr_error_config_at(err, pp, "flags[0]", "unknown personality flag \"%s\"", flags[0]);
  l->has_personality = true;
  return 0;
}

/* Fields of a newer spec (or of other platforms' runtimes) that seerun cannot honour are
 * refused: ignoring them would run a container the config did not describe. */
static int refuse_unsupported(yajl_val obj, const char *path, sr_error_t *err)
{
  static const char *unsupported[] = {"intelRdt", "netDevices", "memoryPolicy"};
  for (size_t i = 0; i < sizeof(unsupported) / sizeof(unsupported[0]); i++)
    if (sr_json_field(obj, unsupported[i]) != NULL)
      return sr_error_config_at(err, path, unsupported[i], "not supported by seerun");
  return 0;
}

/* user:role:type[:level], each of user, role and type a name of letters, digits, '_', '.'
 * and '-'; the level (MLS/MCS: "s0", "s0-s0:c0.c1023", "s0:c1,c2") adds ':', ',' and '.'.
 * Checked on every host: the label is passed on as a mount option on SELinux hosts, where a
 * stray character would be another option. */
static bool is_selinux_context(const char *label)
{
  int field = 0;
  size_t run = 0;
  for (const char *p = label; *p; p++) {
    char ch = *p;
    bool name = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
                ch == '_' || ch == '.' || ch == '-';
    if (ch == ':' && field < 3) {
      if (run == 0)
        return false;
      field++;
      run = 0;
      continue;
    }
    if (!name && !(field == 3 && (ch == ':' || ch == ',')))
      return false;
    run++;
  }
  return field >= 2 && run > 0;
}

int sr_config_linux_parse(struct sr_arena *a, yajl_val obj, const char *path, struct sr_linux *l,
                          sr_error_t *err)
{
  if (obj == NULL)
    return 0;
  if (parse_namespaces(a, obj, path, l, err) < 0 ||
      sr_config_linux_parse_id_maps(a, obj, path, "uidMappings", &l->uid_mappings,
                                    &l->n_uid_mappings, err) < 0 ||
      sr_config_linux_parse_id_maps(a, obj, path, "gidMappings", &l->gid_mappings,
                                    &l->n_gid_mappings, err) < 0 ||
      parse_time_offsets(a, obj, path, l, err) < 0 || parse_devices(a, obj, path, l, err) < 0 ||
      parse_personality(a, obj, path, l, err) < 0 || refuse_unsupported(obj, path, err) < 0)
    return -1;
  if (sr_json_get_string(a, obj, path, "cgroupsPath", false, &l->cgroups_path, err) < 0 ||
      sr_json_get_string(a, obj, path, "mountLabel", false, &l->mount_label, err) < 0 ||
      sr_json_get_strv(a, obj, path, "maskedPaths", false, &l->masked_paths, &l->n_masked_paths,
                       err) < 0 ||
      sr_json_get_strv(a, obj, path, "readonlyPaths", false, &l->readonly_paths,
                       &l->n_readonly_paths, err) < 0 ||
      sr_json_get_string_map(a, obj, path, "sysctl", &l->sysctl_keys, &l->sysctl_values,
                             &l->n_sysctl, err) < 0)
    return -1;
  char k[SR_ELEM_KEY_MAX];
  if (l->mount_label && l->mount_label[0] && !is_selinux_context(l->mount_label))
    return sr_error_config_at(err, path, "mountLabel",
                              "\"%s\" is not an SELinux context (user:role:type[:level])",
                              l->mount_label);
  for (size_t i = 0; i < l->n_masked_paths; i++)
    if (l->masked_paths[i][0] != '/')
      return sr_error_config_at(err, path, sr_config_elem_key(k, "maskedPaths", i),
                                "must be an absolute path");
  for (size_t i = 0; i < l->n_readonly_paths; i++)
    if (l->readonly_paths[i][0] != '/')
      return sr_error_config_at(err, path, sr_config_elem_key(k, "readonlyPaths", i),
                                "must be an absolute path");
  for (size_t i = 0; i < l->n_sysctl; i++)
    if (l->sysctl_keys[i][0] == '\0' || strstr(l->sysctl_keys[i], "..") ||
        l->sysctl_keys[i][0] == '/' || l->sysctl_keys[i][0] == '.') {
      char *sp = sr_json_path(a, path, "sysctl");
      if (sp == NULL)
        return SR_OOM(err, path);
      return sr_error_config(err, sp, l->sysctl_keys[i], "%s: invalid key \"%s\"", sp,
                             l->sysctl_keys[i]);
    }

  char *prop;
  if (sr_json_get_string(a, obj, path, "rootfsPropagation", false, &prop, err) < 0)
    return -1;
  if (prop && prop[0]) {
    long f = sr_mount_options_propagation(prop);
    if (f < 0)
      return sr_error_config_at(err, path, "rootfsPropagation", "unknown propagation \"%s\"", prop);
    l->rootfs_propagation = (unsigned long)f;
  }

  yajl_val v;
  if (sr_json_get_object(obj, path, "resources", false, &v, err) < 0)
    return -1;
  if (v) {
    char *rp = sr_json_path(a, path, "resources");
    l->resources = sr_arena_alloc(a, sizeof(*l->resources));
    if (rp == NULL || l->resources == NULL)
      return SR_OOM(err, path);
    if (sr_config_resources_parse(a, v, rp, l->resources, err) < 0)
      return -1;
  }
  if (sr_json_get_object(obj, path, "seccomp", false, &v, err) < 0)
    return -1;
  if (v) {
    char *sp = sr_json_path(a, path, "seccomp");
    l->seccomp = sr_arena_alloc(a, sizeof(*l->seccomp));
    if (sp == NULL || l->seccomp == NULL)
      return SR_OOM(err, path);
    if (sr_config_seccomp_parse(a, v, sp, l->seccomp, err) < 0)
      return -1;
  }
  return 0;
}
