/* What checkpoint.c and restore.c share: libcriu options, its errors, a process's mounts. */
#ifndef SEERUN_CRIU_COMMON_H
#define SEERUN_CRIU_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "checkpoint.h"
#include "error.h"

/* One line of /proc/PID/mountinfo. */
struct sr_mountinfo {
  int id;
  unsigned major, minor;
  char *root;  /* the path inside its filesystem that is mounted */
  char *point; /* where, in the process's root */
  char *fstype;
  bool readonly; /* the per-mount flag */
};

int sr_criu_mountinfo_read(pid_t pid, struct sr_mountinfo **out, size_t *n, sr_error_t *err);
void sr_criu_mountinfo_free(struct sr_mountinfo *m, size_t n);

/* A process's mounts as one value (sr_criu_mountinfo_read(pid, &t.m, &t.n, err)), freed by
 * _cleanup_criu_mounts_. */
struct sr_criu_mounts {
  struct sr_mountinfo *m;
  size_t n;
};
static inline void sr_criu_mounts_free(struct sr_criu_mounts *t)
{
  sr_criu_mountinfo_free(t->m, t->n);
}
#define _cleanup_criu_mounts_ __attribute__((cleanup(sr_criu_mounts_free)))

/* A mount CRIU cannot make itself: a bind of something outside the container's mount
 * namespace (the root filesystem, bind sources, host device nodes, /dev/null over masked
 * files).  cgroup mounts CRIU handles itself. */
bool sr_criu_mount_is_external(const struct sr_mountinfo *m, size_t n, size_t i);

/* Refuses what cannot work here, naming the option: --pre-dump (no soft-dirty tracking),
 * --auto-dedup, --lazy-pages, --empty-ns. */
int sr_criu_refuse_unsupported(const struct sr_criu_opts *o, bool restore, sr_error_t *err);

/* --manage-cgroups-mode as libcriu's value; NULL is soft. */
int sr_criu_cg_mode(const char *mode, int *out, sr_error_t *err);

/* Adds the last error CRIU wrote into its log (dirfd/name) to err: "criu: ... (see PATH)". */
void sr_criu_explain(int dirfd, const char *dir, const char *name, sr_error_t *err);

#ifdef HAVE_CRIU
#include <criu.h>

/* The options dump and restore set alike: the image and work directories, CRIU's log level,
 * what the flags ask (--tcp-established, --ext-unix-sk, --shell-job, --file-locks) and cgroups
 * managed in cg_mode. */
void sr_criu_set_common_opts(criu_opts *opts, const struct sr_criu_opts *o, int cg_mode,
                             int imgfd, int workfd);
void sr_criu_free_opts(criu_opts **opts);
#define _cleanup_criu_opts_ __attribute__((cleanup(sr_criu_free_opts)))
#endif

#endif
