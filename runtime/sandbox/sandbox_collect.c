/* /out: what a sandbox hands back.
 *
 * The runtime makes the tmpfs itself (so it is the runtime's: the container cannot remount or
 * resize it), binds it into the container, and keeps a descriptor of it; the container never
 * shares anything else with the host that it can write.  Once every process of the sandbox is
 * dead, nothing can change the tree any more, and it is copied into HOSTDIR:
 *
 * - every lookup in /out is openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
 *   RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV) with O_NOFOLLOW from the descriptor of its
 *   directory, and the file opened is checked (fstat) to be the entry that was examined;
 * - only regular files with a single link, and directories, are copied: a symlink (to
 *   /etc/passwd, say) is never followed, a hard link could name a file the sandbox was given
 *   read-only, and fifos, sockets and devices are not data; each is listed as refused, why;
 * - at most max_files entries and max_bytes bytes (by the files' sizes, so a sparse 10 GB
 *   file is refused, never read), and a bounded depth;
 * - everything written is created beneath the descriptor of HOSTDIR, with O_EXCL and without
 *   following symlinks, mode bits limited to 0755: nothing lands outside HOSTDIR, nothing
 *   there is overwritten, no set-id bit survives. */
#include "build.h"

#include "sandbox.h"

#include "cleanup.h"
#include "dir.h"
#include "mountapi.h"
#include "overlay_diff.h"
#include "paths.h"
#include "fileio.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SRC_RESOLVE                                                                                \
  (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV)
#define DST_RESOLVE (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)
#define COPY_CHUNK (128 * 1024)

