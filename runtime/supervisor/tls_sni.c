#include "build.h"

#include "tls_sni.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define TLS_ALERT 21
#define TLS_HANDSHAKE 22
#define HS_CLIENT_HELLO 1
#define EXT_SERVER_NAME 0

/* A bounded reader over the handshake message. */
struct rd {
  const unsigned char *p;
  size_t n;
  bool bad;
};

static uint32_t get(struct rd *r, size_t bytes)
{
  uint32_t v = 0;
  if (r->bad || r->n < bytes) {
    r->bad = true;
    return 0;
  }
  for (size_t i = 0; i < bytes; i++)
    v = v << 8 | r->p[i];
  r->p += bytes;
  r->n -= bytes;
  return v;
}

static struct rd sub(struct rd *r, size_t bytes)
{
  struct rd s = {r->p, bytes, r->bad || r->n < bytes};
  if (s.bad) {
    r->bad = true;
    s.n = 0;
    return s;
  }
  r->p += bytes;
  r->n -= bytes;
  return s;
}

static enum sr_sni server_name(struct rd ext, char *name, size_t size)
{
  struct rd list = sub(&ext, get(&ext, 2));
  bool found = false;
  while (!list.bad && list.n > 0) {
    uint32_t type = get(&list, 1);
    struct rd host = sub(&list, get(&list, 2));
    if (list.bad)
      break;
    if (type != 0) /* host_name is the only type defined */
      continue;
    /* One host_name (RFC 6066 3): a server that takes the last would read another name. */
    if (found || host.n == 0 || host.n >= size)
      return SR_SNI_MALFORMED;
    for (size_t i = 0; i < host.n; i++) {
      unsigned char c = host.p[i];
      if (c <= 0x20 || c >= 0x7f) /* a name is ASCII letters, digits, '-', '.' */
        return SR_SNI_MALFORMED;
      name[i] = (char)tolower(c);
    }
    name[host.n] = '\0';
    if (host.n > 1 && name[host.n - 1] == '.')
      name[host.n - 1] = '\0';
    found = true;
  }
  if (list.bad || ext.bad || ext.n != 0)
    return SR_SNI_MALFORMED;
  return found ? SR_SNI_FOUND : SR_SNI_ABSENT;
}

static enum sr_sni parse_hello(struct rd hs, char *name, size_t size)
{
  get(&hs, 2);  /* legacy_version */
  sub(&hs, 32); /* random */
  sub(&hs, get(&hs, 1)); /* legacy_session_id */
  sub(&hs, get(&hs, 2)); /* cipher_suites */
  sub(&hs, get(&hs, 1)); /* legacy_compression_methods */
  if (hs.bad)
    return SR_SNI_MALFORMED;
  if (hs.n == 0)
    return SR_SNI_ABSENT; /* no extensions at all (SSLv3-style hello) */
  struct rd exts = sub(&hs, get(&hs, 2));
  enum sr_sni found = SR_SNI_ABSENT;
  bool seen = false;
  while (!exts.bad && exts.n > 0) {
    uint32_t type = get(&exts, 2);
    struct rd ext = sub(&exts, get(&exts, 2));
    if (exts.bad || type != EXT_SERVER_NAME)
      continue;
    /* One server_name extension (RFC 8446 4.2): every extension is read, not the first. */
    if (seen)
      return SR_SNI_MALFORMED;
    seen = true;
    found = server_name(ext, name, size);
    if (found == SR_SNI_MALFORMED)
      return found;
  }
  return exts.bad || hs.bad ? SR_SNI_MALFORMED : found;
}

enum sr_sni sr_tls_sni_client_hello(const unsigned char *buf, size_t len, char *name,
                                    size_t name_size)
{
  /* The handshake message may span records: gather their payloads until it is whole. */
  unsigned char msg[SR_TLS_HELLO_MAX];
  size_t have = 0, want = 0, off = 0;
  if (len == 0)
    return SR_SNI_NEED_MORE;
  /* An alert record first (a warning, which some servers drop before the handshake, then
   * the hello; its version ignored as below): not another protocol, and not a ClientHello. */
  if (buf[0] == TLS_ALERT)
    return len < 5 ? SR_SNI_NEED_MORE
           : ((size_t)buf[3] << 8 | buf[4]) == 2 ? SR_SNI_MALFORMED
                                                 : SR_SNI_NOT_TLS;
  if (buf[0] != TLS_HANDSHAKE)
    return SR_SNI_NOT_TLS;
  for (;;) {
    if (len - off < 5)
      return len > SR_TLS_HELLO_MAX + 5 ? SR_SNI_MALFORMED : SR_SNI_NEED_MORE;
    /* The record's version is not looked at: servers ignore it (RFC 8446 5.1 says they MUST;
     * Go's reads a first record of any version), so a hello in a record of version 0 is one. */
    if (buf[off] != TLS_HANDSHAKE)
      return SR_SNI_MALFORMED;
    size_t rec = (size_t)buf[off + 3] << 8 | buf[off + 4];
    if (rec == 0)
      return SR_SNI_MALFORMED;
    if (len - off - 5 < rec)
      return SR_SNI_NEED_MORE;
    if (have + rec > sizeof(msg))
      return SR_SNI_MALFORMED;
    memcpy(msg + have, buf + off + 5, rec);
    have += rec;
    off += 5 + rec;
    if (want == 0 && have >= 4) {
      if (msg[0] != HS_CLIENT_HELLO)
        return SR_SNI_MALFORMED;
      want = 4 + ((size_t)msg[1] << 16 | (size_t)msg[2] << 8 | msg[3]);
      if (want > sizeof(msg))
        return SR_SNI_MALFORMED;
    }
    if (want && have >= want)
      break;
  }
  struct rd hs = {msg + 4, want - 4, false};
  return parse_hello(hs, name, name_size);
}
