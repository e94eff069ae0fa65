#include "build.h"

#include "audit.h"

#include "cleanup.h"
#include "json.h"
#include "policy_apply.h"
#include "rfc3339.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

/* How long a writer waits for the others' lock before it appends without looking at the log's
 * last byte (ms). */
#define SR_AUDIT_LOCK_MS 200

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
  sr_rfc3339_now(now, sizeof(now));
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

/* Appends the line g holds (and its newline) to the buffer *buf of *len bytes. */
static int take_line(sr_json_gen_t g, const struct sr_audit *a, char **buf, size_t *len,
                     sr_error_t *err)
{
  sr_json_map_close(g);
  const unsigned char *line;
  size_t n;
  /* A line the generator could not make whole is no record: refused, like a failed write. */
  if (sr_json_gen_buf(g, &line, &n, err) < 0)
    return sr_error_wrap(err, "audit log `%s` (refusing to act without a record)", a->path);
  char *nb = realloc(*buf, *len + n + 1);
  if (nb == NULL)
    return sr_error_make(err, ENOMEM, "audit log");
  memcpy(nb + *len, line, n);
  nb[*len + n] = '\n';
  *buf = nb;
  *len += n + 1;
  return 0;
}

/* Whole lines, one open and one O_APPEND write: concurrent seerun processes never interleave
 * their lines, and the lines of one step (its decisions) reach the file together or not at
 * all.  A line before ours that was cut short (a write the disk had no room for, a writer
 * killed in the middle of a large one) is ended first, in the same write: else ours would be
 * its tail, and a reader would lose both. */
static int write_lines(const struct sr_audit *a, const char *buf, size_t len, sr_error_t *err)
{
  const int flags = O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY;
  _cleanup_close_ int fd = open(a->path, O_RDWR | flags, 0600);
  bool can_read = fd >= 0;
  if (fd < 0 && errno == EACCES)
    fd = open(a->path, O_WRONLY | flags, 0600); /* a log we may append to only */
  if (fd < 0)
    return sr_error_sys(err, "audit log `%s`: open (refusing to act without a record)", a->path);
  /* The last byte is read under a lock the writers share (flock: a writer killed lets go of
   * it): else a large line being written (its size grows a page at a time) would look cut
   * short.  Held for a moment only; past SR_AUDIT_LOCK_MS the line goes without the check. */
  bool locked = false;
  for (int i = 0; can_read && i < SR_AUDIT_LOCK_MS && !locked; i++) {
    locked = flock(fd, LOCK_EX | LOCK_NB) == 0;
    if (!locked)
      nanosleep(&(struct timespec){0, 1000000}, NULL);
  }
  struct stat st;
  char last = '\n';
  if (locked && fstat(fd, &st) == 0 && st.st_size > 0 && pread(fd, &last, 1, st.st_size - 1) != 1)
    last = '\n';
  struct iovec iov[2] = {{(void *)"\n", 1}, {(void *)buf, len}};
  bool end_it = last != '\n';
  ssize_t want = (ssize_t)len + (end_it ? 1 : 0);
  ssize_t w = writev(fd, end_it ? iov : iov + 1, end_it ? 2 : 1);
  if (w != want)
    return sr_error_make(err, w < 0 ? errno : EIO,
                         "audit log `%s`: write (refusing to act without a record)", a->path);
  return 0;
}

static int finish(sr_json_gen_t g, const struct sr_audit *a, sr_error_t *err)
{
  _cleanup_free_ char *buf = NULL;
  size_t len = 0;
  if (take_line(g, a, &buf, &len, err) < 0)
    return -1;
  return write_lines(a, buf, len, err);
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
  if (a == NULL || a->path == NULL || d == NULL || d->n == 0)
    return 0;
  /* One write for all of them (it was an open and a write per line, the most of any step). */
  _cleanup_free_ char *buf = NULL;
  size_t len = 0;
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
    if (take_line(g, a, &buf, &len, err) < 0)
      return -1;
  }
  return write_lines(a, buf, len, err);
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
