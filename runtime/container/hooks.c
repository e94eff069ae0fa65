#include "build.h"

#include "hooks.h"

#include "cleanup.h"
#include "log.h"
#include "policy_apply.h"
#include "process_exec.h"
#include "pidfd.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
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
__attribute__((noreturn)) static void hook_child(const struct sr_hook_ready *r,
                                                 enum sr_hook_kind kind, int in, int out)
{
  const struct sr_hook *h = r->hook;
  /* Its own process group, so that a timeout kills what the hook started as well. */
  setpgid(0, 0);
  if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(out, 2) < 0)
    _exit(127);
  /* Ignored signals stay ignored across execve: the runtime ignores SIGPIPE, which would
   * otherwise reach every pipeline of the hook as EPIPE instead of a clean exit. */
  sr_process_exec_reset_signals();
  char *const default_argv[] = {h->path, NULL};
  char *const *argv = h->n_args ? h->args : default_argv;
  char *const *envp = r->n_env ? r->env : empty_env;
  if (kind == SR_HOOK_START_CONTAINER) {
    /* A file of the container, named in its own root. */
    execve(h->path, argv, envp);
  } else if (r->file.fd < 0) {
    errno = r->file.error ? r->file.error : ENOENT;
  } else if (r->file.interp_fd >= 0) {
    /* A script: what the kernel would do, with the interpreter judged and executed by its
     * descriptor (the kernel would open it again by name).  The script goes by descriptor
     * too: /dev/fd/N, as the kernel names a script executed with execveat. */
    int script = dup(r->file.fd); /* without O_CLOEXEC: the interpreter opens it */
    size_t n = h->n_args ? h->n_args : 1;
    char name[32];
    snprintf(name, sizeof(name), "/dev/fd/%d", script);
    char *v[n + 4];
    size_t k = 0;
    v[k++] = (char *)r->file.interp;
    if (r->file.has_interp_arg)
      v[k++] = (char *)r->file.interp_arg;
    v[k++] = name;
    for (size_t i = 1; i < n; i++)
      v[k++] = argv[i];
    v[k] = NULL;
    if (script >= 0)
      syscall(SYS_execveat, r->file.interp_fd, "", v, envp, AT_EMPTY_PATH);
  } else {
    /* The file the policy judged, not whatever the path names now. */
    syscall(SYS_execveat, r->file.fd, "", argv, envp, AT_EMPTY_PATH);
  }
  dprintf(2, "exec %s: %s", h->path, strerror(errno));
  _exit(127);
}

