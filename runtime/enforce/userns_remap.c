#include "build.h"

#include "userns_remap.h"

#include "cleanup.h"
#include "userns_registry.h"

#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static int decide(struct sr_config *c, struct sr_decisions *d, enum sr_decision_kind kind,
                  const char *field, const char *asked, const char *applied, const char *reason,
                  sr_error_t *err)
{
  struct sr_arena *a = &c->arena;
  if (d->n == d->cap) {
    size_t cap = d->cap ? d->cap * 2 : 16;
    struct sr_decision *nv = sr_arena_array(a, cap, sizeof(*nv));
    if (nv == NULL)
      return sr_error_make(err, ENOMEM, "decisions");
    if (d->n)
      memcpy(nv, d->list, d->n * sizeof(*nv));
    d->list = nv;
    d->cap = cap;
  }
  d->list[d->n++] = (struct sr_decision){kind, sr_arena_strdup(a, field), sr_arena_strdup(a, asked),
                                         applied ? sr_arena_strdup(a, applied) : NULL,
                                         sr_arena_strdup(a, reason)};
  return 0;
}

/* Host ids up to 65535 are the host's own users (root, daemons, people): a container's ids
 * mapped onto them would own those users' files wherever a mount reaches them.  The registry's
 * pool belongs to seerun's own ranges: a config mapping into it could share ids with another
 * container.  So the config's own mappings must stay clear of both.  Writes the field and
 * reason of the first mapping that does not into field/why; false when all do. */
#define SR_HOST_USER_IDS 65536
static bool config_map_trespasses(const struct sr_id_map *m, size_t n, const char *name,
                                  const struct sr_userns_pool *pool, char *field,
                                  size_t field_size, char *why, size_t why_size)
{
  uint64_t pool_end = pool->first + pool->size * pool->count;
  for (size_t i = 0; i < n; i++) {
    uint64_t start = m[i].host_id, end = start + m[i].size;
    snprintf(field, field_size, "linux.%s[%zu]", name, i);
    if (start == 0) {
      snprintf(why, why_size, "a mapping onto host id 0");
      return true;
    }
    if (start < SR_HOST_USER_IDS) {
      snprintf(why, why_size, "a mapping onto host ids %" PRIu64 "-%" PRIu64 ", the host's own "
               "users (below %d)", start, end - 1, SR_HOST_USER_IDS);
      return true;
    }
    if (start < pool_end && pool->first < end) {
      snprintf(why, why_size, "a mapping onto host ids %" PRIu64 "-%" PRIu64 ", inside the "
               "registry's pool %" PRIu64 "-%" PRIu64 " (other containers' ranges)", start,
               end - 1, pool->first, pool_end - 1);
      return true;
    }
  }
  return false;
}

/* Reads a uid_map or gid_map (the caller's, so relative to its user namespace) and says
 * whether a line maps onto host id 0.  -1: unreadable. */
static int map_file_maps_zero(const char *file, bool *zero)
{
  int f = open(file, O_RDONLY | O_CLOEXEC);
  if (f < 0)
    return -1;
  char buf[4096];
  ssize_t n = read(f, buf, sizeof(buf) - 1);
  close(f);
  if (n <= 0)
    return -1;
  buf[n] = '\0';
  for (char *save = NULL, *line = strtok_r(buf, "\n", &save); line;
       line = strtok_r(NULL, "\n", &save)) {
    unsigned long inside, outside, count;
    if (sscanf(line, "%lu %lu %lu", &inside, &outside, &count) == 3 && outside == 0)
      *zero = true;
  }
  return 0;
}

/* Whether the user namespace at path maps host uid 0 or gid 0: its uid_map and gid_map as seen
 * from inside it.  The runtime's own user namespace (the host's: "0 0 4294967295") cannot be
 * entered with setns (EINVAL), so its maps are read directly. */
