#include "build.h"

/* cgroup v1: one hierarchy per controller (or group of controllers) under a tmpfs.  Creation
 * with cpuset inheritance, linux.resources as the v1 files, the freezer, statistics. */

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

/* ---- Hierarchies ---- */

void sr_cgroup_v1_list_free(struct sr_cg_v1_list *l)
{
  if (l == NULL)
    return;
  sr_cleanup_strv_freep(&l->names);
  free(l);
}

static char **strv_dup(char *const *v, size_t n)
{
  char **out = calloc(n + 1, sizeof(char *));
  for (size_t i = 0; out && i < n; i++)
    if ((out[i] = strdup(v[i])) == NULL) {
      sr_cleanup_strv_freep(&out);
      return NULL;
    }
  return out;
}

static int list_hierarchies(const struct sr_cgroup *cg, char ***names, size_t *n, sr_error_t *err);

int sr_cgroup_v1_list_copy(struct sr_cg_v1_list *l, char *const *names, size_t n)
{
  char **copy = strv_dup(names, n);
  if (copy == NULL)
    return -1;
  sr_cleanup_strv_freep(&l->names);
  l->names = copy;
  l->n = n;
  l->listed = true;
  return 0;
}

int sr_cgroup_v1_hierarchies(const struct sr_cgroup *cg, char ***names, size_t *n, sr_error_t *err)
{
  struct sr_cg_v1_list *l = cg->v1;
  if (l == NULL)
    return list_hierarchies(cg, names, n, err);
  if (!l->listed) {
    if (list_hierarchies(cg, &l->names, &l->n, err) < 0)
      return -1;
    l->listed = true;
  }
  if ((*names = strv_dup(l->names, l->n)) == NULL)
    return sr_error_make(err, ENOMEM, "cgroup hierarchies");
  *n = l->n;
  return 0;
}

static int list_hierarchies(const struct sr_cgroup *cg, char ***names, size_t *n, sr_error_t *err)
{
  _cleanup_dir_ DIR *dir = opendir(cg->root);
  if (dir == NULL)
    return sr_error_sys(err, "cgroup: open `%s`", cg->root);
  _cleanup_strv_ char **v = calloc(1, sizeof(char *));
  struct {
    dev_t dev;
    ino_t ino;
  } seen[64];
  size_t count = 0;
  if (v == NULL)
    return sr_error_make(err, ENOMEM, "cgroup hierarchies");
  struct dirent *de;
  while ((de = readdir(dir)) != NULL) {
    struct stat st;
    char procs[NAME_MAX + 16];
    if (de->d_name[0] == '.' || strcmp(de->d_name, "unified") == 0)
      continue;
    /* Symlinks are aliases ("cpu" -> "cpu,cpuacct"): the target is listed itself. */
    if (fstatat(dirfd(dir), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode))
      continue;
    snprintf(procs, sizeof(procs), "%s/cgroup.procs", de->d_name);
    if (faccessat(dirfd(dir), procs, F_OK, 0) < 0)
      continue; /* a plain directory, not a mounted hierarchy */
    bool dup = false;
    for (size_t i = 0; i < count && i < 64; i++)
      dup = dup || (seen[i].dev == st.st_dev && seen[i].ino == st.st_ino);
    if (dup)
      continue;
    if (count < 64) {
      seen[count].dev = st.st_dev;
      seen[count].ino = st.st_ino;
    }
    if (sr_cgroup_names_add(&v, &count, de->d_name, strlen(de->d_name)) < 0)
      return sr_error_make(err, ENOMEM, "cgroup hierarchies");
  }
  sr_cgroup_names_sort(v, count);
  *names = steal_ptr(v);
  *n = count;
  return 0;
}

static bool has_controller(const char *hier, const char *controller)
{
  size_t cl = strlen(controller);
  for (const char *p = hier; *p;) {
    const char *e = strchrnul(p, ',');
    if ((size_t)(e - p) == cl && memcmp(p, controller, cl) == 0)
      return true;
    p = *e ? e + 1 : e;
  }
  return false;
}

int sr_cgroup_v1_controller(const struct sr_cgroup *cg, const char *controller, struct sr_cg_dir *d,
                            sr_error_t *err)
{
  char probe[PATH_MAX];
  const char *hier = NULL;
  _cleanup_strv_ char **names = NULL;
  snprintf(probe, sizeof(probe), "%s/%s/cgroup.procs", cg->root, controller);
  /* Hierarchies listed already (a layout scanned once for many objects): no probe for a
   * controller the list names. */
  const struct sr_cg_v1_list *l = cg->v1;
  bool listed = l && l->listed;
  for (size_t i = 0; listed && i < l->n && hier == NULL; i++)
    if (has_controller(l->names[i], controller))
      hier = l->names[i];
  if (hier == NULL && access(probe, F_OK) == 0) {
    hier = controller;
  } else if (hier == NULL && !listed) {
    size_t n;
    if (sr_cgroup_v1_hierarchies(cg, &names, &n, err) < 0)
      return -1;
    for (size_t i = 0; i < n && hier == NULL; i++)
      if (has_controller(names[i], controller))
        hier = names[i];
  }
  if (hier == NULL)
    return 0;
  if (sr_cgroup_dir_open(d, cg->root, hier, cg->path, err) < 0)
    return -1;
  return 1;
}

