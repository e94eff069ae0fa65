/* Which namespaces a container creates and joins, and in what order.
 *
 * Fast path (most containers): one clone creates every new namespace and the child joins the
 * others by path.  Two-step path, needed when a user or pid namespace is joined, when a new
 * user namespace must own namespaces joined by path first, or when time offsets must be written
 * before any process enters the new time namespace: an intermediate child joins, unshares, and
 * forks the init with CLONE_PARENT, so the init is still the runtime's child. */
#ifndef SEERUN_NAMESPACES_H
#define SEERUN_NAMESPACES_H

#include <stdbool.h>

#include "config.h"
#include "error.h"

struct sr_ns_plan {
  int join_fd[SR_NS_COUNT]; /* -1: not joined */
  int clone_flags;          /* created by the first clone */
  int unshare_flags;        /* two-step: created by the intermediate after joining */
  bool two_step;
  bool new_userns;
  bool new_cgroupns; /* unshared by the init once it is in its cgroup */
  bool time_offsets;
};

/* Opens every namespace path (checking it is a namespace of the right type) and decides the
 * path taken.  Errors name linux.namespaces. */
int sr_ns_plan_make(const struct sr_linux *l, struct sr_ns_plan *plan, sr_error_t *err);
void sr_ns_plan_close(struct sr_ns_plan *plan);

/* setns into the joined namespaces: the user namespace alone (user_only), or all the others
 * (mount last, since it changes the root). */
int sr_ns_join(const struct sr_ns_plan *plan, bool user_only, sr_error_t *err);

/* Writes the time offsets of the time namespace the caller's children will enter. */
int sr_ns_write_time_offsets(const struct sr_linux *l, sr_error_t *err);

/* Writes uid_map and gid_map of pid (from the parent, as the kernel requires). */
int sr_userns_write_maps(pid_t pid, const struct sr_linux *l, sr_error_t *err);

#endif
