#include "build.h"

#include "state.h"

#include "cleanup.h"
#include "json.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct sr_state_record *sr_state_record_new(void)
{
  struct sr_state_record *r = calloc(1, sizeof(*r));
  if (r)
    r->version = SR_STATE_VERSION;
  return r;
}

void sr_state_record_free(struct sr_state_record *r)
{
  sr_arena_release(&r->arena);
  free(r);
}

static const char *phase_names[] = {[SR_PHASE_CREATING] = "creating",
                                    [SR_PHASE_CREATED] = "created"};

int sr_state_record_parse(const char *buf, size_t len, struct sr_state_record **out,
                          sr_error_t *err)
{
  _cleanup_yajl_ yajl_val root = NULL;
  _cleanup_record_ struct sr_state_record *r = sr_state_record_new();
  if (r == NULL)
    return sr_error_make(err, ENOMEM, "state.json");
  struct sr_arena *a = &r->arena;
  if (sr_json_parse(buf, len, &root, err) < 0 || sr_json_want_object(root, "", err) < 0)
    return sr_error_wrap(err, "state.json");
  int64_t n;
  char *phase;
  if (sr_json_get_i64(root, "", "version", 1, INT32_MAX, true, &n, NULL, err) < 0)
    return sr_error_wrap(err, "state.json");
  if (n != SR_STATE_VERSION)
    return sr_error_make(err, 0, "state.json: version %lld is not supported (this seerun reads %d)",
                         (long long)n, SR_STATE_VERSION);
  r->version = (int)n;
  if (sr_json_get_string(a, root, "", "id", true, &r->id, err) < 0 ||
      sr_json_get_string(a, root, "", "bundle", true, &r->bundle, err) < 0 ||
      sr_json_get_string(a, root, "", "rootfs", true, &r->rootfs, err) < 0 ||
      sr_json_get_string(a, root, "", "created", true, &r->created, err) < 0 ||
      sr_json_get_string(a, root, "", "owner", false, &r->owner, err) < 0 ||
      sr_json_get_string(a, root, "", "phase", true, &phase, err) < 0)
    return sr_error_wrap(err, "state.json");
  if (strcmp(phase, "creating") == 0)
    r->phase = SR_PHASE_CREATING;
  else if (strcmp(phase, "created") == 0)
    r->phase = SR_PHASE_CREATED;
  else
    return sr_error_make(err, 0, "state.json: phase: unknown value \"%s\"", phase);
  uint64_t u;
  if (sr_json_get_i64(root, "", "creatorPid", 0, INT32_MAX, false, &n, NULL, err) < 0)
    return sr_error_wrap(err, "state.json");
  r->creator_pid = sr_json_field(root, "creatorPid") ? (pid_t)n : 0;
  if (sr_json_get_u64(root, "", "creatorStartTime", UINT64_MAX, false, &r->creator_start, NULL,
                      err) < 0 ||
      sr_json_get_u64(root, "", "pidStartTime", UINT64_MAX, false, &r->pid_start, NULL, err) < 0)
    return sr_error_wrap(err, "state.json");
  if (sr_json_get_i64(root, "", "pid", 0, INT32_MAX, false, &n, NULL, err) < 0)
    return sr_error_wrap(err, "state.json");
  r->pid = sr_json_field(root, "pid") ? (pid_t)n : 0;
  if (sr_json_get_bool(root, "", "ownUserns", &r->own_userns, NULL, err) < 0 ||
      sr_json_get_string(a, root, "", "configDigest", false, &r->config_digest, err) < 0)
    return sr_error_wrap(err, "state.json");
  yajl_val sup;
  if (sr_json_get_object(root, "", "supervisor", false, &sup, err) < 0)
    return sr_error_wrap(err, "state.json");
  if (sup) {
    if (sr_json_get_i64(sup, "supervisor", "pid", 1, INT32_MAX, true, &n, NULL, err) < 0 ||
        sr_json_get_u64(sup, "supervisor", "startTime", UINT64_MAX, true, &r->supervisor_start,
                        NULL, err) < 0)
      return sr_error_wrap(err, "state.json");
    r->supervisor_pid = (pid_t)n;
    if (sr_json_get_bool(sup, "supervisor", "activity", &r->supervisor_activity, NULL, err) < 0)
      return sr_error_wrap(err, "state.json");
  }
  yajl_val lst;
  if (sr_json_get_object(root, "", "listener", false, &lst, err) < 0)
    return sr_error_wrap(err, "state.json");
  if (lst && (sr_json_get_u64(lst, "listener", "dev", UINT64_MAX, true, &r->listener_dev, NULL,
                              err) < 0 ||
              sr_json_get_u64(lst, "listener", "ino", UINT64_MAX, true, &r->listener_ino, NULL,
                              err) < 0))
    return sr_error_wrap(err, "state.json");
  yajl_val cg;
  if (sr_json_get_object(root, "", "cgroup", false, &cg, err) < 0)
    return sr_error_wrap(err, "state.json");
  if (cg) {
    if (sr_json_get_u64(cg, "cgroup", "version", 2, true, &u, NULL, err) < 0 ||
        sr_json_get_string(a, cg, "cgroup", "path", true, &r->cgroup_path, err) < 0 ||
        sr_json_get_bool(cg, "cgroup", "created", &r->cgroup_created, NULL, err) < 0 ||
        sr_json_get_bool(cg, "cgroup", "systemd", &r->systemd_cgroup, NULL, err) < 0)
      return sr_error_wrap(err, "state.json");
    r->cgroup_version = (int)u;
  }
  if (sr_json_get_string_map(a, root, "", "annotations", &r->annotation_keys,
                             &r->annotation_values, &r->n_annotations, err) < 0)
    return sr_error_wrap(err, "state.json");
  yajl_val dec;
  if (sr_json_get_object(root, "", "decided", false, &dec, err) < 0)
    return sr_error_wrap(err, "state.json");
  if (dec) {
    yajl_val caps;
    int64_t landlock = 0;
    if (sr_json_get_string(a, dec, "decided", "profile", false, &r->profile, err) < 0 ||
        sr_json_get_bool(dec, "decided", "networkGranted", &r->network_granted, NULL, err) < 0 ||
        sr_json_get_bool(dec, "decided", "builtinSeccomp", &r->builtin_seccomp, NULL, err) < 0 ||
        sr_json_get_bool(dec, "decided", "egressProxy", &r->egress_proxy, NULL, err) < 0 ||
        sr_json_get_i64(dec, "decided", "landlock", 0, 1000, false, &landlock, NULL, err) < 0 ||
        sr_json_get_array(dec, "decided", "capabilities", false, &caps, err) < 0)
      return sr_error_wrap(err, "state.json");
    r->landlock_abi = (int)landlock;
    if (caps) {
      if (caps->u.array.len != 5)
        return sr_error_make(err, 0, "state.json: decided.capabilities: must have 5 sets");
      for (size_t i = 0; i < 5; i++)
        if (sr_json_as_u64(caps->u.array.values[i], "decided.capabilities", UINT64_MAX,
                           &r->decided_caps[i], err) < 0)
          return sr_error_wrap(err, "state.json");
      r->has_decided_caps = true;
    }
  }
  *out = steal_ptr(r);
  return 0;
}

