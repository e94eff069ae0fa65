/* --apply's record in the state root, and the removal of the temporaries a killed apply left.
 *
 * --apply writes each file beside its name under a temporary one and renames it over; a
 * runtime killed (SIGKILL) while a file is written leaves that temporary in HOST.  So before
 * the first temporary is made, the apply records, in the state root, where it writes:
 *
 *   <root>/.sandbox-apply.<pid>-<start>    (the runtime's token, as its slot has)
 *
 * holding, NUL-separated: "seerun-apply-record 1", HOST's st_dev and st_ino, the path HOST
 * was opened by, the prefix of every temporary of this run (".seerun-apply.<run-id>."), and
 * each directory of HOST (relative, "." for HOST itself) the apply will write a file in.  It
 * is made under ".sandbox-apply-new.<token>", fsynced and renamed into place (and the state
 * root fsynced) before anything is written into HOST; it goes once the apply is over.
 *
 * The next `seerun sandbox` and `seerun gc` reap a record whose runtime is dead: HOST is
 * opened by the recorded path with RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS and must be
 * the recorded directory (st_dev, st_ino) -- a path now naming another directory is left
 * alone, and said so; then each listed directory is opened beneath it (RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV) and only the regular files
 * named <prefix><digits> in it are unlinked (relative to that descriptor), each said on
 * stderr.  The record is input (it could be damaged): a prefix not of the form above makes it
 * refused whole. */
#include "build.h"

#include "sandbox.h"

#include "cleanup.h"
#include "log.h"
#include "paths.h"
#include "dir.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAGIC "seerun-apply-record 1"
#define REC_PREFIX ".sandbox-apply."
#define NEW_PREFIX ".sandbox-apply-new."
#define TMP_PREFIX ".seerun-apply."
#define RESOLVE (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV)

bool sr_sandbox_apply_record_name(const char *name, const char **token, bool *complete)
{
  size_t r = strlen(REC_PREFIX), n = strlen(NEW_PREFIX);
  if (strncmp(name, REC_PREFIX, r) == 0) {
    *token = name + r;
    *complete = true;
    return true;
  }
  if (strncmp(name, NEW_PREFIX, n) == 0) {
    *token = name + n;
    *complete = false;
    return true;
  }
  return false;
}

void sr_sandbox_apply_record_tmp_prefix(const char *run_id, char *buf, size_t size)
{
  snprintf(buf, size, TMP_PREFIX "%s.", run_id);
}

/* ".seerun-apply.<32 hex>." exactly: anything else in a record is not this code's. */
static bool valid_prefix(const char *p)
{
  size_t l = strlen(TMP_PREFIX);
  if (strncmp(p, TMP_PREFIX, l) != 0)
    return false;
  size_t i = 0;
  for (; isxdigit((unsigned char)p[l + i]); i++)
    ;
  return i == 32 && p[l + i] == '.' && p[l + i + 1] == '\0';
}

static int put_field(FILE *f, const char *s)
{
  return fwrite(s, 1, strlen(s) + 1, f) == strlen(s) + 1 ? 0 : -1;
}

