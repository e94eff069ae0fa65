#include "build.h"

#include "devices.h"

#include "cleanup.h"
#include "default_devices.h"
#include "mountapi.h"
#include "path.h"
#include "paths.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>


static const struct {
  const char *target, *link;
} dev_symlinks[] = {
    {"/proc/self/fd", "/dev/fd"},       {"/proc/self/fd/0", "/dev/stdin"},
    {"/proc/self/fd/1", "/dev/stdout"}, {"/proc/self/fd/2", "/dev/stderr"},
    {"/proc/kcore", "/dev/core"},       {"pts/ptmx", "/dev/ptmx"},
};

static mode_t type_bits(char t)
{
  switch (t) {
  case 'b':
    return S_IFBLK;
  case 'p':
    return S_IFIFO;
  default:
    return S_IFCHR;
  }
}

void sr_devices_plan_close(struct sr_dev_plan *plan)
{
  if (plan->host_node_fd)
    for (size_t i = 0; i < plan->n; i++)
      if (plan->host_node_fd[i] >= 0)
        close(plan->host_node_fd[i]);
  free(plan->host_node_fd);
  free(plan->devices);
  memset(plan, 0, sizeof(*plan));
}

/* The host's node for a device, checked to be that very device: the path alone proves
 * nothing. */
