/* What a sandbox run came to: the command's exit (status or signal), whether the wall-clock
 * limit, the OOM killer or the caller's signal ended it, its time and memory, its output
 * streams, the outputs collected and refused, and the policy's decisions.  One JSON document
 * (--json=FILE, --json-fd=N); the same facts, flattened, as the audit event "sandbox-result". */
#include "build.h"

#include "sandbox.h"

#include "cleanup.h"
#include "json.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

static double seconds(int64_t ns)
{
  return (double)ns / 1e9;
}

static double tv_seconds(const struct timeval *tv)
{
  return (double)tv->tv_sec + (double)tv->tv_usec / 1e6;
}

/* Microseconds are all these figures mean: printed as such, not as 17 significant digits. */
static void put_double(sr_json_gen_t g, const char *key, double v)
{
  char buf[64];
  int n = snprintf(buf, sizeof(buf), "%.6f", v);
  sr_json_put_key(g, key);
  sr_json_put_raw(g, buf, (size_t)n);
}

static void put_null(sr_json_gen_t g, const char *key)
{
  sr_json_put_key(g, key);
  sr_json_put_null(g);
}

static void signal_name(int sig, char *buf, size_t size)
{
  const char *abbrev = sigabbrev_np(sig);
  if (abbrev)
    snprintf(buf, size, "SIG%s", abbrev);
  else
    snprintf(buf, size, "%d", sig);
}

/* CPU time: the cgroup's (every process), else what wait4 saw (the init and what it reaped). */
static void cpu_times(const struct sr_sandbox_result *r, double *total, double *user, double *sys)
{
  if (r->usage.cpu_ns) {
    *total = seconds((int64_t)r->usage.cpu_ns);
    *user = seconds((int64_t)r->usage.cpu_user_ns);
    *sys = seconds((int64_t)r->usage.cpu_system_ns);
  } else {
    *user = tv_seconds(&r->ru.ru_utime);
    *sys = tv_seconds(&r->ru.ru_stime);
    *total = *user + *sys;
  }
}

static void put_entries(sr_json_gen_t g, const char *key, const struct sr_collect_entry *v,
                        size_t n, bool refused)
{
  sr_json_put_key(g, key);
  sr_json_array_open(g);
  for (size_t i = 0; i < n; i++) {
    sr_json_map_open(g);
    sr_json_put_kv_string(g, "path", v[i].path);
    sr_json_put_kv_string(g, "type", v[i].type);
    if (!refused || v[i].size)
      sr_json_put_kv_u64(g, "size", v[i].size);
    if (refused)
      sr_json_put_kv_string(g, "reason", v[i].reason);
    sr_json_map_close(g);
  }
  sr_json_array_close(g);
}

/* What of the command's stdout or stderr reached the caller, and what was dropped (past
 * --output-max-bytes, or with the caller's end closed); null when it never ran. */
static void put_stream(sr_json_gen_t g, const char *key, const struct sr_sandbox_stream *s)
{
  sr_json_put_key(g, key);
  if (s == NULL) {
    sr_json_put_null(g);
    return;
  }
  sr_json_map_open(g);
  sr_json_put_kv_u64(g, "bytes", s->bytes);
  sr_json_put_kv_u64(g, "droppedBytes", s->dropped);
  sr_json_map_close(g);
}

/* In the audit log the collected entries are left out (the counts say how many) and the
 * refused ones capped: a line stays small whatever /out held. */
#define AUDIT_REFUSED_LISTED 50

