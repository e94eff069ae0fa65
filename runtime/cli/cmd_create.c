/* seerun create ID --bundle DIR: the container exists and waits for start. */
#include "build.h"

#include "cli_common.h"

#include "cleanup.h"
#include "policy_run.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct option longopts[] = {SR_CREATE_LONGOPTS, {NULL, 0, NULL, 0}};

int sr_cmd_create(const struct sr_global *g, int argc, char **argv)
{
  struct sr_create_opts o = {0};
  const char *bundle_arg = NULL;
  int r = sr_cli_common_parse_create_options("create", argc, argv, longopts, "b:h", &o, &bundle_arg,
                                             NULL, NULL);
  if (r)
    return r == 2 ? 0 : 1;
  if (sr_cli_setup(g, o.preserve_fds, true) < 0)
    return 1;
  sr_error_t err = NULL;
  _cleanup_free_ char *bundle = NULL;
  _cleanup_policy_ctx_ struct sr_policy_ctx pc = {0};
  struct sr_create_ctx ctx = SR_PREPARE_CTX(&g->run, &o);
  if (sr_prepare_bundle(&g->run, &ctx, &o, bundle_arg, &bundle, &pc, &err) < 0)
    r = -1;
  else
    r = sr_create(&ctx, &err);
  sr_create_ctx_release(&ctx); /* before the policy it points into (pc, at the scope's end) */
  if (r < 0) {
    sr_prepare_failed(&g->run, o.id);
    return sr_cli_fail_verb("create", &err);
  }
  return 0;
}
