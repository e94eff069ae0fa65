/* seerun start ID: run the process of a created container. */
#include "build.h"

#include "cli_common.h"

#include "cleanup.h"
#include "lifecycle.h"
#include "opts.h"

#include <getopt.h>
#include <stdio.h>

#define USAGE "<container-id>"

int sr_cmd_start(const struct sr_global *g, int argc, char **argv)
{
  static const struct option longopts[] = {{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
  sr_opts_normalize(argc, argv, longopts, false);
  optind = 1;
  opterr = 0;
  int c;
  while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
    if (c == 'h') {
      printf("Usage: seerun start %s\n", USAGE);
      return 0;
    }
    return sr_cli_usage_error("start", USAGE, "unknown option `%s`", argv[optind - 1]);
  }
  if (optind != argc - 1)
    return sr_cli_usage_error("start", USAGE, "exactly one container id is required");
  if (sr_cli_setup(g, 0, false) < 0)
    return 1;
  sr_error_t err = NULL;
  _cleanup_cli_container_ struct sr_container *ct = NULL;
  _cleanup_config_ struct sr_config *config = NULL;
  if (sr_cli_open_container(g, argv[optind], true, &ct, &err) < 0 ||
      sr_container_load_config(ct, &config, &err) < 0 ||
      sr_cli_audit(g, ct, "start", NULL, &err) < 0 || sr_container_start(ct, config, &err) < 0)
    return sr_cli_fail(&err);
  return 0;
}
