#include "build.h"

/* cgroup v2 (the unified hierarchy): creation with controller delegation, linux.resources as
 * the v2 files (with runc's v1 -> v2 conversions), the freezer, statistics. */

#include "cgroup.h"

#include "cleanup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- Creation ---- */

/* Best effort, as runc: all at once, else one by one; a controller that cannot be enabled (a
 * threaded or populated ancestor, a rootless delegation without it) makes the resource that
 * needs it fail later, with the field named. */
static int enable_controllers(const char *dir, sr_error_t *err)
{
  _cleanup_cg_dir_ struct sr_cg_dir d = {.fd = -1};
  char list[4096];
  if (sr_cgroup_dir_open(&d, dir, NULL, "/", err) < 0 ||
      sr_cgroup_read(&d, "cgroup.controllers", list, sizeof(list), err) < 0)
    return -1;
  char all[4096 * 2] = "";
  size_t o = 0, count = 0;
  char *save = NULL;
  for (char *c = strtok_r(list, " \n", &save); c; c = strtok_r(NULL, " \n", &save)) {
    o += (size_t)snprintf(all + o, sizeof(all) - o, "%s+%s", count ? " " : "", c);
    count++;
  }
  if (count == 0)
    return 0;
  sr_error_t e = NULL;
  if (sr_cgroup_write(&d, "cgroup.subtree_control", all, &e) == 0)
    return 0;
  sr_error_free(&e);
  for (char *c = strtok_r(all, " ", &save); c; c = strtok_r(NULL, " ", &save)) {
    sr_cgroup_write(&d, "cgroup.subtree_control", c, &e);
    sr_error_free(&e);
  }
  return 0;
}

int sr_cgroup_v2_create(const char *base, const char *path, bool exclusive, bool *created,
                        sr_error_t *err)
{
  char cur[PATH_MAX];
  size_t len = (size_t)snprintf(cur, sizeof(cur), "%s", base);
  if (len >= sizeof(cur))
    return sr_error_make(err, ENAMETOOLONG, "cgroup: `%s`", base);
  if (enable_controllers(cur, err) < 0)
    return -1;
  for (const char *p = path; *p;) {
    const char *e = strchrnul(p + 1, '/');
    if (len + (size_t)(e - p) >= sizeof(cur))
      return sr_error_make(err, ENAMETOOLONG, "cgroup: mkdir below `%s`", cur);
    memcpy(cur + len, p, (size_t)(e - p));
    len += (size_t)(e - p);
    cur[len] = '\0';
    if (mkdir(cur, 0755) == 0) {
      if (*e == '\0')
        *created = true;
    } else if (errno == EEXIST && *e == '\0' && exclusive) {
      return sr_error_make(err, EEXIST, "cgroup `%s` exists already", cur);
    } else if (errno != EEXIST) {
      return sr_error_sys(err, "cgroup: mkdir `%s`", cur);
    }
    /* The leaf holds the container's processes: no controllers below it (no internal
     * processes rule). */
    if (*e != '\0' && enable_controllers(cur, err) < 0)
      return -1;
    p = e;
  }
  return 0;
}

/* ---- Resources ---- */

/* A missing interface file usually means the controller is not enabled here: say so. */
static int explain(const struct sr_cg_dir *d, const char *file, const char *field, sr_error_t *err)
{
  if ((*err)->status != ENOENT)
    return sr_error_wrap(err, "%s", field);
  char ctrl[64], list[4096];
  snprintf(ctrl, sizeof(ctrl), "%.*s", (int)strcspn(file, "."), file);
  sr_error_t e = NULL;
  if (sr_cgroup_read(d, "cgroup.controllers", list, sizeof(list), &e) < 0) {
    sr_error_free(&e);
    return sr_error_wrap(err, "%s", field);
  }
  list[strcspn(list, "\n")] = '\0';
  char padded[4096 + 3];
  char want[70];
  snprintf(padded, sizeof(padded), " %s ", list);
  snprintf(want, sizeof(want), " %s ", ctrl);
  if (strcmp(ctrl, "cgroup") == 0 || strstr(padded, want) != NULL)
    return sr_error_wrap(err, "%s", field);
  return sr_error_make(err, 0,
                       "%s: the %s controller is not available in %s (cgroup.controllers: "
                       "\"%s\")",
                       field, ctrl, d->path, list);
}

