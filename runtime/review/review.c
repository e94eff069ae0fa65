/* `seerun review`'s report (review.h): per run (docs/audit.md, "seerun review"), a short
 * summary and its flags, as text or as one JSON document. */
#include "build.h"

#include "review.h"

#include "cleanup.h"
#include "json.h"
#include "review_flags.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double duration(const struct sr_review_log_run *r)
{
  double from = r->started >= 0 ? r->started : r->first;
  double to = r->stopped >= 0 ? r->stopped : r->last;
  return from >= 0 && to >= from ? to - from : 0;
}

static void put_text(FILE *o, const struct sr_review_log_run *r, const struct sr_review_flag *f,
                     size_t nf)
{
  fprintf(o, "%s  profile %s  created %s  duration %.1fs  exit %s", r->id,
          r->profile ? r->profile : "?", r->created ? r->created : "?", duration(r),
          r->has_exit ? "" : "unknown");
  if (r->has_exit)
    fprintf(o, "%ld", r->exit_status);
  fprintf(o, "\n");
  if (r->has_activity) {
    fprintf(o, "  denied system calls: %llu", (unsigned long long)r->denied);
    for (size_t i = 0; i < r->n_sys; i++)
      fprintf(o, "%s%s %llu", i ? ", " : " (", r->sys[i].name, (unsigned long long)r->sys[i].n);
    fprintf(o, "%s\n", r->n_sys ? ")" : "");
    if (r->programs >= 0)
      fprintf(o, "  programs executed: %lld\n", (long long)r->programs);
    if (r->files_added >= 0)
      fprintf(o,
              "  files changed: %s%lld added, %lld modified, %lld deleted (%llu outside the "
              "outputs and scratch space)\n",
              r->files_lower_bound ? "at least " : "", (long long)r->files_added,
              (long long)r->files_modified, (long long)r->files_deleted,
              (unsigned long long)r->files_elsewhere);
    fprintf(o, "  limits hit: %llu OOM kill(s), %llu pids-limit hit(s)\n",
            (unsigned long long)r->oom, (unsigned long long)r->pids);
  } else {
    fprintf(o, "  no activity record\n");
  }
  if (r->egress_requests)
    fprintf(o, "  hosts contacted: %llu request(s), %llu refused\n",
            (unsigned long long)r->egress_requests, (unsigned long long)r->egress_refused);
  for (size_t i = 0; i < nf; i++)
    fprintf(o, "  FLAG %s: %s\n", f[i].flag, f[i].reason);
}

static void put_run(sr_json_gen_t g, const struct sr_review_log_run *r,
                    const struct sr_review_flag *f, size_t nf)
{
  sr_json_map_open(g);
  sr_json_put_kv_string(g, "id", r->id);
  sr_json_put_kv_string(g, "profile", r->profile ? r->profile : "");
  sr_json_put_kv_string(g, "bundle", r->bundle ? r->bundle : "");
  sr_json_put_kv_string(g, "created", r->created ? r->created : "");
  sr_json_put_key(g, "durationSeconds");
  char d[32];
  int len = snprintf(d, sizeof(d), "%.3f", duration(r));
  sr_json_put_raw(g, d, (size_t)len);
  sr_json_put_key(g, "exitStatus");
  if (r->has_exit)
    sr_json_put_i64(g, r->exit_status);
  else
    sr_json_put_null(g);
  sr_json_put_kv_bool(g, "activityRecord", r->has_activity);
  sr_json_put_kv_bool(g, "recordComplete", r->has_activity && r->complete);
  sr_json_put_kv_u64(g, "deniedSyscalls", r->denied);
  sr_json_put_key(g, "denied");
  sr_json_map_open(g);
  for (size_t i = 0; i < r->n_sys; i++)
    sr_json_put_kv_u64(g, r->sys[i].name, r->sys[i].n);
  sr_json_map_close(g);
  sr_json_put_kv_i64(g, "programsExecuted", r->programs);
  sr_json_put_kv_u64(g, "oomKills", r->oom);
  sr_json_put_kv_u64(g, "pidsLimitHits", r->pids);
  sr_json_put_kv_i64(g, "processesLeft", r->procs_left);
  sr_json_put_kv_i64(g, "processesAtKill", r->procs_at_kill);
  sr_json_put_key(g, "filesChanged");
  if (r->files_added < 0) {
    sr_json_put_null(g);
  } else {
    sr_json_map_open(g);
    sr_json_put_kv_i64(g, "added", r->files_added);
    sr_json_put_kv_i64(g, "modified", r->files_modified);
    sr_json_put_kv_i64(g, "deleted", r->files_deleted);
    sr_json_put_kv_bool(g, "lowerBound", r->files_lower_bound);
    sr_json_put_kv_u64(g, "outsideOutputs", r->files_elsewhere);
    sr_json_map_close(g);
  }
  sr_json_put_kv_u64(g, "egressRequests", r->egress_requests);
  sr_json_put_kv_u64(g, "egressRefused", r->egress_refused);
  sr_json_put_key(g, "flags");
  sr_json_array_open(g);
  for (size_t i = 0; i < nf; i++) {
    sr_json_map_open(g);
    sr_json_put_kv_string(g, "flag", f[i].flag);
    sr_json_put_kv_string(g, "reason", f[i].reason);
    sr_json_map_close(g);
  }
  sr_json_array_close(g);
  sr_json_map_close(g);
}

