#include "build.h"

#include "userns_registry.h"


#include "cleanup.h"
#include "dir.h"
#include "fileio.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
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
  char *text; /* the file as read; keys point into it */
  struct entry *v;
  size_t n, cap;
};

struct interval {
  uint64_t lo, hi; /* [lo, hi) */
};

struct blocked {
  struct interval *v;
  size_t n, cap;
  bool oom; /* an interval could not be added: no slot can be said to be free */
};

static void block(struct blocked *b, uint64_t lo, uint64_t hi)
{
  if (b->n == b->cap) {
    size_t cap = b->cap ? b->cap * 2 : 64;
    struct interval *nv = realloc(b->v, cap * sizeof(*nv));
    if (nv == NULL) {
      b->oom = true;
      return;
    }
    b->v = nv;
    b->cap = cap;
  }
  b->v[b->n++] = (struct interval){lo, hi};
}

/* /etc/subuid and /etc/subgid (subid): "name:start:count"; /etc/passwd and /etc/group: the
 * third field is the id. */
static void block_file(struct blocked *b, const char *path, bool subid)
{
  _cleanup_fclose_ FILE *f = fopen(path, "re");
  char line[1024];
  while (f && fgets(line, sizeof(line), f)) {
    char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    if (c2 == NULL)
      continue;
    unsigned long long third = strtoull(c2 + 1, NULL, 10);
    if (subid) {
      unsigned long long start = strtoull(c1 + 1, NULL, 10);
      block(b, start, start + third);
    } else
      block(b, third, third + 1);
  }
}

