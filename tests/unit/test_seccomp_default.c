#include "build.h"

/* The default seccomp filter as a container process sees it, and the cache of compiled config
 * filters.  Each filter test forks a child that sets no_new_privs, installs the filter(s) and
 * checks from inside what its syscalls now do; a child exits 0 when every check in it held.
 * Every denied call is made with arguments that would fail harmlessly (or do nothing) if the
 * filter let it through: a broken filter must not reboot, remount or retime the test host. */

#include "fixtures.h"
#include "unit.h"

#include "cleanup.h"
#include "config.h"
#include "fd_pass.h"
#include "seccomp_cache.h"
#include "seccomp_default.h"
#include "seccomp_filter.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timex.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif

/* The test process's own filters, should it run under some already (in a container). */
static int base_filters;

static double now_us(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

typedef void (*child_body)(void *arg);

/* Forks a child that sets no_new_privs, loads the default filter and runs `body`. */
static pid_t spawn_filtered(child_body body, void *arg)
{
  pid_t pid = fork();
  if (pid < 0) {
    CHECK(pid >= 0);
    return -1;
  }
  if (pid == 0) {
    _cleanup_error_ sr_error_t err = NULL;
    int failures = unit_failures;
    alarm(20);
    /* A SIGSYS kill must not dump core (into the cwd or a core_pattern helper). */
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
      _exit(3);
    int r = sr_seccomp_default_install(&err);
    CHECK_OK(r, err);
    if (r < 0)
      _exit(4);
    body(arg);
    /* _exit: no atexit handlers or leak check in a filtered child. */
    _exit(unit_failures > failures ? 1 : 0);
  }
  return pid;
}

/* Forks a plain child (no filter loaded by the harness). */
static pid_t spawn_plain(child_body body, void *arg)
{
  pid_t pid = fork();
  if (pid < 0) {
    CHECK(pid >= 0);
    return -1;
  }
  if (pid == 0) {
    int failures = unit_failures;
    alarm(20);
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
      _exit(3);
    body(arg);
    _exit(unit_failures > failures ? 1 : 0);
  }
  return pid;
}

/* ---- the default filter ------------------------------------------------------------------- */

static void body_one_filter(void *arg)
{
  CHECK_INT_EQ(unit_status_field("Seccomp"), 2);
  CHECK_INT_EQ(unit_status_field("Seccomp_filters"), base_filters + 1);
}

static void the_default_filter_is_one_filter_in_filter_mode(void)
{
  CHECK_CHILD_OK(unit_reap(spawn_filtered(body_one_filter, NULL)));
}

static void body_ordinary(void *arg)
{
  char buf[256];
  struct utsname u;
  struct timespec ts;
  int sv[2];

  CHECK_INT_EQ(syscall(SYS_getpid), getpid());
  CHECK(getcwd(buf, sizeof(buf)) != NULL);
  CHECK_INT_EQ(uname(&u), 0);
  CHECK_INT_EQ(clock_gettime(CLOCK_REALTIME, &ts), 0);
  int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
  CHECK(fd >= 0);
  CHECK(read(fd, buf, sizeof(buf)) > 0);
  close(fd);
  int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  CHECK(s >= 0);
  if (s >= 0)
    close(s);
  s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  CHECK(s >= 0);
  if (s >= 0)
    close(s);
  CHECK_INT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  /* An ordinary ioctl reaches the driver: /dev/null is not a terminal. */
  fd = open("/dev/null", O_RDWR | O_CLOEXEC);
  CHECK(fd >= 0);
  struct termios t;
  CHECK(tcgetattr(fd, &t) < 0 && errno == ENOTTY);
  close(fd);
  /* chroot: allowed (the kernel checks CAP_SYS_CHROOT). */
  CHECK_INT_EQ(chroot("/"), 0);
  /* adjtimex without modes only reads. */
  struct timex tx = {.modes = 0};
  CHECK(adjtimex(&tx) >= 0);
}

static void ordinary_syscalls_work(void)
{
  CHECK_CHILD_OK(unit_reap(spawn_filtered(body_ordinary, NULL)));
}

struct denied {
  const char *what;
  long nr;
  long a[6];
};

static void body_denied(void *arg)
{
  static const char missing[] = "/nonexistent-seerun-test";
  /* Arguments that fail, or do nothing, when the call is not filtered. */
  const struct denied calls[] = {
      {"mount", SYS_mount, {(long)missing, (long)missing, (long)"tmpfs", 0, 0}},
      {"umount2", SYS_umount2, {(long)missing, 0}},
      {"pivot_root", SYS_pivot_root, {(long)missing, (long)missing}},
      {"unshare(CLONE_NEWUSER)", SYS_unshare, {CLONE_NEWUSER}},
      {"unshare(0)", SYS_unshare, {0}},
      {"setns", SYS_setns, {-1, 0}},
      {"keyctl", SYS_keyctl, {-1}},
      {"add_key", SYS_add_key, {0, 0, 0, 0, 0}},
      {"request_key", SYS_request_key, {0, 0, 0, 0}},
      {"bpf", SYS_bpf, {-1, 0, 0}},
      {"perf_event_open", SYS_perf_event_open, {0, 0, -1, -1, 0}},
      {"userfaultfd", SYS_userfaultfd, {~0L}},
      {"io_uring_setup", SYS_io_uring_setup, {0, 0}},
      {"io_uring_enter", SYS_io_uring_enter, {-1, 0, 0, 0, 0, 0}},
      {"io_uring_register", SYS_io_uring_register, {-1, 0, 0, 0}},
      {"init_module", SYS_init_module, {0, 0, 0}},
      {"finit_module", SYS_finit_module, {-1, 0, 0}},
      {"delete_module", SYS_delete_module, {(long)"seerun-none", 0}},
      {"reboot", SYS_reboot, {0, 0, 0, 0}}, /* bad magic: EINVAL if it got through */
      {"kexec_load", SYS_kexec_load, {0, 0, 0, 0xdead0000L}},
      {"kexec_file_load", SYS_kexec_file_load, {-1, -1, 0, 0, 0xdead0000L}},
      {"swapon", SYS_swapon, {(long)missing, 0}},
      {"swapoff", SYS_swapoff, {(long)missing}},
      {"acct", SYS_acct, {(long)missing}},
      {"settimeofday(NULL, NULL)", SYS_settimeofday, {0, 0}},
      {"clock_settime", SYS_clock_settime, {CLOCK_REALTIME, 0}},
      {"syslog(SIZE_BUFFER)", SYS_syslog, {10, 0, 0}},
      {"ptrace", SYS_ptrace, {-1, 0, 0, 0}},
      {"process_vm_readv", SYS_process_vm_readv, {0, 0, 0, 0, 0, 0}},
      {"process_vm_writev", SYS_process_vm_writev, {0, 0, 0, 0, 0, 0}},
      {"kcmp", SYS_kcmp, {0, 0, -1, 0, 0}},
      {"pidfd_getfd", SYS_pidfd_getfd, {-1, -1, 0}},
      {"name_to_handle_at", SYS_name_to_handle_at, {AT_FDCWD, (long)"/", 0, 0, 0}},
      {"open_by_handle_at", SYS_open_by_handle_at, {-1, 0, 0}},
      {"quotactl", SYS_quotactl, {0, 0, 0, 0}},
      {"lookup_dcookie", SYS_lookup_dcookie, {0, 0, 0}},
      {"iopl(0)", SYS_iopl, {0}},
      {"ioperm", SYS_ioperm, {0, 0, 0}},
      {"sethostname", SYS_sethostname, {0, -1}},
      {"setdomainname", SYS_setdomainname, {0, -1}},
      {"fanotify_init", SYS_fanotify_init, {~0L, 0}},
      {"move_pages", SYS_move_pages, {-1, 0, 0, 0, 0, 0}},
      {"migrate_pages", SYS_migrate_pages, {-1, 0, 0, 0}},
      {"uselib", SYS_uselib, {0}},
      {"open_tree", SYS_open_tree, {-1, (long)missing, 0}},
      {"move_mount", SYS_move_mount, {-1, 0, -1, 0, 0}},
      {"fsopen", SYS_fsopen, {0, 0}},
      {"fsmount", SYS_fsmount, {-1, 0, 0}},
      {"fspick", SYS_fspick, {-1, 0, 0}},
      {"fsconfig", SYS_fsconfig, {-1, 0, 0, 0, 0}},
      {"mount_setattr", SYS_mount_setattr, {-1, 0, 0, 0, 0}},
      {"open_tree_attr (467)", 467, {-1, (long)missing, 0, 0, 0}},
  };
  for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
    const struct denied *d = &calls[i];
    errno = 0;
    long r = syscall(d->nr, d->a[0], d->a[1], d->a[2], d->a[3], d->a[4], d->a[5]);
    if (r != -1 || errno != EPERM)
      fprintf(stderr, "  %s returned %ld, errno %d (%s)\n", d->what, r, errno, strerror(errno));
    CHECK(r == -1 && errno == EPERM);
  }
  /* vhangup would hang up our terminal if it got through: without one (a new session) it
   * does nothing. */
  CHECK(setsid() > 0);
  CHECK_INT_EQ(SYSCALL_ERRNO(SYS_vhangup), EPERM);
}

