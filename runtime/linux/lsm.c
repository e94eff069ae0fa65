#include "build.h"

#include "lsm.h"
#include "cleanup.h"
#include "log.h"
#include "process_attrs.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <selinux/selinux.h>
#include <stdio.h>
#include <string.h>
#include <sys/statfs.h>
#include <unistd.h>

#define APPARMOR_ENABLED_PATH "/sys/module/apparmor/parameters/enabled"

bool sr_lsm_selinux_enabled(void)
{
  return is_selinux_enabled() > 0;
}

int sr_lsm_apparmor_enabled(int proc_fd, bool *enabled, sr_error_t *err)
{
  char buf[8];
  ssize_t n;
  *enabled = false;
  _cleanup_close_ int fd = open(APPARMOR_ENABLED_PATH, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd >= 0) {
    struct statfs sfs;
    if (fstatfs(fd, &sfs) < 0)
      return sr_error_sys(err, "fstatfs %s", APPARMOR_ENABLED_PATH);
    /* A file the container planted there must not switch confinement off. */
    if (sfs.f_type != SYSFS_MAGIC)
      return sr_error_make(err, 0, "%s: not on sysfs", APPARMOR_ENABLED_PATH);
    do
      n = read(fd, buf, sizeof(buf));
    while (n < 0 && errno == EINTR);
    if (n < 0)
      return sr_error_sys(err, "read %s", APPARMOR_ENABLED_PATH);
    *enabled = n > 0 && buf[0] == 'Y';
    return 0;
  }
  if (errno != ENOENT)
    return sr_error_sys(err, "open %s", APPARMOR_ENABLED_PATH);

  /* No such file: AppArmor is not built in, or /sys is not mounted where we stand.  procfs tells
   * the two apart, so a missing /sys cannot make us skip a profile. */
  _cleanup_error_ sr_error_t e = NULL;
  _cleanup_close_ int afd =
      sr_process_attrs_open_proc(proc_fd, "thread-self/attr/apparmor/current", O_RDONLY, &e);
  if (afd < 0) {
    if (e->status == ENOENT)
      return 0; /* no AppArmor in this kernel */
    *err = steal_ptr(e);
    return -1;
  }
  do
    n = read(afd, buf, sizeof(buf));
  while (n < 0 && errno == EINTR);
  if (n < 0 && errno == EINVAL)
    return 0; /* built in, not active */
  if (n < 0)
    return sr_error_sys(err, "read /proc/thread-self/attr/apparmor/current");
  *enabled = true;
  return 0;
}

static int apparmor_prepare_exec(const char *profile, int proc_fd, sr_error_t *err)
{
  _cleanup_free_ char *value = NULL;
  if (asprintf(&value, "exec %s", profile) < 0)
    return sr_error_make(err, ENOMEM, "process.apparmorProfile");
  _cleanup_error_ sr_error_t e = NULL;
  if (sr_process_attrs_write_proc(proc_fd, "thread-self/attr/apparmor/exec", value, &e) == 0)
    return 0;
  if (e->status != ENOENT) {
    *err = steal_ptr(e);
    return sr_error_wrap(err, "process.apparmorProfile");
  }
  /* Kernels before 5.8 only have the shared attr/exec. */
  if (sr_process_attrs_write_proc(proc_fd, "thread-self/attr/exec", value, err) < 0)
    return sr_error_wrap(err, "process.apparmorProfile");
  return 0;
}

int sr_lsm_prepare_exec(const struct sr_process *p, int proc_fd, unsigned *ignored, sr_error_t *err)
{
  *ignored = 0;
  if (p->selinux_label != NULL && p->selinux_label[0] != '\0') {
    if (!sr_lsm_selinux_enabled()) {
      *ignored |= SR_LSM_IGNORED_SELINUX;
    } else {
      /* setexeccon() would write through whatever /proc the container has; this goes through
       * the verified procfs, so a planted mount cannot swallow the label (container runs
       * unconfined) or redirect the write. */
      if (sr_process_attrs_write_proc(proc_fd, "thread-self/attr/exec", p->selinux_label, err) < 0)
        return sr_error_wrap(err, "process.selinuxLabel");
    }
  }
  if (p->apparmor_profile != NULL && p->apparmor_profile[0] != '\0') {
    bool enabled;
    if (sr_lsm_apparmor_enabled(proc_fd, &enabled, err) < 0)
      return sr_error_wrap(err, "process.apparmorProfile");
    if (!enabled)
      *ignored |= SR_LSM_IGNORED_APPARMOR;
    else if (apparmor_prepare_exec(p->apparmor_profile, proc_fd, err) < 0)
      return -1;
  }
  return 0;
}

void sr_lsm_log_ignored(const struct sr_process *p)
{
  if (p->selinux_label != NULL && p->selinux_label[0] != '\0' && !sr_lsm_selinux_enabled())
    sr_debug("process.selinuxLabel \"%s\": SELinux is not enabled, the label is ignored",
             p->selinux_label);
  if (p->apparmor_profile == NULL || p->apparmor_profile[0] == '\0')
    return;
  _cleanup_close_ int proc_fd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
  _cleanup_error_ sr_error_t e = NULL;
  bool enabled = true;
  /* Undecided (no /proc here): say nothing; the init decides with its own procfs. */
  if (proc_fd < 0 || sr_lsm_apparmor_enabled(proc_fd, &enabled, &e) < 0)
    return;
  if (!enabled)
    sr_debug("process.apparmorProfile \"%s\": AppArmor is not enabled, the profile is ignored",
             p->apparmor_profile);
}

const char *sr_lsm_selinux_fs_context(const char *mount_label, const char *fstype)
{
  if (mount_label == NULL || mount_label[0] == '\0' || strcmp(fstype, "proc") == 0 ||
      strcmp(fstype, "sysfs") == 0 || !sr_lsm_selinux_enabled())
    return NULL;
  return mount_label;
}
