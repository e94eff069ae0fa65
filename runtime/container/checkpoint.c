/* checkpoint: a running container's processes dumped by CRIU into an image directory. */
#include "build.h"

#include "checkpoint.h"

#include "cleanup.h"
#include "criu_common.h"
#include "json.h"
#include "lifecycle.h"
#include "log.h"
#include "fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef HAVE_CRIU

/* Makes the directory if needed and opens it. */
static int open_dir(const char *path, const char *option, int *out, sr_error_t *err)
{
  if (mkdir(path, 0700) < 0 && errno != EEXIST)
    return sr_error_sys(err, "%s `%s`", option, path);
  int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return sr_error_sys(err, "%s `%s`", option, path);
  *out = fd;
  return 0;
}

static bool mount_id_in(const struct sr_mountinfo *m, size_t n, int id)
{
  for (size_t i = 0; i < n; i++)
    if (m[i].id == id)
      return true;
  return false;
}

/* The init's stdio as runc records it (descriptors.json: what fds 0-2 point to), and the
 * host files among them declared external to CRIU ("file[MNT:INO]"), which cannot dump a file
 * on a mount outside the container: restore hands the restoring process's own stdio in their
 * place (inherit-fd), as runc does for pipes. */
static int dump_stdio(criu_opts *opts, pid_t pid, const struct sr_mountinfo *m, size_t n, int imgfd,
                      sr_error_t *err)
{
  char links[3][4096];
  char keys[3][64];
  for (int fd = 0; fd < 3; fd++) {
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/fd/%d", pid, fd);
    ssize_t l = readlink(path, links[fd], sizeof(links[fd]) - 1);
    links[fd][l > 0 ? l : 0] = '\0';
    keys[fd][0] = '\0';
    if (l <= 0 || links[fd][0] != '/')
      continue; /* closed, a pipe or a socket: CRIU knows those */
    struct stat st;
    char info[64], buf[1024];
    size_t len;
    sr_error_t e = NULL;
    snprintf(info, sizeof(info), "/proc/%d/fdinfo/%d", pid, fd);
    if (stat(path, &st) < 0 ||
        sr_fileio_read_small_at(AT_FDCWD, info, buf, sizeof(buf), &len, &e) < 0) {
      sr_error_free(&e);
      return sr_error_sys(err, "the container's fd %d", fd);
    }
    const char *mnt = strstr(buf, "mnt_id:");
    int mnt_id = mnt ? atoi(mnt + 7) : -1;
    if (mnt_id < 0 || mount_id_in(m, n, mnt_id))
      continue; /* a file of the container's own */
    snprintf(keys[fd], sizeof(keys[fd]), "file[%x:%" PRIx64 "]", (unsigned)mnt_id,
             (uint64_t)st.st_ino);
    if (criu_local_add_external(opts, keys[fd]) < 0)
      return sr_error_make(err, ENOMEM, "criu: external %s", keys[fd]);
  }
  _cleanup_gen_ sr_json_gen_t g = NULL;
  if (sr_json_gen_new(&g, false, err) < 0)
    return -1;
  sr_json_array_open(g);
  for (int fd = 0; fd < 3; fd++)
    sr_json_put_string(g, links[fd]);
  sr_json_array_close(g);
  const unsigned char *buf;
  size_t len;
  if (sr_json_gen_buf(g, &buf, &len, err) < 0 ||
      sr_fileio_write_atomic(imgfd, "descriptors.json", buf, len, 0600, err) < 0)
    return -1;
  /* seerun's own note: which of them were declared external, under which name. */
  _cleanup_gen_ sr_json_gen_t s = NULL;
  if (sr_json_gen_new(&s, false, err) < 0)
    return -1;
  sr_json_map_open(s);
  sr_json_put_key(s, "stdio");
  sr_json_array_open(s);
  for (int fd = 0; fd < 3; fd++)
    sr_json_put_string(s, keys[fd]);
  sr_json_array_close(s);
  sr_json_map_close(s);
  if (sr_json_gen_buf(s, &buf, &len, err) < 0)
    return -1;
  return sr_fileio_write_atomic(imgfd, "seerun-stdio.json", buf, len, 0600, err);
}

