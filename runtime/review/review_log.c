/* The audit log read back as runs (review_log.h). */
#include "build.h"

#include "review_log.h"

#include "cleanup.h"
#include "json.h"
#include "review_time.h"

#include <stdlib.h>
#include <string.h>

static char *dup_or_null(const char *s)
{
  return s ? strdup(s) : NULL;
}

static const char *str_of(yajl_val obj, const char *key)
{
  yajl_val v = sr_json_field(obj, key);
  return v && YAJL_IS_STRING(v) ? YAJL_GET_STRING(v) : NULL;
}

static bool num_of(yajl_val obj, const char *key, int64_t *out)
{
  yajl_val v = sr_json_field(obj, key);
  if (v == NULL || !YAJL_IS_INTEGER(v))
    return false;
  *out = YAJL_GET_INTEGER(v);
  return true;
}

/* Whether a line of the id (its event, its runId or NULL) belongs to the id's latest run R. */
static bool same_run(const struct sr_review_log_run *r, const char *event, const char *run_id)
{
  /* seerun sandbox's own lines: a run is its runId (its slot is used again and again). */
  if (run_id)
    return r->run_id && strcmp(r->run_id, run_id) == 0;
  /* After its delete, only its record (written before delete's line when it was settled,
   * else by its supervisor just before). */
  if (r->deleted)
    return strcmp(event, "activity") == 0;
  /* A second create of the id: `run` and `sandbox` remove their container themselves, with
   * no delete line, so the id's next run starts at its create. */
  return !(strcmp(event, "create") == 0 && r->created_seen && r->run_id == NULL);
}

static struct sr_review_log_run *run_for(struct sr_review_log *rs, const char *id,
                                         const char *event, const char *run_id)
{
  for (size_t i = rs->n; i > 0; i--)
    if (strcmp(rs->v[i - 1].id, id) == 0) {
      if (same_run(&rs->v[i - 1], event, run_id))
        return &rs->v[i - 1];
      break;
    }
  if (rs->n == rs->cap) {
    size_t cap = rs->cap ? rs->cap * 2 : 64;
    struct sr_review_log_run *v = realloc(rs->v, cap * sizeof(*v));
    if (v == NULL)
      return NULL;
    rs->v = v;
    rs->cap = cap;
  }
  struct sr_review_log_run *r = &rs->v[rs->n++];
  memset(r, 0, sizeof(*r));
  r->id = strdup(id);
  r->first = r->started = r->stopped = -1;
  r->procs_left = -1;
  r->procs_at_kill = -1;
  r->programs = -1;
  r->files_added = r->files_modified = r->files_deleted = -1;
  return r->id ? r : NULL;
}

static bool under_place(const char *path, const char *place)
{
  size_t l = strlen(place);
  if (strcmp(place, "/") == 0)
    return true;
  return strncmp(path, place, l) == 0 && (path[l] == '/' || path[l] == '\0');
}

static void free_syscalls(struct sr_review_log_run *r)
{
  for (size_t k = 0; k < r->n_sys; k++) {
    free(r->sys[k].name);
    free(r->sys[k].exe);
  }
  free(r->sys);
  r->sys = NULL;
  r->n_sys = 0;
}

