/* The policy applied to a parsed config: config in, config + decisions out.
 *
 * Pure: no I/O, no globals, deterministic.  What the host looks like (is this namespace path
 * the host's? is this bind source denied? is this hook on a trusted path?) the runtime finds
 * out first and passes in as facts.  Every decision -- enforced, allowed or refused -- is
 * appended to a list that the runtime writes to the audit log.
 *
 * A request the profile forbids is neutralised where nothing is lost and no engine is misled
 * (capabilities dropped, a host namespace replaced by a new one, nosuid/nodev added ...), and
 * refused otherwise, with an error naming the field, and for an annotation the annotation and
 * the policy key.
 */
#ifndef SEERUN_POLICY_APPLY_H
#define SEERUN_POLICY_APPLY_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h"
#include "error.h"
#include "json.h"
#include "policy.h"

enum sr_decision_kind { SR_DECISION_ENFORCED, SR_DECISION_ALLOWED, SR_DECISION_REFUSED };

struct sr_decision {
  enum sr_decision_kind kind;
  const char *field;   /* "process.capabilities.bounding", "mounts[3].source", ... */
  const char *asked;   /* short JSON text: "[\"CAP_SYS_ADMIN\",\"CAP_CHOWN\"]", "false" */
  const char *applied; /* likewise; for a refusal NULL; in a permissive profile, what would
                          have been applied ("refused: <message>" for a refusal) */
  const char *reason;  /* "permissive" for what a permissive profile let through */
};

struct sr_decisions {
  struct sr_decision *list; /* in the arena of the call that filled it */
  size_t n, cap;
  /* Set by sr_policy_apply: whether the container may have more than loopback.  The runtime
   * checks after the hooks that a container without the grant sees only lo. */
  bool network_granted;
  /* Egress through seerun's proxy: the runtime starts the container's supervisor, which
   * serves 127.0.0.1:3128 inside; egress_narrow is the annotation's list (NULL: none). */
  bool egress_proxy;
  const struct sr_egress_host *egress_narrow;
  size_t n_egress_narrow;
  /* Set by sr_policy_apply and sr_policy_apply_landlock: the Landlock ABI the container's
   * processes are confined with (0: none) and whether abstract unix sockets are scoped. */
  int landlock_abi;
  /* root.path may be idmapped (false: mounted as it is, its files unmapped inside). */
  bool rootfs_idmap;
  bool landlock_scope_abstract_unix;
};

/* Host facts the runtime computed; the policy does no I/O. */
struct sr_policy_mount_fact {
  bool source_denied;
  const char *denied_path;    /* the denied host path the source is or contains */
  const char *denied_reason;  /* why it is denied ("a seerun state root"), NULL: a host path */
  bool source_is_symlink_out; /* resolving the source left the directory it names (a symlink
                                 out of the bundle, ...) */
  const char *idmappable;     /* the profile's mounts.idmappable entry the source is at or below
                                 (compared by inode), NULL: none */
  bool source_on_proc_or_sysfs; /* the source is on a proc or sysfs filesystem (fstatfs) */
  /* Judged from the descriptor the runtime then mounts (issue 13, classes 2, 5, 7, 8). */
  const char *resolved;       /* the object's name on the host, from its descriptor; NULL: none
                                 (the source could not be opened: the mount reports it) */
  bool location_unknown;      /* where it lies in its filesystem cannot be told */
  unsigned hard_links;        /* a regular file with more than one link on the filesystem of a
                                 tree denied below (else 0): another name may be below it */
  const char *hard_link_tree; /* that tree */
  bool is_socket, is_fifo;    /* a unix socket or FIFO: a line to a host process */
  const char *socket_dir;     /* a daemon socket directory it is, contains or is below */
  const char *in_socket_dir;  /* not a directory: the daemon socket directory it is below */
  /* A filesystem mount (overlay): each host path its options name (mount_paths.h's order),
   * judged like a bind source from the descriptor the runtime checks it mounts. */
  struct sr_policy_mount_fact *paths;
  size_t n_paths;
};

struct sr_policy_ns_fact {
  bool is_host;               /* same inode as /proc/1/ns/<type> */
  bool is_seerun_container;   /* belongs to another live seerun container */
  bool container_has_network; /* that container was granted network */
  int container_pid;           /* that container's init (the runtime uses it for pods) */
};

/* What the file a hook's path opens is, judged from that descriptor (and, for a script, its
 * #! interpreter's). */
struct sr_policy_hook_fact {
  bool trusted_path;     /* root-owned file in root-owned directories no other user can write,
                            outside the bundle, the rootfs and the engines' image stores; a
                            script's interpreter likewise */
  const char *untrusted; /* why it is not, for the refusal; NULL: no detail */
  const char *resolved;  /* the file's name on the host (/proc/<pid>/exe: the program); NULL:
                            the path as written */
  bool interpreter;      /* the file is a well-known interpreter's or launcher's, under any
                            name (a hard link or copy of /bin/sh by the same inode) */
  const bool *matches;   /* one per entry of the profile's hooks.allowedPaths: that entry opens
                            this same file (device and inode); NULL: the entry's text is
                            compared with `resolved` */
};

#define SR_POLICY_TENANT_DIRS 4

