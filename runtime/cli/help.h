#ifndef SEERUN_HELP_H
#define SEERUN_HELP_H

#include <stdbool.h>

/* Prints `seerun CMD --help`; false for an unknown command. */
bool sr_help_print(const char *cmd);

#endif
