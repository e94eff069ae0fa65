/* What the policy needs to know about the host, found out before it runs (the policy itself
 * does no I/O): whether bind sources are or contain denied host paths, compared by device and
 * inode from O_PATH descriptors (never by string prefix); whether namespace paths are the
 * host's or another seerun container's; what file each hook's path opens, and whether it is
 * trusted. */
#ifndef SEERUN_POLICY_FACTS_H
#define SEERUN_POLICY_FACTS_H

#include <stdbool.h>
#include <sys/types.h>

#include "config.h"
#include "error.h"
#include "policy_apply.h"

/* A host path denied as a bind source at and below it (above too: engine_store), and why. */
struct sr_denied_path {
  const char *path;
  const char *reason; /* "a seerun state root (recorded in ...)" */
  bool own_bundle_ok; /* a source within the container's own bundle, itself below the path,
                         is not denied (the sandbox's /out, below its state root) */
  bool own_id_ok;     /* nor one within PATH/<the container's id> (an engine's storage) */
  bool engine_store;  /* an engine's storage: denied above it too, and not denied to a
                         root.path that is the engine's overlay for this bundle
                         (runtime/enforce/root_overlay.h) */
};
/* The host objects the facts were taken from, still open: create mounts these descriptors and
 * never resolves the paths again (a check of one object and a mount of another: issue 13,
 * class 2). */
struct sr_host_objects {
  int *mount_fd;    /* per config.json mounts[i]: O_PATH of the bind source, or -1 */
  int *mount_errno; /* why a bind source could not be opened */
  size_t n_mounts;
  /* per config.json mounts[i] of a filesystem type: a descriptor (O_PATH) of each host path
   * its options name (mount_paths.h), or -1 (why in path_errno); NULL: none */
  int **path_fd;
  int **path_errno;
  size_t *n_paths;
  int root_fd;      /* O_PATH of root.path, or -1 */
  int root_errno;
  int *ns_fd;       /* SR_NS_COUNT: the namespace file of each path in linux.namespaces, -1 */
  char **ns_error;  /* SR_NS_COUNT: why one could not be opened */
  int listener_fd;  /* O_PATH of linux.seccomp.listenerPath (connected through), or -1 */
  int listener_errno;
};
#define SR_HOST_OBJECTS_INIT {.root_fd = -1, .listener_fd = -1}
void sr_policy_facts_objects_close(struct sr_host_objects *o);
/* The runtime's own mount replaces what was judged at config.json's mounts[index] (the
 * sandbox's /out tmpfs, mounted over the judged directory once the policy decided its owner).
 * fd is duplicated.  -1 with errno. */
int sr_policy_facts_objects_replace_mount(struct sr_host_objects *o, size_t index, int fd);

/* A live seerun container that holds a namespace a config joins (a pod's). */
struct sr_ns_peer {
  pid_t pid;
  bool network_granted; /* its profile granted it the network */
};
/* Whether a live container of the state root holds the namespace whose /proc/PID/ns name is
 * ns_name and whose inode is ino; fills *out if so.  The container layer lists them
 * (runtime/container/prepare.h): the facts know no state directory. */
typedef bool (*sr_ns_peer_fn)(void *data, const char *ns_name, ino_t ino, struct sr_ns_peer *out);

struct sr_facts_input {
  const char *bundle;    /* absolute */
  const char *rootfs;    /* absolute */
  sr_ns_peer_fn find_peer; /* recognises other seerun containers; NULL: none */
  void *peer_data;
  const char *state_root;
  const char *id;        /* the container's id (its user namespace registry key) */
  bool dry_run;          /* policy check: no registry range is taken */
  const struct sr_denied_path *denied; /* besides the built-in list */
  size_t n_denied;
  char **idmappable;                   /* the profile's mounts.idmappable */
  size_t n_idmappable;
  char **rootfs_idmap_paths;           /* the profile's rootfs.idmapPaths */
  size_t n_rootfs_idmap_paths;
  const struct sr_policy_profile *profile; /* whose hooks.allowedPaths the hooks are matched
                                              against (set by sr_policy_run_create) */
  struct sr_host_objects *keep; /* create: receives the judged descriptors, which it then
                                   mounts and joins; NULL (policy check): they are closed */
};

/* Fills facts, allocating in c->arena, and objs with the descriptors the facts were taken from
 * (the caller closes them; on failure they are closed). */
int sr_policy_facts_compute(const struct sr_config *c, const struct sr_facts_input *in,
                            struct sr_policy_facts *facts, struct sr_host_objects *objs,
                            sr_error_t *err);

#endif
