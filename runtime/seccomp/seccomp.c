#include "build.h"

#include "seccomp_filter.h"
#include "seccomp_enosys.h"

#include <seccomp.h>

#include "cleanup.h"
#include "fd_pass.h"
#include "names.h"

#include <errno.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif

/* SCMP_FLTATR_CTL_WAITKILL is an enum value (no macro to test), added in libseccomp 2.6.0. */
#if SCMP_VER_MAJOR > 2 || (SCMP_VER_MAJOR == 2 && SCMP_VER_MINOR >= 6)
#define SR_HAVE_SCMP_WAITKILL 1
#endif

#define SR_SECCOMP_MAX_ARGS 6

/* Above this many syscall names a binary search over syscall numbers is cheaper at run time
 * than libseccomp's default linear list of comparisons. */
#define SR_SECCOMP_BTREE_THRESHOLD 32

/* config.json flags and the libseccomp attributes that request them.  Every attribute is set
 * explicitly, to 0 when not asked for, so that libseccomp adds no flag of its own (notably
 * SPEC_ALLOW, which would turn off the speculative store bypass mitigation). */
static const struct {
  unsigned int flag;
  enum scmp_filter_attr attr;
} flag_attrs[] = {
    {SECCOMP_FILTER_FLAG_TSYNC, SCMP_FLTATR_CTL_TSYNC},
    {SECCOMP_FILTER_FLAG_LOG, SCMP_FLTATR_CTL_LOG},
    {SECCOMP_FILTER_FLAG_SPEC_ALLOW, SCMP_FLTATR_CTL_SSB},
#ifdef SR_HAVE_SCMP_WAITKILL
    {SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, SCMP_FLTATR_CTL_WAITKILL},
#endif
};

static void filter_releasep(scmp_filter_ctx *ctx)
{
  if (*ctx)
    seccomp_release(*ctx);
}
#define _cleanup_filter_ _cleanup_(filter_releasep)

static const char *flag_name(unsigned int flag)
{
  const char *n = sr_names_of(SR_NAMES(sr_names_seccomp_flag), flag);
  return n ? n : "(unknown flag)";
}

/* "SCMP_ACT_ERRNO(38)", "SCMP_ACT_KILL_PROCESS", ... for messages. */
static const char *action_name(uint32_t action, char *buf, size_t size)
{
  uint32_t base = action & 0xffff0000U;
  const char *n;
  if (base == SCMP_ACT_ERRNO(0) || base == SCMP_ACT_TRACE(0)) {
    n = sr_names_of(SR_NAMES(sr_names_seccomp_action), base);
    snprintf(buf, size, "%s(%u)", n ? n : "?", action & 0xffffU);
    return buf;
  }
  n = sr_names_of(SR_NAMES(sr_names_seccomp_action), action);
  if (n)
    return n;
  snprintf(buf, size, "0x%08x", action);
  return buf;
}

static const char *arch_name(uint32_t arch, char *buf, size_t size)
{
  const char *n = sr_names_of(SR_NAMES(sr_names_seccomp_arch), arch);
  if (n)
    return n;
  snprintf(buf, size, "0x%08x", arch);
  return buf;
}

/* The seccomp API level (seccomp_api_get) an action needs, beyond the base level 1. */
static unsigned int action_api_level(uint32_t action)
{
  switch (action) {
  case SCMP_ACT_KILL_PROCESS:
  case SCMP_ACT_LOG:
    return 3;
  case SCMP_ACT_NOTIFY:
    return 5;
  default:
    return 1;
  }
}

/* Fills *err for an action libseccomp refused.  The API level is probed only here, once
 * something has failed: seccomp_api_get() asks the kernel. */
static int action_error(sr_error_t *err, int status, const char *what, uint32_t action)
{
  char buf[48];
  unsigned int need = action_api_level(action), have = need > 1 ? seccomp_api_get() : 0;
  if (need > 1 && have < need)
    return sr_error_make(err, status,
                         "seccomp: %s: action %s is not supported by this kernel and libseccomp "
                         "(seccomp API level %u, needs %u)",
                         what, action_name(action, buf, sizeof(buf)), have, need);
  return sr_error_make(err, status, "seccomp: %s: action %s refused", what,
                       action_name(action, buf, sizeof(buf)));
}

