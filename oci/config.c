#include "build.h"

#include "cleanup.h"
#include "config_parse.h"
#include "mount_options.h"
#include "path.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

static const struct {
  const char *name, *proc_name;
  int flag;
} ns_table[SR_NS_COUNT] = {
    [SR_NS_USER] = {"user", "user", CLONE_NEWUSER},
    [SR_NS_MOUNT] = {"mount", "mnt", CLONE_NEWNS},
    [SR_NS_PID] = {"pid", "pid", CLONE_NEWPID},
    [SR_NS_NET] = {"network", "net", CLONE_NEWNET},
    [SR_NS_IPC] = {"ipc", "ipc", CLONE_NEWIPC},
    [SR_NS_UTS] = {"uts", "uts", CLONE_NEWUTS},
    [SR_NS_CGROUP] = {"cgroup", "cgroup", CLONE_NEWCGROUP},
    [SR_NS_TIME] = {"time", "time", CLONE_NEWTIME},
};

const char *sr_config_ns_name(enum sr_ns_kind k)
{
  return ns_table[k].name;
}

const char *sr_config_ns_proc_name(enum sr_ns_kind k)
{
  return ns_table[k].proc_name;
}

int sr_config_ns_clone_flag(enum sr_ns_kind k)
{
  return ns_table[k].flag;
}

static const char *hook_names[SR_HOOK_COUNT] = {
    [SR_HOOK_PRESTART] = "prestart",
    [SR_HOOK_CREATE_RUNTIME] = "createRuntime",
    [SR_HOOK_CREATE_CONTAINER] = "createContainer",
    [SR_HOOK_START_CONTAINER] = "startContainer",
    [SR_HOOK_POSTSTART] = "poststart",
    [SR_HOOK_POSTSTOP] = "poststop",
};

const char *sr_config_hook_name(enum sr_hook_kind k)
{
  return hook_names[k];
}

const char *sr_config_annotation(const struct sr_config *c, const char *key)
{
  for (size_t i = 0; i < c->n_annotations; i++)
    if (strcmp(c->annotation_keys[i], key) == 0)
      return c->annotation_values[i];
  return NULL;
}

/* One numeric SemVer identifier: digits only, no sign, space or leading zero.  (sscanf("%u")
 * took " 1", "-0" and "4294967297", which wrapped to 1.)  NULL when malformed. */
static const char *semver_number(const char *p, unsigned *out)
{
  if (*p < '0' || *p > '9' || (p[0] == '0' && p[1] >= '0' && p[1] <= '9'))
    return NULL;
  unsigned n = 0;
  for (; *p >= '0' && *p <= '9'; p++) {
    if (n > 99999)
      return NULL;
    n = n * 10 + (unsigned)(*p - '0');
  }
  *out = n;
  return p;
}

/* ociVersion must be a SemVer 1.0.0 to 1.3.x (pre-release and build suffixes allowed, as
 * "runc spec" writes "1.0.2-dev"). */
static int check_oci_version(const char *v, sr_error_t *err)
{
  unsigned major = 0, minor = 0, patch = 0;
  const char *p = semver_number(v, &major);
  if (p && *p == '.')
    p = semver_number(p + 1, &minor);
  else
    p = NULL;
  if (p && *p == '.')
    p = semver_number(p + 1, &patch);
  else
    p = NULL;
  if (p && (*p == '-' || *p == '+')) {
    /* Pre-release and build metadata: one or more of [0-9A-Za-z-.+]. */
    size_t n = strlen(p + 1);
    if (n == 0 || strspn(p + 1, "0123456789abcdefghijklmnopqrstuvwxyz"
                                "ABCDEFGHIJKLMNOPQRSTUVWXYZ-.+") != n)
      p = NULL;
    else
      p += 1 + n;
  }
  if (p == NULL || *p != '\0')
    return sr_error_config_at(err, NULL, "ociVersion", "\"%s\" is not a SemVer version", v);
  if (major != 1 || minor > 3)
    return sr_error_config_at(err, NULL, "ociVersion",
                              "%s is not supported (supported: 1.0.0 to 1.3.x)", v);
  return 0;
}

