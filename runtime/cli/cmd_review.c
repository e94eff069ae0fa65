/* seerun review [ID...] [--since TIME] [--json]: reads the audit log and prints, per run (one
 * container from its create to its activity record), a short summary and the flags that
 * deserve a look (docs/audit.md, "seerun review"). */
#include "build.h"

#include "cli_common.h"

#include "cleanup.h"
#include "json.h"
#include "opts.h"
#include "policy_run.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define USAGE "[command options] [container-id...]"
#define MAX_LINE (1024 * 1024)
#define MAX_SYSCALLS 64
#define MAX_HOSTS 8

struct count {
  char *name;
  char *exe;
  uint64_t n;
};

struct run {
  char *id, *profile, *bundle, *created;
  bool deleted; /* its delete was recorded: what follows (but its activity) is a new run */
  double first, last, started, stopped;
  bool has_exit;
  long exit_status;
  uint64_t egress_requests, egress_refused;
  char *refused_hosts[MAX_HOSTS];
  size_t n_hosts;
  bool has_activity, complete;
  char *incomplete_reason;
  uint64_t denied;
  int64_t programs; /* executed; -1: not watched */
  struct count sys[MAX_SYSCALLS];
  size_t n_sys;
  bool has_oom, has_pids;
  uint64_t oom, pids;
  int64_t procs_left;   /* after the init had gone; -1: not known */
  int64_t procs_at_kill; /* when seerun was asked to stop it (the init among them); -1: none */
  char *proc_example;
  /* files changed (activity_files.h): -1 when not recorded */
  int64_t files_added, files_modified, files_deleted;
  bool files_lower_bound;
  uint64_t files_elsewhere; /* in places that are neither outputs nor scratch */
  char *elsewhere_places, *elsewhere_example;
};

struct runs {
  struct run *v;
  size_t n, cap;
};

static char *dup_or_null(const char *s)
{
  return s ? strdup(s) : NULL;
}

/* RFC 3339 ("2026-12-01T10:14:27.305Z", "...+02:00") to seconds since the epoch; -1: not one. */
static double parse_rfc3339(const char *s)
{
  struct tm tm = {0};
  const char *p = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
  if (p == NULL)
    return -1;
  double frac = 0;
  if (*p == '.') {
    char *end;
    frac = strtod(p, &end);
    p = end;
  }
  long off = 0;
  if (*p == 'Z' || *p == 'z') {
    p++;
  } else if (*p == '+' || *p == '-') {
    int h, m;
    if (sscanf(p + 1, "%2d:%2d", &h, &m) != 2)
      return -1;
    off = (h * 3600 + m * 60) * (*p == '-' ? -1 : 1);
    p += 6;
  } else {
    return -1;
  }
  if (*p)
    return -1;
  return (double)timegm(&tm) - (double)off + frac;
}

