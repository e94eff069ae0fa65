#include "build.h"

#include "hook_files.h"

#include "cleanup.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Where engines keep images and containers' files.  What is there is the tenant's, though an
 * image's layers are root-owned files in root-owned directories like /usr/bin: no hook runs from
 * there, whatever path (a layer's, the merged rootfs's) names it. */
static const char *const image_stores[] = {
    "/var/lib/docker",  "/var/lib/containers", "/var/lib/containerd", "/run/containerd",
    "/run/containers",  "/run/docker",         "/var/lib/kubelet",    "/var/lib/cri-o",
    "/run/crio",        "/var/lib/lxc",        "/var/lib/lxd",        "/var/lib/seerun",
};

/* #! launchers: the program they run is found through PATH (the hook's environment), or named
 * in their arguments, and is never the file judged. */
static const char *const launchers[] = {
    "env",    "nice",    "nohup",   "timeout", "stdbuf",  "setsid", "sudo",   "doas",
    "su",     "runuser", "chroot",  "xargs",   "time",    "strace", "ltrace", "flock",
    "ionice", "taskset", "unshare", "nsenter", "setpriv", "capsh",  "chrt",   "prlimit",
};

/* Interpreters and launchers a host has, recognised by inode whatever name a hook gives them
 * (the policy also knows them by name). */
static const char *const known_interpreters[] = {
    "/bin/sh",          "/bin/bash",        "/bin/dash",       "/bin/busybox",
    "/usr/bin/env",     "/usr/bin/python3", "/usr/bin/perl",   "/usr/bin/ruby",
    "/usr/bin/node",    "/usr/bin/awk",     "/usr/bin/gawk",   "/usr/bin/mawk",
    "/usr/bin/sudo",    "/usr/bin/nsenter", "/usr/bin/xargs",  "/usr/bin/find",
    "/usr/bin/timeout", "/usr/bin/nice",    "/usr/bin/setsid", "/usr/sbin/chroot",
};

void sr_hook_files_init(struct sr_hook_file *f)
{
  memset(f, 0, sizeof(*f));
  f->fd = -1;
  f->interp_fd = -1;
}

void sr_hook_files_close(struct sr_hook_file *f)
{
  if (f->fd >= 0)
    close(f->fd);
  if (f->interp_fd >= 0)
    close(f->interp_fd);
  f->fd = f->interp_fd = -1;
}

__attribute__((format(printf, 3, 4))) static int why(char *buf, size_t size, const char *fmt,
                                                     ...)
{
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, size, fmt, ap);
  va_end(ap);
  return -1;
}

static bool under(const char *path, const char *dir)
{
  size_t l = strlen(dir);
  if (l == 1 && dir[0] == '/')
    return false; /* a place that is / would be everything */
  return strncmp(path, dir, l) == 0 && (path[l] == '/' || path[l] == '\0');
}

struct place {
  const char *what;
  char real[PATH_MAX];
  bool have_real;
  struct stat st;
  bool have_st;
};

static void place_init(struct place *p, const char *what, const char *path)
{
  memset(p, 0, sizeof(*p));
  p->what = what;
  if (path == NULL || path[0] == '\0')
    return;
  p->have_real = realpath(path, p->real) != NULL;
  p->have_st = stat(path, &p->st) == 0;
}

#define N_PLACES 3

