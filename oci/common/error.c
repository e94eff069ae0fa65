#include "build.h"

#include "error.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Allocation failure while building an error: fall back to a static message rather than
 * lose the fact that something failed. */
static char oom_msg[] = "out of memory while reporting an error";

__attribute__((format(printf, 1, 0))) static char *xvasprintf_or_null(const char *fmt, va_list ap)
{
  char *s = NULL;
  if (vasprintf(&s, fmt, ap) < 0)
    return NULL;
  return s;
}

int sr_error_makev(sr_error_t *err, int status, const char *fmt, va_list ap)
{
  if (err == NULL)
    return -1;
  if (*err != NULL)
    sr_error_free(err);
  sr_error_t e = calloc(1, sizeof(*e));
  if (e == NULL) {
    static struct sr_error_s oom = {.status = ENOMEM, .msg = oom_msg};
    *err = &oom;
    return -1;
  }
  e->status = status;
  e->msg = xvasprintf_or_null(fmt, ap);
  if (e->msg == NULL)
    e->msg = strdup(oom_msg);
  *err = e;
  return -1;
}

int sr_error_make(sr_error_t *err, int status, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  sr_error_makev(err, status, fmt, ap);
  va_end(ap);
  return -1;
}

/* sr_error_makev, then the kind, a copy of field and, when prefix is set, "prefix: " before
 * the text.  A failed allocation loses the field or the prefix, never the error. */
__attribute__((format(printf, 5, 0))) static int make_kind(sr_error_t *err, enum sr_error_kind kind,
                                                           const char *field, const char *prefix,
                                                           const char *fmt, va_list ap)
{
  sr_error_makev(err, 0, fmt, ap);
  if (err == NULL || (*err)->msg == oom_msg)
    return -1;
  (*err)->kind = kind;
  if (field != NULL)
    (*err)->field = strdup(field);
  if (prefix != NULL)
    sr_error_wrap(err, "%s", prefix);
  return -1;
}

/* "parent.key" ("parent[3]" for the key "[3]"), "key", "parent" or NULL (also when out of
 * memory); owned by the caller. */
static char *join_field(const char *parent, const char *key)
{
  bool has_parent = parent != NULL && parent[0] != '\0';
  if (!has_parent && key == NULL)
    return NULL;
  char *field = NULL;
  if (asprintf(&field, "%s%s%s", has_parent ? parent : "",
               has_parent && key && key[0] != '[' ? "." : "", key ? key : "") < 0)
    return NULL;
  return field;
}

int sr_error_config_at(sr_error_t *err, const char *parent, const char *key, const char *fmt, ...)
{
  char *field = join_field(parent, key);
  va_list ap;
  va_start(ap, fmt);
  make_kind(err, SR_ERR_CONFIG, field, field, fmt, ap);
  va_end(ap);
  free(field);
  return -1;
}

int sr_error_config(sr_error_t *err, const char *parent, const char *key, const char *fmt, ...)
{
  char *field = join_field(parent, key);
  va_list ap;
  va_start(ap, fmt);
  make_kind(err, SR_ERR_CONFIG, field, NULL, fmt, ap);
  va_end(ap);
  free(field);
  return -1;
}

int sr_error_policy(sr_error_t *err, const char *field, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  make_kind(err, SR_ERR_POLICY, field, NULL, fmt, ap);
  va_end(ap);
  return -1;
}

int sr_error_peer_gone(sr_error_t *err, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  make_kind(err, SR_ERR_PEER_GONE, NULL, NULL, fmt, ap);
  va_end(ap);
  return -1;
}

int sr_error_kinded(sr_error_t *err, enum sr_error_kind kind, int status, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  make_kind(err, kind, NULL, NULL, fmt, ap);
  va_end(ap);
  if (err && *err && (*err)->msg != oom_msg)
    (*err)->status = status;
  return -1;
}

int sr_error_record(sr_error_t *err, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  make_kind(err, SR_ERR_RECORD, NULL, NULL, fmt, ap);
  va_end(ap);
  return -1;
}

int sr_error_wrap(sr_error_t *err, const char *fmt, ...)
{
  if (err == NULL || *err == NULL || (*err)->msg == oom_msg)
    return -1;
  va_list ap;
  va_start(ap, fmt);
  char *prefix = xvasprintf_or_null(fmt, ap);
  va_end(ap);
  char *joined = NULL;
  if (prefix != NULL && asprintf(&joined, "%s: %s", prefix, (*err)->msg ? (*err)->msg : "") >= 0) {
    free((*err)->msg);
    (*err)->msg = joined;
  }
  free(prefix);
  return -1;
}

char *sr_error_text(const sr_error_t err)
{
  char *out = NULL;
  if (err == NULL)
    return strdup("unknown error");
  const char *msg = err->msg ? err->msg : "unknown error";
  int r;
  if (err->status != 0)
    r = asprintf(&out, "%s: %s", msg, strerror(err->status));
  else
    r = asprintf(&out, "%s", msg);
  return r < 0 ? NULL : out;
}

void sr_error_free(sr_error_t *err)
{
  if (err == NULL || *err == NULL)
    return;
  if ((*err)->msg != oom_msg) {
    free((*err)->field);
    free((*err)->msg);
    free(*err);
  }
  *err = NULL;
}
