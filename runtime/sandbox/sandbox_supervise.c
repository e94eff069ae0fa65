/* The sandbox's runtime while the command runs: it waits for the container's init, relays its
 * standard streams (sandbox_stdio.c), ends it on the caller's SIGTERM or SIGINT, and enforces the
 * wall-clock limit by killing the whole cgroup (not just the init: a process that escaped into a
 * new session, or one that is frozen, dies as well). Afterwards it reads the figures the result
 * reports from the cgroup, final by then. */
#include "build.h"

#include "sandbox.h"

#include "cgroup.h"
#include "cleanup.h"
#include "fileio.h"
#include "pidfd.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>


static const int forwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};

int64_t sr_sandbox_supervise_now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void forwarded_set(sigset_t *set)
{
  sigemptyset(set);
  for (size_t i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++)
    sigaddset(set, forwarded[i]);
}

int sr_sandbox_supervise_block_signals(sr_error_t *err)
{
  /* The container's process unblocks everything before it execs (process_exec.c). */
  sigset_t set;
  forwarded_set(&set);
  if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
    return sr_error_sys(err, "sandbox: block signals");
  return 0;
}

static int kill_cgroup(const char *cgroup_path, sr_error_t *err)
{
  _cleanup_cgroup_ struct sr_cgroup *cg = NULL;
  if (sr_cgroup_new(SR_CGROUP_ROOT, cgroup_path, &cg, err) < 0)
    return -1;
  return sr_cgroup_signal_all(cg, SIGKILL, err);
}

static int arm(int tfd, int64_t at_ns, sr_error_t *err)
{
  struct itimerspec its = {.it_value = {at_ns / 1000000000, at_ns % 1000000000}};
  if (timerfd_settime(tfd, TFD_TIMER_ABSTIME, &its, NULL) < 0)
    return sr_error_sys(err, "sandbox: timerfd");
  return 0;
}

int sr_sandbox_supervise(pid_t pid, int pidfd, const char *cgroup_path, uint64_t timeout_ms,
                         uint64_t kill_after_ms, int64_t started_ns, struct sr_sandbox_stdio *st,
                         struct sr_sandbox_wait *w, sr_error_t *err)
{
  memset(w, 0, sizeof(*w));
  sigset_t set;
  forwarded_set(&set);
  _cleanup_close_ int sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sfd < 0)
    return sr_error_sys(err, "sandbox: signalfd");
  _cleanup_close_ int tfd = -1, kfd = -1;
  if (timeout_ms) {
    tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
    if (tfd < 0 || arm(tfd, started_ns + (int64_t)timeout_ms * 1000000, err) < 0)
      return sr_error_sys(err, "sandbox: timerfd (--timeout)");
  }
  /* A caller gone from its end of a stream is not a reason to die: the bytes are dropped. */
  signal(SIGPIPE, SIG_IGN);
  bool exited = false, abandon = false;
  while (!abandon && !(exited && sr_sandbox_stdio_drained(st))) {
    struct pollfd p[4 + SR_SANDBOX_STDIO_POLLFDS] = {
        {exited ? -1 : pidfd, POLLIN, 0}, {sfd, POLLIN, 0}, {tfd, POLLIN, 0}, {kfd, POLLIN, 0}};
    sr_sandbox_stdio_poll(st, p + 4);
    if (poll(p, sizeof(p) / sizeof(p[0]), -1) < 0) {
      if (errno == EINTR)
        continue;
      return sr_error_sys(err, "sandbox: poll");
    }
    if (p[0].revents & (POLLIN | POLLHUP)) {
      /* Every process of its pid namespace is gone with it: what is left in the pipes is
       * the last of the output. */
      exited = true;
      sr_sandbox_stdio_end_input(st);
    }
    if (p[1].revents & POLLIN) {
      struct signalfd_siginfo si;
      while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
        int sig = (int)si.ssi_signo;
        bool stop = sig == SIGINT || sig == SIGTERM || sig == SIGHUP;
        if (!stop) {
          if (!exited)
            sr_pidfd_send_signal(pidfd, sig);
          continue;
        }
        if (exited) {
          /* Asked to stop while the output drains (a caller not reading it): stop. */
          w->caller_signal = w->caller_signal ? w->caller_signal : sig;
          abandon = true;
          break;
        }
        if (w->caller_signal == 0) {
          /* The command may end on its own: SIGTERM, then SIGKILL after the grace period. */
          w->caller_signal = sig;
          sr_pidfd_send_signal(pidfd, SIGTERM);
          kfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
          if (kfd < 0 || arm(kfd,
                             sr_sandbox_supervise_now_ns() +
                                 (int64_t)(kill_after_ms ? kill_after_ms : 1) * 1000000,
                             err) < 0)
            return sr_error_sys(err, "sandbox: timerfd (--kill-after)");
        } else {
          w->interrupted = true;
          if (kill_cgroup(cgroup_path, err) < 0)
            return -1;
        }
      }
    }
    if (tfd >= 0 && (p[2].revents & POLLIN)) {
      close(tfd);
      tfd = -1;
      if (!exited) {
        w->timed_out = true;
        if (kill_cgroup(cgroup_path, err) < 0)
          return -1;
      }
    }
    if (kfd >= 0 && (p[3].revents & POLLIN)) {
      close(kfd);
      kfd = -1;
      if (!exited) {
        w->interrupted = true;
        if (kill_cgroup(cgroup_path, err) < 0)
          return -1;
      }
    }
    if (!abandon)
      sr_sandbox_stdio_done(st, p + 4);
  }
  while (wait4(pid, &w->status, 0, &w->ru) < 0) {
    if (errno != EINTR)
      return sr_error_sys(err, "sandbox: wait for the command");
  }
  w->wall_ns = sr_sandbox_supervise_now_ns() - started_ns;
  return 0;
}

