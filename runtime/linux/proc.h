/* Processes: identity from /proc/PID/stat, what /proc/PID says of them, exit status from a
 * wait status. */
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
/* /proc/PID as a directory (O_PATH), or -1: what is read through it is of that one process
 * (once it has ended, a new process with its pid is not seen through it). */
int sr_proc_open(pid_t pid);
/* sr_proc_is through such a directory (-1: false). */
bool sr_proc_is_at(int procfd, uint64_t start_time);
/* /proc/PID/NAME's first SIZE-1 bytes as a string ("" when it cannot be read): with
 * NUL_TO_SPACE the NULs that separate cmdline's arguments become spaces; the characters of
 * TRIM are taken off its end. */
void sr_proc_text(pid_t pid, const char *name, char *out, size_t size, bool nul_to_space,
                  const char *trim);
/* The same through a /proc/PID directory (dirfd; AT_FDCWD with name a whole path). */
void sr_proc_text_at(int dirfd, const char *name, char *out, size_t size, bool nul_to_space,
                     const char *trim);
/* The target of /proc/PID/exe ("" when it cannot be read); its length, or -1. */
ssize_t sr_proc_exe(pid_t pid, char *out, size_t size);
/* The same through a /proc/PID directory. */
ssize_t sr_proc_exe_at(int procfd, char *out, size_t size);
/* Start time, state (sr_proc_stat) and parent (each may be NULL) through a /proc/PID
 * directory; -1 with ESRCH once the process has gone. */
int sr_proc_stat_at(int procfd, uint64_t *start_time, char *state, pid_t *ppid);
/* Whether a process that started at start_time (clock ticks since boot, as /proc/PID/stat
 * has it) certainly started after the moment mono_ns (CLOCK_MONOTONIC, as the kernel stamps
 * its events): so it is not the process an event of that moment was about, whose pid it
 * has taken.  Within the tick of the moment, not certain: false. */
bool sr_proc_started_after(uint64_t start_time, uint64_t mono_ns);
/* A wait status as a process exit status: the code, or 128+N for a signal; `otherwise` for
 * anything else. */
int sr_proc_exit_status(int status, int otherwise);

#endif
