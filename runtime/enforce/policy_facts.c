#include "build.h"

#include "policy_facts.h"

#include "cleanup.h"
#include "hook_files.h"
#include "invocation.h"
#include "landlock.h"
#include "mount_paths.h"
#include "mount_where.h"
#include "namespaces.h"
#include "paths.h"
#include "root_overlay.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
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

/* Directories that hold host daemons' sockets: a bind of one (or of a directory containing
 * one, or below one) connects the container to those daemons (D-Bus, systemd, the engines).
 * No directory below may be bound either: their sockets sit in subdirectories
 * (/run/systemd/journal, /run/user/0/bus, podman's /run/libpod/socket/<id>/attach: another
 * container's terminal).  Judged by inode and by where they lie; /var/run is /run here. */
static const char *const socket_dirs_below[] = {
    "/run/dbus",   "/run/systemd",   "/run/docker",   "/run/podman",   "/run/crio",
    "/run/user",   "/run/libvirt",   "/run/snapd",    "/run/lxd",      "/run/containerd/s",
    "/run/udev",   "/run/avahi-daemon", "/run/cups", "/tmp/.X11-unix", "/run/libpod",
    "/var/run/libpod",
    "/var/run/dbus", "/var/run/systemd", "/var/run/docker", "/var/run/podman", "/var/run/crio",
    "/var/run/user", "/var/run/libvirt", "/var/run/containerd/s",
};

/* Those whose own directory (and what contains it) is refused, but not what is below: containerd
 * keeps its sockets there and the CRI plugin the pods' /dev/shm below it. */
static const char *const socket_dirs[] = {"/run/containerd", "/var/run/containerd"};

/* Container engines' storage: every container's image layers, root filesystem and private
 * files (its environment, its hosts file), in the engines' default places.  Denied at, below
 * and above (a bind of /var/lib/docker shows them all).  What an engine
 * binds from there is the container's own: its bundle, or the directory named by its id
 * (podman's and CRI-O's userdata with hosts, resolv.conf, .containerenv; Docker's hostname and
 * hosts).  Named volumes (.../volumes) are shared between containers by design and stay
 * bindable. */
#define SR_STORE_LAYERS "a container engine's storage: image layers and containers' root file systems"
#define SR_STORE_PRIVATE "a container engine's storage: another container's own files"
#define SR_STORE_RECORDS \
  "a container engine's storage: every container's configuration (its environment) and secrets"
static const struct sr_denied_path engine_stores[] = {
    {"/var/lib/containers/storage/overlay", SR_STORE_LAYERS, false, false, true},
    {"/var/lib/containers/storage/overlay-layers", SR_STORE_LAYERS, false, false, true},
    {"/var/lib/containers/storage/overlay-images", SR_STORE_LAYERS, false, false, true},
    {"/var/lib/containers/storage/vfs", SR_STORE_LAYERS, false, false, true},
    {"/var/lib/containers/storage/overlay-containers", SR_STORE_PRIVATE, true, true, true},
    {"/var/lib/containers/storage/vfs-containers", SR_STORE_PRIVATE, true, true, true},
    {"/run/containers/storage/overlay-containers", SR_STORE_PRIVATE, true, true, true},
    {"/run/containers/storage/vfs-containers", SR_STORE_PRIVATE, true, true, true},
    {"/var/lib/docker/overlay2", SR_STORE_LAYERS, false, false, true},
    {"/var/lib/docker/vfs", SR_STORE_LAYERS, false, false, true},
    {"/var/lib/docker/image", SR_STORE_LAYERS, false, false, true},
    {"/var/lib/docker/containers", SR_STORE_PRIVATE, true, true, true},
    /* Docker's containerd image store mounts each one's root at rootfs/<snapshotter>/<id>. */
    {"/var/lib/docker/rootfs/overlayfs", SR_STORE_LAYERS, false, true, true},
    {"/var/lib/docker/rootfs/native", SR_STORE_LAYERS, false, true, true},
    {"/var/lib/containerd/io.containerd.snapshotter.v1.overlayfs", SR_STORE_LAYERS, false, false, true},
    {"/var/lib/containerd/io.containerd.snapshotter.v1.native", SR_STORE_LAYERS, false, false, true},
    {"/var/lib/containerd/io.containerd.content.v1.content", SR_STORE_LAYERS, false, false, true},
    {"/var/lib/containerd/io.containerd.metadata.v1.bolt", SR_STORE_LAYERS, false, false, true},
    {"/run/containerd/io.containerd.runtime.v2.task", SR_STORE_PRIVATE, true, false, true},
    {"/run/containerd/io.containerd.runtime.v1.linux", SR_STORE_PRIVATE, true, false, true},
    {"/var/lib/containerd/io.containerd.runtime.v2.task", SR_STORE_PRIVATE, false, false, true},
    /* The CRI plugin's per-container state and stdio FIFOs (its per-pod sandboxes are not). */
    {"/var/lib/containerd/io.containerd.grpc.v1.cri/containers", SR_STORE_PRIVATE, false, true,
     true},
    {"/run/containerd/io.containerd.grpc.v1.cri/containers", SR_STORE_PRIVATE, false, true, true},
    {"/var/lib/containers/storage/libpod", SR_STORE_RECORDS, false, false, true},
    {"/var/lib/containers/storage/db.sql", SR_STORE_RECORDS, false, false, true},
    {"/var/lib/containers/storage/secrets", SR_STORE_RECORDS, false, false, true},
};

