/* Per-process attributes of process and linux config sections that the container's init sets on
 * itself before it is reported "created": rlimits, oom_score_adj, scheduler, I/O priority,
 * personality; the execCPUAffinity of a process; and safe writes into a procfs. */
#ifndef SEERUN_PROCESS_ATTRS_H
#define SEERUN_PROCESS_ATTRS_H

#include "config.h"
#include "error.h"

/* Opens `rel` (relative, e.g. "sys/net/ipv4/ip_forward" or "self/attr/exec") under the procfs
 * root `proc_fd` with `flags` (O_RDONLY, O_WRONLY, ...; O_CLOEXEC is added) and returns the fd.
 * A leading "self/" or "thread-self/" is resolved through that procfs's own link, so it names the
 * caller as that procfs's pid namespace sees it.  The rest is resolved by openat2 with
 * RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV (no "..",
 * symlink or mount point on the way), and the file opened must be on procfs. */
int sr_process_attrs_open_proc(int proc_fd, const char *rel, int flags, sr_error_t *err);

/* sr_process_attrs_open_proc(O_WRONLY), then one write(2) of all of `value` (a short write is an
 * error, the file is not truncated first).  Error: "write \"1\" to /proc/sys/...: ...". */
int sr_process_attrs_write_proc(int proc_fd, const char *rel, const char *value, sr_error_t *err);

/* prlimit(self) for each of p->rlimits, in order. */
int sr_process_attrs_apply_rlimits(const struct sr_process *p, sr_error_t *err);

/* Writes p->oom_score_adj into /proc/INIT_PID/oom_score_adj, from the runtime (the parent of
 * create), through a procfs handle checked like sr_process_attrs_write_proc's. */
int sr_process_attrs_set_oom_score_adj(const struct sr_process *p, pid_t init_pid, sr_error_t *err);

/* sched_setattr(self) with p->scheduler; nothing when absent. */
int sr_process_attrs_apply_scheduler(const struct sr_process *p, sr_error_t *err);

/* ioprio_set(IOPRIO_WHO_PROCESS, self) with p->io_priority; nothing when absent. */
int sr_process_attrs_apply_io_priority(const struct sr_process *p, sr_error_t *err);

/* personality(l->personality) when the config sets linux.personality. */
int sr_process_attrs_apply_personality(const struct sr_linux *l, sr_error_t *err);

/* sched_setaffinity(self) to the CPU list `cpus` ("0-3,7": decimal CPU numbers and ascending
 * ranges, comma-separated, nothing else).  NULL or "" changes nothing.  `field` names the config
 * field in errors ("process.execCPUAffinity.final"). */
int sr_process_attrs_apply_cpu_affinity(const char *cpus, const char *field, sr_error_t *err);

/* What a container process (the init, or exec's) sets on itself before it execs, in this order:
 * rlimits, scheduler, I/O priority, personality (l: the init's; NULL leaves it),
 * execCPUAffinity.final, and the LSM labels for execve (lsm.h, through the procfs proc_fd).
 * oom_score_adj is not here: the parent writes it. */
int sr_process_attrs_apply(const struct sr_process *p, const struct sr_linux *l, int proc_fd,
                           sr_error_t *err);

#endif
