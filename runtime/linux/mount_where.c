#include "build.h"

#include "mount_where.h"

#include "cleanup.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* Linux 6.8's statmount(), not in the build's headers yet. */
#ifndef SYS_statmount
#define SYS_statmount 457
#endif
#ifndef STATX_MNT_ID_UNIQUE
#define STATX_MNT_ID_UNIQUE 0x4000U
#endif
#define SR_STATMOUNT_SB_BASIC 0x1U
#define SR_STATMOUNT_MNT_ROOT 0x8U
#define SR_STATMOUNT_MNT_POINT 0x10U

struct sr_mnt_id_req {
  uint32_t size;
  uint32_t spare;
  uint64_t mnt_id;
  uint64_t param;
};

struct sr_statmount {
  uint32_t size;
  uint32_t mnt_opts;
  uint64_t mask;
  uint32_t sb_dev_major;
  uint32_t sb_dev_minor;
  uint64_t sb_magic;
  uint32_t sb_flags;
  uint32_t fs_type;
  uint64_t mnt_id;
  uint64_t mnt_parent_id;
  uint32_t mnt_id_old;
  uint32_t mnt_parent_id_old;
  uint64_t mnt_attr;
  uint64_t mnt_propagation;
  uint64_t mnt_peer_group;
  uint64_t mnt_master;
  uint64_t propagate_from;
  uint32_t mnt_root;
  uint32_t mnt_point;
  uint64_t spare2[50];
  char str[];
};

void sr_where_release(struct sr_where *w)
{
  free(w->fs_path);
  free(w->name);
  w->fs_path = w->name = NULL;
}

bool sr_where_path_under(const char *path, const char *dir)
{
  size_t n = strlen(dir);
  while (n > 1 && dir[n - 1] == '/')
    n--;
  if (n == 1 && dir[0] == '/')
    return path[0] == '/';
  return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* root + the part of name below point: where name lies in the filesystem mounted at point
 * whose root there is root. */
static char *join_below(const char *root, const char *point, const char *name)
{
  if (!sr_where_path_under(name, point))
    return NULL;
  const char *rel = strcmp(point, "/") == 0 ? name : name + strlen(point);
  if (strcmp(rel, "/") == 0)
    rel = "";
  char *out = NULL;
  if (strcmp(root, "/") == 0)
    return asprintf(&out, "%s", rel[0] ? rel : "/") < 0 ? NULL : out;
  return asprintf(&out, "%s%s", root, rel) < 0 ? NULL : out;
}

/* mountinfo's octal escapes (\040 for a space, ...), in place. */
static void unescape(char *s)
{
  char *o = s;
  for (char *p = s; *p; p++) {
    if (p[0] == '\\' && p[1] >= '0' && p[1] <= '3' && p[2] >= '0' && p[2] <= '7' &&
        p[3] >= '0' && p[3] <= '7') {
      *o++ = (char)((p[1] - '0') * 64 + (p[2] - '0') * 8 + (p[3] - '0'));
      p += 3;
    } else
      *o++ = *p;
  }
  *o = '\0';
}

/* One mountinfo line: "ID PARENT MAJ:MIN ROOT POINT ...". */
struct info_line {
  unsigned long id;
  unsigned maj, min;
  char *root, *point; /* in the line's buffer, unescaped */
};

/* A decimal number ended by stop, and p moved past it.  By hand: sscanf was most of the cost
 * of reading mountinfo, which the facts read once per judged tree (issue 19). */
static bool take_number(char **p, char stop, unsigned long *out)
{
  char *end;
  if (**p < '0' || **p > '9')
    return false;
  errno = 0;
  unsigned long v = strtoul(*p, &end, 10);
  if (errno != 0 || *end != stop)
    return false;
  *out = v;
  *p = end + 1;
  return true;
}

static bool parse_line(char *line, struct info_line *l)
{
  unsigned long parent, maj, min;
  char *p = line;
  if (!take_number(&p, ' ', &l->id) || !take_number(&p, ' ', &parent) ||
      !take_number(&p, ':', &maj) || !take_number(&p, ' ', &min) || maj > UINT_MAX ||
      min > UINT_MAX)
    return false;
  l->maj = (unsigned)maj;
  l->min = (unsigned)min;
  char *save = NULL;
  l->root = strtok_r(p, " ", &save);
  l->point = strtok_r(NULL, " ", &save);
  if (l->root == NULL || l->point == NULL)
    return false;
  unescape(l->root);
  unescape(l->point);
  return true;
}

static int statx_mnt(int fd, unsigned mask, struct statx *stx)
{
  if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, mask, stx) < 0)
    return -1;
  if (!(stx->stx_mask & mask)) {
    errno = ENOSYS;
    return -1;
  }
  return 0;
}

