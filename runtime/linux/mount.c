#include "build.h"

#include "mount.h"

#include "lsm.h"

#include "cleanup.h"
#include "mount_paths.h"
#include "mountapi.h"
#include "namespaces.h"
#include "paths.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef MS_NOSYMFOLLOW
#define MS_NOSYMFOLLOW 256
#endif

uint64_t sr_mount_flags_to_attr(unsigned long flags)
{
  uint64_t a = 0;
  if (flags & MS_RDONLY)
    a |= MOUNT_ATTR_RDONLY;
  if (flags & MS_NOSUID)
    a |= MOUNT_ATTR_NOSUID;
  if (flags & MS_NODEV)
    a |= MOUNT_ATTR_NODEV;
  if (flags & MS_NOEXEC)
    a |= MOUNT_ATTR_NOEXEC;
  if (flags & MS_NODIRATIME)
    a |= MOUNT_ATTR_NODIRATIME;
  if (flags & MS_NOSYMFOLLOW)
    a |= MOUNT_ATTR_NOSYMFOLLOW;
  if (flags & MS_NOATIME)
    a |= MOUNT_ATTR_NOATIME;
  else if (flags & MS_STRICTATIME)
    a |= MOUNT_ATTR_STRICTATIME;
  return a;
}

static bool has_atime(unsigned long flags)
{
  return (flags & (MS_NOATIME | MS_STRICTATIME | MS_RELATIME)) != 0;
}

/* The attribute change a bind mount's own flags ask for ("bind,ro,nosuid", "rw", ...). */
static void bind_attr(const struct sr_mount_opts *o, struct sr_mount_attr *attr)
{
  /* All of it: a stray propagation or userns_fd is EINVAL, or worse, a propagation change. */
  memset(attr, 0, sizeof(*attr));
  attr->attr_set = sr_mount_flags_to_attr(o->flags) & ~MOUNT_ATTR__ATIME;
  attr->attr_clr = sr_mount_flags_to_attr(o->clear) & ~MOUNT_ATTR__ATIME;
  if (has_atime(o->flags)) {
    attr->attr_clr |= MOUNT_ATTR__ATIME;
    attr->attr_set |= sr_mount_flags_to_attr(o->flags) & MOUNT_ATTR__ATIME;
  }
}

static int apply_recursive_attrs(int fd, const struct sr_mount_opts *o, const char *dest,
                                 sr_error_t *err)
{
  struct sr_mount_attr attr = {.attr_set = o->rec_attr_set, .attr_clr = o->rec_attr_clr};
  if (o->rec_atime_set) {
    attr.attr_clr |= MOUNT_ATTR__ATIME;
    attr.attr_set |= o->rec_atime;
  }
  if (attr.attr_set == 0 && attr.attr_clr == 0)
    return 0;
  if (sr_mountapi_mount_setattr(fd, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr) < 0)
    return sr_error_sys(err, "mount `%s`: set recursive options", dest);
  return 0;
}

void sr_mount_bind_plan_close(struct sr_bind_plan *plan)
{
  for (size_t i = 0; i < plan->n; i++) {
    if (plan->tree_fd[i] >= 0)
      close(plan->tree_fd[i]);
    for (size_t k = 0; plan->path_fd && plan->path_fd[i] && k < plan->n_paths[i]; k++)
      if (plan->path_fd[i][k] >= 0)
        close(plan->path_fd[i][k]);
    if (plan->path_fd)
      free(plan->path_fd[i]);
  }
  free(plan->tree_fd);
  free(plan->is_dir);
  free(plan->path_fd);
  free(plan->n_paths);
  free(plan->bundle);
  *plan = (struct sr_bind_plan){0};
}

/* A mount on /dev is made writable and made read-only at the end (sr_mount_rootfs_finish): its own
 * submounts (/dev/pts, /dev/shm) and the device nodes need mount points in it, as runc. */
static bool is_dev(const struct sr_mount *m)
{
  return strcmp(m->destination, "/dev") == 0;
}

/* config.json's index of a mount ("mounts[3]"); -1 for one the policy added. */
static long config_index(const struct sr_mount *m)
{
  char *end;
  if (m->field == NULL || strncmp(m->field, "mounts[", 7) != 0 || m->field[7] < '0' ||
      m->field[7] > '9')
    return -1;
  long i = strtol(m->field + 7, &end, 10);
  return end[0] == ']' && end[1] == '\0' ? i : -1;
}