/* ---- Creation ---- */

static bool blank(const char *s)
{
  return s[strspn(s, " \t\n")] == '\0';
}

/* A new cpuset cgroup starts with empty cpus and mems, and no task can join it until both are
 * set: each level inherits its parent's. */
static int cpuset_inherit(const char *parent, const char *child, sr_error_t *err)
{
  static const char *const files[] = {"cpuset.cpus", "cpuset.mems"};
  _cleanup_cg_dir_ struct sr_cg_dir p = {.fd = -1}, c = {.fd = -1};
  if (sr_cgroup_dir_open(&p, parent, NULL, "/", err) < 0 ||
      sr_cgroup_dir_open(&c, child, NULL, "/", err) < 0)
    return -1;
  for (size_t i = 0; i < 2; i++) {
    char cur[4096], from[4096];
    if (sr_cgroup_read(&c, files[i], cur, sizeof(cur), err) < 0)
      return -1;
    if (!blank(cur))
      continue;
    if (sr_cgroup_read(&p, files[i], from, sizeof(from), err) < 0)
      return -1;
    from[strcspn(from, "\n")] = '\0';
    if (sr_cgroup_write(&c, files[i], from, err) < 0)
      return -1;
  }
  return 0;
}

/* Removes the leaves an exclusive create made in hierarchies [0, n) (empty: just made). */
static void remove_leaves(const struct sr_cgroup *cg, char **names, size_t n)
{
  char p[PATH_MAX];
  for (size_t j = 0; j < n; j++)
    if ((size_t)snprintf(p, sizeof(p), "%s/%s%s", cg->root, names[j], cg->path) < sizeof(p))
      rmdir(p);
}

void sr_cgroup_v1_remove_leaves(const struct sr_cgroup *cg)
{
  _cleanup_strv_ char **names = NULL;
  size_t n = 0;
  sr_error_t e = NULL;
  if (sr_cgroup_v1_hierarchies(cg, &names, &n, &e) == 0)
    remove_leaves(cg, names, n);
  sr_error_free(&e);
}

int sr_cgroup_v1_create(struct sr_cgroup *cg, bool exclusive, bool *created, sr_error_t *err)
{
  _cleanup_strv_ char **names = NULL;
  size_t n;
  if (sr_cgroup_v1_hierarchies(cg, &names, &n, err) < 0)
    return -1;
  if (n == 0)
    return sr_error_make(err, 0, "cgroup: no cgroup v1 hierarchy is mounted under %s", cg->root);
  for (size_t i = 0; i < n; i++) {
    char cur[PATH_MAX], parent[PATH_MAX], probe[PATH_MAX + 16];
    int len = snprintf(cur, sizeof(cur), "%s/%s", cg->root, names[i]);
    if (len < 0 || (size_t)len >= sizeof(cur))
      return sr_error_make(err, ENAMETOOLONG, "cgroup: `%s/%s`", cg->root, names[i]);
    snprintf(probe, sizeof(probe), "%s/cpuset.cpus", cur);
    bool cpuset = access(probe, F_OK) == 0;
    for (const char *p = cg->path; *p;) {
      const char *e = strchrnul(p + 1, '/');
      memcpy(parent, cur, (size_t)len + 1);
      if ((size_t)len + (size_t)(e - p) >= sizeof(cur))
        return sr_error_make(err, ENAMETOOLONG, "cgroup: mkdir below `%s`", parent);
      memcpy(cur + len, p, (size_t)(e - p));
      len += (int)(e - p);
      cur[len] = '\0';
      if (mkdir(cur, 0755) == 0) {
        if (*e == '\0')
          *created = true;
      } else if (errno == EEXIST && *e == '\0' && exclusive) {
        remove_leaves(cg, names, i);
        return sr_error_make(err, EEXIST, "cgroup `%s` exists already", cur);
      } else if (errno != EEXIST) {
        return sr_error_sys(err, "cgroup: mkdir `%s`", cur);
      }
      if (cpuset && cpuset_inherit(parent, cur, err) < 0)
        return -1;
      p = e;
    }
  }
  return 0;
}

/* ---- Resources ---- */

/* The container's directory of controller, or an error naming the field that needs it. */
static int ctl(const struct sr_cgroup *cg, const char *controller, const char *field,
               struct sr_cg_dir *d, sr_error_t *err)
{
  int r = sr_cgroup_v1_controller(cg, controller, d, err);
  if (r < 0)
    return sr_error_wrap(err, "%s", field);
  if (r == 0)
    return sr_error_make(err, 0, "%s: the %s cgroup controller is not mounted under %s", field,
                         controller, cg->root);
  return 0;
}

/* A value for a config field written to a controller's file (cgroup.h). */
#define PUT(d, file, field, err, ...) sr_cgroup_putf((d), (file), (field), NULL, (err), __VA_ARGS__)

