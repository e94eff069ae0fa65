#include "build.h"

#include "hooks.h"

#include "cleanup.h"
#include "log.h"
#include "process_exec.h"
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

/* The hook's side of the fork: stdin the state, stdout and stderr the capture pipe, and the
 * signal state of a fresh process. */
__attribute__((noreturn)) static void hook_child(const struct sr_hook *h, int in, int out)
{
  /* Its own process group, so that a timeout kills what the hook started as well. */
  setpgid(0, 0);
  if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(out, 2) < 0)
    _exit(127);
  /* Ignored signals stay ignored across execve: the runtime ignores SIGPIPE, which would
   * otherwise reach every pipeline of the hook as EPIPE instead of a clean exit. */
  sr_reset_signals();
  char *const default_argv[] = {h->path, NULL};
  execve(h->path, h->n_args ? h->args : default_argv, h->n_env ? h->env : empty_env);
  dprintf(2, "exec %s: %s", h->path, strerror(errno));
  _exit(127);
}

static int run_hook(const struct sr_hook *h, const char *name, size_t index, const char *state_json,
                    sr_error_t *err)
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
  if (pid == 0)
    hook_child(h, in[0], out[1]);
  setpgid(pid, pid); /* also here: the timeout must not find the child not yet moved */
  close(in[0]);
  close(out[1]);
  _cleanup_close_ int to_hook = in[1];
  _cleanup_close_ int from_hook = out[0];
  _cleanup_close_ int pidfd = sr_pidfd_open(pid);
  if (pidfd < 0) {
    /* Without it the hook could neither be fed its state nor timed out. */
    int saved = errno;
    kill(-pid, SIGKILL);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
      ;
    return sr_error_make(err, saved, "hook %s[%zu]: pidfd_open", name, index);
  }

  /* The state goes in as the hook reads it: a state larger than the pipe must arrive whole,
   * and a hook that does not read its stdin must not block us (SIGPIPE is ignored by main). */
  fcntl(to_hook, F_SETFL, O_NONBLOCK);
  fcntl(from_hook, F_SETFL, O_NONBLOCK);
  size_t len = strlen(state_json), written = 0;

  char output[HOOK_OUTPUT_MAX + 1];
  size_t used = 0;
  int64_t deadline = h->timeout > 0 ? now_ms() + h->timeout * 1000 : -1;
  bool timed_out = false, output_open = true;
  int status = 0;
  /* Wait for the hook's exit, not for its stdout to close: a hook that leaves a daemon
   * holding the pipe must not hang the runtime. */
  for (;;) {
    if (to_hook >= 0 && written == len) {
      close(to_hook);
      to_hook = -1;
    }
    struct pollfd p[3] = {
        {pidfd, POLLIN, 0}, {output_open ? from_hook : -1, POLLIN, 0}, {to_hook, POLLOUT, 0}};
    int timeout = -1;
    if (deadline >= 0) {
      int64_t left = deadline - now_ms();
      timeout = left > 0 ? (int)left : 0;
    }
    int r = poll(p, 3, timeout);
    if (r < 0 && errno == EINTR)
      continue;
    if (r == 0) {
      timed_out = true;
      break;
    }
    if (to_hook >= 0 && p[2].revents) {
      ssize_t n = write(to_hook, state_json + written, len - written);
      if (n > 0)
        written += (size_t)n;
      else if (n < 0 && errno != EAGAIN && errno != EINTR)
        written = len; /* the hook closed its stdin: it has read all it wants */
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
  if (timed_out) {
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
  }
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
    ;
  output[used] = '\0';
  while (used > 0 && (output[used - 1] == '\n' || output[used - 1] == ' '))
    output[--used] = '\0';
  if (timed_out)
    return sr_error_make(err, 0, "hook %s[%zu] `%s`: timed out after %lld s%s%s", name, index,
                         h->path, (long long)h->timeout, used ? ": " : "", output);
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
  /* The spec: a failing poststop hook is a warning, and the remaining hooks still run. */
  bool keep_going = kind == SR_HOOK_POSTSTOP;
  _cleanup_free_ char *failures = NULL;
  for (size_t i = 0; i < hooks->n[kind]; i++) {
    sr_error_t e = NULL;
    if (run_hook(&hooks->list[kind][i], sr_hook_name(kind), i, state_json, &e) == 0)
      continue;
    if (!keep_going) {
      *err = e;
      return -1;
    }
    _cleanup_free_ char *text = sr_error_text(e);
    char *joined = NULL;
    if (asprintf(&joined, "%s%s%s", failures ? failures : "", failures ? "; " : "",
                 text ? text : "out of memory") >= 0) {
      free(failures);
      failures = joined;
    }
    sr_error_free(&e);
  }
  /* Each text already ends with its strerror. */
  if (failures)
    return sr_error_make(err, 0, "%s", failures);
  return 0;
}
