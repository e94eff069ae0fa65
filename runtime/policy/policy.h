/* The operator's policy: what a container may have, whatever its config.json asks.
 *
 * The policy file (default /etc/seerun/policy.json, root-owned: the runtime checks that) holds
 * named profiles, which one is the default, how engine entries are bound to profiles, and
 * where decisions are logged.  It is validated more strictly than config.json: an unknown key
 * is an error, since a typo in a security policy must not be silently ignored.  The format is
 * documented in contrib/policy/README.md; the built-in policy (used when no file exists) is
 * sr_policy_default_json, shipped as contrib/policy/default.json.
 *
 * Everything parsed lives in policy->arena.  Parsing is pure (no I/O).
 */
#ifndef SEERUN_POLICY_H
#define SEERUN_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "config.h"
#include "error.h"
#include "policy_egress.h"
#include "json.h"

#define SR_POLICY_VERSION 1
#define SR_POLICY_DEFAULT_PATH "/etc/seerun/policy.json"
#define SR_POLICY_DEFAULT_AUDIT_LOG "/var/log/seerun/audit.jsonl"

/* A device node (or a range of them) a profile allows. */
struct sr_policy_device {
  const char *name; /* "null", "pts", ...: a built-in name; NULL for {type, major, minor} */
  char type;        /* 'c' or 'b' */
  int64_t major;
  int64_t minor; /* -1: any minor */
};

/* A tmpfs the policy mounts where config.json mounts nothing (with a read-only root). */
struct sr_policy_tmpfs {
  char *path;
  uint64_t size;     /* bytes */
  uint64_t max_size; /* what annotation io.seerun.tmp-size may ask for (/tmp only); >= size */
  uint32_t mode;
  bool noexec;
};

/* A hook the profile allows (hooks.allowedPaths[i]): the file a hook's path resolves to, and
 * optionally its argv. */
struct sr_policy_hook_allow {
  char *path;    /* names the file: a hook matches when its path opens the same inode */
  bool has_args; /* false: any argv (never enough for an interpreter or launcher) */
  char **args;   /* one pattern per argv element: exact, or a prefix ending in "*" */
  size_t n_args;
  char **env; /* environment names it may get beyond the built-in few: exact, or prefix* */
  size_t n_env;
};

/* A resource floor and ceiling. */
struct sr_policy_limit {
  bool has_default; /* set this when config.json asks for no limit */
  int64_t def;
  bool has_max; /* lower (create) or refuse (update) anything above */
  int64_t max;
};

struct sr_policy_profile {
  char *name;
  char *description;
  char *base; /* the profile it inherits from, NULL: none (already resolved below) */
  /* false: the permissive profile.  Nothing is changed or refused; every decision is still
   * recorded, as what would have happened. */
  bool enforce;
  struct {
    bool readonly;
    struct sr_policy_tmpfs *tmpfs;
    size_t n_tmpfs;
    /* Directories below which a plain-directory root.path is idmapped (besides the bundle):
     * mapping ids is granting them, so a host directory named as root.path is not. */
    char **idmap_paths;
    size_t n_idmap_paths;
  } rootfs;
  struct {
    bool allow;      /* network beyond loopback (a network the engine configures) */
    bool on_request; /* allow only where annotation io.seerun.network=enabled asks */
    bool allow_host; /* the host's network namespace */
    /* Egress through seerun's proxy (runtime/supervisor/egress_proxy.h): a grant of its own,
     * independent of `allow`.  proxy: a container may ask for it (annotation
     * io.seerun.network=proxy, seerun sandbox --network); mode_proxy: it gets it without
     * asking (network.mode "proxy", for engine entries that cannot pass annotations). */
    bool proxy;
    bool mode_proxy;
    struct sr_egress egress;
  } network;
  struct {
    bool allow_host[SR_NS_COUNT]; /* pid, ipc, uts, cgroup: the host's may be kept */
    bool allow_join[SR_NS_COUNT]; /* joining a path that is no seerun container's */
    bool require_user;            /* refuse a config without a user namespace */
  } namespaces;
  uint64_t capabilities; /* bit n: capability n may be kept */
  struct sr_policy_device *devices;
  size_t n_devices;
  char **mount_types; /* filesystem types of non-bind mounts */
  size_t n_mount_types;
  /* Directories below which an idmapped bind may let the container act as on-disk ids it
   * does not hold (a volume store the engine idmaps, e.g. podman's). */
  char **idmappable;
  size_t n_idmappable;
  char **allow_sockets; /* directories whose sockets, FIFOs and daemon socket dirs may be bound */
  size_t n_allow_sockets;
  char **allow_hard_links; /* paths whose multiply-linked files may be bound */
  size_t n_allow_hard_links;
  char **masked_paths;
  size_t n_masked_paths;
  char **readonly_paths;
  size_t n_readonly_paths;
  struct sr_policy_limit pids, memory;
  struct sr_policy_limit cpu; /* in thousandths of a CPU (cpu.quota / cpu.period * 1000) */
  char **sysctls; /* "kernel.shmmax" (exact) or "net.*" (prefix) */
  size_t n_sysctls;
  struct sr_policy_hook_allow *hooks_allowed; /* the only hooks that run; none: no hooks */
  size_t n_hooks_allowed;
  bool landlock; /* confine every process to the container's file hierarchy (enforcing only) */
  /* restore may bring a container back without Landlock (CRIU cannot carry a domain) */
  bool restore_without_landlock;
  bool activity_record; /* the activity record (runtime/supervisor/activity.h; enforcing only) */
};

