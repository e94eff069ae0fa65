/* The identity the container process runs with: supplementary groups, gid, uid, the five
 * capability sets and the umask, applied in the one order that cannot leave a privilege behind;
 * and no_new_privs.  Runs in the container's init, after start, just before seccomp and execve. */
#ifndef SEERUN_CAPS_H
#define SEERUN_CAPS_H

#include <stdint.h>

#include "config.h"
#include "error.h"

/* Switches the calling process to `u` with exactly the capabilities of `caps` (NULL: none at all,
 * in every set including the bounding set).  Order: keep-caps on; drop from the bounding set
 * every capability not listed; setgroups(additionalGids, or none); setresgid; setresuid;
 * keep-caps off; capset permitted/effective/inheritable exactly as listed; clear the ambient set
 * and raise each listed ambient capability; umask when given.
 *
 * Capabilities the running kernel does not know (above cap_last_cap) are ignored in every set.
 * An ambient capability that is not also both permitted and inheritable in `caps` is not raised
 * (the kernel forbids it, and the inheritable set is never widened to make it possible); see
 * sr_caps_ambient_unraisable() to warn about those.  setgroups() refused because the user
 * namespace has setgroups "deny" is not an error when no additional gids are asked for.
 * Errors name the step: "setresuid 1000: Operation not permitted". */
int sr_caps_apply_identity(const struct sr_user *u, const struct sr_capabilities *caps,
                           sr_error_t *err);

/* prctl(PR_SET_NO_NEW_PRIVS, 1). */
int sr_caps_no_new_privs(sr_error_t *err);

/* For the caller's warnings (the spec wants capabilities that cannot be granted logged).
 * The capabilities of `caps` (any set) the running kernel does not know; 0 for NULL. */
uint64_t sr_caps_unknown_to_kernel(const struct sr_capabilities *caps);
/* The ambient capabilities of `caps` that sr_caps_apply_identity will not raise because they are
 * not both permitted and inheritable; 0 for NULL. */
uint64_t sr_caps_ambient_unraisable(const struct sr_capabilities *caps);
/* Logs the warnings the spec asks for (config.md, Linux Process: a capability that cannot be
 * granted MUST be logged as a warning): the capabilities of p unknown to the kernel, and, for a
 * user other than root (whose execve grants its permitted set whatever the ambient one), the
 * ambient ones that will not be raised.  For the runtime side of create and exec, whose log is
 * the engine's, not the container's stderr. */
void sr_caps_warn_ungrantable(const struct sr_process *p);
/* "CAP_KILL, CAP_NET_BIND_SERVICE" ("" for 0); NULL when out of memory.  Owned by the caller. */
char *sr_caps_mask_names(uint64_t mask);

#endif
