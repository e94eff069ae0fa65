/* restore: what the image (untrusted input) says, read before CRIU starts: a few lines of
 * protobuf reading, used only to refuse. */
#include "build.h"

#include "restore_internal.h"

#include "cleanup.h"
#include "seccomp_default.h"
#include "statedir.h"
#include "dir.h"
#include "fileio.h"

#include <dirent.h>
#include <errno.h>
#include <linux/seccomp.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef HAVE_CRIU

/* ---- the image's user namespace, read before CRIU starts -------------------------------- */

static bool pb_varint(const unsigned char **p, const unsigned char *end, uint64_t *v)
{
  *v = 0;
  for (int shift = 0; shift < 64 && *p < end; shift += 7) {
    unsigned char b = *(*p)++;
    *v |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80))
      return true;
  }
  return false;
}

/* One uid_gid_extent {first = 1, lower_first = 2, count = 3}. */
static bool pb_extent(const unsigned char *p, const unsigned char *end, struct sr_id_map *m)
{
  while (p < end) {
    uint64_t key, v;
    if (!pb_varint(&p, end, &key) || (key & 7) != 0 || !pb_varint(&p, end, &v) || v > UINT32_MAX)
      return false;
    if ((key >> 3) == 1)
      m->container_id = (uint32_t)v;
    else if ((key >> 3) == 2)
      m->host_id = (uint32_t)v;
    else if ((key >> 3) == 3)
      m->size = (uint32_t)v;
  }
  return true;
}

/* The maps of the image's user namespace must be the ones the policy decided for this id:
 * seerun never rewrites them (the image's files and memory hold ids of that range), and a
 * restore under another id, which the registry gives another range, is refused.  The same is
 * checked again on the restored namespace itself (post-restore): this early look only gives a
 * clear answer before CRIU starts (a restore on another range fails in CRIU otherwise). */
static int check_image_userns(int imgfd, const struct sr_linux *l, sr_error_t *err)
{
  if (!l->namespaces[SR_NS_USER].present)
    return 0;
  _cleanup_dir_ DIR *d = sr_dir_open_fd(imgfd);
  if (d == NULL)
    return sr_error_sys(err, "--image-path: read");
  struct dirent *de;
  char name[NAME_MAX + 1] = "";
  while ((de = readdir(d)) != NULL)
    if (strncmp(de->d_name, "userns-", 7) == 0 && strstr(de->d_name, ".img"))
      snprintf(name, sizeof(name), "%s", de->d_name);
  if (name[0] == '\0')
    return sr_error_make(err, EPERM,
                         "restore: refused: the image has no user namespace; the "
                         "policy decided one (linux.namespaces)");
  _cleanup_free_ char *buf = NULL;
  size_t len;
  if (sr_fileio_read_at(imgfd, name, 1 << 20, &buf, &len, err) < 0)
    return sr_error_wrap(err, "--image-path");
  /* Two magics, then one entry: its length and the message. */
  const unsigned char *p = (const unsigned char *)buf + 12, *end = (const unsigned char *)buf + len;
  uint32_t msg_len;
  if (len < 12 || (memcpy(&msg_len, buf + 8, 4), msg_len > len - 12))
    return sr_error_make(err, EINVAL, "--image-path: `%s`: not a CRIU image", name);
  end = p + msg_len;
  const struct sr_id_map *want[2] = {l->uid_mappings, l->gid_mappings};
  size_t n_want[2] = {l->n_uid_mappings, l->n_gid_mappings}, seen[2] = {0, 0};
  while (p < end) {
    uint64_t key, sub;
    if (!pb_varint(&p, end, &key) || (key & 7) != 2 || !pb_varint(&p, end, &sub) ||
        sub > (uint64_t)(end - p))
      return sr_error_make(err, EINVAL, "--image-path: `%s`: cannot parse", name);
    int k = (int)(key >> 3) - 1;
    struct sr_id_map m = {0};
    if (k < 0 || k > 1 || !pb_extent(p, p + sub, &m))
      return sr_error_make(err, EINVAL, "--image-path: `%s`: cannot parse", name);
    p += sub;
    size_t i = seen[k]++;
    if (i >= n_want[k] || m.container_id != want[k][i].container_id ||
        m.host_id != want[k][i].host_id || m.size != want[k][i].size)
      return sr_error_make(
          err, EPERM,
          "restore: refused: the image's user namespace maps (%s: `%" PRIu32 " %" PRIu32 " %" PRIu32
          "`) are not the ones the policy decided for this id (%s): seerun does "
          "not rewrite an image's user namespace; restore it under the id it was checkpointed "
          "as, while its range is still that id's",
          k ? "gid_map" : "uid_map", m.container_id, m.host_id, m.size,
          i < n_want[k] ? "another range" : "fewer maps");
  }
  if (seen[0] != n_want[0] || seen[1] != n_want[1])
    return sr_error_make(err, EPERM,
                         "restore: refused: the image's user namespace has other "
                         "maps than the policy decided");
  return 0;
}

