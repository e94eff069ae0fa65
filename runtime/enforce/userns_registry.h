/* The registry of the host id ranges that containers' user namespaces map onto: one global,
 * root-owned file (not under --root: containerd and Docker pass a different root per
 * namespace), locked against concurrent creates.  A range stays with its key (state root and
 * container id) across delete and create, so that a restarted container finds its own files
 * again; a released range is reused by others only after the policy's grace period, or after
 * `seerun gc`. */
#ifndef SEERUN_USERNS_REGISTRY_H
#define SEERUN_USERNS_REGISTRY_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "policy.h"

struct sr_userns_range {
  uint32_t host_start;
  uint32_t size;
  int64_t reclaimed_from; /* the pool was full: released then by another key; 0: no */
};

/* The key's range: its own again if it had one, else a free range of the pool disjoint from
 * /etc/subuid, /etc/subgid and the host's users' and groups' ids; when every range is held or
 * in its grace period, the one released longest ago (never one whose container exists). */
int sr_userns_registry_acquire(const struct sr_userns_pool *pool, const char *key,
                               struct sr_userns_range *out, sr_error_t *err);
/* The key's container is gone: its range waits for it during the grace period. */
int sr_userns_registry_release(const struct sr_userns_pool *pool, const char *key, sr_error_t *err);
/* Forgets released ranges whose grace has passed (all released ranges with all). */
int sr_userns_registry_gc(const struct sr_userns_pool *pool, bool all, size_t *freed,
                          sr_error_t *err);

/* The registry key of a container. */
char *sr_userns_registry_key(const char *root, const char *id);

#endif