int sr_checkpoint(struct sr_container *c, const struct sr_config *config,
                  const struct sr_criu_opts *o, sr_error_t *err)
{
  (void)config;
  const char *binary;
  int cg_mode;
  if (sr_criu_refuse_unsupported(o, false, err) < 0 || sr_criu_binary(o, &binary, err) < 0 ||
      sr_criu_cg_mode(o->manage_cgroups_mode, &cg_mode, err) < 0)
    return -1;
  pid_t pid = 0;
  enum sr_status st = sr_container_observe(c, &pid);
  if (st != SR_STATUS_RUNNING || pid <= 0)
    return sr_error_make(err, 0,
                         "container `%s` is %s: only a running container can be "
                         "checkpointed%s",
                         c->id, sr_container_status_name(st),
                         st == SR_STATUS_PAUSED ? " (resume it first)" : "");
  /* The supervisor and its connections live outside the dumped tree: what the proxy holds
   * open would be lost, and restore does not restart it. */
  if (c->rec->egress_proxy)
    return sr_error_make(err, EOPNOTSUPP,
                         "container `%s` reaches the network through seerun's egress proxy "
                         "(decided.egressProxy): its supervisor and connections are outside "
                         "the container and cannot be checkpointed; seerun refuses "
                         "checkpoint of a proxied container",
                         c->id);
  const char *image = o->image_path ? o->image_path : "checkpoint";
  const char *work = o->work_path ? o->work_path : image;
  _cleanup_close_ int imgfd = -1, workfd = -1;
  if (open_dir(image, "--image-path", &imgfd, err) < 0 ||
      open_dir(work, "--work-path", &workfd, err) < 0)
    return -1;
  _cleanup_criu_mounts_ struct sr_criu_mounts mounts = {NULL, 0};
  if (sr_criu_mountinfo_read(pid, &mounts.m, &mounts.n, err) < 0)
    return sr_error_wrap(err, "checkpoint `%s`", c->id);
  const struct sr_mountinfo *m = mounts.m;
  size_t n = mounts.n;
  _cleanup_criu_opts_ criu_opts *opts = NULL;
  if (criu_local_init_opts(&opts) < 0)
    return sr_error_make(err, ENOMEM, "criu options");
  if (criu_local_set_service_binary(opts, binary) < 0 ||
      criu_local_set_log_file(opts, "dump.log") < 0 ||
      (c->rec->rootfs && criu_local_set_root(opts, c->rec->rootfs) < 0))
    return sr_error_make(err, ENOMEM, "criu options");
  sr_criu_set_common_opts(opts, o, cg_mode, imgfd, workfd);
  criu_local_set_pid(opts, pid);
  criu_local_set_leave_running(opts, o->leave_running);
  /* Binds from outside the container (root filesystem, bind sources, device nodes, masks) are
   * named by their mount point; restore supplies what the policy decides for each name. */
  for (size_t i = 0; i < n; i++)
    if (sr_criu_mount_is_external(m, n, i) &&
        criu_local_add_ext_mount(opts, m[i].point, m[i].point) < 0)
      return sr_error_make(err, ENOMEM, "criu: external mount %s", m[i].point);
  if (dump_stdio(opts, pid, m, n, imgfd, err) < 0)
    return -1;
  if (criu_local_dump(opts) < 0) {
    sr_error_make(err, 0, "checkpoint `%s`: criu dump failed", c->id);
    sr_criu_explain(workfd, work, "dump.log", err);
    return -1;
  }
  /* runc's behaviour: the checkpointed container is gone unless --leave-running. */
  if (!o->leave_running)
    return sr_container_delete(c, true, NULL, err);
  return 0;
}

#else

int sr_checkpoint(struct sr_container *c, const struct sr_config *config,
                  const struct sr_criu_opts *o, sr_error_t *err)
{
  (void)c;
  (void)config;
  const char *b;
  return sr_criu_binary(o, &b, err);
}

#endif