static void put_output(sr_json_gen_t g, const struct sr_sandbox_result *r, bool audit)
{
  sr_json_put_key(g, "output");
  if (r->out_dir == NULL) {
    sr_json_put_null(g);
    return;
  }
  sr_json_map_open(g);
  sr_json_put_kv_string(g, "directory", r->out_dir);
  const struct sr_collect_result *o = r->out;
  sr_json_put_kv_bool(g, "collected", o != NULL);
  if (o) {
    sr_json_put_kv_u64(g, "files", o->files);
    sr_json_put_kv_u64(g, "directories", o->dirs);
    sr_json_put_kv_u64(g, "bytes", o->bytes);
    sr_json_put_kv_bool(g, "complete", o->complete);
    size_t listed =
        audit && o->n_refused > AUDIT_REFUSED_LISTED ? AUDIT_REFUSED_LISTED : o->n_refused;
    if (!audit)
      put_entries(g, "entries", o->collected, o->n_collected, false);
    put_entries(g, "refused", o->refused, listed, true);
    sr_json_put_kv_u64(g, "refusedNotListed", o->refused_not_listed + (o->n_refused - listed));
  }
  sr_json_map_close(g);
}

#define WS_LISTED 10000

static void put_printable(sr_json_gen_t g, const char *key, const char *raw)
{
  _cleanup_free_ char *p = sr_sandbox_collect_printable(raw);
  sr_json_put_kv_string(g, key, p ? p : "?");
}

/* --workspace: what the code changed in the copy (added, modified, deleted, with sizes), and
 * with --apply what of it reached the host directory.  In the audit log, the counts and the
 * apply's refusals only. */
static void put_workspace(sr_json_gen_t g, const struct sr_sandbox_result *r, bool audit)
{
  sr_json_put_key(g, "workspace");
  const struct sr_sandbox_cow *w = r->ws;
  if (w == NULL) {
    sr_json_put_null(g);
    return;
  }
  const struct sr_sandbox_opts *o = r->o;
  sr_json_map_open(g);
  sr_json_put_kv_string(g, "directory", w->host_abs ? w->host_abs : o->ws_host);
  sr_json_put_kv_string(g, "destination", o->ws_dest);
  sr_json_put_kv_u64(g, "sizeBytes", o->ws_size);
  sr_json_put_key(g, "protected");
  sr_json_array_open(g);
  for (size_t i = 0; i < o->n_ws_protect; i++)
    sr_json_put_string(g, o->ws_protect[i]);
  sr_json_array_close(g);
  sr_json_put_kv_bool(g, "examined", w->diffed);
  sr_json_put_kv_bool(g, "complete", w->diffed && !w->diff.truncated);
  if (w->diffed && w->diff.truncated)
    sr_json_put_kv_string(g, "incompleteReason", w->diff.reason);
  else
    put_null(g, "incompleteReason");
  uint64_t n[3] = {0, 0, 0};
  for (size_t i = 0; i < w->diff.n; i++)
    n[w->diff.v[i].kind]++;
  sr_json_put_kv_u64(g, "added", n[SR_ODIFF_ADDED]);
  sr_json_put_kv_u64(g, "modified", n[SR_ODIFF_MODIFIED]);
  sr_json_put_kv_u64(g, "deleted", n[SR_ODIFF_DELETED]);
  const struct sr_ws_apply *a = w->apply.done ? &w->apply : NULL;
  size_t listed = audit ? 0 : w->diff.n < WS_LISTED ? w->diff.n : WS_LISTED;
  if (!audit) {
    sr_json_put_key(g, "changes");
    sr_json_array_open(g);
    for (size_t i = 0; i < listed; i++) {
      const struct sr_odiff_entry *e = &w->diff.v[i];
      sr_json_map_open(g);
      put_printable(g, "path", e->path);
      sr_json_put_kv_string(g, "change", sr_overlay_diff_kind_name(e->kind));
      sr_json_put_kv_string(g, "type", sr_overlay_diff_type_name(e->mode));
      sr_json_put_kv_u64(g, "size", e->size);
      if (a) {
        sr_json_put_kv_bool(g, "applied", a->v[i].applied);
        if (a->v[i].applied)
          put_null(g, "reason");
        else
          sr_json_put_kv_string(g, "reason", a->v[i].reason ? a->v[i].reason : "not applied");
      }
      sr_json_map_close(g);
    }
    sr_json_array_close(g);
    sr_json_put_kv_u64(g, "changesNotListed", w->diff.n - listed);
  }
  sr_json_put_kv_bool(g, "applyRequested", o->ws_apply);
  sr_json_put_key(g, "apply");
  if (a == NULL) {
    sr_json_put_null(g);
    sr_json_map_close(g);
    return;
  }
  sr_json_map_open(g);
  sr_json_put_kv_u64(g, "applied", a->applied);
  sr_json_put_kv_u64(g, "refused", a->refused);
  sr_json_put_kv_bool(g, "complete", a->complete);
  if (audit) {
    /* The refusals, capped, so that the log says what was kept from the host. */
    sr_json_put_key(g, "refusedEntries");
    sr_json_array_open(g);
    size_t shown = 0;
    for (size_t i = 0; i < w->diff.n && shown < AUDIT_REFUSED_LISTED; i++) {
      if (a->v[i].applied)
        continue;
      sr_json_map_open(g);
      put_printable(g, "path", w->diff.v[i].path);
      sr_json_put_kv_string(g, "change", sr_overlay_diff_kind_name(w->diff.v[i].kind));
      sr_json_put_kv_string(g, "reason", a->v[i].reason ? a->v[i].reason : "not applied");
      sr_json_map_close(g);
      shown++;
    }
    sr_json_array_close(g);
  }
  sr_json_put_key(g, "kept");
  sr_json_array_open(g);
  size_t kept = audit && a->n_kept > AUDIT_REFUSED_LISTED ? AUDIT_REFUSED_LISTED : a->n_kept;
  for (size_t i = 0; i < kept; i++) {
    sr_json_map_open(g);
    put_printable(g, "path", a->kept[i].path);
    sr_json_put_kv_string(g, "type", a->kept[i].type);
    sr_json_put_kv_string(g, "reason", a->kept[i].reason);
    sr_json_map_close(g);
  }
  sr_json_array_close(g);
  sr_json_put_kv_u64(g, "keptNotListed", a->kept_not_listed + (a->n_kept - kept));
  sr_json_map_close(g);
  sr_json_map_close(g);
}