static int prepare_bind(const struct sr_mount *m, const struct sr_bind_sources *srcs, int *tree,
                        bool *is_dir, sr_error_t *err)
{
  const char *src = m->source;
  long idx = config_index(m);
  if (idx < 0 || (size_t)idx >= srcs->n)
    return sr_error_make(err, 0, "%s.source: `%s`: the policy judged no such bind source "
                                 "(runtime error)",
                         m->field, src);
  if (srcs->fd[idx] < 0)
    return sr_error_make(err, srcs->err_no[idx] ? srcs->err_no[idx] : ENOENT,
                         "%s: bind source `%s`", m->field, src);
  /* The descriptor the policy judged, not the path again: a source swapped for a symlink to /
   * between the check and the mount would bind the host's / (TOCTOU). */
  unsigned flags =
      OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | (m->opts.rbind ? AT_RECURSIVE : 0);
  _cleanup_close_ int fd = sr_mountapi_open_tree(srcs->fd[idx], "", flags);
  if (fd < 0)
    return sr_error_sys(err, "%s: bind source `%s`", m->field, src);
  struct stat st;
  if (fstat(fd, &st) < 0)
    return sr_error_sys(err, "%s: stat `%s`", m->field, src);
  *is_dir = S_ISDIR(st.st_mode);
  /* A slave of the host's mount: host mounts still show up inside, but nothing the container
   * mounts below it propagates back to the host. */
  struct sr_mount_attr prop = {.propagation = MS_SLAVE};
  if (sr_mountapi_mount_setattr(fd, "", AT_EMPTY_PATH | AT_RECURSIVE, &prop) < 0)
    return sr_error_sys(err, "%s: make `%s` a slave mount", m->field, src);
  struct sr_mount_attr attr;
  bind_attr(&m->opts, &attr);
  if (is_dev(m))
    attr.attr_set &= ~(uint64_t)MOUNT_ATTR_RDONLY; /* made read-only at the end */
  if ((attr.attr_set || attr.attr_clr) &&
      sr_mountapi_mount_setattr(fd, "", AT_EMPTY_PATH, &attr) < 0)
    return sr_error_sys(err, "%s: set options of `%s` on `%s`", m->field, src,
                        m->destination);
  if (apply_recursive_attrs(fd, &m->opts, m->destination, err) < 0)
    return -1;
  *tree = steal_fd(fd);
  return 0;
}

/* An overlay's layers: the descriptors the policy judged, kept for the init (which cannot
 * mount them as they are: they are mounts of the host's namespace, see open_layer). */
static int prepare_overlay_paths(const struct sr_mount *m, const struct sr_bind_sources *srcs,
                                 int **out, size_t *n_out, sr_error_t *err)
{
  long idx = config_index(m);
  struct sr_mount_data d;
  _cleanup_(sr_arena_release) struct sr_arena a = {0};
  if (sr_mount_paths_data_split(&a, m, m->field, &d, err) < 0)
    return -1;
  size_t n = d.n_paths;
  if (n == 0)
    return 0;
  /* A mount the policy did not judge (restore's, a config without facts) is not made. */
  if (idx < 0 || (size_t)idx >= srcs->n || srcs->path_fd == NULL || srcs->n_paths[idx] != n)
    return sr_error_make(err, 0, "%s.options: the policy judged no such overlay (runtime error)",
                         m->field);
  *out = malloc(n * sizeof(int));
  if (*out == NULL)
    return sr_error_make(err, ENOMEM, "prepare mounts");
  for (size_t k = 0; k < n; k++)
    (*out)[k] = -1;
  *n_out = n;
  for (size_t k = 0; k < n; k++) {
    if (srcs->path_fd[idx][k] < 0)
      return sr_error_make(err, srcs->path_errno[idx][k] ? srcs->path_errno[idx][k] : ENOENT,
                           "%s.options: %s: `%s`", m->field, d.paths[k].option, d.paths[k].path);
    if (((*out)[k] = fcntl(srcs->path_fd[idx][k], F_DUPFD_CLOEXEC, 3)) < 0)
      return sr_error_sys(err, "%s.options: %s", m->field, d.paths[k].option);
  }
  return 0;
}

int sr_mount_binds_prepare(const struct sr_config *c, const struct sr_bind_sources *srcs,
                           struct sr_bind_plan *plan, sr_error_t *err)
{
  plan->n = c->n_mounts;
  plan->tree_fd = malloc((c->n_mounts + 1) * sizeof(int));
  plan->is_dir = calloc(c->n_mounts + 1, sizeof(bool));
  plan->path_fd = calloc(c->n_mounts + 1, sizeof(int *));
  plan->n_paths = calloc(c->n_mounts + 1, sizeof(size_t));
  plan->bundle = strdup(srcs->bundle ? srcs->bundle : ".");
  if (plan->tree_fd == NULL || plan->is_dir == NULL || plan->path_fd == NULL ||
      plan->n_paths == NULL || plan->bundle == NULL) {
    for (size_t i = 0; plan->tree_fd && i < c->n_mounts; i++)
      plan->tree_fd[i] = -1;
    sr_mount_bind_plan_close(plan);
    return sr_error_make(err, ENOMEM, "prepare mounts");
  }
  for (size_t i = 0; i < c->n_mounts; i++)
    plan->tree_fd[i] = -1;
  for (size_t i = 0; i < c->n_mounts; i++) {
    const struct sr_mount *m = &c->mounts[i];
    if (!(m->opts.bind || m->opts.rbind) && sr_mount_paths_is_overlay(m) &&
        !(m->opts.flags & MS_REMOUNT) &&
        prepare_overlay_paths(m, srcs, &plan->path_fd[i], &plan->n_paths[i], err) < 0) {
      sr_mount_bind_plan_close(plan);
      return -1;
    }
    if (!(m->opts.bind || m->opts.rbind))
      continue;
    if (prepare_bind(m, srcs, &plan->tree_fd[i], &plan->is_dir[i], err) < 0) {
      sr_mount_bind_plan_close(plan);
      return -1;
    }
  }
  return 0;
}