static void dangerous_syscalls_fail_with_eperm(void)
{
  CHECK_CHILD_OK(unit_reap(spawn_filtered(body_denied, NULL)));
}

static void body_args(void *arg)
{
  /* socket(AF_VSOCK): also with garbage in the high bits, which the kernel drops. */
  CHECK_INT_EQ(SYSCALL_ERRNO(SYS_socket, AF_VSOCK, SOCK_STREAM, 0), EPERM);
  CHECK_INT_EQ(SYSCALL_ERRNO(SYS_socket, 0x100000000L | AF_VSOCK, SOCK_STREAM, 0), EPERM);
  /* ioctl(TIOCSTI) on /dev/null: ENOTTY if it got through. */
  int fd = open("/dev/null", O_RDWR | O_CLOEXEC);
  char c = 'x';
  CHECK(fd >= 0);
  CHECK_INT_EQ(SYSCALL_ERRNO(SYS_ioctl, fd, TIOCSTI, &c), EPERM);
  CHECK_INT_EQ(SYSCALL_ERRNO(SYS_ioctl, fd, 0xffffffff00000000L | TIOCSTI, &c), EPERM);
  CHECK_INT_EQ(SYSCALL_ERRNO(SYS_ioctl, fd, TIOCLINUX, &c), EPERM);
  CHECK_INT_EQ(SYSCALL_ERRNO(SYS_ioctl, fd, TCGETS, &c), ENOTTY);
  close(fd);

  /* personality: the query, PER_LINUX32 and back; not ASLR off or executable data. */
  int cur = personality(0xffffffff);
  CHECK(cur >= 0);
  CHECK(personality(PER_LINUX32) >= 0);
  CHECK_INT_EQ(personality(0xffffffff), PER_LINUX32);
  CHECK(personality(PER_LINUX) >= 0);
  CHECK_INT_EQ(SYSCALL_ERRNO(SYS_personality, ADDR_NO_RANDOMIZE), EPERM);
  CHECK_INT_EQ(SYSCALL_ERRNO(SYS_personality, READ_IMPLIES_EXEC), EPERM);
  CHECK_INT_EQ(personality(0xffffffff), PER_LINUX);

  /* clone with a namespace flag: EPERM (a child that got through exits at once). */
  static const long ns_flags[] = {CLONE_NEWNS,  CLONE_NEWUTS, CLONE_NEWIPC,   CLONE_NEWUSER,
                                  CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWCGROUP};
  for (size_t i = 0; i < sizeof(ns_flags) / sizeof(ns_flags[0]); i++) {
    long r = syscall(SYS_clone, ns_flags[i] | SIGCHLD, 0, 0, 0, 0);
    if (r == 0)
      _exit(0);
    if (r > 0)
      unit_reap((pid_t)r);
    CHECK(r == -1 && errno == EPERM);
  }
}

static void argument_conditions_deny_only_the_dangerous_values(void)
{
  CHECK_CHILD_OK(unit_reap(spawn_filtered(body_args, NULL)));
}

static void body_enosys(void *arg)
{
  CHECK_INT_EQ(SYSCALL_ERRNO(SYS_clone3, NULL, 0), ENOSYS);
  CHECK_INT_EQ(SYSCALL_ERRNO(1000), ENOSYS);
  CHECK_INT_EQ(SYSCALL_ERRNO(470), ENOSYS); /* newer than the filter (listns) */
  CHECK_INT_EQ(SYSCALL_ERRNO(400), ENOSYS); /* a hole in the x86_64 table */
  CHECK_INT_EQ(SYSCALL_ERRNO(-1L), ENOSYS); /* "no syscall" */
  CHECK_INT_EQ(SYSCALL_ERRNO(0x3fffffffL), ENOSYS);
}

