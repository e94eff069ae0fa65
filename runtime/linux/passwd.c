#include "build.h"

#include "passwd.h"

#include "cleanup.h"
#include "paths.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

/* "name:pw:uid:gid:gecos:home:shell": the home when the uid field is uid. */
static bool passwd_line_home(const char *line, uint32_t uid, char *out, size_t size)
{
  const char *f[6];
  size_t len[6];
  const char *p = line;
  for (int i = 0; i < 6; i++) {
    f[i] = p;
    len[i] = strcspn(p, ":");
    p += len[i];
    if (i < 5) {
      if (*p != ':')
        return false; /* fewer than six fields */
      p++;
    }
  }
  char num[16];
  if (len[2] == 0 || len[2] >= sizeof(num) || len[5] == 0 || len[5] >= size)
    return false;
  memcpy(num, f[2], len[2]);
  num[len[2]] = '\0';
  if (num[0] < '0' || num[0] > '9')
    return false;
  char *end;
  errno = 0;
  unsigned long long v = strtoull(num, &end, 10);
  if (errno || *end || v != uid)
    return false;
  memcpy(out, f[5], len[5]);
  out[len[5]] = '\0';
  return true;
}

void sr_passwd_home(uint32_t uid, char *out, size_t size)
{
  snprintf(out, size, "/");
  /* The tenant's file, named by the tenant's symlinks: resolved inside the container's root
   * (an absolute link names the container's file, not the host's), no magic links; O_NONBLOCK
   * so that a fifo cannot hold the runtime, and only a regular file is read. */
  _cleanup_close_ int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root < 0)
    return;
  _cleanup_close_ int fd =
      sr_paths_openat2(root, "etc/passwd", O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0,
                       RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
    return;
  /* We read it as the runtime, whose own /proc/self/environ (the engine's environment) the
   * container could name: a kernel file would carry the runtime's data into HOME. */
  struct statfs sfs;
  if (fstatfs(fd, &sfs) < 0 || sfs.f_type == PROC_SUPER_MAGIC || sfs.f_type == SYSFS_MAGIC)
    return;
  /* Line by line through a fixed buffer, up to a bound: a huge file costs no memory and
   * little time.  A line longer than the buffer is no passwd line: skipped. */
  char buf[8192];
  size_t have = 0, total = 0;
  bool skipping = false;
  for (;;) {
    ssize_t n = read(fd, buf + have, sizeof(buf) - 1 - have);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    total += (size_t)n;
    have += (size_t)n;
    buf[have] = '\0';
    char *line = buf, *nl;
    while ((nl = memchr(line, '\n', have - (size_t)(line - buf))) != NULL) {
      *nl = '\0';
      if (!skipping && passwd_line_home(line, uid, out, size))
        return;
      skipping = false;
      line = nl + 1;
    }
    have -= (size_t)(line - buf);
    memmove(buf, line, have);
    if (have == sizeof(buf) - 1) {
      skipping = true;
      have = 0;
    }
    if (total >= SR_PASSWD_MAX_BYTES)
      return;
  }
  buf[have] = '\0';
  if (have && !skipping)
    passwd_line_home(buf, uid, out, size);
}

char **sr_passwd_env_with_home(char **env, size_t n, uint32_t uid, size_t *n_out, char **added)
{
  *added = NULL;
  for (size_t i = 0; i < n; i++)
    if (strncmp(env[i], "HOME=", 5) == 0 && env[i][5] != '\0')
      return NULL;
  char home[PATH_MAX];
  sr_passwd_home(uid, home, sizeof(home));
  char **nv = malloc((n + 2) * sizeof(char *));
  char *entry = NULL;
  if (nv == NULL || asprintf(&entry, "HOME=%s", home) < 0) {
    free(nv);
    return NULL;
  }
  size_t o = 0;
  for (size_t i = 0; i < n; i++)
    if (strncmp(env[i], "HOME=", 5) != 0) /* an empty HOME= is replaced */
      nv[o++] = env[i];
  nv[o++] = entry;
  nv[o] = NULL;
  *n_out = o;
  *added = entry;
  return nv;
}
