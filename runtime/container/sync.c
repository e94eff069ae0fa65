#include "build.h"

#include "sync.h"

#include <errno.h>
#include <stdbool.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PEER_EXITED "the container process exited during setup"

static const char *type_names[] = {
    [SYNC_GO] = "go",
    [SYNC_USERNS_READY] = "user namespace ready",
    [SYNC_USERNS_DONE] = "user namespace mapped",
    [SYNC_INIT_PID] = "init pid",
    [SYNC_INIT_INFO] = "init info",
    [SYNC_HOOKS] = "run hooks",
    [SYNC_HOOKS_DONE] = "hooks done",
    [SYNC_READY] = "ready",
    [SYNC_ERROR] = "error",
};

int sr_sync_pair(int fds[2], sr_error_t *err)
{
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) < 0)
    return sr_error_sys(err, "socketpair");
  return 0;
}

static int send_msg(int fd, const struct sr_sync_msg *m, size_t len)
{
  for (;;) {
    ssize_t w = send(fd, m, len, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR)
      continue;
    if (w == (ssize_t)len)
      return 0;
    if (w >= 0)
      errno = EIO; /* a short packet: never an errno left over from before */
    return -1;
  }
}

int sr_sync_send(int fd, enum sr_sync_type type, int32_t value, sr_error_t *err)
{
  struct sr_sync_msg m = {.type = type, .value = value};
  if (send_msg(fd, &m, offsetof(struct sr_sync_msg, text) + 1) == 0)
    return 0;
  /* The peer is gone (EPIPE; ECONNRESET when it died with a message unread): it exited, as
   * EOF tells on receive, and the caller explains how. */
  if (errno == EPIPE || errno == ECONNRESET)
    return sr_error_peer_gone(err, PEER_EXITED);
  return sr_error_sys(err, "sync: send \"%s\"", type_names[type]);
}

void sr_sync_send_error(int fd, sr_error_t e)
{
  enum sr_error_kind kind = sr_error_kind(e);
  /* Only the kinds a parent acts on cross: the others (a child's own peer gone, its config
   * errors without their field) would mean something else on this side. */
  bool crosses = kind == SR_ERR_NOT_FOUND || kind == SR_ERR_NOT_EXECUTABLE;
  struct sr_sync_msg m = {.type = SYNC_ERROR,
                          .value = e ? e->status : 0,
                          .kind = crosses ? (uint32_t)kind : SR_ERR_OTHER};
  const char *msg = (e && e->msg) ? e->msg : "unknown error";
  size_t l = strlen(msg);
  if (l >= sizeof(m.text))
    l = sizeof(m.text) - 1;
  memcpy(m.text, msg, l);
  m.text[l] = '\0';
  send_msg(fd, &m, offsetof(struct sr_sync_msg, text) + l + 1);
}

int sr_sync_recv(int fd, struct sr_sync_msg *m, sr_error_t *err)
{
  ssize_t r;
  do
    r = recv(fd, m, sizeof(*m), 0);
  while (r < 0 && errno == EINTR);
  /* ECONNRESET: the peer died with a message of ours unread -- it exited, like EOF. */
  if (r == 0 || (r < 0 && errno == ECONNRESET))
    return sr_error_peer_gone(err, PEER_EXITED);
  if (r < 0)
    return sr_error_sys(err, "sync: receive");
  if ((size_t)r < offsetof(struct sr_sync_msg, text) + 1 || m->type < SYNC_GO ||
      m->type > SYNC_ERROR)
    return sr_error_make(err, 0, "sync: malformed message");
  m->text[sizeof(m->text) - 1] = '\0';
  if (m->type == SYNC_ERROR) {
    bool known = m->kind == SR_ERR_NOT_FOUND || m->kind == SR_ERR_NOT_EXECUTABLE;
    return sr_error_kinded(err, known ? (enum sr_error_kind)m->kind : SR_ERR_OTHER, m->value,
                           "%s", m->text);
  }
  return 0;
}

int sr_sync_expect(int fd, enum sr_sync_type type, int32_t *value, sr_error_t *err)
{
  struct sr_sync_msg m;
  if (sr_sync_recv(fd, &m, err) < 0)
    return -1;
  if (m.type != type)
    return sr_error_make(err, 0, "sync: expected \"%s\", got \"%s\"", type_names[type],
                         type_names[m.type]);
  if (value)
    *value = m.value;
  return 0;
}

void sr_sync_explain_exit(sr_error_t *err, pid_t pid, const char *if_killed)
{
  if (err == NULL || sr_error_kind(*err) != SR_ERR_PEER_GONE || pid <= 0)
    return;
  /* Its end of the channel closes a moment before it becomes a zombie: wait a little, and
   * leave it unreaped (WNOWAIT) for the caller's cleanup. */
  siginfo_t si;
  for (int tries = 0; tries < 2000; tries++) {
    memset(&si, 0, sizeof(si));
    if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) < 0)
      return;
    if (si.si_pid == pid)
      break;
    nanosleep(&(struct timespec){0, 1000000}, NULL);
  }
  if (si.si_pid != pid)
    return;
  if (si.si_code == CLD_EXITED)
    sr_error_peer_gone(err, "%s (exit status %d)", PEER_EXITED, si.si_status);
  else
    sr_error_peer_gone(err,
                       "the container process was killed by signal %d (SIG%s) during setup%s%s",
                       si.si_status, sigabbrev_np(si.si_status) ? sigabbrev_np(si.si_status) : "?",
                       si.si_status == SIGKILL && if_killed ? ": " : "",
                       si.si_status == SIGKILL && if_killed ? if_killed : "");
}
