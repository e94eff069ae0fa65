/* Red-team probe for the activity record (test_redteam_activity2.py), run in the container.
 *   eintr FLOOD TRIES AFTER: FLOOD children make a denied call (acct) in a loop, which keeps
 *     the supervisor's queue of notifications long; meanwhile we try mount TRIES times, each
 *     with a timer that interrupts the call 200 us later (SIGALRM, a handler without
 *     SA_RESTART: the call returns EINTR).  Then the children are killed, and, with AFTER 1,
 *     one more denied call (acct) is made on its own.  Prints "mount N", "eperm N", "eintr N".
 *   files N DIR: makes N empty files in DIR (subdirectories of 10,000), fast.
 *   The three below leave a mark (an empty file named after the pid) in MARKS once they have
 *   done their part, and the test holds the supervisor (SIGSTOP) until every mark is there: what
 *   the code does while the supervisor is behind it, made certain rather than raced.
 *   argvmany N MARKS: N children, each exec `/rt/rt2 argv MARKS --upload-secrets-to-evil`,
 *     which overwrites its own command line (the bytes /proc/<pid>/cmdline shows) with
 *     "harmless", marks, and waits 2 s (alive when the supervisor reads it).
 *   renamemany N DIR MARKS: N copies of us in DIR, run at once, each renaming its own file
 *     DIR/evilI to DIR/harmlessI, then marking, then waiting 2 s.
 *   renamecall DIR MARKS: a copy of us at DIR/evil makes one mount; once that call waits to be
 *     read (its /proc/<pid>/syscall), we rename the file DIR/harmless and mark. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void on_alarm(int sig)
{
  (void)sig;
}

static int eintr(int flood, int tries, int after)
{
  pid_t kids[256];
  if (flood > 256)
    flood = 256;
  for (int i = 0; i < flood; i++) {
    kids[i] = fork();
    if (kids[i] == 0)
      for (;;)
        syscall(SYS_acct, NULL);
  }
  usleep(100000); /* the children under way */
  struct sigaction sa = {.sa_handler = on_alarm}; /* no SA_RESTART */
  sigaction(SIGALRM, &sa, NULL);
  timer_t t;
  struct sigevent sev = {.sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGALRM};
  if (timer_create(CLOCK_MONOTONIC, &sev, &t) < 0)
    return 1;
  int eperm = 0, eint = 0, other = 0;
  for (int i = 0; i < tries; i++) {
    struct itimerspec it = {.it_value = {0, 200000}};
    timer_settime(t, 0, &it, NULL);
    long r = syscall(SYS_mount, "none", "/mnt", "tmpfs", 0, NULL);
    if (r < 0 && errno == EPERM)
      eperm++;
    else if (r < 0 && errno == EINTR)
      eint++;
    else
      other++;
    struct itimerspec off = {{0, 0}, {0, 0}};
    timer_settime(t, 0, &off, NULL);
  }
  for (int i = 0; i < flood; i++)
    kill(kids[i], SIGKILL);
  for (int i = 0; i < flood; i++)
    waitpid(kids[i], NULL, 0);
  if (after)
    syscall(SYS_acct, NULL);
  printf("mount %d\neperm %d\neintr %d\nother %d\n", tries, eperm, eint, other);
  return 0;
}

static int files(long n, const char *dir)
{
  char path[4096];
  for (long i = 0; i < n; i++) {
    if (i % 10000 == 0) {
      snprintf(path, sizeof(path), "%s/d%ld", dir, i / 10000);
      if (mkdir(path, 0755) < 0 && errno != EEXIST)
        return 1;
    }
    snprintf(path, sizeof(path), "%s/d%ld/f%ld", dir, i / 10000, i);
    int fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
    if (fd < 0)
      return 1;
    close(fd);
  }
  printf("files %ld\n", n);
  return 0;
}

/* A child that waits for EOF on the go pipe (all of them released at once), then execs. */
static void fork_held(int go[2], const char *path, char *const argv[])
{
  if (fork() == 0) {
    char c;
    close(go[1]);
    (void)!read(go[0], &c, 1);
    execv(path, argv);
    _exit(127);
  }
}

/* Releases the held children once they have had time to block, and waits for them all. */
static int release_held(int go[2])
{
  close(go[0]);
  usleep(100000);
  close(go[1]);
  while (wait(NULL) > 0)
    ;
  return 0;
}

static void mark(const char *marks)
{
  char path[256];
  snprintf(path, sizeof(path), "%s/%d", marks, (int)getpid());
  int fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
  if (fd >= 0)
    close(fd);
}

