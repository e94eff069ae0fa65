/* The channel between the create process and the container's processes: one SOCK_SEQPACKET
 * socketpair, small typed messages.  A child reports a failure as SYNC_ERROR carrying its
 * error, so the parent prints the real cause ("mount `proc` on `/proc`: ..."). */
#ifndef SEERUN_SYNC_H
#define SEERUN_SYNC_H

#include <stdint.h>
#include <sys/types.h>

#include "error.h"

enum sr_sync_type {
  SYNC_GO = 1,       /* parent -> first child: placed in the cgroup (and mapped), go on */
  SYNC_USERNS_READY, /* intermediate -> parent: unshared the user namespace, write my maps */
  SYNC_USERNS_DONE,  /* parent -> intermediate */
  SYNC_INIT_PID,     /* intermediate -> parent: value = host pid of the init */
  SYNC_INIT_INFO,    /* parent -> init: value = the init's host pid */
  SYNC_HOOKS,        /* init -> parent: mounts done, run prestart and createRuntime hooks */
  SYNC_HOOKS_DONE,   /* parent -> init */
  SYNC_READY,        /* init -> parent: set up, waiting for start */
  SYNC_ERROR,        /* either way: value = errno, text = message */
};

struct sr_sync_msg {
  uint32_t type;
  int32_t value;
  uint32_t kind; /* SYNC_ERROR: the error's kind, where the receiver acts on it (an exec's) */
  char text[4000];
};

int sr_sync_pair(int fds[2], sr_error_t *err);
int sr_sync_send(int fd, enum sr_sync_type type, int32_t value, sr_error_t *err);
/* Sends err (or a generic text) as SYNC_ERROR; best effort, for the child's last word. */
void sr_sync_send_error(int fd, sr_error_t e);
/* Receives the next message; SYNC_ERROR becomes an error carrying the peer's message.  The peer
 * exiting (EOF) is the error "the container process exited during setup", of kind
 * SR_ERR_PEER_GONE (as is a send the peer can no longer take). */
int sr_sync_recv(int fd, struct sr_sync_msg *m, sr_error_t *err);
/* When err is of kind SR_ERR_PEER_GONE (the peer closed the channel without a word), tells how
 * pid, which held the other end, ended: its exit status, or the signal that
 * killed it, followed for SIGKILL by if_killed (a hint such as the memory limit).  pid is left
 * unreaped. */
void sr_sync_explain_exit(sr_error_t *err, pid_t pid, const char *if_killed);
/* Receives one message, which must be of the given type. */
int sr_sync_expect(int fd, enum sr_sync_type type, int32_t *value, sr_error_t *err);

#endif
