#include "build.h"

#include "statedir.h"

#include "cleanup.h"
#include "dir.h"
#include "fileio.h"
#include "proc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define TMP_PREFIX ".new-"

/* The id as it may appear in a one-line message: control and non-ASCII bytes escaped, at most
 * 64 bytes of it. */
static void printable_id(const char *id, char *buf, size_t size)
{
  size_t n = 0;
  for (const unsigned char *p = (const unsigned char *)id; *p && n + 8 < size; p++) {
    if (p - (const unsigned char *)id >= 64) {
      n += (size_t)snprintf(buf + n, size - n, "...");
      break;
    }
    if (*p < 0x20 || *p >= 0x7f || *p == '"' || *p == '\\')
      n += (size_t)snprintf(buf + n, size - n, "\\x%02x", *p);
    else
      buf[n++] = (char)*p;
  }
  buf[n] = '\0';
}

int sr_statedir_validate_id(const char *id, sr_error_t *err)
{
  size_t len = id ? strlen(id) : 0;
  char shown[300];
  if (len == 0)
    return sr_error_make(err, 0, "invalid container id: it cannot be empty");
  printable_id(id, shown, sizeof(shown));
  /* The id names the state directory and the cgroup: one path component. */
  if (len > SR_ID_MAX)
    return sr_error_make(err, 0, "invalid container id \"%s\": longer than %d bytes", shown,
                         SR_ID_MAX);
  /* Names starting with "." are seerun's own in the state root (.new-*, .seccomp-cache). */
  if (id[0] == '.')
    return sr_error_make(err, 0, "invalid container id \"%s\": must not start with \".\"", id);
  for (const char *p = id; *p; p++) {
    char c = *p;
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '+' || c == '-' || c == '.';
    if (!ok)
      return sr_error_make(err, 0,
                           "invalid container id \"%s\": only letters, digits and _ + - . "
                           "are allowed",
                           shown);
  }
  return 0;
}

/* Whoever can write the state directory can plant a container record whose pid and cgroup
 * are someone else's, for `kill` and `delete` to act on: it must be ours and closed to others. */
static int check_root_fd(int fd, const char *root, sr_error_t *err)
{
  char what[PATH_MAX + 32] = "the state directory (--root)";
  if (root)
    snprintf(what, sizeof(what), "state directory `%s`", root);
  struct stat st;
  if (fstat(fd, &st) < 0)
    return sr_error_sys(err, "stat %s", what);
  if (st.st_uid != geteuid())
    return sr_error_make(err, 0, "%s belongs to uid %u, not to us: refusing it", what,
                         (unsigned)st.st_uid);
  if (st.st_mode & (S_IWGRP | S_IWOTH))
    return sr_error_make(err, 0, "%s is writable by others (mode %04o): refusing it", what,
                         (unsigned)(st.st_mode & 07777));
  return 0;
}

int sr_statedir_open_root(const char *root, bool create, int *rootfd, sr_error_t *err)
{
  if (create && sr_dir_mkdir_p(root, 0700, err) < 0)
    return sr_error_wrap(err, "state directory");
  _cleanup_close_ int fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return sr_error_sys(err, "open state directory `%s`", root);
  if (check_root_fd(fd, root, err) < 0)
    return -1;
  *rootfd = steal_fd(fd);
  return 0;
}

void sr_statedir_free(struct sr_container *c)
{
  if (c->dirfd >= 0)
    close(c->dirfd);
  if (c->index_lock >= 0)
    close(c->index_lock);
  if (c->rec)
    sr_state_record_free(c->rec);
  if (c->file_rec)
    sr_state_record_free(c->file_rec);
  free(c->unverified);
  free(c->damage);
  free(c->id);
  free(c);
}

static struct sr_container *container_new(int rootfd, const char *id)
{
  struct sr_container *c = calloc(1, sizeof(*c));
  if (c == NULL)
    return NULL;
  c->rootfd = rootfd;
  c->dirfd = -1;
  c->index_lock = -1;
  c->id = strdup(id);
  if (c->id == NULL) {
    free(c);
    return NULL;
  }
  return c;
}

#define STATE_FILE "state.json"
#define RECOVERY_FILE "recovery.json"

#define INDEX_DIR ".index"

/* The index of a container (statedir.h, "The index"): outside its directory, so that what a
 * container could reach there cannot say which process and cgroup are its own. */
static int index_dir(int rootfd, bool create, sr_error_t *err)
{
  if (create && mkdirat(rootfd, INDEX_DIR, 0700) < 0 && errno != EEXIST)
    return sr_error_sys(err, "create `" INDEX_DIR "` in the state directory");
  int fd = openat(rootfd, INDEX_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0)
    return sr_error_sys(err, "open `" INDEX_DIR "` in the state directory");
  return fd;
}

