/* An engine's overlayfs root filesystem, idmapped: rebuilt from idmapped copies of its layers.
 *
 * podman, Docker and containerd hand the runtime a merged overlayfs, which cannot be idmapped
 * itself.  Its layers can: the parent opens a detached clone of each (upper first, then the
 * lower ones), idmaps it with the container's mappings, and mounts a new overlay of them.  The
 * engine's upper directory becomes the top *lower* layer, so the new overlay is read-only:
 * fine for a read-only root (the policy's default), and the engine's overlay, which still holds
 * the upper and work directories, is left alone.  The mount points the container needs must
 * exist before (the parent makes them through the engine's overlay, as host root). */
#ifndef SEERUN_ROOTFS_OVERLAY_H
#define SEERUN_ROOTFS_OVERLAY_H

#include "config.h"
#include "error.h"

/* rootfs_path must be the root of an overlay mount; maps holds the container's uid and gid
 * mappings.  On success *tree_fd is a detached read-only mount to attach as the root. */
int sr_rootfs_overlay_idmapped(const char *rootfs_path, int root_fd, const struct sr_linux *maps,
                               int *tree_fd, sr_error_t *err);

#endif