static int v1_devices(struct sr_cgroup *cg, const struct sr_resources *r, sr_error_t *err)
{
  static const char *const field = "linux.resources.devices";
  _cleanup_cg_dir_ struct sr_cg_dir d = {.fd = -1};
  if (ctl(cg, "devices", field, &d, err) < 0)
    return -1;
  /* Default deny, then the rules in order: the kernel keeps the exceptions in sequence. */
  if (PUT(&d, "devices.deny", field, err, "a") < 0)
    return -1;
  for (size_t i = 0; r && i < r->n_devices; i++) {
    const struct sr_device_rule *x = &r->devices[i];
    char maj[24] = "*", min[24] = "*";
    if (x->major >= 0)
      snprintf(maj, sizeof(maj), "%" PRId64, x->major);
    if (x->minor >= 0)
      snprintf(min, sizeof(min), "%" PRId64, x->minor);
    if (PUT(&d, x->allow ? "devices.allow" : "devices.deny", field, err, "%c %s:%s %s", x->type,
            maj, min, x->access) < 0)
      return sr_error_wrap(err, "devices[%zu]", i);
  }
  return 0;
}

static int v1_memory(struct sr_cgroup *cg, const struct sr_resources *r, sr_error_t *err)
{
  const __typeof__(r->memory) *m = &r->memory;
  /* 0 means unset for limit, reservation and swap, as in runc. */
  bool swap_set = m->swap.set && m->swap.v != 0, limit_set = m->limit.set && m->limit.v != 0;
  bool resv_set = m->reservation.set && m->reservation.v != 0;
  int64_t swap = m->swap.v;
  if (!limit_set && !resv_set && !swap_set && !m->kernel.set && !m->kernel_tcp.set &&
      !m->swappiness.set && !m->has_disable_oom_killer && !m->has_use_hierarchy)
    return 0;
  _cleanup_cg_dir_ struct sr_cg_dir d = {.fd = -1};
  if (ctl(cg, "memory", "linux.resources.memory", &d, err) < 0)
    return -1;
  const char *lf = "linux.resources.memory.limit", *sf = "linux.resources.memory.swap";
  /* An unlimited memory with no word on swap means unlimited swap too (runc). */
  if (limit_set && m->limit.v == -1 && !swap_set &&
      sr_cgroup_has(&d, "memory.memsw.limit_in_bytes")) {
    swap_set = true;
    swap = -1;
  }
  if (limit_set && swap_set) {
    /* The kernel wants memory <= memory+swap at every step: raise memsw first when growing. */
    uint64_t cur;
    if (sr_cgroup_read_u64(&d, "memory.limit_in_bytes", &cur, err) < 0)
      return sr_error_wrap(err, "%s", lf);
    bool swap_first = swap == -1 || cur < (uint64_t)swap;
    if (swap_first && PUT(&d, "memory.memsw.limit_in_bytes", sf, err, "%" PRId64, swap) < 0)
      return -1;
    if (PUT(&d, "memory.limit_in_bytes", lf, err, "%" PRId64, m->limit.v) < 0)
      return -1;
    if (!swap_first && PUT(&d, "memory.memsw.limit_in_bytes", sf, err, "%" PRId64, swap) < 0)
      return -1;
  } else {
    if (limit_set && PUT(&d, "memory.limit_in_bytes", lf, err, "%" PRId64, m->limit.v) < 0)
      return -1;
    if (swap_set && PUT(&d, "memory.memsw.limit_in_bytes", sf, err, "%" PRId64, swap) < 0)
      return -1;
  }
  if (resv_set && PUT(&d, "memory.soft_limit_in_bytes", "linux.resources.memory.reservation", err,
                      "%" PRId64, m->reservation.v) < 0)
    return -1;
  /* Kernel memory limits are gone from recent kernels: best effort, as runc 1.1. */
  if (m->kernel.set && sr_cgroup_has(&d, "memory.kmem.limit_in_bytes") &&
      PUT(&d, "memory.kmem.limit_in_bytes", "linux.resources.memory.kernel", err, "%" PRId64,
          m->kernel.v) < 0) {
    if ((*err)->status != EOPNOTSUPP)
      return -1;
    sr_error_free(err);
  }
  if (m->kernel_tcp.set &&
      PUT(&d, "memory.kmem.tcp.limit_in_bytes", "linux.resources.memory.kernelTCP", err, "%" PRId64,
          m->kernel_tcp.v) < 0)
    return -1;
  if (m->swappiness.set && PUT(&d, "memory.swappiness", "linux.resources.memory.swappiness", err,
                               "%" PRIu64, m->swappiness.v) < 0)
    return -1;
  if (m->has_disable_oom_killer &&
      PUT(&d, "memory.oom_control", "linux.resources.memory.disableOOMKiller", err, "%d",
          m->disable_oom_killer ? 1 : 0) < 0)
    return -1;
  if (m->has_use_hierarchy && PUT(&d, "memory.use_hierarchy", "linux.resources.memory.useHierarchy",
                                  err, "%d", m->use_hierarchy ? 1 : 0) < 0)
    return -1;
  return 0;
}

