#include "build.h"

#include "namespaces.h"

#include "cleanup.h"
#include "fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

/* Opens a namespace file to join.  Whatever the path is, only an nsfs file is opened for real:
 * a FIFO would block the open until a writer comes, a device would see an open (and then an
 * ioctl) meant for a namespace. */
int sr_ns_open(const char *path, enum sr_ns_kind k, int *out, sr_error_t *err)
{
  const char *article = k == SR_NS_IPC ? "an" : "a";
  _cleanup_close_ int opath = open(path, O_PATH | O_CLOEXEC);
  if (opath < 0)
    return sr_error_sys(err, "linux.namespaces: %s namespace `%s`", sr_config_ns_name(k), path);
  struct statfs sfs;
  if (fstatfs(opath, &sfs) < 0)
    return sr_error_sys(err, "linux.namespaces: statfs `%s`", path);
  if (sfs.f_type != NSFS_MAGIC)
    return sr_error_make(err, 0, "linux.namespaces: `%s` is not %s %s namespace", path, article,
                         sr_config_ns_name(k));
  /* setns needs a descriptor opened for reading; reopen this very file. */
  char self[64];
  snprintf(self, sizeof(self), "/proc/self/fd/%d", opath);
  _cleanup_close_ int fd = open(self, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return sr_error_sys(err, "linux.namespaces: open %s namespace `%s`", sr_config_ns_name(k),
                        path);
  if (ioctl(fd, NS_GET_NSTYPE) != sr_config_ns_clone_flag(k))
    return sr_error_make(err, 0, "linux.namespaces: `%s` is not %s %s namespace", path, article,
                         sr_config_ns_name(k));
  *out = steal_fd(fd);
  return 0;
}

/* fd is the namespace /proc/self/ns/<entry> names. */
static bool is_self_ns(int fd, const char *entry)
{
  char path[64];
  struct stat a, b;
  snprintf(path, sizeof(path), "/proc/self/ns/%s", entry);
  return fstat(fd, &a) == 0 && stat(path, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* fd is the runtime's own namespace of kind k. */
static bool is_runtime_ns(int fd, enum sr_ns_kind k)
{
  return is_self_ns(fd, sr_config_ns_proc_name(k));
}

/* The config checked that every sysctl has its namespace; a joined one may still be the
 * runtime's own, where the write would change the host. */
static int check_sysctl_namespaces(const struct sr_linux *l, const struct sr_ns_plan *plan,
                                   sr_error_t *err)
{
  for (size_t i = 0; i < l->n_sysctl; i++) {
    int k = sr_config_sysctl_namespace(l->sysctl_keys[i]);
    if (k >= 0 && plan->join_fd[k] >= 0 && is_runtime_ns(plan->join_fd[k], k))
      return sr_error_make(
          err, 0,
          "linux.sysctl: \"%s\": the %s namespace `%s` is the runtime's own: setting "
          "it would change the host",
          l->sysctl_keys[i], sr_config_ns_name(k), l->namespaces[k].path);
  }
  return 0;
}

int sr_ns_check_names(const struct sr_config *c, const struct sr_ns_plan *plan, sr_error_t *err)
{
  int fd = plan->join_fd[SR_NS_UTS];
  if ((c->hostname || c->domainname) && fd >= 0 && is_runtime_ns(fd, SR_NS_UTS))
    return sr_error_make(err, 0,
                         "%s: the uts namespace `%s` is the runtime's own: setting it would "
                         "change the host's",
                         c->hostname ? "hostname" : "domainname", plan->path[SR_NS_UTS]);
  return 0;
}

/* Opens the namespaces the container joins (plan->join_fd, plan->path) and adds those it
 * makes to *new_flags; on failure the caller closes the plan. */
static int open_joins(const struct sr_linux *l, const struct sr_ns_opened *opened,
                      struct sr_ns_plan *plan, bool *any_join, int *new_flags, sr_error_t *err)
{
  for (int k = 0; k < SR_NS_COUNT; k++) {
    const struct sr_namespace *ns = &l->namespaces[k];
    if (!ns->present)
      continue;
    if (ns->path == NULL) {
      *new_flags |= sr_config_ns_clone_flag(k);
      continue;
    }
    if (opened && opened->fd) {
      /* The namespace the policy judged, not the path again (a swap to the host's). */
      if (opened->fd[k] < 0)
        return sr_error_make(err, 0, "%s", opened->error && opened->error[k]
                                               ? opened->error[k]
                                               : "linux.namespaces: not judged by the policy");
      plan->join_fd[k] = fcntl(opened->fd[k], F_DUPFD_CLOEXEC, 3);
      if (plan->join_fd[k] < 0)
        return sr_error_sys(err, "linux.namespaces: %s namespace `%s`", sr_config_ns_name(k),
                            ns->path);
    } else if (sr_ns_open(ns->path, k, &plan->join_fd[k], err) < 0)
      return -1;
    plan->path[k] = ns->path;
    *any_join = true;
  }
  return 0;
}

int sr_ns_plan_make(const struct sr_linux *l, const struct sr_ns_opened *opened,
                    struct sr_ns_plan *plan, sr_error_t *err)
{
  memset(plan, 0, sizeof(*plan));
  for (int k = 0; k < SR_NS_COUNT; k++)
    plan->join_fd[k] = -1;
  bool any_join = false;
  int new_flags = 0;
  if (open_joins(l, opened, plan, &any_join, &new_flags, err) < 0 ||
      check_sysctl_namespaces(l, plan, err) < 0) {
    sr_ns_plan_close(plan);
    return -1;
  }
  plan->new_userns = (new_flags & CLONE_NEWUSER) != 0;
  plan->new_cgroupns = (new_flags & CLONE_NEWCGROUP) != 0;
  plan->time_offsets =
      (new_flags & CLONE_NEWTIME) && (l->time_monotonic.set || l->time_boottime.set);
  new_flags &= ~CLONE_NEWCGROUP;
  plan->two_step = plan->join_fd[SR_NS_USER] >= 0 || plan->join_fd[SR_NS_PID] >= 0 ||
                   (plan->new_userns && any_join) || plan->time_offsets;
  if (plan->two_step)
    plan->unshare_flags = new_flags;
  else
    plan->clone_flags = new_flags;
  return 0;
}

void sr_ns_plan_close(struct sr_ns_plan *plan)
{
  for (int k = 0; k < SR_NS_COUNT; k++) {
    if (plan->join_fd[k] >= 0)
      close(plan->join_fd[k]);
    plan->join_fd[k] = -1;
  }
}

/* The /proc/self/ns entry of the namespace that setns(kind) changes: for pid and time, the one
 * the caller's children get. */
static const char *self_ns_entry(enum sr_ns_kind k)
{
  switch (k) {
  case SR_NS_PID:
    return "pid_for_children";
  case SR_NS_TIME:
    return "time_for_children";
  default:
    return sr_config_ns_proc_name(k);
  }
}

/* The caller is in fd's namespace already (joined by an earlier call). */
static bool already_in(int fd, enum sr_ns_kind k)
{
  return is_self_ns(fd, self_ns_entry(k));
}

int sr_ns_join(const struct sr_ns_plan *plan, bool user_only, sr_error_t *err)
{
  /* Mount last: it changes the root, and with it what /proc is. */
  static const enum sr_ns_kind order[] = {SR_NS_IPC,    SR_NS_UTS,  SR_NS_NET,  SR_NS_PID,
                                          SR_NS_CGROUP, SR_NS_TIME, SR_NS_MOUNT};
  static const size_t n_order = sizeof(order) / sizeof(order[0]);
  if (user_only) {
    int fd = plan->join_fd[SR_NS_USER];
    if (fd < 0)
      return 0;
    /* A namespace owned by a user namespace other than the joined one (the runtime's network
     * namespace, say) can only be joined with the runtime's privileges, before the user
     * namespace; one owned by the joined user namespace can be joined either way.  So try
     * them all now and leave the failures to the second call, made inside the user
     * namespace. */
    for (size_t i = 0; i + 1 < n_order; i++)
      if (plan->join_fd[order[i]] >= 0)
        (void)setns(plan->join_fd[order[i]], sr_config_ns_clone_flag(order[i]));
    if (setns(fd, CLONE_NEWUSER) < 0)
      return sr_error_sys(err, "linux.namespaces: join user namespace `%s`",
                          plan->path[SR_NS_USER] ? plan->path[SR_NS_USER] : "");
    return 0;
  }
  for (size_t i = 0; i < n_order; i++) {
    enum sr_ns_kind k = order[i];
    int fd = plan->join_fd[k];
    if (fd < 0 || (plan->join_fd[SR_NS_USER] >= 0 && already_in(fd, k)))
      continue;
    if (setns(fd, sr_config_ns_clone_flag(k)) < 0)
      return sr_error_sys(err, "linux.namespaces: join %s namespace `%s`", sr_config_ns_name(k),
                          plan->path[k] ? plan->path[k] : "");
  }
  return 0;
}

int sr_ns_write_time_offsets(const struct sr_linux *l, sr_error_t *err)
{
  char buf[128];
  int n = 0;
  if (l->time_monotonic.set)
    n += snprintf(buf + n, sizeof(buf) - (size_t)n, "monotonic %lld %u\n",
                  (long long)l->time_monotonic.secs, l->time_monotonic.nanosecs);
  if (l->time_boottime.set)
    n += snprintf(buf + n, sizeof(buf) - (size_t)n, "boottime %lld %u\n",
                  (long long)l->time_boottime.secs, l->time_boottime.nanosecs);
  if (n == 0)
    return 0;
  /* Both clocks in one write: the kernel parses every line before it applies any. */
  _cleanup_close_ int fd = open("/proc/self/timens_offsets", O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return sr_error_sys(err, "linux.timeOffsets: open /proc/self/timens_offsets");
  if (sr_fileio_write_all(fd, buf, (size_t)n) < 0)
    return sr_error_sys(err, "linux.timeOffsets: write /proc/self/timens_offsets");
  return 0;
}

/* The ids [a, a + size_a) and [b, b + size_b) have in common, if any: [*first, *last]. */
static bool common_ids(uint64_t a, uint64_t size_a, uint64_t b, uint64_t size_b, uint64_t *first,
                       uint64_t *last)
{
  *first = a > b ? a : b;
  *last = (a + size_a < b + size_b ? a + size_a : b + size_b) - 1;
  return *first <= *last && a < b + size_b && b < a + size_a;
}

/* Why the kernel refused a map (EINVAL), in the config's terms; 0 when the reason is none of
 * the known ones. */
static int explain_refused_map(const struct sr_id_map *m, size_t n, const char *field,
                               sr_error_t *err)
{
  /* The kernel's limit since 4.15 (UID_GID_MAP_MAX_EXTENTS). */
  if (n > 340)
    return sr_error_make(err, 0, "%s: %zu entries, the kernel takes at most 340", field, n);
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < i; j++) {
      uint64_t first, last;
      const char *where = NULL;
      if (common_ids(m[i].container_id, m[i].size, m[j].container_id, m[j].size, &first, &last))
        where = "in the container";
      else if (common_ids(m[i].host_id, m[i].size, m[j].host_id, m[j].size, &first, &last))
        where = "on the host";
      if (where)
        return sr_error_make(err, 0,
                             "%s[%zu] overlaps %s[%zu] %s (ids %llu-%llu): the kernel maps an "
                             "id only once",
                             field, i, field, j, where, (unsigned long long)first,
                             (unsigned long long)last);
    }
  return 0;
}

static int write_map(pid_t pid, const char *file, const struct sr_id_map *m, size_t n,
                     const char *field, sr_error_t *err)
{
  char path[64];
  size_t cap = n * 36 + 1, len = 0;
  _cleanup_free_ char *buf = malloc(cap);
  if (buf == NULL)
    return sr_error_make(err, ENOMEM, "%s", field);
  for (size_t i = 0; i < n; i++)
    len += (size_t)snprintf(buf + len, cap - len, "%u %u %u\n", m[i].container_id, m[i].host_id,
                            m[i].size);
  snprintf(path, sizeof(path), "/proc/%d/%s", pid, file);
  /* The kernel takes the whole map in a single write. */
  _cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return sr_error_sys(err, "%s: open %s", field, path);
  ssize_t w = write(fd, buf, len);
  if (w == (ssize_t)len)
    return 0;
  int saved = w < 0 ? errno : EIO;
  if (saved == EINVAL && explain_refused_map(m, n, field, err) < 0)
    return -1;
  return sr_error_make(err, saved, "%s: write %s", field, path);
}

int sr_ns_userns_write_maps(pid_t pid, const struct sr_linux *l, sr_error_t *err)
{
  if (write_map(pid, "uid_map", l->uid_mappings, l->n_uid_mappings, "linux.uidMappings", err) < 0 ||
      write_map(pid, "gid_map", l->gid_mappings, l->n_gid_mappings, "linux.gidMappings", err) < 0)
    return -1;
  return 0;
}

int sr_ns_userns_open_with_maps(const struct sr_linux *maps, int *out, sr_error_t *err)
{
  int pipefd[2];
  if (pipe2(pipefd, O_CLOEXEC) < 0)
    return sr_error_sys(err, "pipe");
  pid_t pid = fork();
  if (pid < 0) {
    close(pipefd[0]);
    close(pipefd[1]);
    return sr_error_sys(err, "fork");
  }
  if (pid == 0) {
    char c;
    close(pipefd[1]);
    if (unshare(CLONE_NEWUSER) < 0)
      _exit(1);
    /* Wait for the parent to finish with us. */
    (void)!read(pipefd[0], &c, 1);
    _exit(0);
  }
  close(pipefd[0]);
  int ret = -1;
  char path[64];
  /* Let the child unshare before looking at its namespace. */
  for (int tries = 0; tries < 1000; tries++) {
    char self[64], child[64];
    snprintf(path, sizeof(path), "/proc/%d/ns/user", pid);
    ssize_t a = readlink("/proc/self/ns/user", self, sizeof(self) - 1);
    ssize_t b = readlink(path, child, sizeof(child) - 1);
    if (a > 0 && b > 0 && (a != b || memcmp(self, child, (size_t)a) != 0))
      break;
    usleep(100);
  }
  if (sr_ns_userns_write_maps(pid, maps, err) == 0) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
      sr_error_sys(err, "open `%s`", path);
    else {
      *out = fd;
      ret = 0;
    }
  }
  close(pipefd[1]);
  waitpid(pid, NULL, 0);
  return ret;
}

/* The host id that container id `id` maps to in /proc/PID/{uid,gid}_map; -1 when unmapped. */
static int host_id_of(pid_t pid, const char *file, uint32_t id, int64_t *out, sr_error_t *err)
{
  /* Up to 340 lines of three numbers. */
  char path[64], buf[16384];
  snprintf(path, sizeof(path), "/proc/%d/%s", pid, file);
  if (sr_fileio_read_small_at(AT_FDCWD, path, buf, sizeof(buf), NULL, err) < 0)
    return -1;
  *out = -1;
  char *save = NULL;
  for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    unsigned long long inside, outside, count;
    if (sscanf(line, "%llu %llu %llu", &inside, &outside, &count) == 3 && id >= inside &&
        id - inside < count)
      *out = (int64_t)(outside + (id - inside));
  }
  return 0;
}

int sr_ns_userns_chown_to_root(pid_t pid, int dirfd, const char *name, sr_error_t *err)
{
  int64_t uid, gid;
  if (host_id_of(pid, "uid_map", 0, &uid, err) < 0 || host_id_of(pid, "gid_map", 0, &gid, err) < 0)
    return -1;
  /* Unmapped: the process keeps the runtime's ids, which own the file already. */
  if (fchownat(dirfd, name, uid < 0 ? (uid_t)-1 : (uid_t)uid, gid < 0 ? (gid_t)-1 : (gid_t)gid,
               AT_SYMLINK_NOFOLLOW) < 0)
    return sr_error_sys(err, "chown `%s` to the container's root", name);
  return 0;
}
