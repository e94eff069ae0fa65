/* seerun checkpoint ID / seerun restore ID: runc's command lines over CRIU
 * (runtime/container/checkpoint.h has the machinery and what restore checks). */
#include "build.h"

#include "cli_common.h"

#include "checkpoint.h"
#include "cleanup.h"
#include "lifecycle.h"
#include "help.h"
#include "opts.h"
#include "policy_run.h"
#include "proc.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECKPOINT_USAGE "[command options] <container-id>"
#define RESTORE_USAGE "[command options] <container-id>"

enum {
  O_IMAGE = 256,
  O_WORK,
  O_LEAVE,
  O_TCP,
  O_EXT_UNIX,
  O_SHELL,
  O_LOCKS,
  O_PRE_DUMP,
  O_CG_MODE,
  O_EMPTY_NS,
  O_DEDUP,
  O_PARENT,
  O_PAGE_SERVER,
  O_LAZY,
  O_DETACH,
  O_NO_SUBREAPER,
  O_NO_PIVOT,
  O_PID_FILE,
  O_CONSOLE,
  O_BUNDLE,
  O_IGNORED,
};

static const struct option checkpoint_opts[] = {
    {"image-path", required_argument, NULL, O_IMAGE},
    {"work-path", required_argument, NULL, O_WORK},
    {"leave-running", no_argument, NULL, O_LEAVE},
    {"tcp-established", no_argument, NULL, O_TCP},
    {"ext-unix-sk", no_argument, NULL, O_EXT_UNIX},
    {"shell-job", no_argument, NULL, O_SHELL},
    {"file-locks", no_argument, NULL, O_LOCKS},
    {"pre-dump", no_argument, NULL, O_PRE_DUMP},
    {"manage-cgroups-mode", required_argument, NULL, O_CG_MODE},
    {"empty-ns", required_argument, NULL, O_EMPTY_NS},
    {"auto-dedup", no_argument, NULL, O_DEDUP},
    {"parent-path", required_argument, NULL, O_PARENT},
    {"page-server", required_argument, NULL, O_PAGE_SERVER},
    {"lazy-pages", no_argument, NULL, O_LAZY},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static const struct option restore_opts[] = {
    {"image-path", required_argument, NULL, O_IMAGE},
    {"work-path", required_argument, NULL, O_WORK},
    {"bundle", required_argument, NULL, O_BUNDLE},
    {"detach", no_argument, NULL, O_DETACH},
    {"pid-file", required_argument, NULL, O_PID_FILE},
    {"console-socket", required_argument, NULL, O_CONSOLE},
    {"no-subreaper", no_argument, NULL, O_NO_SUBREAPER},
    {"no-pivot", no_argument, NULL, O_NO_PIVOT},
    {"tcp-established", no_argument, NULL, O_TCP},
    {"ext-unix-sk", no_argument, NULL, O_EXT_UNIX},
    {"shell-job", no_argument, NULL, O_SHELL},
    {"file-locks", no_argument, NULL, O_LOCKS},
    {"manage-cgroups-mode", required_argument, NULL, O_CG_MODE},
    {"lazy-pages", no_argument, NULL, O_LAZY},
    {"empty-ns", required_argument, NULL, O_EMPTY_NS},
    {"auto-dedup", no_argument, NULL, O_DEDUP},
    {"no-new-keyring", no_argument, NULL, O_IGNORED},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

struct parsed {
  struct sr_criu_opts c;
  struct sr_create_opts create;
  const char *bundle;
  const char *id;
};

/* 0, 1 (usage error printed) or 2 (help printed). */
static int parse(const char *cmd, const char *usage, const struct option *opts, int argc,
                 char **argv, struct parsed *p)
{
  sr_opts_normalize(argc, argv, opts, false);
  optind = 1;
  opterr = 0;
  int c;
  while ((c = getopt_long(argc, argv, "b:dh", opts, NULL)) != -1) {
    switch (c) {
    case O_IMAGE:
      p->c.image_path = optarg;
      break;
    case O_WORK:
      p->c.work_path = optarg;
      break;
    case O_LEAVE:
      p->c.leave_running = true;
      break;
    case O_TCP:
      p->c.tcp_established = true;
      break;
    case O_EXT_UNIX:
      p->c.ext_unix_sk = true;
      break;
    case O_SHELL:
      p->c.shell_job = true;
      break;
    case O_LOCKS:
      p->c.file_locks = true;
      break;
    case O_PRE_DUMP:
      p->c.pre_dump = true;
      break;
    case O_CG_MODE:
      p->c.manage_cgroups_mode = optarg;
      break;
    case O_EMPTY_NS:
      p->c.empty_ns = optarg;
      break;
    case O_DEDUP:
      p->c.auto_dedup = true;
      break;
    case O_LAZY:
      p->c.lazy_pages = true;
      break;
    case O_PARENT:
      /* Only meaningful after a pre-dump, which cannot be taken here. */
      p->c.pre_dump = true;
      break;
    case O_PAGE_SERVER:
      return sr_cli_usage_error(cmd, usage, "--page-server: not supported by seerun");
    case 'd':
    case O_DETACH:
      p->c.detach = true;
      break;
    case O_NO_SUBREAPER:
      p->c.no_subreaper = true;
      break;
    case O_NO_PIVOT:
      p->create.no_pivot = true;
      break;
    case O_PID_FILE:
      p->create.pid_file = optarg;
      break;
    case O_CONSOLE:
      p->create.console_socket = optarg;
      break;
    case 'b':
    case O_BUNDLE:
      p->bundle = optarg;
      break;
    case O_IGNORED:
      break;
    case 'h':
      if (!sr_help_print(cmd))
        printf("Usage: seerun %s %s\n", cmd, usage);
      return 2;
    default:
      return sr_cli_unknown_option(cmd, usage, argv);
    }
  }
  if (optind != argc - 1)
    return sr_cli_usage_error(cmd, usage, "exactly one container id is required");
  p->id = argv[optind];
  p->create.id = p->id;
  return 0;
}

int sr_cmd_checkpoint(const struct sr_global *g, int argc, char **argv)
{
  struct parsed p = {0};
  int r = parse("checkpoint", CHECKPOINT_USAGE, checkpoint_opts, argc, argv, &p);
  if (r)
    return r == 2 ? 0 : 1;
  p.c.binary = g->criu;
  if (sr_cli_setup(g, 0, false) < 0)
    return 1;
  sr_error_t err = NULL;
  _cleanup_stored_ struct sr_container *ct = NULL;
  struct sr_config *config = NULL;
  if (sr_stored_open(&g->run, p.id, true, &ct, &err) < 0 ||
      sr_container_load_config(ct, &config, &err) < 0)
    return sr_cli_fail(&err);
  const char *image = p.c.image_path ? p.c.image_path : "checkpoint";
  const char *fields[] = {"imagePath", image, "leaveRunning", p.c.leave_running ? "true" : "false",
                          NULL};
  r = sr_stored_audit(&g->run, ct, "checkpoint", fields, &err);
  if (r == 0)
    r = sr_checkpoint(ct, config, &p.c, &err);
  sr_config_free(config);
  if (r < 0) {
    const char *f[] = {"imagePath", image, "error", err ? err->msg : "", NULL};
    sr_error_t e2 = NULL;
    sr_stored_audit(&g->run, ct, "checkpoint-failed", f, &e2);
    sr_error_free(&e2);
    return sr_cli_fail(&err);
  }
  if (!p.c.leave_running)
    sr_stored_release_userns(&g->run, p.id);
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

int sr_cmd_checkpoint_restore(const struct sr_global *g, int argc, char **argv)
{
  struct parsed p = {0};
  int r = parse("restore", RESTORE_USAGE, restore_opts, argc, argv, &p);
  if (r)
    return r == 2 ? 0 : 1;
  p.c.binary = g->criu;
  p.create.audit_event = "restore";
  if (sr_cli_setup(g, 0, false) < 0)
    return 1;
  sr_error_t err = NULL;
  _cleanup_free_ char *bundle = NULL;
  struct sr_create_ctx ctx = SR_PREPARE_CTX(&g->run, &p.create);
  struct sr_policy_ctx pc = {0};
  int status = 0;
  const char *b;
  /* An id in use: the image is of a container that still exists (--leave-running). */
  if (sr_statedir_validate_id(p.id, &err) < 0 || sr_criu_binary(&p.c, &b, &err) < 0) {
    r = -1;
  } else if (sr_stored_exists(&g->run, p.id)) {
    _cleanup_stored_ struct sr_container *ct = NULL;
    const char *st = "unknown";
    if (sr_stored_open(&g->run, p.id, false, &ct, &err) == 0)
      st = sr_container_status_name(sr_container_status(ct));
    sr_error_free(&err);
    sr_error_make(&err, EEXIST,
                  "restore: container `%s` exists (%s): restore the checkpoint "
                  "under an id that is free, or delete that container first",
                  p.id, st);
    sr_policy_run_ctx_release(&pc);
    return sr_cli_fail(&err);
  } else if (sr_prepare_load_bundle_audited(&g->run, p.id, p.bundle, &bundle, &ctx, &err) < 0 ||
             (p.create.bundle = bundle, sr_prepare_create(&g->run, &ctx, &pc, NULL, &err)) < 0 ||
             landlock_decision(&pc, &ctx, &err) < 0) {
    r = -1;
  } else {
    const char *image = p.c.image_path ? p.c.image_path : "checkpoint";
    r = sr_restore(&ctx, &p.c, &status, &err);
    const char *fields[] = {"imagePath", image,
                            "result",    r < 0 ? "refused" : "restored",
                            "error",     r < 0 && err ? err->msg : "",
                            NULL};
    sr_error_t e2 = NULL;
    if (sr_audit_event(&pc.audit, r < 0 ? "restore-failed" : "restored", fields, &e2) < 0)
      sr_error_free(&e2);
  }
  sr_create_ctx_release(&ctx);
  sr_policy_run_ctx_release(&pc);
  if (r < 0) {
    sr_prepare_failed(&g->run, p.id);
    return sr_cli_fail(&err);
  }
  return p.c.detach ? 0 : sr_proc_exit_status(status, 255);
}