/* One seccomp_filter {bytes filter = 1; uint32 prev = 2; uint32 flags = 3}. */
struct img_filter {
  const unsigned char *prog;
  size_t len;
  bool has_prev;
  uint64_t prev;
};

static bool pb_filter(const unsigned char *p, const unsigned char *end, struct img_filter *f)
{
  while (p < end) {
    uint64_t key, v;
    if (!pb_varint(&p, end, &key))
      return false;
    if ((key & 7) == 2) {
      if (!pb_varint(&p, end, &v) || v > (uint64_t)(end - p))
        return false;
      if ((key >> 3) == 1) {
        f->prog = p;
        f->len = (size_t)v;
      }
      p += v;
    } else if ((key & 7) == 0) {
      if (!pb_varint(&p, end, &v))
        return false;
      if ((key >> 3) == 2) {
        f->has_prev = true;
        f->prev = v;
      }
    } else
      return false;
  }
  return f->prog != NULL;
}

/* The next field of a protobuf message: its number, and its value (varint) or bytes. */
static bool pb_next(const unsigned char **p, const unsigned char *end, uint64_t *field, uint64_t *v,
                    const unsigned char **sub, size_t *sub_len)
{
  uint64_t key;
  if (!pb_varint(p, end, &key))
    return false;
  *field = key >> 3;
  switch (key & 7) {
  case 0:
    return pb_varint(p, end, v);
  case 1:
    if (end - *p < 8)
      return false;
    *p += 8;
    return true;
  case 2:
    if (!pb_varint(p, end, v) || *v > (uint64_t)(end - *p))
      return false;
    *sub = *p;
    *sub_len = (size_t)*v;
    *p += *v;
    return true;
  case 5:
    if (end - *p < 4)
      return false;
    *p += 4;
    return true;
  }
  return false;
}

/* A thread's stack: its filter in seccomp.img and those below it through `prev` (CRIU
 * writes a stack newest first and points each older one at the newer, so the index a thread
 * names is its oldest filter, where the built-in one must be). */
/* The built-in filter, or its notifying variant (the activity record: its EPERM answers
 * turned into user notifications, seccomp_default.c), instruction by instruction. */
static bool is_builtin(const void *prog, size_t len)
{
  if (len != sr_seccomp_default_prog_len * sizeof(struct sock_filter))
    return false;
  for (size_t i = 0; i < sr_seccomp_default_prog_len; i++) {
    struct sock_filter in;
    memcpy(&in, (const char *)prog + i * sizeof(in), sizeof(in));
    const struct sock_filter *d = &sr_seccomp_default_prog[i];
    bool same = in.code == d->code && in.jt == d->jt && in.jf == d->jf && in.k == d->k;
    bool notified = d->code == (BPF_RET | BPF_K) && d->k == (SECCOMP_RET_ERRNO | EPERM) &&
                    in.code == d->code && in.jt == d->jt && in.jf == d->jf &&
                    in.k == SECCOMP_RET_USER_NOTIF;
    if (!same && !notified)
      return false;
  }
  return true;
}

static bool stack_has_builtin(const struct img_filter *f, size_t n, uint64_t idx)
{
  for (size_t steps = 0; idx < n && steps <= n; steps++) {
    if (is_builtin(f[idx].prog, f[idx].len))
      return true;
    if (!f[idx].has_prev)
      return false;
    idx = f[idx].prev;
  }
  return false;
}

/* Every thread of the image (core-*.img: thread_core.seccomp_mode/seccomp_filter, or the
 * task's old_seccomp_* of older images) in filter mode on a stack holding the built-in
 * filter. */
