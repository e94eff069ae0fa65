/* libFuzzer target: the operator's policy file (contrib/policy/README.md) from arbitrary bytes.
 *
 * The policy is trusted input, but it is hand-edited, and a parser that crashes, leaks or hits
 * undefined behaviour on a typo is a runtime that refuses every container.  Whatever the input,
 * sr_policy_parse must keep its contract: success hands out a policy and no error; failure
 * hands out an error whose text names the file, and no policy.  A policy that parses must
 * also render (`seerun policy show`) into a document that parses again to the same rendering,
 * and every profile it names must be found by name and selectable.
 */
// Build: `make fuzz-policy` (clang, ASan+UBSan); run: `make fuzz` (both targets) or
//   ./fuzz-policy -max_len=65536 scratch-dir tests/fuzz/corpus/policy
#include "build.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "policy.h"

static void check_refusal(sr_error_t err, const char *what)
{
  char *text = sr_error_text(err);
  /* An error that does not say which file it is about is a bug too. */
  if (err == NULL || text == NULL || strncmp(text, what, strlen(what)) != 0)
    abort();
  free(text);
}

/* The policy as `policy show` prints it; NULL is a bug. */
static char *render(const struct sr_policy *p, size_t *len)
{
  sr_json_gen_t g = NULL;
  sr_error_t err = NULL;
  if (sr_json_gen_new(&g, false, &err) < 0)
    abort();
  sr_policy_to_json(p, g);
  const unsigned char *buf;
  size_t l;
  if (sr_json_gen_buf(g, &buf, &l, &err) < 0)
    abort();
  char *out = malloc(l + 1);
  if (out == NULL)
    abort();
  memcpy(out, buf, l);
  out[l] = '\0';
  *len = l;
  sr_json_gen_freep(&g);
  return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  struct sr_policy *p = NULL;
  sr_error_t err = NULL;
  if (sr_policy_parse((const char *)data, size, "policy.json", &p, &err) < 0) {
    if (p != NULL)
      abort();
    check_refusal(err, "policy.json");
    sr_error_free(&err);
    return 0;
  }
  if (p == NULL || err != NULL)
    abort();
  for (size_t i = 0; i < p->n_profiles; i++) {
    const struct sr_policy_profile *found = sr_policy_profile(p, p->profiles[i].name);
    const struct sr_policy_profile *sel = NULL;
    if (found == NULL || strcmp(found->name, p->profiles[i].name) != 0)
      abort();
    /* Selecting a profile by --profile alone may be refused by a binding, never crash. */
    if (sr_policy_select(p, p->profiles[i].name, NULL, NULL, &sel, &err) == 0) {
      if (sel == NULL || err != NULL)
        abort();
    } else
      sr_error_free(&err);
  }
  const struct sr_policy_profile *def = NULL;
  if (sr_policy_select(p, NULL, "seerun", "/run/seerun", &def, &err) < 0)
    sr_error_free(&err);

  /* What `policy show` prints is itself a valid policy, and a fixed point. */
  size_t len1, len2;
  char *once = render(p, &len1);
  struct sr_policy *again = NULL;
  if (sr_policy_parse(once, len1, "rendered policy", &again, &err) < 0) {
    char *text = sr_error_text(err);
    (void)text; /* visible in a debugger when this aborts */
    abort();
  }
  char *twice = render(again, &len2);
  if (len1 != len2 || memcmp(once, twice, len1) != 0)
    abort();
  free(once);
  free(twice);
  sr_policy_free(again);
  sr_policy_free(p);
  return 0;
}
