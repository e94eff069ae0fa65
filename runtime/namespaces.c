#include "build.h"

#include "namespaces.h"

#include "cleanup.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

int sr_ns_plan_make(const struct sr_linux *l, struct sr_ns_plan *plan, sr_error_t *err)
{
  memset(plan, 0, sizeof(*plan));
  for (int k = 0; k < SR_NS_COUNT; k++)
    plan->join_fd[k] = -1;
  bool any_join = false;
  int new_flags = 0;
  for (int k = 0; k < SR_NS_COUNT; k++) {
    const struct sr_namespace *ns = &l->namespaces[k];
    if (!ns->present)
      continue;
    if (ns->path == NULL) {
      new_flags |= sr_ns_clone_flag(k);
      continue;
    }
    int fd = open(ns->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      sr_error_sys(err, "linux.namespaces: %s namespace `%s`", sr_ns_name(k), ns->path);
      goto fail;
    }
    plan->join_fd[k] = fd;
    int type = ioctl(fd, NS_GET_NSTYPE);
    if (type != sr_ns_clone_flag(k)) {
      sr_error_make(err, 0, "linux.namespaces: `%s` is not a %s namespace", ns->path,
                    sr_ns_name(k));
      goto fail;
    }
    any_join = true;
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
fail:
  sr_ns_plan_close(plan);
  return -1;
}

void sr_ns_plan_close(struct sr_ns_plan *plan)
{
  for (int k = 0; k < SR_NS_COUNT; k++) {
    if (plan->join_fd[k] >= 0)
      close(plan->join_fd[k]);
    plan->join_fd[k] = -1;
  }
}

int sr_ns_join(const struct sr_ns_plan *plan, bool user_only, sr_error_t *err)
{
  static const enum sr_ns_kind order[] = {SR_NS_IPC,    SR_NS_UTS,  SR_NS_NET,  SR_NS_PID,
                                          SR_NS_CGROUP, SR_NS_TIME, SR_NS_MOUNT};
  if (user_only) {
    if (plan->join_fd[SR_NS_USER] >= 0 && setns(plan->join_fd[SR_NS_USER], CLONE_NEWUSER) < 0)
      return sr_error_sys(err, "setns user namespace");
    return 0;
  }
  for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
    int fd = plan->join_fd[order[i]];
    if (fd >= 0 && setns(fd, sr_ns_clone_flag(order[i])) < 0)
      return sr_error_sys(err, "setns %s namespace", sr_ns_name(order[i]));
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
  /* One write per clock: the kernel parses a line at a time. */
  _cleanup_close_ int fd = open("/proc/self/timens_offsets", O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return sr_error_sys(err, "linux.timeOffsets: open /proc/self/timens_offsets");
  if (sr_write_all(fd, buf, (size_t)n) < 0)
    return sr_error_sys(err, "linux.timeOffsets: write /proc/self/timens_offsets");
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
  if (w != (ssize_t)len)
    return sr_error_make(err, w < 0 ? errno : EIO, "%s: write %s", field, path);
  return 0;
}

int sr_userns_write_maps(pid_t pid, const struct sr_linux *l, sr_error_t *err)
{
  if (write_map(pid, "uid_map", l->uid_mappings, l->n_uid_mappings, "linux.uidMappings", err) < 0 ||
      write_map(pid, "gid_map", l->gid_mappings, l->n_gid_mappings, "linux.gidMappings", err) < 0)
    return -1;
  return 0;
}
