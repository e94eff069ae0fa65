#include "build.h"

#include "hooks.h"

#include "cleanup.h"
#include "log.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define HOOK_OUTPUT_MAX 2048

static char *const empty_env[] = {NULL};

static int64_t now_ms(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int run_hook(const struct sr_hook *h, const char *name, size_t index,
                    const char *state_json, sr_error_t *err)
{
  int in[2], out[2];
  if (pipe2(in, O_CLOEXEC) < 0)
    return sr_error_sys(err, "hook %s[%zu]: pipe", name, index);
  if (pipe2(out, O_CLOEXEC) < 0) {
    close(in[0]);
    close(in[1]);
    return sr_error_sys(err, "hook %s[%zu]: pipe", name, index);
  }
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) {
    int saved = errno;
    close(in[0]);
    close(in[1]);
    close(out[0]);
    close(out[1]);
    return sr_error_make(err, saved, "hook %s[%zu]: fork", name, index);
  }
  if (pid == 0) {
    /* stdin: the state; stdout and stderr: captured for the error message. */
    if (dup2(in[0], 0) < 0 || dup2(out[1], 1) < 0 || dup2(out[1], 2) < 0)
      _exit(127);
    sigset_t all;
    sigemptyset(&all);
    sigprocmask(SIG_SETMASK, &all, NULL);
    char *const default_argv[] = {h->path, NULL};
    execve(h->path, h->n_args ? h->args : default_argv, h->n_env ? h->env : empty_env);
    dprintf(2, "exec %s: %s", h->path, strerror(errno));
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  _cleanup_close_ int to_hook = in[1];
  _cleanup_close_ int from_hook = out[0];
  _cleanup_close_ int pidfd = sr_pidfd_open(pid);

  /* A hook that does not read its stdin must not block us: write what fits, then close
   * (SIGPIPE is ignored by main). */
  fcntl(to_hook, F_SETFL, O_NONBLOCK);
  size_t len = strlen(state_json);
  ssize_t w = write(to_hook, state_json, len);
  (void)w;
  close(to_hook);
  to_hook = -1;

  char output[HOOK_OUTPUT_MAX + 1];
  size_t used = 0;
  int64_t deadline = h->timeout > 0 ? now_ms() + h->timeout * 1000 : -1;
  bool timed_out = false, output_open = true;
  int status = 0;
  fcntl(from_hook, F_SETFL, O_NONBLOCK);
  /* Wait for the hook's exit, not for its stdout to close: a hook that leaves a daemon
   * holding the pipe must not hang the runtime. */
  while (pidfd >= 0) {
    struct pollfd p[2] = {{pidfd, POLLIN, 0}, {from_hook, POLLIN, 0}};
    int timeout = -1;
    if (deadline >= 0) {
      int64_t left = deadline - now_ms();
      timeout = left > 0 ? (int)left : 0;
    }
    int r = poll(p, output_open ? 2 : 1, timeout);
    if (r < 0 && errno == EINTR)
      continue;
    if (r == 0) {
      timed_out = true;
      break;
    }
    if (output_open && (p[1].revents || p[0].revents)) {
      char buf[512];
      ssize_t n;
      while ((n = read(from_hook, buf, sizeof(buf))) > 0) {
        size_t take = (size_t)n < HOOK_OUTPUT_MAX - used ? (size_t)n : HOOK_OUTPUT_MAX - used;
        memcpy(output + used, buf, take);
        used += take;
      }
      if (n == 0)
        output_open = false;
    }
    if (p[0].revents & POLLIN)
      break;
  }
  if (timed_out)
    kill(pid, SIGKILL);
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
    ;
  output[used] = '\0';
  while (used > 0 && (output[used - 1] == '\n' || output[used - 1] == ' '))
    output[--used] = '\0';
  if (timed_out)
    return sr_error_make(err, 0, "hook %s[%zu] `%s`: timed out after %lld s", name, index,
                         h->path, (long long)h->timeout);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    if (used)
      sr_debug("hook %s[%zu] `%s`: %s", name, index, h->path, output);
    return 0;
  }
  char how[64];
  if (WIFSIGNALED(status))
    snprintf(how, sizeof(how), "killed by signal %d", WTERMSIG(status));
  else
    snprintf(how, sizeof(how), "exit status %d", WEXITSTATUS(status));
  return sr_error_make(err, 0, "hook %s[%zu] `%s` failed: %s%s%s", name, index, h->path, how,
                       used ? ": " : "", output);
}

int sr_hooks_run(const struct sr_hooks *hooks, enum sr_hook_kind kind, const char *state_json,
                 sr_error_t *err)
{
  for (size_t i = 0; i < hooks->n[kind]; i++)
    if (run_hook(&hooks->list[kind][i], sr_hook_name(kind), i, state_json, err) < 0)
      return -1;
  return 0;
}
