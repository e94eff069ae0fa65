#include "build.h"

#include "seccomp_cache.h"

#include <seccomp.h>

#include "cleanup.h"
#include "seccomp_filter.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* ---- the key --------------------------------------------------------------------------- */

/* A field added to these structs must be added to the key below (and this check updated):
 * two descriptions that compile differently must never share an entry. */
_Static_assert(sizeof(struct sr_seccomp) == 72, "struct sr_seccomp changed: update the cache key");
_Static_assert(sizeof(struct sr_seccomp_rule) == 40,
               "struct sr_seccomp_rule changed: update the cache key");
_Static_assert(sizeof(struct sr_seccomp_arg) == 32,
               "struct sr_seccomp_arg changed: update the cache key");

/* Fixed-width little-endian integers and length-prefixed strings: unambiguous. */
static void key_u64(struct sr_sha256 *c, uint64_t v)
{
  uint8_t b[8];
  for (int i = 0; i < 8; i++)
    b[i] = (uint8_t)(v >> (8 * i));
  sr_sha256_update(c, b, sizeof(b));
}

static void key_str(struct sr_sha256 *c, const char *s)
{
  key_u64(c, s != NULL);
  if (s) {
    size_t n = strlen(s);
    key_u64(c, n);
    sr_sha256_update(c, s, n);
  }
}

/* The format of the serialization and of the entries: bump it when either changes. */
/* v2: programs carry the ENOSYS stub (seccomp_enosys.h). */
#define KEY_TAG "seerun seccomp cache v2"

void sr_seccomp_cache_key(const struct sr_seccomp *s, uint8_t key[SR_SHA256_LEN])
{
  const struct scmp_version *v = seccomp_version();
  struct sr_sha256 c;

  sr_sha256_init(&c);
  sr_sha256_update(&c, KEY_TAG, sizeof(KEY_TAG));
  /* The library that compiles, not the headers seerun was built with. */
  key_u64(&c, v ? v->major : 0);
  key_u64(&c, v ? v->minor : 0);
  key_u64(&c, v ? v->micro : 0);
  key_u64(&c, seccomp_arch_native());

  key_u64(&c, s->default_action);
  key_u64(&c, s->n_architectures);
  for (size_t i = 0; i < s->n_architectures; i++)
    key_u64(&c, s->architectures[i]);
  key_u64(&c, s->flags);
  /* listenerPath and listenerMetadata do not change the program (and per-container metadata
   * would defeat the cache): they are not in the key. */
  key_u64(&c, s->n_rules);
  for (size_t i = 0; i < s->n_rules; i++) {
    const struct sr_seccomp_rule *r = &s->rules[i];
    key_u64(&c, r->n_names);
    for (size_t j = 0; j < r->n_names; j++)
      key_str(&c, r->names[j]);
    key_u64(&c, r->action);
    key_u64(&c, r->n_args);
    for (size_t j = 0; j < r->n_args; j++) {
      key_u64(&c, r->args[j].index);
      key_u64(&c, r->args[j].value);
      key_u64(&c, r->args[j].value_two);
      key_u64(&c, (uint64_t)(int64_t)r->args[j].op);
    }
  }
  key_u64(&c, s->uses_notify);
  sr_sha256_final(&c, key);
}

/* ---- entries ------------------------------------------------------------------------- */

/* An entry: this header, then n_insns instructions. */
struct entry_header {
  char magic[8];
  uint32_t version;
  uint32_t n_insns;
  uint8_t key[SR_SHA256_LEN];    /* an entry copied or renamed under another key is foreign */
  uint8_t digest[SR_SHA256_LEN]; /* SHA-256 of the instructions: a torn or corrupt entry */
};
_Static_assert(sizeof(struct entry_header) % sizeof(struct sock_filter) == 0, "entry alignment");

static const char entry_magic[8] = {'S', 'R', 'S', 'E', 'C', 'B', 'P', 'F'};
#define ENTRY_VERSION 1
#define ENTRY_MAX (sizeof(struct entry_header) + BPF_MAXINSNS * sizeof(struct sock_filter))

/* Only a directory that nobody but root (or the runtime's own user) can write: an entry is
 * loaded as the container's seccomp filter. */
static bool dir_usable(int dirfd, struct stat *st)
{
  if (fstat(dirfd, st) < 0 || !S_ISDIR(st->st_mode))
    return false;
  if (st->st_uid != 0 && st->st_uid != geteuid())
    return false;
  return (st->st_mode & (S_IWGRP | S_IWOTH)) == 0;
}

