/* The writable places of a container (activity_files.h): found in its mount table and opened
 * by descriptor at create, before any of its code has run. */
#include "build.h"

#include "activity_files.h"

#include "cleanup.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <unistd.h>

/* File systems whose writes are not files the code leaves (kernel interfaces, devices). */
static bool pseudo_fs(const char *t)
{
  static const char *const names[] = {
      "proc",      "sysfs",   "cgroup",   "cgroup2",    "devpts",   "mqueue",  "securityfs",
      "debugfs",   "tracefs", "bpf",      "fusectl",    "configfs", "pstore",  "binfmt_misc",
      "autofs",    "nsfs",    "hugetlbfs", "efivarfs",  "selinuxfs", "devtmpfs", "rpc_pipefs",
      NULL};
  for (size_t i = 0; names[i]; i++)
    if (strcmp(names[i], t) == 0)
      return true;
  return false;
}

/* mountinfo writes space, tab, newline and backslash as \ooo. */
static void unescape(char *s)
{
  char *o = s;
  for (; *s; s++) {
    if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' && s[3] >= '0' &&
        s[3] <= '7') {
      *o++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
      s += 3;
    } else
      *o++ = *s;
  }
  *o = '\0';
}

static bool has_opt(const char *opts, const char *opt)
{
  size_t l = strlen(opt);
  for (const char *p = opts; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
    if (strncmp(p, opt, l) == 0 && (p[l] == ',' || p[l] == '\0'))
      return true;
  return false;
}

static uint64_t mnt_id_of(int fd)
{
  struct statx sx;
  if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_MNT_ID | STATX_TYPE, &sx) < 0 ||
      !(sx.stx_mask & STATX_MNT_ID))
    return 0;
  return sx.stx_mnt_id;
}

void sr_activity_places_close(struct sr_act_places *ps)
{
  for (size_t i = 0; i < ps->n; i++) {
    if (ps->p[i].fd >= 0)
      close(ps->p[i].fd);
    if (ps->p[i].lower_fd >= 0)
      close(ps->p[i].lower_fd);
    ps->p[i].fd = ps->p[i].lower_fd = -1;
  }
  ps->n = 0;
  if (ps->mntns_fd >= 0)
    close(ps->mntns_fd);
  ps->mntns_fd = -1;
}

int sr_activity_places_add(struct sr_act_places *ps, const char *label, const char *kind,
                           const char *role, int dirfd, int lower_fd, sr_error_t *err)
{
  struct stat st;
  if (fstat(dirfd, &st) < 0 || !(S_ISDIR(st.st_mode) || S_ISREG(st.st_mode))) {
    close(dirfd);
    if (lower_fd >= 0)
      close(lower_fd);
    return sr_error_make(err, EINVAL, "activity: place %s: not a directory or a file", label);
  }
  /* A place of the same name is replaced: the caller knows more of it (an overlay's layers)
   * than the mount table says. */
  struct sr_act_place *p = NULL;
  for (size_t i = 0; i < ps->n && p == NULL; i++)
    if (strcmp(ps->p[i].path, label) == 0) {
      p = &ps->p[i];
      close(p->fd);
      if (p->lower_fd >= 0)
        close(p->lower_fd);
    }
  if (p == NULL && ps->n >= SR_ACT_PLACES) {
    ps->not_recorded++;
    close(dirfd);
    if (lower_fd >= 0)
      close(lower_fd);
    return 0;
  }
  if (p == NULL)
    p = &ps->p[ps->n++];
  memset(p, 0, sizeof(*p));
  snprintf(p->path, sizeof(p->path), "%s", label);
  snprintf(p->kind, sizeof(p->kind), "%s", kind);
  snprintf(p->role, sizeof(p->role), "%s", role);
  p->fd = dirfd;
  p->lower_fd = lower_fd;
  p->upper = lower_fd >= 0;
  p->is_file = S_ISREG(st.st_mode);
  p->mnt_id = mnt_id_of(dirfd);
  return 0;
}

static bool listed(const char *const *v, const char *s)
{
  for (size_t i = 0; v && v[i]; i++)
    if (strcmp(v[i], s) == 0)
      return true;
  return false;
}

/* The devices of the tmpfs mounts of the caller's own mount namespace (the host's, or the
 * engine's).  A tmpfs of the container's with one of them is not one made for it but a host
 * tmpfs bound in (the host's /dev/shm, a tmpfs /tmp or /run): what the code writes there
 * outlives the container, so it is no scratch space. */
struct host_tmpfs {
  dev_t *dev;
  size_t n;
};

static void host_tmpfs_free(struct host_tmpfs *h)
{
  free(h->dev);
}

static int host_tmpfs_read(struct host_tmpfs *h, sr_error_t *err)
{
  _cleanup_fclose_ FILE *f = fopen("/proc/self/mountinfo", "re");
  if (f == NULL)
    return sr_error_sys(err, "activity: the host's mounts (/proc/self/mountinfo)");
  _cleanup_free_ char *line = NULL;
  size_t cap = 0;
  while (getline(&line, &cap, f) > 0) {
    unsigned maj, min;
    /* id parent major:minor root mountpoint options [optional...] - fstype ...: a mount
     * point's spaces are written as \040, so " - " is the separator. */
    const char *sep = strstr(line, " - ");
    if (sscanf(line, "%*u %*u %u:%u", &maj, &min) != 2 || sep == NULL ||
        strncmp(sep + 3, "tmpfs ", 6) != 0)
      continue;
    dev_t *v = realloc(h->dev, (h->n + 1) * sizeof(*v));
    if (v == NULL)
      return sr_error_make(err, ENOMEM, "activity: the host's mounts");
    h->dev = v;
    h->dev[h->n++] = makedev(maj, min);
  }
  return 0;
}

