/* Whether an address is the host's own: asked of the kernel's routing tables when it matters,
 * not taken from a list of interface addresses made earlier. */
#ifndef SEERUN_ROUTE_LOCAL_H
#define SEERUN_ROUTE_LOCAL_H

#include <stdbool.h>

#include "error.h"

/* *local: whether the caller's network namespace delivers family/addr (4 or 16 bytes) to
 * itself: its route (RTM_GETROUTE) is local, broadcast, anycast or multicast.  That covers
 * every address of every interface as it is now (one added a moment ago, the thousandth of a
 * node's), and the ranges a `local` route delivers although no interface has them (AnyIP).
 * No route at all: not local (a connection fails). */
int sr_route_local(int family, const unsigned char *addr, bool *local, sr_error_t *err);

#endif
