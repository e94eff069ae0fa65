/* seerun run ID: create, start, and (unless --detach) wait, exiting with the container's
 * status (128+N for a signal), then delete it (unless --keep). */
#include "build.h"

#include "cli_common.h"

#include "cleanup.h"
#include "lifecycle.h"
#include "log.h"
#include "opts.h"
#include "policy_run.h"
#include "terminal.h"
#include "proc.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static const struct option longopts[] = {
    SR_CREATE_LONGOPTS,
    {"detach", no_argument, NULL, 'd'},
    {"keep", no_argument, NULL, 'K'},
    {"no-subreaper", no_argument, NULL, 'S'},
    {NULL, 0, NULL, 0},
};

struct run_flags {
  bool detach, keep;
};

static int run_extra(int c, void *data)
{
  struct run_flags *f = data;
  switch (c) {
  case 'd':
    f->detach = true;
    return 0;
  case 'K':
    f->keep = true;
    return 0;
  case 'S':
    return 0; /* seerun waits for its own child; there is nothing to reap besides */
  }
  return -1;
}

/* After the container's exit: remove it, as runc does without --keep.  created: the policy
 * loaded for the create (or NULL), whose parse is reused if the policy is unchanged. */
static void remove_container(const struct sr_global *g, const char *id,
                             struct sr_policy_ctx *created)
{
  sr_error_t err = NULL;
  _cleanup_stored_ struct sr_container *c = NULL;
  if (sr_stored_open(&g->run, id, true, &c, &err) < 0) {
    _cleanup_free_ char *t = sr_error_text(err);
    sr_warn("run: remove container \"%s\": %s", id, t ? t : "");
    sr_error_free(&err);
    return;
  }
  /* The poststop hooks are read back from the state directory: judged again. */
  _cleanup_policy_ctx_ struct sr_policy_ctx pc = {0};
  struct sr_hook_gate gate;
  sr_stored_hook_gate(&g->run, c, &pc, created, &gate);
  int r = sr_container_delete(c, true, &gate, &err);
  if (r < 0) {
    _cleanup_free_ char *t = sr_error_text(err);
    sr_warn("run: remove container \"%s\": %s", id, t ? t : "");
    sr_error_free(&err);
    return;
  }
  /* The policy the hooks were judged by, not parsed again. */
  sr_stored_release_userns_with(&g->run, pc.policy, id);
}

/* After create: the terminal's master back from the init, the "start" event and the start.
 * 0 with *pidfd the init's. */
static int start(const struct sr_global *g, struct sr_create_ctx *ctx, struct sr_policy_ctx *pc,
                 int console_parent, int *master, int *pidfd, sr_error_t *err)
{
  if (console_parent >= 0 && sr_terminal_recv_master(console_parent, master, err) < 0)
    return -1;
  _cleanup_close_ int fd = steal_fd(ctx->init_pidfd);
  struct sr_hook_gate gate = {.profile = pc->profile, .audit = &pc->audit,
                              .places = {ctx->o->bundle, ctx->rootfs, g->run.root}};
  if (sr_audit_event(&pc->audit, "start", NULL, err) < 0 ||
      sr_container_start(ctx->container, ctx->config, &gate, err) < 0)
    return -1;
  *pidfd = steal_fd(fd);
  return 0;
}

/* create, then start; a container that was created but could not run is deleted again. */
static int create_and_start(const struct sr_global *g, const struct run_flags *f,
                            struct sr_create_opts *o, const char *bundle_arg, char **bundle,
                            struct sr_create_ctx *ctx, struct sr_policy_ctx *pc,
                            int *console_parent, int *master, int *pidfd, sr_error_t *err)
{
  if (sr_prepare_bundle(&g->run, ctx, o, bundle_arg, bundle, pc, err) < 0)
    return -1;
  bool terminal = ctx->config->process && ctx->config->process->terminal;
  if (terminal && o->console_socket == NULL &&
      sr_terminal_console_pair(f->detach, console_parent, &ctx->console_fd, err) < 0)
    return -1;
  if (sr_create(ctx, err) < 0)
    return -1;
  SR_KILL_POINT("run.after-create");
  if (start(g, ctx, pc, *console_parent, master, pidfd, err) == 0)
    return 0;
  /* The container was created but could not run: it must not stay behind. */
  sr_error_t e = NULL;
  struct sr_hook_gate undo = {.profile = pc->profile, .audit = &pc->audit,
                              .places = {ctx->o->bundle, ctx->rootfs, g->run.root}};
  if (ctx->container && sr_container_delete(ctx->container, true, &undo, &e) < 0)
    sr_error_free(&e);
  return -1;
}

int sr_cmd_run(const struct sr_global *g, int argc, char **argv)
{
  struct sr_create_opts o = {0};
  struct run_flags f = {0};
  const char *bundle_arg = NULL;
  int r = sr_cli_common_parse_create_options("run", argc, argv, longopts, "b:dh", &o, &bundle_arg,
                                             run_extra, &f);
  if (r)
    return r == 2 ? 0 : 1;
  if (sr_cli_setup(g, o.preserve_fds, true) < 0)
    return 1;
  sr_error_t err = NULL;
  _cleanup_free_ char *bundle = NULL;
  _cleanup_close_ int console_parent = -1;
  _cleanup_close_ int master = -1;
  _cleanup_policy_ctx_ struct sr_policy_ctx pc = {0};
  struct sr_create_ctx ctx = SR_PREPARE_CTX(&g->run, &o);
  int pidfd = -1;
  if (create_and_start(g, &f, &o, bundle_arg, &bundle, &ctx, &pc, &console_parent, &master,
                       &pidfd, &err) < 0) {
    sr_create_ctx_release(&ctx);
    sr_policy_run_ctx_release(&pc);
    sr_prepare_failed(&g->run, o.id);
    return sr_cli_fail_verb("run", &err);
  }
  pid_t pid = ctx.init_pid;
  sr_create_ctx_release(&ctx); /* releases the lock: the container is running */
  SR_KILL_POINT("run.after-start");
  if (f.detach) {
    close(pidfd);
    return 0;
  }
  if (sr_terminal_foreground_wait(master, pidfd, &err) < 0) {
    close(pidfd);
    sr_policy_run_ctx_release(&pc);
    /* Nobody waits for the container now: without --keep it must not outlive this run. */
    r = sr_cli_fail_verb("run", &err);
    if (!f.keep)
      remove_container(g, o.id, NULL);
    return r;
  }
  close(pidfd);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
    ;
  sr_audit_event_int(&pc.audit, "exit", "status", sr_proc_exit_status(status, 255), &err);
  sr_error_free(&err);
  SR_KILL_POINT("run.before-remove");
  if (!f.keep)
    remove_container(g, o.id, &pc); /* pc: released at the end of its scope */
  return sr_proc_exit_status(status, 255);
}
