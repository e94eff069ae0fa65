/* Peak RSS of one command, like `/usr/bin/time -f %M`.
 *
 *   rss-of OUTFILE CMD [ARG...]
 *
 * forks, execs CMD, waits for it and writes its ru_maxrss (KiB) to OUTFILE; exits with CMD's
 * status.  Needed because ru_maxrss counts the memory a process had before its execve: a
 * command spawned straight from the Python harness would report the harness's own RSS.  From
 * this small static program the floor is a few hundred KiB.  The container's init, which the
 * runtime leaves behind and this program does not wait for, is not counted. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
  struct rusage ru;
  int status;
  pid_t pid;
  FILE *out;

  if (argc < 3) {
    fprintf(stderr, "usage: rss-of OUTFILE CMD [ARG...]\n");
    return 125;
  }
  pid = fork();
  if (pid < 0) {
    perror("rss-of: fork");
    return 125;
  }
  if (pid == 0) {
    execv(argv[2], argv + 2);
    perror("rss-of: exec");
    _exit(127);
  }
  if (wait4(pid, &status, 0, &ru) < 0) {
    perror("rss-of: wait4");
    return 125;
  }
  out = fopen(argv[1], "w");
  if (!out || fprintf(out, "%ld\n", ru.ru_maxrss) < 0 || fclose(out) != 0) {
    perror("rss-of: write");
    return 125;
  }
  if (WIFEXITED(status))
    return WEXITSTATUS(status);
  return 128 + WTERMSIG(status);
}
