/* Whether an overlay named as root.path is the engine's root filesystem for this bundle.
 *
 * An engine's overlay is rebuilt from its layers idmapped to the container's user namespace
 * (its files root's inside), and its mount points are made through it as host root: granted
 * to any overlay root.path names, that is another container's root filesystem (podman
 * --rootfs /var/lib/containers/storage/overlay/<other>/merged), or any overlay of the host,
 * read as its owners and written.  So it is granted only to an overlay mounted in the
 * bundle (containerd's shim, seerun sandbox), or to the very layer the engine's own records
 * give this container: containers/storage (podman, CRI-O, buildah) and Docker's layer
 * database.  Judged on the descriptor that is mounted: the root of an overlay mount (statx),
 * where the kernel says it is mounted (/proc/self/fd), never root.path's text. */
#ifndef SEERUN_ROOT_OVERLAY_H
#define SEERUN_ROOT_OVERLAY_H

#include "arena.h"

/* root_fd: the judged root.path (an overlay); bundlefd: the bundle.  Returns why it is the
 * engine's ("mounted in the bundle", ...), or NULL with *why_not saying why not (both in a). */
const char *sr_root_overlay_owner(struct sr_arena *a, int root_fd, int bundlefd,
                                  const char **why_not);

#endif
