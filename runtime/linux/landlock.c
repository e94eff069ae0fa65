/* Landlock through the raw system calls (glibc 2.36 has no wrappers, Debian 12 no library):
 * see landlock.h for what it confines and why. */
#include "build.h"

#include "landlock.h"

#include "cleanup.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The build's headers may predate the kernel: the rights of ABI 3 and later, by value. */
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14) /* ABI 3 */
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15) /* ABI 5 */
#endif
#ifndef LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
#define LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0) /* ABI 6 */
#endif
#ifndef LANDLOCK_SCOPE_SIGNAL
#define LANDLOCK_SCOPE_SIGNAL (1ULL << 1) /* ABI 6 */
#endif
#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#define __NR_landlock_add_rule 445
#define __NR_landlock_restrict_self 446
#endif

/* struct landlock_ruleset_attr as of ABI 6; the kernel is given the prefix its ABI knows. */
struct ruleset_attr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net; /* ABI 4 */
  uint64_t scoped;             /* ABI 6 */
};

#define FS_ABI1                                                                                    \
  (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_READ_FILE |     \
   LANDLOCK_ACCESS_FS_READ_DIR | LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE |  \
   LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |      \
   LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK |   \
   LANDLOCK_ACCESS_FS_MAKE_SYM)

/* Every filesystem right the ABI has: a right left out of the handled set is simply allowed
 * everywhere, descriptors leaked in included.  ABI 4, 6 and 7 added none (the policy's decision
 * says so for a kernel newer than 7: policy_apply_landlock.c). */
static uint64_t fs_rights(int abi)
{
  uint64_t r = FS_ABI1;
  if (abi >= 2)
    r |= LANDLOCK_ACCESS_FS_REFER;
  if (abi >= 3)
    r |= LANDLOCK_ACCESS_FS_TRUNCATE;
  if (abi >= 5)
    r |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
  return r;
}

int sr_landlock_abi(void)
{
  long v = syscall(__NR_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
  return v > 0 ? (int)v : 0;
}

static int add_beneath(int ruleset_fd, int fd, uint64_t access)
{
  struct landlock_path_beneath_attr rule = {.allowed_access = access, .parent_fd = fd};
  return (int)syscall(__NR_landlock_add_rule, ruleset_fd, LANDLOCK_RULE_PATH_BENEATH, &rule, 0);
}

int sr_landlock_prepare(const struct sr_landlock_plan *plan, int *ruleset_fd, sr_error_t *err)
{
  /* Network rights (ABI 4) are not handled: Landlock can only allow ports one by one, and the
   * container's network is its network namespace's business.  Signals are not scoped: a pid
   * namespace already keeps the host's processes out of reach, and a domain is per process
   * tree, so each `exec` gets its own and could no longer signal the container's processes.
   * Abstract unix sockets are scoped only where the container shares the host's network
   * namespace, whose abstract sockets (containerd-shim's, CVE-2020-15257) it could reach;
   * elsewhere scoping would only cut exec'd processes and pod members off from each other. */
  struct ruleset_attr attr = {.handled_access_fs = fs_rights(plan->abi)};
  size_t size = sizeof(attr.handled_access_fs);
  if (plan->abi >= 6) {
    size = sizeof(attr);
    if (plan->scope_abstract_unix)
      attr.scoped = LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET;
  }
  int fd = (int)syscall(__NR_landlock_create_ruleset, &attr, size, 0);
  if (fd < 0)
    return sr_error_sys(err, "landlock: create a ruleset (ABI %d)", plan->abi);
  _cleanup_close_ int ruleset = fd;
  _cleanup_close_ int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root < 0)
    return sr_error_sys(err, "landlock: open the container's /");
  if (add_beneath(ruleset, root, attr.handled_access_fs) < 0)
    return sr_error_sys(err, "landlock: allow the container's / (ABI %d)", plan->abi);
  *ruleset_fd = steal_fd(ruleset);
  return 0;
}

/* The rights to reopen an inherited file by name (/dev/stdout is /proc/self/fd/1) with the
 * access it was opened with; 0 for the rest (directories, pipes, sockets, O_PATH), which
 * need none or must not get any. */
static uint64_t inherited_rights(int fd, int abi)
{
  struct stat st;
  int fl = fcntl(fd, F_GETFL);
  if (fl < 0 || (fl & O_PATH) || fstat(fd, &st) < 0 ||
      !(S_ISREG(st.st_mode) || S_ISCHR(st.st_mode)))
    return 0;
  uint64_t r = 0;
  int mode = fl & O_ACCMODE;
  if (mode == O_RDONLY || mode == O_RDWR)
    r |= LANDLOCK_ACCESS_FS_READ_FILE;
  if (mode == O_WRONLY || mode == O_RDWR)
    r |= LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_TRUNCATE; /* `>` opens O_TRUNC */
  if (S_ISCHR(st.st_mode))
    r |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
  return r & fs_rights(abi);
}

int sr_landlock_restrict(const struct sr_landlock_plan *plan, int ruleset_fd, int preserve_fds,
                         bool nnp_ok, sr_error_t *err)
{
  _cleanup_close_ int ruleset = ruleset_fd;
  for (int fd = 0; fd < 3 + preserve_fds; fd++) {
    uint64_t r = inherited_rights(fd, plan->abi);
    if (r && add_beneath(ruleset, fd, r) < 0)
      return sr_error_sys(err, "landlock: allow the inherited descriptor %d", fd);
  }
  if (syscall(__NR_landlock_restrict_self, ruleset, 0) == 0)
    return 0;
  if (errno != EPERM || !nnp_ok)
    return sr_error_sys(err, "landlock: restrict the process");
  /* Without CAP_SYS_ADMIN in the user namespace the kernel wants no_new_privs, which the
   * process gets before its execve anyway. */
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
      syscall(__NR_landlock_restrict_self, ruleset, 0) < 0)
    return sr_error_sys(err, "landlock: restrict the process");
  return 0;
}

int sr_landlock_confine_helper(const char *const *readable, sr_error_t *err)
{
  int abi = sr_landlock_abi();
  if (abi == 0)
    return 0;
  struct ruleset_attr attr = {.handled_access_fs = fs_rights(abi)};
  size_t size = sizeof(attr.handled_access_fs);
  if (abi >= 6) {
    /* A helper signals and connects to nothing outside its own domain. */
    size = sizeof(attr);
    attr.scoped = LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL;
  }
  _cleanup_close_ int ruleset = (int)syscall(__NR_landlock_create_ruleset, &attr, size, 0);
  if (ruleset < 0)
    return sr_error_sys(err, "landlock: create a ruleset (ABI %d)", abi);
  uint64_t read = (LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR) & fs_rights(abi);
  for (size_t i = 0; readable && readable[i]; i++) {
    _cleanup_close_ int fd = open(readable[i], O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
      continue; /* a directory this host lacks (/lib64) needs no rule */
    if (add_beneath(ruleset, fd, read) < 0)
      return sr_error_sys(err, "landlock: allow reading beneath %s", readable[i]);
  }
  if (syscall(__NR_landlock_restrict_self, ruleset, 0) < 0)
    return sr_error_sys(err, "landlock: restrict the process");
  return 0;
}
