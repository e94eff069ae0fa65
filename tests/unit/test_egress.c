/* The egress proxy's pure parts: host entries and their matching, address classes, the HTTP
 * request head and the TLS ClientHello's server name (runtime/policy/policy_egress.c,
 * runtime/supervisor/egress_http.c, runtime/supervisor/tls_sni.c). */
#include "build.h"

#include "egress_http.h"
#include "policy.h"
#include "policy_egress.h"
#include "tls_sni.h"

#include <sys/socket.h>

#include "unit.h"

static struct sr_arena arena; /* zeroed: empty */

static struct sr_egress_host host(const char *text)
{
  struct sr_egress_host h;
  sr_error_t err = NULL;
  CHECK_OK(sr_policy_egress_host_parse(&arena, text, "allow[0]", &h, &err), err);
  return h;
}

static void host_refused(const char *text, const char *want)
{
  struct sr_egress_host h;
  sr_error_t err = NULL;
  CHECK(sr_policy_egress_host_parse(&arena, text, "allow[0]", &h, &err) < 0);
  char *msg = err ? sr_error_text(err) : NULL;
  CHECK(msg && strstr(msg, want));
  if (msg == NULL || strstr(msg, want) == NULL)
    fprintf(stderr, "  %s: got %s\n", text, msg ? msg : "(no error)");
  free(msg);
  sr_error_free(&err);
}

static void host_entries_parse_and_match(void)
{
  struct sr_egress_host h = host("PyPI.org");
  CHECK_STR_EQ(h.name, "pypi.org");
  CHECK(sr_policy_egress_host_matches(&h, "pypi.org", 443));
  CHECK(sr_policy_egress_host_matches(&h, "pypi.org", 80));
  CHECK(!sr_policy_egress_host_matches(&h, "pypi.org", 8080));
  CHECK(!sr_policy_egress_host_matches(&h, "evilpypi.org", 443));
  CHECK(!sr_policy_egress_host_matches(&h, "files.pypi.org", 443));

  h = host("*.example.org");
  CHECK(h.wildcard);
  CHECK(sr_policy_egress_host_matches(&h, "a.example.org", 443));
  CHECK(sr_policy_egress_host_matches(&h, "a.b.example.org", 443));
  CHECK(!sr_policy_egress_host_matches(&h, "example.org", 443));
  CHECK(!sr_policy_egress_host_matches(&h, "badexample.org", 443));

  h = host("git.example.org:22");
  CHECK(sr_policy_egress_host_matches(&h, "git.example.org", 22));
  CHECK(!sr_policy_egress_host_matches(&h, "git.example.org", 443));

  h = host("192.0.2.7");
  CHECK(h.is_ip);
  CHECK(sr_policy_egress_host_matches(&h, "192.0.2.7", 443));
  CHECK(!sr_policy_egress_host_matches(&h, "192.0.2.8", 443));
  h = host("[2001:db8::1]:8443");
  CHECK(h.is_ip && h.port == 8443);
  CHECK(sr_policy_egress_host_matches(&h, "2001:db8:0::1", 8443));
  /* A name entry never matches an IP literal, whatever it resolves to. */
  h = host("localhost");
  CHECK(!sr_policy_egress_host_matches(&h, "127.0.0.1", 80));

  host_refused("", "not a host name");
  host_refused("a..b", "not a host name");
  host_refused("exa mple.org", "not a host name");
  host_refused("*.*.org", "wildcard");
  host_refused("foo.*.org", "not a host name");
  host_refused("host:0", "port");
  host_refused("host:70000", "port");
  host_refused("2001:db8::1", "brackets");
  host_refused("[nope]:80", "not an IPv6 address");
}

