/* restore: a container created by the policy like a new one, whose processes CRIU brings back
 * from an image directory (untrusted input: see checkpoint.h for what is checked, and when).
 * This file prepares what CRIU is given and drives it; restore_image.c reads the image before,
 * restore_checks.c checks the restored tasks while they are still stopped. */
#include "build.h"

#include "checkpoint.h"

#include "cleanup.h"
#include "create_steps.h"
#include "criu_common.h"
#include "restore_internal.h"
#include "json.h"
#include "log.h"
#include "mountapi.h"
#include "namespaces.h"
#include "dir.h"
#include "fileio.h"
#include "proc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef HAVE_CRIU

/* ---- preparing what CRIU is given --------------------------------------------------------- */

struct restore_mounts {
  char dir[PATH_MAX]; /* a private tmpfs under /run/seerun-restore */
  bool made, mounted;
  char (*paths)[PATH_MAX];
  size_t n;
};

static void restore_mounts_release(struct restore_mounts *rm)
{
  if (rm->mounted && umount2(rm->dir, MNT_DETACH) < 0)
    sr_warn("unmount `%s`: %s", rm->dir, strerror(errno));
  if (rm->made)
    rmdir(rm->dir);
  rm->mounted = rm->made = false;
  free(rm->paths);
  rm->paths = NULL;
}

/* The mounts seerun hands CRIU live under a private tmpfs (nothing attached there propagates
 * to the host's peers, nor from them into the container) in a directory of root's under /run
 * that others may only traverse: CRIU opens them from inside the container's user namespace,
 * as its root, who cannot reach the state directory or an engine's 0700 image directories.
 * The tmpfs itself is open to the container's root group only. */
#define SR_RESTORE_MOUNTS_DIR "/run/seerun-restore"

/* A restore killed midway leaves its directory (and tmpfs) behind: swept by the next restore
 * once the process that made it is gone, as create sweeps its temporaries. */
static void sweep_stale(int top)
{
  _cleanup_dir_ DIR *d = sr_dir_open_fd(top);
  if (d == NULL)
    return;
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    char *dot;
    long pid = strtol(de->d_name, &dot, 10);
    if (de->d_name[0] == '.' || pid <= 0 || *dot != '.' || kill((pid_t)pid, 0) == 0 ||
        errno != ESRCH)
      continue;
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/%s", SR_RESTORE_MOUNTS_DIR, de->d_name);
    umount2(path, MNT_DETACH | UMOUNT_NOFOLLOW);
    unlinkat(top, de->d_name, AT_REMOVEDIR);
  }
}

