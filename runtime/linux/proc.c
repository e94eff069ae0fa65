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

int sr_proc_stat(pid_t pid, uint64_t *start_time, char *state)
{
  char path[64], buf[1024];
  snprintf(path, sizeof(path), "/proc/%d/stat", pid);
  _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
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

bool sr_proc_is(pid_t pid, uint64_t start_time)
{
  uint64_t st;
  char state;
  if (pid <= 0 || sr_proc_stat(pid, &st, &state) < 0)
    return false;
  return st == start_time && state != 'Z' && state != 'X';
}

int sr_proc_exit_status(int status, int otherwise)
{
  if (WIFEXITED(status))
    return WEXITSTATUS(status);
  if (WIFSIGNALED(status))
    return 128 + WTERMSIG(status);
  return otherwise;
}

void sr_proc_text(pid_t pid, const char *name, char *out, size_t size, bool nul_to_space,
                  const char *trim)
{
  out[0] = '\0';
  char path[64];
  snprintf(path, sizeof(path), "/proc/%ld/%s", (long)pid, name);
  _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
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

ssize_t sr_proc_exe(pid_t pid, char *out, size_t size)
{
  char path[64];
  snprintf(path, sizeof(path), "/proc/%ld/exe", (long)pid);
  ssize_t l = readlink(path, out, size - 1);
  out[l > 0 ? (size_t)l : 0] = '\0';
  return l;
}