void sr_where_mounts_release(struct sr_where_mounts *m)
{
  for (size_t i = 0; i < m->n; i++) {
    free(m->v[i].root);
    free(m->v[i].point);
  }
  free(m->v);
  *m = (struct sr_where_mounts){0};
}

static struct sr_where_mount *mounts_add(struct sr_where_mounts *m, uint64_t id, bool unique,
                                         unsigned maj, unsigned min, const char *root,
                                         const char *point)
{
  if (m->n == m->cap) {
    size_t cap = m->cap ? m->cap * 2 : 16;
    struct sr_where_mount *nv = realloc(m->v, cap * sizeof(*nv));
    if (nv == NULL)
      return NULL;
    m->v = nv;
    m->cap = cap;
  }
  struct sr_where_mount *e = &m->v[m->n];
  *e = (struct sr_where_mount){id, unique, maj, min, strdup(root), strdup(point)};
  if (e->root == NULL || e->point == NULL) {
    free(e->root);
    free(e->point);
    return NULL;
  }
  m->n++;
  return e;
}

static const struct sr_where_mount *mounts_find(const struct sr_where_mounts *m, uint64_t id,
                                                bool unique)
{
  for (size_t i = 0; m && i < m->n; i++)
    if (m->v[i].id == id && m->v[i].unique == unique)
      return &m->v[i];
  return NULL;
}

static int found_mount(const struct sr_where_mount *e, char **root, char **point)
{
  *root = strdup(e->root);
  *point = strdup(e->point);
  return *root && *point ? 0 : -1;
}

/* Every line of mountinfo into m (the ids of the older kind), replacing what it held of
 * them. */
static int mounts_read_info(struct sr_where_mounts *m)
{
  size_t kept = 0;
  for (size_t i = 0; i < m->n; i++) {
    if (m->v[i].unique) {
      m->v[kept++] = m->v[i];
    } else {
      free(m->v[i].root);
      free(m->v[i].point);
    }
  }
  m->n = kept;
  _cleanup_fclose_ FILE *f = fopen("/proc/self/mountinfo", "re");
  if (f == NULL)
    return -1;
  _cleanup_free_ char *line = NULL;
  size_t cap = 0;
  while (getline(&line, &cap, f) > 0) {
    struct info_line l;
    if (parse_line(line, &l) && mounts_add(m, l.id, false, l.maj, l.min, l.root, l.point) == NULL)
      return -1;
  }
  return 0;
}

/* The root (in its filesystem) and the mount point (in our namespace) of fd's mount, looked
 * up in m first (and added to it). */
static int mount_root_point(int fd, struct sr_where_mounts *m, char **root, char **point)
{
  struct statx stx;
  if (!m->mountinfo_only && statx_mnt(fd, STATX_MNT_ID_UNIQUE, &stx) == 0) {
    const struct sr_where_mount *e = mounts_find(m, stx.stx_mnt_id, true);
    if (e)
      return found_mount(e, root, point);
    struct sr_mnt_id_req req = {.size = 24, .mnt_id = stx.stx_mnt_id,
                                .param = SR_STATMOUNT_MNT_ROOT | SR_STATMOUNT_MNT_POINT};
    size_t size = 2 * PATH_MAX + sizeof(struct sr_statmount);
    _cleanup_free_ struct sr_statmount *sm = calloc(1, size);
    if (sm == NULL)
      return -1;
    if (syscall(SYS_statmount, &req, sm, size, 0) == 0 &&
        (sm->mask & (SR_STATMOUNT_MNT_ROOT | SR_STATMOUNT_MNT_POINT)) ==
            (SR_STATMOUNT_MNT_ROOT | SR_STATMOUNT_MNT_POINT)) {
      if (mounts_add(m, stx.stx_mnt_id, true, 0, 0, sm->str + sm->mnt_root,
                   sm->str + sm->mnt_point) == NULL)
        return -1;
      *root = strdup(sm->str + sm->mnt_root);
      *point = strdup(sm->str + sm->mnt_point);
      return *root && *point ? 0 : -1;
    }
    if (errno != ENOSYS && errno != EINVAL && errno != EOPNOTSUPP)
      return -1;
  }
  /* Older kernels: mountinfo, by the mount id (not reused while we hold the fd; one the
   * snapshot holds for another device is another mount's, which has gone since). */
  if (statx_mnt(fd, STATX_MNT_ID, &stx) < 0)
    return -1;
  const struct sr_where_mount *e = mounts_find(m, stx.stx_mnt_id, false);
  if (e == NULL || e->maj != stx.stx_dev_major || e->min != stx.stx_dev_minor) {
    if (mounts_read_info(m) < 0)
      return -1;
    e = mounts_find(m, stx.stx_mnt_id, false);
  }
  if (e == NULL) {
    errno = ENOENT;
    return -1;
  }
  return found_mount(e, root, point);
}

