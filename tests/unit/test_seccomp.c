#include "build.h"

/* The seccomp filter as the container process sees it: each test parses a config.json, forks a
 * child that sets no_new_privs and installs the filter, and checks from inside the child what
 * its syscalls now do.  A child exits 0 when every check in it held. */

#include "fixtures.h"
#include "unit.h"

#include "cleanup.h"
#include "config.h"
#include "seccomp_filter.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

struct child {
  int rc;
  sr_error_t err;
  int notify_fd;
  void *arg;
};

typedef void (*child_body)(struct child *c);

/* The test process's own seccomp mode, should it run under a filter already (in a container). */
static int base_seccomp_mode;

/* Forks a child that installs `s` and runs `body`; returns its pid. */
static pid_t spawn(const struct sr_seccomp *s, child_body body, void *arg)
{
  pid_t pid = fork();
  if (pid < 0) {
    CHECK(pid >= 0);
    return -1;
  }
  if (pid == 0) {
    struct child c = {.rc = 0, .err = NULL, .notify_fd = -2, .arg = arg};
    int failures = unit_failures;
    alarm(20);
    /* A SIGSYS kill must not dump core (into the cwd or a core_pattern helper). */
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
      _exit(3);
    c.rc = sr_seccomp_install(s, &c.notify_fd, &c.err);
    body(&c);
    /* _exit: no atexit handlers or leak check in a filtered child. */
    _exit(unit_failures > failures ? 1 : 0);
  }
  return pid;
}

/* Parses `seccomp_json`, runs `body` in a filtered child and checks that it passed. */
static void run_in_child(const char *seccomp_json, child_body body, void *arg)
{
  _cleanup_config_ struct sr_config *c = unit_parse_seccomp(seccomp_json);
  if (c == NULL)
    return;
  CHECK_CHILD_OK(unit_reap(spawn(c->linux_.seccomp, body, arg)));
}

/* The body of a child whose filter must have loaded. */
static bool installed(struct child *c)
{
  CHECK_OK(c->rc, c->err);
  return c->rc >= 0;
}

/* ---- actions ------------------------------------------------------------------------------ */

static void body_getcwd_enosys(struct child *c)
{
  char buf[256];
  if (!installed(c))
    return;
  CHECK_INT_EQ(c->notify_fd, -1);
  CHECK_INT_EQ(SYSCALL_ERRNO(SYS_getcwd, buf, sizeof(buf)), ENOSYS);
  CHECK(syscall(SYS_getpid) > 0);
  CHECK_INT_EQ(SYSCALL_ERRNO(SYS_getppid), 0);
}

