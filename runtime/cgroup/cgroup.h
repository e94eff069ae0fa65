/* Control groups: where a container's cgroup lives, creating it, placing processes in it,
 * applying linux.resources, freezing, signalling, statistics and removal.
 *
 * Both layouts are handled: cgroup v1 (one hierarchy per controller under a tmpfs, possibly
 * "hybrid" with a cgroup2 mount at <root>/unified) and the unified cgroup v2 hierarchy.
 * runc's behaviour is the reference, including its v1 -> v2 value conversions.
 */
#ifndef SEERUN_CGROUP_H
#define SEERUN_CGROUP_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h" /* struct sr_resources */
#include "error.h"

struct sr_cgroup {
  int version; /* 1: v1 controllers (possibly hybrid); 2: unified */
  bool hybrid; /* v1 with cgroup2 mounted at <root>/unified (used for hugetlb etc. only where a
                  controller lives only there, and for the unified process tracking) */
  char *root;  /* "/sys/fs/cgroup", or a scratch tree in tests */
  char *path;  /* "/a/b", below each hierarchy root; never ".." components */
  struct sr_cg_v1_list
      *v1; /* the v1 hierarchies, listed once per object (sr_cgroup_v1_hierarchies) */
};

/* Detects the layout under root by statfs: CGROUP2_SUPER_MAGIC at root -> 2; a tmpfs with v1
 * hierarchies -> 1 (+hybrid when root/unified is cgroup2). */
int sr_cgroup_layout(const char *root, int *version, bool *hybrid, sr_error_t *err);

/* The cgroup path a container gets: linux.cgroupsPath when set (absolute: as is; relative:
 * below the cgroup of the calling process, read from /proc/self/cgroup — the v2 "0::" line, or
 * on v1 the name=systemd or pids line), else "/<id>" as runc does.  The result is cleaned
 * ("//" and "." removed); ".." components and a path naming the root cgroup are refused with an
 * error naming linux.cgroupsPath.  systemd=true: linux.cgroupsPath is "slice:prefix:name" and
 * the result is the unit's path below its slice (cgroup_systemd.c makes the transient scope);
 * an error "systemd is not running" without /run/systemd/system. */
int sr_cgroup_resolve_path(const char *cgroups_path, const char *id, bool systemd, char **out,
                           sr_error_t *err);

/* Where the host's cgroup hierarchies are mounted. */
#define SR_CGROUP_ROOT "/sys/fs/cgroup"

/* Detects the layout of root and allocates; path is validated as sr_cgroup_resolve_path's
 * result is (absolute, no "..", not the root cgroup). */
int sr_cgroup_new(const char *root, const char *path, struct sr_cgroup **out, sr_error_t *err);

/* The layout of root (its version, and v1's hierarchies) scanned once, for a command that
 * opens many cgroups (list: a statfs of every hierarchy per container was most of its system
 * calls).  sr_cgroup_new_in is sr_cgroup_new without the scan. */
struct sr_cgroup_layout {
  int version;
  bool hybrid;
  char **names; /* v1: the hierarchies' directory names */
  size_t n;
};
int sr_cgroup_layout_scan(const char *root, struct sr_cgroup_layout *l, sr_error_t *err);
void sr_cgroup_layout_release(struct sr_cgroup_layout *l);
int sr_cgroup_new_in(const struct sr_cgroup_layout *l, const char *root, const char *path,
                     struct sr_cgroup **out, sr_error_t *err);
void sr_cgroup_free(struct sr_cgroup *cg);

/* mkdir -p in every hierarchy (v1: every mounted hierarchy, including name=systemd, and the
 * unified one when hybrid; cpuset: each level gets its parent's cpuset.cpus/cpuset.mems when
 * empty, as v1 requires before any task can join).  v2 (and the unified mount when hybrid):
 * each ancestor, the root included, gets "+<c>" in cgroup.subtree_control for every controller
 * of its cgroup.controllers (best effort, as runc: a controller that cannot be enabled makes the
 * resource that needs it fail later, naming the field); the container's own cgroup gets no
 * subtree_control, so that processes may live in it.  *created = true when the leaf directory
 * did not exist before in at least one hierarchy. */
int sr_cgroup_create(struct sr_cgroup *cg, bool *created, sr_error_t *err);

/* As sr_cgroup_create, but the container's own cgroup must be new in every hierarchy: one that
 * exists already fails with status EEXIST (naming it), leaving no leaf this call made.  A
 * cgroup seerun did not make may hold a host service's processes: it must never be joined,
 * given limits, frozen or killed as the container's. */
int sr_cgroup_create_new(struct sr_cgroup *cg, sr_error_t *err);

/* *exists: the container's own cgroup directory exists in some hierarchy. */
int sr_cgroup_exists(const struct sr_cgroup *cg, bool *exists, sr_error_t *err);