/* The record's "files": what changed, and where that is not an output or scratch space. */
static void add_files(struct sr_review_log_run *r, yajl_val files)
{
  yajl_val walked = files ? sr_json_field(files, "walked") : NULL;
  if (walked == NULL || !YAJL_IS_TRUE(walked))
    return;
  int64_t n;
  r->files_elsewhere = 0;
  free(r->elsewhere_example);
  r->elsewhere_example = NULL;
  r->files_added = num_of(files, "added", &n) ? n : 0;
  r->files_modified = num_of(files, "modified", &n) ? n : 0;
  r->files_deleted = num_of(files, "deleted", &n) ? n : 0;
  yajl_val lb = sr_json_field(files, "lowerBound");
  r->files_lower_bound = lb && YAJL_IS_TRUE(lb);
  yajl_val places = sr_json_field(files, "places");
  yajl_val changes = sr_json_field(files, "changes");
  char buf[512] = "";
  size_t off = 0;
  size_t np = places && YAJL_IS_ARRAY(places) ? places->u.array.len : 0;
  for (size_t i = 0; i < np; i++) {
    yajl_val p = places->u.array.values[i];
    const char *role = str_of(p, "role"), *path = str_of(p, "path");
    if (role == NULL || path == NULL || strcmp(role, "other") != 0)
      continue;
    uint64_t c = 0;
    static const char *const kinds[] = {"added", "modified", "deleted"};
    for (int k = 0; k < 3; k++)
      c += num_of(p, kinds[k], &n) ? (uint64_t)n : 0;
    if (c == 0)
      continue;
    r->files_elsewhere += c;
    if (off < sizeof(buf))
      off += (size_t)snprintf(buf + off, sizeof(buf) - off, "%s%s (%llu)", off ? ", " : "", path,
                              (unsigned long long)c);
  }
  /* An example: the first listed change whose place (the most specific one) is elsewhere. */
  for (size_t k = 0; r->files_elsewhere && changes && YAJL_IS_ARRAY(changes) &&
                     k < changes->u.array.len && r->elsewhere_example == NULL;
       k++) {
    const char *cp = str_of(changes->u.array.values[k], "path"), *role = NULL;
    size_t best = 0;
    for (size_t i = 0; cp && i < np; i++) {
      const char *path = str_of(places->u.array.values[i], "path");
      if (path && under_place(cp, path) && strlen(path) + 1 > best) {
        best = strlen(path) + 1;
        role = str_of(places->u.array.values[i], "role");
      }
    }
    if (role && strcmp(role, "other") == 0)
      r->elsewhere_example = strdup(cp);
  }
  free(r->elsewhere_places);
  r->elsewhere_places = r->files_elsewhere ? strdup(buf) : NULL;
}

static void add_activity(struct sr_review_log_run *r, yajl_val line)
{
  yajl_val complete = sr_json_field(line, "complete");
  yajl_val rec = sr_json_field(line, "record");
  if (rec == NULL || !YAJL_IS_OBJECT(rec))
    return;
  r->has_activity = true;
  r->complete = complete && YAJL_IS_TRUE(complete);
  free(r->incomplete_reason);
  r->incomplete_reason = dup_or_null(str_of(line, "reason"));
  const char *st = str_of(rec, "stoppedAt");
  if (st)
    r->stopped = sr_review_time_parse(st);
  yajl_val sc = sr_json_field(rec, "seccomp");
  int64_t n;
  if (sc && num_of(sc, "denied", &n))
    r->denied = (uint64_t)n;
  yajl_val by = sc ? sr_json_field(sc, "byExecutable") : NULL;
  yajl_val sys = sc ? sr_json_field(sc, "syscalls") : NULL;
  /* A later record of the run replaces the earlier one's counts. */
  free_syscalls(r);
  /* Every call the record names, not the first so many: a privileged one after many ordinary
   * ones is flagged all the same. */
  size_t len = sys && YAJL_IS_ARRAY(sys) ? sys->u.array.len : 0;
  r->sys = len ? calloc(len, sizeof(*r->sys)) : NULL;
  for (size_t i = 0; r->sys && i < len; i++) {
    yajl_val e = sys->u.array.values[i];
    const char *name = str_of(e, "syscall");
    if (name == NULL || !num_of(e, "count", &n))
      continue;
    struct sr_review_log_count *c = NULL;
    for (size_t k = 0; k < r->n_sys && c == NULL; k++)
      if (strcmp(r->sys[k].name, name) == 0)
        c = &r->sys[k]; /* the same call through another ABI (x86_64, i386) */
    if (c) {
      c->n += (uint64_t)n;
      continue;
    }
    char *copy = strdup(name);
    if (copy == NULL)
      continue;
    c = &r->sys[r->n_sys++];
    c->name = copy;
    c->n = (uint64_t)n;
    c->exe = NULL;
    for (size_t k = 0; by && YAJL_IS_ARRAY(by) && k < by->u.array.len && !c->exe; k++) {
      const char *bn = str_of(by->u.array.values[k], "syscall");
      if (bn && strcmp(bn, name) == 0)
        c->exe = dup_or_null(str_of(by->u.array.values[k], "executable"));
    }
  }
  yajl_val progs = sr_json_field(rec, "programs");
  if (progs && YAJL_IS_OBJECT(progs) && num_of(progs, "count", &n))
    r->programs = n;
  yajl_val res = sr_json_field(rec, "resources");
  if (res && num_of(res, "oomKills", &n)) {
    r->has_oom = true;
    r->oom = (uint64_t)n;
  }
  if (res && num_of(res, "pidsLimitHits", &n)) {
    r->has_pids = true;
    r->pids = (uint64_t)n;
  }
  add_files(r, sr_json_field(rec, "files"));
  static const char *const sets[] = {"processesAtStop", "processesAtKill"};
  for (int k = 0; k < 2; k++) {
    yajl_val procs = sr_json_field(rec, sets[k]);
    if (procs == NULL || !YAJL_IS_OBJECT(procs) || !num_of(procs, "count", &n))
      continue;
    *(k == 0 ? &r->procs_left : &r->procs_at_kill) = n;
    yajl_val list = sr_json_field(procs, "processes");
    /* An example: the last listed (at kill, the first is the init). */
    if (list && YAJL_IS_ARRAY(list) && list->u.array.len && r->proc_example == NULL) {
      const char *cmd = str_of(list->u.array.values[list->u.array.len - 1], "cmdline");
      r->proc_example = dup_or_null(cmd);
    }
  }
}

