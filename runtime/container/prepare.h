/* create's first step, shared by create, run and the sandbox: the bundle read and parsed, the
 * policy loaded and applied to it with the host's facts, its decisions audited, and the sealed
 * re-exec the resulting config may need.  Then sr_create (container.h). */
#ifndef SEERUN_PREPARE_H
#define SEERUN_PREPARE_H

#include "container.h"
#include "error.h"
#include "invocation.h"
#include "policy_run.h"

/* A create context that holds nothing yet: every descriptor -1, as sr_create_ctx_release
 * closes those >= 0. */
#define SR_PREPARE_CTX(invocation, opts)                                                           \
  {                                                                                                \
    .inv = (invocation), .o = (opts), .sync = {-1, -1}, .fifo_fd = -1, .console_fd = -1,           \
    .notify_fd = -1, .cgroup_dir_fd = -1, .init_pidfd = -1, .rootfs_tree_fd = -1,                  \
    .activity_sock = {-1, -1}, .activity_listen = -1, .supervisor_ready = -1,                      \
    .host = SR_HOST_OBJECTS_INIT                                                                   \
  }

/* The root filesystem's path: root.path, relative to the bundle unless absolute. */
int sr_prepare_rootfs_path(const struct sr_config *c, const char *bundle, char *buf, size_t size,
                           sr_error_t *err);

/* Reads and parses <bundle>/config.json for create, run and policy check (so a config without
 * `process` is refused); bundle becomes absolute. */
int sr_prepare_load_bundle(const char *bundle_arg, char **bundle, struct sr_create_ctx *ctx,
                           sr_error_t *err);
/* create and run: sr_prepare_load_bundle, and a config.json it refuses (a sysctl that is not
 * namespaced, ...) is a refusal like the policy's: audited, under the profile this invocation
 * selects (a failure to audit is only a warning: nothing runs anyway). */
int sr_prepare_load_bundle_audited(const struct sr_invocation *inv, const char *id,
                                   const char *bundle_arg, char **bundle, struct sr_create_ctx *ctx,
                                   sr_error_t *err);

struct sr_decisions;
/* create, run and sandbox, after the bundle is loaded: the policy (applied to ctx->config,
 * decisions audited, what was decided kept in ctx), the "create" audit event, and the sealed
 * re-exec the resulting config may need.  pc stays loaded for later events; one already loaded
 * (pc->policy set) is used as it is.  decided (optional) gets the decisions, in ctx->config's
 * arena, a refusal included. */
int sr_prepare_create(const struct sr_invocation *inv, struct sr_create_ctx *ctx,
                      struct sr_policy_ctx *pc, struct sr_decisions *decided, sr_error_t *err);

/* create and run up to sr_create: the id checked, the console socket connected first (nothing
 * done later can then redirect it), the bundle read and audited (o->bundle set to *bundle,
 * which the caller frees), the policy applied (sr_prepare_create). */
int sr_prepare_bundle(const struct sr_invocation *inv, struct sr_create_ctx *ctx,
                      struct sr_create_opts *o, const char *bundle_arg, char **bundle,
                      struct sr_policy_ctx *pc, sr_error_t *err);

/* After a create (or run) failed, wherever it failed: the user namespace range the policy may
 * have taken for the id is released, since no container is left for the engine's `delete
 * --force` to find; not when the id is another container's (create refused it). */
void sr_prepare_failed(const struct sr_invocation *inv, const char *id);

/* The facts' sr_ns_peer_fn over the live containers of a state root (data: a pointer to the
 * root's descriptor). */
bool sr_prepare_ns_peer(void *rootfd, const char *ns_name, ino_t ino, struct sr_ns_peer *out);

#endif
