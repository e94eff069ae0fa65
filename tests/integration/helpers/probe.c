/* The escape probe: run inside a container (as the container's root, as an attacker would be),
 * it tries the ways out that a hardened runtime must close and prints ONE JSON object with what
 * each attempt got.  It judges nothing: the tests do (tests/integration/test_escape.py).
 *
 *   probe CHECK[:ARG]... 
 *
 * Checks (each a key of the output object):
 *   fds              the descriptors the process inherited (run it first: nothing else open)
 *   rootfs           writes to the root filesystem, and to /tmp
 *   net              the network interfaces (if_nameindex and /proc/net/dev)
 *   tcp:IP:PORT      connect to a TCP listener (of the host); several allowed
 *   unix:NAME        connect to an abstract unix socket "@NAME" (of the host)
 *   status           /proc/self/status: Seccomp, NoNewPrivs, Cap*, Uid, Gid
 *   syscalls         mount, unshare, clone(CLONE_NEW*), keyctl, add_key, bpf, perf_event_open,
 *                    init_module, finit_module, reboot, clone3, open_by_handle_at, mknod, raw and
 *                    packet sockets, settimeofday, pivot_root, ... (arguments that would fail
 *                    with EFAULT/EINVAL if the kernel ever got to them: EPERM means denied)
 *   procfs           /proc/kcore (open, read), open for writing /proc/sysrq-trigger and other
 *                    kernel knobs (never writes anything), the masked paths
 *   devices          the nodes under /dev (type, major:minor)
 *   bomb:SECONDS     a fork bomb for at most SECONDS: how many children it got, what stopped it
 *   exe              open /proc/1/exe and /proc/self/exe for writing (and through O_PATH)
 *   read:PATH        try to read PATH (a host file) through every path the probe can think of;
 *                    several allowed ("shadow" is read:/etc/shadow)
 *   ptrace           ptrace and process_vm_readv a sibling
 *   setns            setns into its own namespaces, and nsenter-like paths
 *   ids              uid/gid, uid_map, gid_map
 *   hostwrite:DIR    try to create, write, chmod and chown in DIR (a bind of a host directory
 *                    owned by host root)
 *   sysctl:KEY       read /proc/sys/KEY (dots for slashes)
 *   cgroupwrite      open the cgroup files of its own cgroup for writing (pids.max, ...)
 *   grab:SECONDS     CVE-2019-5736: for SECONDS, grab an O_PATH handle on /proc/<pid>/exe of
 *                    every process that is not a busybox or the probe (the runtime during
 *                    exec), then reopen each for writing
 *   openw:PATH       open PATH for writing (nothing is written): "ok" or the errno
 *   readlen:PATH     read PATH: the number of bytes, or the errno
 *   ls:DIR           the names in DIR
 *   sleep:SECONDS    sleep (for the host to look at the process)
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/reboot.h>
#include <net/if.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef SYS_clone3
#define SYS_clone3 435
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif
#ifndef SYS_io_uring_setup
#define SYS_io_uring_setup 425
#endif
#ifndef SYS_open_tree
#define SYS_open_tree 428
#endif
#ifndef SYS_fsopen
#define SYS_fsopen 430
#endif

/* ---- JSON output ----------------------------------------------------------------------- */

static char out[1 << 20];
static size_t outn;
static bool first[64];
static int depth;

static void emit(const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(out + outn, sizeof(out) - outn, fmt, ap);
  va_end(ap);
  if (n > 0)
    outn = outn + (size_t)n < sizeof(out) ? outn + (size_t)n : sizeof(out) - 1;
}

static void emit_str(const char *s, size_t len)
{
  emit("\"");
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '"' || c == '\\')
      emit("\\%c", c);
    else if (c < 0x20 || c >= 0x7f)
      emit("\\u%04x", c);
    else
      emit("%c", c);
  }
  emit("\"");
}

static void key(const char *k)
{
  if (!first[depth])
    emit(",");
  first[depth] = false;
  if (k) {
    emit_str(k, strlen(k));
    emit(":");
  }
}

static void obj_open(const char *k)
{
  key(k);
  emit("{");
  first[++depth] = true;
}

static void obj_close(void)
{
  depth--;
  emit("}");
}

static void arr_open(const char *k)
{
  key(k);
  emit("[");
  first[++depth] = true;
}

static void arr_close(void)
{
  depth--;
  emit("]");
}

static void kstr(const char *k, const char *v)
{
  key(k);
  emit_str(v, strlen(v));
}

static void kint(const char *k, long long v)
{
  key(k);
  emit("%lld", v);
}

