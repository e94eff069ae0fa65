#include "build.h"

#include "policy_run.h"

#include "cleanup.h"
#include "log.h"
#include "state_roots.h"
#include "namespaces.h"
#include "userns_registry.h"
#include "userns_remap.h"
#include "dir.h"
#include "fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/nsfs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

/* A policy someone other than root could have written is no policy. */
static int check_owner(int fd, const char *what, const char *path, sr_error_t *err)
{
  struct stat st;
  if (fstat(fd, &st) < 0)
    return sr_error_sys(err, "%s `%s`", what, path);
  if (st.st_uid != 0)
    return sr_error_make(err, 0, "%s `%s`: must be owned by root (owner uid %u)", what, path,
                         st.st_uid);
  if (st.st_mode & (S_IWGRP | S_IWOTH))
    return sr_error_make(err, 0, "%s `%s`: must not be writable by group or others (mode %04o)",
                         what, path, st.st_mode & 07777);
  return 0;
}

/* The policy file's bytes, read through the descriptor whose owner and mode were checked. */
static int read_policy_file(const char *path, char **buf, size_t *len, bool *found,
                            sr_error_t *err)
{
  *found = false;
  _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ENOENT)
      return 0;
    return sr_error_sys(err, "policy `%s`", path);
  }
  *found = true;
  char dir[PATH_MAX];
  snprintf(dir, sizeof(dir), "%s", path);
  _cleanup_close_ int dirfd = open(dirname(dir), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (dirfd < 0)
    return sr_error_sys(err, "policy directory of `%s`", path);
  if (check_owner(fd, "policy", path, err) < 0 ||
      check_owner(dirfd, "policy directory", dir, err) < 0)
    return -1;
  char fdpath[64];
  snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", fd);
  if (sr_fileio_read_at(AT_FDCWD, fdpath, SR_MAX_CONFIG_SIZE, buf, len, err) < 0)
    return sr_error_wrap(err, "policy `%s`", path);
  return 0;
}

/* The policy of pc's bytes: prev's parse when prev was parsed from the very same bytes
 * (parsing is a function of the bytes alone; prev gives its policy up), else a parse. */
static int parse_policy(struct sr_policy_ctx *pc, struct sr_policy_ctx *prev, const char *name,
                        sr_error_t *err)
{
  if (prev && prev->policy && prev->bytes && prev->len == pc->len &&
      memcmp(prev->bytes, pc->bytes, pc->len) == 0) {
    pc->policy = prev->policy;
    prev->policy = NULL;
    return 0;
  }
  return sr_policy_parse(pc->bytes, pc->len, name, &pc->policy, err);
}

int sr_policy_run_select_bound(const struct sr_policy *policy, const struct sr_invocation *inv,
                               const struct sr_policy_profile **out, sr_error_t *err)
{
  const char *argv0 = inv->argv && inv->argv[0] ? inv->argv[0] : "seerun";
  const char *base = strrchr(argv0, '/') ? strrchr(argv0, '/') + 1 : argv0;
  char root[PATH_MAX];
  const char *root_dir = realpath(inv->root, root) ? root : inv->root;
  return sr_policy_select(policy, inv->profile, base, root_dir, out, err);
}

static int load(const struct sr_invocation *inv, struct sr_policy_ctx *pc,
                struct sr_policy_ctx *prev, sr_error_t *err)
{
  const char *path = inv->policy ? inv->policy : SR_POLICY_DEFAULT_PATH;
  bool found;
  if (read_policy_file(path, &pc->owned_bytes, &pc->len, &found, err) < 0)
    return -1;
  if (!found && inv->policy)
    return sr_error_make(err, ENOENT, "--policy `%s` does not exist", inv->policy);
  pc->bytes = found ? pc->owned_bytes : sr_policy_default_json;
  if (!found)
    pc->len = strlen(sr_policy_default_json);
  const char *name = !found ? "built-in policy" : strrchr(path, '/') ? strrchr(path, '/') + 1
                                                                      : path;
  if (parse_policy(pc, prev, name, err) < 0)
    return -1;
  if (sr_policy_run_select_bound(pc->policy, inv, &pc->profile, err) < 0)
    return -1;
  pc->audit.path = pc->policy->audit_log;
  pc->audit.profile = pc->profile->name;
  if (pc->audit.path) {
    char dir[PATH_MAX];
    snprintf(dir, sizeof(dir), "%s", pc->audit.path);
    if (sr_dir_mkdir_p(dirname(dir), 0700, err) < 0)
      return sr_error_wrap(err, "audit log");
  }
  return 0;
}

int sr_policy_run_load(const struct sr_invocation *inv, struct sr_policy_ctx *pc, sr_error_t *err)
{
  return sr_policy_run_load_reusing(inv, pc, NULL, err);
}

int sr_policy_run_load_reusing(const struct sr_invocation *inv, struct sr_policy_ctx *pc,
                           struct sr_policy_ctx *prev, sr_error_t *err)
{
  memset(pc, 0, sizeof(*pc));
  /* A failed load holds nothing: its callers only release a context that loaded. */
  if (load(inv, pc, prev, err) < 0) {
    sr_policy_run_ctx_release(pc);
    return -1;
  }
  return 0;
}

void sr_policy_run_ctx_release(struct sr_policy_ctx *pc)
{
  if (pc->policy)
    sr_policy_free(pc->policy);
  free(pc->owned_bytes);
  memset(pc, 0, sizeof(*pc));
}

/* seerun's own files no container may bind, at and below them: every state root (others'
 * state directories hold their configs and the state exec and delete read back), the audit
 * log's directory, the runtime binary.  In c's arena. */
