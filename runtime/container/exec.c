#include "build.h"

#include "exec.h"

#include "activity.h"
#include "cgroup.h"
#include "cleanup.h"
#include "landlock.h"
#include "lifecycle.h"
#include "log.h"
#include "mount.h"
#include "passwd.h"
#include "process_attrs.h"
#include "process_exec.h"
#include "state.h"
#include "sync.h"
#include "terminal.h"
#include "pidfd.h"
#include "proc.h"
#include "unix_socket.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <linux/sched.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

struct exec_ctx {
  struct sr_container *c;
  const struct sr_config *config;
  const struct sr_process *p;
  const struct sr_exec_opts *o;
  int init_pidfd;
  int ns_flags;
  int sync[2];
  int proc_fd; /* the host's procfs, opened before entering the container */
  int root_fd; /* the init's root, for a container without a mount namespace (else -1) */
  int console_fd;
  int notify_fd;
  int activity_fd; /* connected to the supervisor's activity.sock, or -1 */
  int cgroup_fd;
  struct sr_cgroup *cg;
  struct sr_seccomp_prog seccomp_prog;
  pid_t child, pid;
};

static int connect_activity_once(int dirfd)
{
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return -1;
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/%s", dirfd, SR_ACT_SOCKET);
  if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
    close(fd);
    return -1;
  }
  return fd;
}

static int connect_activity(const struct sr_container *c)
{
  int fd = connect_activity_once(c->dirfd);
  /* Before the fork: this process followed in the kernel, so that what it starts in the
   * container is, from its fork on. */
  int followed = fd < 0 ? 0 : sr_activity_follow_me(fd);
  if (followed == 0)
    return fd;
  if (followed == SR_ACT_NOT_ANSWERED)
    sr_warn("exec: container \"%s\": its supervisor did not answer within %d ms: what this "
            "exec starts is not followed in its activity record (which counts it in "
            "programs.unfollowedExecs)",
            c->id, SR_ACT_SNAPSHOT_MS);
  /* The listener goes over a new connection: this one is given up, or was closed by a
   * supervisor of an older seerun, which ends a connection on a request it does not know (it
   * follows by pid namespace). */
  close(fd);
  return connect_activity_once(c->dirfd);
}

__attribute__((noreturn)) static void child_fail(int fd, sr_error_t *err)
{
  sr_sync_send_error(fd, *err);
  _exit(1);
}

