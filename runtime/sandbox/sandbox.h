/* seerun sandbox: a container seerun builds itself around one command, runs under the
 * operator's policy, and removes afterwards.  The pieces, one file each:
 *
 * - sandbox_slot.c: the runtime's private mount namespace, the workspace (bundle) under
 *   the state root that reserves the container id, and the cleanup of what a killed sandbox
 *   left behind.
 * - sandbox_rootfs.c: the built-in root filesystem, a small tmpfs with a generated /etc.
 * - sandbox_config.c: the generated config.json text (parsed, then policed like any other).
 * - sandbox_stdio.c: the command's stdin, stdout and stderr, pipes seerun relays (bounded).
 * - sandbox_watchdog.c: the sandbox dies with its seerun.
 * - sandbox_supervise.c: the wait, with the wall-clock limit and the caller's signals.
 * - sandbox_collect.c: /out, a tmpfs the runtime holds by descriptor, copied out safely.
 * - sandbox_workspace.c: --workspace, a host directory as a copy-on-write overlay (its mounts, and
 *   the changes read after the run: runtime/linux/overlay_diff.c).
 * - sandbox_apply.c: the workspace's snapshot at the start, and --apply.
 * - sandbox_audit.c: the run's unique id, its caller, and the audit event of the request.
 * - sandbox_result.c: the result document (--json=FILE, --json-fd) and its audit event.
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
#include <poll.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <termios.h>

#include "audit.h"
#include "overlay_diff.h"
#include "container.h"
#include "error.h"
#include "invocation.h"
#include "policy_egress.h"
#include "policy_run.h"

/* The sandbox's own user inside its user namespace (uid and gid); never root in there
 * either, so it holds no capability at all. */
#define SR_SANDBOX_UID 1000
/* Its HOME with the built-in root filesystem: a tmpfs of its own, writable. */
#define SR_SANDBOX_HOME "/home/sandbox"
/* The host's site directory: hidden (an empty tmpfs over it) unless --ro /usr/local. */
#define SR_SANDBOX_USR_LOCAL "/usr/local"
#define SR_SANDBOX_HOSTNAME "sandbox"
/* Where the command writes what it wants collected. */
#define SR_SANDBOX_OUT "/out"
/* /out is as large as the byte bound, and never smaller than this. */
#define SR_SANDBOX_OUT_MIN_SIZE (1ull << 20)
/* What seerun sandbox exits with when it fails itself (no status of the command), as docker
 * run does. */
#define SR_SANDBOX_EXIT_RUNTIME 125
/* As timeout(1): the wall-clock limit (--timeout) ended the command. */
#define SR_SANDBOX_EXIT_TIMEOUT 124
/* As a shell: the command cannot be executed (126), does not exist in the sandbox (127). */
#define SR_SANDBOX_EXIT_NOEXEC 126
#define SR_SANDBOX_EXIT_NOTFOUND 127
/* Below this, the runtime cannot start a process in the cgroup at all. */
#define SR_SANDBOX_MEMORY_MIN (8ull << 20)

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
  uint64_t output_max_bytes; /* per output stream (stdout, stderr) */
  uint64_t kill_after_ms;    /* from the caller's SIGTERM/SIGINT to SIGKILL */
  bool out_overwrite;        /* --out may hold files already */
  bool tty;                  /* --tty: a pty (from the container's devpts) instead of pipes */
  bool network;          /* --network=host: the host's network, where the profile allows it */
  bool proxy;            /* --network (=proxy): egress by host name through seerun's proxy */
  struct sr_egress_host *allow_hosts; /* --allow-host, with the proxy (callerMayAllow) */
  size_t n_allow_hosts;
  bool own_tmp;          /* the profile mounts no /tmp: the sandbox mounts its own */
  uint64_t own_tmp_size;
  /* --workspace HOST:DEST (sandbox_workspace.c): NULL: none */
  const char *ws_host;  /* as given */
  char *ws_dest;        /* absolute, lexically clean */
  uint64_t ws_size;     /* --workspace-size: the scratch upper layer's bound */
  char **ws_protect;    /* --protect (and .git): relative to the workspace, clean */
  size_t n_ws_protect;
  bool ws_apply;        /* --apply */
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
int sr_sandbox_slot_private_mounts(sr_error_t *err);