static void deny_wins_and_annotations_only_narrow(void)
{
  struct sr_egress_host allow[] = {host("*.example.org"), host("pypi.org")};
  struct sr_egress_host deny[] = {host("secret.example.org")};
  struct sr_egress p = {.allow = allow, .n_allow = 2, .deny = deny, .n_deny = 1};
  const char *knob;
  CHECK_INT_EQ(sr_policy_egress_judge(&p, NULL, 0, NULL, 0, "a.example.org", 443, &knob),
               SR_EGRESS_ALLOW);
  CHECK_INT_EQ(sr_policy_egress_judge(&p, NULL, 0, NULL, 0, "secret.example.org", 443, &knob),
               SR_EGRESS_DENY);
  CHECK_STR_EQ(knob, "network.egress.deny");
  CHECK_INT_EQ(sr_policy_egress_judge(&p, NULL, 0, NULL, 0, "example.com", 443, &knob),
               SR_EGRESS_DENY);
  CHECK_STR_EQ(knob, "network.egress.allow");

  /* The annotation narrows: pypi.org is the profile's, but not the annotation's. */
  struct sr_egress_host narrow[] = {host("a.example.org"), host("other.net")};
  CHECK_INT_EQ(sr_policy_egress_judge(&p, NULL, 0, narrow, 2, "pypi.org", 443, &knob),
               SR_EGRESS_DENY);
  CHECK_STR_EQ(knob, "io.seerun.egress.allow");
  CHECK_INT_EQ(sr_policy_egress_judge(&p, NULL, 0, narrow, 2, "a.example.org", 443, &knob),
               SR_EGRESS_ALLOW);
  /* ... and cannot widen: other.net is the annotation's only. */
  CHECK_INT_EQ(sr_policy_egress_judge(&p, NULL, 0, narrow, 2, "other.net", 443, &knob),
               SR_EGRESS_DENY);

  /* The sandbox caller's --allow-host widens, but never past deny. */
  struct sr_egress_host extra[] = {host("other.net"), host("secret.example.org")};
  CHECK_INT_EQ(sr_policy_egress_judge(&p, extra, 2, NULL, 0, "other.net", 443, &knob),
               SR_EGRESS_ALLOW);
  CHECK_INT_EQ(sr_policy_egress_judge(&p, extra, 2, NULL, 0, "secret.example.org", 443, &knob),
               SR_EGRESS_DENY);
}

static enum sr_addr_class cls(const char *text)
{
  struct sr_ipaddr a;
  CHECK(sr_policy_egress_ipaddr_parse(text, &a) == 0);
  return sr_policy_egress_addr_classify(&a);
}

static void address_classes(void)
{
  CHECK_INT_EQ(cls("8.8.8.8"), SR_ADDR_PUBLIC);
  CHECK_INT_EQ(cls("2606:4700:4700::1111"), SR_ADDR_PUBLIC);
  CHECK_INT_EQ(cls("127.0.0.1"), SR_ADDR_LOOPBACK);
  CHECK_INT_EQ(cls("127.255.0.9"), SR_ADDR_LOOPBACK);
  CHECK_INT_EQ(cls("::1"), SR_ADDR_LOOPBACK);
  CHECK_INT_EQ(cls("::ffff:127.0.0.1"), SR_ADDR_LOOPBACK);
  /* IPv4-translated (SIIT, RFC 2765): a translator makes it the IPv4 address it embeds. */
  CHECK_INT_EQ(cls("::ffff:0:127.0.0.1"), SR_ADDR_SPECIAL);
  CHECK_INT_EQ(cls("169.254.169.254"), SR_ADDR_LINK_LOCAL);
  CHECK_INT_EQ(cls("fe80::1"), SR_ADDR_LINK_LOCAL);
  CHECK_INT_EQ(cls("10.1.2.3"), SR_ADDR_PRIVATE);
  CHECK_INT_EQ(cls("172.31.255.255"), SR_ADDR_PRIVATE);
  CHECK_INT_EQ(cls("172.32.0.1"), SR_ADDR_PUBLIC);
  CHECK_INT_EQ(cls("192.168.1.1"), SR_ADDR_PRIVATE);
  CHECK_INT_EQ(cls("100.64.0.1"), SR_ADDR_PRIVATE);
  CHECK_INT_EQ(cls("fd00::1"), SR_ADDR_PRIVATE);
  CHECK_INT_EQ(cls("224.0.0.1"), SR_ADDR_MULTICAST);
  CHECK_INT_EQ(cls("ff02::1"), SR_ADDR_MULTICAST);
  CHECK_INT_EQ(cls("255.255.255.255"), SR_ADDR_MULTICAST);
  CHECK_INT_EQ(cls("0.0.0.0"), SR_ADDR_UNSPECIFIED);
  CHECK_INT_EQ(cls("::"), SR_ADDR_UNSPECIFIED);
  CHECK_INT_EQ(cls("192.0.2.1"), SR_ADDR_SPECIAL);
  CHECK_INT_EQ(cls("198.18.0.1"), SR_ADDR_SPECIAL);
  CHECK_INT_EQ(cls("240.0.0.1"), SR_ADDR_SPECIAL);
  CHECK_INT_EQ(cls("64:ff9b::7f00:1"), SR_ADDR_SPECIAL); /* NAT64 of 127.0.0.1 */
  CHECK_INT_EQ(cls("2002:7f00:1::"), SR_ADDR_SPECIAL);   /* 6to4 of 127.0.0.1 */
  CHECK_INT_EQ(cls("::127.0.0.1"), SR_ADDR_SPECIAL);     /* IPv4-compatible */
}