/* A value for a config field written to a controller's file (cgroup.h). */
#define PUT(d, file, field, err, ...) sr_cgroup_putf((d), (file), (field), explain, (err), __VA_ARGS__)

static int put_lines(const struct sr_cg_dir *d, const char *file, const char *field, char **lines,
                     size_t n, sr_error_t *err)
{
  if (sr_cgroup_write_lines(d, file, lines, n, err) < 0)
    return explain(d, file, field, err);
  return 0;
}

/* Fields with no v2 counterpart: refused before anything is written. */
static int v2_check(const struct sr_resources *r, sr_error_t *err)
{
  const char *bad = NULL;
  if (r->memory.kernel_tcp.set)
    bad = "memory.kernelTCP";
  else if (r->memory.swappiness.set)
    bad = "memory.swappiness";
  else if (r->memory.has_disable_oom_killer && r->memory.disable_oom_killer)
    bad = "memory.disableOOMKiller";
  else if (r->memory.has_use_hierarchy && !r->memory.use_hierarchy)
    bad = "memory.useHierarchy"; /* v2 is always hierarchical */
  else if (r->cpu.realtime_runtime.set || r->cpu.realtime_period.set)
    bad = r->cpu.realtime_runtime.set ? "cpu.realtimeRuntime" : "cpu.realtimePeriod";
  else if (r->block_io.leaf_weight.set)
    bad = "blockIO.leafWeight";
  else if (r->network.has_class_id || r->network.n_priorities > 0)
    bad = r->network.has_class_id ? "network.classID" : "network.priorities";
  for (size_t i = 0; bad == NULL && i < r->block_io.n_weight_devices; i++)
    if (r->block_io.weight_devices[i].leaf_weight.set)
      bad = "blockIO.weightDevice.leafWeight";
  if (bad)
    return sr_error_make(err, 0, "linux.resources.%s: not supported on cgroup v2", bad);
  return 0;
}

static int v2_memory(const struct sr_cg_dir *d, const struct sr_resources *r, bool update,
                     sr_error_t *err)
{
  const __typeof__(r->memory) *m = &r->memory;
  /* 0 means unset for all three, as in runc; -1 is "max". */
  int64_t limit = m->limit.set ? m->limit.v : 0, swap = m->swap.set ? m->swap.v : 0;
  int64_t resv = m->reservation.set ? m->reservation.v : 0;
  const char *sf = "linux.resources.memory.swap";
  /* v1's swap is memory+swap; v2's memory.swap.max is swap alone (runc's conversion). */
  char swapv[32] = "";
  if ((limit == -1 && swap == 0) || swap == -1) {
    snprintf(swapv, sizeof(swapv), "max");
  } else if (swap > 0) {
    if (limit <= 0)
      return sr_error_make(err, 0, "%s: a swap limit needs a memory limit", sf);
    if (swap < limit)
      return sr_error_make(err, 0,
                           "%s: %" PRId64 " (memory+swap) is below the memory limit %" PRId64, sf,
                           swap, limit);
    snprintf(swapv, sizeof(swapv), "%" PRId64, swap - limit);
  }
  if (update && m->check_before_update && limit > 0) {
    uint64_t cur;
    if (sr_cgroup_read_u64(d, "memory.current", &cur, err) < 0)
      return explain(d, "memory.current", "linux.resources.memory.checkBeforeUpdate", err);
    if ((uint64_t)limit < cur)
      return sr_error_make(err, 0,
                           "linux.resources.memory.limit: %" PRId64 " is below the "
                           "current usage %" PRIu64 " of %s (checkBeforeUpdate)",
                           limit, cur, d->path);
  }
  if (*swapv && PUT(d, "memory.swap.max", sf, err, "%s", swapv) < 0) {
    /* Without swap accounting, "no swap limit" and "no swap" hold anyway (runc). */
    bool moot = strcmp(swapv, "max") == 0 || strcmp(swapv, "0") == 0;
    if (!moot || sr_cgroup_has(d, "memory.swap.max") || !sr_cgroup_has(d, "memory.max"))
      return -1;
    sr_error_free(err);
  }
  if (limit == -1 && PUT(d, "memory.max", "linux.resources.memory.limit", err, "max") < 0)
    return -1;
  if (limit > 0 && PUT(d, "memory.max", "linux.resources.memory.limit", err, "%" PRId64, limit) < 0)
    return -1;
  if (resv == -1 && PUT(d, "memory.low", "linux.resources.memory.reservation", err, "max") < 0)
    return -1;
  if (resv > 0 &&
      PUT(d, "memory.low", "linux.resources.memory.reservation", err, "%" PRId64, resv) < 0)
    return -1;
  /* memory.kernel: v2 accounts kernel memory with the rest, there is no separate limit;
   * ignored, as runc does. */
  return 0;
}

