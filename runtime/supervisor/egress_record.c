#include "build.h"

#include "egress_record.h"

#include "json.h"

#include <stdio.h>
#include <string.h>

static void put_event(sr_json_gen_t g, const struct sr_egress_event *e)
{
  sr_json_put_kv_u64(g, "request", e->request);
  sr_json_put_kv_string(g, "method", e->method);
  sr_json_put_kv_string(g, "host", e->host);
  sr_json_put_kv_u64(g, "port", e->port);
  if (e->address[0])
    sr_json_put_kv_string(g, "address", e->address);
  sr_json_put_kv_bool(g, "allowed", e->allowed);
  sr_json_put_kv_string(g, "reason", e->reason);
  if (e->kind == SR_EGRESS_EVENT_CLOSE) {
    sr_json_put_kv_u64(g, "bytesUp", e->bytes_up);
    sr_json_put_kv_u64(g, "bytesDown", e->bytes_down);
    sr_json_put_kv_u64(g, "durationMs", e->duration_ms);
  }
}

static void put_line(sr_json_gen_t g, const void *data)
{
  put_event(g, data);
}

struct repeat_line {
  const struct sr_egress_repeat *r;
};

static void put_repeat(sr_json_gen_t g, const void *data)
{
  const struct sr_egress_repeat *r = ((const struct repeat_line *)data)->r;
  put_event(g, &r->e);
  sr_json_put_kv_u64(g, "repeated", r->count);
}

static void write_line(struct sr_egress_record *r, const char *event, sr_audit_fields_fn put,
                       const void *data)
{
  sr_error_t err = NULL;
  if (sr_audit_event_with(r->audit, event, put, data, &err) < 0) {
    r->audit_failed++;
    sr_error_free(&err);
  }
}

static bool same_refusal(const struct sr_egress_event *a, const struct sr_egress_event *b)
{
  return a->port == b->port && strcmp(a->method, b->method) == 0 &&
         strcmp(a->host, b->host) == 0 && strcmp(a->reason, b->reason) == 0;
}

void sr_egress_record_add(void *record, const struct sr_egress_event *e)
{
  struct sr_egress_record *r = record;
  if (e->kind == SR_EGRESS_EVENT_DECISION) {
    r->requests++;
    if (e->allowed) {
      r->allowed++;
    } else {
      r->refused++;
      for (size_t i = 0; i < r->n_denied; i++)
        if (same_refusal(&r->denied[i].e, e)) {
          r->denied[i].count++;
          return; /* written once already */
        }
      if (r->n_denied < SR_EGRESS_RECORD_KEYS) {
        r->denied[r->n_denied++] = (struct sr_egress_repeat){*e, 0};
      } else {
        /* Counted, not written: code that asks for ever new names (refused before anything
         * is resolved or connected, so as fast as it can ask) must not fill the host's disk
         * with lines.  One line at the close says how many. */
        r->repeated_other++;
        return;
      }
    }
  } else {
    r->bytes_up += e->bytes_up;
    r->bytes_down += e->bytes_down;
  }
  if (r->n_kept < SR_EGRESS_RECORD_KEEP)
    r->kept[r->n_kept++] = *e;
  write_line(r, e->kind == SR_EGRESS_EVENT_DECISION ? "egress" : "egress.close", put_line, e);
}

/* The refusals past the kinds kept, as one repeat of an event that names no request. */
static struct sr_egress_repeat other_refusals(const struct sr_egress_record *r)
{
  struct sr_egress_repeat o = {.count = r->repeated_other};
  o.e.kind = SR_EGRESS_EVENT_DECISION;
  snprintf(o.e.reason, sizeof(o.e.reason),
           "refusals of other requests, past the %d kinds the record keeps one by one",
           SR_EGRESS_RECORD_KEYS);
  return o;
}

void sr_egress_record_close(struct sr_egress_record *r)
{
  for (size_t i = 0; i < r->n_denied; i++)
    if (r->denied[i].count) {
      struct repeat_line l = {&r->denied[i]};
      write_line(r, "egress.repeated", put_repeat, &l);
    }
  if (r->repeated_other) {
    struct sr_egress_repeat o = other_refusals(r);
    struct repeat_line l = {&o};
    write_line(r, "egress.repeated", put_repeat, &l);
  }
}

static void put_repeat_item(sr_json_gen_t g, const struct sr_egress_repeat *rep)
{
  sr_json_map_open(g);
  put_event(g, &rep->e);
  sr_json_put_kv_u64(g, "repeated", rep->count);
  sr_json_map_close(g);
}

void sr_egress_record_to_json(const struct sr_egress_record *r, sr_json_gen_t g)
{
  sr_json_map_open(g);
  sr_json_put_kv_u64(g, "requests", r->requests);
  sr_json_put_kv_u64(g, "allowed", r->allowed);
  sr_json_put_kv_u64(g, "refused", r->refused);
  sr_json_put_kv_u64(g, "bytesUp", r->bytes_up);
  sr_json_put_kv_u64(g, "bytesDown", r->bytes_down);
  sr_json_put_kv_u64(g, "auditFailed", r->audit_failed);
  sr_json_put_key(g, "events");
  sr_json_array_open(g);
  for (size_t i = 0; i < r->n_kept; i++) {
    sr_json_map_open(g);
    sr_json_put_kv_string(g, "event",
                          r->kept[i].kind == SR_EGRESS_EVENT_DECISION ? "egress" : "egress.close");
    put_event(g, &r->kept[i]);
    sr_json_map_close(g);
  }
  sr_json_array_close(g);
  sr_json_put_key(g, "repeated");
  sr_json_array_open(g);
  for (size_t i = 0; i < r->n_denied; i++)
    if (r->denied[i].count)
      put_repeat_item(g, &r->denied[i]);
  if (r->repeated_other) {
    struct sr_egress_repeat o = other_refusals(r);
    put_repeat_item(g, &o);
  }
  sr_json_array_close(g);
  sr_json_map_close(g);
}