static int v1_cpu(struct sr_cgroup *cg, const struct sr_resources *r, sr_error_t *err)
{
  const __typeof__(r->cpu) *c = &r->cpu;
  /* 0 quota, period and shares mean unset (runc); the kernel refuses them anyway. */
  bool quota = c->quota.set && c->quota.v != 0, period = c->period.set && c->period.v != 0;
  bool shares = c->shares.set && c->shares.v != 0;
  if (shares || quota || period || c->burst.set || c->realtime_runtime.set ||
      c->realtime_period.set || c->idle.set) {
    _cleanup_cg_dir_ struct sr_cg_dir d = {.fd = -1};
    if (ctl(cg, "cpu", "linux.resources.cpu", &d, err) < 0)
      return -1;
    if (shares &&
        PUT(&d, "cpu.shares", "linux.resources.cpu.shares", err, "%" PRIu64, c->shares.v) < 0)
      return -1;
    bool period_again = false;
    if (period && PUT(&d, "cpu.cfs_period_us", "linux.resources.cpu.period", err, "%" PRIu64,
                      c->period.v) < 0) {
      /* A shorter period can make old_quota/new_period exceed the parent's ratio: retry
       * after the quota (runc). */
      if ((*err)->status != EINVAL || !quota)
        return -1;
      sr_error_free(err);
      period_again = true;
    }
    if (quota &&
        PUT(&d, "cpu.cfs_quota_us", "linux.resources.cpu.quota", err, "%" PRId64, c->quota.v) < 0)
      return -1;
    if (period_again && PUT(&d, "cpu.cfs_period_us", "linux.resources.cpu.period", err, "%" PRIu64,
                            c->period.v) < 0)
      return -1;
    if (c->burst.set &&
        PUT(&d, "cpu.cfs_burst_us", "linux.resources.cpu.burst", err, "%" PRIu64, c->burst.v) < 0)
      return -1;
    if ((c->realtime_runtime.set || c->realtime_period.set) &&
        !sr_cgroup_has(&d, "cpu.rt_runtime_us"))
      return sr_error_make(err, 0,
                           "linux.resources.cpu.realtimeRuntime: the kernel has no "
                           "realtime group scheduling (no cpu.rt_runtime_us in %s)",
                           d.path);
    if (c->realtime_period.set && PUT(&d, "cpu.rt_period_us", "linux.resources.cpu.realtimePeriod",
                                      err, "%" PRIu64, c->realtime_period.v) < 0)
      return -1;
    if (c->realtime_runtime.set &&
        PUT(&d, "cpu.rt_runtime_us", "linux.resources.cpu.realtimeRuntime", err, "%" PRId64,
            c->realtime_runtime.v) < 0)
      return -1;
    if (c->idle.set &&
        PUT(&d, "cpu.idle", "linux.resources.cpu.idle", err, "%" PRId64, c->idle.v) < 0)
      return -1;
  }
  if ((c->cpus && *c->cpus) || (c->mems && *c->mems)) {
    _cleanup_cg_dir_ struct sr_cg_dir d = {.fd = -1};
    if (ctl(cg, "cpuset", "linux.resources.cpu.cpus", &d, err) < 0)
      return -1;
    if (c->cpus && *c->cpus &&
        PUT(&d, "cpuset.cpus", "linux.resources.cpu.cpus", err, "%s", c->cpus) < 0)
      return -1;
    if (c->mems && *c->mems &&
        PUT(&d, "cpuset.mems", "linux.resources.cpu.mems", err, "%s", c->mems) < 0)
      return -1;
  }
  return 0;
}

static int v1_pids(struct sr_cgroup *cg, const struct sr_resources *r, sr_error_t *err)
{
  if (!r->pids_limit.set)
    return 0;
  const char *field = "linux.resources.pids.limit";
  _cleanup_cg_dir_ struct sr_cg_dir d = {.fd = -1};
  if (ctl(cg, "pids", field, &d, err) < 0)
    return -1;
  if (r->pids_limit.v < 0)
    return PUT(&d, "pids.max", field, err, "max");
  return PUT(&d, "pids.max", field, err, "%" PRId64, r->pids_limit.v);
}

/* Entries of one per-device file: one write each, as the kernel parses them. */
static int put_lines(const struct sr_cg_dir *d, const char *file, const char *field, char **lines,
                     size_t n, sr_error_t *err)
{
  if (n == 0)
    return 0;
  if (sr_cgroup_write_lines(d, file, lines, n, err) < 0)
    return sr_error_wrap(err, "%s", field);
  return 0;
}

