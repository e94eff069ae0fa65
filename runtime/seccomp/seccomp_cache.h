/* A cache of compiled config.json seccomp filters.
 *
 * Compiling linux.seccomp with libseccomp costs milliseconds per container (a podman-sized
 * profile: hundreds of names, three architectures); the BPF it produces depends only on the
 * filter's description and on libseccomp.  So the program libseccomp exports is kept under a
 * root-owned directory (the caller's <state root>/.seccomp-cache, mode 0700), named by the
 * SHA-256 of a canonical serialization of struct sr_seccomp, libseccomp's version and the
 * native architecture, and loaded from there with the raw seccomp(2) syscall.
 *
 * The cache is an optimization only: a directory that is not safe (not owned by root or by
 * the caller, writable by group or others) is not used, an entry that is corrupt, foreign or
 * not a plain file is recompiled and replaced, and a failure to write an entry is ignored.
 * The default filter (seccomp_default.h) never comes from here. */
#ifndef SEERUN_SECCOMP_CACHE_H
#define SEERUN_SECCOMP_CACHE_H

#include <linux/filter.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "error.h"
#include "sha256.h"

/* ---- the cache directory ------------------------------------------------------------- */

/* Its name under the state root. */
#define SR_SECCOMP_CACHE_DIR ".seccomp-cache"

/* Opens the cache directory under the state root `rootfd`, creating it (mode 0700) when
 * missing.  Returns the fd (O_CLOEXEC) or -1: the cache is an optimization, so any failure
 * (a read-only state root, a symlink in its place) means no cache, never an error.  Whether
 * the directory is safe to use is checked at each use (sr_seccomp_cache_prepare). */
int sr_seccomp_cache_open(int rootfd);

/* ---- compiled filters ---------------------------------------------------------------- */

/* A config filter as a BPF program, ready for seccomp(2). */
struct sr_seccomp_prog {
  struct sock_filter *insns; /* malloc'd; NULL (len 0) for "no filter" */
  size_t len;
  unsigned int flags; /* SECCOMP_FILTER_FLAG_* of the config, nothing added */
  bool notify;        /* the program returns SECCOMP_RET_USER_NOTIF: load asks for a listener */
  bool cached;        /* read from a cache entry rather than compiled */
};

/* The cache key of `s`: SHA-256 over every field of struct sr_seccomp in order (names and
 * strings length-prefixed), the running libseccomp's version and its native architecture. */
void sr_seccomp_cache_key(const struct sr_seccomp *s, uint8_t key[SR_SHA256_LEN]);

/* Compiles `s`, or reads it from the cache directory `cache_dirfd` (-1: no cache), into *out
 * (release it with sr_seccomp_cache_prog_release).  A compiled program is written to the cache
 * (atomically: a temporary file renamed over the entry).  Errors are sr_seccomp_install's
 * for the description; cache problems are not errors.  s == NULL gives an empty program.
 *
 * No syscall here changes the calling process: the runtime can prepare the program before
 * it forks the container process, which then only loads it (sr_seccomp_cache_prog_load) and never
 * needs the cache directory, its uid, or libseccomp. */
int sr_seccomp_cache_prepare(const struct sr_seccomp *s, int cache_dirfd,
                             struct sr_seccomp_prog *out, sr_error_t *err);

/* Loads `p` into the calling thread with seccomp(SECCOMP_SET_MODE_FILTER) and exactly the
 * config's flags (TSYNC, LOG, SPEC_ALLOW, ...), plus NEW_LISTENER when the program notifies
 * (and TSYNC_ESRCH with TSYNC, which the kernel requires alongside a listener, as libseccomp
 * does).  *notify_fd is the listener (O_CLOEXEC, owned by the caller) or -1.  An empty
 * program loads nothing.  The contract is sr_seccomp_install's: no_new_privs or
 * CAP_SYS_ADMIN is the caller's business, and the errors read the same. */
int sr_seccomp_cache_prog_load(const struct sr_seccomp_prog *p, int *notify_fd, sr_error_t *err);

void sr_seccomp_cache_prog_release(struct sr_seccomp_prog *p);

/* sr_seccomp_install through the cache: prepare, then load, in the calling process. */
int sr_seccomp_cache_install(const struct sr_seccomp *s, int cache_dirfd, int *notify_fd,
                             sr_error_t *err);

#endif
