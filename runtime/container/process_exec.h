/* The last steps of every container process, shared by the init (after start) and exec:
 * signals back to their defaults, the preserved descriptors, seccomp, the identity and
 * capabilities, no_new_privs, the runtime-binary guard, execve. */
#ifndef SEERUN_PROCESS_EXEC_H
#define SEERUN_PROCESS_EXEC_H

#include <sys/stat.h>

#include "config.h"
#include "seccomp_cache.h"
#include "error.h"

struct sr_exec_target {
  const struct sr_process *process;
  const struct sr_seccomp *seccomp; /* NULL: none */
  const struct sr_seccomp_prog *seccomp_prog; /* the config's filter, compiled by the parent */
  bool builtin_seccomp;             /* the mandatory default filter goes first */
  int notify_sock;                  /* connected listenerPath socket, or -1 */
  int activity_sock;                /* the supervisor's hand-over socket (activity.h), or -1 */
  const char *notify_state;         /* the container process state, sent with the notify fd */
  const char *exec_path;            /* resolved inside the container */
  struct stat runtime_exe;          /* the seerun binary: never executed in the container */
  int preserve_fds;
  bool die_with_parent; /* PR_SET_PDEATHSIG SIGKILL, set again after the identity change */
};

/* Remembers which file the runtime binary is (before pivot_root hides its path). */
int sr_process_exec_runtime_identity(struct stat *st, sr_error_t *err);

/* chdir to process.cwd, checked to really be inside the container after: a cwd through an
 * inherited descriptor (/proc/self/fd/N) would start the process in a host directory. */
int sr_process_exec_enter_cwd(const char *cwd, sr_error_t *err);

/* Finds process.args[0] inside the container (PATH from process.env, else the default), so
 * that a missing executable fails early with runc's wording. */
int sr_process_exec_find_executable(const struct sr_process *p, char **out, sr_error_t *err);

/* Refuses to run the runtime binary in the container, directly, as a #! interpreter or as an
 * ELF interpreter (the CVE-2019-5736 class: a container execing /proc/self/exe gets a handle
 * on the host's binary). */
int sr_process_exec_guard(const char *path, const struct stat *runtime_exe, sr_error_t *err);

/* Every signal handled by default and none blocked, as in a fresh process: ignored signals
 * stay ignored across execve (the runtime ignores SIGPIPE). */
void sr_process_exec_reset_signals(void);

/* Does not return on success. */
int sr_process_exec(const struct sr_exec_target *t, sr_error_t *err);

#endif
