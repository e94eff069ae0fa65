/* `seerun review`: the audit log's runs, with the flags that deserve a look, as a report. */
#ifndef SEERUN_REVIEW_H
#define SEERUN_REVIEW_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"
#include "review_log.h"

struct sr_review_options {
  char *const *ids; /* the runs of these ids only; none: every run */
  size_t n_ids;
  double since; /* runs with a line at or after it; -1: every run */
  bool json;    /* one document (docs/audit.md) instead of the text summary */
};

/* LOG's runs that O wants, rendered into *OUT (malloc'd, NUL-terminated, ends in a newline). */
int sr_review_render(const struct sr_review_log *log, const struct sr_review_options *o, char **out,
                     sr_error_t *err);

/* The audit log at PATH (NULL, or a file that does not exist: no runs) read and rendered. */
int sr_review_report(const char *path, const struct sr_review_options *o, char **out,
                     sr_error_t *err);

#endif
