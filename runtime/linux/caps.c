#include "build.h"

#include "caps.h"
#include "cleanup.h"
#include "log.h"
#include "names.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#define BIT(n) (UINT64_C(1) << (n))

static void sr_cap_freep(cap_t *c)
{
  if (*c)
    cap_free(*c);
}
#define _cleanup_cap_ _cleanup_(sr_cap_freep)

/* How many capabilities the running kernel knows (cap_last_cap + 1), at most the 64 our sets
 * hold. */
static unsigned kernel_cap_bits(void)
{
  cap_value_t n = cap_max_bits();
  if (n <= 0)
    return 0;
  return n > 64 ? 64 : (unsigned)n;
}

static uint64_t mask_below(unsigned bits)
{
  return bits >= 64 ? UINT64_MAX : BIT(bits) - 1;
}

uint64_t sr_caps_unknown_to_kernel(const struct sr_capabilities *caps)
{
  if (caps == NULL)
    return 0;
  uint64_t all = 0;
  for (int s = 0; s < SR_CAP_SET_COUNT; s++)
    all |= caps->sets[s];
  return all & ~mask_below(kernel_cap_bits());
}

uint64_t sr_caps_ambient_unraisable(const struct sr_capabilities *caps)
{
  if (caps == NULL)
    return 0;
  return caps->sets[SR_CAP_AMBIENT] &
         ~(caps->sets[SR_CAP_PERMITTED] & caps->sets[SR_CAP_INHERITABLE]);
}

char *sr_caps_mask_names(uint64_t mask)
{
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (f == NULL)
    return NULL;
  const char *sep = "";
  for (unsigned i = 0; i < 64; i++) {
    if (!(mask & BIT(i)))
      continue;
    const char *name = sr_names_of(SR_NAMES(sr_names_capability), i);
    if (name)
      fprintf(f, "%s%s", sep, name);
    else
      fprintf(f, "%scapability %u", sep, i);
    sep = ", ";
  }
  if (fclose(f) != 0) {
    free(buf);
    return NULL;
  }
  return buf;
}

void sr_caps_warn_ungrantable(const struct sr_process *p)
{
  const struct sr_capabilities *caps = p->capabilities;
  uint64_t unknown = sr_caps_unknown_to_kernel(caps);
  /* Root's execve makes every permitted capability effective anyway: its ambient set changes
   * nothing (runc's default spec lists ambient capabilities that are not inheritable). */
  uint64_t ambient = p->user.uid == 0 ? 0 : sr_caps_ambient_unraisable(caps) & ~unknown;
  if (unknown) {
    _cleanup_free_ char *names = sr_caps_mask_names(unknown);
    sr_warn("process.capabilities: not known to this kernel, not granted: %s",
            names ? names : "(out of memory)");
  }
  if (ambient) {
    _cleanup_free_ char *names = sr_caps_mask_names(ambient);
    sr_warn("process.capabilities.ambient: not both permitted and inheritable, not raised: %s",
            names ? names : "(out of memory)");
  }
}

/* Builds an error whose message ends with the names of `mask`. */
static int caps_error(sr_error_t *err, int status, const char *what, uint64_t mask)
{
  _cleanup_free_ char *names = sr_caps_mask_names(mask);
  return sr_error_make(err, status, "%s%s", what, names ? names : "(out of memory)");
}

static int drop_bounding(uint64_t keep, unsigned bits, sr_error_t *err)
{
  for (unsigned cap = 0; cap < bits; cap++) {
    if (keep & BIT(cap))
      continue;
    int r = prctl(PR_CAPBSET_READ, cap, 0, 0, 0);
    if (r < 0 && errno == EINVAL)
      continue; /* not a capability of this kernel after all */
    if (r < 0)
      return caps_error(err, errno, "prctl PR_CAPBSET_READ ", BIT(cap));
    /* Only drop what is there: a runtime without CAP_SETPCAP can still run a container whose
     * bounding set is already small enough. */
    if (r == 0)
      continue;
    if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0)
      return caps_error(err, errno, "prctl PR_CAPBSET_DROP ", BIT(cap));
  }
  return 0;
}

