#include "build.h"

#include "process_exec.h"

#include "activity.h"
#include "caps.h"
#include "cleanup.h"
#include "seccomp_default.h"
#include "seccomp_filter.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#define DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
#define MAX_INTERPRETER_DEPTH 4 /* the kernel's BINPRM recursion limit */

int sr_process_exec_runtime_identity(struct stat *st, sr_error_t *err)
{
  if (stat("/proc/self/exe", st) < 0)
    return sr_error_sys(err, "stat /proc/self/exe");
  return 0;
}

int sr_process_exec_enter_cwd(const char *cwd, sr_error_t *err)
{
  if (chdir(cwd) < 0)
    return sr_error_sys(err, "process.cwd: chdir `%s`", cwd);
  char buf[PATH_MAX];
  if (getcwd(buf, sizeof(buf)) == NULL)
    return sr_error_sys(err, "process.cwd: `%s` is not inside the container", cwd);
  return 0;
}

static const char *env_lookup(char **env, size_t n, const char *name)
{
  size_t l = strlen(name);
  for (size_t i = 0; i < n; i++)
    if (strncmp(env[i], name, l) == 0 && env[i][l] == '=')
      return env[i] + l + 1;
  return NULL;
}

/* An exec failure worded as runc words it (Go's errno texts are strerror's, lower-cased):
 * engines read the reason from the text, and Docker does so case-sensitively: "no such file or
 * directory" or "executable file not found" make `docker run`/`docker exec` exit 127, "permission
 * denied" 126; "No such file or directory" gives a bare 125.  The kind says the same for
 * seerun's own callers (the sandbox's 127 and 126), which never read the text. */
__attribute__((format(printf, 3, 4))) static int exec_error(sr_error_t *err, int errnum,
                                                            const char *fmt, ...)
{
  char reason[128];
  snprintf(reason, sizeof(reason), "%s", strerror(errnum));
  if (reason[0] >= 'A' && reason[0] <= 'Z')
    reason[0] = (char)(reason[0] - 'A' + 'a');
  _cleanup_free_ char *what = NULL;
  va_list ap;
  va_start(ap, fmt);
  int r = vasprintf(&what, fmt, ap);
  va_end(ap);
  if (r < 0)
    return sr_error_make(err, errnum, "exec");
  enum sr_error_kind kind = errnum == ENOENT   ? SR_ERR_NOT_FOUND
                            : errnum == EACCES ? SR_ERR_NOT_EXECUTABLE
                                               : SR_ERR_OTHER;
  return sr_error_kinded(err, kind, 0, "%s: %s", what, reason);
}

static int check_executable(const char *path, const char *arg0, sr_error_t *err)
{
  struct stat st;
  if (stat(path, &st) < 0)
    return exec_error(err, errno, "exec: \"%s\": stat %s", arg0, path);
  if (S_ISDIR(st.st_mode))
    return exec_error(err, EACCES, "exec: \"%s\": is a directory", arg0);
  if (faccessat(AT_FDCWD, path, X_OK, AT_EACCESS) < 0)
    return exec_error(err, errno, "exec: \"%s\"", arg0);
  return 0;
}

int sr_process_exec_find_executable(const struct sr_process *p, char **out, sr_error_t *err)
{
  const char *arg0 = p->args[0];
  if (strchr(arg0, '/')) {
    if (check_executable(arg0, arg0, err) < 0)
      return -1;
    *out = strdup(arg0);
    return *out ? 0 : sr_error_make(err, ENOMEM, "exec");
  }
  const char *path = env_lookup(p->env, p->n_env, "PATH");
  if (path == NULL)
    path = DEFAULT_PATH;
  _cleanup_free_ char *copy = strdup(path);
  if (copy == NULL)
    return sr_error_make(err, ENOMEM, "exec");
  char *save = NULL;
  for (char *dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
    char *candidate = NULL;
    if (asprintf(&candidate, "%s/%s", dir[0] ? dir : ".", arg0) < 0)
      return sr_error_make(err, ENOMEM, "exec");
    struct stat st;
    if (stat(candidate, &st) == 0 && S_ISREG(st.st_mode) &&
        faccessat(AT_FDCWD, candidate, X_OK, AT_EACCESS) == 0) {
      *out = candidate;
      return 0;
    }
    free(candidate);
  }
  return sr_error_kinded(err, SR_ERR_NOT_FOUND, 0,
                         "exec: \"%s\": executable file not found in $PATH", arg0);
}

