/* The host paths a mount's options name (oci/mount_paths.c): the one split the policy judges
 * and the runtime mounts. */
#include "build.h"

#include "mount_options.h"
#include "mount_paths.h"
#include "unit.h"

#include <stdlib.h>
#include <string.h>

static int split(struct sr_arena *a, const char *type, char **opts, size_t n,
                 struct sr_mount_data *d, char **why)
{
  struct sr_mount m = {.field = "mounts[0]", .type = (char *)type, .source = "overlay"};
  sr_error_t err = NULL;
  CHECK_OK(sr_mount_options_parse(a, opts, n, "mounts[0].options", &m.opts, &err), err);
  int r = sr_mount_paths_data_split(a, &m, "mounts[0].options", d, &err);
  *why = err ? sr_error_text(err) : NULL;
  sr_error_free(&err);
  return r;
}

static void overlay_layers_in_order_with_escapes(void)
{
  struct sr_arena a = {0};
  struct sr_mount_data d;
  char *why = NULL;
  char *opts[] = {"lowerdir=/a\\:b:/c\\,d::/data", "upperdir=/u", "workdir=/w", "ro",
                  "redirect_dir=on"};
  CHECK(split(&a, "overlay", opts, 5, &d, &why) == 0);
  CHECK_UINT_EQ(d.n_paths, 5);
  CHECK_STR_EQ(d.paths[0].path, "/a:b");
  CHECK_STR_EQ(d.paths[0].key, "lowerdir+");
  CHECK_STR_EQ(d.paths[1].path, "/c,d");
  CHECK_STR_EQ(d.paths[2].key, "datadir+");
  CHECK_STR_EQ(d.paths[2].path, "/data");
  CHECK_STR_EQ(d.paths[3].key, "upperdir");
  CHECK_STR_EQ(d.paths[4].path, "/w");
  CHECK_UINT_EQ(d.n_plain, 1);
  CHECK_STR_EQ(d.plain[0], "redirect_dir=on");
  sr_arena_release(&a);
}

static void one_element_holding_commas_is_several_options(void)
{
  struct sr_arena a = {0};
  struct sr_mount_data d;
  char *why = NULL;
  char *opts[] = {"lowerdir=/ok,upperdir=/etc,workdir=/w"};
  CHECK(split(&a, "overlay", opts, 1, &d, &why) == 0);
  CHECK_UINT_EQ(d.n_paths, 3);
  CHECK_STR_EQ(d.paths[1].option, "upperdir=/etc");
  sr_arena_release(&a);
}

static void ambiguous_overlays_are_errors(void)
{
  const char *bad[][2] = {{"lowerdir=/a", "lowerdir+=/b"}, {"upperdir=/a", "upperdir=/b"},
                          {"lowerdir=/a", "lowerdir=/b"},   {"lowerdir=:/a", "ro"},
                          {"lowerdir=/a:", "ro"},            {"lowerdir=/a::/b::/c", "ro"}};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    struct sr_arena a = {0};
    struct sr_mount_data d;
    char *why = NULL;
    char *opts[] = {(char *)bad[i][0], (char *)bad[i][1]};
    CHECK(split(&a, "overlay", opts, 2, &d, &why) < 0);
    CHECK(why && strstr(why, "mounts[0].options"));
    free(why);
    sr_arena_release(&a);
  }
}

static void other_types_return_their_path_options_as_unjudged(void)
{
  struct sr_arena a = {0};
  struct sr_mount_data d;
  char *why = NULL;
  char *opts[] = {"size=1m", "workdir=x", "release_agent=/bin/sh", "mode=755"};
  CHECK(split(&a, "tmpfs", opts, 4, &d, &why) == 0);
  CHECK_UINT_EQ(d.n_paths, 2);
  CHECK(d.paths[0].kind == SR_MOUNT_PATH_UNJUDGED && d.paths[1].kind == SR_MOUNT_PATH_UNJUDGED);
  CHECK_STR_EQ(d.paths[1].key, "release_agent");
  CHECK_UINT_EQ(d.n_plain, 2);
  struct sr_mount disk = {.type = "ext4", .source = "/dev/vda"}, tmp = {.type = "tmpfs",
                                                                         .source = "/dev/shm"};
  CHECK(sr_mount_paths_source_is_path(&disk));
  CHECK(!sr_mount_paths_source_is_path(&tmp));
  sr_arena_release(&a);
}

int main(void)
{
  RUN(overlay_layers_in_order_with_escapes);
  RUN(one_element_holding_commas_is_several_options);
  RUN(ambiguous_overlays_are_errors);
  RUN(other_types_return_their_path_options_as_unjudged);
  return unit_report();
}
