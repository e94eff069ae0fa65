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
static void put_double(yajl_gen g, const char *key, double v)
{
  char buf[64];
  int n = snprintf(buf, sizeof(buf), "%.6f", v);
  sr_json_put_key(g, key);
  yajl_gen_number(g, buf, (size_t)n);
}

static void put_null(yajl_gen g, const char *key)
{
  sr_json_put_key(g, key);
  yajl_gen_null(g);
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

static void put_entries(yajl_gen g, const char *key, const struct sr_collect_entry *v, size_t n,
                        bool refused)
{
  sr_json_put_key(g, key);
  yajl_gen_array_open(g);
  for (size_t i = 0; i < n; i++) {
    yajl_gen_map_open(g);
    sr_json_put_kv_string(g, "path", v[i].path);
    sr_json_put_kv_string(g, "type", v[i].type);
    if (!refused || v[i].size)
      sr_json_put_kv_u64(g, "size", v[i].size);
    if (refused)
      sr_json_put_kv_string(g, "reason", v[i].reason);
    yajl_gen_map_close(g);
  }
  yajl_gen_array_close(g);
}

/* What of the command's stdout or stderr reached the caller, and what was dropped (past
 * --output-max-bytes, or with the caller's end closed); null when it never ran. */
static void put_stream(yajl_gen g, const char *key, const struct sr_sandbox_stream *s)
{
  sr_json_put_key(g, key);
  if (s == NULL) {
    yajl_gen_null(g);
    return;
  }
  yajl_gen_map_open(g);
  sr_json_put_kv_u64(g, "bytes", s->bytes);
  sr_json_put_kv_u64(g, "droppedBytes", s->dropped);
  yajl_gen_map_close(g);
}

static void put_output(yajl_gen g, const struct sr_sandbox_result *r)
{
  sr_json_put_key(g, "output");
  if (r->out_dir == NULL) {
    yajl_gen_null(g);
    return;
  }
  yajl_gen_map_open(g);
  sr_json_put_kv_string(g, "directory", r->out_dir);
  const struct sr_collect_result *o = r->out;
  sr_json_put_kv_bool(g, "collected", o != NULL);
  if (o) {
    sr_json_put_kv_u64(g, "files", o->files);
    sr_json_put_kv_u64(g, "directories", o->dirs);
    sr_json_put_kv_u64(g, "bytes", o->bytes);
    sr_json_put_kv_bool(g, "complete", o->complete);
    put_entries(g, "entries", o->collected, o->n_collected, false);
    put_entries(g, "refused", o->refused, o->n_refused, true);
    sr_json_put_kv_u64(g, "refusedNotListed", o->refused_not_listed);
  }
  yajl_gen_map_close(g);
}

int sr_sandbox_result_json(const struct sr_sandbox_result *r, char **out, size_t *len,
                           sr_error_t *err)
{
  _cleanup_gen_ yajl_gen g = NULL;
  if (sr_json_gen_new(&g, false, err) < 0)
    return -1;
  yajl_gen_map_open(g);
  sr_json_put_kv_string(g, "id", r->id ? r->id : "");
  sr_json_put_kv_string(g, "profile", r->profile ? r->profile : "");
  sr_json_put_key(g, "command");
  yajl_gen_array_open(g);
  for (size_t i = 0; i < r->argc; i++)
    sr_json_put_string(g, r->argv[i]);
  yajl_gen_array_close(g);
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
  yajl_gen_map_open(g);
  put_double(g, "total", total);
  put_double(g, "user", user);
  put_double(g, "system", sys);
  yajl_gen_map_close(g);
  if (r->usage.peak_known)
    sr_json_put_kv_u64(g, "peakMemoryBytes", r->usage.peak_memory);
  else
    put_null(g, "peakMemoryBytes");
  sr_json_put_key(g, "limits");
  yajl_gen_map_open(g);
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
  yajl_gen_map_close(g);
  put_stream(g, "stdout", r->stdio ? &r->stdio->out : NULL);
  put_stream(g, "stderr", r->stdio ? &r->stdio->err : NULL);
  put_output(g, r);
  sr_json_put_key(g, "decisions");
  if (r->decisions_json)
    yajl_gen_number(g, r->decisions_json, strlen(r->decisions_json)); /* JSON text, verbatim */
  else {
    yajl_gen_array_open(g);
    yajl_gen_array_close(g);
  }
  if (r->error)
    sr_json_put_kv_string(g, "error", r->error);
  else
    put_null(g, "error");
  yajl_gen_map_close(g);
  const unsigned char *buf;
  size_t n;
  yajl_gen_get_buf(g, &buf, &n);
  *out = strndup((const char *)buf, n);
  if (*out == NULL)
    return sr_error_make(err, ENOMEM, "sandbox result");
  *len = n;
  return 0;
}

/* The refused outputs, as a short JSON text (the first few; the counts say how many). */
static char *refused_text(const struct sr_collect_result *o)
{
  _cleanup_gen_ yajl_gen g = NULL;
  sr_error_t err = NULL;
  if (sr_json_gen_new(&g, false, &err) < 0) {
    sr_error_free(&err);
    return NULL;
  }
  yajl_gen_array_open(g);
  for (size_t i = 0; i < o->n_refused && i < 50; i++) {
    yajl_gen_map_open(g);
    sr_json_put_kv_string(g, "path", o->refused[i].path);
    sr_json_put_kv_string(g, "type", o->refused[i].type);
    sr_json_put_kv_string(g, "reason", o->refused[i].reason);
    yajl_gen_map_close(g);
  }
  yajl_gen_array_close(g);
  const unsigned char *buf;
  size_t n;
  yajl_gen_get_buf(g, &buf, &n);
  return strndup((const char *)buf, n);
}

int sr_sandbox_result_audit(const struct sr_audit *a, const struct sr_sandbox_result *r,
                            sr_error_t *err)
{
  char status[16], exit_code[16] = "", sig[32] = "", wall[32], cpu[32], peak[32] = "",
                   files[32] = "", bytes[32] = "", refused[32] = "", caller_sig[32] = "",
                   dropped_out[32] = "", dropped_err[32] = "";
  if (r->caller_signal)
    signal_name(r->caller_signal, caller_sig, sizeof(caller_sig));
  if (r->stdio) {
    snprintf(dropped_out, sizeof(dropped_out), "%llu", (unsigned long long)r->stdio->out.dropped);
    snprintf(dropped_err, sizeof(dropped_err), "%llu", (unsigned long long)r->stdio->err.dropped);
  }
  snprintf(status, sizeof(status), "%d", r->exit_code);
  if (r->ran && WIFEXITED(r->status))
    snprintf(exit_code, sizeof(exit_code), "%d", WEXITSTATUS(r->status));
  if (r->ran && WIFSIGNALED(r->status))
    signal_name(WTERMSIG(r->status), sig, sizeof(sig));
  double total, user, sys;
  cpu_times(r, &total, &user, &sys);
  snprintf(wall, sizeof(wall), "%.6f", seconds(r->wall_ns));
  snprintf(cpu, sizeof(cpu), "%.6f", total);
  if (r->usage.peak_known)
    snprintf(peak, sizeof(peak), "%llu", (unsigned long long)r->usage.peak_memory);
  _cleanup_free_ char *refused_list = NULL;
  if (r->out) {
    snprintf(files, sizeof(files), "%llu", (unsigned long long)r->out->files);
    snprintf(bytes, sizeof(bytes), "%llu", (unsigned long long)r->out->bytes);
    snprintf(refused, sizeof(refused), "%zu", r->out->n_refused + r->out->refused_not_listed);
    refused_list = refused_text(r->out);
  }
  /* Key, value pairs. */
  /* clang-format off */
  const char *fields[] = {
      "status", status,
      "exitCode", exit_code,
      "signal", sig,
      "timedOut", r->timed_out ? "true" : "false",
      "signalledByCaller", r->caller_signal ? "true" : "false",
      "callerSignal", caller_sig,
      "interrupted", r->interrupted ? "true" : "false",
      "stdoutDroppedBytes", dropped_out,
      "stderrDroppedBytes", dropped_err,
      "oomKilled", r->usage.oom_kills > 0 ? "true" : "false",
      "wallSeconds", wall,
      "cpuSeconds", cpu,
      "peakMemoryBytes", peak,
      "outputDirectory", r->out_dir ? r->out_dir : "",
      "outputFiles", files,
      "outputBytes", bytes,
      "outputRefused", refused,
      "outputRefusedList", refused_list ? refused_list : "",
      "error", r->error ? r->error : "",
      NULL};
  /* clang-format on */
  return sr_audit_event(a, "sandbox-result", fields, err);
}
