#include "build.h"

#include "mount_paths.h"

#include <errno.h>
#include <string.h>

bool sr_mount_paths_is_overlay(const struct sr_mount *m)
{
  return m->type && strcmp(m->type, "overlay") == 0;
}

bool sr_mount_paths_source_is_path(const struct sr_mount *m)
{
  /* Filesystems whose source is a label the kernel does not look up. */
  static const char *const named[] = {
      "proc",     "sysfs",  "tmpfs",    "devpts",   "mqueue",   "cgroup",     "cgroup2",
      "overlay",  "ramfs",  "bpf",      "fuse",     "fusectl",  "binder",     "securityfs",
      "debugfs",  "tracefs", "configfs", "pstore",  "efivarfs", "hugetlbfs",  "autofs",
      "rpc_pipefs", "nfsd", "none",     NULL};
  if (m->opts.bind || m->opts.rbind || m->source == NULL || m->source[0] != '/')
    return false;
  for (const char *const *n = named; *n; n++)
    if (strcmp(m->type ? m->type : "", *n) == 0)
      return false;
  return true;
}

/* s[0..n) with the backslash escapes taken out. */
static char *unescape(struct sr_arena *a, const char *s, size_t n)
{
  char *out = sr_arena_alloc(a, n + 1);
  if (out == NULL)
    return NULL;
  size_t o = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] == '\\' && i + 1 < n)
      i++;
    out[o++] = s[i];
  }
  out[o] = '\0';
  return out;
}

/* The end of the element starting at s: the first sep not escaped by a backslash, or NUL. */
static const char *element_end(const char *s, char sep)
{
  for (; *s; s++) {
    if (*s == '\\') {
      if (s[1] == '\0')
        break;
      s++;
    } else if (*s == sep)
      return s;
  }
  return s;
}

static int add_path(struct sr_arena *a, struct sr_mount_data *d, size_t cap,
                    enum sr_mount_path_kind kind, const char *key, const char *value, size_t n,
                    const char *option, const char *field, sr_error_t *err)
{
  if (d->n_paths == cap)
    return sr_error_make(err, E2BIG, "%s: too many paths in the options", field);
  if (n == 0)
    return sr_error_make(err, 0, "%s: \"%s\": an empty path", field, option);
  struct sr_mount_path *p = &d->paths[d->n_paths];
  p->kind = kind;
  p->key = key;
  p->path = unescape(a, value, n);
  p->option = sr_arena_strdup(a, option);
  if (p->path == NULL || p->option == NULL)
    return sr_error_make(err, ENOMEM, "%s", field);
  d->n_paths++;
  return 0;
}

/* "lowerdir=A:B::C": lower layers A and B, data-only layer C. */
static int split_lowerdir(struct sr_arena *a, struct sr_mount_data *d, size_t cap,
                          const char *value, const char *option, const char *field,
                          sr_error_t *err)
{
  bool data = false;
  if (*value == '\0')
    return sr_error_make(err, 0, "%s: \"%s\": no layer", field, option);
  for (const char *s = value;;) {
    const char *e = element_end(s, ':');
    if (e == s) {
      /* "::": the data-only layers follow (once, and not first). */
      if (data || s == value || *e == '\0')
        return sr_error_make(err, 0, "%s: \"%s\": an empty layer", field, option);
      data = true;
      s = e + 1;
      continue;
    }
    if (add_path(a, d, cap, data ? SR_MOUNT_PATH_DATA : SR_MOUNT_PATH_LOWER,
                 data ? "datadir+" : "lowerdir+", s, (size_t)(e - s), option, field, err) < 0)
      return -1;
    if (*e == '\0')
      return 0;
    s = e + 1;
    if (*s == '\0')
      return sr_error_make(err, 0, "%s: \"%s\": an empty layer", field, option);
  }
}

