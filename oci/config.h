/* The parsed, validated config.json: every field seerun honours, typed.
 *
 * Parsing (oci/) turns the JSON into this; the policy transforms it; the runtime (runtime/)
 * executes only what is here.  All memory lives in `arena`.
 */
#ifndef SEERUN_CONFIG_H
#define SEERUN_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "arena.h"
#include "error.h"

typedef struct {
  bool set;
  int64_t v;
} sr_opt_i64;
typedef struct {
  bool set;
  uint64_t v;
} sr_opt_u64;

enum sr_ns_kind {
  SR_NS_USER, /* first: joined or created before the others, which it then owns */
  SR_NS_MOUNT,
  SR_NS_PID,
  SR_NS_NET,
  SR_NS_IPC,
  SR_NS_UTS,
  SR_NS_CGROUP,
  SR_NS_TIME,
  SR_NS_COUNT
};

struct sr_namespace {
  bool present;  /* listed in linux.namespaces */
  char *path;    /* join this one; NULL: create a new one */
};

struct sr_id_map {
  uint32_t container_id, host_id, size;
};

struct sr_hook {
  char *path;
  char **args;
  size_t n_args;
  char **env;
  size_t n_env;
  int64_t timeout; /* seconds; 0: none */
};

enum sr_hook_kind {
  SR_HOOK_PRESTART,
  SR_HOOK_CREATE_RUNTIME,
  SR_HOOK_CREATE_CONTAINER,
  SR_HOOK_START_CONTAINER,
  SR_HOOK_POSTSTART,
  SR_HOOK_POSTSTOP,
  SR_HOOK_COUNT
};

struct sr_hooks {
  struct sr_hook *list[SR_HOOK_COUNT];
  size_t n[SR_HOOK_COUNT];
};

/* The mount options of one mount, already split into what mount(2)/mount_setattr take. */
struct sr_mount_opts {
  unsigned long flags;       /* MS_* set */
  unsigned long clear;       /* MS_* explicitly cleared (rw, suid, dev, exec, atime...) */
  unsigned long propagation; /* MS_SHARED|MS_SLAVE|MS_PRIVATE|MS_UNBINDABLE [|MS_REC] */
  uint64_t rec_attr_set;     /* MOUNT_ATTR_* applied recursively (rro, rnosuid, ...) */
  uint64_t rec_attr_clr;
  bool rec_atime_set;  /* ratime, rnoatime, rstrictatime, ...: one recursive atime mode */
  uint64_t rec_atime;  /* MOUNT_ATTR_RELATIME, MOUNT_ATTR_NOATIME or MOUNT_ATTR_STRICTATIME */
  bool bind, rbind;
  bool idmap, ridmap;
  bool tmpcopyup;
  char *data; /* filesystem-specific options, comma-joined */
};

struct sr_mount {
  /* How errors name it: "mounts[3]" (config.json's index, kept when the policy puts its tmpfs
   * first) or "mounts[destination=/tmp]" for one the policy added. */
  const char *field;
  char *destination;
  char *type;
  char *source;
  char **options;
  size_t n_options;
  struct sr_mount_opts opts;
  struct sr_id_map *uid_mappings;
  size_t n_uid_mappings;
  struct sr_id_map *gid_mappings;
  size_t n_gid_mappings;
};

struct sr_rlimit {
  int resource;
  uint64_t soft, hard;
};

enum sr_cap_set {
  SR_CAP_EFFECTIVE,
  SR_CAP_BOUNDING,
  SR_CAP_INHERITABLE,
  SR_CAP_PERMITTED,
  SR_CAP_AMBIENT,
  SR_CAP_SET_COUNT
};

struct sr_capabilities {
  uint64_t sets[SR_CAP_SET_COUNT]; /* bit n: capability number n */
};

struct sr_scheduler {
  int policy;
  int32_t nice, priority;
  uint64_t flags;
  uint64_t runtime, deadline, period;
};

struct sr_io_priority {
  int klass; /* IOPRIO_CLASS_* */
  int priority;
};

struct sr_user {
  uint32_t uid, gid;
  bool has_umask;
  uint32_t umask;
  uint32_t *additional_gids;
  size_t n_additional_gids;
  char *username;
};

struct sr_process {
  bool terminal;
  bool has_console_size;
  uint32_t console_height, console_width;
  struct sr_user user;
  char **args;
  size_t n_args;
  char **env;
  size_t n_env;
  char *cwd;
  struct sr_capabilities *capabilities; /* NULL: the config lists none (no capabilities) */
  struct sr_rlimit *rlimits;
  size_t n_rlimits;
  bool no_new_privileges;
  bool has_oom_score_adj;
  int oom_score_adj;
  char *apparmor_profile;
  char *selinux_label;
  struct sr_scheduler *scheduler;
  struct sr_io_priority *io_priority;
  char *cpu_affinity_initial, *cpu_affinity_final;
};

struct sr_device {
  char type; /* 'c', 'b', 'u', 'p' */
  char *path;
  int64_t major, minor;
  bool has_file_mode;
  uint32_t file_mode;
  bool has_uid, has_gid;
  uint32_t uid, gid;
};

struct sr_device_rule {
  bool allow;
  char type;            /* 'a', 'c', 'b' */
  int64_t major, minor; /* -1: any */
  char access[4];       /* subset of "rwm" */
};

struct sr_throttle_device {
  int64_t major, minor;
  uint64_t rate;
};

