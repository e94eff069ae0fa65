#include "build.h"

#include "process_attrs.h"
#include "cleanup.h"
#include "lsm.h"
#include "names.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/resource.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

/* ---- procfs ---- */

static bool all_digits(const char *s, size_t n)
{
  if (n == 0)
    return false;
  for (size_t i = 0; i < n; i++)
    if (s[i] < '0' || s[i] > '9')
      return false;
  return true;
}

/* Replaces a leading "self/" or "thread-self/" by what that link of `proc_fd` says ("42/",
 * "42/task/43/"): openat2 is told to follow no symlink at all, and these two are the only ones
 * wanted.  The procfs answers for its own pid namespace, so the path names the caller even when
 * that is not the caller's pid namespace. */
static int resolve_self(int proc_fd, const char *rel, char *out, size_t outsz, sr_error_t *err)
{
  const char *link = NULL;
  const char *rest = rel;
  if (strncmp(rel, "self/", 5) == 0) {
    link = "self";
    rest = rel + 5;
  } else if (strncmp(rel, "thread-self/", 12) == 0) {
    link = "thread-self";
    rest = rel + 12;
  }
  if (link == NULL) {
    if ((size_t)snprintf(out, outsz, "%s", rel) >= outsz)
      return sr_error_make(err, ENAMETOOLONG, "open /proc/%s", rel);
    return 0;
  }
  char target[64];
  ssize_t n = readlinkat(proc_fd, link, target, sizeof(target) - 1);
  if (n < 0)
    return sr_error_sys(err, "open /proc/%s: readlink /proc/%s", rel, link);
  target[n] = '\0';
  /* Only the shapes procfs produces: anything else is not the kernel's link. */
  const char *task = memchr(target, '/', (size_t)n);
  bool ok = strcmp(link, "self") == 0
                ? all_digits(target, (size_t)n)
                : task != NULL && all_digits(target, (size_t)(task - target)) &&
                      strncmp(task, "/task/", 6) == 0 && all_digits(task + 6, strlen(task + 6));
  if (!ok)
    return sr_error_make(err, 0, "open /proc/%s: /proc/%s points to unexpected \"%s\"", rel, link,
                         target);
  if ((size_t)snprintf(out, outsz, "%s/%s", target, rest) >= outsz)
    return sr_error_make(err, ENAMETOOLONG, "open /proc/%s", rel);
  return 0;
}

int sr_process_attrs_open_proc(int proc_fd, const char *rel, int flags, sr_error_t *err)
{
  char path[PATH_MAX];
  if (rel == NULL || rel[0] == '\0' || rel[0] == '/')
    return sr_error_make(err, EINVAL, "open /proc/%s: not a relative path", rel ? rel : "(null)");
  if (resolve_self(proc_fd, rel, path, sizeof(path), err) < 0)
    return -1;
  /* A container-controlled path must not redirect the write elsewhere: no "..", no symlink
   * (magic links such as self/cwd or self/root included), and no mount point, which would let
   * a bind mount of another procfs file (CVE-2025-52881 class) stand in for this one. */
  struct open_how how = {
      .flags = (uint64_t)(flags | O_CLOEXEC | O_NOCTTY),
      .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV,
  };
  _cleanup_close_ int fd = (int)syscall(SYS_openat2, proc_fd, path, &how, sizeof(how));
  if (fd < 0) {
    int e = errno;
    const char *why = e == ELOOP   ? " (the path goes through a symlink)"
                      : e == EXDEV ? " (the path leaves the procfs or crosses a mount point)"
                                   : "";
    return sr_error_make(err, e, "open /proc/%s%s", rel, why);
  }
  struct statfs sfs;
  if (fstatfs(fd, &sfs) < 0)
    return sr_error_sys(err, "open /proc/%s: fstatfs", rel);
  /* The file must belong to a procfs: a tmpfs or bind mount posing as /proc could otherwise
   * receive (and ignore) a security setting. */
  if (sfs.f_type != PROC_SUPER_MAGIC)
    return sr_error_make(err, 0, "open /proc/%s: not on procfs (filesystem magic 0x%lx)", rel,
                         (unsigned long)sfs.f_type);
  return steal_fd(fd);
}

