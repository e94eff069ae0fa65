/* seerun kill ID [SIGNAL]: SIGTERM by default; --all signals every process of the container. */
#include "build.h"

#include "cli_common.h"

#include "activity.h"

#include "cleanup.h"
#include "lifecycle.h"
#include "signals.h"

#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#define USAGE "[command options] <container-id> [signal]"

int sr_cmd_kill(const struct sr_global *g, int argc, char **argv)
{
  bool all = false;
  int r = sr_cli_common_parse_flag("kill", USAGE, argc, argv, "all", &all);
  if (r)
    return r == 2 ? 0 : 1;
  int nargs = argc - optind;
  if (nargs < 1 || nargs > 2)
    return sr_cli_usage_error("kill", USAGE, "a container id and at most one signal are required");
  int sig = SIGTERM;
  /* Signal 0 sends nothing: it checks that the container's process exists, as kill(1) and
   * runc do. */
  if (nargs == 2 && strcmp(argv[optind + 1], "0") == 0)
    sig = 0;
  else if (nargs == 2 && (sig = sr_signals_parse(argv[optind + 1])) < 0)
    return sr_cli_usage_error("kill", USAGE, "unknown signal \"%s\"", argv[optind + 1]);
  if (sr_cli_setup(g, 0, false) < 0)
    return 1;
  sr_error_t err = NULL;
  _cleanup_stored_ struct sr_container *ct = NULL;
  char signum[16];
  snprintf(signum, sizeof(signum), "%d", sig);
  const char *fields[] = {"signal", signum, "all", all ? "true" : "false", NULL};
  if (sr_stored_open(&g->run, argv[optind], true, &ct, &err) < 0 ||
      sr_stored_audit(&g->run, ct, "kill", fields, &err) < 0)
    return sr_cli_fail(&err);
  /* What runs when the container is stopped, for its activity record. */
  bool stopping = sig == SIGKILL || sig == SIGTERM || sig == SIGINT || sig == SIGHUP ||
                  sig == SIGQUIT;
  if (stopping && ct->rec->supervisor_activity && ct->rec->supervisor_pid > 0)
    sr_activity_request_snapshot(ct->dirfd, "kill");
  if (sr_container_kill(ct, sig, all, &err) < 0)
    return sr_cli_fail(&err);
  return 0;
}
