/* The "cgroup" mount engines put in config.json: the container's own view of the cgroup
 * hierarchy, whatever the host's layout.  On cgroup v2 it is a cgroup2 mount (inside a cgroup
 * namespace) or a bind of the container's cgroup; on v1 (and hybrid) a tmpfs holding a bind of
 * the container's cgroup from every hierarchy, as runc does.  A "cgroup2" mount is the unified
 * hierarchy on any layout (on hybrid, the one at <root>/unified). */
#include "build.h"

#include "mount_cgroup.h"

#include "cleanup.h"
#include "mount.h"
#include "mountapi.h"
#include "path.h"
#include "paths.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>


/* A bind of <hierarchy>/<container path>, or of the hierarchy root when the container has no
 * cgroup there. */
static int bind_hierarchy(const char *hierarchy, const char *path, int *out, sr_error_t *err)
{
  char src[PATH_MAX];
  if (sr_path_join(src, sizeof(src), hierarchy, path, err) < 0)
    return sr_error_wrap(err, "cgroup mount");
  int fd = sr_mountapi_open_tree(AT_FDCWD, src, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
  if (fd < 0)
    return sr_error_sys(err, "cgroup mount: bind `%s`", src);
  *out = fd;
  return 0;
}

/* The unified hierarchy: a new cgroup2 instance inside a cgroup namespace (whose root is the
 * container's cgroup), else a bind of the container's cgroup from the host's unified mount
 * (unified: SR_CGROUP_ROOT on v2, its "unified" mount on hybrid, NULL when there is none). */
static int v2_mount(const struct sr_mount *m, const char *unified, const struct sr_cgroup *cg,
                    bool cgroupns, int target, sr_error_t *err)
{
  _cleanup_close_ int mfd = -1;
  unsigned attr = (unsigned)sr_mount_flags_to_attr(m->opts.flags);
  if (cgroupns) {
    _cleanup_close_ int fsfd = sr_mountapi_fsopen("cgroup2", FSOPEN_CLOEXEC);
    if (fsfd < 0 ||
        sr_mountapi_fsconfig(fsfd, FSCONFIG_SET_STRING, "source",
                             m->source && m->source[0] ? m->source : "cgroup2", 0) < 0 ||
        sr_mountapi_fsconfig(fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
      return sr_error_sys(err, "mount cgroup2 on `%s`", m->destination);
    mfd = sr_mountapi_fsmount(fsfd, FSMOUNT_CLOEXEC, attr);
    if (mfd < 0)
      return sr_error_sys(err, "mount cgroup2 on `%s`", m->destination);
  } else {
    /* A new instance outside a cgroup namespace would show the host's whole hierarchy. */
    if (unified == NULL)
      return sr_error_make(err, 0,
                           "mount cgroup2 on `%s`: the host has no cgroup2 hierarchy to bind "
                           "the container's cgroup from, and the container has no cgroup "
                           "namespace",
                           m->destination);
    if (bind_hierarchy(unified, cg->path, &mfd, err) < 0)
      return -1;
    struct sr_mount_attr a = {.attr_set = attr};
    if (attr && sr_mountapi_mount_setattr(mfd, "", AT_EMPTY_PATH, &a) < 0)
      return sr_error_sys(err, "cgroup mount on `%s`: set options", m->destination);
  }
  if (sr_mountapi_attach_mount(mfd, target) < 0)
    return sr_error_sys(err, "attach cgroup mount on `%s`", m->destination);
  return 0;
}

static int v1_mount(const struct sr_mount *m, const struct sr_cgroup *cg, int target,
                    sr_error_t *err)
{
  _cleanup_close_ int fsfd = sr_mountapi_fsopen("tmpfs", FSOPEN_CLOEXEC);
  if (fsfd < 0 || sr_mountapi_fsconfig(fsfd, FSCONFIG_SET_STRING, "source", "tmpfs", 0) < 0 ||
      sr_mountapi_fsconfig(fsfd, FSCONFIG_SET_STRING, "mode", "755", 0) < 0 ||
      sr_mountapi_fsconfig(fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
    return sr_error_sys(err, "cgroup mount on `%s`: tmpfs", m->destination);
  uint64_t attr = sr_mount_flags_to_attr(m->opts.flags);
  /* Populated first, made read-only (if asked) last. */
  _cleanup_close_ int tmp =
      sr_mountapi_fsmount(fsfd, FSMOUNT_CLOEXEC, (unsigned)(attr & ~MOUNT_ATTR_RDONLY));
  if (tmp < 0)
    return sr_error_sys(err, "cgroup mount on `%s`: tmpfs", m->destination);
  if (sr_mountapi_attach_mount(tmp, target) < 0)
    return sr_error_sys(err, "attach cgroup mount on `%s`", m->destination);
  _cleanup_close_ int dir = openat(tmp, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  int hostfd = open(SR_CGROUP_ROOT, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0 || hostfd < 0) {
    if (hostfd >= 0)
      close(hostfd);
    return sr_error_sys(err, "cgroup mount on `%s`: open", m->destination);
  }
  _cleanup_dir_ DIR *d = fdopendir(hostfd);
  if (d == NULL) {
    close(hostfd);
    return sr_error_sys(err, "read %s", SR_CGROUP_ROOT);
  }
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    if (de->d_name[0] == '.')
      continue;
    if (de->d_type == DT_LNK) {
      /* cpu -> cpu,cpuacct and the like. */
      char link[PATH_MAX];
      ssize_t n = readlinkat(dirfd(d), de->d_name, link, sizeof(link) - 1);
      if (n > 0) {
        link[n] = '\0';
        if (symlinkat(link, dir, de->d_name) < 0 && errno != EEXIST)
          return sr_error_sys(err, "cgroup mount: symlink %s", de->d_name);
      }
      continue;
    }
    char hierarchy[PATH_MAX];
    snprintf(hierarchy, sizeof(hierarchy), "%s/%s", SR_CGROUP_ROOT, de->d_name);
    struct statfs sfs;
    if (statfs(hierarchy, &sfs) < 0 ||
        (sfs.f_type != CGROUP_SUPER_MAGIC && sfs.f_type != CGROUP2_SUPER_MAGIC))
      continue;
    if (mkdirat(dir, de->d_name, 0755) < 0 && errno != EEXIST)
      return sr_error_sys(err, "cgroup mount: mkdir %s", de->d_name);
    _cleanup_close_ int sub =
        openat(dir, de->d_name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    _cleanup_close_ int bind = -1;
    if (sub < 0)
      return sr_error_sys(err, "cgroup mount: open %s", de->d_name);
    char probe[PATH_MAX];
    if (sr_path_join(probe, sizeof(probe), hierarchy, cg->path, err) < 0)
      return sr_error_wrap(err, "cgroup mount");
    if (access(probe, F_OK) < 0)
      continue; /* the container has no cgroup in this hierarchy */
    if (bind_hierarchy(hierarchy, cg->path, &bind, err) < 0)
      return -1;
    struct sr_mount_attr a = {.attr_set = attr};
    if (attr && sr_mountapi_mount_setattr(bind, "", AT_EMPTY_PATH, &a) < 0)
      return sr_error_sys(err, "cgroup mount: set options of %s", de->d_name);
    if (sr_mountapi_attach_mount(bind, sub) < 0)
      return sr_error_sys(err, "cgroup mount: attach %s", de->d_name);
  }
  if (attr & MOUNT_ATTR_RDONLY) {
    struct sr_mount_attr a = {.attr_set = MOUNT_ATTR_RDONLY};
    if (sr_mountapi_mount_setattr(tmp, "", AT_EMPTY_PATH, &a) < 0)
      return sr_error_sys(err, "cgroup mount on `%s`: make read-only", m->destination);
  }
  return 0;
}

int sr_mount_cgroup(const struct sr_mount *m, const struct sr_cgroup *cg, bool cgroupns,
                    int root_fd, sr_error_t *err)
{
  _cleanup_close_ int target = -1;
  if (sr_paths_mkpath_in_root(root_fd, m->destination, SR_MKPATH_DIR, &target, err) < 0)
    return sr_error_wrap(err, "mount destination");
  if (cg == NULL)
    return sr_error_make(err, 0, "cgroup mount on `%s`: the container has no cgroup",
                         m->destination);
  /* "cgroup2" asks for the unified hierarchy whatever the host's layout (on hybrid, the one
   * mounted at <root>/unified); "cgroup" for the host's layout. */
  if (cg->version == 2)
    return v2_mount(m, SR_CGROUP_ROOT, cg, cgroupns, target, err);
  if (strcmp(m->type, "cgroup2") == 0)
    return v2_mount(m, cg->hybrid ? SR_CGROUP_ROOT "/unified" : NULL, cg, cgroupns, target, err);
  return v1_mount(m, cg, target, err);
}