static int hook_item(struct sr_arena *a, yajl_val v, const char *path, void *items, size_t i,
                     void *ctx, sr_error_t *err)
{
  (void)ctx;
  struct sr_hook *h = (struct sr_hook *)items + i;
  if (sr_json_get_string(a, v, path, "path", true, &h->path, err) < 0 ||
      sr_json_get_strv(a, v, path, "args", false, &h->args, &h->n_args, err) < 0 ||
      sr_json_get_strv(a, v, path, "env", false, &h->env, &h->n_env, err) < 0 ||
      sr_json_get_i64(v, path, "timeout", INT32_MIN, INT32_MAX, false, &h->timeout, NULL, err) < 0)
    return -1;
  if (h->path[0] != '/')
    return sr_error_config_at(err, path, "path", "must be an absolute path, got \"%s\"", h->path);
  /* The spec: "timeout ... MUST be greater than zero". */
  bool has_timeout = sr_json_field(v, "timeout") != NULL;
  if (has_timeout && h->timeout <= 0)
    return sr_error_config_at(err, path, "timeout", "must be greater than zero");
  return 0;
}

static int parse_hooks(struct sr_arena *a, yajl_val root, struct sr_hooks *out, sr_error_t *err)
{
  yajl_val hooks;
  if (sr_json_get_object(root, "", "hooks", false, &hooks, err) < 0)
    return -1;
  if (hooks == NULL)
    return 0;
  for (int k = 0; k < SR_HOOK_COUNT; k++) {
    void *items;
    if (sr_json_walk_objects(a, hooks, "hooks", hook_names[k], sizeof(struct sr_hook), &items,
                             &out->n[k], hook_item, NULL, err) < 0)
      return -1;
    out->list[k] = items;
  }
  return 0;
}

/* dest made absolute and cleaned (oci/common/path.h), in the arena. */
static char *clean_destination(struct sr_arena *a, const char *dest)
{
  char *out = sr_arena_alloc(a, strlen(dest) + 2);
  if (out != NULL)
    sr_path_clean(dest, out);
  return out;
}

static int parse_mount(struct sr_arena *a, yajl_val v, const char *path, struct sr_mount *m,
                       sr_error_t *err)
{
  if (sr_json_get_string(a, v, path, "destination", true, &m->destination, err) < 0 ||
      sr_json_get_string(a, v, path, "type", false, &m->type, err) < 0 ||
      sr_json_get_string(a, v, path, "source", false, &m->source, err) < 0 ||
      sr_json_get_strv(a, v, path, "options", false, &m->options, &m->n_options, err) < 0 ||
      sr_config_linux_parse_id_maps(a, v, path, "uidMappings", &m->uid_mappings, &m->n_uid_mappings,
                                    err) < 0 ||
      sr_config_linux_parse_id_maps(a, v, path, "gidMappings", &m->gid_mappings, &m->n_gid_mappings,
                                    err) < 0)
    return -1;
  if (m->destination[0] == '\0')
    return sr_error_config_at(err, path, "destination", "must not be empty");
  /* Relative destinations are deprecated but allowed: relative to "/".  Cleaned as runc does
   * (filepath.Clean("/" + dest): ".." stops at "/"), here, so that the policy, the audit and
   * the mount all judge the one path the mount lands on. */
  m->destination = clean_destination(a, m->destination);
  if (m->destination == NULL)
    return SR_OOM(err, path);
  char *opath = sr_json_path(a, path, "options");
  if (opath == NULL)
    return SR_OOM(err, path);
  if (sr_mount_options_parse(a, m->options, m->n_options, opath, &m->opts, err) < 0)
    return -1;
  if ((m->n_uid_mappings > 0) != (m->n_gid_mappings > 0))
    return sr_error_config_at(err, path, NULL,
                              "uidMappings and gidMappings must be given together");
  if (m->n_uid_mappings > 0 && !m->opts.idmap && !m->opts.ridmap)
    return sr_error_config_at(err, path, NULL,
                              "uidMappings need the \"idmap\" or \"ridmap\" option");
  bool is_bind = m->opts.bind || m->opts.rbind;
  /* The spec: an idmap option is applied or the create fails; only a bind can be idmapped
   * here (a new filesystem's owners are its own). */
  if (!is_bind && (m->opts.idmap || m->opts.ridmap))
    return sr_error_make(err, 0, "%s.options: \"%s\" is only supported on a bind mount", path,
                         m->opts.ridmap ? "ridmap" : "idmap");
  if (!is_bind && (m->type == NULL || m->type[0] == '\0'))
    return sr_error_config_at(err, path, "type", "required for a mount that is not a bind mount");
  if (is_bind && (m->source == NULL || m->source[0] == '\0'))
    return sr_error_config_at(err, path, "source", "required for a bind mount");
  return 0;
}

static int mount_item(struct sr_arena *a, yajl_val v, const char *ip, void *items, size_t i,
                      void *ctx, sr_error_t *err)
{
  (void)ctx;
  struct sr_mount *m = (struct sr_mount *)items + i;
  if (parse_mount(a, v, ip, m, err) < 0)
    return -1;
  m->field = ip;
  return 0;
}