/* Removes what sandboxes whose runtime is gone left in this state root: their containers
 * (as delete --force does) and workspaces.  Best effort: failures are warnings. */
void sr_sandbox_slot_reap_stale(const struct sr_invocation *g, int rootfd, const char *real_root);
/* The same for `seerun gc`: the state root of g (none: nothing to do). */
int sr_sandbox_slot_gc(const struct sr_invocation *g, sr_error_t *err);

/* Reserves the container id (name, or the first free sandbox-<n>) and makes the workspace:
 * the bundle directory with the mount points rootfs/ and out/. */
int sr_sandbox_slot_reserve(const struct sr_invocation *g, struct sr_sandbox_ws *ws,
                            const char *name, sr_error_t *err);
/* Once the container exists (its state directory holds the id now): the mounts of the
 * workspace are detached and the workspace removed.  Idempotent. */
void sr_sandbox_slot_remove(struct sr_sandbox_ws *ws);
void sr_sandbox_slot_release(struct sr_sandbox_ws *ws);

/* Whether a container's bundle is a sandbox workspace of this state root whose runtime is
 * gone. */
bool sr_sandbox_slot_bundle_orphaned(const char *real_root, const char *bundle);

/* ---- sandbox_rootfs.c ---- */

/* Host directories the built-in root filesystem binds read-only (/usr; /bin, /lib ... where
 * they are directories rather than links into /usr; /etc/alternatives; the CA certificates:
 * /etc/ssl/certs, /etc/pki/...). */
struct sr_sandbox_sysdirs {
  char *paths[16];
  size_t n;
};

/* Builds the built-in root filesystem (a tmpfs) and attaches it at target: mount points,
 * the host's top-level links into /usr, a generated /etc (passwd, group, hosts, hostname,
 * resolv.conf, nsswitch.conf, the host's CA certificates), HOME, the mount points of the --ro
 * binds and the working directory. */
int sr_sandbox_rootfs_build(const struct sr_sandbox_opts *o, const char *target,
                            struct sr_sandbox_sysdirs *sys, sr_error_t *err);
void sr_sandbox_rootfs_sysdirs_free(struct sr_sandbox_sysdirs *sys);

/* ---- sandbox_config.c ---- */

struct sr_sandbox_config_in {
  const struct sr_sandbox_opts *o;
  const char *id;
  const char *rootfs;     /* absolute */
  const char *out_source; /* the bind source of /out (--out), NULL: a plain tmpfs */
  const char *ws_source;  /* --workspace's HOST (absolute), NULL: none */
  const char *cgroup_path;
  const struct sr_sandbox_sysdirs *sys; /* NULL with --rootfs */
};

/* The config.json text of the sandbox (NUL-terminated, malloc'd). */
int sr_sandbox_config_text(const struct sr_sandbox_config_in *in, char **out, size_t *len,
                           sr_error_t *err);

/* ---- sandbox_stdio.c ---- */

struct sr_sandbox_stream {
  int from, to;   /* where the bytes come from, where they go (-1: discarded) */
  char buf[4096]; /* at most PIPE_BUF: one write after POLLOUT never blocks */
  size_t len, off;
  bool eof;
  bool bounded;     /* an output stream: --output-max-bytes */
  uint64_t bytes;   /* passed on */
  uint64_t dropped; /* read and discarded: past the bound, or the caller's end closed */
};

struct sr_sandbox_stdio {
  int saved[3];   /* the caller's 0, 1, 2 (close-on-exec copies) */
  int child[3];   /* the container's ends, until the container holds them */
  bool installed; /* the container's ends are at 0, 1, 2 */
  bool raw;       /* the caller's terminal is in raw mode (saved_tio to restore) */
  struct termios saved_tio;
  struct sr_sandbox_stream in, out, err;
  uint64_t max_bytes;
};