static int overlay_option(struct sr_arena *a, struct sr_mount_data *d, size_t cap,
                          const char *opt, const char *field, bool *lowerdir, bool *lower_add,
                          sr_error_t *err)
{
  const char *eq = strchr(opt, '=');
  size_t kl = eq ? (size_t)(eq - opt) : strlen(opt);
  const char *value = eq ? eq + 1 : "";
#define KEY(k) (kl == strlen(k) && strncmp(opt, (k), kl) == 0)
  if (KEY("lowerdir")) {
    if (*lowerdir || *lower_add)
      return sr_error_make(err, 0, "%s: \"%s\": the lower layers are given twice", field,
                           opt);
    *lowerdir = true;
    return split_lowerdir(a, d, cap, value, opt, field, err);
  }
  if (KEY("lowerdir+") || KEY("datadir+")) {
    if (*lowerdir)
      return sr_error_make(err, 0, "%s: \"%s\": lowerdir= and %.*s= together", field, opt,
                           (int)kl, opt);
    *lower_add = true;
    bool data = KEY("datadir+");
    return add_path(a, d, cap, data ? SR_MOUNT_PATH_DATA : SR_MOUNT_PATH_LOWER,
                    data ? "datadir+" : "lowerdir+", value, strlen(value), opt, field, err);
  }
  if (KEY("upperdir") || KEY("workdir")) {
    enum sr_mount_path_kind kind = KEY("upperdir") ? SR_MOUNT_PATH_UPPER : SR_MOUNT_PATH_WORK;
    for (size_t i = 0; i < d->n_paths; i++)
      if (d->paths[i].kind == kind)
        return sr_error_make(err, 0, "%s: \"%s\": given twice", field, opt);
    return add_path(a, d, cap, kind, kind == SR_MOUNT_PATH_UPPER ? "upperdir" : "workdir", value,
                    strlen(value), opt, field, err);
  }
#undef KEY
  char *copy = sr_arena_strdup(a, opt);
  if (copy == NULL)
    return sr_error_make(err, ENOMEM, "%s", field);
  d->plain[d->n_plain++] = copy;
  return 0;
}

/* An option of another type that names a host path the kernel would open by name. */
static bool names_a_path(const char *opt)
{
  const char *eq = strchr(opt, '=');
  size_t kl = eq ? (size_t)(eq - opt) : strlen(opt);
  bool dir_key = (kl >= 3 && strncmp(opt + kl - 3, "dir", 3) == 0) ||
                 (kl >= 4 && strncmp(opt + kl - 4, "dir+", 4) == 0);
  return (eq && eq[1] == '/') || (eq && dir_key);
}

int sr_mount_paths_data_split(struct sr_arena *a, const struct sr_mount *m, const char *field,
                              struct sr_mount_data *out, sr_error_t *err)
{
  memset(out, 0, sizeof(*out));
  const char *data = m->opts.data ? m->opts.data : "";
  size_t cap = 1;
  for (const char *s = data; *s; s++)
    cap += *s == ',' || *s == ':';
  out->paths = sr_arena_array(a, cap, sizeof(*out->paths));
  out->plain = sr_arena_array(a, cap + 1, sizeof(*out->plain));
  if (out->paths == NULL || out->plain == NULL)
    return sr_error_make(err, ENOMEM, "%s", field);
  bool overlay = sr_mount_paths_is_overlay(m), lowerdir = false, lower_add = false;
  for (const char *s = data; *s;) {
    /* overlayfs honours "\," inside an option; every other type's options are split on each
     * comma, as they always were. */
    const char *e = overlay ? element_end(s, ',') : strchr(s, ',');
    if (e == NULL)
      e = s + strlen(s);
    char *opt = sr_arena_alloc(a, (size_t)(e - s) + 1);
    if (opt == NULL)
      return sr_error_make(err, ENOMEM, "%s", field);
    memcpy(opt, s, (size_t)(e - s));
    opt[e - s] = '\0';
    if (opt[0] == '\0') {
      /* An empty option ("a,,b"): nothing. */
    } else if (overlay) {
      if (overlay_option(a, out, cap, opt, field, &lowerdir, &lower_add, err) < 0)
        return -1;
    } else if (names_a_path(opt)) {
      const char *eq = strchr(opt, '=');
      char *key = sr_arena_alloc(a, (size_t)(eq - opt) + 1);
      if (key == NULL)
        return sr_error_make(err, ENOMEM, "%s", field);
      memcpy(key, opt, (size_t)(eq - opt));
      key[eq - opt] = '\0';
      if (add_path(a, out, cap, SR_MOUNT_PATH_UNJUDGED, key, eq + 1, strlen(eq + 1), opt, field,
                   err) < 0)
        return -1;
    } else
      out->plain[out->n_plain++] = opt;
    s = *e ? e + 1 : e;
  }
  out->plain[out->n_plain] = NULL;
  return 0;
}
