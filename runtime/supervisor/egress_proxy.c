#include "build.h"

#include "egress_proxy.h"

#include <seccomp.h>

#include "cleanup.h"
#include "egress_http.h"
#include "fd_pass.h"
#include "landlock.h"
#include "route_local.h"
#include "tls_sni.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <resolv.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CONNECT_TIMEOUT_MS 10000
#define HEAD_TIMEOUT_MS 10000
#define SR_EGRESS_PROXY_MAX_AS (1024ULL << 20)

/* ---- the listening socket, made inside the container's network namespace ------------------ */

/* The container reaches the proxy on 127.0.0.1: its loopback must be up (a new network
 * namespace starts with it down). */
static int loopback_up(void)
{
  struct ifreq ifr = {0};
  int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0)
    return -1;
  snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
  int r = ioctl(s, SIOCGIFFLAGS, &ifr);
  if (r == 0 && !(ifr.ifr_flags & IFF_UP)) {
    ifr.ifr_flags |= IFF_UP;
    r = ioctl(s, SIOCSIFFLAGS, &ifr);
  }
  close(s);
  return r;
}

int sr_egress_proxy_listen_in(int netns_fd, int *listen_fd, sr_error_t *err)
{
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
    return sr_error_sys(err, "egress proxy: socketpair");
  pid_t pid = fork();
  if (pid < 0) {
    close(sv[0]);
    close(sv[1]);
    return sr_error_sys(err, "egress proxy: fork");
  }
  if (pid == 0) {
    close(sv[0]);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(SR_EGRESS_PROXY_PORT),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    int one = 1, fd;
    if (setns(netns_fd, CLONE_NEWNET) < 0 || loopback_up() < 0 ||
        (fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
        bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 128) < 0 ||
        sr_fd_pass_send(sv[1], fd, "", 1) < 0) {
      int e = errno;
      (void)!write(sv[1], &e, sizeof(e));
      _exit(1);
    }
    _exit(0);
  }
  close(sv[1]);
  char c;
  size_t got;
  int fd = sr_fd_pass_recv(sv[0], 0, &c, 1, &got);
  int e = errno;
  if (fd < 0) {
    int child = 0;
    if (read(sv[0], &child, sizeof(child)) == (ssize_t)sizeof(child) && child)
      e = child;
  }
  close(sv[0]);
  while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
    ;
  if (fd < 0)
    return sr_error_make(err, e,
                         "egress proxy: listen on 127.0.0.1:%d in the container's network "
                         "namespace",
                         SR_EGRESS_PROXY_PORT);
  *listen_fd = fd;
  return 0;
}

/* ---- the proxy process ------------------------------------------------------------------- */

/* A connection's sockets, which the proxy shuts down when the container stops, so that every
 * thread ends its relay and reports its bytes before the proxy ends. */
struct slot {
  bool used;
  int client, origin;
};

struct proxy {
  const struct sr_egress_proxy_config *cfg;
  int events;
  atomic_uint active;
  atomic_uint_fast64_t next_request;
  pthread_mutex_t lock; /* slots, stopping */
  struct slot *slots;   /* cfg->max_connections of them */
  bool stopping;
};

struct conn {
  struct proxy *px;
  int client;
  size_t slot;
};

/* The origin socket joins the connection's slot (shut down at once when the proxy is
 * stopping), or leaves it (fd -1) before it is closed, so that no number is shut twice. */
static void slot_origin(struct conn *c, int fd)
{
  pthread_mutex_lock(&c->px->lock);
  c->px->slots[c->slot].origin = fd;
  if (fd >= 0 && c->px->stopping)
    shutdown(fd, SHUT_RDWR);
  pthread_mutex_unlock(&c->px->lock);
}

static void close_origin(struct conn *c, int fd)
{
  slot_origin(c, -1);
  close(fd);
}

/* A free slot for the client socket (there is one: fewer than max_connections are active). */
static size_t slot_take(struct proxy *px, int client)
{
  size_t slot = 0;
  pthread_mutex_lock(&px->lock);
  while (px->slots[slot].used)
    slot++;
  px->slots[slot] = (struct slot){true, client, -1};
  pthread_mutex_unlock(&px->lock);
  return slot;
}

static void slot_free(struct proxy *px, size_t slot)
{
  pthread_mutex_lock(&px->lock);
  px->slots[slot] = (struct slot){false, -1, -1};
  pthread_mutex_unlock(&px->lock);
}