static void a_denied_syscall_fails_with_its_errno_ret(void)
{
  run_in_child("{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": [\"getcwd\"],"
               " \"action\": \"SCMP_ACT_ERRNO\", \"errnoRet\": 38}]}",
               body_getcwd_enosys, NULL);
}

static void body_getcwd_eperm(struct child *c)
{
  char buf[256];
  if (!installed(c))
    return;
  CHECK_INT_EQ(SYSCALL_ERRNO(SYS_getcwd, buf, sizeof(buf)), EPERM);
  CHECK(syscall(SYS_getpid) > 0);
}

static void errno_without_errno_ret_means_eperm(void)
{
  run_in_child("{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": [\"getcwd\"],"
               " \"action\": \"SCMP_ACT_ERRNO\"}]}",
               body_getcwd_eperm, NULL);
}

static void body_default_errno(struct child *c)
{
  if (!installed(c))
    return;
  CHECK_INT_EQ(SYSCALL_ERRNO(SYS_getppid), EXDEV);
  CHECK_INT_EQ(SYSCALL_ERRNO(SYS_getuid), EXDEV);
  CHECK(syscall(SYS_getpid) > 0);
}

static void a_default_errno_denies_everything_not_allowed(void)
{
  /* What the child needs to report and exit (sigaltstack: ASan, on the way to _exit). */
  run_in_child("{\"defaultAction\": \"SCMP_ACT_ERRNO\", \"defaultErrnoRet\": 18,"
               " \"syscalls\": [{\"names\": [\"getpid\", \"write\", \"writev\", \"exit\","
               " \"exit_group\", \"rt_sigreturn\", \"rt_sigprocmask\", \"futex\", \"mmap\","
               " \"munmap\", \"madvise\", \"brk\", \"openat\", \"read\", \"close\", \"fstat\","
               " \"newfstatat\", \"lseek\", \"sigaltstack\"], \"action\": \"SCMP_ACT_ALLOW\"}]}",
               body_default_errno, NULL);
}

static void body_killed(struct child *c)
{
  if (!installed(c))
    return;
  syscall(SYS_getppid);
  fprintf(stderr, "  getppid returned instead of killing the process\n");
  _exit(4);
}

static void kill_process_kills_the_child_with_sigsys(void)
{
  _cleanup_config_ struct sr_config *c =
      unit_parse_seccomp("{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\":"
                    " [\"getppid\"], \"action\": \"SCMP_ACT_KILL_PROCESS\"}]}");
  if (c == NULL)
    return;
  int st = unit_reap(spawn(c->linux_.seccomp, body_killed, NULL));
  CHECK(WIFSIGNALED(st));
  CHECK_INT_EQ(WIFSIGNALED(st) ? WTERMSIG(st) : 0, SIGSYS);
}

static void body_same_as_default(struct child *c)
{
  char buf[256];
  if (!installed(c))
    return;
  CHECK(syscall(SYS_getpid) > 0);
  CHECK_INT_EQ(SYSCALL_ERRNO(SYS_getcwd, buf, sizeof(buf)), EPERM);
}

static void a_rule_repeating_the_default_action_is_skipped(void)
{
  run_in_child("{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": ["
               "{\"names\": [\"getpid\"], \"action\": \"SCMP_ACT_ALLOW\"},"
               "{\"names\": [\"getcwd\"], \"action\": \"SCMP_ACT_ERRNO\"}]}",
               body_same_as_default, NULL);
}

/* ---- argument conditions ------------------------------------------------------------------ */

static void body_personality(struct child *c)
{
  if (!installed(c))
    return;
  CHECK_INT_EQ(SYSCALL_ERRNO(SYS_personality, 0xffffffffUL), EPERM);
  CHECK_INT_EQ(SYSCALL_ERRNO(SYS_personality, (unsigned long)PER_LINUX), 0);
}

static void an_argument_condition_denies_only_the_matching_call(void)
{
  run_in_child("{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\":"
               " [\"personality\"], \"action\": \"SCMP_ACT_ERRNO\", \"args\": [{\"index\": 0,"
               " \"value\": 4294967295, \"op\": \"SCMP_CMP_EQ\"}]}]}",
               body_personality, NULL);
}

static void body_masked(struct child *c)
{
  if (!installed(c))
    return;
  /* (mask & 070) == 070 is denied. */
  CHECK_INT_EQ(SYSCALL_ERRNO(SYS_umask, 0077), EACCES);
  CHECK_INT_EQ(SYSCALL_ERRNO(SYS_umask, 0070), EACCES);
  CHECK_INT_EQ(SYSCALL_ERRNO(SYS_umask, 0022), 0);
  CHECK_INT_EQ(SYSCALL_ERRNO(SYS_umask, 0050), 0);
  CHECK_INT_EQ(SYSCALL_ERRNO(SYS_umask, 0007), 0);
}

static void masked_eq_compares_the_masked_bits_with_value_two(void)
{
  run_in_child("{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": [\"umask\"],"
               " \"action\": \"SCMP_ACT_ERRNO\", \"errnoRet\": 13, \"args\": [{\"index\": 0,"
               " \"value\": 56, \"valueTwo\": 56, \"op\": \"SCMP_CMP_MASKED_EQ\"}]}]}",
               body_masked, NULL);
}

static void body_same_index(struct child *c)
{
  if (!installed(c))
    return;
  CHECK_INT_EQ(SYSCALL_ERRNO(SYS_umask, 0777), EXDEV);
  CHECK_INT_EQ(SYSCALL_ERRNO(SYS_umask, 0700), EXDEV);
  CHECK_INT_EQ(SYSCALL_ERRNO(SYS_umask, 0022), 0);
}

static void conditions_on_one_argument_each_match_on_their_own(void)
{
  run_in_child("{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": [\"umask\"],"
               " \"action\": \"SCMP_ACT_ERRNO\", \"errnoRet\": 18, \"args\": ["
               "{\"index\": 0, \"value\": 511, \"op\": \"SCMP_CMP_EQ\"},"
               "{\"index\": 0, \"value\": 448, \"op\": \"SCMP_CMP_EQ\"}]}]}",
               body_same_index, NULL);
}

static void body_two_args(struct child *c)
{
  if (!installed(c))
    return;
  CHECK_INT_EQ(SYSCALL_ERRNO(SYS_getpriority, PRIO_PROCESS, 999999), EXDEV);
  /* Only one of the two conditions holds: the kernel answers (no such group). */
  CHECK(SYSCALL_ERRNO(SYS_getpriority, PRIO_PGRP, 999999) != EXDEV);
  CHECK_INT_EQ(SYSCALL_ERRNO(SYS_getpriority, PRIO_PROCESS, 0), 0);
}

static void conditions_on_different_arguments_must_all_match(void)
{
  run_in_child("{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\":"
               " [\"getpriority\"], \"action\": \"SCMP_ACT_ERRNO\", \"errnoRet\": 18, \"args\": ["
               "{\"index\": 0, \"value\": 0, \"op\": \"SCMP_CMP_EQ\"},"
               "{\"index\": 1, \"value\": 999999, \"op\": \"SCMP_CMP_EQ\"}]}]}",
               body_two_args, NULL);
}

/* ---- architectures and names -------------------------------------------------------------- */

static void syscalls_missing_on_the_listed_architectures_are_skipped(void)
{
  run_in_child("{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"architectures\": [\"SCMP_ARCH_X86_64\","
               " \"SCMP_ARCH_X86\", \"SCMP_ARCH_X32\"], \"syscalls\": [{\"names\":"
               " [\"arm_fadvise64_64\", \"breakpoint\", \"getcwd\", \"waitpid\"],"
               " \"action\": \"SCMP_ACT_ERRNO\", \"errnoRet\": 38}, {\"names\":"
               " [\"arm_sync_file_range\"], \"action\": \"SCMP_ACT_KILL_PROCESS\", \"args\":"
               " [{\"index\": 1, \"value\": 1, \"op\": \"SCMP_CMP_EQ\"}]}]}",
               body_getcwd_enosys, NULL);
}

static void body_big(struct child *c)
{
  char buf[256];
  if (!installed(c))
    return;
  CHECK_INT_EQ(SYSCALL_ERRNO(SYS_getcwd, buf, sizeof(buf)), EXDEV);
  CHECK_INT_EQ(SYSCALL_ERRNO(SYS_acct, NULL), EXDEV);
  CHECK_INT_EQ(SYSCALL_ERRNO(SYS_sethostname, "x", 1), EXDEV);
  CHECK_INT_EQ(SYSCALL_ERRNO(SYS_umask, 0022), EACCES);
  CHECK_INT_EQ(SYSCALL_ERRNO(SYS_umask, 0777), 0);
  CHECK(syscall(SYS_getpid) > 0);
  CHECK_INT_EQ(SYSCALL_ERRNO(SYS_getppid), 0);
  CHECK_INT_EQ(SYSCALL_ERRNO(SYS_getuid), 0);
}

static void a_large_filter_still_matches_exactly_its_names(void)
{
  /* More than 32 names: built as a binary tree. */
  run_in_child(
      "{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"architectures\": [\"SCMP_ARCH_X86_64\","
      " \"SCMP_ARCH_X86\", \"SCMP_ARCH_X32\"], \"syscalls\": [{\"names\": [\"acct\","
      " \"add_key\", \"bpf\", \"clock_adjtime\", \"clock_settime\", \"create_module\","
      " \"delete_module\", \"finit_module\", \"get_kernel_syms\", \"get_mempolicy\","
      " \"init_module\", \"ioperm\", \"iopl\", \"kcmp\", \"kexec_file_load\", \"kexec_load\","
      " \"keyctl\", \"lookup_dcookie\", \"mbind\", \"move_pages\", \"name_to_handle_at\","
      " \"nfsservctl\", \"open_by_handle_at\", \"perf_event_open\", \"pivot_root\","
      " \"process_vm_readv\", \"process_vm_writev\", \"query_module\", \"quotactl\","
      " \"reboot\", \"request_key\", \"set_mempolicy\", \"sethostname\", \"settimeofday\","
      " \"stime\", \"swapon\", \"swapoff\", \"sysfs\", \"_sysctl\", \"umount2\", \"uselib\","
      " \"userfaultfd\", \"ustat\", \"vm86\", \"vm86old\", \"getcwd\"],"
      " \"action\": \"SCMP_ACT_ERRNO\", \"errnoRet\": 18}, {\"names\": [\"umask\"],"
      " \"action\": \"SCMP_ACT_ERRNO\", \"errnoRet\": 13, \"args\": [{\"index\": 0,"
      " \"value\": 511, \"op\": \"SCMP_CMP_NE\"}]}]}",
      body_big, NULL);
}

/* ---- flags -------------------------------------------------------------------------------- */

static void body_log_flag(struct child *c)
{
  int before = *(int *)c->arg;
  if (!installed(c))
    return;
  CHECK_INT_EQ(unit_status_field("Seccomp"), 2);
  CHECK_INT_EQ(unit_status_field("Seccomp_filters"), before + 1);
}

static void the_log_flag_is_accepted_and_one_filter_is_loaded(void)
{
  int before = unit_status_field("Seccomp_filters");
  CHECK(before >= 0);
  run_in_child("{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"flags\": [\"SECCOMP_FILTER_FLAG_LOG\"],"
               " \"syscalls\": [{\"names\": [\"getcwd\"], \"action\": \"SCMP_ACT_LOG\"}]}",
               body_log_flag, &before);
}

struct thread_probe {
  int go[2];
  int seen_errno;
};

static void *probe_thread(void *p)
{
  struct thread_probe *t = p;
  char b, buf[256];
  while (read(t->go[0], &b, 1) < 0 && errno == EINTR)
    ;
  t->seen_errno = SYSCALL_ERRNO(SYS_getcwd, buf, sizeof(buf));
  return NULL;
}

/* Runs in a child that starts a thread before the filter is installed: the thread is filtered
 * only if TSYNC was asked for (and then nothing else was added or dropped). */
static void run_tsync_probe(const char *seccomp_json, int want_errno)
{
  _cleanup_config_ struct sr_config *c = unit_parse_seccomp(seccomp_json);
  if (c == NULL)
    return;
  pid_t pid = fork();
  if (pid == 0) {
    struct thread_probe t = {.seen_errno = -1};
    pthread_t th;
    _cleanup_error_ sr_error_t err = NULL;
    int fd = -2, failures = unit_failures;
    alarm(20);
    if (pipe(t.go) < 0 || pthread_create(&th, NULL, probe_thread, &t) != 0 ||
        prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
      _exit(3);
    CHECK_OK(sr_seccomp_install(c->linux_.seccomp, &fd, &err), err);
    CHECK(write(t.go[1], "x", 1) == 1);
    pthread_join(th, NULL);
    CHECK_INT_EQ(t.seen_errno, want_errno);
    _exit(unit_failures > failures ? 1 : 0);
  }
  CHECK_CHILD_OK(unit_reap(pid));
}

static void tsync_filters_every_thread_and_only_when_asked(void)
{
  run_tsync_probe(
      "{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"flags\": [\"SECCOMP_FILTER_FLAG_TSYNC\","
      " \"SECCOMP_FILTER_FLAG_SPEC_ALLOW\"], \"syscalls\": [{\"names\": [\"getcwd\"],"
      " \"action\": \"SCMP_ACT_ERRNO\", \"errnoRet\": 38}]}",
      ENOSYS);
  run_tsync_probe("{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": [\"getcwd\"],"
                  " \"action\": \"SCMP_ACT_ERRNO\", \"errnoRet\": 38}]}",
                  0);
}

static void body_waitkill(struct child *c)
{
#if SCMP_VER_MAJOR == 2 && SCMP_VER_MINOR < 6
  CHECK(c->rc < 0);
  CHECK_ERR_CONTAINS(c->err, "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV: not supported by this "
                             "libseccomp");
  CHECK_INT_EQ(unit_status_field("Seccomp"), base_seccomp_mode);
#else
  CHECK(c->rc < 0 || c->notify_fd >= 0);
#endif
  if (c->notify_fd >= 0)
    close(c->notify_fd);
  sr_error_free(&c->err);
}

static void wait_killable_recv_is_refused_when_libseccomp_lacks_it(void)
{
  run_in_child("{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"flags\":"
               " [\"SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV\"], \"listenerPath\": \"/run/a.sock\","
               " \"syscalls\": [{\"names\": [\"getppid\"], \"action\": \"SCMP_ACT_NOTIFY\"}]}",
               body_waitkill, NULL);
}

/* ---- errors ------------------------------------------------------------------------------- */

static void body_error(struct child *c)
{
  CHECK(c->rc < 0);
  CHECK_INT_EQ(c->notify_fd, -1);
  CHECK_ERR_CONTAINS(c->err, (const char *)c->arg);
  /* Nothing was loaded. */
  CHECK_INT_EQ(unit_status_field("Seccomp"), base_seccomp_mode);
  sr_error_free(&c->err);
}

static void a_bad_rule_fails_naming_its_syscall(void)
{
  char *names[] = {"getcwd", "personality"};
  struct sr_seccomp_arg bad_index = {.index = 6, .value = 1, .op = SCMP_CMP_EQ};
  struct sr_seccomp_arg bad_op = {.index = 0, .value = 1, .op = 42};
  struct sr_seccomp_rule rule = {
      .names = names, .n_names = 2, .action = SCMP_ACT_ERRNO(1), .args = &bad_index, .n_args = 1};
  struct sr_seccomp s = {.default_action = SCMP_ACT_ALLOW, .rules = &rule, .n_rules = 1};

  CHECK_CHILD_OK(unit_reap(spawn(&s, body_error,
                            "seccomp: syscall \"getcwd\": args[0]: argument "
                            "index 6 is out of range 0-5")));
  rule.args = &bad_op;
  CHECK_CHILD_OK(
      unit_reap(spawn(&s, body_error, "seccomp: syscall \"getcwd\": add rule: Invalid argument")));
  rule.args = NULL;
  rule.n_args = 0;
  s.flags = 1U << 30;
  CHECK_CHILD_OK(unit_reap(spawn(&s, body_error, "unknown filter flags 0x40000000")));
  s.flags = 0;
  s.default_action = 0x12345678;
  CHECK_CHILD_OK(unit_reap(spawn(&s, body_error, "defaultAction: action 0x12345678 refused")));
}

static void body_nothing(struct child *c)
{
  if (!installed(c))
    return;
  CHECK_INT_EQ(c->notify_fd, -1);
  CHECK_INT_EQ(unit_status_field("Seccomp"), base_seccomp_mode);
}

static void no_seccomp_section_loads_nothing(void)
{
  CHECK_CHILD_OK(unit_reap(spawn(NULL, body_nothing, NULL)));
}

/* ---- notify ------------------------------------------------------------------------------- */

static const char state_json[] =
    "{\"ociVersion\": \"1.0.2\", \"fds\": [\"seccompFd\"], \"pid\": 1, \"metadata\": \"m\","
    " \"state\": {\"ociVersion\": \"1.0.2\", \"id\": \"c1\", \"status\": \"creating\","
    " \"pid\": 1, \"bundle\": \"/b\"}}";

static void body_notify(struct child *c)
{
  int sock = *(int *)c->arg;
  _cleanup_error_ sr_error_t err = NULL;
  if (!installed(c))
    return;
  CHECK(c->notify_fd >= 0);
  CHECK_OK(sr_seccomp_send_notify_fd(sock, c->notify_fd, state_json, &err), err);
  close(c->notify_fd);
  /* The agent (the parent) answers 4242 for the container. */
  CHECK_INT_EQ(syscall(SYS_getppid), 4242);
  CHECK_INT_EQ(SYSCALL_ERRNO(SYS_getuid), 0);
}

/* Reads exactly len bytes; the first read also takes the SCM_RIGHTS fd into *fd. */
static ssize_t recv_with_fd(int sock, char *buf, size_t len, int *fd, int *n_fds)
{
  size_t off = 0;
  *fd = -1;
  *n_fds = 0;
  while (off < len) {
    union {
      struct cmsghdr align;
      char b[CMSG_SPACE(4 * sizeof(int))];
    } ctl;
    struct iovec iov = {.iov_base = buf + off, .iov_len = len - off};
    struct msghdr m = {
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.b, .msg_controllen = sizeof(ctl.b)};
    ssize_t n = recvmsg(sock, &m, MSG_CMSG_CLOEXEC);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return n < 0 ? -1 : (ssize_t)off;
    for (struct cmsghdr *h = CMSG_FIRSTHDR(&m); h; h = CMSG_NXTHDR(&m, h))
      if (h->cmsg_level == SOL_SOCKET && h->cmsg_type == SCM_RIGHTS) {
        size_t k = (h->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        if (off == 0 && k >= 1)
          memcpy(fd, CMSG_DATA(h), sizeof(int));
        *n_fds += (int)k;
      }
    off += (size_t)n;
  }
  return (ssize_t)off;
}

static void notify_hands_the_syscall_to_an_agent_over_the_listener_socket(void)
{
  _cleanup_config_ struct sr_config *c =
      unit_parse_seccomp("{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"listenerPath\":"
                    " \"/run/agent.sock\", \"listenerMetadata\": \"m\", \"syscalls\": [{\"names\":"
                    " [\"getppid\"], \"action\": \"SCMP_ACT_NOTIFY\"}]}");
  int sp[2];
  if (c == NULL)
    return;
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0) {
    CHECK(!"socketpair");
    return;
  }
  CHECK(c->linux_.seccomp->uses_notify);
  pid_t pid = spawn(c->linux_.seccomp, body_notify, &sp[1]);
  _cleanup_close_ int agent = sp[0];
  close(sp[1]);

  char buf[sizeof(state_json)] = {0};
  int n_fds;
  _cleanup_close_ int listener = -1;
  ssize_t n = recv_with_fd(agent, buf, strlen(state_json), &listener, &n_fds);
  CHECK_INT_EQ(n, strlen(state_json));
  CHECK_STR_EQ(buf, state_json);
  CHECK_INT_EQ(n_fds, 1);
  CHECK(listener >= 0);
  if (listener >= 0) {
    struct seccomp_notif *req = NULL;
    struct seccomp_notif_resp *resp = NULL;
    CHECK_INT_EQ(seccomp_notify_alloc(&req, &resp), 0);
    if (req && resp) {
      CHECK_INT_EQ(seccomp_notify_receive(listener, req), 0);
      CHECK_INT_EQ(req->pid, pid);
      CHECK_INT_EQ(req->data.nr, SYS_getppid);
      CHECK_INT_EQ(seccomp_notify_id_valid(listener, req->id), 0);
      resp->id = req->id;
      resp->val = 4242;
      resp->error = 0;
      resp->flags = 0;
      CHECK_INT_EQ(seccomp_notify_respond(listener, resp), 0);
    }
    seccomp_notify_free(req, resp);
  }
  CHECK_CHILD_OK(unit_reap(pid));
}

/* ---- sending the notify fd ---------------------------------------------------------------- */

static void a_long_state_arrives_whole_with_exactly_one_fd(void)
{
  /* A non-blocking socket and a text far above the socket buffer: short writes and EAGAIN. */
  size_t len = 4u << 20;
  _cleanup_free_ char *text = malloc(len + 1);
  _cleanup_free_ char *got = malloc(len + 1);
  int sp[2], pfd[2];
  if (text == NULL || got == NULL || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0) {
    CHECK(!"setup");
    return;
  }
  for (size_t i = 0; i < len; i++)
    text[i] = (char)('a' + i % 26);
  text[len] = '\0';
  CHECK(pipe2(pfd, O_CLOEXEC) == 0);
  CHECK(fcntl(sp[1], F_SETFL, O_NONBLOCK) == 0);

  pid_t pid = fork();
  if (pid == 0) {
    _cleanup_error_ sr_error_t err = NULL;
    int failures = unit_failures;
    alarm(20);
    close(sp[0]);
    CHECK_OK(sr_seccomp_send_notify_fd(sp[1], pfd[1], text, &err), err);
    _exit(unit_failures > failures ? 1 : 0);
  }
  close(sp[1]);
  close(pfd[1]);
  int fd, n_fds;
  ssize_t n = recv_with_fd(sp[0], got, len, &fd, &n_fds);
  CHECK_INT_EQ(n, len);
  CHECK_INT_EQ(n_fds, 1);
  got[n > 0 ? n : 0] = '\0';
  CHECK(n > 0 && memcmp(got, text, len) == 0);
  CHECK_CHILD_OK(unit_reap(pid));
  /* The fd received is the pipe's write end: what goes in comes out of pfd[0]. */
  CHECK(fd >= 0 && write(fd, "z", 1) == 1);
  char z = 0;
  CHECK(read(pfd[0], &z, 1) == 1 && z == 'z');
  char tail[8];
  CHECK_INT_EQ(read(sp[0], tail, sizeof(tail)), 0);
  if (fd >= 0)
    close(fd);
  close(pfd[0]);
  close(sp[0]);
}

static void a_vanished_agent_is_an_error_not_a_sigpipe(void)
{
  _cleanup_error_ sr_error_t err = NULL;
  int sp[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0) {
    CHECK(!"socketpair");
    return;
  }
  close(sp[0]);
  CHECK(sr_seccomp_send_notify_fd(sp[1], 2, state_json, &err) < 0);
  CHECK_ERR_CONTAINS(err, "Broken pipe");
  sr_error_free(&err);
  CHECK(sr_seccomp_send_notify_fd(sp[1], -1, state_json, &err) < 0);
  CHECK_ERR_CONTAINS(err, "invalid arguments");
  close(sp[1]);
}

int main(void)
{
  alarm(120);
  base_seccomp_mode = unit_status_field("Seccomp");
  RUN(a_denied_syscall_fails_with_its_errno_ret);
  RUN(errno_without_errno_ret_means_eperm);
  RUN(a_default_errno_denies_everything_not_allowed);
  RUN(kill_process_kills_the_child_with_sigsys);
  RUN(a_rule_repeating_the_default_action_is_skipped);
  RUN(an_argument_condition_denies_only_the_matching_call);
  RUN(masked_eq_compares_the_masked_bits_with_value_two);
  RUN(conditions_on_one_argument_each_match_on_their_own);
  RUN(conditions_on_different_arguments_must_all_match);
  RUN(syscalls_missing_on_the_listed_architectures_are_skipped);
  RUN(a_large_filter_still_matches_exactly_its_names);
  RUN(the_log_flag_is_accepted_and_one_filter_is_loaded);
  RUN(tsync_filters_every_thread_and_only_when_asked);
  RUN(wait_killable_recv_is_refused_when_libseccomp_lacks_it);
  RUN(a_bad_rule_fails_naming_its_syscall);
  RUN(no_seccomp_section_loads_nothing);
  RUN(notify_hands_the_syscall_to_an_agent_over_the_listener_socket);
  RUN(a_long_state_arrives_whole_with_exactly_one_fd);
  RUN(a_vanished_agent_is_an_error_not_a_sigpipe);
  return unit_report();
}