#define SR_SANDBOX_STDIO_POLLFDS 6
#define SR_SANDBOX_OUTPUT_MAX_BYTES (64ull << 20)

void sr_sandbox_stdio_init(struct sr_sandbox_stdio *st, uint64_t max_bytes);
/* Makes the pipes and puts the container's ends at 0, 1, 2 (for the create, whose process
 * inherits them); sr_sandbox_stdio_restore puts the caller's back and closes the container's
 * ends. */
int sr_sandbox_stdio_open(struct sr_sandbox_stdio *st, sr_error_t *err);
void sr_sandbox_stdio_restore(struct sr_sandbox_stdio *st);
/* --tty: the command's stdin and stdout (and stderr) are the pty whose master is given (taken
 * over); the caller's terminal, if stdin is one, is in raw mode until release. */
int sr_sandbox_stdio_use_tty(struct sr_sandbox_stdio *st, int master, sr_error_t *err);
/* One round of the relay: the descriptors to poll, then what their events call for. */
void sr_sandbox_stdio_poll(const struct sr_sandbox_stdio *st,
                           struct pollfd p[SR_SANDBOX_STDIO_POLLFDS]);
void sr_sandbox_stdio_done(struct sr_sandbox_stdio *st,
                           const struct pollfd p[SR_SANDBOX_STDIO_POLLFDS]);
void sr_sandbox_stdio_end_input(struct sr_sandbox_stdio *st);
/* stdout and stderr at EOF (every writer gone) and passed on. */
bool sr_sandbox_stdio_drained(const struct sr_sandbox_stdio *st);
void sr_sandbox_stdio_flush(struct sr_sandbox_stdio *st);
void sr_sandbox_stdio_release(struct sr_sandbox_stdio *st);

/* ---- sandbox_watchdog.c ---- */

struct sr_sandbox_watchdog {
  pid_t pid;
  int fd; /* -1: none running */
};

/* Forks the watchdog that kills the sandbox (init_pidfd, the cgroup) if seerun dies. */
int sr_sandbox_watchdog_start(struct sr_sandbox_watchdog *wd, int init_pidfd,
                              const char *cgroup_path, sr_error_t *err);
/* Disarms it and waits for it to exit.  Idempotent. */
void sr_sandbox_watchdog_stop(struct sr_sandbox_watchdog *wd);

/* ---- sandbox_supervise.c ---- */

struct sr_sandbox_wait {
  int status;        /* wait status of the command (the container's init) */
  bool timed_out;    /* killed at --timeout */
  int caller_signal; /* the first SIGINT/SIGTERM/SIGHUP seerun got; 0: none */
  bool interrupted;  /* killed after the caller's signal (a second one, or --kill-after) */
  int64_t wall_ns;
  struct rusage ru; /* of the init and the descendants it reaped */
};

/* Blocks the signals the runtime handles (before the container exists, so none is lost). */
int sr_sandbox_supervise_block_signals(sr_error_t *err);

/* Waits for the init (pidfd), relaying the standard streams (st) until every writer is gone.
 * A first SIGINT, SIGTERM or SIGHUP sends the command SIGTERM, and kill_after_ms later (or at
 * a second one) every process of the cgroup gets SIGKILL; SIGQUIT and SIGUSR1/2 are forwarded.
 * The deadline kills every process of the cgroup. */
int sr_sandbox_supervise(pid_t pid, int pidfd, const char *cgroup_path, uint64_t timeout_ms,
                         uint64_t kill_after_ms, int64_t started_ns, struct sr_sandbox_stdio *st,
                         struct sr_sandbox_wait *w, sr_error_t *err);

/* What the cgroup tells once the init has been reaped (every process of the sandbox's pid
 * namespace, hence of its cgroup, is gone by then). */