static void allowed_addresses_and_the_hosts_own(void)
{
  struct sr_cidr ranges[1];
  CHECK(sr_policy_egress_cidr_parse("10.200.0.0/24", &ranges[0]) == 0);
  struct sr_egress p = {.allow_addresses = ranges, .n_allow_addresses = 1};
  struct sr_ipaddr a;
  const char *why;
  CHECK(sr_policy_egress_ipaddr_parse("10.200.0.9", &a) == 0);
  CHECK(sr_policy_egress_address_allowed(&p, &a, false, &why));
  CHECK(sr_policy_egress_ipaddr_parse("10.201.0.9", &a) == 0);
  CHECK(!sr_policy_egress_address_allowed(&p, &a, false, &why));
  CHECK_STR_EQ(why, "private");
  CHECK(sr_policy_egress_ipaddr_parse("169.254.169.254", &a) == 0);
  CHECK(!sr_policy_egress_address_allowed(&p, &a, false, &why));
  CHECK_STR_EQ(why, "link-local");
  /* A public address of the host itself is refused: its other services listen there. */
  CHECK(sr_policy_egress_ipaddr_parse("::ffff:203.0.114.5", &a) == 0);
  CHECK(!sr_policy_egress_address_allowed(&p, &a, true, &why));
  CHECK_STR_EQ(why, "an address of this host");
  struct sr_ipaddr u = sr_policy_egress_ipaddr_unmapped(&a);
  CHECK(u.family == AF_INET && u.bytes[0] == 203 && u.bytes[3] == 5);
  CHECK(sr_policy_egress_ipaddr_parse("203.0.114.6", &a) == 0);
  CHECK(sr_policy_egress_address_allowed(&p, &a, false, &why));
  /* ... unless a range names it (a site's mirror on this host). */
  CHECK(sr_policy_egress_ipaddr_parse("10.200.0.1", &a) == 0);
  CHECK(sr_policy_egress_address_allowed(&p, &a, true, &why));

  struct sr_cidr c;
  CHECK(sr_policy_egress_cidr_parse("10.0.0.0/33", &c) < 0);
  CHECK(sr_policy_egress_cidr_parse("10.0.0.0/", &c) < 0);
  CHECK(sr_policy_egress_cidr_parse("fd00::/7", &c) == 0 && c.prefix == 7);
}

static enum sr_http_parse parse(const char *text, struct sr_http_request *r, int *status,
                                const char **reason)
{
  size_t head = 0;
  return sr_egress_http_parse_request(text, strlen(text), r, &head, status, reason);
}