/* True when /proc/self/setgroups says "deny", the user namespace's ban on setgroups(2).  Any
 * doubt (unreadable, not procfs) answers false, so the setgroups failure stays an error. */
static bool setgroups_denied(void)
{
  _cleanup_close_ int fd = open("/proc/self/setgroups", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  struct statfs sfs;
  char buf[16];
  if (fd < 0 || fstatfs(fd, &sfs) < 0 || sfs.f_type != PROC_SUPER_MAGIC)
    return false;
  ssize_t n = read(fd, buf, sizeof(buf) - 1);
  if (n <= 0)
    return false;
  buf[n] = '\0';
  return strcmp(buf, "deny\n") == 0 || strcmp(buf, "deny") == 0;
}

static int set_groups(const struct sr_user *u, sr_error_t *err)
{
  size_t n = u->n_additional_gids;
  /* The config's gids are uint32_t, which is gid_t: passed as they are (a type mismatch would
   * not compile). */
  const gid_t *gids = u->additional_gids;
  /* Clears the supplementary groups the runtime itself runs with (root's, often with access to
   * disk or docker groups), which would otherwise leak into the container. */
  if (setgroups(n, gids) == 0)
    return 0;
  int saved = errno;
  if (saved == EPERM && n == 0 && setgroups_denied())
    return 0; /* setgroups "deny": the groups cannot change at all, and none were asked for */
  char list[96] = "";
  size_t used = 0;
  for (size_t i = 0; i < n; i++) {
    if (sizeof(list) - used < 20) { /* no room left for another gid: elide the rest */
      strcpy(list + used, ", ...");
      break;
    }
    used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%u", i ? ", " : "", gids[i]);
  }
  return sr_error_make(err, saved, "setgroups [%s]", list);
}

static uint64_t proc_caps(cap_t c, cap_flag_t flag, unsigned bits)
{
  uint64_t m = 0;
  for (unsigned i = 0; i < bits; i++) {
    cap_flag_value_t v = CAP_CLEAR;
    if (cap_get_flag(c, (cap_value_t)i, flag, &v) == 0 && v == CAP_SET)
      m |= BIT(i);
  }
  return m;
}

/* capset failed: say which capability made it fail, as far as we can tell. */
static int explain_capset(int status, const uint64_t *want, unsigned bits, sr_error_t *err)
{
  if (want[SR_CAP_EFFECTIVE] & ~want[SR_CAP_PERMITTED])
    return caps_error(err, status, "capset: effective but not permitted: ",
                      want[SR_CAP_EFFECTIVE] & ~want[SR_CAP_PERMITTED]);
  _cleanup_cap_ cap_t cur = cap_get_proc();
  if (cur == NULL)
    return sr_error_make(err, status, "capset");
  uint64_t cur_p = proc_caps(cur, CAP_PERMITTED, bits);
  uint64_t cur_i = proc_caps(cur, CAP_INHERITABLE, bits);
  uint64_t bset = 0;
  for (unsigned i = 0; i < bits; i++)
    if (prctl(PR_CAPBSET_READ, i, 0, 0, 0) == 1)
      bset |= BIT(i);
  if (want[SR_CAP_PERMITTED] & ~cur_p)
    return caps_error(err, status,
                      "capset: not held by the runtime: ", want[SR_CAP_PERMITTED] & ~cur_p);
  if (want[SR_CAP_INHERITABLE] & ~(cur_i | bset))
    return caps_error(err, status, "capset: inheritable but not in the bounding set: ",
                      want[SR_CAP_INHERITABLE] & ~(cur_i | bset));
  if (want[SR_CAP_INHERITABLE] & ~(cur_i | cur_p))
    return caps_error(err, status, "capset: inheritable but not held by the runtime: ",
                      want[SR_CAP_INHERITABLE] & ~(cur_i | cur_p));
  return sr_error_make(err, status, "capset");
}

static int set_caps(const uint64_t *want, unsigned bits, sr_error_t *err)
{
  static const struct {
    enum sr_cap_set set;
    cap_flag_t flag;
  } sets[] = {
      {SR_CAP_PERMITTED, CAP_PERMITTED},
      {SR_CAP_EFFECTIVE, CAP_EFFECTIVE},
      {SR_CAP_INHERITABLE, CAP_INHERITABLE},
  };
  _cleanup_cap_ cap_t c = cap_init(); /* all three sets empty */
  if (c == NULL)
    return sr_error_sys(err, "capset: cap_init");
  for (size_t s = 0; s < sizeof(sets) / sizeof(sets[0]); s++)
    for (unsigned i = 0; i < bits; i++) {
      cap_value_t v = (cap_value_t)i;
      if ((want[sets[s].set] & BIT(i)) && cap_set_flag(c, sets[s].flag, 1, &v, CAP_SET) < 0)
        return caps_error(err, errno, "capset: cap_set_flag ", BIT(i));
    }
  if (cap_set_proc(c) < 0)
    return explain_capset(errno, want, bits, err);
  return 0;
}

static int set_ambient(const uint64_t *want, unsigned bits, sr_error_t *err)
{
  /* Nothing the runtime had in its ambient set may survive into the container. */
  if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0)
    return sr_error_sys(err, "prctl PR_CAP_AMBIENT_CLEAR_ALL");
  uint64_t raise = want[SR_CAP_AMBIENT] & want[SR_CAP_PERMITTED] & want[SR_CAP_INHERITABLE];
  for (unsigned i = 0; i < bits; i++)
    if ((raise & BIT(i)) && prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, i, 0, 0) < 0)
      return caps_error(err, errno, "prctl PR_CAP_AMBIENT_RAISE ", BIT(i));
  return 0;
}