struct sr_sandbox_usage {
  bool valid;      /* the memory controller answered (OOM kills are known) */
  bool peak_known; /* v1 max_usage_in_bytes, v2 memory.peak */
  uint64_t cpu_ns, cpu_user_ns, cpu_system_ns;
  uint64_t peak_memory;
  uint64_t oom_kills;
};
int sr_sandbox_supervise_cgroup_usage(const char *cgroup_path, struct sr_sandbox_usage *u,
                                      sr_error_t *err);

int64_t sr_sandbox_supervise_now_ns(void);

/* ---- sandbox_collect.c ---- */

/* The /out tmpfs: made by the runtime (so the container cannot remount it), its root owned
 * by the sandbox user's host id, attached at target for the container's bind.  *fd is the
 * runtime's descriptor of it, valid after the container is gone. */
int sr_sandbox_collect_out_create(uint64_t size, uid_t owner, gid_t group, const char *target,
                                  int *fd, sr_error_t *err);

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
  bool complete; /* nothing left out: no bound (bytes, files, depth) reached, nothing refused */
};

#define SR_COLLECT_MAX_LISTED 1000
#define SR_COLLECT_MAX_DEPTH 64

/* Copies the tree under src (the /out tmpfs) into dst (HOSTDIR): regular files with one link
 * and directories only, at most max_files entries and max_bytes bytes, nothing resolved
 * through a symlink or out of either tree; overwrite replaces a file of dst of the same name
 * (by name: unlinked, then made anew).  Refusals are listed, not errors; an error is a
 * failure to write into dst. */
int sr_sandbox_collect(int src, int dst, uint64_t max_bytes, uint64_t max_files, bool overwrite,
                       struct sr_collect_result *res, sr_error_t *err);
void sr_sandbox_collect_result_free(struct sr_collect_result *res);

/* A printable, valid UTF-8 rendering of a name (malloc'd): control bytes, backslashes and
 * bytes that are not part of a UTF-8 sequence become \xNN. */
char *sr_sandbox_collect_printable(const char *s);

/* ---- sandbox_apply.c: the workspace as it was, and the changes copied back ---- */

/* What the workspace's entries were when the run started (by path): what --apply compares
 * each entry with before it changes it ("changed on the host during the run"). */
struct sr_ws_snap_entry {
  uint64_t hash;
  size_t off; /* the path in names */
  dev_t dev;
  ino_t ino;
  mode_t mode;
  off_t size;
  struct timespec mtime, ctime;
  bool used;
  bool created; /* a directory --apply made (dev, ino: the new one's) */
  bool removed; /* an entry --apply deleted */
};

struct sr_ws_snapshot {
  struct sr_ws_snap_entry *v; /* open addressing, cap a power of two */
  size_t n, cap;
  char *names;
  size_t names_len, names_cap;
};

#define SR_WS_SNAPSHOT_MAX 1000000

/* Every entry below dir (the workspace, the lower layer's clone), protected subtrees left
 * out; at most SR_WS_SNAPSHOT_MAX entries (past it: an error naming the bound). */
int sr_sandbox_apply_snapshot_take(int dir, char *const *protect, size_t n_protect,
                                   struct sr_ws_snapshot *s, sr_error_t *err);
void sr_sandbox_apply_snapshot_release(struct sr_ws_snapshot *s);

/* Whether path is a protected path or below one. */
bool sr_sandbox_apply_protected(const char *path, char *const *protect, size_t n_protect);

/* What became of one change: applied, or why not. */
struct sr_ws_outcome {
  bool applied;
  const char *reason; /* not applied */
};

struct sr_ws_apply {
  bool done;                   /* --apply was carried out */
  struct sr_ws_outcome *v;     /* per entry of the diff */
  /* Entries below a deleted directory that were kept (changed on the host, protected ...). */
  struct sr_collect_entry *kept;
  size_t n_kept, cap_kept, kept_not_listed;
  uint64_t applied, refused;
  bool complete; /* every change applied */
};

