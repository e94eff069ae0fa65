/* `seerun review`'s analysis (runtime/review): the audit log's lines grouped per run, each flag
 * of docs/audit.md's table (when it is raised and what its reason says), a quiet run that is
 * flagged nothing, --since, and the report as text and JSON.  No root, no audit log on disk. */
#include "build.h"

#include "cleanup.h"
#include "json.h"
#include "review.h"
#include "review_flags.h"
#include "review_log.h"
#include "review_time.h"

#include "unit.h"

#define CREATE(id)                                                                                 \
  "{\"time\":\"2026-12-01T10:00:00Z\",\"event\":\"create\",\"id\":\"" id                           \
  "\",\"profile\":\"default\",\"bundle\":\"/b\"}"
#define START(id) "{\"time\":\"2026-12-01T10:00:01Z\",\"event\":\"start\",\"id\":\"" id "\"}"
#define EXIT(id, status)                                                                           \
  "{\"time\":\"2026-12-01T10:00:03.5Z\",\"event\":\"exit\",\"id\":\"" id "\",\"status\":" #status  \
  "}"
#define DELETE(id) "{\"time\":\"2026-12-01T10:00:04Z\",\"event\":\"delete\",\"id\":\"" id "\"}"
/* An activity event whose record is REC (the members inside "record": {...}). */
#define ACTIVITY(id, complete, rec)                                                                \
  "{\"time\":\"2026-12-01T10:00:04Z\",\"event\":\"activity\",\"id\":\"" id                         \
  "\",\"complete\":" complete ",\"reason\":\"the supervisor was killed\",\"record\":{" rec "}}"
#define QUIET_RECORD                                                                               \
  "\"stoppedAt\":\"2026-12-01T10:00:03Z\",\"seccomp\":{\"denied\":0,\"syscalls\":[]},"             \
  "\"programs\":{\"count\":1},\"resources\":{\"oomKills\":0,\"pidsLimitHits\":0},"                 \
  "\"processesAtStop\":{\"count\":0,\"processes\":[]}"

static void add_lines(struct sr_review_log *log, const char *const *lines)
{
  for (size_t i = 0; lines[i]; i++)
    sr_review_log_add_line(log, lines[i], strlen(lines[i]));
}

/* LINES read into LOG, which must then hold RUNS runs. */
static bool read_runs(struct sr_review_log *log, const char *const *lines, size_t runs)
{
  add_lines(log, lines);
  CHECK_UINT_EQ(log->n, runs);
  return log->n == runs;
}

/* One case: the lines of one run, the flags it must raise (in the table's order) and a piece
 * of each one's reason. */
struct flag_case {
  const char *name;
  const char *lines[8];
  const char *flags[4];
  const char *reasons[4];
};

