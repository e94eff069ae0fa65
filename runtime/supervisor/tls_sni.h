/* The server name of a TLS ClientHello (RFC 8446 4.1.2, RFC 6066 3), read from the first bytes
 * a client sends through a CONNECT tunnel, so that an allowed name cannot front for another.
 * Pure; the proxy does not terminate TLS. */
#ifndef SEERUN_TLS_SNI_H
#define SEERUN_TLS_SNI_H

#include <stddef.h>

/* What the proxy reads before deciding: a ClientHello longer than this is refused. */
#define SR_TLS_HELLO_MAX 16384

enum sr_sni {
  SR_SNI_FOUND,     /* name[] holds it, lower-case */
  SR_SNI_ABSENT,    /* a well-formed ClientHello without server_name */
  SR_SNI_NOT_TLS,   /* the stream does not start with a TLS handshake record (of any record
                       version) or an alert record */
  SR_SNI_NEED_MORE, /* a prefix of a ClientHello: read more */
  SR_SNI_MALFORMED, /* a handshake record that is not a well-formed ClientHello */
};

enum sr_sni sr_tls_sni_client_hello(const unsigned char *buf, size_t len, char *name,
                                    size_t name_size);

#endif
