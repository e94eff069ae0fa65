/* What the activity record keeps of a process (sr_activity_read_process over
 * runtime/linux/proc.c): its executable, its command line with the arguments joined by
 * spaces and the caller's characters trimmed off the end, made printable; "" once it is gone. */
#include "build.h"

#include "activity.h"
#include "proc.h"

#include <fcntl.h>
#include <signal.h>
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
  CHECK(sr_activity_read_process(pid, exe, sizeof(exe), cmdline, sizeof(cmdline), " \n"));
  CHECK(exe[0] == '/' && strstr(exe, "sh") != NULL);
  CHECK_STR_EQ(cmdline, "sh -c read x a");
  CHECK(sr_activity_read_process(pid, exe, sizeof(exe), cmdline, sizeof(cmdline), " "));
  CHECK_STR_EQ(cmdline, "sh -c read x a?"); /* the newline kept, made printable */
  char small[6];
  sr_proc_text(pid, "cmdline", small, sizeof(small), true, " ");
  CHECK_STR_EQ(small, "sh -c"); /* the first size-1 bytes */
  close(in);
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
  CHECK(!sr_activity_read_process(pid, exe, sizeof(exe), cmdline, sizeof(cmdline), " "));
  CHECK_STR_EQ(exe, "");
  CHECK_STR_EQ(cmdline, "");
}

int main(void)
{
  RUN(a_process_is_read_with_the_callers_trim);
  return unit_report();
}