int sr_caps_apply_identity(const struct sr_user *u, const struct sr_capabilities *caps,
                           sr_error_t *err)
{
  unsigned bits = kernel_cap_bits();
  uint64_t known = mask_below(bits);
  uint64_t want[SR_CAP_SET_COUNT] = {0};
  if (caps != NULL)
    for (int s = 0; s < SR_CAP_SET_COUNT; s++)
      want[s] = caps->sets[s] & known;

  /* Without keep-caps, leaving uid 0 empties the permitted set before capset can choose it. */
  if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0)
    return sr_error_sys(err, "prctl PR_SET_KEEPCAPS 1");
  /* Stops an execve of a setuid-root or file-capability binary from regaining what the config
   * did not list; needs CAP_SETPCAP, so it comes before capset gives it up. */
  if (drop_bounding(want[SR_CAP_BOUNDING], bits, err) < 0)
    return -1;
  /* Groups before gid before uid: each step needs CAP_SETGID/CAP_SETUID, which the uid change
   * would take away. */
  if (set_groups(u, err) < 0)
    return -1;
  /* All three ids, so no saved id lets the process switch back to the runtime's. */
  if (setresgid(u->gid, u->gid, u->gid) < 0)
    return sr_error_sys(err, "setresgid %u", u->gid);
  if (setresuid(u->uid, u->uid, u->uid) < 0)
    return sr_error_sys(err, "setresuid %u", u->uid);
  if (prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) < 0)
    return sr_error_sys(err, "prctl PR_SET_KEEPCAPS 0");
  /* Exactly the listed sets: the runtime's own capabilities do not leak into the container. */
  if (set_caps(want, bits, err) < 0)
    return -1;
  if (set_ambient(want, bits, err) < 0)
    return -1;
  if (u->has_umask)
    umask((mode_t)u->umask);
  return 0;
}

int sr_caps_no_new_privs(sr_error_t *err)
{
  /* Stops setuid binaries and file capabilities from raising privileges at execve. */
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
    return sr_error_sys(err, "prctl PR_SET_NO_NEW_PRIVS");
  return 0;
}
