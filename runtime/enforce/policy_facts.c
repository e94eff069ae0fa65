#include "build.h"

#include "policy_facts.h"

#include "cleanup.h"
#include "landlock.h"
#include "hook_files.h"
#include "lifecycle.h"
#include "statedir.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

/* Host paths no bind mount may expose, nor any directory above them.  The state directories
 * are added at run time. */
static const char *const denied_paths[] = {
    "/",           "/proc",        "/sys",          "/dev",           "/boot",
    "/etc",        "/root",        "/etc/shadow",   "/etc/gshadow",   "/etc/sudoers",
    "/etc/ssh",    "/var/run/docker.sock",          "/run/docker.sock",
    "/run/containerd/containerd.sock",              "/run/podman/podman.sock",
    "/run/crio/crio.sock",         "/var/lib/seerun", "/etc/seerun",
};

/* Of those, the ones nothing below may be bound from either: a secret or a control socket is
 * not less exposed as a file of a denied directory (/etc/ssh/ssh_host_ed25519_key,
 * /root/.ssh/authorized_keys, the user namespace registry).  /, /proc, /sys, /dev and /etc
 * themselves only: engines bind /etc/localtime, /dev/log, /sys/fs/cgroup. */
static const char *const denied_below[] = {
    "/boot",       "/root",          "/etc/shadow",   "/etc/gshadow", "/etc/sudoers",
    "/etc/sudoers.d", "/etc/ssh",    "/var/run/docker.sock",          "/run/docker.sock",
    "/run/containerd/containerd.sock",                "/run/podman/podman.sock",
    "/run/crio/crio.sock",           "/var/lib/seerun", "/etc/seerun",
};

struct protected_inode {
  dev_t dev;
  ino_t ino;
  const char *denied; /* the denied path this inode is, or is above */
  bool below;         /* it is the denied path, and nothing below it may be bound either */
  const char *reason; /* why, for the paths seerun adds at run time; NULL: a host path */
  bool own_bundle_ok; /* see struct sr_denied_path */
};

struct protected_set {
  struct protected_inode *v;
  size_t n, cap;
};

static int add_inode(struct protected_set *s, const struct stat *st, const char *denied,
                     bool below)
{
  for (size_t i = 0; i < s->n; i++)
    if (s->v[i].dev == st->st_dev && s->v[i].ino == st->st_ino) {
      s->v[i].below = s->v[i].below || below;
      return 0;
    }
  if (s->n == s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 64;
    struct protected_inode *nv = realloc(s->v, cap * sizeof(*nv));
    if (nv == NULL)
      return -1;
    s->v = nv;
    s->cap = cap;
  }
  s->v[s->n++] = (struct protected_inode){st->st_dev, st->st_ino, denied, below, NULL, false};
  return 0;
}

/* A denied path and every directory above it: a bind of any of them exposes the path.  below:
 * what is below the path is denied as well. */
static int protect(struct protected_set *s, const char *path, bool below)
{
  int fd = open(path, O_PATH | O_CLOEXEC);
  if (fd < 0)
    return 0; /* absent on this host: nothing to protect */
  for (int depth = 0; depth < 64; depth++) {
    struct stat st;
    if (fstat(fd, &st) < 0 || add_inode(s, &st, path, below && depth == 0) < 0)
      break;
    int parent = openat(fd, "..", O_PATH | O_CLOEXEC);
    struct stat pst;
    if (parent < 0 || fstat(parent, &pst) < 0 ||
        (pst.st_dev == st.st_dev && pst.st_ino == st.st_ino)) {
      if (parent >= 0)
        close(parent);
      break; /* the root */
    }
    close(fd);
    fd = parent;
  }
  close(fd);
  return 0;
}

static const char *protected_match(const struct protected_set *s, const struct stat *st)
{
  for (size_t i = 0; i < s->n; i++)
    if (s->v[i].dev == st->st_dev && s->v[i].ino == st->st_ino)
      return s->v[i].denied;
  return NULL;
}

/* The denied path that fd (a bind source) is below, if nothing below it may be bound. */
static const char *protected_above(const struct protected_set *s, int fd, const struct stat *fst)
{
  _cleanup_close_ int cur = -1;
  if (S_ISDIR(fst->st_mode))
    cur = openat(fd, "..", O_PATH | O_CLOEXEC);
  else {
    /* A file: its directory, by the name the descriptor has (symlinks resolved). */
    char link[64], path[PATH_MAX];
    snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof(path) - 1);
    if (n <= 0 || path[0] != '/')
      return NULL;
    path[n] = '\0';
    char *slash = strrchr(path, '/');
    if (slash == path)
      slash[1] = '\0';
    else
      *slash = '\0';
    cur = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
  }
  struct stat st, prev = {0};
  for (int depth = 0; cur >= 0 && depth < 256; depth++) {
    if (fstat(cur, &st) < 0 || (depth > 0 && st.st_dev == prev.st_dev && st.st_ino == prev.st_ino))
      break; /* the root */
    for (size_t i = 0; i < s->n; i++)
      if (s->v[i].below && s->v[i].dev == st.st_dev && s->v[i].ino == st.st_ino)
        return s->v[i].denied;
    prev = st;
    int parent = openat(cur, "..", O_PATH | O_CLOEXEC);
    close(cur);
    cur = parent;
  }
  return NULL;
}