static void http_connect_and_forward_requests(void)
{
  struct sr_http_request r;
  int status = 0;
  const char *reason = NULL;
  size_t head = 0;
  const char *c = "CONNECT PyPI.org:443 HTTP/1.1\r\nHost: pypi.org:443\r\n\r\n\x16\x03";
  CHECK_INT_EQ(sr_egress_http_parse_request(c, strlen(c), &r, &head, &status, &reason), SR_HTTP_OK);
  CHECK(r.connect);
  CHECK_STR_EQ(r.host, "pypi.org");
  CHECK_INT_EQ(r.port, 443);
  CHECK_INT_EQ(head, strlen(c) - 2);
  sr_egress_http_request_release(&r);

  CHECK_INT_EQ(parse("CONNECT [2001:db8::1]:8443 HTTP/1.1\r\n\r\n", &r, &status, &reason),
               SR_HTTP_OK);
  CHECK_STR_EQ(r.host, "2001:db8::1");
  sr_egress_http_request_release(&r);

  CHECK_INT_EQ(parse("GET http://Example.org:8080/a/b?c=d HTTP/1.1\r\nHost: example.org:8080\r\n"
                     "Proxy-Connection: keep-alive\r\nProxy-Authorization: Basic x\r\n"
                     "Connection: keep-alive\r\nAccept: */*\r\n\r\n",
                     &r, &status, &reason),
               SR_HTTP_OK);
  CHECK(!r.connect);
  CHECK_STR_EQ(r.host, "example.org");
  CHECK_INT_EQ(r.port, 8080);
  CHECK_STR_EQ(r.origin_head, "GET /a/b?c=d HTTP/1.1\r\nHost: example.org:8080\r\n"
                              "Accept: */*\r\nConnection: close\r\n\r\n");
  sr_egress_http_request_release(&r);

  CHECK_INT_EQ(parse("GET http://example.org HTTP/1.0\r\n\r\n", &r, &status, &reason), SR_HTTP_OK);
  CHECK_STR_EQ(r.origin_head, "GET / HTTP/1.0\r\nHost: example.org\r\nConnection: close\r\n\r\n");
  CHECK_INT_EQ(r.port, 80);
  sr_egress_http_request_release(&r);

  CHECK_INT_EQ(parse("POST http://example.org/x HTTP/1.1\r\nHost: example.org\r\n"
                     "Content-Length: 5\r\n\r\nhello",
                     &r, &status, &reason),
               SR_HTTP_OK);
  CHECK_INT_EQ(r.content_length, 5);
  sr_egress_http_request_release(&r);
}

static void http_bad(const char *text, int want_status)
{
  struct sr_http_request r;
  int status = 0;
  const char *reason = NULL;
  CHECK_INT_EQ(parse(text, &r, &status, &reason), SR_HTTP_BAD);
  CHECK_INT_EQ(status, want_status);
  CHECK(reason != NULL);
  sr_egress_http_request_release(&r);
}

static void http_requests_refused(void)
{
  struct sr_http_request r;
  int status;
  const char *reason;
  CHECK_INT_EQ(parse("CONNECT a:443 HTTP/1.1\r\n", &r, &status, &reason), SR_HTTP_NEED_MORE);
  http_bad("CONNECT example.org HTTP/1.1\r\n\r\n", 400);
  http_bad("GET /local HTTP/1.1\r\nHost: x\r\n\r\n", 400);
  http_bad("GET https://example.org/ HTTP/1.1\r\n\r\n", 400);
  http_bad("GET http://user@evil.org@example.org/ HTTP/1.1\r\n\r\n", 400);
  /* Host must agree with the URL: an allowed URL cannot carry another virtual host. */
  http_bad("GET http://example.org/ HTTP/1.1\r\nHost: evil.org\r\n\r\n", 400);
  http_bad("GET http://example.org/ HTTP/1.1\r\nHost: example.org\r\nHost: evil.org\r\n\r\n", 400);
  http_bad("POST http://example.org/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", 501);
  http_bad("POST http://example.org/ HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
           400);
  http_bad("GET http://example.org/ HTTP/2.0\r\n\r\n", 505);
  http_bad("GET http://example.org/ HTTP/1.1\nHost: x\r\n\r\n", 400);
  http_bad("GET http://example.org/ HTTP/1.1\r\nBad Header: x\r\n\r\n", 400);
  /* A bare CR, or any control byte but HTAB: a lenient origin ends a line there and would
   * read the Host hidden behind it (red team). */
  http_bad("GET http://example.org/ HTTP/1.1\r\nX: a\rHost: evil.org\r\nHost: example.org\r\n"
           "\r\n", 400);
  http_bad("GET http://example.org/\r HTTP/1.1\r\n\r\n", 400);
  http_bad("GET http://example.org/ HTTP/1.1\r\nX: a\x0b\r\n\r\n", 400);
  http_bad("GET http://example.org/ HTTP/1.1\r\nX: a\x7f\r\n\r\n", 400);
  CHECK_INT_EQ(parse("GET http://example.org/ HTTP/1.1\r\nX: a\tb\r\n\r\n", &r, &status, &reason),
               SR_HTTP_OK);
  sr_egress_http_request_release(&r);
  char big[SR_HTTP_HEAD_MAX + 10];
  memset(big, 'a', sizeof(big) - 1);
  big[sizeof(big) - 1] = '\0';
  memcpy(big, "GET http://x/ HTTP/1.1\r\nX: ", 27);
  http_bad(big, 431);
}

