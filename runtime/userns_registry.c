#include "build.h"

#include "userns_registry.h"

#include "cleanup.h"
#include "json.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct entry {
  char *key;
  uint64_t first, size;
  int64_t released; /* seconds since the epoch; 0: held */
};

struct registry {
  struct sr_arena arena;
  struct entry *v;
  size_t n, cap;
};

struct interval {
  uint64_t lo, hi; /* [lo, hi) */
};

struct blocked {
  struct interval *v;
  size_t n, cap;
};

static int block(struct blocked *b, uint64_t lo, uint64_t hi)
{
  if (b->n == b->cap) {
    size_t cap = b->cap ? b->cap * 2 : 64;
    struct interval *nv = realloc(b->v, cap * sizeof(*nv));
    if (nv == NULL)
      return -1;
    b->v = nv;
    b->cap = cap;
  }
  b->v[b->n++] = (struct interval){lo, hi};
  return 0;
}

/* /etc/subuid and /etc/subgid: "name:start:count". */
static void block_subid_file(struct blocked *b, const char *path)
{
  _cleanup_fclose_ FILE *f = fopen(path, "re");
  char line[512];
  while (f && fgets(line, sizeof(line), f)) {
    char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    if (c2 == NULL)
      continue;
    unsigned long long start = strtoull(c1 + 1, NULL, 10), count = strtoull(c2 + 1, NULL, 10);
    block(b, start, start + count);
  }
}

/* /etc/passwd and /etc/group: the third field is the id. */
static void block_id_file(struct blocked *b, const char *path)
{
  _cleanup_fclose_ FILE *f = fopen(path, "re");
  char line[1024];
  while (f && fgets(line, sizeof(line), f)) {
    char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    if (c2 == NULL)
      continue;
    unsigned long long id = strtoull(c2 + 1, NULL, 10);
    block(b, id, id + 1);
  }
}

static bool overlaps(const struct blocked *b, uint64_t lo, uint64_t hi)
{
  for (size_t i = 0; i < b->n; i++)
    if (lo < b->v[i].hi && b->v[i].lo < hi)
      return true;
  return false;
}

static int load(int fd, struct registry *r, sr_error_t *err)
{
  struct stat st;
  if (fstat(fd, &st) < 0)
    return sr_error_sys(err, "user namespace registry: stat");
  if (st.st_size == 0)
    return 0;
  _cleanup_free_ char *buf = malloc((size_t)st.st_size + 1);
  if (buf == NULL)
    return sr_error_make(err, ENOMEM, "user namespace registry");
  ssize_t n = pread(fd, buf, (size_t)st.st_size, 0);
  if (n != st.st_size)
    return sr_error_sys(err, "user namespace registry: read");
  _cleanup_yajl_ yajl_val root = NULL;
  yajl_val arr;
  if (sr_json_parse(buf, (size_t)n, &root, err) < 0 || sr_json_want_object(root, "", err) < 0 ||
      sr_json_get_array(root, "", "ranges", true, &arr, err) < 0)
    return sr_error_wrap(err, "user namespace registry");
  r->cap = arr->u.array.len + 1;
  r->v = sr_arena_array(&r->arena, r->cap, sizeof(*r->v));
  if (r->v == NULL)
    return sr_error_make(err, ENOMEM, "user namespace registry");
  for (size_t i = 0; i < arr->u.array.len; i++) {
    yajl_val e = arr->u.array.values[i];
    struct entry *x = &r->v[r->n];
    bool has;
    if (sr_json_get_string(&r->arena, e, "ranges", "key", true, &x->key, err) < 0 ||
        sr_json_get_u64(e, "ranges", "first", UINT32_MAX, true, &x->first, NULL, err) < 0 ||
        sr_json_get_u64(e, "ranges", "size", UINT32_MAX, true, &x->size, NULL, err) < 0 ||
        sr_json_get_i64(e, "ranges", "released", 0, INT64_MAX, false, &x->released, &has, err) <
            0)
      return sr_error_wrap(err, "user namespace registry");
    if (!has)
      x->released = 0;
    r->n++;
  }
  return 0;
}

