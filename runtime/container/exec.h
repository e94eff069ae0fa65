/* exec: a new process in a running container, in all its namespaces, its cgroup, under its
 * seccomp filter, with the capabilities and user the container (and the policy) allow. */
#ifndef SEERUN_EXEC_H
#define SEERUN_EXEC_H

#include <stdbool.h>
#include <sys/types.h>

#include "config.h"
#include "error.h"
#include "landlock.h"
#include "statedir.h"

struct sr_exec_opts {
  const char *console_socket;
  const char *pid_file;
  bool detach;
  bool ignore_paused;
  int preserve_fds;
  int console_fd; /* set by the caller for a foreground tty: its end of a socketpair */
  struct sr_landlock_plan landlock; /* what the policy decided for this process; abi 0: none */
  /* The built-in seccomp filter goes first: the policy's decision (the caller's), never what
   * state.json says, which a container that reached its state directory could rewrite. */
  bool builtin_seccomp;
  /* The profile enforces, so the container has a user namespace of its own: an init that is
   * in the runtime's is not the container's (a pid rewritten in state.json). */
  bool require_own_userns;
};

/* Whether container c's init is in the runtime's (the host's) network namespace. */
bool sr_exec_in_our_netns(const struct sr_container *c);

struct sr_exec_result {
  pid_t pid;
  int pidfd;
};

/* Runs p in container c (locked by the caller), created from config.  On success the process
 * has exec'd (exec errors, e.g. a missing executable, are reported here). */
int sr_exec(struct sr_container *c, const struct sr_config *config, const struct sr_process *p,
            const struct sr_exec_opts *o, struct sr_exec_result *res, sr_error_t *err);

#endif
