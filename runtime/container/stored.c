#include "build.h"

#include "stored.h"

#include "activity.h"
#include "cleanup.h"
#include "log.h"
#include "userns_registry.h"
#include "proc.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A state.json that disagrees with the container's index (statedir.h): rewritten by someone
 * to point the command at a process or cgroup not the container's; the refusal is audited. */
static void audit_refused_record(const struct sr_invocation *inv, const char *id,
                                 const sr_error_t refusal)
{
  if (sr_error_kind(refusal) != SR_ERR_RECORD)
    return;
  _cleanup_free_ char *text = sr_error_text(refusal);
  _cleanup_policy_ctx_ struct sr_policy_ctx pc = {0};
  sr_error_t e = NULL;
  if (sr_policy_run_load(inv, &pc, &e) == 0) {
    pc.audit.id = id;
    sr_audit_refusal(&pc.audit, "state.json", "\"the container's record\"",
                     text ? text : SR_RECORD_NOT_OURS, &e);
  }
  if (e) {
    _cleanup_free_ char *t = sr_error_text(e);
    sr_warn("audit the refused state.json: %s", t ? t : "");
    sr_error_free(&e);
  }
}

int sr_stored_open(const struct sr_invocation *inv, const char *id, bool lock,
                   struct sr_container **out, sr_error_t *err)
{
  _cleanup_close_ int rootfd = open(inv->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (rootfd < 0) {
    if (errno == ENOENT) {
      if (sr_statedir_validate_id(id, err) < 0)
        return -1;
      return sr_error_make(err, ENOENT, "container \"%s\" does not exist", id);
    }
    return sr_error_sys(err, "open state directory `%s`", inv->root);
  }
  if (sr_statedir_load(rootfd, id, lock, out, err) < 0) {
    audit_refused_record(inv, id, *err);
    return -1;
  }
  steal_fd(rootfd); /* the container's now ((*out)->rootfd) */
  return 0;
}

void sr_stored_close(struct sr_container *c)
{
  int rootfd = c->rootfd;
  sr_statedir_free(c);
  if (rootfd >= 0)
    close(rootfd);
}

bool sr_stored_exists(const struct sr_invocation *inv, const char *id)
{
  sr_error_t err = NULL;
  struct sr_container *ct = NULL;
  if (sr_stored_open(inv, id, false, &ct, &err) == 0) {
    sr_stored_close(ct);
    return true;
  }
  bool gone = err != NULL && err->status == ENOENT;
  sr_error_free(&err);
  return !gone; /* when in doubt, it exists: its range must not be released */
}

int sr_stored_policy_load(const struct sr_invocation *inv, const struct sr_container *c,
                          struct sr_policy_ctx *pc, struct sr_policy_ctx *prev, sr_error_t *err)
{
  if (sr_policy_run_load_reusing(inv, pc, prev, err) < 0)
    return -1;
  pc->audit.id = c->id;
  pc->audit.bundle = c->rec->bundle;
  if (c->rec->profile) {
    const struct sr_policy_profile *p = sr_policy_profile(pc->policy, c->rec->profile);
    if (p == NULL) {
      sr_policy_run_ctx_release(pc);
      return sr_error_make(err, 0,
                           "container \"%s\" was created under profile \"%s\", which "
                           "the policy no longer has",
                           c->id, c->rec->profile);
    }
    /* The name is read back from state.json, which a container that reached its state
     * directory could rewrite: it never turns off the enforcement of the profile this
     * invocation is bound to (a "permissive" there would drop the exec's seccomp floor). */
    if (p->enforce || !pc->profile->enforce) {
      pc->profile = p;
      pc->audit.profile = p->name;
    }
  }
  return 0;
}

int sr_stored_audit(const struct sr_invocation *inv, const struct sr_container *c,
                    const char *event, const char *const *fields, sr_error_t *err)
{
  _cleanup_policy_ctx_ struct sr_policy_ctx pc = {0};
  if (sr_policy_run_load(inv, &pc, err) < 0)
    return -1;
  /* The event is recorded under the profile of the create, even if the policy has changed. */
  pc.audit.id = c->id;
  pc.audit.bundle = c->rec->bundle;
  if (c->rec->profile)
    pc.audit.profile = c->rec->profile;
  return sr_audit_event(&pc.audit, event, fields, err);
}

void sr_stored_hook_gate(const struct sr_invocation *inv, const struct sr_container *c,
                         struct sr_policy_ctx *pc, struct sr_policy_ctx *prev,
                         struct sr_hook_gate *gate)
{
  sr_error_t err = NULL;
  *gate =
      (struct sr_hook_gate){.rejudge = true, .places = {c->rec->bundle, c->rec->rootfs, inv->root}};
  if (sr_stored_policy_load(inv, c, pc, prev, &err) < 0) {
    _cleanup_free_ char *t = sr_error_text(err);
    sr_warn("container \"%s\": no hook will run: %s", c->id, t ? t : "");
    sr_error_free(&err);
    return;
  }
  gate->profile = pc->profile;
  gate->audit = &pc->audit;
  /* The profile is named by the container's state.json, which is read back from disk: the
   * profile this invocation's bindings select must allow each hook as well. */
  if (sr_policy_run_select_bound(pc->policy, inv, &gate->also, &err) < 0) {
    _cleanup_free_ char *t = sr_error_text(err);
    sr_warn("container \"%s\": no hook will run: %s", c->id, t ? t : "");
    sr_error_free(&err);
    gate->profile = NULL;
  }
}

void sr_stored_activity_settle(const struct sr_invocation *inv, const struct sr_container *c)
{
  /* A live supervisor writes its own record when the init has gone; one that is gone (killed)
   * left only its last flush, which goes to the audit log as an incomplete record. */
  if (!c->rec->supervisor_activity || c->dirfd < 0 ||
      sr_proc_is(c->rec->supervisor_pid, c->rec->supervisor_start))
    return;
  _cleanup_policy_ctx_ struct sr_policy_ctx pc = {0};
  sr_error_t err = NULL;
  if (sr_policy_run_load(inv, &pc, &err) == 0) {
    pc.audit.id = c->id;
    pc.audit.bundle = c->rec->bundle;
    if (c->rec->profile)
      pc.audit.profile = c->rec->profile;
    sr_activity_settle(&pc.audit, c->dirfd, &err);
  }
  if (err) {
    _cleanup_free_ char *t = sr_error_text(err);
    sr_warn("delete: the activity record: %s", t ? t : "");
    sr_error_free(&err);
  }
}

void sr_stored_release_userns_with(const struct sr_invocation *inv, const struct sr_policy *policy,
                                   const char *id)
{
  _cleanup_policy_ctx_ struct sr_policy_ctx pc = {0};
  sr_error_t err = NULL;
  _cleanup_free_ char *key = sr_userns_registry_key(inv->root, id);
  if (key == NULL || (policy == NULL && sr_policy_run_load(inv, &pc, &err) < 0)) {
    sr_error_free(&err);
    return;
  }
  if (sr_userns_registry_release(&(policy ? policy : pc.policy)->userns, key, &err) < 0) {
    _cleanup_free_ char *t = sr_error_text(err);
    sr_warn("release the user namespace range of \"%s\": %s", id, t ? t : "");
    sr_error_free(&err);
  }
}

void sr_stored_release_userns(const struct sr_invocation *inv, const char *id)
{
  sr_stored_release_userns_with(inv, NULL, id);
}
