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
#include <sys/types.h>

#include "config.h"
#include "error.h"

struct sr_ns_plan {
  int join_fd[SR_NS_COUNT];      /* -1: not joined */
  const char *path[SR_NS_COUNT]; /* the config's path of each joined namespace */
  int clone_flags;               /* created by the first clone */
  int unshare_flags;             /* two-step: created by the intermediate after joining */
  bool two_step;
  bool new_userns;
  bool new_cgroupns; /* unshared by the init once it is in its cgroup */
  bool time_offsets;
};

/* Opens every namespace path (checking it is a namespace of the right type) and decides the
 * path taken.  Errors name linux.namespaces. */
/* Namespace files opened (and judged) before: fd[k] (-1: error[k] says why).  NULL: the
 * paths are opened here. */
struct sr_ns_opened {
  const int *fd;
  char *const *error;
};
int sr_ns_plan_make(const struct sr_linux *l, const struct sr_ns_opened *opened,
                    struct sr_ns_plan *plan, sr_error_t *err);

/* Opens a namespace file to join, checking it is a namespace of kind k (O_RDONLY, for setns).
 * Errors name linux.namespaces. */
int sr_ns_open(const char *path, enum sr_ns_kind k, int *out, sr_error_t *err);
void sr_ns_plan_close(struct sr_ns_plan *plan);

/* hostname and domainname are set in the container's uts namespace: refused when that is the
 * runtime's own, joined by path, where they would rename the host.  (linux.sysctl gets the same
 * check in sr_ns_plan_make.) */
int sr_ns_check_names(const struct sr_config *c, const struct sr_ns_plan *plan, sr_error_t *err);

/* setns into the joined namespaces, in two calls: user_only first (the user namespace, after
 * every other namespace that can be joined with the runtime's privileges), then the others not
 * joined yet (mount last, since it changes the root).  Errors name linux.namespaces and the
 * path. */
int sr_ns_join(const struct sr_ns_plan *plan, bool user_only, sr_error_t *err);

/* Writes the time offsets of the time namespace the caller's children will enter. */
int sr_ns_write_time_offsets(const struct sr_linux *l, sr_error_t *err);

/* Writes uid_map and gid_map of pid (from the parent, as the kernel requires). */
int sr_ns_userns_write_maps(pid_t pid, const struct sr_linux *l, sr_error_t *err);
/* A user namespace holding maps' uid and gid mappings, for idmapped mounts: a short-lived child
 * unshares it, we write the maps and keep a descriptor of it (*out). */
int sr_ns_userns_open_with_maps(const struct sr_linux *maps, int *out, sr_error_t *err);

/* Gives `name` (in dirfd) to the host ids that the user namespace of pid maps its root to, so
 * that the container's root can open it (exec.fifo); ids that are not mapped are left. */
int sr_ns_userns_chown_to_root(pid_t pid, int dirfd, const char *name, sr_error_t *err);

#endif
