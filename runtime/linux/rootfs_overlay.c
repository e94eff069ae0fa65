#include "build.h"

#include "rootfs_overlay.h"

#include "cleanup.h"
#include "mount.h"
#include "mountapi.h"
#include "namespaces.h"
#include "overlay_layers.h"
#include "paths.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct layer_fds {
  int fd[SR_OVERLAY_MAX_LAYERS + 1];
  size_t n;
};

static void close_layer_fds(struct layer_fds **p)
{
  if (*p == NULL)
    return;
  for (size_t i = 0; i < (*p)->n; i++)
    close((*p)->fd[i]);
  free(*p);
}

/* The layers of the overlay mounted at rootfs_path, from its mountinfo line. */
static int read_layers(const char *rootfs_path, int root_fd, struct sr_overlay_layers *l,
                       sr_error_t *err)
{
  struct statx stx;
  /* The overlay the policy judged (root_fd), not whatever the name leads to now. */
  if (statx(root_fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &stx) < 0)
    return sr_error_sys(err, "statx `%s`", rootfs_path);
  if (!(stx.stx_mask & STATX_MNT_ID) || !(stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT))
    return sr_error_make(err, 0, "the kernel does not report mount ids");
  if (!(stx.stx_attributes & STATX_ATTR_MOUNT_ROOT))
    return sr_error_make(err, 0, "`%s` is not the root of its overlay mount", rootfs_path);
  _cleanup_fclose_ FILE *f = fopen("/proc/self/mountinfo", "re");
  if (f == NULL)
    return sr_error_sys(err, "open /proc/self/mountinfo");
  _cleanup_free_ char *line = NULL;
  size_t cap = 0;
  const char *opts = NULL;
  while (opts == NULL && getline(&line, &cap, f) > 0)
    opts = sr_overlay_layers_superopts(line, stx.stx_mnt_id);
  if (opts == NULL)
    return sr_error_make(err, 0, "mount %llu of `%s` is not in /proc/self/mountinfo",
                         (unsigned long long)stx.stx_mnt_id, rootfs_path);
  /* Engines whose options would pass a page give their layers relative to their storage
   * directory (.../overlay/<id>/merged -> .../overlay), where they mounted from: where the
   * kernel says the judged overlay is mounted, not what root.path's text says. */
  char copy[PATH_MAX], link[64];
  snprintf(link, sizeof(link), "/proc/self/fd/%d", root_fd);
  ssize_t n = readlink(link, copy, sizeof(copy) - 1);
  if (n <= 0 || (size_t)n >= sizeof(copy) - 1 || copy[0] != '/')
    return sr_error_make(err, 0, "where the overlay of `%s` is mounted cannot be told",
                         rootfs_path);
  copy[n] = '\0';
  char *base = dirname(dirname(copy));
  return sr_overlay_layers_parse(opts, base, l, err);
}

/* Appends a detached idmapped clone of the layer at path to fds. */
static int open_idmapped_layer(const char *path, int userns, struct layer_fds *fds,
                               sr_error_t *err)
{
  _cleanup_close_ int fd =
      sr_mountapi_open_tree(AT_FDCWD, path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
  if (fd < 0)
    return sr_error_sys(err, "overlay layer `%s`", path);
  struct sr_mount_attr attr = {.attr_set = MOUNT_ATTR_IDMAP, .userns_fd = (uint64_t)userns};
  if (sr_mountapi_mount_setattr(fd, "", AT_EMPTY_PATH, &attr) < 0)
    return sr_error_sys(err, "idmap overlay layer `%s`", path);
  fds->fd[fds->n++] = steal_fd(fd);
  return 0;
}

static int fs_error(int fs, const char *what, sr_error_t *err)
{
  int saved = errno;
  char log[512];
  sr_mount_fs_log(fs, log, sizeof(log));
  return sr_error_make(err, saved, "overlay of idmapped layers: %s%s%s%s", what, log[0] ? " (" : "",
                       log, log[0] ? ")" : "");
}

/* Layers as "lowerdir+" one by one (Linux 6.8+: no limit of one page), else as one "lowerdir"
 * list, which fsconfig caps at 256 bytes. */
static int set_lower_layers(int fs, const struct layer_fds *fds, sr_error_t *err)
{
  char path[32];
  size_t i = 0;
  for (; i < fds->n; i++) {
    sr_paths_fd_path(path, sizeof(path), fds->fd[i]);
    if (sr_mountapi_fsconfig(fs, FSCONFIG_SET_STRING, "lowerdir+", path, 0) < 0)
      break;
  }
  if (i == fds->n)
    return 0;
  if (i > 0 || errno != EINVAL)
    return fs_error(fs, "lowerdir+", err);
  char list[256];
  size_t used = 0;
  for (i = 0; i < fds->n; i++) {
    int w = snprintf(list + used, sizeof(list) - used, "%s/proc/self/fd/%d", i ? ":" : "",
                     fds->fd[i]);
    if (w < 0 || (size_t)w >= sizeof(list) - used)
      return sr_error_make(err, E2BIG, "overlay of idmapped layers: %zu layers do not fit in "
                                       "one lowerdir option on this kernel", fds->n);
    used += (size_t)w;
  }
  if (sr_mountapi_fsconfig(fs, FSCONFIG_SET_STRING, "lowerdir", list, 0) < 0)
    return fs_error(fs, "lowerdir", err);
  return 0;
}

int sr_rootfs_overlay_idmapped(const char *rootfs_path, int root_fd, const struct sr_linux *maps,
                               int *tree_fd, sr_error_t *err)
{
  _cleanup_(sr_overlay_layers_release) struct sr_overlay_layers layers = {0};
  if (read_layers(rootfs_path, root_fd, &layers, err) < 0)
    return -1;
  _cleanup_close_ int userns = -1;
  if (sr_ns_userns_open_with_maps(maps, &userns, err) < 0)
    return -1;
  _cleanup_(close_layer_fds) struct layer_fds *fds = calloc(1, sizeof(*fds));
  if (fds == NULL)
    return sr_error_make(err, ENOMEM, "overlay layers");
  if (layers.upper && open_idmapped_layer(layers.upper, userns, fds, err) < 0)
    return -1;
  for (size_t i = 0; i < layers.n_lower; i++)
    if (open_idmapped_layer(layers.lower[i], userns, fds, err) < 0)
      return -1;
  _cleanup_close_ int fs = sr_mountapi_fsopen("overlay", FSOPEN_CLOEXEC);
  if (fs < 0)
    return sr_error_sys(err, "fsopen overlay");
  if (set_lower_layers(fs, fds, err) < 0)
    return -1;
  if (layers.metacopy && sr_mountapi_fsconfig(fs, FSCONFIG_SET_STRING, "metacopy", "on", 0) < 0)
    return fs_error(fs, "metacopy=on", err);
  if (layers.userxattr && sr_mountapi_fsconfig(fs, FSCONFIG_SET_FLAG, "userxattr", NULL, 0) < 0)
    return fs_error(fs, "userxattr", err);
  if (sr_mountapi_fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
    return fs_error(fs, "create", err);
  int mnt = sr_mountapi_fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_RDONLY);
  if (mnt < 0)
    return fs_error(fs, "fsmount", err);
  *tree_fd = mnt;
  return 0;
}
