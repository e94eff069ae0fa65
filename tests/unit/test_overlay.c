/* The overlay layers read back from an engine's mount (runtime/linux/overlay_layers.c). */
#include "build.h"

#include "overlay_layers.h"
#include "unit.h"

static void absolute_layers_top_first_with_upper(void)
{
  struct sr_overlay_layers l;
  sr_error_t err = NULL;
  CHECK_OK(sr_overlay_layers_parse("rw,lowerdir=/s/l/A:/s/l/B,upperdir=/s/c/diff,workdir=/s/c/work,"
                                   "redirect_dir=on,metacopy=on",
                                   "/s", &l, &err),
           err);
  CHECK_UINT_EQ(l.n_lower, 2);
  CHECK_STR_EQ(l.lower[0], "/s/l/A");
  CHECK_STR_EQ(l.lower[1], "/s/l/B");
  CHECK_STR_EQ(l.upper, "/s/c/diff");
  CHECK(l.metacopy);
  CHECK(!l.userxattr);
  sr_overlay_layers_release(&l);
}

static void relative_layers_are_taken_from_the_storage_directory(void)
{
  /* podman and Docker mount from their storage directory when the options pass a page. */
  struct sr_overlay_layers l;
  sr_error_t err = NULL;
  CHECK_OK(sr_overlay_layers_parse("lowerdir=l/A:l/B,upperdir=id/diff,workdir=id/work",
                                   "/var/lib/docker/overlay2", &l, &err),
           err);
  CHECK_STR_EQ(l.lower[1], "/var/lib/docker/overlay2/l/B");
  CHECK_STR_EQ(l.upper, "/var/lib/docker/overlay2/id/diff");
  sr_overlay_layers_release(&l);
  CHECK(sr_overlay_layers_parse("lowerdir=l/A", NULL, &l, &err) < 0);
  char *text = err ? sr_error_text(err) : NULL;
  CHECK(text && strstr(text, "relative"));
  free(text);
  sr_error_free(&err);
}

static void escapes_and_lowerdir_plus(void)
{
  struct sr_overlay_layers l;
  sr_error_t err = NULL;
  /* mountinfo's \054 is ',', \040 ' ', \134 '\': "a\:b" is one layer named "a:b". */
  CHECK_OK(sr_overlay_layers_parse("lowerdir+=/x\\054y,lowerdir+=/with\\040space,"
                                   "lowerdir=/a\\134:b:/c,userxattr",
                                   NULL, &l, &err),
           err);
  CHECK_UINT_EQ(l.n_lower, 4);
  CHECK_STR_EQ(l.lower[0], "/x,y");
  CHECK_STR_EQ(l.lower[1], "/with space");
  CHECK_STR_EQ(l.lower[2], "/a:b");
  CHECK_STR_EQ(l.lower[3], "/c");
  CHECK(l.upper == NULL);
  CHECK(l.userxattr);
  sr_overlay_layers_release(&l);
}

static void what_cannot_be_rebuilt_is_an_error(void)
{
  const char *bad[] = {"upperdir=/u,workdir=/w", "lowerdir=/a::/data", "lowerdir=/a,datadir+=/d",
                       "lowerdir=", NULL};
  for (int i = 0; bad[i]; i++) {
    struct sr_overlay_layers l;
    sr_error_t err = NULL;
    CHECK(sr_overlay_layers_parse(bad[i], "/s", &l, &err) < 0);
    CHECK(err != NULL);
    sr_error_free(&err);
  }
}

static void the_mountinfo_line_of_a_mount(void)
{
  char line[] = "612 28 0:55 / /var/lib/x/merged rw,relatime shared:300 - overlay overlay "
                "rw,lowerdir=/l,upperdir=/u,workdir=/w\n";
  char other[] = "613 28 0:56 / /mnt rw - tmpfs tmpfs rw\n";
  CHECK(sr_overlay_layers_superopts(other, 612) == NULL);
  CHECK_STR_EQ(sr_overlay_layers_superopts(line, 612), "rw,lowerdir=/l,upperdir=/u,workdir=/w");
  char no_sep[] = "612 28 0:55 / /m rw\n";
  CHECK(sr_overlay_layers_superopts(no_sep, 612) == NULL);
}

int main(void)
{
  RUN(absolute_layers_top_first_with_upper);
  RUN(relative_layers_are_taken_from_the_storage_directory);
  RUN(escapes_and_lowerdir_plus);
  RUN(what_cannot_be_rebuilt_is_an_error);
  RUN(the_mountinfo_line_of_a_mount);
  return unit_report();
}
