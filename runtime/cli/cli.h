/* The parsed command line: global options and the command entry points.  This is the only
 * process-wide state seerun has. */
#ifndef SEERUN_CLI_H
#define SEERUN_CLI_H

#include <stdbool.h>

#include "invocation.h"

struct sr_global {
  struct sr_invocation run; /* what the library is given (runtime/enforce/invocation.h) */
  const char *log;
  const char *log_format;
  bool debug;
  const char *criu; /* --criu PATH: the criu binary checkpoint and restore start */
};

/* Each command parses its own options and returns the process exit status. */
typedef int (*sr_command_fn)(const struct sr_global *g, int argc, char **argv);

int sr_cmd_create(const struct sr_global *g, int argc, char **argv);
int sr_cmd_start(const struct sr_global *g, int argc, char **argv);
int sr_cmd_run(const struct sr_global *g, int argc, char **argv);
int sr_cmd_state(const struct sr_global *g, int argc, char **argv);
int sr_cmd_kill(const struct sr_global *g, int argc, char **argv);
int sr_cmd_exec(const struct sr_global *g, int argc, char **argv);
int sr_cmd_delete(const struct sr_global *g, int argc, char **argv);
int sr_cmd_list(const struct sr_global *g, int argc, char **argv);
int sr_cmd_spec(const struct sr_global *g, int argc, char **argv);
int sr_cmd_pause(const struct sr_global *g, int argc, char **argv);
int sr_cmd_pause_resume(const struct sr_global *g, int argc, char **argv);
int sr_cmd_ps(const struct sr_global *g, int argc, char **argv);
int sr_cmd_events(const struct sr_global *g, int argc, char **argv);
int sr_cmd_update(const struct sr_global *g, int argc, char **argv);
int sr_cmd_features(const struct sr_global *g, int argc, char **argv);
int sr_cmd_checkpoint(const struct sr_global *g, int argc, char **argv);
int sr_cmd_checkpoint_restore(const struct sr_global *g, int argc, char **argv);
int sr_cmd_policy(const struct sr_global *g, int argc, char **argv);
int sr_cmd_gc(const struct sr_global *g, int argc, char **argv);
int sr_cmd_review(const struct sr_global *g, int argc, char **argv);
int sr_cmd_sandbox(const struct sr_global *g, int argc, char **argv);

/* Prints "seerun: <error>" on stderr (and to the log), frees it, returns 1. */
struct sr_error_s;
int sr_cli_fail(struct sr_error_s **err);
/* create and run, as runc: "seerun <verb> failed: <error>" on stderr and in the log (what
 * engines show: "OCI runtime create failed: seerun create failed: ..."). */
int sr_cli_fail_verb(const char *verb, struct sr_error_s **err);

/* Descriptor hygiene and the log, once a command knows how many descriptors it passes on:
 * descriptors beyond 2 + preserve are closed (keep = false: only marked close-on-exec). */
int sr_cli_setup(const struct sr_global *g, int preserve_fds, bool close_others);

/* A usage error: prints it with the command's usage line, returns 1. */
int sr_cli_usage_error(const char *cmd, const char *usage, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The usage error "unknown option `X`" for the option getopt_long just refused (argv as given
 * to it). */
int sr_cli_unknown_option(const char *cmd, const char *usage, char **argv);

#endif
