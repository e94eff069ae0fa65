/* Helpers the commands share. */
#ifndef SEERUN_CLI_COMMON_H
#define SEERUN_CLI_COMMON_H

#include "cli.h"
#include "container.h"
#include "error.h"
#include "json.h"
#include "prepare.h"
#include "statedir.h"
#include "stored.h"

/* Commands whose only option besides --help is one flag (kill --all, delete --force, gc
 * --all; NULL: none), spelled --NAME or -N with N its first letter: 0 with *set updated and
 * optind at the first argument, 1 on a usage error (printed), 2 after --help. */
int sr_cli_common_parse_flag(const char *cmd, const char *usage, int argc, char **argv,
                             const char *flag, bool *set);

/* Commands that take only a container id (start, state, pause, resume): 0 with *id set, 1 on
 * a usage error (printed), 2 after --help. */
int sr_cli_common_parse_id_only(const char *cmd, int argc, char **argv, const char **id);
/* Their common start: the id parsed as above, the process set up, the stored container opened
 * (locked when lock is set) into *ct: 0, or 1 when it failed (reported), or 2 after --help. */
/* The document g holds printed on stdout as one line (-1 with err when it is not whole). */
int sr_cli_common_print_json(sr_json_gen_t g, sr_error_t *err);

int sr_cli_common_open_id_only(const struct sr_global *g, const char *cmd, int argc, char **argv,
                        bool lock, const char **id, struct sr_container **ct);

/* The long options sr_cli_common_parse_create_options handles, at the head of create's and run's
 * tables (which add their own and the terminating entry), so that the table and the parser agree.
 */
#define SR_CREATE_LONGOPTS                                                                         \
  {"bundle", required_argument, NULL, 'b'}, {"pid-file", required_argument, NULL, 'p'},            \
      {"console-socket", required_argument, NULL, 'c'}, {"no-pivot", no_argument, NULL, 'P'},      \
      {"no-new-keyring", no_argument, NULL, 'k'}, {"preserve-fds", required_argument, NULL, 'f'},  \
      {"help", no_argument, NULL, 'h'}

/* The options create and run share (--bundle, --pid-file, --console-socket, --no-pivot,
 * --no-new-keyring, --preserve-fds); extra handles the others.  Returns 0, 1 (error printed)
 * or 2 (help printed). */
struct option;
int sr_cli_common_parse_create_options(const char *cmd, int argc, char **argv,
                                       const struct option *opts, const char *shortopts,
                                       struct sr_create_opts *o, const char **bundle,
                                       int (*extra)(int c, void *data), void *data);

#endif