static bool wanted(const struct sr_review_log_run *r, const struct sr_review_options *o)
{
  if (o->since >= 0 && r->last < o->since)
    return false;
  if (o->n_ids == 0)
    return true;
  for (size_t i = 0; i < o->n_ids; i++)
    if (strcmp(o->ids[i], r->id) == 0)
      return true;
  return false;
}

/* The runs O wants into OUT, each with its flags, then the counts. */
static int render(const struct sr_review_log *log, const struct sr_review_options *o, FILE *out,
                  sr_error_t *err)
{
  _cleanup_gen_ sr_json_gen_t gen = NULL;
  if (o->json) {
    if (sr_json_gen_new(&gen, true, err) < 0)
      return -1;
    sr_json_map_open(gen);
    sr_json_put_key(gen, "runs");
    sr_json_array_open(gen);
  }
  size_t flagged = 0, shown = 0;
  for (size_t i = 0; i < log->n; i++) {
    const struct sr_review_log_run *r = &log->v[i];
    if (!wanted(r, o))
      continue;
    struct sr_review_flag fl[SR_REVIEW_FLAGS_MAX];
    size_t nf = sr_review_flags_of(r, fl, SR_REVIEW_FLAGS_MAX);
    shown++;
    flagged += nf ? 1 : 0;
    if (o->json)
      put_run(gen, r, fl, nf);
    else
      put_text(out, r, fl, nf);
  }
  if (!o->json) {
    fprintf(out, "%zu run(s), %zu flagged\n", shown, flagged);
    return 0;
  }
  sr_json_array_close(gen);
  sr_json_put_kv_u64(gen, "runsShown", shown);
  sr_json_put_kv_u64(gen, "runsFlagged", flagged);
  sr_json_map_close(gen);
  const unsigned char *buf;
  size_t n;
  if (sr_json_gen_buf(gen, &buf, &n, err) < 0)
    return -1;
  fwrite(buf, 1, n, out);
  fprintf(out, "\n");
  return 0;
}

int sr_review_render(const struct sr_review_log *log, const struct sr_review_options *o, char **out,
                     sr_error_t *err)
{
  _cleanup_free_ char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  if (f == NULL)
    return sr_error_sys(err, "review: a buffer for the report");
  int r = render(log, o, f, err);
  bool failed = ferror(f) != 0;
  if (fclose(f) != 0 || failed) {
    if (r == 0)
      sr_error_sys(err, "review: write the report to its buffer");
    return -1;
  }
  if (r < 0)
    return -1;
  *out = text;
  text = NULL;
  return 0;
}

int sr_review_report(const char *path, const struct sr_review_options *o, char **out,
                     sr_error_t *err)
{
  _cleanup_review_log_ struct sr_review_log log = {0};
  _cleanup_fclose_ FILE *f = path ? fopen(path, "re") : NULL;
  if (path && f == NULL && errno != ENOENT)
    return sr_error_sys(err, "review: open the audit log %s", path);
  if (f)
    sr_review_log_read(&log, f);
  return sr_review_render(&log, o, out, err);
}