static int parse_mounts(struct sr_arena *a, yajl_val root, struct sr_config *c, sr_error_t *err)
{
  void *items;
  if (sr_json_walk_objects(a, root, "", "mounts", sizeof(*c->mounts), &items, &c->n_mounts,
                           mount_item, NULL, err) < 0)
    return -1;
  c->mounts = items;
  return 0;
}

int sr_config_sysctl_namespace(const char *key)
{
  /* The kernel's namespaced sysctls, as runc lists them. */
  static const char *ipc[] = {"kernel.msgmax", "kernel.msgmnb",         "kernel.msgmni",
                              "kernel.sem",    "kernel.shmall",         "kernel.shmmax",
                              "kernel.shmmni", "kernel.shm_rmid_forced"};
  char k[256];
  size_t len = strlen(key);
  if (len >= sizeof(k))
    return -1;
  /* "net/ipv4/ip_forward" is the same key as "net.ipv4.ip_forward". */
  for (size_t i = 0; i <= len; i++)
    k[i] = key[i] == '/' ? '.' : key[i];
  for (size_t i = 0; i < sizeof(ipc) / sizeof(ipc[0]); i++)
    if (strcmp(k, ipc[i]) == 0)
      return SR_NS_IPC;
  if (strncmp(k, "fs.mqueue.", 10) == 0)
    return SR_NS_IPC;
  if (strcmp(k, "kernel.hostname") == 0 || strcmp(k, "kernel.domainname") == 0)
    return SR_NS_UTS;
  if (strncmp(k, "net.", 4) == 0)
    return SR_NS_NET;
  return -1;
}

/* linux.sysctl is written through the runtime's own procfs: a key that is not namespaced, or
 * whose namespace the container shares with the runtime, would change the host's kernel. */
static int check_sysctls(const struct sr_config *c, sr_error_t *err)
{
  const struct sr_linux *l = &c->linux_;
  for (size_t i = 0; i < l->n_sysctl; i++) {
    const char *key = l->sysctl_keys[i];
    int k = sr_config_sysctl_namespace(key);
    /* Two values for one name, written in an order the config cannot see: refused, as runc
     * and crun refuse it. */
    if (k == SR_NS_UTS) {
      bool host = strncmp(key + 7, "host", 4) == 0; /* "kernel.hostname" / "kernel/hostname" */
      const char *field = host ? "hostname" : "domainname";
      const char *value = host ? c->hostname : c->domainname;
      if (value && value[0])
        return sr_error_make(err, 0,
                             "linux.sysctl: \"%s\" conflicts with the config's \"%s\" "
                             "field: set one of them",
                             key, field);
    }
    if (k < 0)
      return sr_error_config(err, "linux.sysctl", key,
                             "linux.sysctl: \"%s\" is not namespaced: setting it would "
                             "change the host",
                             key);
    if (!l->namespaces[k].present)
      return sr_error_config(err, "linux.sysctl", key,
                             "linux.sysctl: \"%s\" needs %s %s namespace of the container "
                             "(linux.namespaces has none)",
                             key, k == SR_NS_IPC ? "an" : "a", sr_config_ns_name(k));
  }
  return 0;
}

/* Cross-field rules of the spec that no single section can check. */
static int validate(struct sr_config *c, sr_error_t *err)
{
  const struct sr_linux *l = &c->linux_;
  bool new_userns = l->namespaces[SR_NS_USER].present && l->namespaces[SR_NS_USER].path == NULL;
  if (new_userns && (l->n_uid_mappings == 0 || l->n_gid_mappings == 0))
    return sr_error_config(err, "linux", l->n_uid_mappings == 0 ? "uidMappings" : "gidMappings",
                           "linux.uidMappings, linux.gidMappings: required with a new user "
                           "namespace");
  if (!l->namespaces[SR_NS_USER].present && (l->n_uid_mappings || l->n_gid_mappings))
    return sr_error_config_at(err, "linux", "uidMappings", "given without a user namespace");
  if ((c->hostname || c->domainname) && !l->namespaces[SR_NS_UTS].present)
    return sr_error_config_at(err, NULL, c->hostname ? "hostname" : "domainname",
                              "setting it needs a uts namespace");
  if ((l->time_monotonic.set || l->time_boottime.set) &&
      !(l->namespaces[SR_NS_TIME].present && l->namespaces[SR_NS_TIME].path == NULL))
    return sr_error_config_at(err, "linux", "timeOffsets", "needs a new time namespace");
  /* Without a mount namespace the container has the runtime's mounts (runtime.md):
   * nothing can be masked or made read-only there (runc refuses these too).  Whether such a
   * config may run at all is the policy's to say. */
  if (!l->namespaces[SR_NS_MOUNT].present && (l->n_masked_paths || l->n_readonly_paths))
    return sr_error_config_at(err, "linux", l->n_masked_paths ? "maskedPaths" : "readonlyPaths",
                              "needs a mount namespace of the container's own");
  if (check_sysctls(c, err) < 0)
    return -1;
  for (size_t i = 0; i < c->n_mounts; i++) {
    const struct sr_mount *m = &c->mounts[i];
    if ((m->opts.idmap || m->opts.ridmap) && m->n_uid_mappings == 0 &&
        !l->namespaces[SR_NS_USER].present)
      return sr_error_config_at(err, m->field, NULL,
                                "\"idmap\" without uidMappings needs a user namespace");
  }
  return 0;
}

