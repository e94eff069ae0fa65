#include "build.h"

#include "mount_options.h"

#include <errno.h>
#include <stdio.h>
#include <linux/mount.h>
#include <string.h>
#include <sys/mount.h>

#ifndef MS_NOSYMFOLLOW
#define MS_NOSYMFOLLOW 256
#endif
#ifndef MOUNT_ATTR_NOSYMFOLLOW
#define MOUNT_ATTR_NOSYMFOLLOW 0x00200000
#endif

enum opt_kind { OPT_FLAG, OPT_PROPAGATION, OPT_RECURSIVE, OPT_ATIME, OPT_BIND, OPT_SPECIAL };

struct opt {
  const char *name;
  enum opt_kind kind;
  bool clear;         /* OPT_FLAG / OPT_RECURSIVE: clears the flag */
  unsigned long flag; /* MS_* */
  uint64_t attr;      /* MOUNT_ATTR_* for the recursive ones */
};

static const struct opt options[] = {
    {"defaults", OPT_FLAG, false, 0, 0},
    {"ro", OPT_FLAG, false, MS_RDONLY, 0},
    {"rw", OPT_FLAG, true, MS_RDONLY, 0},
    {"suid", OPT_FLAG, true, MS_NOSUID, 0},
    {"nosuid", OPT_FLAG, false, MS_NOSUID, 0},
    {"dev", OPT_FLAG, true, MS_NODEV, 0},
    {"nodev", OPT_FLAG, false, MS_NODEV, 0},
    {"exec", OPT_FLAG, true, MS_NOEXEC, 0},
    {"noexec", OPT_FLAG, false, MS_NOEXEC, 0},
    {"sync", OPT_FLAG, false, MS_SYNCHRONOUS, 0},
    {"async", OPT_FLAG, true, MS_SYNCHRONOUS, 0},
    {"dirsync", OPT_FLAG, false, MS_DIRSYNC, 0},
    {"remount", OPT_FLAG, false, MS_REMOUNT, 0},
    {"mand", OPT_FLAG, false, MS_MANDLOCK, 0},
    {"nomand", OPT_FLAG, true, MS_MANDLOCK, 0},
    {"atime", OPT_FLAG, true, MS_NOATIME, 0},
    {"noatime", OPT_FLAG, false, MS_NOATIME, 0},
    {"diratime", OPT_FLAG, true, MS_NODIRATIME, 0},
    {"nodiratime", OPT_FLAG, false, MS_NODIRATIME, 0},
    {"relatime", OPT_FLAG, false, MS_RELATIME, 0},
    {"norelatime", OPT_FLAG, true, MS_RELATIME, 0},
    {"strictatime", OPT_FLAG, false, MS_STRICTATIME, 0},
    {"nostrictatime", OPT_FLAG, true, MS_STRICTATIME, 0},
    {"iversion", OPT_FLAG, false, MS_I_VERSION, 0},
    {"noiversion", OPT_FLAG, true, MS_I_VERSION, 0},
    {"lazytime", OPT_FLAG, false, MS_LAZYTIME, 0},
    {"nolazytime", OPT_FLAG, true, MS_LAZYTIME, 0},
    {"silent", OPT_FLAG, false, MS_SILENT, 0},
    {"loud", OPT_FLAG, true, MS_SILENT, 0},
    {"nosymfollow", OPT_FLAG, false, MS_NOSYMFOLLOW, 0},
    {"symfollow", OPT_FLAG, true, MS_NOSYMFOLLOW, 0},
    {"bind", OPT_BIND, false, MS_BIND, 0},
    {"rbind", OPT_BIND, false, MS_BIND | MS_REC, 0},
    {"shared", OPT_PROPAGATION, false, MS_SHARED, 0},
    {"rshared", OPT_PROPAGATION, false, MS_SHARED | MS_REC, 0},
    {"slave", OPT_PROPAGATION, false, MS_SLAVE, 0},
    {"rslave", OPT_PROPAGATION, false, MS_SLAVE | MS_REC, 0},
    {"private", OPT_PROPAGATION, false, MS_PRIVATE, 0},
    {"rprivate", OPT_PROPAGATION, false, MS_PRIVATE | MS_REC, 0},
    {"unbindable", OPT_PROPAGATION, false, MS_UNBINDABLE, 0},
    {"runbindable", OPT_PROPAGATION, false, MS_UNBINDABLE | MS_REC, 0},
    {"rro", OPT_RECURSIVE, false, 0, MOUNT_ATTR_RDONLY},
    {"rrw", OPT_RECURSIVE, true, 0, MOUNT_ATTR_RDONLY},
    {"rnosuid", OPT_RECURSIVE, false, 0, MOUNT_ATTR_NOSUID},
    {"rsuid", OPT_RECURSIVE, true, 0, MOUNT_ATTR_NOSUID},
    {"rnodev", OPT_RECURSIVE, false, 0, MOUNT_ATTR_NODEV},
    {"rdev", OPT_RECURSIVE, true, 0, MOUNT_ATTR_NODEV},
    {"rnoexec", OPT_RECURSIVE, false, 0, MOUNT_ATTR_NOEXEC},
    {"rexec", OPT_RECURSIVE, true, 0, MOUNT_ATTR_NOEXEC},
    {"rnodiratime", OPT_RECURSIVE, false, 0, MOUNT_ATTR_NODIRATIME},
    {"rdiratime", OPT_RECURSIVE, true, 0, MOUNT_ATTR_NODIRATIME},
    /* The atime modes are one field of mount_setattr, not bits: the "no"/"a" forms fall back
     * to the kernel default, relatime. */
    {"rnoatime", OPT_ATIME, false, 0, MOUNT_ATTR_NOATIME},
    {"ratime", OPT_ATIME, false, 0, MOUNT_ATTR_RELATIME},
    {"rrelatime", OPT_ATIME, false, 0, MOUNT_ATTR_RELATIME},
    {"rnorelatime", OPT_ATIME, false, 0, MOUNT_ATTR_RELATIME},
    {"rstrictatime", OPT_ATIME, false, 0, MOUNT_ATTR_STRICTATIME},
    {"rnostrictatime", OPT_ATIME, false, 0, MOUNT_ATTR_RELATIME},
    {"rnosymfollow", OPT_RECURSIVE, false, 0, MOUNT_ATTR_NOSYMFOLLOW},
    {"rsymfollow", OPT_RECURSIVE, true, 0, MOUNT_ATTR_NOSYMFOLLOW},
    {"idmap", OPT_SPECIAL, false, 0, 0},
    {"ridmap", OPT_SPECIAL, false, 0, 0},
    {"tmpcopyup", OPT_SPECIAL, false, 0, 0},
};