/* cpu.max as "quota period"; a part the config leaves unset keeps the current value on
 * update, and is "max" / 100000 (the kernel's default) on create. */
static int v2_cpu_max(const struct sr_cg_dir *d, const struct sr_resources *r, bool update,
                      sr_error_t *err)
{
  const __typeof__(r->cpu) *c = &r->cpu;
  bool quota = c->quota.set && c->quota.v != 0, period = c->period.set && c->period.v != 0;
  char q[32] = "max", p[32] = "100000";
  if (update && (!quota || !period)) {
    char cur[64];
    if (sr_cgroup_read(d, "cpu.max", cur, sizeof(cur), err) < 0)
      return explain(d, "cpu.max", "linux.resources.cpu.quota", err);
    if (sscanf(cur, "%31s %31s", q, p) != 2)
      return sr_error_make(err, 0, "cgroup: `cpu.max` in %s: unexpected \"%s\"", d->path, cur);
  }
  if (quota && c->quota.v < 0)
    snprintf(q, sizeof(q), "max");
  else if (quota)
    snprintf(q, sizeof(q), "%" PRId64, c->quota.v);
  if (period)
    snprintf(p, sizeof(p), "%" PRIu64, c->period.v);
  return PUT(d, "cpu.max", quota ? "linux.resources.cpu.quota" : "linux.resources.cpu.period", err,
             "%s %s", q, p);
}

static int v2_cpu(const struct sr_cg_dir *d, const struct sr_resources *r, bool update,
                  sr_error_t *err)
{
  const __typeof__(r->cpu) *c = &r->cpu;
  if (c->shares.set && c->shares.v != 0) {
    /* runc's mapping of [2, 262144] onto [1, 10000]. */
    uint64_t s = c->shares.v < 2 ? 2 : c->shares.v > 262144 ? 262144 : c->shares.v;
    if (PUT(d, "cpu.weight", "linux.resources.cpu.shares", err, "%" PRIu64,
            1 + ((s - 2) * 9999) / 262142) < 0)
      return -1;
  }
  bool quota = c->quota.set && c->quota.v != 0, period = c->period.set && c->period.v != 0;
  bool burst_again = false;
  if (c->burst.set &&
      PUT(d, "cpu.max.burst", "linux.resources.cpu.burst", err, "%" PRIu64, c->burst.v) < 0) {
    /* Kernels before 5.14 have no burst: it only loosens a limit, so best effort (runc).  A
     * burst above the current quota is refused (EINVAL) until the new quota is in. */
    bool absent = !sr_cgroup_has(d, "cpu.max.burst") && sr_cgroup_has(d, "cpu.max");
    burst_again = !absent && (*err)->status == EINVAL && quota;
    if (!absent && !burst_again)
      return -1;
    sr_error_free(err);
  }
  if ((quota || period) && v2_cpu_max(d, r, update, err) < 0)
    return -1;
  if (burst_again &&
      PUT(d, "cpu.max.burst", "linux.resources.cpu.burst", err, "%" PRIu64, c->burst.v) < 0)
    return -1;
  if (c->idle.set && PUT(d, "cpu.idle", "linux.resources.cpu.idle", err, "%" PRId64, c->idle.v) < 0)
    return -1;
  if (c->cpus && *c->cpus &&
      PUT(d, "cpuset.cpus", "linux.resources.cpu.cpus", err, "%s", c->cpus) < 0)
    return -1;
  if (c->mems && *c->mems &&
      PUT(d, "cpuset.mems", "linux.resources.cpu.mems", err, "%s", c->mems) < 0)
    return -1;
  return 0;
}