/* TIME: RFC 3339, or relative to now ("-1h", "-30m", "-2d", "-45s"; the sign is optional). */
static int parse_since(const char *s, double *out)
{
  double t = parse_rfc3339(s);
  if (t >= 0) {
    *out = t;
    return 0;
  }
  const char *p = s[0] == '-' ? s + 1 : s;
  char *end;
  double n = strtod(p, &end);
  if (end == p || n < 0)
    return -1;
  double unit = strcmp(end, "s") == 0   ? 1
                : strcmp(end, "m") == 0 ? 60
                : strcmp(end, "h") == 0 ? 3600
                : strcmp(end, "d") == 0 ? 86400
                                        : 0;
  if (unit == 0)
    return -1;
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  *out = (double)now.tv_sec + now.tv_nsec / 1e9 - n * unit;
  return 0;
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

static struct run *run_for(struct runs *rs, const char *id, const char *event)
{
  for (size_t i = rs->n; i > 0; i--)
    if (strcmp(rs->v[i - 1].id, id) == 0) {
      if (!rs->v[i - 1].deleted || strcmp(event, "activity") == 0)
        return &rs->v[i - 1];
      break;
    }
  if (rs->n == rs->cap) {
    size_t cap = rs->cap ? rs->cap * 2 : 64;
    struct run *v = realloc(rs->v, cap * sizeof(*v));
    if (v == NULL)
      return NULL;
    rs->v = v;
    rs->cap = cap;
  }
  struct run *r = &rs->v[rs->n++];
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

/* The record's "files": what changed, and where that is not an output or scratch space. */
static void add_files(struct run *r, yajl_val files)
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
      off += (size_t)snprintf(buf + off, sizeof(buf) - off, "%s%s (%llu)", off ? ", " : "",
                              path, (unsigned long long)c);
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

static void add_activity(struct run *r, yajl_val line)
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
    r->stopped = parse_rfc3339(st);
  yajl_val sc = sr_json_field(rec, "seccomp");
  int64_t n;
  if (sc && num_of(sc, "denied", &n))
    r->denied = (uint64_t)n;
  yajl_val by = sc ? sr_json_field(sc, "byExecutable") : NULL;
  yajl_val sys = sc ? sr_json_field(sc, "syscalls") : NULL;
  r->n_sys = 0;
  for (size_t i = 0; sys && YAJL_IS_ARRAY(sys) && i < sys->u.array.len && r->n_sys < MAX_SYSCALLS;
       i++) {
    yajl_val e = sys->u.array.values[i];
    const char *name = str_of(e, "syscall");
    if (name == NULL || !num_of(e, "count", &n))
      continue;
    struct count *c = &r->sys[r->n_sys++];
    c->name = strdup(name);
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

static void add_line(struct runs *rs, yajl_val line)
{
  const char *event = str_of(line, "event");
  const char *id = str_of(line, "id");
  const char *time = str_of(line, "time");
  if (event == NULL || id == NULL || id[0] == '\0' || time == NULL)
    return;
  /* An id's lines after its delete are a new run (ids are reused). */
  struct run *r = run_for(rs, id, event);
  if (r == NULL)
    return;
  double t = parse_rfc3339(time);
  if (r->first < 0) {
    r->first = t;
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
      if (h && !seen && r->n_hosts < MAX_HOSTS)
        r->refused_hosts[r->n_hosts++] = strdup(h);
    }
  } else if (strcmp(event, "egress.repeated") == 0 && num_of(line, "repeated", &n)) {
    r->egress_requests += (uint64_t)n;
    r->egress_refused += (uint64_t)n;
  } else if (strcmp(event, "activity") == 0) {
    add_activity(r, line);
  }
}

/* ---- Flags -------------------------------------------------------------------------------- */

/* The system calls whose attempt is worth a look: they act on mounts, namespaces, other
 * processes, the kernel itself, or the kernel's largest attack surfaces. */
static const char *const privileged[] = {
    "mount", "umount", "umount2", "move_mount", "open_tree", "fsopen", "fsconfig", "fsmount",
    "fspick", "mount_setattr", "pivot_root", "unshare", "setns", "ptrace", "process_vm_readv",
    "process_vm_writev", "pidfd_getfd", "kcmp", "bpf", "perf_event_open", "userfaultfd",
    "keyctl", "add_key", "request_key", "init_module", "finit_module", "delete_module",
    "kexec_load", "kexec_file_load", "reboot", "swapon", "swapoff", "open_by_handle_at",
    "iopl", "ioperm", "io_uring_setup", NULL};

static bool is_privileged(const char *name)
{
  for (size_t i = 0; privileged[i]; i++)
    if (strcmp(privileged[i], name) == 0)
      return true;
  return false;
}

struct flag {
  const char *flag;
  char reason[512];
};

static bool crash_signal(long status, const char **name)
{
  static const struct {
    int sig;
    const char *name;
  } sigs[] = {{4, "SIGILL"}, {6, "SIGABRT"}, {7, "SIGBUS"}, {8, "SIGFPE"}, {11, "SIGSEGV"},
              {31, "SIGSYS"}};
  for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
    if (status == 128 + sigs[i].sig) {
      *name = sigs[i].name;
      return true;
    }
  return false;
}

static size_t flags_of(const struct run *r, struct flag *f, size_t max)
{
  size_t n = 0;
  char buf[512];
  size_t off = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < r->n_sys; i++)
    if (is_privileged(r->sys[i].name) && off < sizeof(buf))
      off += (size_t)snprintf(buf + off, sizeof(buf) - off, "%s%s x%llu%s%s%s", off ? ", " : "",
                              r->sys[i].name, (unsigned long long)r->sys[i].n,
                              r->sys[i].exe ? " (" : "", r->sys[i].exe ? r->sys[i].exe : "",
                              r->sys[i].exe ? ")" : "");
  if (off && n < max) {
    f[n].flag = "privileged-syscall";
    snprintf(f[n++].reason, sizeof(f->reason), "tried, and was denied: %s", buf);
  }
  if (r->egress_refused && n < max) {
    off = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < r->n_hosts && off < sizeof(buf); i++)
      off += (size_t)snprintf(buf + off, sizeof(buf) - off, "%s%s", i ? ", " : "",
                              r->refused_hosts[i]);
    f[n].flag = "denied-egress";
    snprintf(f[n++].reason, sizeof(f->reason), "%llu request(s) to hosts the profile denies: %s",
             (unsigned long long)r->egress_refused, buf);
  }
  if (r->procs_left > 0 && n < max) {
    f[n].flag = "processes-left";
    snprintf(f[n++].reason, sizeof(f->reason),
             "%lld process(es) still running when the container's init had gone (e.g. %s)",
             (long long)r->procs_left, r->proc_example ? r->proc_example : "?");
  } else if (r->procs_at_kill > 1 && n < max) {
    f[n].flag = "processes-left";
    snprintf(f[n++].reason, sizeof(f->reason),
             "%lld process(es) besides the init still running when the container was stopped "
             "(e.g. %s)",
             (long long)r->procs_at_kill - 1, r->proc_example ? r->proc_example : "?");
  }
  const char *sig;
  if (r->has_exit && crash_signal(r->exit_status, &sig) && n < max) {
    f[n].flag = "crash";
    snprintf(f[n++].reason, sizeof(f->reason), "the command ended by %s (exit status %ld)", sig,
             r->exit_status);
  }
  if (((r->has_oom && r->oom) || (r->has_pids && r->pids)) && n < max) {
    f[n].flag = "limit-hit";
    snprintf(f[n++].reason, sizeof(f->reason), "%llu OOM kill(s), %llu pids-limit hit(s)",
             (unsigned long long)r->oom, (unsigned long long)r->pids);
  }
  if (r->files_elsewhere && n < max) {
    f[n].flag = "writes-outside-outputs";
    snprintf(f[n++].reason, sizeof(f->reason),
             "%llu change(s) in writable places that are neither outputs nor scratch space: %s%s%s",
             (unsigned long long)r->files_elsewhere,
             r->elsewhere_places ? r->elsewhere_places : "?",
             r->elsewhere_example ? "; e.g. " : "",
             r->elsewhere_example ? r->elsewhere_example : "");
  }
  if (r->has_activity && !r->complete && n < max) {
    f[n].flag = "incomplete-record";
    snprintf(f[n++].reason, sizeof(f->reason), "%s",
             r->incomplete_reason ? r->incomplete_reason : "the record is incomplete");
  }
  return n;
}