/* A ClientHello with the given server name (NULL: no server_name extension). */
static size_t client_hello(unsigned char *out, const char *sni)
{
  unsigned char body[512];
  size_t n = 0;
  body[n++] = 3;
  body[n++] = 3; /* legacy_version */
  memset(body + n, 7, 32);
  n += 32;
  body[n++] = 0;  /* session id */
  body[n++] = 0;
  body[n++] = 2;  /* cipher suites */
  body[n++] = 0x13;
  body[n++] = 0x01;
  body[n++] = 1;
  body[n++] = 0; /* compression */
  unsigned char ext[300];
  size_t e = 0;
  ext[e++] = 0x00;
  ext[e++] = 0x0b; /* ec_point_formats first */
  ext[e++] = 0;
  ext[e++] = 2;
  ext[e++] = 1;
  ext[e++] = 0;
  if (sni) {
    size_t l = strlen(sni);
    ext[e++] = 0;
    ext[e++] = 0; /* server_name */
    ext[e++] = (unsigned char)((l + 5) >> 8);
    ext[e++] = (unsigned char)(l + 5);
    ext[e++] = (unsigned char)((l + 3) >> 8);
    ext[e++] = (unsigned char)(l + 3);
    ext[e++] = 0; /* host_name */
    ext[e++] = (unsigned char)(l >> 8);
    ext[e++] = (unsigned char)l;
    memcpy(ext + e, sni, l);
    e += l;
  }
  body[n++] = (unsigned char)(e >> 8);
  body[n++] = (unsigned char)e;
  memcpy(body + n, ext, e);
  n += e;
  size_t o = 0;
  out[o++] = 22;
  out[o++] = 3;
  out[o++] = 1;
  out[o++] = (unsigned char)((n + 4) >> 8);
  out[o++] = (unsigned char)(n + 4);
  out[o++] = 1;
  out[o++] = 0;
  out[o++] = (unsigned char)(n >> 8);
  out[o++] = (unsigned char)n;
  memcpy(out + o, body, n);
  return o + n;
}