int sr_mount_binds_idmap(struct sr_bind_plan *plan, const struct sr_config *c, pid_t userns_pid,
                         sr_error_t *err)
{
  for (size_t i = 0; i < plan->n; i++) {
    const struct sr_mount *m = &c->mounts[i];
    if (plan->tree_fd[i] < 0 || !(m->opts.idmap || m->opts.ridmap))
      continue;
    _cleanup_close_ int userns = -1;
    if (m->n_uid_mappings > 0) {
      struct sr_linux maps = {.uid_mappings = m->uid_mappings,
                              .n_uid_mappings = m->n_uid_mappings,
                              .gid_mappings = m->gid_mappings,
                              .n_gid_mappings = m->n_gid_mappings};
      if (sr_ns_userns_open_with_maps(&maps, &userns, err) < 0)
        return sr_error_wrap(err, "%s: idmap", m->field);
    } else {
      char path[64];
      snprintf(path, sizeof(path), "/proc/%d/ns/user", userns_pid);
      userns = open(path, O_RDONLY | O_CLOEXEC);
      if (userns < 0)
        return sr_error_sys(err, "%s: idmap: open `%s`", m->field, path);
    }
    struct sr_mount_attr attr = {.attr_set = MOUNT_ATTR_IDMAP, .userns_fd = (uint64_t)userns};
    unsigned flags = AT_EMPTY_PATH | (m->opts.ridmap ? AT_RECURSIVE : 0);
    if (sr_mountapi_mount_setattr(plan->tree_fd[i], "", flags, &attr) < 0)
      return sr_error_sys(err, "%s: idmap `%s`", m->field, m->destination);
  }
  return 0;
}

int sr_mount_rootfs_prepare_tree(int root_fd, const char *rootfs_path, int *tree_fd,
                                 sr_error_t *err)
{
  /* The tree the policy judged (root.path swapped for a symlink to / after the check). */
  _cleanup_close_ int tree = sr_mountapi_open_tree(
      root_fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE | AT_EMPTY_PATH);
  if (tree < 0)
    return sr_error_sys(err, "bind root filesystem `%s`", rootfs_path);
  /* Host mounts still show up inside; nothing inside propagates to the host. */
  struct sr_mount_attr prop = {.propagation = MS_SLAVE};
  if (sr_mountapi_mount_setattr(tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &prop) < 0)
    return sr_error_sys(err, "root filesystem `%s`: make it a slave mount", rootfs_path);
  *tree_fd = steal_fd(tree);
  return 0;
}

int sr_mount_rootfs_idmap(int tree_fd, pid_t userns_pid, sr_error_t *err)
{
  char path[64];
  snprintf(path, sizeof(path), "/proc/%d/ns/user", userns_pid);
  _cleanup_close_ int userns = open(path, O_RDONLY | O_CLOEXEC);
  if (userns < 0)
    return sr_error_sys(err, "open `%s`", path);
  struct sr_mount_attr attr = {.attr_set = MOUNT_ATTR_IDMAP, .userns_fd = (uint64_t)userns};
  if (sr_mountapi_mount_setattr(tree_fd, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr) < 0)
    return sr_error_sys(err, "idmap the root filesystem");
  return 0;
}

int sr_mount_rootfs_attach(const char *rootfs_path, int prepared_tree, int *root_fd,
                           sr_error_t *err)
{
  /* Nothing the container mounts may propagate back into the host's namespace. */
  if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0)
    return sr_error_sys(err, "make / a recursive slave mount");
  /* The content is the tree the parent cloned from the descriptor the policy judged; the name
   * only says where in this (private) namespace it is attached before the pivot. */
  _cleanup_close_ int tree = prepared_tree;
  if (tree < 0)
    return sr_error_make(err, EBADF, "root filesystem `%s`: not prepared", rootfs_path);
  _cleanup_close_ int target = open(rootfs_path, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (target < 0)
    return sr_error_sys(err, "root.path `%s`", rootfs_path);
  /* pivot_root needs the new root to be a mount point in this namespace. */
  if (sr_mountapi_attach_mount(tree, target) < 0)
    return sr_error_sys(err, "attach root filesystem `%s`", rootfs_path);
  *root_fd = steal_fd(tree);
  return 0;
}

void sr_mount_fs_log(int fsfd, char *buf, size_t size)
{
  buf[0] = '\0';
  char line[512];
  ssize_t n;
  size_t used = 0;
  while ((n = read(fsfd, line, sizeof(line) - 1)) > 0) {
    line[n] = '\0';
    if (line[n - 1] == '\n')
      line[n - 1] = '\0';
    int w = snprintf(buf + used, size - used, "%s%s", used ? "; " : "", line + 2);
    if (w < 0 || (size_t)w >= size - used)
      break;
    used += (size_t)w;
  }
}

