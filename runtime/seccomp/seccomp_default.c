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
