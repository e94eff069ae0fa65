/* The sandbox's standard streams: the command never holds the caller's descriptors.  Its
 * stdin, stdout and stderr are pipes; seerun relays the caller's stdin into the first and the
 * other two out to the caller's stdout and stderr, each bounded (past the bound the bytes are
 * read and dropped, and counted).
 *
 * Given the caller's own descriptor, the code could learn the host file behind it
 * (/proc/self/fd/1), ftruncate it, clear O_APPEND and rewrite what was there, or read it back;
 * a pipe gives it nothing but a place to write.
 *
 * The container's process inherits descriptors 0, 1 and 2 of the runtime when it is made, so
 * the pipes stand in for the caller's there for the length of the create, and the caller's
 * (kept under other numbers, close-on-exec) come back afterwards.  What seerun itself writes
 * to stderr meanwhile reaches the caller through the pipe. */
#include "build.h"

#include "sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

static void stream_init(struct sr_sandbox_stream *s)
{
  memset(s, 0, sizeof(*s));
  s->from = s->to = -1;
}

void sr_sandbox_stdio_init(struct sr_sandbox_stdio *st, uint64_t max_bytes)
{
  memset(st, 0, sizeof(*st));
  for (int i = 0; i < 3; i++)
    st->saved[i] = st->child[i] = -1;
  stream_init(&st->in);
  stream_init(&st->out);
  stream_init(&st->err);
  st->max_bytes = max_bytes;
}

static void close_fd(int *fd)
{
  if (*fd >= 0)
    close(*fd);
  *fd = -1;
}