/* The fields of the result; audit: as the audit line holds them (id, profile and runId are the
 * line's own, the decisions lines of their own). */
static void put_result(sr_json_gen_t g, const struct sr_sandbox_result *r, bool audit)
{
  if (!audit) {
    sr_json_put_kv_string(g, "id", r->id ? r->id : "");
    sr_json_put_kv_string(g, "runId", r->run_id ? r->run_id : "");
    sr_json_put_kv_string(g, "profile", r->profile ? r->profile : "");
  }
  sr_json_put_key(g, "command");
  sr_json_array_open(g);
  for (size_t i = 0; i < r->argc; i++)
    sr_json_put_string(g, r->argv[i]);
  sr_json_array_close(g);
  sr_json_put_kv_i64(g, "status", r->exit_code);
  if (r->ran && WIFEXITED(r->status))
    sr_json_put_kv_i64(g, "exitCode", WEXITSTATUS(r->status));
  else
    put_null(g, "exitCode");
  if (r->ran && WIFSIGNALED(r->status)) {
    char name[32];
    signal_name(WTERMSIG(r->status), name, sizeof(name));
    sr_json_put_kv_string(g, "signal", name);
  } else
    put_null(g, "signal");
  sr_json_put_kv_bool(g, "timedOut", r->timed_out);
  sr_json_put_kv_bool(g, "signalledByCaller", r->caller_signal != 0);
  if (r->caller_signal) {
    char name[32];
    signal_name(r->caller_signal, name, sizeof(name));
    sr_json_put_kv_string(g, "callerSignal", name);
  } else
    put_null(g, "callerSignal");
  sr_json_put_kv_bool(g, "interrupted", r->interrupted);
  sr_json_put_kv_bool(g, "oomKilled", r->usage.oom_kills > 0);
  if (r->usage.valid)
    sr_json_put_kv_u64(g, "oomKills", r->usage.oom_kills);
  else
    put_null(g, "oomKills");
  put_double(g, "wallSeconds", seconds(r->wall_ns));
  double total, user, sys;
  cpu_times(r, &total, &user, &sys);
  sr_json_put_key(g, "cpuSeconds");
  sr_json_map_open(g);
  put_double(g, "total", total);
  put_double(g, "user", user);
  put_double(g, "system", sys);
  sr_json_map_close(g);
  if (r->usage.peak_known)
    sr_json_put_kv_u64(g, "peakMemoryBytes", r->usage.peak_memory);
  else
    put_null(g, "peakMemoryBytes");
  sr_json_put_key(g, "limits");
  sr_json_map_open(g);
  if (r->memory_limit > 0)
    sr_json_put_kv_i64(g, "memoryBytes", r->memory_limit);
  else
    put_null(g, "memoryBytes");
  if (r->pids_limit > 0)
    sr_json_put_kv_i64(g, "pids", r->pids_limit);
  else
    put_null(g, "pids");
  if (r->cpu_quota_us)
    put_double(g, "cpus", (double)r->cpu_quota_us / SR_SANDBOX_CPU_PERIOD_US);
  else
    put_null(g, "cpus");
  if (r->timeout_ms)
    put_double(g, "timeoutSeconds", (double)r->timeout_ms / 1000.0);
  else
    put_null(g, "timeoutSeconds");
  if (r->output_max_bytes)
    sr_json_put_kv_u64(g, "outputMaxBytes", r->output_max_bytes);
  else
    put_null(g, "outputMaxBytes");
  put_double(g, "killAfterSeconds", (double)r->kill_after_ms / 1000.0);
  sr_json_map_close(g);
  put_stream(g, "stdout", r->stdio ? &r->stdio->out : NULL);
  put_stream(g, "stderr", r->stdio ? &r->stdio->err : NULL);
  put_output(g, r, audit);
  put_workspace(g, r, audit);
  if (r->caller)
    sr_sandbox_audit_put_caller(g, r->caller);
  if (!audit) {
    /* The proxy's requests (sr_egress_record_to_json's document), or null without it. */
    sr_json_put_key(g, "egress");
    if (r->egress_json)
      sr_json_put_raw(g, r->egress_json, strlen(r->egress_json));
    else
      sr_json_put_null(g);
    /* The activity record (docs/audit.md, "activity"), as the supervisor left it. */
    sr_json_put_key(g, "activity");
    if (r->activity_json)
      sr_json_put_raw(g, r->activity_json, strlen(r->activity_json));
    else
      sr_json_put_null(g);
    sr_json_put_key(g, "decisions");
    if (r->decisions_json)
      sr_json_put_raw(g, r->decisions_json, strlen(r->decisions_json)); /* JSON text, verbatim */
    else {
      sr_json_array_open(g);
      sr_json_array_close(g);
    }
  }
  if (r->error)
    sr_json_put_kv_string(g, "error", r->error);
  else
    put_null(g, "error");
}

int sr_sandbox_result_json(const struct sr_sandbox_result *r, char **out, size_t *len,
                           sr_error_t *err)
{
  _cleanup_gen_ sr_json_gen_t g = NULL;
  if (sr_json_gen_new(&g, false, err) < 0)
    return -1;
  sr_json_map_open(g);
  put_result(g, r, false);
  sr_json_map_close(g);
  const unsigned char *buf;
  size_t n;
  if (sr_json_gen_buf(g, &buf, &n, err) < 0)
    return sr_error_wrap(err, "sandbox result");
  *out = strndup((const char *)buf, n);
  if (*out == NULL)
    return sr_error_make(err, ENOMEM, "sandbox result");
  *len = n;
  return 0;
}

static void put_audit(sr_json_gen_t g, const void *arg)
{
  put_result(g, arg, true);
}

int sr_sandbox_result_audit(const struct sr_audit *a, const struct sr_sandbox_result *r,
                            sr_error_t *err)
{
  return sr_audit_event_with(a, "sandbox-result", put_audit, r, err);
}
