/* seerun review [ID...] [--since TIME] [--json]: per run of the audit log, a short summary and
 * the flags that deserve a look (docs/audit.md, "seerun review"; the analysis is
 * runtime/review's). */
#include "build.h"

#include "cli_common.h"

#include "cleanup.h"
#include "opts.h"
#include "policy_run.h"
#include "review.h"
#include "review_time.h"

#include <getopt.h>
#include <stdio.h>
#include <time.h>

#define USAGE "[command options] [container-id...]"

int sr_cmd_review(const struct sr_global *g, int argc, char **argv)
{
  static const struct option longopts[] = {{"since", required_argument, NULL, 's'},
                                           {"json", no_argument, NULL, 'j'},
                                           {"help", no_argument, NULL, 'h'},
                                           {NULL, 0, NULL, 0}};
  struct sr_review_options o = {.since = -1};
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  sr_opts_begin(argc, argv, longopts, false);
  int c;
  while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
    switch (c) {
    case 's':
      if (sr_review_time_since(optarg, (double)now.tv_sec + now.tv_nsec / 1e9, &o.since) < 0)
        return sr_cli_usage_error("review", USAGE,
                                  "--since: \"%s\" is neither RFC 3339 nor relative (-1h, "
                                  "-30m, -2d, -45s)",
                                  optarg);
      break;
    case 'j':
      o.json = true;
      break;
    case 'h':
      printf("Usage: seerun review %s\n", USAGE);
      return 0;
    default:
      return sr_cli_unknown_option("review", USAGE, argv);
    }
  }
  o.ids = argv + optind;
  o.n_ids = (size_t)(argc - optind);
  if (sr_cli_setup(g, 0, false) < 0)
    return 1;
  sr_error_t err = NULL;
  _cleanup_policy_ctx_ struct sr_policy_ctx pc = {0};
  if (sr_policy_run_load(&g->run, &pc, &err) < 0)
    return sr_cli_fail(&err);
  _cleanup_free_ char *report = NULL;
  if (sr_review_report(pc.audit.path, &o, &report, &err) < 0)
    return sr_cli_fail(&err);
  fputs(report, stdout);
  return 0;
}
