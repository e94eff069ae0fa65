#include "build.h"

#include "policy_egress.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

int sr_policy_egress_ipaddr_parse(const char *text, struct sr_ipaddr *out)
{
  memset(out, 0, sizeof(*out));
  if (inet_pton(AF_INET, text, out->bytes) == 1) {
    out->family = AF_INET;
    return 0;
  }
  if (inet_pton(AF_INET6, text, out->bytes) == 1) {
    out->family = AF_INET6;
    return 0;
  }
  return -1;
}

const char *sr_policy_egress_ipaddr_format(const struct sr_ipaddr *a, char *buf, size_t size)
{
  if (inet_ntop(a->family, a->bytes, buf, (socklen_t)size) == NULL)
    snprintf(buf, size, "?");
  return buf;
}

int sr_policy_egress_cidr_parse(const char *text, struct sr_cidr *out)
{
  char buf[64];
  const char *slash = strchr(text, '/');
  size_t n = slash ? (size_t)(slash - text) : strlen(text);
  if (n == 0 || n >= sizeof(buf))
    return -1;
  memcpy(buf, text, n);
  buf[n] = '\0';
  if (sr_policy_egress_ipaddr_parse(buf, &out->addr) < 0)
    return -1;
  unsigned max = out->addr.family == AF_INET ? 32 : 128;
  out->prefix = max;
  if (slash) {
    char *end;
    errno = 0;
    unsigned long p = strtoul(slash + 1, &end, 10);
    if (errno || *end || end == slash + 1 || p > max || !isdigit((unsigned char)slash[1]))
      return -1;
    out->prefix = (unsigned)p;
  }
  return 0;
}

/* A DNS name as the proxy compares it: letters, digits, '-', '_' and dots, 1-253 bytes, no
 * empty label, no leading or trailing dot. */
static bool valid_name(const char *s)
{
  size_t n = strlen(s), label = 0;
  if (n == 0 || n > 253 || s[0] == '.' || s[n - 1] == '.')
    return false;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '.') {
      if (label == 0)
        return false;
      label = 0;
      continue;
    }
    if (!isalnum(c) && c != '-' && c != '_')
      return false;
    if (++label > 63)
      return false;
  }
  return true;
}

int sr_policy_egress_host_parse(struct sr_arena *a, const char *text, const char *what,
                                struct sr_egress_host *out, sr_error_t *err)
{
  memset(out, 0, sizeof(*out));
  char host[300];
  const char *port = NULL;
  size_t len = strlen(text);
  if (len == 0 || len >= sizeof(host))
    return sr_error_make(err, 0, "%s: \"%s\" is not a host name", what, text);
  if (text[0] == '[') { /* "[v6]" or "[v6]:port" */
    const char *close = strchr(text, ']');
    if (close == NULL || (close[1] && close[1] != ':'))
      return sr_error_make(err, 0, "%s: \"%s\": an IPv6 address goes in brackets", what, text);
    memcpy(host, text + 1, (size_t)(close - text - 1));
    host[close - text - 1] = '\0';
    port = close[1] ? close + 2 : NULL;
  } else {
    const char *colon = strchr(text, ':');
    if (colon && strchr(colon + 1, ':'))
      return sr_error_make(err, 0, "%s: \"%s\": an IPv6 address goes in brackets", what, text);
    size_t hl = colon ? (size_t)(colon - text) : len;
    memcpy(host, text, hl);
    host[hl] = '\0';
    port = colon ? colon + 1 : NULL;
  }
  if (port) {
    char *end;
    errno = 0;
    unsigned long p = strtoul(port, &end, 10);
    if (!isdigit((unsigned char)port[0]) || *end || errno || p == 0 || p > 65535)
      return sr_error_make(err, 0, "%s: \"%s\": the port must be 1-65535", what, text);
    out->port = (uint16_t)p;
  }
  for (char *c = host; *c; c++)
    *c = (char)tolower((unsigned char)*c);
  size_t hl = strlen(host);
  if (hl && host[hl - 1] == '.' && text[0] != '[')
    host[--hl] = '\0';
  if (sr_policy_egress_ipaddr_parse(host, &out->ip) == 0) {
    out->is_ip = true;
  } else if (text[0] == '[') {
    return sr_error_make(err, 0, "%s: \"%s\" is not an IPv6 address", what, text);
  } else if (strncmp(host, "*.", 2) == 0) {
    out->wildcard = true;
    memmove(host, host + 2, hl - 1);
    if (!valid_name(host) || strchr(host, '*'))
      return sr_error_make(err, 0, "%s: \"%s\": a wildcard is \"*.domain\"", what, text);
  } else if (!valid_name(host)) {
    return sr_error_make(err, 0,
                         "%s: \"%s\" is not a host name (letters, digits, '-', dots; \"*.domain\" "
                         "for every name below a domain)",
                         what, text);
  }
  out->name = sr_arena_strdup(a, host);
  if (out->name == NULL)
    return sr_error_make(err, ENOMEM, "%s", what);
  return 0;
}