/* ---- Output ------------------------------------------------------------------------------- */

static double duration(const struct run *r)
{
  double from = r->started >= 0 ? r->started : r->first;
  double to = r->stopped >= 0 ? r->stopped : r->last;
  return from >= 0 && to >= from ? to - from : 0;
}

static void print_text(const struct run *r, const struct flag *f, size_t nf)
{
  printf("%s  profile %s  created %s  duration %.1fs  exit %s", r->id,
         r->profile ? r->profile : "?", r->created ? r->created : "?", duration(r),
         r->has_exit ? "" : "unknown");
  if (r->has_exit)
    printf("%ld", r->exit_status);
  printf("\n");
  if (r->has_activity) {
    printf("  denied system calls: %llu", (unsigned long long)r->denied);
    for (size_t i = 0; i < r->n_sys; i++)
      printf("%s%s %llu", i ? ", " : " (", r->sys[i].name, (unsigned long long)r->sys[i].n);
    printf("%s\n", r->n_sys ? ")" : "");
    if (r->programs >= 0)
      printf("  programs executed: %lld\n", (long long)r->programs);
    if (r->files_added >= 0)
      printf("  files changed: %s%lld added, %lld modified, %lld deleted (%llu outside the "
             "outputs and scratch space)\n",
             r->files_lower_bound ? "at least " : "", (long long)r->files_added,
             (long long)r->files_modified, (long long)r->files_deleted,
             (unsigned long long)r->files_elsewhere);
    printf("  limits hit: %llu OOM kill(s), %llu pids-limit hit(s)\n",
           (unsigned long long)r->oom, (unsigned long long)r->pids);
  } else {
    printf("  no activity record\n");
  }
  if (r->egress_requests)
    printf("  hosts contacted: %llu request(s), %llu refused\n",
           (unsigned long long)r->egress_requests, (unsigned long long)r->egress_refused);
  for (size_t i = 0; i < nf; i++)
    printf("  FLAG %s: %s\n", f[i].flag, f[i].reason);
}

static void put_run(sr_json_gen_t g, const struct run *r, const struct flag *f, size_t nf)
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