/* Writes pid to cgroup.procs in every hierarchy. */
int sr_cgroup_attach(struct sr_cgroup *cg, pid_t pid, sr_error_t *err);

/* v2 only: an O_PATH|O_DIRECTORY fd of the leaf for clone3(CLONE_INTO_CGROUP); v1 (hybrid
 * included): *fd = -1 and 0 is returned. */
int sr_cgroup_open_dir(struct sr_cgroup *cg, int *fd, sr_error_t *err);

/* Writes linux.resources.  update=false (create): every field that is set, and the device rules
 * always — the list is the whole truth, default deny, so the caller appends the spec's default
 * devices (null, zero, full, random, urandom, tty, ptmx) — r=NULL meaning "no resources".
 * update=true (the `update` command): only the fields that are set, device rules only when the
 * list is present.  A value the host cannot honour is an error naming the field; the
 * best-effort cases are runc's (v1 kernel memory without the kmem file, v2 kernel memory,
 * memory.swap.max "max"/"0" without swap accounting).  unified is v2 only, written last. */
int sr_cgroup_apply_resources(struct sr_cgroup *cg, const struct sr_resources *r, bool update,
                              sr_error_t *err);

/* The device rules of create: linux.resources.devices as the policy left it (r may be NULL),
 * then the default nodes every container has (null, zero, full, random, urandom, tty, console,
 * ptmx, pts), the last matching rule winning, as in runc and crun, then "m" alone (mknod) for
 * each node of linux.devices (`devices`), which the init creates: a node listed there exists,
 * but it is reachable only where resources.devices allows it (a config that denies all and
 * lists /dev/kmsg must not be able to write it).  *out is *r (zeroes when NULL) with that
 * list, allocated in a. */
int sr_cgroup_create_device_rules(const struct sr_resources *r, const struct sr_device *devices,
                                  size_t n_devices, struct sr_arena *a, struct sr_resources *out,
                                  sr_error_t *err);

/* All processes, recursively including child cgroups, in every hierarchy; sorted; no
 * duplicates.  A hierarchy where the cgroup does not exist contributes none. */
int sr_cgroup_pids(struct sr_cgroup *cg, pid_t **pids, size_t *n, sr_error_t *err);

/* Sends sig to every process.  SIGKILL: cgroup.kill when present (v2, or the unified mount when
 * hybrid), else freeze, kill every pid, thaw (so that forks cannot escape), looping until the
 * cgroup is empty (bounded: 5 s, then an error).  Other signals: freeze, signal, restore the
 * previous freezer state. */
int sr_cgroup_signal_all(struct sr_cgroup *cg, int sig, sr_error_t *err);

/* SIGKILLs everything, waits until no process is left (bounded, 5 s, then an error), then, with
 * remove_dirs, removes the leaf (and the cgroups created below it, deepest first) in every
 * hierarchy; ancestors are left alone.  A cgroup that does not exist is success (idempotent:
 * delete --force calls it on half-created containers). */
int sr_cgroup_destroy(struct sr_cgroup *cg, bool remove_dirs, sr_error_t *err);

/* v1: freezer.state FROZEN/THAWED, waiting until it settles; v2 (or hybrid without a v1
 * freezer): cgroup.freeze, waiting for "frozen 1"/"frozen 0" in cgroup.events.  Bounded (5 s):
 * a freeze that does not settle is undone and reported. */
int sr_cgroup_freeze(struct sr_cgroup *cg, bool frozen, sr_error_t *err);
/* v1: freezer.state FROZEN and frozen by itself (freezer.self_freezing), as runc; v2:
 * cgroup.freeze is 1.  A cgroup without a freezer file is not frozen. */
int sr_cgroup_is_frozen(struct sr_cgroup *cg, bool *frozen, sr_error_t *err);

struct sr_cgroup_stats { /* what runc's `events --stats` reports; fill what the layout offers */
  uint64_t cpu_usage_total, cpu_usage_user, cpu_usage_kernel; /* ns */
  uint64_t *cpu_percpu;
  size_t n_percpu;
  uint64_t cpu_throttling_periods, cpu_throttled_periods, cpu_throttled_time;
  uint64_t memory_usage, memory_max_usage, memory_limit, memory_failcnt, memory_cache;
  uint64_t swap_usage, swap_limit;
  uint64_t pids_current, pids_limit; /* limit 0 = max */
  /* memory.stat raw key/values */
  char **memory_stat_keys;
  uint64_t *memory_stat_values;
  size_t n_memory_stat;
  /* blkio io_service_bytes_recursive entries */
  struct sr_blkio_entry {
    uint64_t major, minor;
    char op[16];
    uint64_t value;
  } * blkio_bytes;
  size_t n_blkio_bytes;
  struct sr_hugetlb_stat {
    char page_size[16];
    uint64_t usage, max_usage, failcnt;
  } * hugetlb;
  size_t n_hugetlb;
  uint64_t oom_kill_count; /* v2 memory.events oom_kill; v1 memory.oom_control oom_kill */
};
/* Fills *st (which it clears first); a controller that is absent leaves its fields 0.  Limits
 * that are "max" read as UINT64_MAX (pids_limit: 0).  v2 swap is reported as runc does, as
 * memory+swap (usage and limit), to match v1's memsw. */
