/* Option parsing as engines use it: "--flag value", "--flag=value", and Go's single-dash
 * "-flag" spelling of long options.  Options may follow the arguments, as runc's urfave/cli
 * reorders them (`update ID --cpu-period N`), up to a "--"; exec and ps stop at their first
 * argument ("+"), as runc's SkipArgReorder does: what follows belongs to the command.
 *
 * Every command restarts getopt with optind = 0, not 1: glibc keeps the ordering ("+", stop
 * at the first argument) of the global options' parse otherwise, and refuses options after
 * the container id. */
#ifndef SEERUN_OPTS_H
#define SEERUN_OPTS_H

#include <getopt.h>
#include <stdbool.h>

/* Rewrites "-name[=v]" to "--name[=v]" where name is exactly a long option, in place, up to the
 * first non-option argument when stop_at_arg (the "+" mode of getopt). */
void sr_opts_normalize(int argc, char **argv, const struct option *longopts, bool stop_at_arg);

/* Before a verb's getopt_long loop: its arguments normalized as above, and getopt restarted in
 * full (optind = 0: see the top of this file) with its own messages off (opterr = 0). */
void sr_opts_begin(int argc, char **argv, const struct option *longopts, bool stop_at_arg);

/* Parses a non-negative int option value, for --preserve-fds and the like. */
bool sr_opts_int(const char *s, int max, int *out);

#endif