static int fs_fail(int fsfd, sr_error_t *err, const char *what, const struct sr_mount *m)
{
  int saved = errno;
  char log[512];
  sr_mount_fs_log(fsfd, log, sizeof(log));
  if (log[0])
    return sr_error_make(err, saved, "mount %s `%s` on `%s`: %s (%s)", m->type,
                         m->source ? m->source : "", m->destination, what, log);
  return sr_error_make(err, saved, "mount %s `%s` on `%s`: %s", m->type, m->source ? m->source : "",
                       m->destination, what);
}

/* The filesystem-specific options ("size=64m,mode=755", "newinstance"), one fsconfig each. */
static int set_data_options(int fsfd, const struct sr_mount *m, sr_error_t *err)
{
  if (m->opts.data == NULL)
    return 0;
  _cleanup_free_ char *data = strdup(m->opts.data);
  if (data == NULL)
    return sr_error_make(err, ENOMEM, "mount `%s`", m->destination);
  char *save = NULL;
  for (char *opt = strtok_r(data, ",", &save); opt; opt = strtok_r(NULL, ",", &save)) {
    char *eq = strchr(opt, '=');
    int r;
    if (eq) {
      *eq = '\0';
      r = sr_mountapi_fsconfig(fsfd, FSCONFIG_SET_STRING, opt, eq + 1, 0);
    } else
      r = sr_mountapi_fsconfig(fsfd, FSCONFIG_SET_FLAG, opt, NULL, 0);
    if (r < 0) {
      char what[256];
      snprintf(what, sizeof(what), "option \"%s%s%s\"", opt, eq ? "=" : "", eq ? eq + 1 : "");
      return fs_fail(fsfd, err, what, m);
    }
  }
  return 0;
}

/* The layer the policy judged, as a mount of this (the init's) namespace: overlayfs clones
 * each layer's mount (clone_private_mount), which it may only do for a mount of the caller's
 * namespace, and the judged descriptor is one of the host's.  So the path is opened again
 * here, without magic links, and must be the very directory judged (device and inode): a name
 * swapped between the check and the mount (a symlink to /root) is refused, never mounted. */
static int open_layer(const struct sr_mount *m, const struct sr_mount_path *p, int judged,
                      const char *bundle, int *out, sr_error_t *err)
{
  _cleanup_free_ char *abs = NULL;
  if (p->path[0] != '/' && asprintf(&abs, "%s/%s", bundle, p->path) < 0)
    return sr_error_make(err, ENOMEM, "%s.options", m->field);
  const char *path = abs ? abs : p->path;
  _cleanup_close_ int fd =
      sr_paths_openat2(AT_FDCWD, path, O_PATH | O_DIRECTORY | O_CLOEXEC, 0, RESOLVE_NO_MAGICLINKS);
  if (fd < 0)
    return sr_error_sys(err, "%s.options: %s: open `%s`", m->field, p->option, path);
  struct stat a, b;
  if (fstat(fd, &a) < 0 || fstat(judged, &b) < 0)
    return sr_error_sys(err, "%s.options: %s: stat", m->field, p->option);
  if (a.st_dev != b.st_dev || a.st_ino != b.st_ino)
    return sr_error_make(err, EXDEV,
                         "%s.options: %s: `%s` is no longer the directory the policy judged (it "
                         "was replaced while the container was created): not mounted",
                         m->field, p->option, path);
  *out = steal_fd(fd);
  return 0;
}

/* An overlay's options: each layer by descriptor (FSCONFIG_SET_FD, Linux 6.13+), never by the
 * name, the others as given.  Nothing here parses a path the policy did not judge. */
static int set_overlay_options(int fsfd, const struct sr_mount *m, const int *judged,
                               size_t n_judged, const char *bundle, sr_error_t *err)
{
  _cleanup_(sr_arena_release) struct sr_arena a = {0};
  struct sr_mount_data d;
  if (sr_mount_paths_data_split(&a, m, m->field, &d, err) < 0)
    return -1;
  if (d.n_paths != n_judged || (n_judged && judged == NULL))
    return sr_error_make(err, 0, "%s.options: the policy judged %zu overlay layers, not %zu "
                                 "(runtime error)", m->field, n_judged, d.n_paths);
  for (size_t k = 0; k < d.n_paths; k++) {
    _cleanup_close_ int fd = -1;
    if (open_layer(m, &d.paths[k], judged[k], bundle, &fd, err) < 0)
      return -1;
    if (sr_mountapi_fsconfig(fsfd, FSCONFIG_SET_FD, d.paths[k].key, NULL, fd) < 0)
      return fs_fail(fsfd, err, d.paths[k].option, m);
  }
  for (size_t k = 0; k < d.n_plain; k++) {
    char *eq = strchr(d.plain[k], '=');
    if (eq)
      *eq = '\0';
    int rc = eq ? sr_mountapi_fsconfig(fsfd, FSCONFIG_SET_STRING, d.plain[k], eq + 1, 0)
                : sr_mountapi_fsconfig(fsfd, FSCONFIG_SET_FLAG, d.plain[k], NULL, 0);
    if (eq)
      *eq = '=';
    if (rc < 0) {
      char what[256];
      snprintf(what, sizeof(what), "option \"%s\"", d.plain[k]);
      return fs_fail(fsfd, err, what, m);
    }
  }
  return 0;
}