static const char *errname(int e)
{
  switch (e) {
  case 0: return "ok";
  case EPERM: return "EPERM";
  case ENOENT: return "ENOENT";
  case ESRCH: return "ESRCH";
  case EINTR: return "EINTR";
  case EIO: return "EIO";
  case ENXIO: return "ENXIO";
  case E2BIG: return "E2BIG";
  case EBADF: return "EBADF";
  case ECHILD: return "ECHILD";
  case EAGAIN: return "EAGAIN";
  case ENOMEM: return "ENOMEM";
  case EACCES: return "EACCES";
  case EFAULT: return "EFAULT";
  case EBUSY: return "EBUSY";
  case EEXIST: return "EEXIST";
  case EXDEV: return "EXDEV";
  case ENODEV: return "ENODEV";
  case ENOTDIR: return "ENOTDIR";
  case EISDIR: return "EISDIR";
  case EINVAL: return "EINVAL";
  case ENFILE: return "ENFILE";
  case EMFILE: return "EMFILE";
  case ETXTBSY: return "ETXTBSY";
  case ENOSPC: return "ENOSPC";
  case EROFS: return "EROFS";
  case ENOSYS: return "ENOSYS";
  case ELOOP: return "ELOOP";
  case ENAMETOOLONG: return "ENAMETOOLONG";
  case EAFNOSUPPORT: return "EAFNOSUPPORT";
  case EPROTONOSUPPORT: return "EPROTONOSUPPORT";
  case ENETUNREACH: return "ENETUNREACH";
  case ECONNREFUSED: return "ECONNREFUSED";
  case ETIMEDOUT: return "ETIMEDOUT";
  case EHOSTUNREACH: return "EHOSTUNREACH";
  case EOPNOTSUPP: return "EOPNOTSUPP";
  case EADDRNOTAVAIL: return "EADDRNOTAVAIL";
  case ESTALE: return "ESTALE";
  default: {
    static char buf[16][32];
    static int i;
    char *b = buf[i++ % 16];
    snprintf(b, 32, "errno%d", e);
    return b;
  }
  }
}

/* The result of a call returning < 0 on failure: "ok" or the errno's name. */
static void kres(const char *k, long r)
{
  kstr(k, r < 0 ? errname(errno) : "ok");
}

/* ---- fds ------------------------------------------------------------------------------- */

static void check_fds(void)
{
  arr_open("fds");
  DIR *d = opendir("/proc/self/fd");
  if (d == NULL) {
    arr_close();
    return;
  }
  int self = dirfd(d);
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    if (de->d_name[0] == '.')
      continue;
    int fd = atoi(de->d_name);
    if (fd == self)
      continue;
    char path[64], target[512];
    snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    ssize_t n = readlink(path, target, sizeof(target) - 1);
    target[n > 0 ? n : 0] = '\0';
    obj_open(NULL);
    kint("fd", fd);
    kstr("target", target);
    obj_close();
  }
  closedir(d);
  arr_close();
}

/* ---- rootfs ---------------------------------------------------------------------------- */

static void check_rootfs(void)
{
  obj_open("rootfs");
  int fd = open("/probe-was-here", O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
  kres("create_in_root", fd);
  if (fd >= 0) {
    close(fd);
    unlink("/probe-was-here");
  }
  kres("mkdir_in_root", mkdir("/probe-dir", 0755));
  rmdir("/probe-dir");
  fd = open("/bin/busybox", O_WRONLY | O_CLOEXEC);
  kres("open_busybox_for_writing", fd);
  if (fd >= 0)
    close(fd);
  kres("chmod_etc_passwd", chmod("/etc/passwd", 0666));
  kres("rename_etc_passwd", rename("/etc/passwd", "/etc/passwd.probe"));
  fd = open("/tmp/probe-tmp", O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
  kres("create_in_tmp", fd);
  if (fd >= 0) {
    kres("write_in_tmp", write(fd, "x", 1));
    close(fd);
    unlink("/tmp/probe-tmp");
  }
  obj_close();
}

/* ---- net ------------------------------------------------------------------------------- */

static void check_net(void)
{
  obj_open("net");
  arr_open("interfaces");
  struct if_nameindex *ifs = if_nameindex();
  for (struct if_nameindex *i = ifs; i && i->if_index; i++)
    kstr(NULL, i->if_name);
  if (ifs)
    if_freenameindex(ifs);
  arr_close();
  arr_open("proc_net_dev");
  FILE *f = fopen("/proc/net/dev", "re");
  char line[512];
  for (int n = 0; f && fgets(line, sizeof(line), f); n++) {
    char *colon = strchr(line, ':');
    if (n < 2 || colon == NULL)
      continue;
    *colon = '\0';
    char *name = line;
    while (*name == ' ')
      name++;
    kstr(NULL, name);
  }
  if (f)
    fclose(f);
  arr_close();
  /* A raw socket (CAP_NET_RAW) and a packet socket. */
  int s = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_ICMP);
  kres("raw_socket", s);
  if (s >= 0)
    close(s);
  s = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
  kres("packet_socket", s);
  if (s >= 0)
    close(s);
  s = socket(40 /* AF_VSOCK */, SOCK_STREAM | SOCK_CLOEXEC, 0);
  kres("vsock_socket", s);
  if (s >= 0)
    close(s);
  obj_close();
}

static void check_tcp(const char *arg)
{
  char ip[64];
  snprintf(ip, sizeof(ip), "%s", arg);
  char *colon = strrchr(ip, ':');
  if (colon == NULL)
    return;
  *colon = '\0';
  char k[128];
  snprintf(k, sizeof(k), "tcp:%s", arg);
  int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0) {
    kres(k, -1);
    return;
  }
  struct timeval tv = {2, 0};
  setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(colon + 1))};
  inet_pton(AF_INET, ip, &sa.sin_addr);
  int r = connect(s, (struct sockaddr *)&sa, sizeof(sa));
  if (r == 0)
    (void)!write(s, "probe\n", 6);
  kres(k, r);
  close(s);
}

