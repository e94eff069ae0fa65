/* activity_probe WHAT:N...: tries each privileged call N times and prints "WHAT errno" (the
 * last call's errno, 0 when it succeeded) on one line each, for the activity record's tests.
 * WHAT: mount, unshare (CLONE_NEWUSER), keyctl, bpf, ptrace.  A last argument "wait" makes it
 * print "ready" and sleep until killed (for the tests that kill the supervisor meanwhile). */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/bpf.h>
#include <linux/keyctl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <unistd.h>

static long try(const char *what)
{
  if (strcmp(what, "mount") == 0)
    return syscall(SYS_mount, "none", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, 0);
  if (strcmp(what, "unshare") == 0)
    return syscall(SYS_unshare, CLONE_NEWUSER);
  if (strcmp(what, "keyctl") == 0)
    return syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, -3, 0, 0, 0);
  if (strcmp(what, "bpf") == 0)
    return syscall(SYS_bpf, BPF_PROG_LOAD, 0, 0);
  if (strcmp(what, "ptrace") == 0)
    return syscall(SYS_ptrace, PTRACE_ATTACH, 1, 0, 0);
  fprintf(stderr, "unknown %s\n", what);
  exit(2);
}

int main(int argc, char **argv)
{
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "wait") == 0) {
      printf("ready\n");
      fflush(stdout);
      for (;;)
        pause();
    }
    char what[32];
    long n = 1;
    snprintf(what, sizeof(what), "%s", argv[i]);
    char *colon = strchr(what, ':');
    if (colon) {
      *colon = '\0';
      n = strtol(colon + 1, NULL, 10);
    }
    int e = 0;
    for (long k = 0; k < n; k++) {
      errno = 0;
      e = try(what) < 0 ? errno : 0;
    }
    printf("%s %d\n", what, e);
    fflush(stdout);
  }
  return 0;
}
