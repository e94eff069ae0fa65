#include "build.h"

/* Control groups: a fake v2 (and v1) tree in /tmp for the file mapping of every resource, the
 * real v1 hierarchies and a real cgroup2 directory of this host for membership, limits, the
 * freezer, killing, removal and the eBPF device filter, and cgroup path resolution. */

#include "cgroup.h"
#include "cleanup.h"
#include "unit.h"
#include "fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <linux/bpf.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- Helpers ---- */

static void put_file(const char *dir, const char *file, const char *content)
{
  char p[PATH_MAX];
  snprintf(p, sizeof(p), "%s/%s", dir, file);
  int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0 || sr_fileio_write_all(fd, content, strlen(content)) < 0)
    unit_fail(__FILE__, __LINE__, "cannot write %s: %s", p, strerror(errno));
  if (fd >= 0)
    close(fd);
}

/* File contents (at most 4 KiB), or "(missing)". */
static const char *slurp(const char *dir, const char *file)
{
  static char buf[4096];
  char p[PATH_MAX];
  snprintf(p, sizeof(p), "%s/%s", dir, file);
  sr_error_t e = NULL;
  if (sr_fileio_read_small_at(AT_FDCWD, p, buf, sizeof(buf), NULL, &e) < 0) {
    sr_error_free(&e);
    return "(missing)";
  }
  return buf;
}

/* A value as the kernel prints it, without the newline. */
static const char *value(const char *dir, const char *file)
{
  const char *s = slurp(dir, file);
  ((char *)s)[strcspn(s, "\n")] = '\0';
  return s;
}

static bool exists(const char *path)
{
  struct stat st;
  return stat(path, &st) == 0;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
  (void)st;
  (void)ftw;
  if (flag == FTW_DP)
    rmdir(path);
  else
    unlink(path);
  return 0;
}

static void rm_rf(const char *path)
{
  nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static int rmdir_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
  (void)st;
  (void)ftw;
  if (flag == FTW_DP)
    rmdir(path); /* cgroupfs: directories only, their files go with them */
  return 0;
}

static int thaw_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
  (void)st;
  (void)ftw;
  if (flag == FTW_D) {
    char p[PATH_MAX];
    snprintf(p, sizeof(p), "%s/freezer.state", path);
    int fd = open(p, O_WRONLY | O_CLOEXEC);
    if (fd >= 0 && write(fd, "THAWED", 6) < 0)
      fprintf(stderr, "  cleanup: thaw %s: %s\n", path, strerror(errno));
    if (fd >= 0)
      close(fd);
    snprintf(p, sizeof(p), "%s/cgroup.freeze", path);
    fd = open(p, O_WRONLY | O_CLOEXEC);
    if (fd >= 0 && write(fd, "0", 1) < 0)
      fprintf(stderr, "  cleanup: thaw %s: %s\n", path, strerror(errno));
    if (fd >= 0)
      close(fd);
  }
  return 0;
}

/* Test cleanup that does not rely on the code under test: thaw, so that the killed children
 * can die and a frozen process is never left behind. */
static void thaw_tree(const char *dir)
{
  nftw(dir, thaw_entry, 16, FTW_PHYS);
}

static void clear_error(sr_error_t *e)
{
  sr_error_free(e);
  *e = NULL;
}

static int64_t now_ms(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Reaps pid within the bound; returns its wait status, or -1. */
static int reap(pid_t pid)
{
  int64_t deadline = now_ms() + 5000;
  int status;
  for (;;) {
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid)
      return status;
    if (r < 0 || now_ms() > deadline)
      return -1;
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
  }
}

/* Orphaned grandchildren come to us (we are a subreaper): collect them. */
static void reap_all(void)
{
  int64_t deadline = now_ms() + 2000;
  while (now_ms() < deadline) {
    pid_t r = waitpid(-1, NULL, WNOHANG);
    if (r < 0)
      return;
    if (r == 0) {
      struct timespec ts = {0, 1000000};
      nanosleep(&ts, NULL);
    }
  }
}

enum kid_mode { KID_DEVICES, KID_FORKER };

struct kid {
  pid_t pid;
  int go, res;
};

/* A child that waits for a byte on `go`, then either reports whether /dev/null and /dev/zero
 * open (KID_DEVICES, once per byte) or forks sleeping grandchildren (KID_FORKER). */
static struct kid spawn(enum kid_mode mode)
{
  struct kid k = {-1, -1, -1};
  int go[2], res[2];
  if (pipe2(go, O_CLOEXEC) < 0 || pipe2(res, O_CLOEXEC) < 0) {
    unit_fail(__FILE__, __LINE__, "pipe: %s", strerror(errno));
    return k;
  }
  pid_t pid = fork();
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    close(go[1]);
    close(res[0]);
    char c;
    while (read(go[0], &c, 1) == 1) {
      if (mode == KID_DEVICES) {
        int r[2];
        int fd = open("/dev/null", O_RDWR | O_CLOEXEC);
        r[0] = fd >= 0 ? 0 : errno;
        if (fd >= 0)
          close(fd);
        fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);
        r[1] = fd >= 0 ? 0 : errno;
        if (fd >= 0)
          close(fd);
        if (write(res[1], r, sizeof(r)) != sizeof(r))
          _exit(1);
      } else {
        for (int i = 0; i < 200; i++) {
          if (fork() == 0)
            for (;;)
              pause();
          struct timespec ts = {0, 1000000};
          nanosleep(&ts, NULL);
        }
      }
    }
    for (;;)
      pause();
  }
  close(go[0]);
  close(res[1]);
  if (pid < 0) {
    unit_fail(__FILE__, __LINE__, "fork: %s", strerror(errno));
    close(go[1]);
    close(res[0]);
    return k;
  }
  k.pid = pid;
  k.go = go[1];
  k.res = res[0];
  return k;
}

/* Asks a KID_DEVICES child to try the devices: errno of opening /dev/null and /dev/zero. */
static bool probe_devices(struct kid *k, int r[2])
{
  struct pollfd p = {k->res, POLLIN, 0};
  if (write(k->go, "d", 1) != 1 || poll(&p, 1, 5000) != 1 ||
      read(k->res, r, 2 * sizeof(int)) != (ssize_t)(2 * sizeof(int)))
    return false;
  return true;
}

static void kid_close(struct kid *k)
{
  if (k->pid > 0) {
    kill(k->pid, SIGKILL);
    reap(k->pid);
  }
  if (k->go >= 0)
    close(k->go);
  if (k->res >= 0)
    close(k->res);
  k->pid = k->go = k->res = -1;
}

