/* What the container process ends up with after the init applies its identity and per-process
 * attributes: each story runs in a forked child (the changes are irreversible) and checks what
 * the kernel reports, mostly through /proc/self/status.  Needs root. */
#include "build.h"

#include "caps.h"
#include "cleanup.h"
#include "config.h"
#include "lsm.h"
#include "names.h"
#include "process_attrs.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

/* Failures of the current process (each child counts its own). */
static int failures;

#define FAIL(...)                                                                                  \
  do {                                                                                             \
    fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                                                \
    fprintf(stderr, __VA_ARGS__);                                                                  \
    fputc('\n', stderr);                                                                           \
    failures++;                                                                                    \
  } while (0)

/* Records a failure and leaves the (void) story. */
#define BAIL(...)                                                                                  \
  do {                                                                                             \
    FAIL(__VA_ARGS__);                                                                             \
    return;                                                                                        \
  } while (0)

#define CHECK(cond)                                                                                \
  do {                                                                                             \
    if (!(cond))                                                                                   \
      FAIL("check failed: %s", #cond);                                                             \
  } while (0)

#define CHECK_STREQ(got, want)                                                                     \
  do {                                                                                             \
    const char *g_ = (got), *w_ = (want);                                                          \
    if (g_ == NULL || strcmp(g_, w_) != 0)                                                         \
      FAIL("%s: got \"%s\", want \"%s\"", #got, g_ ? g_ : "(null)", w_);                           \
  } while (0)

/* `call` (which fills `err`) must succeed. */
#define CHECK_OK(call)                                                                             \
  do {                                                                                             \
    _cleanup_error_ sr_error_t err = NULL;                                                         \
    if ((call) < 0) {                                                                              \
      _cleanup_free_ char *t_ = sr_error_text(err);                                                \
      FAIL("%s failed: %s", #call, t_ ? t_ : "?");                                                 \
    }                                                                                              \
  } while (0)

/* `call` (which fills `err`) must fail with an error whose text contains `needle`. */
#define CHECK_FAILS(call, needle)                                                                  \
  do {                                                                                             \
    _cleanup_error_ sr_error_t err = NULL;                                                         \
    if ((call) >= 0) {                                                                             \
      FAIL("%s succeeded, expected an error mentioning \"%s\"", #call, needle);                    \
    } else {                                                                                       \
      _cleanup_free_ char *t_ = sr_error_text(err);                                                \
      if (t_ == NULL || strstr(t_, needle) == NULL)                                                \
        FAIL("%s: error \"%s\" does not mention \"%s\"", #call, t_ ? t_ : "?", needle);            \
    }                                                                                              \
  } while (0)

/* ---- helpers ---- */

/* A minimal valid config.json with the given process.user and extra process / linux members. */
static struct sr_config *load(const char *user, const char *process_extra, const char *linux_extra)
{
  _cleanup_free_ char *json = NULL;
  if (asprintf(&json,
               "{\"ociVersion\":\"1.0.0\",\"root\":{\"path\":\"rootfs\"},"
               "\"process\":{\"user\":%s,\"args\":[\"sh\"],\"cwd\":\"/\"%s%s},"
               "\"linux\":{\"namespaces\":[{\"type\":\"mount\"}]%s%s}}",
               user, process_extra[0] ? "," : "", process_extra, linux_extra[0] ? "," : "",
               linux_extra) < 0)
    return NULL;
  struct sr_config *c = NULL;
  _cleanup_error_ sr_error_t err = NULL;
  if (sr_config_parse(json, strlen(json), "config.json", &c, &err) < 0) {
    _cleanup_free_ char *t = sr_error_text(err);
    fprintf(stderr, "config does not parse: %s\n%s\n", t ? t : "?", json);
    return NULL;
  }
  return c;
}

/* The value of a /proc/self/status line, trailing whitespace removed. */
static char *status_field(const char *key)
{
  _cleanup_fclose_ FILE *f = fopen("/proc/self/status", "re");
  char line[512];
  size_t klen = strlen(key);
  while (f && fgets(line, sizeof(line), f)) {
    if (strncmp(line, key, klen) != 0 || line[klen] != ':')
      continue;
    char *v = line + klen + 1;
    while (*v == '\t' || *v == ' ')
      v++;
    size_t n = strlen(v);
    while (n > 0 && (v[n - 1] == '\n' || v[n - 1] == ' ' || v[n - 1] == '\t'))
      v[--n] = '\0';
    return strdup(v);
  }
  return NULL;
}

#define CHECK_STATUS(key, want)                                                                    \
  do {                                                                                             \
    _cleanup_free_ char *v_ = status_field(key);                                                   \
    if (v_ == NULL || strcmp(v_, want) != 0)                                                       \
      FAIL("/proc/self/status %s: got \"%s\", want \"%s\"", key, v_ ? v_ : "(none)", want);        \
  } while (0)

static void check_cap_line(const char *key, uint64_t want, int line)
{
  char buf[32];
  snprintf(buf, sizeof(buf), "%016" PRIx64, want);
  _cleanup_free_ char *v = status_field(key);
  if (v == NULL || strcmp(v, buf) != 0) {
    fprintf(stderr, "%s:%d: /proc/self/status %s: got \"%s\", want \"%s\"\n", __FILE__, line, key,
            v ? v : "(none)", buf);
    failures++;
  }
}

#define CHECK_CAPS(inh, prm, eff, bnd, amb)                                                        \
  do {                                                                                             \
    check_cap_line("CapInh", (inh), __LINE__);                                                     \
    check_cap_line("CapPrm", (prm), __LINE__);                                                     \
    check_cap_line("CapEff", (eff), __LINE__);                                                     \
    check_cap_line("CapBnd", (bnd), __LINE__);                                                     \
    check_cap_line("CapAmb", (amb), __LINE__);                                                     \
  } while (0)

static uint64_t status_mask(const char *key)
{
  _cleanup_free_ char *v = status_field(key);
  return v ? strtoull(v, NULL, 16) : 0;
}

/* Runs fn in a forked child, so that its irreversible changes stay there. */
static void in_child(const char *story, void (*fn)(void))
{
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) {
    FAIL("fork: %s", strerror(errno));
    return;
  }
  if (pid == 0) {
    failures = 0;
    fn();
    fflush(NULL);
    _exit(failures ? 1 : 0); /* no atexit handlers of the parent's */
  }
  int status;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
    ;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fprintf(stderr, "FAIL: %s\n", story);
    failures++;
  } else {
    printf("ok: %s\n", story);
  }
}

#define BIT(n) (UINT64_C(1) << (n))
#define CAP_BIT(c) BIT(c)

/* ---- identity and capabilities ---- */

static void user_with_few_caps(void)
{
  _cleanup_config_ struct sr_config *c =
      load("{\"uid\":1000,\"gid\":1000,\"additionalGids\":[10,20],\"umask\":63}",
           "\"capabilities\":{\"bounding\":[\"CAP_CHOWN\",\"CAP_KILL\",\"CAP_NET_BIND_SERVICE\"],"
           "\"effective\":[\"CAP_KILL\",\"CAP_NET_BIND_SERVICE\"],"
           "\"permitted\":[\"CAP_KILL\",\"CAP_NET_BIND_SERVICE\"],"
           "\"inheritable\":[],\"ambient\":[\"CAP_NET_BIND_SERVICE\"]}",
           "");
  if (c == NULL)
    BAIL("config");
  /* Ambient needs the capability inheritable too, which the config does not give. */
  CHECK(sr_caps_ambient_unraisable(c->process->capabilities) == CAP_BIT(CAP_NET_BIND_SERVICE));
  CHECK(sr_caps_unknown_to_kernel(c->process->capabilities) == 0);
  CHECK_OK(sr_caps_apply_identity(&c->process->user, c->process->capabilities, &err));
  CHECK_STATUS("Uid", "1000\t1000\t1000\t1000");
  CHECK_STATUS("Gid", "1000\t1000\t1000\t1000");
  CHECK_STATUS("Groups", "10 20");
  uint64_t kn = CAP_BIT(CAP_KILL) | CAP_BIT(CAP_NET_BIND_SERVICE);
  CHECK_CAPS(0, kn, kn, kn | CAP_BIT(CAP_CHOWN), 0);
  mode_t old = umask(0);
  CHECK(old == 077);
  CHECK_STATUS("NoNewPrivs", "0");
  CHECK_OK(sr_caps_no_new_privs(&err));
  CHECK_STATUS("NoNewPrivs", "1");
}

static void user_with_ambient_cap(void)
{
  _cleanup_config_ struct sr_config *c =
      load("{\"uid\":1000,\"gid\":1000}",
           "\"capabilities\":{\"bounding\":[\"CAP_NET_BIND_SERVICE\"],"
           "\"effective\":[\"CAP_NET_BIND_SERVICE\"],\"permitted\":[\"CAP_NET_BIND_SERVICE\"],"
           "\"inheritable\":[\"CAP_NET_BIND_SERVICE\"],\"ambient\":[\"CAP_NET_BIND_SERVICE\"]}",
           "");
  if (c == NULL)
    BAIL("config");
  CHECK(sr_caps_ambient_unraisable(c->process->capabilities) == 0);
  CHECK_OK(sr_caps_apply_identity(&c->process->user, c->process->capabilities, &err));
  CHECK_STATUS("Groups", "");
  uint64_t nb = CAP_BIT(CAP_NET_BIND_SERVICE);
  CHECK_CAPS(nb, nb, nb, nb, nb);
}

static void root_without_capabilities(void)
{
  _cleanup_config_ struct sr_config *c = load("{\"uid\":0,\"gid\":0}", "", "");
  if (c == NULL)
    BAIL("config");
  CHECK(c->process->capabilities == NULL);
  CHECK_OK(sr_caps_apply_identity(&c->process->user, NULL, &err));
  CHECK_STATUS("Uid", "0\t0\t0\t0");
  CHECK_STATUS("Groups", "");
  CHECK_CAPS(0, 0, 0, 0, 0);
}

static void user_without_capabilities(void)
{
  _cleanup_config_ struct sr_config *c = load("{\"uid\":1000,\"gid\":1000}", "", "");
  if (c == NULL)
    BAIL("config");
  CHECK_OK(sr_caps_apply_identity(&c->process->user, NULL, &err));
  CHECK_STATUS("Uid", "1000\t1000\t1000\t1000");
  CHECK_CAPS(0, 0, 0, 0, 0);
}

/* Every capability this process holds, listed in all five sets, is kept in all five. */
static void root_with_all_capabilities(void)
{
  uint64_t held = status_mask("CapPrm");
  _cleanup_free_ char *names = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&names, &len);
  if (f == NULL)
    BAIL("open_memstream");
  for (unsigned i = 0; i < 64; i++)
    if (held & BIT(i))
      fprintf(f, "%s\"%s\"", ftell(f) ? "," : "", sr_names_of(SR_NAMES(sr_names_capability), i));
  fclose(f);
  _cleanup_free_ char *caps = NULL;
  if (asprintf(&caps,
               "\"capabilities\":{\"bounding\":[%s],\"effective\":[%s],\"permitted\":[%s],"
               "\"inheritable\":[%s],\"ambient\":[%s]}",
               names, names, names, names, names) < 0)
    BAIL("asprintf");
  _cleanup_config_ struct sr_config *c = load("{\"uid\":0,\"gid\":0}", caps, "");
  if (c == NULL)
    BAIL("config");
  CHECK_OK(sr_caps_apply_identity(&c->process->user, c->process->capabilities, &err));
  CHECK_CAPS(held, held, held, held, held);
}

/* A capability number the kernel does not know is ignored, not an error. */
static void unknown_capability_ignored(void)
{
  struct sr_user u = {.uid = 0, .gid = 0};
  struct sr_capabilities caps = {{0}};
  for (int s = 0; s < SR_CAP_SET_COUNT; s++)
    caps.sets[s] = CAP_BIT(CAP_KILL) | BIT(63);
  CHECK(sr_caps_unknown_to_kernel(&caps) == BIT(63));
  CHECK_OK(sr_caps_apply_identity(&u, &caps, &err));
  CHECK_CAPS(CAP_BIT(CAP_KILL), CAP_BIT(CAP_KILL), CAP_BIT(CAP_KILL), CAP_BIT(CAP_KILL),
             CAP_BIT(CAP_KILL));
}

static void effective_not_permitted(void)
{
  struct sr_user u = {.uid = 1000, .gid = 1000};
  struct sr_capabilities caps = {{0}};
  caps.sets[SR_CAP_EFFECTIVE] = CAP_BIT(CAP_KILL);
  caps.sets[SR_CAP_BOUNDING] = CAP_BIT(CAP_KILL);
  CHECK_FAILS(sr_caps_apply_identity(&u, &caps, &err),
              "capset: effective but not permitted: CAP_KILL");
}

/* Asking for a capability the runtime does not hold fails and names it. */
static void capability_not_held(void)
{
  uint64_t held = status_mask("CapPrm");
  unsigned last = 0;
  FILE *f = fopen("/proc/sys/kernel/cap_last_cap", "re");
  if (f == NULL || fscanf(f, "%u", &last) != 1)
    last = 40;
  if (f)
    fclose(f);
  int missing = -1;
  for (unsigned i = 0; i <= last && i < 64; i++)
    if (!(held & BIT(i))) {
      missing = (int)i;
      break;
    }
  if (missing < 0) {
    /* Make one: drop CAP_SYS_RESOURCE from our own permitted set first. */
    cap_t cur = cap_get_proc();
    cap_value_t v = CAP_SYS_RESOURCE;
    if (cur == NULL || cap_set_flag(cur, CAP_PERMITTED, 1, &v, CAP_CLEAR) < 0 ||
        cap_set_flag(cur, CAP_EFFECTIVE, 1, &v, CAP_CLEAR) < 0 || cap_set_proc(cur) < 0)
      BAIL("dropping CAP_SYS_RESOURCE: %s", strerror(errno));
    cap_free(cur);
    missing = CAP_SYS_RESOURCE;
  }
  struct sr_user u = {.uid = 0, .gid = 0};
  struct sr_capabilities caps = {{0}};
  caps.sets[SR_CAP_PERMITTED] = caps.sets[SR_CAP_BOUNDING] = BIT(missing) | CAP_BIT(CAP_KILL);
  CHECK_FAILS(sr_caps_apply_identity(&u, &caps, &err), "capset: not held by the runtime: ");
  CHECK_FAILS(sr_caps_apply_identity(&u, &caps, &err),
              sr_names_of(SR_NAMES(sr_names_capability), missing));
}

/* In a user namespace whose setgroups is "deny", no additional gids is fine; some is an error. */
static int enter_userns_setgroups_deny(void)
{
  if (unshare(CLONE_NEWUSER) < 0) {
    printf("  (skipped: unshare(CLONE_NEWUSER): %s)\n", strerror(errno));
    return -1;
  }
  const char *files[][2] = {{"/proc/self/setgroups", "deny"},
                            {"/proc/self/uid_map", "0 0 1"},
                            {"/proc/self/gid_map", "0 0 1"}};
  for (size_t i = 0; i < 3; i++) {
    int fd = open(files[i][0], O_WRONLY | O_CLOEXEC);
    if (fd < 0 || write(fd, files[i][1], strlen(files[i][1])) < 0) {
      FAIL("write %s: %s", files[i][0], strerror(errno));
      if (fd >= 0)
        close(fd);
      return -1;
    }
    close(fd);
  }
  return 0;
}

static void setgroups_deny_without_gids(void)
{
  if (enter_userns_setgroups_deny() < 0)
    return;
  struct sr_user u = {.uid = 0, .gid = 0};
  CHECK_OK(sr_caps_apply_identity(&u, NULL, &err));
  CHECK_CAPS(0, 0, 0, 0, 0);
}

static void setgroups_deny_with_gids(void)
{
  if (enter_userns_setgroups_deny() < 0)
    return;
  uint32_t gids[] = {0};
  struct sr_user u = {.uid = 0, .gid = 0, .additional_gids = gids, .n_additional_gids = 1};
  CHECK_FAILS(sr_caps_apply_identity(&u, NULL, &err), "setgroups [0]");
}

static void mask_names(void)
{
  _cleanup_free_ char *a = sr_caps_mask_names(CAP_BIT(CAP_KILL) | CAP_BIT(CAP_NET_BIND_SERVICE));
  _cleanup_free_ char *b = sr_caps_mask_names(0);
  _cleanup_free_ char *c = sr_caps_mask_names(BIT(63));
  CHECK_STREQ(a, "CAP_KILL, CAP_NET_BIND_SERVICE");
  CHECK_STREQ(b, "");
  CHECK_STREQ(c, "capability 63");
}

/* ---- rlimits ---- */

static void rlimits_lowered(void)
{
  _cleanup_config_ struct sr_config *c =
      load("{\"uid\":0,\"gid\":0}",
           "\"rlimits\":[{\"type\":\"RLIMIT_NOFILE\",\"soft\":100,\"hard\":200},"
           "{\"type\":\"RLIMIT_CORE\",\"soft\":0,\"hard\":0}]",
           "");
  if (c == NULL)
    BAIL("config");
  CHECK_OK(sr_process_attrs_apply_rlimits(c->process, &err));
  struct rlimit r;
  CHECK(getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur == 100 && r.rlim_max == 200);
  CHECK(getrlimit(RLIMIT_CORE, &r) == 0 && r.rlim_cur == 0 && r.rlim_max == 0);
}

static void rlimit_hard_cannot_be_raised(void)
{
  /* Without CAP_SYS_RESOURCE (which this machine lacks anyway), as in most containers. */
  cap_t cur = cap_get_proc();
  cap_value_t v = CAP_SYS_RESOURCE;
  if (cur == NULL || cap_set_flag(cur, CAP_EFFECTIVE, 1, &v, CAP_CLEAR) < 0 ||
      cap_set_proc(cur) < 0)
    BAIL("dropping CAP_SYS_RESOURCE: %s", strerror(errno));
  cap_free(cur);
  struct rlimit r;
  if (getrlimit(RLIMIT_NOFILE, &r) < 0)
    BAIL("getrlimit");
  /* Lower the hard limit first, so that the raise below stays under fs.nr_open. */
  struct rlimit low = {.rlim_cur = 64, .rlim_max = 128};
  if (setrlimit(RLIMIT_NOFILE, &low) < 0)
    BAIL("setrlimit: %s", strerror(errno));
  _cleanup_config_ struct sr_config *c =
      load("{\"uid\":0,\"gid\":0}",
           "\"rlimits\":[{\"type\":\"RLIMIT_NOFILE\",\"soft\":64,\"hard\":256}]", "");
  if (c == NULL)
    BAIL("config");
  CHECK_FAILS(sr_process_attrs_apply_rlimits(c->process, &err),
              "process.rlimits: setrlimit RLIMIT_NOFILE 64/256 (raising the hard limit above "
              "the current 128 needs CAP_SYS_RESOURCE): Operation not permitted");
  CHECK(getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur == 64 && r.rlim_max == 128);
}

/* ---- oom_score_adj, io priority, scheduler, personality ---- */

static int open_proc(void)
{
  int fd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    FAIL("open /proc: %s", strerror(errno));
  return fd;
}

static char *read_file(const char *path)
{
  _cleanup_fclose_ FILE *f = fopen(path, "re");
  char buf[256];
  if (f == NULL || fgets(buf, sizeof(buf), f) == NULL)
    return NULL;
  buf[strcspn(buf, "\n")] = '\0';
  return strdup(buf);
}

static void oom_score_adj_raised(void)
{
  _cleanup_free_ char *before = read_file("/proc/self/oom_score_adj");
  _cleanup_config_ struct sr_config *unset = load("{\"uid\":0,\"gid\":0}", "", "");
  if (unset == NULL)
    BAIL("config");
  CHECK_OK(sr_process_attrs_set_oom_score_adj(unset->process, getpid(), &err));
  _cleanup_free_ char *same = read_file("/proc/self/oom_score_adj");
  CHECK(before && same && strcmp(before, same) == 0);

  _cleanup_config_ struct sr_config *c = load("{\"uid\":0,\"gid\":0}", "\"oomScoreAdj\":500", "");
  if (c == NULL)
    BAIL("config");
  CHECK_OK(sr_process_attrs_set_oom_score_adj(c->process, getpid(), &err));
  _cleanup_free_ char *after = read_file("/proc/self/oom_score_adj");
  CHECK_STREQ(after, "500");
}

static void io_priority_best_effort(void)
{
  _cleanup_config_ struct sr_config *c = load(
      "{\"uid\":0,\"gid\":0}", "\"ioPriority\":{\"class\":\"IOPRIO_CLASS_BE\",\"priority\":5}", "");
  if (c == NULL)
    BAIL("config");
  CHECK_OK(sr_process_attrs_apply_io_priority(c->process, &err));
  long v = syscall(SYS_ioprio_get, 1 /* IOPRIO_WHO_PROCESS */, 0);
  CHECK(v == ((2 << 13) | 5));
}

static void scheduler_batch(void)
{
  _cleanup_config_ struct sr_config *c =
      load("{\"uid\":0,\"gid\":0}", "\"scheduler\":{\"policy\":\"SCHED_BATCH\",\"nice\":5}", "");
  if (c == NULL)
    BAIL("config");
  CHECK_OK(sr_process_attrs_apply_scheduler(c->process, &err));
  CHECK(sched_getscheduler(0) == SCHED_BATCH);
  errno = 0;
  int nice = getpriority(PRIO_PROCESS, 0);
  CHECK(errno == 0 && nice == 5);

  /* A real-time policy needs a priority of 1..99. */
  _cleanup_config_ struct sr_config *bad =
      load("{\"uid\":0,\"gid\":0}", "\"scheduler\":{\"policy\":\"SCHED_FIFO\"}", "");
  if (bad == NULL)
    BAIL("config");
  CHECK_FAILS(sr_process_attrs_apply_scheduler(bad->process, &err),
              "process.scheduler: sched_setattr SCHED_FIFO (nice 0, priority 0");
}

static void personality_linux32(void)
{
  _cleanup_config_ struct sr_config *c =
      load("{\"uid\":0,\"gid\":0}", "", "\"personality\":{\"domain\":\"LINUX32\"}");
  if (c == NULL)
    BAIL("config");
  CHECK_OK(sr_process_attrs_apply_personality(&c->linux_, &err));
  CHECK((personality(0xffffffff) & PER_MASK) == PER_LINUX32);
  struct utsname u;
  CHECK(uname(&u) == 0 && strcmp(u.machine, "i686") == 0);
}

static void no_personality_changes_nothing(void)
{
  _cleanup_config_ struct sr_config *c = load("{\"uid\":0,\"gid\":0}", "", "");
  if (c == NULL)
    BAIL("config");
  int before = personality(0xffffffff);
  CHECK_OK(sr_process_attrs_apply_personality(&c->linux_, &err));
  CHECK(personality(0xffffffff) == before);
}

/* ---- CPU affinity ---- */

static void cpu_affinity(void)
{
  const char *field = "process.execCPUAffinity.final";
  cpu_set_t set;
  CHECK_OK(sr_process_attrs_apply_cpu_affinity("0", field, &err));
  CHECK(sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) == 1 && CPU_ISSET(0, &set));
  /* Absent or empty: left alone. */
  CHECK_OK(sr_process_attrs_apply_cpu_affinity(NULL, field, &err));
  CHECK_OK(sr_process_attrs_apply_cpu_affinity("", field, &err));
  CHECK(sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) == 1);
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  if (n >= 2) {
    CHECK_OK(sr_process_attrs_apply_cpu_affinity("0-1", field, &err));
    CHECK(sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) == 2);
    CHECK_OK(sr_process_attrs_apply_cpu_affinity("1,0", field, &err));
    CHECK(sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) == 2);
  }
  const char *bad[] = {"0-", "a",  "3-1", ",",     "0,",  ",0",  "0,,1",
                       " 0", "0 ", "-1",  "0-1-2", "1e3", "0x1", "99999999999999999999"};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    _cleanup_error_ sr_error_t err = NULL;
    if (sr_process_attrs_apply_cpu_affinity(bad[i], field, &err) >= 0) {
      FAIL("CPU list \"%s\" accepted", bad[i]);
      continue;
    }
    _cleanup_free_ char *t = sr_error_text(err);
    if (t == NULL || strncmp(t, field, strlen(field)) != 0)
      FAIL("CPU list \"%s\": error \"%s\" does not start with the field", bad[i], t ? t : "?");
  }
  CHECK_FAILS(sr_process_attrs_apply_cpu_affinity("3-1", field, &err),
              "process.execCPUAffinity.final: \"3-1\": range 3-1 is reversed");
  /* Only CPUs that do not exist: the kernel refuses, and the error says which field. */
  CHECK_FAILS(sr_process_attrs_apply_cpu_affinity("65000", field, &err),
              "process.execCPUAffinity.final: sched_setaffinity \"65000\"");
}

