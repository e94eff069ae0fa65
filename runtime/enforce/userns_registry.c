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
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct entry {
  const char *key; /* klen bytes, not NUL-terminated: into the mapped file, or the caller's */
  size_t klen;
  uint64_t first, size;
  int64_t released; /* seconds since the epoch; 0: held */
  size_t rel_at;    /* where RELEASED is in the file, rel_len its width; 0: not from the file */
  size_t rel_len;
  bool gone; /* forgotten by this session */
};

struct registry {
  struct sr_arena arena;
  const char *text; /* the file, mapped read-only (NULL: no file, or an empty one) */
  size_t len;
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
 * time of the delete, 0 while the container exists, written in ten digits; KEY: the rest of
 * the line).  Plain lines, not JSON: every create and delete reads it, and with thousands of
 * ranges held for the grace period that must cost microseconds per range.  It is written the
 * least a step needs, each write one that a kill cannot cut (a single write within one page):
 * a delete rewrites its line's RELEASED in place (ten digits for ten), a create of a range no
 * line holds appends its line; only the rest (a range taken from another key, forgotten
 * ranges, a field or line that would cross a page, a file by an older seerun) rewrites the
 * whole file (its temporary copy renamed over it), leaving out the ranges whose grace has
 * passed.  The format stays version 2: an older seerun reads and writes the same file. */
#define REGISTRY_HEADER "seerun user namespace registry 2: FIRST SIZE RELEASED KEY\n"
#define RELEASED_WIDTH 10 /* a time of the epoch in seconds until 2286 */
#define PAGE 4096         /* (the smallest page: a write within one is never cut short) */

static int bad_line(sr_error_t *err, size_t line, const char *why)
{
  return sr_error_make(err, 0, "user namespace registry: line %zu: %s", line, why);
}

/* One line at p, its newline before end.  Returns the start of the next one, NULL when the
 * line is malformed. */
static const char *parse_line(const char *text, const char *p, const char *end, struct entry *x)
{
  const char *nl = memchr(p, '\n', (size_t)(end - p));
  if (nl == NULL)
    return NULL;
  unsigned long long v[3];
  const char *at[3];
  for (int k = 0; k < 3; k++) {
    if (p >= nl || *p < '0' || *p > '9')
      return NULL;
    at[k] = p;
    v[k] = 0;
    for (; p < nl && *p >= '0' && *p <= '9'; p++) {
      if (v[k] > (UINT64_MAX - 9) / 10)
        return NULL;
      v[k] = v[k] * 10 + (unsigned)(*p - '0');
    }
    if (p >= nl || *p != ' ')
      return NULL;
    p++;
  }
  if (v[0] > UINT32_MAX || v[1] == 0 || v[1] > UINT32_MAX || v[0] + v[1] > UINT32_MAX + 1ULL ||
      v[2] > INT64_MAX || p == nl)
    return NULL;
  *x = (struct entry){p,      (size_t)(nl - p), v[0], v[1], (int64_t)v[2], (size_t)(at[2] - text),
                      (size_t)(p - 1 - at[2]), false};
  return nl + 1;
}

/* Maps the file and checks its header; parses no line. */
static int map_file(int fd, struct registry *r, sr_error_t *err)
{
  struct stat st;
  if (fstat(fd, &st) < 0)
    return sr_error_sys(err, "user namespace registry: stat");
  if (st.st_size == 0)
    return 0;
  /* Mapped, not read: no copy, and no fresh buffer to fault in for thousands of lines. */
  void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (m == MAP_FAILED)
    return sr_error_sys(err, "user namespace registry: map");
  r->text = m;
  r->len = (size_t)st.st_size;
  size_t hl = strlen(REGISTRY_HEADER);
  if (r->len < hl || memcmp(r->text, REGISTRY_HEADER, hl) != 0)
    return bad_line(err, 1, "not a seerun user namespace registry (version 2)");
  if (r->text[r->len - 1] != '\n')
    return sr_error_make(err, 0, "user namespace registry: no newline at its end (a truncated "
                                 "file?)");
  return 0;
}