static int v1_blkio(struct sr_cgroup *cg, const struct sr_resources *r, sr_error_t *err)
{
  static const char *const tfiles[4] = {
      "blkio.throttle.read_bps_device", "blkio.throttle.write_bps_device",
      "blkio.throttle.read_iops_device", "blkio.throttle.write_iops_device"};
  static const char *const tfields[4] = {"linux.resources.blockIO.throttleReadBpsDevice",
                                         "linux.resources.blockIO.throttleWriteBpsDevice",
                                         "linux.resources.blockIO.throttleReadIOPSDevice",
                                         "linux.resources.blockIO.throttleWriteIOPSDevice"};
  const __typeof__(r->block_io) *b = &r->block_io;
  /* A weight of 0 means "not set", as in runc: Docker writes "weight": 0 into every
   * container's config, and the kernel rejects 0 (its range starts at 10, 1 for BFQ). */
  bool weight = b->weight.set && b->weight.v != 0;
  bool leaf_weight = b->leaf_weight.set && b->leaf_weight.v != 0;
  bool any = weight || leaf_weight || b->n_weight_devices > 0;
  for (int i = 0; i < 4; i++)
    any = any || b->n_throttle[i] > 0;
  if (!any)
    return 0;
  _cleanup_cg_dir_ struct sr_cg_dir d = {.fd = -1};
  if (ctl(cg, "blkio", "linux.resources.blockIO", &d, err) < 0)
    return -1;
  /* Without CFQ, the weights live in the BFQ files (runc). */
  bool bfq = !sr_cgroup_has(&d, "blkio.weight") && sr_cgroup_has(&d, "blkio.bfq.weight");
  if (weight && PUT(&d, bfq ? "blkio.bfq.weight" : "blkio.weight",
                           "linux.resources.blockIO.weight", err, "%" PRIu64, b->weight.v) < 0)
    return -1;
  if (leaf_weight && PUT(&d, "blkio.leaf_weight", "linux.resources.blockIO.leafWeight", err,
                                "%" PRIu64, b->leaf_weight.v) < 0)
    return -1;
  for (size_t i = 0; i < b->n_weight_devices; i++) {
    const struct sr_weight_device *w = &b->weight_devices[i];
    if (w->weight.set &&
        PUT(&d, bfq ? "blkio.bfq.weight_device" : "blkio.weight_device",
            "linux.resources.blockIO.weightDevice", err, "%" PRId64 ":%" PRId64 " %" PRIu64,
            w->major, w->minor, w->weight.v) < 0)
      return -1;
    if (w->leaf_weight.set &&
        PUT(&d, "blkio.leaf_weight_device", "linux.resources.blockIO.weightDevice", err,
            "%" PRId64 ":%" PRId64 " %" PRIu64, w->major, w->minor, w->leaf_weight.v) < 0)
      return -1;
  }
  for (int t = 0; t < 4; t++) {
    size_t n = b->n_throttle[t];
    if (n == 0)
      continue;
    char **lines = calloc(n, sizeof(char *));
    if (lines == NULL)
      return sr_error_make(err, ENOMEM, "%s", tfields[t]);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
      const struct sr_throttle_device *x = &b->throttle[t][i];
      if (asprintf(&lines[i], "%" PRId64 ":%" PRId64 " %" PRIu64 "\n", x->major, x->minor,
                   x->rate) < 0) {
        lines[i] = NULL;
        rc = sr_error_make(err, ENOMEM, "%s", tfields[t]);
      }
    }
    if (rc == 0)
      rc = put_lines(&d, tfiles[t], tfields[t], lines, n, err);
    sr_cgroup_free_lines(lines, n);
    if (rc < 0)
      return -1;
  }
  return 0;
}

/* Where a controller is: 1 with its v1 directory in d; on a hybrid host without it in v1,
 * 2 with the unified directory in d (where it may be instead); 0 on another host without it. */
static int v1_or_unified(struct sr_cgroup *cg, const char *controller, struct sr_cg_dir *d,
                         sr_error_t *err)
{
  int found = sr_cgroup_v1_controller(cg, controller, d, err);
  if (found != 0)
    return found;
  if (!cg->hybrid)
    return 0;
  return sr_cgroup_unified_open(cg, d, err) < 0 ? -1 : 2;
}

static int v1_hugetlb(struct sr_cgroup *cg, const struct sr_resources *r, sr_error_t *err)
{
  if (r->n_hugepage_limits == 0)
    return 0;
  const char *field = "linux.resources.hugepageLimits";
  _cleanup_cg_dir_ struct sr_cg_dir d = {.fd = -1};
  /* Hybrid hosts may have hugetlb only on the unified mount. */
  int found = v1_or_unified(cg, "hugetlb", &d, err);
  if (found < 0)
    return sr_error_wrap(err, "%s", field);
  if (found == 0)
    return sr_error_make(err, 0, "%s: the hugetlb cgroup controller is not mounted under %s",
                         field, cg->root);
  if (found == 2)
    return sr_cgroup_v2_hugetlb(&d, r, err);
  for (size_t i = 0; i < r->n_hugepage_limits; i++) {
    const struct sr_hugepage_limit *h = &r->hugepage_limits[i];
    char file[64];
    snprintf(file, sizeof(file), "hugetlb.%s.limit_in_bytes", h->page_size);
    if (PUT(&d, file, field, err, "%" PRIu64, h->limit) < 0)
      return sr_error_wrap(err, "[%zu] (pageSize %s)", i, h->page_size);
    /* Reservation accounting, where the kernel has it, is what the spec prefers. */
    snprintf(file, sizeof(file), "hugetlb.%s.rsvd.limit_in_bytes", h->page_size);
    if (sr_cgroup_has(&d, file) && PUT(&d, file, field, err, "%" PRIu64, h->limit) < 0)
      return -1;
  }
  return 0;
}