static void check_unix(const char *name)
{
  char k[160];
  snprintf(k, sizeof(k), "unix:%s", name);
  int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0) {
    kres(k, -1);
    return;
  }
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  size_t n = strlen(name);
  if (n > sizeof(sa.sun_path) - 1)
    n = sizeof(sa.sun_path) - 1;
  memcpy(sa.sun_path + 1, name, n); /* abstract: a leading NUL */
  int r = connect(s, (struct sockaddr *)&sa, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n));
  if (r == 0)
    (void)!write(s, "probe\n", 6);
  kres(k, r);
  close(s);
}

/* ---- status ---------------------------------------------------------------------------- */

static void check_status(void)
{
  obj_open("status");
  FILE *f = fopen("/proc/self/status", "re");
  char line[512];
  static const char *const keys[] = {"Uid", "Gid", "Groups", "NoNewPrivs", "Seccomp",
                                     "Seccomp_filters", "CapInh", "CapPrm", "CapEff", "CapBnd",
                                     "CapAmb", NULL};
  while (f && fgets(line, sizeof(line), f)) {
    char *colon = strchr(line, ':');
    if (colon == NULL)
      continue;
    *colon = '\0';
    for (int i = 0; keys[i]; i++)
      if (strcmp(line, keys[i]) == 0) {
        char *v = colon + 1;
        while (*v == ' ' || *v == '\t')
          v++;
        v[strcspn(v, "\n")] = '\0';
        for (char *t = v; *t; t++)
          if (*t == '\t')
            *t = ' ';
        kstr(line, v);
      }
  }
  if (f)
    fclose(f);
  obj_close();
}

/* ---- syscalls -------------------------------------------------------------------------- */

/* clone(flags) in a child that exits at once: "ok" if the kernel made it. */
static long try_clone(unsigned long flags)
{
  long pid = syscall(SYS_clone, flags | SIGCHLD, NULL, NULL, NULL, NULL);
  if (pid == 0)
    _exit(0);
  if (pid > 0)
    waitpid((pid_t)pid, NULL, 0);
  return pid;
}

/* In a child, so that a success changes nothing of the probe's own process. */
static int in_child(int (*fn)(void))
{
  pid_t pid = fork();
  if (pid == 0)
    _exit(fn() < 0 ? errno & 0xff : 0);
  int st;
  if (pid < 0 || waitpid(pid, &st, 0) < 0)
    return errno;
  if (WIFSIGNALED(st))
    return 1000 + WTERMSIG(st);
  return WEXITSTATUS(st);
}

static int do_unshare_user(void) { return unshare(CLONE_NEWUSER); }
static int do_unshare_mnt(void) { return unshare(CLONE_NEWNS); }
static int do_unshare_net(void) { return unshare(CLONE_NEWNET); }
static int do_unshare_fs_files(void) { return unshare(CLONE_FS | CLONE_FILES); }

static void kchild(const char *k, int (*fn)(void))
{
  int e = in_child(fn);
  if (e >= 1000) {
    char b[32];
    snprintf(b, sizeof(b), "signal%d", e - 1000);
    kstr(k, b);
  } else
    kstr(k, errname(e));
}

