/* The change an overlay upper layer holds against its lower (runtime/linux/overlay_diff.c), on
 * trees made by hand as overlayfs makes them: whiteouts (char 0/0) and trusted.overlay.opaque
 * need root, so without it the test says so and passes. */
#include "build.h"

#include "overlay_diff.h"
#include "unit.h"

#include <fcntl.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

static char base[64];

/* cmd with every %s the test directory. */
__attribute__((format(printf, 1, 0))) static void sh(const char *fmt, const char *arg)
{
  char cmd[1024];
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
  snprintf(cmd, sizeof(cmd), fmt, arg, arg, arg, arg);
#pragma GCC diagnostic pop
  if (system(cmd) != 0)
    unit_fail(__FILE__, __LINE__, "`%s` failed", cmd);
}

static void file(const char *path, const char *text)
{
  char p[512];
  snprintf(p, sizeof(p), "%s/%s", base, path);
  FILE *f = fopen(p, "w");
  if (f == NULL) {
    unit_fail(__FILE__, __LINE__, "create %s", p);
    return;
  }
  fputs(text, f);
  fclose(f);
}

static void dir(const char *path)
{
  char p[512];
  snprintf(p, sizeof(p), "%s/%s", base, path);
  mkdir(p, 0755);
}

static void whiteout(const char *path)
{
  char p[512];
  snprintf(p, sizeof(p), "%s/%s", base, path);
  if (mknod(p, S_IFCHR | 0600, makedev(0, 0)) < 0)
    unit_fail(__FILE__, __LINE__, "mknod %s", p);
}

static void xattr(const char *path, const char *name)
{
  char p[512];
  snprintf(p, sizeof(p), "%s/%s", base, path);
  if (setxattr(p, name, "y", 1, 0) < 0)
    unit_fail(__FILE__, __LINE__, "setxattr %s %s", p, name);
}

static const struct sr_odiff_entry *find(const struct sr_odiff *d, const char *path,
                                         enum sr_odiff_kind kind)
{
  for (size_t i = 0; i < d->n; i++)
    if (strcmp(d->v[i].path, path) == 0 && d->v[i].kind == kind)
      return &d->v[i];
  return NULL;
}

static int diff(struct sr_odiff *d, const struct sr_odiff_limits *lim)
{
  char p[512];
  snprintf(p, sizeof(p), "%s/upper", base);
  int u = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  snprintf(p, sizeof(p), "%s/lower", base);
  int l = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  sr_error_t err = NULL;
  struct sr_odiff_limits def = SR_ODIFF_LIMITS_DEFAULT;
  int r = sr_overlay_diff(u, l, lim ? lim : &def, d, &err);
  if (r < 0) {
    char *t = sr_error_text(err);
    unit_fail(__FILE__, __LINE__, "sr_overlay_diff: %s", t ? t : "");
    free(t);
    sr_error_free(&err);
  }
  close(u);
  close(l);
  return r;
}

static void fresh(void)
{
  sh("rm -rf %s/upper %s/lower && mkdir %s/upper %s/lower", base);
}

static void added_modified_deleted_and_a_plain_copy_up(void)
{
  fresh();
  dir("lower/src");
  file("lower/src/a.c", "int a;\n");
  file("lower/src/same.c", "same\n");
  file("lower/old", "old\n");
  dir("upper/src");
  file("upper/src/a.c", "int a = 1;\n");
  file("upper/src/same.c", "same\n"); /* copied up, not changed */
  file("upper/new", "12345");
  whiteout("upper/old");
  whiteout("upper/never-was"); /* no lower entry: nothing deleted */
  struct sr_odiff d;
  CHECK(diff(&d, NULL) == 0);
  CHECK(!d.truncated);
  CHECK_UINT_EQ(d.n, 3);
  const struct sr_odiff_entry *e = find(&d, "src/a.c", SR_ODIFF_MODIFIED);
  CHECK(e && e->size == 11 && S_ISREG(e->mode));
  e = find(&d, "new", SR_ODIFF_ADDED);
  CHECK(e && e->size == 5);
  e = find(&d, "old", SR_ODIFF_DELETED);
  CHECK(e && e->size == 4 && S_ISREG(e->mode));
  CHECK(find(&d, "src", SR_ODIFF_MODIFIED) == NULL);
  sr_overlay_diff_release(&d);
}