static int by_lo(const void *a, const void *b)
{
  const struct interval *x = a, *y = b;
  return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Sorts and merges the blocked intervals, so that the pool is walked once (a registry of
 * thousands of ranges against a pool of thousands of slots would otherwise cost their product). */
static void merge_blocked(struct blocked *b)
{
  if (b->n == 0)
    return;
  qsort(b->v, b->n, sizeof(*b->v), by_lo);
  size_t o = 0;
  for (size_t i = 1; i < b->n; i++) {
    if (b->v[i].lo <= b->v[o].hi) {
      if (b->v[i].hi > b->v[o].hi)
        b->v[o].hi = b->v[i].hi;
    } else
      b->v[++o] = b->v[i];
  }
  b->n = o + 1;
}

/* With merged intervals and slots visited in increasing order: *cursor only moves forward. */
static bool overlaps_merged(const struct blocked *b, size_t *cursor, uint64_t lo, uint64_t hi)
{
  while (*cursor < b->n && b->v[*cursor].hi <= lo)
    (*cursor)++;
  return *cursor < b->n && b->v[*cursor].lo < hi;
}

static bool expired(const struct entry *e, const struct sr_userns_pool *pool, time_t now)
{
  return e->released && now - e->released >= pool->grace_seconds;
}

/* The file: a header line, then one line per range, "FIRST SIZE RELEASED KEY" (RELEASED: the
 * time of the delete, 0 while the container exists; KEY: the rest of the line).  Plain lines,
 * not JSON: every create and delete reads and rewrites it, and with thousands of ranges held
 * for the grace period that must cost microseconds per range, not a document tree. */
#define REGISTRY_HEADER "seerun user namespace registry 2: FIRST SIZE RELEASED KEY\n"

static int bad_line(sr_error_t *err, size_t line, const char *why)
{
  return sr_error_make(err, 0, "user namespace registry: line %zu: %s", line, why);
}

/* True when some line of buf could hold key: every line holding it ends with " KEY\n". */
static bool may_hold(const char *buf, size_t len, const char *key)
{
  size_t kl = strlen(key);
  if (kl == 0)
    return true;
  for (const char *p = buf; (p = memmem(p, len - (size_t)(p - buf), key, kl)) != NULL; p++)
    if (p > buf && p[-1] == ' ' && (size_t)(p - buf) + kl < len && p[kl] == '\n')
      return true;
  return false;
}

/* With only_key, a file in which no line can hold that key is not parsed (r->n stays 0): a
 * delete of a container that has no range (a fixed mapping, no user namespace) costs one read
 * of the file, not a parse of its thousands of lines. */
static int load(int fd, struct registry *r, const char *only_key, sr_error_t *err)
{
  struct stat st;
  if (fstat(fd, &st) < 0)
    return sr_error_sys(err, "user namespace registry: stat");
  if (st.st_size == 0)
    return 0;
  /* (Not the arena, which zeroes what it gives: the keys point into this buffer.) */
  r->text = malloc((size_t)st.st_size + 1);
  char *buf = r->text;
  if (buf == NULL)
    return sr_error_make(err, ENOMEM, "user namespace registry");
  ssize_t n = pread(fd, buf, (size_t)st.st_size, 0);
  if (n != st.st_size)
    return sr_error_sys(err, "user namespace registry: read");
  buf[n] = '\0';
  size_t hl = strlen(REGISTRY_HEADER);
  if ((size_t)n < hl || memcmp(buf, REGISTRY_HEADER, hl) != 0)
    return bad_line(err, 1, "not a seerun user namespace registry (version 2)");
  if (only_key && !may_hold(buf + hl, (size_t)n - hl, only_key))
    return 0;
  size_t lines = 0;
  for (char *c = buf + hl; *c; c++)
    lines += *c == '\n';
  r->cap = lines + 1;
  r->v = sr_arena_array(&r->arena, r->cap, sizeof(*r->v));
  if (r->v == NULL)
    return sr_error_make(err, ENOMEM, "user namespace registry");
  size_t no = 1;
  for (char *line = buf + hl; *line; no++) {
    char *nl = strchr(line, '\n');
    if (nl == NULL)
      return bad_line(err, no + 1, "no newline at its end (a truncated file?)");
    *nl = '\0';
    struct entry *x = &r->v[r->n];
    char *p = line, *end;
    unsigned long long v[3];
    for (int k = 0; k < 3; k++) {
      errno = 0;
      v[k] = strtoull(p, &end, 10);
      if (errno || end == p || *end != ' ' || *p == '-' || *p == ' ')
        return bad_line(err, no + 1, "not FIRST SIZE RELEASED KEY");
      p = end + 1;
    }
    if (v[0] > UINT32_MAX || v[1] == 0 || v[1] > UINT32_MAX || v[0] + v[1] > UINT32_MAX + 1ULL ||
        v[2] > INT64_MAX || *p == '\0')
      return bad_line(err, no + 1, "a range outside 32-bit ids, or no key");
    *x = (struct entry){p, v[0], v[1], (int64_t)v[2]};
    r->n++;
    line = nl + 1;
  }
  return 0;
}

/* Entries whose grace has passed are left out: the file holds what is held or waited for, so
 * its size (and every create's cost) follows the containers of the grace period, not history. */
static char *put_u64(char *p, uint64_t v)
{
  char digits[20];
  int n = 0;
  do
    digits[n++] = (char)('0' + v % 10);
  while ((v /= 10) != 0);
  while (n)
    *p++ = digits[--n];
  *p++ = ' ';
  return p;
}

static int save(int dirfd, const char *name, const struct sr_userns_pool *pool,
                const struct registry *r, sr_error_t *err)
{
  time_t now = time(NULL);
  size_t cap = sizeof(REGISTRY_HEADER);
  for (size_t i = 0; i < r->n; i++)
    cap += 3 * 21 + strlen(r->v[i].key) + 1;
  _cleanup_free_ char *buf = malloc(cap);
  if (buf == NULL)
    return sr_error_make(err, ENOMEM, "user namespace registry");
  char *p = stpcpy(buf, REGISTRY_HEADER);
  for (size_t i = 0; i < r->n; i++) {
    const struct entry *e = &r->v[i];
    if (expired(e, pool, now))
      continue;
    if (strchr(e->key, '\n'))
      return sr_error_make(err, 0, "user namespace registry: key `%s` holds a newline", e->key);
    p = put_u64(put_u64(put_u64(p, e->first), e->size), (uint64_t)e->released);
    p = stpcpy(p, e->key);
    *p++ = '\n';
  }
  return sr_fileio_write_atomic(dirfd, name, buf, (size_t)(p - buf), 0600, err);
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

/* A writer killed between writing its temporary copy and renaming it leaves ".NAME.PID.tmp":
 * every writer holds the lock, so under it any such file is a leftover. */
static void sweep_temporaries(const struct locked *l)
{
  DIR *d = sr_dir_open_fd(l->dirfd);
  if (d == NULL)
    return;
  size_t n = strlen(l->name);
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    size_t len = strlen(e->d_name);
    if (e->d_name[0] == '.' && len > n + 5 && strncmp(e->d_name + 1, l->name, n) == 0 &&
        e->d_name[n + 1] == '.' && strcmp(e->d_name + len - 4, ".tmp") == 0)
      unlinkat(l->dirfd, e->d_name, 0);
  }
  closedir(d);
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
  if (sr_dir_mkdir_p(dirname(dir), 0700, err) < 0)
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
  sweep_temporaries(l);
  *fd = openat(l->dirfd, l->name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (*fd < 0 && errno != ENOENT)
    return sr_error_sys(err, "user namespace registry: open `%s`", pool->registry);
  return 0;
}

/* The registry loaded under its lock; released (unlocked, freed) by _cleanup_session_ whether
 * it was opened or not. */
struct session {
  struct registry r;
  struct locked l;
};
#define SESSION_INIT {.l = {.dirfd = -1, .lockfd = -1}}

static void session_close(struct session *s)
{
  unlock(&s->l);
  sr_arena_release(&s->r.arena);
  free(s->r.text);
}
#define _cleanup_session_ __attribute__((cleanup(session_close)))

static int session_open(const struct sr_userns_pool *pool, struct session *s, const char *only_key,
                        sr_error_t *err)
{
  _cleanup_close_ int fd = -1;
  if (lock_registry(pool, &s->l, &fd, err) < 0)
    return -1;
  return fd >= 0 ? load(fd, &s->r, only_key, err) : 0;
}

static int session_save(const struct sr_userns_pool *pool, struct session *s, sr_error_t *err)
{
  return save(s->l.dirfd, s->l.name, pool, &s->r, err);
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

/* Takes entry i's range for key (its old key loses it). */
static int take_over(struct registry *r, size_t i, const char *key, sr_error_t *err)
{
  if ((r->v[i].key = sr_arena_strdup(&r->arena, key)) == NULL)
    return sr_error_make(err, ENOMEM, "user namespace registry");
  r->v[i].released = 0;
  return 0;
}

/* The first slot of the pool that nothing blocks: not the host's users or groups, not a
 * subordinate id range, not a range held or still in its grace period. -1: none; -2: out of
 * memory (an interval left out could have been a host user's). */
static int64_t free_slot(const struct sr_userns_pool *pool, const struct registry *r, time_t now)
{
  struct blocked b = {0};
  block_file(&b, "/etc/subuid", true);
  block_file(&b, "/etc/subgid", true);
  block_file(&b, "/etc/passwd", false);
  block_file(&b, "/etc/group", false);
  for (size_t i = 0; i < r->n; i++)
    if (!expired(&r->v[i], pool, now))
      block(&b, r->v[i].first, r->v[i].first + r->v[i].size);
  merge_blocked(&b);
  size_t cursor = 0;
  int64_t found = b.oom ? -2 : -1;
  for (uint64_t k = 0; k < pool->count && found == -1; k++) {
    uint64_t lo = pool->first + k * pool->size;
    if (!overlaps_merged(&b, &cursor, lo, lo + pool->size))
      found = (int64_t)k;
  }
  free(b.v);
  return found;
}

/* The released range whose grace has run longest, for a pool that is full: a restarted
 * container that finds other ids on its volumes is better than no container at all. */
static ssize_t longest_released(const struct sr_userns_pool *pool, const struct registry *r)
{
  ssize_t best = -1;
  for (size_t i = 0; i < r->n; i++)
    if (r->v[i].released && r->v[i].size == pool->size && r->v[i].first >= pool->first &&
        r->v[i].first + r->v[i].size <= pool->first + pool->size * pool->count &&
        (best < 0 || r->v[i].released < r->v[best].released))
      best = (ssize_t)i;
  return best;
}

int sr_userns_registry_acquire(const struct sr_userns_pool *pool, const char *key,
                               struct sr_userns_range *out, sr_error_t *err)
{
  _cleanup_session_ struct session ss = SESSION_INIT;
  struct registry *r = &ss.r;
  *out = (struct sr_userns_range){0};
  if (session_open(pool, &ss, NULL, err) < 0)
    return -1;
  time_t now = time(NULL);
  ssize_t mine = -1;
  for (size_t i = 0; i < r->n && mine < 0; i++)
    if (strcmp(r->v[i].key, key) == 0)
      mine = (ssize_t)i;
  if (mine < 0) {
    int64_t k = free_slot(pool, r, now);
    if (k == -2)
      return sr_error_make(err, ENOMEM, "user namespace registry");
    if (k >= 0) {
      uint64_t lo = pool->first + (uint64_t)k * pool->size, hi = lo + pool->size;
      /* Expired entries overlapping it are forgotten. */
      for (size_t i = 0; i < r->n; i++)
        if (r->v[i].first < hi && lo < r->v[i].first + r->v[i].size)
          r->v[i--] = r->v[--r->n];
      if (grow(r) < 0)
        return sr_error_make(err, ENOMEM, "user namespace registry");
      mine = (ssize_t)r->n;
      r->v[r->n++] = (struct entry){NULL, lo, pool->size, 0};
    } else if ((mine = longest_released(pool, r)) >= 0) {
      out->reclaimed_from = r->v[mine].released;
    } else {
      return sr_error_make(err, 0,
                           "user namespace registry `%s`: all %llu ranges are held by "
                           "containers that exist (the policy's userNamespaces.count)",
                           pool->registry, (unsigned long long)pool->count);
    }
    if (take_over(r, (size_t)mine, key, err) < 0)
      return -1;
  }
  r->v[mine].released = 0;
  out->host_start = (uint32_t)r->v[mine].first;
  out->size = (uint32_t)r->v[mine].size;
  return session_save(pool, &ss, err);
}

int sr_userns_registry_release(const struct sr_userns_pool *pool, const char *key, sr_error_t *err)
{
  _cleanup_session_ struct session ss = SESSION_INIT;
  /* Only the key's own line changes: a file without one is left unparsed and unwritten. */
  if (session_open(pool, &ss, key, err) < 0)
    return -1;
  int ret = 0;
  for (size_t i = 0; i < ss.r.n; i++)
    if (strcmp(ss.r.v[i].key, key) == 0 && ss.r.v[i].released == 0) {
      ss.r.v[i].released = time(NULL);
      ret = session_save(pool, &ss, err);
    }
  return ret;
}

int sr_userns_registry_gc(const struct sr_userns_pool *pool, bool all, size_t *freed,
                          sr_error_t *err)
{
  _cleanup_session_ struct session ss = SESSION_INIT;
  struct registry *r = &ss.r;
  *freed = 0;
  if (session_open(pool, &ss, NULL, err) < 0)
    return -1;
  time_t now = time(NULL);
  for (size_t i = 0; i < r->n; i++)
    if (r->v[i].released && (all || now - r->v[i].released >= pool->grace_seconds)) {
      r->v[i] = r->v[--r->n];
      i--;
      (*freed)++;
    }
  return *freed ? session_save(pool, &ss, err) : 0;
}

char *sr_userns_registry_key(const char *root, const char *id)
{
  char real[PATH_MAX];
  char *key = NULL;
  if (asprintf(&key, "%s/%s", realpath(root, real) ? real : root, id) < 0)
    return NULL;
  return key;
}