enum protect_kind { PROTECT_DENIED, PROTECT_SOCKETS };

/* What below a path denied at and below it is still the container's own (struct
 * sr_denied_path): its bundle, or the directory named by its id (dev 0: none), by inode for a
 * directory and by where it lies in its filesystem for a file below it (fs_path: the
 * protected_tree's only, freed with it). */
struct own_ok {
  bool store; /* an engine's storage: the engine's overlay for this bundle is the root's own */
  bool bundle;
  dev_t dev;
  ino_t ino;
  char *fs_path;
};

struct protected_inode {
  dev_t dev;
  ino_t ino;
  const char *denied; /* the denied path this inode is, or is above */
  bool below;         /* it is the denied path, and nothing below it may be bound either */
  enum protect_kind kind;
  const char *reason; /* why, for the paths seerun adds at run time; NULL: a host path */
  struct own_ok own;
  bool walked;        /* protect() added every directory above it too */
};

/* A protected path itself as it lies in its filesystem: what a second view of it, a hard link
 * or a mount below a bind source is compared with. */
struct protected_tree {
  dev_t dev;
  char *fs_path;
  const char *denied;
  bool below;
  enum protect_kind kind;
  bool not_above;     /* denied at and below only: what contains it may be bound */
  const char *reason;
  struct own_ok own;
  dev_t root_dev;     /* its inode, for the own-bundle exception */
  ino_t root_ino;
};

struct protected_set {
  struct protected_inode *v;
  size_t n, cap;
  struct protected_tree *t;
  size_t nt, tcap;
  enum protect_kind adding; /* what protect() adds */
  struct sr_where_mounts *mounts; /* the mounts looked up for this set's facts */
};

static void protected_set_free(struct protected_set *s)
{
  for (size_t i = 0; i < s->nt; i++) {
    free(s->t[i].fs_path);
    free(s->t[i].own.fs_path);
  }
  free(s->t);
  free(s->v);
}

/* Adds (dev, ino), or marks the entry there below as well.  Returns the entry, NULL when out
 * of memory. */
static struct protected_inode *add_inode(struct protected_set *s, const struct stat *st,
                                         const char *denied, bool below)
{
  for (size_t i = 0; i < s->n; i++)
    if (s->v[i].dev == st->st_dev && s->v[i].ino == st->st_ino) {
      s->v[i].below = s->v[i].below || below;
      return &s->v[i];
    }
  if (s->n == s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 64;
    struct protected_inode *nv = realloc(s->v, cap * sizeof(*nv));
    if (nv == NULL)
      return NULL;
    s->v = nv;
    s->cap = cap;
  }
  s->v[s->n++] = (struct protected_inode){st->st_dev, st->st_ino, denied, below,
                                          s->adding,  NULL,       {0},    false};
  return &s->v[s->n - 1];
}

static int add_tree(struct protected_set *s, int fd, const char *denied, bool below)
{
  struct sr_where w;
  if (sr_where_fd_in(fd, s->mounts, &w) < 0)
    return 0; /* judged by inode only */
  free(w.name);
  if (s->nt == s->tcap) {
    size_t cap = s->tcap ? s->tcap * 2 : 64;
    struct protected_tree *nt = realloc(s->t, cap * sizeof(*nt));
    if (nt == NULL) {
      free(w.fs_path);
      return -1;
    }
    s->t = nt;
    s->tcap = cap;
  }
  s->t[s->nt++] =
      (struct protected_tree){w.dev, w.fs_path, denied, below, s->adding, false, NULL, {0}, 0, 0};
  return 0;
}

/* The directory open at fd (taken over) and every directory above it, by inode, each naming
 * path; below: nothing below fd's directory may be bound either; reason: that of the entries
 * this walk adds (NULL: a host path). */
static int protect_walk(struct protected_set *s, int fd, const char *path, bool below,
                        const char *reason)
{
  /* Each directory's inode is taken from the descriptor the walk holds; a directory an earlier
   * walk reached has every one above it in the set already (the denied paths share /, /etc,
   * /run, /var): the walk stops there. */
  struct stat st;
  if (fstat(fd, &st) < 0) {
    close(fd);
    return 0;
  }
  size_t chain[64], n = 0;
  bool complete = false;
  for (int depth = 0; depth < 64; depth++) {
    bool known = false;
    for (size_t i = 0; i < s->n && !known; i++)
      known = s->v[i].walked && s->v[i].dev == st.st_dev && s->v[i].ino == st.st_ino;
    size_t before = s->n;
    struct protected_inode *e = add_inode(s, &st, path, below && depth == 0);
    if (e == NULL)
      break;
    if (s->n > before)
      e->reason = reason; /* a directory already in the set keeps what reached it first */
    chain[n++] = (size_t)(e - s->v);
    if (known) {
      complete = true;
      break;
    }
    int parent = openat(fd, "..", O_PATH | O_CLOEXEC);
    struct stat pst;
    if (parent < 0 || fstat(parent, &pst) < 0) {
      if (parent >= 0)
        close(parent);
      break;
    }
    if (pst.st_dev == st.st_dev && pst.st_ino == st.st_ino) {
      close(parent);
      complete = true; /* the root */
      break;
    }
    close(fd);
    fd = parent;
    st = pst;
  }
  close(fd);
  /* Only a walk that reached the root (or a walked directory) vouches for what is above its
   * directories: one cut short (a failed open, the depth) marks nothing. */
  for (size_t i = 0; complete && i < n; i++)
    s->v[chain[i]].walked = true;
  return 0;
}

