/* seerun features: the OCI features document of this build. */
#include "build.h"

#include "cli.h"
#include "checkpoint.h"

#include "cleanup.h"
#include "features_doc.h"
#include "sdbus.h"

#include <stdio.h>

int sr_cmd_features(const struct sr_global *g, int argc, char **argv)
{
  if (argc > 1) {
    /* -h, --help; "-" alone has no argv[1][2] */
    if (argv[1][0] == '-' && (argv[1][1] == 'h' || (argv[1][1] && argv[1][2] == 'h'))) {
      printf("Usage: seerun features\n");
      return 0;
    }
    return sr_cli_usage_error("features", "", "takes no arguments");
  }
  if (sr_cli_setup(g, 0, false) < 0)
    return 1;
  sr_error_t err = NULL;
  _cleanup_free_ char *json = NULL;
  if (sr_features_doc_json(sr_sdbus_available(), sr_criu_usable(g->criu), &json, &err) < 0)
    return sr_cli_fail(&err);
  printf("%s\n", json);
  return 0;
}