/* runc's mapping of blkio's [10, 1000] onto io.weight's [1, 10000]. */
static uint64_t io_weight(uint64_t w)
{
  w = w < 10 ? 10 : w > 1000 ? 1000 : w;
  return 1 + (w - 10) * 9999 / 990;
}

/* The four throttle lists as io.max lines, one per device in order of first mention. */
static int io_max_lines(const struct sr_resources *r, char ***out, size_t *n, sr_error_t *err)
{
  static const char *const keys[4] = {"rbps", "wbps", "riops", "wiops"};
  const __typeof__(r->block_io) *b = &r->block_io;
  size_t total = b->n_throttle[0] + b->n_throttle[1] + b->n_throttle[2] + b->n_throttle[3];
  char **lines = calloc(total + 1, sizeof(char *));
  int64_t(*devs)[2] = calloc(total + 1, sizeof(*devs));
  size_t count = 0;
  if (lines == NULL || devs == NULL) {
    free(lines);
    free(devs);
    return sr_error_make(err, ENOMEM, "linux.resources.blockIO");
  }
  for (int t = 0; t < 4; t++)
    for (size_t i = 0; i < b->n_throttle[t]; i++) {
      const struct sr_throttle_device *x = &b->throttle[t][i];
      size_t k = 0;
      while (k < count && (devs[k][0] != x->major || devs[k][1] != x->minor))
        k++;
      char *line = NULL;
      int rc = k == count ? asprintf(&line, "%" PRId64 ":%" PRId64 " %s=%" PRIu64, x->major,
                                     x->minor, keys[t], x->rate)
                          : asprintf(&line, "%s %s=%" PRIu64, lines[k], keys[t], x->rate);
      if (rc < 0) {
        sr_cgroup_free_lines(lines, count);
        free(devs);
        return sr_error_make(err, ENOMEM, "linux.resources.blockIO");
      }
      if (k == count) {
        devs[count][0] = x->major;
        devs[count][1] = x->minor;
        count++;
      } else {
        free(lines[k]);
      }
      lines[k] = line;
    }
  free(devs);
  for (size_t i = 0; i < count; i++) {
    char *l = NULL;
    if (asprintf(&l, "%s\n", lines[i]) < 0) {
      sr_cgroup_free_lines(lines, count);
      return sr_error_make(err, ENOMEM, "linux.resources.blockIO");
    }
    free(lines[i]);
    lines[i] = l;
  }
  *out = lines;
  *n = count;
  return 0;
}