int sr_cgroup_stats(struct sr_cgroup *cg, struct sr_cgroup_stats *st, sr_error_t *err);
void sr_cgroup_stats_clear(struct sr_cgroup_stats *st);

/* Tests: a scratch tree that statfs cannot identify is given its layout. */
int sr_cgroup_new_with_layout(const char *root, const char *path, int version, bool hybrid,
                              struct sr_cgroup **out, sr_error_t *err);
/* sr_cgroup_resolve_path without systemd, given the text of /proc/self/cgroup. */
int sr_cgroup_resolve_path_in(const char *proc_self_cgroup, const char *cgroups_path,
                              const char *id, char **out, sr_error_t *err);

static inline void sr_cgroup_freep(struct sr_cgroup **cg)
{
  if (*cg)
    sr_cgroup_free(*cg);
}
#define _cleanup_cgroup_ __attribute__((cleanup(sr_cgroup_freep)))

/* ---- Shared by runtime/cgroup*.c only; not for other callers. ---- */

/* How long a freeze, a kill or a removal may take before it is an error. */
#define SR_CG_TIMEOUT_MS 5000

/* An open cgroup directory and its path, for messages. */
struct sr_cg_dir {
  int fd;
  char path[PATH_MAX];
};
/* Opens <root>[/<hier>]<path>; hier NULL or "" for the v2 root. */
int sr_cgroup_dir_open(struct sr_cg_dir *d, const char *root, const char *hier, const char *path,
                       sr_error_t *err);
void sr_cgroup_dir_close(struct sr_cg_dir *d);
#define _cleanup_cg_dir_ __attribute__((cleanup(sr_cgroup_dir_close)))

/* "cgroup: write `file` = value in dir: reason"; never creates the file. */
int sr_cgroup_write(const struct sr_cg_dir *d, const char *file, const char *value,
                    sr_error_t *err);
/* How a failed write of a config field's value reads: the write's error in *err, made into
 * one that names the field. */
typedef int (*sr_cgroup_explain_fn)(const struct sr_cg_dir *d, const char *file, const char *field,
                                sr_error_t *err);
/* The value fmt makes written to file: an error naming field when it cannot be made (ENOMEM)
 * or written (explained by explain, or "field: <the write's error>" when it is NULL). */
__attribute__((format(printf, 6, 7))) int sr_cgroup_putf(const struct sr_cg_dir *d, const char *file,
                                                     const char *field, sr_cgroup_explain_fn explain,
                                                     sr_error_t *err, const char *fmt, ...);
/* One open, one write(2) per line (files such as io.max parse one entry per write). */
int sr_cgroup_write_lines(const struct sr_cg_dir *d, const char *file, char *const *lines, size_t n,
                          sr_error_t *err);
int sr_cgroup_read(const struct sr_cg_dir *d, const char *file, char *buf, size_t size,
                   sr_error_t *err);
bool sr_cgroup_has(const struct sr_cg_dir *d, const char *file);
/* A single number ("max" reads as UINT64_MAX). */
int sr_cgroup_read_u64(const struct sr_cg_dir *d, const char *file, uint64_t *v, sr_error_t *err);
/* The value of `key` in a "key value" per line file; 0 when the key is absent. */
int sr_cgroup_read_keyed(const struct sr_cg_dir *d, const char *file, const char *key, uint64_t *v,
                         sr_error_t *err);
/* sr_cgroup_read_u64, but a missing file is a value the layout does not offer: *v is left alone. */
int sr_cgroup_read_u64_opt(const struct sr_cg_dir *d, const char *file, uint64_t *v,
                           sr_error_t *err);
/* A decimal number, or "max" as UINT64_MAX. */
bool sr_cgroup_parse_u64(const char *s, uint64_t *v);
/* Frees n lines built for sr_cgroup_write_lines, and the array. */
void sr_cgroup_free_lines(char **lines, size_t n);
/* Milliseconds of CLOCK_MONOTONIC, for bounded waits. */
int64_t sr_cgroup_now_ms(void);
void sr_cgroup_pause(void);

/* The v1 hierarchy directory names under root (symlinked aliases and "unified" excluded).
 * Listed on the first call and kept in the object (the host's mounts, which the operator sets
 * up: each scan was a readdir and two calls per entry, five times per `run`). */