int sr_sandbox_collect_out_create(uint64_t size, uid_t owner, gid_t group, const char *target,
                                  int *fd, sr_error_t *err)
{
  _cleanup_close_ int fsfd = sr_mountapi_fsopen("tmpfs", FSOPEN_CLOEXEC);
  if (fsfd < 0)
    return sr_error_sys(err, "sandbox /out: fsopen tmpfs");
  char sz[32], uid[32], gid[32];
  snprintf(sz, sizeof(sz), "%llu", (unsigned long long)size);
  snprintf(uid, sizeof(uid), "%u", (unsigned)owner);
  snprintf(gid, sizeof(gid), "%u", (unsigned)group);
  bool owned = owner != (uid_t)-1;
  if (sr_mountapi_fsconfig(fsfd, FSCONFIG_SET_STRING, "size", sz, 0) < 0 ||
      sr_mountapi_fsconfig(fsfd, FSCONFIG_SET_STRING, "mode", owned ? "0755" : "01777", 0) < 0 ||
      (owned && sr_mountapi_fsconfig(fsfd, FSCONFIG_SET_STRING, "uid", uid, 0) < 0) ||
      (owned && sr_mountapi_fsconfig(fsfd, FSCONFIG_SET_STRING, "gid", gid, 0) < 0) ||
      sr_mountapi_fsconfig(fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
    return sr_error_sys(err, "sandbox /out: create the tmpfs");
  _cleanup_close_ int mnt =
      sr_mountapi_fsmount(fsfd, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
  if (mnt < 0)
    return sr_error_sys(err, "sandbox /out: fsmount");
  if (sr_mountapi_move_mount(mnt, "", AT_FDCWD, target, MOVE_MOUNT_F_EMPTY_PATH) < 0)
    return sr_error_sys(err, "sandbox /out: attach it at `%s`", target);
  *fd = steal_fd(mnt);
  return 0;
}

void sr_sandbox_collect_result_free(struct sr_collect_result *res)
{
  for (size_t i = 0; i < res->n_collected; i++)
    free(res->collected[i].path);
  for (size_t i = 0; i < res->n_refused; i++)
    free(res->refused[i].path);
  free(res->collected);
  free(res->refused);
  memset(res, 0, sizeof(*res));
}

struct walk {
  uint64_t max_bytes, max_files, max_examined;
  uint64_t examined;
  struct sr_collect_result *res;
  char *buf; /* COPY_CHUNK */
  bool overwrite; /* --out-overwrite: a file of HOSTDIR of the same name is replaced */
  /* Relative to /out; as deep as the walk goes, so no name has to be left unsaid. */
  char path[(SR_COLLECT_MAX_DEPTH + 2) * (NAME_MAX + 1)];
  bool stop;
};

char *sr_sandbox_collect_printable(const char *s)
{
  size_t n = strlen(s);
  char *out = malloc(n * 4 + 1);
  if (out == NULL)
    return NULL;
  size_t o = 0;
  const unsigned char *p = (const unsigned char *)s;
  for (size_t i = 0; i < n;) {
    unsigned c = p[i];
    size_t len = c < 0x80             ? 1
                 : (c & 0xe0) == 0xc0 ? 2
                 : (c & 0xf0) == 0xe0 ? 3
                 : (c & 0xf8) == 0xf0 ? 4
                                      : 0;
    bool ok = len > 0 && i + len <= n && !(len == 2 && c < 0xc2) && !(len == 4 && c > 0xf4);
    for (size_t k = 1; ok && k < len; k++)
      ok = (p[i + k] & 0xc0) == 0x80;
    /* UTF-8 as RFC 3629 has it: no overlong form, no UTF-16 surrogate, nothing past
     * U+10FFFF (each would make the document that holds the name something else than UTF-8). */
    if (ok && len >= 3) {
      unsigned c1 = p[i + 1];
      ok = !(c == 0xe0 && c1 < 0xa0) && !(c == 0xed && c1 > 0x9f) &&
           !(c == 0xf0 && c1 < 0x90) && !(c == 0xf4 && c1 > 0x8f);
    }
    if (ok && len == 1 && (c < 0x20 || c == 0x7f || c == '\\'))
      ok = false;
    if (!ok) {
      o += (size_t)sprintf(out + o, "\\x%02x", c);
      i++;
      continue;
    }
    memcpy(out + o, p + i, len);
    o += len;
    i += len;
  }
  out[o] = '\0';
  return out;
}

static int add_entry(struct sr_collect_entry **v, size_t *n, size_t *cap, const char *path,
                     const char *type, uint64_t size, const char *reason)
{
  if (*n == *cap) {
    size_t nc = *cap ? *cap * 2 : 64;
    struct sr_collect_entry *nv = realloc(*v, nc * sizeof(**v));
    if (nv == NULL)
      return -1;
    *v = nv;
    *cap = nc;
  }
  char *p = sr_sandbox_collect_printable(path);
  if (p == NULL)
    return -1;
  (*v)[(*n)++] = (struct sr_collect_entry){p, type, size, reason};
  return 0;
}

static int refuse(struct walk *w, const char *type, uint64_t size, const char *reason,
                  sr_error_t *err)
{
  struct sr_collect_result *r = w->res;
  if (r->n_refused >= SR_COLLECT_MAX_LISTED) {
    r->refused_not_listed++;
    return 0;
  }
  if (add_entry(&r->refused, &r->n_refused, &r->cap_refused, w->path, type, size, reason) < 0)
    return sr_error_make(err, ENOMEM, "sandbox /out");
  return 0;
}

static int collected(struct walk *w, const char *type, uint64_t size, sr_error_t *err)
{
  struct sr_collect_result *r = w->res;
  if (add_entry(&r->collected, &r->n_collected, &r->cap_collected, w->path, type, size, NULL) < 0)
    return sr_error_make(err, ENOMEM, "sandbox /out");
  return 0;
}

/* The bound on entries: once reached, nothing more is collected (the walk stops). */
static int files_bound(struct walk *w, const char *type, sr_error_t *err)
{
  struct sr_collect_result *r = w->res;
  if (r->files + r->dirs < w->max_files)
    return 0;
  w->stop = true;
  r->complete = false;
  /* One entry says it for the rest. */
  if (refuse(w, type, 0,
             "the file count bound was reached: neither this nor the rest of /out "
             "was collected",
             err) < 0)
    return -1;
  return 1;
}

static bool same_inode(int fd, const struct stat *want, struct stat *got)
{
  return fstat(fd, got) == 0 && got->st_dev == want->st_dev && got->st_ino == want->st_ino &&
         (got->st_mode & S_IFMT) == (want->st_mode & S_IFMT);
}

static int copy_file(struct walk *w, int src_dir, int dst_dir, const char *name,
                     const struct stat *st, sr_error_t *err)
{
  struct sr_collect_result *r = w->res;
  if (st->st_nlink != 1)
    return refuse(w, "hardlink", (uint64_t)st->st_size,
                  "a file with more than one link: not collected", err);
  int b = files_bound(w, "file", err);
  if (b != 0)
    return b < 0 ? -1 : 0;
  uint64_t size = (uint64_t)st->st_size;
  if (size > w->max_bytes - r->bytes) {
    r->complete = false;
    return refuse(w, "file", size, "larger than what is left of the byte bound: not collected",
                  err);
  }
  _cleanup_close_ int in = sr_paths_openat2(
      src_dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0, SRC_RESOLVE);
  struct stat got;
  if (in < 0 || !same_inode(in, st, &got) || got.st_nlink != 1 || got.st_size != st->st_size)
    return refuse(w, "file", size, "changed or unreadable while collected: not collected", err);
  _cleanup_close_ int out = sr_paths_openat2(
      dst_dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600, DST_RESOLVE);
  /* Replaced by name, never written through: unlinkat removes a symlink, not its target, and
   * refuses a directory. */
  if (out < 0 && errno == EEXIST && w->overwrite) {
    if (unlinkat(dst_dir, name, 0) == 0)
      out = sr_paths_openat2(dst_dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                             0600, DST_RESOLVE);
    else
      errno = EEXIST; /* a directory of that name: refused as it was */
  }
  if (out < 0) {
    if (errno == EEXIST || errno == ELOOP || errno == EXDEV)
      return refuse(w, "file", size, "exists in the output directory: not overwritten", err);
    return sr_error_sys(err, "--out: create `%s`", w->path);
  }
  uint64_t left = size;
  while (left > 0) {
    ssize_t n = read(in, w->buf, left < COPY_CHUNK ? (size_t)left : COPY_CHUNK);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break; /* shorter than it said: what there was is copied */
    if (sr_fileio_write_all(out, w->buf, (size_t)n) < 0) {
      int saved = errno;
      unlinkat(dst_dir, name, 0);
      return sr_error_make(err, saved, "--out: write `%s`", w->path);
    }
    left -= (uint64_t)n;
  }
  if (fchmod(out, st->st_mode & 0755) < 0)
    return sr_error_sys(err, "--out: chmod `%s`", w->path);
  r->files++;
  r->bytes += size;
  return collected(w, "file", size, err);
}

static int walk_dir(struct walk *w, int src, int dst, size_t plen, int depth, sr_error_t *err);

static int copy_dir(struct walk *w, int src_dir, int dst_dir, const char *name,
                    const struct stat *st, size_t plen, int depth, sr_error_t *err)
{
  int b = files_bound(w, "directory", err);
  if (b != 0)
    return b < 0 ? -1 : 0;
  if (depth + 1 > SR_COLLECT_MAX_DEPTH) {
    w->res->complete = false;
    return refuse(w, "directory", 0, "nested too deep: not collected", err);
  }
  _cleanup_close_ int in = sr_paths_openat2(
      src_dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0, SRC_RESOLVE);
  struct stat got;
  if (in < 0 || !same_inode(in, st, &got))
    return refuse(w, "directory", 0, "changed or unreadable while collected: not collected", err);
  if (mkdirat(dst_dir, name, 0700) < 0 && errno != EEXIST)
    return sr_error_sys(err, "--out: mkdir `%s`", w->path);
  _cleanup_close_ int out = sr_paths_openat2(
      dst_dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0, DST_RESOLVE);
  if (out < 0)
    return refuse(w, "directory", 0,
                  "exists in the output directory and is not a directory: "
                  "not collected",
                  err);
  w->res->dirs++;
  if (collected(w, "directory", 0, err) < 0 || walk_dir(w, in, out, plen, depth + 1, err) < 0)
    return -1;
  if (fchmod(out, (st->st_mode & 0755) | 0700) < 0)
    return sr_error_sys(err, "--out: chmod `%s`", w->path);
  return 0;
}

static int walk_dir(struct walk *w, int src, int dst, size_t plen, int depth, sr_error_t *err)
{
  _cleanup_dir_ DIR *d = sr_dir_open_fd(src);
  if (d == NULL)
    return sr_error_sys(err, "sandbox /out: read `%s`", plen ? w->path : "/");
  struct dirent *de;
  while (!w->stop && (de = readdir(d)) != NULL) {
    const char *name = de->d_name;
    if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
      continue;
    size_t nlen = strlen(name);
    if (plen + nlen + 2 > sizeof(w->path))
      return sr_error_make(err, ENAMETOOLONG, "sandbox /out: a path below `%s`", w->path);
    if (plen)
      w->path[plen] = '/';
    memcpy(w->path + plen + (plen ? 1 : 0), name, nlen + 1);
    size_t clen = plen + (plen ? 1 : 0) + nlen;
    if (++w->examined > w->max_examined) {
      w->stop = true;
      w->res->complete = false;
      if (refuse(w, "unknown", 0,
                 "too many entries in /out: this and the rest were not "
                 "examined",
                 err) < 0)
        return -1;
      break;
    }
    struct stat st;
    if (fstatat(src, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
      if (refuse(w, "unknown", 0, "cannot be examined: not collected", err) < 0)
        return -1;
      continue;
    }
    int r;
    if (S_ISREG(st.st_mode))
      r = copy_file(w, src, dst, name, &st, err);
    else if (S_ISDIR(st.st_mode))
      r = copy_dir(w, src, dst, name, &st, clen, depth, err);
    else if (S_ISLNK(st.st_mode))
      r = refuse(w, "symlink", 0, "a symbolic link: never followed, not collected", err);
    else
      r = refuse(w, sr_overlay_diff_type_name(st.st_mode), 0,
                 "not a regular file or directory: not collected", err);
    if (r < 0)
      return -1;
    w->path[plen] = '\0';
  }
  return 0;
}

int sr_sandbox_collect(int src, int dst, uint64_t max_bytes, uint64_t max_files, bool overwrite,
                       struct sr_collect_result *res, sr_error_t *err)
{
  memset(res, 0, sizeof(*res));
  res->complete = true;
  _cleanup_free_ char *buf = malloc(COPY_CHUNK);
  if (buf == NULL)
    return sr_error_make(err, ENOMEM, "sandbox /out");
  struct walk w = {.max_bytes = max_bytes,
                   .max_files = max_files,
                   .res = res,
                   .buf = buf,
                   .overwrite = overwrite};
  /* Refused entries cost a look each: bounded too, generously. */
  w.max_examined = max_files * 4 + 4 * SR_COLLECT_MAX_LISTED;
  int r = walk_dir(&w, src, dst, 0, 0, err);
  /* What the command wrote is all there only if nothing of it was refused. */
  if (res->n_refused || res->refused_not_listed)
    res->complete = false;
  return r;
}