static int write_index(int rootfd, const struct sr_state_record *rec, sr_error_t *err)
{
  struct sr_state_record idx = *rec; /* shallow: only read, never freed */
  idx.annotation_keys = idx.annotation_values = NULL;
  idx.n_annotations = 0;
  _cleanup_free_ char *buf = NULL;
  size_t len;
  _cleanup_close_ int fd = index_dir(rootfd, true, err);
  if (fd < 0 || sr_state_record_serialize(&idx, &buf, &len, err) < 0)
    return sr_error_wrap(err, "index of container \"%s\"", rec->id);
  /* Replaced atomically.  The temporary is named after the writer, not the id: an id may be as
   * long as a name can be (SR_ID_MAX), and one process writes one container's index. */
  char tmp[32];
  snprintf(tmp, sizeof(tmp), ".w%d.tmp", (int)getpid());
  _cleanup_close_ int tfd =
      openat(fd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (tfd < 0)
    return sr_error_sys(err, "index of container \"%s\": create `%s`", rec->id, tmp);
  if (sr_fileio_write_all(tfd, buf, len) < 0 || renameat(fd, tmp, fd, rec->id) < 0) {
    int saved = errno;
    unlinkat(fd, tmp, 0);
    return sr_error_make(err, saved, "index of container \"%s\": write `" INDEX_DIR "/%s`",
                         rec->id, rec->id);
  }
  return 0;
}

#define INDEX_MAX_SIZE (1 << 20)

static int read_index_text(int rootfd, const char *id, char **buf, size_t *len, sr_error_t *err)
{
  _cleanup_close_ int fd = index_dir(rootfd, false, err);
  return fd < 0 || sr_fileio_read_at(fd, id, INDEX_MAX_SIZE, buf, len, err) < 0 ? -1 : 0;
}

static int parse_index(const char *id, const char *buf, size_t len, struct sr_state_record **rec,
                       sr_error_t *err)
{
  if (sr_state_record_parse(buf, len, rec, err) < 0)
    return sr_error_wrap(err, "the index `" INDEX_DIR "/%s`", id);
  return 0;
}

static int read_index(int rootfd, const char *id, struct sr_state_record **rec, sr_error_t *err)
{
  _cleanup_free_ char *buf = NULL;
  size_t len;
  if (read_index_text(rootfd, id, &buf, &len, err) < 0)
    return -1;
  return parse_index(id, buf, len, rec, err);
}

/* The index first (with_index: the create's own saves), so that it is never behind what
 * state.json says; without it recovery.json first, so that a crash between the two writes
 * leaves recovery.json ahead, never behind.  recovery.json is the record without what
 * cleaning up does not need (annotations, decided capabilities): small, and serialized and
 * parsed by the same code as state.json.  Once the index is written it is not rewritten:
 * delete --force then acts on the index alone, and reads recovery.json only when there is no
 * usable index, as an unverified record whose process and cgroup are left alone
 * (sr_statedir_load_damaged) -- so rewriting it at each step (a new inode and a rename
 * each) would change what no command acts on. */
static int write_record(int rootfd, bool with_index, int dirfd, const struct sr_state_record *rec,
                        size_t max, bool unpublished, sr_error_t *err)
{
  /* In a directory not published yet nothing reads a file half-written: no temporary. */
  int (*write_file)(int, const char *, const void *, size_t, mode_t, sr_error_t *) =
      unpublished ? sr_fileio_write_new : sr_fileio_write_atomic;
  struct sr_state_record small = *rec; /* shallow: only read, never freed */
  small.annotation_keys = small.annotation_values = NULL;
  small.n_annotations = 0;
  small.has_decided_caps = false;
  _cleanup_free_ char *rbuf = NULL;
  _cleanup_free_ char *buf = NULL;
  size_t rlen = 0, len;
  if ((!with_index && sr_state_record_serialize(&small, &rbuf, &rlen, err) < 0) ||
      sr_state_record_serialize(rec, &buf, &len, err) < 0)
    return -1;
  /* A record larger than read_record takes would make the container unmanageable: only
   * config.json's annotations can make it that large. */
  if (len > max)
    return sr_error_config(err, "annotations", NULL,
                           "annotations: the container's record (%s) would be %zu bytes, more "
                           "than %zu (create admits half of the %u bytes %s may hold, for it to "
                           "grow); the annotations take most of it: make them smaller",
                           STATE_FILE, len, max, SR_STATE_MAX_SIZE, STATE_FILE);
  if (with_index ? write_index(rootfd, rec, err) < 0
                 : write_file(dirfd, RECOVERY_FILE, rbuf, rlen, 0600, err) < 0)
    return -1;
  return write_file(dirfd, STATE_FILE, buf, len, 0600, err);
}

static bool str_differs(const char *a, const char *b)
{
  return strcmp(a ? a : "", b ? b : "") != 0;
}

/* The first field that decides something on which state.json and the index disagree, with both
 * values, in buf; false when they agree.  The annotations decide nothing. */
static bool record_differs(const struct sr_state_record *f, const struct sr_state_record *x,
                           char *buf, size_t size)
{
#define DIFF_INT(field, name)                                                                   \
  if (f->field != x->field) {                                                                   \
    snprintf(buf, size, "%s (%lld in state.json, %lld in the index)", name,                    \
             (long long)f->field,                                                               \
             (long long)x->field);                                                             \
    return true;                                                                                \
  }
#define DIFF_STR(field, name)                                                                   \
  if (str_differs(f->field, x->field)) {                                                        \
    snprintf(buf, size, "%s (`%.200s` in state.json, `%.200s` in the index)", name,            \
             f->field ? f->field : "", x->field ? x->field : "");                              \
    return true;                                                                                \
  }
  DIFF_STR(id, "id")
  DIFF_INT(pid, "pid")
  DIFF_INT(pid_start, "pidStartTime")
  DIFF_INT(own_userns, "ownUserns")
  DIFF_INT(cgroup_version, "cgroup.version")
  DIFF_STR(cgroup_path, "cgroup.path")
  DIFF_INT(cgroup_created, "cgroup.created")
  DIFF_INT(systemd_cgroup, "cgroup.systemd")
  DIFF_INT(phase, "phase")
  DIFF_INT(creator_pid, "creatorPid")
  DIFF_INT(creator_start, "creatorStartTime")
  DIFF_INT(supervisor_pid, "supervisor.pid")
  DIFF_INT(supervisor_start, "supervisor.startTime")
  DIFF_STR(profile, "decided.profile")
  DIFF_INT(network_granted, "decided.networkGranted")
  DIFF_INT(builtin_seccomp, "decided.builtinSeccomp")
  DIFF_INT(egress_proxy, "decided.egressProxy")
  DIFF_INT(landlock_abi, "decided.landlock")
  DIFF_INT(has_decided_caps, "decided.capabilities")
  for (int i = 0; i < 5; i++)
    DIFF_INT(decided_caps[i], "decided.capabilities")
  DIFF_STR(config_digest, "configDigest")
  DIFF_STR(bundle, "bundle")
  DIFF_STR(rootfs, "rootfs")
#undef DIFF_INT
#undef DIFF_STR
  return false;
}

/* The index's record is what commands act on; state.json keeps only its annotations. */
static void adopt_index(struct sr_container *c, struct sr_state_record *idx)
{
  if (c->rec) {
    idx->annotation_keys = c->rec->annotation_keys;
    idx->annotation_values = c->rec->annotation_values;
    idx->n_annotations = c->rec->n_annotations;
  }
  c->file_rec = c->rec;
  c->rec = idx;
}

/* Nothing confirms the record (no index): it is read as a container that never started, with
 * no process, cgroup or supervisor to act on; what it names is told, and left alone. */
static int neutralise(struct sr_container *c, const char *why, sr_error_t *err)
{
  struct sr_state_record *r = c->rec;
  if (r->pid > 0 || r->cgroup_version || r->supervisor_pid > 0) {
    if (asprintf(&c->unverified,
                 "container \"%s\": %s: the process (pid %d), cgroup (`%s`) and supervisor (pid "
                 "%d) that its record names were left alone",
                 c->id, why, (int)r->pid, r->cgroup_version ? r->cgroup_path : "none",
                 (int)r->supervisor_pid) < 0) {
      c->unverified = NULL;
      return sr_error_make(err, ENOMEM, "container \"%s\"", c->id);
    }
  }
  r->phase = SR_PHASE_CREATED;
  r->creator_pid = 0;
  r->pid = 0;
  r->cgroup_version = 0;
  r->cgroup_created = false;
  r->supervisor_pid = 0;
  r->network_granted = false;
  r->has_decided_caps = false;
  r->config_digest = NULL; /* nothing confirms the config.json copy either: no hooks from it */
  return 0;
}

#define NO_INDEX "it has no index (`" INDEX_DIR "/%s` in the state directory) to confirm it"

/* state.json is read: takes the deciding fields from the index (statedir.h, "The index").  A
 * state.json that disagrees with it is refused, unless one of them is still "creating": create
 * writes the index first, so a create at work (or killed between its writes) leaves state.json
 * a step behind.  Either way what is acted on is the index's. */
/* ibuf: the index's text, read by the caller (NULL: read here). */
static int verify_record(struct sr_container *c, const char *ibuf, size_t ilen, sr_error_t *err)
{
  _cleanup_record_ struct sr_state_record *idx = NULL;
  sr_error_t why = NULL;
  char text[600];
  if ((ibuf ? parse_index(c->id, ibuf, ilen, &idx, &why)
            : read_index(c->rootfd, c->id, &idx, &why)) < 0) {
    bool missing = why->status == ENOENT;
    _cleanup_free_ char *t = sr_error_text(why);
    sr_error_free(&why);
    if (missing)
      snprintf(text, sizeof(text), NO_INDEX, c->id);
    else
      snprintf(text, sizeof(text), "its index is unusable (%s)", t ? t : "");
    return neutralise(c, text, err);
  }
  char diff[512];
  if (record_differs(c->rec, idx, diff, sizeof(diff))) {
    bool settling = c->rec->phase == SR_PHASE_CREATING || idx->phase == SR_PHASE_CREATING;
    if (!settling)
      return sr_error_record(err,
                             "container \"%s\": " SR_RECORD_NOT_OURS ": its %s "
                           "disagrees with the index `" INDEX_DIR "/%s` in the state "
                           "directory, which create wrote: refusing to act on it; `delete "
                           "--force` removes what the index records",
                           c->id, diff, c->id);
  }
  adopt_index(c, steal_ptr(idx));
  return 0;
}

static int unlink_entry(int dirfd, const char *name)
{
  if (unlinkat(dirfd, name, 0) == 0 || errno == ENOENT)
    return 0;
  if (errno == EISDIR && unlinkat(dirfd, name, AT_REMOVEDIR) == 0)
    return 0;
  return -1;
}

/* Everything else first, then recovery.json, then state.json: a removal cut short leaves a
 * directory that still loads, or an empty one. */
static int remove_dir_contents(int dirfd)
{
  _cleanup_dir_ DIR *d = sr_dir_open_fd(dirfd);
  if (d == NULL)
    return -1;
  struct dirent *de;
  int ret = 0;
  while ((de = readdir(d)) != NULL) {
    if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
        strcmp(de->d_name, STATE_FILE) == 0 || strcmp(de->d_name, RECOVERY_FILE) == 0)
      continue;
    if (unlink_entry(dirfd, de->d_name) < 0)
      ret = -1;
  }
  SR_KILL_POINT("delete.before-records-removal");
  if (unlink_entry(dirfd, RECOVERY_FILE) < 0)
    ret = -1;
  SR_KILL_POINT("delete.before-state-removal");
  if (unlink_entry(dirfd, STATE_FILE) < 0)
    ret = -1;
  return ret;
}

