/* Shared by checkpoint and restore: the criu binary, refused options, CRIU's log, mountinfo. */
#include "build.h"

#include "criu_common.h"

#include "cleanup.h"
#include "fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


#ifndef CRIU_BINARY
#define CRIU_BINARY "criu"
#endif

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static char *unescape(const char *s)
{
  char *out = strdup(s);
  if (out == NULL)
    return NULL;
  char *w = out;
  for (const char *r = s; *r; r++) {
    if (r[0] == '\\' && r[1] >= '0' && r[1] <= '7' && r[2] >= '0' && r[2] <= '7' && r[3] >= '0' &&
        r[3] <= '7') {
      *w++ = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
      r += 3;
    } else
      *w++ = *r;
  }
  *w = '\0';
  return out;
}

void sr_criu_mountinfo_free(struct sr_mountinfo *m, size_t n)
{
  for (size_t i = 0; m && i < n; i++) {
    free(m[i].root);
    free(m[i].point);
    free(m[i].fstype);
  }
  free(m);
}

int sr_criu_mountinfo_read(pid_t pid, struct sr_mountinfo **out, size_t *n, sr_error_t *err)
{
  char path[64];
  snprintf(path, sizeof(path), "/proc/%d/mountinfo", pid);
  _cleanup_fclose_ FILE *f = fopen(path, "re");
  if (f == NULL)
    return sr_error_sys(err, "open `%s`", path);
  struct sr_mountinfo *m = NULL;
  size_t cnt = 0;
  char *line = NULL;
  size_t cap = 0;
  int r = 0;
  while (getline(&line, &cap, f) > 0) {
    /* ID PARENT MAJ:MIN ROOT POINT OPTS [OPTIONAL...] - FSTYPE SOURCE SUPER */
    char root[4096], point[4096], opts[1024];
    unsigned maj, min;
    int id, parent;
    char *sep = strstr(line, " - ");
    char fstype[256];
    if (sep == NULL ||
        sscanf(line, "%d %d %u:%u %4095s %4095s %1023s", &id, &parent, &maj, &min, root, point,
               opts) != 7 ||
        sscanf(sep + 3, "%255s", fstype) != 1) {
      r = sr_error_make(err, 0, "`%s`: cannot parse line `%.80s`", path, line);
      break;
    }
    struct sr_mountinfo *nm = realloc(m, (cnt + 1) * sizeof(*m));
    if (nm == NULL) {
      r = sr_error_make(err, ENOMEM, "mountinfo");
      break;
    }
    m = nm;
    m[cnt] = (struct sr_mountinfo){.id = id,
                                   .major = maj,
                                   .minor = min,
                                   .root = unescape(root),
                                   .point = unescape(point),
                                   .fstype = strdup(fstype),
                                   .readonly = strncmp(opts, "ro", 2) == 0 &&
                                               (opts[2] == ',' || opts[2] == '\0')};
    cnt++;
    if (m[cnt - 1].root == NULL || m[cnt - 1].point == NULL || m[cnt - 1].fstype == NULL) {
      r = sr_error_make(err, ENOMEM, "mountinfo");
      break;
    }
  }
  free(line);
  if (r < 0) {
    sr_criu_mountinfo_free(m, cnt);
    return -1;
  }
  *out = m;
  *n = cnt;
  return 0;
}

bool sr_criu_mount_is_external(const struct sr_mountinfo *m, size_t n, size_t i)
{
  if (strcmp(m[i].point, "/") == 0 || strcmp(m[i].fstype, "cgroup") == 0 ||
      strcmp(m[i].fstype, "cgroup2") == 0)
    return false;
  if (strcmp(m[i].root, "/") == 0)
    return false;
  /* A bind of a filesystem that is mounted whole in the namespace is CRIU's to make (/proc/sys
   * over the container's own proc); anything else comes from outside. */
  for (size_t j = 0; j < n; j++)
    if (j != i && m[j].major == m[i].major && m[j].minor == m[i].minor &&
        strcmp(m[j].root, "/") == 0 && strcmp(m[j].point, "/") != 0)
      return false;
  return true;
}

int sr_criu_refuse_unsupported(const struct sr_criu_opts *o, bool restore, sr_error_t *err)
{
  const char *cmd = restore ? "restore" : "checkpoint";
  if (o->pre_dump)
    return sr_error_make(err, EOPNOTSUPP,
                         "%s --pre-dump: not supported: pre-dumps and incremental checkpoints "
                         "need the kernel's soft-dirty page tracking, which this kernel does "
                         "not have (`criu check --feature mem_dirty_track`), and seerun does "
                         "not implement them; take a full checkpoint",
                         cmd);
  if (o->auto_dedup)
    return sr_error_make(err, EOPNOTSUPP,
                         "%s --auto-dedup: not supported: it only applies to incremental "
                         "checkpoints (see --pre-dump)",
                         cmd);
  if (o->lazy_pages)
    return sr_error_make(err, EOPNOTSUPP,
                         "%s --lazy-pages: not supported: seerun runs no page server and the "
                         "restored container is checked before it resumes, with all its memory",
                         cmd);
  if (o->empty_ns)
    return sr_error_make(err, EOPNOTSUPP,
                         "%s --empty-ns %s: not supported: every namespace of a seerun "
                         "container is its own and is dumped and restored with it",
                         cmd, o->empty_ns);
  return 0;
}

