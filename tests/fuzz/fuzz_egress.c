/* libFuzzer target: what the egress proxy reads from a container, from arbitrary bytes: the
 * HTTP request head and the TLS ClientHello (runtime/supervisor), and host entries as an
 * annotation or --allow-host gives them (runtime/policy/policy_egress.c).
 *
 * The proxy parses this as host root before it has decided anything, so the parsers must keep
 * their contracts whatever the input: a parsed request names a host and a port, a forward
 * request has an origin head that ends the head; a server name is a NUL-terminated string of
 * printable ASCII; a host entry either parses or gives an error that names it.
 */
// Build: `make fuzz-egress` (clang, ASan+UBSan); run: `make fuzz` (every target).
#include "build.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "egress_http.h"
#include "policy_egress.h"
#include "tls_sni.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  struct sr_http_request r;
  size_t head = 0;
  int status = 0;
  const char *reason = NULL;
  enum sr_http_parse p =
      sr_egress_http_parse_request((const char *)data, size, &r, &head, &status, &reason);
  if (p == SR_HTTP_OK) {
    if (head == 0 || head > size || r.host[0] == '\0' || r.port == 0)
      abort();
    if (!r.connect && (r.origin_head == NULL ||
                       r.origin_head_len != strlen(r.origin_head) ||
                       r.origin_head_len < 4 ||
                       memcmp(r.origin_head + r.origin_head_len - 4, "\r\n\r\n", 4) != 0))
      abort();
    /* No control byte reaches the origin but CRLF and HTAB: a lenient origin would end a
     * line at a bare CR and read what hides behind it. */
    for (size_t i = 0; !r.connect && i < r.origin_head_len; i++) {
      unsigned char c = (unsigned char)r.origin_head[i];
      bool crlf = (c == '\r' && r.origin_head[i + 1] == '\n') ||
                  (c == '\n' && i > 0 && r.origin_head[i - 1] == '\r');
      if ((c < 0x20 && c != '\t' && !crlf) || c == 0x7f)
        abort();
    }
  } else if (p == SR_HTTP_BAD && (status < 400 || reason == NULL)) {
    abort();
  }
  sr_egress_http_request_release(&r);

  int h = sr_egress_http_starts_request(data, size);
  if (h < -1 || h > 1)
    abort();

  char name[256];
  if (sr_tls_sni_client_hello(data, size, name, sizeof(name)) == SR_SNI_FOUND) {
    size_t n = strnlen(name, sizeof(name));
    if (n == sizeof(name))
      abort();
    for (size_t i = 0; i < n; i++)
      if ((unsigned char)name[i] <= 0x20 || (unsigned char)name[i] >= 0x7f)
        abort();
  }

  if (size < 300) {
    char text[300];
    memcpy(text, data, size);
    text[size] = '\0';
    struct sr_arena a = {0};
    struct sr_egress_host h;
    sr_error_t err = NULL;
    if (sr_policy_egress_host_parse(&a, text, "allow[0]", &h, &err) < 0) {
      char *t = sr_error_text(err);
      if (t == NULL || strncmp(t, "allow[0]", 8) != 0)
        abort();
      free(t);
      sr_error_free(&err);
    } else if (h.name == NULL || err != NULL) {
      abort();
    } else {
      (void)sr_policy_egress_host_matches(&h, h.name, 443);
    }
    sr_arena_release(&a);
  }
  return 0;
}
