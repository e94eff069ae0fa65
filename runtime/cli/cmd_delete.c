/* seerun delete ID: removes a stopped container; --force kills it first.  delete --force of an
 * id that does not exist succeeds (engines call it on every teardown). */
#include "build.h"

#include "cli_common.h"

#include "activity.h"

#include "cleanup.h"
#include "lifecycle.h"
#include "policy_run.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>

#define USAGE "[command options] <container-id>"

int sr_cmd_delete(const struct sr_global *g, int argc, char **argv)
{
  bool force = false;
  int r = sr_cli_common_parse_flag("delete", USAGE, argc, argv, "force", &force);
  if (r)
    return r == 2 ? 0 : 1;
  if (optind != argc - 1)
    return sr_cli_usage_error("delete", USAGE, "exactly one container id is required");
  if (sr_cli_setup(g, 0, false) < 0)
    return 1;
  sr_error_t err = NULL;
  _cleanup_stored_ struct sr_container *ct = NULL;
  /* A container whose state.json is corrupt, truncated or missing must still go with --force:
   * its record is rebuilt from what else its directory holds (lifecycle.h). */
  /* And one whose directory someone removed: what its index records still goes. */
  if (sr_stored_open(&g->run, argv[optind], true, &ct, &err) < 0 && force) {
    sr_error_free(&err);
    sr_container_recover(g->run.root, argv[optind], &ct, &err);
  }
  if (ct == NULL) {
    if (force && err->status == ENOENT) {
      sr_error_free(&err);
      /* A create that failed may have left its range held (older seerun); nothing uses it. */
      sr_stored_release_userns(&g->run, argv[optind]);
      return 0;
    }
    return sr_cli_fail(&err);
  }
  const char *fields[] = {"force", force ? "true" : "false", NULL};
  if (sr_stored_audit(&g->run, ct, "delete", fields, &err) < 0)
    return sr_cli_fail(&err);
  /* The poststop hooks of the config copy are judged again: what the state directory says
   * never widens what the policy allows. */
  _cleanup_policy_ctx_ struct sr_policy_ctx pc = {0};
  struct sr_hook_gate gate;
  sr_stored_hook_gate(&g->run, ct, &pc, NULL, &gate);
  if (force && ct->rec->supervisor_activity && ct->rec->supervisor_pid > 0 &&
      sr_container_status(ct) != SR_STATUS_STOPPED)
    sr_activity_request_snapshot(ct->dirfd, "delete");
  sr_stored_activity_settle(&g->run, ct);
  r = sr_container_delete(ct, force, &gate, &err);
  if (r < 0)
    return sr_cli_fail(&err);
  /* The policy the hooks were judged by, not parsed a third time. */
  sr_stored_release_userns_with(&g->run, pc.policy, argv[optind]);
  return 0;
}
