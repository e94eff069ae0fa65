/* seerun pause ID / resume ID: freeze and thaw every process of the container (v1 freezer,
 * v2 cgroup.freeze); `state` reports "paused" meanwhile. */
#include "build.h"

#include "cli_common.h"

#include "cgroup.h"
#include "cleanup.h"
#include "lifecycle.h"

static int freeze(const struct sr_global *g, const char *cmd, bool frozen, int argc, char **argv)
{
  const char *id;
  _cleanup_stored_ struct sr_container *ct = NULL;
  int r = sr_cli_common_open_id_only(g, cmd, argc, argv, true, &id, &ct);
  if (r)
    return r == 2 ? 0 : 1;
  sr_error_t err = NULL;
  enum sr_status st = sr_container_status(ct);
  if (frozen && st != SR_STATUS_RUNNING) {
    sr_error_make(&err, 0, "container \"%s\" not running (it is %s)", id,
                  sr_container_status_name(st));
    return sr_cli_fail(&err);
  }
  if (!frozen && st != SR_STATUS_PAUSED) {
    sr_error_make(&err, 0, "container \"%s\" not paused (it is %s)", id,
                  sr_container_status_name(st));
    return sr_cli_fail(&err);
  }
  _cleanup_cgroup_ struct sr_cgroup *cg = NULL;
  if (ct->rec->cgroup_version == 0) {
    sr_error_make(&err, 0, "container \"%s\" has no cgroup to freeze", id);
    return sr_cli_fail(&err);
  }
  /* Freezing a cgroup seerun joined would freeze the other processes in it. */
  if (!ct->rec->cgroup_created) {
    sr_error_make(&err, 0,
                  "container \"%s\": its cgroup `%s` (linux.cgroupsPath) was not made by seerun: "
                  "it may hold other processes, so it is not %s",
                  id, ct->rec->cgroup_path ? ct->rec->cgroup_path : "?",
                  frozen ? "frozen" : "thawed");
    return sr_cli_fail(&err);
  }
  if (sr_stored_audit(&g->run, ct, cmd, NULL, &err) < 0 ||
      sr_cgroup_new(SR_CGROUP_ROOT, ct->rec->cgroup_path, &cg, &err) < 0)
    return sr_cli_fail(&err);
  return sr_cgroup_freeze(cg, frozen, &err) < 0 ? sr_cli_fail(&err) : 0;
}

int sr_cmd_pause(const struct sr_global *g, int argc, char **argv)
{
  return freeze(g, "pause", true, argc, argv);
}

int sr_cmd_pause_resume(const struct sr_global *g, int argc, char **argv)
{
  return freeze(g, "resume", false, argc, argv);
}
