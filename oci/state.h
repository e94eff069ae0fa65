/* The on-disk record of a container (seerun's own, versioned) and the OCI state document that
 * `state`, `list --format json` and hooks see. */
#ifndef SEERUN_STATE_H
#define SEERUN_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "arena.h"
#include "error.h"

#define SR_STATE_VERSION 1
#define SR_OCI_VERSION "1.3.0"

/* The most state.json may hold, on both sides: seerun never writes a record larger than it
 * reads back (a record it cannot read would leave a container only delete --force reaches).
 * create admits a record of at most half of it, so that the later writes (pids, phase,
 * decided capabilities: small, bounded fields) always fit. */
#define SR_STATE_MAX_SIZE (1u << 20)
#define SR_STATE_MAX_CREATE_SIZE (SR_STATE_MAX_SIZE / 2)

/* How far create got.  "creating" is written before anything is created, so that a runtime
 * killed at any moment leaves enough behind for `delete --force`. */
enum sr_phase { SR_PHASE_CREATING, SR_PHASE_CREATED };

struct sr_state_record {
  struct sr_arena arena;
  int version;
  char *id;
  char *bundle;
  char *rootfs;
  char *created; /* RFC 3339 */
  char *owner;
  enum sr_phase phase;
  pid_t creator_pid; /* the create (or run) process, while phase is creating */
  uint64_t creator_start;
  pid_t pid; /* the container's init, 0 until it exists */
  uint64_t pid_start;
  bool own_userns; /* the init is in a user namespace that is not the runtime's (seen at create) */
  char *config_digest; /* sha256 of the config.json copy, hex; NULL: not recorded */
  int cgroup_version; /* 0: no cgroup (yet) */
  char *cgroup_path;  /* below the hierarchy root, starts with "/" */
  bool cgroup_created; /* seerun made the directory (and so removes it) */
  bool systemd_cgroup;
  char **annotation_keys, **annotation_values;
  size_t n_annotations;
  /* What the policy decided at create, for exec and update to be judged against. */
  char *profile;            /* NULL: created before policies existed */
  bool network_granted;     /* may see more than loopback */
  bool builtin_seccomp;     /* the built-in filter is installed */
  int landlock_abi;         /* the processes are confined by Landlock of this ABI; 0: not.
                               For `state` and the audit only: exec decides again. */
  bool has_decided_caps;
  uint64_t decided_caps[5]; /* the container process's capability sets, as applied */
  /* Egress through seerun's proxy (decided.egressProxy), and the container's supervisor that
   * serves it (runtime/supervisor): written before the supervisor starts being needed, so
   * that delete and delete --force stop it. */
  bool egress_proxy;
  pid_t supervisor_pid; /* 0: none */
  uint64_t supervisor_start;
  bool supervisor_activity; /* it keeps the activity record: exec hands it its listener */
  /* linux.seccomp.listenerPath's socket as the policy judged it at create (0, 0: none): exec
   * connects only to that inode, never to whatever the name leads to by then. */
  uint64_t listener_dev, listener_ino;
};

int sr_state_record_parse(const char *buf, size_t len, struct sr_state_record **out,
                          sr_error_t *err);
int sr_state_record_serialize(const struct sr_state_record *r, char **out, size_t *len,
                              sr_error_t *err);
struct sr_state_record *sr_state_record_new(void);
void sr_state_record_free(struct sr_state_record *r);
static inline void sr_state_record_freep(struct sr_state_record **r)
{
  if (*r)
    sr_state_record_free(*r);
}
#define _cleanup_record_ __attribute__((cleanup(sr_state_record_freep)))

/* The OCI state (runtime.md "State"), with runc's extra rootfs, created and owner. */
struct sr_oci_state {
  const char *id;
  const char *status;
  pid_t pid;
  const char *bundle;
  const char *rootfs;
  const char *created;
  const char *owner;
  char **annotation_keys, **annotation_values;
  size_t n_annotations;
};

int sr_state_json(const struct sr_oci_state *s, bool pretty, char **out, size_t *len,
                  sr_error_t *err);

/* The container process state a seccomp agent receives at listenerPath (runtime.md,
 * "containerProcessState"): {"ociVersion", "fds": ["seccompFd"], "pid" (the process that
 * loaded the filter, as the runtime sees it), "metadata", "state": the state of s}.  For the
 * init and for every exec alike: an agent looks for "fds" in each message. */
int sr_state_process_json(const struct sr_oci_state *s, pid_t pid, const char *metadata, char **out,
                          sr_error_t *err);

#endif