static int parse_all(struct registry *r, sr_error_t *err)
{
  if (r->text == NULL)
    return 0;
  const char *p = r->text + strlen(REGISTRY_HEADER), *end = r->text + r->len;
  size_t lines = 0;
  for (const char *c = p; c < end && (c = memchr(c, '\n', (size_t)(end - c))) != NULL; c++)
    lines++;
  r->cap = lines + 1;
  if ((r->v = sr_arena_array(&r->arena, r->cap, sizeof(*r->v))) == NULL)
    return sr_error_make(err, ENOMEM, "user namespace registry");
  for (size_t no = 2; p < end; no++) {
    if ((p = parse_line(r->text, p, end, &r->v[r->n])) == NULL)
      return bad_line(err, no, "not FIRST SIZE RELEASED KEY (a range within 32-bit ids)");
    r->n++;
  }
  return 0;
}

/* The line holding key, parsed into *out; false when there is none.  A delete reads only that
 * line (memmem over the file), not the thousands around it. */
static bool find_line(const struct registry *r, const char *key, struct entry *out)
{
  size_t kl = strlen(key), hl = strlen(REGISTRY_HEADER);
  if (r->text == NULL || kl == 0 || r->len <= hl)
    return false;
  const char *buf = r->text + hl, *end = r->text + r->len;
  for (const char *p = buf; (p = memmem(p, (size_t)(end - p), key, kl)) != NULL; p++) {
    if (p[-1] != ' ' || p + kl >= end || p[kl] != '\n')
      continue;
    const char *nl = memrchr(buf, '\n', (size_t)(p - buf));
    /* The key field of that line starts exactly here (a key may hold spaces). */
    if (parse_line(r->text, nl ? nl + 1 : buf, end, out) && out->key == p && out->klen == kl)
      return true;
  }
  return false;
}

static char *put_u64(char *p, uint64_t v, int width)
{
  char digits[20];
  int n = 0;
  do
    digits[n++] = (char)('0' + v % 10);
  while ((v /= 10) != 0);
  while (n < width)
    digits[n++] = '0';
  while (n)
    *p++ = digits[--n];
  *p++ = ' ';
  return p;
}

static char *put_line(char *p, const struct entry *e)
{
  p = put_u64(put_u64(put_u64(p, e->first, 0), e->size, 0), (uint64_t)e->released,
              RELEASED_WIDTH);
  memcpy(p, e->key, e->klen);
  p += e->klen;
  *p++ = '\n';
  return p;
}

/* The whole file rewritten: the ranges held or in their grace period, those whose grace has
 * passed left out, so that its size (and every create's cost) follows the containers of the
 * grace period, not history. */
static int save(int dirfd, const char *name, const struct sr_userns_pool *pool,
                const struct registry *r, sr_error_t *err)
{
  time_t now = time(NULL);
  size_t cap = sizeof(REGISTRY_HEADER);
  for (size_t i = 0; i < r->n; i++)
    cap += 3 * 21 + r->v[i].klen + 1;
  _cleanup_free_ char *buf = malloc(cap);
  if (buf == NULL)
    return sr_error_make(err, ENOMEM, "user namespace registry");
  char *p = stpcpy(buf, REGISTRY_HEADER);
  for (size_t i = 0; i < r->n; i++)
    if (!r->v[i].gone && !expired(&r->v[i], pool, now))
      p = put_line(p, &r->v[i]);
  return sr_fileio_write_atomic(dirfd, name, buf, (size_t)(p - buf), 0600, err);
}

/* data written at `at` by one write within one page (that a kill cannot cut); 1: it would
 * cross a page (the caller rewrites the file instead). */