struct sr_policy_facts {
  struct sr_policy_mount_fact *mounts;              /* one per config->mounts[i] */
  struct sr_policy_ns_fact ns[SR_NS_COUNT];         /* for namespaces given by path */
  struct sr_policy_hook_fact *hooks[SR_HOOK_COUNT]; /* one per hook */
  /* The bundle and the rootfs (as named and canonical): no hook environment value points
   * there.  NULL entries: none. */
  const char *tenant_dirs[SR_POLICY_TENANT_DIRS];
  bool have_root;                                   /* root is known (the runtime always) */
  struct sr_policy_mount_fact root;                 /* root.path, judged like a bind source */
  /* root.path is a plain directory in the bundle or below the profile's rootfs.idmapPaths
   * (NULL: neither); an overlay root is the engine's, rebuilt from its layers. */
  const char *root_idmappable;
  bool root_is_overlay;
  /* An overlay root: why it is this bundle's engine overlay (mounted in the bundle, the layer
   * the engine's records give this container), NULL: it is not, and root_overlay_not says
   * why (root_overlay.h). */
  const char *root_overlay_engine;
  const char *root_overlay_not;
  bool have_listener;                               /* linux.seccomp.listenerPath was opened */
  struct sr_policy_mount_fact listener;             /* it, judged like a bound socket */
  bool have_network_grant_check;                    /* reserved */
  int landlock_abi;                                 /* the kernel's Landlock ABI, 0: none */
};

/* Applies profile p to c in place (allocating in c->arena), appending every decision to out
 * (also in c->arena).  Returns -1 with an error on the first refusal, which is then the last
 * decision in out.  facts may be NULL: nothing is then known about the host, and what needs a
 * fact (a bind mount, a hook, a namespace path) is judged as the least trusted case. */
int sr_policy_apply(const struct sr_policy_profile *p, const struct sr_policy_facts *facts,
                    struct sr_config *c, struct sr_decisions *out, sr_error_t *err);

/* `update`: new resource limits must stay within the profile.  An update that lifts a limit
 * above a ceiling (or removes a limit the profile requires, or allows a device the profile
 * does not) is refused, not lowered: the update would otherwise report success for a value
 * that is not there.  On success *applied = *requested.  Decisions are allocated in a. */
int sr_policy_apply_update_check(const struct sr_policy_profile *p, struct sr_arena *a,
                                 const struct sr_resources *requested, struct sr_resources *applied,
                                 struct sr_decisions *out, sr_error_t *err);

/* `exec`: the new process cannot have capabilities beyond the bounding set decided at create
 * (nor beyond the profile), always has no_new_privileges, keeps the LSM labels decided at
 * create, and cannot start in a directory under /proc.  created: the container's process as
 * the policy left it; exec_process is changed in place (allocations in a). */
int sr_policy_apply_update_exec(const struct sr_policy_profile *p, struct sr_arena *a,
                                const struct sr_process *created, struct sr_process *exec_process,
                                struct sr_decisions *out, sr_error_t *err);

/* `exec` (and create, inside sr_policy_apply): Landlock for the process, from the profile's
 * `landlock` knob and the kernel's ABI (0: none, recorded and never refused); host_network:
 * the container shares the host's network namespace (abstract unix sockets are then scoped).
 * Sets out->landlock_abi and out->landlock_scope_abstract_unix. */
int sr_policy_apply_landlock(const struct sr_policy_profile *p, struct sr_arena *a, int abi,
                             bool host_network, struct sr_decisions *out, sr_error_t *err);
/* One hook judged again, where it is about to run or as read back from a state directory: the
 * same rules as at create (the profile must allow the file the hook's path opens, with its
 * args; its environment is filtered in h).  facts->hooks[k][i] is its fact.  -1 with the error
 * when the profile refuses it (recorded in out). */
int sr_policy_apply_hooks_check_hook(const struct sr_policy_profile *p, struct sr_arena *a,
                                     const struct sr_policy_facts *facts, enum sr_hook_kind k,
                                     size_t i, struct sr_hook *h, struct sr_decisions *out,
                                     sr_error_t *err);

/* A program that runs whatever its arguments name (a shell, an interpreter, env, busybox ...),
 * by its base name: an allow entry without "args" does not allow it. */
bool sr_policy_apply_hooks_is_interpreter(const char *path);

bool sr_policy_apply_network_granted(const struct sr_decisions *d);

/* `exec` into a container whose egress goes through seerun's proxy: the process gets the
 * proxy's variables (HTTP_PROXY, ... as create gave them). */
int sr_policy_apply_egress_proxy_env(struct sr_arena *a, struct sr_process *p, sr_error_t *err);

/* Whether the runtime installs its built-in seccomp filter (besides any of the config):
 * always, unless the profile is permissive. */
bool sr_policy_apply_builtin_seccomp(const struct sr_policy_profile *p);
/* Whether the container's supervisor keeps its activity record: activity.record, under an
 * enforcing profile only. */
bool sr_policy_apply_activity_record(const struct sr_policy_profile *p);

const char *sr_policy_render_kind_name(enum sr_decision_kind k); /* "enforced", ... */

/* An array of {kind, field, asked, applied, reason}. */
int sr_policy_render_json(const struct sr_decisions *d, sr_json_gen_t g);

/* The known annotations, which only request what the profile allows. */
#define SR_ANNOTATION_NETWORK "io.seerun.network"   /* "none", "enabled" or "proxy" */
#define SR_ANNOTATION_EGRESS_ALLOW "io.seerun.egress.allow" /* HOST[,HOST...]: narrows */
#define SR_ANNOTATION_TMP_SIZE "io.seerun.tmp-size" /* a size: the /tmp tmpfs */

#endif
