#include "build.h"

#include "root_overlay.h"

#include "mountapi.h"
#include "paths.h"

#include "cleanup.h"
#include "json.h"
#include "fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The kernel's name of what fd is open at (a mount's root: where it is mounted). */
static int fd_name(int fd, char *buf, size_t size)
{
  char link[64];
  snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, buf, size - 1);
  if (n <= 0 || (size_t)n >= size - 1 || buf[0] != '/')
    return -1;
  buf[n] = '\0';
  return strstr(buf, " (deleted)") ? -1 : 0;
}

/* path is "<store>/<dir>/<id>/<leaf>" (id one component): *store and *id, cut in place. */
static bool split_store(char *path, const char *dir, const char *leaf, char **store, char **id)
{
  size_t n = strlen(path), ll = strlen(leaf), dl = strlen(dir);
  if (n < ll + 2 || strcmp(path + n - ll, leaf) != 0 || path[n - ll - 1] != '/')
    return false;
  path[n - ll - 1] = '\0';
  char *slash = strrchr(path, '/');
  if (slash == NULL || slash[1] == '\0')
    return false;
  *id = slash + 1;
  *slash = '\0';
  size_t sl = strlen(path);
  if (sl < dl + 1 || strcmp(path + sl - dl, dir) != 0 || path[sl - dl - 1] != '/')
    return false;
  path[sl - dl - 1] = '\0';
  *store = path[0] ? path : "/";
  return true;
}

/* A root-owned regular file of the engine's storage, read whole (small). */
static int read_engine_file(const char *path, size_t max, char **buf, size_t *len)
{
  _cleanup_close_ int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != 0 ||
      (st.st_mode & 002))
    return -1;
  if ((uint64_t)st.st_size > max)
    return -1;
  /* Reopened through its own descriptor: the file judged root's is the file read. */
  char self[64];
  snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
  sr_error_t e = NULL;
  if (sr_fileio_read_at(AT_FDCWD, self, max, buf, len, &e) < 0) {
    sr_error_free(&e);
    return -1;
  }
  return 0;
}

/* containers/storage: <S>/overlay-containers/containers.json (and volatile-containers.json)
 * lists {"id": C, "layer": L, ...}. */
static bool storage_records(const char *store, const char *cid, const char *layer)
{
  static const char *const files[] = {"containers.json", "volatile-containers.json"};
  for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
    char path[PATH_MAX];
    if (snprintf(path, sizeof(path), "%s/overlay-containers/%s", store, files[f]) >=
        (int)sizeof(path))
      continue;
    _cleanup_free_ char *buf = NULL;
    size_t len = 0;
    if (read_engine_file(path, 64u << 20, &buf, &len) < 0)
      continue;
    yajl_val doc = NULL;
    sr_error_t e = NULL;
    if (sr_json_parse(buf, len, &doc, &e) < 0) {
      sr_error_free(&e);
      continue;
    }
    bool found = false;
    for (size_t i = 0; YAJL_IS_ARRAY(doc) && i < doc->u.array.len && !found; i++) {
      yajl_val id = sr_json_field(doc->u.array.values[i], "id");
      yajl_val l = sr_json_field(doc->u.array.values[i], "layer");
      const char *is = YAJL_IS_STRING(id) ? YAJL_GET_STRING(id) : NULL;
      const char *ls = YAJL_IS_STRING(l) ? YAJL_GET_STRING(l) : NULL;
      found = is && ls && strcmp(is, cid) == 0 && strcmp(ls, layer) == 0;
    }
    yajl_tree_free(doc);
    if (found)
      return true;
  }
  return false;
}

/* Docker: <D>/image/overlay2/layerdb/mounts/<C>/mount-id holds L. */
static bool docker_records(const char *store, const char *cid, const char *layer)
{
  char path[PATH_MAX];
  if (snprintf(path, sizeof(path), "%s/image/overlay2/layerdb/mounts/%s/mount-id", store, cid) >=
      (int)sizeof(path))
    return false;
  _cleanup_free_ char *buf = NULL;
  size_t len = 0;
  if (read_engine_file(path, 4096, &buf, &len) < 0)
    return false;
  while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == ' '))
    buf[--len] = '\0';
  return strcmp(buf, layer) == 0;
}


const char *sr_root_overlay_owner(struct sr_arena *a, int root_fd, int bundlefd,
                                  const char **why_not)
{
  struct statx stx;
  if (statx(root_fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &stx) < 0 ||
      !(stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT)) {
    *why_not = "the kernel does not say whether it is the root of its mount";
    return NULL;
  }
  if (!(stx.stx_attributes & STATX_ATTR_MOUNT_ROOT)) {
    *why_not = "a directory inside an overlay mount, not the root of one";
    return NULL;
  }
  char mp[PATH_MAX], bp[PATH_MAX];
  if (fd_name(root_fd, mp, sizeof(mp)) < 0 || fd_name(bundlefd, bp, sizeof(bp)) < 0) {
    *why_not = "where it is mounted cannot be told";
    return NULL;
  }
  /* containerd's shim and seerun sandbox mount the image in the bundle they hand over. */
  struct stat bst;
  if (fstat(bundlefd, &bst) == 0 && sr_paths_at_or_below(root_fd, bst.st_dev, bst.st_ino))
    return "mounted in the bundle";
  char m1[PATH_MAX], b1[PATH_MAX];
  char *store = NULL, *layer = NULL, *bstore = NULL, *cid = NULL;
  memcpy(m1, mp, sizeof(mp));
  memcpy(b1, bp, sizeof(bp));
  if (split_store(m1, "overlay", "merged", &store, &layer) &&
      split_store(b1, "overlay-containers", "userdata", &bstore, &cid) &&
      strcmp(store, bstore) == 0 && storage_records(store, cid, layer))
    return sr_arena_printf(a, "layer %s of container %s in %s/overlay-containers/containers.json",
                           layer, cid, store);
  memcpy(m1, mp, sizeof(mp));
  const char *base = strrchr(bp, '/');
  if (split_store(m1, "overlay2", "merged", &store, &layer) && base && base[1] &&
      docker_records(store, base + 1, layer))
    return sr_arena_printf(a, "layer %s of container %s in %s/image/overlay2/layerdb", layer,
                           base + 1, store);
  *why_not = sr_arena_printf(
      a, "an overlay mounted at \"%s\": not in the bundle, nor the layer containers/storage "
         "(podman, CRI-O) or Docker records for this container: another container's root "
         "filesystem, or any other overlay of the host",
      mp);
  return NULL;
}