static void tls_server_name(void)
{
  unsigned char hello[600], frag[700];
  char name[256];
  size_t n = client_hello(hello, "PyPI.org");
  CHECK_INT_EQ(sr_tls_sni_client_hello(hello, n, name, sizeof(name)), SR_SNI_FOUND);
  CHECK_STR_EQ(name, "pypi.org");
  for (size_t k = 0; k < n; k += 7)
    CHECK_INT_EQ(sr_tls_sni_client_hello(hello, k, name, sizeof(name)), SR_SNI_NEED_MORE);

  n = client_hello(hello, NULL);
  CHECK_INT_EQ(sr_tls_sni_client_hello(hello, n, name, sizeof(name)), SR_SNI_ABSENT);

  /* The same hello split over two records. */
  n = client_hello(hello, "a.example.org");
  size_t first = 20, rest = n - 5 - first;
  memcpy(frag, hello, 5 + first);
  frag[3] = (unsigned char)(first >> 8);
  frag[4] = (unsigned char)first;
  frag[5 + first] = 22;
  frag[6 + first] = 3;
  frag[7 + first] = 1;
  frag[8 + first] = (unsigned char)(rest >> 8);
  frag[9 + first] = (unsigned char)rest;
  memcpy(frag + 10 + first, hello + 5 + first, rest);
  CHECK_INT_EQ(sr_tls_sni_client_hello(frag, n + 5, name, sizeof(name)), SR_SNI_FOUND);
  CHECK_STR_EQ(name, "a.example.org");

  CHECK_INT_EQ(
      sr_tls_sni_client_hello((const unsigned char *)"SSH-2.0-x\r\n", 11, name, sizeof(name)),
      SR_SNI_NOT_TLS);
  /* A hello in a record of another version is one (servers ignore the record version); a
   * warning alert before it is not another protocol (red team). */
  n = client_hello(hello, "pypi.org");
  hello[1] = 0;
  hello[2] = 0;
  CHECK_INT_EQ(sr_tls_sni_client_hello(hello, n, name, sizeof(name)), SR_SNI_FOUND);
  CHECK_STR_EQ(name, "pypi.org");
  static const unsigned char alert[] = {21, 3, 3, 0, 2, 1, 90, 22};
  CHECK_INT_EQ(sr_tls_sni_client_hello(alert, sizeof(alert), name, sizeof(name)),
               SR_SNI_MALFORMED);
  CHECK_INT_EQ(sr_tls_sni_client_hello(alert, 3, name, sizeof(name)), SR_SNI_NEED_MORE);
  /* A lying length inside the hello. */
  n = client_hello(hello, "pypi.org");
  hello[9 + 2 + 32] = 200; /* session id length past the end */
  CHECK_INT_EQ(sr_tls_sni_client_hello(hello, n, name, sizeof(name)), SR_SNI_MALFORMED);
  /* A handshake that is not a ClientHello. */
  n = client_hello(hello, "pypi.org");
  hello[5] = 2;
  CHECK_INT_EQ(sr_tls_sni_client_hello(hello, n, name, sizeof(name)), SR_SNI_MALFORMED);
  /* A control character in the name. */
  n = client_hello(hello, "pypi\001org");
  CHECK_INT_EQ(sr_tls_sni_client_hello(hello, n, name, sizeof(name)), SR_SNI_MALFORMED);
}

static struct sr_policy *policy(const char *profiles, sr_error_t *err)
{
  char buf[4096];
  snprintf(buf, sizeof(buf), "{\"version\": 1, \"defaultProfile\": \"a\", \"profiles\": %s}",
           profiles);
  struct sr_policy *p = NULL;
  if (sr_policy_parse(buf, strlen(buf), "policy.json", &p, err) < 0)
    return NULL;
  return p;
}

static void egress_knobs_parse_inherit_and_render(void)
{
  sr_error_t err = NULL;
  struct sr_policy *p = policy(
      "{\"base\": {\"network\": {\"proxy\": true, \"egress\": {\"allow\": [\"pypi.org\"],"
      "   \"pins\": {\"Mirror.test\": \"10.200.0.2\"}, \"allowAddresses\": [\"10.200.0.0/24\"]}}},"
      " \"a\": {\"base\": \"base\", \"network\": {\"mode\": \"proxy\","
      "   \"egress\": {\"deny\": [\"*.evil.test\"], \"bindAddress\": \"192.0.2.1\"}}}}",
      &err);
  CHECK_OK(p ? 0 : -1, err);
  if (p == NULL)
    return;
  const struct sr_policy_profile *a = sr_policy_profile(p, "a");
  CHECK(a && a->network.proxy && a->network.mode_proxy);
  CHECK_INT_EQ(a->network.egress.n_allow, 1); /* inherited key by key from the base */
  CHECK_STR_EQ(a->network.egress.allow[0].name, "pypi.org");
  CHECK_INT_EQ(a->network.egress.n_deny, 1);
  CHECK(a->network.egress.deny[0].wildcard);
  CHECK_INT_EQ(a->network.egress.n_pins, 1);
  CHECK_STR_EQ(a->network.egress.pins[0].name, "mirror.test");
  CHECK_STR_EQ(a->network.egress.bind_address, "192.0.2.1");
  CHECK(!a->network.egress.caller_may_allow);
  const struct sr_policy_profile *b = sr_policy_profile(p, "base");
  CHECK(b && b->network.proxy && !b->network.mode_proxy && b->network.egress.n_deny == 0);
  sr_policy_free(p);
}

