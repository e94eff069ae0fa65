#include "build.h"

#include "userns_remap.h"

#include "cleanup.h"
#include "userns_registry.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/wait.h>

#include "mountapi.h"
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

static bool maps_host_zero(const struct sr_id_map *m, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (m[i].host_id == 0)
      return true; /* ranges start at host_id, so only one starting at 0 covers it */
  return false;
}

/* Whether the user namespace at path maps host uid 0: read its uid_map from inside it. */
static int joined_maps_host_zero(const char *path, bool *zero, sr_error_t *err)
{
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) < 0)
    return sr_error_sys(err, "pipe");
  pid_t pid = fork();
  if (pid < 0)
    return sr_error_sys(err, "fork");
  if (pid == 0) {
    close(fds[0]);
    int ns = open(path, O_RDONLY | O_CLOEXEC);
    if (ns < 0 || setns(ns, CLONE_NEWUSER) < 0)
      _exit(2);
    int f = open("/proc/self/uid_map", O_RDONLY | O_CLOEXEC);
    char buf[4096];
    ssize_t n = f >= 0 ? read(f, buf, sizeof(buf)) : -1;
    if (n > 0)
      (void)!write(fds[1], buf, (size_t)n);
    _exit(n > 0 ? 0 : 2);
  }
  close(fds[1]);
  char buf[4096];
  ssize_t n = read(fds[0], buf, sizeof(buf) - 1);
  close(fds[0]);
  int status;
  waitpid(pid, &status, 0);
  if (n <= 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return sr_error_make(err, 0, "linux.namespaces: user namespace `%s`: cannot read its uid_map",
                         path);
  buf[n] = '\0';
  *zero = false;
  for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
    unsigned long inside, outside, count;
    if (sscanf(line, "%lu %lu %lu", &inside, &outside, &count) == 3 && outside == 0)
      *zero = true;
  }
  return 0;
}

/* Ids the container uses must exist inside a namespace of `size` ids. */
static int check_ids(struct sr_config *c, uint32_t size, const char *profile, sr_error_t *err)
{
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

/* An idmapped writable bind onto host id 0 would let the container create host-root files. */
static int check_mount_maps(struct sr_config *c, const struct sr_remap_input *in,
                            struct sr_decisions *d, sr_error_t *err)
{
  for (size_t i = 0; i < c->n_mounts; i++) {
    const struct sr_mount *m = &c->mounts[i];
    bool ro = (m->opts.flags & MS_RDONLY) || (m->opts.rec_attr_set & MOUNT_ATTR_RDONLY);
    if (ro || !(maps_host_zero(m->uid_mappings, m->n_uid_mappings) ||
                maps_host_zero(m->gid_mappings, m->n_gid_mappings)))
      continue;
    char field[64];
    snprintf(field, sizeof(field), "mounts[%zu].uidMappings", i);
    if (!in->enforce) {
      if (decide(c, d, SR_DECISION_ALLOWED, field, "host id 0", "host id 0",
                 "permissive: a writable mount idmapped onto host id 0", err) < 0)
        return -1;
      continue;
    }
    decide(c, d, SR_DECISION_REFUSED, field, "host id 0", NULL,
           "a writable mount idmapped onto host id 0", err);
    return sr_error_make(err, 0, "%s: a writable mount idmapped onto host id 0 is not allowed "
                                 "(profile \"%s\")", field, in->profile);
  }
  return 0;
}

int sr_userns_remap(struct sr_config *c, const struct sr_policy_facts *facts,
                    const struct sr_remap_input *in, struct sr_decisions *d, sr_error_t *err)
{
  if (check_mount_maps(c, in, d, err) < 0)
    return -1;
  struct sr_namespace *user = &c->linux_.namespaces[SR_NS_USER];
  const char *field = "linux.namespaces.user";
  if (user->present && user->path) {
    bool zero = false;
    if (joined_maps_host_zero(user->path, &zero, err) < 0)
      return -1;
    if (zero && in->enforce) {
      decide(c, d, SR_DECISION_REFUSED, field, user->path, NULL,
             "the joined user namespace maps host uid 0", err);
      return sr_error_make(err, 0, "linux.namespaces.user: `%s` maps host uid 0 (profile \"%s\": "
                                   "no container runs as host root)", user->path, in->profile);
    }
    return decide(c, d, SR_DECISION_ALLOWED, field, user->path, user->path,
                  zero ? "permissive: the joined user namespace maps host uid 0"
                       : "joins a user namespace that does not map host uid 0",
                  err);
  }
  if (user->present) {
    bool zero = maps_host_zero(c->linux_.uid_mappings, c->linux_.n_uid_mappings) ||
                maps_host_zero(c->linux_.gid_mappings, c->linux_.n_gid_mappings);
    if (zero && in->enforce) {
      decide(c, d, SR_DECISION_REFUSED, "linux.uidMappings", "host id 0", NULL,
             "a mapping onto host id 0", err);
      return sr_error_make(err, 0, "linux.uidMappings/gidMappings: a mapping onto host id 0 is "
                                   "not allowed (profile \"%s\": no container runs as host root)",
                           in->profile);
    }
    return decide(c, d, SR_DECISION_ALLOWED, field, "new", "new, with the config's mappings",
                  zero ? "permissive: the config maps host id 0"
                       : "the config's mappings do not reach host id 0",
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
  if (sr_userns_acquire(in->pool, in->key, &range, err) < 0)
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
  char applied[128];
  snprintf(applied, sizeof(applied), "new: container 0-%u on host %u-%u", range.size - 1,
           range.host_start, range.host_start + range.size - 1);
  if (decide(c, d, SR_DECISION_ENFORCED, field, "host (none)", applied,
             "no container process holds host uid 0", err) < 0)
    return -1;
  return clamp_sysctls(c, range.size, d, err);
}
