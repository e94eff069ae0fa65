/* The activity record of a container (issue 16): what its code tried, kept by the container's
 * supervisor (supervisor.h) and written to the audit log as one "activity" event when the
 * container stops (docs/audit.md).
 *
 *  - Denied system calls: the built-in seccomp filter answers its denied set with
 *    SECCOMP_RET_USER_NOTIF instead of ERRNO(EPERM) (sr_seccomp_default_install_notify); the
 *    container's processes hand the listener to the supervisor right after loading the filter
 *    (at start and at every exec), and the supervisor replies EPERM, as the plain filter does,
 *    after counting the call by name and executable.  Allowed calls never reach it.
 *  - Resource events: OOM kills and pids-limit hits, from the cgroup (v2 memory.events and
 *    pids.events; v1 memory.oom_control and pids.events).
 *  - Processes still in the cgroup when the init has gone.
 *  - Files changed in the container's writable places (activity_files.h), walked when it
 *    stops.
 *
 * Bounded: counts are exact, details are capped (SR_ACT_* below; the rendered record stays
 * under SR_ACT_MAX_BYTES).  Every SR_ACT_FLUSH_MS while something changed, the record is
 * written to the container's state directory (activity.json); after the audit line is written
 * the supervisor adds activity.done.  A supervisor that was killed leaves activity.json without
 * activity.done: delete writes the "activity" event from it, marked incomplete
 * (sr_activity_settle). */
#ifndef SEERUN_ACTIVITY_H
#define SEERUN_ACTIVITY_H

#include <linux/seccomp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "activity_files.h"
#include "audit.h"
#include "error.h"
#include "json.h"

/* Distinct (arch, syscall) counted: more than the built-in filter denies through both of its
 * ABIs (158 with libseccomp 2.5), so that every denied call is named (a call past the bound is
 * only summed, and could hide behind the ordinary ones). */
#define SR_ACT_SYSCALLS 512
#define SR_ACT_ENTRIES 64    /* distinct (syscall, executable) detailed */
#define SR_ACT_SAMPLES 4     /* first occurrences kept per entry, with their arguments */
#define SR_ACT_PROCS 16      /* processes listed at stop, and at kill */
#define SR_ACT_EXE_MAX 256   /* bytes of an executable's path or a command line kept */
#define SR_ACT_LISTENERS 64  /* seccomp listeners served at once (start + concurrent execs) */
#define SR_ACT_FLUSH_MS 2000
#define SR_ACT_MAX_BYTES (256 * 1024)

struct sr_act_sample {
  pid_t pid;
  uint64_t args[6];
};

struct sr_act_entry {
  uint32_t arch;
  int nr;
  uint64_t count;
  char exe[SR_ACT_EXE_MAX];
  struct sr_act_sample sample[SR_ACT_SAMPLES];
  size_t n_sample;
};

struct sr_act_syscall {
  uint32_t arch;
  int nr;
  uint64_t count;
};

struct sr_act_proc {
  pid_t pid;
  char exe[SR_ACT_EXE_MAX];
  char cmdline[SR_ACT_EXE_MAX];
};

#define SR_ACT_EXECS 64    /* programs listed (all are counted) */
#define SR_ACT_KNOWN 8192  /* the container's processes tracked (a power of two) */

struct sr_act_exec {
  pid_t pid, ppid;
  char time[40];
  char exe[SR_ACT_EXE_MAX];
  char argv[SR_ACT_EXE_MAX];
};

struct sr_act_procset {
  bool taken;
  char at[16]; /* "kill", "delete" */
  uint64_t total;
  struct sr_act_proc procs[SR_ACT_PROCS];
  size_t n;
};