/* A denied path and every directory above it: a bind of any of them exposes the path.  below:
 * what is below the path is denied as well. */
static int protect(struct protected_set *s, const char *path, bool below)
{
  int fd = open(path, O_PATH | O_CLOEXEC);
  if (fd < 0)
    return 0; /* absent on this host: nothing to protect */
  if (add_tree(s, fd, path, below) < 0) {
    close(fd);
    return -1;
  }
  return protect_walk(s, fd, path, below, NULL);
}

/* A path denied at and below it, never above (binds of /usr and /var/log stay fine): seerun's
 * own files (state roots, the audit log's directory, the binary); engines' storage, above
 * too.  id: the container's, for a path whose own_id_ok lets the container bind its own
 * directory there. */
static int protect_at_below(struct protected_set *s, const struct sr_denied_path *d,
                            const char *id)
{
  _cleanup_close_ int fd = open(d->path, O_PATH | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) < 0)
    return 0; /* absent on this host: nothing to protect */
  struct own_ok own = {.store = d->engine_store, .bundle = d->own_bundle_ok};
  /* One name below the path, never a walk (create has checked the id; policy check may not). */
  bool one_name = id && *id && strchr(id, '/') == NULL && strcmp(id, ".") != 0 &&
                  strcmp(id, "..") != 0;
  if (d->own_id_ok && one_name) {
    /* The container's own directory, as it is now: the source is compared with this inode. */
    _cleanup_close_ int ofd =
        openat(fd, id, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat ost;
    if (ofd >= 0 && fstat(ofd, &ost) == 0) {
      own.dev = ost.st_dev;
      own.ino = ost.st_ino;
    }
  }
  struct sr_where ow = {0};
  if (own.dev != 0 && sr_where_fd_in(fd, s->mounts, &ow) == 0) {
    free(ow.name);
    /* Where the container's own directory lies: PATH's place and the id below it. */
    char *p = NULL;
    if (asprintf(&p, "%s%s%s", ow.fs_path, strcmp(ow.fs_path, "/") ? "/" : "", id) < 0)
      p = NULL;
    free(ow.fs_path);
    ow.fs_path = p;
  }
  s->adding = PROTECT_DENIED;
  if (add_inode(s, &st, d->path, true) == NULL || add_tree(s, fd, d->path, true) < 0)
    return -1;
  for (size_t i = 0; i < s->n; i++)
    if (s->v[i].dev == st.st_dev && s->v[i].ino == st.st_ino && s->v[i].reason == NULL) {
      s->v[i].reason = d->reason;
      s->v[i].own = (struct own_ok){own.store, own.bundle, own.dev, own.ino, NULL};
    }
  /* Every directory above an engine's storage too, by inode: a bind of /var/lib/docker or
   * /var/lib/containers/storage shows every container's layers and private files below it
   * (cAdvisor's -v /var/lib/docker:/var/lib/docker).  Named volumes, beside the storage, are
   * not above it. */
  if (d->engine_store) {
    int up = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (up >= 0 && protect_walk(s, up, d->path, true, d->reason) < 0)
      return -1;
  }
  if (s->nt > 0 && s->t[s->nt - 1].denied == d->path) {
    /* An engine's storage is denied above too: what contains it shows every container's. */
    s->t[s->nt - 1].not_above = !d->engine_store;
    s->t[s->nt - 1].reason = d->reason;
    s->t[s->nt - 1].own = own;
    s->t[s->nt - 1].own.fs_path = ow.fs_path;
    ow.fs_path = NULL;
    s->t[s->nt - 1].root_dev = st.st_dev;
    s->t[s->nt - 1].root_ino = st.st_ino;
  }
  free(ow.fs_path);
  return 0;
}


/* A denied state root does not deny the container's own bundle below it: the sandbox makes its
 * rootfs and /out there; nor does an engine's storage deny the container's own directory.
 * Source, bundle and root are judged by inode. */