int sr_process_attrs_write_proc(int proc_fd, const char *rel, const char *value, sr_error_t *err)
{
  _cleanup_close_ int fd = sr_process_attrs_open_proc(proc_fd, rel, O_WRONLY, err);
  if (fd < 0)
    return -1;
  size_t len = strlen(value);
  ssize_t n;
  do
    n = write(fd, value, len);
  while (n < 0 && errno == EINTR);
  if (n < 0)
    return sr_error_sys(err, "write \"%s\" to /proc/%s", value, rel);
  /* procfs takes a value in one write; a second one would land at another offset. */
  if ((size_t)n != len)
    return sr_error_make(err, EIO, "write \"%s\" to /proc/%s: short write (%zd of %zu bytes)",
                         value, rel, n, len);
  return 0;
}

/* ---- rlimits ---- */

static void fmt_rlim(char *buf, size_t sz, rlim_t v)
{
  if (v == RLIM_INFINITY)
    snprintf(buf, sz, "unlimited");
  else
    snprintf(buf, sz, "%" PRIu64, (uint64_t)v);
}

int sr_process_attrs_apply_rlimits(const struct sr_process *p, sr_error_t *err)
{
  for (size_t i = 0; i < p->n_rlimits; i++) {
    const struct sr_rlimit *r = &p->rlimits[i];
    const char *name = sr_names_of(SR_NAMES(sr_names_rlimit), r->resource);
    struct rlimit want = {.rlim_cur = (rlim_t)r->soft, .rlim_max = (rlim_t)r->hard};
    if (prlimit(0, r->resource, &want, NULL) == 0)
      continue;
    int e = errno;
    char soft[24], hard[24], cur_hard[24] = "";
    fmt_rlim(soft, sizeof(soft), want.rlim_cur);
    fmt_rlim(hard, sizeof(hard), want.rlim_max);
    struct rlimit cur;
    if (e == EPERM && prlimit(0, r->resource, NULL, &cur) == 0 && want.rlim_max > cur.rlim_max)
      fmt_rlim(cur_hard, sizeof(cur_hard), cur.rlim_max);
    if (cur_hard[0])
      return sr_error_make(err, e,
                           "process.rlimits: setrlimit %s %s/%s (raising the hard limit above "
                           "the current %s needs CAP_SYS_RESOURCE)",
                           name ? name : "?", soft, hard, cur_hard);
    return sr_error_make(err, e, "process.rlimits: setrlimit %s %s/%s", name ? name : "?", soft,
                         hard);
  }
  return 0;
}

/* ---- oom_score_adj ---- */

int sr_process_attrs_set_oom_score_adj(const struct sr_process *p, pid_t init_pid, sr_error_t *err)
{
  if (!p->has_oom_score_adj)
    return 0; /* the spec: not set, not changed */
  /* Written by the parent, the host's root, into the init's /proc/PID: the init is not
   * dumpable (its /proc files are the host root's) and, in a user namespace, may neither open
   * its own oom_score_adj nor lower it (CAP_SYS_RESOURCE of the host's user namespace). */
  _cleanup_close_ int proc_fd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (proc_fd < 0)
    return sr_error_sys(err, "process.oomScoreAdj: open /proc");
  char rel[32], buf[16];
  snprintf(rel, sizeof(rel), "%d/oom_score_adj", (int)init_pid);
  snprintf(buf, sizeof(buf), "%d", p->oom_score_adj);
  if (sr_process_attrs_write_proc(proc_fd, rel, buf, err) < 0) {
    if ((*err)->status == EACCES)
      return sr_error_wrap(err, "process.oomScoreAdj: lowering it to %d needs CAP_SYS_RESOURCE",
                           p->oom_score_adj);
    return sr_error_wrap(err, "process.oomScoreAdj");
  }
  return 0;
}