/* libseccomp numbers a name that an architecture lacks with a pseudo number <= -10000;
 * (-10000, -100] are the socketcall/ipc calls that libseccomp itself rewrites on x86, so they
 * count as present. */
static bool nr_present(int nr)
{
  return nr >= 0 || (nr <= -100 && nr > -10000);
}

/* Whether `name` is a syscall on any architecture of the filter.  A name that is on none of
 * them can never match, so skipping it loses nothing (arm_fadvise64_64 on x86, ...). */
static bool in_some_arch(const struct sr_seccomp *s, int native_nr, const char *name)
{
  if (nr_present(native_nr))
    return true;
  for (size_t i = 0; i < s->n_architectures; i++)
    if (nr_present(seccomp_syscall_resolve_name_arch(s->architectures[i], name)))
      return true;
  return false;
}

static struct scmp_arg_cmp make_cmp(const struct sr_seccomp_arg *a)
{
  /* For SCMP_CMP_MASKED_EQ libseccomp matches (arg & datum_a) == datum_b: value is the mask,
   * valueTwo the expected bits, as runc passes them. */
  struct scmp_arg_cmp c = {
      .arg = a->index,
      .op = (enum scmp_compare)a->op,
      .datum_a = a->value,
      .datum_b = a->op == SCMP_CMP_MASKED_EQ ? a->value_two : 0,
  };
  return c;
}

static int rule_error(sr_error_t *err, int rc, const char *name, uint32_t action)
{
  char what[128];
  snprintf(what, sizeof(what), "syscall \"%s\": add rule", name);
  if (rc == -EEXIST) {
    char buf[48];
    return sr_error_make(err, EEXIST,
                         "seccomp: %s: action %s conflicts with an earlier rule for the same "
                         "arguments",
                         what, action_name(action, buf, sizeof(buf)));
  }
  if (action_api_level(action) > 1)
    return action_error(err, -rc, what, action);
  return sr_error_make(err, -rc, "seccomp: %s", what);
}

/* Adds one config rule for every name it lists.  Conditions on distinct arguments go in one
 * libseccomp rule (all must match).  libseccomp rejects two comparisons of one argument in a
 * rule, so a rule with such a pair becomes one libseccomp rule per condition (any may match),
 * as runc and crun do: profiles in the wild rely on that reading. */
static int add_rules(scmp_filter_ctx ctx, const struct sr_seccomp *s,
                     const struct sr_seccomp_rule *r, bool *notify_used, sr_error_t *err)
{
  struct scmp_arg_cmp cmps[SR_SECCOMP_MAX_ARGS];
  unsigned int count[SR_SECCOMP_MAX_ARGS] = {0};
  bool split = false;

  if (r->n_names == 0)
    return 0;
  for (size_t k = 0; k < r->n_args; k++) {
    unsigned int idx = r->args[k].index;
    if (idx >= SR_SECCOMP_MAX_ARGS)
      return sr_error_make(err, EINVAL,
                           "seccomp: syscall \"%s\": args[%zu]: argument index %u is out of "
                           "range 0-%d",
                           r->names[0], k, idx, SR_SECCOMP_MAX_ARGS - 1);
    if (++count[idx] > 1)
      split = true;
  }
  if (!split)
    for (size_t k = 0; k < r->n_args; k++)
      cmps[k] = make_cmp(&r->args[k]);

  for (size_t i = 0; i < r->n_names; i++) {
    const char *name = r->names[i];
    int nr = seccomp_syscall_resolve_name(name);
    int rc = 0;

    if (nr == __NR_SCMP_ERROR)
      return sr_error_make(err, EINVAL, "seccomp: syscall \"%s\": unknown to libseccomp", name);
    if (!in_some_arch(s, nr, name))
      continue;
    /* Non-exact add: libseccomp translates the name per architecture and skips the ones
     * that lack it. */
    if (!split) {
      rc = seccomp_rule_add_array(ctx, r->action, nr, (unsigned int)r->n_args, cmps);
    } else {
      for (size_t k = 0; k < r->n_args && rc >= 0; k++) {
        struct scmp_arg_cmp one = make_cmp(&r->args[k]);
        rc = seccomp_rule_add_array(ctx, r->action, nr, 1, &one);
      }
    }
    if (rc < 0)
      return rule_error(err, rc, name, r->action);
    if (r->action == SCMP_ACT_NOTIFY)
      *notify_used = true;
  }
  return 0;
}