static int v2_io(const struct sr_cg_dir *d, const struct sr_resources *r, sr_error_t *err)
{
  const __typeof__(r->block_io) *b = &r->block_io;
  /* With BFQ, its own file takes blkio's scale as is (runc). */
  bool bfq = sr_cgroup_has(d, "io.bfq.weight");
  const char *wf = bfq ? "io.bfq.weight" : "io.weight";
  if (b->weight.set && b->weight.v != 0 &&
      PUT(d, wf, "linux.resources.blockIO.weight", err, "%" PRIu64,
          bfq ? b->weight.v : io_weight(b->weight.v)) < 0)
    return -1;
  for (size_t i = 0; i < b->n_weight_devices; i++) {
    const struct sr_weight_device *w = &b->weight_devices[i];
    if (w->weight.set &&
        PUT(d, wf, "linux.resources.blockIO.weightDevice", err, "%" PRId64 ":%" PRId64 " %" PRIu64,
            w->major, w->minor, bfq ? w->weight.v : io_weight(w->weight.v)) < 0)
      return -1;
  }
  char **lines = NULL;
  size_t n = 0;
  if (io_max_lines(r, &lines, &n, err) < 0)
    return -1;
  int rc = n ? put_lines(d, "io.max", "linux.resources.blockIO.throttle", lines, n, err) : 0;
  sr_cgroup_free_lines(lines, n);
  return rc;
}

int sr_cgroup_v2_hugetlb(const struct sr_cg_dir *d, const struct sr_resources *r, sr_error_t *err)
{
  const char *field = "linux.resources.hugepageLimits";
  for (size_t i = 0; i < r->n_hugepage_limits; i++) {
    const struct sr_hugepage_limit *h = &r->hugepage_limits[i];
    char file[64];
    snprintf(file, sizeof(file), "hugetlb.%s.max", h->page_size);
    if (PUT(d, file, field, err, "%" PRIu64, h->limit) < 0)
      return sr_error_wrap(err, "[%zu] (pageSize %s)", i, h->page_size);
    /* Reservation accounting, where the kernel has it, is what the spec prefers. */
    snprintf(file, sizeof(file), "hugetlb.%s.rsvd.max", h->page_size);
    if (sr_cgroup_has(d, file) && PUT(d, file, field, err, "%" PRIu64, h->limit) < 0)
      return -1;
  }
  return 0;
}

static int v2_rdma(const struct sr_cg_dir *d, const struct sr_resources *r, sr_error_t *err)
{
  for (size_t i = 0; i < r->n_rdma; i++) {
    const struct sr_rdma_limit *l = &r->rdma[i];
    char h[48] = "", o[48] = "";
    if (l->hca_handles.set)
      snprintf(h, sizeof(h), " hca_handle=%" PRIu64, l->hca_handles.v);
    if (l->hca_objects.set)
      snprintf(o, sizeof(o), " hca_object=%" PRIu64, l->hca_objects.v);
    if ((*h || *o) &&
        PUT(d, "rdma.max", "linux.resources.rdma", err, "%s%s%s", l->device, h, o) < 0)
      return -1;
  }
  return 0;
}

/* Written as given, last, so that it overrides the converted fields.  A multi-line value is one
 * write per line, each with its newline (io.max, rdma.max parse one entry per write). */
static int v2_unified(const struct sr_cg_dir *d, const struct sr_resources *r, sr_error_t *err)
{
  for (size_t i = 0; i < r->n_unified; i++) {
    const char *k = r->unified_keys[i], *v = r->unified_values[i];
    char field[300];
    snprintf(field, sizeof(field), "linux.resources.unified.%s", k);
    /* Membership is the runtime's to manage: moving arbitrary pids in is not a limit. */
    if (strcmp(k, "cgroup.procs") == 0 || strcmp(k, "cgroup.threads") == 0)
      return sr_error_make(err, 0, "%s: process membership cannot be set here", field);
    if (strchr(v, '\n') == NULL) {
      char *one = (char *)v;
      if (put_lines(d, k, field, &one, 1, err) < 0)
        return -1;
      continue;
    }
    size_t n = 0, cap = 1;
    for (const char *p = v; *p; p++)
      cap += *p == '\n';
    char **lines = calloc(cap, sizeof(char *));
    if (lines == NULL)
      return sr_error_make(err, ENOMEM, "%s", field);
    int rc = 0;
    for (const char *p = v; *p && rc == 0;) {
      const char *e = strchrnul(p, '\n');
      size_t len = (size_t)(e - p) + (*e == '\n');
      if (e > p && (lines[n] = strndup(p, len)) != NULL)
        n++;
      else if (e > p)
        rc = sr_error_make(err, ENOMEM, "%s", field);
      p += len;
    }
    if (rc == 0)
      rc = put_lines(d, k, field, lines, n, err);
    sr_cgroup_free_lines(lines, n);
    if (rc < 0)
      return -1;
  }
  return 0;
}