/* ---- scheduler ---- */

/* struct sched_attr of the kernel ABI (SCHED_ATTR_SIZE_VER1); our own copy, since libc headers
 * only recently started to declare it. */
struct sr_sched_attr {
  uint32_t size;
  uint32_t sched_policy;
  uint64_t sched_flags;
  int32_t sched_nice;
  uint32_t sched_priority;
  uint64_t sched_runtime;
  uint64_t sched_deadline;
  uint64_t sched_period;
  uint32_t sched_util_min;
  uint32_t sched_util_max;
};

int sr_process_attrs_apply_scheduler(const struct sr_process *p, sr_error_t *err)
{
  const struct sr_scheduler *s = p->scheduler;
  if (s == NULL)
    return 0;
  struct sr_sched_attr attr = {
      .size = sizeof(attr),
      .sched_policy = (uint32_t)s->policy,
      .sched_flags = s->flags,
      .sched_nice = s->nice,
      .sched_priority = (uint32_t)s->priority,
      .sched_runtime = s->runtime,
      .sched_deadline = s->deadline,
      .sched_period = s->period,
  };
  if (s->priority < 0)
    return sr_error_make(err, EINVAL, "process.scheduler.priority: %" PRId32 " is negative",
                         s->priority);
  if (syscall(SYS_sched_setattr, 0, &attr, 0) < 0) {
    const char *name = sr_names_of(SR_NAMES(sr_names_sched_policy), s->policy);
    /* EPERM for a real-time policy is rarely about the process itself: say what it needs. */
    bool rt = s->policy == SCHED_FIFO || s->policy == SCHED_RR;
    const char *why = errno == EPERM && rt
                          ? " (a real-time policy needs a real-time budget in the container's "
                            "cpu cgroup where the kernel schedules groups (cgroup v1 "
                            "cpu.rt_runtime_us, 0 in a new cgroup: set "
                            "linux.resources.cpu.realtimeRuntime), and in a user namespace a "
                            "process.rlimits RLIMIT_RTPRIO of at least the priority)"
                          : "";
    return sr_error_sys(
        err,
        "process.scheduler: sched_setattr %s (nice %" PRId32 ", priority %" PRId32
        ", flags 0x%" PRIx64 ", runtime %" PRIu64 ", deadline %" PRIu64 ", period %" PRIu64
        ")%s",
        name ? name : "?", s->nice, s->priority, s->flags, s->runtime, s->deadline, s->period, why);
  }
  return 0;
}

/* ---- I/O priority ---- */

/* <linux/ioprio.h>: who = a process, value = class << 13 | level. */
#define SR_IOPRIO_WHO_PROCESS 1
#define SR_IOPRIO_CLASS_SHIFT 13

int sr_process_attrs_apply_io_priority(const struct sr_process *p, sr_error_t *err)
{
  const struct sr_io_priority *io = p->io_priority;
  if (io == NULL)
    return 0;
  int value = (io->klass << SR_IOPRIO_CLASS_SHIFT) | io->priority;
  if (syscall(SYS_ioprio_set, SR_IOPRIO_WHO_PROCESS, 0, value) < 0) {
    const char *name = sr_names_of(SR_NAMES(sr_names_ioprio_class), io->klass);
    return sr_error_sys(err, "process.ioPriority: ioprio_set %s %d", name ? name : "?",
                        io->priority);
  }
  return 0;
}

/* ---- personality ---- */

int sr_process_attrs_apply_personality(const struct sr_linux *l, sr_error_t *err)
{
  if (!l->has_personality)
    return 0;
  if (personality(l->personality) < 0)
    return sr_error_sys(err, "linux.personality: personality %s",
                        l->personality == PER_LINUX32 ? "LINUX32"
                        : l->personality == PER_LINUX ? "LINUX"
                                                      : "?");
  return 0;
}

/* ---- CPU affinity ---- */