static const struct flag_case flag_cases[] = {
    {"quiet run",
     {CREATE("q"), START("q"), EXIT("q", 0), DELETE("q"), ACTIVITY("q", "true", QUIET_RECORD)},
     {NULL},
     {NULL}},
    {"privileged-syscall",
     {CREATE("p"), START("p"),
      ACTIVITY("p", "true",
               "\"seccomp\":{\"denied\":4,\"syscalls\":[{\"syscall\":\"mount\",\"count\":3},"
               "{\"syscall\":\"chmod\",\"count\":1}],\"byExecutable\":[{\"syscall\":\"mount\","
               "\"executable\":\"/usr/bin/python3\",\"count\":3}]}")},
     {"privileged-syscall"},
     {"tried, and was denied: mount x3 (/usr/bin/python3)"}},
    {"denied-egress, refused hosts named once, repeated counted",
     {CREATE("e"),
      "{\"time\":\"2026-12-01T10:00:01Z\",\"event\":\"egress\",\"id\":\"e\",\"host\":\"a.example\","
      "\"allowed\":true}",
      "{\"time\":\"2026-12-01T10:00:02Z\",\"event\":\"egress\",\"id\":\"e\",\"host\":\"evil."
      "example\","
      "\"allowed\":false}",
      "{\"time\":\"2026-12-01T10:00:02Z\",\"event\":\"egress\",\"id\":\"e\",\"host\":\"evil."
      "example\","
      "\"allowed\":false}",
      "{\"time\":\"2026-12-01T10:00:03Z\",\"event\":\"egress.repeated\",\"id\":\"e\",\"repeated\":"
      "5}"},
     {"denied-egress"},
     {"7 request(s) to hosts the profile denies: evil.example"}},
    {"processes-left at stop",
     {CREATE("l"),
      ACTIVITY("l", "true",
               "\"processesAtStop\":{\"count\":2,\"processes\":[{\"cmdline\":\"sleep 1\"},"
               "{\"cmdline\":\"daemon --hide\"}]}")},
     {"processes-left"},
     {"2 process(es) still running when the container's init had gone (e.g. daemon --hide)"}},
    {"processes-left at kill (the init is not counted)",
     {CREATE("k"),
      ACTIVITY(
          "k", "true",
          "\"processesAtStop\":{\"count\":0,\"processes\":[]},\"processesAtKill\":{\"count\":3,"
          "\"processes\":[{\"cmdline\":\"init\"},{\"cmdline\":\"sleep 300\"}]}")},
     {"processes-left"},
     {"2 process(es) besides the init still running when the container was stopped (e.g. sleep "
      "300)"}},
    {"only the init at kill is no flag",
     {CREATE("i"),
      ACTIVITY("i", "true",
               "\"processesAtKill\":{\"count\":1,\"processes\":[{\"cmdline\":\"init\"}]}")},
     {NULL},
     {NULL}},
    {"crash",
     {CREATE("c"), START("c"), EXIT("c", 139)},
     {"crash"},
     {"the command ended by SIGSEGV (exit status 139)"}},
    {"an exit by SIGKILL is no crash", {CREATE("n"), EXIT("n", 137)}, {NULL}, {NULL}},
    {"limit-hit",
     {CREATE("m"), ACTIVITY("m", "true", "\"resources\":{\"oomKills\":1,\"pidsLimitHits\":4}")},
     {"limit-hit"},
     {"1 OOM kill(s), 4 pids-limit hit(s)"}},
    {"writes-outside-outputs",
     {CREATE("w"),
      ACTIVITY("w", "true",
               "\"files\":{\"walked\":true,\"added\":2,\"modified\":1,\"deleted\":0,\"places\":["
               "{\"path\":\"/tmp\",\"role\":\"scratch\",\"added\":1,\"modified\":0,\"deleted\":0},"
               "{\"path\":\"/data\",\"role\":\"other\",\"added\":1,\"modified\":1,\"deleted\":0}],"
               "\"changes\":[{\"change\":\"added\",\"path\":\"/tmp/x\"},"
               "{\"change\":\"modified\",\"path\":\"/data/config\"}]}")},
     {"writes-outside-outputs"},
     {"2 change(s) in writable places that are neither outputs nor scratch space: /data (2); "
      "e.g. /data/config"}},
    {"changes in scratch space only are no flag",
     {CREATE("s"),
      ACTIVITY(
          "s", "true",
          "\"files\":{\"walked\":true,\"added\":1,\"modified\":0,\"deleted\":0,\"places\":["
          "{\"path\":\"/tmp\",\"role\":\"scratch\",\"added\":1,\"modified\":0,\"deleted\":0}]}")},
     {NULL},
     {NULL}},
    {"incomplete-record",
     {CREATE("r"), ACTIVITY("r", "false", QUIET_RECORD)},
     {"incomplete-record"},
     {"the supervisor was killed"}},
    {"a privileged call after 64 others, through two ABIs, is flagged once by name",
     {CREATE("a"),
      ACTIVITY("a", "true",
               "\"seccomp\":{\"denied\":67,\"syscalls\":["
               "{\"syscall\":\"s0\",\"count\":1},{\"syscall\":\"s1\",\"count\":1},"
               "{\"syscall\":\"s2\",\"count\":1},{\"syscall\":\"s3\",\"count\":1},"
               "{\"syscall\":\"s4\",\"count\":1},{\"syscall\":\"s5\",\"count\":1},"
               "{\"syscall\":\"s6\",\"count\":1},{\"syscall\":\"s7\",\"count\":1},"
               "{\"syscall\":\"s8\",\"count\":1},{\"syscall\":\"s9\",\"count\":1},"
               "{\"syscall\":\"s10\",\"count\":1},{\"syscall\":\"s11\",\"count\":1},"
               "{\"syscall\":\"s12\",\"count\":1},{\"syscall\":\"s13\",\"count\":1},"
               "{\"syscall\":\"s14\",\"count\":1},{\"syscall\":\"s15\",\"count\":1},"
               "{\"syscall\":\"s16\",\"count\":1},{\"syscall\":\"s17\",\"count\":1},"
               "{\"syscall\":\"s18\",\"count\":1},{\"syscall\":\"s19\",\"count\":1},"
               "{\"syscall\":\"s20\",\"count\":1},{\"syscall\":\"s21\",\"count\":1},"
               "{\"syscall\":\"s22\",\"count\":1},{\"syscall\":\"s23\",\"count\":1},"
               "{\"syscall\":\"s24\",\"count\":1},{\"syscall\":\"s25\",\"count\":1},"
               "{\"syscall\":\"s26\",\"count\":1},{\"syscall\":\"s27\",\"count\":1},"
               "{\"syscall\":\"s28\",\"count\":1},{\"syscall\":\"s29\",\"count\":1},"
               "{\"syscall\":\"s30\",\"count\":1},{\"syscall\":\"s31\",\"count\":1},"
               "{\"syscall\":\"s32\",\"count\":1},{\"syscall\":\"s33\",\"count\":1},"
               "{\"syscall\":\"s34\",\"count\":1},{\"syscall\":\"s35\",\"count\":1},"
               "{\"syscall\":\"s36\",\"count\":1},{\"syscall\":\"s37\",\"count\":1},"
               "{\"syscall\":\"s38\",\"count\":1},{\"syscall\":\"s39\",\"count\":1},"
               "{\"syscall\":\"s40\",\"count\":1},{\"syscall\":\"s41\",\"count\":1},"
               "{\"syscall\":\"s42\",\"count\":1},{\"syscall\":\"s43\",\"count\":1},"
               "{\"syscall\":\"s44\",\"count\":1},{\"syscall\":\"s45\",\"count\":1},"
               "{\"syscall\":\"s46\",\"count\":1},{\"syscall\":\"s47\",\"count\":1},"
               "{\"syscall\":\"s48\",\"count\":1},{\"syscall\":\"s49\",\"count\":1},"
               "{\"syscall\":\"s50\",\"count\":1},{\"syscall\":\"s51\",\"count\":1},"
               "{\"syscall\":\"s52\",\"count\":1},{\"syscall\":\"s53\",\"count\":1},"
               "{\"syscall\":\"s54\",\"count\":1},{\"syscall\":\"s55\",\"count\":1},"
               "{\"syscall\":\"s56\",\"count\":1},{\"syscall\":\"s57\",\"count\":1},"
               "{\"syscall\":\"s58\",\"count\":1},{\"syscall\":\"s59\",\"count\":1},"
               "{\"syscall\":\"s60\",\"count\":1},{\"syscall\":\"s61\",\"count\":1},"
               "{\"syscall\":\"s62\",\"count\":1},{\"syscall\":\"s63\",\"count\":1},"
               "{\"syscall\":\"mount\",\"arch\":\"x86_64\",\"count\":2},"
               "{\"syscall\":\"mount\",\"arch\":\"x86\",\"count\":1}]}")},
     {"privileged-syscall"},
     {"tried, and was denied: mount x3"}},
    {"no record in the log though the create said one would follow",
     {"{\"time\":\"2026-12-01T10:00:00Z\",\"event\":\"create\",\"id\":\"g\",\"activity\":"
      "\"true\"}",
      START("g")},
     {"incomplete-record"},
     {"no activity record in the log"}},
    {"none expected: no flag",
     {"{\"time\":\"2026-12-01T10:00:00Z\",\"event\":\"create\",\"id\":\"h\",\"activity\":"
      "\"false\"}",
      START("h"), EXIT("h", 0)},
     {NULL},
     {NULL}},
    {"several flags, in the table's order",
     {CREATE("x"), EXIT("x", 134),
      ACTIVITY("x", "false",
               "\"seccomp\":{\"denied\":1,\"syscalls\":[{\"syscall\":\"unshare\",\"count\":1}]},"
               "\"resources\":{\"oomKills\":0,\"pidsLimitHits\":1}")},
     {"privileged-syscall", "crash", "limit-hit", "incomplete-record"},
     {"unshare x1", "SIGABRT", "0 OOM kill(s), 1 pids-limit hit(s)", "the supervisor was killed"}},
};