/* The file fd is, judged from fd: see hook_files.h.  resolved gets its name on the host. */
static int judge_fd(int fd, const struct place *places, char *resolved, size_t rsize, char *w,
                    size_t wsize)
{
  struct stat st;
  if (fstat(fd, &st) < 0)
    return why(w, wsize, "fstat: %s", strerror(errno));
  if (!S_ISREG(st.st_mode))
    return why(w, wsize, "it is not a regular file");
  if (st.st_uid != 0)
    return why(w, wsize, "it is owned by uid %u, not root", st.st_uid);
  if (st.st_mode & (S_IWGRP | S_IWOTH))
    return why(w, wsize, "it is writable by group or others (mode %04o)", st.st_mode & 07777);
  char link[64];
  snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, resolved, rsize - 1);
  if (n <= 0 || (size_t)n >= rsize - 1 || resolved[0] != '/') {
    resolved[0] = '\0';
    return why(w, wsize, "its name cannot be read back from its descriptor");
  }
  resolved[n] = '\0';
  /* A magic link (/proc/<pid>/exe, /proc/<pid>/root/...) opens a file of that process's mount
   * namespace, whose name here may be another file: /proc/<a container's pid>/exe reads
   * "/bin/busybox" but is the container's own binary. */
  struct stat named;
  _cleanup_close_ int again = open(resolved, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (again < 0 || fstat(again, &named) < 0 || named.st_dev != st.st_dev ||
      named.st_ino != st.st_ino)
    return why(w, wsize,
               "the file it opens is not the host's %s (a file of another mount namespace, or "
               "one that was replaced)",
               resolved);
  for (int i = 0; i < N_PLACES; i++)
    if (places[i].have_real && under(resolved, places[i].real))
      return why(w, wsize, "it is in the %s (%s)", places[i].what, places[i].real);
  for (size_t i = 0; i < sizeof(image_stores) / sizeof(image_stores[0]); i++) {
    char store[PATH_MAX];
    const char *s = realpath(image_stores[i], store) ? store : image_stores[i];
    if (under(resolved, s))
      return why(w, wsize, "it is in an engine's image store (%s)", s);
  }
  /* Its directories, walked up by descriptor from the one that holds this very file. */
  char dir[PATH_MAX];
  snprintf(dir, sizeof(dir), "%s", resolved);
  char *slash = strrchr(dir, '/');
  const char *base = slash + 1;
  char name[NAME_MAX + 1];
  snprintf(name, sizeof(name), "%s", base);
  if (slash == dir)
    slash[1] = '\0';
  else
    *slash = '\0';
  int cur = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
  struct stat entry;
  if (cur < 0 || fstatat(cur, name, &entry, AT_SYMLINK_NOFOLLOW) < 0 ||
      entry.st_dev != st.st_dev || entry.st_ino != st.st_ino) {
    if (cur >= 0)
      close(cur);
    return why(w, wsize, "its directory %s does not hold it", dir);
  }
  for (int depth = 0; depth < 256; depth++) {
    struct stat d;
    if (fstat(cur, &d) < 0)
      break;
    if (depth > 0) {
      /* The name of where the walk is: one component less. */
      char *s = strrchr(dir, '/');
      if (s == dir)
        s[1] = '\0';
      else if (s)
        *s = '\0';
    }
    for (int i = 0; i < N_PLACES; i++)
      if (places[i].have_st && places[i].st.st_dev == d.st_dev &&
          places[i].st.st_ino == d.st_ino) {
        close(cur);
        return why(w, wsize, "it is in the %s", places[i].what);
      }
    if (d.st_uid != 0 || (d.st_mode & (S_IWGRP | S_IWOTH))) {
      close(cur);
      return why(w, wsize, "its directory %s is %s", dir,
                 d.st_uid != 0 ? "not owned by root" : "writable by group or others");
    }
    int parent = openat(cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
    struct stat p;
    if (parent < 0 || fstat(parent, &p) < 0 || (p.st_dev == d.st_dev && p.st_ino == d.st_ino)) {
      if (parent >= 0)
        close(parent);
      break; /* the root */
    }
    close(cur);
    cur = parent;
  }
  close(cur);
  return 0;
}

/* The first bytes of the file fd (an O_PATH descriptor), read through that same file.  Only
 * a regular file is opened: opening a device node can act (a watchdog starts counting). */
static ssize_t read_head(int fd, char *buf, size_t size)
{
  struct stat st;
  if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
    return -1;
  char link[64];
  snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
  _cleanup_close_ int r = open(link, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
  if (r < 0)
    return -1;
  return pread(r, buf, size, 0);
}

static bool is_launcher(const char *path)
{
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  for (size_t i = 0; i < sizeof(launchers) / sizeof(launchers[0]); i++)
    if (strcmp(base, launchers[i]) == 0)
      return true;
  return false;
}

/* The kernel's reading of a #! line: the interpreter, then one optional argument (the rest of
 * the line, trimmed). */
static bool parse_shebang(const char *head, size_t n, struct sr_hook_file *f)
{
  char line[256];
  size_t len = 0;
  for (size_t i = 2; i < n && head[i] != '\n' && len < sizeof(line) - 1; i++)
    line[len++] = head[i];
  line[len] = '\0';
  char *s = line;
  while (*s == ' ' || *s == '\t')
    s++;
  char *e = s + strcspn(s, " \t");
  char *arg = NULL;
  if (*e) {
    *e = '\0';
    arg = e + 1;
    while (*arg == ' ' || *arg == '\t')
      arg++;
    size_t al = strlen(arg);
    while (al && (arg[al - 1] == ' ' || arg[al - 1] == '\t' || arg[al - 1] == '\r'))
      arg[--al] = '\0';
    if (al == 0)
      arg = NULL;
  }
  if (*s == '\0')
    return false;
  snprintf(f->interp, sizeof(f->interp), "%s", s);
  if (arg) {
    snprintf(f->interp_arg, sizeof(f->interp_arg), "%s", arg);
    f->has_interp_arg = true;
  }
  return true;
}

void sr_hook_files_open(const char *path, const struct sr_hook_places *pl, struct sr_hook_file *f)
{
  sr_hook_files_init(f);
  struct place places[N_PLACES];
  place_init(&places[0], "bundle", pl ? pl->bundle : NULL);
  place_init(&places[1], "rootfs", pl ? pl->rootfs : NULL);
  place_init(&places[2], "state directory", pl ? pl->state_root : NULL);
  f->fd = open(path, O_PATH | O_CLOEXEC);
  if (f->fd < 0) {
    f->error = errno;
    why(f->why, sizeof(f->why), "it cannot be opened: %s", strerror(errno));
    return;
  }
  bool trusted =
      judge_fd(f->fd, places, f->resolved, sizeof(f->resolved), f->why, sizeof(f->why)) == 0;
  char head[258];
  ssize_t n = read_head(f->fd, head, sizeof(head));
  if (n < 2 || head[0] != '#' || head[1] != '!') {
    f->trusted = trusted;
    return;
  }
  /* A script: the kernel would open its interpreter by name, after our judgement.  We open it
   * once, judge it like the hook, and execute that descriptor ourselves. */
  if (!parse_shebang(head, (size_t)n, f)) {
    if (trusted)
      why(f->why, sizeof(f->why), "it is a script without an interpreter on its #! line");
    return;
  }
  f->interp_fd = open(f->interp, O_PATH | O_CLOEXEC);
  if (!trusted)
    return;
  if (f->interp[0] != '/') {
    why(f->why, sizeof(f->why), "its interpreter \"%s\" (#! line) is not an absolute path",
        f->interp);
    return;
  }
  if (is_launcher(f->interp)) {
    why(f->why, sizeof(f->why),
        "its interpreter \"%s\" (#! line) is an env-style launcher: the program it runs is "
        "found through PATH or its arguments, and is never judged",
        f->interp);
    return;
  }
  if (f->interp_fd < 0) {
    why(f->why, sizeof(f->why), "its interpreter \"%s\" (#! line) cannot be opened: %s",
        f->interp, strerror(errno));
    return;
  }
  char ires[PATH_MAX], iwhy[512];
  if (judge_fd(f->interp_fd, places, ires, sizeof(ires), iwhy, sizeof(iwhy)) < 0) {
    why(f->why, sizeof(f->why), "its interpreter \"%s\" (#! line) is not trusted: %s", f->interp,
        iwhy);
    return;
  }
  char magic[4];
  if (read_head(f->interp_fd, magic, sizeof(magic)) != 4 || memcmp(magic, "\177ELF", 4) != 0) {
    why(f->why, sizeof(f->why),
        "its interpreter \"%s\" (#! line) is not an ELF program (a script's interpreter cannot "
        "be a script)",
        f->interp);
    return;
  }
  f->trusted = true;
}

int sr_hook_files_fact(const struct sr_hook_file *f, const struct sr_policy_profile *p,
                       struct sr_arena *a, struct sr_policy_hook_fact *out, sr_error_t *err)
{
  memset(out, 0, sizeof(*out));
  out->trusted_path = f->trusted;
  if (!f->trusted && f->why[0] && (out->untrusted = sr_arena_strdup(a, f->why)) == NULL)
    return sr_error_make(err, ENOMEM, "hook facts");
  if (f->resolved[0] && (out->resolved = sr_arena_strdup(a, f->resolved)) == NULL)
    return sr_error_make(err, ENOMEM, "hook facts");
  size_t n = p ? p->n_hooks_allowed : 0;
  bool *m = sr_arena_array(a, n + 1, sizeof(bool));
  if (m == NULL)
    return sr_error_make(err, ENOMEM, "hook facts");
  struct stat st;
  bool have_st = f->fd >= 0 && fstat(f->fd, &st) == 0;
  if (have_st)
    for (size_t j = 0; j < n; j++) {
      /* The entry names a file: the hook is it when both open the same inode. */
      struct stat e;
      _cleanup_close_ int efd = open(p->hooks_allowed[j].path, O_PATH | O_CLOEXEC);
      m[j] = efd >= 0 && fstat(efd, &e) == 0 && e.st_dev == st.st_dev && e.st_ino == st.st_ino;
    }
  out->matches = m;
  for (size_t i = 0; have_st && i < sizeof(known_interpreters) / sizeof(known_interpreters[0]);
       i++) {
    struct stat k;
    if (stat(known_interpreters[i], &k) == 0 && k.st_dev == st.st_dev && k.st_ino == st.st_ino)
      out->interpreter = true;
  }
  return 0;
}

void sr_hook_files_places_tenant_dirs(const struct sr_hook_places *pl, struct sr_arena *a,
                                      struct sr_policy_facts *facts)
{
  const char *given[2] = {pl->bundle, pl->rootfs};
  size_t k = 0;
  for (int i = 0; i < 2; i++) {
    if (given[i] == NULL || given[i][0] == '\0')
      continue;
    char real[PATH_MAX];
    facts->tenant_dirs[k++] = sr_arena_strdup(a, given[i]);
    if (realpath(given[i], real) && strcmp(real, given[i]) != 0)
      facts->tenant_dirs[k++] = sr_arena_strdup(a, real);
  }
}
