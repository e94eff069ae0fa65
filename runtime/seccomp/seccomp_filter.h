/* The seccomp filter of the container process (linux.seccomp), built with libseccomp and
 * loaded as the last step before execve, and the hand-off of its notify fd to the agent at
 * linux.seccomp.listenerPath. */

#ifndef SEERUN_SECCOMP_FILTER_H
#define SEERUN_SECCOMP_FILTER_H

#include <linux/filter.h>
#include <stddef.h>

#include "config.h"
#include "error.h"

/* Builds the filter described by `s` and loads it into the calling thread (all threads with
 * SECCOMP_FILTER_FLAG_TSYNC).  Exactly the flags of s->flags are used; no_new_privs is left as
 * the caller set it (without it, loading needs CAP_SYS_ADMIN).  Names that exist on none of the
 * filter's architectures are skipped; libseccomp skips a name per architecture that lacks it.
 *
 * *notify_fd is set to the listener fd (O_CLOEXEC, owned by the caller) when the loaded
 * filter has a SCMP_ACT_NOTIFY action, else to -1.  s == NULL loads nothing and returns 0. */
int sr_seccomp_install(const struct sr_seccomp *s, int *notify_fd, sr_error_t *err);

/* Builds the filter described by `s` as sr_seccomp_install does (same checks, same errors)
 * and exports its BPF program instead of loading it: *insns (malloc'd, owned by the caller),
 * *len instructions, behind the ENOSYS stub for syscalls newer than the profile
 * (seccomp_enosys.h; what the runtime loads, through the cache).  What the kernel would refuse at load (a program over BPF_MAXINSNS, an
 * unsupported flag) is not checked here.  Used by the filter cache (seccomp_cache.h). */
int sr_seccomp_compile(const struct sr_seccomp *s, struct sock_filter **insns, size_t *len,
                       sr_error_t *err);

/* Sends the container process state (JSON text, composed by the caller, its "fds" naming
 * "seccompFd") over a connected AF_UNIX stream socket: one message whose first sendmsg carries
 * notify_fd as SCM_RIGHTS, the rest of the text following on short writes.  Does not close
 * either fd.  SIGPIPE is not raised if the agent has gone (EPIPE is reported). */
int sr_seccomp_send_notify_fd(int listener_sock, int notify_fd, const char *process_state_json,
                              sr_error_t *err);

#endif
