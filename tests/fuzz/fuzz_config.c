/* libFuzzer target: config.json (and the exec --process document) from untrusted bytes.
 *
 * Whatever the input, the parser must not crash, leak or hit undefined behaviour, and it must
 * keep its contract: success hands out a config and no error; failure hands out an error whose
 * text names the file, and nothing else.
 */
// Build (from the top of the tree, after ./configure so that build/build.h exists):
//   clang -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE -include build/build.h \
//     -Ibuild -Ioci tests/fuzz/fuzz_config.c oci/*.c \
//     $(pkg-config --cflags --libs yajl libseccomp) -o fuzz_config
//   ./fuzz_config -max_len=65536 tests/fuzz/corpus/config/
#include "build.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

static void check_refusal(sr_error_t err, const char *what)
{
  char *text = sr_error_text(err);
  /* An error that does not say which file it is about is a bug too. */
  if (err == NULL || text == NULL || strncmp(text, what, strlen(what)) != 0)
    abort();
  free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  struct sr_config *c = NULL;
  sr_error_t err = NULL;
  if (sr_config_parse((const char *)data, size, "config.json", &c, &err) == 0) {
    if (c == NULL || err != NULL)
      abort();
    for (size_t i = 0; i < c->n_annotations; i++)
      if (sr_config_annotation(c, c->annotation_keys[i]) == NULL)
        abort();
    sr_config_free(c);
  } else {
    if (c != NULL)
      abort();
    check_refusal(err, "config.json: ");
    sr_error_free(&err);
  }

  struct sr_arena a = {0};
  struct sr_process *p = NULL;
  if (sr_process_parse((const char *)data, size, "process.json", &a, &p, &err) == 0) {
    if (p == NULL || err != NULL || p->n_args == 0 || p->args[p->n_args] != NULL)
      abort();
  } else {
    check_refusal(err, "process.json: ");
    sr_error_free(&err);
  }
  sr_arena_release(&a);
  return 0;
}