static int v1_network(struct sr_cgroup *cg, const struct sr_resources *r, sr_error_t *err)
{
  if (r->network.has_class_id) {
    _cleanup_cg_dir_ struct sr_cg_dir d = {.fd = -1};
    if (ctl(cg, "net_cls", "linux.resources.network.classID", &d, err) < 0 ||
        PUT(&d, "net_cls.classid", "linux.resources.network.classID", err, "%" PRIu32,
            r->network.class_id) < 0)
      return -1;
  }
  size_t n = r->network.n_priorities;
  if (n == 0)
    return 0;
  const char *field = "linux.resources.network.priorities";
  _cleanup_cg_dir_ struct sr_cg_dir d = {.fd = -1};
  if (ctl(cg, "net_prio", field, &d, err) < 0)
    return -1;
  char **lines = calloc(n, sizeof(char *));
  if (lines == NULL)
    return sr_error_make(err, ENOMEM, "%s", field);
  int rc = 0;
  for (size_t i = 0; i < n && rc == 0; i++)
    if (asprintf(&lines[i], "%s %" PRIu32 "\n", r->network.priorities[i].name,
                 r->network.priorities[i].priority) < 0) {
      lines[i] = NULL;
      rc = sr_error_make(err, ENOMEM, "%s", field);
    }
  if (rc == 0)
    rc = put_lines(&d, "net_prio.ifpriomap", field, lines, n, err);
  sr_cgroup_free_lines(lines, n);
  return rc;
}

static int v1_rdma(struct sr_cgroup *cg, const struct sr_resources *r, sr_error_t *err)
{
  if (r->n_rdma == 0)
    return 0;
  const char *field = "linux.resources.rdma";
  _cleanup_cg_dir_ struct sr_cg_dir d = {.fd = -1};
  if (ctl(cg, "rdma", field, &d, err) < 0)
    return -1;
  for (size_t i = 0; i < r->n_rdma; i++) {
    const struct sr_rdma_limit *l = &r->rdma[i];
    char h[48] = "", o[48] = "";
    if (l->hca_handles.set)
      snprintf(h, sizeof(h), " hca_handle=%" PRIu64, l->hca_handles.v);
    if (l->hca_objects.set)
      snprintf(o, sizeof(o), " hca_object=%" PRIu64, l->hca_objects.v);
    if ((*h || *o) && PUT(&d, "rdma.max", field, err, "%s%s%s", l->device, h, o) < 0)
      return -1;
  }
  return 0;
}

int sr_cgroup_v1_apply(struct sr_cgroup *cg, const struct sr_resources *r, bool update,
                       sr_error_t *err)
{
  if (r && r->n_unified > 0)
    return sr_error_make(err, 0, "linux.resources.unified: requires cgroup v2");
  /* On create the rule list is the whole truth (default deny); update touches it only when
   * the list is given. */
  if ((!update || (r && r->devices)) && v1_devices(cg, r, err) < 0)
    return -1;
  if (r == NULL)
    return 0;
  /* runc's order: cpuset is inside v1_cpu, then memory, cpu, pids, blkio, hugetlb, net, rdma. */
  if (v1_memory(cg, r, err) < 0 || v1_cpu(cg, r, err) < 0 || v1_pids(cg, r, err) < 0 ||
      v1_blkio(cg, r, err) < 0 || v1_hugetlb(cg, r, err) < 0 || v1_network(cg, r, err) < 0 ||
      v1_rdma(cg, r, err) < 0)
    return -1;
  return 0;
}

/* ---- Freezer ---- */

static int read_state(const struct sr_cg_dir *d, char *buf, size_t size, sr_error_t *err)
{
  if (sr_cgroup_read(d, "freezer.state", buf, size, err) < 0)
    return -1;
  buf[strcspn(buf, "\n")] = '\0';
  return 0;
}

int sr_cgroup_v1_freeze(struct sr_cgroup *cg, bool frozen, sr_error_t *err)
{
  _cleanup_cg_dir_ struct sr_cg_dir d = {.fd = -1};
  int found = v1_or_unified(cg, "freezer", &d, err);
  if (found < 0)
    return -1;
  if (found == 0)
    return sr_error_make(err, 0, "cgroup: the freezer controller is not mounted under %s",
                         cg->root);
  if (found == 2)
    return sr_cgroup_v2_freeze(&d, frozen, err);
  const char *want = frozen ? "FROZEN" : "THAWED";
  int64_t deadline = sr_cgroup_now_ms() + SR_CG_TIMEOUT_MS;
  for (unsigned i = 0;; i++) {
    /* Asked again now and then: a freeze can stall on a task in an uninterruptible wait, and a
     * thaw-and-refreeze gets it going (runc does the same). */
    if (frozen && i > 0 && i % 100 == 0 && sr_cgroup_write(&d, "freezer.state", "THAWED", err) < 0)
      return -1;
    if (i % 25 == 0 && sr_cgroup_write(&d, "freezer.state", want, err) < 0)
      return -1;
    char state[32];
    if (read_state(&d, state, sizeof(state), err) < 0)
      return -1;
    if (strcmp(state, want) == 0)
      return 0;
    if (sr_cgroup_now_ms() > deadline) {
      if (frozen) {
        sr_error_t e = NULL;
        sr_cgroup_write(&d, "freezer.state", "THAWED", &e); /* do not leave it half frozen */
        sr_error_free(&e);
      }
      return sr_error_make(err, ETIMEDOUT, "cgroup: freezer.state in %s is still %s, not %s",
                           d.path, state, want);
    }
    sr_cgroup_pause();
  }
}

