/* The syscall-heavy micro-benchmark run inside the container (built static into the rootfs).
 *
 *   bench-syscalls [N]
 *
 * makes N (default 1,000,000) getppid() calls and N one-byte read()s of /dev/zero and prints
 * its own elapsed time per call, and its CPU time per call (which time spent preempted by
 * other load on the machine does not inflate):
 *   "getppid_ns=12.3 read_ns=45.6 getppid_cpu_ns=12.1 read_cpu_ns=45.0"
 * Every call crosses the seccomp filter, if there is one, so the difference between runs is
 * the filter's cost. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double clock_ns(clockid_t clock)
{
  struct timespec ts;
  clock_gettime(clock, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
  long n = argc > 1 ? atol(argv[1]) : 1000000;
  double t0, t1, t2, c0, c1, c2;
  char c;
  int fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);

  if (n <= 0 || fd < 0) {
    perror("bench-syscalls: open /dev/zero");
    return 1;
  }
  c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
  t0 = clock_ns(CLOCK_MONOTONIC);
  for (long i = 0; i < n; i++)
    syscall(SYS_getppid); /* not the libc wrapper: nothing may cache it */
  t1 = clock_ns(CLOCK_MONOTONIC);
  c1 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
  for (long i = 0; i < n; i++)
    if (read(fd, &c, 1) != 1) {
      perror("bench-syscalls: read /dev/zero");
      return 1;
    }
  t2 = clock_ns(CLOCK_MONOTONIC);
  c2 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
  printf("getppid_ns=%.1f read_ns=%.1f getppid_cpu_ns=%.1f read_cpu_ns=%.1f\n",
         (t1 - t0) / (double)n, (t2 - t1) / (double)n, (c1 - c0) / (double)n,
         (c2 - c1) / (double)n);
  return 0;
}