static void check_syscalls(void)
{
  obj_open("syscalls");
  mkdir("/tmp/probe-mnt", 0755);
  kres("mount_tmpfs", mount("tmpfs", "/tmp/probe-mnt", "tmpfs", 0, NULL));
  umount2("/tmp/probe-mnt", MNT_DETACH);
  kres("mount_proc", mount("proc", "/tmp/probe-mnt", "proc", 0, NULL));
  umount2("/tmp/probe-mnt", MNT_DETACH);
  kres("remount_root_rw", mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND, NULL));
  kres("umount_proc_kcore", umount2("/proc/timer_list", MNT_DETACH));
  kres("bind_mount", mount("/", "/tmp/probe-mnt", NULL, MS_BIND, NULL));
  umount2("/tmp/probe-mnt", MNT_DETACH);
  kres("open_tree", syscall(SYS_open_tree, AT_FDCWD, "/", 1 /* OPEN_TREE_CLONE */));
  kres("fsopen", syscall(SYS_fsopen, "tmpfs", 0));
  rmdir("/tmp/probe-mnt");
  kchild("unshare_user", do_unshare_user);
  kchild("unshare_mount", do_unshare_mnt);
  kchild("unshare_net", do_unshare_net);
  kchild("unshare_fs_files", do_unshare_fs_files);
  kres("clone_newuser", try_clone(CLONE_NEWUSER));
  kres("clone_newns", try_clone(CLONE_NEWNS));
  kres("clone_plain", try_clone(0));
  /* clone3 with a bad pointer: EFAULT if the kernel looked at it. */
  kres("clone3", syscall(SYS_clone3, (void *)1, 88));
  kres("keyctl", syscall(SYS_keyctl, 0 /* KEYCTL_GET_KEYRING_ID */, -3 /* session */, 0));
  kres("add_key", syscall(SYS_add_key, "user", "probe", "x", 1, -3));
  kres("request_key", syscall(SYS_request_key, "user", "probe", NULL, -3));
  kres("bpf", syscall(SYS_bpf, 0 /* BPF_MAP_CREATE */, (void *)1, 72));
  kres("perf_event_open", syscall(SYS_perf_event_open, (void *)1, 0, -1, -1, 0));
  kres("init_module", syscall(SYS_init_module, (void *)1, 16, ""));
  kres("finit_module", syscall(SYS_finit_module, -1, "", 0));
  kres("delete_module", syscall(SYS_delete_module, "probe_no_such_module", 0));
  /* Invalid flags: EINVAL if the kernel looked (0 segments with valid flags would unload the
   * host's crash kernel). */
  kres("kexec_load", syscall(SYS_kexec_load, 0, 0, NULL, 0xdead0000UL));
  kres("reboot", syscall(SYS_reboot, LINUX_REBOOT_MAGIC1, LINUX_REBOOT_MAGIC2,
                         LINUX_REBOOT_CMD_CAD_OFF, NULL));
  kres("swapoff", syscall(SYS_swapoff, "/probe-no-such-swap"));
  kres("open_by_handle_at", syscall(SYS_open_by_handle_at, AT_FDCWD, (void *)1, O_RDONLY));
  kres("name_to_handle_at",
       syscall(SYS_name_to_handle_at, AT_FDCWD, "/", (void *)1, (void *)1, 0));
  kres("userfaultfd", syscall(SYS_userfaultfd, O_CLOEXEC));
  kres("io_uring_setup", syscall(SYS_io_uring_setup, 1, (void *)1));
  kres("pivot_root", syscall(SYS_pivot_root, "/tmp", "/tmp"));
  kres("syslog", syscall(SYS_syslog, 10 /* SYSLOG_ACTION_SIZE_BUFFER */, NULL, 0));
  kres("iopl", syscall(SYS_iopl, 3));
  kres("ioperm", syscall(SYS_ioperm, 0x80, 1, 1));
  kres("settimeofday", syscall(SYS_settimeofday, (void *)1, NULL));
  kres("clock_settime", syscall(SYS_clock_settime, CLOCK_REALTIME, (void *)1));
  kres("sethostname", syscall(SYS_sethostname, (void *)1, 5)); /* EFAULT if it got through */
  kres("acct", syscall(SYS_acct, (void *)1));
  kres("quotactl", syscall(SYS_quotactl, 0, "/", 0, NULL));
  kres("pidfd_getfd", syscall(SYS_pidfd_getfd, -1, 0, 0));
  kres("mknod_block", mknod("/tmp/probe-sda", S_IFBLK | 0600, makedev(8, 0)));
  unlink("/tmp/probe-sda");
  kres("mknod_char_mem", mknod("/tmp/probe-mem", S_IFCHR | 0600, makedev(1, 1)));
  unlink("/tmp/probe-mem");
  kres("setuid_0", setuid(0)); /* already 0: fine */
  int fd = open("/proc/self/attr/current", O_WRONLY | O_CLOEXEC);
  kres("open_attr_current", fd);
  if (fd >= 0)
    close(fd);
  obj_close();
}

/* ---- procfs and sysfs ------------------------------------------------------------------ */

static void try_write_open(const char *path)
{
  /* Opens only: nothing is ever written. */
  int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  kres(path, fd);
  if (fd >= 0)
    close(fd);
}

static void try_read(const char *k, const char *path)
{
  obj_open(k);
  struct stat st;
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  kres("open", fd);
  if (fd >= 0) {
    char buf[4096];
    ssize_t n = read(fd, buf, sizeof(buf));
    kres("read", n);
    kint("bytes", n > 0 ? n : 0);
    if (fstat(fd, &st) == 0) {
      kstr("type", S_ISCHR(st.st_mode) ? "chr" : S_ISDIR(st.st_mode) ? "dir" : S_ISREG(st.st_mode) ? "reg" : "other");
    }
    close(fd);
  }
  obj_close();
}

