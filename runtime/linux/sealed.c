#include "build.h"

#include "sealed.h"

#include "cleanup.h"
#include "log.h"
#include "mountapi.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#define CAP_SYS_PTRACE_BIT 19

bool sr_sealed_needed(const struct sr_config *c)
{
  if (c->linux_.namespaces[SR_NS_USER].present)
    return false;
  const struct sr_process *p = c->process;
  if (p == NULL || p->capabilities == NULL)
    return false;
  uint64_t any = 0;
  for (int s = 0; s < SR_CAP_SET_COUNT; s++)
    any |= p->capabilities->sets[s];
  return (any >> CAP_SYS_PTRACE_BIT) & 1;
}

bool sr_sealed_exe_is_sealed(void)
{
  struct statvfs s;
  return statvfs("/proc/self/exe", &s) == 0 && (s.f_flag & ST_RDONLY);
}

int sr_sealed_reexec(char **argv, sr_error_t *err)
{
  _cleanup_close_ int fd =
      sr_mountapi_open_tree(AT_FDCWD, "/proc/self/exe", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
  if (fd < 0)
    return sr_error_sys(err, "seal the runtime binary: open_tree /proc/self/exe");
  struct sr_mount_attr attr = {.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV};
  if (sr_mountapi_mount_setattr(fd, "", AT_EMPTY_PATH, &attr) < 0)
    return sr_error_sys(err, "seal the runtime binary: make it read-only");
  extern char **environ;
  syscall(SYS_execveat, fd, "", argv, environ, AT_EMPTY_PATH);
  return sr_error_sys(err, "seal the runtime binary: execveat");
}

int sr_sealed_seal_if_needed(const struct sr_config *c, char **argv, sr_error_t *err)
{
  if (!sr_sealed_needed(c) || sr_sealed_exe_is_sealed())
    return 0;
  sr_debug("no user namespace and CAP_SYS_PTRACE: re-executing from a read-only binary");
  return sr_sealed_reexec(argv, err);
}
