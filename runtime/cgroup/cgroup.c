#include "build.h"

/* Layout detection, cgroup path resolution, the operations common to both layouts (attach,
 * process listing, signalling, removal) and the small file helpers the v1/v2 files share. */

#include "cgroup.h"
#include "cgroup_systemd.h"

#include "cleanup.h"
#include "default_devices.h"
#include "path.h"
#include "fileio.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/magic.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

/* ---- Small helpers ---- */

int64_t sr_cgroup_now_ms(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void sr_cgroup_pause(void)
{
  /* Short: a bounded wait polls a state the kernel changes quickly. */
  struct timespec ts = {0, 2 * 1000 * 1000};
  nanosleep(&ts, NULL);
}

int sr_cgroup_dir_open(struct sr_cg_dir *d, const char *root, const char *hier, const char *path,
                       sr_error_t *err)
{
  bool has_hier = hier && *hier;
  bool is_root = path == NULL || strcmp(path, "/") == 0;
  if ((size_t)snprintf(d->path, sizeof(d->path), "%s%s%s%s", root, has_hier ? "/" : "",
                       has_hier ? hier : "", is_root ? "" : path) >= sizeof(d->path))
    return sr_error_make(err, ENAMETOOLONG, "cgroup: path of `%s` below `%s`", path, root);
  d->fd = open(d->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (d->fd < 0)
    return sr_error_sys(err, "cgroup: open `%s`", d->path);
  return 0;
}

void sr_cgroup_dir_close(struct sr_cg_dir *d)
{
  if (d->fd >= 0) {
    int saved = errno;
    close(d->fd);
    errno = saved;
  }
  d->fd = -1;
}

int sr_cgroup_write(const struct sr_cg_dir *d, const char *file, const char *value, sr_error_t *err)
{
  char *line = (char *)value;
  return sr_cgroup_write_lines(d, file, &line, 1, err);
}

int sr_cgroup_names_add(char ***v, size_t *count, const char *name, size_t len)
{
  char **nv = realloc(*v, (*count + 2) * sizeof(char *));
  if (nv == NULL)
    return -1;
  *v = nv;
  nv[*count] = strndup(name, len);
  nv[*count + 1] = NULL;
  if (nv[*count] == NULL)
    return -1;
  (*count)++;
  return 0;
}

static int cmp_str(const void *a, const void *b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

void sr_cgroup_names_sort(char **v, size_t count)
{
  qsort(v, count, sizeof(char *), cmp_str);
}

int sr_cgroup_putf(const struct sr_cg_dir *d, const char *file, const char *field,
               sr_cgroup_explain_fn explain, sr_error_t *err, const char *fmt, ...)
{
  _cleanup_free_ char *value = NULL;
  va_list ap;
  va_start(ap, fmt);
  int n = vasprintf(&value, fmt, ap);
  va_end(ap);
  if (n < 0) {
    value = NULL;
    return sr_error_make(err, ENOMEM, "%s", field);
  }
  if (sr_cgroup_write(d, file, value, err) < 0)
    return explain ? explain(d, file, field, err) : sr_error_wrap(err, "%s", field);
  return 0;
}

int sr_cgroup_write_lines(const struct sr_cg_dir *d, const char *file, char *const *lines, size_t n,
                          sr_error_t *err)
{
  /* No O_CREAT: a missing file means the controller is absent, which must be an error. */
  _cleanup_close_ int fd = openat(d->fd, file, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0)
    return sr_error_sys(err, "cgroup: write `%s` = %s in %s", file, n ? lines[0] : "", d->path);
  for (size_t i = 0; i < n; i++) {
    /* One write(2) per entry: cgroup files parse each write as one request. */
    size_t len = strlen(lines[i]);
    ssize_t w;
    do
      w = write(fd, lines[i], len);
    while (w < 0 && errno == EINTR);
    if (w < 0)
      return sr_error_sys(err, "cgroup: write `%s` = %s in %s", file, lines[i], d->path);
    if ((size_t)w != len)
      return sr_error_make(err, EIO, "cgroup: write `%s` = %s in %s: short write", file, lines[i],
                           d->path);
  }
  return 0;
}

int sr_cgroup_read(const struct sr_cg_dir *d, const char *file, char *buf, size_t size,
                   sr_error_t *err)
{
  if (sr_fileio_read_small_at(d->fd, file, buf, size, NULL, err) < 0)
    return sr_error_wrap(err, "cgroup: %s", d->path);
  return 0;
}

bool sr_cgroup_has(const struct sr_cg_dir *d, const char *file)
{
  return faccessat(d->fd, file, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
}

bool sr_cgroup_parse_u64(const char *s, uint64_t *v)
{
  while (*s == ' ' || *s == '\t' || *s == '\n')
    s++;
  if (strncmp(s, "max", 3) == 0 && (s[3] == '\0' || s[3] == '\n' || s[3] == ' ')) {
    *v = UINT64_MAX;
    return true;
  }
  if (*s < '0' || *s > '9')
    return false;
  errno = 0;
  char *end;
  unsigned long long x = strtoull(s, &end, 10);
  if (errno != 0 || (*end != '\0' && *end != '\n' && *end != ' '))
    return false;
  *v = x;
  return true;
}

int sr_cgroup_read_u64(const struct sr_cg_dir *d, const char *file, uint64_t *v, sr_error_t *err)
{
  char buf[128];
  if (sr_cgroup_read(d, file, buf, sizeof(buf), err) < 0)
    return -1;
  if (!sr_cgroup_parse_u64(buf, v))
    return sr_error_make(err, 0, "cgroup: `%s` in %s: not a number: \"%s\"", file, d->path, buf);
  return 0;
}

int sr_cgroup_read_u64_opt(const struct sr_cg_dir *d, const char *file, uint64_t *v,
                           sr_error_t *err)
{
  if (!sr_cgroup_has(d, file))
    return 0;
  return sr_cgroup_read_u64(d, file, v, err);
}

void sr_cgroup_free_lines(char **lines, size_t n)
{
  for (size_t i = 0; i < n; i++)
    free(lines[i]);
  free(lines);
}

int sr_cgroup_read_keyed(const struct sr_cg_dir *d, const char *file, const char *key, uint64_t *v,
                         sr_error_t *err)
{
  char buf[8192];
  if (sr_cgroup_read(d, file, buf, sizeof(buf), err) < 0)
    return -1;
  size_t kl = strlen(key);
  *v = 0;
  for (char *line = buf; *line;) {
    if (strncmp(line, key, kl) == 0 && line[kl] == ' ') {
      if (!sr_cgroup_parse_u64(line + kl + 1, v))
        return sr_error_make(err, 0, "cgroup: `%s` in %s: bad value of `%s`", file, d->path, key);
      return 0;
    }
    char *eol = strchrnul(line, '\n');
    line = *eol ? eol + 1 : eol;
  }
  return 0;
}

/* ---- Layout ---- */

/* The layout under root, and with names (v1) its hierarchies as sr_cgroup_v1_hierarchies lists
 * them, from the same scan: each entry's statfs says what it is (a cgroup v1 mount, the
 * hybrid's unified one), the directory entry's type leaves out the aliases ("cpu" ->
 * "cpu,cpuacct"), and a hierarchy mounted twice is listed once (its superblock's fsid). */
static int scan_layout(const char *root, int *version, bool *hybrid, char ***names, size_t *n,
                       sr_error_t *err)
{
  struct statfs sfs;
  if (statfs(root, &sfs) < 0)
    return sr_error_sys(err, "cgroup: statfs `%s`", root);
  if (sfs.f_type == CGROUP2_SUPER_MAGIC) {
    *version = 2;
    *hybrid = false;
    return 0;
  }
  if (sfs.f_type != TMPFS_MAGIC)
    return sr_error_make(err, 0,
                         "cgroup: `%s` is neither a cgroup2 mount nor a tmpfs of cgroup "
                         "v1 hierarchies",
                         root);
  _cleanup_dir_ DIR *dir = opendir(root);
  if (dir == NULL)
    return sr_error_sys(err, "cgroup: open `%s`", root);
  _cleanup_strv_ char **v = names ? calloc(1, sizeof(char *)) : NULL;
  if (names && v == NULL)
    return sr_error_make(err, ENOMEM, "cgroup hierarchies");
  fsid_t seen[64];
  size_t count = 0;
  bool v1 = false, unified = false;
  struct dirent *de;
  while ((de = readdir(dir)) != NULL) {
    if (de->d_name[0] == '.')
      continue;
    char p[PATH_MAX];
    if ((size_t)snprintf(p, sizeof(p), "%s/%s", root, de->d_name) >= sizeof(p))
      continue;
    if (statfs(p, &sfs) < 0)
      continue;
    if (sfs.f_type == CGROUP2_SUPER_MAGIC && strcmp(de->d_name, "unified") == 0)
      unified = true;
    if (sfs.f_type != CGROUP_SUPER_MAGIC)
      continue;
    v1 = true;
    struct stat st;
    if (names == NULL || de->d_type == DT_LNK ||
        (de->d_type != DT_DIR &&
         (fstatat(dirfd(dir), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode))))
      continue;
    bool dup = false;
    for (size_t i = 0; i < count && i < 64 && !dup; i++)
      dup = memcmp(&seen[i], &sfs.f_fsid, sizeof(sfs.f_fsid)) == 0;
    if (dup)
      continue;
    if (count < 64)
      seen[count] = sfs.f_fsid;
    if (sr_cgroup_names_add(&v, &count, de->d_name, strlen(de->d_name)) < 0)
      return sr_error_make(err, ENOMEM, "cgroup hierarchies");
  }
  if (!v1)
    return sr_error_make(err, 0, "cgroup: `%s` is a tmpfs without cgroup v1 hierarchies", root);
  *version = 1;
  *hybrid = unified;
  if (names) {
    sr_cgroup_names_sort(v, count);
    *names = steal_ptr(v);
    *n = count;
  }
  return 0;
}

int sr_cgroup_layout(const char *root, int *version, bool *hybrid, sr_error_t *err)
{
  return scan_layout(root, version, hybrid, NULL, NULL, err);
}

/* "/a/b" from any spelling (oci/common/path.h); ".." refused (the cgroup must stay below the
 * hierarchy root, whatever the config says), and so is the root cgroup itself. */
static int clean_path(const char *in, const char *what, char **out, sr_error_t *err)
{
  _cleanup_free_ char *res = malloc(strlen(in) + 2);
  if (res == NULL)
    return sr_error_make(err, ENOMEM, "%s", what);
  if (sr_path_clean(in, res) > 0)
    return sr_error_make(err, 0, "%s: \"%s\": `..` components are not allowed", what, in);
  if (strcmp(res, "/") == 0)
    return sr_error_make(err, 0, "%s: \"%s\" names the root cgroup", what, in);
  *out = steal_ptr(res);
  return 0;
}

/* The caller's own cgroup in /proc/self/cgroup text: v1 name=systemd, else v1 pids, else the
 * v2 "0::" line. */
static int own_cgroup(const char *text, char *out, size_t size, sr_error_t *err)
{
  const char *v2 = NULL, *pids = NULL, *systemd = NULL;
  size_t v2l = 0, pidsl = 0, systemdl = 0;
  for (const char *line = text; *line;) {
    const char *eol = strchrnul(line, '\n');
    const char *c1 = memchr(line, ':', (size_t)(eol - line));
    const char *c2 = c1 ? memchr(c1 + 1, ':', (size_t)(eol - c1 - 1)) : NULL;
    if (c2) {
      const char *path = c2 + 1;
      size_t pl = (size_t)(eol - path);
      if (c1 - line == 1 && line[0] == '0' && c2 == c1 + 1) {
        v2 = path;
        v2l = pl;
      }
      for (const char *c = c1 + 1; c < c2;) {
        const char *ce = memchr(c, ',', (size_t)(c2 - c));
        if (ce == NULL)
          ce = c2;
        size_t cl = (size_t)(ce - c);
        if (cl == 12 && memcmp(c, "name=systemd", 12) == 0) {
          systemd = path;
          systemdl = pl;
        } else if (cl == 4 && memcmp(c, "pids", 4) == 0) {
          pids = path;
          pidsl = pl;
        }
        c = ce + 1;
      }
    }
    line = *eol ? eol + 1 : eol;
  }
  const char *p = systemd ? systemd : pids ? pids : v2;
  size_t pl = systemd ? systemdl : pids ? pidsl : v2l;
  if (p == NULL)
    return sr_error_make(err, 0, "/proc/self/cgroup: no name=systemd, pids or 0:: line");
  if (pl + 1 > size)
    return sr_error_make(err, ENAMETOOLONG, "/proc/self/cgroup");
  memcpy(out, p, pl);
  out[pl] = '\0';
  return 0;
}

int sr_cgroup_resolve_path_in(const char *proc_self_cgroup, const char *cgroups_path,
                              const char *id, char **out, sr_error_t *err)
{
  if (cgroups_path == NULL || cgroups_path[0] == '\0') {
    /* The id names a directory: no separators, no dot-only names. */
    if (id == NULL || id[0] == '\0' || strchr(id, '/') || strcmp(id, ".") == 0 ||
        strcmp(id, "..") == 0)
      return sr_error_make(err, 0, "cgroup: container id \"%s\" cannot name a cgroup",
                           id ? id : "");
    if (asprintf(out, "/%s", id) < 0)
      return sr_error_make(err, ENOMEM, "cgroup path");
    return 0;
  }
  /* "slice:prefix:name" is the systemd driver's form: as a cgroupfs path it would name a
   * directory "a:b:c", which is never what the engine meant (as runc, refused). */
  const char *c1 = strchr(cgroups_path, ':');
  const char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
  if (c2 && strchr(c2 + 1, ':') == NULL && memchr(cgroups_path, '/', (size_t)(c1 - cgroups_path)) == NULL)
    return sr_error_make(err, 0,
                         "linux.cgroupsPath: \"%s\" is in the systemd driver's "
                         "\"slice:prefix:name\" form; pass --systemd-cgroup to use it",
                         cgroups_path);
  /* Refused before joining: a relative ".." would climb out of the caller's own cgroup. */
  for (const char *p = cgroups_path; (p = strstr(p, "..")) != NULL; p += 2)
    if ((p == cgroups_path || p[-1] == '/') && (p[2] == '\0' || p[2] == '/'))
      return sr_error_make(err, 0, "linux.cgroupsPath: \"%s\": `..` components are not allowed",
                           cgroups_path);
  if (cgroups_path[0] == '/')
    return clean_path(cgroups_path, "linux.cgroupsPath", out, err);
  char own[PATH_MAX];
  if (own_cgroup(proc_self_cgroup ? proc_self_cgroup : "", own, sizeof(own), err) < 0)
    return sr_error_wrap(err, "linux.cgroupsPath: relative \"%s\"", cgroups_path);
  _cleanup_free_ char *joined = NULL;
  if (asprintf(&joined, "%s/%s", own, cgroups_path) < 0)
    return sr_error_make(err, ENOMEM, "cgroup path");
  return clean_path(joined, "linux.cgroupsPath", out, err);
}

int sr_cgroup_resolve_path(const char *cgroups_path, const char *id, bool systemd, char **out,
                           sr_error_t *err)
{
  if (systemd) {
    struct sr_systemd_unit u;
    if (sr_systemd_parse(cgroups_path, id, &u, err) < 0)
      return -1;
    *out = steal_ptr(u.path);
    sr_systemd_unit_release(&u);
    if (!sr_systemd_running()) {
      free(*out);
      *out = NULL;
      return sr_error_make(err, 0,
                           "--systemd-cgroup: systemd is not running (no /run/systemd/system)");
    }
    return 0;
  }
  char text[16384] = "";
  if (cgroups_path && cgroups_path[0] && cgroups_path[0] != '/' &&
      sr_fileio_read_small_at(AT_FDCWD, "/proc/self/cgroup", text, sizeof(text), NULL, err) < 0)
    return sr_error_wrap(err, "linux.cgroupsPath");
  return sr_cgroup_resolve_path_in(text, cgroups_path, id, out, err);
}

/* ---- Object ---- */

int sr_cgroup_new_with_layout(const char *root, const char *path, int version, bool hybrid,
                              struct sr_cgroup **out, sr_error_t *err)
{
  if (version != 1 && version != 2)
    return sr_error_make(err, EINVAL, "cgroup: unknown cgroup version %d", version);
  if (path == NULL || path[0] != '/')
    return sr_error_make(err, EINVAL, "cgroup: path \"%s\" is not absolute", path ? path : "");
  _cleanup_free_ char *clean = NULL;
  if (clean_path(path, "cgroup path", &clean, err) < 0)
    return -1;
  struct sr_cgroup *cg = calloc(1, sizeof(*cg));
  if (cg == NULL)
    return sr_error_make(err, ENOMEM, "cgroup");
  cg->version = version;
  cg->hybrid = version == 1 && hybrid;
  cg->root = strdup(root);
  cg->path = steal_ptr(clean);
  cg->v1 = version == 1 ? calloc(1, sizeof(*cg->v1)) : NULL;
  if (cg->root == NULL || (version == 1 && cg->v1 == NULL)) {
    sr_cgroup_free(cg);
    return sr_error_make(err, ENOMEM, "cgroup");
  }
  *out = cg;
  return 0;
}

int sr_cgroup_layout_scan(const char *root, struct sr_cgroup_layout *l, sr_error_t *err)
{
  *l = (struct sr_cgroup_layout){0};
  /* The layout's scan lists the v1 hierarchies too: no second pass over root. */
  return scan_layout(root, &l->version, &l->hybrid, &l->names, &l->n, err);
}

void sr_cgroup_layout_release(struct sr_cgroup_layout *l)
{
  sr_cleanup_strv_freep(&l->names);
  *l = (struct sr_cgroup_layout){0};
}

int sr_cgroup_new_in(const struct sr_cgroup_layout *l, const char *root, const char *path,
                     struct sr_cgroup **out, sr_error_t *err)
{
  if (sr_cgroup_new_with_layout(root, path, l->version, l->hybrid, out, err) < 0)
    return -1;
  if (l->version == 1 && sr_cgroup_v1_list_copy((*out)->v1, l->names, l->n) < 0) {
    sr_cgroup_free(*out);
    *out = NULL;
    return sr_error_make(err, ENOMEM, "cgroup hierarchies");
  }
  return 0;
}

int sr_cgroup_new(const char *root, const char *path, struct sr_cgroup **out, sr_error_t *err)
{
  _cleanup_(sr_cgroup_layout_release) struct sr_cgroup_layout l = {0};
  if (sr_cgroup_layout_scan(root, &l, err) < 0)
    return -1;
  return sr_cgroup_new_in(&l, root, path, out, err);
}

void sr_cgroup_free(struct sr_cgroup *cg)
{
  if (cg == NULL)
    return;
  free(cg->root);
  free(cg->path);
  sr_cgroup_v1_list_free(cg->v1);
  free(cg);
}

/* ---- Hierarchies ---- */

const char *sr_cgroup_unified_base(const struct sr_cgroup *cg, char *buf, size_t size)
{
  if (cg->version == 2)
    return cg->root;
  snprintf(buf, size, "%s/unified", cg->root);
  return buf;
}

int sr_cgroup_unified_open(const struct sr_cgroup *cg, struct sr_cg_dir *d, sr_error_t *err)
{
  if (cg->version != 2 && !cg->hybrid)
    return sr_error_make(err, ENOTSUP, "cgroup: no unified hierarchy under %s", cg->root);
  return sr_cgroup_dir_open(d, cg->root, cg->version == 2 ? NULL : "unified", cg->path, err);
}

/* Every directory the container's cgroup has: one per v1 hierarchy (+ unified when hybrid), or
 * the single v2 one.  Paths, not fds: a removal needs them. */
static int leaf_paths(const struct sr_cgroup *cg, char ***out, size_t *n, sr_error_t *err)
{
  _cleanup_strv_ char **names = NULL;
  size_t nn = 0;
  if (cg->version == 1 && sr_cgroup_v1_hierarchies(cg, &names, &nn, err) < 0)
    return -1;
  size_t total = cg->version == 2 ? 1 : nn + (cg->hybrid ? 1 : 0);
  _cleanup_strv_ char **v = calloc(total + 1, sizeof(char *));
  if (v == NULL)
    return sr_error_make(err, ENOMEM, "cgroup");
  for (size_t i = 0; i < total; i++) {
    const char *hier = cg->version == 2 ? "" : i < nn ? names[i] : "unified";
    if (asprintf(&v[i], "%s%s%s%s", cg->root, *hier ? "/" : "", hier, cg->path) < 0) {
      v[i] = NULL;
      return sr_error_make(err, ENOMEM, "cgroup");
    }
  }
  *out = steal_ptr(v);
  *n = total;
  return 0;
}

/* ---- Creation and membership ---- */

static int create(struct sr_cgroup *cg, bool exclusive, bool *created, sr_error_t *err)
{
  *created = false;
  if (cg->version == 2)
    return sr_cgroup_v2_create(cg->root, cg->path, exclusive, created, err);
  if (sr_cgroup_v1_create(cg, exclusive, created, err) < 0)
    return -1;
  if (cg->hybrid) {
    char buf[PATH_MAX];
    bool made = false;
    if (sr_cgroup_v2_create(sr_cgroup_unified_base(cg, buf, sizeof(buf)), cg->path, exclusive,
                            &made, err) < 0) {
      if (exclusive && (*err)->status == EEXIST)
        sr_cgroup_v1_remove_leaves(cg);
      return -1;
    }
    *created = *created || made;
  }
  return 0;
}

int sr_cgroup_create(struct sr_cgroup *cg, bool *created, sr_error_t *err)
{
  return create(cg, false, created, err);
}

int sr_cgroup_create_new(struct sr_cgroup *cg, sr_error_t *err)
{
  bool created = false;
  return create(cg, true, &created, err);
}

int sr_cgroup_exists(const struct sr_cgroup *cg, bool *exists, sr_error_t *err)
{
  _cleanup_strv_ char **paths = NULL;
  size_t n = 0;
  *exists = false;
  if (leaf_paths(cg, &paths, &n, err) < 0)
    return -1;
  for (size_t i = 0; i < n && !*exists; i++)
    *exists = access(paths[i], F_OK) == 0;
  return 0;
}

int sr_cgroup_attach(struct sr_cgroup *cg, pid_t pid, sr_error_t *err)
{
  char value[32];
  snprintf(value, sizeof(value), "%d", (int)pid);
  _cleanup_strv_ char **paths = NULL;
  size_t n;
  if (leaf_paths(cg, &paths, &n, err) < 0)
    return -1;
  for (size_t i = 0; i < n; i++) {
    _cleanup_cg_dir_ struct sr_cg_dir d = {.fd = -1};
    if (sr_cgroup_dir_open(&d, paths[i], NULL, "/", err) < 0 ||
        sr_cgroup_write(&d, "cgroup.procs", value, err) < 0)
      return -1;
  }
  return 0;
}

int sr_cgroup_open_dir(struct sr_cgroup *cg, int *fd, sr_error_t *err)
{
  *fd = -1;
  if (cg->version != 2)
    return 0;
  char p[PATH_MAX];
  if ((size_t)snprintf(p, sizeof(p), "%s%s", cg->root, cg->path) >= sizeof(p))
    return sr_error_make(err, ENAMETOOLONG, "cgroup: open `%s%s`", cg->root, cg->path);
  *fd = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (*fd < 0)
    return sr_error_sys(err, "cgroup: open `%s`", p);
  return 0;
}

int sr_cgroup_apply_resources(struct sr_cgroup *cg, const struct sr_resources *r, bool update,
                              sr_error_t *err)
{
  if (cg->version == 2)
    return sr_cgroup_v2_apply(cg, r, update, err);
  return sr_cgroup_v1_apply(cg, r, update, err);
}

/* ---- Processes ---- */

struct pidvec {
  pid_t *v;
  size_t n, cap;
};

static int pidvec_push(struct pidvec *pv, pid_t pid)
{
  if (pv->n == pv->cap) {
    size_t cap = pv->cap ? pv->cap * 2 : 64;
    pid_t *nv = realloc(pv->v, cap * sizeof(pid_t));
    if (nv == NULL)
      return -1;
    pv->v = nv;
    pv->cap = cap;
  }
  pv->v[pv->n++] = pid;
  return 0;
}

/* Depth bound: a container can nest cgroups, but not without end. */
#define MAX_DEPTH 64

/* A directory whose link count is 2 has no subdirectory: kernfs (cgroupfs) and tmpfs keep the
 * count of a directory at 2 + its subdirectories, so the child cgroups need no readdir (the
 * scans of every hierarchy's directory at create and delete were a tenth of a run's calls). */
static bool no_subdirs(int dfd)
{
  struct stat st;
  return fstat(dfd, &st) == 0 && S_ISDIR(st.st_mode) && st.st_nlink == 2;
}

static int collect_procs(int dfd, const char *path, struct pidvec *pv, int depth, sr_error_t *err)
{
  if (depth > MAX_DEPTH)
    return sr_error_make(err, ELOOP, "cgroup: `%s` is nested too deep", path);
  _cleanup_close_ int pfd = openat(dfd, "cgroup.procs", O_RDONLY | O_CLOEXEC);
  if (pfd < 0) {
    if (errno == ENOENT) /* removed meanwhile */
      return 0;
    return sr_error_sys(err, "cgroup: open `cgroup.procs` in %s", path);
  }
  /* One pid a line, read with read() (stdio's fdopen cost two more calls per hierarchy); a
   * read that fails ends the list, as fscanf's did. */
  char buf[4096];
  long cur = -1; /* the number being read; -1: none */
  for (;;) {
    ssize_t n = read(pfd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    /* A number cut by the end of a read goes on in the next one. */
    for (ssize_t i = 0; i < n; i++) {
      if (buf[i] >= '0' && buf[i] <= '9') {
        cur = cur < 0 ? buf[i] - '0' : cur > INT32_MAX ? cur : cur * 10 + (buf[i] - '0');
        continue;
      }
      if (cur > 0 && cur <= INT32_MAX && pidvec_push(pv, (pid_t)cur) < 0)
        return sr_error_make(err, ENOMEM, "cgroup: pids of %s", path);
      cur = -1;
    }
  }
  if (cur > 0 && cur <= INT32_MAX && pidvec_push(pv, (pid_t)cur) < 0)
    return sr_error_make(err, ENOMEM, "cgroup: pids of %s", path);
  if (no_subdirs(dfd))
    return 0;
  int sub = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (sub < 0)
    return sr_error_sys(err, "cgroup: open `%s`", path);
  _cleanup_dir_ DIR *dir = fdopendir(sub);
  if (dir == NULL) {
    close(sub);
    return sr_error_sys(err, "cgroup: open `%s`", path);
  }
  struct dirent *de;
  while ((de = readdir(dir)) != NULL) {
    if (de->d_name[0] == '.' || (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN))
      continue;
    _cleanup_close_ int cfd =
        openat(dirfd(dir), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (cfd < 0) {
      if (errno == ENOENT || errno == ENOTDIR)
        continue;
      return sr_error_sys(err, "cgroup: open `%s/%s`", path, de->d_name);
    }
    _cleanup_free_ char *cpath = NULL;
    if (asprintf(&cpath, "%s/%s", path, de->d_name) < 0)
      return sr_error_make(err, ENOMEM, "cgroup: pids of %s", path);
    if (collect_procs(cfd, cpath, pv, depth + 1, err) < 0)
      return -1;
  }
  return 0;
}

static int cmp_pid(const void *a, const void *b)
{
  pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
  return (x > y) - (x < y);
}

int sr_cgroup_pids(struct sr_cgroup *cg, pid_t **pids, size_t *n, sr_error_t *err)
{
  _cleanup_strv_ char **paths = NULL;
  size_t np;
  struct pidvec pv = {NULL, 0, 0};
  *pids = NULL;
  *n = 0;
  if (leaf_paths(cg, &paths, &np, err) < 0)
    return -1;
  for (size_t i = 0; i < np; i++) {
    _cleanup_close_ int fd = open(paths[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT)
      continue;
    if (fd < 0 || collect_procs(fd, paths[i], &pv, 0, err) < 0) {
      if (fd < 0)
        sr_error_sys(err, "cgroup: open `%s`", paths[i]);
      free(pv.v);
      return -1;
    }
  }
  if (pv.n > 0)
    qsort(pv.v, pv.n, sizeof(pid_t), cmp_pid);
  size_t o = 0;
  for (size_t i = 0; i < pv.n; i++)
    if (o == 0 || pv.v[o - 1] != pv.v[i])
      pv.v[o++] = pv.v[i];
  *pids = pv.v;
  *n = o;
  return 0;
}

/* ---- Freezer ---- */

int sr_cgroup_freeze(struct sr_cgroup *cg, bool frozen, sr_error_t *err)
{
  if (cg->version == 1)
    return sr_cgroup_v1_freeze(cg, frozen, err);
  _cleanup_cg_dir_ struct sr_cg_dir d = {.fd = -1};
  if (sr_cgroup_unified_open(cg, &d, err) < 0)
    return -1;
  return sr_cgroup_v2_freeze(&d, frozen, err);
}

int sr_cgroup_is_frozen(struct sr_cgroup *cg, bool *frozen, sr_error_t *err)
{
  *frozen = false;
  if (cg->version == 1)
    return sr_cgroup_v1_is_frozen(cg, frozen, err);
  _cleanup_cg_dir_ struct sr_cg_dir d = {.fd = -1};
  if (sr_cgroup_unified_open(cg, &d, err) < 0)
    return -1;
  return sr_cgroup_v2_is_frozen(&d, frozen, err);
}

/* Whether a freezer can be used: the v1 freezer hierarchy, or cgroup.freeze. */
static bool can_freeze(const struct sr_cgroup *cg)
{
  sr_error_t e = NULL;
  _cleanup_cg_dir_ struct sr_cg_dir d = {.fd = -1};
  bool ok = false;
  if (cg->version == 1 && sr_cgroup_v1_controller(cg, "freezer", &d, &e) == 1)
    ok = true;
  else if (cg->version == 2 || cg->hybrid) {
    sr_error_free(&e);
    sr_cgroup_dir_close(&d);
    ok = sr_cgroup_unified_open(cg, &d, &e) == 0 && sr_cgroup_has(&d, "cgroup.freeze");
  }
  sr_error_free(&e);
  return ok;
}

/* ---- Signals and removal ---- */

static int kill_pids(const pid_t *pids, size_t n, int sig, sr_error_t *err)
{
  for (size_t i = 0; i < n; i++)
    if (kill(pids[i], sig) < 0 && errno != ESRCH)
      return sr_error_sys(err, "cgroup: send signal %d to pid %d", sig, (int)pids[i]);
  return 0;
}

/* cgroup.kill (Linux 5.14): the kernel kills every process, forks in flight included. */
static bool write_cgroup_kill(const struct sr_cgroup *cg)
{
  if (cg->version != 2 && !cg->hybrid)
    return false;
  sr_error_t e = NULL;
  _cleanup_cg_dir_ struct sr_cg_dir d = {.fd = -1};
  bool ok = sr_cgroup_unified_open(cg, &d, &e) == 0 && sr_cgroup_has(&d, "cgroup.kill") &&
            sr_cgroup_write(&d, "cgroup.kill", "1", &e) == 0;
  sr_error_free(&e);
  return ok;
}

static int kill_all(struct sr_cgroup *cg, sr_error_t *err)
{
  int64_t deadline = sr_cgroup_now_ms() + SR_CG_TIMEOUT_MS;
  bool freezer = false, kill_file = false, first = true;
  for (;;) {
    _cleanup_free_ pid_t *pids = NULL;
    size_t n;
    if (sr_cgroup_pids(cg, &pids, &n, err) < 0)
      return -1;
    if (n == 0)
      return 0;
    if (first) {
      first = false;
      kill_file = write_cgroup_kill(cg);
      freezer = can_freeze(cg);
    } else if (sr_cgroup_now_ms() > deadline) {
      return sr_error_make(err, ETIMEDOUT,
                           "cgroup: %zu process(es) still in %s%s after "
                           "SIGKILL (pid %d)",
                           n, cg->root, cg->path, (int)pids[0]);
    }
    if (freezer && !kill_file) {
      /* Listed while frozen, nothing can fork a process the list misses; thawed after, so that
       * v1-frozen tasks can act on SIGKILL. */
      free(pids);
      pids = NULL;
      if (sr_cgroup_freeze(cg, true, err) < 0)
        return -1;
      int r = sr_cgroup_pids(cg, &pids, &n, err);
      if (r == 0)
        r = kill_pids(pids, n, SIGKILL, err);
      if (sr_cgroup_freeze(cg, false, r < 0 ? NULL : err) < 0 || r < 0)
        return -1;
    } else {
      if (kill_pids(pids, n, SIGKILL, err) < 0)
        return -1;
      /* A task frozen by the v1 freezer cannot act on SIGKILL, cgroup.kill's included, until
       * thawed (a paused container being deleted); v2-frozen tasks die anyway. */
      if (freezer && cg->version == 1 && sr_cgroup_freeze(cg, false, err) < 0)
        return -1;
    }
    sr_cgroup_pause();
  }
}

int sr_cgroup_signal_all(struct sr_cgroup *cg, int sig, sr_error_t *err)
{
  if (sig == SIGKILL)
    return kill_all(cg, err);
  _cleanup_free_ pid_t *pids = NULL;
  size_t n;
  bool was_frozen = false, freezer = can_freeze(cg);
  if (freezer && sr_cgroup_is_frozen(cg, &was_frozen, err) < 0)
    return -1;
  if (freezer && !was_frozen && sr_cgroup_freeze(cg, true, err) < 0)
    return -1;
  /* Listed while frozen: a fork cannot slip between the listing and the signal. */
  int r = sr_cgroup_pids(cg, &pids, &n, err);
  if (r == 0)
    r = kill_pids(pids, n, sig, err);
  if (freezer && !was_frozen && sr_cgroup_freeze(cg, false, r < 0 ? NULL : err) < 0)
    return -1;
  return r;
}

static int remove_tree(const char *path, int depth, int64_t deadline, sr_error_t *err)
{
  if (depth > MAX_DEPTH)
    return sr_error_make(err, ELOOP, "cgroup: `%s` is nested too deep", path);
  int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return errno == ENOENT ? 0 : sr_error_sys(err, "cgroup: open `%s`", path);
  if (no_subdirs(fd)) {
    close(fd);
    fd = -1;
  }
  _cleanup_dir_ DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
  if (fd >= 0 && dir == NULL) {
    close(fd);
    return sr_error_sys(err, "cgroup: open `%s`", path);
  }
  struct dirent *de;
  while (dir != NULL && (de = readdir(dir)) != NULL) {
    if (de->d_name[0] == '.' || (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN))
      continue;
    struct stat st;
    if (fstatat(dirfd(dir), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode))
      continue;
    _cleanup_free_ char *child = NULL;
    if (asprintf(&child, "%s/%s", path, de->d_name) < 0)
      return sr_error_make(err, ENOMEM, "cgroup: remove %s", path);
    if (remove_tree(child, depth + 1, deadline, err) < 0)
      return -1;
  }
  for (;;) {
    if (rmdir(path) == 0 || errno == ENOENT)
      return 0;
    /* EBUSY for a moment after the last process exits, until the kernel has unlinked it. */
    if (errno != EBUSY || sr_cgroup_now_ms() > deadline)
      return sr_error_sys(err, "cgroup: remove `%s`", path);
    sr_cgroup_pause();
  }
}

int sr_cgroup_destroy(struct sr_cgroup *cg, bool remove_dirs, sr_error_t *err)
{
  if (kill_all(cg, err) < 0)
    return -1;
  if (!remove_dirs)
    return 0;
  _cleanup_strv_ char **paths = NULL;
  size_t n;
  if (leaf_paths(cg, &paths, &n, err) < 0)
    return -1;
  int64_t deadline = sr_cgroup_now_ms() + SR_CG_TIMEOUT_MS;
  for (size_t i = 0; i < n; i++)
    if (remove_tree(paths[i], 0, deadline, err) < 0)
      return -1;
  return 0;
}

/* ---- Statistics ---- */

int sr_cgroup_stats(struct sr_cgroup *cg, struct sr_cgroup_stats *st, sr_error_t *err)
{
  memset(st, 0, sizeof(*st));
  int r = cg->version == 1 ? sr_cgroup_v1_stats(cg, st, err) : sr_cgroup_v2_stats(cg, st, err);
  if (r < 0)
    sr_cgroup_stats_clear(st);
  return r;
}

void sr_cgroup_stats_clear(struct sr_cgroup_stats *st)
{
  free(st->cpu_percpu);
  for (size_t i = 0; i < st->n_memory_stat; i++)
    free(st->memory_stat_keys[i]);
  free(st->memory_stat_keys);
  free(st->memory_stat_values);
  free(st->blkio_bytes);
  free(st->hugetlb);
  memset(st, 0, sizeof(*st));
}

int sr_cgroup_stats_memory_stat(const struct sr_cg_dir *d, struct sr_cgroup_stats *st,
                                sr_error_t *err)
{
  char buf[16384];
  if (sr_cgroup_read(d, "memory.stat", buf, sizeof(buf), err) < 0)
    return -1;
  size_t lines = 0;
  for (char *p = buf; *p; p++)
    lines += *p == '\n';
  st->memory_stat_keys = calloc(lines + 1, sizeof(char *));
  st->memory_stat_values = calloc(lines + 1, sizeof(uint64_t));
  if (st->memory_stat_keys == NULL || st->memory_stat_values == NULL)
    return sr_error_make(err, ENOMEM, "cgroup: memory.stat");
  char *save = NULL;
  for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    char *sp = strchr(line, ' ');
    uint64_t v;
    if (sp == NULL || st->n_memory_stat > lines || !sr_cgroup_parse_u64(sp + 1, &v))
      continue;
    *sp = '\0';
    char *k = strdup(line);
    if (k == NULL)
      return sr_error_make(err, ENOMEM, "cgroup: memory.stat");
    st->memory_stat_keys[st->n_memory_stat] = k;
    st->memory_stat_values[st->n_memory_stat++] = v;
  }
  return 0;
}

uint64_t sr_cgroup_stats_lookup(const struct sr_cgroup_stats *st, const char *key)
{
  for (size_t i = 0; i < st->n_memory_stat; i++)
    if (strcmp(st->memory_stat_keys[i], key) == 0)
      return st->memory_stat_values[i];
  return 0;
}

int sr_cgroup_stats_add_blkio(struct sr_cgroup_stats *st, uint64_t major, uint64_t minor,
                              const char *op, uint64_t value)
{
  struct sr_blkio_entry *nv =
      realloc(st->blkio_bytes, (st->n_blkio_bytes + 1) * sizeof(*st->blkio_bytes));
  if (nv == NULL)
    return -1;
  st->blkio_bytes = nv;
  struct sr_blkio_entry *e = &nv[st->n_blkio_bytes++];
  e->major = major;
  e->minor = minor;
  snprintf(e->op, sizeof(e->op), "%s", op);
  e->value = value;
  return 0;
}

int sr_cgroup_create_device_rules(const struct sr_resources *r, const struct sr_device *devices,
                                  size_t n_devices, struct sr_arena *a, struct sr_resources *out,
                                  sr_error_t *err)
{
  size_t n_cfg = r ? r->n_devices : 0;
  size_t n_def = sr_default_devices_n;
  struct sr_device_rule *rules = sr_arena_array(a, n_cfg + n_def + n_devices + 1, sizeof(*rules));
  if (rules == NULL)
    return sr_error_make(err, ENOMEM, "device rules");
  size_t n = 0;
  for (size_t i = 0; i < n_cfg; i++)
    rules[n++] = r->devices[i];
  for (size_t i = 0; i < n_def; i++)
    rules[n++] = (struct sr_device_rule){true, sr_default_devices[i].type,
                                         sr_default_devices[i].major,
                                         sr_default_devices[i].minor, "rwm"};
  /* mknod only: linux.devices must not widen what resources.devices lets the container open. */
  for (size_t i = 0; i < n_devices; i++)
    if (devices[i].type != 'p')
      rules[n++] = (struct sr_device_rule){true, devices[i].type == 'u' ? 'c' : devices[i].type,
                                           devices[i].major, devices[i].minor, "m"};
  if (r)
    *out = *r;
  else
    memset(out, 0, sizeof(*out));
  out->devices = rules;
  out->n_devices = n;
  return 0;
}