static void check_procfs(void)
{
  obj_open("procfs");
  struct stat st;
  kres("kcore_exists", stat("/proc/kcore", &st));
  try_read("kcore", "/proc/kcore");
  try_read("keys", "/proc/keys");
  try_read("timer_list", "/proc/timer_list");
  try_read("sched_debug", "/proc/sched_debug");
  try_read("acpi", "/proc/acpi");
  try_read("sys_firmware", "/sys/firmware");
  kres("sysrq_trigger_exists", stat("/proc/sysrq-trigger", &st));
  obj_open("open_for_writing");
  static const char *const paths[] = {
      "/proc/sysrq-trigger", "/proc/sys/kernel/core_pattern", "/proc/sys/kernel/modprobe",
      "/proc/sys/vm/drop_caches", "/proc/sys/kernel/hostname", "/proc/sys/net/ipv4/ip_forward",
      "/sys/kernel/uevent_helper", "/sys/kernel/mm/transparent_hugepage/enabled",
      "/sys/power/state", "/dev/kmsg", "/dev/mem", "/sys/fs/cgroup/memory/release_agent",
      "/sys/fs/cgroup/pids/release_agent", "/sys/fs/cgroup/memory/notify_on_release",
      "/sys/fs/cgroup/unified/cgroup.subtree_control", NULL};
  for (int i = 0; paths[i]; i++)
    try_write_open(paths[i]);
  obj_close();
  obj_close();
}

static void check_cgroupwrite(void)
{
  obj_open("cgroupwrite");
  static const char *const paths[] = {"/sys/fs/cgroup/pids/pids.max",
                                      "/sys/fs/cgroup/memory/memory.limit_in_bytes",
                                      "/sys/fs/cgroup/devices/devices.allow",
                                      "/sys/fs/cgroup/unified/cgroup.procs",
                                      "/sys/fs/cgroup/pids/cgroup.procs", NULL};
  for (int i = 0; paths[i]; i++)
    try_write_open(paths[i]);
  struct stat st;
  kres("mkdir_cgroup", mkdir("/sys/fs/cgroup/pids/probe", 0755));
  if (stat("/sys/fs/cgroup/pids/probe", &st) == 0)
    rmdir("/sys/fs/cgroup/pids/probe");
  obj_close();
}

static void check_devices(void)
{
  arr_open("devices");
  DIR *d = opendir("/dev");
  struct dirent *de;
  while (d && (de = readdir(d)) != NULL) {
    char path[300];
    struct stat st;
    snprintf(path, sizeof(path), "/dev/%s", de->d_name);
    if (lstat(path, &st) < 0 || !(S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)))
      continue;
    obj_open(NULL);
    kstr("path", path);
    kstr("type", S_ISCHR(st.st_mode) ? "c" : "b");
    kint("major", major(st.st_rdev));
    kint("minor", minor(st.st_rdev));
    obj_close();
  }
  if (d)
    closedir(d);
  arr_close();
}

/* ---- the fork bomb --------------------------------------------------------------------- */

static void check_bomb(const char *arg)
{
  double seconds = arg ? atof(arg) : 3;
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  long children = 0, cap = 1024;
  pid_t *pids = malloc((size_t)cap * sizeof(*pids));
  int stop = 0;
  double elapsed = 0;
  for (;;) {
    clock_gettime(CLOCK_MONOTONIC, &t);
    elapsed = (t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9;
    if (elapsed > seconds) {
      stop = ETIMEDOUT;
      break;
    }
    pid_t pid = fork();
    if (pid == 0) {
      for (;;)
        pause();
    }
    if (pid < 0) {
      stop = errno;
      break;
    }
    if (children == cap) {
      pid_t *np = realloc(pids, (size_t)(cap *= 2) * sizeof(*pids));
      if (np == NULL) {
        kill(pid, SIGKILL);
        stop = ENOMEM;
        break;
      }
      pids = np;
    }
    pids[children++] = pid;
  }
  for (long i = 0; i < children; i++)
    kill(pids[i], SIGKILL);
  for (long i = 0; i < children; i++)
    while (waitpid(pids[i], NULL, 0) < 0 && errno == EINTR)
      ;
  free(pids);
  obj_open("bomb");
  kint("children", children);
  kstr("stopped_by", errname(stop));
  kint("elapsed_ms", (long long)(elapsed * 1000));
  obj_close();
}

/* ---- exe ------------------------------------------------------------------------------- */

static void check_exe(void)
{
  obj_open("exe");
  static const char *const paths[] = {"/proc/1/exe", "/proc/self/exe", NULL};
  for (int i = 0; paths[i]; i++) {
    obj_open(paths[i]);
    char target[512];
    ssize_t n = readlink(paths[i], target, sizeof(target) - 1);
    target[n > 0 ? n : 0] = '\0';
    kstr("target", target);
    int fd = open(paths[i], O_WRONLY | O_CLOEXEC);
    kres("open_wronly", fd);
    if (fd >= 0)
      close(fd);
    fd = open(paths[i], O_RDWR | O_CLOEXEC);
    kres("open_rdwr", fd);
    if (fd >= 0)
      close(fd);
    fd = open(paths[i], O_PATH | O_CLOEXEC);
    kres("open_path", fd);
    if (fd >= 0) {
      char via[64];
      snprintf(via, sizeof(via), "/proc/self/fd/%d", fd);
      int w = open(via, O_WRONLY | O_CLOEXEC);
      kres("reopen_wronly", w);
      if (w >= 0)
        close(w);
      close(fd);
    }
    obj_close();
  }
  obj_close();
}

/* ---- reading a host file --------------------------------------------------------------- */

static void read_one(const char *path)
{
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    kstr(path, errname(errno));
    return;
  }
  char buf[48];
  ssize_t n = read(fd, buf, sizeof(buf));
  close(fd);
  if (n < 0) {
    kstr(path, errname(errno));
    return;
  }
  key(path);
  emit("\"read:");
  for (ssize_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)buf[i];
    if (c == '"' || c == '\\')
      emit("\\%c", c);
    else if (c < 0x20 || c >= 0x7f)
      emit("\\u%04x", c);
    else
      emit("%c", c);
  }
  emit("\"");
}