static int joined_maps_host_zero(const char *path, int fd, bool *zero, sr_error_t *err)
{
  *zero = false;
  struct stat target, self;
  /* fd: the namespace the facts opened, the one then joined (a path swapped in between). */
  if ((fd >= 0 ? fstat(fd, &target) : stat(path, &target)) < 0)
    return sr_error_sys(err, "linux.namespaces.user: `%s`", path);
  if (stat("/proc/self/ns/user", &self) == 0 && self.st_dev == target.st_dev &&
      self.st_ino == target.st_ino) {
    if (map_file_maps_zero("/proc/self/uid_map", zero) < 0 ||
        map_file_maps_zero("/proc/self/gid_map", zero) < 0)
      return sr_error_make(err, 0, "linux.namespaces.user: `%s`: cannot read its id maps", path);
    return 0;
  }
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) < 0)
    return sr_error_sys(err, "pipe");
  pid_t pid = fork();
  if (pid < 0) {
    int saved = errno;
    close(fds[0]);
    close(fds[1]);
    return sr_error_make(err, saved, "fork");
  }
  if (pid == 0) {
    close(fds[0]);
    int ns = fd >= 0 ? fd : open(path, O_RDONLY | O_CLOEXEC);
    bool z = false;
    if (ns < 0 || setns(ns, CLONE_NEWUSER) < 0 ||
        map_file_maps_zero("/proc/self/uid_map", &z) < 0 ||
        map_file_maps_zero("/proc/self/gid_map", &z) < 0)
      _exit(2);
    char c = z ? '1' : '0';
    _exit(write(fds[1], &c, 1) == 1 ? 0 : 2);
  }
  close(fds[1]);
  char c = 0;
  ssize_t n;
  do
    n = read(fds[0], &c, 1);
  while (n < 0 && errno == EINTR);
  close(fds[0]);
  int status;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
    ;
  if (n != 1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return sr_error_make(err, 0, "linux.namespaces.user: `%s`: cannot read its id maps", path);
  *zero = c == '1';
  return 0;
}

/* Ids the container uses must exist inside a namespace of `size` ids. */
static int check_ids(struct sr_config *c, uint32_t size, const char *profile, sr_error_t *err)
{
  if (c->process == NULL)
    return 0; /* no process, no ids (create refuses such a config before this) */
  const struct sr_user *u = &c->process->user;
  if (u->uid >= size || u->gid >= size)
    return sr_error_make(err, 0, "process.user: uid %u / gid %u is outside the container's %u "
                                 "ids (profile \"%s\": every container runs in a user namespace)",
                         u->uid, u->gid, size, profile);
  for (size_t i = 0; i < u->n_additional_gids; i++)
    if (u->additional_gids[i] >= size)
      return sr_error_make(err, 0, "process.user.additionalGids[%zu]: gid %u is outside the "
                                   "container's %u ids", i, u->additional_gids[i], size);
  return 0;
}

/* net.ipv4.ping_group_range names gids: Docker sends "0 2147483647", which a namespace of 65536
 * ids rejects.  It is clamped to the ids that exist. */
static int clamp_sysctls(struct sr_config *c, uint32_t size, struct sr_decisions *d,
                         sr_error_t *err)
{
  struct sr_linux *l = &c->linux_;
  for (size_t i = 0; i < l->n_sysctl; i++) {
    if (strcmp(l->sysctl_keys[i], "net.ipv4.ping_group_range") != 0)
      continue;
    unsigned long lo, hi;
    if (sscanf(l->sysctl_values[i], "%lu %lu", &lo, &hi) != 2)
      continue;
    unsigned long max = size - 1;
    if (lo <= max && hi <= max)
      continue;
    char *v = sr_arena_printf(&c->arena, "%lu %lu", lo < max ? lo : max, hi < max ? hi : max);
    if (v == NULL)
      return sr_error_make(err, ENOMEM, "sysctl");
    if (decide(c, d, SR_DECISION_ENFORCED, "linux.sysctl.net.ipv4.ping_group_range",
               l->sysctl_values[i], v, "clamped to the gids of the container's user namespace",
               err) < 0)
      return -1;
    l->sysctl_values[i] = v;
  }
  return 0;
}

