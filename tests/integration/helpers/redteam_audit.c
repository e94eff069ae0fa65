/* redteam_audit ABI:NR...: the audit red team's denied calls (test_redteam_audit.py).  Each
 * argument makes one system call with every argument 0: "64:NR" through the x86_64 ABI
 * (syscall), "32:NR" through the i386 one (int $0x80: the same process, another arch in the
 * seccomp data).  The calls are in the built-in filter's denied set, so none of them runs.
 * Prints "calls N" (how many failed with EPERM) at the end. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static long call32(long nr)
{
  long r;
  __asm__ volatile("int $0x80"
                   : "=a"(r)
                   : "a"(nr), "b"(0L), "c"(0L), "d"(0L), "S"(0L), "D"(0L)
                   : "memory");
  return r;
}

int main(int argc, char **argv)
{
  int eperm = 0;
  for (int i = 1; i < argc; i++) {
    long nr = strtol(argv[i] + 3, NULL, 10);
    if (strncmp(argv[i], "64:", 3) == 0) {
      eperm += syscall(nr, 0, 0, 0, 0, 0, 0) < 0 && errno == EPERM;
    } else if (strncmp(argv[i], "32:", 3) == 0) {
      eperm += call32(nr) == -EPERM;
    } else {
      fprintf(stderr, "unknown %s\n", argv[i]);
      return 2;
    }
  }
  printf("calls %d\n", eperm);
  return 0;
}
