/* The container's root filesystem and mounts.
 *
 * Bind sources are the engine's host paths: the parent resolves them as host root and turns
 * each into a detached mount tree (open_tree) with its flags applied, before the container's
 * namespaces exist.  Everything else (proc, tmpfs, devpts, ...) is created inside the
 * container's namespaces with fsopen/fsmount.  Every target is resolved inside the root
 * filesystem (RESOLVE_IN_ROOT) and the mount is attached to that descriptor with move_mount, so
 * no path is looked up twice. */
#ifndef SEERUN_MOUNT_H
#define SEERUN_MOUNT_H

#include <stdbool.h>
#include <sys/types.h>

#include "config.h"
#include "error.h"

struct sr_bind_plan {
  int *tree_fd; /* per config mount: the prepared bind tree, -1 for other types */
  bool *is_dir;
  /* per config mount of type overlay: the judged descriptor of each host path its options
   * name (mount_paths.h's order), which the init checks it mounts; NULL: none */
  int **path_fd;
  size_t *n_paths;
  char *bundle; /* what a relative path in the options is relative to */
  size_t n;
};

/* The bind sources the policy judged, open (O_PATH), by config.json's mount index: binds are
 * made of these descriptors, never of the paths again. */
struct sr_bind_sources {
  const int *fd;      /* -1: could not be opened */
  const int *err_no;  /* why */
  size_t n;
  /* per config.json mount: the judged host paths of a filesystem mount's options */
  int *const *path_fd;
  int *const *path_errno;
  const size_t *n_paths;
  const char *bundle;
};

/* Parent, before clone. */
int sr_mount_binds_prepare(const struct sr_config *c, const struct sr_bind_sources *src,
                           struct sr_bind_plan *plan, sr_error_t *err);
/* Parent, once the container's user namespace exists: idmapped binds ("idmap", "ridmap"). */
int sr_mount_binds_idmap(struct sr_bind_plan *plan, const struct sr_config *c, pid_t userns_pid,
                         sr_error_t *err);
void sr_mount_bind_plan_close(struct sr_bind_plan *plan);

/* Init, in its mount namespace: makes every mount a slave (nothing propagates back to the
 * host), clones the root filesystem onto itself, and returns its mount descriptor. */
int sr_mount_rootfs_attach(const char *rootfs_path, int prepared_tree, int *root_fd,
                           sr_error_t *err);
/* Parent: a detached clone of the root filesystem open at root_fd (the one the policy judged),
 * which the init attaches; idmapped (sr_mount_rootfs_idmap) once the container's user namespace
 * exists, so that the image's files keep the owners they have inside (files owned by host root
 * are the container's root's).  rootfs_path: for messages. */
int sr_mount_rootfs_prepare_tree(int root_fd, const char *rootfs_path, int *tree_fd,
                                 sr_error_t *err);
int sr_mount_rootfs_idmap(int tree_fd, pid_t userns_pid, sr_error_t *err);
/* One of the config's mounts other than a cgroup one (runtime/container/mounts.c drives them,
 * in order): tree_fd is the prepared bind source (-1: none), layers an overlay's judged
 * layers (the plan's path_fd), userns whether the container has its own user namespace. */
struct sr_mount_layers {
  const int *fd; /* the judged layers of an overlay, mount_paths.h's order */
  size_t n;
  const char *bundle;
};
int sr_mount_one(const struct sr_mount *m, int tree_fd, bool is_dir,
                 const struct sr_mount_layers *layers, int root_fd, bool userns,
                 const char *mount_label, sr_error_t *err);
/* Makes root_fd the root: pivot_root, or MS_MOVE + chroot with --no-pivot. */
int sr_mount_rootfs_pivot(int root_fd, bool no_pivot, sr_error_t *err);
/* The process's root becomes root_fd (chroot), for a container without a mount namespace. */
int sr_mount_rootfs_chroot(int root_fd, sr_error_t *err);
/* After pivot: maskedPaths, readonlyPaths, a read-only root, rootfsPropagation. */
int sr_mount_rootfs_finish(const struct sr_config *c, sr_error_t *err);

/* The kernel's messages about a failed fsconfig/fsmount on fsfd, "; "-joined, for error text. */
void sr_mount_fs_log(int fsfd, char *buf, size_t size);

/* MS_* mount flags to MOUNT_ATTR_* (the atime mode included). */
uint64_t sr_mount_flags_to_attr(unsigned long flags);

/* A read-only mount on /dev, made writable for its submounts, nodes and /dev/console, is made
 * read-only now (as runc, at the end). */
int sr_mount_rootfs_dev_readonly(const struct sr_config *c, sr_error_t *err);

#endif