/* The process itself, inside the container, after the intermediate joined its namespaces. */
__attribute__((noreturn)) static void exec_child(struct exec_ctx *x)
{
  sr_error_t err = NULL;
  int fd = x->sync[1];
  const struct sr_process *p = x->p;
  int32_t host_pid;
  _cleanup_free_ char *exec_path = NULL;
  _cleanup_free_ char *notify_state = NULL;
  struct sr_exec_target t = {.process = p, .notify_sock = x->notify_fd,
                             .activity_sock = x->activity_fd,
                             .preserve_fds = x->o->preserve_fds};
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || sr_sync_expect(fd, SYNC_INIT_INFO, &host_pid, &err) < 0)
    child_fail(fd, &err);
  if (setsid() < 0) {
    sr_error_sys(&err, "setsid");
    child_fail(fd, &err);
  }
  /* Before a chroot below: root.path need not have a /proc. */
  if (sr_process_exec_runtime_identity(&t.runtime_exe, &err) < 0)
    child_fail(fd, &err);
  if (p->terminal && sr_terminal_setup(x->console_fd, p, false, &err) < 0)
    child_fail(fd, &err);
  /* No mount namespace to join: the init's root (root.path) is the process's too. */
  if (x->root_fd >= 0) {
    if (sr_mount_rootfs_chroot(x->root_fd, &err) < 0)
      child_fail(fd, &err);
    close(x->root_fd);
  }
  /* oom_score_adj: written by the parent (sr_exec), which can; linux.personality
   * is the init's only. */
  if (sr_process_attrs_apply(p, NULL, x->proc_fd, &err) < 0)
    child_fail(fd, &err);
  if (sr_process_exec_enter_cwd(p->cwd, &err) < 0 ||
      sr_process_exec_find_executable(p, &exec_path, &err) < 0)
    child_fail(fd, &err);
  if (x->notify_fd >= 0) {
    /* The same document as the init's (an agent such as runc's seccompagent drops a message
     * without "fds", leaving the process blocked in its first notified syscall): the
     * container's state (its init's pid), and the exec'd process's own pid. */
    const struct sr_config *cf = x->config;
    struct sr_oci_state s = {.id = x->c->id,
                             .status = "running",
                             .pid = x->c->rec->pid,
                             .bundle = x->c->rec->bundle,
                             .rootfs = x->c->rec->rootfs,
                             .created = x->c->rec->created,
                             .owner = "",
                             .annotation_keys = cf->annotation_keys,
                             .annotation_values = cf->annotation_values,
                             .n_annotations = cf->n_annotations};
    const struct sr_seccomp *sc = cf->linux_.seccomp;
    if (sr_state_process_json(&s, host_pid, sc ? sc->listener_metadata : NULL, &notify_state,
                              &err) < 0)
      child_fail(fd, &err);
  }
  close(x->proc_fd);
  /* The same confinement as the init's: a descriptor the exec'd process inherits from the
   * engine (or --preserve-fds) grants nothing beneath it. */
  int landlock_fd = -1;
  if (x->o->landlock.abi &&
      (sr_landlock_prepare(&x->o->landlock, &landlock_fd, &err) < 0 ||
       sr_landlock_restrict(&x->o->landlock, landlock_fd, x->o->preserve_fds,
                            p->no_new_privileges, &err) < 0))
    child_fail(fd, &err);
  /* HOME from the container's /etc/passwd (we are in its mount namespace, its root is ours)
   * unless the process's env sets it, as runc does. */
  struct sr_process proc = *p;
  _cleanup_free_ char **env = NULL;
  _cleanup_free_ char *home = NULL;
  env = sr_passwd_env_with_home(proc.env, proc.n_env, proc.user.uid, &proc.n_env, &home);
  if (env)
    proc.env = env;
  t.process = &proc;
  t.seccomp = x->config->linux_.seccomp;
  t.seccomp_prog = &x->seccomp_prog;
  t.builtin_seccomp = x->o->builtin_seccomp;
  t.notify_state = notify_state;
  t.exec_path = exec_path;
  /* From here on the process outlives `seerun exec --detach`. */
  if (prctl(PR_SET_PDEATHSIG, 0) < 0) {
    sr_error_sys(&err, "prctl PR_SET_PDEATHSIG");
    child_fail(fd, &err);
  }
  SR_KILL_POINT("exec-process.before-exec");
  /* The sync socket closes at execve (close-on-exec): that is the parent's signal of success. */
  sr_process_exec(&t, &err);
  child_fail(fd, &err);
}

/* Joins every namespace of the container's init at once through its pidfd, then forks the
 * process (a pid namespace only applies to children) as the runtime's own child. */
__attribute__((noreturn)) static void exec_intermediate(struct exec_ctx *x)
{
  sr_error_t err = NULL;
  int fd = x->sync[1];
  close(x->sync[0]);
  close(x->c->dirfd);
  if (x->cgroup_fd >= 0)
    close(x->cgroup_fd);
  /* Nothing in the container may read our memory or open /proc/<pid>/exe while we run the
   * runtime's code inside it. */
  if (prctl(PR_SET_DUMPABLE, 0) < 0 || prctl(PR_SET_PDEATHSIG, SIGKILL) < 0) {
    sr_error_sys(&err, "prctl");
    child_fail(fd, &err);
  }
  if (sr_sync_expect(fd, SYNC_GO, NULL, &err) < 0)
    child_fail(fd, &err);
  if (x->ns_flags && setns(x->init_pidfd, x->ns_flags) < 0) {
    sr_error_sys(&err, "join the namespaces of the container (setns flags %#x)", x->ns_flags);
    child_fail(fd, &err);
  }
  SR_KILL_POINT("exec-intermediate.after-join");
  close(x->init_pidfd);
  struct clone_args args = {.flags = CLONE_PARENT};
  pid_t pid = (pid_t)syscall(SYS_clone3, &args, sizeof(args));
  if (pid < 0) {
    sr_error_sys(&err, "clone the exec process");
    child_fail(fd, &err);
  }
  if (pid == 0)
    exec_child(x);
  SR_KILL_POINT("exec-intermediate.after-clone");
  sr_sync_send(fd, SYNC_INIT_PID, pid, &err);
  _exit(0);
}