int sr_config_parse_failed(sr_error_t *err, const char *what)
{
  /* Everything a parser refuses is the document's fault, also a check made with plain
   * sr_error_make (then without a field); a failed allocation is not. */
  if (err && *err && (*err)->kind == SR_ERR_OTHER && (*err)->status == 0)
    (*err)->kind = SR_ERR_CONFIG;
  return sr_error_wrap(err, "%s", what);
}

/* The document into c; the caller wraps what fails (sr_config_parse_failed). */
static int parse_document(const char *buf, size_t len, struct sr_config *c, sr_error_t *err)
{
  _cleanup_yajl_ yajl_val root = NULL;
  if (sr_json_parse(buf, len, &root, err) < 0 || sr_json_want_object(root, "", err) < 0)
    return -1;
  struct sr_arena *a = &c->arena;
  if (sr_json_get_string(a, root, "", "ociVersion", true, &c->oci_version, err) < 0 ||
      check_oci_version(c->oci_version, err) < 0)
    return -1;

  yajl_val v;
  if (sr_json_get_object(root, "", "root", true, &v, err) < 0 ||
      sr_json_get_string(a, v, "root", "path", true, &c->root_path, err) < 0 ||
      sr_json_get_bool(v, "root", "readonly", &c->root_readonly, NULL, err) < 0)
    return -1;
  if (c->root_path[0] == '\0')
    return sr_error_config_at(err, "root", "path", "must not be empty");
  if (sr_json_get_string(a, root, "", "hostname", false, &c->hostname, err) < 0 ||
      sr_json_get_string(a, root, "", "domainname", false, &c->domainname, err) < 0 ||
      parse_mounts(a, root, c, err) < 0 || parse_hooks(a, root, &c->hooks, err) < 0 ||
      sr_json_get_string_map(a, root, "", "annotations", &c->annotation_keys,
                             &c->annotation_values, &c->n_annotations, err) < 0)
    return -1;

  if (sr_json_get_object(root, "", "process", false, &v, err) < 0)
    return -1;
  if (v) {
    c->process = sr_arena_alloc(a, sizeof(*c->process));
    if (c->process == NULL)
      return SR_OOM(err, "process");
    if (sr_config_process_parse(a, v, "process", c->process, err) < 0)
      return -1;
  }

  if (sr_json_get_object(root, "", "linux", false, &v, err) < 0 ||
      sr_config_linux_parse(a, v, "linux", &c->linux_, err) < 0 || validate(c, err) < 0)
    return -1;
  return 0;
}

int sr_config_parse(const char *buf, size_t len, const char *what, struct sr_config **out,
                    sr_error_t *err)
{
  _cleanup_config_ struct sr_config *c = calloc(1, sizeof(*c));
  if (c == NULL)
    return sr_error_make(err, ENOMEM, "%s", what);
  if (parse_document(buf, len, c, err) < 0)
    return sr_config_parse_failed(err, what);
  *out = steal_ptr(c);
  return 0;
}

int sr_config_parse_process(const char *buf, size_t len, const char *what, struct sr_arena *a,
                            struct sr_process **out, sr_error_t *err)
{
  _cleanup_yajl_ yajl_val root = NULL;
  if (sr_json_parse(buf, len, &root, err) < 0 || sr_json_want_object(root, "", err) < 0)
    return sr_config_parse_failed(err, what);
  struct sr_process *p = sr_arena_alloc(a, sizeof(*p));
  if (p == NULL)
    return sr_error_make(err, ENOMEM, "%s", what);
  if (sr_config_process_parse(a, root, "", p, err) < 0)
    return sr_config_parse_failed(err, what);
  *out = p;
  return 0;
}

void sr_config_free(struct sr_config *c)
{
  sr_arena_release(&c->arena);
  free(c);
}
