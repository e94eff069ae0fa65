/* seerun start ID: run the process of a created container. */
#include "build.h"

#include "cli_common.h"

#include "cleanup.h"
#include "lifecycle.h"
#include "policy_run.h"

#include <stdio.h>

int sr_cmd_start(const struct sr_global *g, int argc, char **argv)
{
  const char *id;
  _cleanup_stored_ struct sr_container *ct = NULL;
  int r = sr_cli_common_open_id_only(g, "start", argc, argv, true, &id, &ct);
  if (r)
    return r == 2 ? 0 : 1;
  sr_error_t err = NULL;
  _cleanup_config_ struct sr_config *config = NULL;
  if (sr_container_load_config(ct, &config, &err) < 0 ||
      sr_stored_audit(&g->run, ct, "start", NULL, &err) < 0)
    return sr_cli_fail(&err);
  /* The poststart hooks come from the config copy: judged again (the policy is loaded only
   * when there is one to judge). */
  _cleanup_policy_ctx_ struct sr_policy_ctx pc = {0};
  struct sr_hook_gate gate = {.rejudge = true};
  if (config->hooks.n[SR_HOOK_POSTSTART])
    sr_stored_hook_gate(&g->run, ct, &pc, NULL, &gate);
  r = sr_container_start(ct, config, &gate, &err);
  if (r < 0)
    return sr_cli_fail(&err);
  return 0;
}
