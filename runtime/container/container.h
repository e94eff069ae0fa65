/* Creating a container: what the runtime process (the parent) and the container's processes
 * (an optional intermediate and the init) share.  clone copies it into the children. */
#ifndef SEERUN_CONTAINER_H
#define SEERUN_CONTAINER_H

#include <stdbool.h>
#include <sys/types.h>

#include "audit.h"
#include "cgroup.h"
#include "config.h"
#include "devices.h"
#include "landlock.h"
#include "hooks.h"
#include "invocation.h"
#include "mount.h"
#include "namespaces.h"
#include "policy_egress.h"
#include "policy_facts.h"
#include "seccomp_cache.h"
#include "statedir.h"

struct sr_create_opts {
  const char *id;
  const char *bundle; /* absolute */
  const char *pid_file;
  const char *console_socket;
  bool no_pivot;
  bool no_new_keyring;
  int preserve_fds;
  /* The init keeps PR_SET_PDEATHSIG (SIGKILL) past create: it dies with the runtime process
   * (seerun sandbox, which supervises it) instead of outliving it. */
  bool die_with_runtime;
  const char *audit_event; /* the lifecycle event prepare audits; NULL: "create" */
};

struct sr_create_ctx {
  const struct sr_invocation *inv;
  const struct sr_create_opts *o;
  struct sr_config *config;
  char *config_text;
  size_t config_len;
  char *rootfs; /* absolute */
  char created[64];
  struct sr_ns_plan ns;
  struct sr_host_objects host; /* what the policy judged (bind sources, root.path), open */
  struct sr_bind_plan binds;
  struct sr_dev_plan devs;
  struct sr_cgroup *cgroup;
  int cgroup_dir_fd; /* v2: for CLONE_INTO_CGROUP; -1 otherwise */
  int rootfs_tree_fd; /* the root filesystem the parent prepared, from host.root_fd */
  bool rootfs_idmapped; /* rootfs_tree_fd is idmapped already (an overlay rebuilt of layers) */
  bool rootfs_idmap_wanted; /* rootfs_tree_fd is to be idmapped once the user namespace exists */
  bool rootfs_no_idmap;     /* the policy: root.path is mounted as it is (rootfs.idmapPaths) */
  struct sr_seccomp_prog seccomp_prog; /* the config's filter, compiled (or cached) by the parent */
  int sync[2];       /* [0]: the parent's end, [1]: the children's */
  int fifo_fd;       /* O_PATH of exec.fifo */
  int console_fd;    /* connected --console-socket, or -1 */
  char *console_name; /* where --console-socket resolved to (its one lookup), for the audit */
  int notify_fd;     /* connected seccomp listenerPath socket, or -1 */
  pid_t host_pid;    /* the init's pid on the host (known to the init from SYNC_INIT_INFO) */
  /* What the policy decided (recorded in the state for exec and update). */
  const char *profile;
  const struct sr_audit *audit; /* decisions taken during create (the idmap) go here */
  bool network_granted;
  bool builtin_seccomp;
  /* Egress through seerun's proxy: the container's supervisor serves it (supervisor.h). */
  bool egress_proxy;
  const struct sr_egress *egress;
  const struct sr_egress_host *egress_narrow;
  size_t n_egress_narrow;
  const struct sr_egress_host *egress_extra; /* seerun sandbox --allow-host */
  size_t n_egress_extra;
  pid_t supervisor_pid; /* parent: started, 0 until then */
  int supervisor_ready; /* its ready byte comes here (sr_supervisor_ready), or -1 */
  /* The activity record (runtime/supervisor/activity.h): the supervisor keeps it. */
  bool activity;
  const char *activity_unseen;  /* why the built-in filter's denials are not seen; NULL: seen */
  int activity_sock[2];         /* [0]: the supervisor's end, [1]: the init's hand-over end */
  int activity_listen;          /* activity.sock in the state directory (exec's hand-overs) */
  /* The container paths the caller expects the code to write (the sandbox's /out): their
   * changes are outputs, not writes elsewhere (activity_files.h).  NULL-terminated, or NULL. */
  const char *const *activity_outputs;
  /* Places the caller knows better than the mount table (the sandbox's workspace: its
   * overlay's upper and lower directories), added as they are (activity_files.h,
   * sr_activity_places_add; the descriptors stay the caller's). */
  struct sr_act_place_in {
    const char *label, *kind, *role;
    int fd, lower_fd;
  } activity_places[2];
  size_t n_activity_places;
  struct sr_landlock_plan landlock; /* abi 0: none */
  /* What the hooks are judged against where they run (the profile of the create). */
  const struct sr_policy_profile *hook_profile;
  /* The profile enforces: the container's cgroup must be one seerun makes (an existing one,
   * a host service's, would be joined, limited and at delete killed and removed). */
  bool cgroup_must_be_new;
  /* Seen before the first record (sr_create_record_begin): the cgroup existed then (only
   * looked for when it must be new), and whether this create has tried to make it since (an
   * abort removes only a cgroup it made). */
  bool cgroup_existed;
  bool cgroup_attempted;
  /* The createContainer hooks, judged and opened by the parent, run by the init. */
  struct sr_hook_batch container_hooks;
  struct sr_container *container; /* parent only */
  pid_t child_pid;                /* parent: first child */
  pid_t init_pid;                 /* parent: the init */
  int init_pidfd;                 /* parent */
};

/* The create operation; on success the container is "created" and c->container holds it
 * (locked).  On failure nothing is left: no state, cgroup, mount or process. */
int sr_create(struct sr_create_ctx *ctx, sr_error_t *err);
void sr_create_ctx_release(struct sr_create_ctx *ctx);
/* --console-socket, resolved once and connected before anything else create does (the
 * command calls it first; sr_create_prepare otherwise). */
int sr_create_console_connect(struct sr_create_ctx *ctx, sr_error_t *err);

/* Children (runtime/container/init.c).  They never return: they exec or _exit. */
__attribute__((noreturn)) void sr_init_main(struct sr_create_ctx *ctx, bool after_intermediate);
__attribute__((noreturn)) void sr_init_intermediate_main(struct sr_create_ctx *ctx);

/* The OCI state document of a container being created, for hooks and the seccomp agent. */
int sr_create_state_json(const struct sr_create_ctx *ctx, const char *status, pid_t pid,
                         char **out, sr_error_t *err);

/* The seccomp agent's "container process state" (config-linux.md), sent with the notify fd. */
int sr_create_notify_state_json(const struct sr_create_ctx *ctx, char **out, sr_error_t *err);

#endif