static void sweep_stale_tmp(int rootfd);

static void unlink_index(int rootfd, const char *id)
{
  _cleanup_close_ int fd = openat(rootfd, INDEX_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC |
                                                         O_NOFOLLOW);
  if (fd >= 0)
    unlinkat(fd, id, 0);
}

/* Records the container in its temporary directory tmp (dirfd) and publishes it under its id,
 * taking the index directory's lock (*ilock, which the caller holds on) before the rename; on
 * failure the caller removes tmp. */
static int record_and_publish(int rootfd, const char *tmp, int dirfd, const char *id,
                              const struct sr_state_record *rec, const char *config,
                              size_t config_len, int *ilock, sr_error_t *err)
{
  if (write_record(rootfd, false, dirfd, rec, SR_STATE_MAX_CREATE_SIZE, true, err) < 0 ||
      (config && sr_fileio_write_new(dirfd, "config.json", config, config_len, 0600, err) < 0))
    return sr_error_wrap(err, "record container \"%s\" in the state directory", id);
  SR_KILL_POINT("create.before-publish");
  /* Publishing and the first index write are one step for delete --force of an orphan index
   * (sr_statedir_load_damaged), which holds this lock while it acts on one. */
  *ilock = index_dir(rootfd, true, err);
  if (*ilock < 0)
    return -1;
  if (flock(*ilock, LOCK_EX) < 0)
    return sr_error_sys(err, "lock `" INDEX_DIR "` in the state directory");
  if (renameat2(rootfd, tmp, rootfd, id, RENAME_NOREPLACE) < 0) {
    if (errno == EEXIST)
      return sr_error_make(err, 0, "container with id \"%s\" already exists", id);
    return sr_error_sys(err, "publish state directory of \"%s\"", id);
  }
  return 0;
}