static void entry_name(const uint8_t key[SR_SHA256_LEN], char name[2 * SR_SHA256_LEN + 1])
{
  static const char hex[] = "0123456789abcdef";
  for (size_t i = 0; i < SR_SHA256_LEN; i++) {
    name[2 * i] = hex[key[i] >> 4];
    name[2 * i + 1] = hex[key[i] & 0xf];
  }
  name[2 * SR_SHA256_LEN] = '\0';
}

static int read_all(int fd, void *buf, size_t len)
{
  size_t got = 0;
  while (got < len) {
    ssize_t n = pread(fd, (char *)buf + got, len - got, (off_t)got);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return -1;
    got += (size_t)n;
  }
  return 0;
}

/* Reads the entry `name` for `key`; -1 when there is none or it is not to be trusted. */
static int read_entry(int dirfd, const struct stat *dir, const char *name,
                      const uint8_t key[SR_SHA256_LEN], struct sock_filter **insns, size_t *len)
{
  /* O_NOFOLLOW: a symlink planted in place of an entry is not followed; O_NONBLOCK: nor does
   * a FIFO block the container's start. */
  _cleanup_close_ int fd =
      openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK);
  _cleanup_free_ uint8_t *buf = NULL;
  struct entry_header h;
  struct stat st;
  uint8_t digest[SR_SHA256_LEN];
  size_t payload;

  if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != dir->st_uid ||
      (st.st_mode & (S_IWGRP | S_IWOTH)))
    return -1;
  if (st.st_size < (off_t)(sizeof(h) + sizeof(struct sock_filter)) || st.st_size > (off_t)ENTRY_MAX)
    return -1;
  payload = (size_t)st.st_size - sizeof(h);
  if (payload % sizeof(struct sock_filter) != 0)
    return -1;
  buf = malloc((size_t)st.st_size);
  if (buf == NULL || read_all(fd, buf, (size_t)st.st_size) < 0)
    return -1;
  memcpy(&h, buf, sizeof(h));
  if (memcmp(h.magic, entry_magic, sizeof(h.magic)) != 0 || h.version != ENTRY_VERSION ||
      memcmp(h.key, key, SR_SHA256_LEN) != 0 ||
      (size_t)h.n_insns * sizeof(struct sock_filter) != payload)
    return -1;
  sr_sha256(buf + sizeof(h), payload, digest);
  if (memcmp(digest, h.digest, sizeof(digest)) != 0)
    return -1;
  /* The instructions are moved to the front; the buffer becomes the program. */
  memmove(buf, buf + sizeof(h), payload);
  *insns = steal_ptr(buf);
  *len = h.n_insns;
  return 0;
}

static int write_all(int fd, const void *buf, size_t len)
{
  size_t off = 0;
  while (off < len) {
    ssize_t n = write(fd, (const char *)buf + off, len - off);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return -1;
    off += (size_t)n;
  }
  return 0;
}

/* Writes the entry atomically: a reader sees the old entry, none, or the whole new one.
 * Best effort: a cache that cannot be written is only a slower start. */
static void write_entry(int dirfd, const char *name, const uint8_t key[SR_SHA256_LEN],
                        const struct sock_filter *insns, size_t len)
{
  struct entry_header h = {.version = ENTRY_VERSION, .n_insns = (uint32_t)len};
  char tmp[64];
  int fd = -1;

  if (len == 0 || len > BPF_MAXINSNS)
    return; /* the kernel would refuse it: never served from the cache */
  memcpy(h.magic, entry_magic, sizeof(h.magic));
  memcpy(h.key, key, SR_SHA256_LEN);
  sr_sha256(insns, len * sizeof(*insns), h.digest);

  /* A random name: concurrent starts of the same config each write their own file, and the
   * last rename wins with identical content. */
  for (int attempt = 0; attempt < 3 && fd < 0; attempt++) {
    uint64_t nonce = 0;
    if (getrandom(&nonce, sizeof(nonce), GRND_NONBLOCK) != (ssize_t)sizeof(nonce)) {
      struct timespec ts;
      clock_gettime(CLOCK_MONOTONIC, &ts);
      nonce = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    }
    snprintf(tmp, sizeof(tmp), ".tmp-%.16s-%ld-%016llx", name, (long)getpid(),
             (unsigned long long)nonce);
    fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0600);
    if (fd < 0 && errno != EEXIST)
      return;
  }
  if (fd < 0)
    return;
  bool ok = write_all(fd, &h, sizeof(h)) == 0 && write_all(fd, insns, len * sizeof(*insns)) == 0;
  /* No fsync: a torn entry after a crash fails its digest and is rewritten. */
  if (close(fd) < 0)
    ok = false;
  if (!ok || renameat(dirfd, tmp, dirfd, name) < 0)
    unlinkat(dirfd, tmp, 0);
}