static int save(int dirfd, const char *name, const struct registry *r, sr_error_t *err)
{
  _cleanup_gen_ yajl_gen g = NULL;
  if (sr_json_gen_new(&g, true, err) < 0)
    return -1;
  yajl_gen_map_open(g);
  sr_json_put_kv_i64(g, "version", 1);
  sr_json_put_key(g, "ranges");
  yajl_gen_array_open(g);
  for (size_t i = 0; i < r->n; i++) {
    yajl_gen_map_open(g);
    sr_json_put_kv_string(g, "key", r->v[i].key);
    sr_json_put_kv_u64(g, "first", r->v[i].first);
    sr_json_put_kv_u64(g, "size", r->v[i].size);
    if (r->v[i].released)
      sr_json_put_kv_i64(g, "released", r->v[i].released);
    yajl_gen_map_close(g);
  }
  yajl_gen_array_close(g);
  yajl_gen_map_close(g);
  const unsigned char *buf;
  size_t len;
  yajl_gen_get_buf(g, &buf, &len);
  return sr_write_file_atomic(dirfd, name, buf, len, 0600, err);
}

struct locked {
  int dirfd;
  int lockfd;
  char name[NAME_MAX + 1];
};

static void unlock(struct locked *l)
{
  if (l->lockfd >= 0)
    close(l->lockfd);
  if (l->dirfd >= 0)
    close(l->dirfd);
}

