/* The default seccomp filter: installed in every container process, under whatever filter
 * config.json asks for (the kernel runs every filter of the stack and the most severe action
 * wins, so the config can only narrow it).
 *
 * The filter is compiled at build time (tools/gen_seccomp_default, policy in
 * seccomp_default_syscalls.h) into a constant array linked into the binary: nothing is
 * parsed, compiled or read from disk at run time, so a writable cache can never replace it.
 * Loaded plain, it never notifies.  For the activity record it is loaded with its EPERM
 * answers turned into SECCOMP_RET_USER_NOTIF and a listener (sr_seccomp_default_install_notify),
 * which the container's supervisor serves, replying EPERM; never when config.json brings its
 * own listener (the kernel allows one listener per filter stack: the config's). */
#ifndef SEERUN_SECCOMP_DEFAULT_H
#define SEERUN_SECCOMP_DEFAULT_H

#include <linux/filter.h>

#include "error.h"

/* Generated into the build directory (runtime/seccomp_default_prog.c). */
extern const struct sock_filter sr_seccomp_default_prog[];
extern const unsigned short sr_seccomp_default_prog_len;

/* Loads the default filter into the calling thread with seccomp(SECCOMP_SET_MODE_FILTER, 0):
 * no flags (no TSYNC: call it while the process has one thread, as the container process
 * does before execve; no LOG; no SPEC_ALLOW, so the speculative store bypass mitigation
 * stays as the kernel's policy has it).  Needs no_new_privs or CAP_SYS_ADMIN (the caller
 * orders this against the identity change).  Loading it twice stacks two copies. */
int sr_seccomp_default_install(sr_error_t *err);

/* The same filter, with SECCOMP_FILTER_FLAG_NEW_LISTENER and its ERRNO(EPERM) returns replaced
 * by SECCOMP_RET_USER_NOTIF: *listener is the notification fd (O_CLOEXEC).  Where a listener
 * exists already in the stack (EBUSY), the plain filter is loaded and *listener is -1.
 * Without a listener (it was closed: the supervisor has gone) the kernel fails the denied calls
 * with ENOSYS: they still fail. */
int sr_seccomp_default_install_notify(int *listener, sr_error_t *err);

#endif