/* A small cgroup file, whole; false when it is not there (a controller not mounted, a kernel
 * without the file). */
static bool read_cg_file(const char *dir, const char *file, char *buf, size_t size)
{
  char path[PATH_MAX + 64]; /* dir is at most PATH_MAX, file a short name */
  size_t len;
  sr_error_t e = NULL;
  snprintf(path, sizeof(path), "%s/%s", dir, file);
  if (sr_fileio_read_small_at(AT_FDCWD, path, buf, size, &len, &e) < 0) {
    sr_error_free(&e);
    return false;
  }
  return true;
}

static bool cg_u64(const char *dir, const char *file, uint64_t *v)
{
  char buf[64];
  if (!read_cg_file(dir, file, buf, sizeof(buf)))
    return false;
  *v = strtoull(buf, NULL, 10);
  return true;
}

/* "key value" lines: the value of key, or 0. */
static uint64_t keyed(const char *text, const char *key)
{
  size_t k = strlen(key);
  for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
    if (strncmp(p, key, k) == 0 && p[k] == ' ')
      return strtoull(p + k + 1, NULL, 10);
  return 0;
}

/* The few figures the result reports, straight from the files that hold them (the same files
 * and units as sr_cgroup_stats, which reads some thirty: everything `events --stats` shows,
 * more than the rest of a sandbox's bookkeeping costs). */
int sr_sandbox_supervise_cgroup_usage(const char *cgroup_path, struct sr_sandbox_usage *u,
                                      sr_error_t *err)
{
  memset(u, 0, sizeof(*u));
  struct statfs sfs;
  if (statfs(SR_CGROUP_ROOT, &sfs) < 0)
    return sr_error_sys(err, "statfs `%s`", SR_CGROUP_ROOT);
  char mem[PATH_MAX], cpu[PATH_MAX], text[4096];
  if (sfs.f_type == CGROUP2_SUPER_MAGIC) {
    snprintf(mem, sizeof(mem), "%s%s", SR_CGROUP_ROOT, cgroup_path);
    if (read_cg_file(mem, "cpu.stat", text, sizeof(text))) {
      u->cpu_ns = keyed(text, "usage_usec") * 1000;
      u->cpu_user_ns = keyed(text, "user_usec") * 1000;
      u->cpu_system_ns = keyed(text, "system_usec") * 1000;
    }
    if (read_cg_file(mem, "memory.events", text, sizeof(text))) {
      u->valid = true;
      u->oom_kills = keyed(text, "oom_kill");
    }
    u->peak_known = cg_u64(mem, "memory.peak", &u->peak_memory); /* Linux 5.19 */
  } else {
    /* v1 (hybrid included: its unified mount holds no controller we read). */
    snprintf(mem, sizeof(mem), "%s/memory%s", SR_CGROUP_ROOT, cgroup_path);
    snprintf(cpu, sizeof(cpu), "%s/cpuacct%s", SR_CGROUP_ROOT, cgroup_path);
    cg_u64(cpu, "cpuacct.usage", &u->cpu_ns);
    if (read_cg_file(cpu, "cpuacct.stat", text, sizeof(text))) {
      /* USER_HZ ticks */
      long hz = sysconf(_SC_CLK_TCK);
      uint64_t tick = 1000000000ull / (uint64_t)(hz > 0 ? hz : 100);
      u->cpu_user_ns = keyed(text, "user") * tick;
      u->cpu_system_ns = keyed(text, "system") * tick;
    }
    if (read_cg_file(mem, "memory.oom_control", text, sizeof(text))) {
      u->valid = true;
      u->oom_kills = keyed(text, "oom_kill");
    }
    u->peak_known = cg_u64(mem, "memory.max_usage_in_bytes", &u->peak_memory);
  }
  if (!u->valid)
    return sr_error_make(err, ENOENT, "cgroup `%s`: no memory controller figures", cgroup_path);
  return 0;
}