static int open_host_node(const struct sr_device *d, size_t index, int *out, sr_error_t *err)
{
  _cleanup_close_ int fd =
      sr_mountapi_open_tree(AT_FDCWD, d->path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
  if (fd < 0)
    return sr_error_sys(err,
                        "linux.devices[%zu]: a user namespace cannot mknod, and the host "
                        "node `%s` to bind-mount is not usable",
                        index, d->path);
  struct stat st;
  if (fstat(fd, &st) < 0)
    return sr_error_sys(err, "linux.devices[%zu]: stat `%s`", index, d->path);
  if ((st.st_mode & S_IFMT) != type_bits(d->type) ||
      (d->type != 'p' && st.st_rdev != makedev(d->major, d->minor)))
    return sr_error_make(err, 0, "linux.devices[%zu]: host node `%s` is not device %c %lld:%lld",
                         index, d->path, d->type, (long long)d->major, (long long)d->minor);
  *out = steal_fd(fd);
  return 0;
}

int sr_devices_prepare(const struct sr_config *c, bool userns, struct sr_dev_plan *plan,
                       sr_error_t *err)
{
  memset(plan, 0, sizeof(*plan));
  for (size_t i = 0; i < c->n_mounts; i++)
    if (strcmp(c->mounts[i].destination, "/dev") == 0 &&
        (c->mounts[i].opts.bind || c->mounts[i].opts.rbind))
      plan->skip = true;
  size_t total = sr_default_devices_n + c->linux_.n_devices;
  plan->devices = calloc(total, sizeof(struct sr_device));
  plan->host_node_fd = malloc(total * sizeof(int));
  if (plan->devices == NULL || plan->host_node_fd == NULL) {
    sr_devices_plan_close(plan);
    return sr_error_make(err, ENOMEM, "prepare devices");
  }
  for (size_t i = 0; i < total; i++)
    plan->host_node_fd[i] = -1;
  /* Config entries replace a default of the same path. */
  for (size_t i = 0; i < sr_default_devices_n; i++) {
    const struct sr_default_device *def = &sr_default_devices[i];
    bool overridden = !def->node;
    for (size_t j = 0; j < c->linux_.n_devices; j++)
      if (strcmp(c->linux_.devices[j].path, def->path) == 0)
        overridden = true;
    if (!overridden)
      plan->devices[plan->n++] = (struct sr_device){
          .type = def->type, .path = (char *)def->path, .major = def->major,
          .minor = def->minor, .has_file_mode = true, .file_mode = 0666, .has_uid = true,
          .has_gid = true};
  }
  size_t first_config = plan->n;
  plan->first_config = first_config;
  for (size_t j = 0; j < c->linux_.n_devices; j++)
    plan->devices[plan->n++] = c->linux_.devices[j];
  if (!userns || plan->skip)
    return 0;
  for (size_t i = 0; i < plan->n; i++) {
    size_t index = i >= first_config ? i - first_config : i;
    /* A FIFO is made inside (mkfifo needs no privilege): the host's FIFO at that path would be
     * a line to whatever host process reads it (/run/initctl). */
    if (plan->devices[i].type == 'p')
      continue;
    if (open_host_node(&plan->devices[i], index, &plan->host_node_fd[i], err) < 0) {
      sr_devices_plan_close(plan);
      return -1;
    }
  }
  return 0;
}

/* What the path names: "linux.devices[N]" for a config entry, "device" for a default. */
static void device_what(const struct sr_dev_plan *plan, size_t i, char *buf, size_t size)
{
  if (i >= plan->first_config)
    snprintf(buf, size, "linux.devices[%zu]", i - plan->first_config);
  else
    snprintf(buf, size, "device");
}

static bool is_device(const struct stat *st, const struct sr_device *d)
{
  return (st->st_mode & S_IFMT) == type_bits(d->type) &&
         (d->type == 'p' || st->st_rdev == makedev(d->major, d->minor));
}

/* The node itself, or in a user namespace the empty file the host's node is bound onto.
 * O_EXCL: an existing node of the image is never opened (a fifo would block us, a device could
 * act on open).  < 0 with errno on failure. */
static int make_node(int dir, const char *name, bool bind, mode_t mode, dev_t dev)
{
  if (!bind)
    return mknodat(dir, name, mode, dev);
  int fd = openat(dir, name, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    return -1;
  close(fd);
  return 0;
}

static int create_node(const struct sr_device *d, const char *what, bool replace, int host_fd,
                       int root_fd, sr_error_t *err)
{
  char parent_path[4096];
  /* A truncated copy would be another path, and its last "/" another parent. */
  if (sr_path_join(parent_path, sizeof(parent_path), "", d->path, err) < 0)
    return sr_error_wrap(err, "%s", what);
  char *slash = strrchr(parent_path, '/');
  const char *name = slash + 1;
  *slash = '\0';
  _cleanup_close_ int parent = -1;
  if (sr_paths_mkpath_in_root(root_fd, parent_path[0] ? parent_path : "/", SR_MKPATH_DIR, &parent,
                              err) < 0)
    return sr_error_wrap(err, "%s `%s`", what, d->path);
  /* parent is an O_PATH descriptor; the *at calls below need a real directory descriptor. */
  _cleanup_close_ int dir = openat(parent, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0)
    return sr_error_sys(err, "%s `%s`: open parent", what, d->path);
  mode_t mode = type_bits(d->type) | (d->has_file_mode ? (d->file_mode & 07777) : 0666);
  dev_t dev = d->type == 'p' ? 0 : makedev(d->major, d->minor);
  /* In a user namespace the host's node is bound onto an empty file. */
  bool bind = host_fd >= 0;
  if (make_node(dir, name, bind, mode, dev) < 0) {
    if (errno != EEXIST)
      return sr_error_sys(err, "%s `%s`: %s", what, d->path, bind ? "create bind target" : "mknod");
    struct stat st;
    if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
      return sr_error_sys(err, "%s `%s`: stat", what, d->path);
    if (!is_device(&st, d) && !(bind && S_ISREG(st.st_mode))) {
      if (!replace)
        return sr_error_make(err, EEXIST, "%s `%s`: exists and is not device %c %lld:%lld", what,
                             d->path, d->type, (long long)d->major, (long long)d->minor);
      /* The image's file (a symlink, say, to point /dev/null elsewhere) gives way. */
      if (unlinkat(dir, name, 0) < 0)
        return sr_error_sys(err, "%s `%s`: replace existing file", what, d->path);
      if (make_node(dir, name, bind, mode, dev) < 0)
        return sr_error_sys(err, "%s `%s`: replace existing file", what, d->path);
    }
  }
  if (bind) {
    _cleanup_close_ int target = openat(dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    if (target < 0)
      return sr_error_sys(err, "%s `%s`: open bind target", what, d->path);
    /* The host node's owner and mode are the host's business: nothing is changed on it. */
    if (sr_mountapi_attach_mount(host_fd, target) < 0)
      return sr_error_sys(err, "%s `%s`: bind the host node", what, d->path);
    return 0;
  }
  /* Neither call follows a symlink: what is changed is the node made or checked above. */
  if (fchownat(dir, name, d->has_uid ? d->uid : 0, d->has_gid ? d->gid : 0, AT_SYMLINK_NOFOLLOW) <
      0)
    return sr_error_sys(err, "%s `%s`: chown", what, d->path);
  /* mknod applies the umask; the mode asked for is exact. */
  if (fchmodat(dir, name, mode & 07777, AT_SYMLINK_NOFOLLOW) < 0)
    return sr_error_sys(err, "%s `%s`: chmod", what, d->path);
  return 0;
}

int sr_devices_create(const struct sr_dev_plan *plan, int root_fd, sr_error_t *err)
{
  if (plan->skip)
    return 0;
  for (size_t i = 0; i < plan->n; i++) {
    char what[64];
    device_what(plan, i, what, sizeof(what));
    if (create_node(&plan->devices[i], what, i < plan->first_config, plan->host_node_fd[i], root_fd,
                    err) < 0)
      return -1;
  }
  _cleanup_close_ int dev = -1;
  if (sr_paths_mkpath_in_root(root_fd, "/dev", SR_MKPATH_DIR, &dev, err) < 0)
    return -1;
  _cleanup_close_ int devdir = openat(dev, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (devdir < 0)
    return sr_error_sys(err, "open /dev in the container");
  for (size_t i = 0; i < sizeof(dev_symlinks) / sizeof(dev_symlinks[0]); i++) {
    const char *name = dev_symlinks[i].link + strlen("/dev/");
    /* As runc: /dev/core only where the kernel has a /proc/kcore (CONFIG_PROC_KCORE); this is
     * still the host's /proc, and the container's kernel is the same. */
    if (strcmp(name, "core") == 0 && access("/proc/kcore", F_OK) < 0)
      continue;
    if (strcmp(name, "ptmx") == 0) {
      /* /dev/ptmx must lead to this container's devpts instance: whatever the image has there
       * (a node, a symlink elsewhere) gives way to the link to pts/ptmx. */
      char link[16];
      ssize_t n = readlinkat(devdir, name, link, sizeof(link));
      bool ours = n == (ssize_t)strlen("pts/ptmx") && memcmp(link, "pts/ptmx", (size_t)n) == 0;
      if (!ours && unlinkat(devdir, name, 0) < 0 && errno != ENOENT)
        return sr_error_sys(err, "remove /dev/ptmx");
    }
    if (symlinkat(dev_symlinks[i].target, devdir, name) < 0 && errno != EEXIST)
      return sr_error_sys(err, "symlink %s -> %s", dev_symlinks[i].link, dev_symlinks[i].target);
  }
  return 0;
}
