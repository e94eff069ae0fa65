/* seerun update: new resource limits for a running container, judged by the profile it was
 * created under, audited, then written to its cgroup. */
#ifndef SEERUN_UPDATE_H
#define SEERUN_UPDATE_H

#include "arena.h"
#include "config.h"
#include "error.h"
#include "invocation.h"

/* Applies r (allocated in a, which the judged copy is allocated in too) to container id: an
 * error when it is stopped or has no cgroup; a refusal of the profile is audited, then
 * returned. */
int sr_update_resources(const struct sr_invocation *inv, const char *id, struct sr_arena *a,
                        const struct sr_resources *r, sr_error_t *err);

#endif
