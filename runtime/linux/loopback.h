/* The loopback interface of a new network namespace, which the kernel creates down. */
#ifndef SEERUN_LOOPBACK_H
#define SEERUN_LOOPBACK_H

#include "error.h"

/* Brings `lo` of the caller's network namespace up (SIOCSIFFLAGS), as runc and crun do:
 * anything on 127.0.0.1 inside a container needs it.  Needs CAP_NET_ADMIN over the namespace. */
int sr_loopback_up(sr_error_t *err);

#endif
