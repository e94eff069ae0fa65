/* --workspace HOST:DEST: a host directory the sandbox may edit without writing it.
 *
 * The code sees DEST as an overlay that seerun mounts in its own mount namespace:
 *
 * - the lower layer is a detached clone of HOST (open_tree OPEN_TREE_CLONE, not recursive: no
 *   mount below HOST comes along), read-only and idmapped so that HOST's owner appears as the
 *   sandbox user (read-only: the ids it maps grant no write to anything of the host);
 * - the upper layer is a tmpfs of seerun's (--workspace-size, and an inode bound), where
 *   filling it is ENOSPC inside, never the host's disk; redirect_dir, metacopy, index and xino
 *   off, so that the upper layer is a plain tree (overlay_diff.h reads it);
 * - each protected path (.git, --protect) is a read-only clone of the lower's, mounted over
 *   it: writes there fail inside, and --apply never touches them anyway.
 *
 * HOST is opened once, with no symlink anywhere in its path (RESOLVE_NO_SYMLINKS), and held:
 * the policy judges the bind of HOST like any other, the descriptor it judged must be that
 * directory, and everything after (the snapshot, the clone, --apply) goes through the held
 * descriptor.  After the run, once no process of the sandbox is left, the upper layer is
 * compared with the clone (the result lists the changes) and, with --apply, copied back
 * (sandbox_apply.c).  Every mount lives in seerun's private mount namespace (and the bundle's
 * mount point): nothing outlives the run however it ends. */
#include "build.h"

#include "sandbox.h"

#include "cleanup.h"
#include "mount.h"
#include "mountapi.h"
#include "namespaces.h"
#include "paths.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define RESOLVE (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV)

void sr_sandbox_workspace_init(struct sr_sandbox_cow *w)
{
  memset(w, 0, sizeof(*w));
  w->host = w->lower = w->upper_mnt = w->upper = w->overlay = -1;
}

void sr_sandbox_workspace_release(struct sr_sandbox_cow *w)
{
  int *fds[] = {&w->host, &w->lower, &w->upper_mnt, &w->upper, &w->overlay};
  for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
    if (*fds[i] >= 0) {
      close(*fds[i]);
      *fds[i] = -1;
    }
  free(w->host_abs);
  w->host_abs = NULL;
  sr_sandbox_apply_snapshot_release(&w->snap);
  sr_overlay_diff_release(&w->diff);
  sr_sandbox_apply_release(&w->apply);
}