int sr_criu_binary(const struct sr_criu_opts *o, const char **out, sr_error_t *err)
{
#ifndef HAVE_CRIU
  (void)o;
  (void)out;
  return sr_error_make(err, EOPNOTSUPP,
                       "checkpoint/restore: this seerun was built without "
                       "libcriu (configure --with-criu; contrib/setup-criu.sh)");
#else
  const char *b = o->binary ? o->binary : CRIU_BINARY;
  if (strchr(b, '/') != NULL && access(b, X_OK) < 0)
    return sr_error_sys(err,
                        "the criu binary `%s` (--criu): checkpoint/restore needs CRIU 4.0 "
                        "or newer (contrib/setup-criu.sh installs it)",
                        b);
  *out = b;
  return 0;
#endif
}

int sr_criu_cg_mode(const char *mode, int *out, sr_error_t *err)
{
#ifdef HAVE_CRIU
  static const struct {
    const char *name;
    int mode;
  } modes[] = {{"soft", CRIU_CG_MODE_SOFT},
               {"full", CRIU_CG_MODE_FULL},
               {"strict", CRIU_CG_MODE_STRICT},
               {"ignore", CRIU_CG_MODE_IGNORE}};
  if (mode == NULL) {
    *out = CRIU_CG_MODE_SOFT;
    return 0;
  }
  for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
    if (strcmp(mode, modes[i].name) == 0) {
      *out = modes[i].mode;
      return 0;
    }
#endif
  (void)out;
  return sr_error_make(err, EINVAL,
                       "--manage-cgroups-mode `%s`: must be soft, full, strict or "
                       "ignore",
                       mode ? mode : "");
}

void sr_criu_explain(int dirfd, const char *dir, const char *name, sr_error_t *err)
{
  _cleanup_free_ char *buf = NULL;
  size_t len = 0;
  sr_error_t e = NULL;
  char last[512] = "";
  if (sr_fileio_read_at(dirfd, name, 16 << 20, &buf, &len, &e) == 0) {
    char *save = NULL;
    for (char *l = strtok_r(buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
      /* The first error is the cause; what follows is CRIU cleaning up. */
      if (last[0] == '\0' && strstr(l, "Error (") && !strstr(l, "RLIMIT_NOFILE"))
        snprintf(last, sizeof(last), "%s", l);
  }
  sr_error_free(&e);
  /* After the error's own text: "restore `x`: criu restore failed: <CRIU's words> (log: ...)". */
  _cleanup_free_ char *what = sr_error_text(*err);
  int status = *err ? (*err)->status : 0;
  sr_error_free(err);
  const char *l = strstr(last, "): ");
  sr_error_make(err, status, "%s: %s (log: %s/%s)", what ? what : "criu",
                l         ? l + 3
                : last[0] ? last
                          : "see the log",
                dir, name);
}

bool sr_criu_usable(const char *binary)
{
#ifndef HAVE_CRIU
  (void)binary;
  return false;
#else
  struct sr_criu_opts o = {.binary = binary};
  const char *b;
  sr_error_t e = NULL;
  if (sr_criu_binary(&o, &b, &e) < 0) {
    sr_error_free(&e);
    return false;
  }
  criu_opts *opts = NULL;
  if (criu_local_init_opts(&opts) < 0)
    return false;
  /* The version over RPC proves the binary starts and speaks libcriu's protocol (an RPC
   * `check` fails here on the RLIMIT_NOFILE it cannot raise, where `criu check` passes). */
  bool ok = criu_local_set_service_binary(opts, b) == 0 && criu_local_get_version(opts) >= 40000;
  criu_local_free_opts(opts);
  return ok;
#endif
}

#ifdef HAVE_CRIU
void sr_criu_set_common_opts(criu_opts *opts, const struct sr_criu_opts *o, int cg_mode,
                             int imgfd, int workfd)
{
  criu_local_set_images_dir_fd(opts, imgfd);
  criu_local_set_work_dir_fd(opts, workfd);
  criu_local_set_log_level(opts, 4);
  criu_local_set_tcp_established(opts, o->tcp_established);
  criu_local_set_ext_unix_sk(opts, o->ext_unix_sk);
  criu_local_set_shell_job(opts, o->shell_job);
  criu_local_set_file_locks(opts, o->file_locks);
  criu_local_set_manage_cgroups(opts, true);
  criu_local_set_manage_cgroups_mode(opts, (enum criu_cg_mode)cg_mode);
}

void sr_criu_free_opts(criu_opts **opts)
{
  if (*opts)
    criu_local_free_opts(*opts);
}
#endif