static void each_flag_is_raised_when_docs_audit_md_says(void)
{
  for (size_t c = 0; c < sizeof(flag_cases) / sizeof(flag_cases[0]); c++) {
    const struct flag_case *fc = &flag_cases[c];
    unit_current = fc->name;
    _cleanup_review_log_ struct sr_review_log log = {0};
    if (!read_runs(&log, fc->lines, 1))
      continue;
    struct sr_review_flag f[SR_REVIEW_FLAGS_MAX];
    size_t nf = sr_review_flags_of(&log.v[0], f, SR_REVIEW_FLAGS_MAX);
    size_t want = 0;
    while (want < 4 && fc->flags[want])
      want++;
    CHECK_UINT_EQ(nf, want);
    for (size_t i = 0; i < nf && i < want; i++) {
      CHECK_STR_EQ(f[i].flag, fc->flags[i]);
      if (strstr(f[i].reason, fc->reasons[i]) == NULL)
        unit_fail(__FILE__, __LINE__, "reason \"%s\" does not contain \"%s\"", f[i].reason,
                  fc->reasons[i]);
    }
  }
}

static void a_reused_id_is_a_new_run_but_its_activity_stays_with_the_old(void)
{
  static const char *const lines[] = {
      CREATE("a"),
      DELETE("a"),
      ACTIVITY("a", "true", QUIET_RECORD),
      "{\"time\":\"2026-12-01T11:00:00Z\",\"event\":\"create\",\"id\":\"a\",\"profile\":\"other\"}",
      "not json at all",
      "{\"event\":\"create\",\"id\":\"a\"}", /* no time: skipped */
      "[1, 2]",
      "{\"time\":\"2026-12-01T11:00:00Z\",\"event\":\"create\",\"id\":\"\"}",
      NULL};
  _cleanup_review_log_ struct sr_review_log log = {0};
  if (!read_runs(&log, lines, 2))
    return;
  CHECK(log.v[0].has_activity);
  CHECK(!log.v[1].has_activity);
  CHECK_STR_EQ(log.v[0].profile, "default");
  CHECK_STR_EQ(log.v[1].profile, "other");
  CHECK_STR_EQ(log.v[1].created, "2026-12-01T11:00:00Z");
}