static int restore_mounts_begin(struct restore_mounts *rm, const char *id, const struct sr_linux *l,
                                size_t max, sr_error_t *err)
{
  if (mkdir(SR_RESTORE_MOUNTS_DIR, 0711) < 0 && errno != EEXIST)
    return sr_error_sys(err, "mkdir `%s`", SR_RESTORE_MOUNTS_DIR);
  _cleanup_close_ int top =
      open(SR_RESTORE_MOUNTS_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  struct stat st;
  if (top < 0 || fstat(top, &st) < 0)
    return sr_error_sys(err, "open `%s`", SR_RESTORE_MOUNTS_DIR);
  /* Someone else's directory there could watch or swap what CRIU mounts. */
  if (st.st_uid != 0 || (st.st_mode & 022))
    return sr_error_make(err, EPERM, "`%s`: not root's alone", SR_RESTORE_MOUNTS_DIR);
  sweep_stale(top);
  char name[NAME_MAX + 1];
  if ((size_t)snprintf(name, sizeof(name), "%d.%.200s", getpid(), id) >= sizeof(name))
    return sr_error_make(err, ENAMETOOLONG, "restore: `%s`", id);
  snprintf(rm->dir, sizeof(rm->dir), "%s/%s", SR_RESTORE_MOUNTS_DIR, name);
  if (mkdirat(top, name, 0700) < 0)
    return sr_error_sys(err, "mkdir `%s`", rm->dir);
  rm->made = true;
  char opt[32] = "0";
  if (l->namespaces[SR_NS_USER].present && l->n_gid_mappings > 0)
    snprintf(opt, sizeof(opt), "%" PRIu32, l->gid_mappings[0].host_id);
  _cleanup_close_ int fs = sr_mountapi_fsopen("tmpfs", FSOPEN_CLOEXEC);
  if (fs < 0 || sr_mountapi_fsconfig(fs, FSCONFIG_SET_STRING, "mode", "0750", 0) < 0 ||
      sr_mountapi_fsconfig(fs, FSCONFIG_SET_STRING, "gid", opt, 0) < 0 ||
      sr_mountapi_fsconfig(fs, FSCONFIG_SET_STRING, "size", "64k", 0) < 0 ||
      sr_mountapi_fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
    return sr_error_sys(err, "tmpfs for `%s`", rm->dir);
  _cleanup_close_ int mnt =
      sr_mountapi_fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
  if (mnt < 0)
    return sr_error_sys(err, "fsmount tmpfs for `%s`", rm->dir);
  struct sr_mount_attr prop = {.propagation = MS_PRIVATE};
  _cleanup_close_ int target = openat(top, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (target < 0 || sr_mountapi_mount_setattr(mnt, "", AT_EMPTY_PATH, &prop) < 0 ||
      sr_mountapi_attach_mount(mnt, target) < 0)
    return sr_error_sys(err, "mount tmpfs on `%s`", rm->dir);
  rm->mounted = true;
  rm->paths = calloc(max + 1, sizeof(*rm->paths));
  if (rm->paths == NULL)
    return sr_error_make(err, ENOMEM, "restore mounts");
  return 0;
}

/* Attaches tree at <dir>/<name> (a directory or a file) and returns its path. */
static int attach_tree(struct restore_mounts *rm, int tree, bool dir, const char *name,
                       const char **path, sr_error_t *err)
{
  char *p = rm->paths[rm->n];
  if (snprintf(p, PATH_MAX, "%s/%s", rm->dir, name) >= PATH_MAX)
    return sr_error_make(err, ENAMETOOLONG, "restore: `%s`", name);
  int fd = dir ? mkdir(p, 0700) : open(p, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
  if (fd < 0)
    return sr_error_sys(err, "create `%s`", p);
  if (!dir)
    close(fd);
  _cleanup_close_ int target = open(p, O_PATH | O_CLOEXEC | O_NOFOLLOW);
  if (target < 0 || sr_mountapi_attach_mount(tree, target) < 0)
    return sr_error_sys(err, "attach `%s`", p);
  rm->n++;
  *path = p;
  return 0;
}

/* The idmapped trees a new container would get: the root filesystem and the "idmap" binds,
 * idmapped with a throwaway user namespace holding the decided maps (the restored one does
 * not exist yet); the root read-only as decided. */
static int idmap_trees(struct sr_create_ctx *ctx, sr_error_t *err)
{
  const struct sr_config *c = ctx->config;
  _cleanup_close_ int userns = -1;
  if (ctx->ns.new_userns && sr_ns_userns_open_with_maps(&c->linux_, &userns, err) < 0)
    return sr_error_wrap(err, "restore: user namespace for the idmapped mounts");
  if (ctx->rootfs_tree_fd < 0) {
    ctx->rootfs_tree_fd = sr_mountapi_open_tree(AT_FDCWD, ctx->rootfs,
                                                OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
    if (ctx->rootfs_tree_fd < 0)
      return sr_error_sys(err, "bind root filesystem `%s`", ctx->rootfs);
  } else if (!ctx->rootfs_idmapped && userns >= 0) {
    struct sr_mount_attr attr = {.attr_set = MOUNT_ATTR_IDMAP, .userns_fd = (uint64_t)userns};
    if (sr_mountapi_mount_setattr(ctx->rootfs_tree_fd, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr) < 0)
      return sr_error_sys(err, "idmap the root filesystem");
  }
  if (c->root_readonly) {
    struct sr_mount_attr ro = {.attr_set = MOUNT_ATTR_RDONLY};
    if (sr_mountapi_mount_setattr(ctx->rootfs_tree_fd, "", AT_EMPTY_PATH, &ro) < 0)
      return sr_error_sys(err, "root filesystem read-only");
  }
  for (size_t i = 0; i < ctx->binds.n; i++) {
    const struct sr_mount *m = &c->mounts[i];
    if (ctx->binds.tree_fd[i] < 0 || !(m->opts.idmap || m->opts.ridmap))
      continue;
    if (m->n_uid_mappings > 0 || userns < 0)
      return sr_error_make(err, EOPNOTSUPP,
                           "%s: restore: an idmapped bind with its own "
                           "mappings is not supported",
                           m->field);
    struct sr_mount_attr attr = {.attr_set = MOUNT_ATTR_IDMAP, .userns_fd = (uint64_t)userns};
    unsigned flags = AT_EMPTY_PATH | (m->opts.ridmap ? AT_RECURSIVE : 0);
    if (sr_mountapi_mount_setattr(ctx->binds.tree_fd[i], "", flags, &attr) < 0)
      return sr_error_sys(err, "%s: idmap `%s`", m->field, m->destination);
  }
  return 0;
}

static int add_ext(struct restore_run *run, criu_opts *opts, const char *key, const char *val,
                   sr_error_t *err)
{
  struct stat st;
  if (run->n_ext >= MAX_EXT)
    return sr_error_make(err, E2BIG, "restore: more than %d external mounts", MAX_EXT);
  if (stat(val, &st) < 0)
    return sr_error_sys(err, "restore: `%s`", val);
  if (criu_local_add_ext_mount(opts, key, val) < 0)
    return sr_error_make(err, ENOMEM, "criu: external mount %s", key);
  run->ext_key[run->n_ext] = key;
  run->ext_dev[run->n_ext] = st.st_dev;
  run->n_ext++;
  return 0;
}

/* Every mount CRIU binds from outside, by mount point: the bind sources and device nodes seerun
 * opened for this config, /dev/null for masked files.  An image naming any other mount point
 * as external finds no mapping, and CRIU fails. */
static int external_mounts(struct restore_run *run, criu_opts *opts, struct restore_mounts *rm,
                           sr_error_t *err)
{
  struct sr_create_ctx *ctx = run->ctx;
  const struct sr_config *c = ctx->config;
  char name[64];
  const char *path;
  for (size_t i = 0; i < ctx->binds.n; i++) {
    if (ctx->binds.tree_fd[i] < 0)
      continue;
    snprintf(name, sizeof(name), "bind-%zu", i);
    if (attach_tree(rm, ctx->binds.tree_fd[i], ctx->binds.is_dir[i], name, &path, err) < 0 ||
        add_ext(run, opts, c->mounts[i].destination, path, err) < 0)
      return -1;
  }
  for (size_t i = 0; i < ctx->devs.n; i++) {
    if (ctx->devs.host_node_fd == NULL || ctx->devs.host_node_fd[i] < 0)
      continue;
    snprintf(name, sizeof(name), "dev-%zu", i);
    if (attach_tree(rm, ctx->devs.host_node_fd[i], false, name, &path, err) < 0 ||
        add_ext(run, opts, ctx->devs.devices[i].path, path, err) < 0)
      return -1;
  }
  for (size_t i = 0; i < c->linux_.n_masked_paths; i++)
    if (add_ext(run, opts, c->linux_.masked_paths[i], "/dev/null", err) < 0)
      return -1;
  return 0;
}

/* CRIU's tasks read images from inside the new user namespace: before the maps are written
 * with their host uid 0 but no capability over host files (only the owner's bits count), after
 * as the container's root (runc's 0600 directory fails: "timens-0.img: Permission denied").
 * The directory, owned by root, is made searchable by the owner and by the group of the
 * container's mapped root, nobody else. */
static int make_images_searchable(int imgfd, const struct sr_linux *l, sr_error_t *err)
{
  struct stat st;
  if (fstat(imgfd, &st) < 0)
    return sr_error_sys(err, "--image-path: stat");
  if (st.st_uid != 0)
    return 0;
  if (l->namespaces[SR_NS_USER].present && l->n_gid_mappings > 0 &&
      fchown(imgfd, 0, l->gid_mappings[0].host_id) < 0)
    return sr_error_sys(err, "--image-path: chgrp to the container's root group");
  if (fchmod(imgfd, 0750) < 0)
    return sr_error_sys(err, "--image-path: chmod 0750");
  return 0;
}

/* descriptors.json (runc's: what the init's fds 0-2 were) and seerun-stdio.json (which were
 * declared external): each gets the restoring process's own fd of that number.  Untrusted:
 * names only select which of the image's files become our stdio. */
static int inherit_stdio(criu_opts *opts, int imgfd, int dups[3], sr_error_t *err)
{
  _cleanup_free_ char *desc = NULL, *ext = NULL;
  size_t len;
  sr_error_t e = NULL;
  yajl_val dv = NULL, ev = NULL;
  if (sr_fileio_read_at(imgfd, "descriptors.json", 64 << 10, &desc, &len, &e) == 0)
    sr_json_parse(desc, len, &dv, &e);
  sr_error_free(&e);
  if (sr_fileio_read_at(imgfd, "seerun-stdio.json", 64 << 10, &ext, &len, &e) == 0)
    sr_json_parse(ext, len, &ev, &e);
  sr_error_free(&e);
  const char *stdio_path[] = {"stdio", NULL};
  yajl_val ea = ev ? yajl_tree_get(ev, stdio_path, yajl_t_array) : NULL;
  int r = 0;
  for (int fd = 0; fd < 3 && r == 0; fd++) {
    const char *key = NULL;
    if (dv && YAJL_IS_ARRAY(dv) && YAJL_GET_ARRAY(dv)->len > (size_t)fd) {
      const char *s = YAJL_GET_STRING(YAJL_GET_ARRAY(dv)->values[fd]);
      if (s && strncmp(s, "pipe:[", 6) == 0)
        key = s;
    }
    if (key == NULL && ea && YAJL_GET_ARRAY(ea)->len > (size_t)fd) {
      const char *s = YAJL_GET_STRING(YAJL_GET_ARRAY(ea)->values[fd]);
      /* Keyed by the path CRIU 4.1 gives an external file (its name without the first
       * character): then CRIU hands over our descriptor itself, where with the name it would
       * reopen it through /proc/self/fd with the dumped flags, and O_NOFOLLOW fails there. */
      if (s && strncmp(s, "file[", 5) == 0)
        key = s + 1;
    }
    if (key == NULL)
      continue;
    dups[fd] = fcntl(fd, F_DUPFD, 3); /* inherited by criu: not close-on-exec */
    if (dups[fd] < 0)
      r = sr_error_sys(err, "restore: dup fd %d", fd);
    else if (criu_local_add_inherit_fd(opts, dups[fd], key) < 0)
      r = sr_error_make(err, ENOMEM, "criu: inherit-fd");
  }
  if (dv)
    yajl_tree_free(dv);
  if (ev)
    yajl_tree_free(ev);
  return r;
}

static int set_opts(struct restore_run *run, criu_opts *opts, const struct sr_criu_opts *o,
                    const char *binary, int cg_mode, int imgfd, int workfd, const char *root,
                    sr_error_t *err)
{
  if (criu_local_set_service_binary(opts, binary) < 0 ||
      criu_local_set_log_file(opts, "restore.log") < 0 || criu_local_set_root(opts, root) < 0 ||
      criu_local_add_cg_root(opts, NULL, run->ctx->cgroup->path) < 0)
    return sr_error_make(err, ENOMEM, "criu options");
  sr_criu_set_common_opts(opts, o, cg_mode, imgfd, workfd);
  criu_local_set_notify_cb(opts, sr_restore_checks_notify);
  return 0;
}

static int refuse_options(struct sr_create_ctx *ctx, const struct sr_criu_opts *o,
                          const char **binary, int *cg_mode, sr_error_t *err)
{
  if (sr_criu_refuse_unsupported(o, true, err) < 0 || sr_criu_binary(o, binary, err) < 0 ||
      sr_criu_cg_mode(o->manage_cgroups_mode, cg_mode, err) < 0)
    return -1;
  /* The cgroup's limits are the policy's: an image's cgroup settings must not replace them. */
  if (*cg_mode == CRIU_CG_MODE_FULL || *cg_mode == CRIU_CG_MODE_STRICT)
    return sr_error_make(err, EPERM,
                         "restore --manage-cgroups-mode %s: refused: the image's "
                         "cgroup settings would replace the limits the policy "
                         "decided (use soft or ignore)",
                         o->manage_cgroups_mode);
  if (ctx->egress_proxy)
    return sr_error_make(err, EOPNOTSUPP,
                         "restore: the policy decides egress through seerun's "
                         "proxy (decided.egressProxy), whose supervisor seerun "
                         "does not restart after a restore");
  for (int k = 0; k < SR_NS_COUNT; k++)
    if (ctx->config->linux_.namespaces[k].path)
      return sr_error_make(err, EOPNOTSUPP,
                           "restore: linux.namespaces: joining an existing "
                           "%s namespace is not supported by restore",
                           sr_config_ns_name(k));
  if (ctx->config->process == NULL)
    return sr_error_make(err, 0, "config.json: process: required to restore a container");
  if (ctx->config->process->terminal && !o->shell_job)
    return sr_error_make(err, EOPNOTSUPP,
                         "restore: process.terminal: a container with a "
                         "terminal is not supported by restore");
  return 0;
}

/* A CRIU killed midway leaves its cgroup yard mounted in the work directory. */
static void remove_criu_leftovers(int workfd)
{
  _cleanup_dir_ DIR *d = sr_dir_open_fd(workfd);
  struct dirent *de;
  while (d && (de = readdir(d)) != NULL) {
    if (strncmp(de->d_name, ".criu.cgyard.", 13) != 0)
      continue;
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "/proc/self/fd/%d/%s", workfd, de->d_name);
    if (umount2(path, MNT_DETACH) < 0 && errno != EINVAL)
      sr_warn("unmount CRIU's `%s`: %s", de->d_name, strerror(errno));
    unlinkat(workfd, de->d_name, AT_REMOVEDIR);
  }
}

/* What a restore holds while CRIU runs, released when it returns, in this order. */
struct restore_hold {
  int dups[3];
  int workfd;
  struct restore_run *run;
  struct restore_mounts rm;
};

static void restore_hold_release(struct restore_hold *h)
{
  for (int i = 0; i < 3; i++)
    if (h->dups[i] >= 0)
      close(h->dups[i]);
  if (h->run && h->run->killed_criu)
    remove_criu_leftovers(h->workfd);
  restore_mounts_release(&h->rm);
  free(h->run);
}

/* The restore proper, once the container directory exists: on failure the caller removes
 * everything (sr_create_abort). */
static int restore_published(struct sr_create_ctx *ctx, const struct sr_criu_opts *o,
                             const char *binary, int cg_mode, int imgfd, int workfd,
                             const char *work, pid_t *out, sr_error_t *err)
{
  _cleanup_(restore_hold_release) struct restore_hold h = {
      .dups = {-1, -1, -1}, .workfd = workfd, .run = calloc(1, sizeof(struct restore_run))};
  _cleanup_criu_opts_ criu_opts *opts = NULL;
  struct restore_run *run = h.run;
  const char *root_path = NULL;
  struct stat st;
  if (run == NULL)
    return sr_error_make(err, ENOMEM, "restore");
  run->ctx = ctx;
  if (sr_create_setup_cgroup(ctx, err) < 0 || idmap_trees(ctx, err) < 0 ||
      restore_mounts_begin(&h.rm, ctx->o->id, &ctx->config->linux_,
                           ctx->binds.n + ctx->devs.n + 1, err) < 0 ||
      attach_tree(&h.rm, ctx->rootfs_tree_fd, true, "root", &root_path, err) < 0)
    return -1;
  if (stat(root_path, &st) < 0)
    return sr_error_sys(err, "restore: `%s`", root_path);
  run->root_dev = st.st_dev;
  if (criu_local_init_opts(&opts) < 0)
    return sr_error_make(err, ENOMEM, "criu options");
  if (set_opts(run, opts, o, binary, cg_mode, imgfd, workfd, root_path, err) < 0 ||
      external_mounts(run, opts, &h.rm, err) < 0 || inherit_stdio(opts, imgfd, h.dups, err) < 0 ||
      make_images_searchable(imgfd, &ctx->config->linux_, err) < 0)
    return -1;
  sr_restore_checks_begin(run);
  pid_t pid = criu_local_restore_child(opts);
  sr_restore_checks_end();
  if (pid > 0)
    ctx->init_pid = pid;
  else if (run->pid > 0)
    ctx->init_pid = run->pid;
  if (run->failed[0])
    return sr_error_make(err, EPERM,
                         "restore `%s`: refused: %s; the restored processes were killed",
                         ctx->o->id, run->failed);
  if (pid <= 0) {
    sr_error_make(err, 0, "restore `%s`: criu restore failed", ctx->o->id);
    sr_criu_explain(workfd, work, "restore.log", err);
    return -1;
  }
  struct sr_state_record *rec = ctx->container->rec;
  rec->pid = pid;
  if (sr_proc_stat(pid, &rec->pid_start, NULL) < 0)
    return sr_error_sys(err, "read the start time of the restored process %d", pid);
  rec->phase = SR_PHASE_CREATED;
  rec->creator_pid = 0;
  if (sr_statedir_save(ctx->container, err) < 0 ||
      (ctx->o->pid_file && sr_statedir_write_pid_file(ctx->o->pid_file, pid, err) < 0))
    return -1;
  *out = pid;
  return 0;
}

int sr_restore(struct sr_create_ctx *ctx, const struct sr_criu_opts *o, int *status,
               sr_error_t *err)
{
  const char *binary;
  int cg_mode;
  if (refuse_options(ctx, o, &binary, &cg_mode, err) < 0)
    return -1;
  const char *image = o->image_path ? o->image_path : "checkpoint";
  const char *work = o->work_path ? o->work_path : image;
  _cleanup_close_ int imgfd = open(image, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (imgfd < 0)
    return sr_error_sys(err, "--image-path `%s`", image);
  _cleanup_close_ int workfd = o->work_path ? open(work, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
                                            : fcntl(imgfd, F_DUPFD_CLOEXEC, 3);
  if (workfd < 0)
    return sr_error_sys(err, "--work-path `%s`", work);
  if (sr_restore_image_check(imgfd, &ctx->config->linux_, ctx->builtin_seccomp, err) < 0)
    return -1;
  _cleanup_close_ int rootfd = -1;
  if (sr_create_prepare(ctx, err) < 0 ||
      sr_statedir_open_root(ctx->inv->root, true, &rootfd, err) < 0 ||
      sr_create_record_begin(ctx, rootfd, err) < 0)
    return -1;
  /* The container holds the state root now (sr_create_ctx_release closes it). */
  rootfd = -1;
  /* From here on the container directory exists: any failure removes everything. */
  pid_t pid = -1;
  if (restore_published(ctx, o, binary, cg_mode, imgfd, workfd, work, &pid, err) < 0) {
    sr_create_abort(ctx);
    return -1;
  }
  *status = 0;
  if (!o->detach) {
    int ws;
    while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
      ;
    *status = ws;
  }
  return 0;
}

#else

int sr_restore(struct sr_create_ctx *ctx, const struct sr_criu_opts *o, int *status,
               sr_error_t *err)
{
  (void)ctx;
  (void)status;
  const char *b;
  return sr_criu_binary(o, &b, err);
}

#endif
