/* Files changed (runtime/supervisor/activity_files.c): a place's baseline and walk, an
 * overlay's upper layer against its lower one, and names rendered as printable ASCII. */
#include "build.h"

#include "activity_files.h"
#include "cleanup.h"
#include "json.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "unit.h"

static void put(const char *dir, const char *name, const char *text)
{
  char p[512];
  snprintf(p, sizeof(p), "%s/%s", dir, name);
  FILE *f = fopen(p, "w");
  CHECK(f != NULL);
  if (f) {
    fputs(text, f);
    fclose(f);
  }
}

/* The record's "files" member, parsed. */
static yajl_val record(struct sr_act_files *f)
{
  _cleanup_gen_ sr_json_gen_t g = NULL;
  sr_error_t err = NULL;
  const unsigned char *buf;
  size_t len;
  yajl_val v = NULL;
  CHECK_OK(sr_json_gen_new(&g, false, &err), err);
  sr_activity_files_to_json(f, g, false);
  CHECK_OK(sr_json_gen_buf(g, &buf, &len, &err), err);
  CHECK_OK(sr_json_parse((const char *)buf, len, &v, &err), err);
  return v;
}

static const char *change_of(yajl_val files, const char *path)
{
  yajl_val ch = sr_json_field(files, "changes");
  for (size_t i = 0; ch && i < ch->u.array.len; i++) {
    yajl_val p = sr_json_field(ch->u.array.values[i], "path");
    const char *s = p ? YAJL_GET_STRING(p) : NULL;
    if (s && strcmp(s, path) == 0)
      return YAJL_GET_STRING(sr_json_field(ch->u.array.values[i], "change"));
  }
  return NULL;
}

static long long num(yajl_val obj, const char *key)
{
  yajl_val v = sr_json_field(obj, key);
  return v && YAJL_IS_INTEGER(v) ? YAJL_GET_INTEGER(v) : -1;
}

static void a_bind_place_added_modified_deleted(void)
{
  char dir[] = "/tmp/sr-unit-files-XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  put(dir, "keep", "k");
  put(dir, "change", "before");
  put(dir, "gone", "12345");
  struct sr_act_places ps = {.mntns_fd = -1};
  sr_error_t err = NULL;
  CHECK_OK(sr_activity_places_add(&ps, "/data", "bind", "other",
                                  open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), -1, &err),
           err);
  struct sr_act_files *f = sr_activity_files_new(&ps);
  CHECK(f != NULL);
  sr_activity_files_baseline(f);
  put(dir, "change", "after, longer");
  put(dir, "new", "abc");
  char p[512];
  snprintf(p, sizeof(p), "%s/gone", dir);
  unlink(p);
  snprintf(p, sizeof(p), "%s/link", dir);
  CHECK(symlink("/etc", p) == 0);
  sr_activity_files_walk(f);
  yajl_val v = record(f);
  CHECK(v != NULL);
  CHECK_STR_EQ(change_of(v, "/data/new"), "added");
  CHECK_STR_EQ(change_of(v, "/data/link"), "added");
  CHECK_STR_EQ(change_of(v, "/data/change"), "modified");
  CHECK_STR_EQ(change_of(v, "/data/gone"), "deleted");
  CHECK(change_of(v, "/data/keep") == NULL);
  CHECK(num(v, "added") == 2 && num(v, "modified") == 1 && num(v, "deleted") == 1);
  CHECK(num(v, "bytesAdded") == 3 && num(v, "bytesModified") == 13 && num(v, "bytesDeleted") == 5);
  yajl_tree_free(v);
  sr_activity_files_free(f);
  const char *names[] = {"keep", "change", "new", "link"};
  for (size_t i = 0; i < 4; i++) {
    snprintf(p, sizeof(p), "%s/%s", dir, names[i]);
    unlink(p);
  }
  rmdir(dir);
}

static void an_upper_layer_against_its_lower_one(void)
{
  char lower[] = "/tmp/sr-unit-lower-XXXXXX", upper[] = "/tmp/sr-unit-upper-XXXXXX";
  CHECK(mkdtemp(lower) != NULL && mkdtemp(upper) != NULL);
  put(lower, "edited", "old");
  put(lower, "removed", "x");
  char p[512];
  snprintf(p, sizeof(p), "%s/sub", lower);
  mkdir(p, 0755);
  snprintf(p, sizeof(p), "%s/sub", upper);
  mkdir(p, 0755);
  put(upper, "edited", "new text");
  put(upper, "sub/fresh", "12");
  snprintf(p, sizeof(p), "%s/removed", upper);
  bool whiteout = mknod(p, S_IFCHR | 0000, makedev(0, 0)) == 0; /* needs CAP_MKNOD */
  struct sr_act_places ps = {.mntns_fd = -1};
  sr_error_t err = NULL;
  CHECK_OK(sr_activity_places_add(&ps, "/work", "upper", "output",
                                  open(upper, O_RDONLY | O_DIRECTORY | O_CLOEXEC),
                                  open(lower, O_PATH | O_DIRECTORY | O_CLOEXEC), &err),
           err);
  struct sr_act_files *f = sr_activity_files_new(&ps);
  CHECK(f != NULL);
  sr_activity_files_baseline(f);
  sr_activity_files_walk(f);
  yajl_val v = record(f);
  CHECK_STR_EQ(change_of(v, "/work/edited"), "modified");
  CHECK_STR_EQ(change_of(v, "/work/sub/fresh"), "added");
  CHECK(change_of(v, "/work/sub") == NULL); /* a directory copied up for what is below */
  if (whiteout)
    CHECK_STR_EQ(change_of(v, "/work/removed"), "deleted");
  yajl_tree_free(v);
  sr_activity_files_free(f);
  const char *names[] = {"edited", "removed", "sub/fresh", "sub"};
  for (size_t i = 0; i < 4; i++) {
    snprintf(p, sizeof(p), "%s/%s", upper, names[i]);
    remove(p);
    snprintf(p, sizeof(p), "%s/%s", lower, names[i]);
    remove(p);
  }
  rmdir(upper);
  rmdir(lower);
}

static void names_are_printable_ascii(void)
{
  char out[64];
  sr_activity_files_render_name("a\nb\xff\\c\"", 7, out, sizeof(out));
  CHECK_STR_EQ(out, "a\\x0ab\\xff\\x5cc\"");
  char longname[100];
  memset(longname, 'x', sizeof(longname));
  sr_activity_files_render_name(longname, sizeof(longname), out, 16);
  CHECK(strlen(out) < 16 && strcmp(out + strlen(out) - 3, "...") == 0);
}

int main(void)
{
  RUN(a_bind_place_added_modified_deleted);
  RUN(an_upper_layer_against_its_lower_one);
  RUN(names_are_printable_ascii);
  return unit_report();
}