/* `run` and `sandbox` write no delete line: the id's next create starts its next run, and a
 * sandbox's lines go by their runId (its slot is used again). */
static void a_next_create_or_another_run_id_is_a_new_run(void)
{
#define SB(ev, run) "{\"time\":\"2026-12-01T10:00:00Z\",\"event\":\"" ev "\",\"id\":\"s\",\"runId\":\"" run "\"}"
  static const char *const lines[] = {
      CREATE("a"), START("a"), ACTIVITY("a", "true", QUIET_RECORD), CREATE("a"),
      SB("sandbox-start", "r1"), SB("create", "r1"), ACTIVITY("s", "true", QUIET_RECORD),
      SB("sandbox-start", "r2"), SB("create", "r2"), NULL};
#undef SB
  _cleanup_review_log_ struct sr_review_log log = {0};
  if (!read_runs(&log, lines, 4))
    return;
  CHECK(log.v[0].has_activity);
  CHECK(!log.v[1].has_activity);
  CHECK(log.v[2].has_activity);
  CHECK_STR_EQ(log.v[2].run_id, "r1");
  CHECK(!log.v[3].has_activity);
  CHECK_STR_EQ(log.v[3].run_id, "r2");
}

/* A run's later record replaces the earlier one, and a first line whose time does not parse
 * gives way to the next (LeakSanitizer sees what either left behind). */
static void a_later_record_and_a_later_time_replace_the_earlier(void)
{
  static const char *const lines[] = {
      "{\"time\":\"not a time\",\"event\":\"decision\",\"id\":\"a\"}", CREATE("a"),
      ACTIVITY("a", "true",
               "\"seccomp\":{\"denied\":1,\"syscalls\":[{\"syscall\":\"mount\",\"count\":1}],"
               "\"byExecutable\":[{\"syscall\":\"mount\",\"executable\":\"/bin/x\"}]}"),
      ACTIVITY("a", "true",
               "\"seccomp\":{\"denied\":2,\"syscalls\":[{\"syscall\":\"bpf\",\"count\":2}]}"),
      NULL};
  _cleanup_review_log_ struct sr_review_log log = {0};
  if (!read_runs(&log, lines, 1))
    return;
  CHECK_STR_EQ(log.v[0].created, "2026-12-01T10:00:00Z");
  CHECK_UINT_EQ(log.v[0].n_sys, 1);
  CHECK_STR_EQ(log.v[0].sys[0].name, "bpf");
  CHECK_UINT_EQ(log.v[0].denied, 2);
}

