/* seerun sandbox: a container seerun builds itself around one command, runs under the
 * operator's policy, and removes afterwards.  The pieces, one file each:
 *
 * - sandbox_slot.c: the runtime's private mount namespace, the workspace (bundle) under
 *   the state root that reserves the container id, and the cleanup of what a killed sandbox
 *   left behind.
 * - sandbox_rootfs.c: the built-in root filesystem, a small tmpfs with a generated /etc.
 * - sandbox_config.c: the generated config.json text (parsed, then policed like any other).
 * - sandbox_supervise.c: the wait, with the wall-clock limit and the signals forwarded.
 * - sandbox_collect.c: /out, a tmpfs the runtime holds by descriptor, copied out safely.
 * - sandbox_result.c: the result document (--json) and its audit event.
 * - sandbox_run.c: the steps, in order, and the undoing of them on a failure.
 *
 * The container goes through the same path as `run` (policy, audit, create, start, delete), so
 * everything the policy enforces on any container holds for a sandbox too. */
#ifndef SEERUN_SANDBOX_H
#define SEERUN_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <limits.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "audit.h"
#include "container.h"
#include "error.h"
#include "invocation.h"
#include "policy_run.h"

/* The sandbox's own user inside its user namespace (uid and gid); never root in there
 * either, so it holds no capability at all. */
#define SR_SANDBOX_UID 1000
#define SR_SANDBOX_HOSTNAME "sandbox"
/* Where the command writes what it wants collected. */
#define SR_SANDBOX_OUT "/out"
/* /out is as large as the byte bound, and never smaller than this. */
#define SR_SANDBOX_OUT_MIN_SIZE (1ull << 20)
/* What seerun sandbox exits with when it fails itself (no status of the command), as docker
 * run does. */
#define SR_SANDBOX_EXIT_RUNTIME 125

struct sr_sandbox_bind {
  char *source; /* absolute, resolved on the host */
  char *dest;   /* absolute, lexically clean */
  bool is_dir;
};

struct sr_sandbox_opts {
  const char *name;       /* --name: the container id; NULL: the first free sandbox-<n> */
  const char *rootfs_dir; /* --rootfs (absolute); NULL: the built-in root filesystem */
  struct sr_sandbox_bind *ro;
  size_t n_ro;
  const char *workdir;
  char **env; /* KEY=VALUE, after the defaults */
  size_t n_env;
  char **argv; /* the command */
  size_t argc;
  const char *out_dir; /* --out HOSTDIR */
  uint64_t out_max_bytes, out_max_files;
  uint64_t memory;       /* bytes; 0: the profile's default */
  int64_t pids;          /* 0: the profile's default */
  uint64_t cpu_quota_us; /* per SR_SANDBOX_CPU_PERIOD_US; 0: no limit */
  uint64_t timeout_ms;   /* 0: none */
  const char *tmp_size;  /* --tmp-size, as given (the annotation io.seerun.tmp-size) */
  bool network;          /* --network: the host's network, where the profile allows it */
  bool own_tmp;          /* the profile mounts no /tmp: the sandbox mounts its own */
  uint64_t own_tmp_size;
};

#define SR_SANDBOX_CPU_PERIOD_US 100000

/* ---- sandbox_slot.c ---- */

struct sr_sandbox_ws {
  int rootfd;        /* the state root */
  char *real_root;   /* its real path */
  char id[256];      /* the container id */
  char *reservation; /* ".sandbox.<id>", in the state root; NULL once removed */
  char *bundle;      /* <real_root>/.sandbox.<id>/<pid>-<start>: also names the supervisor */
  char *tmp_name;    /* ".sandbox-new.<pid>-<start>" while not yet reserved */
};

/* The runtime's mounts (the root filesystem and /out it prepares) are made in a mount
 * namespace of its own, a slave of the host's: the host never sees them, and they vanish with
 * the runtime however it ends. */
int sr_sandbox_private_mounts(sr_error_t *err);

/* Removes what sandboxes whose runtime is gone left in this state root: their containers
 * (as delete --force does) and workspaces.  Best effort: failures are warnings. */
