/* The times `seerun review` reads: the audit log's RFC 3339 stamps and --since. */
#ifndef SEERUN_REVIEW_TIME_H
#define SEERUN_REVIEW_TIME_H

/* RFC 3339 ("2026-12-01T10:14:27.305Z", "...+02:00") to seconds since the epoch; -1: not one. */
double sr_review_time_parse(const char *s);

/* --since TIME: RFC 3339, or relative to NOW ("-1h", "-30m", "-2d", "-45s"; the sign is
 * optional).  -1: neither. */
int sr_review_time_since(const char *s, double now, double *out);

#endif
