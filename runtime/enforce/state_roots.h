/* The record of every state root (--root) seerun has created a container in: containers'
 * state directories hold their configs and what exec, update, kill and delete read back, so
 * every such root, wherever it is (/run/seerun, Docker's /run/docker/runtime-*, containerd's
 * /run/containerd/runc/<namespace>, a sandbox's), is a denied bind source for every other
 * container.  One canonical path per line in "state-roots" next to the user namespace registry
 * (by default /var/lib/seerun/state-roots), rewritten atomically under a lock when a root is
 * first used. */
#ifndef SEERUN_STATE_ROOTS_H
#define SEERUN_STATE_ROOTS_H

#include <stddef.h>

#include "arena.h"
#include "error.h"
#include "policy.h"

#define SR_STATE_ROOTS_NAME "state-roots"

/* The record's path for this pool's registry (in a). */
char *sr_state_roots_path(struct sr_arena *a, const struct sr_userns_pool *pool);

/* The recorded roots (in a); a missing or unreadable record: none. */
int sr_state_roots_read(struct sr_arena *a, const struct sr_userns_pool *pool, char ***out,
                        size_t *n);

/* Records root (canonicalised) unless it is there already. */
int sr_state_roots_record(const struct sr_userns_pool *pool, const char *root, sr_error_t *err);

#endif