static int write_within_page(int fd, size_t at, const char *data, size_t len, sr_error_t *err)
{
  if (at / PAGE != (at + len - 1) / PAGE)
    return 1;
  ssize_t n = pwrite(fd, data, len, (off_t)at);
  if (n != (ssize_t)len)
    return n < 0 ? sr_error_sys(err, "user namespace registry: write")
                 : sr_error_make(err, EIO, "user namespace registry: short write");
  return 0;
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
  *fd = openat(l->dirfd, l->name, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
  if (*fd < 0 && errno != ENOENT)
    return sr_error_sys(err, "user namespace registry: open `%s`", pool->registry);
  return 0;
}

/* The registry under its lock; released (unmapped, unlocked, freed) by _cleanup_session_
 * whether it was opened or not. */
struct session {
  struct registry r;
  struct locked l;
  int fd; /* the file, read-write; -1: there is none yet */
};
#define SESSION_INIT {.l = {.dirfd = -1, .lockfd = -1}, .fd = -1}

static void session_close(struct session *s)
{
  if (s->r.text)
    munmap((void *)s->r.text, s->r.len);
  if (s->fd >= 0)
    close(s->fd);
  unlock(&s->l);
  sr_arena_release(&s->r.arena);
}
#define _cleanup_session_ __attribute__((cleanup(session_close)))

/* full: every line parsed; else the file is only mapped (find_line reads it). */
static int session_open(const struct sr_userns_pool *pool, struct session *s, bool full,
                        sr_error_t *err)
{
  if (lock_registry(pool, &s->l, &s->fd, err) < 0 ||
      (s->fd >= 0 && map_file(s->fd, &s->r, err) < 0))
    return -1;
  return full ? parse_all(&s->r, err) : 0;
}

static int session_save(const struct sr_userns_pool *pool, struct session *s, sr_error_t *err)
{
  return save(s->l.dirfd, s->l.name, pool, &s->r, err);
}

/* e's RELEASED set in place (its width unchanged), else the file rewritten. */
static int set_released(const struct sr_userns_pool *pool, struct session *s, struct entry *e,
                        int64_t released, sr_error_t *err)
{
  e->released = released;
  if (s->fd >= 0 && e->rel_len == RELEASED_WIDTH) {
    char field[24];
    put_u64(field, (uint64_t)released, RELEASED_WIDTH);
    int r = write_within_page(s->fd, e->rel_at, field, RELEASED_WIDTH, err);
    if (r <= 0)
      return r;
  }
  if (s->r.v == NULL && parse_all(&s->r, err) < 0)
    return -1;
  for (size_t i = 0; i < s->r.n; i++) /* (a release found e alone) */
    if (s->r.v[i].rel_at == e->rel_at)
      s->r.v[i].released = released;
  return session_save(pool, s, err);
}

/* e (a range no line holds) appended, else the file rewritten. */
static int add_line(const struct sr_userns_pool *pool, struct session *s, const struct entry *e,
                    sr_error_t *err)
{
  struct registry *r = &s->r;
  if (s->fd >= 0 && r->text) {
    char line[3 * 21 + PATH_MAX + 2];
    if (e->klen <= PATH_MAX) {
      size_t len = (size_t)(put_line(line, e) - line);
      int w = write_within_page(s->fd, r->len, line, len, err);
      if (w <= 0)
        return w;
    }
  }
  return session_save(pool, s, err);
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

/* The first slot of the pool that nothing blocks: not the host's users or groups, not a
 * subordinate id range, not a range held or still in its grace period (with clean, not a
 * range any line holds either: taking it writes one line).  -1: none; -2: out of memory (an
 * interval left out could have been a host user's). */
static int64_t free_slot(const struct sr_userns_pool *pool, const struct registry *r, time_t now,
                         bool clean)
{
  struct blocked b = {0};
  block_file(&b, "/etc/subuid", true);
  block_file(&b, "/etc/subgid", true);
  block_file(&b, "/etc/passwd", false);
  block_file(&b, "/etc/group", false);
  for (size_t i = 0; i < r->n; i++)
    if (!r->v[i].gone && (clean || !expired(&r->v[i], pool, now)))
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
    if (!r->v[i].gone && r->v[i].released && r->v[i].size == pool->size &&
        r->v[i].first >= pool->first &&
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
  size_t kl = strlen(key);
  if (kl == 0 || memchr(key, '\n', kl))
    return sr_error_make(err, 0, "user namespace registry: key `%s`: empty or holds a newline",
                         key);
  /* The key's own line first (memmem, as a release does): a key that holds a range (a
   * sandbox's slot, a restarted container) takes it back reading that line alone. */
  if (session_open(pool, &ss, false, err) < 0)
    return -1;
  struct entry found;
  if (find_line(r, key, &found)) {
    if (found.released != 0 && set_released(pool, &ss, &found, 0, err) < 0)
      return -1;
    out->host_start = (uint32_t)found.first;
    out->size = (uint32_t)found.size;
    return 0;
  }
  if (parse_all(r, err) < 0)
    return -1;
  time_t now = time(NULL);
  struct entry *mine = NULL;
  int ret = 0;
  if (grow(r) < 0)
    return sr_error_make(err, ENOMEM, "user namespace registry");
  int64_t k = free_slot(pool, r, now, true);
  if (k == -2)
    return sr_error_make(err, ENOMEM, "user namespace registry");
  if (k >= 0) {
    mine = &r->v[r->n++];
    *mine = (struct entry){key, kl, pool->first + (uint64_t)k * pool->size, pool->size, 0, 0, 0,
                           false};
    ret = add_line(pool, &ss, mine, err);
  } else {
    if ((k = free_slot(pool, r, now, false)) == -2)
      return sr_error_make(err, ENOMEM, "user namespace registry");
    ssize_t old = -1;
    uint64_t lo;
    if (k >= 0) {
      lo = pool->first + (uint64_t)k * pool->size;
      /* Expired entries overlapping it are forgotten. */
      for (size_t i = 0; i < r->n; i++)
        r->v[i].gone = r->v[i].gone || (r->v[i].first < lo + pool->size &&
                                        lo < r->v[i].first + r->v[i].size);
    } else if ((old = longest_released(pool, r)) >= 0) {
      out->reclaimed_from = r->v[old].released;
      lo = r->v[old].first;
      r->v[old].gone = true; /* its key loses it */
    } else {
      return sr_error_make(err, 0,
                           "user namespace registry `%s`: all %llu ranges are held by "
                           "containers that exist (the policy's userNamespaces.count)",
                           pool->registry, (unsigned long long)pool->count);
    }
    mine = &r->v[r->n++];
    *mine = (struct entry){key, kl, lo, pool->size, 0, 0, 0, false};
    ret = session_save(pool, &ss, err);
  }
  if (ret < 0)
    return -1;
  out->host_start = (uint32_t)mine->first;
  out->size = (uint32_t)mine->size;
  return 0;
}

int sr_userns_registry_release(const struct sr_userns_pool *pool, const char *key, sr_error_t *err)
{
  _cleanup_session_ struct session ss = SESSION_INIT;
  /* Only the key's own line is read, and only its RELEASED written. */
  if (session_open(pool, &ss, false, err) < 0)
    return -1;
  struct entry e;
  if (!find_line(&ss.r, key, &e) || e.released != 0)
    return 0;
  return set_released(pool, &ss, &e, time(NULL), err);
}

int sr_userns_registry_gc(const struct sr_userns_pool *pool, bool all, size_t *freed,
                          sr_error_t *err)
{
  _cleanup_session_ struct session ss = SESSION_INIT;
  struct registry *r = &ss.r;
  *freed = 0;
  if (session_open(pool, &ss, true, err) < 0)
    return -1;
  time_t now = time(NULL);
  for (size_t i = 0; i < r->n; i++)
    if (r->v[i].released && (all || now - r->v[i].released >= pool->grace_seconds)) {
      r->v[i].gone = true;
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