/* Whether the namespace of kind k of process pid differs from the runtime's (true when it
 * cannot be told: joining our own namespace again is harmless, missing one is not). */
static bool init_ns_is_not_ours(pid_t pid, int k)
{
  char theirs[64], ours[64];
  struct stat a, b;
  snprintf(theirs, sizeof(theirs), "/proc/%d/ns/%s", (int)pid, sr_config_ns_proc_name(k));
  snprintf(ours, sizeof(ours), "/proc/self/ns/%s", sr_config_ns_proc_name(k));
  if (stat(ours, &b) < 0)
    return false; /* the kernel has no such namespace */
  if (stat(theirs, &a) < 0)
    return true;
  return a.st_dev != b.st_dev || a.st_ino != b.st_ino;
}

bool sr_exec_in_our_netns(const struct sr_container *c)
{
  return !init_ns_is_not_ours(c->rec->pid, SR_NS_NET);
}

static int prepare(struct exec_ctx *x, sr_error_t *err)
{
  const struct sr_state_record *r = x->c->rec;
  enum sr_status st = sr_container_status(x->c);
  if (st == SR_STATUS_PAUSED && !x->o->ignore_paused)
    return sr_error_make(err, 0, "cannot exec in a paused container \"%s\" (use --ignore-paused)",
                         x->c->id);
  if (st != SR_STATUS_RUNNING && st != SR_STATUS_CREATED && st != SR_STATUS_PAUSED)
    return sr_error_make(err, 0, "cannot exec in a %s container \"%s\"",
                         sr_container_status_name(st), x->c->id);
  x->init_pidfd = sr_pidfd_open(r->pid);
  if (x->init_pidfd < 0 || !sr_proc_is(r->pid, r->pid_start))
    return sr_error_make(err, ESRCH, "container \"%s\" not running", x->c->id);
  /* The init's pid is read back from state.json: rewritten to name a host process (with its
   * start time), exec would join the host's namespaces, as host root. */
  if (x->o->require_own_userns && !init_ns_is_not_ours(r->pid, SR_NS_USER))
    return sr_error_make(err, 0, "container \"%s\": the init that state.json names (pid %d) is "
                                 "in the runtime's own user namespace, which no container of an "
                                 "enforcing profile is: state.json is not what seerun wrote",
                         x->c->id, (int)r->pid);
  /* --ignore-paused: the process joins the frozen cgroup and stays frozen until `resume`,
   * which takes the container's lock: held, neither would ever return.  The init is pinned
   * by its pidfd from here on; a delete meanwhile kills the process with the cgroup. */
  if (st == SR_STATUS_PAUSED)
    flock(x->c->dirfd, LOCK_UN);
  /* Every namespace of the init that is not the runtime's own, whatever config.json says: the
   * state directory keeps the engine's config, and the policy may have put the container in
   * more (its user namespace; new pid, ipc, uts or cgroup namespaces for the host's). Joining
   * only the config's would leave the process in the host's user namespace: host root. */
  for (int k = 0; k < SR_NS_COUNT; k++)
    if (x->config->linux_.namespaces[k].present || init_ns_is_not_ours(r->pid, k))
      x->ns_flags |= sr_config_ns_clone_flag(k);
  if (x->p->terminal && x->console_fd < 0) {
    if (x->o->console_socket == NULL)
      return sr_error_make(err, 0, "cannot allocate a terminal without --console-socket "
                                   "(--tty)");
    if (sr_unix_socket_connect_once(x->o->console_socket, "--console-socket", &x->console_fd, NULL,
                                    err) < 0)
      return -1;
  }
  const struct sr_seccomp *sc = x->config->linux_.seccomp;
  /* The socket create judged and connected to, by its inode: the name is config.json's, and
   * any writer of its directory may have swapped it since (for a symlink to an engine's). */
  const struct sr_state_record *rec = x->c->rec;
  if (sc && sc->uses_notify && rec->profile && rec->listener_ino == 0)
    return sr_error_make(err, 0, "linux.seccomp.listenerPath `%s`: create recorded no socket "
                                 "the policy judged: not connected to",
                         sc->listener_path ? sc->listener_path : "");
  if (sc && sc->uses_notify &&
      (rec->listener_ino
           ? sr_unix_socket_connect_inode(sc->listener_path, "linux.seccomp.listenerPath",
                                          rec->listener_dev, rec->listener_ino, &x->notify_fd, err)
           : sr_unix_socket_connect_once(sc->listener_path, "linux.seccomp.listenerPath",
                                         &x->notify_fd, NULL, err)) < 0)
    return -1;
  /* The supervisor that keeps the activity record gets this process's listener too; where it
   * has gone, the plain filter (the record is incomplete: its supervisor is not there). */
  if (x->o->builtin_seccomp && x->c->rec->supervisor_activity)
    x->activity_fd = connect_activity(x->c);
  int cache = sc ? sr_seccomp_cache_open(x->c->rootfd) : -1;
  int prepared = sr_seccomp_cache_prepare(sc, cache, &x->seccomp_prog, err);
  if (cache >= 0)
    close(cache);
  if (prepared < 0)
    return -1;
  x->proc_fd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
  struct statfs sfs;
  if (x->proc_fd < 0 || fstatfs(x->proc_fd, &sfs) < 0 || sfs.f_type != PROC_SUPER_MAGIC)
    return sr_error_make(err, 0, "/proc is not a procfs");
  /* The runtime's mount namespace (permissive only): setns would not give the process the
   * container's root, which the init got by chroot.  Its root as the init has it, checked to
   * be the init's after the open (the pid is pinned while the init lives). */
  if (!(x->ns_flags & CLONE_NEWNS)) {
    char root[64];
    snprintf(root, sizeof(root), "%d/root", (int)r->pid);
    x->root_fd = openat(x->proc_fd, root, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (x->root_fd < 0 || !sr_proc_is(r->pid, r->pid_start))
      return sr_error_make(err, x->root_fd < 0 ? errno : ESRCH,
                           "container \"%s\": the root of its init (pid %d)", x->c->id,
                           (int)r->pid);
  }
  if (r->cgroup_version) {
    if (sr_cgroup_new(SR_CGROUP_ROOT, r->cgroup_path, &x->cg, err) < 0 ||
        sr_cgroup_open_dir(x->cg, &x->cgroup_fd, err) < 0)
      return -1;
  }
  return sr_sync_pair(x->sync, err);
}

/* End of file on the sync socket: the process exec'd (the socket was close-on-exec).  A message:
 * its error. */
static int wait_exec(int fd, sr_error_t *err)
{
  struct sr_sync_msg m;
  ssize_t r;
  do
    r = recv(fd, &m, sizeof(m), 0);
  while (r < 0 && errno == EINTR);
  if (r == 0)
    return 0;
  if (r < 0)
    return sr_error_sys(err, "sync: receive");
  m.text[sizeof(m.text) - 1] = '\0';
  if (m.type == SYNC_ERROR)
    return sr_error_make(err, m.value, "%s", m.text);
  return sr_error_make(err, 0, "sync: unexpected message %u from the exec process", m.type);
}

/* The exec process (CLONE_PARENT) holds the children's end of the channel too, and waits for
 * us: an intermediate that dies before it sends the process's pid would leave the channel open
 * and exec waiting forever.  So its exit is watched as well. */
static int expect_process_pid(struct exec_ctx *x, int32_t *pid, sr_error_t *err)
{
  _cleanup_close_ int pidfd = sr_pidfd_open(x->child);
  struct pollfd p[2] = {{x->sync[0], POLLIN, 0}, {pidfd, POLLIN, 0}};
  while (poll(p, pidfd >= 0 ? 2 : 1, -1) < 0)
    if (errno != EINTR)
      return sr_error_sys(err, "sync: poll");
  if (!(p[0].revents & (POLLIN | POLLHUP | POLLERR)))
    return sr_error_make(err, 0, "the exec intermediate process exited before it reported the "
                                 "process it started");
  return sr_sync_expect(x->sync[0], SYNC_INIT_PID, pid, err);
}

static void abort_exec(struct exec_ctx *x)
{
  pid_t pids[2] = {x->pid, x->child};
  for (int i = 0; i < 2; i++)
    if (pids[i] > 0) {
      kill(pids[i], SIGKILL);
      while (waitpid(pids[i], NULL, 0) < 0 && errno == EINTR)
        ;
    }
}

static void release(struct exec_ctx *x)
{
  int *fds[] = {&x->init_pidfd, &x->sync[0],   &x->sync[1],     &x->proc_fd,
                &x->root_fd,    &x->notify_fd, &x->cgroup_fd,   &x->activity_fd};
  for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
    if (*fds[i] >= 0) {
      close(*fds[i]);
      *fds[i] = -1;
    }
  if (x->console_fd >= 0 && x->console_fd != x->o->console_fd)
    close(x->console_fd);
  if (x->cg)
    sr_cgroup_free(x->cg);
  sr_seccomp_cache_prog_release(&x->seccomp_prog);
}

/* From the clone on: the intermediate and the process it starts, which the caller kills
 * when this fails (abort_exec). */
static int exec_started(struct exec_ctx *x, struct sr_exec_result *res, sr_error_t *err)
{
  close(x->sync[1]);
  x->sync[1] = -1;
  int32_t pid;
  if ((x->cgroup_fd < 0 && x->cg && sr_cgroup_attach(x->cg, x->child, err) < 0) ||
      sr_sync_send(x->sync[0], SYNC_GO, 0, err) < 0 ||
      expect_process_pid(x, &pid, err) < 0)
    return -1;
  x->pid = pid;
  SR_KILL_POINT("exec.after-pid");
  while (waitpid(x->child, NULL, 0) < 0 && errno == EINTR)
    ;
  x->child = 0;
  _cleanup_close_ int pidfd = sr_pidfd_open(x->pid);
  if (pidfd < 0)
    return sr_error_sys(err, "pidfd_open %d", x->pid);
  if (sr_process_attrs_set_oom_score_adj(x->p, x->pid, err) < 0 ||
      sr_sync_send(x->sync[0], SYNC_INIT_INFO, x->pid, err) < 0 || wait_exec(x->sync[0], err) < 0)
    return -1;
  SR_KILL_POINT("exec.after-exec");
  if (x->o->pid_file && sr_statedir_write_pid_file(x->o->pid_file, x->pid, err) < 0)
    return -1;
  SR_KILL_POINT("exec.after-pid-file");
  res->pidfd = steal_fd(pidfd);
  res->pid = x->pid;
  return 0;
}

int sr_exec(struct sr_container *c, const struct sr_config *config, const struct sr_process *p,
            const struct sr_exec_opts *o, struct sr_exec_result *res, sr_error_t *err)
{
  _cleanup_(release) struct exec_ctx x = {
      .c = c, .config = config, .p = p, .o = o, .init_pidfd = -1, .sync = {-1, -1},
      .proc_fd = -1, .root_fd = -1, .console_fd = o->console_fd, .notify_fd = -1,
      .cgroup_fd = -1, .activity_fd = -1};
  if (prepare(&x, err) < 0)
    return -1;
  struct clone_args args = {.exit_signal = SIGCHLD};
  if (x.cgroup_fd >= 0) {
    args.flags |= CLONE_INTO_CGROUP;
    args.cgroup = (uint64_t)x.cgroup_fd;
  }
  fflush(NULL);
  x.child = (pid_t)syscall(SYS_clone3, &args, sizeof(args));
  if (x.child < 0)
    return sr_error_sys(err, "clone");
  if (x.child == 0)
    exec_intermediate(&x);
  SR_KILL_POINT("exec.after-clone");
  if (exec_started(&x, res, err) < 0) {
    abort_exec(&x);
    return -1;
  }
  return 0;
}