int sr_where_fd(int fd, struct sr_where *w)
{
  return sr_where_fd_in(fd, NULL, w);
}

int sr_where_fd_in(int fd, struct sr_where_mounts *m, struct sr_where *w)
{
  memset(w, 0, sizeof(*w));
  struct stat st;
  if (fstat(fd, &st) < 0)
    return -1;
  /* Its name now: the kernel's, from the very dentry and mount (a deleted or unreachable
   * object has none that could be compared). */
  char link[64], name[PATH_MAX];
  snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, name, sizeof(name) - 1);
  if (n <= 0 || (size_t)n >= sizeof(name) - 1 || name[0] != '/' ||
      (st.st_nlink == 0 && !S_ISDIR(st.st_mode))) {
    errno = ENOENT;
    return -1;
  }
  name[n] = '\0';
  _cleanup_free_ char *root = NULL, *point = NULL;
  /* Without the caller's cache, one for this object alone. */
  _cleanup_(sr_where_mounts_release) struct sr_where_mounts local = {0};
  if (mount_root_point(fd, m ? m : &local, &root, &point) < 0)
    return -1;
  w->dev = st.st_dev;
  w->fs_path = join_below(root, point, name);
  w->name = strdup(name);
  if (w->fs_path == NULL || w->name == NULL) {
    sr_where_release(w);
    errno = ENOENT;
    return -1;
  }
  return 0;
}

/* The mounts found so far: released, unless handed out, on every return. */
struct where_list {
  struct sr_where *v;
  size_t used, size;
};

static void where_list_release(struct where_list *l)
{
  int saved = errno;
  for (size_t i = 0; i < l->used; i++)
    sr_where_release(&l->v[i]);
  free(l->v);
  errno = saved;
}

int sr_where_submounts(const char *under, struct sr_where **out, size_t *n)
{
  *out = NULL;
  *n = 0;
  _cleanup_fclose_ FILE *f = fopen("/proc/self/mountinfo", "re");
  if (f == NULL)
    return -1;
  _cleanup_free_ char *line = NULL;
  size_t cap = 0;
  _cleanup_(where_list_release) struct where_list found = {NULL, 0, 0};
  while (getline(&line, &cap, f) > 0) {
    struct info_line l;
    /* Every mount whose mount point is at or below the object: what an AT_RECURSIVE clone
     * of it takes along (its own mount, where it is one, is judged again: harmless). */
    if (!parse_line(line, &l) || !sr_where_path_under(l.point, under))
      continue;
    if (found.used == found.size) {
      size_t size = found.size ? found.size * 2 : 16;
      struct sr_where *nv = realloc(found.v, size * sizeof(*nv));
      if (nv == NULL) {
        errno = ENOMEM;
        return -1;
      }
      found.v = nv;
      found.size = size;
    }
    found.v[found.used] = (struct sr_where){
        .dev = makedev(l.maj, l.min), .fs_path = strdup(l.root), .name = strdup(l.point)};
    found.used++;
    if (found.v[found.used - 1].fs_path == NULL || found.v[found.used - 1].name == NULL) {
      errno = ENOMEM;
      return -1;
    }
  }
  *n = found.used;
  *out = found.v;
  found = (struct where_list){NULL, 0, 0}; /* handed out */
  return 0;
}
