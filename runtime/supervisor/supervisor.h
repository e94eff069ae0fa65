/* A container's supervisor: a small process per container that seerun starts outside the
 * container and its cgroup, which outlives `seerun create`, and serves what the container
 * needs from outside it for as long as its init lives: the egress proxy (egress_proxy.h),
 * whose decisions it writes to the audit log (egress_record.h), and the activity record
 * (activity.h): the built-in seccomp filter's denials, resource events, what is left at stop.
 *
 * It holds no descriptor of the engine's (conmon and containerd's shim wait for EOF on the
 * stdio they passed to create): its stdio is /dev/null and every other descriptor but the
 * init's pidfd and the proxy's sockets is closed.  It ends when the init has gone (a pidfd),
 * when it is stopped (delete, delete --force: sr_supervisor_stop with the pid and start time
 * recorded in the state), and takes the proxy with it (the proxy's parent-death signal). */
#ifndef SEERUN_SUPERVISOR_H
#define SEERUN_SUPERVISOR_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "activity_files.h"
#include "audit.h"
#include "error.h"
#include "policy_egress.h"

struct sr_supervisor_config {
  const struct sr_audit *audit;
  const char *profile;
  const struct sr_egress *egress;
  const struct sr_egress_host *narrow; /* io.seerun.egress.allow; NULL: none */
  size_t n_narrow;
  const struct sr_egress_host *extra; /* seerun sandbox --allow-host (the trusted caller's) */
  size_t n_extra;
  int init_pidfd; /* the container's init: its network namespace, and its end */
  /* The activity record (activity.h); all -1 / false without it.  egress NULL: no proxy. */
  bool activity;
  int activity_sock;   /* the init's hand-over socket (the supervisor's end) */
  int activity_listen; /* listening socket in the state directory, for exec's hand-overs */
  int state_dirfd;     /* the container's state directory (a descriptor of its own, not the
                          locked one): activity.json, and egress.json when it ends */
  int cg_memory_fd, cg_pids_fd;
  int exec_fd;        /* the proc connector, subscribed (activity.h); -1: programs not watched */
  int exec_map_fd;    /* the processes followed in the kernel (sr_activity_exec_bpf_track), or -1:
                         by the events and the pid namespace */
  uint64_t pidns;     /* the container's pid namespace (inode): whose exec events count */
  pid_t init_pid;     /* the init, on the host: its descendants are the container's */
  const char *seccomp_unseen; /* the built-in filter notifies nobody, and why (NULL: it does) */
  /* The writable places (activity_files.h), taken over by sr_supervisor_start (closed in the
   * caller when it returns); NULL: files not recorded, files_unseen says why (or NULL). */
  struct sr_act_places *places;
  const char *files_unseen;
  /* Run in the supervisor's process before anything else (its privileges still whole), while
   * the caller goes on: fills in what the supervisor opens itself (activity_listen, exec_fd,
   * exec_map_fd, pidns, places, files_unseen).  A failure ends it, and sr_supervisor_ready
   * returns the error.  NULL: nothing to do. */
  int (*prepare)(void *data, struct sr_supervisor_config *c, sr_error_t *err);
  void *prepare_data;
};

/* What the supervisor leaves in the state directory when it ends: the egress record
 * (egress_record.h's document), for `seerun sandbox`'s result. */
#define SR_SUPERVISOR_EGRESS_FILE "egress.json"

/* Creates the proxy's listening socket in the init's network namespace and starts the
 * supervisor; *pid and *start_time identify it for sr_supervisor_stop.  It is ready (its
 * baseline of the writable places taken) once sr_supervisor_ready on *ready_fd returns 0:
 * the caller does its own work meanwhile, and must wait for that before any of the
 * container's code runs. */
int sr_supervisor_start(const struct sr_supervisor_config *cfg, pid_t *pid, uint64_t *start_time,
                        int *ready_fd, sr_error_t *err);
/* Waits for the supervisor's ready byte and closes *ready_fd; a supervisor that died starting
 * is reaped and an error returned. */
int sr_supervisor_ready(pid_t pid, int *ready_fd, sr_error_t *err);

/* Stops the supervisor if pid is still the process that started at start_time: once the
 * container's init has gone it ends by itself after writing what it holds; it is given
 * SR_SUPERVISOR_STOP_MS for that, then killed.  state_dirfd: the container's state directory
 * when the supervisor keeps the activity record (else -1): then it returns as soon as the
 * record is written (activity.done), while the supervisor ends by itself. */
#define SR_SUPERVISOR_STOP_MS 2000
void sr_supervisor_stop(pid_t pid, uint64_t start_time, int state_dirfd);

/* The proxy's identity: the overflow ids, which own nothing on the host. */
#define SR_SUPERVISOR_PROXY_UID 65534
#define SR_SUPERVISOR_PROXY_GID 65534

#endif