struct sr_cg_v1_list {
  bool listed;
  char **names;
  size_t n;
};
void sr_cgroup_v1_list_free(struct sr_cg_v1_list *l);
/* l lists a copy of the n hierarchies of names (a layout scanned once): 0, or -1 (memory). */
int sr_cgroup_v1_list_copy(struct sr_cg_v1_list *l, char *const *names, size_t n);
int sr_cgroup_v1_hierarchies(const struct sr_cgroup *cg, char ***names, size_t *n, sr_error_t *err);
/* Opens the container's directory in the v1 hierarchy of controller: 1 found, 0 the
 * controller is not mounted, -1 error (including a missing container directory). */
int sr_cgroup_v1_controller(const struct sr_cgroup *cg, const char *controller, struct sr_cg_dir *d,
                            sr_error_t *err);
/* The container's directory in the unified hierarchy (v2, or <root>/unified when hybrid). */
int sr_cgroup_unified_open(const struct sr_cgroup *cg, struct sr_cg_dir *d, sr_error_t *err);
const char *sr_cgroup_unified_base(const struct sr_cgroup *cg, char *buf, size_t size);

/* Statistics helpers: memory.stat into st (raw keys), one memory.stat value, appending a blkio
 * or hugetlb entry (NULL/-1: out of memory), the page sizes of hugetlb.<size><suffix> files. */
int sr_cgroup_stats_memory_stat(const struct sr_cg_dir *d, struct sr_cgroup_stats *st,
                                sr_error_t *err);
uint64_t sr_cgroup_stats_lookup(const struct sr_cgroup_stats *st, const char *key);
int sr_cgroup_stats_add_blkio(struct sr_cgroup_stats *st, uint64_t major, uint64_t minor,
                              const char *op, uint64_t value);
struct sr_hugetlb_stat *sr_cgroup_v2_stats_add_hugetlb(struct sr_cgroup_stats *st,
                                                       const char *size);
/* A growing NULL-terminated list of names (the v1 hierarchies, the hugetlb sizes): the first
 * len bytes of name added at the end, *count counting it; -1 when out of memory. */
int sr_cgroup_names_add(char ***v, size_t *count, const char *name, size_t len);
/* The list in strcmp order. */
void sr_cgroup_names_sort(char **v, size_t count);
int sr_cgroup_v2_hugetlb_sizes(const struct sr_cg_dir *d, const char *suffix, char ***sizes,
                               size_t *n, sr_error_t *err);

/* exclusive: the leaf must be new in every hierarchy (EEXIST: the leaves this call made are
 * removed again). */
int sr_cgroup_v1_create(struct sr_cgroup *cg, bool exclusive, bool *created, sr_error_t *err);
/* rmdir of the leaf in every v1 hierarchy (an exclusive create undone). */
void sr_cgroup_v1_remove_leaves(const struct sr_cgroup *cg);
int sr_cgroup_v1_apply(struct sr_cgroup *cg, const struct sr_resources *r, bool update,
                       sr_error_t *err);
int sr_cgroup_v1_freeze(struct sr_cgroup *cg, bool frozen, sr_error_t *err);
int sr_cgroup_v1_is_frozen(struct sr_cgroup *cg, bool *frozen, sr_error_t *err);
int sr_cgroup_v1_stats(struct sr_cgroup *cg, struct sr_cgroup_stats *st, sr_error_t *err);

/* mkdir -p of path below base, enabling controllers in each ancestor. */
int sr_cgroup_v2_create(const char *base, const char *path, bool exclusive, bool *created,
                        sr_error_t *err);
int sr_cgroup_v2_apply(struct sr_cgroup *cg, const struct sr_resources *r, bool update,
                       sr_error_t *err);
/* hugetlb.<size>.max (and .rsvd.max when present) in d: v2, and the unified mount of hybrid. */
int sr_cgroup_v2_hugetlb(const struct sr_cg_dir *d, const struct sr_resources *r, sr_error_t *err);
int sr_cgroup_v2_freeze(const struct sr_cg_dir *d, bool frozen, sr_error_t *err);
int sr_cgroup_v2_is_frozen(const struct sr_cg_dir *d, bool *frozen, sr_error_t *err);
int sr_cgroup_v2_stats(struct sr_cgroup *cg, struct sr_cgroup_stats *st, sr_error_t *err);
/* hugetlb statistics of a v2 directory (also used for the unified mount of hybrid). */
int sr_cgroup_v2_hugetlb_stats(const struct sr_cg_dir *d, struct sr_cgroup_stats *st,
                               sr_error_t *err);

/* Loads the device rules as a BPF_PROG_TYPE_CGROUP_DEVICE program and attaches it to d
 * (BPF_F_ALLOW_MULTI), replacing the program seerun attached before, if any. */
int sr_cgroup_devices_bpf_apply(const struct sr_cg_dir *d, const struct sr_device_rule *rules,
                                size_t n, sr_error_t *err);

#endif