static const char *escape_target;

/* The classic chroot escape: chroot into a subdirectory, climb with "..", chroot there. */
static int do_chroot_escape(void)
{
  mkdir("/tmp/probe-jail", 0755);
  if (chroot("/tmp/probe-jail") < 0)
    return -1;
  for (int i = 0; i < 64; i++)
    if (chdir("..") < 0)
      break;
  if (chroot(".") < 0)
    return -1;
  int fd = open(escape_target, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  close(fd);
  return 0;
}

static void check_read(const char *target)
{
  char k[600];
  snprintf(k, sizeof(k), "read:%s", target);
  obj_open(k);
  const char *rel = target[0] == '/' ? target + 1 : target;
  char path[1024];
  read_one(target);
  static const char *const prefixes[] = {
      "/proc/1/root/", "/proc/self/root/", "/proc/thread-self/root/", "/proc/1/cwd/",
      "/proc/self/cwd/../../../../../../", "/../../../../", "/dev/../../../",
      "/sys/fs/cgroup/../../../../", "/proc/1/root/../../../../", "/tmp/../../../", NULL};
  for (int i = 0; prefixes[i]; i++) {
    snprintf(path, sizeof(path), "%s%s", prefixes[i], rel);
    read_one(path);
  }
  /* Every process's root, and every descriptor (a leaked directory would be a host path). */
  DIR *d = opendir("/proc");
  struct dirent *de;
  while (d && (de = readdir(d)) != NULL) {
    if (de->d_name[0] < '0' || de->d_name[0] > '9')
      continue;
    snprintf(path, sizeof(path), "/proc/%s/root/%s", de->d_name, rel);
    read_one(path);
    char fddir[300];
    snprintf(fddir, sizeof(fddir), "/proc/%s/fd", de->d_name);
    DIR *fdd = opendir(fddir);
    struct dirent *fe;
    while (fdd && (fe = readdir(fdd)) != NULL) {
      if (fe->d_name[0] == '.')
        continue;
      for (int up = 0; up <= 6; up += 6) {
        int o = snprintf(path, sizeof(path), "%s/%s/", fddir, fe->d_name);
        for (int u = 0; u < up && o < (int)sizeof(path) - 4; u++)
          o += snprintf(path + o, sizeof(path) - (size_t)o, "../");
        snprintf(path + o, sizeof(path) - (size_t)o, "%s", rel);
        read_one(path);
      }
    }
    if (fdd)
      closedir(fdd);
  }
  if (d)
    closedir(d);
  escape_target = rel;
  int e = in_child(do_chroot_escape);
  kstr("chroot-escape", e >= 1000 ? "signal" : errname(e));
  obj_close();
}

/* ---- ptrace, setns --------------------------------------------------------------------- */

static int do_traceme(void) { return (int)ptrace(PTRACE_TRACEME, 0, NULL, NULL); }

static void check_ptrace(void)
{
  obj_open("ptrace");
  pid_t child = fork();
  if (child == 0) {
    for (;;)
      pause();
  }
  usleep(20000);
  kres("attach_sibling", ptrace(PTRACE_ATTACH, child, NULL, NULL));
  kres("seize_sibling", ptrace(PTRACE_SEIZE, child, NULL, NULL));
  char buf[8];
  struct iovec local = {buf, sizeof(buf)}, remote = {(void *)&check_ptrace, sizeof(buf)};
  kres("process_vm_readv", syscall(SYS_process_vm_readv, child, &local, 1, &remote, 1, 0));
  kres("kcmp", syscall(SYS_kcmp, getpid(), child, 0, 0, 0));
  char mem[64];
  snprintf(mem, sizeof(mem), "/proc/%d/mem", child);
  int fd = open(mem, O_RDWR | O_CLOEXEC);
  kres("open_sibling_mem", fd);
  if (fd >= 0)
    close(fd);
  kchild("traceme", do_traceme);
  kill(child, SIGKILL);
  waitpid(child, NULL, 0);
  obj_close();
}

static void check_setns(void)
{
  obj_open("setns");
  static const char *const types[] = {"net", "mnt", "pid", "user", "uts", "ipc", "cgroup", NULL};
  for (int i = 0; types[i]; i++) {
    char path[64];
    snprintf(path, sizeof(path), "/proc/1/ns/%s", types[i]);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      kres(types[i], -1);
      continue;
    }
    kres(types[i], setns(fd, 0));
    close(fd);
  }
  obj_close();
}

