/* What the activity record keeps of a process (sr_activity_read_process over
 * runtime/linux/proc.c): its executable, its command line with the arguments joined by
 * spaces and the caller's characters trimmed off the end, made printable; "" once it is gone. */
#include "build.h"

#include "activity.h"
#include "proc.h"

#include <fcntl.h>
#include <signal.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "unit.h"

/* A shell blocked reading a pipe, with a last argument "a\n" and an empty one after it. */
static pid_t start_reader(int *in)
{
  int ready[2], feed[2];
  if (pipe2(ready, O_CLOEXEC) < 0 || pipe(feed) < 0)
    return -1;
  pid_t pid = fork();
  if (pid == 0) {
    dup2(feed[0], 0);
    close(feed[1]);
    execl("/bin/sh", "sh", "-c", "read x", "a\n", "", (char *)NULL);
    _exit(127);
  }
  close(ready[1]);
  close(feed[0]);
  char c;
  while (read(ready[0], &c, 1) > 0) /* EOF: the exec has happened (the pipe is O_CLOEXEC) */
    ;
  close(ready[0]);
  *in = feed[1];
  return pid;
}

static void a_process_is_read_with_the_callers_trim(void)
{
  int in = -1;
  pid_t pid = start_reader(&in);
  CHECK(pid > 0);
  if (pid <= 0)
    return;
  char exe[256], cmdline[256];
  int procfd = sr_proc_open(pid);
  CHECK(sr_activity_read_process(procfd, exe, sizeof(exe), cmdline, sizeof(cmdline), " \n"));
  CHECK(exe[0] == '/' && strstr(exe, "sh") != NULL);
  CHECK_STR_EQ(cmdline, "sh -c read x a");
  CHECK(sr_activity_read_process(procfd, exe, sizeof(exe), cmdline, sizeof(cmdline), " "));
  CHECK_STR_EQ(cmdline, "sh -c read x a?"); /* the newline kept, made printable */
  char small[6];
  sr_proc_text(pid, "cmdline", small, sizeof(small), true, " ");
  CHECK_STR_EQ(small, "sh -c"); /* the first size-1 bytes */
  close(in);
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
  /* Gone: nothing is read through its directory (even if another process took its pid). */
  CHECK(!sr_activity_read_process(procfd, exe, sizeof(exe), cmdline, sizeof(cmdline), " "));
  CHECK_STR_EQ(exe, "");
  CHECK_STR_EQ(cmdline, "");
  close(procfd);
}

static uint64_t mono_now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* A process is told from one that took its pid after an event by its start time. */
static void a_start_after_a_moment_is_told(void)
{
  uint64_t before = mono_now();
  int in = -1;
  pid_t pid = start_reader(&in);
  CHECK(pid > 0);
  if (pid <= 0)
    return;
  int procfd = sr_proc_open(pid);
  uint64_t start = 0;
  pid_t parent = 0;
  CHECK(sr_proc_stat_at(procfd, &start, NULL, &parent) == 0);
  CHECK(parent == getpid());
  CHECK(!sr_proc_started_after(start, mono_now())); /* it had started by now */
  /* It started after a moment a second before it was made (its start is known to a tick). */
  CHECK(sr_proc_started_after(start, before - 1000000000u));
  close(in);
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
  CHECK(sr_proc_stat_at(procfd, &start, NULL, NULL) < 0);
  close(procfd);
}

int main(void)
{
  RUN(a_process_is_read_with_the_callers_trim);
  RUN(a_start_after_a_moment_is_told);
  return unit_report();
}