static bool is_own(const struct own_ok *own, int bundlefd, dev_t root_dev, ino_t root_ino, int fd,
                   const struct sr_where *w, bool engine_root)
{
  struct stat bst;
  if (own->store && engine_root)
    return true;
  if (own->dev != 0 && sr_paths_at_or_below(fd, own->dev, own->ino))
    return true;
  if (own->fs_path && w && w->dev == own->dev && sr_where_path_under(w->fs_path, own->fs_path))
    return true;
  if (!own->bundle || bundlefd < 0 || fstat(bundlefd, &bst) < 0)
    return false;
  return sr_paths_at_or_below(fd, bst.st_dev, bst.st_ino) &&
         sr_paths_at_or_below(bundlefd, root_dev, root_ino) &&
         !(bst.st_dev == root_dev && bst.st_ino == root_ino);
}

/* A mount below a recursive source that lies in a protected tree: the container's own only
 * where it lies (its filesystem and the path there, the mount's root) in the container's own
 * directory or bundle; a view of another container's directory mounted below is not. */
static bool submount_is_own(const struct protected_tree *t, const struct sr_where *sub,
                            int bundlefd, const struct sr_where *bw, bool engine_root)
{
  if (t->own.store && engine_root)
    return true;
  if (t->own.fs_path && sub->dev == t->own.dev &&
      sr_where_path_under(sub->fs_path, t->own.fs_path))
    return true;
  struct stat bst;
  return t->own.bundle && bw && sub->dev == bw->dev &&
         sr_where_path_under(sub->fs_path, bw->fs_path) && fstat(bundlefd, &bst) == 0 &&
         !(bst.st_dev == t->root_dev && bst.st_ino == t->root_ino) &&
         sr_paths_at_or_below(bundlefd, t->root_dev, t->root_ino);
}

static const struct protected_inode *protected_match(const struct protected_set *s,
                                                     const struct stat *st)
{
  for (size_t i = 0; i < s->n; i++)
    if (s->v[i].dev == st->st_dev && s->v[i].ino == st->st_ino)
      return &s->v[i];
  return NULL;
}

/* The protected path that the directory fd is below, if nothing below it may be bound, by the
 * inodes of its ".." chain. */
static const struct protected_inode *protected_above(const struct protected_set *s, int fd)
{
  _cleanup_close_ int cur = openat(fd, "..", O_PATH | O_CLOEXEC);
  struct stat st, prev = {0};
  for (int depth = 0; cur >= 0 && depth < 256; depth++) {
    if (fstat(cur, &st) < 0 || (depth > 0 && st.st_dev == prev.st_dev && st.st_ino == prev.st_ino))
      break; /* the root */
    for (size_t i = 0; i < s->n; i++)
      if (s->v[i].below && s->v[i].dev == st.st_dev && s->v[i].ino == st.st_ino)
        return &s->v[i];
    prev = st;
    int parent = openat(cur, "..", O_PATH | O_CLOEXEC);
    close(cur);
    cur = parent;
  }
  return NULL;
}

/* The protected tree that (dev, fs_path) is, contains or (for one denied below) is below. */
static const struct protected_tree *tree_match(const struct protected_set *s, dev_t dev,
                                               const char *fs_path)
{
  for (size_t i = 0; i < s->nt; i++) {
    const struct protected_tree *t = &s->t[i];
    if (t->dev == dev && ((!t->not_above && sr_where_path_under(t->fs_path, fs_path)) ||
                          (t->below && sr_where_path_under(fs_path, t->fs_path))))
      return t;
  }
  return NULL;
}

static void found(struct sr_arena *a, struct sr_policy_mount_fact *f, enum protect_kind kind,
                  const char *what, const char *reason)
{
  if (kind == PROTECT_DENIED && !f->source_denied) {
    f->source_denied = true;
    f->denied_path = sr_arena_strdup(a, what);
    if (reason)
      f->denied_reason = sr_arena_strdup(a, reason);
  } else if (kind == PROTECT_SOCKETS && f->socket_dir == NULL)
    f->socket_dir = sr_arena_strdup(a, what);
}

/* Judges the host object open at fd (a bind source, the root filesystem) as what it is and
 * where it really lies, never by its name: a symlink, a hard link, a second mount view and a
 * mount below it are other names for a denied tree (issue 13, class 5).  recursive: the mounts
 * below it come along (rbind, the root). */