static bool port_matches(uint16_t want, uint16_t port)
{
  return want ? want == port : (port == 80 || port == 443);
}

bool sr_policy_egress_host_matches(const struct sr_egress_host *e, const char *host, uint16_t port)
{
  if (!port_matches(e->port, port))
    return false;
  struct sr_ipaddr ip;
  bool host_is_ip = sr_policy_egress_ipaddr_parse(host, &ip) == 0;
  if (e->is_ip || host_is_ip)
    return e->is_ip && host_is_ip && ip.family == e->ip.family &&
           memcmp(ip.bytes, e->ip.bytes, sizeof(ip.bytes)) == 0;
  if (!e->wildcard)
    return strcmp(e->name, host) == 0;
  size_t n = strlen(host), d = strlen(e->name);
  return n > d + 1 && host[n - d - 1] == '.' && strcmp(host + n - d, e->name) == 0;
}

static bool any_matches(const struct sr_egress_host *v, size_t n, const char *host, uint16_t port)
{
  for (size_t i = 0; i < n; i++)
    if (sr_policy_egress_host_matches(&v[i], host, port))
      return true;
  return false;
}

enum sr_egress_verdict sr_policy_egress_judge(const struct sr_egress *p,
                                              const struct sr_egress_host *extra, size_t n_extra,
                                              const struct sr_egress_host *narrow, size_t n_narrow,
                                              const char *host, uint16_t port, const char **knob)
{
  if (any_matches(p->deny, p->n_deny, host, port)) {
    *knob = "network.egress.deny";
    return SR_EGRESS_DENY;
  }
  if (!any_matches(p->allow, p->n_allow, host, port) &&
      !any_matches(extra, n_extra, host, port)) {
    *knob = n_extra ? "network.egress.allow, --allow-host" : "network.egress.allow";
    return SR_EGRESS_DENY;
  }
  if (narrow && !any_matches(narrow, n_narrow, host, port)) {
    *knob = "io.seerun.egress.allow";
    return SR_EGRESS_DENY;
  }
  *knob = "network.egress.allow";
  return SR_EGRESS_ALLOW;
}

/* ---- address classes -------------------------------------------------------------------- */

struct range {
  const char *cidr;
  enum sr_addr_class cls;
};

/* IANA's special-purpose registries (RFC 6890, 8190 and later additions); the first match
 * wins, so narrower ranges come first where they nest. */
static const struct range ranges[] = {
    {"0.0.0.0/8", SR_ADDR_UNSPECIFIED},
    {"10.0.0.0/8", SR_ADDR_PRIVATE},
    {"100.64.0.0/10", SR_ADDR_PRIVATE}, /* shared address space (carrier NAT) */
    {"127.0.0.0/8", SR_ADDR_LOOPBACK},
    {"169.254.0.0/16", SR_ADDR_LINK_LOCAL},
    {"172.16.0.0/12", SR_ADDR_PRIVATE},
    {"192.0.0.0/24", SR_ADDR_SPECIAL}, /* IETF protocol assignments */
    {"192.0.2.0/24", SR_ADDR_SPECIAL}, /* TEST-NET-1 */
    {"192.31.196.0/24", SR_ADDR_SPECIAL},
    {"192.52.193.0/24", SR_ADDR_SPECIAL},
    {"192.88.99.0/24", SR_ADDR_SPECIAL}, /* 6to4 relay anycast */
    {"192.168.0.0/16", SR_ADDR_PRIVATE},
    {"192.175.48.0/24", SR_ADDR_SPECIAL},
    {"198.18.0.0/15", SR_ADDR_SPECIAL},    /* benchmarking */
    {"198.51.100.0/24", SR_ADDR_SPECIAL},  /* TEST-NET-2 */
    {"203.0.113.0/24", SR_ADDR_SPECIAL},   /* TEST-NET-3 */
    {"224.0.0.0/4", SR_ADDR_MULTICAST},
    {"255.255.255.255/32", SR_ADDR_MULTICAST}, /* limited broadcast */
    {"240.0.0.0/4", SR_ADDR_SPECIAL},          /* reserved */
    {"::/128", SR_ADDR_UNSPECIFIED},
    {"::1/128", SR_ADDR_LOOPBACK},
    {"64:ff9b::/96", SR_ADDR_SPECIAL},   /* NAT64: may embed any IPv4 address */
    {"::ffff:0:0:0/96", SR_ADDR_SPECIAL}, /* IPv4-translated (SIIT): embeds one too */
    {"64:ff9b:1::/48", SR_ADDR_SPECIAL}, /* local-use NAT64 */
    {"100::/64", SR_ADDR_SPECIAL},       /* discard-only */
    {"2001::/23", SR_ADDR_SPECIAL},      /* IETF protocol assignments (Teredo, ORCHID...) */
    {"2001:db8::/32", SR_ADDR_SPECIAL},  /* documentation */
    {"2002::/16", SR_ADDR_SPECIAL},      /* 6to4: embeds an IPv4 address */
    {"3fff::/20", SR_ADDR_SPECIAL},      /* documentation */
    {"5f00::/16", SR_ADDR_SPECIAL},      /* segment routing SIDs */
    {"fc00::/7", SR_ADDR_PRIVATE},       /* unique local */
    {"fe80::/10", SR_ADDR_LINK_LOCAL},
    {"fec0::/10", SR_ADDR_SPECIAL},      /* deprecated site-local */
    {"ff00::/8", SR_ADDR_MULTICAST},
    {"::/96", SR_ADDR_SPECIAL},          /* IPv4-compatible (deprecated) */
};