static int own_denied(struct sr_policy_ctx *pc, struct sr_config *c, const char *state_root,
                      struct sr_denied_path **out, size_t *n_out, sr_error_t *err)
{
  struct sr_arena *a = &c->arena;
  char **roots = NULL;
  size_t n_roots = 0;
  if (sr_state_roots_read(a, &pc->policy->userns, &roots, &n_roots) < 0)
    return sr_error_make(err, ENOMEM, "policy facts");
  struct sr_denied_path *v = sr_arena_array(a, n_roots + 3, sizeof(*v));
  const char *record = sr_state_roots_path(a, &pc->policy->userns);
  const char *recorded = sr_arena_printf(a, "a seerun state root, recorded in %s", record);
  if (v == NULL || record == NULL || recorded == NULL)
    return sr_error_make(err, ENOMEM, "policy facts");
  size_t n = 0;
  if (state_root)
    v[n++] = (struct sr_denied_path){state_root, "a seerun state root (--root)", true, false,
                                     false};
  for (size_t i = 0; i < n_roots; i++)
    v[n++] = (struct sr_denied_path){roots[i], recorded, true, false, false};
  if (pc->policy->audit_log) {
    char dir[PATH_MAX];
    snprintf(dir, sizeof(dir), "%s", pc->policy->audit_log);
    const char *d = sr_arena_strdup(a, dirname(dir));
    if (d == NULL)
      return sr_error_make(err, ENOMEM, "policy facts");
    v[n++] = (struct sr_denied_path){d, "the audit log's directory (auditLog)", false, false, false};
  }
  char exe[PATH_MAX];
  ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (len > 0 && exe[0] == '/') {
    exe[len] = '\0';
    const char *e = sr_arena_strdup(a, exe);
    if (e == NULL)
      return sr_error_make(err, ENOMEM, "policy facts");
    v[n++] = (struct sr_denied_path){e, "the seerun binary", false, false, false};
  }
  *out = v;
  *n_out = n;
  return 0;
}

/* A pod member joins the user namespace of the seerun container whose namespaces it joins (the
 * remap adds its path): the one that owns the very namespace judged and joined, taken from that
 * descriptor, not from a /proc/<pid> path that a pid reused in between would name. */
static int adopt_pod_userns(const struct sr_config *c, const struct sr_policy_facts *facts,
                            struct sr_host_objects *objs, sr_error_t *err)
{
  const struct sr_namespace *user = &c->linux_.namespaces[SR_NS_USER];
  if (!user->present || user->path == NULL || objs->ns_fd == NULL ||
      objs->ns_fd[SR_NS_USER] >= 0 || objs->ns_error[SR_NS_USER] != NULL)
    return 0;
  for (int k = 0; k < SR_NS_COUNT; k++) {
    if (k == SR_NS_USER || !facts->ns[k].is_seerun_container || objs->ns_fd[k] < 0)
      continue;
    int fd = ioctl(objs->ns_fd[k], NS_GET_USERNS);
    if (fd < 0)
      return sr_error_sys(err, "linux.namespaces.user: the owner of the joined %s namespace",
                          sr_config_ns_name((enum sr_ns_kind)k));
    objs->ns_fd[SR_NS_USER] = fd;
    return 0;
  }
  return 0;
}

int sr_policy_run_create(struct sr_policy_ctx *pc, struct sr_config *c,
                         const struct sr_facts_input *in_arg, struct sr_decisions *d,
                         sr_error_t *err)
{
  struct sr_facts_input local = *in_arg;
  struct sr_facts_input *in = &local;
  /* Recorded on first use, before anything is made in it. */
  if (!in->dry_run && in->state_root &&
      sr_state_roots_record(&pc->policy->userns, in->state_root, err) < 0)
    return -1;
  struct sr_denied_path *denied = NULL;
  if (own_denied(pc, c, in->state_root, &denied, &local.n_denied, err) < 0)
    return -1;
  local.denied = denied;
  local.idmappable = pc->profile->idmappable;
  local.n_idmappable = pc->profile->n_idmappable;
  local.rootfs_idmap_paths = pc->profile->rootfs.idmap_paths;
  local.n_rootfs_idmap_paths = pc->profile->rootfs.n_idmap_paths;
  struct sr_policy_facts facts;
  struct sr_facts_input with_profile = *in;
  with_profile.profile = pc->profile;
  in = &with_profile;
  _cleanup_(sr_policy_facts_objects_close) struct sr_host_objects own_objs = SR_HOST_OBJECTS_INIT;
  struct sr_host_objects *objs = in->keep ? in->keep : &own_objs;
  if (sr_policy_facts_compute(c, in, &facts, objs, err) < 0)
    return -1;
  sr_error_t refusal = NULL;
  int r = sr_policy_apply(pc->profile, &facts, c, d, &refusal);
  if (r == 0) {
    _cleanup_free_ char *key = sr_userns_registry_key(in->state_root, in->id);
    struct sr_remap_input ri = {.pool = &pc->policy->userns, .key = key,
                                .enforce = pc->profile->enforce, .dry_run = in->dry_run,
                                .profile = pc->profile->name,
                                .user_ns_fd = objs->ns_fd ? objs->ns_fd[SR_NS_USER] : -1};
    if (key == NULL)
      r = sr_error_make(&refusal, ENOMEM, "user namespace");
    else
      r = sr_userns_remap(c, &facts, &ri, d, &refusal);
    if (r == 0)
      r = adopt_pod_userns(c, &facts, objs, &refusal);
  }
  /* The decisions, the refusal included, are on record before anything happens. */
  if (sr_audit_decisions(&pc->audit, d, err) < 0) {
    sr_error_free(&refusal);
    return -1;
  }
  if (r < 0) {
    *err = refusal;
    return sr_error_wrap(err, "policy \"%s\"", pc->profile->name);
  }
  return 0;
}
