#include "build.h"

#include "proc.h"

#include "cleanup.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

int sr_proc_open(pid_t pid)
{
  char path[64];
  snprintf(path, sizeof(path), "/proc/%d", (int)pid);
  return pid > 0 ? open(path, O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;
}

/* dirfd: a /proc/PID descriptor, or AT_FDCWD with name "/proc/PID/stat". */
static int stat_at(int dirfd, const char *name, uint64_t *start_time, char *state, pid_t *ppid)
{
  char buf[1024];
  _cleanup_close_ int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    errno = ESRCH;
    return -1;
  }
  ssize_t n = read(fd, buf, sizeof(buf) - 1);
  if (n <= 0) {
    errno = ESRCH;
    return -1;
  }
  buf[n] = '\0';
  /* comm may contain spaces and parentheses: fields start after the last ')'. */
  char *p = strrchr(buf, ')');
  if (p == NULL || p[1] != ' ') {
    errno = EINVAL;
    return -1;
  }
  p += 2;
  if (state)
    *state = *p;
  if (ppid)
    *ppid = (pid_t)strtol(p + 1, NULL, 10); /* field 4 */
  /* p is field 3 (state); start time is field 22. */
  for (int field = 3; field < 22; field++) {
    p = strchr(p, ' ');
    if (p == NULL) {
      errno = EINVAL;
      return -1;
    }
    p++;
  }
  if (start_time)
    *start_time = strtoull(p, NULL, 10);
  return 0;
}

int sr_proc_stat(pid_t pid, uint64_t *start_time, char *state)
{
  char path[64];
  snprintf(path, sizeof(path), "/proc/%d/stat", pid);
  return stat_at(AT_FDCWD, path, start_time, state, NULL);
}

/* Alive (not a zombie) and started at start_time, by what stat_at read. */
static bool alive_since(uint64_t st, char state, uint64_t start_time)
{
  return st == start_time && state != 'Z' && state != 'X';
}

bool sr_proc_is(pid_t pid, uint64_t start_time)
{
  uint64_t st;
  char state;
  return pid > 0 && sr_proc_stat(pid, &st, &state) == 0 && alive_since(st, state, start_time);
}

int sr_proc_stat_at(int procfd, uint64_t *start_time, char *state, pid_t *ppid)
{
  if (procfd < 0) {
    errno = ESRCH;
    return -1;
  }
  return stat_at(procfd, "stat", start_time, state, ppid);
}

bool sr_proc_started_after(uint64_t start_time, uint64_t mono_ns)
{
  /* The start time is on the boot-time clock, which runs ahead of the monotonic one by the
   * time spent suspended: that offset now is at least what it was at mono_ns. */
  struct timespec boot, mono;
  long tick = sysconf(_SC_CLK_TCK);
  if (tick <= 0 || clock_gettime(CLOCK_BOOTTIME, &boot) < 0 ||
      clock_gettime(CLOCK_MONOTONIC, &mono) < 0)
    return false;
  int64_t offset = ((int64_t)boot.tv_sec - mono.tv_sec) * 1000000000 +
                   (boot.tv_nsec - mono.tv_nsec);
  uint64_t at_boot = mono_ns + (uint64_t)(offset > 0 ? offset : 0);
  /* The ticks are the start rounded down: the start is at or after this. */
  uint64_t started = start_time * (1000000000ull / (uint64_t)tick);
  return started > at_boot;
}

bool sr_proc_is_at(int procfd, uint64_t start_time)
{
  uint64_t st;
  char state;
  return procfd >= 0 && stat_at(procfd, "stat", &st, &state, NULL) == 0 &&
         alive_since(st, state, start_time);
}

int sr_proc_exit_status(int status, int otherwise)
{
  if (WIFEXITED(status))
    return WEXITSTATUS(status);
  if (WIFSIGNALED(status))
    return 128 + WTERMSIG(status);
  return otherwise;
}

void sr_proc_text_at(int dirfd, const char *name, char *out, size_t size, bool nul_to_space,
                     const char *trim)
{
  out[0] = '\0';
  _cleanup_close_ int fd = dirfd >= 0 || dirfd == AT_FDCWD ? openat(dirfd, name, O_RDONLY | O_CLOEXEC)
                                                            : -1;
  if (fd < 0)
    return;
  ssize_t n = read(fd, out, size - 1);
  if (n <= 0)
    return;
  out[n] = '\0';
  for (ssize_t i = 0; nul_to_space && i < n; i++)
    if (out[i] == '\0')
      out[i] = ' ';
  while (n > 0 && strchr(trim, out[n - 1]) != NULL && out[n - 1] != '\0')
    out[--n] = '\0';
}

void sr_proc_text(pid_t pid, const char *name, char *out, size_t size, bool nul_to_space,
                  const char *trim)
{
  char path[64];
  snprintf(path, sizeof(path), "/proc/%ld/%s", (long)pid, name);
  sr_proc_text_at(AT_FDCWD, path, out, size, nul_to_space, trim);
}

static ssize_t exe_at(int dirfd, const char *name, char *out, size_t size)
{
  ssize_t l = dirfd >= 0 || dirfd == AT_FDCWD ? readlinkat(dirfd, name, out, size - 1) : -1;
  out[l > 0 ? (size_t)l : 0] = '\0';
  return l;
}

ssize_t sr_proc_exe(pid_t pid, char *out, size_t size)
{
  char path[64];
  snprintf(path, sizeof(path), "/proc/%ld/exe", (long)pid);
  return exe_at(AT_FDCWD, path, out, size);
}

ssize_t sr_proc_exe_at(int procfd, char *out, size_t size)
{
  return exe_at(procfd, "exe", out, size);
}