static int run_hook(const struct sr_hook_ready *ready, enum sr_hook_kind kind,
                    const char *state_json, sr_error_t *err)
{
  const struct sr_hook *h = ready->hook;
  const char *name = sr_config_hook_name(kind);
  size_t index = ready->index;
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
    hook_child(ready, kind, in[0], out[1]);
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

void sr_hooks_batch_release(struct sr_hook_batch *b)
{
  for (size_t i = 0; i < b->n; i++)
    sr_hook_files_close(&b->v[i].file);
  sr_arena_release(&b->arena);
  b->v = NULL;
  b->n = 0;
}

/* One hook of the runtime's namespaces, judged from the descriptor it will be executed by.
 * Returns 1: ready; 0: skipped (refused, with gate->rejudge); -1: refused, or an error. */
static int prepare_one(const struct sr_hook *h, enum sr_hook_kind kind, size_t i,
                       const struct sr_hook_gate *gate, struct sr_hook_batch *b,
                       struct sr_hook_ready *r, sr_error_t *err)
{
  const char *name = sr_config_hook_name(kind);
  sr_error_t refusal = NULL;
  int rc;
  if (gate == NULL || gate->profile == NULL) {
    /* Nothing to judge it against: a hook of the host does not run on no one's word. */
    rc = sr_error_make(&refusal, 0, "no policy profile to judge it against");
  } else {
    sr_hook_files_open(h->path, &gate->places, &r->file);
    struct sr_policy_facts facts = {0};
    struct sr_policy_hook_fact *fv = sr_arena_array(&b->arena, i + 1, sizeof(*fv));
    if (fv == NULL || sr_hook_files_fact(&r->file, gate->profile, &b->arena, &fv[i], err) < 0) {
      sr_hook_files_close(&r->file);
      return fv ? -1 : sr_error_make(err, ENOMEM, "hook %s[%zu]", name, i);
    }
    facts.hooks[kind] = fv;
    sr_hook_files_places_tenant_dirs(&gate->places, &b->arena, &facts);
    struct sr_hook judged = *h;
    const struct sr_policy_profile *judges[2] = {gate->profile,
                                                 gate->also != gate->profile ? gate->also : NULL};
    rc = 0;
    for (int j = 0; j < 2 && rc == 0 && judges[j]; j++) {
      /* The matches are the profile's own: facts again for the second one. */
      if (j > 0 && sr_hook_files_fact(&r->file, judges[j], &b->arena, &fv[i], err) < 0) {
        sr_hook_files_close(&r->file);
        return -1;
      }
      struct sr_decisions d = {0};
      rc = sr_policy_apply_hooks_check_hook(judges[j], &b->arena, &facts, kind, i, &judged, &d,
                                            &refusal);
      /* Fail closed: a hook whose decision leaves no trace does not run. */
      if ((gate->rejudge || rc < 0) && sr_audit_decisions(gate->audit, &d, err) < 0) {
        sr_error_free(&refusal);
        sr_hook_files_close(&r->file);
        return sr_error_wrap(err, "hook %s[%zu] `%s`", name, i, h->path);
      }
      if (rc < 0)
        sr_error_wrap(&refusal, "policy \"%s\"", judges[j]->name);
    }
    if (rc == 0) {
      r->env = judged.env;
      r->n_env = judged.n_env;
    }
  }
  if (rc == 0)
    return 1;
  sr_hook_files_close(&r->file);
  if (gate && gate->rejudge) {
    _cleanup_free_ char *t = sr_error_text(refusal);
    sr_warn("hook %s[%zu] `%s`: not run: %s", name, i, h->path, t ? t : "");
    sr_error_free(&refusal);
    return 0;
  }
  *err = refusal;
  return -1;
}

int sr_hooks_prepare(const struct sr_hooks *hooks, enum sr_hook_kind kind,
                     const struct sr_hook_gate *gate, struct sr_hook_batch *out, sr_error_t *err)
{
  memset(out, 0, sizeof(*out));
  out->kind = kind;
  size_t n = hooks->n[kind];
  out->v = sr_arena_array(&out->arena, n + 1, sizeof(*out->v));
  if (out->v == NULL)
    return sr_error_make(err, ENOMEM, "hooks %s", sr_config_hook_name(kind));
  for (size_t i = 0; i < n; i++) {
    const struct sr_hook *h = &hooks->list[kind][i];
    struct sr_hook_ready *r = &out->v[out->n];
    *r = (struct sr_hook_ready){.hook = h, .index = i, .env = h->env, .n_env = h->n_env};
    sr_hook_files_init(&r->file);
    /* startContainer: judged at create by its name, run in the container by its path. */
    int rc = kind == SR_HOOK_START_CONTAINER ? 1 : prepare_one(h, kind, i, gate, out, r, err);
    if (rc < 0) {
      sr_hooks_batch_release(out);
      return -1;
    }
    if (rc > 0)
      out->n++;
  }
  return 0;
}

int sr_hooks_run_batch(const struct sr_hook_batch *b, const char *state_json, sr_error_t *err)
{
  /* The spec: a failing poststop hook is a warning, and the remaining hooks still run. */
  bool keep_going = b->kind == SR_HOOK_POSTSTOP || b->keep_going;
  _cleanup_free_ char *failures = NULL;
  for (size_t i = 0; i < b->n; i++) {
    sr_error_t e = NULL;
    if (run_hook(&b->v[i], b->kind, state_json, &e) == 0)
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

static int run_hooks(const struct sr_hooks *hooks, enum sr_hook_kind kind,
                     const struct sr_hook_gate *gate, const char *state_json, bool keep_going,
                     sr_error_t *err)
{
  if (hooks->n[kind] == 0)
    return 0;
  struct sr_hook_batch b;
  if (sr_hooks_prepare(hooks, kind, gate, &b, err) < 0)
    return -1;
  b.keep_going = keep_going;
  int r = sr_hooks_run_batch(&b, state_json, err);
  sr_hooks_batch_release(&b);
  return r;
}

int sr_hooks_run(const struct sr_hooks *hooks, enum sr_hook_kind kind,
                 const struct sr_hook_gate *gate, const char *state_json, sr_error_t *err)
{
  return run_hooks(hooks, kind, gate, state_json, false, err);
}

int sr_hooks_run_all(const struct sr_hooks *hooks, enum sr_hook_kind kind,
                     const struct sr_hook_gate *gate, const char *state_json, sr_error_t *err)
{
  return run_hooks(hooks, kind, gate, state_json, true, err);
}
