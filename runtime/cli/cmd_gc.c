/* seerun gc [--all]: removes what sandboxes whose seerun was killed left in the state root (as
 * the next `seerun sandbox` does), then forgets the user namespace ranges of deleted containers
 * whose grace period has passed (all released ranges with --all), so that other containers can
 * use them. */
#include "build.h"

#include "cli_common.h"

#include "policy_run.h"
#include "sandbox.h"
#include "userns_registry.h"

#include <getopt.h>
#include <stdio.h>

int sr_cmd_gc(const struct sr_global *g, int argc, char **argv)
{
  bool all = false;
  int r = sr_cli_common_parse_flag("gc", "[--all]", argc, argv, "all", &all);
  if (r)
    return r == 2 ? 0 : 1;
  if (sr_cli_setup(g, 0, false) < 0)
    return 1;
  sr_error_t err = NULL;
  _cleanup_policy_ctx_ struct sr_policy_ctx pc = {0};
  size_t freed = 0;
  if (sr_policy_run_load(&g->run, &pc, &err) < 0)
    return sr_cli_fail(&err);
  if (sr_sandbox_slot_gc(&g->run, &err) < 0)
    return sr_cli_fail(&err);
  r = sr_userns_registry_gc(&pc.policy->userns, all, &freed, &err);
  if (r < 0)
    return sr_cli_fail(&err);
  printf("released %zu user namespace range%s\n", freed, freed == 1 ? "" : "s");
  return 0;
}