static uint64_t now_ms(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

static void copy_str(char *dst, size_t size, const char *src)
{
  snprintf(dst, size, "%s", src ? src : "");
}

static void report(struct proxy *px, const struct sr_egress_event *e)
{
  /* SOCK_SEQPACKET: one record per send, whole or not at all. */
  while (send(px->events, e, sizeof(*e), MSG_NOSIGNAL) < 0 && errno == EINTR)
    ;
}

static void write_all(int fd, const char *p, size_t n)
{
  while (n) {
    ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return;
    p += w;
    n -= (size_t)w;
  }
}

/* The answer to a refused request: one line that says what to change. */
static void answer(int fd, int status, const char *text)
{
  char buf[768];
  const char *phrase = status == 403   ? "Forbidden"
                       : status == 400 ? "Bad Request"
                       : status == 431 ? "Request Header Fields Too Large"
                       : status == 501 ? "Not Implemented"
                       : status == 502 ? "Bad Gateway"
                       : status == 503 ? "Service Unavailable"
                       : status == 504 ? "Gateway Timeout"
                       : status == 505 ? "HTTP Version Not Supported"
                                       : "Error";
  int body = (int)strlen(text) + 1;
  int n = snprintf(buf, sizeof(buf),
                   "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n"
                   "Connection: close\r\n\r\n%s\n",
                   status, phrase, body, text);
  if (n > 0)
    write_all(fd, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

static bool wait_readable(int fd, int timeout_ms)
{
  struct pollfd p = {fd, POLLIN, 0};
  int r;
  while ((r = poll(&p, 1, timeout_ms)) < 0 && errno == EINTR)
    ;
  return r > 0;
}

/* Reads until the head is whole; returns the parse result with *len bytes in buf. */
static enum sr_http_parse read_head(int fd, char *buf, size_t size, size_t *len,
                                    struct sr_http_request *r, size_t *head, int *status,
                                    const char **reason)
{
  *len = 0;
  uint64_t deadline = now_ms() + HEAD_TIMEOUT_MS;
  for (;;) {
    enum sr_http_parse p = sr_egress_http_parse_request(buf, *len, r, head, status, reason);
    if (p != SR_HTTP_NEED_MORE)
      return p;
    sr_egress_http_request_release(r);
    uint64_t t = now_ms();
    if (t >= deadline || !wait_readable(fd, (int)(deadline - t))) {
      *status = 408;
      *reason = "no complete request head in time";
      return SR_HTTP_BAD;
    }
    ssize_t n = recv(fd, buf + *len, size - *len, 0);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      *status = 400;
      *reason = "the connection closed before the request head ended";
      return SR_HTTP_BAD;
    }
    *len += (size_t)n;
  }
}

/* Connects to a from the host's network namespace, bounded in time. */
static int connect_to(const struct sr_ipaddr *a, uint16_t port, const char *bind_address)
{
  struct sockaddr_storage ss;
  socklen_t sl;
  memset(&ss, 0, sizeof(ss));
  if (a->family == AF_INET) {
    struct sockaddr_in *s = (struct sockaddr_in *)&ss;
    s->sin_family = AF_INET;
    s->sin_port = htons(port);
    memcpy(&s->sin_addr, a->bytes, 4);
    sl = sizeof(*s);
  } else {
    struct sockaddr_in6 *s = (struct sockaddr_in6 *)&ss;
    s->sin6_family = AF_INET6;
    s->sin6_port = htons(port);
    memcpy(&s->sin6_addr, a->bytes, 16);
    sl = sizeof(*s);
  }
  int fd = socket(a->family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0)
    return -1;
  if (bind_address) {
    struct sr_ipaddr b;
    if (sr_policy_egress_ipaddr_parse(bind_address, &b) == 0 && b.family == a->family) {
      struct sockaddr_storage bs;
      memset(&bs, 0, sizeof(bs));
      if (b.family == AF_INET) {
        ((struct sockaddr_in *)&bs)->sin_family = AF_INET;
        memcpy(&((struct sockaddr_in *)&bs)->sin_addr, b.bytes, 4);
      } else {
        ((struct sockaddr_in6 *)&bs)->sin6_family = AF_INET6;
        memcpy(&((struct sockaddr_in6 *)&bs)->sin6_addr, b.bytes, 16);
      }
      if (bind(fd, (struct sockaddr *)&bs, sl) < 0) {
        close(fd);
        return -1;
      }
    }
  }
  if (connect(fd, (struct sockaddr *)&ss, sl) < 0 && errno != EINPROGRESS) {
    close(fd);
    return -1;
  }
  struct pollfd p = {fd, POLLOUT, 0};
  int r, soerr = 0;
  socklen_t el = sizeof(soerr);
  while ((r = poll(&p, 1, CONNECT_TIMEOUT_MS)) < 0 && errno == EINTR)
    ;
  if (r <= 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &el) < 0 || soerr) {
    close(fd);
    errno = r == 0 ? ETIMEDOUT : soerr ? soerr : errno;
    return -1;
  }
  int fl = fcntl(fd, F_GETFL);
  fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
  return fd;
}

/* An address judged, the host's own asked of the kernel now, per request: an address the host
 * got after the proxy started, or one no interface lists (a `local` route), is its own too. */
static bool address_allowed(struct proxy *px, const struct sr_ipaddr *a, const char **why)
{
  struct sr_ipaddr u = sr_policy_egress_ipaddr_unmapped(a);
  bool own = false;
  sr_error_t err = NULL;
  if (sr_route_local(u.family, u.bytes, &own, &err) < 0) {
    sr_error_free(&err);
    *why = "not known not to be this host's (its route lookup failed)";
    return false;
  }
  return sr_policy_egress_address_allowed(px->cfg->policy, a, own, why);
}

/* The addresses of host, judged: the first one the policy allows, else *why says why the
 * last one was refused.  A pinned name resolves to its pin only; an IP literal to itself. */
static bool resolve(struct proxy *px, const char *host, struct sr_ipaddr *out, char *refused,
                    size_t rsize, const char **why)
{
  const struct sr_egress *p = px->cfg->policy;
  const struct sr_ipaddr *pin = sr_policy_egress_pinned(p, host);
  struct sr_ipaddr lit;
  if (pin || sr_policy_egress_ipaddr_parse(host, &lit) == 0) {
    *out = pin ? *pin : lit;
    sr_policy_egress_ipaddr_format(out, refused, rsize);
    return address_allowed(px, out, why);
  }
  /* The name judged, never another: no `search` list of resolv.conf appended to a name with
   * a dot (a name below an allowed *.domain that does not exist would otherwise become
   * name.corp.example, and lead there).  A name without one is the operator's own, listed as
   * such: it keeps the default domain.  The resolver's state is this thread's. */
  if (!(_res.options & RES_INIT))
    res_init();
  _res.options &= ~(unsigned long)RES_DNSRCH;
  struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
  struct addrinfo *res = NULL;
  int rc = getaddrinfo(host, NULL, &hints, &res);
  if (rc != 0) {
    *why = rc == EAI_NONAME || rc == EAI_NODATA ? "the name does not resolve"
                                               : "the name could not be resolved";
    refused[0] = '\0';
    return false;
  }
  bool ok = false;
  for (struct addrinfo *ai = res; ai && !ok; ai = ai->ai_next) {
    struct sr_ipaddr a = {.family = ai->ai_family};
    if (ai->ai_family == AF_INET)
      memcpy(a.bytes, &((struct sockaddr_in *)ai->ai_addr)->sin_addr, 4);
    else if (ai->ai_family == AF_INET6)
      memcpy(a.bytes, &((struct sockaddr_in6 *)ai->ai_addr)->sin6_addr, 16);
    else
      continue;
    sr_policy_egress_ipaddr_format(&a, refused, rsize);
    ok = address_allowed(px, &a, why);
    if (ok)
      *out = a;
  }
  freeaddrinfo(res);
  return ok;
}

static void relay_pipes_close(int (*pipes)[2][2])
{
  for (int d = 0; d < 2; d++)
    for (int k = 0; k < 2; k++)
      if ((*pipes)[d][k] >= 0)
        close((*pipes)[d][k]);
}

/* relay's loop: returns when both directions are done, the tunnel idles or a write fails;
 * sent[] counts what went each way. */
static void relay_pump(const int fds[2], int origin, uint64_t up_limit, unsigned idle_s,
                       int pipes[2][2], size_t chunk, uint64_t sent[2])
{
  bool open_[2] = {up_limit > 0, true}; /* [0]: client -> origin, [1]: origin -> client */
  if (!open_[0])
    shutdown(origin, SHUT_WR);
  while (open_[0] || open_[1]) {
    struct pollfd p[2];
    int n = 0, map[2];
    for (int d = 0; d < 2; d++)
      if (open_[d]) {
        p[n] = (struct pollfd){fds[d], POLLIN, 0};
        map[n++] = d;
      }
    int r = poll(p, (nfds_t)n, (int)idle_s * 1000);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      return; /* idle: close both */
    for (int i = 0; i < n; i++) {
      int d = map[i];
      if (!(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
        continue;
      size_t want = chunk;
      if (d == 0 && up_limit - sent[0] < want)
        want = (size_t)(up_limit - sent[0]);
      ssize_t in = splice(fds[d], NULL, pipes[d][1], NULL, want, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
      if (in < 0 && (errno == EAGAIN || errno == EINTR))
        continue;
      if (in <= 0) {
        open_[d] = false;
        shutdown(fds[1 - d], SHUT_WR);
        if (d == 1)
          open_[0] = false; /* the origin is done: so is the tunnel */
        continue;
      }
      ssize_t left = in;
      while (left > 0) {
        ssize_t out = splice(pipes[d][0], NULL, fds[1 - d], NULL, (size_t)left, SPLICE_F_MOVE);
        if (out < 0 && errno == EINTR)
          continue;
        if (out <= 0)
          return;
        left -= out;
      }
      sent[d] += (uint64_t)in;
      if (d == 0 && sent[0] >= up_limit) {
        open_[0] = false; /* the request body is complete: nothing more reaches the origin */
        shutdown(origin, SHUT_WR);
      }
    }
  }
}

/* Copies between the two sockets until both directions are done or the tunnel idles;
 * up_limit bounds what goes from the client to the origin (UINT64_MAX: no bound). */
static void relay(int client, int origin, uint64_t up_limit, unsigned idle_s, uint64_t *up,
                  uint64_t *down)
{
  const int fds[2] = {client, origin};
  _cleanup_(relay_pipes_close) int pipes[2][2] = {{-1, -1}, {-1, -1}};
  size_t chunk = 1 << 16;
  for (int d = 0; d < 2; d++) {
    if (pipe2(pipes[d], O_CLOEXEC | O_NONBLOCK) < 0)
      return;
    /* Larger pipes, fewer splices per byte (best effort: a user's pipe pages are bounded). */
    int sz = fcntl(pipes[d][1], F_SETPIPE_SZ, 1 << 20);
    if (d == 1 && sz > 0)
      chunk = (size_t)sz;
  }
  uint64_t sent[2] = {0, 0};
  relay_pump(fds, origin, up_limit, idle_s, pipes, chunk, sent);
  *up += sent[0];
  *down += sent[1];
}

static void serve_one(struct conn *c)
{
  struct proxy *px = c->px;
  const struct sr_egress_proxy_config *cfg = px->cfg;
  int fd = c->client;
  char buf[SR_HTTP_HEAD_MAX + 1];
  size_t len = 0, head = 0;
  struct sr_http_request r;
  int status = 0;
  const char *reason = NULL;
  uint64_t t0 = now_ms();
  struct sr_egress_event e = {.kind = SR_EGRESS_EVENT_DECISION};
  e.request = atomic_fetch_add(&px->next_request, 1);

  enum sr_http_parse p = read_head(fd, buf, sizeof(buf) - 1, &len, &r, &head, &status, &reason);
  if (p != SR_HTTP_OK) {
    char body[256];
    snprintf(body, sizeof(body), "seerun: egress proxy: %s", reason);
    answer(fd, status, body);
    copy_str(e.reason, sizeof(e.reason), reason);
    report(px, &e);
    return;
  }
  copy_str(e.method, sizeof(e.method), r.method);
  copy_str(e.host, sizeof(e.host), r.host);
  e.port = r.port;

  const char *knob = NULL, *why = NULL;
  char body[512];
  if (sr_policy_egress_judge(cfg->policy, cfg->extra, cfg->n_extra, cfg->narrow, cfg->n_narrow,
                             r.host, r.port, &knob) != SR_EGRESS_ALLOW) {
    snprintf(body, sizeof(body), "seerun: egress to %s:%u denied by profile \"%s\" (%s)", r.host,
             r.port, cfg->profile, knob);
    answer(fd, 403, body);
    snprintf(e.reason, sizeof(e.reason), "%s", knob);
    report(px, &e);
    sr_egress_http_request_release(&r);
    return;
  }
  struct sr_ipaddr addr;
  if (!resolve(px, r.host, &addr, e.address, sizeof(e.address), &why)) {
    if (e.address[0])
      snprintf(body, sizeof(body),
               "seerun: egress to %s:%u denied by profile \"%s\": %s is %s "
               "(network.egress.allowAddresses)",
               r.host, r.port, cfg->profile, e.address, why);
    else
      snprintf(body, sizeof(body), "seerun: egress to %s:%u: %s", r.host, r.port, why);
    answer(fd, e.address[0] ? 403 : 502, body);
    snprintf(e.reason, sizeof(e.reason), "%s%s%s", e.address[0] ? e.address : "",
             e.address[0] ? " is " : "", why);
    report(px, &e);
    sr_egress_http_request_release(&r);
    return;
  }
  int origin = connect_to(&addr, r.port, cfg->policy->bind_address);
  if (origin >= 0)
    slot_origin(c, origin);
  if (origin < 0) {
    snprintf(body, sizeof(body), "seerun: egress to %s:%u (%s): connect: %s", r.host, r.port,
             e.address, strerror(errno));
    answer(fd, errno == ETIMEDOUT ? 504 : 502, body);
    snprintf(e.reason, sizeof(e.reason), "connect: %s", strerror(errno));
    report(px, &e);
    sr_egress_http_request_release(&r);
    return;
  }

  struct sr_egress_event closed = e;
  closed.kind = SR_EGRESS_EVENT_CLOSE;
  copy_str(closed.reason, sizeof(closed.reason), knob);
  if (r.connect) {
    static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
    /* What the client sent past the head, then its first bytes: a ClientHello must name the
     * host it asked for, so that an allowed name cannot front for another. */
    unsigned char first[SR_TLS_HELLO_MAX + 8];
    size_t have = len - head;
    memcpy(first, buf + head, have);
    write_all(fd, ok, sizeof(ok) - 1);
    enum sr_sni s = SR_SNI_NEED_MORE;
    char sni[256];
    uint64_t down = 0;
    /* The client's first bytes decide, whenever they come: the server's are relayed
     * meanwhile (SSH and SMTP servers speak first), the client's held until judged. */
    for (;;) {
      s = sr_tls_sni_client_hello(first, have, sni, sizeof(sni));
      bool more = s == SR_SNI_NEED_MORE || have == 0 ||
                  (s == SR_SNI_NOT_TLS && sr_egress_http_starts_request(first, have) < 0);
      if (!more || have >= sizeof(first))
        break;
      struct pollfd pf[2] = {{fd, POLLIN, 0}, {origin, POLLIN, 0}};
      int pr = poll(pf, 2, (int)cfg->idle_seconds * 1000);
      if (pr < 0 && errno == EINTR)
        continue;
      if (pr <= 0)
        break;
      if (pf[1].revents & (POLLIN | POLLHUP | POLLERR)) {
        char sbuf[16384];
        ssize_t n = recv(origin, sbuf, sizeof(sbuf), 0);
        if (n <= 0)
          break;
        write_all(fd, sbuf, (size_t)n);
        down += (uint64_t)n;
      }
      if (pf[0].revents & (POLLIN | POLLHUP | POLLERR)) {
        ssize_t n = recv(fd, first + have, sizeof(first) - have, 0);
        if (n <= 0)
          break;
        have += (size_t)n;
      }
    }
    struct sr_ipaddr lit;
    bool literal = sr_policy_egress_ipaddr_parse(r.host, &lit) == 0;
    const char *bad = NULL;
    if (s == SR_SNI_MALFORMED || (s == SR_SNI_NEED_MORE && have >= sizeof(first)))
      bad = "a malformed TLS ClientHello";
    else if (s == SR_SNI_FOUND && !literal && strcmp(sni, r.host) != 0)
      bad = "the TLS server name differs from the CONNECT host";
    else if (s == SR_SNI_NEED_MORE && have > 0)
      bad = "an incomplete TLS ClientHello";
    /* Plain HTTP inside a tunnel would carry a Host header of any name of the address: it
     * goes as a forward request, whose Host is checked.  Other protocols pass. */
    else if (s == SR_SNI_NOT_TLS && sr_egress_http_starts_request(first, have) != 0)
      bad = "plain HTTP through a CONNECT tunnel (send it as a forward request)";
    if (bad) {
      /* A long name is cut: the reason is for people. */
      if (snprintf(e.reason, sizeof(e.reason), "%s%s%s", bad, s == SR_SNI_FOUND ? ": " : "",
                   s == SR_SNI_FOUND ? sni : "") >= (int)sizeof(e.reason))
        e.reason[sizeof(e.reason) - 2] = '~';
      report(px, &e);
      close_origin(c, origin);
      /* Connected all the same: what the server sent meanwhile reached the client, and is
       * counted like any connection's (nothing of the client's went up). */
      if (down > 0) {
        copy_str(closed.reason, sizeof(closed.reason), e.reason);
        closed.bytes_down = down;
        closed.duration_ms = now_ms() - t0;
        report(px, &closed);
      }
      sr_egress_http_request_release(&r);
      return;
    }
    closed.bytes_down = down;
    e.allowed = 1;
    copy_str(e.reason, sizeof(e.reason), knob);
    report(px, &e);
    write_all(origin, (const char *)first, have);
    closed.bytes_up = have;
    if (have > 0)
      relay(fd, origin, UINT64_MAX, cfg->idle_seconds, &closed.bytes_up, &closed.bytes_down);
  } else {
    e.allowed = 1;
    copy_str(e.reason, sizeof(e.reason), knob);
    report(px, &e);
    write_all(origin, r.origin_head, r.origin_head_len);
    size_t body_have = len - head;
    if (body_have > r.content_length)
      body_have = (size_t)r.content_length; /* a pipelined second request is dropped */
    write_all(origin, buf + head, body_have);
    closed.bytes_up = body_have;
    relay(fd, origin, r.content_length - body_have, cfg->idle_seconds, &closed.bytes_up,
          &closed.bytes_down);
  }
  close_origin(c, origin);
  closed.allowed = 1;
  closed.duration_ms = now_ms() - t0;
  report(px, &closed);
  sr_egress_http_request_release(&r);
}

static void *conn_thread(void *arg)
{
  struct conn *c = arg;
  struct proxy *px = c->px;
  serve_one(c);
  slot_free(px, c->slot);
  close(c->client);
  free(c);
  atomic_fetch_sub(&px->active, 1);
  return NULL;
}

/* The container has stopped (the caller shut its end of the event socket for writing):
 * every connection is shut down, so that its thread ends the relay and reports the bytes,
 * then the proxy ends once the last has.  A thread still resolving or connecting is the
 * caller's to cut short (it kills the proxy after a while). */
static __attribute__((noreturn)) void stop(struct proxy *px)
{
  pthread_mutex_lock(&px->lock);
  px->stopping = true;
  for (unsigned i = 0; i < px->cfg->max_connections; i++)
    if (px->slots[i].used) {
      shutdown(px->slots[i].client, SHUT_RDWR);
      if (px->slots[i].origin >= 0)
        shutdown(px->slots[i].origin, SHUT_RDWR);
    }
  pthread_mutex_unlock(&px->lock);
  while (atomic_load(&px->active) > 0) {
    struct pollfd p = {px->events, 0, 0};
    if (poll(&p, 1, 10) > 0 && (p.revents & (POLLHUP | POLLERR)))
      break; /* the caller has gone: nobody to report to */
  }
  _exit(0);
}

/* The proxy's own filter: what a thread-per-connection relay with a resolver needs. */
static int confine_seccomp(void)
{
  static const int allowed[] = {
      SCMP_SYS(read), SCMP_SYS(write), SCMP_SYS(readv), SCMP_SYS(writev), SCMP_SYS(close),
      SCMP_SYS(poll), SCMP_SYS(ppoll), SCMP_SYS(accept4), SCMP_SYS(socket), SCMP_SYS(connect),
      SCMP_SYS(bind), SCMP_SYS(getsockopt), SCMP_SYS(setsockopt), SCMP_SYS(getsockname),
      SCMP_SYS(getpeername), SCMP_SYS(sendto), SCMP_SYS(recvfrom), SCMP_SYS(sendmsg),
      SCMP_SYS(recvmsg), SCMP_SYS(sendmmsg), SCMP_SYS(recvmmsg), SCMP_SYS(shutdown),
      SCMP_SYS(splice), SCMP_SYS(pipe2), SCMP_SYS(fcntl), SCMP_SYS(ioctl), SCMP_SYS(openat),
      SCMP_SYS(newfstatat), SCMP_SYS(fstat), SCMP_SYS(lseek), SCMP_SYS(mmap), SCMP_SYS(munmap),
      SCMP_SYS(mprotect), SCMP_SYS(madvise), SCMP_SYS(brk), SCMP_SYS(mremap), SCMP_SYS(futex),
      SCMP_SYS(clone), SCMP_SYS(clone3), SCMP_SYS(set_robust_list), SCMP_SYS(rseq),
      SCMP_SYS(rt_sigprocmask), SCMP_SYS(rt_sigaction), SCMP_SYS(rt_sigreturn),
      SCMP_SYS(sigaltstack), SCMP_SYS(clock_gettime), SCMP_SYS(clock_nanosleep),
      SCMP_SYS(nanosleep), SCMP_SYS(gettid), SCMP_SYS(getpid), SCMP_SYS(getrandom),
      SCMP_SYS(uname), SCMP_SYS(exit), SCMP_SYS(exit_group), SCMP_SYS(sched_yield),
      SCMP_SYS(sched_getaffinity), SCMP_SYS(prlimit64), SCMP_SYS(getuid), SCMP_SYS(getgid),
      SCMP_SYS(geteuid), SCMP_SYS(getegid), SCMP_SYS(stat), SCMP_SYS(access),
      SCMP_SYS(faccessat), SCMP_SYS(faccessat2), SCMP_SYS(readlink), SCMP_SYS(statx),
      SCMP_SYS(epoll_create1), SCMP_SYS(epoll_ctl), SCMP_SYS(epoll_wait), SCMP_SYS(eventfd2),
      SCMP_SYS(getdents64), SCMP_SYS(pread64), SCMP_SYS(socketpair), SCMP_SYS(membarrier),
  };
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ERRNO(EPERM));
  if (ctx == NULL)
    return -1;
  int rc = 0;
  for (size_t i = 0; i < sizeof(allowed) / sizeof(allowed[0]) && rc == 0; i++)
    if (allowed[i] >= 0)
      rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, allowed[i], 0);
  if (rc == 0)
    rc = seccomp_load(ctx);
  seccomp_release(ctx);
  return rc;
}

/* Before the first byte from the container: nobody, no capabilities, no way back. */
static int confine(const struct sr_egress_proxy_config *cfg)
{
  struct rlimit files = {cfg->max_connections * 4 + 32, cfg->max_connections * 4 + 32};
  struct rlimit core = {0, 0};
  /* Bounded memory: 256 connections of 256 KiB stacks and 64 KiB pipes fit many times over.
   * (Not under AddressSanitizer, whose shadow memory is terabytes of address space.) */
  struct rlimit as = {SR_EGRESS_PROXY_MAX_AS, SR_EGRESS_PROXY_MAX_AS};
#ifdef __SANITIZE_ADDRESS__
  as.rlim_cur = as.rlim_max = RLIM_INFINITY;
#endif
  if (setrlimit(RLIMIT_NOFILE, &files) < 0 || setrlimit(RLIMIT_CORE, &core) < 0 ||
      (as.rlim_max != RLIM_INFINITY && setrlimit(RLIMIT_AS, &as) < 0) ||
      setgroups(0, NULL) < 0 || setresgid(cfg->gid, cfg->gid, cfg->gid) < 0 ||
      setresuid(cfg->uid, cfg->uid, cfg->uid) < 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
      prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
    return -1;
  /* setresuid away from 0 cleared the permitted and effective sets; check it did. */
  if (getuid() == 0 || geteuid() == 0)
    return -1;
  /* The resolver's configuration and libraries, read-only; nothing else of the host's. */
  static const char *const readable[] = {"/etc", "/usr/lib", "/lib", "/lib64", "/usr/lib64",
                                         NULL};
  sr_error_t err = NULL;
  if (sr_landlock_confine_helper(readable, &err) < 0) {
    sr_error_free(&err);
    return -1;
  }
  return confine_seccomp();
}

/* A connection the proxy cannot serve: answered unread, and audited as a request all the same
 * (alike ones are counted, not written again). */
static void turn_away(struct proxy *px, int c, const char *why)
{
  struct sr_egress_event e = {.kind = SR_EGRESS_EVENT_DECISION};
  char body[128];
  e.request = atomic_fetch_add(&px->next_request, 1);
  copy_str(e.reason, sizeof(e.reason), why);
  snprintf(body, sizeof(body), "seerun: egress proxy: %s", why);
  answer(c, 503, body);
  close(c);
  report(px, &e);
}

static __attribute__((noreturn)) void proxy_main(const struct sr_egress_proxy_config *cfg,
                                                 int listen_fd, int events)
{
  struct proxy px = {.cfg = cfg, .events = events};
  atomic_init(&px.active, 0);
  atomic_init(&px.next_request, 1);
  pthread_mutex_init(&px.lock, NULL);
  px.slots = calloc(cfg->max_connections, sizeof(*px.slots));
  if (px.slots == NULL)
    _exit(125);
  if (confine(cfg) < 0)
    _exit(125);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize(&attr, 256 * 1024);
  for (;;) {
    struct pollfd p[2] = {{listen_fd, POLLIN, 0}, {events, POLLRDHUP, 0}};
    if (poll(p, 2, -1) < 0) {
      if (errno == EINTR)
        continue;
      _exit(1);
    }
    if (p[1].revents & (POLLHUP | POLLERR))
      _exit(0); /* the caller has gone: so does the proxy */
    if (p[1].revents & POLLRDHUP)
      stop(&px);
    if (!(p[0].revents & POLLIN))
      continue;
    int c = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
    if (c < 0)
      continue;
    if (atomic_load(&px.active) >= cfg->max_connections) {
      turn_away(&px, c, "too many connections at once");
      continue;
    }
    struct conn *cn = malloc(sizeof(*cn));
    pthread_t t;
    if (cn == NULL) {
      turn_away(&px, c, "out of memory");
      continue;
    }
    size_t slot = slot_take(&px, c);
    *cn = (struct conn){&px, c, slot};
    atomic_fetch_add(&px.active, 1);
    if (pthread_create(&t, &attr, conn_thread, cn) != 0) {
      atomic_fetch_sub(&px.active, 1);
      slot_free(&px, slot);
      turn_away(&px, c, "no thread to serve it");
      free(cn);
    }
  }
}

int sr_egress_proxy_start(const struct sr_egress_proxy_config *cfg, pid_t *pid, int *events,
                          sr_error_t *err)
{
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
    return sr_error_sys(err, "egress proxy: socketpair");
  pid_t p = fork();
  if (p < 0) {
    close(sv[0]);
    close(sv[1]);
    return sr_error_sys(err, "egress proxy: fork");
  }
  if (p == 0) {
    /* Only the listening socket and the event socket stay: nothing of the caller's. */
    close(sv[0]);
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || dup2(cfg->listen_fd, 3) < 0 || dup2(sv[1], 4) < 0)
      _exit(125);
    int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(devnull, 1) < 0 || dup2(devnull, 2) < 0)
      _exit(125);
    syscall(SYS_close_range, 5, ~0U, 0);
    proxy_main(cfg, 3, 4);
  }
  close(sv[1]);
  fcntl(sv[0], F_SETFL, fcntl(sv[0], F_GETFL) | O_NONBLOCK);
  *pid = p;
  *events = sv[0];
  return 0;
}

void sr_egress_proxy_stop(pid_t pid, int events, int timeout_ms, sr_egress_event_fn fn,
                          void *data)
{
  /* Our end shut for writing: the proxy shuts its connections down and reports them. */
  shutdown(events, SHUT_WR);
  uint64_t deadline = now_ms() + (uint64_t)timeout_ms;
  for (;;) {
    if (sr_egress_proxy_events_drain(events, fn, data) != 0)
      break; /* it has ended (or the socket failed) */
    uint64_t t = now_ms();
    if (t >= deadline)
      break;
    struct pollfd p = {events, POLLIN, 0};
    (void)poll(&p, 1, (int)(deadline - t));
  }
  kill(pid, SIGKILL);
  while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
    ;
  sr_egress_proxy_events_drain(events, fn, data);
}

int sr_egress_proxy_events_drain(int events, sr_egress_event_fn fn, void *data)
{
  for (;;) {
    struct sr_egress_event e;
    ssize_t n = recv(events, &e, sizeof(e), MSG_DONTWAIT);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return errno == EAGAIN ? 0 : -1;
    if (n == 0)
      return 1; /* the proxy has gone */
    if ((size_t)n != sizeof(e) || (e.kind != SR_EGRESS_EVENT_DECISION && e.kind != SR_EGRESS_EVENT_CLOSE))
      continue;
    /* The proxy parsed untrusted input before it wrote this: nothing in it is trusted. */
    e.method[sizeof(e.method) - 1] = '\0';
    e.host[sizeof(e.host) - 1] = '\0';
    e.address[sizeof(e.address) - 1] = '\0';
    e.reason[sizeof(e.reason) - 1] = '\0';
    e.allowed = e.allowed ? 1 : 0;
    fn(data, &e);
  }
}
