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
#include "util.h"

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
  _cleanup_cli_container_ struct sr_container *c = NULL;
  if (sr_cli_open_container(g, id, true, &c, &err) < 0) {
    _cleanup_free_ char *t = sr_error_text(err);
    sr_warn("run: remove container \"%s\": %s", id, t ? t : "");
    sr_error_free(&err);
    return;
  }
  /* The poststop hooks are read back from the state directory: judged again. */
  struct sr_policy_ctx pc = {0};
  struct sr_hook_gate gate;
  sr_cli_hook_gate(g, c, &pc, created, &gate);
  int r = sr_container_delete(c, true, &gate, &err);
  if (r < 0) {
    sr_policy_ctx_release(&pc);
    _cleanup_free_ char *t = sr_error_text(err);
    sr_warn("run: remove container \"%s\": %s", id, t ? t : "");
    sr_error_free(&err);
    return;
  }
  /* The policy the hooks were judged by, not parsed again. */
  sr_cli_release_userns_with(g, pc.policy, id);
  sr_policy_ctx_release(&pc);
}

int sr_cmd_run(const struct sr_global *g, int argc, char **argv)
{
  struct sr_create_opts o = {0};
  struct run_flags f = {0};
  const char *bundle_arg = NULL;
  int r = sr_parse_create_options("run", argc, argv, longopts, "b:dh", &o, &bundle_arg,
                                  run_extra, &f);
  if (r)
    return r == 2 ? 0 : 1;
  if (sr_cli_setup(g, o.preserve_fds, true) < 0)
    return 1;
  sr_error_t err = NULL;
  _cleanup_free_ char *bundle = NULL;
  _cleanup_close_ int console_parent = -1;
  /* Before the first goto: a jump past a cleanup variable's initialisation would close garbage. */
  _cleanup_close_ int master = -1;
  struct sr_policy_ctx pc = {0};
  struct sr_create_ctx ctx = SR_CLI_CREATE_CTX(g, &o);
  if (sr_validate_id(o.id, &err) < 0 ||
      sr_cli_load_bundle_audited(g, o.id, bundle_arg, &bundle, &ctx, &err) < 0)
    goto fail;
  o.bundle = bundle;
  if (sr_cli_prepare_create(g, &ctx, &pc, NULL, &err) < 0)
    goto fail;
  bool terminal = ctx.config->process && ctx.config->process->terminal;
  if (terminal && o.console_socket == NULL &&
      sr_cli_console_pair(f.detach, &console_parent, &ctx.console_fd, &err) < 0)
    goto fail;
  if (sr_container_create(&ctx, &err) < 0)
    goto fail;
  SR_KILL_POINT("run.after-create");
  if (console_parent >= 0 && sr_terminal_recv_master(console_parent, &master, &err) < 0)
    goto fail_created;
  pid_t pid = ctx.init_pid;
  int pidfd = ctx.init_pidfd;
  ctx.init_pidfd = -1;
  struct sr_hook_gate gate = {.profile = pc.profile, .audit = &pc.audit,
                              .places = {ctx.o->bundle, ctx.rootfs, g->root}};
  if (sr_audit_event(&pc.audit, "start", NULL, &err) < 0 ||
      sr_container_start(ctx.container, ctx.config, &gate, &err) < 0) {
    close(pidfd);
    goto fail_created;
  }
  sr_create_ctx_release(&ctx); /* releases the lock: the container is running */
  SR_KILL_POINT("run.after-start");
  if (f.detach) {
    close(pidfd);
    sr_policy_ctx_release(&pc);
    return 0;
  }
  if (sr_foreground_wait(master, pidfd, &err) < 0) {
    close(pidfd);
    sr_policy_ctx_release(&pc);
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
  sr_audit_event_int(&pc.audit, "exit", "status", sr_cli_exit_status(status, 255), &err);
  sr_error_free(&err);
  SR_KILL_POINT("run.before-remove");
  if (!f.keep)
    remove_container(g, o.id, &pc);
  sr_policy_ctx_release(&pc);
  return sr_cli_exit_status(status, 255);

fail_created: {
  /* The container was created but could not run: it must not stay behind. */
  sr_error_t e = NULL;
  struct sr_hook_gate undo = {.profile = pc.profile, .audit = &pc.audit,
                              .places = {ctx.o->bundle, ctx.rootfs, g->root}};
  if (ctx.container && sr_container_delete(ctx.container, true, &undo, &e) < 0)
    sr_error_free(&e);
}
fail:
  sr_create_ctx_release(&ctx);
  sr_policy_ctx_release(&pc);
  sr_cli_create_failed(g, o.id);
  return sr_cli_fail_verb("run", &err);
}
