/* Where an open object really lies: its filesystem and its path within that filesystem (the
 * root of the mount it was opened through, plus the path below that mount's mount point), and
 * the mounts below it.  A second bind-mount view of /root/x, or /root/x bound onto a file, is
 * "/root/x" of the root filesystem whatever name reaches it: that, not the name, is what a
 * check of host paths must compare (issue 13, class 5).
 *
 * statmount()/listmount() (Linux 6.8+), else /proc/self/mountinfo by mount id. */
#ifndef SEERUN_MOUNT_WHERE_H
#define SEERUN_MOUNT_WHERE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct sr_where {
  dev_t dev;       /* the filesystem (st_dev of the object, sb device of a mount) */
  char *fs_path;   /* the path within the filesystem: "/root/x" */
  char *name;      /* its name in the runtime's mount namespace ("/tmp/view") */
};

void sr_where_release(struct sr_where *w);

/* The object open at fd (any kind; O_PATH is enough).  -1 with errno: cannot be told (a
 * deleted file, a name outside the runtime's root, a kernel without either interface). */
int sr_where_fd(int fd, struct sr_where *w);

/* The mounts' roots and mount points sr_where_fd_in has looked up, for many objects judged
 * at once (the policy's facts: every protected path and every bind source, most of them on a
 * few mounts).  By the unique mount id (statmount), which no other mount ever gets; on older
 * kernels a snapshot of mountinfo, read again when an id is missing or names another device
 * than the object's (a mount id is reused once its mount has gone).  Zeroed to start. */
struct sr_where_mount {
  uint64_t id;
  bool unique;
  unsigned maj, min;
  char *root, *point;
};
struct sr_where_mounts {
  struct sr_where_mount *v;
  size_t n, cap;
  bool mountinfo_only; /* as on a kernel without statmount (the unit tests' switch) */
};
void sr_where_mounts_release(struct sr_where_mounts *m);
/* sr_where_fd, its mount looked up in (and added to) m; m NULL: as sr_where_fd. */
int sr_where_fd_in(int fd, struct sr_where_mounts *m, struct sr_where *w);

/* The mounts whose mount points are at or below the name `under` (an object's name from
 * sr_where_fd): each as its filesystem and its root within it.  These come along with a
 * recursive bind of the object (rbind, the root filesystem).  *out is malloc'd (release each,
 * then free).  -1 with errno. */
int sr_where_submounts(const char *under, struct sr_where **out, size_t *n);

/* dir and path are clean absolute paths: path is dir or below it. */
bool sr_where_path_under(const char *path, const char *dir);

#endif