int sr_statedir_begin(int rootfd, const char *id, struct sr_state_record *rec, const char *config,
                      size_t config_len, struct sr_container **out, sr_error_t *err)
{
  _cleanup_close_ int ilock = -1; /* held until the index is written: released on every return */
  char tmp[64];
  struct timespec ts;
  /* What an earlier create left when it was killed before publishing. */
  sweep_stale_tmp(rootfd);
  clock_gettime(CLOCK_MONOTONIC, &ts);
  snprintf(tmp, sizeof(tmp), TMP_PREFIX "%d-%lx", getpid(), (unsigned long)ts.tv_nsec);
  if (mkdirat(rootfd, tmp, 0700) < 0)
    return sr_error_sys(err, "create the state directory of container \"%s\"", id);
  _cleanup_close_ int dirfd = openat(rootfd, tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dirfd < 0 || flock(dirfd, LOCK_EX) < 0) {
    int saved = errno;
    unlinkat(rootfd, tmp, AT_REMOVEDIR);
    return sr_error_make(err, saved, "lock state directory");
  }
  if (record_and_publish(rootfd, tmp, dirfd, id, rec, config, config_len, &ilock, err) < 0) {
    remove_dir_contents(dirfd);
    unlinkat(rootfd, tmp, AT_REMOVEDIR);
    return -1;
  }
  SR_KILL_POINT("create.before-index");
  struct sr_container *c = NULL;
  int r = write_index(rootfd, rec, err);
  if (r == 0 && (c = container_new(rootfd, id)) == NULL)
    r = sr_error_make(err, ENOMEM, "create container");
  if (r < 0) {
    /* Published but unusable: undo, so that the id is free again. */
    unlink_index(rootfd, id);
    remove_dir_contents(dirfd);
    unlinkat(rootfd, id, AT_REMOVEDIR);
    return -1;
  }
  c->dirfd = steal_fd(dirfd);
  c->writes_index = true;
  *out = c;
  return 0;
}