static const struct opt *lookup(const char *name)
{
  for (size_t i = 0; i < sizeof(options) / sizeof(options[0]); i++)
    if (strcmp(options[i].name, name) == 0)
      return &options[i];
  return NULL;
}

const char *sr_mount_options_name(size_t i)
{
  return i < sizeof(options) / sizeof(options[0]) ? options[i].name : NULL;
}

long sr_mount_options_propagation(const char *name)
{
  const struct opt *o = lookup(name);
  if (o == NULL || o->kind != OPT_PROPAGATION)
    return -1;
  return (long)o->flag;
}

int sr_mount_options_parse(struct sr_arena *a, char **opts, size_t n, const char *path,
                           struct sr_mount_opts *out, sr_error_t *err)
{
  size_t data_len = 0;
  memset(out, 0, sizeof(*out));
  for (size_t i = 0; i < n; i++)
    data_len += strlen(opts[i]) + 1;
  char *data = sr_arena_alloc(a, data_len + 1);
  if (data == NULL)
    return sr_error_make(err, ENOMEM, "%s", path);
  char *d = data;

  for (size_t i = 0; i < n; i++) {
    const char *name = opts[i];
    const struct opt *o = lookup(name);
    char k[32]; /* "[i]", the key of the option in errors */
    snprintf(k, sizeof(k), "[%zu]", i);
    if (o == NULL) {
      if (name[0] == '\0')
        return sr_error_config_at(err, path, k, "empty mount option");
      /* Filesystem-specific (size=, mode=, uid=, lowerdir=...): passed through as data. */
      if (d != data)
        *d++ = ',';
      size_t l = strlen(name);
      memcpy(d, name, l);
      d += l;
      continue;
    }
    switch (o->kind) {
    case OPT_FLAG:
      if (o->clear) {
        out->flags &= ~o->flag;
        out->clear |= o->flag;
      } else {
        out->flags |= o->flag;
        out->clear &= ~o->flag;
      }
      break;
    case OPT_BIND:
      out->flags |= o->flag;
      if (o->flag & MS_REC)
        out->rbind = true;
      else
        out->bind = true;
      break;
    case OPT_PROPAGATION:
      if (out->propagation != 0 && out->propagation != o->flag)
        return sr_error_config_at(err, path, k, "conflicting propagation option \"%s\"", name);
      out->propagation = o->flag;
      break;
    case OPT_RECURSIVE:
      if (o->clear) {
        out->rec_attr_clr |= o->attr;
        out->rec_attr_set &= ~o->attr;
      } else {
        out->rec_attr_set |= o->attr;
        out->rec_attr_clr &= ~o->attr;
      }
      break;
    case OPT_ATIME:
      out->rec_atime_set = true;
      out->rec_atime = o->attr;
      break;
    case OPT_SPECIAL:
      if (strcmp(name, "idmap") == 0)
        out->idmap = true;
      else if (strcmp(name, "ridmap") == 0)
        out->ridmap = true;
      else
        out->tmpcopyup = true;
      break;
    }
  }
  *d = '\0';
  out->data = data[0] ? data : NULL;
  return 0;
}
