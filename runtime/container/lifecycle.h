/* What start, kill and delete do to a container that exists on disk, and how its status is
 * told: from the record, the liveness of its init (pid and start time, so a reused pid is not
 * mistaken for it), the exec fifo (present until start) and the freezer. */
#ifndef SEERUN_LIFECYCLE_H
#define SEERUN_LIFECYCLE_H

#include <stdbool.h>

#include "cgroup.h"
#include "config.h"
#include "error.h"
#include "hooks.h"
#include "statedir.h"

enum sr_status {
  SR_STATUS_CREATING,
  SR_STATUS_CREATED,
  SR_STATUS_RUNNING,
  SR_STATUS_PAUSED,
  SR_STATUS_STOPPED
};

const char *sr_container_status_name(enum sr_status s);
enum sr_status sr_container_status(const struct sr_container *c);
/* Both at once, with one look at the init's /proc entry. */
enum sr_status sr_container_observe(const struct sr_container *c, pid_t *live_pid);
/* What observing a container asks of the host and not of it: the cgroup layout and the
 * runtime's own user namespace, looked at once by a caller that observes many (list). */
struct sr_container_host {
  struct sr_cgroup_layout layout;
  bool have_layout;
  ino_t userns_ino;
  bool have_userns;
};
void sr_container_host_scan(struct sr_container_host *h);
void sr_container_host_release(struct sr_container_host *h);
/* sr_container_observe with those (NULL: looked at here). */
enum sr_status sr_container_observe_in(const struct sr_container *c,
                                       const struct sr_container_host *host, pid_t *live_pid);
/* The container's cgroup; *cg is NULL for a container that has none. */
int sr_container_open_cgroup(const struct sr_container *c, struct sr_cgroup **cg, sr_error_t *err);
/* Is pid in the runtime's own user namespace? (false when that cannot be seen) */
bool sr_container_pid_userns_is_ours(pid_t pid);
/* The init's pid while it lives, else 0 (what `state` reports).  A pid is the container's
 * only while it is alive with the recorded start time, in a user namespace of its own when
 * create saw it in one, and in the container's cgroup. */
pid_t sr_container_live_pid(const struct sr_container *c);

/* The hex sha256 of a config.json's text, as the record keeps it (configDigest). */
void sr_container_config_digest_hex(const char *text, size_t len, char hex[65]);
/* The config the container was created from (kept in its state directory), refused unless its
 * digest is the one the index recorded at create. */
int sr_container_load_config(const struct sr_container *c, struct sr_config **out,
                             sr_error_t *err);

/* start: releases a created container's init and waits until it has exec'd the process (or
 * failed to); then runs the poststart hooks, each judged through gate (hooks.h). */
int sr_container_start(struct sr_container *c, const struct sr_config *config,
                       const struct sr_hook_gate *gate, sr_error_t *err);

int sr_container_kill(struct sr_container *c, int sig, bool all, sr_error_t *err);

/* delete: a stopped container, or with force any container (its processes are killed).
 * Removes the cgroup seerun made and the state, then runs the poststop hooks of the config
 * copy, each judged again through gate (hooks.h; NULL: none runs): what the state directory
 * says never widens what the policy allows.  A damaged container (from sr_container_recover)
 * only with force. */
int sr_container_delete(struct sr_container *c, bool force, const struct sr_hook_gate *gate,
                        sr_error_t *err);

/* For `delete --force` when sr_statedir_load failed on the container's own record: opens the
 * state root and loads the container whatever its state.json holds (statedir.h), the record
 * taken from its index, else (no index: unverified) from recovery.json with no process or
 * cgroup to act on, else empty (only the directory is removed).  The container owns the root's
 * descriptor (sr_stored_close). ENOENT: no such container. */
int sr_container_recover(const char *root, const char *id, struct sr_container **out,
                         sr_error_t *err);

/* The OCI state document of a container on disk. */
int sr_container_state_json(const struct sr_container *c, bool pretty, char **out,
                            sr_error_t *err);

#endif