/* Opens (and with lock, locks) the directory of a container; no record read yet.
 * checked_root: the caller checked rootfd already (a reader, for many containers). */
static int open_container_in(int rootfd, bool checked_root, const char *id, bool lock,
                             struct sr_container **out, sr_error_t *err)
{
  if (sr_statedir_validate_id(id, err) < 0 ||
      (!checked_root && check_root_fd(rootfd, NULL, err) < 0))
    return -1;
  _cleanup_container_ struct sr_container *c = container_new(rootfd, id);
  if (c == NULL)
    return sr_error_make(err, ENOMEM, "load container");
  c->dirfd = openat(rootfd, id, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  if (c->dirfd < 0) {
    if (errno == ENOENT) {
      /* A create of this id killed before publishing may have left its temporary. */
      if (lock)
        sweep_stale_tmp(rootfd);
      return sr_error_make(err, ENOENT, "container \"%s\" does not exist", id);
    }
    return sr_error_sys(err, "open state of container \"%s\"", id);
  }
  if (lock) {
    while (flock(c->dirfd, LOCK_EX) < 0)
      if (errno != EINTR)
        return sr_error_sys(err, "lock container \"%s\"", id);
    /* It was deleted while we waited for the lock. */
    struct stat st;
    if (fstat(c->dirfd, &st) < 0 || st.st_nlink == 0)
      return sr_error_make(err, ENOENT, "container \"%s\" does not exist", id);
  }
  *out = steal_ptr(c);
  return 0;
}

/* text: the file's text, kept for the caller (NULL: freed here). */
static int read_record_text(int dirfd, const char *name, struct sr_state_record **rec,
                            char **text, size_t *len, sr_error_t *err)
{
  _cleanup_free_ char *buf = NULL;
  size_t n;
  if (sr_fileio_read_at(dirfd, name, SR_STATE_MAX_SIZE, &buf, &n, err) < 0 ||
      sr_state_record_parse(buf, n, rec, err) < 0)
    return -1;
  if (text) {
    *text = steal_ptr(buf);
    *len = n;
  }
  return 0;
}

static int read_record(int dirfd, const char *name, struct sr_state_record **rec,
                       sr_error_t *err)
{
  return read_record_text(dirfd, name, rec, NULL, NULL, err);
}

/* Not locked by us: is someone else (a delete between removing state.json and the directory)
 * holding the container's lock? */
static bool locked_by_other(int dirfd)
{
  if (flock(dirfd, LOCK_SH | LOCK_NB) == 0) {
    flock(dirfd, LOCK_UN);
    return false;
  }
  return errno == EWOULDBLOCK;
}

static bool dir_is_empty(int dirfd)
{
  _cleanup_dir_ DIR *d = sr_dir_open_fd(dirfd);
  if (d == NULL)
    return false;
  struct dirent *de;
  while ((de = readdir(d)) != NULL)
    if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
      return false;
  return true;
}

/* state.json is missing: is the container gone rather than damaged?  It is when the directory
 * was removed meanwhile, when a delete holds it between removing state.json and the directory,
 * and when it is empty: a delete killed just before its last step (which, holding the lock,
 * we finish). */
static bool container_gone(struct sr_container *c, bool locked)
{
  struct stat st;
  if (fstat(c->dirfd, &st) == 0 && st.st_nlink == 0)
    return true;
  if (!locked && locked_by_other(c->dirfd))
    return true;
  if (!dir_is_empty(c->dirfd))
    return false;
  if (locked)
    unlinkat(c->rootfd, c->id, AT_REMOVEDIR);
  return true;
}

/* indexfd: the index directory, or -1 to open it here. */
static int load_in(int rootfd, bool checked_root, int indexfd, const char *id, bool lock,
                   struct sr_container **out, sr_error_t *err)
{
  _cleanup_container_ struct sr_container *c = NULL;
  if (open_container_in(rootfd, checked_root, id, lock, &c, err) < 0)
    return -1;
  _cleanup_free_ char *text = NULL, *itext = NULL;
  size_t len = 0, ilen = 0;
  if (read_record_text(c->dirfd, STATE_FILE, &c->rec, &text, &len, err) < 0) {
    if ((*err)->status == ENOENT && container_gone(c, lock)) {
      sr_error_free(err);
      return sr_error_make(err, ENOENT, "container \"%s\" does not exist", id);
    }
    /* Never ENOENT: `delete --force` takes that for "nothing to delete". */
    _cleanup_free_ char *why = sr_error_text(*err);
    sr_error_free(err);
    return sr_error_make(err, 0, "container \"%s\": its record is unusable (%s): `delete "
                                 "--force` removes what is left of it",
                         id, why ? why : STATE_FILE);
  }
  /* The index create wrote, the same text: the record is its own (what verify_record would
   * adopt, parsed once); any other text is compared field by field. */
  sr_error_t ie = NULL;
  bool have_index = indexfd >= 0
                        ? sr_fileio_read_at(indexfd, id, INDEX_MAX_SIZE, &itext, &ilen, &ie) == 0
                        : read_index_text(rootfd, id, &itext, &ilen, &ie) == 0;
  sr_error_free(&ie);
  if (!(have_index && ilen == len && memcmp(itext, text, len) == 0) &&
      verify_record(c, have_index ? itext : NULL, ilen, err) < 0)
    return -1;
  *out = steal_ptr(c);
  return 0;
}

int sr_statedir_load(int rootfd, const char *id, bool lock, struct sr_container **out,
                     sr_error_t *err)
{
  return load_in(rootfd, false, -1, id, lock, out, err);
}

int sr_statedir_reader_open(int rootfd, struct sr_statedir_reader *r, sr_error_t *err)
{
  *r = (struct sr_statedir_reader){.rootfd = -1, .indexfd = -1};
  if (check_root_fd(rootfd, NULL, err) < 0)
    return -1;
  r->rootfd = rootfd;
  /* No index directory yet (no container was ever created): each load says so. */
  r->indexfd = openat(rootfd, INDEX_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  return 0;
}

int sr_statedir_reader_load(const struct sr_statedir_reader *r, const char *id,
                            struct sr_container **out, sr_error_t *err)
{
  if (r->indexfd < 0)
    return sr_statedir_load(r->rootfd, id, false, out, err);
  return load_in(r->rootfd, true, r->indexfd, id, false, out, err);
}

void sr_statedir_reader_close(struct sr_statedir_reader *r)
{
  if (r->indexfd >= 0)
    close(r->indexfd);
  *r = (struct sr_statedir_reader){.rootfd = -1, .indexfd = -1};
}

/* The container's directory is gone (removed by someone else), its index is not: it is what
 * is left to act on.  Under the index directory's lock, so that no create publishes the id
 * meanwhile (its cgroup would be the same). */
static int load_orphan_index(int rootfd, const char *id, struct sr_container **out,
                             sr_error_t *err)
{
  sr_error_t e = NULL;
  _cleanup_close_ int fd = index_dir(rootfd, false, &e);
  sr_error_free(&e);
  if (fd < 0 || flock(fd, LOCK_EX) < 0)
    return sr_error_make(err, ENOENT, "container \"%s\" does not exist", id);
  struct stat st;
  _cleanup_record_ struct sr_state_record *idx = NULL;
  if (fstatat(rootfd, id, &st, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT ||
      read_index(rootfd, id, &idx, &e) < 0 || idx->id == NULL || strcmp(idx->id, id) != 0) {
    sr_error_free(&e);
    return sr_error_make(err, ENOENT, "container \"%s\" does not exist", id);
  }
  _cleanup_container_ struct sr_container *c = container_new(rootfd, id);
  if (c == NULL ||
      asprintf(&c->damage, "its state directory is gone; its index `" INDEX_DIR "/%s` names "
                           "pid %d and cgroup `%s`",
               id, (int)idx->pid, idx->cgroup_version ? idx->cgroup_path : "none") < 0) {
    if (c)
      c->damage = NULL;
    return sr_error_make(err, ENOMEM, "container \"%s\"", id);
  }
  c->rec = steal_ptr(idx);
  c->index_lock = steal_fd(fd);
  *out = steal_ptr(c);
  return 0;
}

int sr_statedir_load_damaged(int rootfd, const char *id, struct sr_container **out, sr_error_t *err)
{
  _cleanup_container_ struct sr_container *c = NULL;
  if (open_container_in(rootfd, false, id, true, &c, err) < 0) {
    if ((*err)->status != ENOENT || sr_statedir_validate_id(id, NULL) < 0)
      return -1;
    sr_error_free(err);
    return load_orphan_index(rootfd, id, out, err);
  }
  sr_error_t why = NULL;
  if (read_record(c->dirfd, STATE_FILE, &c->rec, &why) < 0) {
    c->damage = sr_error_text(why);
    sr_error_free(&why);
    if (c->damage == NULL)
      return sr_error_make(err, ENOMEM, "container \"%s\"", id);
  }
  struct sr_state_record *idx = NULL;
  if (read_index(rootfd, id, &idx, &why) == 0 && idx->id && strcmp(idx->id, id) == 0) {
    char diff[512];
    if (c->rec && record_differs(c->rec, idx, diff, sizeof(diff))) {
      /* Rewritten: only what the index records is acted on; what state.json names is told. */
      if (asprintf(&c->damage, SR_RECORD_NOT_OURS ": its %s disagrees with the "
                               "index `" INDEX_DIR "/%s`",
                   diff, id) < 0 ||
          asprintf(&c->unverified, "container \"%s\": state.json names pid %d and cgroup `%s`: "
                                   "left alone unless the index names them too",
                   id, (int)c->rec->pid, c->rec->cgroup_version ? c->rec->cgroup_path : "none") < 0) {
        sr_state_record_free(idx);
        return sr_error_make(err, ENOMEM, "container \"%s\"", id);
      }
    }
    adopt_index(c, idx);
    *out = steal_ptr(c);
    return 0;
  }
  if (idx)
    sr_state_record_free(idx);
  sr_error_free(&why);
  if (c->rec == NULL && read_record(c->dirfd, RECOVERY_FILE, &c->rec, &why) == 0 &&
      !(c->rec->id && strcmp(c->rec->id, id) == 0)) {
    /* A record copied from another container's directory is no guide to this one. */
    sr_state_record_free(c->rec);
    c->rec = NULL;
  }
  sr_error_free(&why);
  char text[300];
  snprintf(text, sizeof(text), NO_INDEX, id);
  if (c->rec && neutralise(c, text, err) < 0)
    return -1;
  *out = steal_ptr(c);
  return 0;
}

int sr_statedir_save(struct sr_container *c, sr_error_t *err)
{
  /* While its create is at work (still "creating") only the index moves on: state.json stays
   * the step behind that a create killed between its two writes leaves, which loading takes the
   * deciding fields of from the index (verify_record); the save that ends the phase writes
   * both (and checks the record's size), so that they agree from then on.  One atomic write
   * fewer per recorded step. */
  if (c->writes_index && c->rec->phase == SR_PHASE_CREATING) {
    if (write_index(c->rootfd, c->rec, err) < 0)
      return sr_error_wrap(err, "save state of container \"%s\"", c->id);
    return 0;
  }
  if (write_record(c->rootfd, c->writes_index, c->dirfd, c->rec, SR_STATE_MAX_SIZE, false,
                   err) < 0)
    return sr_error_wrap(err, "save state of container \"%s\"", c->id);
  return 0;
}

int sr_statedir_remove_dir(struct sr_container *c, sr_error_t *err)
{
  /* The index first: a removal cut short leaves a directory that reads as stopped, holding
   * nothing (delete has killed and removed everything before this). */
  _cleanup_close_ int ifd = openat(c->rootfd, INDEX_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC |
                                                            O_NOFOLLOW);
  if (ifd >= 0 && unlinkat(ifd, c->id, 0) < 0 && errno != ENOENT)
    return sr_error_sys(err, "remove the index of container \"%s\"", c->id);
  if (c->dirfd < 0)
    return 0; /* an orphan index: the directory was gone already */
  SR_KILL_POINT("delete.after-index-removal");
  if (remove_dir_contents(c->dirfd) < 0)
    return sr_error_sys(err, "remove state of container \"%s\"", c->id);
  SR_KILL_POINT("delete.before-rmdir");
  if (unlinkat(c->rootfd, c->id, AT_REMOVEDIR) < 0 && errno != ENOENT)
    return sr_error_sys(err, "remove state directory of container \"%s\"", c->id);
  sweep_stale_tmp(c->rootfd);
  c->removed = true;
  return 0;
}

int sr_statedir_write_pid_file(const char *path, pid_t pid, sr_error_t *err)
{
  char buf[32], tmp[PATH_MAX], dir[PATH_MAX];
  int len = snprintf(buf, sizeof(buf), "%d", pid);
  snprintf(dir, sizeof(dir), "%s", path);
  char *slash = strrchr(dir, '/');
  const char *name = slash ? slash + 1 : dir;
  if (slash == dir)
    strcpy(dir, "/");
  else if (slash)
    *slash = '\0';
  else
    strcpy(dir, ".");
  if ((size_t)snprintf(tmp, sizeof(tmp), "%s/.%s.%d", dir, name, getpid()) >= sizeof(tmp))
    return sr_error_make(err, ENAMETOOLONG, "--pid-file `%s`", path);
  _cleanup_close_ int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0)
    return sr_error_sys(err, "--pid-file: create `%s`", tmp);
  if (sr_fileio_write_all(fd, buf, (size_t)len) < 0 || rename(tmp, path) < 0) {
    int saved = errno;
    unlink(tmp);
    return sr_error_make(err, saved, "--pid-file: write `%s`", path);
  }
  return 0;
}

static int cmp_str(const void *a, const void *b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A temporary directory whose creator died before publishing it holds nothing else (the
 * cgroup and processes come after publishing), so it can go once its lock is free.  The lock
 * alone does not tell: the creator takes it a moment after mkdir, so the creator named in the
 * name (TMP_PREFIX "<pid>-...") must be gone too. */
static void reap_stale_tmp(int rootfd, const char *name)
{
  char *end;
  errno = 0;
  long pid = strtol(name + strlen(TMP_PREFIX), &end, 10);
  /* A zombie (killed, not yet reaped by its parent) is gone. */
  uint64_t start;
  char state = '?';
  if (errno == 0 && *end == '-' && pid > 0 && pid <= INT32_MAX &&
      (kill((pid_t)pid, 0) == 0 || errno == EPERM) &&
      !(sr_proc_stat((pid_t)pid, &start, &state) == 0 && (state == 'Z' || state == 'X')))
    return;
  _cleanup_close_ int fd = openat(rootfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) < 0)
    return;
  remove_dir_contents(fd);
  unlinkat(rootfd, name, AT_REMOVEDIR);
}

int sr_statedir_list(int rootfd, char ***ids, size_t *n, sr_error_t *err)
{
  _cleanup_dir_ DIR *d = sr_dir_open_fd(rootfd);
  if (d == NULL)
    return sr_error_sys(err, "open state directory");
  size_t cap = 16, len = 0;
  _cleanup_strv_ char **v = calloc(cap + 1, sizeof(char *));
  if (v == NULL)
    return sr_error_make(err, ENOMEM, "list containers");
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    if (de->d_name[0] == '.') {
      if (strncmp(de->d_name, TMP_PREFIX, strlen(TMP_PREFIX)) == 0)
        reap_stale_tmp(rootfd, de->d_name);
      continue;
    }
    if (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN)
      continue;
    if (len == cap) {
      char **nv = realloc(v, (cap * 2 + 1) * sizeof(char *));
      if (nv == NULL)
        return sr_error_make(err, ENOMEM, "list containers");
      v = nv;
      cap *= 2;
    }
    v[len] = strdup(de->d_name);
    if (v[len] == NULL)
      return sr_error_make(err, ENOMEM, "list containers");
    v[++len] = NULL;
  }
  qsort(v, len, sizeof(char *), cmp_str);
  *ids = steal_ptr(v);
  *n = len;
  return 0;
}

/* The temporaries of index writes (".w<pid>.tmp", write_index) whose writer was killed before
 * its rename. */
static void sweep_index_tmp(int rootfd)
{
  _cleanup_close_ int fd = openat(rootfd, INDEX_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC |
                                                         O_NOFOLLOW);
  _cleanup_dir_ DIR *d = fd >= 0 ? sr_dir_open_fd(fd) : NULL;
  if (d == NULL)
    return;
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    if (strncmp(de->d_name, ".w", 2) != 0)
      continue;
    char *end;
    errno = 0;
    long pid = strtol(de->d_name + 2, &end, 10);
    if (errno != 0 || strcmp(end, ".tmp") != 0)
      continue;
    uint64_t start;
    char state = '?';
    if (pid > 0 && pid <= INT32_MAX && (kill((pid_t)pid, 0) == 0 || errno == EPERM) &&
        !(sr_proc_stat((pid_t)pid, &start, &state) == 0 && (state == 'Z' || state == 'X')))
      continue;
    unlinkat(fd, de->d_name, 0);
  }
}

static void sweep_stale_tmp(int rootfd)
{
  _cleanup_dir_ DIR *d = sr_dir_open_fd(rootfd);
  if (d == NULL)
    return;
  struct dirent *de;
  while ((de = readdir(d)) != NULL)
    if (strncmp(de->d_name, TMP_PREFIX, strlen(TMP_PREFIX)) == 0)
      reap_stale_tmp(rootfd, de->d_name);
  sweep_index_tmp(rootfd);
}
