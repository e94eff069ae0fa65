/* Where an open object lies (runtime/linux/mount_where.c): the same answer with and without
 * the mounts' cache, by statmount and by mountinfo (the older kernels' way, forced here), and
 * after a mount is replaced under the cache.  The bind-mount cases need root (a private mount
 * namespace of the test's own): without it they say so and pass. */
#include "build.h"

#include "mount_where.h"
#include "unit.h"

#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

static void same_where(const char *path, struct sr_where_mounts *m)
{
  int fd = open(path, O_PATH | O_CLOEXEC);
  CHECK(fd >= 0);
  if (fd < 0)
    return;
  struct sr_where plain = {0}, cached = {0};
  int a = sr_where_fd(fd, &plain);
  int b = sr_where_fd_in(fd, m, &cached);
  CHECK_INT_EQ(b, a);
  if (a == 0 && b == 0) {
    CHECK_INT_EQ(cached.dev, plain.dev);
    CHECK_STR_EQ(cached.fs_path, plain.fs_path);
    CHECK_STR_EQ(cached.name, plain.name);
  }
  sr_where_release(&plain);
  sr_where_release(&cached);
  close(fd);
}

static const char *const paths[] = {"/", "/proc", "/proc/self/status", "/dev", "/dev/null",
                                    "/sys", "/tmp", "/etc/passwd", "/etc", "/proc/1"};

static void cached_lookups_answer_as_uncached_ones(void)
{
  for (int mountinfo_only = 0; mountinfo_only <= 1; mountinfo_only++) {
    struct sr_where_mounts m = {.mountinfo_only = mountinfo_only};
    /* Twice over: the second round is answered from the cache. */
    for (int round = 0; round < 2; round++)
      for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
        same_where(paths[i], &m);
    CHECK(m.n > 0);
    sr_where_mounts_release(&m);
    CHECK_UINT_EQ(m.n, 0);
  }
}

static char dir[64];

static void path_of(char *out, size_t size, const char *rel)
{
  snprintf(out, size, "%s/%s", dir, rel);
}

/* A bind of /etc shows /etc/passwd as "/etc/passwd" of its filesystem; once that bind is
 * replaced by a tmpfs, the same cache tells the tmpfs's root, not the bind's. */
static void a_replaced_mount_is_looked_up_again(void)
{
  if (geteuid() != 0) {
    printf("skipped: a_replaced_mount_is_looked_up_again needs root\n");
    return;
  }
  if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
    unit_fail(__FILE__, __LINE__, "a private mount namespace");
    return;
  }
  snprintf(dir, sizeof(dir), "/tmp/sr-mount-where-XXXXXX");
  CHECK(mkdtemp(dir) != NULL);
  char x[128], f[128];
  path_of(x, sizeof(x), "x");
  CHECK(mkdir(x, 0700) == 0);
  CHECK(mount("/etc", x, NULL, MS_BIND, NULL) == 0);
  for (int mountinfo_only = 0; mountinfo_only <= 1; mountinfo_only++) {
    struct sr_where_mounts m = {.mountinfo_only = mountinfo_only};
    path_of(f, sizeof(f), "x/passwd");
    int fd = open(f, O_PATH | O_CLOEXEC);
    struct sr_where w = {0};
    CHECK(fd >= 0 && sr_where_fd_in(fd, &m, &w) == 0);
    CHECK_STR_EQ(w.fs_path, "/etc/passwd");
    CHECK_STR_EQ(w.name, f);
    sr_where_release(&w);
    close(fd);
    CHECK(umount2(x, MNT_DETACH) == 0);
    CHECK(mount("tmpfs", x, "tmpfs", 0, "size=64k") == 0);
    int nfd = open(f, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    CHECK(nfd >= 0 && sr_where_fd_in(nfd, &m, &w) == 0);
    CHECK_STR_EQ(w.fs_path, "/passwd");
    sr_where_release(&w);
    close(nfd);
    sr_where_mounts_release(&m);
    CHECK(umount2(x, MNT_DETACH) == 0);
    CHECK(mount("/etc", x, NULL, MS_BIND, NULL) == 0);
  }
  CHECK(umount2(x, MNT_DETACH) == 0);
  CHECK(rmdir(x) == 0);
  CHECK(rmdir(dir) == 0);
}

int main(void)
{
  RUN(cached_lookups_answer_as_uncached_ones);
  RUN(a_replaced_mount_is_looked_up_again);
  return unit_report();
}