static int nonblock(int fd)
{
  int fl = fcntl(fd, F_GETFL);
  return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

int sr_sandbox_stdio_open(struct sr_sandbox_stdio *st, sr_error_t *err)
{
  /* A caller that closed one of 0, 1, 2: /dev/null there, so that no pipe lands on it. */
  for (int fd = 0; fd < 3; fd++)
    if (fcntl(fd, F_GETFD) < 0) {
      int n = open("/dev/null", O_RDWR);
      if (n != fd) {
        if (n >= 0)
          close(n);
        return sr_error_sys(err, "sandbox: open /dev/null for descriptor %d", fd);
      }
    }
  for (int fd = 0; fd < 3; fd++)
    if ((st->saved[fd] = fcntl(fd, F_DUPFD_CLOEXEC, 3)) < 0)
      return sr_error_sys(err, "sandbox: keep the caller's descriptor %d", fd);
  int in[2], out[2], er[2];
  if (pipe2(in, O_CLOEXEC) < 0)
    return sr_error_sys(err, "sandbox: pipe (stdin)");
  st->child[0] = in[0];
  st->in.to = in[1];
  if (pipe2(out, O_CLOEXEC) < 0)
    return sr_error_sys(err, "sandbox: pipe (stdout)");
  st->out.from = out[0];
  st->child[1] = out[1];
  if (pipe2(er, O_CLOEXEC) < 0)
    return sr_error_sys(err, "sandbox: pipe (stderr)");
  st->err.from = er[0];
  st->child[2] = er[1];
  /* Our ends only: the caller's descriptors keep their flags (they are the caller's). */
  if (nonblock(st->in.to) < 0 || nonblock(st->out.from) < 0 || nonblock(st->err.from) < 0)
    return sr_error_sys(err, "sandbox: the relay's pipes");
  st->in.from = st->saved[0];
  st->out.to = st->saved[1];
  st->err.to = st->saved[2];
  st->out.bounded = st->err.bounded = true;
  fflush(NULL);
  for (int fd = 0; fd < 3; fd++)
    if (dup2(st->child[fd], fd) < 0) {
      sr_sandbox_stdio_restore(st);
      return sr_error_sys(err, "sandbox: the container's descriptor %d", fd);
    }
  st->installed = true;
  return 0;
}

void sr_sandbox_stdio_restore(struct sr_sandbox_stdio *st)
{
  if (st->saved[0] < 0)
    return;
  fflush(NULL);
  for (int fd = 0; fd < 3; fd++)
    if (st->saved[fd] >= 0)
      dup2(st->saved[fd], fd);
  st->installed = false;
  /* Only the container holds its ends now: EOF on our side once every process is gone. */
  for (int i = 0; i < 3; i++)
    close_fd(&st->child[i]);
}

/* Bytes read for a stream: kept for the caller up to the bound, counted as dropped beyond. */
static void take(struct sr_sandbox_stdio *st, struct sr_sandbox_stream *s, size_t n)
{
  uint64_t room = !s->bounded ? n : s->bytes >= st->max_bytes ? 0 : st->max_bytes - s->bytes;
  size_t keep = (uint64_t)n < room ? n : (size_t)room;
  if (s->to < 0)
    keep = 0;
  s->dropped += n - keep;
  s->bytes += keep;
  s->len = keep;
  s->off = 0;
}

static void stream_eof(struct sr_sandbox_stream *s, bool is_stdin)
{
  s->eof = true;
  s->len = 0;
  /* The command reads EOF once the caller's stdin ends. */
  if (is_stdin)
    close_fd(&s->to);
}

static void stream_read(struct sr_sandbox_stdio *st, struct sr_sandbox_stream *s, bool is_stdin)
{
  ssize_t n = read(s->from, s->buf, sizeof(s->buf));
  if (n > 0) {
    if (is_stdin) {
      s->len = (size_t)n;
      s->off = 0;
    } else
      take(st, s, (size_t)n);
  } else if (n == 0 || (errno != EAGAIN && errno != EINTR))
    stream_eof(s, is_stdin);
}

static void stream_write(struct sr_sandbox_stream *s, bool is_stdin)
{
  /* At most PIPE_BUF bytes after POLLOUT: a write to a pipe does not block. */
  ssize_t n = write(s->to, s->buf + s->off, s->len - s->off);
  if (n >= 0) {
    s->off += (size_t)n;
    if (s->off == s->len)
      s->len = s->off = 0;
    return;
  }
  if (errno == EAGAIN || errno == EINTR)
    return;
  /* The reader is gone (the caller closed its end, or the command its stdin). */
  if (is_stdin) {
    close_fd(&s->to);
    s->eof = true;
    s->len = 0;
  } else {
    s->dropped += s->len - s->off;
    s->bytes -= s->len - s->off;
    s->len = s->off = 0;
    s->to = -1;
  }
}

static void stream_poll(const struct sr_sandbox_stream *s, struct pollfd p[2])
{
  p[0] = (struct pollfd){-1, POLLIN, 0};
  p[1] = (struct pollfd){-1, POLLOUT, 0};
  if (s->len > 0)
    p[1].fd = s->to;
  else if (!s->eof)
    p[0].fd = s->from;
}

static void stream_done(struct sr_sandbox_stdio *st, struct sr_sandbox_stream *s,
                        const struct pollfd p[2], bool is_stdin)
{
  if (is_stdin && s->to < 0)
    return; /* ended meanwhile (the command exited) */
  if (p[0].fd >= 0 && (p[0].revents & (POLLIN | POLLHUP | POLLERR | POLLNVAL)))
    stream_read(st, s, is_stdin);
  else if (p[1].fd >= 0 && (p[1].revents & (POLLOUT | POLLHUP | POLLERR | POLLNVAL)))
    stream_write(s, is_stdin);
}

void sr_sandbox_stdio_poll(const struct sr_sandbox_stdio *st,
                           struct pollfd p[SR_SANDBOX_STDIO_POLLFDS])
{
  if (st->in.to >= 0)
    stream_poll(&st->in, p);
  else
    p[0] = p[1] = (struct pollfd){-1, 0, 0};
  stream_poll(&st->out, p + 2);
  stream_poll(&st->err, p + 4);
}

void sr_sandbox_stdio_done(struct sr_sandbox_stdio *st,
                           const struct pollfd p[SR_SANDBOX_STDIO_POLLFDS])
{
  stream_done(st, &st->in, p, true);
  stream_done(st, &st->out, p + 2, false);
  stream_done(st, &st->err, p + 4, false);
}

void sr_sandbox_stdio_end_input(struct sr_sandbox_stdio *st)
{
  stream_eof(&st->in, true);
}

bool sr_sandbox_stdio_drained(const struct sr_sandbox_stdio *st)
{
  return st->out.eof && st->out.len == 0 && st->err.eof && st->err.len == 0;
}

/* What is in the output pipes now, passed on without waiting (after a failed create: seerun's
 * own warnings went there). */
void sr_sandbox_stdio_flush(struct sr_sandbox_stdio *st)
{
  struct sr_sandbox_stream *v[2] = {&st->out, &st->err};
  for (int i = 0; i < 2; i++) {
    struct sr_sandbox_stream *s = v[i];
    for (int rounds = 0; rounds < 64 && s->from >= 0 && !s->eof; rounds++) {
      if (s->len == 0) {
        stream_read(st, s, false);
        if (s->len == 0)
          break;
      }
      while (s->len > 0 && s->to >= 0) {
        struct pollfd p = {s->to, POLLOUT, 0};
        if (poll(&p, 1, 1000) <= 0)
          break;
        stream_write(s, false);
      }
      s->len = 0;
    }
  }
}

int sr_sandbox_stdio_use_tty(struct sr_sandbox_stdio *st, int master, sr_error_t *err)
{
  int in = fcntl(master, F_DUPFD_CLOEXEC, 3);
  if (in < 0) {
    close(master);
    return sr_error_sys(err, "sandbox: the terminal's master");
  }
  /* The init put the pty's slave over the pipes: they are at EOF already, or will be. */
  close_fd(&st->in.to);
  close_fd(&st->out.from);
  st->in.to = in;
  st->out.from = master;
  if (nonblock(master) < 0)
    return sr_error_sys(err, "sandbox: the terminal's master");
  struct winsize ws;
  if (ioctl(st->saved[0], TIOCGWINSZ, &ws) == 0 || ioctl(st->saved[1], TIOCGWINSZ, &ws) == 0)
    ioctl(master, TIOCSWINSZ, &ws);
  /* Keys go to the command as typed (^C included: the pty makes it the command's SIGINT). */
  if (isatty(st->saved[0]) && tcgetattr(st->saved[0], &st->saved_tio) == 0) {
    struct termios raw = st->saved_tio;
    cfmakeraw(&raw);
    if (tcsetattr(st->saved[0], TCSANOW, &raw) == 0)
      st->raw = true;
  }
  return 0;
}

void sr_sandbox_stdio_release(struct sr_sandbox_stdio *st)
{
  if (st->raw)
    tcsetattr(st->saved[0], TCSANOW, &st->saved_tio);
  st->raw = false;
  if (st->installed)
    sr_sandbox_stdio_restore(st);
  for (int i = 0; i < 3; i++) {
    close_fd(&st->child[i]);
    close_fd(&st->saved[i]);
  }
  /* The caller's ends were the saved copies: closed above. */
  close_fd(&st->in.to);
  close_fd(&st->out.from);
  close_fd(&st->err.from);
  st->in.from = st->out.to = st->err.to = -1;
}