static int gen_finish(sr_json_gen_t g, char **out, size_t *len, sr_error_t *err)
{
  const unsigned char *buf;
  size_t l;
  if (sr_json_gen_buf(g, &buf, &l, err) < 0)
    return -1;
  *out = malloc(l + 1);
  if (*out == NULL)
    return sr_error_make(err, ENOMEM, "generate JSON");
  memcpy(*out, buf, l);
  (*out)[l] = '\0';
  *len = l;
  return 0;
}

static void gen_annotations(sr_json_gen_t g, char **keys, char **values, size_t n)
{
  if (n == 0)
    return;
  sr_json_put_key(g, "annotations");
  sr_json_map_open(g);
  for (size_t i = 0; i < n; i++)
    sr_json_put_kv_string(g, keys[i], values[i]);
  sr_json_map_close(g);
}

int sr_state_record_serialize(const struct sr_state_record *r, char **out, size_t *len,
                              sr_error_t *err)
{
  _cleanup_gen_ sr_json_gen_t g = NULL;
  if (sr_json_gen_new(&g, false, err) < 0)
    return -1;
  sr_json_map_open(g);
  sr_json_put_kv_i64(g, "version", r->version);
  sr_json_put_kv_string(g, "id", r->id);
  sr_json_put_kv_string(g, "bundle", r->bundle);
  sr_json_put_kv_string(g, "rootfs", r->rootfs);
  sr_json_put_kv_string(g, "created", r->created);
  sr_json_put_kv_string(g, "owner", r->owner ? r->owner : "");
  sr_json_put_kv_string(g, "phase", phase_names[r->phase]);
  if (r->creator_pid > 0) {
    sr_json_put_kv_i64(g, "creatorPid", r->creator_pid);
    sr_json_put_kv_u64(g, "creatorStartTime", r->creator_start);
  }
  if (r->pid > 0) {
    sr_json_put_kv_i64(g, "pid", r->pid);
    sr_json_put_kv_u64(g, "pidStartTime", r->pid_start);
  }
  if (r->own_userns)
    sr_json_put_kv_bool(g, "ownUserns", true);
  if (r->config_digest)
    sr_json_put_kv_string(g, "configDigest", r->config_digest);
  if (r->supervisor_pid > 0) {
    sr_json_put_key(g, "supervisor");
    sr_json_map_open(g);
    sr_json_put_kv_i64(g, "pid", r->supervisor_pid);
    sr_json_put_kv_u64(g, "startTime", r->supervisor_start);
    if (r->supervisor_activity)
      sr_json_put_kv_bool(g, "activity", true);
    sr_json_map_close(g);
  }
  if (r->listener_ino) {
    sr_json_put_key(g, "listener");
    sr_json_map_open(g);
    sr_json_put_kv_u64(g, "dev", r->listener_dev);
    sr_json_put_kv_u64(g, "ino", r->listener_ino);
    sr_json_map_close(g);
  }
  if (r->cgroup_version) {
    sr_json_put_key(g, "cgroup");
    sr_json_map_open(g);
    sr_json_put_kv_i64(g, "version", r->cgroup_version);
    sr_json_put_kv_string(g, "path", r->cgroup_path);
    sr_json_put_kv_bool(g, "created", r->cgroup_created);
    sr_json_put_kv_bool(g, "systemd", r->systemd_cgroup);
    sr_json_map_close(g);
  }
  gen_annotations(g, r->annotation_keys, r->annotation_values, r->n_annotations);
  if (r->profile) {
    sr_json_put_key(g, "decided");
    sr_json_map_open(g);
    sr_json_put_kv_string(g, "profile", r->profile);
    sr_json_put_kv_bool(g, "networkGranted", r->network_granted);
    sr_json_put_kv_bool(g, "builtinSeccomp", r->builtin_seccomp);
    if (r->egress_proxy)
      sr_json_put_kv_bool(g, "egressProxy", true);
    sr_json_put_kv_i64(g, "landlock", r->landlock_abi);
    if (r->has_decided_caps) {
      sr_json_put_key(g, "capabilities");
      sr_json_array_open(g);
      for (int i = 0; i < 5; i++)
        sr_json_put_u64(g, r->decided_caps[i]);
      sr_json_array_close(g);
    }
    sr_json_map_close(g);
  }
  sr_json_map_close(g);
  return gen_finish(g, out, len, err);
}

