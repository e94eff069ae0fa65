/* seerun state ID: the OCI state as JSON. */
#include "build.h"

#include "cli_common.h"

#include "cleanup.h"
#include "lifecycle.h"

#include <stdio.h>

int sr_cmd_state(const struct sr_global *g, int argc, char **argv)
{
  const char *id;
  _cleanup_stored_ struct sr_container *ct = NULL;
  int r = sr_cli_common_open_id_only(g, "state", argc, argv, false, &id, &ct);
  if (r)
    return r == 2 ? 0 : 1;
  sr_error_t err = NULL;
  _cleanup_free_ char *json = NULL;
  if (sr_container_state_json(ct, true, &json, &err) < 0)
    return sr_cli_fail(&err);
  printf("%s\n", json);
  return 0;
}
