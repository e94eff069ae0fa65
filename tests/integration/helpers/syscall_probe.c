/* syscall_probe NR...: makes each raw syscall NR (arguments all zero) and prints
 * "NR errno" (0 when it succeeded) on one line each, for the seccomp tests. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/syscall.h>

int main(int argc, char **argv)
{
  for (int i = 1; i < argc; i++) {
    long nr = strtol(argv[i], NULL, 0);
    errno = 0;
    long r = syscall(nr, 0, 0, 0, 0, 0, 0);
    printf("%ld %d\n", nr, r < 0 ? errno : 0);
  }
  fflush(stdout);
  return 0;
}