/* Opens (making it, root-only) the registry's directory and takes its lock. */
static int lock_registry(const struct sr_userns_pool *pool, struct locked *l, int *fd,
                         sr_error_t *err)
{
  char dir[PATH_MAX], base[PATH_MAX];
  snprintf(dir, sizeof(dir), "%s", pool->registry);
  snprintf(base, sizeof(base), "%s", pool->registry);
  snprintf(l->name, sizeof(l->name), "%s", basename(base));
  l->dirfd = l->lockfd = -1;
  if (sr_mkdir_p(dirname(dir), 0700, err) < 0)
    return sr_error_wrap(err, "user namespace registry");
  l->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (l->dirfd < 0)
    return sr_error_sys(err, "user namespace registry: open `%s`", dir);
  struct stat st;
  if (fstat(l->dirfd, &st) < 0 || st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH)))
    return sr_error_make(err, 0, "user namespace registry: `%s` must be owned by root and "
                                 "writable by root only", dir);
  char lockname[NAME_MAX + 8];
  snprintf(lockname, sizeof(lockname), ".%s.lock", l->name);
  l->lockfd = openat(l->dirfd, lockname, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (l->lockfd < 0)
    return sr_error_sys(err, "user namespace registry: lock file");
  while (flock(l->lockfd, LOCK_EX) < 0)
    if (errno != EINTR)
      return sr_error_sys(err, "user namespace registry: lock");
  *fd = openat(l->dirfd, l->name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (*fd < 0 && errno != ENOENT)
    return sr_error_sys(err, "user namespace registry: open `%s`", pool->registry);
  return 0;
}

static int with_registry(const struct sr_userns_pool *pool, struct registry *r, struct locked *l,
                         sr_error_t *err)
{
  _cleanup_close_ int fd = -1;
  if (lock_registry(pool, l, &fd, err) < 0)
    return -1;
  return fd >= 0 ? load(fd, r, err) : 0;
}

static int grow(struct registry *r)
{
  if (r->n < r->cap)
    return 0;
  size_t cap = r->cap ? r->cap * 2 : 16;
  struct entry *nv = sr_arena_array(&r->arena, cap, sizeof(*nv));
  if (nv == NULL)
    return -1;
  if (r->n)
    memcpy(nv, r->v, r->n * sizeof(*nv));
  r->v = nv;
  r->cap = cap;
  return 0;
}

int sr_userns_acquire(const struct sr_userns_pool *pool, const char *key,
                      struct sr_userns_range *out, sr_error_t *err)
{
  struct registry r = {0};
  struct locked l;
  struct blocked b = {0};
  int ret = -1;
  if (with_registry(pool, &r, &l, err) < 0)
    goto out;
  for (size_t i = 0; i < r.n; i++)
    if (strcmp(r.v[i].key, key) == 0) {
      r.v[i].released = 0;
      out->host_start = (uint32_t)r.v[i].first;
      out->size = (uint32_t)r.v[i].size;
      ret = save(l.dirfd, l.name, &r, err);
      goto out;
    }
  block_subid_file(&b, "/etc/subuid");
  block_subid_file(&b, "/etc/subgid");
  block_id_file(&b, "/etc/passwd");
  block_id_file(&b, "/etc/group");
  /* Released ranges stay with their key during the grace period. */
  time_t now = time(NULL);
  for (size_t i = 0; i < r.n; i++)
    if (r.v[i].released == 0 || now - r.v[i].released < pool->grace_seconds)
      block(&b, r.v[i].first, r.v[i].first + r.v[i].size);
  for (uint64_t k = 0; k < pool->count; k++) {
    uint64_t lo = pool->first + k * pool->size, hi = lo + pool->size;
    if (overlaps(&b, lo, hi))
      continue;
    /* An expired range of another key is taken over. */
    for (size_t i = 0; i < r.n; i++)
      if (r.v[i].first < hi && lo < r.v[i].first + r.v[i].size) {
        r.v[i] = r.v[--r.n];
        i--;
      }
    if (grow(&r) < 0) {
      sr_error_make(err, ENOMEM, "user namespace registry");
      goto out;
    }
    r.v[r.n++] = (struct entry){sr_arena_strdup(&r.arena, key), lo, pool->size, 0};
    if (save(l.dirfd, l.name, &r, err) < 0)
      goto out;
    out->host_start = (uint32_t)lo;
    out->size = (uint32_t)pool->size;
    ret = 0;
    goto out;
  }
  sr_error_make(err, 0, "user namespace registry `%s`: all %llu ranges are in use (see `seerun "
                        "gc` and the policy's userNamespaces.count)", pool->registry,
                (unsigned long long)pool->count);
out:
  unlock(&l);
  free(b.v);
  sr_arena_release(&r.arena);
  return ret;
}

int sr_userns_release(const struct sr_userns_pool *pool, const char *key, sr_error_t *err)
{
  struct registry r = {0};
  struct locked l;
  int ret = -1;
  if (with_registry(pool, &r, &l, err) < 0)
    goto out;
  ret = 0;
  for (size_t i = 0; i < r.n; i++)
    if (strcmp(r.v[i].key, key) == 0 && r.v[i].released == 0) {
      r.v[i].released = time(NULL);
      ret = save(l.dirfd, l.name, &r, err);
    }
out:
  unlock(&l);
  sr_arena_release(&r.arena);
  return ret;
}

int sr_userns_gc(const struct sr_userns_pool *pool, bool all, size_t *freed, sr_error_t *err)
{
  struct registry r = {0};
  struct locked l;
  int ret = -1;
  *freed = 0;
  if (with_registry(pool, &r, &l, err) < 0)
    goto out;
  time_t now = time(NULL);
  for (size_t i = 0; i < r.n; i++)
    if (r.v[i].released && (all || now - r.v[i].released >= pool->grace_seconds)) {
      r.v[i] = r.v[--r.n];
      i--;
      (*freed)++;
    }
  ret = *freed ? save(l.dirfd, l.name, &r, err) : 0;
out:
  unlock(&l);
  sr_arena_release(&r.arena);
  return ret;
}

char *sr_userns_key(const char *root, const char *id)
{
  char real[PATH_MAX];
  char *key = NULL;
  if (asprintf(&key, "%s/%s", realpath(root, real) ? real : root, id) < 0)
    return NULL;
  return key;
}