/* ---- procfs writes ---- */

static void proc_writes_stay_in_procfs(void)
{
  _cleanup_close_ int proc_fd = open_proc();
  /* thread-self/ and self/ name this process. */
  CHECK_OK(sr_process_attrs_write_proc(proc_fd, "thread-self/comm", "seerun-test", &err));
  _cleanup_free_ char *comm = read_file("/proc/self/comm");
  CHECK_STREQ(comm, "seerun-test");
  CHECK_OK(sr_process_attrs_write_proc(proc_fd, "self/oom_score_adj", "300", &err));
  _cleanup_free_ char *oom = read_file("/proc/self/oom_score_adj");
  CHECK_STREQ(oom, "300");

  /* The escape attempts all aim at a scratch file, so that a broken check damages nothing and
   * the file shows whether anything got through. */
  char dir[] = "/tmp/seerun-test-XXXXXX";
  if (mkdtemp(dir) == NULL)
    BAIL("mkdtemp: %s", strerror(errno));
  char file[64];
  snprintf(file, sizeof(file), "%s/f", dir);
  _cleanup_close_ int ffd = open(file, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (ffd < 0 || write(ffd, "orig", 4) != 4 || chdir(dir) < 0)
    BAIL("scratch file %s: %s", file, strerror(errno));
  char up[80], root[80], fdlink[32];
  snprintf(up, sizeof(up), "..%s", file);
  snprintf(root, sizeof(root), "self/root%s", file);
  snprintf(fdlink, sizeof(fdlink), "self/fd/%d", ffd);

  /* "..", magic links (cwd, root, fd), plain symlinks, absolute paths. */
  CHECK_FAILS(sr_process_attrs_write_proc(proc_fd, up, "x", &err), "leaves the procfs");
  CHECK_FAILS(sr_process_attrs_write_proc(proc_fd, "self/cwd/f", "x", &err), "symlink");
  CHECK_FAILS(sr_process_attrs_write_proc(proc_fd, root, "x", &err), "symlink");
  CHECK_FAILS(sr_process_attrs_write_proc(proc_fd, fdlink, "x", &err), "symlink");
  CHECK_FAILS(sr_process_attrs_write_proc(proc_fd, "mounts", "x", &err),
              "symlink"); /* -> self/mounts */
  CHECK_FAILS(sr_process_attrs_write_proc(proc_fd, file, "x", &err), "not a relative path");
  CHECK_FAILS(sr_process_attrs_write_proc(proc_fd, "", "x", &err), "not a relative path");
  CHECK_FAILS(sr_process_attrs_write_proc(proc_fd, "self/nonexistent", "x", &err),
              "No such file or directory");

  /* A directory that is not a procfs receives nothing. */
  _cleanup_close_ int dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
  CHECK_FAILS(sr_process_attrs_write_proc(dfd, "f", "new", &err), "open /proc/f: not on procfs");

  _cleanup_free_ char *content = read_file(file);
  CHECK_STREQ(content, "orig");
  unlink(file);
  rmdir(dir);
}

/* CVE-2025-52881 class: a procfs file bind-mounted over the target must not receive the write. */
static void proc_write_not_redirected_by_bind_mount(void)
{
  if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
    printf("  (skipped: private mount namespace: %s)\n", strerror(errno));
    return;
  }
  char target[64];
  snprintf(target, sizeof(target), "/proc/%d/oom_score_adj", (int)getpid());
  if (mount("/proc/self/comm", target, NULL, MS_BIND, NULL) < 0)
    BAIL("bind /proc/self/comm over %s: %s", target, strerror(errno));
  _cleanup_close_ int proc_fd = open_proc();
  _cleanup_free_ char *before = read_file("/proc/self/comm");
  CHECK_FAILS(sr_process_attrs_write_proc(proc_fd, "self/oom_score_adj", "500", &err),
              "crosses a mount point");
  _cleanup_free_ char *after = read_file("/proc/self/comm");
  CHECK(before && after && strcmp(before, after) == 0);
}