int sr_cgroup_v1_is_frozen(struct sr_cgroup *cg, bool *frozen, sr_error_t *err)
{
  _cleanup_cg_dir_ struct sr_cg_dir d = {.fd = -1};
  *frozen = false;
  int found = v1_or_unified(cg, "freezer", &d, err);
  if (found <= 0)
    return found;
  if (found == 2)
    return sr_cgroup_v2_is_frozen(&d, frozen, err);
  int64_t deadline = sr_cgroup_now_ms() + SR_CG_TIMEOUT_MS;
  char state[32];
  for (;;) {
    if (read_state(&d, state, sizeof(state), err) < 0)
      return -1;
    if (strcmp(state, "FREEZING") != 0 || sr_cgroup_now_ms() > deadline)
      break;
    sr_cgroup_pause();
  }
  if (strcmp(state, "FROZEN") != 0)
    return 0;
  /* Frozen through an ancestor only is not this container being paused (runc). */
  char self[16];
  sr_error_t e = NULL;
  if (sr_cgroup_read(&d, "freezer.self_freezing", self, sizeof(self), &e) < 0) {
    sr_error_free(&e);
    *frozen = true;
    return 0;
  }
  *frozen = self[0] == '1';
  return 0;
}

/* ---- Statistics ---- */

static int cpuacct_stats(const struct sr_cg_dir *d, struct sr_cgroup_stats *st, sr_error_t *err)
{
  char buf[32768]; /* one number per CPU */
  if (sr_cgroup_read_u64_opt(d, "cpuacct.usage", &st->cpu_usage_total, err) < 0)
    return -1;
  if (sr_cgroup_has(d, "cpuacct.usage_percpu")) {
    if (sr_cgroup_read(d, "cpuacct.usage_percpu", buf, sizeof(buf), err) < 0)
      return -1;
    size_t n = 0;
    for (char *p = buf; *p;) {
      char *end;
      unsigned long long v = strtoull(p, &end, 10);
      if (end == p)
        break;
      uint64_t *nv = realloc(st->cpu_percpu, (n + 1) * sizeof(uint64_t));
      if (nv == NULL)
        return sr_error_make(err, ENOMEM, "cgroup: cpuacct.usage_percpu");
      st->cpu_percpu = nv;
      nv[n++] = v;
      st->n_percpu = n;
      p = end;
    }
  }
  if (sr_cgroup_has(d, "cpuacct.stat")) {
    /* In USER_HZ ticks; reported in ns like the total. */
    uint64_t user, sys;
    long hz = sysconf(_SC_CLK_TCK);
    if (hz <= 0)
      hz = 100;
    if (sr_cgroup_read_keyed(d, "cpuacct.stat", "user", &user, err) < 0 ||
        sr_cgroup_read_keyed(d, "cpuacct.stat", "system", &sys, err) < 0)
      return -1;
    st->cpu_usage_user = user * (1000000000ull / (uint64_t)hz);
    st->cpu_usage_kernel = sys * (1000000000ull / (uint64_t)hz);
  }
  return 0;
}

static int cpu_stats(const struct sr_cg_dir *d, struct sr_cgroup_stats *st, sr_error_t *err)
{
  if (sr_cgroup_has(d, "cpu.stat") &&
      (sr_cgroup_read_keyed(d, "cpu.stat", "nr_periods", &st->cpu_throttling_periods, err) < 0 ||
       sr_cgroup_read_keyed(d, "cpu.stat", "nr_throttled", &st->cpu_throttled_periods, err) < 0 ||
       sr_cgroup_read_keyed(d, "cpu.stat", "throttled_time", &st->cpu_throttled_time, err) < 0))
    return -1;
  return 0;
}

static int memory_stats(const struct sr_cg_dir *d, struct sr_cgroup_stats *st, sr_error_t *err)
{
  if (sr_cgroup_read_u64_opt(d, "memory.usage_in_bytes", &st->memory_usage, err) < 0 ||
      sr_cgroup_read_u64_opt(d, "memory.max_usage_in_bytes", &st->memory_max_usage, err) < 0 ||
      sr_cgroup_read_u64_opt(d, "memory.limit_in_bytes", &st->memory_limit, err) < 0 ||
      sr_cgroup_read_u64_opt(d, "memory.failcnt", &st->memory_failcnt, err) < 0 ||
      sr_cgroup_read_u64_opt(d, "memory.memsw.usage_in_bytes", &st->swap_usage, err) < 0 ||
      sr_cgroup_read_u64_opt(d, "memory.memsw.limit_in_bytes", &st->swap_limit, err) < 0)
    return -1;
  if (sr_cgroup_has(d, "memory.stat")) {
    if (sr_cgroup_stats_memory_stat(d, st, err) < 0)
      return -1;
    st->memory_cache = sr_cgroup_stats_lookup(st, "cache");
  }
  if (sr_cgroup_has(d, "memory.oom_control") &&
      sr_cgroup_read_keyed(d, "memory.oom_control", "oom_kill", &st->oom_kill_count, err) < 0)
    return -1;
  return 0;
}

