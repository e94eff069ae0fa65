/* Helpers the commands share. */
#ifndef SEERUN_CLI_COMMON_H
#define SEERUN_CLI_COMMON_H

#include "cli.h"
#include "container.h"
#include "error.h"
#include "statedir.h"

struct sr_policy;

/* Opens the state root and loads a container (locked or not).  The container owns rootfd. */
int sr_cli_open_container(const struct sr_global *g, const char *id, bool lock,
                          struct sr_container **out, sr_error_t *err);
void sr_cli_close_container(struct sr_container *c);
static inline void sr_cli_close_containerp(struct sr_container **c)
{
  if (*c)
    sr_cli_close_container(*c);
}
#define _cleanup_cli_container_ __attribute__((cleanup(sr_cli_close_containerp)))

/* A create context that holds nothing yet: every descriptor -1, as sr_create_ctx_release
 * closes those >= 0. */
#define SR_CLI_CREATE_CTX(global, opts)                                                            \
  {.g = (global), .o = (opts), .sync = {-1, -1}, .fifo_fd = -1, .console_fd = -1,                 \
   .notify_fd = -1, .cgroup_dir_fd = -1, .init_pidfd = -1, .rootfs_tree_fd = -1,              \
   .activity_sock = {-1, -1}, .activity_listen = -1, .host = SR_HOST_OBJECTS_INIT}

/* The root filesystem's path: root.path, relative to the bundle unless absolute. */
void sr_cli_rootfs_path(const struct sr_config *c, const char *bundle, char *buf, size_t size);

/* Reads and parses <bundle>/config.json for create, run and policy check (so a config without
 * `process` is refused); bundle becomes absolute. */
int sr_cli_load_bundle(const char *bundle_arg, char **bundle, struct sr_create_ctx *ctx,
                       sr_error_t *err);
/* create and run: sr_cli_load_bundle, and a config.json it refuses (a sysctl that is not
 * namespaced, ...) is a refusal like the policy's: audited, under the profile this invocation
 * selects (a failure to audit is only a warning: nothing runs anyway). */
int sr_cli_load_bundle_audited(const struct sr_global *g, const char *id, const char *bundle_arg,
                               char **bundle, struct sr_create_ctx *ctx, sr_error_t *err);

struct sr_policy_ctx;
struct sr_decisions;
/* create, run and sandbox, after the bundle is loaded: the policy (applied to ctx->config,
 * decisions audited, what was decided kept in ctx), the "create" audit event, and the sealed
 * re-exec the resulting config may need.  pc stays loaded for later events; one already loaded
 * (pc->policy set) is used as it is.  decided (optional) gets the decisions, in ctx->config's
 * arena, a refusal included. */
int sr_cli_prepare_create(const struct sr_global *g, struct sr_create_ctx *ctx,
                          struct sr_policy_ctx *pc, struct sr_decisions *decided,
                          sr_error_t *err);

/* An audit event about an existing container, before the action (kill, delete, ...), under
 * the profile recorded at its create. */
int sr_cli_audit(const struct sr_global *g, const struct sr_container *c, const char *event,
                 const char *const *fields, sr_error_t *err);

/* Whether the state root holds a container `id` (true unless it surely does not). */
/* delete: the activity record a killed supervisor left, as an incomplete audit event. */
void sr_cli_activity_settle(const struct sr_global *g, const struct sr_container *c);
bool sr_cli_container_exists(const struct sr_global *g, const char *id);

/* After delete: the container's user namespace range waits for its id in the registry (the
 * policy's grace period).  Failures are warnings: the container is gone either way. */
/* After a create (or run) failed, wherever it failed: the user namespace range the policy may
 * have taken for the id is released, since no container is left for the engine's `delete
 * --force` to find; not when the id is another container's (create refused it). */
void sr_cli_create_failed(const struct sr_global *g, const char *id);
void sr_cli_release_userns(const struct sr_global *g, const char *id);
/* The same with the policy this invocation has loaded already (NULL: it is loaded): the
 * registry's place is the policy's, whatever the profile. */
void sr_cli_release_userns_with(const struct sr_global *g, const struct sr_policy *policy,
                                const char *id);

/* The gate for hooks read back from c's state directory (start, delete): c's profile, every
 * decision audited under it, a refused hook skipped.  A policy that cannot be loaded (or no
 * longer has the profile) leaves gate->profile NULL, with a warning: no hook of the host runs.
 * prev (or NULL): this invocation's earlier load, reused if the policy's bytes are the same
 * (sr_policy_load_for).  Release pc with sr_policy_ctx_release. */
void sr_cli_hook_gate(const struct sr_global *g, const struct sr_container *c,
                      struct sr_policy_ctx *pc, struct sr_policy_ctx *prev,
                      struct sr_hook_gate *gate);

/* A wait status as a process exit status: the code, or 128+N for a signal; `otherwise` for
 * anything else. */
int sr_cli_exit_status(int status, int otherwise);

/* In the foreground with a terminal and no --console-socket, the pty master comes back to
 * seerun, which relays the caller's terminal: *ours is kept, *theirs goes to the container. */
int sr_cli_console_pair(bool detach, int *ours, int *theirs, sr_error_t *err);

/* Commands whose only option besides --help is one flag (kill --all, delete --force, gc
 * --all; NULL: none), spelled --NAME or -N with N its first letter: 0 with *set updated and
 * optind at the first argument, 1 on a usage error (printed), 2 after --help. */
int sr_cli_parse_flag(const char *cmd, const char *usage, int argc, char **argv, const char *flag,
                      bool *set);

/* Commands that take only a container id (start, state, pause, resume): 0 with *id set, 1 on
 * a usage error (printed), 2 after --help. */
int sr_cli_parse_id_only(const char *cmd, int argc, char **argv, const char **id);

/* The long options sr_parse_create_options handles, at the head of create's and run's tables
 * (which add their own and the terminating entry), so that the table and the parser agree. */
#define SR_CREATE_LONGOPTS                                                                         \
  {"bundle", required_argument, NULL, 'b'}, {"pid-file", required_argument, NULL, 'p'},            \
      {"console-socket", required_argument, NULL, 'c'}, {"no-pivot", no_argument, NULL, 'P'},      \
      {"no-new-keyring", no_argument, NULL, 'k'}, {"preserve-fds", required_argument, NULL, 'f'},  \
      {"help", no_argument, NULL, 'h'}

/* The options create and run share (--bundle, --pid-file, --console-socket, --no-pivot,
 * --no-new-keyring, --preserve-fds); extra handles the others.  Returns 0, 1 (error printed)
 * or 2 (help printed). */
struct option;
int sr_parse_create_options(const char *cmd, int argc, char **argv, const struct option *opts,
                            const char *shortopts, struct sr_create_opts *o, const char **bundle,
                            int (*extra)(int c, void *data), void *data);

#endif