/* A new filesystem instance from the mount's type, source and data options. */
static bool has_data_option(const struct sr_mount *m, const char *key)
{
  size_t kl = strlen(key);
  for (const char *p = m->opts.data; p && *p;) {
    if (strncmp(p, key, kl) == 0 && p[kl] == '=')
      return true;
    p = strchr(p, ',');
    p = p ? p + 1 : NULL;
  }
  return false;
}

static int make_fs_mount(const struct sr_mount *m, const char *type, const char *mount_label,
                         int covered, const struct sr_mount_layers *layers, int *out, sr_error_t *err)
{
  _cleanup_close_ int fsfd = sr_mountapi_fsopen(type, FSOPEN_CLOEXEC);
  if (fsfd < 0 && errno == ENODEV)
    return sr_error_sys(err, "mount `%s`: unknown filesystem type \"%s\"", m->destination, type);
  if (fsfd < 0)
    return sr_error_sys(err, "mount %s on `%s`", type, m->destination);
  if (m->source && m->source[0] &&
      sr_mountapi_fsconfig(fsfd, FSCONFIG_SET_STRING, "source", m->source, 0) < 0)
    return fs_fail(fsfd, err, "source", m);
  /* A tmpfs without mode= takes the mode of the directory it covers, as runc (a directory
   * seerun made has none to keep: tmpfs's 1777). */
  struct stat cst;
  if (covered >= 0 && strcmp(type, "tmpfs") == 0 && !has_data_option(m, "mode") &&
      fstat(covered, &cst) == 0 && S_ISDIR(cst.st_mode)) {
    char mode[16];
    snprintf(mode, sizeof(mode), "%o", (unsigned)(cst.st_mode & 07777));
    if (sr_mountapi_fsconfig(fsfd, FSCONFIG_SET_STRING, "mode", mode, 0) < 0)
      return fs_fail(fsfd, err, "mode of the covered directory", m);
  }
  if (sr_mount_paths_is_overlay(m)
          ? set_overlay_options(fsfd, m, layers ? layers->fd : NULL, layers ? layers->n : 0,
                                layers ? layers->bundle : ".", err) < 0
          : set_data_options(fsfd, m, err) < 0)
    return -1;
  const char *context = sr_lsm_selinux_fs_context(mount_label, type);
  if (context && sr_mountapi_fsconfig(fsfd, FSCONFIG_SET_STRING, "context", context, 0) < 0)
    return fs_fail(fsfd, err, "SELinux context (linux.mountLabel)", m);
  static const struct {
    unsigned long flag;
    const char *name;
  } sb_flags[] = {{MS_SYNCHRONOUS, "sync"},
                  {MS_DIRSYNC, "dirsync"},
                  {MS_LAZYTIME, "lazytime"},
                  {MS_MANDLOCK, "mand"}};
  for (size_t i = 0; i < sizeof(sb_flags) / sizeof(sb_flags[0]); i++)
    if ((m->opts.flags & sb_flags[i].flag) &&
        sr_mountapi_fsconfig(fsfd, FSCONFIG_SET_FLAG, sb_flags[i].name, NULL, 0) < 0)
      return fs_fail(fsfd, err, sb_flags[i].name, m);
  if (sr_mountapi_fsconfig(fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
    return fs_fail(fsfd, err, "create", m);
  uint64_t attr = sr_mount_flags_to_attr(m->opts.flags);
  if (is_dev(m))
    attr &= ~(uint64_t)MOUNT_ATTR_RDONLY;
  int mfd = sr_mountapi_fsmount(fsfd, FSMOUNT_CLOEXEC, (unsigned)attr);
  if (mfd < 0)
    return fs_fail(fsfd, err, "fsmount", m);
  *out = mfd;
  return 0;
}

static int apply_propagation(int fd, unsigned long prop, const char *dest, sr_error_t *err)
{
  if (prop == 0)
    return 0;
  struct sr_mount_attr attr = {.propagation = prop & ~(unsigned long)MS_REC};
  if (sr_mountapi_mount_setattr(fd, "", AT_EMPTY_PATH | ((prop & MS_REC) ? AT_RECURSIVE : 0),
                                &attr) < 0)
    return sr_error_sys(err, "mount `%s`: set propagation", dest);
  return 0;
}

/* "remount": new flags for what is already mounted at the destination, and new filesystem
 * options ("size=") for its superblock, as mount(MS_REMOUNT) with data does. */
static int remount(const struct sr_mount *m, int root_fd, sr_error_t *err)
{
  _cleanup_close_ int target = -1;
  if (sr_paths_open_in_root(root_fd, m->destination, O_PATH, &target, err) < 0)
    return sr_error_wrap(err, "remount `%s`", m->destination);
  if (m->opts.data) {
    _cleanup_close_ int fsfd = sr_mountapi_fspick(target, "", FSPICK_EMPTY_PATH | FSPICK_CLOEXEC);
    if (fsfd < 0)
      return sr_error_sys(err, "remount `%s`: pick its filesystem", m->destination);
    if (set_data_options(fsfd, m, err) < 0)
      return -1;
    if (sr_mountapi_fsconfig(fsfd, FSCONFIG_CMD_RECONFIGURE, NULL, NULL, 0) < 0)
      return fs_fail(fsfd, err, "reconfigure", m);
  }
  struct sr_mount_attr attr;
  bind_attr(&m->opts, &attr);
  if ((attr.attr_set || attr.attr_clr) &&
      sr_mountapi_mount_setattr(target, "", AT_EMPTY_PATH, &attr) < 0)
    return sr_error_sys(err, "remount `%s`", m->destination);
  if (apply_recursive_attrs(target, &m->opts, m->destination, err) < 0)
    return -1;
  return apply_propagation(target, m->opts.propagation, m->destination, err);
}

/* sysfs can only be mounted by a user namespace that owns the network namespace: a container
 * in its own user namespace that joined another network namespace (the host's, another
 * container's) gets the runtime's /sys instead, as runc does.  The mount's flags go on every
 * submount (a read-only /sys must not leave a writable one below it); the atime mode is left
 * alone, since the kernel locks it on mounts that come from a more privileged namespace. */
static int bind_runtime_sysfs(const struct sr_mount *m, int *out, sr_error_t *err)
{
  _cleanup_close_ int fd =
      sr_mountapi_open_tree(AT_FDCWD, "/sys", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
  if (fd < 0)
    return sr_error_sys(err, "mount sysfs on `%s`: bind the runtime's /sys instead",
                        m->destination);
  struct sr_mount_attr attr = {.attr_set =
                                   sr_mount_flags_to_attr(m->opts.flags) & ~MOUNT_ATTR__ATIME};
  if (attr.attr_set && sr_mountapi_mount_setattr(fd, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr) < 0)
    return sr_error_sys(err, "mount sysfs on `%s`: set options of the runtime's /sys",
                        m->destination);
  *out = steal_fd(fd);
  return 0;
}

/* A bind's tree was cut in the parent, before the root and every other mount existed, so its
 * mount ids, the order of /proc/self/mountinfo, would put it before them all.  Attached now, it
 * is a mount of this namespace and can be cloned: the copy (same tree, options, idmap and
 * propagation) replaces it, in config order (runtime-tools checks it, as tools reading
 * mountinfo expect). */
static int reclone_in_order(int attached, int target, const struct sr_mount *m, int *out,
                            sr_error_t *err)
{
  _cleanup_close_ int copy = sr_mountapi_open_tree(
      attached, "",
      OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | (m->opts.rbind ? AT_RECURSIVE : 0));
  if (copy < 0)
    return 0; /* left as it is: only the order differs */
  char path[64];
  sr_paths_fd_path(path, sizeof(path), attached);
  if (umount2(path, MNT_DETACH) < 0)
    return 0;
  if (sr_mountapi_attach_mount(copy, target) < 0)
    return sr_error_sys(err, "attach mount on `%s`", m->destination);
  *out = steal_fd(copy);
  return 0;
}

/* proc and sysfs go where /proc and /sys really are: the destination is resolved without
 * symlinks.  An image whose /proc is a symlink through a directory a later bind replaces
 * would get proc mounted at one place and its masks (looked up after the mounts) applied at
 * another, leaving /proc/keys unmasked where proc really is. */
static int open_pseudo_fs_destination(const struct sr_mount *m, int root_fd, int *out,
                                      sr_error_t *err)
{
  const unsigned long long how = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  for (int attempt = 0; attempt < 2; attempt++) {
    int fd = sr_paths_openat2(root_fd, m->destination, O_PATH | O_DIRECTORY | O_CLOEXEC, 0, how);
    if (fd >= 0) {
      *out = fd;
      return 0;
    }
    if (errno == ELOOP)
      return sr_error_make(err, ELOOP,
                           "%s.destination: `%s` is or passes through a symbolic link in the "
                           "root filesystem: %s is mounted only where the path really is (its "
                           "masked and read-only paths are looked up there)",
                           m->field, m->destination, m->type);
    if (errno != ENOENT || attempt > 0)
      return sr_error_sys(err, "%s.destination: `%s`", m->field, m->destination);
    /* Missing: made as any destination, then opened again without symlinks. */
    _cleanup_close_ int made = -1;
    if (sr_paths_mkpath_in_root(root_fd, m->destination, SR_MKPATH_DIR, &made, err) < 0)
      return sr_error_wrap(err, "mount destination");
  }
  return sr_error_make(err, ENOENT, "%s.destination: `%s`", m->field, m->destination);
}

int sr_mount_one(const struct sr_mount *m, int tree_fd, bool is_dir,
                 const struct sr_mount_layers *layers, int root_fd, bool userns,
                 const char *mount_label, sr_error_t *err)
{
  bool bind = m->opts.bind || m->opts.rbind;
  if (!bind && (m->opts.flags & MS_REMOUNT))
    return remount(m, root_fd, err);

  /* The destination is resolved once, before the filesystem is made: its mode is the tmpfs's
   * (runc) and the mount lands on the same directory. */
  _cleanup_close_ int target =
      sr_paths_openat2(root_fd, m->destination, O_PATH, 0, RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS);
  bool existed = target >= 0;
  _cleanup_close_ int mfd = -1;
  if (!bind) {
    if (make_fs_mount(m, m->type, mount_label, existed ? target : -1, layers, &mfd, err) < 0) {
      if (!userns || strcmp(m->type, "sysfs") != 0 || (*err)->status != EPERM)
        return -1;
      sr_error_free(err);
      if (bind_runtime_sysfs(m, &mfd, err) < 0)
        return -1;
    }
    if (apply_recursive_attrs(mfd, &m->opts, m->destination, err) < 0)
      return -1;
  }
  if (!bind && (strcmp(m->type, "proc") == 0 || strcmp(m->type, "sysfs") == 0)) {
    if (target >= 0)
      close(target);
    target = -1;
    if (open_pseudo_fs_destination(m, root_fd, &target, err) < 0)
      return -1;
  } else {
    /* Made only now: a mount that cannot be made leaves nothing in the image. */
    if (!existed && sr_paths_mkpath_in_root(root_fd, m->destination,
                                            (bind && !is_dir) ? SR_MKPATH_FILE : SR_MKPATH_DIR,
                                            &target, err) < 0)
      return sr_error_wrap(err, "mount destination");
    struct stat tst;
    if (existed && fstat(target, &tst) == 0 && S_ISDIR(tst.st_mode) != (!bind || is_dir))
      return sr_error_make(err, S_ISDIR(tst.st_mode) ? EISDIR : ENOTDIR,
                           "mount destination: `%s` in the container", m->destination);
  }
  int src = bind ? tree_fd : mfd;
  if (sr_mountapi_attach_mount(src, target) < 0)
    return sr_error_sys(err, "attach mount on `%s`", m->destination);
  _cleanup_close_ int copy = -1;
  if (bind && reclone_in_order(src, target, m, &copy, err) < 0)
    return -1;
  return apply_propagation(copy >= 0 ? copy : src, m->opts.propagation, m->destination, err);
}

int sr_mount_rootfs_pivot(int root_fd, bool no_pivot, sr_error_t *err)
{
  _cleanup_close_ int old_root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (old_root < 0)
    return sr_error_sys(err, "open the old root");
  if (fchdir(root_fd) < 0)
    return sr_error_sys(err, "chdir to the root filesystem");
  if (no_pivot) {
    if (mount(".", "/", NULL, MS_MOVE, NULL) < 0)
      return sr_error_sys(err, "move the root filesystem to / (--no-pivot)");
    if (chroot(".") < 0)
      return sr_error_sys(err, "chroot (--no-pivot)");
  } else {
    /* pivot_root(".", ".") stacks the old root on top of the new one; then detach it. */
    if (syscall(SYS_pivot_root, ".", ".") < 0)
      return sr_error_sys(err, "pivot_root");
    /* "." is still the new root (a lookup of "." does not cross the mount stacked on it): work
     * on the old root through its own descriptor, or the slave change below would hit the
     * container's whole tree and undo the propagation its mounts asked for. */
    if (fchdir(old_root) < 0)
      return sr_error_sys(err, "chdir to the old root");
    /* The old root must not propagate its unmount to the host. */
    if (mount(NULL, ".", NULL, MS_SLAVE | MS_REC, NULL) < 0)
      return sr_error_sys(err, "make the old root a slave mount");
    if (umount2(".", MNT_DETACH) < 0)
      return sr_error_sys(err, "detach the old root");
  }
  if (chdir("/") < 0)
    return sr_error_sys(err, "chdir /");
  return 0;
}

/* Without a mount namespace the container's root is still root.path: runc chroots there
 * (the mounts stay the runtime's, runtime.md).  Through the descriptor the policy judged, never
 * the name. */
int sr_mount_rootfs_chroot(int root_fd, sr_error_t *err)
{
  if (fchdir(root_fd) < 0)
    return sr_error_sys(err, "root.path: chdir to the root filesystem");
  if (chroot(".") < 0)
    return sr_error_sys(err, "root.path: chroot (no mount namespace)");
  if (chdir("/") < 0)
    return sr_error_sys(err, "chdir /");
  return 0;
}

/* A path of linux.maskedPaths or linux.readonlyPaths, resolved inside the root; one that does
 * not exist has nothing to mask or protect (*out stays -1). */
static int open_listed_path(int root_fd, const char *field, const char *path, int *out,
                            sr_error_t *err)
{
  /* Below /proc and /sys without symlinks: a symlink there (an image's /proc -> /a/b/p, /a
   * replaced by a bind) would put the mask somewhere else than the file it names. */
  bool pseudo = strncmp(path, "/proc/", 6) == 0 || strncmp(path, "/sys/", 5) == 0;
  unsigned long long how = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS |
                           (pseudo ? RESOLVE_NO_SYMLINKS : 0);
  *out = sr_paths_openat2(root_fd, path, O_PATH, 0, how);
  if (*out < 0 && errno == ELOOP && pseudo)
    return sr_error_make(err, ELOOP,
                         "%s: `%s` passes through a symbolic link in the container: the mask "
                         "would not be on the file it names",
                         field, path);
  if (*out < 0 && errno != ENOENT)
    return sr_error_sys(err, "%s: `%s`", field, path);
  return 0;
}

/* The mask for a file is /dev/null, checked to be the real null device so that a tenant's
 * /dev/null cannot turn a mask into an exposure.  It is looked up inside the root like any
 * other path (an image's /dev may be a symlink within it): the check is on what it is. */
static int mask_path(int root_fd, const char *path, sr_error_t *err)
{
  _cleanup_close_ int target = -1;
  if (open_listed_path(root_fd, "linux.maskedPaths", path, &target, err) < 0)
    return -1;
  if (target < 0)
    return 0;
  struct stat st;
  if (fstat(target, &st) < 0)
    return sr_error_sys(err, "linux.maskedPaths: stat `%s`", path);
  _cleanup_close_ int mask = -1;
  if (S_ISDIR(st.st_mode)) {
    _cleanup_close_ int fsfd = sr_mountapi_fsopen("tmpfs", FSOPEN_CLOEXEC);
    if (fsfd < 0 || sr_mountapi_fsconfig(fsfd, FSCONFIG_SET_STRING, "size", "0", 0) < 0 ||
        sr_mountapi_fsconfig(fsfd, FSCONFIG_SET_STRING, "nr_inodes", "1", 0) < 0 ||
        sr_mountapi_fsconfig(fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
      return sr_error_sys(err, "linux.maskedPaths: tmpfs for `%s`", path);
    mask = sr_mountapi_fsmount(fsfd, FSMOUNT_CLOEXEC,
                               MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
                                   MOUNT_ATTR_NOEXEC);
  } else {
    _cleanup_close_ int null =
        sr_paths_openat2(root_fd, "/dev/null", O_PATH, 0, RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS);
    struct stat ns;
    if (null < 0 || fstat(null, &ns) < 0 || !S_ISCHR(ns.st_mode) || ns.st_rdev != makedev(1, 3))
      return sr_error_make(err, 0,
                           "linux.maskedPaths: `%s`: /dev/null in the container is not "
                           "the null device",
                           path);
    mask = sr_mountapi_open_tree(null, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
  }
  if (mask < 0)
    return sr_error_sys(err, "linux.maskedPaths: mask for `%s`", path);
  if (sr_mountapi_attach_mount(mask, target) < 0)
    return sr_error_sys(err, "linux.maskedPaths: mask `%s`", path);
  return 0;
}

static int readonly_path(int root_fd, const char *path, sr_error_t *err)
{
  _cleanup_close_ int target = -1;
  if (open_listed_path(root_fd, "linux.readonlyPaths", path, &target, err) < 0)
    return -1;
  if (target < 0)
    return 0;
  _cleanup_close_ int tree = sr_mountapi_open_tree(
      target, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE | AT_EMPTY_PATH);
  if (tree < 0)
    return sr_error_sys(err, "linux.readonlyPaths: bind `%s`", path);
  struct sr_mount_attr attr = {.attr_set = MOUNT_ATTR_RDONLY};
  if (sr_mountapi_mount_setattr(tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr) < 0)
    return sr_error_sys(err, "linux.readonlyPaths: make `%s` read-only", path);
  if (sr_mountapi_attach_mount(tree, target) < 0)
    return sr_error_sys(err, "linux.readonlyPaths: attach `%s`", path);
  return 0;
}

int sr_mount_rootfs_finish(const struct sr_config *c, sr_error_t *err)
{
  _cleanup_close_ int root_fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root_fd < 0)
    return sr_error_sys(err, "open /");
  for (size_t i = 0; i < c->linux_.n_readonly_paths; i++)
    if (readonly_path(root_fd, c->linux_.readonly_paths[i], err) < 0)
      return -1;
  for (size_t i = 0; i < c->linux_.n_masked_paths; i++)
    if (mask_path(root_fd, c->linux_.masked_paths[i], err) < 0)
      return -1;
  if (c->root_readonly) {
    struct sr_mount_attr attr = {.attr_set = MOUNT_ATTR_RDONLY};
    if (sr_mountapi_mount_setattr(root_fd, "", AT_EMPTY_PATH, &attr) < 0)
      return sr_error_sys(err, "root.readonly: make / read-only");
  }
  if (apply_propagation(root_fd, c->linux_.rootfs_propagation, "/", err) < 0)
    return sr_error_wrap(err, "linux.rootfsPropagation");
  return 0;
}

int sr_mount_rootfs_dev_readonly(const struct sr_config *c, sr_error_t *err)
{
  _cleanup_close_ int root_fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root_fd < 0)
    return sr_error_sys(err, "open /");
  for (size_t i = 0; i < c->n_mounts; i++) {
    const struct sr_mount *m = &c->mounts[i];
    if (!is_dev(m) || !(m->opts.flags & MS_RDONLY) || (m->opts.flags & MS_REMOUNT))
      continue;
    _cleanup_close_ int dev = sr_paths_openat2(root_fd, "/dev", O_PATH | O_DIRECTORY, 0,
                                               RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS);
    struct sr_mount_attr attr = {.attr_set = MOUNT_ATTR_RDONLY};
    if (dev < 0 || sr_mountapi_mount_setattr(dev, "", AT_EMPTY_PATH, &attr) < 0)
      return sr_error_sys(err, "%s: make /dev read-only", m->field);
  }
  return 0;
}