int sr_cgroup_v2_apply(struct sr_cgroup *cg, const struct sr_resources *r, bool update,
                       sr_error_t *err)
{
  if (r && v2_check(r, err) < 0)
    return -1;
  _cleanup_cg_dir_ struct sr_cg_dir d = {.fd = -1};
  if (sr_cgroup_unified_open(cg, &d, err) < 0)
    return -1;
  /* On create the rule list is the whole truth (default deny); update touches it only when
   * the list is given. */
  if (!update || (r && r->devices)) {
    if (sr_cgroup_devices_bpf_apply(&d, r ? r->devices : NULL, r ? r->n_devices : 0, err) < 0)
      return sr_error_wrap(err, "linux.resources.devices");
  }
  if (r == NULL)
    return 0;
  if (r->pids_limit.set) {
    /* 0 is a valid limit (no new process at all); -1 is "max". */
    int rc = r->pids_limit.v < 0 ? PUT(&d, "pids.max", "linux.resources.pids.limit", err, "max")
                                 : PUT(&d, "pids.max", "linux.resources.pids.limit", err,
                                       "%" PRId64, r->pids_limit.v);
    if (rc < 0)
      return -1;
  }
  if (v2_memory(&d, r, update, err) < 0 || v2_io(&d, r, err) < 0 ||
      v2_cpu(&d, r, update, err) < 0 || sr_cgroup_v2_hugetlb(&d, r, err) < 0 ||
      v2_rdma(&d, r, err) < 0 || v2_unified(&d, r, err) < 0)
    return -1;
  return 0;
}

/* ---- Freezer ---- */

int sr_cgroup_v2_freeze(const struct sr_cg_dir *d, bool frozen, sr_error_t *err)
{
  if (!sr_cgroup_has(d, "cgroup.freeze"))
    return sr_error_make(err, ENOTSUP,
                         "cgroup: no cgroup.freeze in %s (Linux 5.2 or later "
                         "needed)",
                         d->path);
  if (sr_cgroup_write(d, "cgroup.freeze", frozen ? "1" : "0", err) < 0)
    return -1;
  int64_t deadline = sr_cgroup_now_ms() + SR_CG_TIMEOUT_MS;
  for (;;) {
    uint64_t state;
    if (sr_cgroup_read_keyed(d, "cgroup.events", "frozen", &state, err) < 0)
      return -1;
    if ((state == 1) == frozen)
      return 0;
    if (sr_cgroup_now_ms() > deadline) {
      if (frozen) {
        sr_error_t e = NULL;
        sr_cgroup_write(d, "cgroup.freeze", "0", &e); /* do not leave it half frozen */
        sr_error_free(&e);
      }
      return sr_error_make(err, ETIMEDOUT, "cgroup: %s did not become %s (cgroup.events)", d->path,
                           frozen ? "frozen" : "thawed");
    }
    sr_cgroup_pause();
  }
}

int sr_cgroup_v2_is_frozen(const struct sr_cg_dir *d, bool *frozen, sr_error_t *err)
{
  *frozen = false;
  if (!sr_cgroup_has(d, "cgroup.freeze"))
    return 0;
  char buf[16];
  if (sr_cgroup_read(d, "cgroup.freeze", buf, sizeof(buf), err) < 0)
    return -1;
  *frozen = buf[0] == '1';
  return 0;
}

/* ---- Statistics ---- */