/* ---- LSM ---- */

static void lsm_labels_ignored_when_disabled(void)
{
  _cleanup_close_ int proc_fd = open_proc();
  _cleanup_config_ struct sr_config *c =
      load("{\"uid\":0,\"gid\":0}",
           "\"selinuxLabel\":\"system_u:system_r:container_t:s0:c1,c2\","
           "\"apparmorProfile\":\"seerun-test\"",
           "");
  if (c == NULL)
    BAIL("config");
  bool aa = true;
  CHECK_OK(sr_lsm_apparmor_enabled(proc_fd, &aa, &err));
  bool se = sr_lsm_selinux_enabled();
  if (se || aa) {
    printf("  (an LSM is enabled here: SELinux %d, AppArmor %d; ignore checks skipped)\n", se, aa);
    return;
  }
  unsigned ignored = 0;
  CHECK_OK(sr_lsm_prepare_exec(c->process, proc_fd, &ignored, &err));
  CHECK(ignored == (SR_LSM_IGNORED_SELINUX | SR_LSM_IGNORED_APPARMOR));

  _cleanup_config_ struct sr_config *none = load("{\"uid\":0,\"gid\":0}", "", "");
  if (none == NULL)
    BAIL("config");
  ignored = 42;
  CHECK_OK(sr_lsm_prepare_exec(none->process, proc_fd, &ignored, &err));
  CHECK(ignored == 0);

  /* SELinux is off here: no mount gets a context, whatever the label. */
  CHECK(sr_lsm_selinux_fs_context("system_u:object_r:container_file_t:s0:c1,c2", "tmpfs") == NULL);
  CHECK(sr_lsm_selinux_fs_context("", "tmpfs") == NULL);
  CHECK(sr_lsm_selinux_fs_context(NULL, "mqueue") == NULL);
}