static void judge_object(const struct protected_set *s, struct sr_arena *a, int fd,
                         const char *given, bool recursive, int bundlefd, bool engine_root,
                         struct sr_policy_mount_fact *f)
{
  struct stat st;
  if (fstat(fd, &st) < 0) {
    f->location_unknown = true;
    f->resolved = sr_arena_strdup(a, given);
    return;
  }
  /* Judged on the descriptor: the masks do not follow /sys/firmware to another place. */
  struct statfs sfs;
  if (fstatfs(fd, &sfs) == 0 && (sfs.f_type == PROC_SUPER_MAGIC || sfs.f_type == SYSFS_MAGIC))
    f->source_on_proc_or_sysfs = true;
  const struct protected_inode *pi = protected_match(s, &st);
  if (pi && !is_own(&pi->own, bundlefd, pi->dev, pi->ino, fd, NULL, engine_root))
    found(a, f, pi->kind, pi->denied, pi->reason);
  if ((pi = protected_above(s, fd)) != NULL &&
      !is_own(&pi->own, bundlefd, pi->dev, pi->ino, fd, NULL, engine_root))
    found(a, f, pi->kind, pi->denied, pi->reason);
  _cleanup_(sr_where_release) struct sr_where w = {0};
  if (sr_where_fd_in(fd, s->mounts, &w) < 0) {
    f->location_unknown = true;
    f->resolved = sr_arena_strdup(a, given);
    return;
  }
  f->resolved = sr_arena_strdup(a, w.name);
  const struct protected_tree *t = tree_match(s, w.dev, w.fs_path);
  if (t && !is_own(&t->own, bundlefd, t->root_dev, t->root_ino, fd, &w, engine_root))
    found(a, f, t->kind, t->denied, t->reason);
  if (recursive && S_ISDIR(st.st_mode)) {
    struct sr_where *subs = NULL;
    size_t n = 0;
    if (sr_where_submounts(w.name, &subs, &n) < 0)
      f->location_unknown = true;
    _cleanup_(sr_where_release) struct sr_where bw = {0};
    bool have_bw = bundlefd >= 0 && sr_where_fd_in(bundlefd, s->mounts, &bw) == 0;
    for (size_t i = 0; i < n; i++) {
      if ((t = tree_match(s, subs[i].dev, subs[i].fs_path)) != NULL &&
          !submount_is_own(t, &subs[i], bundlefd, have_bw ? &bw : NULL, engine_root))
        found(a, f, t->kind, t->denied, t->reason);
      sr_where_release(&subs[i]);
    }
    free(subs);
  }
  f->is_socket = S_ISSOCK(st.st_mode);
  f->is_fifo = S_ISFIFO(st.st_mode);
  /* A file below a daemon socket directory is what it is: a socket or FIFO is refused as one,
   * a regular file (/run/systemd/resolve/resolv.conf) reaches no daemon. */
  if (!S_ISDIR(st.st_mode)) {
    f->in_socket_dir = f->socket_dir;
    f->socket_dir = NULL;
    /* A socket directory protected at its own inode only (/run/containerd: binds below it
     * stay fine) still holds its daemon's sockets (containerd.sock.ttrpc, debug.sock): a
     * file below it is below a daemon socket directory, by where it lies in its filesystem. */
    for (size_t i = 0; i < s->nt && f->in_socket_dir == NULL; i++)
      if (s->t[i].kind == PROTECT_SOCKETS && s->t[i].dev == w.dev &&
          sr_where_path_under(w.fs_path, s->t[i].fs_path))
        f->in_socket_dir = sr_arena_strdup(a, s->t[i].denied);
  }
  /* Another name of a file below /root can be anywhere on /root's filesystem. */
  if (S_ISREG(st.st_mode) && st.st_nlink > 1)
    for (size_t i = 0; i < s->nt && f->hard_links == 0; i++)
      if (s->t[i].kind == PROTECT_DENIED && s->t[i].below && s->t[i].dev == st.st_dev) {
        f->hard_links = (unsigned)st.st_nlink;
        f->hard_link_tree = sr_arena_strdup(a, s->t[i].denied);
      }
}

void sr_policy_facts_objects_close(struct sr_host_objects *o)
{
  for (size_t i = 0; o->mount_fd && i < o->n_mounts; i++)
    if (o->mount_fd[i] >= 0)
      close(o->mount_fd[i]);
  free(o->mount_fd);
  free(o->mount_errno);
  for (size_t i = 0; o->path_fd && i < o->n_mounts; i++) {
    for (size_t k = 0; o->path_fd[i] && k < o->n_paths[i]; k++)
      if (o->path_fd[i][k] >= 0)
        close(o->path_fd[i][k]);
    free(o->path_fd[i]);
    if (o->path_errno)
      free(o->path_errno[i]);
  }
  free(o->path_fd);
  free(o->path_errno);
  free(o->n_paths);
  if (o->root_fd >= 0)
    close(o->root_fd);
  if (o->listener_fd >= 0)
    close(o->listener_fd);
  for (int k = 0; o->ns_fd && k < SR_NS_COUNT; k++)
    if (o->ns_fd[k] >= 0)
      close(o->ns_fd[k]);
  for (int k = 0; o->ns_error && k < SR_NS_COUNT; k++)
    free(o->ns_error[k]);
  free(o->ns_fd);
  free(o->ns_error);
  *o = (struct sr_host_objects)SR_HOST_OBJECTS_INIT;
}

int sr_policy_facts_objects_replace_mount(struct sr_host_objects *o, size_t index, int fd)
{
  if (o->mount_fd == NULL || index >= o->n_mounts) {
    errno = EINVAL;
    return -1;
  }
  int dup = fcntl(fd, F_DUPFD_CLOEXEC, 3);
  if (dup < 0)
    return -1;
  if (o->mount_fd[index] >= 0)
    close(o->mount_fd[index]);
  o->mount_fd[index] = dup;
  return 0;
}

/* The one resolution of a host path the container gets: what is judged is this descriptor,
 * and the runtime mounts this descriptor (a name swapped for a symlink to / between the check
 * and the mount: TOCTOU, issue 13 class 2).  Magic links (/proc/self/fd/N) are no names of a
 * host path.  A relative path is the bundle's; beneath: it must stay below the bundle. */
