#include "build.h"

#include "state_roots.h"

#include "cleanup.h"
#include "dir.h"
#include "fileio.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* Bounds: a record this large is not one seerun wrote. */
#define MAX_RECORD (1024 * 1024)

char *sr_state_roots_path(struct sr_arena *a, const struct sr_userns_pool *pool)
{
  char dir[PATH_MAX];
  snprintf(dir, sizeof(dir), "%s", pool->registry ? pool->registry : SR_USERNS_DEFAULT_REGISTRY);
  return sr_arena_printf(a, "%s/%s", dirname(dir), SR_STATE_ROOTS_NAME);
}

static int read_at(int dirfd, const char *name, char **buf, size_t *len)
{
  sr_error_t e = NULL;
  int r = sr_fileio_read_at(dirfd, name, MAX_RECORD, buf, len, &e);
  sr_error_free(&e);
  return r;
}

/* Lines of buf that are absolute paths, in a. */
static int split(struct sr_arena *a, char *buf, char ***out, size_t *n)
{
  size_t cap = 1;
  for (char *s = buf; *s; s++)
    cap += *s == '\n';
  char **v = sr_arena_array(a, cap + 1, sizeof(char *));
  if (v == NULL)
    return -1;
  size_t k = 0;
  for (char *save = NULL, *line = strtok_r(buf, "\n", &save); line;
       line = strtok_r(NULL, "\n", &save))
    if (line[0] == '/' && (v[k] = sr_arena_strdup(a, line)) != NULL)
      k++;
  v[k] = NULL;
  *out = v;
  *n = k;
  return 0;
}

int sr_state_roots_read(struct sr_arena *a, const struct sr_userns_pool *pool, char ***out,
                        size_t *n)
{
  *out = NULL;
  *n = 0;
  const char *path = sr_state_roots_path(a, pool);
  _cleanup_free_ char *buf = NULL;
  size_t len;
  if (path == NULL)
    return -1;
  if (read_at(AT_FDCWD, path, &buf, &len) < 0)
    return 0; /* nothing recorded yet */
  return split(a, buf, out, n);
}

static bool listed(char **v, size_t n, const char *s)
{
  for (size_t i = 0; i < n; i++)
    if (strcmp(v[i], s) == 0)
      return true;
  return false;
}

/* What a runtime killed while rewriting the record left: ".state-roots.<pid>.tmp". */
static void sweep_temporaries(int dirfd)
{
  int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
  if (d == NULL) {
    if (fd >= 0)
      close(fd);
    return;
  }
  const char *prefix = "." SR_STATE_ROOTS_NAME ".";
  size_t n = strlen(prefix);
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    size_t len = strlen(e->d_name);
    if (len > n + 4 && strncmp(e->d_name, prefix, n) == 0 &&
        strcmp(e->d_name + len - 4, ".tmp") == 0)
      unlinkat(dirfd, e->d_name, 0);
  }
  closedir(d);
}

int sr_state_roots_record(const struct sr_userns_pool *pool, const char *root, sr_error_t *err)
{
  _cleanup_(sr_arena_release) struct sr_arena a = {0};
  char real[PATH_MAX];
  if (realpath(root, real) == NULL)
    return sr_error_sys(err, "state root `%s`", root);
  char **v;
  size_t n;
  if (sr_state_roots_read(&a, pool, &v, &n) < 0)
    return sr_error_make(err, ENOMEM, "state root record");
  if (listed(v, n, real))
    return 0; /* the usual case: nothing to write */
  const char *path = sr_state_roots_path(&a, pool);
  char dir[PATH_MAX];
  snprintf(dir, sizeof(dir), "%s", path ? path : "");
  if (path == NULL || sr_dir_mkdir_p(dirname(dir), 0700, err) < 0)
    return path ? sr_error_wrap(err, "state root record")
                : sr_error_make(err, ENOMEM, "state root record");
  _cleanup_close_ int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  struct stat st;
  if (dirfd < 0)
    return sr_error_sys(err, "state root record: open `%s`", dir);
  /* A record someone else could rewrite would let them drop a root from it. */
  if (fstat(dirfd, &st) < 0 || st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH)))
    return sr_error_make(err, 0,
                         "state root record: `%s` must be owned by root and writable "
                         "by root only",
                         dir);
  _cleanup_close_ int lockfd = openat(dirfd, "." SR_STATE_ROOTS_NAME ".lock",
                                      O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (lockfd < 0)
    return sr_error_sys(err, "state root record: lock file");
  while (flock(lockfd, LOCK_EX) < 0)
    if (errno != EINTR)
      return sr_error_sys(err, "state root record: lock");
  sweep_temporaries(dirfd);
  /* Again under the lock: another runtime may have added roots meanwhile. */
  _cleanup_free_ char *buf = NULL;
  size_t len = 0;
  if (read_at(dirfd, SR_STATE_ROOTS_NAME, &buf, &len) < 0)
    buf = NULL;
  if (buf && split(&a, buf, &v, &n) < 0)
    return sr_error_make(err, ENOMEM, "state root record");
  if (buf == NULL)
    n = 0;
  if (listed(v, n, real))
    return 0;
  size_t cap = strlen(real) + 2;
  for (size_t i = 0; i < n; i++)
    cap += strlen(v[i]) + 1;
  _cleanup_free_ char *out = malloc(cap);
  if (out == NULL)
    return sr_error_make(err, ENOMEM, "state root record");
  size_t o = 0;
  for (size_t i = 0; i < n; i++) {
    struct stat rst;
    if (lstat(v[i], &rst) < 0 && errno == ENOENT)
      continue; /* gone (a test's, a reboot's tmpfs): recorded again when used again */
    o += (size_t)sprintf(out + o, "%s\n", v[i]);
  }
  o += (size_t)sprintf(out + o, "%s\n", real);
  if (sr_fileio_write_atomic(dirfd, SR_STATE_ROOTS_NAME, out, o, 0600, err) < 0)
    return sr_error_wrap(err, "state root record `%s`", path);
  return 0;
}