static bool in_cidr(const struct sr_ipaddr *a, const struct sr_cidr *c)
{
  if (a->family != c->addr.family)
    return false;
  unsigned full = c->prefix / 8, rest = c->prefix % 8;
  if (memcmp(a->bytes, c->addr.bytes, full) != 0)
    return false;
  if (rest == 0)
    return true;
  uint8_t mask = (uint8_t)(0xff << (8 - rest));
  return (a->bytes[full] & mask) == (c->addr.bytes[full] & mask);
}

/* ::ffff:a.b.c.d is a.b.c.d to the kernel's IPv4 stack: judge it as that. */
static struct sr_ipaddr unmapped(const struct sr_ipaddr *a)
{
  static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  struct sr_ipaddr r = *a;
  if (a->family == AF_INET6 && memcmp(a->bytes, prefix, 12) == 0) {
    memset(&r, 0, sizeof(r));
    r.family = AF_INET;
    memcpy(r.bytes, a->bytes + 12, 4);
  }
  return r;
}

enum sr_addr_class sr_policy_egress_addr_classify(const struct sr_ipaddr *in)
{
  struct sr_ipaddr a = unmapped(in);
  for (size_t i = 0; i < sizeof(ranges) / sizeof(ranges[0]); i++) {
    struct sr_cidr c;
    if (sr_policy_egress_cidr_parse(ranges[i].cidr, &c) == 0 && in_cidr(&a, &c))
      return ranges[i].cls;
  }
  return SR_ADDR_PUBLIC;
}

const char *sr_policy_egress_addr_class_name(enum sr_addr_class c)
{
  switch (c) {
  case SR_ADDR_PUBLIC:
    return "public";
  case SR_ADDR_UNSPECIFIED:
    return "unspecified";
  case SR_ADDR_LOOPBACK:
    return "loopback";
  case SR_ADDR_PRIVATE:
    return "private";
  case SR_ADDR_LINK_LOCAL:
    return "link-local";
  case SR_ADDR_MULTICAST:
    return "multicast";
  case SR_ADDR_SPECIAL:
    return "special-purpose";
  }
  return "?";
}

struct sr_ipaddr sr_policy_egress_ipaddr_unmapped(const struct sr_ipaddr *a)
{
  return unmapped(a);
}

bool sr_policy_egress_address_allowed(const struct sr_egress *p, const struct sr_ipaddr *in,
                                      bool host_own, const char **why)
{
  struct sr_ipaddr a = unmapped(in);
  for (size_t i = 0; i < p->n_allow_addresses; i++)
    if (in_cidr(&a, &p->allow_addresses[i])) {
      *why = "network.egress.allowAddresses";
      return true;
    }
  /* The class first: "loopback" says more than "an address of this host". */
  enum sr_addr_class c = sr_policy_egress_addr_classify(&a);
  *why = sr_policy_egress_addr_class_name(c);
  if (c == SR_ADDR_PUBLIC && host_own)
    *why = "an address of this host";
  return c == SR_ADDR_PUBLIC && !host_own;
}

const struct sr_ipaddr *sr_policy_egress_pinned(const struct sr_egress *p, const char *host)
{
  for (size_t i = 0; i < p->n_pins; i++)
    if (strcmp(p->pins[i].name, host) == 0)
      return &p->pins[i].addr;
  return NULL;
}
