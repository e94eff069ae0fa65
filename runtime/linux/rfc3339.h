/* Timestamps as RFC 3339 text. */
#ifndef SEERUN_RFC3339_H
#define SEERUN_RFC3339_H

#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "error.h"

/* RFC 3339 with nanoseconds, UTC, as Go's time.RFC3339Nano writes it. */
void sr_rfc3339_format(char *buf, size_t size, const struct timespec *ts);
void sr_rfc3339_now(char *buf, size_t size);

#endif