static int open_host_object(int bundlefd, const char *path, bool beneath, int flags)
{
  unsigned long long resolve = RESOLVE_NO_MAGICLINKS | (beneath ? RESOLVE_BENEATH : 0);
  return sr_paths_openat2(path[0] == '/' ? AT_FDCWD : bundlefd, path, O_PATH | O_CLOEXEC | flags, 0,
                          resolve);
}

static int protected_set_make(const struct sr_facts_input *in, struct protected_set *set,
                              struct sr_where_mounts *mounts)
{
  memset(set, 0, sizeof(*set));
  set->mounts = mounts;
  set->adding = PROTECT_DENIED;
  /* Each inode names the first denied path that reaches it: "/" for /, not "/boot". */
  for (size_t i = 0; i < sizeof(denied_paths) / sizeof(denied_paths[0]); i++)
    if (protect(set, denied_paths[i], false) < 0)
      return -1;
  for (size_t i = 0; i < sizeof(denied_below) / sizeof(denied_below[0]); i++)
    if (protect(set, denied_below[i], true) < 0)
      return -1;
  /* The state roots themselves only: a sandbox's bundle (and its /out) is below its root. */
  if ((in->state_root && protect(set, in->state_root, false) < 0) ||
      protect(set, SR_DEFAULT_ROOT, false) < 0)
    return -1;
  /* Every state root seerun was used with, the audit log's directory and the runtime binary:
   * at and below (another container's state directory holds its config and state, which exec
   * and delete read back), never above. */
  for (size_t i = 0; i < in->n_denied; i++)
    if (protect_at_below(set, &in->denied[i], in->id) < 0)
      return -1;
  for (size_t i = 0; i < sizeof(engine_stores) / sizeof(engine_stores[0]); i++)
    if (protect_at_below(set, &engine_stores[i], in->id) < 0)
      return -1;
  set->adding = PROTECT_SOCKETS;
  for (size_t i = 0; i < sizeof(socket_dirs_below) / sizeof(socket_dirs_below[0]); i++)
    if (protect(set, socket_dirs_below[i], true) < 0)
      return -1;
  for (size_t i = 0; i < sizeof(socket_dirs) / sizeof(socket_dirs[0]); i++)
    if (protect(set, socket_dirs[i], false) < 0)
      return -1;
  return 0;
}

/* The profile's mounts.idmappable directories, by inode (at and below them). */
static int idmappable_set(const struct sr_facts_input *in, struct protected_set *set)
{
  for (size_t i = 0; i < in->n_idmappable; i++) {
    _cleanup_close_ int fd = open(in->idmappable[i], O_PATH | O_DIRECTORY | O_CLOEXEC);
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0 && add_inode(set, &st, in->idmappable[i], true) == NULL)
      return -1;
  }
  return 0;
}

/* The host paths a filesystem mount's options name (overlay's layers), each opened once and
 * judged like a bind source: a lower layer is a read-only view of a host directory and an
 * upper one a writable view, whatever the mount's type is called.  Not recursive: an overlay
 * layer shows no mounts below it.  A path that does not parse, or cannot be opened, is left
 * to the policy (which refuses it) and the mount. */
static int option_path_facts(const struct protected_set *set, struct sr_arena *a, int bundlefd,
                             size_t i, const struct sr_mount *m, struct sr_policy_mount_fact *f,
                             struct sr_host_objects *objs)
{
  struct sr_mount_data d;
  sr_error_t e = NULL;
  if (sr_mount_paths_data_split(a, m, "options", &d, &e) < 0) {
    sr_error_free(&e);
    return 0;
  }
  if (d.n_paths == 0)
    return 0;
  f->paths = sr_arena_array(a, d.n_paths, sizeof(*f->paths));
  objs->path_fd[i] = malloc(d.n_paths * sizeof(int));
  objs->path_errno[i] = calloc(d.n_paths, sizeof(int));
  if (f->paths == NULL || objs->path_fd[i] == NULL || objs->path_errno[i] == NULL)
    return -1;
  f->n_paths = d.n_paths;
  objs->n_paths[i] = d.n_paths;
  for (size_t k = 0; k < d.n_paths; k++) {
    const struct sr_mount_path *p = &d.paths[k];
    struct sr_policy_mount_fact *pf = &f->paths[k];
    objs->path_fd[i][k] = -1;
    if (p->kind == SR_MOUNT_PATH_UNJUDGED)
      continue; /* refused by the policy: the kernel would open it by name */
    /* Relative: the bundle's, as runc (which runs in it) has the kernel read it; it must
     * stay below the bundle. */
    bool relative = p->path[0] != '/';
    int fd = open_host_object(bundlefd, p->path, relative, O_DIRECTORY);
    if (fd < 0 && relative && (errno == EXDEV || errno == ELOOP)) {
      pf->source_is_symlink_out = true;
      objs->path_errno[i][k] = errno;
      _cleanup_close_ int out = open_host_object(bundlefd, p->path, false, O_DIRECTORY);
      if (out >= 0)
        judge_object(set, a, out, p->path, false, bundlefd, false, pf);
      continue;
    }
    if (fd < 0) {
      objs->path_errno[i][k] = errno;
      continue;
    }
    objs->path_fd[i][k] = fd;
    judge_object(set, a, fd, p->path, false, bundlefd, false, pf);
  }
  return 0;
}