static void runs_free(struct runs *rs)
{
  for (size_t i = 0; i < rs->n; i++) {
    struct run *r = &rs->v[i];
    free(r->id);
    free(r->profile);
    free(r->bundle);
    free(r->created);
    free(r->incomplete_reason);
    free(r->proc_example);
    free(r->elsewhere_places);
    free(r->elsewhere_example);
    for (size_t k = 0; k < r->n_hosts; k++)
      free(r->refused_hosts[k]);
    for (size_t k = 0; k < r->n_sys; k++) {
      free(r->sys[k].name);
      free(r->sys[k].exe);
    }
  }
  free(rs->v);
}

static bool wanted(const struct run *r, char **ids, int n_ids, double since)
{
  if (since >= 0 && r->last < since)
    return false;
  if (n_ids == 0)
    return true;
  for (int i = 0; i < n_ids; i++)
    if (strcmp(ids[i], r->id) == 0)
      return true;
  return false;
}

int sr_cmd_review(const struct sr_global *g, int argc, char **argv)
{
  static const struct option longopts[] = {{"since", required_argument, NULL, 's'},
                                           {"json", no_argument, NULL, 'j'},
                                           {"help", no_argument, NULL, 'h'},
                                           {NULL, 0, NULL, 0}};
  double since = -1;
  bool json = false;
  sr_opts_begin(argc, argv, longopts, false);
  int c;
  while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
    switch (c) {
    case 's':
      if (parse_since(optarg, &since) < 0)
        return sr_cli_usage_error("review", USAGE,
                                  "--since: \"%s\" is neither RFC 3339 nor relative (-1h, "
                                  "-30m, -2d, -45s)",
                                  optarg);
      break;
    case 'j':
      json = true;
      break;
    case 'h':
      printf("Usage: seerun review %s\n", USAGE);
      return 0;
    default:
      return sr_cli_unknown_option("review", USAGE, argv);
    }
  }
  if (sr_cli_setup(g, 0, false) < 0)
    return 1;
  sr_error_t err = NULL;
  _cleanup_policy_ctx_ struct sr_policy_ctx pc = {0};
  if (sr_policy_run_load(&g->run, &pc, &err) < 0)
    return sr_cli_fail(&err);
  struct runs rs = {0};
  const char *path = pc.audit.path;
  _cleanup_fclose_ FILE *f = path ? fopen(path, "re") : NULL;
  if (path && f == NULL && errno != ENOENT) {
    sr_error_sys(&err, "review: open the audit log %s", path);
    return sr_cli_fail(&err);
  }
  _cleanup_free_ char *line = NULL;
  size_t cap = 0;
  ssize_t len;
  while (f && (len = getline(&line, &cap, f)) > 0) {
    if (len > MAX_LINE)
      continue;
    yajl_val v = NULL;
    sr_error_t e = NULL;
    if (sr_json_parse(line, (size_t)len, &v, &e) < 0) {
      sr_error_free(&e);
      continue; /* a torn or foreign line: skipped */
    }
    if (YAJL_IS_OBJECT(v))
      add_line(&rs, v);
    yajl_tree_free(v);
  }
  _cleanup_gen_ sr_json_gen_t gen = NULL;
  if (json) {
    if (sr_json_gen_new(&gen, true, &err) < 0) {
      runs_free(&rs);
      return sr_cli_fail(&err);
    }
    sr_json_map_open(gen);
    sr_json_put_key(gen, "runs");
    sr_json_array_open(gen);
  }
  size_t flagged = 0, shown = 0;
  for (size_t i = 0; i < rs.n; i++) {
    const struct run *r = &rs.v[i];
    if (!wanted(r, argv + optind, argc - optind, since))
      continue;
    struct flag fl[8];
    size_t nf = flags_of(r, fl, 8);
    shown++;
    flagged += nf ? 1 : 0;
    if (json)
      put_run(gen, r, fl, nf);
    else
      print_text(r, fl, nf);
  }
  runs_free(&rs);
  if (json) {
    sr_json_array_close(gen);
    sr_json_put_kv_u64(gen, "runsShown", shown);
    sr_json_put_kv_u64(gen, "runsFlagged", flagged);
    sr_json_map_close(gen);
    const unsigned char *buf;
    size_t n;
    if (sr_json_gen_buf(gen, &buf, &n, &err) < 0)
      return sr_cli_fail(&err);
    fwrite(buf, 1, n, stdout);
    printf("\n");
  } else {
    printf("%zu run(s), %zu flagged\n", shown, flagged);
  }
  return 0;
}