struct sr_activity {
  char started[64], stopped[64];
  /* seccomp */
  bool seccomp_visible;        /* the built-in filter notifies this supervisor */
  const char *seccomp_unseen;  /* why not, when !seccomp_visible */
  uint64_t listeners;          /* handed over (start, execs) */
  uint64_t listeners_refused;  /* over SR_ACT_LISTENERS: those processes' denials are unseen */
  uint64_t denied;
  uint64_t not_read; /* denied calls taken back before they were read (sr_act_listener_seq) */
  struct sr_act_syscall sys[SR_ACT_SYSCALLS];
  size_t n_sys;
  uint64_t denied_other_syscalls; /* denials of syscalls past SR_ACT_SYSCALLS */
  struct sr_act_entry ent[SR_ACT_ENTRIES];
  size_t n_ent;
  uint64_t denied_other_entries; /* denials past SR_ACT_ENTRIES (counted in sys still) */
  /* resources (cumulative counters, as the cgroup reports them) */
  bool have_oom, have_pids;
  uint64_t oom_kills, pids_max_hits;
  /* processes left when the init had gone, and those running when seerun was asked to stop
   * the container (kill, delete --force: sr_activity_request_snapshot) */
  struct sr_act_procset at_stop, at_kill;
  /* programs executed (the proc connector's exec events, for the container's pid namespace) */
  bool execs_watched;
  uint64_t execs, execs_gone; /* gone: ended before it could be read */
  bool execs_lost;            /* the kernel dropped events (a full socket buffer) */
  uint64_t execs_unfollowed;  /* `seerun exec`s that gave up waiting for the map: what they
                                 started is not followed */
  bool execs_in_kernel;       /* followed by the kernel (activity_exec_bpf.c): every exec
                                 event that arrives is the container's */
  int exec_map;               /* that map (-1: none), which says whether a program read from
                                 /proc is still the one its exec event is of */
  struct sr_act_exec exec[SR_ACT_EXECS];
  size_t n_exec;
  /* The container's processes by host tgid, from the fork and exit events (0: free slot, -1: a
   * removed one), so that an exec is attributed even when its process has already ended. */
  pid_t known[SR_ACT_KNOWN];
  size_t known_used; /* live and removed slots */
  /* files changed (NULL: not recorded; files_unseen says why, if it is known) */
  struct sr_act_files *files;
  const char *files_unseen;
  bool dirty;
};

/* Where the supervisor reads the cgroup's files: open directories (-1: none).  v1: the memory
 * and pids hierarchies' directories; v2: the same directory twice. */
struct sr_act_cgroup {
  int memory_fd, pids_fd;
};

/* What is kept of one listener between notifications: the id of the last one read.  The kernel
 * numbers a filter's notifications one after the other (from a random start): an id skipped is
 * one taken back before it was read, its caller interrupted by a signal or killed. */
struct sr_act_listener_seq {
  uint64_t last;
  bool have;
};

/* One notification from a listener: counts it (and the ones skipped since seq's last, in
 * seccomp.notRead), replies EPERM.  0, or -1 when the listener is done (every process that used
 * the filter has gone). */
int sr_activity_serve(struct sr_activity *a, int listener, struct sr_act_listener_seq *seq,
                      struct seccomp_notif *req, size_t reqsz, struct seccomp_notif_resp *resp,
                      size_t respsz);
/* The sizes the kernel wants for the two structs (SECCOMP_GET_NOTIF_SIZES). */
int sr_activity_notif_sizes(size_t *req, size_t *resp);

void sr_activity_read_cgroup(struct sr_activity *a, const struct sr_act_cgroup *cg);
void sr_activity_snapshot_procs(struct sr_activity *a, struct sr_act_procset *set,
                                const struct sr_act_cgroup *cg);
/* kill, delete --force: asks the supervisor (through activity.sock in the container's state
 * directory) to list the cgroup's processes before they are signalled, and waits for it a
 * moment (SR_ACT_SNAPSHOT_MS).  Nothing happens without a supervisor. */
#define SR_ACT_SNAPSHOT_MS 1000
void sr_activity_request_snapshot(int state_dirfd, const char *at);

/* delete: asks the supervisor to say when its record is written: a connection that it closes
 * after activity.done is made (or when it ends, whatever else happened), or -1 when there is
 * no one to ask (then only its end can be waited for). */
int sr_activity_wait_request(int state_dirfd);

/* Bytes outside printable ASCII become '?' (what is kept of the container's names). */
void sr_activity_printable(char *s);
/* A process's executable and command line (its arguments joined by spaces, the characters of
 * TRIM taken off its end), each "" when gone, made printable, read through its /proc/PID
 * directory (sr_proc_open: both of the one process).  Whether the executable was read (not:
 * the process had gone). */
bool sr_activity_read_process(int procfd, char *exe, size_t exe_size, char *cmdline,
                              size_t cmdline_size, const char *trim);