void sr_sandbox_reap_stale(const struct sr_invocation *g, int rootfd, const char *real_root);

/* Reserves the container id (name, or the first free sandbox-<n>) and makes the workspace:
 * the bundle directory with the mount points rootfs/ and out/. */
int sr_sandbox_reserve(const struct sr_invocation *g, struct sr_sandbox_ws *ws, const char *name,
                       sr_error_t *err);
/* Once the container exists (its state directory holds the id now): the mounts of the
 * workspace are detached and the workspace removed.  Idempotent. */
void sr_sandbox_ws_remove(struct sr_sandbox_ws *ws);
void sr_sandbox_ws_release(struct sr_sandbox_ws *ws);

/* Whether a container's bundle is a sandbox workspace of this state root whose runtime is
 * gone. */
bool sr_sandbox_bundle_orphaned(const char *real_root, const char *bundle);

/* ---- sandbox_rootfs.c ---- */

/* Host directories the built-in root filesystem binds read-only (/usr; /bin, /lib ... where
 * they are directories rather than links into /usr; /etc/alternatives). */
struct sr_sandbox_sysdirs {
  char *paths[16];
  size_t n;
};

/* Builds the built-in root filesystem (a tmpfs) and attaches it at target: mount points,
 * the host's top-level links into /usr, a generated /etc (passwd, group, hosts, hostname,
 * resolv.conf, nsswitch.conf), the mount points of the --ro binds and the working directory. */
int sr_sandbox_rootfs_build(const struct sr_sandbox_opts *o, const char *target,
                            struct sr_sandbox_sysdirs *sys, sr_error_t *err);
void sr_sandbox_sysdirs_free(struct sr_sandbox_sysdirs *sys);

/* ---- sandbox_config.c ---- */

struct sr_sandbox_config_in {
  const struct sr_sandbox_opts *o;
  const char *id;
  const char *rootfs;     /* absolute */
  const char *out_source; /* the bind source of /out (--out), NULL: a plain tmpfs */
  const char *cgroup_path;
  const struct sr_sandbox_sysdirs *sys; /* NULL with --rootfs */
};

/* The config.json text of the sandbox (NUL-terminated, malloc'd). */
int sr_sandbox_config_text(const struct sr_sandbox_config_in *in, char **out, size_t *len,
                           sr_error_t *err);

/* ---- sandbox_supervise.c ---- */

struct sr_sandbox_wait {
  int status;       /* wait status of the command (the container's init) */
  bool timed_out;   /* killed at --timeout */
  bool interrupted; /* killed after a second SIGINT/SIGTERM/SIGHUP to the runtime */
  int64_t wall_ns;
  struct rusage ru; /* of the init and the descendants it reaped */
};

/* Blocks the signals the runtime forwards (before the container exists, so none is lost). */
int sr_sandbox_block_signals(sr_error_t *err);

/* Waits for the init (pidfd), forwarding SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1/2 to it;
 * a second SIGINT, SIGTERM or SIGHUP, or the deadline, kills every process of the cgroup. */
int sr_sandbox_supervise(pid_t pid, int pidfd, const char *cgroup_path, uint64_t timeout_ms,
                         int64_t started_ns, struct sr_sandbox_wait *w, sr_error_t *err);

/* What the cgroup tells once the init has been reaped (every process of the sandbox's pid
 * namespace, hence of its cgroup, is gone by then). */
struct sr_sandbox_usage {
  bool valid;      /* the memory controller answered (OOM kills are known) */
  bool peak_known; /* v1 max_usage_in_bytes, v2 memory.peak */
  uint64_t cpu_ns, cpu_user_ns, cpu_system_ns;
  uint64_t peak_memory;
  uint64_t oom_kills;
};
int sr_sandbox_cgroup_usage(const char *cgroup_path, struct sr_sandbox_usage *u, sr_error_t *err);

int64_t sr_sandbox_now_ns(void);

/* ---- sandbox_collect.c ---- */

/* The /out tmpfs: made by the runtime (so the container cannot remount it), its root owned
 * by the sandbox user's host id, attached at target for the container's bind.  *fd is the
 * runtime's descriptor of it, valid after the container is gone. */