static int set_attr(scmp_filter_ctx ctx, enum scmp_filter_attr attr, uint32_t value,
                    const char *what, sr_error_t *err)
{
  int rc = seccomp_attr_set(ctx, attr, value);
  if (rc < 0)
    return sr_error_make(err, -rc, "seccomp: %s", what);
  return 0;
}

static int set_flags(scmp_filter_ctx ctx, unsigned int flags, sr_error_t *err)
{
  unsigned int known = 0;

  for (size_t i = 0; i < sizeof(flag_attrs) / sizeof(flag_attrs[0]); i++) {
    unsigned int f = flag_attrs[i].flag;
    int rc = seccomp_attr_set(ctx, flag_attrs[i].attr, (flags & f) ? 1 : 0);
    known |= f;
    /* Clearing fails only where libseccomp lacks the attribute: it cannot set the flag then
     * either. */
    if (rc < 0 && (flags & f))
      return sr_error_make(
          err, -rc, "seccomp: flag %s: not supported by this kernel and libseccomp", flag_name(f));
  }
  if (flags & SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV & ~known)
    return sr_error_make(err, 0,
                         "seccomp: flag SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV: not supported by "
                         "this libseccomp (%d.%d.%d; needs 2.6.0)",
                         SCMP_VER_MAJOR, SCMP_VER_MINOR, SCMP_VER_MICRO);
  if (flags & ~known)
    return sr_error_make(err, 0, "seccomp: unknown filter flags 0x%x", flags & ~known);
  return 0;
}

/* Builds the libseccomp filter described by `s` into *out (owned by the caller).
 * *notify_used tells whether a SCMP_ACT_NOTIFY action made it into the filter. */
static int build_filter(const struct sr_seccomp *s, scmp_filter_ctx *out, bool *notify_used,
                        sr_error_t *err)
{
  _cleanup_filter_ scmp_filter_ctx ctx = NULL;
  size_t n_names = 0;
  char buf[48];
  int rc;

  *notify_used = s->default_action == SCMP_ACT_NOTIFY;

  ctx = seccomp_init(s->default_action);
  if (ctx == NULL)
    return action_error(err, EINVAL, "defaultAction", s->default_action);

  /* The caller owns no_new_privs: libseccomp would otherwise set it on load. */
  if (set_attr(ctx, SCMP_FLTATR_CTL_NNP, 0, "clear the no_new_privs attribute", err) < 0)
    return -1;
  /* Without it, libseccomp reports any kernel refusal at load as ECANCELED.  Best effort: a
   * libseccomp without the attribute still loads the filter. */
  (void)seccomp_attr_set(ctx, SCMP_FLTATR_API_SYSRAWRC, 1);
  if (set_flags(ctx, s->flags, err) < 0)
    return -1;

  for (size_t i = 0; i < s->n_architectures; i++) {
    rc = seccomp_arch_add(ctx, s->architectures[i]);
    if (rc < 0 && rc != -EEXIST) /* EEXIST: the native one, or listed twice */
      return sr_error_make(err, -rc, "seccomp: add architecture %s",
                           arch_name(s->architectures[i], buf, sizeof(buf)));
  }

  for (size_t i = 0; i < s->n_rules; i++)
    if (s->rules[i].action != s->default_action)
      n_names += s->rules[i].n_names;
  if (n_names > SR_SECCOMP_BTREE_THRESHOLD &&
      set_attr(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2, "set binary tree optimization", err) < 0)
    return -1;

  for (size_t i = 0; i < s->n_rules; i++) {
    /* libseccomp refuses a rule that repeats the default action (EACCES); it is a no-op. */
    if (s->rules[i].action == s->default_action)
      continue;
    if (add_rules(ctx, s, &s->rules[i], notify_used, err) < 0)
      return -1;
  }
  *out = ctx;
  ctx = NULL;
  return 0;
}