/* Applies the diff (taken from the upper layer upper) to the workspace directory host (held
 * since the start; snapshot: as it was then): regular files (content and mode bits, at most
 * 0775: no set-id, sticky or world-write bit), directories and deletions; symlinks and other
 * types added or modified are refused, as is anything protected, anything that changed on the
 * host during the run, and everything when the diff is incomplete; at most max_bytes are
 * written in all (a sparse file's size is no bound on what it would take on the host).  Every lookup in host is
 * openat2 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV;
 * nothing is written through an existing name (new files are made beside it and renamed over
 * it).  An error is a failure to write into host. */
int sr_sandbox_apply(int host, int upper, const struct sr_odiff *diff, struct sr_ws_snapshot *snap,
                     char *const *protect, size_t n_protect, uint64_t max_bytes,
                     const char *refuse_all, struct sr_ws_apply *res, sr_error_t *err);
void sr_sandbox_apply_release(struct sr_ws_apply *res);

/* ---- sandbox_workspace.c: --workspace, the copy-on-write workspace ---- */

struct sr_sandbox_caller;

#define SR_SANDBOX_WS_SIZE_DEFAULT (1ull << 30)
/* The overlay's mount point in the bundle (sandbox_slot.c makes it). */
#define SR_SANDBOX_WS_MOUNT "ws"

struct sr_sandbox_cow {
  int host;      /* the workspace directory, held from the start (never looked up again) */
  struct stat host_st;
  char *host_abs; /* its absolute path (the config's bind source, which the policy judges) */
  int lower;     /* its detached clone: idmapped (its owner as the sandbox user), read-only */
  int upper_mnt; /* the scratch tmpfs (seerun's) */
  int upper;     /* its upper/ directory */
  int overlay;   /* the overlay mount */
  struct sr_ws_snapshot snap;
  struct sr_odiff diff;
  bool diffed;
  struct sr_ws_apply apply;
  size_t protect_mounted; /* protected paths that are read-only inside */
};

void sr_sandbox_workspace_init(struct sr_sandbox_cow *w);
/* Opens the workspace directory (no symlink anywhere in the path: refused), clones it and
 * takes the snapshot: before anything of the sandbox runs. */
int sr_sandbox_workspace_open(const struct sr_sandbox_opts *o, const struct sr_sandbox_caller *c,
                              struct sr_sandbox_cow *w, sr_error_t *err);
/* Once the policy has decided the user namespace (uid, gid: the sandbox user's host ids):
 * the idmapped lower, the bounded upper, the overlay attached at target, the protected paths
 * bound read-only over it.  judged: the descriptor the policy judged for the bind. */
int sr_sandbox_workspace_mount(const struct sr_sandbox_opts *o, struct sr_sandbox_cow *w, uid_t uid,
                               gid_t gid, const char *target, int judged, sr_error_t *err);
/* Once every process of the sandbox is gone: the diff, and --apply (unless unfinished says
 * why the command did not finish: then every change is refused with that reason). */
int sr_sandbox_workspace_finish(const struct sr_sandbox_opts *o, struct sr_sandbox_cow *w,
                                const char *unfinished, sr_error_t *err);
void sr_sandbox_workspace_release(struct sr_sandbox_cow *w);

/* ---- sandbox_audit.c ---- */

/* Who ran the sandbox, from where: on record in the result and the audit log. */
struct sr_sandbox_caller {
  uid_t uid;
  gid_t gid;
  int64_t login_uid; /* /proc/self/loginuid (the login behind sudo); -1: unset */
  pid_t pid;         /* seerun's parent */
  char *cwd;         /* NULL: unknown */
};

void sr_sandbox_audit_caller_init(struct sr_sandbox_caller *c);
void sr_sandbox_audit_caller_release(struct sr_sandbox_caller *c);
/* A unique id for the run: 128 random bits, in hex (33 bytes with the NUL). */
int sr_sandbox_audit_run_id(char out[33], sr_error_t *err);
/* An absolute, lexically clean path for what the user gave (relative to the caller's cwd);
 * malloc'd, NULL when out of memory or cwd is unknown. */