static int argvmany(int n, char *marks)
{
  int go[2];
  if (pipe(go) < 0)
    return 1;
  char *argv[] = {"/rt/rt2", "argv", marks, "--upload-secrets-to-evil", NULL};
  for (int i = 0; i < n; i++)
    fork_held(go, argv[0], argv);
  return release_held(go);
}

/* N copies of /rt/rt2 in DIR (DIR/evilI), run at once, each renaming itself DIR/harmlessI. */
static int renamemany(int n, const char *dir, char *marks)
{
  static char image[4 << 20];
  int in = open("/rt/rt2", O_RDONLY | O_CLOEXEC);
  ssize_t len = in >= 0 ? read(in, image, sizeof(image)) : -1;
  if (len <= 0)
    return 1;
  close(in);
  int go[2];
  if (pipe(go) < 0)
    return 1;
  for (int i = 0; i < n; i++) {
    char evil[256], harmless[256];
    snprintf(evil, sizeof(evil), "%s/evil%d", dir, i);
    snprintf(harmless, sizeof(harmless), "%s/harmless%d", dir, i);
    int out = open(evil, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0755);
    if (out < 0 || write(out, image, (size_t)len) != len)
      return 1;
    close(out);
    char *argv[] = {evil, "renameself", harmless, marks, NULL};
    fork_held(go, evil, argv);
  }
  return release_held(go);
}

/* The caller's name while its denied call waits: a copy of us at DIR/evil makes one mount; we
 * rename the file DIR/harmless once that call is made (and waits: the supervisor is held). */
static int renamecall(const char *dir, const char *marks)
{
  static char image[4 << 20];
  char evil[256], harmless[256];
  snprintf(evil, sizeof(evil), "%s/evil", dir);
  snprintf(harmless, sizeof(harmless), "%s/harmless", dir);
  int in = open("/rt/rt2", O_RDONLY | O_CLOEXEC);
  ssize_t len = in >= 0 ? read(in, image, sizeof(image)) : -1;
  int out = open(evil, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0755);
  if (len <= 0 || out < 0 || write(out, image, (size_t)len) != len)
    return 1;
  close(in);
  close(out);
  pid_t caller = fork();
  if (caller == 0) {
    execl(evil, evil, "mountonce", (char *)NULL);
    _exit(127);
  }
  /* The call is made when the caller's /proc/<pid>/syscall names mount. */
  char path[64], text[64];
  snprintf(path, sizeof(path), "/proc/%d/syscall", (int)caller);
  for (;;) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, text, sizeof(text) - 1) : -1;
    if (fd >= 0)
      close(fd);
    if (n <= 0)
      return 1;
    text[n] = '\0';
    if (atoi(text) == SYS_mount)
      break;
    usleep(1000);
  }
  if (rename(evil, harmless) < 0)
    return 1;
  mark(marks);
  waitpid(caller, NULL, 0);
  printf("renamed\n");
  return 0;
}

int main(int argc, char **argv)
{
  if (argc == 2 && strcmp(argv[1], "mountonce") == 0)
    return syscall(SYS_mount, "none", "/mnt", "tmpfs", 0, NULL) < 0 ? 0 : 1;
  if (argc == 4 && strcmp(argv[1], "renamecall") == 0)
    return renamecall(argv[2], argv[3]);
  if (argc == 5 && strcmp(argv[1], "renamemany") == 0)
    return renamemany(atoi(argv[2]), argv[3], argv[4]);
  if (argc == 4 && strcmp(argv[1], "renameself") == 0) {
    /* The executable's name as the supervisor reads it (/proc/<pid>/exe) is its name then. */
    if (rename(argv[0], argv[2]) < 0)
      return 1;
    mark(argv[3]);
    sleep(2);
    return 0;
  }
  if (argc == 4 && strcmp(argv[1], "argvmany") == 0)
    return argvmany(atoi(argv[2]), argv[3]);
  if (argc >= 3 && strcmp(argv[1], "argv") == 0) {
    char marks[256];
    snprintf(marks, sizeof(marks), "%s", argv[2]);
    /* The arguments lie one after the other: the first byte to the end of the last. */
    char *end = argv[argc - 1] + strlen(argv[argc - 1]);
    memset(argv[0], 0, (size_t)(end - argv[0]));
    strcpy(argv[0], "harmless");
    mark(marks);
    sleep(2);
    return 0;
  }
  if (argc == 5 && strcmp(argv[1], "eintr") == 0)
    return eintr(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]));
  if (argc == 4 && strcmp(argv[1], "files") == 0)
    return files(atol(argv[2]), argv[3]);
  fprintf(stderr, "usage: %s eintr FLOOD TRIES AFTER | files N DIR | argv SECRET...\n",
          argv[0]);
  return 2;
}