static void clone3_and_unknown_syscalls_fail_with_enosys(void)
{
  CHECK_CHILD_OK(unit_reap(spawn_filtered(body_enosys, NULL)));
}

static void *thread_main(void *arg)
{
  *(pid_t *)arg = (pid_t)syscall(SYS_gettid);
  return arg;
}

static void body_processes(void *arg)
{
  /* fork (glibc: clone without namespace flags) */
  pid_t pid = fork();
  if (pid == 0)
    _exit(7);
  CHECK(pid > 0);
  int st = unit_reap(pid);
  CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 7);

  /* threads (glibc tries clone3, gets ENOSYS, falls back to clone) */
  pthread_t th;
  pid_t tid = 0;
  void *ret = NULL;
  CHECK_INT_EQ(pthread_create(&th, NULL, thread_main, &tid), 0);
  CHECK_INT_EQ(pthread_join(th, &ret), 0);
  CHECK(tid > 0 && tid != getpid());

  /* posix_spawn (clone3 with CLONE_VFORK, then clone) and real programs: a shell running
   * coreutils, python with threads and a subprocess. */
  char *sh_argv[] = {"/bin/sh", "-c",
                     "set -e; ls / >/dev/null; cat /proc/self/status | grep -q Seccomp;"
                     " x=$(echo ok); [ \"$x\" = ok ]; exit 42",
                     NULL};
  char *env[] = {"PATH=/usr/bin:/bin", NULL};
  CHECK_INT_EQ(posix_spawn(&pid, sh_argv[0], NULL, NULL, sh_argv, env), 0);
  st = unit_reap(pid);
  CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 42);

  if (access("/usr/bin/python3", X_OK) == 0) {
    char *py_argv[] = {"/usr/bin/python3", "-c",
                       "import threading, subprocess, socket, os, tempfile\n"
                       "t = threading.Thread(target=lambda: None); t.start(); t.join()\n"
                       "assert subprocess.run(['/bin/true']).returncode == 0\n"
                       "s = socket.socket(); s.close()\n"
                       "with tempfile.TemporaryDirectory() as d: open(d + '/f', 'w').write('x')\n"
                       "raise SystemExit(43)\n",
                       NULL};
    CHECK_INT_EQ(posix_spawn(&pid, py_argv[0], NULL, NULL, py_argv, env), 0);
    st = unit_reap(pid);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 43);
  }
}

static void fork_threads_and_programs_still_work(void)
{
  CHECK_CHILD_OK(unit_reap(spawn_filtered(body_processes, NULL)));
}

/* int $0x80 from 64-bit code: the i386 ABI (AUDIT_ARCH_I386); returns -errno on failure. */
static long i386_syscall(long nr, long a0, long a1, long a2)
{
  long ret;
  __asm__ volatile("int $0x80"
                   : "=a"(ret)
                   : "a"(nr), "b"(a0), "c"(a1), "d"(a2)
                   : "memory", "r8", "r9", "r10", "r11");
  return ret;
}

#define I386_GETPID 20
#define I386_KEYCTL 288
#define I386_MOUNT 21
#define I386_SOCKET 359
#define I386_CLONE3 435

static void body_i386(void *arg)
{
  CHECK_INT_EQ(i386_syscall(I386_GETPID, 0, 0, 0), getpid());
  CHECK_INT_EQ(i386_syscall(I386_KEYCTL, -1, 0, 0), -EPERM);
  CHECK_INT_EQ(i386_syscall(I386_MOUNT, 0, 0, 0), -EPERM);
  CHECK_INT_EQ(i386_syscall(I386_SOCKET, AF_VSOCK, SOCK_STREAM, 0), -EPERM);
  CHECK_INT_EQ(i386_syscall(I386_CLONE3, 0, 0, 0), -ENOSYS);
  CHECK_INT_EQ(i386_syscall(1000, 0, 0, 0), -ENOSYS);
}

static void an_i386_syscall_is_filtered_by_the_same_list(void)
{
  /* Without IA32 emulation int $0x80 fails (ENOSYS, or SIGSEGV where the kernel installs no
   * gate for it, as under some hypervisors): nothing to check then. */
  pid_t pid = fork();
  if (pid == 0) {
    /* A quiet death: no core, no sanitizer report. */
    struct sigaction dfl = {.sa_handler = SIG_DFL};
    sigaction(SIGSEGV, &dfl, NULL);
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    _exit(i386_syscall(I386_GETPID, 0, 0, 0) == getpid() ? 0 : 1);
  }
  int st = unit_reap(pid);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
    fprintf(stderr, "  (skipped: no i386 syscalls on this kernel)\n");
    return;
  }
  CHECK_CHILD_OK(unit_reap(spawn_filtered(body_i386, NULL)));
}

static void body_x32(void *arg)
{
  syscall(0x40000000L | SYS_getpid);
  CHECK(!"the x32 syscall returned");
}

static void an_x32_syscall_kills_the_process(void)
{
  int st = unit_reap(spawn_filtered(body_x32, NULL));
  CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS);
}

struct measure_arg {
  int pipe_fd;
  bool trivial; /* a one-instruction filter: what any filter load costs on this kernel */
};

