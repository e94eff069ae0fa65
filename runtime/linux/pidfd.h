/* Process file descriptors (pidfd_open, pidfd_send_signal). */
#ifndef SEERUN_PIDFD_H
#define SEERUN_PIDFD_H

#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "error.h"

int sr_pidfd_open(pid_t pid);
int sr_pidfd_send_signal(int pidfd, int sig);

#endif
