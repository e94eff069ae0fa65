#include "build.h"

#include "egress_http.h"

#include "cleanup.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void sr_egress_http_request_release(struct sr_http_request *r)
{
  free(r->origin_head);
  memset(r, 0, sizeof(*r));
}

static enum sr_http_parse bad(int *status, const char **reason, int s, const char *why)
{
  *status = s;
  *reason = why;
  return SR_HTTP_BAD;
}

/* "host", "host:port", "[v6]:port" into host (lower-case) and port (0 when absent). */
static bool split_authority(const char *a, size_t n, char *host, size_t hsize, uint16_t *port)
{
  const char *end = a + n, *colon = NULL;
  const char *hs = a, *he;
  if (n == 0)
    return false;
  if (a[0] == '[') {
    const char *close = memchr(a, ']', n);
    if (close == NULL)
      return false;
    hs = a + 1;
    he = close;
    if (close + 1 < end) {
      if (close[1] != ':')
        return false;
      colon = close + 1;
    }
  } else {
    colon = memchr(a, ':', n);
    he = colon ? colon : end;
    if (colon && memchr(colon + 1, ':', (size_t)(end - colon - 1)))
      return false; /* a bare IPv6 address must be bracketed */
  }
  size_t hl = (size_t)(he - hs);
  if (hl == 0 || hl >= hsize)
    return false;
  for (size_t i = 0; i < hl; i++) {
    unsigned char c = (unsigned char)hs[i];
    if (!(isalnum(c) || c == '-' || c == '.' || c == '_' || (a[0] == '[' && c == ':')))
      return false;
    host[i] = (char)tolower(c);
  }
  host[hl] = '\0';
  if (hl > 1 && host[hl - 1] == '.')
    host[hl - 1] = '\0';
  *port = 0;
  if (colon) {
    unsigned long p = 0;
    const char *d = colon + 1;
    if (d == end || end - d > 5)
      return false;
    for (; d < end; d++) {
      if (!isdigit((unsigned char)*d))
        return false;
      p = p * 10 + (unsigned long)(*d - '0');
    }
    if (p == 0 || p > 65535)
      return false;
    *port = (uint16_t)p;
  }
  return true;
}

