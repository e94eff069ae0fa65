/* Option parsing as engines use it: "--flag value", "--flag=value", and Go's single-dash
 * "-flag" spelling of long options. */
#ifndef SEERUN_OPTS_H
#define SEERUN_OPTS_H

#include <getopt.h>
#include <stdbool.h>

/* Rewrites "-name[=v]" to "--name[=v]" where name is exactly a long option, in place, up to the
 * first non-option argument when stop_at_arg (the "+" mode of getopt). */
void sr_opts_normalize(int argc, char **argv, const struct option *longopts, bool stop_at_arg);

/* Parses a non-negative int option value, for --preserve-fds and the like. */
bool sr_opts_int(const char *s, int max, int *out);

#endif
