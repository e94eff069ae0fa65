/* The audit log: one JSON line per policy decision and per lifecycle event (create, start,
 * exec, kill, pause, resume, update, delete, and the exit status where seerun is the parent).
 * Each line (or all the decision lines of one step, together) is a single O_APPEND write made
 * before the action it records; the file is opened for every write, so logrotate can move it away at any time.  If a line cannot be written the
 * action is refused: a security decision that leaves no trace is not taken (fail closed). */
#ifndef SEERUN_AUDIT_H
#define SEERUN_AUDIT_H

#include <stdbool.h>

#include "error.h"
#include "json.h"

struct sr_decisions;

struct sr_audit {
  const char *path; /* NULL: auditing is off (only with the permissive built-in setup) */
  const char *id;
  const char *bundle;
  const char *profile;
  const char *run_id; /* seerun sandbox: the run's unique id ("runId" on every line); NULL: none */
};


/* An event with optional extra string fields (NULL-terminated key, value pairs). */
int sr_audit_event(const struct sr_audit *a, const char *event, const char *const *fields,
                   sr_error_t *err);
/* An event with an integer field (exit status and the like). */
int sr_audit_event_int(const struct sr_audit *a, const char *event, const char *key, long value,
                       sr_error_t *err);
/* An event whose fields `put` writes into the line's open map (typed: numbers as numbers,
 * booleans as booleans, as the result document of a sandbox is). */
typedef void (*sr_audit_fields_fn)(sr_json_gen_t g, const void *data);
int sr_audit_event_with(const struct sr_audit *a, const char *event, sr_audit_fields_fn put,
                        const void *data, sr_error_t *err);
/* Every decision of the policy, one line each. */
int sr_audit_decisions(const struct sr_audit *a, const struct sr_decisions *d, sr_error_t *err);
/* One refusal that is not the policy's (config.json refused by the parser), as a decision
 * line: kind "refused", applied "". */
int sr_audit_refusal(const struct sr_audit *a, const char *field, const char *asked,
                     const char *reason, sr_error_t *err);

#endif