static int check_core_seccomp(int imgfd, const struct img_filter *f, size_t n, sr_error_t *err)
{
  _cleanup_dir_ DIR *d = sr_dir_open_fd(imgfd);
  if (d == NULL)
    return sr_error_sys(err, "--image-path: read");
  struct dirent *de;
  size_t cores = 0;
  while ((de = readdir(d)) != NULL) {
    if (strncmp(de->d_name, "core-", 5) != 0 || !strstr(de->d_name, ".img"))
      continue;
    _cleanup_free_ char *buf = NULL;
    size_t len;
    if (sr_fileio_read_at(imgfd, de->d_name, 16 << 20, &buf, &len, err) < 0)
      return sr_error_wrap(err, "--image-path");
    uint32_t msg_len;
    if (len < 12 || (memcpy(&msg_len, buf + 8, 4), msg_len > len - 12))
      return sr_error_make(err, EINVAL, "--image-path: `%s`: not a CRIU image", de->d_name);
    const unsigned char *p = (const unsigned char *)buf + 12, *end = p + msg_len;
    uint64_t mode = 0, idx = UINT64_MAX, old_mode = 0, old_idx = UINT64_MAX, state = 1;
    bool has_mode = false;
    while (p < end) {
      uint64_t field, v = 0;
      const unsigned char *sub = NULL;
      size_t sl = 0;
      if (!pb_next(&p, end, &field, &v, &sub, &sl))
        return sr_error_make(err, EINVAL, "--image-path: `%s`: cannot parse", de->d_name);
      if ((field != 3 && field != 5) || sub == NULL)
        continue;
      for (const unsigned char *q = sub, *qe = sub + sl; q < qe;) {
        uint64_t f2, v2 = 0;
        const unsigned char *s2 = NULL;
        size_t l2 = 0;
        if (!pb_next(&q, qe, &f2, &v2, &s2, &l2))
          return sr_error_make(err, EINVAL, "--image-path: `%s`: cannot parse", de->d_name);
        if (field == 5 && f2 == 11)
          mode = v2, has_mode = true;
        else if (field == 5 && f2 == 12)
          idx = v2;
        else if (field == 3 && f2 == 11)
          old_mode = v2;
        else if (field == 3 && f2 == 12)
          old_idx = v2;
        else if (field == 3 && f2 == 1)
          state = v2;
      }
    }
    if (!has_mode)
      mode = old_mode, idx = old_idx;
    cores++;
    /* Zombies (6), dead tasks (2) and CRIU's helpers (7) never run again: nothing to filter. */
    if (state == 2 || state == 6 || state == 7)
      continue;
    if (mode != 2 || !stack_has_builtin(f, n, idx))
      return sr_error_make(err, EPERM,
                           "restore: refused: a thread of the image (%s) runs %s: seerun's "
                           "built-in seccomp filter is mandatory",
                           de->d_name,
                           mode != 2 ? "without a seccomp filter"
                                     : "a filter stack that does not hold the built-in filter");
  }
  if (cores == 0)
    return sr_error_make(err, EINVAL, "--image-path: no core-*.img: not a checkpoint");
  return 0;
}

/* Every thread's filter stack in the image (seccomp.img, through the index in its core image)
 * must hold seerun's built-in filter, byte for byte: an image whose tasks carry
 * another filter, or none, would run them without the mandatory one.  Seccomp: 2 on the
 * restored tasks (pre-resume) says a filter is there; this says it is ours. */
static int check_image_seccomp(int imgfd, bool builtin, sr_error_t *err)
{
  if (!builtin)
    return 0;
  _cleanup_free_ char *buf = NULL;
  size_t len;
  sr_error_t e = NULL;
  if (sr_fileio_read_at(imgfd, "seccomp.img", 16 << 20, &buf, &len, &e) < 0) {
    sr_error_free(&e);
    return sr_error_make(err, EPERM,
                         "restore: refused: the image holds no seccomp filter "
                         "(seccomp.img); seerun's built-in filter is mandatory");
  }
  uint32_t msg_len;
  if (len < 12 || (memcpy(&msg_len, buf + 8, 4), msg_len > len - 12))
    return sr_error_make(err, EINVAL, "--image-path: seccomp.img: not a CRIU image");
  const unsigned char *p = (const unsigned char *)buf + 12, *end = p + msg_len;
  size_t n = 0, cap = 0;
  _cleanup_free_ struct img_filter *f = NULL;
  while (p < end) {
    uint64_t key, sub;
    if (!pb_varint(&p, end, &key) || key != ((1 << 3) | 2) || !pb_varint(&p, end, &sub) ||
        sub > (uint64_t)(end - p))
      return sr_error_make(err, EINVAL, "--image-path: seccomp.img: cannot parse");
    if (n == cap) {
      cap = cap ? 2 * cap : 8;
      struct img_filter *nf = realloc(f, cap * sizeof(*f));
      if (nf == NULL)
        return sr_error_make(err, ENOMEM, "seccomp.img");
      f = nf;
    }
    f[n] = (struct img_filter){0};
    if (!pb_filter(p, p + sub, &f[n]))
      return sr_error_make(err, EINVAL, "--image-path: seccomp.img: cannot parse");
    p += sub;
    n++;
  }
  if (n == 0)
    return sr_error_make(err, EPERM,
                         "restore: refused: the image's tasks carry no seccomp "
                         "filter; seerun's built-in filter is mandatory");
  return check_core_seccomp(imgfd, f, n, err);
}

int sr_restore_image_check(int imgfd, const struct sr_linux *l, bool builtin_seccomp,
                           sr_error_t *err)
{
  if (check_image_userns(imgfd, l, err) < 0 || check_image_seccomp(imgfd, builtin_seccomp, err) < 0)
    return -1;
  return 0;
}

#endif