static void body_measure(void *p)
{
  struct measure_arg *a = p;
  _cleanup_error_ sr_error_t err = NULL;
  struct sock_filter allow[] = {BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
  struct sock_fprog trivial = {.len = 1, .filter = allow};
  double t0 = now_us();
  int r = a->trivial ? (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &trivial)
                     : sr_seccomp_default_install(&err);
  double us = now_us() - t0;
  CHECK_OK(r, err);
  CHECK(write(a->pipe_fd, &us, sizeof(us)) == (ssize_t)sizeof(us));
}

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Loads in fresh processes (as in a container's start): median and minimum, in us. */
static void measure(bool trivial, double *median, double *min)
{
  enum { RUNS = 15 };
  double us[RUNS] = {0};
  int p[2];
  if (pipe2(p, O_CLOEXEC) < 0) {
    CHECK(!"pipe");
    return;
  }
  for (int i = 0; i < RUNS; i++) {
    struct measure_arg a = {p[1], trivial};
    CHECK_CHILD_OK(unit_reap(spawn_plain(body_measure, &a)));
    CHECK(read(p[0], &us[i], sizeof(us[i])) == (ssize_t)sizeof(us[i]));
  }
  close(p[0]);
  close(p[1]);
  qsort(us, RUNS, sizeof(us[0]), cmp_double);
  *median = us[RUNS / 2];
  *min = us[0];
}

static void installing_the_default_filter_costs_no_more_than_any_filter_load(void)
{
  double med, min, tmed, tmin;
  measure(false, &med, &min);
  measure(true, &tmed, &tmin);
  fprintf(stderr,
          "  default filter (%u instructions): install median %.0f us (min %.0f); a "
          "one-instruction filter: median %.0f us (min %.0f)\n",
          sr_seccomp_default_prog_len, med, min, tmed, tmin);
  /* The kernel's cost of loading any filter varies a lot between hosts (JIT, hypervisor);
   * what the default adds to it must stay far below compiling one (tens of ms). */
  CHECK(med < tmed + 1000.0);
}

/* ---- stacking with a config filter -------------------------------------------------------- */

static const char state_json[] = "{\"ociVersion\": \"1.0.2\", \"fds\": [\"seccompFd\"], "
                                 "\"pid\": 1, \"state\": {\"id\": \"c1\"}}";

/* The listener a child sends over SOCK (with the bytes that come with it); -1 if none came. */
static int recv_listener(int sock)
{
  char buf[sizeof(state_json)];
  size_t got = 0;
  return sr_fd_pass_recv(sock, 0, buf, sizeof(buf), &got);
}

/* Receives the one notification LISTENER has (from PID, unless 0: of system call NR) and
 * answers it with VAL, or with ERROR (a negative errno). */
static void answer_one(int listener, pid_t pid, long nr, int64_t val, int32_t error)
{
  struct seccomp_notif *req = NULL;
  struct seccomp_notif_resp *resp = NULL;
  CHECK_INT_EQ(seccomp_notify_alloc(&req, &resp), 0);
  if (req && resp) {
    CHECK_INT_EQ(seccomp_notify_receive(listener, req), 0);
    if (pid)
      CHECK_INT_EQ(req->pid, pid);
    CHECK_INT_EQ(req->data.nr, nr);
    resp->id = req->id;
    resp->val = val;
    resp->error = error;
    resp->flags = 0;
    CHECK_INT_EQ(seccomp_notify_respond(listener, resp), 0);
  }
  seccomp_notify_free(req, resp);
}

struct stack_arg {
  const struct sr_seccomp *config;
  int sock;
  int order;    /* 0: default first, 1: config first */
  int cache_fd; /* >= 0: install the config through the cache */
};

static void body_stacked(void *p)
{
  struct stack_arg *a = p;
  _cleanup_error_ sr_error_t err = NULL;
  int notify = -1;

  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
    _exit(3);
  for (int step = 0; step < 2; step++) {
    bool dflt = (step == 0) == (a->order == 0);
    int r = dflt               ? sr_seccomp_default_install(&err)
            : a->cache_fd >= 0 ? sr_seccomp_cache_install(a->config, a->cache_fd, &notify, &err)
                               : sr_seccomp_install(a->config, &notify, &err);
    CHECK_OK(r, err);
    if (r < 0)
      return;
  }
  CHECK_INT_EQ(unit_status_field("Seccomp_filters"), base_filters + 2);
  CHECK(notify >= 0);
  CHECK_OK(sr_seccomp_send_notify_fd(a->sock, notify, state_json, &err), err);
  close(notify);
  /* keyctl is NOTIFY in the config but EPERM in the default: ERRNO outranks USER_NOTIF, so
   * it fails here and the agent never hears of it. */
  CHECK_INT_EQ(SYSCALL_ERRNO(SYS_keyctl, -1, 0, 0, 0, 0), EPERM);
  /* getppid is NOTIFY in the config and allowed by the default: the agent answers. */
  CHECK_INT_EQ(syscall(SYS_getppid), 4242);
  /* The config narrows: getcwd is EACCES there. */
  char buf[64];
  CHECK_INT_EQ(SYSCALL_ERRNO(SYS_getcwd, buf, sizeof(buf)), EACCES);
  /* ... and cannot widen: mount is allowed there. */
  CHECK_INT_EQ(SYSCALL_ERRNO(SYS_mount, "/nonexistent-seerun-test", "/nonexistent-seerun-test",
                             "tmpfs", 0, 0),
               EPERM);
}

static void run_stacked(const struct sr_seccomp *config, int order, int cache_fd)
{
  int sp[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0) {
    CHECK(!"socketpair");
    return;
  }
  struct stack_arg a = {.config = config, .sock = sp[1], .order = order, .cache_fd = cache_fd};
  pid_t pid = spawn_plain(body_stacked, &a);
  close(sp[1]);
  _cleanup_close_ int agent = sp[0];

  _cleanup_close_ int listener = recv_listener(agent);
  CHECK(listener >= 0);
  /* The first (and only) notification is getppid: keyctl never arrived. */
  if (listener >= 0)
    answer_one(listener, pid, SYS_getppid, 4242, 0);
  CHECK_CHILD_OK(unit_reap(pid));
}

static const char notify_config[] =
    "{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"listenerPath\": \"/run/agent.sock\","
    " \"syscalls\": [{\"names\": [\"getppid\", \"keyctl\"], \"action\": \"SCMP_ACT_NOTIFY\"},"
    " {\"names\": [\"getcwd\"], \"action\": \"SCMP_ACT_ERRNO\", \"errnoRet\": 13}]}";

static void a_config_notify_filter_stacks_on_the_default(void)
{
  _cleanup_config_ struct sr_config *c = unit_parse_seccomp(notify_config);
  if (c == NULL)
    return;
  run_stacked(c->linux_.seccomp, 0, -1);
  /* The other order works as well (the default adds no listener of its own). */
  run_stacked(c->linux_.seccomp, 1, -1);
}

/* ---- the notifying variant (the activity record) ---------------------------------------- */

static void body_notifying(void *p)
{
  int sock = *(int *)p;
  _cleanup_error_ sr_error_t err = NULL;
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
    _exit(3);
  int listener = -1;
  CHECK_OK(sr_seccomp_default_install_notify(&listener, &err), err);
  CHECK(listener >= 0);
  CHECK_INT_EQ(unit_status_field("Seccomp_filters"), base_filters + 1);
  /* Handed over, and not kept: the process must not answer its own notifications. */
  CHECK_INT_EQ(sr_fd_pass_send(sock, listener, "L", 1), 0);
  close(listener);
  /* Allowed calls never reach the listener; a denied one is answered by it. */
  CHECK(syscall(SYS_getppid) > 0);
  CHECK_INT_EQ(SYSCALL_ERRNO(SYS_keyctl, -1, 0, 0, 0, 0), EPERM);
  /* A second load finds the listener of the first: the plain filter, no listener. */
  int second = -2;
  CHECK_OK(sr_seccomp_default_install_notify(&second, &err), err);
  CHECK_INT_EQ(second, -1);
  CHECK_INT_EQ(SYSCALL_ERRNO(SYS_vhangup), EPERM); /* the plain copy's answer: ERRNO wins */
  /* Done: the parent may let the listener go (ENOSYS then: the integration tests). */
  CHECK_INT_EQ(write(sock, "d", 1), 1);
  char c;
  CHECK_INT_EQ(read(sock, &c, 1), 1);
}

static void the_notifying_variant_answers_only_the_denied_set(void)
{
  int sp[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0) {
    CHECK(!"socketpair");
    return;
  }
  pid_t pid = spawn_plain(body_notifying, &sp[1]);
  close(sp[1]);
  _cleanup_close_ int sock = sp[0];
  int listener = recv_listener(sock);
  CHECK(listener >= 0);
  if (listener >= 0) {
    /* The only notification: keyctl (getppid was allowed without one). */
    answer_one(listener, 0, SYS_keyctl, 0, -EPERM);
    /* Held until the child's second load is done: that load must find it in the stack. */
    char d;
    CHECK_INT_EQ(read(sock, &d, 1), 1);
    close(listener);
  }
  CHECK_INT_EQ(write(sock, "x", 1), 1);
  CHECK_CHILD_OK(unit_reap(pid));
}

/* ---- the cache ---------------------------------------------------------------------------- */

static char cache_path[] = "/tmp/seerun-seccomp-cache-XXXXXX";

static int open_cache(void)
{
  int fd = open(cache_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  CHECK(fd >= 0);
  return fd;
}

/* The regular files and temporary files in the cache directory. */
static void count_entries(int *entries, int *temps)
{
  _cleanup_dir_ DIR *d = opendir(cache_path);
  struct dirent *e;
  *entries = *temps = 0;
  while (d && (e = readdir(d)))
    if (strncmp(e->d_name, ".tmp-", 5) == 0)
      (*temps)++;
    else if (e->d_name[0] != '.')
      (*entries)++;
}

static void empty_cache(void)
{
  _cleanup_dir_ DIR *d = opendir(cache_path);
  struct dirent *e;
  while (d && (e = readdir(d)))
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, ".."))
      unlinkat(dirfd(d), e->d_name, 0);
}

/* A podman-sized profile: every x86_64 syscall but a few, for x86_64, x86 and x32. */
static char *big_profile(void)
{
  size_t size = 1 << 16, len = 0;
  char *json = malloc(size);
  if (json == NULL)
    return NULL;
  len += (size_t)snprintf(json + len, size - len,
                          "{\"defaultAction\": \"SCMP_ACT_ERRNO\", \"defaultErrnoRet\": 1,"
                          " \"architectures\": [\"SCMP_ARCH_X86_64\", \"SCMP_ARCH_X86\","
                          " \"SCMP_ARCH_X32\"], \"syscalls\": [{\"names\": [");
  int n = 0;
  for (int nr = 0; nr < 460; nr++) {
    char *name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_X86_64, nr);
    if (name && strcmp(name, "getcwd") != 0 && strcmp(name, "personality") != 0)
      len += (size_t)snprintf(json + len, size - len, "%s\"%s\"", n++ ? ", " : "", name);
    free(name);
  }
  snprintf(json + len, size - len,
           "], \"action\": \"SCMP_ACT_ALLOW\"}, {\"names\": [\"personality\"], \"action\":"
           " \"SCMP_ACT_ALLOW\", \"args\": [{\"index\": 0, \"value\": 8, \"op\":"
           " \"SCMP_CMP_EQ\"}]}]}");
  return json;
}

