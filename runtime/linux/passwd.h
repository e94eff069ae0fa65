/* HOME for the container's process from the container's own /etc/passwd, as runc sets it. */
#ifndef SEERUN_PASSWD_H
#define SEERUN_PASSWD_H

#include <stddef.h>
#include <stdint.h>

/* The home directory of uid in the /etc/passwd of the caller's root (the container's, after
 * pivot_root or setns into its mount namespace), resolved inside that root; "/" when the file
 * is missing, not a regular file, on procfs or sysfs, has no such uid within its first SR_PASSWD_MAX_BYTES, or
 * cannot be read.  Never blocks on a fifo, never follows a link out of the root. */
#define SR_PASSWD_MAX_BYTES (4u << 20)
void sr_passwd_home(uint32_t uid, char *out, size_t size);

/* env (n entries) with "HOME=<uid's home>" added when it has no non-empty HOME (runc's rule):
 * a new NULL-terminated array of env's pointers plus one string, both malloc'd (*added is the
 * string, for free), and *n_out its length; NULL when env already has HOME or on ENOMEM. */
char **sr_passwd_env_with_home(char **env, size_t n, uint32_t uid, size_t *n_out, char **added);

#endif