int sr_sandbox_apply_record_write(struct sr_ws_apply_record *rec, char *const *dirs, size_t n_dirs,
                                  sr_error_t *err)
{
  const struct stat *host_st = &rec->host_st;
  char tmp[128], name[128], num[32];
  snprintf(tmp, sizeof(tmp), NEW_PREFIX "%s", rec->owner);
  snprintf(name, sizeof(name), REC_PREFIX "%s", rec->owner);
  unlinkat(rec->rootfd, tmp, 0); /* ours (our token): a try of this run that failed */
  int fd = openat(rec->rootfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    return sr_error_sys(err, "--apply: the record of its temporary files `%s` in the state root",
                        tmp);
  _cleanup_fclose_ FILE *f = fdopen(fd, "w");
  if (f == NULL) {
    close(fd);
    unlinkat(rec->rootfd, tmp, 0);
    return sr_error_sys(err, "--apply: the record `%s`", tmp);
  }
  int r = put_field(f, MAGIC);
  snprintf(num, sizeof(num), "%" PRIu64, (uint64_t)host_st->st_dev);
  r |= put_field(f, num);
  snprintf(num, sizeof(num), "%" PRIu64, (uint64_t)host_st->st_ino);
  r |= put_field(f, num);
  r |= put_field(f, rec->host_path);
  r |= put_field(f, rec->prefix);
  for (size_t i = 0; i < n_dirs && r == 0; i++)
    r |= put_field(f, dirs[i][0] ? dirs[i] : ".");
  /* On disk before the first temporary exists: a crash later finds it. */
  if (r != 0 || fflush(f) != 0 || fsync(fileno(f)) < 0 ||
      renameat(rec->rootfd, tmp, rec->rootfd, name) < 0 || fsync(rec->rootfd) < 0) {
    int saved = errno;
    unlinkat(rec->rootfd, tmp, 0);
    unlinkat(rec->rootfd, name, 0);
    return sr_error_make(err, saved,
                         "--apply: write the record of its temporary files `%s` in "
                         "the state root",
                         name);
  }
  rec->written = true;
  return 0;
}

void sr_sandbox_apply_record_remove(struct sr_ws_apply_record *rec)
{
  if (!rec->written)
    return;
  char name[128];
  snprintf(name, sizeof(name), REC_PREFIX "%s", rec->owner);
  unlinkat(rec->rootfd, name, 0);
  rec->written = false;
}

/* One NUL-terminated field; false at the end or past PATH_MAX. */
static bool next_field(FILE *f, char *buf, size_t size)
{
  size_t n = 0;
  int c;
  while ((c = getc(f)) != EOF) {
    if (n + 1 >= size)
      return false;
    buf[n++] = (char)c;
    if (c == '\0')
      return true;
  }
  return false;
}

/* The regular files <prefix><digits> in dir, unlinked. */
static void reap_dir(int dir, const char *host, const char *rel, const char *prefix)
{
  _cleanup_dir_ DIR *d = sr_dir_open_fd(dir);
  if (d == NULL)
    return;
  size_t pl = strlen(prefix);
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    const char *n = de->d_name;
    if (strncmp(n, prefix, pl) != 0 || n[pl] == '\0' ||
        strspn(n + pl, "0123456789") != strlen(n + pl))
      continue;
    struct stat st;
    if (fstatat(dir, n, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
      continue;
    if (unlinkat(dir, n, 0) == 0)
      sr_warn("sandbox: removed `%s/%s%s%s`, the temporary file of an --apply whose seerun was "
              "killed",
              host, strcmp(rel, ".") == 0 ? "" : rel, strcmp(rel, ".") == 0 ? "" : "/", n);
  }
}

void sr_sandbox_apply_record_reap(int rootfd, const char *name)
{
  const char *token;
  bool complete;
  if (!sr_sandbox_apply_record_name(name, &token, &complete))
    return;
  /* Written whole and renamed into place before any temporary: an unfinished one has none. */
  if (!complete) {
    unlinkat(rootfd, name, 0);
    return;
  }
  int fd = openat(rootfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return;
  _cleanup_fclose_ FILE *f = fdopen(fd, "r");
  if (f == NULL) {
    close(fd);
    return;
  }
  _cleanup_free_ char *host = malloc(PATH_MAX);
  _cleanup_free_ char *rel = malloc(PATH_MAX);
  char magic[64], dev[32], ino[32], prefix[64];
  if (host == NULL || rel == NULL)
    return; /* kept: the next reaper tries again */
  if (!next_field(f, magic, sizeof(magic)) || strcmp(magic, MAGIC) != 0 ||
      !next_field(f, dev, sizeof(dev)) || !next_field(f, ino, sizeof(ino)) ||
      !next_field(f, host, PATH_MAX) || !next_field(f, prefix, sizeof(prefix)) ||
      !valid_prefix(prefix) || host[0] != '/') {
    sr_warn("sandbox: `%s` in the state root is no --apply record this seerun reads: removed, "
            "nothing done in any workspace",
            name);
    unlinkat(rootfd, name, 0);
    return;
  }
  /* HOST by the recorded path, no symlink on it, and the recorded directory itself. */
  _cleanup_close_ int h = sr_paths_openat2(AT_FDCWD, host, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0,
                                           RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
  struct stat st;
  if (h < 0 || fstat(h, &st) < 0 || strtoull(dev, NULL, 10) != (unsigned long long)st.st_dev ||
      strtoull(ino, NULL, 10) != (unsigned long long)st.st_ino) {
    sr_warn("sandbox: an --apply whose seerun was killed may have left `%s*` files in `%s`, "
            "but that path %s: left alone (remove them there yourself if it is the same "
            "workspace)",
            prefix, host,
            h < 0 ? "cannot be opened without a symbolic link" : "is another directory now");
    unlinkat(rootfd, name, 0);
    return;
  }
  while (next_field(f, rel, PATH_MAX)) {
    _cleanup_close_ int dir =
        sr_paths_openat2(h, rel, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0, RESOLVE);
    if (dir >= 0)
      reap_dir(dir, host, rel, prefix);
  }
  unlinkat(rootfd, name, 0);
}
