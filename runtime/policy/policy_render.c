/* The texts of decisions: the short JSON of what a config asked and what the policy applied
 * ("[\"CAP_CHOWN\"]", "{\"destination\":\"/tmp\",...}"), and the decisions as a JSON array for
 * the audit log.  Pure: texts are allocated in the arena they are given. */
#include "build.h"

#include "policy_apply_internal.h"

#include "json.h"
#include "names.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CAP_BIT(c) (UINT64_C(1) << (c))

/* ---- Texts: the short JSON of asked and applied values ----------------------------------- */

struct sb {
  char *buf;
  size_t len, cap;
  bool oom;
};

static void sb_addn(struct sb *b, const char *s, size_t n)
{
  if (b->oom)
    return;
  if (b->len + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->len + n + 1)
      cap *= 2;
    char *nb = realloc(b->buf, cap);
    if (nb == NULL) {
      b->oom = true;
      return;
    }
    b->buf = nb;
    b->cap = cap;
  }
  memcpy(b->buf + b->len, s, n);
  b->len += n;
  b->buf[b->len] = '\0';
}

static void sb_add(struct sb *b, const char *s)
{
  sb_addn(b, s, strlen(s));
}

__attribute__((format(printf, 2, 3))) static void sb_addf(struct sb *b, const char *fmt, ...)
{
  char tmp[256];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
  va_end(ap);
  if (n < 0 || (size_t)n >= sizeof(tmp)) {
    b->oom = true; /* only short numbers and names go through here */
    return;
  }
  sb_addn(b, tmp, (size_t)n);
}

static void sb_json_str(struct sb *b, const char *s)
{
  sb_add(b, "\"");
  for (; *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\') {
      char esc[2] = {'\\', (char)ch};
      sb_addn(b, esc, 2);
    } else if (ch < 0x20)
      sb_addf(b, "\\u%04x", ch);
    else
      sb_addn(b, s, 1);
  }
  sb_add(b, "\"");
}

/* The text in the arena; NULL when out of memory. */
static char *sb_finish(struct sb *b, struct sr_arena *a)
{
  char *s = b->oom ? NULL : sr_arena_strdup(a, b->buf ? b->buf : "");
  free(b->buf);
  memset(b, 0, sizeof(*b));
  return s;
}

char *sr_policy_render_text_str(struct sr_arena *a, const char *s)
{
  if (s == NULL)
    return "null";
  struct sb b = {0};
  sb_json_str(&b, s);
  return sb_finish(&b, a);
}

char *sr_policy_render_text_strv(struct sr_arena *a, char **v, size_t n)
{
  struct sb b = {0};
  sb_add(&b, "[");
  for (size_t i = 0; i < n; i++) {
    if (i)
      sb_add(&b, ",");
    sb_json_str(&b, v[i]);
  }
  sb_add(&b, "]");
  return sb_finish(&b, a);
}

/* The names of caps: JSON strings separated by ",", or bare names separated by ", ". */
static void sb_caps(struct sb *b, uint64_t caps, bool json)
{
  bool first = true;
  for (int c = 0; c < 64; c++)
    if (caps & CAP_BIT(c)) {
      const char *name = sr_names_of(SR_NAMES(sr_names_capability), c);
      if (!first)
        sb_add(b, json ? "," : ", ");
      first = false;
      if (name && json)
        sb_json_str(b, name);
      else if (name)
        sb_add(b, name);
      else if (json)
        sb_addf(b, "\"%d\"", c);
      else
        sb_addf(b, "%d", c);
    }
}

char *sr_policy_render_text_caps(struct sr_arena *a, uint64_t caps)
{
  struct sb b = {0};
  sb_add(&b, "[");
  sb_caps(&b, caps, true);
  sb_add(&b, "]");
  return sb_finish(&b, a);
}

char *sr_policy_render_names_caps(struct sr_arena *a, uint64_t caps)
{
  struct sb b = {0};
  sb_caps(&b, caps, false);
  return sb_finish(&b, a);
}

static void sb_rule(struct sb *b, const struct sr_device_rule *r)
{
  char maj[24] = "*", min[24] = "*";
  if (r->major >= 0)
    snprintf(maj, sizeof(maj), "%" PRId64, r->major);
  if (r->minor >= 0)
    snprintf(min, sizeof(min), "%" PRId64, r->minor);
  sb_addf(b, "\"%s %c %s:%s %s\"", r->allow ? "allow" : "deny", r->type, maj, min, r->access);
}

char *sr_policy_render_text_rules(struct sr_arena *a, const struct sr_device_rule *r, size_t n)
{
  struct sb b = {0};
  sb_add(&b, "[");
  for (size_t i = 0; i < n; i++) {
    if (i)
      sb_add(&b, ",");
    sb_rule(&b, &r[i]);
  }
  sb_add(&b, "]");
  return sb_finish(&b, a);
}

char *sr_policy_render_text_mount(struct sr_arena *a, const struct sr_mount *m)
{
  struct sb b = {0};
  sb_add(&b, "{\"destination\":");
  sb_json_str(&b, m->destination);
  sb_add(&b, ",\"type\":");
  sb_json_str(&b, m->type ? m->type : "");
  sb_add(&b, ",\"source\":");
  sb_json_str(&b, m->source ? m->source : "");
  sb_add(&b, ",\"options\":[");
  for (size_t i = 0; i < m->n_options; i++) {
    if (i)
      sb_add(&b, ",");
    sb_json_str(&b, m->options[i]);
  }
  sb_add(&b, "]}");
  return sb_finish(&b, a);
}

char *sr_policy_render_text_i64(struct sr_arena *a, bool set, int64_t v)
{
  return set ? sr_arena_printf(a, "%" PRId64, v) : "null";
}

/* ---- Decisions as JSON ------------------------------------------------------------------- */

const char *sr_policy_render_kind_name(enum sr_decision_kind k)
{
  switch (k) {
  case SR_DECISION_ENFORCED:
    return "enforced";
  case SR_DECISION_ALLOWED:
    return "allowed";
  case SR_DECISION_REFUSED:
    return "refused";
  }
  return "?";
}

int sr_policy_render_json(const struct sr_decisions *d, sr_json_gen_t g)
{
  sr_json_array_open(g);
  for (size_t i = 0; i < d->n; i++) {
    const struct sr_decision *x = &d->list[i];
    sr_json_map_open(g);
    sr_json_put_kv_string(g, "kind", sr_policy_render_kind_name(x->kind));
    sr_json_put_kv_string(g, "field", x->field);
    sr_json_put_kv_string(g, "asked", x->asked);
    sr_json_put_key(g, "applied");
    if (x->applied)
      sr_json_put_string(g, x->applied);
    else
      sr_json_put_null(g);
    sr_json_put_kv_string(g, "reason", x->reason);
    sr_json_map_close(g);
  }
  sr_json_array_close(g);
  return 0;
}
