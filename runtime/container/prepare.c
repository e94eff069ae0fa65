#include "build.h"

#include "prepare.h"

#include "cleanup.h"
#include "lifecycle.h"
#include "log.h"
#include "path.h"
#include "sealed.h"
#include "statedir.h"
#include "stored.h"
#include "fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int sr_prepare_rootfs_path(const struct sr_config *c, const char *bundle, char *buf, size_t size,
                           sr_error_t *err)
{
  if (sr_path_join(buf, size, c->root_path[0] == '/' ? "" : bundle, c->root_path, err) < 0)
    return sr_error_wrap(err, "root.path");
  return 0;
}

int sr_prepare_load_bundle(const char *bundle_arg, char **bundle, struct sr_create_ctx *ctx,
                           sr_error_t *err)
{
  char abs[PATH_MAX];
  if (realpath(bundle_arg && bundle_arg[0] ? bundle_arg : ".", abs) == NULL)
    return sr_error_sys(err, "bundle `%s`", bundle_arg ? bundle_arg : ".");
  *bundle = strdup(abs);
  if (*bundle == NULL)
    return sr_error_make(err, ENOMEM, "bundle");
  _cleanup_close_ int dirfd = open(abs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dirfd < 0)
    return sr_error_sys(err, "bundle `%s`", abs);
  if (sr_fileio_read_at(dirfd, "config.json", SR_MAX_CONFIG_SIZE, &ctx->config_text,
                        &ctx->config_len, err) < 0)
    return sr_error_wrap(err, "bundle `%s`", abs);
  if (sr_config_parse(ctx->config_text, ctx->config_len, "config.json", &ctx->config, err) < 0)
    return -1;
  /* The spec makes process optional (a config can describe a container to be joined), but
   * create, run and policy check judge and start one: without it there is nothing to run, and
   * every step after this one may rely on it (a config without it crashed create). */
  if (ctx->config->process == NULL)
    return sr_error_config(err, NULL, "process",
                           "config.json: process: required for create (the container's "
                           "process is what create prepares and start runs)");
  return 0;
}

static void audit_refused_config(const struct sr_invocation *inv, const char *id,
                                 const char *bundle, const sr_error_t refusal)
{
  if (sr_error_kind(refusal) != SR_ERR_CONFIG)
    return; /* no config.json to judge: a missing or unreadable bundle, a failed call */
  /* The field as the parser named it where it refused it ("linux.sysctl.kernel.core_pattern",
   * as the policy names it); the document as a whole when it is no valid JSON. */
  const char *field = refusal->field ? refusal->field : "config.json";
  _cleanup_free_ char *text = sr_error_text(refusal);
  _cleanup_policy_ctx_ struct sr_policy_ctx pc = {0};
  sr_error_t e = NULL;
  if (sr_policy_run_load(inv, &pc, &e) == 0) {
    pc.audit.id = id;
    pc.audit.bundle = bundle;
    sr_audit_refusal(&pc.audit, field, "\"config.json\"", text ? text : "config.json: refused", &e);
  }
  if (e) {
    _cleanup_free_ char *t = sr_error_text(e);
    sr_warn("audit the refused config.json: %s", t ? t : "");
    sr_error_free(&e);
  }
}

int sr_prepare_load_bundle_audited(const struct sr_invocation *inv, const char *id,
                                   const char *bundle_arg, char **bundle, struct sr_create_ctx *ctx,
                                   sr_error_t *err)
{
  if (sr_prepare_load_bundle(bundle_arg, bundle, ctx, err) == 0)
    return 0;
  audit_refused_config(inv, id, *bundle, *err);
  return -1;
}

/* The policy applied to ctx->config with the host's facts, decisions audited. */
static int enforce(const struct sr_invocation *inv, struct sr_create_ctx *ctx,
                   struct sr_policy_ctx *pc, struct sr_decisions *d, sr_error_t *err)
{
  char rootfs[PATH_MAX];
  if (sr_prepare_rootfs_path(ctx->config, ctx->o->bundle, rootfs, sizeof(rootfs), err) < 0)
    return -1;
  /* The state root exists before anything is keyed by its real path. */
  _cleanup_close_ int rootfd = -1;
  if (sr_statedir_open_root(inv->root, true, &rootfd, err) < 0)
    return -1;
  struct sr_facts_input in = {.bundle = ctx->o->bundle,
                              .rootfs = rootfs,
                              .find_peer = sr_prepare_ns_peer,
                              .peer_data = &rootfd,
                              .state_root = inv->root,
                              .id = ctx->o->id,
                              .keep = &ctx->host};
  return sr_policy_run_create(pc, ctx->config, &in, d, err);
}

