#include "build.h"

#include "terminal.h"

#include "cleanup.h"
#include "fd_pass.h"
#include "mountapi.h"
#include "paths.h"
#include "fileio.h"
#include "pidfd.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/statfs.h>
#include <termios.h>
#include <unistd.h>

int sr_terminal_setup(int console_fd, const struct sr_process *p, bool bind_console,
                      sr_error_t *err)
{
  _cleanup_close_ int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root < 0)
    return sr_error_sys(err, "terminal: open /");
  _cleanup_close_ int master = sr_paths_openat2(root, "/dev/ptmx", O_RDWR | O_NOCTTY, 0,
                                                RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS);
  if (master < 0)
    return sr_error_sys(err, "terminal: open /dev/ptmx in the container");
  /* The pty must come from the container's own devpts, not a node the image planted.  A
   * /dev/ptmx that is a device node (the host's, for a container without a mount namespace)
   * gives way to devpts's own ptmx, checked the same way. */
  struct statfs sfs;
  if (fstatfs(master, &sfs) == 0 && sfs.f_type != DEVPTS_SUPER_MAGIC) {
    close(master);
    master = sr_paths_openat2(root, "/dev/pts/ptmx", O_RDWR | O_NOCTTY, 0,
                              RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS);
  }
  if (master < 0 || fstatfs(master, &sfs) < 0 || sfs.f_type != DEVPTS_SUPER_MAGIC)
    return sr_error_make(err, 0, "terminal: /dev/ptmx in the container is not a devpts ptmx "
                                 "(is /dev/pts mounted?)");
  if (unlockpt(master) < 0)
    return sr_error_sys(err, "terminal: unlockpt");
  /* The slave from the master itself: no path lookup that could be raced. */
  _cleanup_close_ int slave = ioctl(master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (slave < 0)
    return sr_error_sys(err, "terminal: TIOCGPTPEER");
  /* As runc: the process's user owns its terminal (the group stays the one devpts gave it,
   * gid=5 in the default spec), so a non-root process can use its console. Through the
   * descriptor: the pts node is ours, from the master just opened. */
  if (fchown(slave, p->user.uid, (gid_t)-1) < 0 && errno != EINVAL && errno != EPERM)
    return sr_error_sys(err, "terminal: chown the pty to process.user.uid %u", p->user.uid);
  char name[64] = "/dev/ptmx";
  ptsname_r(master, name, sizeof(name));
  if (p->has_console_size) {
    struct winsize ws = {.ws_row = (unsigned short)p->console_height,
                         .ws_col = (unsigned short)p->console_width};
    if (ioctl(slave, TIOCSWINSZ, &ws) < 0)
      return sr_error_sys(err, "terminal: set console size");
  }
  if (sr_fd_pass_send(console_fd, master, name, strlen(name)) < 0)
    return sr_error_sys(err, "--console-socket: send the pty master");
  /* One message and nothing more: the engine's listener sees the end of the stream now, not
   * when this process execs (the descriptor is shared with the parent, so it is not closed). */
  if (shutdown(console_fd, SHUT_WR) < 0 && errno != ENOTCONN)
    return sr_error_sys(err, "--console-socket: shutdown");
  if (ioctl(slave, TIOCSCTTY, 0) < 0)
    return sr_error_sys(err, "terminal: make it the controlling terminal");
  for (int i = 0; i < 3; i++)
    if (dup3(slave, i, 0) < 0)
      return sr_error_sys(err, "terminal: dup to fd %d", i);
  if (!bind_console)
    return 0;
  /* /dev/console is the pty, bound from the descriptor we hold. */
  _cleanup_close_ int target = -1;
  if (sr_paths_mkpath_in_root(root, "/dev/console", SR_MKPATH_FILE, &target, err) < 0)
    return sr_error_wrap(err, "terminal: /dev/console");
  _cleanup_close_ int tree =
      sr_mountapi_open_tree(slave, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
  if (tree < 0 || sr_mountapi_attach_mount(tree, target) < 0)
    return sr_error_sys(err, "terminal: bind the pty on /dev/console");
  return 0;
}

int sr_terminal_recv_master(int sock, int *master, sr_error_t *err)
{
  char name[256];
  size_t got;
  errno = 0;
  int fd = sr_fd_pass_recv(sock, 0, name, sizeof(name), &got);
  if (fd >= 0) {
    *master = fd;
    return 0;
  }
  /* errno stays 0 at the end of the stream and when the message came without a descriptor. */
  if (got == 0 && errno != 0)
    return sr_error_sys(err, "terminal: receive the pty master");
  return sr_error_make(err, 0, "terminal: no pty master received");
}

static void copy_winsize(int from, int to)
{
  struct winsize ws;
  if (ioctl(from, TIOCGWINSZ, &ws) == 0)
    ioctl(to, TIOCSWINSZ, &ws);
}

/* Moves what is readable from one descriptor to another; false at end of input (or hang-up).
 * What cannot be written is dropped: a reader that went away must not stop the draining, or
 * the writer on the other side would block on a full buffer. */
static bool pump(int from, int to)
{
  char buf[8192];
  ssize_t n = read(from, buf, sizeof(buf));
  if (n < 0 && (errno == EINTR || errno == EAGAIN))
    return true;
  if (n <= 0)
    return false;
  (void)sr_fileio_write_all(to, buf, (size_t)n);
  return true;
}

int sr_terminal_foreground_wait(int master, int pidfd, sr_error_t *err)
{
  struct termios saved;
  bool raw = master >= 0 && isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &saved) == 0;
  if (raw) {
    struct termios t = saved;
    cfmakeraw(&t);
    tcsetattr(STDIN_FILENO, TCSANOW, &t);
    copy_winsize(STDIN_FILENO, master);
  }
  /* Every signal we could receive goes to the container process instead. */
  sigset_t all, old;
  sigfillset(&all);
  sigdelset(&all, SIGCHLD);
  sigdelset(&all, SIGSEGV);
  sigdelset(&all, SIGBUS);
  sigdelset(&all, SIGFPE);
  sigdelset(&all, SIGILL);
  sigprocmask(SIG_BLOCK, &all, &old);
  _cleanup_close_ int sfd = signalfd(-1, &all, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sfd < 0) {
    sigprocmask(SIG_SETMASK, &old, NULL);
    return sr_error_sys(err, "signalfd");
  }
  bool in_open = master >= 0;
  /* Until the pty hangs up: once the process has closed every descriptor of it, the master
   * reports POLLHUP at each poll, which would make this loop spin until the exit. */
  bool out_open = master >= 0;
  for (;;) {
    struct pollfd p[4] = {{pidfd, POLLIN, 0},
                          {sfd, POLLIN, 0},
                          {out_open ? master : -1, POLLIN, 0},
                          {in_open ? STDIN_FILENO : -1, POLLIN, 0}};
    if (poll(p, 4, -1) < 0) {
      if (errno == EINTR)
        continue;
      break;
    }
    if (p[1].revents & POLLIN) {
      struct signalfd_siginfo si;
      while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
        if (si.ssi_signo == SIGWINCH && master >= 0)
          copy_winsize(STDIN_FILENO, master);
        else if (si.ssi_signo != SIGURG)
          sr_pidfd_send_signal(pidfd, (int)si.ssi_signo);
      }
    }
    if (out_open && (p[2].revents & (POLLIN | POLLHUP | POLLERR)))
      out_open = pump(master, STDOUT_FILENO);
    if (in_open && (p[3].revents & (POLLIN | POLLHUP)))
      in_open = pump(STDIN_FILENO, master);
    if (p[0].revents & POLLIN) {
      if (master >= 0) {
        /* What the process wrote just before it exited. */
        fcntl(master, F_SETFL, O_NONBLOCK);
        char buf[8192];
        ssize_t n;
        while ((n = read(master, buf, sizeof(buf))) > 0)
          sr_fileio_write_all(STDOUT_FILENO, buf, (size_t)n);
      }
      break;
    }
  }
  if (raw)
    tcsetattr(STDIN_FILENO, TCSANOW, &saved);
  sigprocmask(SIG_SETMASK, &old, NULL);
  return 0;
}

int sr_terminal_console_pair(bool detach, int *ours, int *theirs, sr_error_t *err)
{
  if (detach)
    return sr_error_make(err, 0, "cannot allocate a terminal for a detached process without "
                                 "--console-socket");
  int sp[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0)
    return sr_error_sys(err, "socketpair");
  *ours = sp[0];
  *theirs = sp[1];
  return 0;
}