int sr_seccomp_cache_open(int rootfd)
{
  if (mkdirat(rootfd, SR_SECCOMP_CACHE_DIR, 0700) < 0 && errno != EEXIST)
    return -1;
  /* O_NOFOLLOW: a symlink in the state root does not redirect the cache. */
  return openat(rootfd, SR_SECCOMP_CACHE_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
}

/* ---- prepare and load ---------------------------------------------------------------- */

static bool returns_notify(const struct sock_filter *insns, size_t len)
{
  for (size_t i = 0; i < len; i++)
    if (insns[i].code == (BPF_RET | BPF_K) &&
        (insns[i].k & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_USER_NOTIF)
      return true;
  return false;
}

int sr_seccomp_cache_prepare(const struct sr_seccomp *s, int cache_dirfd,
                             struct sr_seccomp_prog *out, sr_error_t *err)
{
  uint8_t key[SR_SHA256_LEN];
  char name[2 * SR_SHA256_LEN + 1];
  struct stat dir;
  bool use_cache;

  memset(out, 0, sizeof(*out));
  if (s == NULL)
    return 0;
  out->flags = s->flags;
  use_cache = cache_dirfd >= 0 && dir_usable(cache_dirfd, &dir);
  if (use_cache) {
    sr_seccomp_cache_key(s, key);
    entry_name(key, name);
    if (read_entry(cache_dirfd, &dir, name, key, &out->insns, &out->len) == 0) {
      out->cached = true;
      out->notify = returns_notify(out->insns, out->len);
      return 0;
    }
  }
  if (sr_seccomp_compile(s, &out->insns, &out->len, err) < 0)
    return -1;
  out->notify = returns_notify(out->insns, out->len);
  if (use_cache)
    write_entry(cache_dirfd, name, key, out->insns, out->len);
  return 0;
}

int sr_seccomp_cache_prog_load(const struct sr_seccomp_prog *p, int *notify_fd, sr_error_t *err)
{
  unsigned int flags = p->flags;
  long rc;

  *notify_fd = -1;
  if (p->len == 0)
    return 0;
  if (p->len > USHRT_MAX)
    return sr_error_make(err, EINVAL, "seccomp: load filter: %zu instructions", p->len);
  if (p->notify) {
    flags |= SECCOMP_FILTER_FLAG_NEW_LISTENER;
    /* The kernel refuses TSYNC with a listener unless a failed sync is reported as ESRCH
     * (the return value is the fd then, not a thread id). */
    if (flags & SECCOMP_FILTER_FLAG_TSYNC)
      flags |= SECCOMP_FILTER_FLAG_TSYNC_ESRCH;
  }
  struct sock_fprog prog = {.len = (unsigned short)p->len, .filter = p->insns};
  rc = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);
  if (rc < 0) {
    if (errno == EACCES)
      return sr_error_make(err, EACCES,
                           "seccomp: load filter (no_new_privs is not set and the process lacks "
                           "CAP_SYS_ADMIN)");
    if (errno == ESRCH && (flags & SECCOMP_FILTER_FLAG_TSYNC))
      return sr_error_make(err, ESRCH,
                           "seccomp: load filter: another thread could not be synchronized "
                           "(SECCOMP_FILTER_FLAG_TSYNC)");
    return sr_error_sys(err, "seccomp: load filter");
  }
  if (p->notify) {
    *notify_fd = (int)rc;
    return 0;
  }
  if (rc > 0) /* TSYNC without TSYNC_ESRCH: the id of a thread that could not be synchronized */
    return sr_error_make(err, ESRCH,
                         "seccomp: load filter: another thread could not be synchronized "
                         "(SECCOMP_FILTER_FLAG_TSYNC)");
  return 0;
}

void sr_seccomp_cache_prog_release(struct sr_seccomp_prog *p)
{
  free(p->insns);
  memset(p, 0, sizeof(*p));
}

int sr_seccomp_cache_install(const struct sr_seccomp *s, int cache_dirfd, int *notify_fd,
                             sr_error_t *err)
{
  struct sr_seccomp_prog p;
  int rc;

  *notify_fd = -1;
  if (sr_seccomp_cache_prepare(s, cache_dirfd, &p, err) < 0)
    return -1;
  rc = sr_seccomp_cache_prog_load(&p, notify_fd, err);
  sr_seccomp_cache_prog_release(&p);
  return rc;
}