static void an_opaque_directory_deletes_what_it_hides(void)
{
  fresh();
  dir("lower/d");
  file("lower/d/gone", "x");
  file("lower/d/kept", "same");
  dir("lower/d/sub");
  dir("upper/d");
  xattr("upper/d", "trusted.overlay.opaque");
  file("upper/d/kept", "same");
  file("upper/d/new", "n");
  struct sr_odiff d;
  CHECK(diff(&d, NULL) == 0);
  CHECK(find(&d, "d/gone", SR_ODIFF_DELETED) != NULL);
  const struct sr_odiff_entry *e = find(&d, "d/sub", SR_ODIFF_DELETED);
  CHECK(e && S_ISDIR(e->mode));
  CHECK(find(&d, "d/new", SR_ODIFF_ADDED) != NULL);
  CHECK(find(&d, "d/kept", SR_ODIFF_MODIFIED) == NULL);
  CHECK_UINT_EQ(d.n, 3);
  sr_overlay_diff_release(&d);
}

static void user_xattrs_are_not_the_overlays(void)
{
  /* The overlay's user may set user.overlay.opaque on its own files: it means nothing here. */
  fresh();
  dir("lower/d");
  file("lower/d/stays", "x");
  dir("upper/d");
  xattr("upper/d", "user.overlay.opaque");
  struct sr_odiff d;
  CHECK(diff(&d, NULL) == 0);
  CHECK_UINT_EQ(d.n, 0);
  sr_overlay_diff_release(&d);
}

static void a_type_change_is_a_deletion_then_an_addition(void)
{
  fresh();
  file("lower/x", "file");
  dir("lower/y");
  file("lower/y/in", "in");
  dir("upper/x");
  file("upper/x/f", "f");
  file("upper/y", "now a file");
  char p[512];
  snprintf(p, sizeof(p), "%s/upper/ln", base);
  CHECK(symlink("/etc/shadow", p) == 0);
  snprintf(p, sizeof(p), "%s/lower/ln", base);
  CHECK(symlink("/etc/passwd", p) == 0);
  struct sr_odiff d;
  CHECK(diff(&d, NULL) == 0);
  size_t del_x = d.n, add_x = d.n;
  for (size_t i = 0; i < d.n; i++) {
    if (strcmp(d.v[i].path, "x") == 0 && d.v[i].kind == SR_ODIFF_DELETED)
      del_x = i;
    if (strcmp(d.v[i].path, "x") == 0 && d.v[i].kind == SR_ODIFF_ADDED)
      add_x = i;
  }
  CHECK(del_x < add_x && add_x < d.n);
  CHECK(find(&d, "x/f", SR_ODIFF_ADDED) != NULL);
  CHECK(find(&d, "y", SR_ODIFF_DELETED) != NULL && find(&d, "y", SR_ODIFF_ADDED) != NULL);
  CHECK(find(&d, "y/in", SR_ODIFF_DELETED) == NULL); /* one entry for the directory */
  const struct sr_odiff_entry *e = find(&d, "ln", SR_ODIFF_MODIFIED);
  CHECK(e && S_ISLNK(e->mode) && e->size == 11);
  sr_overlay_diff_release(&d);
}

static void bounds_make_it_incomplete(void)
{
  fresh();
  for (int i = 0; i < 20; i++) {
    char name[32];
    snprintf(name, sizeof(name), "upper/f%d", i);
    file(name, "x");
  }
  struct sr_odiff_limits lim = SR_ODIFF_LIMITS_DEFAULT;
  lim.max_entries = 5;
  struct sr_odiff d;
  CHECK(diff(&d, &lim) == 0);
  CHECK(d.truncated && d.n == 5 && d.reason != NULL);
  sr_overlay_diff_release(&d);
  fresh();
  sh("mkdir -p %s/upper/1/2/3/4/5/6", base);
  lim = (struct sr_odiff_limits)SR_ODIFF_LIMITS_DEFAULT;
  lim.max_depth = 3;
  CHECK(diff(&d, &lim) == 0);
  CHECK(d.truncated && strstr(d.reason, "deeper") != NULL);
  sr_overlay_diff_release(&d);
}

int main(void)
{
  if (geteuid() != 0) {
    printf("test_overlay_diff: skipped (whiteouts and trusted xattrs need root)\n");
    return 0;
  }
  snprintf(base, sizeof(base), "/tmp/seerun-odiff-XXXXXX");
  if (mkdtemp(base) == NULL)
    return 1;
  RUN(added_modified_deleted_and_a_plain_copy_up);
  RUN(an_opaque_directory_deletes_what_it_hides);
  RUN(user_xattrs_are_not_the_overlays);
  RUN(a_type_change_is_a_deletion_then_an_addition);
  RUN(bounds_make_it_incomplete);
  sh("rm -rf %s", base);
  return unit_report();
}