/* Far above any kernel's NR_CPUS (8192 at most on x86_64); bounds the allocation. */
#define SR_CPU_MAX 65535

static int parse_cpu(const char **pp, const char *field, const char *cpus, unsigned *out,
                     sr_error_t *err)
{
  const char *p = *pp;
  if (*p < '0' || *p > '9')
    return sr_error_make(err, 0, "%s: \"%s\": expected a CPU number at offset %td", field, cpus,
                         p - cpus);
  unsigned long v = 0;
  for (; *p >= '0' && *p <= '9'; p++) {
    v = v * 10 + (unsigned long)(*p - '0');
    if (v > SR_CPU_MAX)
      return sr_error_make(err, 0, "%s: \"%s\": CPU number above %d", field, cpus, SR_CPU_MAX);
  }
  *out = (unsigned)v;
  *pp = p;
  return 0;
}

/* Validates `cpus` and finds its highest CPU; with `set`, also fills it. */
static int parse_cpu_list(const char *cpus, const char *field, cpu_set_t *set, size_t setsize,
                          unsigned *max, sr_error_t *err)
{
  const char *p = cpus;
  *max = 0;
  for (;;) {
    unsigned lo = 0, hi = 0;
    if (parse_cpu(&p, field, cpus, &lo, err) < 0)
      return -1;
    hi = lo;
    if (*p == '-') {
      p++;
      if (parse_cpu(&p, field, cpus, &hi, err) < 0)
        return -1;
      if (hi < lo)
        return sr_error_make(err, 0, "%s: \"%s\": range %u-%u is reversed", field, cpus, lo, hi);
    }
    if (hi > *max)
      *max = hi;
    if (set)
      for (unsigned c = lo; c <= hi; c++)
        CPU_SET_S(c, setsize, set);
    if (*p == '\0')
      return 0;
    if (*p != ',')
      return sr_error_make(err, 0, "%s: \"%s\": unexpected '%c' at offset %td", field, cpus, *p,
                           p - cpus);
    p++;
  }
}

static void sr_cpu_freep(cpu_set_t **s)
{
  if (*s)
    CPU_FREE(*s);
}

int sr_process_attrs_apply_cpu_affinity(const char *cpus, const char *field, sr_error_t *err)
{
  if (cpus == NULL || cpus[0] == '\0')
    return 0; /* the spec: omitted or empty, the affinity is left alone */
  unsigned max;
  if (parse_cpu_list(cpus, field, NULL, 0, &max, err) < 0)
    return -1;
  _cleanup_(sr_cpu_freep) cpu_set_t *set = CPU_ALLOC(max + 1);
  if (set == NULL)
    return sr_error_make(err, ENOMEM, "%s", field);
  size_t setsize = CPU_ALLOC_SIZE(max + 1);
  CPU_ZERO_S(setsize, set);
  if (parse_cpu_list(cpus, field, set, setsize, &max, err) < 0)
    return -1;
  if (sched_setaffinity(0, setsize, set) < 0)
    return sr_error_sys(err, "%s: sched_setaffinity \"%s\"", field, cpus);
  return 0;
}

/* ---- all of them ---- */

int sr_process_attrs_apply(const struct sr_process *p, const struct sr_linux *l, int proc_fd,
                           sr_error_t *err)
{
  unsigned ignored = 0; /* the runtime logs them (sr_lsm_log_ignored) */
  if (sr_process_attrs_apply_rlimits(p, err) < 0 || sr_process_attrs_apply_scheduler(p, err) < 0 ||
      sr_process_attrs_apply_io_priority(p, err) < 0 ||
      (l && sr_process_attrs_apply_personality(l, err) < 0) ||
      sr_process_attrs_apply_cpu_affinity(p->cpu_affinity_final, "process.execCPUAffinity.final",
                                          err) < 0 ||
      sr_lsm_prepare_exec(p, proc_fd, &ignored, err) < 0)
    return -1;
  return 0;
}
