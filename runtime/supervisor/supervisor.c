#include "build.h"

#include "supervisor.h"

#include <sys/capability.h>

#include "cleanup.h"
#include "egress_proxy.h"
#include "egress_record.h"
#include "json.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* What stays root here only writes the audit log (root's own file) and stops the proxy:
 * every capability but CAP_KILL goes, from the bounding set too, and no_new_privs is set. */
static int drop_privileges(void)
{
  for (int c = 0; c <= CAP_LAST_CAP; c++)
    if (c != CAP_KILL && prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0 && errno != EINVAL)
      return -1;
  cap_t caps = cap_init();
  cap_value_t keep[] = {CAP_KILL};
  int r = caps == NULL || cap_set_flag(caps, CAP_PERMITTED, 1, keep, CAP_SET) < 0 ||
                  cap_set_flag(caps, CAP_EFFECTIVE, 1, keep, CAP_SET) < 0 || cap_set_proc(caps) < 0
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
      sr_write_file_atomic(dirfd, SR_SUPERVISOR_EGRESS_FILE, buf, len, 0600, &err) < 0)
    sr_error_free(&err);
}

static __attribute__((noreturn)) void supervise(const struct sr_supervisor_config *cfg,
                                                int listen_fd, int init_pidfd, int state_dirfd)
{
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
  static struct sr_egress_record rec; /* large: not on the stack */
  rec.audit = cfg->audit;
  pid_t proxy;
  int events;
  sr_error_t err = NULL;
  if (sr_egress_proxy_start(&pc, &proxy, &events, &err) < 0)
    _exit(125);
  close(listen_fd); /* the proxy holds it now */
  if (drop_privileges() < 0) {
    kill(proxy, SIGKILL);
    _exit(125);
  }
  for (;;) {
    struct pollfd p[2] = {{init_pidfd, POLLIN, 0}, {events, POLLIN, 0}};
    if (poll(p, 2, -1) < 0 && errno != EINTR)
      break;
    if (p[1].revents & (POLLIN | POLLHUP)) {
      if (sr_egress_events_drain(events, sr_egress_record_add, &rec) != 0)
        break; /* the proxy has gone */
    }
    if (p[0].revents & POLLIN)
      break; /* the container's init has gone */
  }
  kill(proxy, SIGKILL);
  while (waitpid(proxy, NULL, 0) < 0 && errno == EINTR)
    ;
  sr_egress_events_drain(events, sr_egress_record_add, &rec);
  sr_egress_record_close(&rec);
  write_record(&rec, state_dirfd);
  _exit(0);
}

int sr_supervisor_start(const struct sr_supervisor_config *cfg, pid_t *pid, uint64_t *start_time,
                        sr_error_t *err)
{
  _cleanup_close_ int listen_fd = -1;
  if (sr_egress_proxy_listen_in(cfg->init_pidfd, &listen_fd, err) < 0)
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
    if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(devnull, 1) < 0 || dup2(devnull, 2) < 0 ||
        dup2(listen_fd, 3) < 0 || dup2(cfg->init_pidfd, 4) < 0 || dup2(ready[1], 5) < 0 ||
        (cfg->state_dirfd >= 0 ? dup2(cfg->state_dirfd, 6) : open("/dev/null", O_RDONLY)) < 0)
      _exit(125);
    syscall(SYS_close_range, 7, ~0U, 0);
    signal(SIGPIPE, SIG_IGN);
    (void)!write(5, "", 1);
    close(5);
    supervise(cfg, 3, 4, cfg->state_dirfd >= 0 ? 6 : -1);
  }
  close(ready[1]);
  char c;
  ssize_t n;
  while ((n = read(ready[0], &c, 1)) < 0 && errno == EINTR)
    ;
  close(ready[0]);
  if (n != 1 || sr_proc_stat(p, start_time, NULL) < 0) {
    kill(p, SIGKILL);
    waitpid(p, NULL, 0);
    return sr_error_make(err, 0, "supervisor: it died while starting");
  }
  *pid = p;
  return 0;
}

void sr_supervisor_stop(pid_t pid, uint64_t start_time)
{
  if (pid <= 0)
    return;
  int fd = sr_pidfd_open(pid);
  if (fd < 0)
    return;
  /* The pidfd pins the process: checking its start time after opening it closes the race
   * with a reused pid. */
  if (sr_proc_is(pid, start_time)) {
    /* Its init is gone by now, so it is writing its last audit lines and ending: give it a
     * moment to finish them, then make sure. */
    struct pollfd p = {fd, POLLIN, 0};
    int r;
    while ((r = poll(&p, 1, SR_SUPERVISOR_STOP_MS)) < 0 && errno == EINTR)
      ;
    if (r <= 0)
      sr_pidfd_send_signal(fd, SIGKILL);
  }
  close(fd);
}
