/* The sandbox dies with its seerun.  Two mechanisms, because the code may undo one:
 *
 * - The command (the container's init, pid 1 of its pid namespace) has PR_SET_PDEATHSIG
 *   SIGKILL, set after its last identity change (create's die_with_runtime): the kernel kills
 *   it when seerun dies, and with pid 1 the whole namespace goes.  The command can clear it
 *   (prctl is unprivileged), so:
 * - a watchdog, a child of seerun in a session of its own (a kill of the caller's process group
 *   does not reach it), waits on a pipe only seerun holds the write end of.  EOF without a word
 *   first means seerun is gone: it kills the init (pidfd) and every process of the cgroup, then
 *   exits.  seerun disarms it (one byte) once the command has been reaped, before the container
 *   and its cgroup go: a watchdog never outlives its sandbox to hit a later one of the same
 *   name.
 *
 * What remains (the container's state) is an orphan of a dead runtime: the next `seerun
 * sandbox` or `seerun gc` removes it (sr_sandbox_slot_reap_stale). */
#include "build.h"

#include "sandbox.h"

#include "cgroup.h"
#include "cleanup.h"
#include "pidfd.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void close_from(int lo, int hi)
{
  if (lo <= hi)
    syscall(SYS_close_range, (unsigned)lo, (unsigned)hi, 0u);
}

/* Whatever the sandbox's cgroup still holds (its init's descendants outside its pid
 * namespace's reach). */
static void kill_cgroup(const char *cgroup_path)
{
  _cleanup_error_ sr_error_t err = NULL;
  _cleanup_cgroup_ struct sr_cgroup *cg = NULL;
  if (sr_cgroup_new(SR_CGROUP_ROOT, cgroup_path, &cg, &err) == 0)
    (void)sr_cgroup_signal_all(cg, SIGKILL, &err);
}

__attribute__((noreturn)) static void watchdog_main(int rfd, int pidfd, const char *cgroup_path)
{
  /* Out of the caller's session and process group: `kill -9 -PGID` of a driver kills seerun,
   * not this. */
  setsid();
  sigset_t all;
  sigfillset(&all);
  sigprocmask(SIG_BLOCK, &all, NULL);
  int lo = rfd < pidfd ? rfd : pidfd, hi = rfd < pidfd ? pidfd : rfd;
  close_from(3, lo - 1);
  close_from(lo + 1, hi - 1);
  close_from(hi + 1, INT_MAX);
  /* Nothing of the caller's: a driver waiting for EOF on seerun's output is not held up. */
  int null = open("/dev/null", O_RDWR | O_CLOEXEC);
  for (int fd = 0; fd < 3 && null >= 0; fd++)
    dup2(null, fd);
  prctl(PR_SET_NAME, "seerun-watch", 0, 0, 0);
  char c;
  ssize_t n;
  do
    n = read(rfd, &c, 1);
  while (n < 0 && errno == EINTR);
  if (n == 1)
    _exit(0);
  /* seerun is gone: so is its sandbox. */
  sr_pidfd_send_signal(pidfd, SIGKILL);
  kill_cgroup(cgroup_path);
  _exit(0);
}

int sr_sandbox_watchdog_start(struct sr_sandbox_watchdog *wd, int init_pidfd,
                              const char *cgroup_path, sr_error_t *err)
{
  int p[2];
  if (pipe2(p, O_CLOEXEC) < 0)
    return sr_error_sys(err, "sandbox: pipe (watchdog)");
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) {
    close(p[0]);
    close(p[1]);
    return sr_error_sys(err, "sandbox: fork the watchdog");
  }
  if (pid == 0) {
    close(p[1]);
    watchdog_main(p[0], init_pidfd, cgroup_path);
  }
  close(p[0]);
  wd->pid = pid;
  wd->fd = p[1];
  return 0;
}

void sr_sandbox_watchdog_stop(struct sr_sandbox_watchdog *wd)
{
  if (wd->fd < 0)
    return;
  (void)!write(wd->fd, "d", 1);
  close(wd->fd);
  wd->fd = -1;
  while (waitpid(wd->pid, NULL, 0) < 0 && errno == EINTR)
    ;
  wd->pid = 0;
}