static void body_getcwd_denied(void *p)
{
  struct sr_seccomp_prog *prog = p;
  _cleanup_error_ sr_error_t err = NULL;
  int notify;
  char buf[64];
  CHECK_OK(sr_seccomp_cache_prog_load(prog, &notify, &err), err);
  CHECK_INT_EQ(notify, -1);
  CHECK_INT_EQ(unit_status_field("Seccomp_filters"), base_filters + 1);
  CHECK_INT_EQ(SYSCALL_ERRNO(SYS_getcwd, buf, sizeof(buf)), EPERM);
  CHECK_INT_EQ(syscall(SYS_getpid), getpid());
  CHECK(personality(PER_LINUX32) >= 0);
}

static double prepare_us(const struct sr_seccomp *s, int dirfd, struct sr_seccomp_prog *out)
{
  _cleanup_error_ sr_error_t err = NULL;
  double t0 = now_us();
  int r = sr_seccomp_cache_prepare(s, dirfd, out, &err);
  double t1 = now_us();
  CHECK_OK(r, err);
  return t1 - t0;
}

static void the_cache_compiles_once_and_then_loads_the_entry(void)
{
  _cleanup_free_ char *profile = big_profile();
  _cleanup_config_ struct sr_config *c = profile ? unit_parse_seccomp(profile) : NULL;
  _cleanup_close_ int dirfd = open_cache();
  struct sr_seccomp_prog miss, hit;
  int entries, temps;
  if (c == NULL || dirfd < 0)
    return;
  empty_cache();

  double t_miss = prepare_us(c->linux_.seccomp, dirfd, &miss);
  CHECK(!miss.cached);
  CHECK(miss.len > 0 && !miss.notify);
  count_entries(&entries, &temps);
  CHECK_INT_EQ(entries, 1);
  CHECK_INT_EQ(temps, 0);

  double t_hit = 1e9;
  for (int i = 0; i < 7; i++) {
    double t = prepare_us(c->linux_.seccomp, dirfd, &hit);
    CHECK(hit.cached);
    if (t < t_hit)
      t_hit = t;
    if (i < 6)
      sr_seccomp_cache_prog_release(&hit);
  }
  CHECK_INT_EQ(hit.len, miss.len);
  CHECK(hit.len == miss.len && memcmp(hit.insns, miss.insns, miss.len * 8) == 0);
  CHECK_UINT_EQ(hit.flags, c->linux_.seccomp->flags);
  fprintf(stderr, "  config filter (%zu instructions): compile %.0f us, from the cache %.0f us\n",
          miss.len, t_miss, t_hit);
  CHECK(t_hit < 1000.0);
  CHECK(t_hit < t_miss);

  /* The cached program behaves as the compiled one. */
  CHECK_CHILD_OK(unit_reap(spawn_plain(body_getcwd_denied, &hit)));
  sr_seccomp_cache_prog_release(&miss);
  sr_seccomp_cache_prog_release(&hit);
}

