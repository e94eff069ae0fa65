/* The new mount API (fsopen, fsmount, fspick, open_tree, move_mount, mount_setattr) as thin
 * wrappers: glibc 2.36 declares some of them, not all, and not on every distribution. */
#ifndef SEERUN_MOUNTAPI_H
#define SEERUN_MOUNTAPI_H

#include <linux/mount.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef MOUNT_ATTR_NOSYMFOLLOW
#define MOUNT_ATTR_NOSYMFOLLOW 0x00200000
#endif
#ifndef MOUNT_ATTR_IDMAP
#define MOUNT_ATTR_IDMAP 0x00100000
#endif
/* statx: the mount an object is on, and whether it is that mount's root (Linux 5.8). */
#ifndef STATX_MNT_ID
#define STATX_MNT_ID 0x00001000U
#endif
#ifndef STATX_ATTR_MOUNT_ROOT
#define STATX_ATTR_MOUNT_ROOT 0x00002000
#endif
#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif

struct sr_mount_attr {
  uint64_t attr_set;
  uint64_t attr_clr;
  uint64_t propagation;
  uint64_t userns_fd;
};

static inline int sr_mountapi_fsopen(const char *fs, unsigned flags)
{
  return (int)syscall(SYS_fsopen, fs, flags);
}
static inline int sr_mountapi_fsconfig(int fd, unsigned cmd, const char *key, const void *value,
                                       int aux)
{
  return (int)syscall(SYS_fsconfig, fd, cmd, key, value, aux);
}
static inline int sr_mountapi_fsmount(int fd, unsigned flags, unsigned attr_flags)
{
  return (int)syscall(SYS_fsmount, fd, flags, attr_flags);
}
static inline int sr_mountapi_fspick(int dfd, const char *path, unsigned flags)
{
  return (int)syscall(SYS_fspick, dfd, path, flags);
}
static inline int sr_mountapi_open_tree(int dfd, const char *path, unsigned flags)
{
  return (int)syscall(SYS_open_tree, dfd, path, flags);
}
static inline int sr_mountapi_move_mount(int from_dfd, const char *from, int to_dfd, const char *to,
                                         unsigned flags)
{
  return (int)syscall(SYS_move_mount, from_dfd, from, to_dfd, to, flags);
}
static inline int sr_mountapi_mount_setattr(int dfd, const char *path, unsigned flags,
                                            struct sr_mount_attr *attr)
{
  return (int)syscall(SYS_mount_setattr, dfd, path, flags, attr, sizeof(*attr));
}

/* Attaches a detached mount (from fsmount or open_tree) onto the target descriptor, without
 * resolving any path again. */
static inline int sr_mountapi_attach_mount(int mount_fd, int target_fd)
{
  return sr_mountapi_move_mount(mount_fd, "", target_fd, "",
                                MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH);
}

#endif