struct sr_weight_device {
  int64_t major, minor;
  sr_opt_u64 weight, leaf_weight;
};

struct sr_hugepage_limit {
  char *page_size;
  uint64_t limit;
};

struct sr_net_priority {
  char *name;
  uint32_t priority;
};

struct sr_rdma_limit {
  char *device;
  sr_opt_u64 hca_handles, hca_objects;
};

struct sr_resources {
  struct sr_device_rule *devices;
  size_t n_devices;
  struct {
    sr_opt_i64 limit, reservation, swap, kernel, kernel_tcp;
    sr_opt_u64 swappiness;
    bool has_disable_oom_killer, disable_oom_killer;
    bool has_use_hierarchy, use_hierarchy;
    bool check_before_update;
  } memory;
  struct {
    sr_opt_u64 shares, burst, period, realtime_period;
    sr_opt_i64 quota, realtime_runtime, idle;
    char *cpus, *mems;
  } cpu;
  sr_opt_i64 pids_limit;
  struct {
    sr_opt_u64 weight, leaf_weight;
    struct sr_weight_device *weight_devices;
    size_t n_weight_devices;
    struct sr_throttle_device *throttle[4]; /* read bps, write bps, read iops, write iops */
    size_t n_throttle[4];
  } block_io;
  struct sr_hugepage_limit *hugepage_limits;
  size_t n_hugepage_limits;
  struct {
    bool has_class_id;
    uint32_t class_id;
    struct sr_net_priority *priorities;
    size_t n_priorities;
  } network;
  struct sr_rdma_limit *rdma;
  size_t n_rdma;
  char **unified_keys, **unified_values;
  size_t n_unified;
};

struct sr_seccomp_arg {
  unsigned int index;
  uint64_t value, value_two;
  int op; /* enum scmp_compare */
};

struct sr_seccomp_rule {
  char **names;
  size_t n_names;
  uint32_t action; /* SCMP_ACT_*, errno already folded in */
  struct sr_seccomp_arg *args;
  size_t n_args;
};

struct sr_seccomp {
  uint32_t default_action;
  uint32_t *architectures; /* SCMP_ARCH_* tokens */
  size_t n_architectures;
  unsigned int flags; /* SECCOMP_FILTER_FLAG_* the config asks for, nothing added */
  char *listener_path;
  char *listener_metadata;
  struct sr_seccomp_rule *rules;
  size_t n_rules;
  bool uses_notify;
};

struct sr_time_offset {
  bool set;
  int64_t secs;
  uint32_t nanosecs;
};

struct sr_linux {
  struct sr_namespace namespaces[SR_NS_COUNT];
  struct sr_id_map *uid_mappings;
  size_t n_uid_mappings;
  struct sr_id_map *gid_mappings;
  size_t n_gid_mappings;
  struct sr_time_offset time_monotonic, time_boottime;
  struct sr_device *devices;
  size_t n_devices;
  char *cgroups_path;
  struct sr_resources *resources;
  char **sysctl_keys, **sysctl_values;
  size_t n_sysctl;
  struct sr_seccomp *seccomp;
  unsigned long rootfs_propagation; /* 0: unset (runtime default) */
  char **masked_paths;
  size_t n_masked_paths;
  char **readonly_paths;
  size_t n_readonly_paths;
  char *mount_label;
  bool has_personality;
  unsigned long personality;
};

struct sr_config {
  struct sr_arena arena;
  char *oci_version;
  char *root_path; /* as written in config.json */
  bool root_readonly;
  char *hostname;
  char *domainname;
  struct sr_mount *mounts;
  size_t n_mounts;
  struct sr_process *process; /* NULL when absent */
  struct sr_hooks hooks;
  char **annotation_keys, **annotation_values;
  size_t n_annotations;
  struct sr_linux linux_;
};

/* Parses and validates config.json text.  `what` names the source in errors ("config.json"). */
int sr_config_parse(const char *buf, size_t len, const char *what, struct sr_config **out,
                    sr_error_t *err);
void sr_config_free(struct sr_config *c);
static inline void sr_config_freep(struct sr_config **c)
{
  if (*c)
    sr_config_free(*c);
}
#define _cleanup_config_ __attribute__((cleanup(sr_config_freep)))

/* Parses a process object on its own (exec --process). */
int sr_config_parse_process(const char *buf, size_t len, const char *what, struct sr_arena *a,
                            struct sr_process **out, sr_error_t *err);

/* Parses a linux.resources object on its own (update --resources). */
int sr_config_update_parse_resources(const char *buf, size_t len, const char *what,
                                     struct sr_arena *a, struct sr_resources **out,
                                     sr_error_t *err);

const char *sr_config_ns_name(enum sr_ns_kind k); /* "pid", "network", ... (config.json names) */
const char *sr_config_ns_proc_name(enum sr_ns_kind k); /* "pid", "net", ... (/proc/PID/ns names) */
int sr_config_ns_clone_flag(enum sr_ns_kind k);
const char *sr_config_hook_name(enum sr_hook_kind k);
/* The namespace (enum sr_ns_kind) a sysctl key ("a.b.c" or "a/b/c") belongs to; -1 when the
 * key is not namespaced. */
int sr_config_sysctl_namespace(const char *key);

/* Annotation lookup; NULL when absent. */
const char *sr_config_annotation(const struct sr_config *c, const char *key);

#endif
