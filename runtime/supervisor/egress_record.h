/* What the egress proxy decided, as the audit log and `seerun sandbox`'s result document keep
 * it: every request is an "egress" line before the connection is made (allowed or refused)
 * and an "egress.close" line after it (bytes each way, duration), with the same request id.
 * Identical refusals after the first (same method, host, port and reason) are counted, not
 * written again: one "egress.repeated" line per such refusal says how often, when the record
 * is closed.  Past SR_EGRESS_RECORD_KEYS kinds of refusal, a refusal of a new kind is counted
 * too, into one "egress.repeated" line that names no request (host ""), so that asking for
 * ever new names cannot fill the audit log's disk.  The record also keeps the first SR_EGRESS_RECORD_KEEP requests for the result. */
#ifndef SEERUN_EGRESS_RECORD_H
#define SEERUN_EGRESS_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "audit.h"
#include "json.h"
#include "egress_proxy.h"

#define SR_EGRESS_RECORD_KEEP 64
#define SR_EGRESS_RECORD_KEYS 128

struct sr_egress_repeat {
  struct sr_egress_event e;
  uint64_t count;
};

struct sr_egress_record {
  const struct sr_audit *audit; /* NULL: no audit log */
  struct sr_egress_event kept[SR_EGRESS_RECORD_KEEP];
  size_t n_kept;
  struct sr_egress_repeat denied[SR_EGRESS_RECORD_KEYS];
  size_t n_denied;
  uint64_t requests, allowed, refused, repeated_other, bytes_up, bytes_down;
  uint64_t audit_failed; /* lines the audit log did not take (the record says how many;
                           the proxy goes on) */
};

/* The proxy's event, into the record (and the audit log). */
void sr_egress_record_add(void *record, const struct sr_egress_event *e);
/* Writes the egress.repeated lines. */
void sr_egress_record_close(struct sr_egress_record *r);
/* {"requests": N, "allowed": N, "refused": N, "bytesUp": N, "bytesDown": N,
 *  "events": [{"request", "event", "method", "host", "port", "address", "allowed",
 *              "reason", "bytesUp", "bytesDown", "durationMs"}...], "repeated": [...]} */
void sr_egress_record_to_json(const struct sr_egress_record *r, sr_json_gen_t g);

#endif
