/* Linux security modules: the SELinux and AppArmor labels the container process takes at its
 * final execve, and the SELinux context= option of the mounts the runtime creates. */
#ifndef SEERUN_LSM_H
#define SEERUN_LSM_H

#include <stdbool.h>

#include "config.h"
#include "error.h"

#define SR_LSM_IGNORED_SELINUX 0x1u  /* selinuxLabel set, SELinux not enabled */
#define SR_LSM_IGNORED_APPARMOR 0x2u /* apparmorProfile set, AppArmor not enabled */

/* Arms the labels of p (selinuxLabel, apparmorProfile) for the next execve, through the verified
 * procfs root `proc_fd`:
 *   SELinux: when selinuxLabel is non-empty and is_selinux_enabled() > 0, writes the label to
 *   thread-self/attr/exec (what setexeccon does, but through proc_fd);
 *   AppArmor: when apparmorProfile is non-empty and AppArmor is enabled (sysfs
 *   module/apparmor/parameters/enabled reads "Y"), writes "exec <profile>" to
 *   thread-self/attr/apparmor/exec, or thread-self/attr/exec on kernels without the former.
 * A label whose module is not enabled is skipped and its SR_LSM_IGNORED_* bit set in *ignored
 * (which is set to 0 first), for the caller to log.  Any failure to set an enabled module's
 * label is an error. */
int sr_lsm_prepare_exec(const struct sr_process *p, int proc_fd, unsigned *ignored,
                        sr_error_t *err);

/* Logs, at debug level, each label of p that sr_lsm_prepare_exec will skip on this host because
 * its module is not enabled.  For the runtime side of create and exec (their log is the
 * engine's; the init's stderr is the container's). */
void sr_lsm_log_ignored(const struct sr_process *p);

/* AppArmor is enabled: /sys/module/apparmor/parameters/enabled, which must be on sysfs, reads
 * "Y".  When that file does not exist, procfs decides: thread-self/attr/apparmor/current is
 * readable only when AppArmor is active (so a container without /sys cannot hide it). */
int sr_lsm_apparmor_enabled(int proc_fd, bool *enabled, sr_error_t *err);

/* is_selinux_enabled() > 0. */
bool sr_lsm_selinux_enabled(void);

/* linux.mountLabel for a new filesystem of this type: the label, or NULL when SELinux is off,
 * no label is set, or the type takes none here (proc and sysfs, as runc).  It goes to the
 * filesystem as its own "context" parameter, never through the comma-separated data: an MCS
 * label has commas (s0:c1,c2). */
const char *sr_lsm_selinux_fs_context(const char *mount_label, const char *fstype);

#endif