static int mount_facts(const struct sr_config *c, const struct sr_facts_input *in,
                       struct sr_policy_facts *f, struct sr_host_objects *objs, sr_error_t *err)
{
  struct sr_arena *a = (struct sr_arena *)&c->arena;
  /* Declared first, released last: the sets point at it. */
  _cleanup_(sr_where_mounts_release) struct sr_where_mounts mounts = {0};
  _cleanup_(protected_set_free) struct protected_set set = {0};
  _cleanup_(protected_set_free) struct protected_set idm = {0};
  if (protected_set_make(in, &set, &mounts) < 0 || idmappable_set(in, &idm) < 0)
    return sr_error_make(err, ENOMEM, "policy facts");
  f->mounts = sr_arena_array(a, c->n_mounts + 1, sizeof(*f->mounts));
  objs->n_mounts = c->n_mounts;
  objs->mount_fd = malloc((c->n_mounts + 1) * sizeof(int));
  objs->mount_errno = calloc(c->n_mounts + 1, sizeof(int));
  if (f->mounts == NULL || objs->mount_fd == NULL || objs->mount_errno == NULL)
    return sr_error_make(err, ENOMEM, "policy facts");
  objs->path_fd = calloc(c->n_mounts + 1, sizeof(int *));
  objs->path_errno = calloc(c->n_mounts + 1, sizeof(int *));
  objs->n_paths = calloc(c->n_mounts + 1, sizeof(size_t));
  if (objs->path_fd == NULL || objs->path_errno == NULL || objs->n_paths == NULL)
    return sr_error_make(err, ENOMEM, "policy facts");
  for (size_t i = 0; i < c->n_mounts; i++)
    objs->mount_fd[i] = -1;
  _cleanup_close_ int bundlefd = open(in->bundle, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (bundlefd < 0)
    return sr_error_sys(err, "bundle `%s`", in->bundle);
  for (size_t i = 0; i < c->n_mounts; i++) {
    const struct sr_mount *m = &c->mounts[i];
    if (!(m->opts.bind || m->opts.rbind) && !(m->opts.flags & MS_REMOUNT) &&
        option_path_facts(&set, a, bundlefd, i, m, &f->mounts[i], objs) < 0)
      return sr_error_make(err, ENOMEM, "policy facts");
    if (!(m->opts.bind || m->opts.rbind) || m->source == NULL)
      continue;
    bool relative = m->source[0] != '/';
    int fd = open_host_object(bundlefd, m->source, relative, 0);
    if (fd < 0 && relative && (errno == EXDEV || errno == ELOOP)) {
      /* A relative source must stay in the bundle: refused, and judged where it leads to say
       * what it would have exposed; never mounted. */
      f->mounts[i].source_is_symlink_out = true;
      objs->mount_errno[i] = errno;
      _cleanup_close_ int out = open_host_object(bundlefd, m->source, false, 0);
      if (out >= 0)
        judge_object(&set, a, out, m->source, m->opts.rbind, bundlefd, false, &f->mounts[i]);
      continue;
    }
    if (fd < 0) {
      objs->mount_errno[i] = errno;
      continue; /* the mount itself reports a missing source */
    }
    objs->mount_fd[i] = fd;
    judge_object(&set, a, fd, m->source, m->opts.rbind, bundlefd, false, &f->mounts[i]);
    struct stat st;
    const struct protected_inode *im = NULL;
    if (fstat(fd, &st) == 0 && ((im = protected_match(&idm, &st)) != NULL ||
                                (im = protected_above(&idm, fd)) != NULL))
      f->mounts[i].idmappable = sr_arena_strdup(a, im->denied);
  }
  /* root.path: the tree the container gets as / (a symlink to /, a view of /: class 8). */
  const char *rp = c->root_path ? c->root_path : "";
  /* Relative to the bundle, wherever its symlinks lead: judged as the object it is. */
  objs->root_fd = sr_paths_openat2(rp[0] == '/' ? AT_FDCWD : bundlefd, rp,
                                   O_PATH | O_DIRECTORY | O_CLOEXEC, 0, RESOLVE_NO_MAGICLINKS);
  objs->root_errno = objs->root_fd < 0 ? errno : 0;
  if (objs->root_fd >= 0) {
    f->have_root = true;
    struct statfs sfs;
    f->root_is_overlay = fstatfs(objs->root_fd, &sfs) == 0 && sfs.f_type == OVERLAYFS_SUPER_MAGIC;
    if (f->root_is_overlay)
      f->root_overlay_engine =
          sr_root_overlay_owner(a, objs->root_fd, bundlefd, &f->root_overlay_not);
    /* The engine's overlay for this bundle lies in its storage; any other root there is
     * another container's. */
    judge_object(&set, a, objs->root_fd, in->rootfs, true, bundlefd,
                 f->root_overlay_engine != NULL, &f->root);
    /* Where an idmapped root may lie: the bundle's own tree, or below rootfs.idmapPaths. */
    struct stat bst;
    if (fstat(bundlefd, &bst) == 0 && sr_paths_at_or_below(objs->root_fd, bst.st_dev, bst.st_ino))
      f->root_idmappable = "the bundle";
    for (size_t i = 0; i < in->n_rootfs_idmap_paths && f->root_idmappable == NULL; i++) {
      _cleanup_close_ int pfd =
          open(in->rootfs_idmap_paths[i], O_PATH | O_DIRECTORY | O_CLOEXEC);
      struct stat pst;
      if (pfd >= 0 && fstat(pfd, &pst) == 0 &&
          sr_paths_at_or_below(objs->root_fd, pst.st_dev, pst.st_ino))
        f->root_idmappable = sr_arena_strdup(a, in->rootfs_idmap_paths[i]);
    }
  }
  /* linux.seccomp.listenerPath: seerun connects to it as host root, so it is judged like a
   * bound socket (an engine's or a daemon's socket is a line to that daemon), from the
   * descriptor it then connects through (a symlink swapped in between: TOCTOU). */
  const struct sr_seccomp *sc = c->linux_.seccomp;
  if (sc && sc->listener_path) {
    objs->listener_fd = open_host_object(bundlefd, sc->listener_path, false, 0);
    objs->listener_errno = objs->listener_fd < 0 ? errno : 0;
    if (objs->listener_fd >= 0) {
      f->have_listener = true;
      judge_object(&set, a, objs->listener_fd, sc->listener_path, false, bundlefd, false, &f->listener);
    }
  }
  return 0;
}

static ino_t ns_ino(const char *path)
{
  struct stat st;
  return stat(path, &st) == 0 ? st.st_ino : 0;
}

/* Each namespace path opened once: what is judged (the host's? another container's?) is the
 * namespace then joined, not whatever the path names by then. */
static int ns_facts(const struct sr_config *c, const struct sr_facts_input *in,
                    struct sr_policy_facts *f, struct sr_host_objects *objs)
{
  objs->ns_fd = malloc(SR_NS_COUNT * sizeof(int));
  objs->ns_error = calloc(SR_NS_COUNT, sizeof(char *));
  if (objs->ns_fd == NULL || objs->ns_error == NULL)
    return -1;
  for (int k = 0; k < SR_NS_COUNT; k++)
    objs->ns_fd[k] = -1;
  for (int k = 0; k < SR_NS_COUNT; k++) {
    const char *path = c->linux_.namespaces[k].path;
    if (path == NULL || !c->linux_.namespaces[k].present)
      continue;
    sr_error_t oe = NULL;
    if (sr_ns_open(path, (enum sr_ns_kind)k, &objs->ns_fd[k], &oe) < 0) {
      objs->ns_error[k] = sr_error_text(oe);
      sr_error_free(&oe);
      continue;
    }
    struct stat nst;
    ino_t ino = fstat(objs->ns_fd[k], &nst) == 0 ? nst.st_ino : 0;
    if (ino == 0)
      continue;
    char host[64], self[64];
    snprintf(host, sizeof(host), "/proc/1/ns/%s", sr_config_ns_proc_name(k));
    snprintf(self, sizeof(self), "/proc/self/ns/%s", sr_config_ns_proc_name(k));
    f->ns[k].is_host = ino == ns_ino(host) || ino == ns_ino(self);
    /* Another live seerun container in the same state root? */
    struct sr_ns_peer peer;
    if (in->find_peer && in->find_peer(in->peer_data, sr_config_ns_proc_name(k), ino, &peer)) {
      f->ns[k].is_seerun_container = true;
      f->ns[k].container_has_network = peer.network_granted;
      f->ns[k].container_pid = peer.pid;
    }
  }
  return 0;
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
      sr_hook_files_open(c->hooks.list[k][i].path, &places, &file);
      int r = sr_hook_files_fact(&file, in->profile, (struct sr_arena *)&c->arena, &f->hooks[k][i],
                                 err);
      sr_hook_files_close(&file);
      if (r < 0)
        return -1;
    }
  }
  sr_hook_files_places_tenant_dirs(&places, (struct sr_arena *)&c->arena, f);
  return 0;
}

int sr_policy_facts_compute(const struct sr_config *c, const struct sr_facts_input *in,
                            struct sr_policy_facts *facts, struct sr_host_objects *objs,
                            sr_error_t *err)
{
  memset(facts, 0, sizeof(*facts));
  sr_policy_facts_objects_close(objs);
  if (mount_facts(c, in, facts, objs, err) < 0 || hook_facts(c, in, facts, err) < 0 ||
      (ns_facts(c, in, facts, objs) < 0 && sr_error_make(err, ENOMEM, "policy facts") < 0)) {
    sr_policy_facts_objects_close(objs);
    return -1;
  }
  facts->landlock_abi = sr_landlock_abi();
  return 0;
}