int sr_prepare_create(const struct sr_invocation *inv, struct sr_create_ctx *ctx,
                      struct sr_policy_ctx *pc, struct sr_decisions *decided, sr_error_t *err)
{
  struct sr_config *c = ctx->config;
  if (pc->policy == NULL && sr_policy_run_load(inv, pc, err) < 0)
    return -1;
  pc->audit.id = ctx->o->id;
  pc->audit.bundle = ctx->o->bundle;
  struct sr_decisions local = {0};
  struct sr_decisions *d = decided ? decided : &local;
  if (enforce(inv, ctx, pc, d, err) < 0)
    return -1;
  ctx->profile = pc->profile->name;
  ctx->hook_profile = pc->profile;
  ctx->cgroup_must_be_new = pc->profile->enforce;
  ctx->audit = &pc->audit;
  ctx->network_granted = sr_policy_apply_network_granted(d);
  ctx->builtin_seccomp = sr_policy_apply_builtin_seccomp(pc->profile);
  ctx->egress_proxy = d->egress_proxy;
  ctx->activity = sr_policy_apply_activity_record(pc->profile);
  if (c->linux_.seccomp && c->linux_.seccomp->uses_notify)
    ctx->activity_unseen = "linux.seccomp.listenerPath: the config's agent holds the filter "
                           "stack's one listener, so the built-in filter's denials are not seen";
  ctx->egress = &pc->profile->network.egress;
  ctx->egress_narrow = d->egress_narrow;
  ctx->n_egress_narrow = d->n_egress_narrow;
  ctx->landlock.abi = d->landlock_abi;
  ctx->rootfs_no_idmap = !d->rootfs_idmap;
  ctx->landlock.scope_abstract_unix = d->landlock_scope_abstract_unix;
  /* Whether an activity record is to follow: review tells a record that never reached the
   * log from a profile that keeps none. */
  const char *const fields[] = {"activity", ctx->activity ? "true" : "false", NULL};
  if (sr_audit_event(&pc->audit, ctx->o->audit_event ? ctx->o->audit_event : "create", fields,
                     err) < 0)
    return -1;
  return sr_sealed_seal_if_needed(c, inv->argv, err);
}

int sr_prepare_bundle(const struct sr_invocation *inv, struct sr_create_ctx *ctx,
                      struct sr_create_opts *o, const char *bundle_arg, char **bundle,
                      struct sr_policy_ctx *pc, sr_error_t *err)
{
  if (sr_statedir_validate_id(o->id, err) < 0 || sr_create_console_connect(ctx, err) < 0 ||
      sr_prepare_load_bundle_audited(inv, o->id, bundle_arg, bundle, ctx, err) < 0)
    return -1;
  o->bundle = *bundle;
  return sr_prepare_create(inv, ctx, pc, NULL, err);
}

void sr_prepare_failed(const struct sr_invocation *inv, const char *id)
{
  if (!sr_stored_exists(inv, id))
    sr_stored_release_userns(inv, id);
}

bool sr_prepare_ns_peer(void *data, const char *ns_name, ino_t ino, struct sr_ns_peer *out)
{
  int rootfd = *(const int *)data;
  if (rootfd < 0)
    return false;
  _cleanup_strv_ char **ids = NULL;
  size_t n = 0;
  sr_error_t e = NULL;
  if (sr_statedir_list(rootfd, &ids, &n, &e) < 0) {
    sr_error_free(&e);
    return false;
  }
  for (size_t i = 0; i < n; i++) {
    _cleanup_container_ struct sr_container *ct = NULL;
    if (sr_statedir_load(rootfd, ids[i], false, &ct, &e) < 0) {
      sr_error_free(&e);
      continue;
    }
    pid_t pid = sr_container_live_pid(ct);
    if (pid <= 0)
      continue;
    char p[64];
    snprintf(p, sizeof(p), "/proc/%d/ns/%s", pid, ns_name);
    struct stat st;
    if (stat(p, &st) == 0 && st.st_ino == ino) {
      *out = (struct sr_ns_peer){.pid = pid, .network_granted = ct->rec->network_granted};
      return true;
    }
  }
  return false;
}