static bool token_char(unsigned char c)
{
  return isalnum(c) || (c && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

int sr_egress_http_starts_request(const unsigned char *b, size_t n)
{
  size_t i = 0;
  /* Servers skip empty lines before a request line (RFC 9112 2.2); some, any white space. */
  while (i < n && (b[i] == '\r' || b[i] == '\n' || b[i] == ' ' || b[i] == '\t'))
    i++;
  size_t method = i;
  /* Any method token, of any case: servers and frameworks take methods beyond GET's kind. */
  while (i < n && token_char(b[i]))
    i++;
  if (i == n)
    return -1;
  if (i == method || !(b[i] == ' ' || b[i] == '\t' || b[i] == '\v' || b[i] == '\f'))
    return 0;
  /* The version anywhere before the LF, in any case: a lenient server reads a bare CR as a
   * space (RFC 9112 2.2 allows it) and HTTP/ in lower case. */
  const unsigned char *eol = memchr(b + i, '\n', n - i);
  if (eol == NULL)
    return -1;
  for (const unsigned char *p = b + i; p + 5 <= eol; p++)
    if (strncasecmp((const char *)p, "HTTP/", 5) == 0)
      return 1;
  return 0;
}

/* Hop-by-hop and proxy headers that must not reach the origin (RFC 9110 7.6.1). */
static bool drop_header(const char *name, size_t n)
{
  static const char *const drop[] = {"connection", "proxy-connection", "keep-alive",
                                     "proxy-authorization", "proxy-authenticate", "te",
                                     "trailer", "upgrade"};
  for (size_t i = 0; i < sizeof(drop) / sizeof(drop[0]); i++)
    if (strlen(drop[i]) == n && strncasecmp(name, drop[i], n) == 0)
      return true;
  return false;
}

static bool header_is(const char *name, size_t n, const char *want)
{
  return strlen(want) == n && strncasecmp(name, want, n) == 0;
}

enum sr_http_parse sr_egress_http_parse_request(const char *buf, size_t len,
                                                struct sr_http_request *out, size_t *head_len,
                                                int *status, const char **reason)
{
  memset(out, 0, sizeof(*out));
  const char *end = NULL;
  for (size_t i = 0; i + 3 < len; i++)
    if (memcmp(buf + i, "\r\n\r\n", 4) == 0) {
      end = buf + i + 4;
      break;
    }
  if (end == NULL)
    return len >= SR_HTTP_HEAD_MAX ? bad(status, reason, 431, "request head too large")
                                   : SR_HTTP_NEED_MORE;
  if ((size_t)(end - buf) > SR_HTTP_HEAD_MAX)
    return bad(status, reason, 431, "request head too large");
  /* CR only before LF, and no other control byte but HTAB (RFC 9110 5.5): a lenient origin
   * ends a line at a bare CR (Python's email parser) or elsewhere, and would read a header
   * hidden inside one of ours, e.g. a second Host. */
  for (const char *c = buf; c < end; c++) {
    unsigned char u = (unsigned char)*c;
    bool crlf = (u == '\r' && c + 1 < end && c[1] == '\n') ||
                (u == '\n' && c > buf && c[-1] == '\r');
    if ((u < 0x20 && u != '\t' && !crlf) || u == 0x7f)
      return bad(status, reason, 400,
                 "malformed request head (a control character: bare CR or LF, NUL, ...)");
  }

  /* Request line: METHOD SP TARGET SP HTTP/1.x */
  /* The buffer is not NUL-terminated: every search stays inside the head. */
  const char *eol = memmem(buf, (size_t)(end - buf), "\r\n", 2);
  const char *sp1 = memchr(buf, ' ', (size_t)(eol - buf));
  if (sp1 == NULL || sp1 == buf || (size_t)(sp1 - buf) >= sizeof(out->method))
    return bad(status, reason, 400, "malformed request line");
  for (const char *c = buf; c < sp1; c++)
    if (!token_char((unsigned char)*c))
      return bad(status, reason, 400, "malformed request method");
  memcpy(out->method, buf, (size_t)(sp1 - buf));
  const char *target = sp1 + 1;
  const char *sp2 = memchr(target, ' ', (size_t)(eol - target));
  if (sp2 == NULL || sp2 == target)
    return bad(status, reason, 400, "malformed request line");
  size_t vlen = (size_t)(eol - sp2 - 1);
  if (vlen != 8 || (memcmp(sp2 + 1, "HTTP/1.1", 8) != 0 && memcmp(sp2 + 1, "HTTP/1.0", 8) != 0))
    return bad(status, reason, 505, "only HTTP/1.0 and HTTP/1.1 are proxied");
  size_t tlen = (size_t)(sp2 - target);

  const char *path = NULL;
  size_t plen = 0;
  if (strcmp(out->method, "CONNECT") == 0) {
    out->connect = true;
    if (!split_authority(target, tlen, out->host, sizeof(out->host), &out->port) ||
        out->port == 0)
      return bad(status, reason, 400, "CONNECT needs host:port");
  } else {
    static const char http[] = "http://";
    if (tlen < sizeof(http) - 1 || strncasecmp(target, http, sizeof(http) - 1) != 0)
      return bad(status, reason, 400,
                 tlen >= 8 && strncasecmp(target, "https://", 8) == 0
                     ? "https through a proxy goes with CONNECT"
                     : "a proxy request needs an absolute http:// URL");
    const char *auth = target + sizeof(http) - 1;
    const char *slash = memchr(auth, '/', (size_t)(sp2 - auth));
    const char *q = memchr(auth, '?', (size_t)(sp2 - auth));
    const char *aend = slash ? slash : sp2;
    if (q && q < aend)
      aend = q;
    if (memchr(auth, '@', (size_t)(aend - auth)))
      return bad(status, reason, 400, "user information in a proxy URL is not accepted");
    if (!split_authority(auth, (size_t)(aend - auth), out->host, sizeof(out->host), &out->port))
      return bad(status, reason, 400, "malformed host in the request URL");
    if (out->port == 0)
      out->port = 80;
    path = aend;
    plen = (size_t)(sp2 - aend);
  }

  /* Headers: name ":" value; the forward request's are copied for the origin. */
  /* The origin's head is the client's, less the scheme and authority of the URL and the
   * dropped headers, plus at most a Host line and the Connection line. */
  size_t cap = (size_t)(end - buf) + 512;
  _cleanup_free_ char *o = NULL;
  size_t ol = 0;
  if (!out->connect) {
    o = malloc(cap + plen + 1);
    if (o == NULL)
      return bad(status, reason, 500, "out of memory");
    ol = (size_t)snprintf(o, cap, "%s ", out->method);
    if (plen == 0 || path[0] == '?')
      o[ol++] = '/';
    memcpy(o + ol, path, plen);
    ol += plen;
    memcpy(o + ol, sp2, 11); /* " HTTP/1.x\r\n" */
    ol += 11;
  }
  bool have_host = false, have_length = false;
  for (const char *line = eol + 2; line < end - 2;) {
    const char *le = memmem(line, (size_t)(end - line), "\r\n", 2);
    const char *colon = memchr(line, ':', (size_t)(le - line));
    if (colon == NULL || colon == line)
      return bad(status, reason, 400, "malformed request header");
    for (const char *c = line; c < colon; c++)
      if (!token_char((unsigned char)*c))
        return bad(status, reason, 400, "malformed request header");
    size_t nl = (size_t)(colon - line);
    const char *v = colon + 1;
    while (v < le && (*v == ' ' || *v == '\t'))
      v++;
    size_t vl = (size_t)(le - v);
    while (vl && (v[vl - 1] == ' ' || v[vl - 1] == '\t'))
      vl--;
    if (!out->connect) {
      if (header_is(line, nl, "transfer-encoding"))
        return bad(status, reason, 501,
                   "a chunked request body is not proxied over plain http (use https)");
      if (header_is(line, nl, "content-length")) {
        char num[24];
        char *e;
        if (have_length || vl == 0 || vl >= sizeof(num))
          return bad(status, reason, 400, "malformed request header");
        memcpy(num, v, vl);
        num[vl] = '\0';
        errno = 0;
        out->content_length = strtoull(num, &e, 10);
        if (*e || errno || !isdigit((unsigned char)num[0]))
          return bad(status, reason, 400, "malformed request header");
        have_length = true;
      }
      if (header_is(line, nl, "host")) {
        char h[256];
        uint16_t hp;
        if (have_host || !split_authority(v, vl, h, sizeof(h), &hp) ||
            strcmp(h, out->host) != 0 || (hp && hp != out->port) ||
            (!hp && out->port != 80))
          return bad(status, reason, 400, "the Host header must name the request URL's host");
        have_host = true;
      }
      if (!drop_header(line, nl)) {
        memcpy(o + ol, line, (size_t)(le - line) + 2);
        ol += (size_t)(le - line) + 2;
      }
    }
    line = le + 2;
  }
  if (!out->connect) {
    if (!have_host) {
      bool v6 = strchr(out->host, ':') != NULL;
      ol += (size_t)snprintf(o + ol, cap + plen + 1 - ol, "Host: %s%s%s", v6 ? "[" : "",
                             out->host, v6 ? "]" : "");
      if (out->port != 80)
        ol += (size_t)snprintf(o + ol, cap + plen + 1 - ol, ":%u", out->port);
      memcpy(o + ol, "\r\n", 2);
      ol += 2;
    }
    /* One request per connection to the origin: a second one on the same connection could
     * name another virtual host of the same address. */
    static const char tail[] = "Connection: close\r\n\r\n";
    memcpy(o + ol, tail, sizeof(tail));
    ol += sizeof(tail) - 1;
    out->origin_head = steal_ptr(o);
    out->origin_head_len = ol;
  }
  *head_len = (size_t)(end - buf);
  return SR_HTTP_OK;
}