/* The interpreter a file names: "#!path" or an ELF PT_INTERP; *out empty when none. */
static int interpreter_of(int fd, char *out, size_t size)
{
  out[0] = '\0';
  unsigned char head[256];
  ssize_t n = pread(fd, head, sizeof(head) - 1, 0);
  if (n < 2)
    return 0;
  head[n] = '\0';
  if (head[0] == '#' && head[1] == '!') {
    char *p = (char *)head + 2;
    while (*p == ' ' || *p == '\t')
      p++;
    size_t len = strcspn(p, " \t\n");
    if (len >= size)
      len = size - 1;
    memcpy(out, p, len);
    out[len] = '\0';
    return 0;
  }
  Elf64_Ehdr eh;
  if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
      eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof(Elf64_Phdr))
    return 0; /* 32-bit or unusual binaries: the direct dev/ino check still applies */
  for (unsigned i = 0; i < eh.e_phnum && i < 64; i++) {
    Elf64_Phdr ph;
    if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + i * sizeof(ph))) != (ssize_t)sizeof(ph))
      return 0;
    if (ph.p_type == PT_INTERP && ph.p_filesz > 1 && ph.p_filesz < size) {
      if (pread(fd, out, ph.p_filesz, (off_t)ph.p_offset) != (ssize_t)ph.p_filesz)
        out[0] = '\0';
      else
        out[ph.p_filesz - 1] = '\0';
      return 0;
    }
  }
  return 0;
}

int sr_process_exec_guard(const char *path, const struct stat *runtime_exe, sr_error_t *err)
{
  char current[4096];
  snprintf(current, sizeof(current), "%s", path);
  for (int depth = 0; depth <= MAX_INTERPRETER_DEPTH && current[0]; depth++) {
    _cleanup_close_ int fd = open(current, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0)
      return 0; /* execve reports what is wrong with it */
    struct stat st;
    if (fstat(fd, &st) < 0)
      return sr_error_sys(err, "exec: stat `%s`", current);
    if (st.st_dev == runtime_exe->st_dev && st.st_ino == runtime_exe->st_ino)
      return sr_error_make(err, EPERM, "exec: \"%s\": refusing to run the runtime binary inside "
                                       "the container", path);
    char next[4096];
    interpreter_of(fd, next, sizeof(next));
    memcpy(current, next, sizeof(next));
  }
  return 0;
}

void sr_process_exec_reset_signals(void)
{
  sigset_t none;
  sigemptyset(&none);
  for (int s = 1; s < NSIG; s++)
    if (s != SIGKILL && s != SIGSTOP)
      signal(s, SIG_DFL);
  sigprocmask(SIG_SETMASK, &none, NULL);
}

/* The default filter first, then the config's (which can only narrow it): when both return
 * an errno, the newest filter's wins, so the config's errno is the one the process sees. */
static int install_builtin(const struct sr_exec_target *t, sr_error_t *err)
{
  /* The config's own listener wins (one per filter stack): the plain filter, unseen. */
  bool config_listener = t->seccomp && t->seccomp->uses_notify;
  if (t->activity_sock < 0 || config_listener)
    return sr_seccomp_default_install(err);
  _cleanup_close_ int listener = -1;
  if (sr_seccomp_default_install_notify(&listener, err) < 0)
    return -1;
  /* Right after the load, before the config's filter (which may deny sendmsg or close): a
   * supervisor that has gone only costs the record (the calls then fail with ENOSYS). */
  if (listener >= 0)
    sr_activity_send_listener(t->activity_sock, listener);
  return 0;
}

static int install_seccomp(const struct sr_exec_target *t, sr_error_t *err)
{
  if (t->builtin_seccomp && install_builtin(t, err) < 0)
    return -1;
  if (t->seccomp == NULL)
    return 0;
  _cleanup_close_ int notify = -1;
  if (t->seccomp_prog ? sr_seccomp_cache_prog_load(t->seccomp_prog, &notify, err) < 0
                      : sr_seccomp_install(t->seccomp, &notify, err) < 0)
    return -1;
  if (notify < 0)
    return 0;
  if (t->notify_sock < 0)
    return sr_error_make(err, 0, "linux.seccomp.listenerPath: no connection to the agent");
  return sr_seccomp_send_notify_fd(t->notify_sock, notify, t->notify_state ? t->notify_state : "",
                                   err);
}

int sr_process_exec(const struct sr_exec_target *t, sr_error_t *err)
{
  const struct sr_process *p = t->process;
  if (sr_process_exec_guard(t->exec_path, &t->runtime_exe, err) < 0)
    return -1;
  sr_process_exec_reset_signals();
  /* --preserve-fds: passed on as they are, whatever their close-on-exec flag. */
  for (int fd = 3; fd < 3 + t->preserve_fds; fd++)
    fcntl(fd, F_SETFD, 0);
  /* Without no_new_privileges, loading a filter needs CAP_SYS_ADMIN: load it while we still
   * have it.  With it, the filter goes in last, after the identity change. */
  if (!p->no_new_privileges && install_seccomp(t, err) < 0)
    return -1;
  if (sr_caps_apply_identity(&p->user, p->capabilities, err) < 0)
    return -1;
  /* The uid change cleared it: a sandbox's command must not outlive its seerun. */
  if (t->die_with_parent && prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
    return sr_error_sys(err, "prctl PR_SET_PDEATHSIG");
  if (p->no_new_privileges && (sr_caps_no_new_privs(err) < 0 || install_seccomp(t, err) < 0))
    return -1;
  if (t->notify_sock >= 0)
    close(t->notify_sock);
  if (t->activity_sock >= 0)
    close(t->activity_sock);
  execve(t->exec_path, p->args, p->env ? p->env : (char *[]){NULL});
  return exec_error(err, errno, "exec: \"%s\"", p->args[0]);
}