int sr_state_json(const struct sr_oci_state *s, bool pretty, char **out, size_t *len,
                  sr_error_t *err)
{
  _cleanup_gen_ sr_json_gen_t g = NULL;
  if (sr_json_gen_new(&g, pretty, err) < 0)
    return -1;
  sr_json_map_open(g);
  sr_json_put_kv_string(g, "ociVersion", SR_OCI_VERSION);
  sr_json_put_kv_string(g, "id", s->id);
  sr_json_put_kv_i64(g, "pid", s->pid);
  sr_json_put_kv_string(g, "status", s->status);
  sr_json_put_kv_string(g, "bundle", s->bundle);
  sr_json_put_kv_string(g, "rootfs", s->rootfs);
  sr_json_put_kv_string(g, "created", s->created);
  sr_json_put_kv_string(g, "owner", s->owner ? s->owner : "");
  gen_annotations(g, s->annotation_keys, s->annotation_values, s->n_annotations);
  sr_json_map_close(g);
  return gen_finish(g, out, len, err);
}

int sr_state_process_json(const struct sr_oci_state *s, pid_t pid, const char *metadata, char **out,
                          sr_error_t *err)
{
  _cleanup_free_ char *state = NULL;
  size_t len;
  if (sr_state_json(s, false, &state, &len, err) < 0)
    return -1;
  _cleanup_gen_ sr_json_gen_t g = NULL;
  if (sr_json_gen_new(&g, false, err) < 0)
    return -1;
  sr_json_map_open(g);
  sr_json_put_kv_string(g, "ociVersion", SR_OCI_VERSION);
  sr_json_put_key(g, "fds");
  sr_json_array_open(g);
  sr_json_put_string(g, "seccompFd");
  sr_json_array_close(g);
  sr_json_put_kv_i64(g, "pid", pid);
  sr_json_put_kv_string(g, "metadata", metadata ? metadata : "");
  sr_json_put_key(g, "state");
  sr_json_put_raw(g, state, len); /* already JSON: inserted verbatim */
  sr_json_map_close(g);
  return gen_finish(g, out, &len, err);
}