/* Writes activity.json in the state directory (atomically). */
int sr_activity_flush(struct sr_activity *a, int state_dirfd);
/* The audit event (complete) and activity.done. */
void sr_activity_finish(struct sr_activity *a, const struct sr_audit *audit, int state_dirfd);

/* At delete: if the state directory holds a record its supervisor never finished (killed),
 * writes it as an incomplete "activity" event and marks it done.  Nothing otherwise. */
int sr_activity_settle(const struct sr_audit *audit, int state_dirfd, sr_error_t *err);

/* Receives a message on a hand-over socket: a seccomp listener (SCM_RIGHTS, returned), or a
 * request without one ("Skill": a snapshot; -1 returned, *msg the text, "" at EOF). */
int sr_activity_recv_listener(int sock, char *msg, size_t size);
/* The container side: hands the listener over (no SIGPIPE).  0 or -1 with errno. */
int sr_activity_send_listener(int sock, int listener);

/* The proc connector's socket, subscribed to exec events (needs CAP_NET_ADMIN: made by the
 * supervisor as it prepares, before it drops that capability), with the container's
 * processes followed in the kernel from the init on where eBPF can (sr_activity_exec_bpf_track:
 * *map the map), else *map -1 (then sr_activity_exec_filter, once ready). */
int sr_activity_exec_socket(int *fd, pid_t init, uint64_t pids_max, int *map, sr_error_t *err);
/* Drops in the kernel the events the record has no use for (threads', and every kind but
 * fork, exec and exit): attached by the supervisor once it is ready (the filter's JIT costs
 * more than the events it drops while create finishes).  0 or -1 with errno. */
int sr_activity_exec_filter(int fd);
/* The container's processes followed in the kernel instead (activity_exec_bpf.c): an eBPF
 * filter on the socket keeps a map of them, seeded with `init`, and lets only their execs
 * through (and a fork it could not follow: the map was full; it holds pids_max, the
 * container's pids limit (0: none), and the execs under way).  Attached before the socket
 * is subscribed and before any of the container's code runs.  *map: the map (owned by the
 * caller), for sr_activity_exec_bpf_follow.  0, or -1 with errno (no eBPF here: the caller
 * keeps sr_activity_exec_filter). */
int sr_activity_exec_bpf_track(int sock, pid_t init, uint64_t pids_max, int *map);
/* The value of a followed process in that map: its live tasks, and the time
 * (CLOCK_MONOTONIC ns, the exec event's own timestamp_ns) of its latest exec, 0 before one. */
struct sr_act_followed {
  uint32_t tasks;
  uint32_t pad;
  uint64_t exec_ns;
};
/* pid's latest exec, as the map has it: 0, or -1 with errno (ENOENT: not followed, gone; or
 * the kernel lets only a privileged process read a map). */
int sr_activity_exec_bpf_exec_time(int map, pid_t pid, uint64_t *ns);
/* Follows pid (and so the processes it forks from now on) in that map: `seerun exec` asks
 * for its own process before it forks the one that joins the container.  0 or -1. */
int sr_activity_exec_bpf_follow(int map, pid_t pid);
/* Over activity.sock: asks for the map (the supervisor answers with it, or with nothing when
 * it follows processes by their pid namespace) and follows the caller in it.  0 (followed,
 * or nothing to do); SR_ACT_NOT_ANSWERED (no answer within SR_ACT_SNAPSHOT_MS: the caller goes
 * on unfollowed, and the supervisor, answering a closed connection later, counts it in
 * programs.unfollowedExecs); -1 (the connection failed or was closed: a supervisor of an
 * older seerun, which follows by pid namespace). */
#define SR_ACT_NOT_ANSWERED 1
int sr_activity_follow_me(int sock);
/* Reads the pending events; those of processes in the pid namespace `pidns` (its inode) are
 * recorded (every exec, when followed in the kernel). */
void sr_activity_exec_drain(struct sr_activity *a, int fd, uint64_t pidns);
/* The init: the first of the container's processes. */
void sr_activity_exec_seed(struct sr_activity *a, pid_t init);

#define SR_ACT_SOCKET "activity.sock"
#define SR_ACT_FILE "activity.json"
#define SR_ACT_DONE "activity.done"

#endif
