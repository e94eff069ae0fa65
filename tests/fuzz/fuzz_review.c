/* libFuzzer target: `seerun review` over an audit log of arbitrary bytes (runtime/review): the
 * lines grouped per run, each run's flags, the report as text and as JSON.
 *
 * The audit log is written by seerun but also by whatever else can append to it (a torn line
 * after a crash, a foreign tool), so review must keep its contracts whatever it reads: every
 * run has an id, no run has more flags than there are, the JSON report parses and shows every
 * run, and the text report ends with its summary line.
 */
// Build: `make fuzz-review` (clang, ASan+UBSan); run: `make fuzz` (every target) or
//   ./fuzz-review -max_len=65536 scratch-dir tests/fuzz/corpus/review
#include "build.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "json.h"
#include "review.h"
#include "review_flags.h"
#include "review_log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  _cleanup_review_log_ struct sr_review_log log = {0};
  const char *p = (const char *)data, *end = p + size;
  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t len = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p);
    sr_review_log_add_line(&log, p, len);
    p += len;
  }
  for (size_t i = 0; i < log.n; i++) {
    if (log.v[i].id == NULL || log.v[i].id[0] == '\0')
      abort();
    struct sr_review_flag f[SR_REVIEW_FLAGS_MAX];
    size_t nf = sr_review_flags_of(&log.v[i], f, SR_REVIEW_FLAGS_MAX);
    if (nf > 7)
      abort();
    for (size_t k = 0; k < nf; k++)
      if (f[k].flag == NULL || memchr(f[k].reason, '\0', sizeof(f[k].reason)) == NULL)
        abort();
  }
  sr_error_t err = NULL;
  struct sr_review_options o = {.since = -1, .json = true};
  _cleanup_free_ char *json = NULL;
  if (sr_review_render(&log, &o, &json, &err) < 0) {
    sr_error_free(&err); /* only a generator's own failure (a string that is not UTF-8) */
  } else {
    _cleanup_yajl_ yajl_val v = NULL;
    if (sr_json_parse(json, strlen(json), &v, &err) < 0)
      abort();
    yajl_val shown = sr_json_field(v, "runsShown");
    if (shown == NULL || !YAJL_IS_INTEGER(shown) || (size_t)YAJL_GET_INTEGER(shown) != log.n)
      abort();
  }
  o.json = false;
  _cleanup_free_ char *text = NULL;
  if (sr_review_render(&log, &o, &text, &err) < 0)
    abort();
  size_t tl = strlen(text);
  if (tl == 0 || text[tl - 1] != '\n' || strstr(text, " flagged\n") == NULL)
    abort();
  return 0;
}