char *sr_sandbox_audit_abs_path(const struct sr_sandbox_caller *c, const char *path);

void sr_sandbox_audit_put_caller(sr_json_gen_t g, const struct sr_sandbox_caller *c);
/* The audit event "sandbox-start": the request (command, caller, the paths, absolute; what
 * was asked of the limits), before anything is made. */
int sr_sandbox_audit_start(const struct sr_audit *a, const struct sr_sandbox_opts *o,
                           const struct sr_sandbox_caller *c, const char *out_abs, sr_error_t *err);

/* ---- sandbox_result.c ---- */

struct sr_sandbox_result {
  const char *id;
  const char *run_id; /* unique per run (the id is a reused slot) */
  const struct sr_sandbox_caller *caller;
  const char *profile;
  char *const *argv;
  size_t argc;
  bool ran;      /* the command started */
  int status;    /* wait status */
  int exit_code; /* what seerun exits with */
  bool timed_out, interrupted;
  int caller_signal; /* seerun's SIGINT/SIGTERM/SIGHUP that ended the run; 0: none */
  uint64_t timeout_ms, kill_after_ms;
  uint64_t output_max_bytes;
  const struct sr_sandbox_stdio *stdio; /* NULL: the streams were never relayed */
  int64_t wall_ns;
  struct rusage ru;
  struct sr_sandbox_usage usage;
  int64_t memory_limit, pids_limit; /* as applied; -1: none */
  uint64_t cpu_quota_us;
  const char *out_dir;
  const struct sr_collect_result *out; /* NULL without --out (or when not collected) */
  const struct sr_sandbox_opts *o;     /* --workspace's options */
  const struct sr_sandbox_cow *ws;     /* NULL without --workspace */
  const char *decisions_json;          /* the policy's decisions, a JSON array text */
  const char *egress_json;             /* the egress proxy's record (a JSON object text);
                                          NULL: no proxy */
  const char *activity_json;           /* what the code tried (activity.json); NULL: none */
  const char *error;                   /* NULL: none */
};

/* The result document, one line of JSON. */
int sr_sandbox_result_json(const struct sr_sandbox_result *r, char **out, size_t *len,
                           sr_error_t *err);
/* The same facts, typed, in the audit log (event "sandbox-result"; the decisions have lines of
 * their own, the collected entries are left out, the refused ones capped). */
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
  char *egress_json;   /* what the container's supervisor left (egress.json) */
  char *activity_json; /* and its activity record (activity.json) */
  char *error;
  bool range_taken; /* the policy took a user namespace range for the id */
  bool created;     /* the container exists (until deleted) */
  struct sr_collect_result collected;
  struct sr_sandbox_cow cow; /* --workspace */
  struct sr_sandbox_stdio stdio;
  struct sr_sandbox_watchdog watchdog;
  char run_id[33];
  struct sr_sandbox_caller caller;
  char *out_abs;                /* --out, absolute */
  /* The index of the first --ro bind among the generated config's mounts (they come last, in
   * order), so that a refusal of mounts[N] names the --ro the user wrote; -1: not known. */
  long ro_first_mount;
  struct sr_sandbox_result res; /* valid after sr_sandbox_run, until sr_sandbox_run_release */
};

/* profile: the sandbox's --profile (NULL: the global one, or the bindings'). */
void sr_sandbox_run_init(struct sr_sandbox *s, const struct sr_invocation *g, const char *profile,
                         struct sr_sandbox_opts *o);
/* Everything, from the policy to the collected /out; s->res says what came of it (also on a
 * failure, which leaves nothing of the sandbox behind), and is audited either way. */
int sr_sandbox_run(struct sr_sandbox *s, sr_error_t *err);
void sr_sandbox_run_release(struct sr_sandbox *s);

#endif