int sr_seccomp_install(const struct sr_seccomp *s, int *notify_fd, sr_error_t *err)
{
  _cleanup_filter_ scmp_filter_ctx ctx = NULL;
  bool notify_used;
  int rc;

  *notify_fd = -1;
  if (s == NULL)
    return 0;
  if (build_filter(s, &ctx, &notify_used, err) < 0)
    return -1;

  rc = seccomp_load(ctx);
  if (rc < 0) {
    if (rc == -EACCES)
      return sr_error_make(err, EACCES,
                           "seccomp: load filter (no_new_privs is not set and the process lacks "
                           "CAP_SYS_ADMIN)");
    if (rc == -ESRCH && (s->flags & SECCOMP_FILTER_FLAG_TSYNC))
      return sr_error_make(err, ESRCH,
                           "seccomp: load filter: another thread could not be synchronized "
                           "(SECCOMP_FILTER_FLAG_TSYNC)");
    return sr_error_make(err, -rc, "seccomp: load filter");
  }

  if (notify_used) {
    int fd = seccomp_notify_fd(ctx);
    if (fd < 0)
      return sr_error_make(err, -fd, "seccomp: get the notify listener fd");
    *notify_fd = fd;
  }
  return 0;
}

int sr_seccomp_compile(const struct sr_seccomp *s, struct sock_filter **insns, size_t *len,
                       sr_error_t *err)
{
  _cleanup_filter_ scmp_filter_ctx ctx = NULL;
  _cleanup_close_ int fd = -1;
  _cleanup_free_ struct sock_filter *prog = NULL;
  bool notify_used;
  off_t size;
  size_t got = 0;
  int rc;

  if (build_filter(s, &ctx, &notify_used, err) < 0)
    return -1;
  /* libseccomp 2.5 exports to a file descriptor only. */
  fd = memfd_create("seerun-seccomp", MFD_CLOEXEC);
  if (fd < 0)
    return sr_error_sys(err, "seccomp: export the filter: memfd_create");
  rc = seccomp_export_bpf(ctx, fd);
  if (rc < 0)
    return sr_error_make(err, -rc, "seccomp: export the filter");
  size = lseek(fd, 0, SEEK_END);
  if (size <= 0 || size % (off_t)sizeof(struct sock_filter) != 0)
    return sr_error_make(err, EIO, "seccomp: export the filter: %lld bytes", (long long)size);
  prog = malloc((size_t)size);
  if (prog == NULL)
    return sr_error_make(err, ENOMEM, "seccomp: export the filter");
  while (got < (size_t)size) {
    ssize_t n = pread(fd, (char *)prog + got, (size_t)size - got, (off_t)got);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return sr_error_make(err, n < 0 ? errno : EIO, "seccomp: export the filter: read");
    got += (size_t)n;
  }
  *insns = steal_ptr(prog);
  *len = (size_t)size / sizeof(struct sock_filter);
  if (sr_seccomp_enosys_applies(s) && sr_seccomp_enosys_prepend(s, insns, len, err) < 0) {
    free(*insns);
    *insns = NULL;
    return -1;
  }
  return 0;
}

static int wait_writable(int fd)
{
  struct pollfd p = {.fd = fd, .events = POLLOUT};
  int r;
  do
    r = poll(&p, 1, -1);
  while (r < 0 && errno == EINTR);
  return r < 0 ? -1 : 0;
}

int sr_seccomp_send_notify_fd(int listener_sock, int notify_fd, const char *process_state_json,
                              sr_error_t *err)
{
  size_t len, off = 0;

  if (listener_sock < 0 || notify_fd < 0 || process_state_json == NULL ||
      process_state_json[0] == '\0')
    return sr_error_make(err, EINVAL, "seccomp: send notify fd: invalid arguments");
  len = strlen(process_state_json);

  while (off < len) {
    /* The spec wants the fd with the first sendmsg only; until one succeeded, it has not
     * been sent.  No SIGPIPE: an agent that went away is an error to report. */
    ssize_t n = sr_fd_pass_send_some(listener_sock, off == 0 ? notify_fd : -1,
                                process_state_json + off, len - off);
    if (n < 0) {
      if ((errno == EAGAIN || errno == EWOULDBLOCK) && wait_writable(listener_sock) == 0)
        continue;
      return sr_error_sys(err, "seccomp: send the container process state and notify fd to "
                               "the listener");
    }
    if (n == 0)
      return sr_error_make(err, EIO, "seccomp: send the container process state: no progress");
    off += (size_t)n;
  }
  return 0;
}