static void since_takes_rfc3339_or_a_time_relative_to_now(void)
{
  double t = 0;
  CHECK_INT_EQ(sr_review_time_since("2026-12-01T10:00:00Z", 0, &t), 0);
  CHECK_INT_EQ((long long)t, 1796119200LL);
  CHECK_INT_EQ(sr_review_time_since("2026-12-01T12:00:00+02:00", 0, &t), 0);
  CHECK_INT_EQ((long long)t, 1796119200LL);
  CHECK_INT_EQ(sr_review_time_since("2026-12-01T10:00:00.5Z", 0, &t), 0);
  CHECK(t == 1796119200.5);
  static const struct {
    const char *s;
    double ago;
  } rel[] = {{"-1h", 3600}, {"30m", 1800}, {"-2d", 172800}, {"-45s", 45}};
  for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
    CHECK_INT_EQ(sr_review_time_since(rel[i].s, 1e6, &t), 0);
    CHECK(t == 1e6 - rel[i].ago);
  }
  static const char *const bad[] = {"yesterday",
                                    "-1w",
                                    "",
                                    "-",
                                    "--1h",
                                    "2026-12-01T10:00:00",
                                    "2026-12-01T10:00:00+02",
                                    "2026-12-01T10:00:00+2:0",
                                    "2026-12-01T10:00:00Zjunk",
                                    "2026-12-01T10:00:00.9e999Z",
                                    "2026-12-01T10:00:00.Z"};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
    if (sr_review_time_since(bad[i], 1e6, &t) == 0)
      unit_fail(__FILE__, __LINE__, "--since \"%s\" was taken", bad[i]);
}

static void the_text_report_of_a_quiet_run(void)
{
  static const char *const lines[] = {
      CREATE("q"), START("q"), EXIT("q", 0), DELETE("q"), ACTIVITY("q", "true", QUIET_RECORD),
      NULL};
  _cleanup_review_log_ struct sr_review_log log = {0};
  add_lines(&log, lines);
  sr_error_t err = NULL;
  _cleanup_free_ char *out = NULL;
  struct sr_review_options o = {.since = -1};
  CHECK_OK(sr_review_render(&log, &o, &out, &err), err);
  CHECK_STR_EQ(out, "q  profile default  created 2026-12-01T10:00:00Z  duration 2.0s  exit 0\n"
                    "  denied system calls: 0\n"
                    "  programs executed: 1\n"
                    "  limits hit: 0 OOM kill(s), 0 pids-limit hit(s)\n"
                    "1 run(s), 0 flagged\n");
}

static void the_json_report_filters_by_id_and_since(void)
{
  static const char *const lines[] = {CREATE("a"), EXIT("a", 139), CREATE("b"), NULL};
  _cleanup_review_log_ struct sr_review_log log = {0};
  add_lines(&log, lines);
  char *ids[] = {"a"};
  struct sr_review_options o = {.ids = ids, .n_ids = 1, .since = -1, .json = true};
  sr_error_t err = NULL;
  _cleanup_free_ char *out = NULL;
  CHECK_OK(sr_review_render(&log, &o, &out, &err), err);
  _cleanup_yajl_ yajl_val v = NULL;
  CHECK_OK(sr_json_parse(out, strlen(out), &v, &err), err);
  yajl_val runs = v ? sr_json_field(v, "runs") : NULL;
  CHECK(runs && YAJL_IS_ARRAY(runs) && runs->u.array.len == 1);
  yajl_val shown = v ? sr_json_field(v, "runsShown") : NULL,
           flagged = v ? sr_json_field(v, "runsFlagged") : NULL;
  CHECK(shown && YAJL_GET_INTEGER(shown) == 1);
  CHECK(flagged && YAJL_GET_INTEGER(flagged) == 1);
  /* after every line: nothing shown */
  struct sr_review_options later = {.since = 1796119200.0 + 3600, .json = false};
  _cleanup_free_ char *none = NULL;
  CHECK_OK(sr_review_render(&log, &later, &none, &err), err);
  CHECK_STR_EQ(none, "0 run(s), 0 flagged\n");
}

static void a_log_that_does_not_exist_has_no_runs(void)
{
  sr_error_t err = NULL;
  _cleanup_free_ char *out = NULL;
  struct sr_review_options o = {.since = -1};
  CHECK_OK(sr_review_report("/nonexistent/seerun-audit.jsonl", &o, &out, &err), err);
  CHECK_STR_EQ(out, "0 run(s), 0 flagged\n");
  _cleanup_free_ char *none = NULL;
  CHECK(sr_review_report("/proc/self/mem/x", &o, &none, &err) < 0);
  CHECK_ERR_CONTAINS(err, "review: open the audit log /proc/self/mem/x");
  sr_error_free(&err);
}

int main(void)
{
  RUN(each_flag_is_raised_when_docs_audit_md_says);
  RUN(a_reused_id_is_a_new_run_but_its_activity_stays_with_the_old);
  RUN(a_later_record_and_a_later_time_replace_the_earlier);
  RUN(a_next_create_or_another_run_id_is_a_new_run);
  RUN(since_takes_rfc3339_or_a_time_relative_to_now);
  RUN(the_text_report_of_a_quiet_run);
  RUN(the_json_report_filters_by_id_and_since);
  RUN(a_log_that_does_not_exist_has_no_runs);
  return unit_report();
}
