/* The flags of a run that deserve a look (docs/audit.md, "seerun review"), in the table's
 * order, each with its reason. */
#ifndef SEERUN_REVIEW_FLAGS_H
#define SEERUN_REVIEW_FLAGS_H

#include <stddef.h>

#include "review_log.h"

#define SR_REVIEW_FLAGS_MAX 8 /* more than there are flags */

struct sr_review_flag {
  const char *flag; /* "privileged-syscall", "denied-egress", ... */
  char reason[512];
};

/* R's flags into F (MAX at the most); how many. */
size_t sr_review_flags_of(const struct sr_review_log_run *r, struct sr_review_flag *f, size_t max);

#endif