/* Every line of /proc/PID/cgroup names `path`. */
static bool in_cgroup_everywhere(pid_t pid, const char *path, int *lines)
{
  char p[64], buf[8192];
  sr_error_t e = NULL;
  snprintf(p, sizeof(p), "/proc/%d/cgroup", (int)pid);
  *lines = 0;
  if (sr_fileio_read_small_at(AT_FDCWD, p, buf, sizeof(buf), NULL, &e) < 0) {
    sr_error_free(&e);
    return false;
  }
  bool all = true;
  char *save = NULL;
  for (char *l = strtok_r(buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
    char *c = strchr(l, ':');
    c = c ? strchr(c + 1, ':') : NULL;
    (*lines)++;
    if (c == NULL || strcmp(c + 1, path) != 0) {
      fprintf(stderr, "  not in %s: %s\n", path, l);
      all = false;
    }
  }
  return all && *lines > 0;
}

static size_t count_pids(struct sr_cgroup *cg)
{
  pid_t *pids = NULL;
  size_t n = 0;
  sr_error_t e = NULL;
  if (sr_cgroup_pids(cg, &pids, &n, &e) < 0) {
    sr_error_free(&e);
    return (size_t)-1;
  }
  free(pids);
  return n;
}

/* Programs attached directly to the cgroup directory for BPF_CGROUP_DEVICE. */
static int device_programs(const char *dir)
{
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  uint32_t ids[16] = {0};
  union bpf_attr a;
  memset(&a, 0, sizeof(a));
  a.query.target_fd = (uint32_t)fd;
  a.query.attach_type = BPF_CGROUP_DEVICE;
  a.query.prog_ids = (uint64_t)(uintptr_t)ids;
  a.query.prog_cnt = 16;
  long r = syscall(__NR_bpf, BPF_PROG_QUERY, &a, sizeof(a));
  close(fd);
  return r < 0 ? -1 : (int)a.query.prog_cnt;
}

/* ---- (1) scratch trees ---- */

#define V2_CONTROLLERS "cpuset cpu io memory hugetlb pids rdma\n"

static void v2_populate(const char *leaf)
{
  static const char *const files[][2] = {
      {"cgroup.controllers", V2_CONTROLLERS},
      {"cgroup.procs", ""},
      {"memory.max", "max\n"},
      {"memory.low", "0\n"},
      {"memory.swap.max", "max\n"},
      {"memory.high", "max\n"},
      {"memory.current", "4096\n"},
      {"pids.max", "max\n"},
      {"cpu.max", "max 100000\n"},
      {"cpu.weight", "100\n"},
      {"cpu.max.burst", "0\n"},
      {"cpu.idle", "0\n"},
      {"cpuset.cpus", "\n"},
      {"cpuset.mems", "\n"},
      {"io.weight", "default 100\n"},
      {"io.max", ""},
      {"hugetlb.2MB.max", "max\n"},
      {"hugetlb.2MB.rsvd.max", "max\n"},
      {"rdma.max", ""},
  };
  for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
    put_file(leaf, files[i][0], files[i][1]);
}

static void a_v2_tree_gets_every_resource_as_runc_writes_it(void)
{
  char root[] = "/tmp/seerun-cgv2-XXXXXX";
  if (mkdtemp(root) == NULL) {
    unit_fail(__FILE__, __LINE__, "mkdtemp: %s", strerror(errno));
    return;
  }
  char kube[256], leaf[256];
  snprintf(kube, sizeof(kube), "%s/kube", root);
  snprintf(leaf, sizeof(leaf), "%s/kube/c1", root);
  put_file(root, "cgroup.controllers", V2_CONTROLLERS);
  put_file(root, "cgroup.subtree_control", "");
  mkdir(kube, 0755);
  put_file(kube, "cgroup.controllers", V2_CONTROLLERS);
  put_file(kube, "cgroup.subtree_control", "");

  sr_error_t err = NULL;
  char sub[PATH_MAX];
  _cleanup_cgroup_ struct sr_cgroup *cg = NULL;
  CHECK_OK(sr_cgroup_new_with_layout(root, "/kube//./c1/", 2, false, &cg, &err), err);
  if (cg == NULL)
    goto out;
  CHECK_STR_EQ(cg->path, "/kube/c1");
  bool created = false;
  CHECK_OK(sr_cgroup_create(cg, &created, &err), err);
  CHECK(created);
  /* Ancestors delegate every controller they have; the container's own cgroup none. */
  CHECK_STR_EQ(slurp(root, "cgroup.subtree_control"),
               "+cpuset +cpu +io +memory +hugetlb +pids +rdma");
  CHECK_STR_EQ(slurp(kube, "cgroup.subtree_control"),
               "+cpuset +cpu +io +memory +hugetlb +pids +rdma");
  CHECK_STR_EQ(slurp(leaf, "cgroup.subtree_control"), "(missing)");
  CHECK_OK(sr_cgroup_create(cg, &created, &err), err);
  CHECK(!created);
  v2_populate(leaf);

  struct sr_resources r;
  memset(&r, 0, sizeof(r));
  r.block_io.weight = (sr_opt_u64){true, 500};
  CHECK_OK(sr_cgroup_apply_resources(cg, &r, true, &err), err);
  CHECK_STR_EQ(slurp(leaf, "io.weight"), "4950"); /* 1 + (500 - 10) * 9999 / 990 */

  struct sr_throttle_device rbps[] = {{8, 0, 600}}, riops[] = {{8, 0, 50}},
                            wiops[] = {{8, 16, 300}};
  struct sr_weight_device wdev[] = {{8, 0, {true, 100}, {false, 0}}};
  struct sr_hugepage_limit huge[] = {{"2MB", 209715200}};
  struct sr_rdma_limit rdma[] = {{"mlx5_1", {true, 3}, {true, 10000}}};
  char cpus[] = "0-1", mems[] = "0";
  memset(&r, 0, sizeof(r));
  r.memory.limit = (sr_opt_i64){true, 1048576};
  r.memory.reservation = (sr_opt_i64){true, 524288};
  r.memory.swap = (sr_opt_i64){true, 3145728};
  r.memory.kernel = (sr_opt_i64){true, 1 << 20}; /* no v2 counterpart: ignored, as runc */
  r.pids_limit = (sr_opt_i64){true, 100};
  r.cpu.shares = (sr_opt_u64){true, 1024};
  r.cpu.quota = (sr_opt_i64){true, 50000};
  r.cpu.period = (sr_opt_u64){true, 250000};
  r.cpu.burst = (sr_opt_u64){true, 1000};
  r.cpu.idle = (sr_opt_i64){true, 1};
  r.cpu.cpus = cpus;
  r.cpu.mems = mems;
  r.block_io.weight_devices = wdev;
  r.block_io.n_weight_devices = 1;
  r.block_io.throttle[0] = rbps;
  r.block_io.n_throttle[0] = 1;
  r.block_io.throttle[2] = riops;
  r.block_io.n_throttle[2] = 1;
  r.block_io.throttle[3] = wiops;
  r.block_io.n_throttle[3] = 1;
  r.hugepage_limits = huge;
  r.n_hugepage_limits = 1;
  r.rdma = rdma;
  r.n_rdma = 1;
  CHECK_OK(sr_cgroup_apply_resources(cg, &r, true, &err), err);
  CHECK_STR_EQ(slurp(leaf, "memory.max"), "1048576");
  CHECK_STR_EQ(slurp(leaf, "memory.low"), "524288");
  CHECK_STR_EQ(slurp(leaf, "memory.swap.max"), "2097152"); /* memory+swap - memory */
  CHECK_STR_EQ(slurp(leaf, "pids.max"), "100");
  CHECK_STR_EQ(slurp(leaf, "cpu.weight"), "39"); /* 1 + (1024 - 2) * 9999 / 262142 */
  CHECK_STR_EQ(slurp(leaf, "cpu.max"), "50000 250000");
  CHECK_STR_EQ(slurp(leaf, "cpu.max.burst"), "1000");
  CHECK_STR_EQ(slurp(leaf, "cpu.idle"), "1");
  CHECK_STR_EQ(slurp(leaf, "cpuset.cpus"), "0-1");
  CHECK_STR_EQ(slurp(leaf, "cpuset.mems"), "0");
  CHECK_STR_EQ(slurp(leaf, "io.weight"), "8:0 910"); /* 1 + (100 - 10) * 9999 / 990 */
  CHECK_STR_EQ(slurp(leaf, "io.max"), "8:0 rbps=600 riops=50\n8:16 wiops=300\n");
  CHECK_STR_EQ(slurp(leaf, "hugetlb.2MB.max"), "209715200");
  CHECK_STR_EQ(slurp(leaf, "hugetlb.2MB.rsvd.max"), "209715200");
  CHECK_STR_EQ(slurp(leaf, "rdma.max"), "mlx5_1 hca_handle=3 hca_object=10000");

  /* update: a part of cpu.max left unset keeps its value. */
  memset(&r, 0, sizeof(r));
  r.cpu.quota = (sr_opt_i64){true, 20000};
  CHECK_OK(sr_cgroup_apply_resources(cg, &r, true, &err), err);
  CHECK_STR_EQ(slurp(leaf, "cpu.max"), "20000 250000");
  r.cpu.quota = (sr_opt_i64){true, -1};
  CHECK_OK(sr_cgroup_apply_resources(cg, &r, true, &err), err);
  CHECK_STR_EQ(slurp(leaf, "cpu.max"), "max 250000");
  /* create: an unset period is the kernel's default. */
  memset(&r, 0, sizeof(r));
  r.cpu.quota = (sr_opt_i64){true, 30000};
  CHECK_OK(sr_cgroup_apply_resources(cg, &r, true, &err), err);
  CHECK_STR_EQ(slurp(leaf, "cpu.max"), "30000 250000");

  /* Unlimited memory without a word on swap: unlimited swap; swap == memory: no swap. */
  memset(&r, 0, sizeof(r));
  r.memory.limit = (sr_opt_i64){true, -1};
  CHECK_OK(sr_cgroup_apply_resources(cg, &r, true, &err), err);
  CHECK_STR_EQ(slurp(leaf, "memory.max"), "max");
  CHECK_STR_EQ(slurp(leaf, "memory.swap.max"), "max");
  r.memory.limit = (sr_opt_i64){true, 1 << 20};
  r.memory.swap = (sr_opt_i64){true, 1 << 20};
  CHECK_OK(sr_cgroup_apply_resources(cg, &r, true, &err), err);
  CHECK_STR_EQ(slurp(leaf, "memory.swap.max"), "0");
  r.pids_limit = (sr_opt_i64){true, -1};
  CHECK_OK(sr_cgroup_apply_resources(cg, &r, true, &err), err);
  CHECK_STR_EQ(slurp(leaf, "pids.max"), "max");

  /* unified: written last and as given, one write per line. */
  char *ukeys[] = {"memory.high", "pids.max", "io.max"};
  char *uvals[] = {"2097152", "50", "259:0 rbps=2097152 wiops=120\n253:0 rbps=2097152 wiops=120"};
  memset(&r, 0, sizeof(r));
  r.pids_limit = (sr_opt_i64){true, 100};
  r.unified_keys = ukeys;
  r.unified_values = uvals;
  r.n_unified = 3;
  CHECK_OK(sr_cgroup_apply_resources(cg, &r, true, &err), err);
  CHECK_STR_EQ(slurp(leaf, "memory.high"), "2097152");
  CHECK_STR_EQ(slurp(leaf, "pids.max"), "50");
  CHECK_STR_EQ(slurp(leaf, "io.max"), "259:0 rbps=2097152 wiops=120\n253:0 rbps=2097152 wiops=120");

  /* What the host cannot honour is an error naming the field. */
  char *mkeys[] = {"misc.max"}, *mvals[] = {"res_a 1"};
  r.unified_keys = mkeys;
  r.unified_values = mvals;
  r.n_unified = 1;
  CHECK(sr_cgroup_apply_resources(cg, &r, true, &err) < 0);
  CHECK_ERR_CONTAINS(err, "linux.resources.unified.misc.max: the misc controller is not "
                          "available in");
  clear_error(&err);
  char *pkeys[] = {"cgroup.procs"}, *pvals[] = {"1"};
  r.unified_keys = pkeys;
  r.unified_values = pvals;
  CHECK(sr_cgroup_apply_resources(cg, &r, true, &err) < 0);
  CHECK_ERR_CONTAINS(err, "linux.resources.unified.cgroup.procs");
  clear_error(&err);
  memset(&r, 0, sizeof(r));
  r.memory.swap = (sr_opt_i64){true, 1 << 20};
  CHECK(sr_cgroup_apply_resources(cg, &r, true, &err) < 0);
  CHECK_ERR_CONTAINS(err, "linux.resources.memory.swap: a swap limit needs a memory limit");
  clear_error(&err);
  memset(&r, 0, sizeof(r));
  r.memory.swappiness = (sr_opt_u64){true, 10};
  CHECK(sr_cgroup_apply_resources(cg, &r, true, &err) < 0);
  CHECK_ERR_CONTAINS(err, "linux.resources.memory.swappiness: not supported on cgroup v2");
  clear_error(&err);
  memset(&r, 0, sizeof(r));
  r.network.has_class_id = true;
  CHECK(sr_cgroup_apply_resources(cg, &r, true, &err) < 0);
  CHECK_ERR_CONTAINS(err, "linux.resources.network.classID: not supported on cgroup v2");
  clear_error(&err);
  snprintf(sub, sizeof(sub), "%s/memory.max", leaf);
  unlink(sub);
  put_file(leaf, "cgroup.controllers", "cpu pids\n");
  memset(&r, 0, sizeof(r));
  r.memory.limit = (sr_opt_i64){true, 1 << 20};
  CHECK(sr_cgroup_apply_resources(cg, &r, true, &err) < 0);
  CHECK_ERR_CONTAINS(err, "linux.resources.memory.limit: the memory controller is not available");
  clear_error(&err);
  /* create always installs the device filter: a plain directory cannot take one. */
  memset(&r, 0, sizeof(r));
  CHECK(sr_cgroup_apply_resources(cg, &r, false, &err) < 0);
  CHECK_ERR_CONTAINS(err, "linux.resources.devices: bpf:");
  CHECK_ERR_CONTAINS(err, "is not a cgroup2 directory");
  clear_error(&err);

  /* Statistics as the kernel's files say them. */
  put_file(leaf, "cpu.stat",
           "usage_usec 1500\nuser_usec 1000\nsystem_usec 500\nnr_periods 7\n"
           "nr_throttled 2\nthrottled_usec 30\n");
  put_file(leaf, "memory.current", "8192\n");
  put_file(leaf, "memory.max", "max\n");
  put_file(leaf, "memory.events", "low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n");
  put_file(leaf, "memory.stat", "anon 4096\nfile 12288\n");
  put_file(leaf, "memory.swap.current", "100\n");
  put_file(leaf, "memory.swap.max", "max\n");
  put_file(leaf, "pids.current", "3\n");
  put_file(leaf, "pids.max", "max\n");
  put_file(leaf, "io.stat", "8:0 rbytes=4096 wbytes=8192 rios=1 wios=2 dbytes=0 dios=0\n");
  put_file(leaf, "hugetlb.2MB.current", "2097152\n");
  put_file(leaf, "hugetlb.2MB.events", "max 4\n");
  struct sr_cgroup_stats st;
  CHECK_OK(sr_cgroup_stats(cg, &st, &err), err);
  CHECK_UINT_EQ(st.cpu_usage_total, 1500000);
  CHECK_UINT_EQ(st.cpu_usage_user, 1000000);
  CHECK_UINT_EQ(st.cpu_usage_kernel, 500000);
  CHECK_UINT_EQ(st.cpu_throttling_periods, 7);
  CHECK_UINT_EQ(st.cpu_throttled_periods, 2);
  CHECK_UINT_EQ(st.cpu_throttled_time, 30000);
  CHECK_UINT_EQ(st.memory_usage, 8192);
  CHECK_UINT_EQ(st.memory_limit, UINT64_MAX);
  CHECK_UINT_EQ(st.memory_failcnt, 3);
  CHECK_UINT_EQ(st.memory_cache, 12288);
  CHECK_UINT_EQ(st.oom_kill_count, 1);
  CHECK_UINT_EQ(st.swap_usage, 8292);
  CHECK_UINT_EQ(st.swap_limit, UINT64_MAX);
  CHECK_UINT_EQ(st.pids_current, 3);
  CHECK_UINT_EQ(st.pids_limit, 0);
  CHECK_UINT_EQ(st.n_memory_stat, 2);
  CHECK_UINT_EQ(st.n_blkio_bytes, 2);
  if (st.n_blkio_bytes == 2) {
    CHECK_STR_EQ(st.blkio_bytes[0].op, "Read");
    CHECK_UINT_EQ(st.blkio_bytes[1].value, 8192);
  }
  CHECK_UINT_EQ(st.n_hugetlb, 1);
  if (st.n_hugetlb == 1) {
    CHECK_STR_EQ(st.hugetlb[0].page_size, "2MB");
    CHECK_UINT_EQ(st.hugetlb[0].usage, 2097152);
    CHECK_UINT_EQ(st.hugetlb[0].failcnt, 4);
  }
  sr_cgroup_stats_clear(&st);

  /* Processes of the whole subtree, sorted, each once. */
  put_file(leaf, "cgroup.procs", "30\n10\n");
  snprintf(sub, sizeof(sub), "%s/inner", leaf);
  mkdir(sub, 0755);
  put_file(sub, "cgroup.procs", "20\n10\n");
  pid_t *pids = NULL;
  size_t n = 0;
  CHECK_OK(sr_cgroup_pids(cg, &pids, &n, &err), err);
  CHECK_UINT_EQ(n, 3);
  if (n == 3) {
    CHECK_INT_EQ(pids[0], 10);
    CHECK_INT_EQ(pids[1], 20);
    CHECK_INT_EQ(pids[2], 30);
  }
  free(pids);
out:
  sr_error_free(&err);
  rm_rf(root);
}

static void a_v1_tree_uses_the_v1_files_and_the_unified_mount_for_hugetlb(void)
{
  char root[] = "/tmp/seerun-cgv1-XXXXXX";
  if (mkdtemp(root) == NULL) {
    unit_fail(__FILE__, __LINE__, "mkdtemp: %s", strerror(errno));
    return;
  }
  static const char *const hier[] = {"cpu,cpuacct", "cpuset",  "memory", "pids",
                                     "blkio",       "systemd", "unified"};
  char p[PATH_MAX];
  for (size_t i = 0; i < sizeof(hier) / sizeof(hier[0]); i++) {
    snprintf(p, sizeof(p), "%s/%s", root, hier[i]);
    mkdir(p, 0755);
    put_file(p, "cgroup.procs", "");
  }
  snprintf(p, sizeof(p), "%s/cpu", root);
  CHECK(symlink("cpu,cpuacct", p) == 0); /* an alias, not a hierarchy of its own */
  /* (cpuset inheritance needs the kernel to create the files: the real v1 test checks it) */
  snprintf(p, sizeof(p), "%s/unified", root);
  put_file(p, "cgroup.controllers", "hugetlb\n");
  put_file(p, "cgroup.subtree_control", "");

  sr_error_t err = NULL;
  _cleanup_cgroup_ struct sr_cgroup *cg = NULL;
  CHECK_OK(sr_cgroup_new_with_layout(root, "/ctr", 1, true, &cg, &err), err);
  if (cg == NULL)
    goto out;
  bool created = false;
  CHECK_OK(sr_cgroup_create(cg, &created, &err), err);
  CHECK(created);
  for (size_t i = 0; i < sizeof(hier) / sizeof(hier[0]); i++) {
    snprintf(p, sizeof(p), "%s/%s/ctr", root, hier[i]);
    CHECK(exists(p));
  }
  snprintf(p, sizeof(p), "%s/cpu/ctr", root);
  CHECK(exists(p)); /* through the alias */
  CHECK_STR_EQ(slurp(root, "unified/cgroup.subtree_control"), "+hugetlb");

  char memd[PATH_MAX], cpud[PATH_MAX], blkd[PATH_MAX], unid[PATH_MAX], pidd[PATH_MAX];
  snprintf(memd, sizeof(memd), "%s/memory/ctr", root);
  snprintf(cpud, sizeof(cpud), "%s/cpu,cpuacct/ctr", root);
  snprintf(blkd, sizeof(blkd), "%s/blkio/ctr", root);
  snprintf(unid, sizeof(unid), "%s/unified/ctr", root);
  snprintf(pidd, sizeof(pidd), "%s/pids/ctr", root);
  put_file(memd, "memory.limit_in_bytes", "9223372036854771712\n");
  put_file(memd, "memory.memsw.limit_in_bytes", "9223372036854771712\n");
  put_file(memd, "memory.soft_limit_in_bytes", "");
  put_file(cpud, "cpu.shares", "1024\n");
  put_file(cpud, "cpu.cfs_quota_us", "-1\n");
  put_file(cpud, "cpu.cfs_period_us", "100000\n");
  put_file(blkd, "blkio.weight", "500\n");
  put_file(blkd, "blkio.throttle.read_bps_device", "");
  put_file(unid, "cgroup.controllers", "hugetlb\n");
  put_file(unid, "hugetlb.2MB.max", "max\n");
  put_file(pidd, "pids.max", "max\n");

  struct sr_throttle_device rbps[] = {{8, 0, 600}, {8, 16, 700}};
  struct sr_hugepage_limit huge[] = {{"2MB", 4194304}};
  struct sr_resources r;
  memset(&r, 0, sizeof(r));
  r.memory.limit = (sr_opt_i64){true, 1 << 20};
  r.memory.swap = (sr_opt_i64){true, 2 << 20};
  r.memory.reservation = (sr_opt_i64){true, 1 << 19};
  r.cpu.shares = (sr_opt_u64){true, 512};
  r.cpu.quota = (sr_opt_i64){true, 20000};
  r.cpu.period = (sr_opt_u64){true, 50000};
  r.block_io.weight = (sr_opt_u64){true, 300};
  r.block_io.throttle[0] = rbps;
  r.block_io.n_throttle[0] = 2;
  r.hugepage_limits = huge;
  r.n_hugepage_limits = 1;
  r.pids_limit = (sr_opt_i64){true, 0}; /* a valid limit: no new process */
  CHECK_OK(sr_cgroup_apply_resources(cg, &r, true, &err), err);
  CHECK_STR_EQ(slurp(memd, "memory.limit_in_bytes"), "1048576");
  CHECK_STR_EQ(slurp(memd, "memory.memsw.limit_in_bytes"), "2097152");
  CHECK_STR_EQ(slurp(memd, "memory.soft_limit_in_bytes"), "524288");
  CHECK_STR_EQ(slurp(cpud, "cpu.shares"), "512");
  CHECK_STR_EQ(slurp(cpud, "cpu.cfs_quota_us"), "20000");
  CHECK_STR_EQ(slurp(cpud, "cpu.cfs_period_us"), "50000");
  CHECK_STR_EQ(slurp(blkd, "blkio.weight"), "300");
  CHECK_STR_EQ(slurp(blkd, "blkio.throttle.read_bps_device"), "8:0 600\n8:16 700\n");
  CHECK_STR_EQ(slurp(unid, "hugetlb.2MB.max"), "4194304");
  CHECK_STR_EQ(slurp(pidd, "pids.max"), "0");

  memset(&r, 0, sizeof(r));
  r.cpu.realtime_runtime = (sr_opt_i64){true, 1000};
  CHECK(sr_cgroup_apply_resources(cg, &r, true, &err) < 0);
  CHECK_ERR_CONTAINS(err, "linux.resources.cpu.realtimeRuntime: the kernel has no realtime");
  clear_error(&err);
  memset(&r, 0, sizeof(r));
  r.network.has_class_id = true;
  r.network.class_id = 0x100001;
  CHECK(sr_cgroup_apply_resources(cg, &r, true, &err) < 0);
  CHECK_ERR_CONTAINS(err, "linux.resources.network.classID: the net_cls cgroup controller is "
                          "not mounted");
  clear_error(&err);
  char *ukeys[] = {"memory.high"}, *uvals[] = {"1"};
  memset(&r, 0, sizeof(r));
  r.unified_keys = ukeys;
  r.unified_values = uvals;
  r.n_unified = 1;
  CHECK(sr_cgroup_apply_resources(cg, &r, true, &err) < 0);
  CHECK_ERR_CONTAINS(err, "linux.resources.unified: requires cgroup v2");
  clear_error(&err);
  /* Devices are always written on create: no devices hierarchy here. */
  CHECK(sr_cgroup_apply_resources(cg, NULL, false, &err) < 0);
  CHECK_ERR_CONTAINS(err, "linux.resources.devices: the devices cgroup controller is not "
                          "mounted");
  clear_error(&err);
out:
  sr_error_free(&err);
  rm_rf(root);
}

/* ---- (2) the real v1 hierarchies of this host ---- */

static bool hugetlb_enabled_at_unified_root(void)
{
  const char *s = slurp("/sys/fs/cgroup/unified", "cgroup.subtree_control");
  return strstr(s, "hugetlb") != NULL;
}

static void real_v1_container_lifecycle(void)
{
  int version = 0;
  bool hybrid = false;
  sr_error_t err = NULL;
  if (sr_cgroup_layout("/sys/fs/cgroup", &version, &hybrid, &err) < 0 || version != 1) {
    fprintf(stderr, "  skipped: /sys/fs/cgroup is not a v1 layout\n");
    sr_error_free(&err);
    return;
  }
  char base[64], path[80];
  snprintf(base, sizeof(base), "/seerun-test-%d", (int)getpid());
  snprintf(path, sizeof(path), "%s/c1", base);
  struct kid dev = {-1, -1, -1}, forker = {-1, -1, -1};
  char d[PATH_MAX], cpus[256];
  _cleanup_cgroup_ struct sr_cgroup *cg = NULL;
  CHECK_OK(sr_cgroup_new("/sys/fs/cgroup", path, &cg, &err), err);
  if (cg == NULL)
    goto out;
  CHECK_INT_EQ(cg->version, 1);
  CHECK(cg->hybrid);
  bool created = false;
  CHECK_OK(sr_cgroup_create(cg, &created, &err), err);
  CHECK(created);
  snprintf(cpus, sizeof(cpus), "%s", value("/sys/fs/cgroup/cpuset", "cpuset.cpus"));
  snprintf(d, sizeof(d), "/sys/fs/cgroup/cpuset%s", path);
  CHECK_STR_EQ(value(d, "cpuset.cpus"), cpus); /* inherited, or no task could join */

  dev = spawn(KID_DEVICES);
  CHECK_OK(sr_cgroup_attach(cg, dev.pid, &err), err);
  int lines = 0;
  CHECK(in_cgroup_everywhere(dev.pid, path, &lines));
  CHECK(lines >= 10); /* 9 v1 hierarchies and the unified one */

  int fd = 0;
  CHECK_OK(sr_cgroup_open_dir(cg, &fd, &err), err);
  CHECK_INT_EQ(fd, -1); /* CLONE_INTO_CGROUP is for v2 */

  struct sr_device_rule rules[] = {{false, 'a', -1, -1, "rwm"}, {true, 'c', 1, 3, "rwm"}};
  struct sr_resources r;
  memset(&r, 0, sizeof(r));
  r.devices = rules;
  r.n_devices = 2;
  r.memory.limit = (sr_opt_i64){true, 64 << 20};
  r.pids_limit = (sr_opt_i64){true, 50};
  CHECK_OK(sr_cgroup_apply_resources(cg, &r, false, &err), err);
  snprintf(d, sizeof(d), "/sys/fs/cgroup/memory%s", path);
  CHECK_STR_EQ(value(d, "memory.limit_in_bytes"), "67108864");
  snprintf(d, sizeof(d), "/sys/fs/cgroup/pids%s", path);
  CHECK_STR_EQ(value(d, "pids.max"), "50");
  snprintf(d, sizeof(d), "/sys/fs/cgroup/devices%s", path);
  CHECK_STR_EQ(value(d, "devices.list"), "c 1:3 rwm");
  int res[2] = {-1, -1};
  CHECK(probe_devices(&dev, res));
  CHECK_INT_EQ(res[0], 0);     /* /dev/null: allowed */
  CHECK_INT_EQ(res[1], EPERM); /* /dev/zero: not in the list */

  bool frozen = true;
  CHECK_OK(sr_cgroup_freeze(cg, true, &err), err);
  snprintf(d, sizeof(d), "/sys/fs/cgroup/freezer%s", path);
  CHECK_STR_EQ(value(d, "freezer.state"), "FROZEN");
  CHECK_OK(sr_cgroup_is_frozen(cg, &frozen, &err), err);
  CHECK(frozen);
  CHECK_OK(sr_cgroup_freeze(cg, false, &err), err);
  CHECK_STR_EQ(value(d, "freezer.state"), "THAWED");
  CHECK_OK(sr_cgroup_is_frozen(cg, &frozen, &err), err);
  CHECK(!frozen);

  pid_t *pids = NULL;
  size_t n = 0;
  CHECK_OK(sr_cgroup_pids(cg, &pids, &n, &err), err);
  CHECK_UINT_EQ(n, 1);
  if (n == 1)
    CHECK_INT_EQ(pids[0], dev.pid);
  free(pids);

  struct sr_cgroup_stats st;
  CHECK_OK(sr_cgroup_stats(cg, &st, &err), err);
  CHECK_UINT_EQ(st.memory_limit, 64 << 20);
  CHECK_UINT_EQ(st.pids_current, 1);
  CHECK_UINT_EQ(st.pids_limit, 50);
  CHECK(st.n_memory_stat > 0);
  CHECK(st.n_percpu > 0);
  sr_cgroup_stats_clear(&st);

  /* A process that keeps forking cannot outrun the kill.  The v1-only view (no unified
   * mount, so no cgroup.kill) takes the freeze, kill, thaw path. */
  _cleanup_cgroup_ struct sr_cgroup *v1only = NULL;
  CHECK_OK(sr_cgroup_new_with_layout("/sys/fs/cgroup", path, 1, false, &v1only, &err), err);
  forker = spawn(KID_FORKER);
  CHECK_OK(sr_cgroup_attach(cg, forker.pid, &err), err);
  CHECK(write(forker.go, "g", 1) == 1);
  int64_t deadline = now_ms() + 5000;
  while (count_pids(cg) < 6 && now_ms() < deadline)
    sched_yield();
  CHECK(count_pids(cg) >= 6);
  if (v1only)
    CHECK_OK(sr_cgroup_signal_all(v1only, SIGKILL, &err), err);
  CHECK_UINT_EQ(count_pids(cg), 0);
  int status = reap(forker.pid);
  CHECK(status != -1 && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  forker.pid = -1;
  status = reap(dev.pid);
  CHECK(status != -1 && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  dev.pid = -1;
  reap_all();

  /* Another signal leaves a paused container paused; it acts once thawed. */
  kid_close(&dev);
  dev = spawn(KID_DEVICES);
  CHECK_OK(sr_cgroup_attach(cg, dev.pid, &err), err);
  CHECK_OK(sr_cgroup_freeze(cg, true, &err), err);
  CHECK_OK(sr_cgroup_signal_all(cg, SIGTERM, &err), err);
  CHECK_OK(sr_cgroup_is_frozen(cg, &frozen, &err), err);
  CHECK(frozen);
  CHECK_OK(sr_cgroup_freeze(cg, false, &err), err);
  status = reap(dev.pid);
  CHECK(status != -1 && WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
  dev.pid = -1;

  /* delete of a paused container: cgroup.kill alone cannot end v1-frozen tasks. */
  kid_close(&dev);
  dev = spawn(KID_DEVICES);
  CHECK_OK(sr_cgroup_attach(cg, dev.pid, &err), err);
  CHECK_OK(sr_cgroup_freeze(cg, true, &err), err);
  CHECK_OK(sr_cgroup_destroy(cg, true, &err), err);
  status = reap(dev.pid);
  CHECK(status != -1 && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  dev.pid = -1;

  _cleanup_strv_ char **names = NULL;
  size_t nn = 0;
  CHECK_OK(sr_cgroup_v1_hierarchies(cg, &names, &nn, &err), err);
  CHECK(nn >= 9);
  for (size_t i = 0; i < nn; i++) {
    snprintf(d, sizeof(d), "/sys/fs/cgroup/%s%s", names[i], path);
    CHECK(!exists(d));
    snprintf(d, sizeof(d), "/sys/fs/cgroup/%s%s", names[i], base);
    CHECK(exists(d)); /* only the leaf goes */
  }
  snprintf(d, sizeof(d), "/sys/fs/cgroup/unified%s", path);
  CHECK(!exists(d));
  CHECK_OK(sr_cgroup_destroy(cg, true, &err), err); /* again: nothing left is success */
out:
  sr_error_free(&err);
  snprintf(d, sizeof(d), "/sys/fs/cgroup/freezer%s", base);
  thaw_tree(d);
  snprintf(d, sizeof(d), "/sys/fs/cgroup/unified%s", base);
  thaw_tree(d);
  kid_close(&dev);
  kid_close(&forker);
  reap_all();
  /* Whatever happened above, nothing of the test stays on the host. */
  _cleanup_cgroup_ struct sr_cgroup *top = NULL;
  if (sr_cgroup_new("/sys/fs/cgroup", base, &top, &err) == 0)
    sr_cgroup_destroy(top, true, &err);
  sr_error_free(&err);
  static const char *const all[] = {"cpu",     "cpuacct", "cpuset", "memory",  "devices",
                                    "freezer", "blkio",   "pids",   "systemd", "unified"};
  for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
    char d2[PATH_MAX];
    snprintf(d2, sizeof(d2), "/sys/fs/cgroup/%s%s", all[i], base);
    if (exists(d2)) {
      nftw(d2, rmdir_entry, 16, FTW_DEPTH | FTW_PHYS);
      CHECK(!exists(d2));
    }
  }
}

/* ---- (3) a real cgroup2 directory of this host ---- */

static void real_v2_container_with_device_filter(void)
{
  const char *root = "/sys/fs/cgroup/unified";
  int version = 0;
  bool hybrid = false;
  sr_error_t err = NULL;
  if (sr_cgroup_layout(root, &version, &hybrid, &err) < 0 || version != 2) {
    sr_error_free(&err);
    root = "/sys/fs/cgroup";
    if (sr_cgroup_layout(root, &version, &hybrid, &err) < 0 || version != 2) {
      fprintf(stderr, "  skipped: no cgroup2 mount\n");
      sr_error_free(&err);
      return;
    }
  }
  char base[64], path[80], leaf[PATH_MAX], top[PATH_MAX];
  snprintf(base, sizeof(base), "/seerun-test-%d-v2", (int)getpid());
  snprintf(path, sizeof(path), "%s/c1", base);
  snprintf(leaf, sizeof(leaf), "%s%s", root, path);
  snprintf(top, sizeof(top), "%s%s", root, base);
  struct kid dev = {-1, -1, -1}, forker = {-1, -1, -1};
  _cleanup_cgroup_ struct sr_cgroup *cg = NULL;
  CHECK_OK(sr_cgroup_new(root, path, &cg, &err), err);
  if (cg == NULL)
    goto out;
  CHECK_INT_EQ(cg->version, 2);
  bool created = false;
  CHECK_OK(sr_cgroup_create(cg, &created, &err), err);
  CHECK(created);
  /* Delegated from the root down (best effort: what the leaf got is what it can limit). */
  bool hugetlb = strstr(slurp(leaf, "cgroup.controllers"), "hugetlb") != NULL;
  if (strstr(slurp(root, "cgroup.controllers"), "hugetlb") &&
      strcmp(root, "/sys/fs/cgroup/unified") == 0)
    CHECK(hugetlb && strstr(slurp(top, "cgroup.subtree_control"), "hugetlb") != NULL);
  CHECK_STR_EQ(value(leaf, "cgroup.subtree_control"), "");

  int fd = -1;
  CHECK_OK(sr_cgroup_open_dir(cg, &fd, &err), err);
  CHECK(fd >= 0);
  if (fd >= 0)
    close(fd);

  dev = spawn(KID_DEVICES);
  CHECK_OK(sr_cgroup_attach(cg, dev.pid, &err), err);
  char p[64], self[4096];
  snprintf(p, sizeof(p), "/proc/%d/cgroup", (int)dev.pid);
  sr_fileio_read_small_at(AT_FDCWD, p, self, sizeof(self), NULL, &err);
  clear_error(&err);
  char want[128];
  snprintf(want, sizeof(want), "0::%s\n", path);
  CHECK(strstr(self, want) != NULL);

  /* No resources at all: the device list is empty, so nothing is allowed. */
  int res[2] = {-1, -1};
  CHECK_OK(sr_cgroup_apply_resources(cg, NULL, false, &err), err);
  CHECK(probe_devices(&dev, res));
  CHECK_INT_EQ(res[0], EPERM);
  CHECK_INT_EQ(res[1], EPERM);

  struct sr_device_rule rules[] = {
      {false, 'a', -1, -1, "rwm"}, {true, 'c', 1, 3, "rwm"}, {true, 'c', 1, 5, "rwm"}};
  struct sr_hugepage_limit huge[] = {{"2MB", 8 << 20}};
  struct sr_resources r;
  memset(&r, 0, sizeof(r));
  r.devices = rules;
  r.n_devices = 2;
  if (hugetlb) {
    r.hugepage_limits = huge;
    r.n_hugepage_limits = 1;
  }
  CHECK_OK(sr_cgroup_apply_resources(cg, &r, false, &err), err);
  if (hugetlb)
    CHECK_STR_EQ(value(leaf, "hugetlb.2MB.max"), "8388608");
  /* The create above replaced the deny-all program rather than stacking a second one. */
  CHECK_INT_EQ(device_programs(leaf), 1);
  CHECK(probe_devices(&dev, res));
  CHECK_INT_EQ(res[0], 0);     /* /dev/null: allowed */
  CHECK_INT_EQ(res[1], EPERM); /* /dev/zero: default deny */

  /* Access is a subset test: write-only /dev/zero cannot be opened for reading. */
  struct sr_device_rule partial[] = {{false, 'a', -1, -1, "rwm"},
                                     {true, 'c', 1, 3, "rw"},
                                     {true, 'c', 1, 5, "w"},
                                     {true, 'b', -1, -1, "m"}};
  memset(&r, 0, sizeof(r));
  r.devices = partial;
  r.n_devices = 4;
  CHECK_OK(sr_cgroup_apply_resources(cg, &r, true, &err), err);
  CHECK(probe_devices(&dev, res));
  CHECK_INT_EQ(res[0], 0);
  CHECK_INT_EQ(res[1], EPERM);

  memset(&r, 0, sizeof(r));
  r.devices = rules;
  r.n_devices = 3;
  CHECK_OK(sr_cgroup_apply_resources(cg, &r, true, &err), err);
  CHECK_INT_EQ(device_programs(leaf), 1);
  CHECK(probe_devices(&dev, res));
  CHECK_INT_EQ(res[0], 0);
  CHECK_INT_EQ(res[1], 0);
  /* update without a device list leaves the filter alone. */
  memset(&r, 0, sizeof(r));
  r.pids_limit = (sr_opt_i64){true, 10};
  if (strstr(slurp(leaf, "cgroup.controllers"), "pids") == NULL)
    r.pids_limit.set = false; /* hybrid hosts: only hugetlb lives on this mount */
  CHECK_OK(sr_cgroup_apply_resources(cg, &r, true, &err), err);
  CHECK(probe_devices(&dev, res));
  CHECK_INT_EQ(res[1], 0);
  /* The last matching rule wins: a later deny of c 1:5 takes it back. */
  struct sr_device_rule rules2[] = {{true, 'a', -1, -1, "rwm"}, {false, 'c', 1, 5, "r"}};
  r.devices = rules2;
  r.n_devices = 2;
  CHECK_OK(sr_cgroup_apply_resources(cg, &r, true, &err), err);
  CHECK(probe_devices(&dev, res));
  CHECK_INT_EQ(res[0], 0);
  CHECK_INT_EQ(res[1], EPERM);

  bool frozen = false;
  CHECK_OK(sr_cgroup_freeze(cg, true, &err), err);
  CHECK(strstr(slurp(leaf, "cgroup.events"), "frozen 1") != NULL);
  CHECK_OK(sr_cgroup_is_frozen(cg, &frozen, &err), err);
  CHECK(frozen);
  CHECK_OK(sr_cgroup_freeze(cg, false, &err), err);
  CHECK(strstr(slurp(leaf, "cgroup.events"), "frozen 0") != NULL);
  CHECK_OK(sr_cgroup_is_frozen(cg, &frozen, &err), err);
  CHECK(!frozen);

  forker = spawn(KID_FORKER);
  CHECK_OK(sr_cgroup_attach(cg, forker.pid, &err), err);
  CHECK(write(forker.go, "g", 1) == 1);
  int64_t deadline = now_ms() + 5000;
  while (count_pids(cg) < 6 && now_ms() < deadline)
    sched_yield();
  CHECK(count_pids(cg) >= 6);
  CHECK_OK(sr_cgroup_signal_all(cg, SIGKILL, &err), err); /* cgroup.kill */
  CHECK_UINT_EQ(count_pids(cg), 0);
  int status = reap(forker.pid);
  CHECK(status != -1 && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  forker.pid = -1;
  status = reap(dev.pid);
  CHECK(status != -1 && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  dev.pid = -1;
  reap_all();

  CHECK_OK(sr_cgroup_destroy(cg, true, &err), err);
  CHECK(!exists(leaf));
  CHECK(exists(top));
out:
  sr_error_free(&err);
  thaw_tree(top);
  kid_close(&dev);
  kid_close(&forker);
  reap_all();
  _cleanup_cgroup_ struct sr_cgroup *t = NULL;
  if (sr_cgroup_new(root, base, &t, &err) == 0)
    sr_cgroup_destroy(t, true, &err);
  sr_error_free(&err);
  if (exists(top))
    nftw(top, rmdir_entry, 16, FTW_DEPTH | FTW_PHYS);
  CHECK(!exists(top));
}

/* ---- (4) cgroup paths ---- */

/* create's device rules, for v1's devices.allow/deny and v2's eBPF program alike: the config's
 * resources.devices, then the default nodes, then mknod alone for the nodes linux.devices lists
 * -- never read or write for them: a config that denies all and lists /dev/kmsg does not get to
 * write it (issue 13). */
static void create_device_rules_are_resources_devices_and_the_defaults(void)
{
  struct sr_arena a = {0};
  sr_error_t err = NULL;
  struct sr_device_rule deny_all[] = {{false, 'a', -1, -1, "rwm"}};
  struct sr_device devs[] = {{.type = 'c', .path = "/dev/kmsg", .major = 1, .minor = 11},
                             {.type = 'p', .path = "/dev/fifo"},
                             {.type = 'u', .path = "/dev/u", .major = 10, .minor = 200}};
  struct sr_resources r, out;
  memset(&r, 0, sizeof(r));
  r.devices = deny_all;
  r.n_devices = 1;
  r.pids_limit = (sr_opt_i64){true, 7};
  CHECK_OK(sr_cgroup_create_device_rules(&r, devs, 3, &a, &out, &err), err);
  CHECK(out.pids_limit.set && out.pids_limit.v == 7);
  CHECK_UINT_EQ(out.n_devices, 1 + 9 + 2);
  CHECK(!out.devices[0].allow && out.devices[0].type == 'a' && out.devices[0].major < 0);
  size_t defaults = 0;
  for (size_t i = 1; i < 10; i++) {
    const struct sr_device_rule *d = &out.devices[i];
    CHECK(d->allow && d->type == 'c' && strcmp(d->access, "rwm") == 0);
    CHECK(!(d->major == 1 && d->minor == 11));
    defaults += (d->major == 1 && d->minor == 3) || (d->major == 136 && d->minor < 0);
  }
  CHECK_UINT_EQ(defaults, 2); /* /dev/null and the pts among them */
  const struct sr_device_rule *k = &out.devices[10], *u = &out.devices[11];
  CHECK(k->allow && k->type == 'c' && k->major == 1 && k->minor == 11);
  CHECK_STR_EQ(k->access, "m");
  CHECK(u->allow && u->type == 'c' && u->major == 10 && u->minor == 200);
  CHECK_STR_EQ(u->access, "m");
  /* No resources: the defaults alone. */
  CHECK_OK(sr_cgroup_create_device_rules(NULL, NULL, 0, &a, &out, &err), err);
  CHECK_UINT_EQ(out.n_devices, 9);
  CHECK(!out.pids_limit.set);
  sr_arena_release(&a);
}

static void cgroup_paths_resolve_as_runc_does(void)
{
  sr_error_t err = NULL;
  char *out = NULL;
  CHECK_OK(sr_cgroup_resolve_path("/a/b", "id1", false, &out, &err), err);
  CHECK_STR_EQ(out, "/a/b");
  free(out);
  out = NULL;
  CHECK_OK(sr_cgroup_resolve_path("//a/./b//", "id1", false, &out, &err), err);
  CHECK_STR_EQ(out, "/a/b");
  free(out);
  out = NULL;
  CHECK_OK(sr_cgroup_resolve_path(NULL, "id1", false, &out, &err), err);
  CHECK_STR_EQ(out, "/id1");
  free(out);
  out = NULL;
  CHECK_OK(sr_cgroup_resolve_path("", "id1", false, &out, &err), err);
  CHECK_STR_EQ(out, "/id1");
  free(out);
  out = NULL;

  /* Relative: below this process's own cgroup (name=systemd on v1, else pids, else 0::). */
  char text[8192], own[4096] = "", pids_own[4096] = "", v2_own[4096] = "";
  CHECK_OK(sr_fileio_read_small_at(AT_FDCWD, "/proc/self/cgroup", text, sizeof(text), NULL, &err),
           err);
  char *save = NULL;
  for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
    char *c = strchr(l, ':'), *c2 = c ? strchr(c + 1, ':') : NULL;
    if (c2 == NULL)
      continue;
    *c2 = '\0';
    if (strstr(c + 1, "name=systemd"))
      snprintf(own, sizeof(own), "%s", c2 + 1);
    else if (strcmp(c + 1, "pids") == 0)
      snprintf(pids_own, sizeof(pids_own), "%s", c2 + 1);
    else if (strcmp(l, "0") == 0 && c + 1 == c2)
      snprintf(v2_own, sizeof(v2_own), "%s", c2 + 1);
  }
  const char *b = *own ? own : *pids_own ? pids_own : v2_own;
  char expect[8192];
  snprintf(expect, sizeof(expect), "%s/x/y", strcmp(b, "/") == 0 ? "" : b);
  CHECK_OK(sr_cgroup_resolve_path("x/y", "id1", false, &out, &err), err);
  CHECK_STR_EQ(out, expect);
  free(out);
  out = NULL;

  CHECK_OK(sr_cgroup_resolve_path_in("0::/user.slice/s.scope\n", "pod/c", "id", &out, &err), err);
  CHECK_STR_EQ(out, "/user.slice/s.scope/pod/c");
  free(out);
  out = NULL;
  CHECK_OK(sr_cgroup_resolve_path_in("12:pids:/p\n3:cpu,cpuacct:/q\n1:name=systemd:/sd\n0::/u\n",
                                     "c", "id", &out, &err),
           err);
  CHECK_STR_EQ(out, "/sd/c");
  free(out);
  out = NULL;
  CHECK_OK(sr_cgroup_resolve_path_in("12:pids:/p\n0::/u\n", "c", "id", &out, &err), err);
  CHECK_STR_EQ(out, "/p/c");
  free(out);
  out = NULL;

  /* systemd's form without --systemd-cgroup: refused, naming the flag. */
  static const char *const sd[] = {"system.slice:docker:abc", ":seerun:abc", "a:b:c"};
  for (size_t i = 0; i < sizeof(sd) / sizeof(sd[0]); i++) {
    CHECK(sr_cgroup_resolve_path_in("0::/\n", sd[i], "id", &out, &err) < 0);
    CHECK_ERR_CONTAINS(err, "linux.cgroupsPath");
    CHECK_ERR_CONTAINS(err, "--systemd-cgroup");
    clear_error(&err);
  }
  CHECK_OK(sr_cgroup_resolve_path_in("0::/\n", "/a/b:c:d", "id", &out, &err), err);
  free(out);
  out = NULL;

  static const char *const bad[] = {"../x", "/a/../b", "a/..", "/.."};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    CHECK(sr_cgroup_resolve_path(bad[i], "id1", false, &out, &err) < 0);
    CHECK_ERR_CONTAINS(err, "linux.cgroupsPath");
    CHECK_ERR_CONTAINS(err, "`..`");
    clear_error(&err);
  }
  CHECK(sr_cgroup_resolve_path("/", "id1", false, &out, &err) < 0);
  CHECK_ERR_CONTAINS(err, "linux.cgroupsPath: \"/\" names the root cgroup");
  clear_error(&err);
  CHECK(sr_cgroup_resolve_path(NULL, "a/b", false, &out, &err) < 0);
  CHECK_ERR_CONTAINS(err, "cannot name a cgroup");
  clear_error(&err);
  if (!exists("/run/systemd/system")) {
    CHECK(sr_cgroup_resolve_path("system.slice:seerun:id1", "id1", true, &out, &err) < 0);
    CHECK_ERR_CONTAINS(err, "--systemd-cgroup: systemd is not running (no /run/systemd/system)");
    clear_error(&err);
  }
  _cleanup_cgroup_ struct sr_cgroup *cg = NULL;
  CHECK(sr_cgroup_new_with_layout("/tmp", "/a/../../etc", 2, false, &cg, &err) < 0);
  CHECK_ERR_CONTAINS(err, "`..`");
  clear_error(&err);
  CHECK(sr_cgroup_new_with_layout("/tmp", "/", 2, false, &cg, &err) < 0);
  CHECK_ERR_CONTAINS(err, "root cgroup");
  clear_error(&err);
}

static void the_layout_is_detected_by_filesystem_type(void)
{
  int version = 0;
  bool hybrid = false;
  sr_error_t err = NULL;
  CHECK(sr_cgroup_layout("/tmp", &version, &hybrid, &err) < 0);
  CHECK_ERR_CONTAINS(err, "`/tmp` is neither a cgroup2 mount nor a tmpfs");
  clear_error(&err);
  if (exists("/sys/fs/cgroup/unified/cgroup.procs")) {
    CHECK_OK(sr_cgroup_layout("/sys/fs/cgroup/unified", &version, &hybrid, &err), err);
    CHECK_INT_EQ(version, 2);
    CHECK_OK(sr_cgroup_layout("/sys/fs/cgroup", &version, &hybrid, &err), err);
    CHECK_INT_EQ(version, 1);
    CHECK(hybrid);
  }
}

int main(void)
{
  /* Grandchildren orphaned by the kill tests come back to us to be reaped. */
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  bool hugetlb_before = hugetlb_enabled_at_unified_root();
  RUN(cgroup_paths_resolve_as_runc_does);
  RUN(create_device_rules_are_resources_devices_and_the_defaults);
  RUN(the_layout_is_detected_by_filesystem_type);
  RUN(a_v2_tree_gets_every_resource_as_runc_writes_it);
  RUN(a_v1_tree_uses_the_v1_files_and_the_unified_mount_for_hugetlb);
  if (geteuid() == 0) {
    RUN(real_v1_container_lifecycle);
    RUN(real_v2_container_with_device_filter);
  } else {
    fprintf(stderr, "  skipped the real cgroup tests: not root\n");
  }
  /* Creating a cgroup enabled hugetlb at the unified root: put the host back as it was. */
  if (!hugetlb_before && hugetlb_enabled_at_unified_root()) {
    int fd = open("/sys/fs/cgroup/unified/cgroup.subtree_control", O_WRONLY | O_CLOEXEC);
    if (fd >= 0) {
      if (write(fd, "-hugetlb", 8) < 0)
        fprintf(stderr, "  note: could not disable hugetlb at the unified root: %s\n",
                strerror(errno));
      close(fd);
    }
  }
  return unit_report();
}