int sr_sandbox_workspace_open(const struct sr_sandbox_opts *o, const struct sr_sandbox_caller *c,
                              struct sr_sandbox_cow *w, sr_error_t *err)
{
  w->host_abs = sr_sandbox_audit_abs_path(c, o->ws_host);
  if (w->host_abs == NULL)
    return sr_error_make(err, ENOMEM, "--workspace `%s`", o->ws_host);
  /* No symlink on the way (the path is then what the policy judges by name too), and the
   * directory itself held from here on: a path swapped during the run redirects nothing. */
  w->host = sr_paths_openat2(AT_FDCWD, w->host_abs, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0,
                             RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
  if (w->host < 0) {
    if (errno == ELOOP)
      return sr_error_make(err, 0, "--workspace `%s`: a symbolic link on the path (give the "
                                   "directory's real path)", o->ws_host);
    return sr_error_sys(err, "--workspace `%s`", o->ws_host);
  }
  if (fstat(w->host, &w->host_st) < 0)
    return sr_error_sys(err, "--workspace `%s`", o->ws_host);
  /* What the overlay will show: this mount only, none below it. */
  w->lower =
      sr_mountapi_open_tree(w->host, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
  if (w->lower < 0)
    return sr_error_sys(err, "--workspace `%s`: clone the directory", o->ws_host);
  if (sr_sandbox_apply_snapshot_take(w->lower, o->ws_protect, o->n_ws_protect, &w->snap, err) < 0)
    return sr_error_wrap(err, "--workspace `%s`", o->ws_host);
  return 0;
}

/* The user namespace whose only mapping is the workspace owner's ids to the sandbox user's
 * host ids: the lower's idmap. */
static int owner_userns(const struct sr_sandbox_cow *w, uid_t uid, gid_t gid, int *fd,
                        sr_error_t *err)
{
  struct sr_id_map um = {.container_id = w->host_st.st_uid, .host_id = uid, .size = 1};
  struct sr_id_map gm = {.container_id = w->host_st.st_gid, .host_id = gid, .size = 1};
  struct sr_linux maps = {0};
  maps.uid_mappings = &um;
  maps.n_uid_mappings = 1;
  maps.gid_mappings = &gm;
  maps.n_gid_mappings = 1;
  return sr_ns_userns_open_with_maps(&maps, fd, err);
}

static int upper_tmpfs(const struct sr_sandbox_opts *o, struct sr_sandbox_cow *w, uid_t uid,
                       gid_t gid, int *work, sr_error_t *err)
{
  _cleanup_close_ int fs = sr_mountapi_fsopen("tmpfs", FSOPEN_CLOEXEC);
  if (fs < 0)
    return sr_error_sys(err, "--workspace: fsopen tmpfs");
  char size[32], inodes[32];
  snprintf(size, sizeof(size), "%llu", (unsigned long long)o->ws_size);
  /* A million empty files fill no bytes: the inodes are bounded too (one per 4 KiB). */
  uint64_t n = o->ws_size / 4096;
  snprintf(inodes, sizeof(inodes), "%llu", (unsigned long long)(n < 1024 ? 1024 : n));
  if (sr_mountapi_fsconfig(fs, FSCONFIG_SET_STRING, "size", size, 0) < 0 ||
      sr_mountapi_fsconfig(fs, FSCONFIG_SET_STRING, "nr_inodes", inodes, 0) < 0 ||
      sr_mountapi_fsconfig(fs, FSCONFIG_SET_STRING, "mode", "0700", 0) < 0 ||
      sr_mountapi_fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
    return sr_error_sys(err, "--workspace: create the upper layer's tmpfs");
  w->upper_mnt = sr_mountapi_fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
  if (w->upper_mnt < 0)
    return sr_error_sys(err, "--workspace: fsmount the upper layer");
  /* The merged root takes the upper directory's owner and mode: HOST's, as the sandbox user. */
  if (mkdirat(w->upper_mnt, "upper", w->host_st.st_mode & 07777) < 0 ||
      fchownat(w->upper_mnt, "upper", uid, gid, AT_SYMLINK_NOFOLLOW) < 0 ||
      fchmodat(w->upper_mnt, "upper", w->host_st.st_mode & 07777, 0) < 0 ||
      mkdirat(w->upper_mnt, "work", 0700) < 0)
    return sr_error_sys(err, "--workspace: the upper layer's directories");
  w->upper = openat(w->upper_mnt, "upper", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  *work = openat(w->upper_mnt, "work", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (w->upper < 0 || *work < 0)
    return sr_error_sys(err, "--workspace: open the upper layer");
  return 0;
}

static int ovl_error(int fs, const char *what, sr_error_t *err)
{
  int saved = errno;
  char log[512];
  sr_mount_fs_log(fs, log, sizeof(log));
  return sr_error_make(err, saved, "--workspace: overlay: %s%s%s%s", what, log[0] ? " (" : "",
                       log, log[0] ? ")" : "");
}

static int make_overlay(struct sr_sandbox_cow *w, int work, sr_error_t *err)
{
  _cleanup_close_ int fs = sr_mountapi_fsopen("overlay", FSOPEN_CLOEXEC);
  if (fs < 0)
    return sr_error_sys(err, "--workspace: fsopen overlay");
  char lower[32], upper[32], workdir[32];
  sr_paths_fd_path(lower, sizeof(lower), w->lower);
  sr_paths_fd_path(upper, sizeof(upper), w->upper);
  sr_paths_fd_path(workdir, sizeof(workdir), work);
  if (sr_mountapi_fsconfig(fs, FSCONFIG_SET_STRING, "lowerdir+", lower, 0) < 0 &&
      sr_mountapi_fsconfig(fs, FSCONFIG_SET_STRING, "lowerdir", lower, 0) < 0)
    return ovl_error(fs, "lowerdir", err);
  if (sr_mountapi_fsconfig(fs, FSCONFIG_SET_STRING, "upperdir", upper, 0) < 0)
    return ovl_error(fs, "upperdir", err);
  if (sr_mountapi_fsconfig(fs, FSCONFIG_SET_STRING, "workdir", workdir, 0) < 0)
    return ovl_error(fs, "workdir", err);
  /* A plain upper layer: a rename of a lower directory is EXDEV inside (tools copy), no
   * metadata-only copy-up, no index or inode numbers of another layer recorded in it. */
  static const char *const off[] = {"redirect_dir", "metacopy", "index", "xino", "nfs_export"};
  for (size_t i = 0; i < sizeof(off) / sizeof(off[0]); i++)
    if (sr_mountapi_fsconfig(fs, FSCONFIG_SET_STRING, off[i], "off", 0) < 0)
      return ovl_error(fs, off[i], err);
  if (sr_mountapi_fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
    return ovl_error(fs, "create", err);
  w->overlay = sr_mountapi_fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
  if (w->overlay < 0)
    return ovl_error(fs, "fsmount", err);
  return 0;
}

/* Each protected path that exists (as itself, not through a symlink): the lower's, read-only,
 * over the overlay's. */
static int protect(const struct sr_sandbox_opts *o, struct sr_sandbox_cow *w, sr_error_t *err)
{
  for (size_t i = 0; i < o->n_ws_protect; i++) {
    const char *p = o->ws_protect[i];
    _cleanup_close_ int src =
        sr_paths_openat2(w->lower, p, O_PATH | O_NOFOLLOW | O_CLOEXEC, 0, RESOLVE);
    struct stat st;
    if (src < 0 || fstat(src, &st) < 0 || !(S_ISDIR(st.st_mode) || S_ISREG(st.st_mode)))
      continue; /* none there (or a symlink): --apply still refuses anything there */
    _cleanup_close_ int clone =
        sr_mountapi_open_tree(src, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
    if (clone < 0)
      return sr_error_sys(err, "--protect `%s`: clone it", p);
    /* Read-only already (a clone of the read-only lower); said again on this mount. */
    struct sr_mount_attr ro = {.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID |
                                           MOUNT_ATTR_NODEV};
    if (sr_mountapi_mount_setattr(clone, "", AT_EMPTY_PATH, &ro) < 0)
      return sr_error_sys(err, "--protect `%s`: make it read-only", p);
    _cleanup_close_ int target =
        sr_paths_openat2(w->overlay, p, O_PATH | O_NOFOLLOW | O_CLOEXEC, 0, RESOLVE);
    if (target < 0)
      return sr_error_sys(err, "--protect `%s`: in the overlay", p);
    if (sr_mountapi_attach_mount(clone, target) < 0)
      return sr_error_sys(err, "--protect `%s`: mount it read-only", p);
    w->protect_mounted++;
  }
  return 0;
}

int sr_sandbox_workspace_mount(const struct sr_sandbox_opts *o, struct sr_sandbox_cow *w, uid_t uid,
                               gid_t gid, const char *target, int judged, sr_error_t *err)
{
  /* The bind the policy judged is the directory held since the start (judge the object). */
  struct stat st;
  if (judged < 0 || fstat(judged, &st) < 0 || st.st_dev != w->host_st.st_dev ||
      st.st_ino != w->host_st.st_ino)
    return sr_error_make(err, 0, "--workspace `%s`: the directory the policy judged is not the "
                                 "one opened (replaced meanwhile?)", o->ws_host);
  if (uid == (uid_t)-1)
    return sr_error_make(err, 0, "--workspace: the sandbox user has no host id to show the "
                                 "directory's owner as");
  _cleanup_close_ int userns = -1;
  if (owner_userns(w, uid, gid, &userns, err) < 0)
    return sr_error_wrap(err, "--workspace: the lower layer's idmap");
  struct sr_mount_attr attr = {.attr_set = MOUNT_ATTR_IDMAP | MOUNT_ATTR_RDONLY |
                                           MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
                               .userns_fd = (uint64_t)userns};
  if (sr_mountapi_mount_setattr(w->lower, "", AT_EMPTY_PATH, &attr) < 0)
    return sr_error_sys(err, "--workspace `%s`: idmap the lower layer", o->ws_host);
  _cleanup_close_ int work = -1;
  if (upper_tmpfs(o, w, uid, gid, &work, err) < 0 || make_overlay(w, work, err) < 0)
    return -1;
  if (sr_mountapi_move_mount(w->overlay, "", AT_FDCWD, target, MOVE_MOUNT_F_EMPTY_PATH) < 0)
    return sr_error_sys(err, "--workspace: attach the overlay at `%s`", target);
  return protect(o, w, err);
}

int sr_sandbox_workspace_finish(const struct sr_sandbox_opts *o, struct sr_sandbox_cow *w,
                                const char *unfinished, sr_error_t *err)
{
  struct sr_odiff_limits lim = SR_ODIFF_LIMITS_DEFAULT;
  /* The lower as the overlay showed it (the clone, no mount below it), listable. */
  _cleanup_close_ int lower = openat(w->lower, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (lower < 0)
    return sr_error_sys(err, "--workspace: open the lower layer");
  if (sr_overlay_diff(w->upper, lower, &lim, &w->diff, err) < 0)
    return sr_error_wrap(err, "--workspace: the changes");
  w->diffed = true;
  if (!o->ws_apply)
    return 0;
  if (sr_sandbox_apply(w->host, w->upper, &w->diff, &w->snap, o->ws_protect, o->n_ws_protect,
                       o->ws_size, unfinished, &w->apply, err) < 0)
    return sr_error_wrap(err, "--workspace `%s`", o->ws_host);
  return 0;
}