static void corrupt_byte(const char *name, off_t at)
{
  _cleanup_free_ char *path = NULL;
  if (asprintf(&path, "%s/%s", cache_path, name) < 0)
    return;
  int fd = open(path, O_RDWR | O_CLOEXEC);
  unsigned char b = 0;
  CHECK(fd >= 0 && pread(fd, &b, 1, at) == 1);
  b ^= 0x40;
  CHECK(pwrite(fd, &b, 1, at) == 1);
  close(fd);
}

static void entry_name_of(const struct sr_seccomp *s, char name[65])
{
  uint8_t key[SR_SHA256_LEN];
  sr_seccomp_cache_key(s, key);
  for (int i = 0; i < SR_SHA256_LEN; i++)
    snprintf(name + 2 * i, 3, "%02x", key[i]);
}

/* Prepares `s` and tells whether the program came from the cache (and matches `want`). */
static bool prepared_from_cache(const struct sr_seccomp *s, int dirfd,
                                const struct sr_seccomp_prog *want)
{
  struct sr_seccomp_prog p;
  prepare_us(s, dirfd, &p);
  bool cached = p.cached;
  CHECK(p.len == want->len && memcmp(p.insns, want->insns, want->len * 8) == 0);
  sr_seccomp_cache_prog_release(&p);
  return cached;
}

