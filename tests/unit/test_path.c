/* The one lexical path cleaner (oci/common/path.h): one meaning for the policy's judgement of
 * config.json, the cgroup path and the runtime's own paths.  A spelling that cleaned to
 * another path in one place than in another would let a config name one object to the policy
 * and another to the runtime.
 *
 * Runs under ASan/LSan/UBSan.
 */
#include "build.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "path.h"
#include "unit.h"

static void clean(const char *in, const char *want, size_t want_dotdots)
{
  char *out = malloc(strlen(in) + 2);
  CHECK(out != NULL);
  if (out == NULL)
    return;
  CHECK(sr_path_clean(in, out) == want_dotdots);
  CHECK_STR_EQ(out, want);
  /* In place, for an absolute path: the same answer. */
  if (in[0] == '/') {
    char *copy = strdup(in);
    CHECK(copy != NULL);
    if (copy) {
      sr_path_clean(copy, copy);
      CHECK_STR_EQ(copy, want);
    }
    free(copy);
  }
  /* What it returns is clean, and only what is clean is left as it is. */
  CHECK(sr_path_is_clean(out));
  CHECK(sr_path_is_clean(in) == (strcmp(in, out) == 0));
  free(out);
}

static void spellings_of_one_path_clean_alike(void)
{
  clean("/a/b", "/a/b", 0);
  clean("//a///b//", "/a/b", 0);
  clean("/a/./b/.", "/a/b", 0);
  clean("/a/x/../b", "/a/b", 1);
  clean("/a/x/y/../../b", "/a/b", 2);
}

static void dotdot_never_climbs_above_the_root(void)
{
  clean("/..", "/", 1);
  clean("/../../etc/shadow", "/etc/shadow", 2);
  clean("/a/../..", "/", 2);
  clean("/proc/../../proc/self", "/proc/self", 2);
  /* A component that only begins with dots is a name. */
  clean("/...", "/...", 0);
  clean("/..a/.b", "/..a/.b", 0);
}

static void a_relative_path_is_taken_from_the_root(void)
{
  clean("a/b", "/a/b", 0);
  clean("", "/", 0);
  clean(".", "/", 0);
  clean("../x", "/x", 1);
}

static void is_clean_refuses_every_other_spelling(void)
{
  CHECK(sr_path_is_clean("/"));
  CHECK(sr_path_is_clean("/a/b"));
  CHECK(!sr_path_is_clean("a/b"));
  CHECK(!sr_path_is_clean(""));
  CHECK(!sr_path_is_clean("/a/"));
  CHECK(!sr_path_is_clean("//a"));
  CHECK(!sr_path_is_clean("/a/./b"));
  CHECK(!sr_path_is_clean("/a/../b"));
  CHECK(!sr_path_is_clean("/.."));
}

static void a_join_that_does_not_fit_fails(void)
{
  char buf[16];
  sr_error_t err = NULL;
  CHECK(sr_path_join(buf, sizeof(buf), "/a", "b", &err) == 0);
  CHECK_STR_EQ(buf, "/a/b");
  CHECK(sr_path_join(buf, sizeof(buf), "/a/", "b", &err) == 0);
  CHECK_STR_EQ(buf, "/a/b");
  CHECK(sr_path_join(buf, sizeof(buf), "/sys/fs/cg", "/x", &err) == 0);
  CHECK_STR_EQ(buf, "/sys/fs/cg/x");
  /* 15 bytes fit, 16 do not: no prefix of the path is left to be used as if it were it. */
  CHECK(sr_path_join(buf, sizeof(buf), "/bundle", "rootfs/", &err) == 0);
  CHECK(sr_path_join(buf, sizeof(buf), "/bundle", "rootfs/x", &err) < 0);
  CHECK(err != NULL && err->status == ENAMETOOLONG);
  CHECK_STR_EQ(buf, "");
  sr_error_free(&err);
}

int main(void)
{
  RUN(a_join_that_does_not_fit_fails);
  RUN(spellings_of_one_path_clean_alike);
  RUN(dotdot_never_climbs_above_the_root);
  RUN(a_relative_path_is_taken_from_the_root);
  RUN(is_clean_refuses_every_other_spelling);
  return unit_report();
}
