/* The floor: what the kernel needs for a container like the benchmark's, with no runtime.
 *
 *   floor [-u] ROOTFS
 *
 * clones a child into new mount, pid, ipc, uts and network namespaces (-u: and a user
 * namespace mapping 0 -> 100000, size 65536, like the "hardened" bundle), which bind-mounts
 * ROOTFS onto itself, mounts /proc, pivots into it and execs /bin/true; the parent waits for it
 * and exits with its status.  No cgroup, no /dev, no seccomp, no state on disk.
 *
 * /proc is mounted before pivot_root (as runc and crun do): in a user namespace the kernel
 * allows a new procfs only while a fully visible one is in the mount namespace, and the host's
 * goes away with the old root. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void die(const char *what)
{
  fprintf(stderr, "floor: %s: %s\n", what, strerror(errno));
  _exit(125);
}

static void write_file(const char *path, const char *text)
{
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
    die(path);
  close(fd);
}

static int child(const char *rootfs, int userns, int sync_fd)
{
  char proc[PATH_MAX];
  char c;

  if (userns) {
    /* Wait for the maps, then become root of the user namespace (host uid 100000). */
    if (read(sync_fd, &c, 1) != 1)
      die("wait for the id maps");
    if (setresgid(0, 0, 0) < 0 || setresuid(0, 0, 0) < 0)
      die("become root in the user namespace");
  }
  if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
    die("make / private");
  if (mount(rootfs, rootfs, NULL, MS_BIND | MS_REC, NULL) < 0)
    die("bind the rootfs onto itself");
  snprintf(proc, sizeof(proc), "%s/proc", rootfs);
  if (mount("proc", proc, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
    die("mount /proc");
  if (chdir(rootfs) < 0)
    die("chdir to the rootfs");
  if (syscall(SYS_pivot_root, ".", ".") < 0)
    die("pivot_root");
  if (umount2(".", MNT_DETACH) < 0)
    die("detach the old root");
  if (chdir("/") < 0)
    die("chdir /");
  execl("/bin/true", "true", (char *)NULL);
  die("exec /bin/true");
  return 125;
}

int main(int argc, char **argv)
{
  int userns = 0, status, sync[2] = {-1, -1};
  unsigned long flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWNET;
  const char *rootfs;
  pid_t pid;

  if (argc > 1 && strcmp(argv[1], "-u") == 0) {
    userns = 1;
    argv++;
    argc--;
  }
  if (argc != 2) {
    fprintf(stderr, "usage: floor [-u] ROOTFS\n");
    return 2;
  }
  rootfs = argv[1];
  if (userns) {
    flags |= CLONE_NEWUSER;
    if (pipe2(sync, O_CLOEXEC) < 0)
      die("pipe");
  }
  /* clone with no new stack behaves like fork. */
  pid = (pid_t)syscall(SYS_clone, flags | SIGCHLD, NULL, NULL, NULL, NULL);
  if (pid < 0)
    die("clone");
  if (pid == 0) {
    close(sync[1]);
    _exit(child(rootfs, userns, sync[0]));
  }
  if (userns) {
    char path[64];
    close(sync[0]);
    snprintf(path, sizeof(path), "/proc/%d/uid_map", (int)pid);
    write_file(path, "0 100000 65536\n");
    snprintf(path, sizeof(path), "/proc/%d/gid_map", (int)pid);
    write_file(path, "0 100000 65536\n");
    if (write(sync[1], "G", 1) != 1)
      die("signal the child");
    close(sync[1]);
  }
  if (waitpid(pid, &status, 0) < 0)
    die("waitpid");
  if (WIFEXITED(status))
    return WEXITSTATUS(status);
  fprintf(stderr, "floor: child killed by signal %d\n", WTERMSIG(status));
  return 128 + WTERMSIG(status);
}
