#include "build.h"

#include "audit.h"

#include "cleanup.h"
#include "json.h"
#include "policy_apply.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

static const char *kind_names[] = {[SR_DECISION_ENFORCED] = "enforced",
                                   [SR_DECISION_ALLOWED] = "allowed",
                                   [SR_DECISION_REFUSED] = "refused"};

/* A line's generator, with the fields every line has. */
static int begin(sr_json_gen_t *gp, const struct sr_audit *a, const char *event, sr_error_t *err)
{
  if (sr_json_gen_new(gp, false, err) < 0)
    return -1;
  sr_json_gen_t g = *gp;
  char now[64];
  sr_now_rfc3339(now, sizeof(now));
  sr_json_map_open(g);
  sr_json_put_kv_string(g, "time", now);
  sr_json_put_kv_string(g, "event", event);
  sr_json_put_kv_string(g, "id", a->id ? a->id : "");
  if (a->bundle)
    sr_json_put_kv_string(g, "bundle", a->bundle);
  sr_json_put_kv_string(g, "profile", a->profile ? a->profile : "");
  sr_json_put_kv_i64(g, "runtimePid", getpid());
  if (a->run_id)
    sr_json_put_kv_string(g, "runId", a->run_id);
  return 0;
}

/* One line, one write: concurrent seerun processes never interleave their lines. */
static int finish(sr_json_gen_t g, const struct sr_audit *a, sr_error_t *err)
{
  sr_json_map_close(g);
  const unsigned char *buf;
  size_t len;
  /* A line the generator could not make whole is no record: refused, like a failed write. */
  if (sr_json_gen_buf(g, &buf, &len, err) < 0)
    return sr_error_wrap(err, "audit log `%s` (refusing to act without a record)", a->path);
  _cleanup_free_ char *line = malloc(len + 1);
  if (line == NULL)
    return sr_error_make(err, ENOMEM, "audit log");
  memcpy(line, buf, len);
  line[len] = '\n';
  _cleanup_close_ int fd =
      open(a->path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0600);
  if (fd < 0)
    return sr_error_sys(err, "audit log `%s`: open (refusing to act without a record)", a->path);
  ssize_t w = write(fd, line, len + 1);
  if (w != (ssize_t)(len + 1))
    return sr_error_make(err, w < 0 ? errno : EIO,
                         "audit log `%s`: write (refusing to act without a record)", a->path);
  return 0;
}

int sr_audit_event(const struct sr_audit *a, const char *event, const char *const *fields,
                   sr_error_t *err)
{
  if (a == NULL || a->path == NULL)
    return 0;
  _cleanup_gen_ sr_json_gen_t g = NULL;
  if (begin(&g, a, event, err) < 0)
    return -1;
  for (size_t i = 0; fields && fields[i] && fields[i + 1]; i += 2)
    sr_json_put_kv_string(g, fields[i], fields[i + 1]);
  return finish(g, a, err);
}

int sr_audit_event_int(const struct sr_audit *a, const char *event, const char *key, long value,
                       sr_error_t *err)
{
  if (a == NULL || a->path == NULL)
    return 0;
  _cleanup_gen_ sr_json_gen_t g = NULL;
  if (begin(&g, a, event, err) < 0)
    return -1;
  sr_json_put_kv_i64(g, key, value);
  return finish(g, a, err);
}

int sr_audit_decisions(const struct sr_audit *a, const struct sr_decisions *d, sr_error_t *err)
{
  if (a == NULL || a->path == NULL || d == NULL)
    return 0;
  for (size_t i = 0; i < d->n; i++) {
    const struct sr_decision *x = &d->list[i];
    _cleanup_gen_ sr_json_gen_t g = NULL;
    if (begin(&g, a, "decision", err) < 0)
      return -1;
    sr_json_put_kv_string(g, "kind", kind_names[x->kind]);
    sr_json_put_kv_string(g, "field", x->field ? x->field : "");
    sr_json_put_kv_string(g, "asked", x->asked ? x->asked : "");
    sr_json_put_kv_string(g, "applied", x->applied ? x->applied : "");
    if (x->reason)
      sr_json_put_kv_string(g, "reason", x->reason);
    if (finish(g, a, err) < 0)
      return -1;
  }
  return 0;
}

int sr_audit_refusal(const struct sr_audit *a, const char *field, const char *asked,
                     const char *reason, sr_error_t *err)
{
  if (a == NULL || a->path == NULL)
    return 0;
  _cleanup_gen_ sr_json_gen_t g = NULL;
  if (begin(&g, a, "decision", err) < 0)
    return -1;
  sr_json_put_kv_string(g, "kind", kind_names[SR_DECISION_REFUSED]);
  sr_json_put_kv_string(g, "field", field);
  sr_json_put_kv_string(g, "asked", asked);
  sr_json_put_kv_string(g, "applied", "");
  sr_json_put_kv_string(g, "reason", reason);
  return finish(g, a, err);
}

int sr_audit_event_with(const struct sr_audit *a, const char *event, sr_audit_fields_fn put,
                        const void *data, sr_error_t *err)
{
  if (a == NULL || a->path == NULL)
    return 0;
  _cleanup_gen_ sr_json_gen_t g = NULL;
  if (begin(&g, a, event, err) < 0)
    return -1;
  put(g, data);
  return finish(g, a, err);
}
