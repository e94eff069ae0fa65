/* seerun create ID --bundle DIR: the container exists and waits for start. */
#include "build.h"

#include "cli_common.h"

#include "cleanup.h"
#include "opts.h"
#include "policy_run.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define USAGE "[command options] <container-id>"

static const struct option longopts[] = {
    {"bundle", required_argument, NULL, 'b'},
    {"pid-file", required_argument, NULL, 'p'},
    {"console-socket", required_argument, NULL, 'c'},
    {"no-pivot", no_argument, NULL, 'P'},
    {"no-new-keyring", no_argument, NULL, 'k'},
    {"preserve-fds", required_argument, NULL, 'f'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* Parses the options create and run share; returns 0, 1 (error), or 2 (help printed). */
int sr_parse_create_options(const char *cmd, int argc, char **argv, const struct option *opts,
                            const char *shortopts, struct sr_create_opts *o, const char **bundle,
                            int (*extra)(int c, void *data), void *data)
{
  sr_opts_normalize(argc, argv, opts, false);
  optind = 1;
  opterr = 0;
  int c;
  while ((c = getopt_long(argc, argv, shortopts, opts, NULL)) != -1) {
    switch (c) {
    case 'b':
      *bundle = optarg;
      break;
    case 'p':
      o->pid_file = optarg;
      break;
    case 'c':
      o->console_socket = optarg;
      break;
    case 'P':
      o->no_pivot = true;
      break;
    case 'k':
      o->no_new_keyring = true;
      break;
    case 'f':
      if (!sr_opts_int(optarg, 4096, &o->preserve_fds))
        return sr_cli_usage_error(cmd, USAGE, "--preserve-fds: \"%s\" is not a number", optarg);
      break;
    case 'h':
      printf("Usage: seerun %s %s\n", cmd, USAGE);
      return 2;
    default:
      if (extra && extra(c, data) == 0)
        break;
      return sr_cli_usage_error(cmd, USAGE, "unknown option `%s`", argv[optind - 1]);
    }
  }
  if (optind != argc - 1)
    return sr_cli_usage_error(cmd, USAGE, "exactly one container id is required");
  o->id = argv[optind];
  return 0;
}

int sr_cmd_create(const struct sr_global *g, int argc, char **argv)
{
  struct sr_create_opts o = {0};
  const char *bundle_arg = NULL;
  int r = sr_parse_create_options("create", argc, argv, longopts, "b:h", &o, &bundle_arg, NULL,
                                  NULL);
  if (r)
    return r == 2 ? 0 : 1;
  if (sr_cli_setup(g, o.preserve_fds, true) < 0)
    return 1;
  sr_error_t err = NULL;
  _cleanup_free_ char *bundle = NULL;
  struct sr_create_ctx ctx = {.g = g, .o = &o, .sync = {-1, -1}, .fifo_fd = -1,
                              .console_fd = -1, .notify_fd = -1, .cgroup_dir_fd = -1,
                              .init_pidfd = -1, .rootfs_tree_fd = -1};
  struct sr_policy_ctx pc = {0};
  if (sr_validate_id(o.id, &err) < 0 ||
      sr_cli_load_bundle_audited(g, o.id, bundle_arg, &bundle, &ctx, &err) < 0 ||
      (o.bundle = bundle, sr_cli_prepare_create(g, &ctx, &pc, NULL, &err)) < 0) {
    sr_create_ctx_release(&ctx);
    sr_policy_ctx_release(&pc);
    return sr_cli_fail(&err);
  }
  r = sr_container_create(&ctx, &err);
  sr_create_ctx_release(&ctx);
  sr_policy_ctx_release(&pc);
  if (r < 0) {
    /* A failed create removed its state directory, so the engine's `delete --force` finds no
     * container: release the user namespace range it took here, or it stays held for good.
     * Not when the id is another container's (create refused it): that one keeps its range. */
    if (!sr_cli_container_exists(g, o.id))
      sr_cli_release_userns(g, o.id);
    return sr_cli_fail(&err);
  }
  return 0;
}