static int opt_keyed(const struct sr_cg_dir *d, const char *file, const char *key, uint64_t *v,
                     sr_error_t *err)
{
  if (!sr_cgroup_has(d, file))
    return 0;
  return sr_cgroup_read_keyed(d, file, key, v, err);
}

struct sr_hugetlb_stat *sr_cgroup_v2_stats_add_hugetlb(struct sr_cgroup_stats *st, const char *size)
{
  struct sr_hugetlb_stat *nv = realloc(st->hugetlb, (st->n_hugetlb + 1) * sizeof(*st->hugetlb));
  if (nv == NULL)
    return NULL;
  st->hugetlb = nv;
  struct sr_hugetlb_stat *h = &nv[st->n_hugetlb++];
  memset(h, 0, sizeof(*h));
  snprintf(h->page_size, sizeof(h->page_size), "%s", size);
  return h;
}

int sr_cgroup_v2_hugetlb_sizes(const struct sr_cg_dir *d, const char *suffix, char ***sizes,
                               size_t *n, sr_error_t *err)
{
  int fd = openat(d->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return sr_error_sys(err, "cgroup: open `%s`", d->path);
  _cleanup_dir_ DIR *dir = fdopendir(fd);
  if (dir == NULL) {
    close(fd);
    return sr_error_sys(err, "cgroup: open `%s`", d->path);
  }
  _cleanup_strv_ char **v = calloc(1, sizeof(char *));
  size_t count = 0, sl = strlen(suffix);
  if (v == NULL)
    return sr_error_make(err, ENOMEM, "cgroup: hugetlb");
  struct dirent *de;
  while ((de = readdir(dir)) != NULL) {
    const char *name = de->d_name;
    size_t nl = strlen(name);
    /* hugetlb.<size><suffix>, the size without dots (rsvd files have more). */
    if (strncmp(name, "hugetlb.", 8) != 0 || nl <= 8 + sl || strcmp(name + nl - sl, suffix) != 0)
      continue;
    size_t szl = nl - 8 - sl;
    if (memchr(name + 8, '.', szl) != NULL || szl >= 16)
      continue;
    if (sr_cgroup_names_add(&v, &count, name + 8, szl) < 0)
      return sr_error_make(err, ENOMEM, "cgroup: hugetlb");
  }
  sr_cgroup_names_sort(v, count);
  *sizes = steal_ptr(v);
  *n = count;
  return 0;
}

int sr_cgroup_v2_hugetlb_stats(const struct sr_cg_dir *d, struct sr_cgroup_stats *st,
                               sr_error_t *err)
{
  _cleanup_strv_ char **sizes = NULL;
  size_t n;
  if (sr_cgroup_v2_hugetlb_sizes(d, ".current", &sizes, &n, err) < 0)
    return -1;
  for (size_t i = 0; i < n; i++) {
    char f1[64], f2[64];
    struct sr_hugetlb_stat *h = sr_cgroup_v2_stats_add_hugetlb(st, sizes[i]);
    if (h == NULL)
      return sr_error_make(err, ENOMEM, "cgroup: hugetlb");
    snprintf(f1, sizeof(f1), "hugetlb.%s.current", sizes[i]);
    snprintf(f2, sizeof(f2), "hugetlb.%s.events", sizes[i]);
    /* v2 keeps no maximum usage. */
    if (sr_cgroup_read_u64_opt(d, f1, &h->usage, err) < 0 ||
        opt_keyed(d, f2, "max", &h->failcnt, err) < 0)
      return -1;
  }
  return 0;
}

static int v2_io_stats(const struct sr_cg_dir *d, struct sr_cgroup_stats *st, sr_error_t *err)
{
  if (!sr_cgroup_has(d, "io.stat"))
    return 0;
  char buf[16384];
  if (sr_cgroup_read(d, "io.stat", buf, sizeof(buf), err) < 0)
    return -1;
  char *save = NULL;
  for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    /* "8:0 rbytes=1 wbytes=2 rios=3 ...": bytes as v1's Read/Write entries (runc). */
    unsigned long long maj, min;
    int off;
    if (sscanf(line, "%llu:%llu%n", &maj, &min, &off) != 2)
      continue;
    char *save2 = NULL;
    for (char *kv = strtok_r(line + off, " ", &save2); kv; kv = strtok_r(NULL, " ", &save2)) {
      const char *op = strncmp(kv, "rbytes=", 7) == 0   ? "Read"
                       : strncmp(kv, "wbytes=", 7) == 0 ? "Write"
                                                        : NULL;
      if (op && sr_cgroup_stats_add_blkio(st, maj, min, op, strtoull(kv + 7, NULL, 10)) < 0)
        return sr_error_make(err, ENOMEM, "cgroup: io.stat");
    }
  }
  return 0;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
  return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

int sr_cgroup_v2_stats(struct sr_cgroup *cg, struct sr_cgroup_stats *st, sr_error_t *err)
{
  _cleanup_cg_dir_ struct sr_cg_dir d = {.fd = -1};
  if (sr_cgroup_unified_open(cg, &d, err) < 0)
    return -1;
  uint64_t usec = 0, user = 0, sys = 0, thr = 0;
  if (opt_keyed(&d, "cpu.stat", "usage_usec", &usec, err) < 0 ||
      opt_keyed(&d, "cpu.stat", "user_usec", &user, err) < 0 ||
      opt_keyed(&d, "cpu.stat", "system_usec", &sys, err) < 0 ||
      opt_keyed(&d, "cpu.stat", "nr_periods", &st->cpu_throttling_periods, err) < 0 ||
      opt_keyed(&d, "cpu.stat", "nr_throttled", &st->cpu_throttled_periods, err) < 0 ||
      opt_keyed(&d, "cpu.stat", "throttled_usec", &thr, err) < 0)
    return -1;
  st->cpu_usage_total = usec * 1000;
  st->cpu_usage_user = user * 1000;
  st->cpu_usage_kernel = sys * 1000;
  st->cpu_throttled_time = thr * 1000;
  uint64_t swap = 0, swap_max = 0;
  if (sr_cgroup_read_u64_opt(&d, "memory.current", &st->memory_usage, err) < 0 ||
      sr_cgroup_read_u64_opt(&d, "memory.peak", &st->memory_max_usage, err) < 0 ||
      sr_cgroup_read_u64_opt(&d, "memory.max", &st->memory_limit, err) < 0 ||
      opt_keyed(&d, "memory.events", "max", &st->memory_failcnt, err) < 0 ||
      opt_keyed(&d, "memory.events", "oom_kill", &st->oom_kill_count, err) < 0 ||
      sr_cgroup_read_u64_opt(&d, "memory.swap.current", &swap, err) < 0 ||
      sr_cgroup_read_u64_opt(&d, "memory.swap.max", &swap_max, err) < 0)
    return -1;
  /* v1's swap figures are memory+swap; runc reports v2 the same way. */
  if (sr_cgroup_has(&d, "memory.swap.current")) {
    st->swap_usage = sat_add(swap, st->memory_usage);
    st->swap_limit = swap_max == UINT64_MAX ? UINT64_MAX : sat_add(swap_max, st->memory_limit);
  }
  if (sr_cgroup_has(&d, "memory.stat")) {
    if (sr_cgroup_stats_memory_stat(&d, st, err) < 0)
      return -1;
    st->memory_cache = sr_cgroup_stats_lookup(st, "file");
  }
  if (sr_cgroup_read_u64_opt(&d, "pids.current", &st->pids_current, err) < 0 ||
      sr_cgroup_read_u64_opt(&d, "pids.max", &st->pids_limit, err) < 0)
    return -1;
  if (st->pids_limit == UINT64_MAX)
    st->pids_limit = 0;
  if (v2_io_stats(&d, st, err) < 0 || sr_cgroup_v2_hugetlb_stats(&d, st, err) < 0)
    return -1;
  return 0;
}