/* Where every container's user namespace maps its ids on the host: ranges of `size` ids from a
 * pool of `count` ranges starting at host id `first`, recorded in one root-owned registry. */
struct sr_userns_pool {
  char *registry;
  uint64_t first;
  uint64_t size;
  uint64_t count;
  int64_t grace_seconds; /* a deleted container's range is kept this long for its id */
};

#define SR_USERNS_DEFAULT_REGISTRY "/var/lib/seerun/userns.ranges"

struct sr_policy {
  struct sr_arena arena;
  int64_t version;
  char *default_profile;
  char *audit_log;
  struct sr_userns_pool userns;
  /* bindings.binaries: argv[0] basename -> profile; bindings.roots: --root -> profile */
  char **binary_keys, **binary_values;
  size_t n_binaries;
  char **root_keys, **root_values;
  size_t n_roots;
  struct sr_policy_profile *profiles;
  size_t n_profiles;
};

/* Parses and validates a policy file; `what` names it in errors ("policy.json"). */
int sr_policy_parse(const char *buf, size_t len, const char *what, struct sr_policy **out,
                    sr_error_t *err);
/* The built-in policy (sr_policy_default_json), named "built-in policy" in errors. */
int sr_policy_parse_default(struct sr_policy **out, sr_error_t *err);
void sr_policy_free(struct sr_policy *p);
static inline void sr_policy_freep(struct sr_policy **p)
{
  if (*p)
    sr_policy_free(*p);
}
#define _cleanup_policy_ __attribute__((cleanup(sr_policy_freep)))

extern const char sr_policy_default_json[];

/* The profile of that name; NULL when there is none. */
const struct sr_policy_profile *sr_policy_profile(const struct sr_policy *p, const char *name);

/* The profile for this invocation.  Each way the operator binds a profile -- the --profile
 * flag of the engine's runtime entry (cli_profile), the runtime's binary name
 * (bindings.binaries) and its --root (bindings.roots) -- must name the same profile; none
 * given, defaultProfile.  A --profile that contradicts a binding is an error, so that a flag
 * a tenant can sometimes pass (podman --runtime-flag) cannot leave a profile the operator
 * pinned.  Any argument may be NULL. */
int sr_policy_select(const struct sr_policy *p, const char *cli_profile, const char *argv0_basename,
                     const char *root_dir, const struct sr_policy_profile **out, sr_error_t *err);

/* `seerun policy show`: the resolved profile (inheritance applied, every knob explicit) in the
 * policy file's format; and the whole policy likewise. */
int sr_policy_profile_to_json(const struct sr_policy_profile *p, sr_json_gen_t g);
int sr_policy_to_json(const struct sr_policy *p, sr_json_gen_t g);

/* Sizes in the policy and in annotations: an integer number of bytes, or a string of digits
 * with an optional k, m, g or t suffix (powers of 1024), e.g. "64m". */
int sr_policy_parse_size(const char *s, uint64_t *out);

/* The built-in names of the devices a profile may list ("null", "pts", "fuse", ...). */
bool sr_policy_device_by_name(const char *name, struct sr_policy_device *out);

#endif