/* ---- ids ------------------------------------------------------------------------------- */

static void kfile(const char *k, const char *path)
{
  char buf[1024];
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
  if (fd >= 0)
    close(fd);
  if (n < 0) {
    kstr(k, errname(errno));
    return;
  }
  key(k);
  emit_str(buf, (size_t)n);
}

static void check_ids(void)
{
  obj_open("ids");
  kint("uid", getuid());
  kint("euid", geteuid());
  kint("gid", getgid());
  kint("pid", getpid());
  kfile("uid_map", "/proc/self/uid_map");
  kfile("gid_map", "/proc/self/gid_map");
  kfile("setgroups", "/proc/self/setgroups");
  obj_close();
}

/* ---- hostwrite ------------------------------------------------------------------------- */

static void check_hostwrite(const char *dir)
{
  char k[600], path[600];
  snprintf(k, sizeof(k), "hostwrite:%s", dir);
  obj_open(k);
  snprintf(path, sizeof(path), "%s/probe-created", dir);
  int fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
  kres("create", fd);
  if (fd >= 0)
    close(fd);
  snprintf(path, sizeof(path), "%s/owned-by-root", dir);
  fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
  kres("open_root_file_for_writing", fd);
  if (fd >= 0) {
    (void)!write(fd, "probe\n", 6);
    close(fd);
  }
  kres("chmod_root_file", chmod(path, 0666));
  kres("chown_root_file", chown(path, 0, 0));
  kres("unlink_root_file", unlink(path));
  struct stat st;
  if (stat(path, &st) == 0) {
    kint("root_file_uid_seen", st.st_uid);
    kint("root_file_gid_seen", st.st_gid);
  }
  obj_close();
}

static void check_sysctl(const char *name)
{
  char path[256], k[256];
  snprintf(path, sizeof(path), "/proc/sys/%s", name);
  for (char *s = path + 10; *s; s++)
    if (*s == '.')
      *s = '/';
  snprintf(k, sizeof(k), "sysctl:%s", name);
  kfile(k, path);
}

/* ---- grab: CVE-2019-5736 --------------------------------------------------------------- */

static bool same_file(int fd, const char *path)
{
  struct stat a, b;
  return fstat(fd, &a) == 0 && stat(path, &b) == 0 && a.st_dev == b.st_dev &&
         a.st_ino == b.st_ino;
}

static void check_grab(const char *arg)
{
  double seconds = arg ? atof(arg) : 3;
  int fds[512];
  char names[512][128];
  int n = 0;
  long seen = 0, readlink_denied = 0, readlink_gone = 0, open_failed = 0;
  int seen_pids[4096];
  int n_seen = 0;
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  do {
    DIR *d = opendir("/proc");
    struct dirent *de;
    while (d && (de = readdir(d)) != NULL && n < 512) {
      int pid = atoi(de->d_name);
      if (pid <= 0 || pid == getpid() || pid == 1)
        continue;
      bool known = false;
      for (int i = 0; i < n_seen && !known; i++)
        known = seen_pids[i] == pid;
      if (!known && n_seen < 4096) {
        seen_pids[n_seen++] = pid;
        seen++;
      }
      char path[64], target[128];
      snprintf(path, sizeof(path), "/proc/%d/exe", pid);
      ssize_t l = readlink(path, target, sizeof(target) - 1);
      if (l <= 0 && !known) {
        /* EACCES: a process this one may not look into (the runtime, non-dumpable, while it
         * is in the container); ENOENT: gone.  Still try: the real exploit opens the link. */
        if (errno == EACCES || errno == EPERM)
          readlink_denied++;
        else
          readlink_gone++;
      }
      target[l > 0 ? l : 0] = '\0';
      int fd = open(path, O_PATH | O_CLOEXEC);
      if (fd < 0) {
        open_failed += !known;
        continue;
      }
      if (same_file(fd, "/bin/busybox") || same_file(fd, "/proc/self/exe")) {
        close(fd);
        continue;
      }
      fds[n] = fd;
      snprintf(names[n], sizeof(names[n]), "%s", target);
      n++;
    }
    if (d)
      closedir(d);
    clock_gettime(CLOCK_MONOTONIC, &t);
  } while ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < seconds);
  sleep(1); /* the runtime processes have exited: the binary is no longer busy */
  obj_open("grab");
  kint("pids_seen", seen);
  kint("readlink_denied", readlink_denied);
  kint("readlink_gone", readlink_gone);
  kint("open_failed", open_failed);
  kint("grabbed", n);
  arr_open("handles");
  for (int i = 0; i < n; i++) {
    char path[64];
    snprintf(path, sizeof(path), "/proc/self/fd/%d", fds[i]);
    int w = open(path, O_WRONLY | O_CLOEXEC);
    obj_open(NULL);
    kstr("target", names[i]);
    kres("reopen_wronly", w);
    obj_close();
    if (w >= 0)
      close(w);
    close(fds[i]);
  }
  arr_close();
  obj_close();
}