static void add_event(struct sr_review_log *rs, yajl_val line)
{
  const char *event = str_of(line, "event");
  const char *id = str_of(line, "id");
  const char *time = str_of(line, "time");
  if (event == NULL || id == NULL || id[0] == '\0' || time == NULL)
    return;
  /* An id's lines after its delete are a new run (ids are reused). */
  const char *run_id = str_of(line, "runId");
  struct sr_review_log_run *r = run_for(rs, id, event, run_id);
  if (r == NULL)
    return;
  if (run_id && r->run_id == NULL)
    r->run_id = strdup(run_id);
  double t = sr_review_time_parse(time);
  if (r->first < 0) { /* until a line's time parses */
    r->first = t;
    free(r->created);
    r->created = strdup(time);
  }
  r->last = t;
  if (r->profile == NULL)
    r->profile = dup_or_null(str_of(line, "profile"));
  if (r->bundle == NULL)
    r->bundle = dup_or_null(str_of(line, "bundle"));
  int64_t n;
  if (strcmp(event, "delete") == 0) {
    r->deleted = true;
  } else if (strcmp(event, "create") == 0) {
    r->created_seen = true;
    const char *act = str_of(line, "activity");
    r->record_expected = act && strcmp(act, "true") == 0;
  } else if (strcmp(event, "start") == 0 && r->started < 0) {
    r->started = t;
  } else if (strcmp(event, "exit") == 0 && num_of(line, "status", &n)) {
    r->has_exit = true;
    r->exit_status = (long)n;
    if (r->stopped < 0)
      r->stopped = t;
  } else if (strcmp(event, "egress") == 0) {
    r->egress_requests++;
    yajl_val a = sr_json_field(line, "allowed");
    if (a && YAJL_IS_FALSE(a)) {
      r->egress_refused++;
      const char *h = str_of(line, "host");
      bool seen = false;
      for (size_t i = 0; h && i < r->n_hosts; i++)
        seen = seen || strcmp(r->refused_hosts[i], h) == 0;
      if (h && !seen && r->n_hosts < SR_REVIEW_LOG_MAX_HOSTS)
        r->refused_hosts[r->n_hosts++] = strdup(h);
    }
  } else if (strcmp(event, "egress.repeated") == 0 && num_of(line, "repeated", &n)) {
    r->egress_requests += (uint64_t)n;
    r->egress_refused += (uint64_t)n;
  } else if (strcmp(event, "activity") == 0) {
    add_activity(r, line);
  }
}

void sr_review_log_add_line(struct sr_review_log *log, const char *line, size_t len)
{
  if (len > SR_REVIEW_LOG_MAX_LINE)
    return;
  _cleanup_yajl_ yajl_val v = NULL;
  sr_error_t e = NULL;
  if (sr_json_parse(line, len, &v, &e) < 0) {
    sr_error_free(&e);
    return; /* a torn or foreign line: skipped */
  }
  if (YAJL_IS_OBJECT(v))
    add_event(log, v);
}

void sr_review_log_read(struct sr_review_log *log, FILE *f)
{
  _cleanup_free_ char *line = NULL;
  size_t cap = 0;
  ssize_t len;
  while ((len = getline(&line, &cap, f)) > 0)
    sr_review_log_add_line(log, line, (size_t)len);
}

void sr_review_log_free(struct sr_review_log *rs)
{
  for (size_t i = 0; i < rs->n; i++) {
    struct sr_review_log_run *r = &rs->v[i];
    free(r->id);
    free(r->run_id);
    free(r->profile);
    free(r->bundle);
    free(r->created);
    free(r->incomplete_reason);
    free(r->proc_example);
    free(r->elsewhere_places);
    free(r->elsewhere_example);
    for (size_t k = 0; k < r->n_hosts; k++)
      free(r->refused_hosts[k]);
    free_syscalls(r);
  }
  free(rs->v);
  *rs = (struct sr_review_log){0};
}
