#include "build.h"

#include "seccomp_default.h"

#include <errno.h>
#include <linux/seccomp.h>
#include <sys/syscall.h>
#include <unistd.h>

int sr_seccomp_default_install(sr_error_t *err)
{
  /* The kernel copies the program; the cast only drops const for the uapi struct. */
  struct sock_fprog prog = {
      .len = sr_seccomp_default_prog_len,
      .filter = (struct sock_filter *)sr_seccomp_default_prog,
  };

  if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) == 0)
    return 0;
  if (errno == EACCES)
    return sr_error_make(err, EACCES,
                         "seccomp: load the default filter (no_new_privs is not set and the "
                         "process lacks CAP_SYS_ADMIN)");
  /* A kernel without seccomp filters (ENOSYS, EINVAL) gets no container: the default filter
   * is not optional. */
  return sr_error_sys(err, "seccomp: load the default filter");
}

int sr_seccomp_default_install_notify(int *listener, sr_error_t *err)
{
  /* The same program with its EPERM answers turned into notifications: what is allowed takes
   * the very same path (no extra instruction), only the denied set reaches the supervisor. */
  struct sock_filter prog[BPF_MAXINSNS];
  size_t len = sr_seccomp_default_prog_len;
  if (len > BPF_MAXINSNS)
    return sr_error_make(err, E2BIG, "seccomp: the default filter is too long");
  for (size_t i = 0; i < len; i++) {
    prog[i] = sr_seccomp_default_prog[i];
    if (prog[i].code == (BPF_RET | BPF_K) && prog[i].k == (SECCOMP_RET_ERRNO | EPERM))
      prog[i].k = SECCOMP_RET_USER_NOTIF;
  }
  struct sock_fprog fp = {.len = (unsigned short)len, .filter = prog};
  long fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &fp);
  if (fd >= 0) {
    *listener = (int)fd;
    return 0;
  }
  /* EBUSY: a filter with a listener is above us already (seerun under someone's seccomp
   * agent): the plain filter, unseen. */
  if (errno == EBUSY) {
    *listener = -1;
    return sr_seccomp_default_install(err);
  }
  if (errno == EACCES)
    return sr_error_make(err, EACCES,
                         "seccomp: load the default filter (no_new_privs is not set and the "
                         "process lacks CAP_SYS_ADMIN)");
  return sr_error_sys(err, "seccomp: load the default filter with a listener");
}
