/* Numbers parsed from text. */
#ifndef SEERUN_NUMBER_H
#define SEERUN_NUMBER_H

#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "error.h"

/* The string is a non-negative decimal integer that fits in *out. */
bool sr_number_parse_uint(const char *s, unsigned long long max, unsigned long long *out);

#endif