int sr_userns_remap(struct sr_config *c, const struct sr_policy_facts *facts,
                    const struct sr_remap_input *in, struct sr_decisions *d, sr_error_t *err)
{
  /* (An idmapped bind that widens the ids the container acts as is refused by the policy's
   * mounts section, check_idmap.) */
  struct sr_namespace *user = &c->linux_.namespaces[SR_NS_USER];
  const char *field = "linux.namespaces.user";
  if (user->present && user->path) {
    bool zero = false;
    if (joined_maps_host_zero(user->path, in->user_ns_fd, &zero, err) < 0) {
      /* Refused, and on record like every refusal: what cannot be checked does not run. */
      _cleanup_free_ char *why = sr_error_text(*err);
      sr_error_t ignored = NULL;
      decide(c, d, SR_DECISION_REFUSED, field, user->path, NULL,
             why ? why : "cannot read the joined user namespace's id maps", &ignored);
      sr_error_free(&ignored);
      return -1;
    }
    if (zero && in->enforce) {
      decide(c, d, SR_DECISION_REFUSED, field, user->path, NULL,
             "the joined user namespace maps host uid or gid 0", err);
      return sr_error_policy(err, field,
                             "linux.namespaces.user: `%s` maps host uid or gid 0 "
                             "(profile \"%s\": no container runs as host root)",
                             user->path, in->profile);
    }
    return decide(c, d, SR_DECISION_ALLOWED, field, user->path, user->path,
                  zero ? "permissive: the joined user namespace maps host uid or gid 0"
                       : "joins a user namespace that does not map host uid or gid 0",
                  err);
  }
  if (user->present) {
    char bad_field[64], why[192];
    bool bad = config_map_trespasses(c->linux_.uid_mappings, c->linux_.n_uid_mappings,
                                     "uidMappings", in->pool, bad_field, sizeof(bad_field), why,
                                     sizeof(why)) ||
               config_map_trespasses(c->linux_.gid_mappings, c->linux_.n_gid_mappings,
                                     "gidMappings", in->pool, bad_field, sizeof(bad_field), why,
                                     sizeof(why));
    if (bad && in->enforce) {
      decide(c, d, SR_DECISION_REFUSED, bad_field, why, NULL, why, err);
      return sr_error_policy(err, bad_field,
                             "%s: %s is not allowed (profile \"%s\": container "
                             "ids map onto host ids above %d and outside "
                             "seerun's pool)",
                             bad_field, why, in->profile, SR_HOST_USER_IDS - 1);
    }
    return decide(c, d, SR_DECISION_ALLOWED, field, "new", "new, with the config's mappings",
                  bad ? "permissive: the config's mappings reach the host's own ids or the pool"
                      : "the config's mappings stay above the host's own ids, outside the pool",
                  err);
  }
  /* A pod: the container joins another seerun container's namespaces, so it must be in that
   * container's user namespace, which owns them. */
  for (int k = 0; facts && k < SR_NS_COUNT; k++) {
    const struct sr_policy_ns_fact *f = &facts->ns[k];
    if (k == SR_NS_USER || !f->is_seerun_container || f->container_pid <= 0)
      continue;
    char path[64], self[64], theirs[64];
    snprintf(path, sizeof(path), "/proc/%d/ns/user", f->container_pid);
    ssize_t a = readlink("/proc/self/ns/user", self, sizeof(self) - 1);
    ssize_t b = readlink(path, theirs, sizeof(theirs) - 1);
    if (a <= 0 || b <= 0 || (a == b && memcmp(self, theirs, (size_t)a) == 0))
      continue; /* that container has no user namespace of its own */
    if (!in->enforce)
      return decide(c, d, SR_DECISION_ALLOWED, field, "host", path,
                    "permissive: would join the pod's user namespace", err);
    user->present = true;
    user->path = sr_arena_strdup(&c->arena, path);
    return decide(c, d, SR_DECISION_ENFORCED, field, "host", path,
                  "joins the user namespace of the seerun container whose namespaces it joins "
                  "(a pod shares one range)",
                  err);
  }
  struct sr_userns_range range;
  if (!in->enforce)
    return decide(c, d, SR_DECISION_ALLOWED, field, "host", "new (would be remapped)",
                  "permissive: would run in a user namespace on a range from the registry", err);
  if (in->dry_run)
    return decide(c, d, SR_DECISION_ENFORCED, field, "host (none)",
                  "new, on a range from the registry", "no container process holds host uid 0",
                  err);
  if (sr_userns_registry_acquire(in->pool, in->key, &range, err) < 0)
    return -1;
  if (check_ids(c, range.size, in->profile, err) < 0)
    return -1;
  struct sr_id_map *map = sr_arena_alloc(&c->arena, sizeof(*map));
  if (map == NULL)
    return sr_error_make(err, ENOMEM, "user namespace");
  *map = (struct sr_id_map){0, range.host_start, range.size};
  user->present = true;
  user->path = NULL;
  c->linux_.uid_mappings = c->linux_.gid_mappings = map;
  c->linux_.n_uid_mappings = c->linux_.n_gid_mappings = 1;
  char applied[128], reason[192];
  snprintf(applied, sizeof(applied), "new: container 0-%u on host %u-%u", range.size - 1,
           range.host_start, range.host_start + range.size - 1);
  if (range.reclaimed_from)
    snprintf(reason, sizeof(reason), "no container process holds host uid 0; the pool was full: "
             "this range was taken from a container deleted at %lld, before its grace period "
             "ended (userNamespaces.count)", (long long)range.reclaimed_from);
  else
    snprintf(reason, sizeof(reason), "no container process holds host uid 0");
  if (decide(c, d, SR_DECISION_ENFORCED, field, "host (none)", applied, reason, err) < 0)
    return -1;
  return clamp_sysctls(c, range.size, d, err);
}