/* ---- generic ---------------------------------------------------------------------------- */

static void check_openw(const char *path)
{
  char k[600];
  snprintf(k, sizeof(k), "openw:%s", path);
  int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  kres(k, fd);
  if (fd >= 0)
    close(fd);
}

static void check_readlen(const char *path)
{
  char k[600], buf[65536];
  snprintf(k, sizeof(k), "readlen:%s", path);
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) {
    kstr(k, errname(errno));
    return;
  }
  ssize_t n = read(fd, buf, sizeof(buf));
  close(fd);
  if (n < 0)
    kstr(k, errname(errno));
  else
    kint(k, n);
}

static void check_ls(const char *dir)
{
  char k[600];
  snprintf(k, sizeof(k), "ls:%s", dir);
  DIR *d = opendir(dir);
  if (d == NULL) {
    kstr(k, errname(errno));
    return;
  }
  arr_open(k);
  struct dirent *de;
  while ((de = readdir(d)) != NULL)
    if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
      kstr(NULL, de->d_name);
  closedir(d);
  arr_close();
}

/* ---- main ------------------------------------------------------------------------------ */

int main(int argc, char **argv)
{
  first[0] = true;
  obj_open(NULL);
  for (int i = 1; i < argc; i++) {
    char *name = argv[i], *arg = strchr(argv[i], ':');
    if (arg)
      *arg++ = '\0';
    if (strcmp(name, "fds") == 0)
      check_fds();
    else if (strcmp(name, "rootfs") == 0)
      check_rootfs();
    else if (strcmp(name, "net") == 0)
      check_net();
    else if (strcmp(name, "tcp") == 0 && arg)
      check_tcp(arg);
    else if (strcmp(name, "unix") == 0 && arg)
      check_unix(arg);
    else if (strcmp(name, "status") == 0)
      check_status();
    else if (strcmp(name, "syscalls") == 0)
      check_syscalls();
    else if (strcmp(name, "procfs") == 0)
      check_procfs();
    else if (strcmp(name, "cgroupwrite") == 0)
      check_cgroupwrite();
    else if (strcmp(name, "devices") == 0)
      check_devices();
    else if (strcmp(name, "bomb") == 0)
      check_bomb(arg);
    else if (strcmp(name, "exe") == 0)
      check_exe();
    else if (strcmp(name, "shadow") == 0)
      check_read("/etc/shadow");
    else if (strcmp(name, "read") == 0 && arg)
      check_read(arg);
    else if (strcmp(name, "ptrace") == 0)
      check_ptrace();
    else if (strcmp(name, "setns") == 0)
      check_setns();
    else if (strcmp(name, "ids") == 0)
      check_ids();
    else if (strcmp(name, "hostwrite") == 0 && arg)
      check_hostwrite(arg);
    else if (strcmp(name, "sysctl") == 0 && arg)
      check_sysctl(arg);
    else if (strcmp(name, "grab") == 0)
      check_grab(arg);
    else if (strcmp(name, "openw") == 0 && arg)
      check_openw(arg);
    else if (strcmp(name, "readlen") == 0 && arg)
      check_readlen(arg);
    else if (strcmp(name, "ls") == 0 && arg)
      check_ls(arg);
    else if (strcmp(name, "sleep") == 0) {
      fflush(stdout);
      sleep(arg ? (unsigned)atoi(arg) : 30);
    } else {
      fprintf(stderr, "probe: unknown check %s\n", name);
      return 2;
    }
  }
  obj_close();
  emit("\n");
  (void)!write(1, out, outn);
  return 0;
}