static void policy_refused(const char *profiles, const char *want)
{
  sr_error_t err = NULL;
  struct sr_policy *p = policy(profiles, &err);
  CHECK(p == NULL);
  char *msg = err ? sr_error_text(err) : NULL;
  CHECK(msg && strstr(msg, want));
  if (msg == NULL || strstr(msg, want) == NULL)
    fprintf(stderr, "  got %s\n", msg ? msg : "(no error)");
  free(msg);
  sr_error_free(&err);
  if (p)
    sr_policy_free(p);
}

static void bad_egress_knobs_are_refused_naming_them(void)
{
  policy_refused("{\"a\": {\"network\": {\"egress\": {\"allow\": [\"ok.org\", \"bad host\"]}}}}",
                 "profiles.a.network.egress.allow[1]: \"bad host\" is not a host name");
  policy_refused("{\"a\": {\"network\": {\"egress\": {\"allowAddresses\": [\"10.0.0.0/40\"]}}}}",
                 "profiles.a.network.egress.allowAddresses[0]");
  policy_refused("{\"a\": {\"network\": {\"egress\": {\"pins\": {\"*.x.org\": \"10.0.0.1\"}}}}}",
                 "a pin names one host");
  policy_refused("{\"a\": {\"network\": {\"egress\": {\"pins\": {\"x.org\": \"nope\"}}}}}",
                 "must be an IP address");
  policy_refused("{\"a\": {\"network\": {\"mode\": \"full\"}}}", "is not \"none\" or \"proxy\"");
  policy_refused("{\"a\": {\"network\": {\"egress\": {\"alow\": []}}}}", "alow");
}

static int starts(const char *text)
{
  return sr_egress_http_starts_request((const unsigned char *)text, strlen(text));
}

/* Plain HTTP inside a tunnel, as the most lenient server reads it (red team: empty lines
 * before the request line, methods not all capitals). */
static void http_inside_a_tunnel(void)
{
  CHECK_INT_EQ(starts("GET / HTTP/1.1\r\n"), 1);
  CHECK_INT_EQ(starts("\r\nGET / HTTP/1.1\r\n"), 1);
  CHECK_INT_EQ(starts("\r\n\n \tGET / HTTP/1.1\r\n"), 1);
  CHECK_INT_EQ(starts("M-SEARCH * HTTP/1.1\r\n"), 1);
  CHECK_INT_EQ(starts("get / http/1.1\r\n"), 1);
  CHECK_INT_EQ(starts("GET\t/x\rHTTP/1.1\n"), 1);
  CHECK_INT_EQ(starts("\r\n"), -1);
  CHECK_INT_EQ(starts("x_get"), -1);
  CHECK_INT_EQ(starts("GET /"), -1);
  CHECK_INT_EQ(starts("SSH-2.0-client\r\n"), 0);
  CHECK_INT_EQ(starts("EHLO me\r\n"), 0);
  CHECK_INT_EQ(starts("\x16\x03\x01"), 0);
}

int main(void)
{
  RUN(host_entries_parse_and_match);
  RUN(deny_wins_and_annotations_only_narrow);
  RUN(address_classes);
  RUN(allowed_addresses_and_the_hosts_own);
  RUN(http_connect_and_forward_requests);
  RUN(http_requests_refused);
  RUN(http_inside_a_tunnel);
  RUN(tls_server_name);
  RUN(egress_knobs_parse_inherit_and_render);
  RUN(bad_egress_knobs_are_refused_naming_them);
  sr_arena_release(&arena);
  return unit_report();
}
