#include "build.h"

#include "supervisor.h"

#include <sys/capability.h>

#include "cleanup.h"
#include "activity.h"
#include "egress_proxy.h"
#include "egress_record.h"
#include "fd_pass.h"
#include "json.h"
#include "fileio.h"
#include "pidfd.h"
#include "proc.h"
#include "rfc3339.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/prctl.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* What stays root here only writes the audit log (root's own file) and the state directory's
 * activity.json, and stops the proxy: every capability but CAP_KILL goes, from the bounding set
 * too, and no_new_privs is set.  With the activity record, CAP_SYS_PTRACE stays as well: it is
 * what reading /proc/<pid>/exe of a container process takes (another user namespace, more
 * capabilities than ours); nothing else of the container's is read.  With its files recorded,
 * CAP_DAC_READ_SEARCH too: the code sets its directories' modes, and a chmod 0 must not hide a
 * directory from the walk (which reads names and stats, never a file's contents). */
static int drop_privileges(bool ptrace_read, bool dir_read)
{
  for (int c = 0; c <= CAP_LAST_CAP; c++)
    if (c != CAP_KILL && !(ptrace_read && c == CAP_SYS_PTRACE) &&
        !(dir_read && c == CAP_DAC_READ_SEARCH) && prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0 &&
        errno != EINVAL)
      return -1;
  cap_t caps = cap_init();
  cap_value_t keep[] = {CAP_KILL, CAP_SYS_PTRACE, CAP_DAC_READ_SEARCH};
  int n = ptrace_read ? (dir_read ? 3 : 2) : 1;
  int r = caps == NULL || cap_set_flag(caps, CAP_PERMITTED, n, keep, CAP_SET) < 0 ||
                  cap_set_flag(caps, CAP_EFFECTIVE, n, keep, CAP_SET) < 0 || cap_set_proc(caps) < 0
              ? -1
              : 0;
  if (caps)
    cap_free(caps);
  if (r == 0 && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
    r = -1;
  return r;
}

static void write_record(const struct sr_egress_record *rec, int dirfd)
{
  _cleanup_gen_ sr_json_gen_t g = NULL;
  sr_error_t err = NULL;
  const unsigned char *buf;
  size_t len;
  if (dirfd < 0 || sr_json_gen_new(&g, false, &err) < 0) {
    sr_error_free(&err);
    return;
  }
  sr_egress_record_to_json(rec, g);
  if (sr_json_gen_buf(g, &buf, &len, &err) < 0 ||
      sr_fileio_write_atomic(dirfd, SR_SUPERVISOR_EGRESS_FILE, buf, len, 0600, &err) < 0)
    sr_error_free(&err);
}

/* The descriptors the supervisor's loop watches, beyond the init's pidfd and the proxy's. */
struct watched {
  int sock[1 + 16]; /* hand-over sockets: the init's, then exec's connections; -1: free */
  int listener[SR_ACT_LISTENERS];
  struct sr_act_listener_seq seq[SR_ACT_LISTENERS]; /* each listener's (reset when it goes) */
  int waiter[16]; /* connections waiting for the record (delete): closed once it is written */
};

static void add_fd(int *set, size_t n, int fd, uint64_t *refused)
{
  for (size_t i = 0; i < n; i++)
    if (set[i] < 0) {
      set[i] = fd;
      return;
    }
  close(fd); /* over the bound: that process's denials fail with ENOSYS, unseen */
  if (refused)
    (*refused)++;
}

#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SR_SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#else
#define SR_SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOCTL_NOTIF_SET_FLAGS
#endif
#define SR_SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP 1ULL

#define NSOCK (sizeof(((struct watched *)0)->sock) / sizeof(int))
#define NWAIT (sizeof(((struct watched *)0)->waiter) / sizeof(int))

/* Ends a connection with an orderly EOF: what it sent and nobody read is read first (a
 * socket closed with unread data resets the connection, which a waiting delete would see
 * before EOF); descriptors passed in it are closed. */
static void end_connection(int fd)
{
  for (int n = 0; n < 64; n++) {
    char msg[16] = "";
    int l = sr_activity_recv_listener(fd, msg, sizeof(msg));
    if (l >= 0)
      close(l);
    else if (msg[0] == '\0')
      break; /* nothing more (or its end) */
  }
  close(fd);
}

/* The record is written: those waiting for it are told (their connection, any still unread
 * and any not yet accepted, end), before the rest of the supervisor's end, which nobody waits
 * for.  A request that came with the init's end, in the same poll, is answered so too. */
static void release_waiters(const struct sr_supervisor_config *cfg, struct watched *w)
{
  if (cfg->activity_listen >= 0) {
    fcntl(cfg->activity_listen, F_SETFL, O_NONBLOCK);
    for (int n = 0; n < 256; n++) {
      int c = accept4(cfg->activity_listen, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (c < 0)
        break;
      end_connection(c);
    }
    close(cfg->activity_listen);
  }
  for (size_t i = 0; i < NSOCK; i++)
    if (w->sock[i] >= 0)
      end_connection(w->sock[i]);
  for (size_t i = 0; i < NWAIT; i++)
    if (w->waiter[i] >= 0)
      end_connection(w->waiter[i]);
}

/* A listener done with (every process under its filter has gone, or it failed): its slot free,
 * its numbering forgotten. */
static void drop_listener(struct watched *w, size_t i)
{
  close(w->listener[i]);
  w->listener[i] = -1;
  w->seq[i] = (struct sr_act_listener_seq){0};
}

/* `seerun exec`'s request to be followed: the map, or "N" when processes are followed by their
 * pid namespace.  An exec that gave up waiting has closed its end by now (the send fails): what
 * it started is not followed, and the record says so. */
static void answer_follow(struct sr_activity *act, int map, int sock)
{
  if (map < 0) {
    (void)!send(sock, "N", 1, MSG_NOSIGNAL | MSG_DONTWAIT);
    return;
  }
  if (sr_fd_pass_send(sock, map, "M", 1) < 0) {
    act->execs_unfollowed++;
    act->dirty = true;
  }
}

static __attribute__((noreturn)) void supervise(const struct sr_supervisor_config *cfg,
                                                int listen_fd, int init_pidfd,
                                                struct sr_act_files *files)
{
  static struct sr_egress_record rec; /* large: not on the stack */
  static struct sr_activity act;
  static struct watched w;
  rec.audit = cfg->audit;
  pid_t proxy = -1;
  int events = -1;
  sr_error_t err = NULL;
  if (cfg->egress) {
    struct sr_egress_proxy_config pc = {
        .policy = cfg->egress,
        .narrow = cfg->narrow,
        .n_narrow = cfg->n_narrow,
        .extra = cfg->extra,
        .n_extra = cfg->n_extra,
        .profile = cfg->profile,
        .listen_fd = listen_fd,
        .max_connections = 256,
        .idle_seconds = 300,
        .uid = SR_SUPERVISOR_PROXY_UID,
        .gid = SR_SUPERVISOR_PROXY_GID,
    };
    if (sr_egress_proxy_start(&pc, &proxy, &events, &err) < 0)
      _exit(125);
    close(listen_fd); /* the proxy holds it now */
  }
  if (drop_privileges(cfg->activity, files != NULL) < 0) {
    if (proxy > 0)
      kill(proxy, SIGKILL);
    _exit(125);
  }
  /* Not followed in the kernel: unfiltered until now (the events of create's last moments are
   * few), the classic filter attached once ready, off create's path. */
  if (cfg->activity && cfg->exec_fd >= 0 && cfg->exec_map_fd < 0)
    (void)sr_activity_exec_filter(cfg->exec_fd);
  struct sr_act_cgroup cg = {cfg->cg_memory_fd, cfg->cg_pids_fd};
  size_t reqsz = 0, respsz = 0;
  _cleanup_free_ struct seccomp_notif *req = NULL;
  _cleanup_free_ struct seccomp_notif_resp *resp = NULL;
  for (size_t i = 0; i < NSOCK; i++)
    w.sock[i] = -1;
  for (size_t i = 0; i < SR_ACT_LISTENERS; i++)
    w.listener[i] = -1;
  for (size_t i = 0; i < NWAIT; i++)
    w.waiter[i] = -1;
  if (cfg->activity) {
    sr_rfc3339_now(act.started, sizeof(act.started));
    act.seccomp_visible = cfg->seccomp_unseen == NULL;
    act.seccomp_unseen = cfg->seccomp_unseen;
    act.execs_watched = cfg->exec_fd >= 0;
    act.execs_in_kernel = cfg->exec_fd >= 0 && cfg->exec_map_fd >= 0;
    act.exec_map = act.execs_in_kernel ? cfg->exec_map_fd : -1;
    act.files = files;
    act.files_unseen = cfg->files_unseen;
    sr_activity_exec_seed(&act, cfg->init_pid);
    w.sock[0] = cfg->activity_sock;
    if (sr_activity_notif_sizes(&reqsz, &respsz) < 0 || (req = calloc(1, reqsz)) == NULL ||
        (resp = calloc(1, respsz)) == NULL)
      _exit(125);
    sr_activity_read_cgroup(&act, &cg);
    sr_activity_flush(&act, cfg->state_dirfd);
  }
  struct timespec last;
  clock_gettime(CLOCK_MONOTONIC, &last);
  for (;;) {
    /* Only the descriptors in use, so that a burst of denials costs little per call. */
    struct pollfd p[4 + NSOCK + SR_ACT_LISTENERS];
    size_t slot[NSOCK + SR_ACT_LISTENERS];
    size_t np = 0, nsock = 0;
    p[np++] = (struct pollfd){init_pidfd, POLLIN, 0};
    p[np++] = (struct pollfd){events, POLLIN, 0}; /* -1: ignored by poll */
    p[np++] = (struct pollfd){cfg->activity ? cfg->activity_listen : -1, POLLIN, 0};
    p[np++] = (struct pollfd){cfg->activity ? cfg->exec_fd : -1, POLLIN, 0};
    for (size_t i = 0; i < NSOCK; i++)
      if (w.sock[i] >= 0) {
        slot[np - 4] = i;
        p[np++] = (struct pollfd){w.sock[i], POLLIN, 0};
      }
    nsock = np - 4;
    for (size_t i = 0; i < SR_ACT_LISTENERS; i++)
      if (w.listener[i] >= 0) {
        slot[np - 4] = i;
        p[np++] = (struct pollfd){w.listener[i], POLLIN, 0};
      }
    int r = poll(p, np, cfg->activity ? SR_ACT_FLUSH_MS : -1);
    if (r < 0 && errno != EINTR)
      break;
    if (r < 0)
      continue;
    if (p[1].revents & (POLLIN | POLLHUP)) {
      if (sr_egress_proxy_events_drain(events, sr_egress_record_add, &rec) != 0)
        break; /* the proxy has gone */
    }
    if (p[3].revents & POLLIN)
      sr_activity_exec_drain(&act, cfg->exec_fd, cfg->pidns);
    if (p[2].revents & POLLIN) {
      int c = accept4(cfg->activity_listen, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (c >= 0)
        add_fd(w.sock, NSOCK, c, &act.listeners_refused);
    }
    for (size_t k = 0; k < nsock; k++)
      if (p[4 + k].revents & (POLLIN | POLLHUP | POLLERR)) {
        size_t i = slot[k];
        char msg[16] = "";
        int l = sr_activity_recv_listener(w.sock[i], msg, sizeof(msg));
        if (l < 0 && msg[0] == 'W') {
          /* A delete that waits for the record: told when it is written. */
          add_fd(w.waiter, NWAIT, w.sock[i], NULL);
          w.sock[i] = -1;
          continue;
        }
        if (l < 0 && msg[0] == 'T') {
          /* `seerun exec`, before it forks: the map, in which it follows itself (so that
           * what it starts in the container is followed from its fork on); nothing when
           * processes are followed by their pid namespace.  The connection stays, for the
           * listener its process hands over. */
          answer_follow(&act, cfg->exec_map_fd, w.sock[i]);
          continue;
        }
        if (l < 0 && msg[0] == 'S') {
          /* kill, delete --force: what runs before it is signalled (the first request: a
           * delete after a kill finds what the kill left); then the answer. */
          if (!act.at_kill.taken) {
            sr_activity_snapshot_procs(&act, &act.at_kill, &cg);
            snprintf(act.at_kill.at, sizeof(act.at_kill.at), "%s", msg + 1);
          }
          (void)!send(w.sock[i], "", 1, MSG_NOSIGNAL | MSG_DONTWAIT);
        }
        if (l >= 0) {
          act.listeners++;
          /* The caller and we are woken on the same CPU (Linux 6.6; older: ignored). */
          uint64_t sync_wake = SR_SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP;
          ioctl(l, SR_SECCOMP_IOCTL_NOTIF_SET_FLAGS, sync_wake);
          add_fd(w.listener, SR_ACT_LISTENERS, l, &act.listeners_refused);
          act.dirty = true;
        }
        /* One hand-over per connection (the init's socket, too: start is once). */
        close(w.sock[i]);
        w.sock[i] = -1;
      }
    for (size_t k = nsock; k < np - 4; k++) {
      size_t i = slot[k];
      short re = p[4 + k].revents;
      if (re & POLLIN) {
        if (sr_activity_serve(&act, w.listener[i], &w.seq[i], req, reqsz, resp, respsz) < 0)
          drop_listener(&w, i);
      } else if (re & (POLLHUP | POLLERR | POLLNVAL)) {
        drop_listener(&w, i);
      }
    }
    if (p[0].revents & POLLIN)
      break; /* the container's init has gone */
    if (cfg->activity) {
      struct timespec now;
      clock_gettime(CLOCK_MONOTONIC, &now);
      if ((now.tv_sec - last.tv_sec) * 1000 + (now.tv_nsec - last.tv_nsec) / 1000000 >=
          SR_ACT_FLUSH_MS) {
        last = now;
        sr_activity_read_cgroup(&act, &cg);
        if (act.dirty)
          sr_activity_flush(&act, cfg->state_dirfd);
      }
    }
  }
  if (cfg->activity && cfg->exec_fd >= 0)
    sr_activity_exec_drain(&act, cfg->exec_fd, cfg->pidns);
  if (cfg->activity) {
    /* Requests to be followed still unread: too late to follow what they start. */
    for (size_t i = 0; i < NSOCK; i++) {
      char msg[16] = "";
      int l = w.sock[i] >= 0 ? sr_activity_recv_listener(w.sock[i], msg, sizeof(msg)) : -1;
      if (l >= 0)
        close(l);
      else if (msg[0] == 'T' && cfg->exec_map_fd >= 0)
        act.execs_unfollowed++;
    }
    /* What is left in the cgroup once the init has gone (the kernel has killed the rest of a
     * pid namespace by now: what is listed escaped it, or has no pid namespace of its own). */
    sr_activity_snapshot_procs(&act, &act.at_stop, &cg);
    sr_activity_read_cgroup(&act, &cg);
    /* What the code left in its writable places, before their mounts are let go. */
    if (act.files)
      sr_activity_files_walk(act.files);
  }
  if (proxy > 0) {
    sr_egress_proxy_stop(proxy, events, 2000, sr_egress_record_add, &rec);
    sr_egress_record_close(&rec);
    write_record(&rec, cfg->state_dirfd);
  }
  if (cfg->activity) {
    sr_activity_finish(&act, cfg->audit, cfg->state_dirfd);
    release_waiters(cfg, &w);
  }
  _exit(0);
}

/* Puts each of src at the matching target number (-1: left closed), whatever numbers they
 * had, and closes everything from first_free on. */
static int place_fds(const int *src, const int *target, size_t n, int first_free)
{
  int tmp[64];
  if (n > sizeof(tmp) / sizeof(tmp[0]))
    return -1;
  for (size_t i = 0; i < n; i++)
    if ((tmp[i] = src[i] >= 0 ? fcntl(src[i], F_DUPFD_CLOEXEC, 64) : -1) < 0 && src[i] >= 0)
      return -1;
  for (size_t i = 0; i < n; i++)
    if (tmp[i] >= 0 && dup2(tmp[i], target[i]) < 0)
      return -1;
  syscall(SYS_close_range, (unsigned)first_free, ~0U, 0);
  return 0;
}

int sr_supervisor_start(const struct sr_supervisor_config *cfg, pid_t *pid, uint64_t *start_time,
                        int *ready_fd, sr_error_t *err)
{
  _cleanup_close_ int listen_fd = -1;
  if (cfg->egress && sr_egress_proxy_listen_in(cfg->init_pidfd, &listen_fd, err) < 0)
    return -1;
  int ready[2];
  if (pipe2(ready, O_CLOEXEC) < 0)
    return sr_error_sys(err, "supervisor: pipe");
  pid_t p = fork();
  if (p < 0) {
    close(ready[0]);
    close(ready[1]);
    return sr_error_sys(err, "supervisor: fork");
  }
  if (p == 0) {
    /* Its own session, nothing of the caller's: the engine waits for EOF on what it passed. */
    setsid();
    prctl(PR_SET_NAME, "seerun-supervise", 0, 0, 0);
    int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
    struct sr_supervisor_config c = *cfg;
    sr_error_t perr = NULL;
    if (c.prepare && c.prepare(c.prepare_data, &c, &perr) < 0) {
      /* Why, for sr_supervisor_ready: the text instead of the ready byte. */
      _cleanup_free_ char *t = sr_error_text(perr);
      const char *why = t && t[0] ? t : "it could not prepare";
      (void)!write(ready[1], why, strlen(why));
      _exit(125);
    }
    sr_error_free(&perr);
    /* The places' descriptors after the fixed ones: the mount namespace at 12, the map of
     * followed processes at 13, then each place's root and lower layer. */
    static struct sr_act_places places;
    int src[14 + 2 * SR_ACT_PLACES] = {devnull, devnull, devnull, listen_fd, c.init_pidfd,
                                       ready[1], c.activity_sock, c.activity_listen,
                                       c.state_dirfd, c.cg_memory_fd, c.cg_pids_fd,
                                       c.exec_fd, -1, c.exec_map_fd};
    int target[14 + 2 * SR_ACT_PLACES];
    size_t nfd = 14;
    for (size_t i = 0; i < 14; i++)
      target[i] = (int)i;
    if (c.places) {
      places = *c.places;
      src[12] = places.mntns_fd;
      places.mntns_fd = places.mntns_fd >= 0 ? 12 : -1;
      for (size_t i = 0; i < places.n; i++) {
        int *fds[2] = {&places.p[i].fd, &places.p[i].lower_fd};
        for (int k = 0; k < 2; k++)
          if (*fds[k] >= 0) {
            src[nfd] = *fds[k];
            target[nfd] = (int)nfd;
            *fds[k] = (int)nfd++;
          }
      }
    }
    if (devnull < 0 || place_fds(src, target, nfd, (int)nfd) < 0)
      _exit(125);
#define AT(f, n) c.f = c.f >= 0 ? n : -1
    AT(activity_sock, 6);
    AT(activity_listen, 7);
    AT(state_dirfd, 8);
    AT(cg_memory_fd, 9);
    AT(cg_pids_fd, 10);
    AT(exec_fd, 11);
    AT(exec_map_fd, 13);
#undef AT
    c.init_pidfd = 4;
    signal(SIGPIPE, SIG_IGN);
    /* The baseline of the writable places, before create returns: none of the container's
     * code has run yet. */
    struct sr_act_files *files = NULL;
    if (c.activity && c.places) {
      files = sr_activity_files_new(&places);
      if (files == NULL)
        _exit(125);
      sr_activity_files_baseline(files);
    }
    (void)!write(5, "", 1); /* a NUL: ready (anything else is why not) */
    close(5);
    supervise(&c, 3, 4, files);
  }
  close(ready[1]);
  /* Its identity now (the state records it before the supervisor is ready); its baseline is
   * waited for by sr_supervisor_ready. */
  if (sr_proc_stat(p, start_time, NULL) < 0) {
    close(ready[0]);
    kill(p, SIGKILL);
    waitpid(p, NULL, 0);
    return sr_error_make(err, 0, "supervisor: it died while starting");
  }
  *pid = p;
  *ready_fd = ready[0];
  return 0;
}

int sr_supervisor_ready(pid_t pid, int *ready_fd, sr_error_t *err)
{
  char buf[512];
  ssize_t n;
  while ((n = read(*ready_fd, buf, sizeof(buf) - 1)) < 0 && errno == EINTR)
    ;
  close(*ready_fd);
  *ready_fd = -1;
  if (n >= 1 && buf[0] == '\0')
    return 0;
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
  if (n >= 1) {
    buf[n] = '\0';
    sr_activity_printable(buf);
    return sr_error_make(err, 0, "supervisor: %s", buf);
  }
  return sr_error_make(err, 0, "supervisor: it died while starting");
}

/* Whether the supervisor's record is complete in dirfd: its activity.done, made after the audit
 * line (activity.h). */
static bool record_done(int dirfd)
{
  return dirfd >= 0 && faccessat(dirfd, SR_ACT_DONE, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
}

void sr_supervisor_stop(pid_t pid, uint64_t start_time, int state_dirfd)
{
  if (pid <= 0)
    return;
  int fd = sr_pidfd_open(pid);
  if (fd < 0)
    return;
  /* The pidfd pins the process: checking its start time after opening it closes the race
   * with a reused pid. */
  if (sr_proc_is(pid, start_time) && !record_done(state_dirfd)) {
    /* Its init is gone by now, so it is writing its last audit lines and ending: give it a
     * moment to finish them, then make sure.  With the activity record, what is waited for is
     * the record (activity.done, after every line and file it writes), not the process's end:
     * what it does after that (letting go of the container's mount namespace and of the
     * writable places it held, which frees a tmpfs the code filled; its own exit) is nothing
     * the caller reads, and takes as long again. */
    _cleanup_close_ int told = state_dirfd >= 0 ? sr_activity_wait_request(state_dirfd) : -1;
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    long left = SR_SUPERVISOR_STOP_MS;
    bool ended = false;
    while (left > 0) {
      struct pollfd p[2] = {{fd, POLLIN, 0}, {told, POLLIN, 0}};
      int r = poll(p, 2, (int)left);
      if (r < 0 && errno != EINTR)
        break;
      if (p[0].revents & POLLIN) {
        ended = true;
        break;
      }
      if (p[1].revents) {
        /* Closed: the record is written, or the supervisor has gone some other way (then its
         * end is waited for). */
        if ((ended = record_done(state_dirfd)))
          break;
        close(told);
        told = -1;
      }
      clock_gettime(CLOCK_MONOTONIC, &now);
      left = SR_SUPERVISOR_STOP_MS - ((now.tv_sec - t0.tv_sec) * 1000 +
                                      (now.tv_nsec - t0.tv_nsec) / 1000000);
    }
    if (!ended)
      sr_pidfd_send_signal(fd, SIGKILL);
  }
  close(fd);
}
