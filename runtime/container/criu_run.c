#include "build.h"

#include "criu_run.h"

#include "audit.h"
#include "cleanup.h"
#include "lifecycle.h"
#include "policy_run.h"
#include "prepare.h"
#include "stored.h"

#include <errno.h>
#include <stdlib.h>

int sr_criu_run_checkpoint(const struct sr_invocation *inv, const char *id,
                           const struct sr_criu_opts *o, sr_error_t *err)
{
  _cleanup_stored_ struct sr_container *ct = NULL;
  _cleanup_config_ struct sr_config *config = NULL;
  if (sr_stored_open(inv, id, true, &ct, err) < 0 ||
      sr_container_load_config(ct, &config, err) < 0)
    return -1;
  const char *image = o->image_path ? o->image_path : "checkpoint";
  const char *fields[] = {"imagePath", image, "leaveRunning", o->leave_running ? "true" : "false",
                          NULL};
  if (sr_stored_audit(inv, ct, "checkpoint", fields, err) < 0)
    return -1;
  if (sr_checkpoint(ct, config, o, err) < 0) {
    const char *f[] = {"imagePath", image, "error", *err ? (*err)->msg : "", NULL};
    sr_error_t e2 = NULL;
    sr_stored_audit(inv, ct, "checkpoint-failed", f, &e2);
    sr_error_free(&e2);
    return -1;
  }
  if (!o->leave_running)
    sr_stored_release_userns(inv, id);
  return 0;
}

/* A Landlock domain cannot be carried across a restore: the restored processes run without
 * one, which the profile allows (restoreWithoutLandlock, default) or refuses; audited. */
static int landlock_decision(struct sr_policy_ctx *pc, const struct sr_create_ctx *ctx,
                             sr_error_t *err)
{
  if (ctx->landlock.abi <= 0)
    return 0;
  bool allowed = pc->profile->restore_without_landlock;
  const char *fields[] = {"field",
                          "landlock",
                          "applied",
                          allowed ? "lost: CRIU cannot restore a Landlock domain; the restored "
                                    "processes are not confined by Landlock"
                                  : "refused",
                          "knob",
                          "restoreWithoutLandlock",
                          NULL};
  if (sr_audit_event(&pc->audit, allowed ? "restore-landlock-lost" : "refuse", fields, err) < 0)
    return -1;
  if (!allowed)
    return sr_error_make(err, EPERM,
                         "restore: the profile `%s` confines containers with "
                         "Landlock (landlock), which CRIU cannot restore, and does "
                         "not allow a restore without it (restoreWithoutLandlock)",
                         pc->profile->name);
  return 0;
}

/* An id in use: the image is of a container that still exists (--leave-running). */
static int refuse_existing(const struct sr_invocation *inv, const char *id, sr_error_t *err)
{
  _cleanup_stored_ struct sr_container *ct = NULL;
  const char *st = "unknown";
  sr_error_t e = NULL;
  if (sr_stored_open(inv, id, false, &ct, &e) == 0)
    st = sr_container_status_name(sr_container_status(ct));
  sr_error_free(&e);
  return sr_error_make(err, EEXIST,
                       "restore: container `%s` exists (%s): restore the checkpoint under an id "
                       "that is free, or delete that container first",
                       id, st);
}

/* The create's steps up to the restore itself, then the restore, audited. */
static int restore(const struct sr_invocation *inv, struct sr_create_ctx *ctx,
                   struct sr_create_opts *co, struct sr_policy_ctx *pc, const char *bundle_arg,
                   char **bundle, const struct sr_criu_opts *o, int *status, sr_error_t *err)
{
  const char *binary;
  if (sr_statedir_validate_id(co->id, err) < 0 || sr_criu_binary(o, &binary, err) < 0)
    return -1;
  if (sr_stored_exists(inv, co->id))
    return refuse_existing(inv, co->id, err);
  if (sr_prepare_load_bundle_audited(inv, co->id, bundle_arg, bundle, ctx, err) < 0)
    return -1;
  co->bundle = *bundle;
  if (sr_prepare_create(inv, ctx, pc, NULL, err) < 0 || landlock_decision(pc, ctx, err) < 0)
    return -1;
  const char *image = o->image_path ? o->image_path : "checkpoint";
  int r = sr_restore(ctx, o, status, err);
  const char *fields[] = {"imagePath", image,
                          "result",    r < 0 ? "refused" : "restored",
                          "error",     r < 0 && *err ? (*err)->msg : "",
                          NULL};
  sr_error_t e2 = NULL;
  if (sr_audit_event(&pc->audit, r < 0 ? "restore-failed" : "restored", fields, &e2) < 0)
    sr_error_free(&e2);
  return r;
}

int sr_criu_run_restore(const struct sr_invocation *inv, struct sr_create_opts *co,
                        const char *bundle_arg, const struct sr_criu_opts *o, int *status,
                        sr_error_t *err)
{
  co->audit_event = "restore";
  _cleanup_free_ char *bundle = NULL;
  _cleanup_policy_ctx_ struct sr_policy_ctx pc = {0};
  int r;
  {
    _cleanup_(sr_create_ctx_release) struct sr_create_ctx ctx = SR_PREPARE_CTX(inv, co);
    r = restore(inv, &ctx, co, &pc, bundle_arg, &bundle, o, status, err);
  }
  /* After the create context is released (its lock and descriptors); a range is released only
   * when no container holds the id. */
  if (r < 0)
    sr_prepare_failed(inv, co->id);
  return r;
}