static bool under(const char *path, const char *dir)
{
  size_t l = strlen(dir);
  return strncmp(path, dir, l) == 0 && (path[l] == '/' || path[l] == '\0');
}

/* A path denied at and below it, never above (binds of /usr and /var/log stay fine). */
static int protect_at_below(struct protected_set *s, const struct sr_denied_path *d)
{
  _cleanup_close_ int fd = open(d->path, O_PATH | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) < 0)
    return 0; /* absent on this host: nothing to protect */
  if (add_inode(s, &st, d->path, true) < 0)
    return -1;
  for (size_t i = 0; i < s->n; i++)
    if (s->v[i].dev == st.st_dev && s->v[i].ino == st.st_ino && s->v[i].reason == NULL) {
      s->v[i].reason = d->reason;
      s->v[i].own_bundle_ok = d->own_bundle_ok;
    }
  return 0;
}

static const struct protected_inode *entry_of(const struct protected_set *s, const char *denied)
{
  for (size_t i = 0; i < s->n; i++)
    if (s->v[i].denied == denied && s->v[i].below)
      return &s->v[i];
  return NULL;
}

/* Whether the object fd is, or is below, one of the directories of set (all marked below). */
static const char *at_or_below(const struct protected_set *set, int fd, const struct stat *st)
{
  const char *m = protected_match(set, st);
  return m ? m : protected_above(set, fd, st);
}

/* The directories of paths (absolute), by inode, for at_or_below. */
static int dir_set(struct protected_set *set, char *const *paths, size_t n)
{
  for (size_t i = 0; i < n; i++) {
    _cleanup_close_ int fd = open(paths[i], O_PATH | O_DIRECTORY | O_CLOEXEC);
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0 && add_inode(set, &st, paths[i], true) < 0)
      return -1;
  }
  return 0;
}

/* A denied state root does not deny the container's own bundle below it: the sandbox makes its
 * rootfs and /out there.  Source and bundle are judged by inode. */
