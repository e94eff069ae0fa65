/* seerun's egress proxy: serves HTTP CONNECT and plain-HTTP forward requests that a container
 * makes to the listening socket seerun put in its network namespace (127.0.0.1:3128), from
 * outside it, and connects to what the profile's network.egress allows, from the host's
 * network namespace.
 *
 * Process model: sr_egress_proxy_start forks the proxy, which confines itself (an
 * unprivileged uid and gid, no capabilities, no_new_privs, its own seccomp filter, only the
 * descriptors it needs) before it reads a byte from the container, then serves a thread per
 * connection.  What it decides goes back to the caller as fixed-size records over a socket
 * (struct sr_egress_event), so that the audit log, root-owned and opened per line, is written
 * by the caller (sr_egress_proxy_events_drain), never by the process that parses untrusted input.
 */
#ifndef SEERUN_EGRESS_PROXY_H
#define SEERUN_EGRESS_PROXY_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"
#include "policy_egress.h"

/* The port inside the container (documented: README, contrib/policy/README.md). */
#define SR_EGRESS_PROXY_PORT 3128
#define SR_EGRESS_PROXY_URL "http://127.0.0.1:3128"

struct sr_egress_proxy_config {
  const struct sr_egress *policy;
  const struct sr_egress_host *extra; /* seerun sandbox --allow-host */
  size_t n_extra;
  const struct sr_egress_host *narrow; /* annotation io.seerun.egress.allow; NULL: none */
  size_t n_narrow;
  const char *profile;   /* named in the 403 body */
  int listen_fd;         /* bound and listening in the container's network namespace */
  unsigned max_connections;  /* at once; more get 503 */
  unsigned idle_seconds;     /* a tunnel with no traffic either way for this long is closed */
  uid_t uid;                 /* the proxy's own unprivileged identity */
  gid_t gid;
};

/* One decision or one closed connection, as the proxy reports it.  Strings are NUL-terminated
 * within their arrays (the reader enforces it: the proxy is not trusted once it has parsed). */
enum sr_egress_event_kind { SR_EGRESS_EVENT_DECISION = 1, SR_EGRESS_EVENT_CLOSE = 2 };
struct sr_egress_event {
  uint32_t kind;
  uint32_t allowed; /* decisions: 1 allowed, 0 refused */
  uint64_t request;   /* the request id: a decision and its close share it */
  char method[16];    /* "CONNECT", "GET", ... */
  char host[256];
  uint16_t port;
  char address[46];   /* the address connected to (or refused) */
  char reason[192];   /* why it was refused, or what decided ("network.egress.allow") */
  uint64_t bytes_up, bytes_down;
  uint64_t duration_ms;
};

/* Forks the proxy.  *pid is its pid, *events the caller's end of the event socket (O_CLOEXEC,
 * non-blocking).  The proxy ends when it is killed or when the caller's end closes. */
int sr_egress_proxy_start(const struct sr_egress_proxy_config *cfg, pid_t *pid, int *events,
                          sr_error_t *err);

/* Creates the listening socket 127.0.0.1:SR_EGRESS_PROXY_PORT in the network namespace of
 * netns_fd (a helper process enters it; the caller stays where it is). */
int sr_egress_proxy_listen_in(int netns_fd, int *listen_fd, sr_error_t *err);

/* Reads the events waiting on `events` (non-blocking) and hands each, validated, to fn. */
typedef void (*sr_egress_event_fn)(void *data, const struct sr_egress_event *e);
int sr_egress_proxy_events_drain(int events, sr_egress_event_fn fn, void *data);

/* Ends the proxy when the container has stopped: it shuts down every connection still open
 * and reports each (bytes included: a tunnel open to the end is counted too), handed to fn;
 * after timeout_ms (a thread still resolving or connecting) it is killed.  Reaps it. */
void sr_egress_proxy_stop(pid_t pid, int events, int timeout_ms, sr_egress_event_fn fn,
                         void *data);

#endif
