/* seerun checkpoint ID / seerun restore ID: runc's command lines over CRIU
 * (runtime/container/checkpoint.h has the machinery and what restore checks). */
#include "build.h"

#include "cli_common.h"

#include "checkpoint.h"
#include "criu_run.h"
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

/* parse, then the criu binary of the command line and the process set up: 0, or the exit
 * status (0 after --help, 1 otherwise). */
static int begin(const struct sr_global *g, const char *cmd, const char *usage,
                 const struct option *opts, int argc, char **argv, struct parsed *p, int *status)
{
  int r = parse(cmd, usage, opts, argc, argv, p);
  *status = r == 2 ? 0 : 1;
  if (r)
    return -1;
  p->c.binary = g->criu;
  return sr_cli_setup(g, 0, false) < 0 ? -1 : 0;
}

int sr_cmd_checkpoint(const struct sr_global *g, int argc, char **argv)
{
  struct parsed p = {0};
  int st;
  if (begin(g, "checkpoint", CHECKPOINT_USAGE, checkpoint_opts, argc, argv, &p, &st) < 0)
    return st;
  sr_error_t err = NULL;
  return sr_criu_run_checkpoint(&g->run, p.id, &p.c, &err) < 0 ? sr_cli_fail(&err) : 0;
}

int sr_cmd_checkpoint_restore(const struct sr_global *g, int argc, char **argv)
{
  struct parsed p = {0};
  int st;
  if (begin(g, "restore", RESTORE_USAGE, restore_opts, argc, argv, &p, &st) < 0)
    return st;
  sr_error_t err = NULL;
  int status = 0;
  if (sr_criu_run_restore(&g->run, &p.create, p.bundle, &p.c, &status, &err) < 0)
    return sr_cli_fail(&err);
  return p.c.detach ? 0 : sr_proc_exit_status(status, 255);
}