static void a_bad_entry_is_recompiled_and_replaced(void)
{
  _cleanup_config_ struct sr_config *c = unit_parse_seccomp(
      "{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": [\"getcwd\"],"
      " \"action\": \"SCMP_ACT_ERRNO\"}]}");
  _cleanup_config_ struct sr_config *other = unit_parse_seccomp(
      "{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": [\"getppid\"],"
      " \"action\": \"SCMP_ACT_ERRNO\"}]}");
  _cleanup_close_ int dirfd = open_cache();
  struct sr_seccomp_prog good;
  char name[65], other_name[65], path[256], other_path[256];
  struct stat st;
  if (c == NULL || other == NULL || dirfd < 0)
    return;
  empty_cache();
  const struct sr_seccomp *s = c->linux_.seccomp;
  entry_name_of(s, name);
  entry_name_of(other->linux_.seccomp, other_name);
  CHECK(strcmp(name, other_name) != 0);
  snprintf(path, sizeof(path), "%s/%s", cache_path, name);
  snprintf(other_path, sizeof(other_path), "%s/%s", cache_path, other_name);
  prepare_us(s, dirfd, &good);
  CHECK(!good.cached);
  CHECK(prepared_from_cache(s, dirfd, &good));

  /* A flipped bit in the instructions: the digest does not match. */
  CHECK(stat(path, &st) == 0);
  corrupt_byte(name, st.st_size - 3);
  CHECK(!prepared_from_cache(s, dirfd, &good));
  CHECK(prepared_from_cache(s, dirfd, &good));
  /* A flipped bit in the header (the instruction count). */
  corrupt_byte(name, 12);
  CHECK(!prepared_from_cache(s, dirfd, &good));
  CHECK(prepared_from_cache(s, dirfd, &good));
  /* A torn entry: not a whole number of instructions, or empty. */
  CHECK(truncate(path, st.st_size - 3) == 0);
  CHECK(!prepared_from_cache(s, dirfd, &good));
  CHECK(truncate(path, 0) == 0);
  CHECK(!prepared_from_cache(s, dirfd, &good));
  CHECK(prepared_from_cache(s, dirfd, &good));
  /* A foreign entry: another filter's (valid) entry under this filter's name. */
  struct sr_seccomp_prog o;
  prepare_us(other->linux_.seccomp, dirfd, &o);
  sr_seccomp_cache_prog_release(&o);
  CHECK(rename(other_path, path) == 0);
  CHECK(!prepared_from_cache(s, dirfd, &good));
  CHECK(prepared_from_cache(s, dirfd, &good));
  /* A symlink to a valid entry is not followed, and is replaced by a file. */
  prepare_us(other->linux_.seccomp, dirfd, &o);
  sr_seccomp_cache_prog_release(&o);
  CHECK(unlink(path) == 0);
  CHECK(symlink(other_path, path) == 0);
  CHECK(!prepared_from_cache(s, dirfd, &good));
  CHECK(lstat(path, &st) == 0 && S_ISREG(st.st_mode));
  CHECK(prepared_from_cache(s, dirfd, &good));
  /* A group-writable entry is not trusted. */
  CHECK(chmod(path, 0660) == 0);
  CHECK(!prepared_from_cache(s, dirfd, &good));
  CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600);
  int entries, temps;
  count_entries(&entries, &temps);
  CHECK_INT_EQ(entries, 2);
  CHECK_INT_EQ(temps, 0);
  sr_seccomp_cache_prog_release(&good);
}

struct cached_arg {
  const struct sr_seccomp *s;
  int dirfd;
};

static void body_install_cached(void *p)
{
  struct cached_arg *a = p;
  _cleanup_error_ sr_error_t err = NULL;
  int notify;
  char buf[64];
  CHECK_OK(sr_seccomp_cache_install(a->s, a->dirfd, &notify, &err), err);
  CHECK_INT_EQ(notify, -1);
  CHECK_INT_EQ(SYSCALL_ERRNO(SYS_getcwd, buf, sizeof(buf)), EPERM);
}

static void an_unsafe_cache_directory_is_not_used(void)
{
  _cleanup_config_ struct sr_config *c = unit_parse_seccomp(
      "{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": [\"getcwd\"],"
      " \"action\": \"SCMP_ACT_ERRNO\"}]}");
  _cleanup_close_ int dirfd = open_cache();
  struct sr_seccomp_prog p;
  int entries, temps;
  if (c == NULL || dirfd < 0)
    return;
  empty_cache();
  const struct sr_seccomp *s = c->linux_.seccomp;

  /* World-writable: anyone could plant a filter.  Nothing is written there... */
  CHECK(chmod(cache_path, 0777) == 0);
  prepare_us(s, dirfd, &p);
  CHECK(!p.cached && p.len > 0);
  sr_seccomp_cache_prog_release(&p);
  count_entries(&entries, &temps);
  CHECK_INT_EQ(entries + temps, 0);
  /* ... and a valid entry there is not read. */
  CHECK(chmod(cache_path, 0700) == 0);
  prepare_us(s, dirfd, &p);
  sr_seccomp_cache_prog_release(&p);
  CHECK(chmod(cache_path, 0777) == 0);
  prepare_us(s, dirfd, &p);
  CHECK(!p.cached);
  sr_seccomp_cache_prog_release(&p);
  CHECK(chmod(cache_path, 0700) == 0);
  empty_cache();

  /* Owned by someone else. */
  if (geteuid() == 0) {
    CHECK(chown(cache_path, 1000, 1000) == 0);
    prepare_us(s, dirfd, &p);
    CHECK(!p.cached);
    sr_seccomp_cache_prog_release(&p);
    CHECK(chown(cache_path, 0, 0) == 0);
  }
  /* No cache at all. */
  prepare_us(s, -1, &p);
  CHECK(!p.cached && p.len > 0);
  sr_seccomp_cache_prog_release(&p);
  /* And the whole install works with an unusable directory. */
  CHECK(chmod(cache_path, 0777) == 0);
  struct cached_arg a = {s, dirfd};
  CHECK_CHILD_OK(unit_reap(spawn_plain(body_install_cached, &a)));
  CHECK(chmod(cache_path, 0700) == 0);
  count_entries(&entries, &temps);
  CHECK_INT_EQ(entries + temps, 0);
}

struct tsync_state {
  pthread_mutex_t m;
  pthread_cond_t c;
  int stage;
  int result;
};

static void *tsync_thread(void *p)
{
  struct tsync_state *t = p;
  char buf[64];
  pthread_mutex_lock(&t->m);
  t->stage = 1;
  pthread_cond_broadcast(&t->c);
  while (t->stage != 2)
    pthread_cond_wait(&t->c, &t->m);
  pthread_mutex_unlock(&t->m);
  t->result = syscall(SYS_getcwd, buf, sizeof(buf)) < 0 ? errno : 0;
  return NULL;
}

static void body_cached_tsync(void *p)
{
  struct cached_arg *a = p;
  _cleanup_error_ sr_error_t err = NULL;
  struct tsync_state t = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, -1};
  pthread_t th;
  int notify;
  CHECK_INT_EQ(pthread_create(&th, NULL, tsync_thread, &t), 0);
  pthread_mutex_lock(&t.m);
  while (t.stage != 1)
    pthread_cond_wait(&t.c, &t.m);
  pthread_mutex_unlock(&t.m);
  CHECK_OK(sr_seccomp_cache_install(a->s, a->dirfd, &notify, &err), err);
  CHECK_INT_EQ(notify, -1);
  pthread_mutex_lock(&t.m);
  t.stage = 2;
  pthread_cond_broadcast(&t.c);
  pthread_mutex_unlock(&t.m);
  pthread_join(th, NULL);
  CHECK_INT_EQ(t.result, EPERM);
}

static void the_cached_path_loads_with_the_configs_flags(void)
{
  _cleanup_config_ struct sr_config *c = unit_parse_seccomp(
      "{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"flags\": [\"SECCOMP_FILTER_FLAG_TSYNC\","
      " \"SECCOMP_FILTER_FLAG_LOG\"], \"syscalls\": [{\"names\": [\"getcwd\"],"
      " \"action\": \"SCMP_ACT_ERRNO\"}]}");
  _cleanup_close_ int dirfd = open_cache();
  if (c == NULL || dirfd < 0)
    return;
  empty_cache();
  struct cached_arg a = {c->linux_.seccomp, dirfd};
  /* Compiled (a miss) in the first child, read back in the second. */
  CHECK_CHILD_OK(unit_reap(spawn_plain(body_cached_tsync, &a)));
  CHECK_CHILD_OK(unit_reap(spawn_plain(body_cached_tsync, &a)));
  int entries, temps;
  count_entries(&entries, &temps);
  CHECK_INT_EQ(entries, 1);
}

static void a_cached_notify_filter_hands_out_its_listener(void)
{
  _cleanup_config_ struct sr_config *c = unit_parse_seccomp(notify_config);
  _cleanup_close_ int dirfd = open_cache();
  if (c == NULL || dirfd < 0)
    return;
  empty_cache();
  run_stacked(c->linux_.seccomp, 0, dirfd); /* compiled and stored */
  run_stacked(c->linux_.seccomp, 1, dirfd); /* read back */
  int entries, temps;
  count_entries(&entries, &temps);
  CHECK_INT_EQ(entries, 1);
}

static void the_cache_directory_is_made_private_under_the_state_root(void)
{
  char root[] = "/tmp/seerun-state-root-XXXXXX", path[128];
  struct stat st;
  if (mkdtemp(root) == NULL) {
    CHECK(!"mkdtemp");
    return;
  }
  snprintf(path, sizeof(path), "%s/%s", root, SR_SECCOMP_CACHE_DIR);
  int rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  int fd = sr_seccomp_cache_open(rootfd);
  CHECK(fd >= 0);
  CHECK(stat(path, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 07777) == 0700);
  if (fd >= 0)
    close(fd);
  /* Opened again as it is. */
  fd = sr_seccomp_cache_open(rootfd);
  CHECK(fd >= 0);
  if (fd >= 0)
    close(fd);
  /* A symlink in its place is not followed: no cache. */
  CHECK(rmdir(path) == 0);
  CHECK(symlink("/tmp", path) == 0);
  CHECK_INT_EQ(sr_seccomp_cache_open(rootfd), -1);
  unlink(path);
  close(rootfd);
  rmdir(root);
}

static void body_no_filter(void *p)
{
  _cleanup_error_ sr_error_t err = NULL;
  int notify = -2;
  CHECK_OK(sr_seccomp_cache_install(NULL, -1, &notify, &err), err);
  CHECK_INT_EQ(notify, -1);
  CHECK_INT_EQ(unit_status_field("Seccomp_filters"), base_filters);
}

static void no_config_filter_loads_nothing(void)
{
  CHECK_CHILD_OK(unit_reap(spawn_plain(body_no_filter, NULL)));
}

static void the_cache_key_covers_every_field(void)
{
  _cleanup_config_ struct sr_config *c = unit_parse_seccomp(
      "{\"defaultAction\": \"SCMP_ACT_ERRNO\", \"architectures\": [\"SCMP_ARCH_X86\"],"
      " \"listenerPath\": \"/run/a.sock\", \"listenerMetadata\": \"m\","
      " \"syscalls\": [{\"names\": [\"getcwd\", \"getppid\"], \"action\": \"SCMP_ACT_NOTIFY\","
      " \"args\": [{\"index\": 1, \"value\": 2, \"valueTwo\": 3, \"op\": "
      "\"SCMP_CMP_MASKED_EQ\"}]}]}");
  if (c == NULL)
    return;
  struct sr_seccomp *s = c->linux_.seccomp;
  uint8_t base[SR_SHA256_LEN], k[SR_SHA256_LEN];
  sr_seccomp_cache_key(s, base);
  sr_seccomp_cache_key(s, k);
  CHECK(memcmp(base, k, sizeof(k)) == 0);

#define CHANGES_KEY(field, value)                                                                  \
  do {                                                                                             \
    __typeof__(field) saved_ = (field);                                                            \
    (field) = (value);                                                                             \
    sr_seccomp_cache_key(s, k);                                                                    \
    (field) = saved_;                                                                              \
    unit_checks++;                                                                                 \
    if (memcmp(base, k, sizeof(k)) == 0)                                                           \
      unit_fail(__FILE__, __LINE__, "changing %s leaves the key unchanged", #field);               \
  } while (0)

  CHANGES_KEY(s->default_action, SCMP_ACT_ALLOW);
  CHANGES_KEY(s->architectures[0], SCMP_ARCH_X32);
  CHANGES_KEY(s->n_architectures, 0);
  CHANGES_KEY(s->flags, SECCOMP_FILTER_FLAG_LOG);
  /* Where the notify fd goes, and the metadata sent with it, do not change the program: one
   * cached program serves containers with per-container metadata. */
  {
    char *saved_path = s->listener_path, *saved_meta = s->listener_metadata;
    s->listener_path = "/run/b.sock";
    s->listener_metadata = "n";
    sr_seccomp_cache_key(s, k);
    s->listener_path = saved_path;
    s->listener_metadata = saved_meta;
    CHECK(memcmp(base, k, sizeof(k)) == 0);
  }
  CHANGES_KEY(s->n_rules, 0);
  CHANGES_KEY(s->rules[0].names[1], "getpid");
  CHANGES_KEY(s->rules[0].n_names, 1);
  CHANGES_KEY(s->rules[0].action, SCMP_ACT_ALLOW);
  CHANGES_KEY(s->rules[0].n_args, 0);
  CHANGES_KEY(s->rules[0].args[0].index, 2);
  CHANGES_KEY(s->rules[0].args[0].value, 4);
  CHANGES_KEY(s->rules[0].args[0].value_two, 4);
  CHANGES_KEY(s->rules[0].args[0].op, SCMP_CMP_EQ);
  CHANGES_KEY(s->uses_notify, false);
  /* Strings are length-prefixed: moving a byte across a boundary changes the key. */
  CHANGES_KEY(s->rules[0].names[0], "getcwdg");
}

/* ---- SHA-256 ------------------------------------------------------------------------------ */

static void check_digest(const uint8_t d[SR_SHA256_LEN], const char *hex, const char *what)
{
  char got[2 * SR_SHA256_LEN + 1];
  for (int i = 0; i < SR_SHA256_LEN; i++)
    snprintf(got + 2 * i, 3, "%02x", d[i]);
  unit_checks++;
  if (strcmp(got, hex) != 0)
    unit_fail(__FILE__, __LINE__, "SHA-256(%s) is %s, expected %s", what, got, hex);
}

static void sha256_gives_the_fips_180_4_digests(void)
{
  uint8_t d[SR_SHA256_LEN];
  sr_sha256("abc", 3, d);
  check_digest(d, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", "abc");
  sr_sha256("", 0, d);
  check_digest(d, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", "\"\"");
  const char *m448 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  sr_sha256(m448, strlen(m448), d);
  check_digest(d, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1", "448 bits");
  const char *m896 = "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnop"
                     "jklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu";
  sr_sha256(m896, strlen(m896), d);
  check_digest(d, "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1", "896 bits");

  /* One million 'a', fed in pieces of every size from 1 to 997 bytes. */
  static char a[1000];
  memset(a, 'a', sizeof(a));
  struct sr_sha256 c;
  sr_sha256_init(&c);
  size_t done = 0, step = 1;
  while (done < 1000000) {
    size_t n = step < 1000000 - done ? step : 1000000 - done;
    sr_sha256_update(&c, a, n);
    done += n;
    step = step % 997 + 1;
  }
  sr_sha256_final(&c, d);
  check_digest(d, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0",
               "one million a");
  /* Every length around the padding boundary agrees between one call and byte by byte. */
  for (size_t len = 50; len < 140; len++) {
    uint8_t one[SR_SHA256_LEN], bytes[SR_SHA256_LEN];
    sr_sha256(a, len, one);
    sr_sha256_init(&c);
    for (size_t i = 0; i < len; i++)
      sr_sha256_update(&c, a + i, 1);
    sr_sha256_final(&c, bytes);
    CHECK(memcmp(one, bytes, sizeof(one)) == 0);
  }
}

int main(void)
{
  alarm(300);
  base_filters = unit_status_field("Seccomp_filters");
  if (base_filters < 0)
    base_filters = 0;
  if (mkdtemp(cache_path) == NULL) {
    perror("mkdtemp");
    return 1;
  }
  RUN(sha256_gives_the_fips_180_4_digests);
  RUN(the_default_filter_is_one_filter_in_filter_mode);
  RUN(ordinary_syscalls_work);
  RUN(dangerous_syscalls_fail_with_eperm);
  RUN(argument_conditions_deny_only_the_dangerous_values);
  RUN(clone3_and_unknown_syscalls_fail_with_enosys);
  RUN(fork_threads_and_programs_still_work);
  RUN(an_i386_syscall_is_filtered_by_the_same_list);
  RUN(an_x32_syscall_kills_the_process);
  RUN(installing_the_default_filter_costs_no_more_than_any_filter_load);
  RUN(a_config_notify_filter_stacks_on_the_default);
  RUN(the_notifying_variant_answers_only_the_denied_set);
  RUN(no_config_filter_loads_nothing);
  RUN(the_cache_key_covers_every_field);
  RUN(the_cache_directory_is_made_private_under_the_state_root);
  RUN(the_cache_compiles_once_and_then_loads_the_entry);
  RUN(a_bad_entry_is_recompiled_and_replaced);
  RUN(an_unsafe_cache_directory_is_not_used);
  RUN(the_cached_path_loads_with_the_configs_flags);
  RUN(a_cached_notify_filter_hands_out_its_listener);
  empty_cache();
  rmdir(cache_path);
  return unit_report();
}