static bool host_tmpfs_has(const struct host_tmpfs *h, dev_t dev)
{
  for (size_t i = 0; i < h->n; i++)
    if (h->dev[i] == dev)
      return true;
  return false;
}

/* One line of mountinfo: a writable place, opened from the container's root. */
static int open_place(struct sr_act_places *ps, int rootfd, char *line,
                      const char *const *outputs, const struct host_tmpfs *host,
                      sr_error_t *err)
{
  /* id parent major:minor root mountpoint options [optional...] - fstype source superoptions */
  char *save = NULL, *f[6];
  for (int i = 0; i < 6; i++)
    if ((f[i] = strtok_r(i ? NULL : line, " ", &save)) == NULL)
      return 0;
  char *sep = strtok_r(NULL, " ", &save);
  while (sep && strcmp(sep, "-") != 0)
    sep = strtok_r(NULL, " ", &save);
  char *fstype = sep ? strtok_r(NULL, " ", &save) : NULL;
  char *source = fstype ? strtok_r(NULL, " ", &save) : NULL;
  char *super = source ? strtok_r(NULL, " \n", &save) : NULL;
  if (super == NULL || has_opt(f[5], "ro") || has_opt(super, "ro") || pseudo_fs(fstype))
    return 0;
  uint64_t id = strtoull(f[0], NULL, 10);
  char *mp = f[4];
  unescape(mp);
  if (mp[0] != '/')
    return 0;
  if (ps->n >= SR_ACT_PLACES) {
    ps->not_recorded++;
    return 0;
  }
  /* Resolved in the container's root, no symlink followed: none of its code has run yet, but
   * the image's names are not ours. */
  struct open_how how = {.flags = O_PATH | O_CLOEXEC | O_NOFOLLOW,
                         .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
  _cleanup_close_ int fd = (int)syscall(SYS_openat2, rootfd, mp[1] ? mp + 1 : ".", &how,
                                         sizeof(how));
  if (fd < 0) {
    ps->not_recorded++; /* reached through a symlink, or gone: said, not walked */
    return 0;
  }
  /* The mount that line is, decided on the fd; one that another is mounted over is not
   * reachable by any name in the container (its open files aside). */
  if (mnt_id_of(fd) != id)
    return 0;
  struct stat st;
  if (fstat(fd, &st) < 0)
    return 0;
  int use;
  if (S_ISDIR(st.st_mode))
    use = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  else if (S_ISREG(st.st_mode))
    use = steal_fd(fd); /* a bound file: stat'ed, never opened for reading */
  else
    return 0;         /* a device node or the like */
  if (use < 0)
    return sr_error_sys(err, "activity: open the mount at %s", mp);
  /* Its device from the descriptor, not from the line: the mount opened is what is judged. */
  bool tmpfs = strcmp(fstype, "tmpfs") == 0 && !host_tmpfs_has(host, st.st_dev);
  const char *kind = strcmp(mp, "/") == 0 ? "root" : tmpfs ? "tmpfs" : "bind";
  const char *role = listed(outputs, mp)                     ? "output"
                     : tmpfs && strcmp(mp, "/dev") != 0 ? "scratch"
                                                             : "other";
  if (sr_activity_places_add(ps, mp, kind, role, use, -1, err) < 0)
    return -1;
  snprintf(ps->p[ps->n - 1].fs, sizeof(ps->p[0].fs), "%s", fstype);
  return 0;
}

int sr_activity_places_open(pid_t pid, int pidfd, const char *const *outputs,
                            struct sr_act_places *out, sr_error_t *err)
{
  memset(out, 0, sizeof(*out));
  out->mntns_fd = -1;
  char path[64];
  snprintf(path, sizeof(path), "/proc/%d/root", pid);
  _cleanup_close_ int rootfd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
  snprintf(path, sizeof(path), "/proc/%d/ns/mnt", pid);
  _cleanup_close_ int ns = open(path, O_RDONLY | O_CLOEXEC);
  snprintf(path, sizeof(path), "/proc/%d/mountinfo", pid);
  _cleanup_fclose_ FILE *f = fopen(path, "re");
  if (rootfd < 0 || ns < 0 || f == NULL)
    return sr_error_sys(err, "activity: the container's mounts (%s)", path);
  /* The pid was the init's when it was opened: its pidfd says it has not ended since, so
   * what was opened is the container's (no reused pid). */
  struct pollfd p = {pidfd, POLLIN, 0};
  if (poll(&p, 1, 0) != 0)
    return sr_error_make(err, ESRCH, "activity: the container's init has ended");
  /* Unread, every tmpfs would pass for scratch space: the record says it could not look. */
  __attribute__((cleanup(host_tmpfs_free))) struct host_tmpfs host = {0};
  if (host_tmpfs_read(&host, err) < 0)
    return -1;
  _cleanup_free_ char *line = NULL;
  size_t cap = 0;
  while (getline(&line, &cap, f) > 0)
    if (open_place(out, rootfd, line, outputs, &host, err) < 0) {
      sr_activity_places_close(out);
      return -1;
    }
  out->mntns_fd = steal_fd(ns);
  return 0;
}
