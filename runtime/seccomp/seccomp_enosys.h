/* The -ENOSYS stub in front of a config's filter: a syscall newer than every syscall the
 * profile names (per architecture) gets ENOSYS instead of the default action, as runc does,
 * so that glibc's fallbacks for calls a profile predates (clone3, faccessat2, openat2, ...)
 * keep working under profiles written before those calls existed. */
#ifndef SEERUN_SECCOMP_ENOSYS_H
#define SEERUN_SECCOMP_ENOSYS_H

#include <linux/filter.h>
#include <stddef.h>

#include "config.h"
#include "error.h"

/* Whether `s` gets the stub: its default action denies (errno other than ENOSYS, kill, trap),
 * and it names at least one syscall.  An allowing, logging, tracing or notifying default
 * leaves unknown syscalls to that action. */
bool sr_seccomp_enosys_applies(const struct sr_seccomp *s);

/* Prepends the stub to the program *insns (malloc'd, *len instructions), reallocating it:
 * for the native architecture and each of s->architectures on which a name of the profile
 * exists, a syscall number above the largest such number gets SECCOMP_RET_ERRNO(ENOSYS);
 * everything else falls through to the program unchanged (x32 numbers on x86_64 included). */
int sr_seccomp_enosys_prepend(const struct sr_seccomp *s, struct sock_filter **insns, size_t *len,
                              sr_error_t *err);

#endif
