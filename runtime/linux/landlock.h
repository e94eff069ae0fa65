/* Landlock: every process of a container confined to the container's own file hierarchy.
 *
 * Defence in depth beyond the namespaces: a host descriptor that reaches the container by some
 * future bug (a directory through --preserve-fds, an engine's or the runtime's own leaked fd,
 * the CVE-2024-21626 class) grants nothing beneath it: openat() through it, fchdir() to it and
 * a reopen by /proc/self/fd/N all fail with EACCES.  The ruleset handles every filesystem
 * right of the kernel's ABI and grants them only beneath the container's "/", plus exactly the
 * access modes of the files the process was handed as stdio and --preserve-fds (so that
 * `>/dev/stdout` still works when stdout is a host file or terminal).
 *
 * What it does not stop: a mount beneath the container's "/" is part of the hierarchy, so a
 * host directory wrongly bound in stays reachable (the policy's bind checks are the defence
 * there).  A Landlock domain also forbids mount(2), umount and pivot_root to the confined
 * processes, whatever their capabilities.
 *
 * Applied after pivot_root and every mount, before the identity change, no_new_privs and
 * seccomp (landlock_restrict_self needs CAP_SYS_ADMIN in the user namespace, or no_new_privs).
 */
#ifndef SEERUN_LANDLOCK_H
#define SEERUN_LANDLOCK_H

#include <stdbool.h>

#include "error.h"

/* What the policy decided for a container's processes; abi 0: no Landlock. */
struct sr_landlock_plan {
  int abi;                  /* the kernel's ABI version the ruleset is built for */
  bool scope_abstract_unix; /* LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (ABI 6+) */
};

/* The kernel's Landlock ABI version; 0 when it has none (not built in: ENOSYS; not enabled at
 * boot, lsm= without landlock: EOPNOTSUPP). */
int sr_landlock_abi(void);

/* Builds the ruleset for the calling process, whose "/" must already be the container's root:
 * *ruleset_fd (close-on-exec) is then applied by sr_landlock_restrict. */
int sr_landlock_prepare(const struct sr_landlock_plan *plan, int *ruleset_fd, sr_error_t *err);

/* Grants the access modes of the inherited regular files and character devices among fds
 * 0..2 and 3..3+preserve_fds-1 (their inode only, nothing beneath a directory), then confines
 * the calling process (and all it will exec) and closes ruleset_fd.  nnp_ok: the process will
 * run with no_new_privs anyway, so it may be set now if CAP_SYS_ADMIN is missing. */
int sr_landlock_restrict(const struct sr_landlock_plan *plan, int ruleset_fd, int preserve_fds,
                         bool nnp_ok, sr_error_t *err);

/* Confines a helper process of seerun's own (the egress proxy) that must read nothing but the
 * directories listed (NULL-terminated; those the host lacks are skipped) and write nowhere,
 * and may signal or reach abstract unix sockets only within its own domain.  The caller has
 * no_new_privs set.  A kernel without Landlock confines nothing (the caller's other layers
 * still hold). */
int sr_landlock_confine_helper(const char *const *readable, sr_error_t *err);

#endif
