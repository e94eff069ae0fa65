/* Egress by host name (network.egress of a profile): which host and port a container may reach
 * through seerun's proxy, and which addresses a name may resolve to.  Pure: the proxy
 * (runtime/supervisor) resolves and connects; this only decides.
 *
 * A host entry is "name", "*.domain" (any name below domain, not domain itself), or an IP
 * literal ("192.0.2.7", "[2001:db8::1]"), with an optional ":port"; without a port it means
 * ports 80 and 443.  Names compare case-insensitively, without a trailing dot. */
#ifndef SEERUN_POLICY_EGRESS_H
#define SEERUN_POLICY_EGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "error.h"

struct sr_ipaddr {
  int family; /* AF_INET or AF_INET6 */
  uint8_t bytes[16];
};

struct sr_egress_host {
  char *name;     /* lower-case; for a wildcard the domain after "*." */
  bool wildcard;  /* "*.domain" */
  bool is_ip;     /* an IP literal: ip holds it */
  struct sr_ipaddr ip;
  uint16_t port;  /* 0: 80 and 443 */
};

struct sr_cidr {
  struct sr_ipaddr addr;
  unsigned prefix;
};

struct sr_egress_pin {
  char *name; /* lower-case */
  struct sr_ipaddr addr;
};

struct sr_egress {
  struct sr_egress_host *allow;
  size_t n_allow;
  struct sr_egress_host *deny;
  size_t n_deny;
  struct sr_egress_pin *pins;
  size_t n_pins;
  struct sr_cidr *allow_addresses; /* ranges a name may resolve to despite their class */
  size_t n_allow_addresses;
  char *bind_address; /* the outbound side's source address; NULL: the host's choice */
  bool caller_may_allow; /* seerun sandbox --allow-host may add public names */
};

/* Parses a host entry; `what` names it in errors ("profiles.x.network.egress.allow[2]"). */
int sr_policy_egress_host_parse(struct sr_arena *a, const char *text, const char *what,
                                struct sr_egress_host *out, sr_error_t *err);
/* Parses an address ("192.0.2.1", "2001:db8::1") or a range ("10.0.0.0/8"). */
int sr_policy_egress_ipaddr_parse(const char *text, struct sr_ipaddr *out);
int sr_policy_egress_cidr_parse(const char *text, struct sr_cidr *out);
/* "192.0.2.1" or "2001:db8::1" into buf (at least 46 bytes). */
const char *sr_policy_egress_ipaddr_format(const struct sr_ipaddr *a, char *buf, size_t size);

/* Whether entry e covers host:port (host lower-case, no trailing dot; an IP literal host is
 * matched only by an IP entry). */
bool sr_policy_egress_host_matches(const struct sr_egress_host *e, const char *host, uint16_t port);

/* The request, judged: deny wins over allow; with `narrow` (an engine container's annotation
 * io.seerun.egress.allow, or NULL), the host must also match one of its entries; `extra`
 * (the sandbox caller's --allow-host entries) widens allow.  *knob names what decided, for the
 * denial's message ("network.egress.deny", "network.egress.allow", "io.seerun.egress.allow"). */
enum sr_egress_verdict { SR_EGRESS_ALLOW, SR_EGRESS_DENY };
enum sr_egress_verdict sr_policy_egress_judge(const struct sr_egress *p,
                                              const struct sr_egress_host *extra, size_t n_extra,
                                              const struct sr_egress_host *narrow, size_t n_narrow,
                                              const char *host, uint16_t port, const char **knob);

/* The class of an address (RFC 6890 and its successors), for the resolve check. */
enum sr_addr_class {
  SR_ADDR_PUBLIC,
  SR_ADDR_UNSPECIFIED, /* 0.0.0.0/8, :: */
  SR_ADDR_LOOPBACK,    /* 127/8, ::1 */
  SR_ADDR_PRIVATE,     /* 10/8, 172.16/12, 192.168/16, 100.64/10 (shared), fc00::/7 */
  SR_ADDR_LINK_LOCAL,  /* 169.254/16 (cloud metadata), fe80::/10 */
  SR_ADDR_MULTICAST,   /* 224/4, ff00::/8, 255.255.255.255 */
  SR_ADDR_SPECIAL,     /* the other special-purpose ranges: documentation, benchmarking,
                          reserved, 6to4 relays, IETF protocol assignments, NAT64, ... */
};
enum sr_addr_class sr_policy_egress_addr_classify(const struct sr_ipaddr *a);
const char *sr_policy_egress_addr_class_name(enum sr_addr_class c);

/* Whether the proxy may connect to `a`: public, or inside an allowAddresses range, and never
 * one of the host's own addresses (host_own: the caller asked the kernel, sr_route_local)
 * unless a range names it.  *why: the class or "an address of this host" when refused. */
bool sr_policy_egress_address_allowed(const struct sr_egress *p, const struct sr_ipaddr *a,
                                      bool host_own, const char **why);

/* ::ffff:a.b.c.d as a.b.c.d (the kernel's IPv4 stack takes it); any other address as it is. */
struct sr_ipaddr sr_policy_egress_ipaddr_unmapped(const struct sr_ipaddr *a);

/* The pinned address of a name, or NULL. */
const struct sr_ipaddr *sr_policy_egress_pinned(const struct sr_egress *p, const char *host);

#endif
