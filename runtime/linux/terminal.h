/* Terminals: the init allocates a pty from the container's own devpts and hands the master to
 * the engine over --console-socket (one message: the pty name as data, the master fd as
 * SCM_RIGHTS, no reply: what conmon and containerd implement).  `run` in the foreground keeps
 * the master itself and relays the caller's terminal. */
#ifndef SEERUN_TERMINAL_H
#define SEERUN_TERMINAL_H

#include <stdbool.h>
#include <sys/types.h>

#include "config.h"
#include "error.h"

/* After pivot_root: the pty becomes the controlling terminal and stdio; bind_console: also the
 * container's /dev/console (the init only: an exec'd process must not change what the
 * container sees). */
int sr_terminal_setup(int console_fd, const struct sr_process *p, bool bind_console,
                      sr_error_t *err);

/* Receives the master sent over a console socket. */
int sr_terminal_recv_master(int sock, int *master, sr_error_t *err);

/* `run` in the foreground, until pidfd reports the container process's exit: signals sent to
 * the runtime are forwarded to that process; with a master (terminal), stdin/stdout and the window size
 * are relayed between the caller's terminal (in raw mode meanwhile) and the pty. */
int sr_terminal_foreground_wait(int master, int pidfd, sr_error_t *err);

/* In the foreground with a terminal and no --console-socket, the pty master comes back to
 * seerun, which relays the caller's terminal: *ours is kept, *theirs goes to the container. */
int sr_terminal_console_pair(bool detach, int *ours, int *theirs, sr_error_t *err);

#endif