int sr_sandbox_out_create(uint64_t size, uid_t owner, gid_t group, const char *target, int *fd,
                          sr_error_t *err);

enum sr_collect_kind { SR_COLLECT_FILE, SR_COLLECT_DIR, SR_COLLECT_OTHER };

struct sr_collect_entry {
  char *path;       /* relative to /out, printable (bytes that are not UTF-8 escaped as \xNN) */
  const char *type; /* "file", "directory", "symlink", "fifo", "socket", "device", "hardlink" */
  uint64_t size;
  const char *reason; /* refused entries */
};

struct sr_collect_result {
  struct sr_collect_entry *collected;
  size_t n_collected, cap_collected;
  struct sr_collect_entry *refused;
  size_t n_refused, cap_refused;
  size_t refused_not_listed; /* beyond SR_COLLECT_MAX_LISTED */
  uint64_t files, dirs, bytes;
  bool complete; /* no bound (bytes, files, depth) left anything out; refusals aside */
};

#define SR_COLLECT_MAX_LISTED 1000
#define SR_COLLECT_MAX_DEPTH 64

/* Copies the tree under src (the /out tmpfs) into dst (HOSTDIR): regular files with one link
 * and directories only, at most max_files entries and max_bytes bytes, nothing resolved
 * through a symlink or out of either tree.  Refusals are listed, not errors; an error is a
 * failure to write into dst. */
int sr_sandbox_collect(int src, int dst, uint64_t max_bytes, uint64_t max_files,
                       struct sr_collect_result *res, sr_error_t *err);
void sr_collect_result_free(struct sr_collect_result *res);

/* ---- sandbox_result.c ---- */

struct sr_sandbox_result {
  const char *id;
  const char *profile;
  char *const *argv;
  size_t argc;
  bool ran;      /* the command started */
  int status;    /* wait status */
  int exit_code; /* what seerun exits with */
  bool timed_out, interrupted;
  uint64_t timeout_ms;
  int64_t wall_ns;
  struct rusage ru;
  struct sr_sandbox_usage usage;
  int64_t memory_limit, pids_limit; /* as applied; -1: none */
  uint64_t cpu_quota_us;
  const char *out_dir;
  const struct sr_collect_result *out; /* NULL without --out (or when not collected) */
  const char *decisions_json;          /* the policy's decisions, a JSON array text */
  const char *error;                   /* NULL: none */
};

/* The result document, one line of JSON. */
int sr_sandbox_result_json(const struct sr_sandbox_result *r, char **out, size_t *len,
                           sr_error_t *err);
/* The same facts in the audit log (event "sandbox-result"). */
int sr_sandbox_result_audit(const struct sr_audit *a, const struct sr_sandbox_result *r,
                            sr_error_t *err);

/* ---- sandbox_run.c ---- */

struct sr_sandbox {
  struct sr_invocation g; /* the caller's, with the sandbox's profile */
  struct sr_sandbox_opts *o;
  struct sr_policy_ctx pc;
  struct sr_sandbox_ws ws;
  struct sr_sandbox_sysdirs sys;
  struct sr_create_opts co;
  struct sr_create_ctx ctx;
  int out_fd; /* the /out tmpfs */
  int dst_fd; /* HOSTDIR */
  char cgroup_path[PATH_MAX];
  char *rootfs;
  char *decisions_json;
  char *error;
  bool range_taken; /* the policy took a user namespace range for the id */
  bool created;     /* the container exists (until deleted) */
  struct sr_collect_result collected;
  struct sr_sandbox_result res; /* valid after sr_sandbox_run, until sr_sandbox_release */
};

/* profile: the sandbox's --profile (NULL: the global one, or the bindings'). */
void sr_sandbox_init(struct sr_sandbox *s, const struct sr_invocation *g, const char *profile,
                     struct sr_sandbox_opts *o);
/* Everything, from the policy to the collected /out; s->res says what came of it (also on a
 * failure, which leaves nothing of the sandbox behind), and is audited either way. */
int sr_sandbox_run(struct sr_sandbox *s, sr_error_t *err);
void sr_sandbox_release(struct sr_sandbox *s);

#endif
