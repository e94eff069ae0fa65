/* seerun policy show | check --bundle DIR: the effective profile this engine entry is bound
 * to, and the decisions the policy would take for a bundle, without running anything. */
#include "build.h"

#include "cli_common.h"

#include "cleanup.h"
#include "json.h"
#include "opts.h"
#include "policy_run.h"
#include "statedir.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#define USAGE "show | check --bundle DIR"

static int show(const struct sr_global *g)
{
  sr_error_t err = NULL;
  _cleanup_policy_ctx_ struct sr_policy_ctx pc = {0};
  if (sr_policy_run_load(&g->run, &pc, &err) < 0)
    return sr_cli_fail(&err);
  _cleanup_gen_ sr_json_gen_t gen = NULL;
  if (sr_json_gen_new(&gen, true, &err) < 0)
    return sr_cli_fail(&err);
  sr_json_map_open(gen);
  sr_json_put_kv_string(gen, "profile", pc.profile->name);
  sr_json_put_kv_string(gen, "auditLog", pc.policy->audit_log);
  sr_json_put_key(gen, "settings");
  sr_policy_profile_to_json(pc.profile, gen);
  sr_json_map_close(gen);
  return sr_cli_common_print_json(gen, &err) < 0 ? sr_cli_fail(&err) : 0;
}

static int check(const struct sr_global *g, const char *bundle_arg)
{
  sr_error_t err = NULL;
  _cleanup_free_ char *bundle = NULL;
  struct sr_create_opts o = {.id = "policy-check"};
  _cleanup_(sr_create_ctx_release) struct sr_create_ctx ctx = SR_PREPARE_CTX(&g->run, &o);
  _cleanup_policy_ctx_ struct sr_policy_ctx pc = {0};
  _cleanup_gen_ sr_json_gen_t gen = NULL;
  if (sr_prepare_load_bundle(bundle_arg, &bundle, &ctx, &err) < 0 ||
      sr_policy_run_load(&g->run, &pc, &err) < 0)
    return sr_cli_fail(&err);
  o.bundle = bundle;
  /* Only looked at: no audit line, no registry range, nothing created. */
  pc.audit.path = NULL;
  char rootfs[PATH_MAX];
  if (sr_prepare_rootfs_path(ctx.config, bundle, rootfs, sizeof(rootfs), &err) < 0)
    return sr_cli_fail(&err);
  /* The state root as create sees it (another container's namespaces, a pod), opened only:
   * never created by a check.  None yet: no container to join either. */
  _cleanup_close_ int rootfd = -1;
  if (sr_statedir_open_root(g->run.root, false, &rootfd, &err) < 0) {
    if (err->status != ENOENT)
      return sr_cli_fail(&err);
    sr_error_free(&err);
  }
  struct sr_facts_input in = {.bundle = bundle,
                              .rootfs = rootfs,
                              .find_peer = rootfd >= 0 ? sr_prepare_ns_peer : NULL,
                              .peer_data = &rootfd,
                              .state_root = g->run.root,
                              .id = o.id,
                              .dry_run = true};
  struct sr_decisions d = {0};
  int r = sr_policy_run_create(&pc, ctx.config, &in, &d, &err);
  sr_error_t gerr = NULL;
  if (sr_json_gen_new(&gen, true, &gerr) == 0) {
    sr_json_map_open(gen);
    sr_json_put_kv_string(gen, "profile", pc.profile->name);
    sr_json_put_kv_bool(gen, "allowed", r == 0);
    sr_json_put_key(gen, "decisions");
    sr_policy_render_json(&d, gen);
    sr_json_map_close(gen);
    sr_cli_common_print_json(gen, &gerr);
  }
  /* Without its document the check did not answer: a failure, unless it refused anyway. */
  if (r == 0 && gerr)
    return sr_cli_fail(&gerr);
  sr_error_free(&gerr);
  return r < 0 ? sr_cli_fail(&err) : 0;
}

int sr_cmd_policy(const struct sr_global *g, int argc, char **argv)
{
  static const struct option longopts[] = {{"bundle", required_argument, NULL, 'b'},
                                           {"help", no_argument, NULL, 'h'},
                                           {NULL, 0, NULL, 0}};
  const char *bundle = ".";
  if (argc < 2)
    return sr_cli_usage_error("policy", USAGE, "show or check is required");
  const char *sub = argv[1];
  sr_opts_begin(argc - 1, argv + 1, longopts, false);
  int c;
  while ((c = getopt_long(argc - 1, argv + 1, "b:h", longopts, NULL)) != -1) {
    switch (c) {
    case 'b':
      bundle = optarg;
      break;
    case 'h':
      printf("Usage: seerun policy %s\n", USAGE);
      return 0;
    default:
      return sr_cli_unknown_option("policy", USAGE, argv + 1);
    }
  }
  if (sr_cli_setup(g, 0, false) < 0)
    return 1;
  if (strcmp(sub, "show") == 0)
    return show(g);
  if (strcmp(sub, "check") == 0)
    return check(g, bundle);
  return sr_cli_usage_error("policy", USAGE, "unknown subcommand \"%s\"", sub);
}