static bool in_own_bundle(const struct protected_inode *root, const char *bundle, int fd,
                          const struct stat *st)
{
  _cleanup_close_ int bfd = bundle ? open(bundle, O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;
  struct stat bst;
  if (bfd < 0 || fstat(bfd, &bst) < 0)
    return false;
  struct protected_set b = {0}, r = {0};
  bool ok = false;
  struct stat rst = {.st_dev = root->dev, .st_ino = root->ino};
  if (add_inode(&b, &bst, bundle, true) == 0 && add_inode(&r, &rst, root->denied, true) == 0)
    ok = at_or_below(&b, fd, st) != NULL && protected_above(&r, bfd, &bst) != NULL;
  free(b.v);
  free(r.v);
  return ok;
}

static int mount_facts(const struct sr_config *c, const struct sr_facts_input *in,
                       struct sr_policy_facts *f, sr_error_t *err)
{
  struct protected_set set = {0};
  /* Each inode names the first denied path that reaches it: "/" for /, not "/boot". */
  for (size_t i = 0; i < sizeof(denied_paths) / sizeof(denied_paths[0]); i++)
    protect(&set, denied_paths[i], false);
  for (size_t i = 0; i < sizeof(denied_below) / sizeof(denied_below[0]); i++)
    protect(&set, denied_below[i], true);
  /* The state roots themselves only: a sandbox's bundle (and its /out) is below its root. */
  if (in->state_root)
    protect(&set, in->state_root, false);
  protect(&set, SR_DEFAULT_ROOT, false);
  /* Every state root seerun was used with, the audit log's directory and the runtime binary:
   * at and below (another container's state directory holds its config and state, which exec
   * and delete read back). */
  struct protected_set idm = {0};
  bool oom = false;
  for (size_t i = 0; i < in->n_denied; i++)
    oom = oom || protect_at_below(&set, &in->denied[i]) < 0;
  oom = oom || dir_set(&idm, in->idmappable, in->n_idmappable) < 0;
  f->mounts = sr_arena_array((struct sr_arena *)&c->arena, c->n_mounts + 1, sizeof(*f->mounts));
  if (f->mounts == NULL || oom) {
    free(set.v);
    free(idm.v);
    return sr_error_make(err, ENOMEM, "policy facts");
  }
  for (size_t i = 0; i < c->n_mounts; i++) {
    const struct sr_mount *m = &c->mounts[i];
    if (!(m->opts.bind || m->opts.rbind) || m->source == NULL)
      continue;
    char src[PATH_MAX];
    if (m->source[0] == '/')
      snprintf(src, sizeof(src), "%s", m->source);
    else
      snprintf(src, sizeof(src), "%s/%s", in->bundle, m->source);
    _cleanup_close_ int fd = open(src, O_PATH | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0)
      continue; /* the mount itself reports a missing source */
    /* Judged on the descriptor: the masks do not follow /sys/firmware to another place. */
    struct statfs sfs;
    if (fstatfs(fd, &sfs) == 0 && (sfs.f_type == PROC_SUPER_MAGIC || sfs.f_type == SYSFS_MAGIC))
      f->mounts[i].source_on_proc_or_sysfs = true;
    const char *match = protected_match(&set, &st);
    if (match == NULL)
      match = protected_above(&set, fd, &st);
    const struct protected_inode *e = match ? entry_of(&set, match) : NULL;
    if (e && e->own_bundle_ok && in_own_bundle(e, in->bundle, fd, &st))
      match = NULL;
    if (match) {
      f->mounts[i].source_denied = true;
      f->mounts[i].denied_path = sr_arena_strdup((struct sr_arena *)&c->arena, match);
      if (e && e->reason)
        f->mounts[i].denied_reason = sr_arena_strdup((struct sr_arena *)&c->arena, e->reason);
    }
    const char *idmappable = at_or_below(&idm, fd, &st);
    if (idmappable)
      f->mounts[i].idmappable = sr_arena_strdup((struct sr_arena *)&c->arena, idmappable);
    /* A relative source must stay in the bundle. */
    if (m->source[0] != '/') {
      char real[PATH_MAX];
      if (realpath(src, real) != NULL && !under(real, in->bundle))
        f->mounts[i].source_is_symlink_out = true;
    }
  }
  free(set.v);
  free(idm.v);
  return 0;
}

static ino_t ns_ino(const char *path)
{
  struct stat st;
  return stat(path, &st) == 0 ? st.st_ino : 0;
}

static void ns_facts(const struct sr_config *c, const struct sr_facts_input *in,
                     struct sr_policy_facts *f)
{
  for (int k = 0; k < SR_NS_COUNT; k++) {
    const char *path = c->linux_.namespaces[k].path;
    if (path == NULL)
      continue;
    ino_t ino = ns_ino(path);
    if (ino == 0)
      continue;
    char host[64], self[64];
    snprintf(host, sizeof(host), "/proc/1/ns/%s", sr_ns_proc_name(k));
    snprintf(self, sizeof(self), "/proc/self/ns/%s", sr_ns_proc_name(k));
    f->ns[k].is_host = ino == ns_ino(host) || ino == ns_ino(self);
    if (in->state_rootfd < 0)
      continue;
    /* Another live seerun container in the same state root? */
    _cleanup_strv_ char **ids = NULL;
    size_t n = 0;
    sr_error_t e = NULL;
    if (sr_statedir_list(in->state_rootfd, &ids, &n, &e) < 0) {
      sr_error_free(&e);
      continue;
    }
    for (size_t i = 0; i < n && !f->ns[k].is_seerun_container; i++) {
      _cleanup_container_ struct sr_container *ct = NULL;
      if (sr_container_load(in->state_rootfd, ids[i], false, &ct, &e) < 0) {
        sr_error_free(&e);
        continue;
      }
      pid_t pid = sr_container_live_pid(ct);
      if (pid <= 0)
        continue;
      char p[64];
      snprintf(p, sizeof(p), "/proc/%d/ns/%s", pid, sr_ns_proc_name(k));
      if (ns_ino(p) == ino) {
        f->ns[k].is_seerun_container = true;
        f->ns[k].container_has_network = ct->rec->network_granted;
        f->ns[k].container_pid = pid;
      }
    }
  }
}

/* Each hook's file judged from the descriptor its path opens (hook_files.h).  The hook is
 * opened again where it runs, and judged again from that descriptor: these facts are the
 * decision on record and `policy check`'s. */
static int hook_facts(const struct sr_config *c, const struct sr_facts_input *in,
                      struct sr_policy_facts *f, sr_error_t *err)
{
  struct sr_hook_places places = {in->bundle, in->rootfs, in->state_root};
  for (int k = 0; k < SR_HOOK_COUNT; k++) {
    size_t n = c->hooks.n[k];
    f->hooks[k] = sr_arena_array((struct sr_arena *)&c->arena, n + 1, sizeof(*f->hooks[k]));
    if (f->hooks[k] == NULL)
      return sr_error_make(err, ENOMEM, "policy facts");
    /* startContainer names a file of the container: nothing on the host to judge. */
    for (size_t i = 0; i < n && k != SR_HOOK_START_CONTAINER; i++) {
      struct sr_hook_file file;
      sr_hook_file_open(c->hooks.list[k][i].path, &places, &file);
      int r = sr_hook_file_fact(&file, in->profile, (struct sr_arena *)&c->arena,
                                &f->hooks[k][i], err);
      sr_hook_file_close(&file);
      if (r < 0)
        return -1;
    }
  }
  sr_hook_places_tenant_dirs(&places, (struct sr_arena *)&c->arena, f);
  return 0;
}

int sr_policy_facts_compute(const struct sr_config *c, const struct sr_facts_input *in,
                            struct sr_policy_facts *facts, sr_error_t *err)
{
  memset(facts, 0, sizeof(*facts));
  if (mount_facts(c, in, facts, err) < 0 || hook_facts(c, in, facts, err) < 0)
    return -1;
  ns_facts(c, in, facts);
  facts->landlock_abi = sr_landlock_abi();
  return 0;
}
