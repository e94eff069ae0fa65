/* The proxy's side of HTTP/1.x: a client's request head, parsed strictly (it is the
 * container's input) into what the proxy decides on, and, for a plain-HTTP forward request,
 * the head rewritten for the origin.  Pure. */
#ifndef SEERUN_EGRESS_HTTP_H
#define SEERUN_EGRESS_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A head longer than this is refused (431). */
#define SR_HTTP_HEAD_MAX 16384

struct sr_http_request {
  bool connect;        /* CONNECT host:port (a tunnel); else a forward request */
  char method[16];
  char host[256];      /* lower-case, no brackets, no trailing dot */
  uint16_t port;
  char *origin_head;   /* forward requests: the head for the origin (malloc'd, NUL-ended) */
  size_t origin_head_len;
  uint64_t content_length; /* forward requests: the body that follows the head */
};

enum sr_http_parse {
  SR_HTTP_OK = 0,
  SR_HTTP_NEED_MORE, /* no end of head yet */
  SR_HTTP_BAD,       /* *status and *reason say what to answer */
};

/* Parses the head at buf[0..len) (bytes read so far).  On SR_HTTP_OK, *head_len is the
 * head's length (the body or tunnel data start there).  On SR_HTTP_BAD, *status (400, 405,
 * 411, 431, 501, 505) and *reason (static text for the one-line body).  Free with
 * sr_egress_http_request_release. */
enum sr_http_parse sr_egress_http_parse_request(const char *buf, size_t len,
                                                struct sr_http_request *out, size_t *head_len,
                                                int *status, const char **reason);
void sr_egress_http_request_release(struct sr_http_request *r);

/* Whether a tunnel's first bytes b[0..n) start an HTTP/1.x request, as the most lenient
 * server would read them (empty lines first, any method token, the version anywhere on the
 * line): 1 yes, 0 no, -1 cannot tell yet (more is read, bounded by the caller).  Plain HTTP
 * inside a CONNECT tunnel would carry a Host header of any name of the address. */
int sr_egress_http_starts_request(const unsigned char *b, size_t n);

#endif
