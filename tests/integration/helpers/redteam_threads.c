/* Red-team probe for the activity record's programs (test_redteam_activity.py): processes and
 * programs started in ways that a follower of the container's processes could miss.
 *   leaderexit CHILD THREAD: the main thread exits (the thread group lives on in a second
 *     thread); that thread forks a child that runs `sh -c CHILD`, waits for it, then itself
 *     execs `sh -c THREAD` (a non-leader's exec: it takes over the group's pid).
 *   cloneparent CMD: a child made with CLONE_PARENT (its parent is ours) runs `sh -c CMD`.
 *   memfd CMD: busybox copied into a memfd, run by fexecve as `sh -c CMD`.
 *   leaderfork N: as leaderexit, but the second thread's child runs no program itself: it
 *     starts N /bin/true, one after the other, and ends.
 *   orphancp CMD: once told (SIGUSR1, sent when our `seerun exec --detach` has returned:
 *     our parent, its caller, gone, we are a host process's now), a child made with
 *     CLONE_PARENT (that host process's child, then) runs `sh -c CMD`.
 *   orphancp2 CMD: a CLONE_PARENT child of ours (our parent's, `seerun exec`'s caller's) does
 *     the same; we end at once.
 *   reexec PROG ARG...: at once execs PROG (the first program gone before it could be read).
 *   threadexec CMD: a second thread execs `sh -c CMD` while the main thread waits.
 *   threads N: N threads that wait for ever (and the main thread with them), after N more
 *     have started and ended; "threads ready" once they are all there. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static pid_t leader;
static char **args;

static int leader_gone(void)
{
  char path[64], buf[256];
  snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)leader);
  int fd = open(path, O_RDONLY);
  if (fd < 0)
    return 1;
  ssize_t n = read(fd, buf, sizeof(buf) - 1);
  close(fd);
  if (n <= 0)
    return 1;
  buf[n] = 0;
  char *p = strrchr(buf, ')');
  return p && (p[2] == 'Z' || p[2] == 'X');
}

static void *thread(void *unused)
{
  (void)unused;
  while (!leader_gone())
    usleep(1000);
  if (strcmp(args[1], "leaderfork") == 0) {
    pid_t c = fork();
    if (c == 0) {
      for (int i = 0; i < atoi(args[2]); i++) {
        pid_t g = fork();
        if (g == 0) {
          execl("/bin/true", "true", (char *)NULL);
          _exit(127);
        }
        waitpid(g, NULL, 0);
      }
      _exit(0);
    }
    waitpid(c, NULL, 0);
    _exit(0);
  }
  pid_t c = fork();
  if (c == 0) {
    execl("/bin/sh", "sh", "-c", args[2], (char *)NULL);
    _exit(127);
  }
  int st;
  waitpid(c, &st, __WALL);
  execl("/bin/sh", "sh", "-c", args[3], (char *)NULL);
  _exit(127);
}

static void *forever(void *unused)
{
  (void)unused;
  for (;;)
    pause();
  return NULL;
}

static void *exec_cmd(void *cmd)
{
  execl("/bin/sh", "sh", "-c", (char *)cmd, (char *)NULL);
  _exit(127);
}

static void *nothing(void *unused)
{
  return unused;
}

static int orphan_clone_parent(const char *cmd)
{
  /* The test sends SIGUSR1 once our `seerun exec` has returned (its caller gone), when it
   * sees us waiting (our name). */
  sigset_t usr1;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  sigprocmask(SIG_BLOCK, &usr1, NULL);
  prctl(PR_SET_NAME, "rt-waiting");
  int sig;
  if (sigwait(&usr1, &sig) != 0)
    return 9;
  pid_t c = (pid_t)syscall(SYS_clone, CLONE_PARENT | SIGCHLD, 0, 0, 0, 0);
  if (c == 0) {
    execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
    _exit(127);
  }
  return c < 0 ? 3 : 0;
}

int main(int argc, char **argv)
{
  args = argv;
  if ((argc == 4 && strcmp(argv[1], "leaderexit") == 0) ||
      (argc == 3 && strcmp(argv[1], "leaderfork") == 0)) {
    leader = getpid();
    pthread_t t;
    if (pthread_create(&t, NULL, thread, NULL) != 0)
      return 2;
    syscall(SYS_exit, 0); /* this thread only: the group lives on */
  }
  if (argc == 3 && strcmp(argv[1], "cloneparent") == 0) {
    pid_t c = (pid_t)syscall(SYS_clone, CLONE_PARENT | SIGCHLD, 0, 0, 0, 0);
    if (c == 0) {
      execl("/bin/sh", "sh", "-c", argv[2], (char *)NULL);
      _exit(127);
    }
    return c < 0 ? 3 : 0;
  }
  if (argc == 3 && strcmp(argv[1], "memfd") == 0) {
    int in = open("/bin/busybox", O_RDONLY);
    int m = (int)syscall(SYS_memfd_create, "hidden", 0);
    struct stat st;
    if (in < 0 || m < 0 || fstat(in, &st) < 0)
      return 4;
    char buf[65536];
    ssize_t n;
    while ((n = read(in, buf, sizeof(buf))) > 0)
      if (write(m, buf, (size_t)n) != n)
        return 4;
    char *a[] = {"sh", "-c", argv[2], NULL};
    extern char **environ;
    fexecve(m, a, environ);
    return 5;
  }
  if (argc == 3 && strcmp(argv[1], "orphancp") == 0)
    return orphan_clone_parent(argv[2]);
  if (argc == 3 && strcmp(argv[1], "orphancp2") == 0) {
    pid_t c = (pid_t)syscall(SYS_clone, CLONE_PARENT | SIGCHLD, 0, 0, 0, 0);
    if (c == 0)
      _exit(orphan_clone_parent(argv[2]));
    return c < 0 ? 3 : 0;
  }
  if (argc >= 3 && strcmp(argv[1], "reexec") == 0) {
    execv(argv[2], argv + 2);
    return 7;
  }
  if (argc == 3 && strcmp(argv[1], "threadexec") == 0) {
    pthread_t t;
    if (pthread_create(&t, NULL, exec_cmd, argv[2]) != 0)
      return 8;
    forever(NULL);
  }
  if (argc == 3 && strcmp(argv[1], "threads") == 0) {
    int n = atoi(argv[2]);
    for (int i = 0; i < n; i++) {
      pthread_t t;
      if (pthread_create(&t, NULL, nothing, NULL) != 0 || pthread_join(t, NULL) != 0)
        return 6;
    }
    for (int i = 0; i < n; i++) {
      pthread_t t;
      if (pthread_create(&t, NULL, forever, NULL) != 0)
        return 6;
    }
    printf("threads ready\n");
    fflush(stdout);
    forever(NULL);
  }
  fprintf(stderr, "usage\n");
  return 1;
}