int main(void)
{
  if (geteuid() != 0) {
    fprintf(stderr, "test_process: needs root\n");
    return 77; /* automake: skipped */
  }
  mask_names();
  in_child("a user gets its groups, ids, umask and exactly the listed capabilities",
           user_with_few_caps);
  in_child("an ambient capability that is also inheritable is raised", user_with_ambient_cap);
  in_child("root without a capabilities object has no capability at all",
           root_without_capabilities);
  in_child("a user without a capabilities object has no capability at all",
           user_without_capabilities);
  in_child("root listing every capability it holds keeps them all", root_with_all_capabilities);
  in_child("a capability unknown to the kernel is ignored", unknown_capability_ignored);
  in_child("effective capabilities must be permitted", effective_not_permitted);
  in_child("a capability the runtime lacks is named in the error", capability_not_held);
  in_child("setgroups \"deny\" is fine without additional gids", setgroups_deny_without_gids);
  in_child("setgroups \"deny\" with additional gids is an error", setgroups_deny_with_gids);
  in_child("rlimits are lowered", rlimits_lowered);
  in_child("a hard rlimit cannot be raised without CAP_SYS_RESOURCE", rlimit_hard_cannot_be_raised);
  in_child("oomScoreAdj raises oom_score_adj, and is left alone when unset", oom_score_adj_raised);
  in_child("ioPriority BE 5", io_priority_best_effort);
  in_child("scheduler SCHED_BATCH nice 5", scheduler_batch);
  in_child("personality LINUX32", personality_linux32);
  in_child("no personality changes nothing", no_personality_changes_nothing);
  in_child("execCPUAffinity lists are parsed strictly", cpu_affinity);
  in_child("procfs writes cannot leave the procfs", proc_writes_stay_in_procfs);
  in_child("a bind mount over a procfs file does not redirect the write",
           proc_write_not_redirected_by_bind_mount);
  in_child("LSM labels are ignored when their module is disabled",
           lsm_labels_ignored_when_disabled);
  if (failures) {
    fprintf(stderr, "test_process: %d failure(s)\n", failures);
    return 1;
  }
  printf("test_process: all passed\n");
  return 0;
}