static int blkio_stats(const struct sr_cg_dir *d, struct sr_cgroup_stats *st, sr_error_t *err)
{
  /* CFQ's file, else the throttling layer's (always there), as runc. */
  static const char *const files[] = {"blkio.io_service_bytes_recursive",
                                      "blkio.throttle.io_service_bytes_recursive"};
  for (size_t f = 0; f < 2 && st->n_blkio_bytes == 0; f++) {
    if (!sr_cgroup_has(d, files[f]))
      continue;
    char buf[16384];
    if (sr_cgroup_read(d, files[f], buf, sizeof(buf), err) < 0)
      return -1;
    char *save = NULL;
    for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
      unsigned long long maj, min, v;
      char op[16];
      /* "8:0 Read 4096"; the "Total N" line has no device. */
      if (sscanf(line, "%llu:%llu %15s %llu", &maj, &min, op, &v) != 4)
        continue;
      if (sr_cgroup_stats_add_blkio(st, maj, min, op, v) < 0)
        return sr_error_make(err, ENOMEM, "cgroup: %s", files[f]);
    }
  }
  return 0;
}

static int hugetlb_stats(const struct sr_cg_dir *d, struct sr_cgroup_stats *st, sr_error_t *err)
{
  _cleanup_strv_ char **sizes = NULL;
  size_t n;
  if (sr_cgroup_v2_hugetlb_sizes(d, ".usage_in_bytes", &sizes, &n, err) < 0)
    return -1;
  for (size_t i = 0; i < n; i++) {
    char f1[64], f2[64], f3[64];
    struct sr_hugetlb_stat *h = sr_cgroup_v2_stats_add_hugetlb(st, sizes[i]);
    if (h == NULL)
      return sr_error_make(err, ENOMEM, "cgroup: hugetlb");
    snprintf(f1, sizeof(f1), "hugetlb.%s.usage_in_bytes", sizes[i]);
    snprintf(f2, sizeof(f2), "hugetlb.%s.max_usage_in_bytes", sizes[i]);
    snprintf(f3, sizeof(f3), "hugetlb.%s.failcnt", sizes[i]);
    if (sr_cgroup_read_u64_opt(d, f1, &h->usage, err) < 0 ||
        sr_cgroup_read_u64_opt(d, f2, &h->max_usage, err) < 0 ||
        sr_cgroup_read_u64_opt(d, f3, &h->failcnt, err) < 0)
      return -1;
  }
  return 0;
}

static int pids_stats(const struct sr_cg_dir *d, struct sr_cgroup_stats *st, sr_error_t *err)
{
  if (sr_cgroup_read_u64_opt(d, "pids.current", &st->pids_current, err) < 0 ||
      sr_cgroup_read_u64_opt(d, "pids.max", &st->pids_limit, err) < 0)
    return -1;
  if (st->pids_limit == UINT64_MAX)
    st->pids_limit = 0;
  return 0;
}

/* One controller's statistics, read from its v1 directory by read; none where it is not
 * mounted. */
static int v1_controller_stats(struct sr_cgroup *cg, const char *controller,
                               int (*read)(const struct sr_cg_dir *d, struct sr_cgroup_stats *st,
                                           sr_error_t *err),
                               struct sr_cgroup_stats *st, sr_error_t *err)
{
  _cleanup_cg_dir_ struct sr_cg_dir d = {.fd = -1};
  int found = sr_cgroup_v1_controller(cg, controller, &d, err);
  if (found <= 0)
    return found;
  return read(&d, st, err);
}

static int v1_hugetlb_stats(struct sr_cgroup *cg, struct sr_cgroup_stats *st, sr_error_t *err)
{
  _cleanup_cg_dir_ struct sr_cg_dir d = {.fd = -1};
  int found = sr_cgroup_v1_controller(cg, "hugetlb", &d, err);
  if (found < 0)
    return -1;
  if (found == 0) {
    if (!cg->hybrid)
      return 0;
    if (sr_cgroup_unified_open(cg, &d, err) < 0) {
      if ((*err)->status != ENOENT)
        return -1;
      sr_error_free(err);
      return 0;
    }
    return sr_cgroup_v2_hugetlb_stats(&d, st, err);
  }
  return hugetlb_stats(&d, st, err);
}

int sr_cgroup_v1_stats(struct sr_cgroup *cg, struct sr_cgroup_stats *st, sr_error_t *err)
{
  if (v1_controller_stats(cg, "cpuacct", cpuacct_stats, st, err) < 0 ||
      v1_controller_stats(cg, "cpu", cpu_stats, st, err) < 0 ||
      v1_controller_stats(cg, "memory", memory_stats, st, err) < 0 ||
      v1_controller_stats(cg, "blkio", blkio_stats, st, err) < 0 ||
      v1_hugetlb_stats(cg, st, err) < 0 ||
      v1_controller_stats(cg, "pids", pids_stats, st, err) < 0)
    return -1;
  return 0;
}
