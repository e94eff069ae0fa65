/* Processes: identity from /proc/PID/stat, exit status from a wait status. */
#ifndef SEERUN_PROC_H
#define SEERUN_PROC_H

#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "error.h"

/* Process start time (field 22 of /proc/PID/stat) and state letter; -1 with ESRCH when the
 * process does not exist. */
int sr_proc_stat(pid_t pid, uint64_t *start_time, char *state);
/* True when pid is alive (not a zombie) and started at start_time: a reused pid is not
 * mistaken for the container. */
bool sr_proc_is(pid_t pid, uint64_t start_time);
/* A wait status as a process exit status: the code, or 128+N for a signal; `otherwise` for
 * anything else. */
int sr_proc_exit_status(int status, int otherwise);

#endif
