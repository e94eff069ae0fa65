/* config.json as users write it: what seerun takes from a good one, field by field, and how
 * it refuses a bad one (naming the file and the field, freeing everything it built).
 *
 * Runs under ASan/LSan/UBSan: every refusal below is also a leak check of its error path.
 */
#include "build.h"

#include <linux/capability.h>
#include <linux/mount.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/resource.h>

#include "config.h"
#include "spec_default.h"
#include "fixtures.h"
#include "unit.h"

/* JSON written as is in the source: JSON({"a": [1, "b"]}) is the C string "{\"a\": [1, \"b\"]}".
 * clang-format would space it out as C, so the parts full of JSON are laid out by hand. */

#define CAP(c) (UINT64_C(1) << (c))

/* Parses json into cfg (NULL on failure), checking that it succeeded. */
#define PARSE(json, cfg)                                                                           \
  do {                                                                                             \
    const char *unit_json_ = (json);                                                               \
    sr_error_t unit_err_ = NULL;                                                                   \
    (cfg) = NULL;                                                                                  \
    CHECK_OK(sr_config_parse(unit_json_, strlen(unit_json_), "config.json", &(cfg), &unit_err_),   \
             unit_err_);                                                                           \
    sr_error_free(&unit_err_);                                                                     \
  } while (0)

/* The config is refused with an error containing `expected`, of kind SR_ERR_CONFIG; nothing
 * is handed out. */
#define REFUSED_LEN(json, len, expected)                                                           \
  do {                                                                                             \
    struct sr_config *unit_c_ = NULL;                                                              \
    sr_error_t unit_err_ = NULL;                                                                   \
    CHECK(sr_config_parse((json), (len), "config.json", &unit_c_, &unit_err_) < 0);                \
    CHECK(unit_c_ == NULL);                                                                        \
    CHECK_ERR_CONTAINS(unit_err_, expected);                                                       \
    CHECK_INT_EQ(sr_error_kind(unit_err_), SR_ERR_CONFIG);                                         \
    sr_error_free(&unit_err_);                                                                     \
    if (unit_c_)                                                                                   \
      sr_config_free(unit_c_);                                                                     \
  } while (0)
#define REFUSED(json, expected)                                                                    \
  do {                                                                                             \
    const char *unit_j_ = (json);                                                                  \
    REFUSED_LEN(unit_j_, strlen(unit_j_), expected);                                               \
  } while (0)

/* A minimal good config.json with some top-level members replaced, added or (OMIT) removed:
 * CONFIG_WITH("process", JSON({...}), "hostname", JSON("box")).  The text lives in a static
 * buffer until the next call. */
#define OMIT UNIT_OMIT
#define CONFIG_WITH(...) config_with(__VA_ARGS__, (const char *)NULL)
#define MINIMAL_CONFIG config_with((const char *)NULL)

static const char *config_with(const char *key, ...)
{
  static char buf[32 * 1024];
  struct unit_member m[32] = {
      // clang-format off
      {"ociVersion", JSON("1.2.1")},
      {"root", JSON({"path": "rootfs"})},
      {"process", JSON({"user": {"uid": 0, "gid": 0}, "args": ["sh"], "cwd": "/"})},
      {"linux", JSON({"namespaces": [{"type": "mount"}]})},
      // clang-format on
  };
  va_list ap;
  va_start(ap, key);
  unit_config_merge(buf, sizeof(buf), m, 4, sizeof(m) / sizeof(m[0]), key, ap);
  va_end(ap);
  return buf;
}

/* ---------------------------------------------------------------------------------------------
 * Good configs
 */

// clang-format off
/* "runc spec" (runc 1.1) writes this; seerun must run it unchanged. */
static const char RUNC_SPEC[] = JSON({
  "ociVersion": "1.0.2-dev",
  "process": {
    "terminal": true,
    "user": {"uid": 0, "gid": 0},
    "args": ["sh"],
    "env": ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "TERM=xterm"],
    "cwd": "/",
    "capabilities": {
      "bounding": ["CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"],
      "effective": ["CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"],
      "permitted": ["CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"],
      "ambient": ["CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"]
    },
    "rlimits": [{"type": "RLIMIT_NOFILE", "hard": 1024, "soft": 1024}],
    "noNewPrivileges": true
  },
  "root": {"path": "rootfs", "readonly": true},
  "hostname": "runc",
  "mounts": [
    {"destination": "/proc", "type": "proc", "source": "proc"},
    {"destination": "/dev", "type": "tmpfs", "source": "tmpfs",
     "options": ["nosuid", "strictatime", "mode=755", "size=65536k"]},
    {"destination": "/dev/pts", "type": "devpts", "source": "devpts",
     "options": ["nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", "gid=5"]},
    {"destination": "/dev/shm", "type": "tmpfs", "source": "shm",
     "options": ["nosuid", "noexec", "nodev", "mode=1777", "size=65536k"]},
    {"destination": "/dev/mqueue", "type": "mqueue", "source": "mqueue",
     "options": ["nosuid", "noexec", "nodev"]},
    {"destination": "/sys", "type": "sysfs", "source": "sysfs",
     "options": ["nosuid", "noexec", "nodev", "ro"]},
    {"destination": "/sys/fs/cgroup", "type": "cgroup", "source": "cgroup",
     "options": ["nosuid", "noexec", "nodev", "relatime", "ro"]}
  ],
  "linux": {
    "resources": {"devices": [{"allow": false, "access": "rwm"}]},
    "namespaces": [
      {"type": "pid"}, {"type": "network"}, {"type": "ipc"}, {"type": "uts"}, {"type": "mount"},
      {"type": "cgroup"}
    ],
    "maskedPaths": [
      "/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys", "/proc/latency_stats",
      "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug", "/sys/firmware", "/proc/scsi"
    ],
    "readonlyPaths": ["/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"]
  }
});
// clang-format on

static void check_mount(const struct sr_mount *m, const char *dest, const char *type,
                        const char *source, unsigned long flags, const char *data)
{
  CHECK_STR_EQ(m->destination, dest);
  CHECK_STR_EQ(m->type, type);
  CHECK_STR_EQ(m->source, source);
  CHECK_UINT_EQ(m->opts.flags, flags);
  CHECK_STR_EQ(m->opts.data, data);
  CHECK_UINT_EQ(m->opts.propagation, 0);
  CHECK(!m->opts.bind && !m->opts.rbind);
}

/* `spec --rootless`: runc's specconv.ToRootless applied to the default template. */
static void the_rootless_template_is_the_default_turned_as_runc_turns_it(void)
{
  char *text = sr_spec_default_rootless(1000, 1001);
  CHECK(text != NULL);
  if (text == NULL)
    return;
  struct sr_config *c;
  PARSE(text, c);
  free(text);
  if (c == NULL)
    return;
  const struct sr_linux *l = &c->linux_;
  CHECK(l->namespaces[SR_NS_USER].present);
  CHECK(!l->namespaces[SR_NS_NET].present);
  CHECK(l->namespaces[SR_NS_PID].present && l->namespaces[SR_NS_CGROUP].present);
  CHECK_UINT_EQ(l->n_uid_mappings, 1);
  CHECK_UINT_EQ(l->n_gid_mappings, 1);
  if (l->n_uid_mappings == 1 && l->n_gid_mappings == 1) {
    CHECK_UINT_EQ(l->uid_mappings[0].container_id, 0);
    CHECK_UINT_EQ(l->uid_mappings[0].host_id, 1000);
    CHECK_UINT_EQ(l->uid_mappings[0].size, 1);
    CHECK_UINT_EQ(l->gid_mappings[0].host_id, 1001);
  }
  CHECK(l->resources == NULL);
  CHECK_UINT_EQ(c->n_mounts, 7);
  if (c->n_mounts == 7) {
    CHECK_STR_EQ(c->mounts[2].opts.data, "newinstance,ptmxmode=0666,mode=0620");
    CHECK_STR_EQ(c->mounts[5].destination, "/sys");
    CHECK_STR_EQ(c->mounts[5].source, "/sys");
    CHECK(c->mounts[5].opts.rbind);
  }
  sr_config_free(c);
}

static void the_runc_spec_default_config_lands_field_by_field(void)
{
  struct sr_config *c;
  PARSE(RUNC_SPEC, c);
  if (c == NULL)
    return;
  CHECK_STR_EQ(c->oci_version, "1.0.2-dev");
  CHECK_STR_EQ(c->root_path, "rootfs");
  CHECK(c->root_readonly);
  CHECK_STR_EQ(c->hostname, "runc");
  CHECK(c->domainname == NULL);

  const struct sr_process *p = c->process;
  CHECK(p != NULL);
  if (p) {
    CHECK(p->terminal);
    CHECK_UINT_EQ(p->user.uid, 0);
    CHECK_UINT_EQ(p->user.gid, 0);
    CHECK(!p->user.has_umask);
    CHECK_UINT_EQ(p->user.n_additional_gids, 0);
    CHECK_UINT_EQ(p->n_args, 1);
    CHECK_STR_EQ(p->args[0], "sh");
    CHECK(p->args[1] == NULL); /* NULL-terminated, ready for execve */
    CHECK_UINT_EQ(p->n_env, 2);
    CHECK_STR_EQ(p->env[0], "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
    CHECK_STR_EQ(p->env[1], "TERM=xterm");
    CHECK(p->env[2] == NULL);
    CHECK_STR_EQ(p->cwd, "/");
    uint64_t three = CAP(CAP_AUDIT_WRITE) | CAP(CAP_KILL) | CAP(CAP_NET_BIND_SERVICE);
    CHECK(p->capabilities != NULL);
    if (p->capabilities) {
      CHECK_UINT_EQ(p->capabilities->sets[SR_CAP_BOUNDING], three);
      CHECK_UINT_EQ(p->capabilities->sets[SR_CAP_EFFECTIVE], three);
      CHECK_UINT_EQ(p->capabilities->sets[SR_CAP_PERMITTED], three);
      CHECK_UINT_EQ(p->capabilities->sets[SR_CAP_AMBIENT], three);
      CHECK_UINT_EQ(p->capabilities->sets[SR_CAP_INHERITABLE], 0);
    }
    CHECK_UINT_EQ(p->n_rlimits, 1);
    if (p->n_rlimits == 1) {
      CHECK_INT_EQ(p->rlimits[0].resource, RLIMIT_NOFILE);
      CHECK_UINT_EQ(p->rlimits[0].soft, 1024);
      CHECK_UINT_EQ(p->rlimits[0].hard, 1024);
    }
    CHECK(p->no_new_privileges);
    CHECK(!p->has_oom_score_adj);
    CHECK(p->apparmor_profile == NULL && p->selinux_label == NULL);
    CHECK(p->scheduler == NULL && p->io_priority == NULL);
    CHECK(p->cpu_affinity_initial == NULL && p->cpu_affinity_final == NULL);
  }

  CHECK_UINT_EQ(c->n_mounts, 7);
  if (c->n_mounts == 7) {
    check_mount(&c->mounts[0], "/proc", "proc", "proc", 0, NULL);
    check_mount(&c->mounts[1], "/dev", "tmpfs", "tmpfs", MS_NOSUID | MS_STRICTATIME,
                "mode=755,size=65536k");
    check_mount(&c->mounts[2], "/dev/pts", "devpts", "devpts", MS_NOSUID | MS_NOEXEC,
                "newinstance,ptmxmode=0666,mode=0620,gid=5");
    check_mount(&c->mounts[3], "/dev/shm", "tmpfs", "shm", MS_NOSUID | MS_NOEXEC | MS_NODEV,
                "mode=1777,size=65536k");
    check_mount(&c->mounts[4], "/dev/mqueue", "mqueue", "mqueue", MS_NOSUID | MS_NOEXEC | MS_NODEV,
                NULL);
    check_mount(&c->mounts[5], "/sys", "sysfs", "sysfs",
                MS_NOSUID | MS_NOEXEC | MS_NODEV | MS_RDONLY, NULL);
    check_mount(&c->mounts[6], "/sys/fs/cgroup", "cgroup", "cgroup",
                MS_NOSUID | MS_NOEXEC | MS_NODEV | MS_RELATIME | MS_RDONLY, NULL);
    CHECK_UINT_EQ(c->mounts[3].n_options, 5);
    CHECK_STR_EQ(c->mounts[3].options[4], "size=65536k");
  }

  for (int h = 0; h < SR_HOOK_COUNT; h++)
    CHECK_UINT_EQ(c->hooks.n[h], 0);
  CHECK_UINT_EQ(c->n_annotations, 0);

  const struct sr_linux *l = &c->linux_;
  static const enum sr_ns_kind created[] = {SR_NS_PID, SR_NS_NET,   SR_NS_IPC,
                                            SR_NS_UTS, SR_NS_MOUNT, SR_NS_CGROUP};
  for (size_t i = 0; i < sizeof(created) / sizeof(created[0]); i++) {
    CHECK(l->namespaces[created[i]].present);
    CHECK(l->namespaces[created[i]].path == NULL);
  }
  CHECK(!l->namespaces[SR_NS_USER].present);
  CHECK(!l->namespaces[SR_NS_TIME].present);
  CHECK_UINT_EQ(l->n_uid_mappings, 0);
  CHECK(l->resources != NULL);
  if (l->resources) {
    CHECK_UINT_EQ(l->resources->n_devices, 1);
    if (l->resources->n_devices == 1) {
      const struct sr_device_rule *d = &l->resources->devices[0];
      CHECK(!d->allow);
      CHECK_INT_EQ(d->type, 'a');
      CHECK_INT_EQ(d->major, -1);
      CHECK_INT_EQ(d->minor, -1);
      CHECK_STR_EQ(d->access, "rwm");
    }
    CHECK(!l->resources->memory.limit.set);
    CHECK(!l->resources->pids_limit.set);
  }
  CHECK_UINT_EQ(l->n_masked_paths, 10);
  if (l->n_masked_paths == 10) {
    CHECK_STR_EQ(l->masked_paths[0], "/proc/acpi");
    CHECK_STR_EQ(l->masked_paths[8], "/sys/firmware");
    CHECK_STR_EQ(l->masked_paths[9], "/proc/scsi");
    CHECK(l->masked_paths[10] == NULL);
  }
  CHECK_UINT_EQ(l->n_readonly_paths, 5);
  if (l->n_readonly_paths == 5) {
    CHECK_STR_EQ(l->readonly_paths[0], "/proc/bus");
    CHECK_STR_EQ(l->readonly_paths[4], "/proc/sysrq-trigger");
  }
  CHECK(l->seccomp == NULL);
  CHECK(l->cgroups_path == NULL);
  CHECK_UINT_EQ(l->rootfs_propagation, 0);
  CHECK_UINT_EQ(l->n_devices, 0);
  CHECK_UINT_EQ(l->n_sysctl, 0);
  CHECK(!l->has_personality);
  sr_config_free(c);
}

// clang-format off
/* Every field the structs carry, each with a value that is not its default. */
static const char EVERY_FIELD[] = JSON({
  "ociVersion": "1.3.0",
  "root": {"path": "/var/lib/box/rootfs", "readonly": false},
  "hostname": "box",
  "domainname": "example.org",
  "annotations": {"org.example.owner": "team-a", "org.example.empty": ""},
  "mounts": [
    {"destination": "/data", "type": "none", "source": "/srv/data",
     "options": ["rbind", "rprivate", "rro", "nosuid", "idmap"],
     "uidMappings": [{"containerID": 0, "hostID": 100000, "size": 65536}],
     "gidMappings": [{"containerID": 0, "hostID": 200000, "size": 65536}]},
    {"destination": "tmp", "type": "tmpfs", "source": "tmpfs",
     "options": ["rw", "noexec", "size=64m", "tmpcopyup"]},
    {"destination": "/shared", "source": "/srv/shared", "options": ["bind", "ridmap", "rshared"]}
  ],
  "process": {
    "terminal": false,
    "consoleSize": {"height": 24, "width": 80},
    "user": {"uid": 1000, "gid": 1001, "umask": 18, "additionalGids": [5, 4294967295],
             "username": "app"},
    "args": ["/bin/app", "--flag"],
    "env": ["PATH=/bin", "EMPTY="],
    "cwd": "/home/app",
    "capabilities": {
      "bounding": ["CAP_CHOWN", "CAP_CHECKPOINT_RESTORE"],
      "effective": ["CAP_KILL"],
      "inheritable": [],
      "permitted": ["CAP_KILL", "CAP_SYS_ADMIN"],
      "ambient": ["CAP_NET_RAW"]
    },
    "rlimits": [
      {"type": "RLIMIT_NOFILE", "soft": 1024, "hard": 4096},
      {"type": "RLIMIT_CORE", "soft": 0, "hard": 18446744073709551615}
    ],
    "noNewPrivileges": true,
    "oomScoreAdj": -500,
    "apparmorProfile": "seerun-default",
    "selinuxLabel": "system_u:system_r:container_t:s0",
    "scheduler": {"policy": "SCHED_DEADLINE", "nice": -5, "priority": 7,
                  "flags": ["SCHED_FLAG_RESET_ON_FORK", "SCHED_FLAG_RECLAIM"],
                  "runtime": 10000000, "deadline": 20000000, "period": 30000000},
    "ioPriority": {"class": "IOPRIO_CLASS_BE", "priority": 4},
    "execCPUAffinity": {"initial": "0-1", "final": "2-3,7"}
  },
  "hooks": {
    "prestart": [{"path": "/usr/bin/prestart", "args": ["prestart", "--now"], "env": ["A=1"],
                  "timeout": 5}],
    "createRuntime": [{"path": "/usr/bin/create-runtime", "timeout": 1},
                      {"path": "/usr/bin/create-runtime-2"}],
    "createContainer": [{"path": "/usr/bin/create-container", "timeout": 2}],
    "startContainer": [{"path": "/usr/bin/start-container", "timeout": 3}],
    "poststart": [{"path": "/usr/bin/poststart", "timeout": 4}],
    "poststop": [{"path": "/usr/bin/poststop", "timeout": 2147483647}]
  },
  "linux": {
    "namespaces": [
      {"type": "user"}, {"type": "mount"}, {"type": "pid"},
      {"type": "network", "path": "/var/run/netns/box"}, {"type": "ipc"}, {"type": "uts"},
      {"type": "cgroup"}, {"type": "time"}
    ],
    "uidMappings": [{"containerID": 0, "hostID": 100000, "size": 65536}],
    "gidMappings": [{"containerID": 0, "hostID": 100000, "size": 65536},
                    {"containerID": 65536, "hostID": 300000, "size": 1}],
    "timeOffsets": {"monotonic": {"secs": -3600, "nanosecs": 500}, "boottime": {"secs": 86400}},
    "devices": [
      {"path": "/dev/fuse", "type": "c", "major": 10, "minor": 229, "fileMode": 438, "uid": 0,
       "gid": 5},
      {"path": "/dev/fifo", "type": "p"}
    ],
    "cgroupsPath": "/seerun/box",
    "resources": {
      "devices": [
        {"allow": false, "access": "rwm"},
        {"allow": true, "type": "c", "major": 10, "minor": 229, "access": "rw"}
      ],
      "memory": {"limit": 536870912, "reservation": 268435456, "swap": -1, "kernel": -1,
                 "kernelTCP": 1048576, "swappiness": 60, "disableOOMKiller": true,
                 "useHierarchy": true, "checkBeforeUpdate": true},
      "cpu": {"shares": 1024, "quota": 50000, "burst": 10000, "period": 100000,
              "realtimeRuntime": 950000, "realtimePeriod": 1000000, "cpus": "0-3,7",
              "mems": "0", "idle": 1},
      "pids": {"limit": 100},
      "blockIO": {
        "weight": 500, "leafWeight": 300,
        "weightDevice": [{"major": 8, "minor": 0, "weight": 700, "leafWeight": 200}],
        "throttleReadBpsDevice": [{"major": 8, "minor": 0, "rate": 1048576}],
        "throttleWriteBpsDevice": [{"major": 8, "minor": 16, "rate": 2097152}],
        "throttleReadIOPSDevice": [{"major": 8, "minor": 0, "rate": 100}],
        "throttleWriteIOPSDevice": [{"major": 8, "minor": 16, "rate": 18446744073709551615}]
      },
      "hugepageLimits": [{"pageSize": "2MB", "limit": 209715200},
                         {"pageSize": "1GB", "limit": 0}],
      "network": {"classID": 1048577, "priorities": [{"name": "eth0", "priority": 500}]},
      "rdma": {"mlx5_1": {"hcaHandles": 3, "hcaObjects": 10000}},
      "unified": {"memory.high": "max", "io.weight": "default 100"}
    },
    "sysctl": {"net.ipv4.ip_forward": "1", "kernel.shm_rmid_forced": "1"},
    "seccomp": {
      "defaultAction": "SCMP_ACT_ERRNO",
      "defaultErrnoRet": 38,
      "architectures": ["SCMP_ARCH_X86_64", "SCMP_ARCH_AARCH64"],
      "flags": ["SECCOMP_FILTER_FLAG_LOG", "SECCOMP_FILTER_FLAG_SPEC_ALLOW"],
      "listenerPath": "/run/seccomp-agent.sock",
      "listenerMetadata": "box",
      "syscalls": [
        {"names": ["read", "write"], "action": "SCMP_ACT_ALLOW"},
        {"names": ["personality"], "action": "SCMP_ACT_ALLOW",
         "args": [{"index": 0, "value": 18446744073709551615, "valueTwo": 9223372036854775808,
                   "op": "SCMP_CMP_MASKED_EQ"},
                  {"index": 5, "value": 0, "op": "SCMP_CMP_NE"}]},
        {"names": ["mkdir"], "action": "SCMP_ACT_NOTIFY"},
        {"names": ["ptrace"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1},
        {"names": ["kexec_load"], "action": "SCMP_ACT_KILL_PROCESS"}
      ]
    },
    "rootfsPropagation": "rslave",
    "maskedPaths": ["/proc/kcore"],
    "readonlyPaths": ["/proc/sys"],
    "mountLabel": "system_u:object_r:container_file_t:s0",
    "personality": {"domain": "LINUX32"}
  }
});
// clang-format on

static void every_field_of_the_config_lands_where_the_runtime_reads_it(void)
{
  struct sr_config *c;
  PARSE(EVERY_FIELD, c);
  if (c == NULL)
    return;
  CHECK_STR_EQ(c->oci_version, "1.3.0");
  CHECK_STR_EQ(c->root_path, "/var/lib/box/rootfs");
  CHECK(!c->root_readonly);
  CHECK_STR_EQ(c->hostname, "box");
  CHECK_STR_EQ(c->domainname, "example.org");
  CHECK_UINT_EQ(c->n_annotations, 2);
  CHECK_STR_EQ(sr_config_annotation(c, "org.example.owner"), "team-a");
  CHECK_STR_EQ(sr_config_annotation(c, "org.example.empty"), "");
  CHECK(sr_config_annotation(c, "org.example.absent") == NULL);

  /* Mounts: an idmapped rbind with its own mappings, a relative destination, a bind. */
  CHECK_UINT_EQ(c->n_mounts, 3);
  if (c->n_mounts == 3) {
    const struct sr_mount *m = &c->mounts[0];
    CHECK_STR_EQ(m->destination, "/data");
    CHECK_STR_EQ(m->source, "/srv/data");
    CHECK(m->opts.rbind && !m->opts.bind);
    CHECK_UINT_EQ(m->opts.flags, MS_BIND | MS_REC | MS_NOSUID);
    CHECK_UINT_EQ(m->opts.propagation, MS_PRIVATE | MS_REC);
    CHECK_UINT_EQ(m->opts.rec_attr_set, MOUNT_ATTR_RDONLY);
    CHECK(m->opts.idmap && !m->opts.ridmap);
    CHECK(m->opts.data == NULL);
    CHECK_UINT_EQ(m->n_uid_mappings, 1);
    CHECK_UINT_EQ(m->n_gid_mappings, 1);
    if (m->n_uid_mappings == 1 && m->n_gid_mappings == 1) {
      CHECK_UINT_EQ(m->uid_mappings[0].container_id, 0);
      CHECK_UINT_EQ(m->uid_mappings[0].host_id, 100000);
      CHECK_UINT_EQ(m->uid_mappings[0].size, 65536);
      CHECK_UINT_EQ(m->gid_mappings[0].host_id, 200000);
    }
    m = &c->mounts[1];
    CHECK_STR_EQ(m->destination, "/tmp"); /* relative destinations are relative to "/" */
    CHECK_UINT_EQ(m->opts.flags, MS_NOEXEC);
    CHECK_UINT_EQ(m->opts.clear, MS_RDONLY);
    CHECK(m->opts.tmpcopyup);
    CHECK_STR_EQ(m->opts.data, "size=64m");
    m = &c->mounts[2];
    CHECK(m->type == NULL);
    CHECK(m->opts.bind && !m->opts.rbind && m->opts.ridmap);
    CHECK_UINT_EQ(m->opts.propagation, MS_SHARED | MS_REC);
  }

  const struct sr_process *p = c->process;
  CHECK(p != NULL);
  if (p) {
    CHECK(!p->terminal);
    CHECK(p->has_console_size);
    CHECK_UINT_EQ(p->console_height, 24);
    CHECK_UINT_EQ(p->console_width, 80);
    CHECK_UINT_EQ(p->user.uid, 1000);
    CHECK_UINT_EQ(p->user.gid, 1001);
    CHECK(p->user.has_umask);
    CHECK_UINT_EQ(p->user.umask, 022);
    CHECK_UINT_EQ(p->user.n_additional_gids, 2);
    if (p->user.n_additional_gids == 2) {
      CHECK_UINT_EQ(p->user.additional_gids[0], 5);
      CHECK_UINT_EQ(p->user.additional_gids[1], 4294967295u);
    }
    CHECK_STR_EQ(p->user.username, "app");
    CHECK_UINT_EQ(p->n_args, 2);
    CHECK_STR_EQ(p->args[1], "--flag");
    CHECK_UINT_EQ(p->n_env, 2);
    CHECK_STR_EQ(p->env[1], "EMPTY=");
    CHECK_STR_EQ(p->cwd, "/home/app");
    CHECK(p->capabilities != NULL);
    if (p->capabilities) {
      const uint64_t *s = p->capabilities->sets;
      CHECK_UINT_EQ(s[SR_CAP_BOUNDING], CAP(CAP_CHOWN) | CAP(CAP_CHECKPOINT_RESTORE));
      CHECK_UINT_EQ(s[SR_CAP_EFFECTIVE], CAP(CAP_KILL));
      CHECK_UINT_EQ(s[SR_CAP_INHERITABLE], 0);
      CHECK_UINT_EQ(s[SR_CAP_PERMITTED], CAP(CAP_KILL) | CAP(CAP_SYS_ADMIN));
      CHECK_UINT_EQ(s[SR_CAP_AMBIENT], CAP(CAP_NET_RAW));
    }
    CHECK_UINT_EQ(p->n_rlimits, 2);
    if (p->n_rlimits == 2) {
      CHECK_INT_EQ(p->rlimits[0].resource, RLIMIT_NOFILE);
      CHECK_UINT_EQ(p->rlimits[0].soft, 1024);
      CHECK_UINT_EQ(p->rlimits[0].hard, 4096);
      CHECK_INT_EQ(p->rlimits[1].resource, RLIMIT_CORE);
      CHECK_UINT_EQ(p->rlimits[1].hard, UINT64_MAX); /* RLIM_INFINITY */
    }
    CHECK(p->no_new_privileges);
    CHECK(p->has_oom_score_adj);
    CHECK_INT_EQ(p->oom_score_adj, -500);
    CHECK_STR_EQ(p->apparmor_profile, "seerun-default");
    CHECK_STR_EQ(p->selinux_label, "system_u:system_r:container_t:s0");
    CHECK(p->scheduler != NULL);
    if (p->scheduler) {
      CHECK_INT_EQ(p->scheduler->policy, 6); /* SCHED_DEADLINE */
      CHECK_INT_EQ(p->scheduler->nice, -5);
      CHECK_INT_EQ(p->scheduler->priority, 7);
      CHECK_UINT_EQ(p->scheduler->flags, 0x01 | 0x02); /* RESET_ON_FORK | RECLAIM */
      CHECK_UINT_EQ(p->scheduler->runtime, 10000000);
      CHECK_UINT_EQ(p->scheduler->deadline, 20000000);
      CHECK_UINT_EQ(p->scheduler->period, 30000000);
    }
    CHECK(p->io_priority != NULL);
    if (p->io_priority) {
      CHECK_INT_EQ(p->io_priority->klass, 2); /* IOPRIO_CLASS_BE */
      CHECK_INT_EQ(p->io_priority->priority, 4);
    }
    CHECK_STR_EQ(p->cpu_affinity_initial, "0-1");
    CHECK_STR_EQ(p->cpu_affinity_final, "2-3,7");
  }

  /* Hooks: all six kinds, in order, with their timeouts. */
  static const char *hook_paths[SR_HOOK_COUNT] = {
      [SR_HOOK_PRESTART] = "/usr/bin/prestart",
      [SR_HOOK_CREATE_RUNTIME] = "/usr/bin/create-runtime",
      [SR_HOOK_CREATE_CONTAINER] = "/usr/bin/create-container",
      [SR_HOOK_START_CONTAINER] = "/usr/bin/start-container",
      [SR_HOOK_POSTSTART] = "/usr/bin/poststart",
      [SR_HOOK_POSTSTOP] = "/usr/bin/poststop",
  };
  static const int64_t hook_timeouts[SR_HOOK_COUNT] = {5, 1, 2, 3, 4, 2147483647};
  for (int k = 0; k < SR_HOOK_COUNT; k++) {
    CHECK_UINT_EQ(c->hooks.n[k], k == SR_HOOK_CREATE_RUNTIME ? 2 : 1);
    if (c->hooks.n[k] >= 1) {
      CHECK_STR_EQ(c->hooks.list[k][0].path, hook_paths[k]);
      CHECK_INT_EQ(c->hooks.list[k][0].timeout, hook_timeouts[k]);
    }
  }
  if (c->hooks.n[SR_HOOK_PRESTART] == 1) {
    const struct sr_hook *h = &c->hooks.list[SR_HOOK_PRESTART][0];
    CHECK_UINT_EQ(h->n_args, 2);
    CHECK_STR_EQ(h->args[1], "--now");
    CHECK_UINT_EQ(h->n_env, 1);
    CHECK_STR_EQ(h->env[0], "A=1");
  }
  if (c->hooks.n[SR_HOOK_CREATE_RUNTIME] == 2) {
    CHECK_STR_EQ(c->hooks.list[SR_HOOK_CREATE_RUNTIME][1].path, "/usr/bin/create-runtime-2");
    CHECK_INT_EQ(c->hooks.list[SR_HOOK_CREATE_RUNTIME][1].timeout, 0); /* none */
  }

  const struct sr_linux *l = &c->linux_;
  for (int k = 0; k < SR_NS_COUNT; k++) {
    CHECK(l->namespaces[k].present);
    if (k == SR_NS_NET)
      CHECK_STR_EQ(l->namespaces[k].path, "/var/run/netns/box");
    else
      CHECK(l->namespaces[k].path == NULL);
  }
  CHECK_UINT_EQ(l->n_uid_mappings, 1);
  CHECK_UINT_EQ(l->n_gid_mappings, 2);
  if (l->n_gid_mappings == 2) {
    CHECK_UINT_EQ(l->gid_mappings[1].container_id, 65536);
    CHECK_UINT_EQ(l->gid_mappings[1].host_id, 300000);
    CHECK_UINT_EQ(l->gid_mappings[1].size, 1);
  }
  CHECK(l->time_monotonic.set);
  CHECK_INT_EQ(l->time_monotonic.secs, -3600);
  CHECK_UINT_EQ(l->time_monotonic.nanosecs, 500);
  CHECK(l->time_boottime.set);
  CHECK_INT_EQ(l->time_boottime.secs, 86400);
  CHECK_UINT_EQ(l->time_boottime.nanosecs, 0);
  CHECK_UINT_EQ(l->n_devices, 2);
  if (l->n_devices == 2) {
    const struct sr_device *d = &l->devices[0];
    CHECK_INT_EQ(d->type, 'c');
    CHECK_STR_EQ(d->path, "/dev/fuse");
    CHECK_INT_EQ(d->major, 10);
    CHECK_INT_EQ(d->minor, 229);
    CHECK(d->has_file_mode);
    CHECK_UINT_EQ(d->file_mode, 0666);
    CHECK(d->has_uid && d->has_gid);
    CHECK_UINT_EQ(d->gid, 5);
    CHECK_INT_EQ(l->devices[1].type, 'p');
    CHECK(!l->devices[1].has_file_mode);
  }
  CHECK_STR_EQ(l->cgroups_path, "/seerun/box");

  const struct sr_resources *r = l->resources;
  CHECK(r != NULL);
  if (r) {
    CHECK_UINT_EQ(r->n_devices, 2);
    if (r->n_devices == 2) {
      CHECK(r->devices[1].allow);
      CHECK_INT_EQ(r->devices[1].type, 'c');
      CHECK_INT_EQ(r->devices[1].major, 10);
      CHECK_INT_EQ(r->devices[1].minor, 229);
      CHECK_STR_EQ(r->devices[1].access, "rw");
    }
    CHECK(r->memory.limit.set);
    CHECK_INT_EQ(r->memory.limit.v, 536870912);
    CHECK_INT_EQ(r->memory.reservation.v, 268435456);
    CHECK(r->memory.swap.set);
    CHECK_INT_EQ(r->memory.swap.v, -1); /* unlimited */
    CHECK_INT_EQ(r->memory.kernel.v, -1);
    CHECK_INT_EQ(r->memory.kernel_tcp.v, 1048576);
    CHECK(r->memory.swappiness.set);
    CHECK_UINT_EQ(r->memory.swappiness.v, 60);
    CHECK(r->memory.has_disable_oom_killer && r->memory.disable_oom_killer);
    CHECK(r->memory.has_use_hierarchy && r->memory.use_hierarchy);
    CHECK(r->memory.check_before_update);
    CHECK_UINT_EQ(r->cpu.shares.v, 1024);
    CHECK_INT_EQ(r->cpu.quota.v, 50000);
    CHECK_UINT_EQ(r->cpu.burst.v, 10000);
    CHECK_UINT_EQ(r->cpu.period.v, 100000);
    CHECK_INT_EQ(r->cpu.realtime_runtime.v, 950000);
    CHECK_UINT_EQ(r->cpu.realtime_period.v, 1000000);
    CHECK(r->cpu.idle.set);
    CHECK_INT_EQ(r->cpu.idle.v, 1);
    CHECK_STR_EQ(r->cpu.cpus, "0-3,7");
    CHECK_STR_EQ(r->cpu.mems, "0");
    CHECK(r->pids_limit.set);
    CHECK_INT_EQ(r->pids_limit.v, 100);
    CHECK_UINT_EQ(r->block_io.weight.v, 500);
    CHECK_UINT_EQ(r->block_io.leaf_weight.v, 300);
    CHECK_UINT_EQ(r->block_io.n_weight_devices, 1);
    if (r->block_io.n_weight_devices == 1) {
      CHECK_INT_EQ(r->block_io.weight_devices[0].major, 8);
      CHECK_UINT_EQ(r->block_io.weight_devices[0].weight.v, 700);
      CHECK_UINT_EQ(r->block_io.weight_devices[0].leaf_weight.v, 200);
    }
    static const uint64_t rates[4] = {1048576, 2097152, 100, UINT64_MAX};
    for (int i = 0; i < 4; i++) {
      CHECK_UINT_EQ(r->block_io.n_throttle[i], 1);
      if (r->block_io.n_throttle[i] == 1)
        CHECK_UINT_EQ(r->block_io.throttle[i][0].rate, rates[i]);
    }
    CHECK_UINT_EQ(r->n_hugepage_limits, 2);
    if (r->n_hugepage_limits == 2) {
      CHECK_STR_EQ(r->hugepage_limits[0].page_size, "2MB");
      CHECK_UINT_EQ(r->hugepage_limits[0].limit, 209715200);
      CHECK_STR_EQ(r->hugepage_limits[1].page_size, "1GB");
    }
    CHECK(r->network.has_class_id);
    CHECK_UINT_EQ(r->network.class_id, 1048577);
    CHECK_UINT_EQ(r->network.n_priorities, 1);
    if (r->network.n_priorities == 1) {
      CHECK_STR_EQ(r->network.priorities[0].name, "eth0");
      CHECK_UINT_EQ(r->network.priorities[0].priority, 500);
    }
    CHECK_UINT_EQ(r->n_rdma, 1);
    if (r->n_rdma == 1) {
      CHECK_STR_EQ(r->rdma[0].device, "mlx5_1");
      CHECK_UINT_EQ(r->rdma[0].hca_handles.v, 3);
      CHECK_UINT_EQ(r->rdma[0].hca_objects.v, 10000);
    }
    CHECK_UINT_EQ(r->n_unified, 2);
    if (r->n_unified == 2) {
      CHECK_STR_EQ(r->unified_keys[0], "memory.high");
      CHECK_STR_EQ(r->unified_values[0], "max");
      CHECK_STR_EQ(r->unified_keys[1], "io.weight");
      CHECK_STR_EQ(r->unified_values[1], "default 100");
    }
  }
  CHECK_UINT_EQ(l->n_sysctl, 2);
  if (l->n_sysctl == 2) {
    CHECK_STR_EQ(l->sysctl_keys[0], "net.ipv4.ip_forward");
    CHECK_STR_EQ(l->sysctl_values[0], "1");
  }

  const struct sr_seccomp *s = l->seccomp;
  CHECK(s != NULL);
  if (s) {
    CHECK_UINT_EQ(s->default_action, SCMP_ACT_ERRNO(38)); /* ENOSYS, folded in */
    CHECK_UINT_EQ(s->n_architectures, 2);
    if (s->n_architectures == 2) {
      CHECK_UINT_EQ(s->architectures[0], SCMP_ARCH_X86_64);
      CHECK_UINT_EQ(s->architectures[1], SCMP_ARCH_AARCH64);
    }
    CHECK_UINT_EQ(s->flags, SECCOMP_FILTER_FLAG_LOG | SECCOMP_FILTER_FLAG_SPEC_ALLOW);
    CHECK_STR_EQ(s->listener_path, "/run/seccomp-agent.sock");
    CHECK_STR_EQ(s->listener_metadata, "box");
    CHECK(s->uses_notify);
    CHECK_UINT_EQ(s->n_rules, 5);
    if (s->n_rules == 5) {
      CHECK_UINT_EQ(s->rules[0].n_names, 2);
      CHECK_STR_EQ(s->rules[0].names[1], "write");
      CHECK_UINT_EQ(s->rules[0].action, SCMP_ACT_ALLOW);
      CHECK_UINT_EQ(s->rules[0].n_args, 0);
      CHECK_UINT_EQ(s->rules[1].n_args, 2);
      if (s->rules[1].n_args == 2) {
        CHECK_UINT_EQ(s->rules[1].args[0].index, 0);
        CHECK_INT_EQ(s->rules[1].args[0].op, SCMP_CMP_MASKED_EQ);
        CHECK_UINT_EQ(s->rules[1].args[1].index, 5);
        CHECK_INT_EQ(s->rules[1].args[1].op, SCMP_CMP_NE);
      }
      CHECK_UINT_EQ(s->rules[2].action, SCMP_ACT_NOTIFY);
      CHECK_UINT_EQ(s->rules[3].action, SCMP_ACT_ERRNO(1));
      CHECK_UINT_EQ(s->rules[4].action, SCMP_ACT_KILL_PROCESS);
    }
  }
  CHECK_UINT_EQ(l->rootfs_propagation, MS_SLAVE | MS_REC);
  CHECK_UINT_EQ(l->n_masked_paths, 1);
  CHECK_UINT_EQ(l->n_readonly_paths, 1);
  CHECK_STR_EQ(l->mount_label, "system_u:object_r:container_file_t:s0");
  CHECK(l->has_personality);
  CHECK_UINT_EQ(l->personality, PER_LINUX32);
  sr_config_free(c);
}

// clang-format off
static void numbers_above_int64_max_survive_exactly(void)
{
  struct sr_config *c;
  PARSE(EVERY_FIELD, c);
  if (c == NULL || c->linux_.seccomp == NULL || c->linux_.seccomp->n_rules < 2 ||
      c->linux_.seccomp->rules[1].n_args < 1) {
    unit_fail(__FILE__, __LINE__, "EVERY_FIELD has no seccomp argument condition");
    if (c)
      sr_config_free(c);
    return;
  }
  const struct sr_seccomp_arg *arg = &c->linux_.seccomp->rules[1].args[0];
  CHECK_UINT_EQ(arg->value, UINT64_C(18446744073709551615));
  CHECK_UINT_EQ(arg->value_two, UINT64_C(9223372036854775808));
  sr_config_free(c);

  /* One past the end of each range is refused, never wrapped or clamped. */
  REFUSED(CONFIG_WITH("linux", JSON({"namespaces": [{"type": "mount"}], "seccomp": {
                        "defaultAction": "SCMP_ACT_ALLOW",
                        "syscalls": [{"names": ["read"], "action": "SCMP_ACT_ERRNO",
                                      "args": [{"index": 0, "value": 18446744073709551616,
                                                "op": "SCMP_CMP_EQ"}]}]}})),
          "config.json: linux.seccomp.syscalls[0].args[0].value: 18446744073709551616 is out of "
          "range [0, 18446744073709551615]");
  REFUSED(CONFIG_WITH("linux", JSON({"namespaces": [{"type": "mount"}],
                                     "resources": {"memory": {"limit": 9223372036854775808}}})),
          "config.json: linux.resources.memory.limit: 9223372036854775808 is out of range");
  REFUSED(CONFIG_WITH("linux", JSON({"namespaces": [{"type": "mount"}],
                                     "resources": {"memory": {"limit": 1e9}}})),
          "config.json: linux.resources.memory.limit: must be an integer");
}

static void every_supported_oci_version_is_accepted(void)
{
  static const char *versions[] = {"1.0.0", "1.0.2-dev", "1.1.0",
                                   "1.2.1", "1.3.0",     "1.1.0-rc.1+build.5"};
  for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]); i++) {
    char value[64];
    struct sr_config *c;
    snprintf(value, sizeof(value), "\"%s\"", versions[i]);
    PARSE(CONFIG_WITH("ociVersion", value), c);
    if (c) {
      CHECK_STR_EQ(c->oci_version, versions[i]);
      sr_config_free(c);
    }
  }
}

static void mount_options_split_into_flags_propagation_and_data(void)
{
  struct sr_config *c;
  PARSE(CONFIG_WITH("mounts", JSON([{"destination": "/data", "type": "none", "source": "/srv",
                                     "options": ["ro", "nosuid", "nodev", "noexec", "relatime",
                                                 "rbind", "rprivate", "rro", "size=65536k",
                                                 "mode=755"]}])),
        c);
  if (c == NULL)
    return;
  CHECK_UINT_EQ(c->n_mounts, 1);
  if (c->n_mounts == 1) {
    const struct sr_mount_opts *o = &c->mounts[0].opts;
    CHECK_UINT_EQ(o->flags,
                  MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RELATIME | MS_BIND | MS_REC);
    CHECK(o->rbind && !o->bind);
    CHECK_UINT_EQ(o->propagation, MS_PRIVATE | MS_REC);
    CHECK_UINT_EQ(o->rec_attr_set, MOUNT_ATTR_RDONLY);
    CHECK_UINT_EQ(o->rec_attr_clr, 0);
    CHECK(!o->rec_atime_set);
    CHECK_STR_EQ(o->data, "size=65536k,mode=755");
    CHECK_UINT_EQ(c->mounts[0].n_options, 10); /* the strings are kept as written, too */
  }
  sr_config_free(c);

  /* The last of two contradicting flags wins, as with mount(8). */
  PARSE(CONFIG_WITH("mounts", JSON([{"destination": "/tmp", "type": "tmpfs", "source": "tmpfs",
                                     "options": ["ro", "rw", "noexec", "exec", "rnoatime"]}])),
        c);
  if (c == NULL)
    return;
  if (c->n_mounts == 1) {
    const struct sr_mount_opts *o = &c->mounts[0].opts;
    CHECK_UINT_EQ(o->flags, 0);
    CHECK_UINT_EQ(o->clear, MS_RDONLY | MS_NOEXEC);
    CHECK(o->rec_atime_set);
    CHECK_UINT_EQ(o->rec_atime, MOUNT_ATTR_NOATIME);
    CHECK(o->data == NULL);
  }
  sr_config_free(c);
}

static void exec_process_json_parses_on_its_own(void)
{
  struct sr_arena a = {0};
  struct sr_process *p = NULL;
  sr_error_t err = NULL;
  const char *json = JSON({"user": {"uid": 5, "gid": 6}, "args": ["ls", "-l"], "cwd": "/tmp"});
  CHECK_OK(sr_config_parse_process(json, strlen(json), "process.json", &a, &p, &err), err);
  if (p) {
    CHECK_UINT_EQ(p->user.uid, 5);
    CHECK_STR_EQ(p->args[1], "-l");
    CHECK_STR_EQ(p->cwd, "/tmp");
  }
  sr_error_free(&err);

  json = JSON({"user": {"uid": 5, "gid": 6}, "args": [], "cwd": "/tmp"});
  CHECK(sr_config_parse_process(json, strlen(json), "process.json", &a, &p, &err) < 0);
  CHECK_ERR_CONTAINS(err, "process.json: args: must be a non-empty array");
  sr_error_free(&err);
  sr_arena_release(&a);
}

/* ---------------------------------------------------------------------------------------------
 * Bad configs: each refusal names config.json and the field.
 */

static void a_document_that_is_not_a_json_object_is_refused(void)
{
  REFUSED("{\"ociVersion\": ", "config.json: invalid JSON");
  REFUSED("{\"ociVersion\": \"1.2.1\",}", "config.json: invalid JSON");
  REFUSED(JSON({"ociVersion": "1.2.1", "root": {"path": "rootfs"}} trailing),
          "config.json: invalid JSON");
  REFUSED("", "config.json: invalid JSON");
  static const char with_nul[] = "{\"ociVersion\": \"1.2.1\0\", \"root\": {\"path\": \"r\"}}";
  REFUSED_LEN(with_nul, sizeof(with_nul) - 1, "config.json: invalid JSON: contains a NUL byte");
  REFUSED("[]", "config.json: document: must be an object");
  REFUSED("\"config\"", "config.json: document: must be an object");
  REFUSED("42", "config.json: document: must be an object");
  REFUSED("null", "config.json: document: must be an object");
}

static char *nested(size_t depth, const char *before, const char *after)
{
  size_t lb = strlen(before), la = strlen(after);
  char *s = malloc(lb + 2 * depth + la + 1);
  if (s == NULL)
    abort();
  memcpy(s, before, lb);
  memset(s + lb, '[', depth);
  memset(s + lb + depth, ']', depth);
  memcpy(s + lb + 2 * depth, after, la + 1);
  return s;
}

static void a_deep_nesting_bomb_is_refused_without_crashing(void)
{
  char *s = nested(1000, "", "");
  REFUSED(s, "config.json: invalid JSON: nested more than 64 levels deep");
  free(s);
  s = nested(1000, "{\"ociVersion\": \"1.2.1\", \"x\": ", "}");
  REFUSED(s, "nested more than 64 levels deep");
  free(s);
  /* Comments are not JSON (yajl would accept them); a quote inside one cannot hide a bomb. */
  s = nested(100000, "{\"ociVersion\": \"1.2.1\", /* \" */ \"x\": ", " /* \" */}");
  REFUSED(s, "config.json: invalid JSON: comments are not allowed");
  free(s);
  s = nested(100000, "{\"ociVersion\": \"1.2.1\", // \"\n \"x\": ", "\n// \"\n}");
  REFUSED(s, "config.json: invalid JSON: comments are not allowed");
  free(s);
  /* A NUL escaped inside a string would cut the value short. */
  REFUSED(CONFIG_WITH("hostname", JSON("a\u0000b")),
          "config.json: invalid JSON: a string contains \\u0000");
  /* Brackets inside strings are text, not nesting. */
  s = nested(100, "{\"ociVersion\": \"1.2.1\", \"root\": {\"path\": \"/x\\\"",
             "\"}, \"linux\": {\"namespaces\": [{\"type\": \"mount\"}]}}");
  struct sr_config *c;
  PARSE(s, c);
  if (c) {
    CHECK_UINT_EQ(strlen(c->root_path), 3 + 200);
    CHECK(strncmp(c->root_path, "/x\"[[[", 6) == 0);
    sr_config_free(c);
  }
  free(s);
}

/* Issue 17: inputs runc refuses or cleans, and the spec's MUSTs. */
static void bad_text_labels_and_idmaps_are_refused_and_destinations_cleaned(void)
{
  REFUSED(CONFIG_WITH("hostname", JSON("a\ud800")),
          "config.json: invalid JSON: a string contains a lone UTF-16 surrogate \\ud800");
  REFUSED(CONFIG_WITH("hostname", JSON("\udc00a")), "lone UTF-16 surrogate \\udc00");
  REFUSED(CONFIG_WITH("hostname", JSON("\ud800\u0041")), "lone UTF-16 surrogate \\ud800");
  REFUSED(CONFIG_WITH("hostname", JSON("\ud800")), "lone UTF-16 surrogate");
  struct sr_config *c;
  PARSE(CONFIG_WITH("hostname", JSON("\ud83d\ude00"),
                    "linux", JSON({"namespaces": [{"type": "mount"}, {"type": "uts"}]})), c);
  if (c) {
    CHECK_STR_EQ(c->hostname, "\xf0\x9f\x98\x80");
    sr_config_free(c);
  }

  static const char *const bad_labels[] = {
      JSON({"namespaces": [{"type": "mount"}], "mountLabel": "garbage"}),
      JSON({"namespaces": [{"type": "mount"}], "mountLabel": "u:r"}),
      JSON({"namespaces": [{"type": "mount"}], "mountLabel": "u:r:t:s0,uid=0"}),
      JSON({"namespaces": [{"type": "mount"}], "mountLabel": "u::t"}),
      JSON({"namespaces": [{"type": "mount"}], "mountLabel": "u r:t:s0"})};
  for (size_t i = 0; i < sizeof(bad_labels) / sizeof(bad_labels[0]); i++)
    REFUSED(CONFIG_WITH("linux", bad_labels[i]), "config.json: linux.mountLabel: ");
  PARSE(CONFIG_WITH("linux", JSON({"namespaces": [{"type": "mount"}],
                                   "mountLabel": "system_u:object_r:container_file_t:s0:c1,c2"})),
        c);
  if (c)
    sr_config_free(c);

  REFUSED(CONFIG_WITH("mounts", JSON([{"destination": "/t", "type": "tmpfs", "options": ["idmap"]}])),
          "config.json: mounts[0].options: \"idmap\" is only supported on a bind mount");

  PARSE(CONFIG_WITH("mounts", JSON([{"destination": "/../../proc/../tmp/./x/../up//", "type": "tmpfs"},
                                    {"destination": "rel/../..", "type": "tmpfs"}])),
        c);
  if (c) {
    CHECK_STR_EQ(c->mounts[0].destination, "/tmp/up");
    CHECK_STR_EQ(c->mounts[1].destination, "/");
    sr_config_free(c);
  }
}

static void a_config_without_a_supported_oci_version_is_refused(void)
{
  REFUSED(CONFIG_WITH("ociVersion", OMIT), "config.json: ociVersion: required");
  REFUSED(CONFIG_WITH("ociVersion", JSON(1.2)), "config.json: ociVersion: must be a string");
  REFUSED(CONFIG_WITH("ociVersion", JSON("2.0.0")),
          "config.json: ociVersion: 2.0.0 is not supported");
  REFUSED(CONFIG_WITH("ociVersion", JSON("0.9.0")),
          "config.json: ociVersion: 0.9.0 is not supported");
  REFUSED(CONFIG_WITH("ociVersion", JSON("1.4.0")),
          "config.json: ociVersion: 1.4.0 is not supported");
  static const char *not_semver[] = {"abc", "1.2", "1.2.3.4", "v1.2.1", " 1.2.1", "1. 2.1",
                                     "1.-0.0", "1.+0.0", "01.2.1", "1.2.1-", "1.2.1 ",
                                     /* wrapped to 1.0.0 by sscanf("%u") */ "4294967297.0.0"};
  for (size_t i = 0; i < sizeof(not_semver) / sizeof(not_semver[0]); i++) {
    char value[64], expected[128];
    snprintf(value, sizeof(value), "\"%s\"", not_semver[i]);
    snprintf(expected, sizeof(expected), "config.json: ociVersion: \"%s\" is not a SemVer version",
             not_semver[i]);
    REFUSED(CONFIG_WITH("ociVersion", value), expected);
  }
}

static void a_config_without_a_root_is_refused(void)
{
  REFUSED(CONFIG_WITH("root", OMIT), "config.json: root: required");
  REFUSED(CONFIG_WITH("root", JSON({"readonly": true})), "config.json: root.path: required");
  REFUSED(CONFIG_WITH("root", JSON({"path": ""})), "config.json: root.path: must not be empty");
  REFUSED(CONFIG_WITH("root", JSON("rootfs")), "config.json: root: must be an object");
}

static void a_process_without_a_command_is_refused(void)
{
  REFUSED(CONFIG_WITH("process", JSON({"user": {"uid": 0, "gid": 0}, "cwd": "/"})),
          "config.json: process.args: must be a non-empty array");
  REFUSED(CONFIG_WITH("process", JSON({"user": {"uid": 0, "gid": 0}, "args": [], "cwd": "/"})),
          "config.json: process.args: must be a non-empty array");
  REFUSED(CONFIG_WITH("process", JSON({"user": {"uid": 0, "gid": 0}, "args": [""], "cwd": "/"})),
          "config.json: process.args: must be a non-empty array");
  REFUSED(CONFIG_WITH("process",
                      JSON({"user": {"uid": 0, "gid": 0}, "args": ["sh", 1], "cwd": "/"})),
          "config.json: process.args[1]: must be a string");
  REFUSED(CONFIG_WITH("process", JSON({"user": {"uid": 0, "gid": 0}, "args": "sh", "cwd": "/"})),
          "config.json: process.args: must be an array");
}

static void a_process_with_a_bad_cwd_or_env_is_refused(void)
{
  REFUSED(CONFIG_WITH("process", JSON({"user": {"uid": 0, "gid": 0}, "args": ["sh"]})),
          "config.json: process.cwd: required");
  REFUSED(CONFIG_WITH("process",
                      JSON({"user": {"uid": 0, "gid": 0}, "args": ["sh"], "cwd": "home/app"})),
          "config.json: process.cwd: must be an absolute path, got \"home/app\"");
  REFUSED(CONFIG_WITH("process", JSON({"user": {"uid": 0, "gid": 0}, "args": ["sh"], "cwd": "/",
                                       "env": ["PATH=/bin", "NOVALUE"]})),
          "config.json: process.env[1]: \"NOVALUE\" is not of the form NAME=VALUE");
  REFUSED(CONFIG_WITH("process", JSON({"user": {"uid": 0, "gid": 0}, "args": ["sh"], "cwd": "/",
                                       "env": ["=value"]})),
          "config.json: process.env[0]: \"=value\" is not of the form NAME=VALUE");
}

static void a_process_with_a_bad_user_is_refused(void)
{
  REFUSED(CONFIG_WITH("process", JSON({"args": ["sh"], "cwd": "/"})),
          "config.json: process.user: required");
  REFUSED(CONFIG_WITH("process", JSON({"user": {"gid": 0}, "args": ["sh"], "cwd": "/"})),
          "config.json: process.user.uid: required");
  REFUSED(CONFIG_WITH("process", JSON({"user": {"uid": -1, "gid": 0}, "args": ["sh"], "cwd": "/"})),
          "config.json: process.user.uid: -1 is out of range [0, 4294967295]");
  REFUSED(CONFIG_WITH("process",
                      JSON({"user": {"uid": 4294967296, "gid": 0}, "args": ["sh"], "cwd": "/"})),
          "config.json: process.user.uid: 4294967296 is out of range [0, 4294967295]");
  REFUSED(CONFIG_WITH("process",
                      JSON({"user": {"uid": 1.5, "gid": 0}, "args": ["sh"], "cwd": "/"})),
          "config.json: process.user.uid: must be an integer");
  REFUSED(CONFIG_WITH("process",
                      JSON({"user": {"uid": "0", "gid": 0}, "args": ["sh"], "cwd": "/"})),
          "config.json: process.user.uid: must be an integer");
  REFUSED(CONFIG_WITH("process", JSON({"user": {"uid": 0, "gid": 0, "additionalGids": [1, -5]},
                                       "args": ["sh"], "cwd": "/"})),
          "config.json: process.user.additionalGids[1]: -5 is out of range");
}

static void unknown_capabilities_and_bad_rlimits_are_refused(void)
{
  REFUSED(CONFIG_WITH("process", JSON({"user": {"uid": 0, "gid": 0}, "args": ["sh"], "cwd": "/",
                                       "capabilities": {"bounding": ["CAP_KILL", "CAP_FOO"]}})),
          "config.json: process.capabilities.bounding[1]: unknown capability \"CAP_FOO\"");
  REFUSED(CONFIG_WITH("process", JSON({"user": {"uid": 0, "gid": 0}, "args": ["sh"], "cwd": "/",
                                       "rlimits": [{"type": "RLIMIT_FOO", "soft": 1,
                                                    "hard": 1}]})),
          "config.json: process.rlimits[0].type: unknown rlimit \"RLIMIT_FOO\"");
  REFUSED(CONFIG_WITH("process",
                      JSON({"user": {"uid": 0, "gid": 0}, "args": ["sh"], "cwd": "/",
                            "rlimits": [{"type": "RLIMIT_NOFILE", "soft": 1, "hard": 1},
                                        {"type": "RLIMIT_NOFILE", "soft": 2, "hard": 2}]})),
          "config.json: process.rlimits[1].type: duplicate rlimit \"RLIMIT_NOFILE\"");
  REFUSED(CONFIG_WITH("process", JSON({"user": {"uid": 0, "gid": 0}, "args": ["sh"], "cwd": "/",
                                       "rlimits": [{"type": "RLIMIT_NOFILE", "soft": 2048,
                                                    "hard": 1024}]})),
          "config.json: process.rlimits[0]: soft limit exceeds the hard limit");
  REFUSED(CONFIG_WITH("process", JSON({"user": {"uid": 0, "gid": 0}, "args": ["sh"], "cwd": "/",
                                       "rlimits": [{"type": "RLIMIT_NOFILE", "soft": 1}]})),
          "config.json: process.rlimits[0].hard: required");
}

static void bad_namespaces_are_refused(void)
{
  REFUSED(CONFIG_WITH("linux", JSON({"namespaces": [{"type": "mount"}, {"type": "foo"}]})),
          "config.json: linux.namespaces[1].type: unknown namespace type \"foo\"");
  REFUSED(CONFIG_WITH("linux", JSON({"namespaces": [{"type": "mount"}, {"type": "mount"}]})),
          "config.json: linux.namespaces[1].type: duplicate namespace \"mount\"");
  REFUSED(CONFIG_WITH("linux", JSON({"namespaces": [{"type": "mount"},
                                                    {"type": "network", "path": "netns/x"}]})),
          "config.json: linux.namespaces[1].path: must be an absolute path, got \"netns/x\"");
  /* No mount namespace: the runtime's (runtime.md); the policy decides whether it may run.
   * Nothing can be masked or made read-only there. */
  struct sr_config *c;
  PARSE(CONFIG_WITH("linux", JSON({"namespaces": [{"type": "pid"}]})), c);
  if (c) {
    CHECK(!c->linux_.namespaces[SR_NS_MOUNT].present);
    sr_config_free(c);
  }
  REFUSED(CONFIG_WITH("linux", JSON({"namespaces": [{"type": "pid"}],
                                     "maskedPaths": ["/proc/kcore"]})),
          "config.json: linux.maskedPaths: needs a mount namespace of the container's own");
  REFUSED(CONFIG_WITH("linux", JSON({"readonlyPaths": ["/proc/sys"]})),
          "config.json: linux.readonlyPaths: needs a mount namespace of the container's own");
  REFUSED(CONFIG_WITH("hostname", JSON("box")),
          "config.json: hostname: setting it needs a uts namespace");
  REFUSED(CONFIG_WITH("domainname", JSON("example.org")),
          "config.json: domainname: setting it needs a uts namespace");
}

static void user_namespace_mappings_must_match_the_namespaces(void)
{
  REFUSED(CONFIG_WITH("linux", JSON({"namespaces": [{"type": "mount"}],
                                     "uidMappings": [{"containerID": 0, "hostID": 1000,
                                                      "size": 1}],
                                     "gidMappings": [{"containerID": 0, "hostID": 1000,
                                                      "size": 1}]})),
          "config.json: linux.uidMappings: given without a user namespace");
  REFUSED(CONFIG_WITH("linux", JSON({"namespaces": [{"type": "user"}, {"type": "mount"}]})),
          "config.json: linux.uidMappings, linux.gidMappings: required with a new user namespace");
  REFUSED(CONFIG_WITH("linux", JSON({"namespaces": [{"type": "user"}, {"type": "mount"}],
                                     "uidMappings": [{"containerID": 0, "hostID": 1000,
                                                      "size": 0}]})),
          "config.json: linux.uidMappings[0].size: must be greater than zero");
  REFUSED(CONFIG_WITH("linux", JSON({"namespaces": [{"type": "user"}, {"type": "mount"}],
                                     "uidMappings": [{"containerID": 4294967295, "hostID": 1000,
                                                      "size": 2}]})),
          "config.json: linux.uidMappings[0]: range goes past 4294967295");
  REFUSED(CONFIG_WITH("linux", JSON({"namespaces": [{"type": "mount"}],
                                     "timeOffsets": {"monotonic": {"secs": 1}}})),
          "config.json: linux.timeOffsets: needs a new time namespace");
}

static void bad_mounts_are_refused(void)
{
  REFUSED(CONFIG_WITH("mounts", JSON([{"type": "tmpfs", "source": "tmpfs"}])),
          "config.json: mounts[0].destination: required");
  REFUSED(CONFIG_WITH("mounts", JSON([{"destination": "/proc", "type": "proc", "source": "proc"},
                                      {"destination": "", "type": "tmpfs", "source": "tmpfs"}])),
          "config.json: mounts[1].destination: must not be empty");
  REFUSED(CONFIG_WITH("mounts", JSON([{"destination": "/data", "source": "/srv/data"}])),
          "config.json: mounts[0].type: required for a mount that is not a bind mount");
  REFUSED(CONFIG_WITH("mounts", JSON([{"destination": "/data", "type": "none",
                                       "options": ["rbind"]}])),
          "config.json: mounts[0].source: required for a bind mount");
  REFUSED(CONFIG_WITH("mounts", JSON([{"destination": "/data", "type": "none", "source": "/srv",
                                       "options": ["rbind", "rprivate", "rslave"]}])),
          "config.json: mounts[0].options[2]: conflicting propagation option \"rslave\"");
  REFUSED(CONFIG_WITH("mounts", JSON([{"destination": "/data", "type": "none", "source": "/srv",
                                       "options": ["rbind", ""]}])),
          "config.json: mounts[0].options[1]: empty mount option");
  REFUSED(CONFIG_WITH("mounts", JSON([{"destination": "/data", "type": "none", "source": "/srv",
                                       "options": ["rbind"],
                                       "uidMappings": [{"containerID": 0, "hostID": 1,
                                                        "size": 1}],
                                       "gidMappings": [{"containerID": 0, "hostID": 1,
                                                        "size": 1}]}])),
          "config.json: mounts[0]: uidMappings need the \"idmap\" or \"ridmap\" option");
  REFUSED(CONFIG_WITH("mounts", JSON([{"destination": "/data", "type": "none", "source": "/srv",
                                       "options": ["rbind", "idmap"]}])),
          "config.json: mounts[0]: \"idmap\" without uidMappings needs a user namespace");
  REFUSED(CONFIG_WITH("mounts", JSON({"destination": "/proc"})),
          "config.json: mounts: must be an array");
  REFUSED(CONFIG_WITH("mounts", JSON(["/proc"])), "config.json: mounts[0]: must be an object");
}

/* The minimal process or linux object with more members: PROCESS_WITH(JSON("terminal": true)). */
#define PROCESS_WITH(members)                                                                      \
  CONFIG_WITH("process", "{\"user\": {\"uid\": 0, \"gid\": 0}, \"args\": [\"sh\"], "               \
                         "\"cwd\": \"/\", " members "}")
#define LINUX_WITH(members)                                                                        \
  CONFIG_WITH("linux", "{\"namespaces\": [{\"type\": \"mount\"}], " members "}")

#define SECCOMP_LINUX(seccomp)                                                                     \
  CONFIG_WITH("linux", "{\"namespaces\": [{\"type\": \"mount\"}], \"seccomp\": " seccomp "}")

static void a_bad_seccomp_profile_is_refused(void)
{
  REFUSED(SECCOMP_LINUX(JSON({"defaultAction": "SCMP_ACT_FOO"})),
          "config.json: linux.seccomp.defaultAction: unknown seccomp action \"SCMP_ACT_FOO\"");
  REFUSED(SECCOMP_LINUX(JSON({"architectures": ["SCMP_ARCH_X86_64"]})),
          "config.json: linux.seccomp.defaultAction: required");
  REFUSED(SECCOMP_LINUX(JSON({"defaultAction": "SCMP_ACT_ALLOW",
                              "syscalls": [{"names": ["read"], "action": "SCMP_ACT_MAYBE"}]})),
          "config.json: linux.seccomp.syscalls[0].action: unknown seccomp action "
          "\"SCMP_ACT_MAYBE\"");
  REFUSED(SECCOMP_LINUX(JSON({"defaultAction": "SCMP_ACT_ALLOW",
                              "architectures": ["SCMP_ARCH_X86_64", "SCMP_ARCH_Z80"]})),
          "config.json: linux.seccomp.architectures[1]: unknown architecture \"SCMP_ARCH_Z80\"");
  REFUSED(SECCOMP_LINUX(JSON({"defaultAction": "SCMP_ACT_ALLOW",
                              "flags": ["SECCOMP_FILTER_FLAG_FOO"]})),
          "config.json: linux.seccomp.flags[0]: unknown seccomp flag \"SECCOMP_FILTER_FLAG_FOO\"");
  REFUSED(SECCOMP_LINUX(JSON({"defaultAction": "SCMP_ACT_ALLOW",
                              "syscalls": [{"names": ["read"], "action": "SCMP_ACT_ERRNO",
                                            "args": [{"index": 0, "value": 1,
                                                      "op": "SCMP_CMP_ABOUT"}]}]})),
          "config.json: linux.seccomp.syscalls[0].args[0].op: unknown seccomp operator "
          "\"SCMP_CMP_ABOUT\"");
  REFUSED(SECCOMP_LINUX(JSON({"defaultAction": "SCMP_ACT_ALLOW",
                              "syscalls": [{"names": ["read", "not_a_syscall"],
                                            "action": "SCMP_ACT_ERRNO"}]})),
          "config.json: linux.seccomp.syscalls[0].names[1]: unknown syscall \"not_a_syscall\"");
  REFUSED(SECCOMP_LINUX(JSON({"defaultAction": "SCMP_ACT_ALLOW",
                              "syscalls": [{"names": ["read"], "action": "SCMP_ACT_ERRNO",
                                            "args": [{"index": 6, "value": 1,
                                                      "op": "SCMP_CMP_EQ"}]}]})),
          "config.json: linux.seccomp.syscalls[0].args[0].index: 6 is out of range [0, 5]");
  REFUSED(SECCOMP_LINUX(JSON({"defaultAction": "SCMP_ACT_ALLOW",
                              "syscalls": [{"names": ["mkdir"], "action": "SCMP_ACT_NOTIFY"}]})),
          "config.json: linux.seccomp.listenerPath: required when an action is SCMP_ACT_NOTIFY");
  REFUSED(SECCOMP_LINUX(JSON({"defaultAction": "SCMP_ACT_ALLOW", "listenerPath": "agent.sock",
                              "syscalls": [{"names": ["mkdir"], "action": "SCMP_ACT_NOTIFY"}]})),
          "config.json: linux.seccomp.listenerPath: must be an absolute path");
  REFUSED(SECCOMP_LINUX(JSON({"defaultAction": "SCMP_ACT_ERRNO", "defaultErrnoRet": 4096})),
          "config.json: linux.seccomp.defaultErrnoRet: 4096 is out of range [0, 4095]");
}

#define RESOURCES_LINUX(resources)                                                                 \
  CONFIG_WITH("linux", "{\"namespaces\": [{\"type\": \"mount\"}], \"resources\": " resources "}")

static void bad_devices_and_resources_are_refused(void)
{
  REFUSED(CONFIG_WITH("linux", JSON({"namespaces": [{"type": "mount"}],
                                     "devices": [{"path": "/dev/x", "type": "x", "major": 1,
                                                  "minor": 1}]})),
          "config.json: linux.devices[0].type: unknown device type \"x\"");
  REFUSED(CONFIG_WITH("linux", JSON({"namespaces": [{"type": "mount"}],
                                     "devices": [{"path": "dev/x", "type": "c", "major": 1,
                                                  "minor": 1}]})),
          "config.json: linux.devices[0].path: must be an absolute path below /");
  REFUSED(CONFIG_WITH("linux", JSON({"namespaces": [{"type": "mount"}],
                                     "devices": [{"path": "/dev/x", "type": "c"}]})),
          "config.json: linux.devices[0].major: required");
  REFUSED(RESOURCES_LINUX(JSON({"devices": [{"allow": true, "type": "c", "access": "rwx"}]})),
          "config.json: linux.resources.devices[0].access: \"rwx\" is not a combination of r, w "
          "and m");
  REFUSED(RESOURCES_LINUX(JSON({"devices": [{"allow": true, "type": "q"}]})),
          "config.json: linux.resources.devices[0].type: unknown device type \"q\"");
  REFUSED(RESOURCES_LINUX(JSON({"devices": [{"type": "c", "access": "r"}]})),
          "config.json: linux.resources.devices[0].allow: required");
  REFUSED(RESOURCES_LINUX(JSON({"hugepageLimits": [{"pageSize": "../x", "limit": 1}]})),
          "config.json: linux.resources.hugepageLimits[0].pageSize: invalid page size \"../x\"");
  REFUSED(RESOURCES_LINUX(JSON({"unified": {"memory.max": "1G", "../../x": "1"}})),
          "config.json: linux.resources.unified: invalid key \"../../x\"");
  REFUSED(RESOURCES_LINUX(JSON({"unified": {"memory.max": 1}})),
          "config.json: linux.resources.unified.memory.max: must be a string");
  REFUSED(RESOURCES_LINUX(JSON({"cpu": {"cpus": "abc"}})),
          "config.json: linux.resources.cpu.cpus: \"abc\" is not a list such as 0-3,7");
  REFUSED(RESOURCES_LINUX(JSON({"cpu": {"mems": "0;1"}})),
          "config.json: linux.resources.cpu.mems: \"0;1\" is not a list");
  REFUSED(RESOURCES_LINUX(JSON({"memory": {"swappiness": 101}})),
          "config.json: linux.resources.memory.swappiness: 101 is out of range [0, 100]");
  REFUSED(RESOURCES_LINUX(JSON({"pids": {"limit": -2}})),
          "config.json: linux.resources.pids.limit: -2 is out of range");
}

static void bad_hooks_are_refused(void)
{
  REFUSED(CONFIG_WITH("hooks", JSON({"prestart": [{"path": "bin/hook"}]})),
          "config.json: hooks.prestart[0].path: must be an absolute path, got \"bin/hook\"");
  REFUSED(CONFIG_WITH("hooks", JSON({"createRuntime": [{"path": "/bin/a", "timeout": 1},
                                                       {"path": "/bin/b", "timeout": 0}]})),
          "config.json: hooks.createRuntime[1].timeout: must be greater than zero");
  REFUSED(CONFIG_WITH("hooks", JSON({"poststop": [{"path": "/bin/a", "timeout": -1}]})),
          "config.json: hooks.poststop[0].timeout: must be greater than zero");
  REFUSED(CONFIG_WITH("hooks", JSON({"poststart": [{"args": ["a"]}]})),
          "config.json: hooks.poststart[0].path: required");
  REFUSED(CONFIG_WITH("hooks", JSON({"prestart": {"path": "/bin/a"}})),
          "config.json: hooks.prestart: must be an array");
}

static void sysctl_keys_cannot_escape_proc_sys(void)
{
  REFUSED(CONFIG_WITH("linux", JSON({"namespaces": [{"type": "mount"}],
                                     "sysctl": {"../../x": "1"}})),
          "config.json: linux.sysctl: invalid key \"../../x\"");
  REFUSED(CONFIG_WITH("linux", JSON({"namespaces": [{"type": "mount"}],
                                     "sysctl": {"net/../../../etc/x": "1"}})),
          "config.json: linux.sysctl: invalid key");
  REFUSED(CONFIG_WITH("linux", JSON({"namespaces": [{"type": "mount"}],
                                     "sysctl": {"/etc/passwd": "1"}})),
          "config.json: linux.sysctl: invalid key \"/etc/passwd\"");
}

static void sysctls_must_be_namespaced_and_in_a_namespace_of_the_container(void)
{
  /* Written through the runtime's procfs: anything else would change the host's kernel. */
  REFUSED(CONFIG_WITH("linux", JSON({"namespaces": [{"type": "mount"}, {"type": "network"}],
                                     "sysctl": {"vm.swappiness": "10"}})),
          "config.json: linux.sysctl: \"vm.swappiness\" is not namespaced: setting it would "
          "change the host");
  REFUSED(CONFIG_WITH("linux", JSON({"namespaces": [{"type": "mount"}],
                                     "sysctl": {"kernel.shmmax": "1"}})),
          "config.json: linux.sysctl: \"kernel.shmmax\" needs an ipc namespace of the container");
  REFUSED(CONFIG_WITH("linux", JSON({"namespaces": [{"type": "mount"}, {"type": "ipc"}],
                                     "sysctl": {"net.ipv4.ip_forward": "1"}})),
          "config.json: linux.sysctl: \"net.ipv4.ip_forward\" needs a network namespace");
  REFUSED(CONFIG_WITH("linux", JSON({"namespaces": [{"type": "mount"}, {"type": "network"}],
                                     "sysctl": {"kernel.domainname": "x"}})),
          "needs a uts namespace");
  REFUSED(CONFIG_WITH("linux", JSON({"namespaces": [{"type": "mount"}, {"type": "ipc"}],
                                     "sysctl": {"kernel.shm_next_id_x": "1"}})),
          "\"kernel.shm_next_id_x\" is not namespaced");
  struct sr_config *c;
  PARSE(CONFIG_WITH("linux", JSON({"namespaces": [{"type": "mount"}, {"type": "ipc"},
                                                  {"type": "uts"},
                                                  {"type": "network", "path": "/run/netns/a"}],
                                   "sysctl": {"net.ipv4.ip_forward": "1",
                                              "net/ipv4/conf/eth0.1/rp_filter": "1",
                                              "kernel.shmmni": "10", "kernel.sem": "1 2 3 4",
                                              "fs.mqueue.msg_max": "20",
                                              "kernel.domainname": "example"}})),
        c);
  if (c) {
    CHECK_UINT_EQ(c->linux_.n_sysctl, 6);
    sr_config_free(c);
  }
  CHECK(sr_config_sysctl_namespace("net.core.somaxconn") == SR_NS_NET);
  CHECK(sr_config_sysctl_namespace("kernel.msgmnb") == SR_NS_IPC);
  CHECK(sr_config_sysctl_namespace("kernel/hostname") == SR_NS_UTS);
  CHECK(sr_config_sysctl_namespace("kernel.shmmni.x") == -1);
  CHECK(sr_config_sysctl_namespace("vm.overcommit_memory") == -1);
  CHECK(sr_config_sysctl_namespace("network.x") == -1);
}

static void a_key_given_twice_is_refused(void)
{
  /* Which of the two would count depends on the reader: no config may mean two things. */
  REFUSED("{\"ociVersion\": \"1.2.0\", \"root\": {\"path\": \"a\"}, "
          "\"root\": {\"path\": \"b\"}}",
          "config.json: invalid JSON: duplicate key \"root\"");
  REFUSED(CONFIG_WITH("linux", JSON({"namespaces": [{"type": "mount"}, {"type": "network"}],
                                     "sysctl": {"net.ipv4.ip_forward": "0",
                                                "net.ipv4.ip_forward": "1"}})),
          "config.json: invalid JSON: linux.sysctl: duplicate key \"net.ipv4.ip_forward\"");
  REFUSED(CONFIG_WITH("mounts", JSON([{"destination": "/a", "type": "tmpfs"},
                                      {"destination": "/b", "type": "tmpfs", "type": "proc"}])),
          "config.json: invalid JSON: mounts[1]: duplicate key \"type\"");
  /* The same key in different objects is fine. */
  struct sr_config *c;
  PARSE(CONFIG_WITH("mounts", JSON([{"destination": "/a", "type": "tmpfs"},
                                    {"destination": "/b", "type": "tmpfs"}])),
        c);
  if (c)
    sr_config_free(c);
}

static void a_value_of_the_wrong_type_is_refused(void)
{
  REFUSED(CONFIG_WITH("process", JSON({"terminal": "yes", "user": {"uid": 0, "gid": 0},
                                       "args": ["sh"], "cwd": "/"})),
          "config.json: process.terminal: must be a boolean");
  REFUSED(CONFIG_WITH("root", JSON({"path": "rootfs", "readonly": 1})),
          "config.json: root.readonly: must be a boolean");
  REFUSED(CONFIG_WITH("process", JSON({"user": {"uid": 0, "gid": 0}, "args": ["sh"], "cwd": "/",
                                       "env": 5})),
          "config.json: process.env: must be an array");
  REFUSED(CONFIG_WITH("linux", JSON({"namespaces": 5})),
          "config.json: linux.namespaces: must be an array");
  REFUSED(CONFIG_WITH("linux", JSON({"namespaces": [{"type": "mount"}], "maskedPaths": 5})),
          "config.json: linux.maskedPaths: must be an array");
  REFUSED(CONFIG_WITH("process", JSON(["sh"])), "config.json: process: must be an object");
  REFUSED(CONFIG_WITH("annotations", JSON({"a": 1})),
          "config.json: annotations.a: must be a string");
}

static void fields_seerun_cannot_honour_are_refused_not_ignored(void)
{
  REFUSED(CONFIG_WITH("linux", JSON({"namespaces": [{"type": "mount"}],
                                     "intelRdt": {"closID": "guaranteed_group"}})),
          "config.json: linux.intelRdt: not supported by seerun");
  REFUSED(CONFIG_WITH("linux", JSON({"namespaces": [{"type": "mount"}],
                                     "personality": {"domain": "LINUX",
                                                     "flags": ["ADDR_NO_RANDOMIZE"]}})),
          "config.json: linux.personality.flags[0]: unknown personality flag");
}

static void other_unknown_names_and_relative_paths_are_refused(void)
{
  REFUSED(PROCESS_WITH(JSON("scheduler": {"policy": "SCHED_FAST"})),
          "config.json: process.scheduler.policy: unknown scheduling policy \"SCHED_FAST\"");
  REFUSED(PROCESS_WITH(JSON("scheduler": {"policy": "SCHED_OTHER", "flags": ["SCHED_FLAG_X"]})),
          "config.json: process.scheduler.flags[0]: unknown scheduler flag \"SCHED_FLAG_X\"");
  REFUSED(PROCESS_WITH(JSON("scheduler": {"policy": "SCHED_OTHER", "nice": 20})),
          "config.json: process.scheduler.nice: 20 is out of range [-20, 19]");
  REFUSED(PROCESS_WITH(JSON("ioPriority": {"class": "IOPRIO_CLASS_FAST", "priority": 0})),
          "config.json: process.ioPriority.class: unknown I/O priority class");
  REFUSED(PROCESS_WITH(JSON("ioPriority": {"class": "IOPRIO_CLASS_RT", "priority": 8})),
          "config.json: process.ioPriority.priority: 8 is out of range [0, 7]");
  REFUSED(PROCESS_WITH(JSON("oomScoreAdj": 1001)),
          "config.json: process.oomScoreAdj: 1001 is out of range [-1000, 1000]");
  REFUSED(PROCESS_WITH(JSON("consoleSize": {"height": 24})),
          "config.json: process.consoleSize.width: required");
  REFUSED(LINUX_WITH(JSON("timeOffsets": {"realtime": {"secs": 1}})),
          "config.json: linux.timeOffsets.realtime: unknown clock (monotonic or boottime)");
  REFUSED(LINUX_WITH(JSON("timeOffsets": {"monotonic": {"nanosecs": 1000000000}})),
          "config.json: linux.timeOffsets.monotonic.nanosecs: 1000000000 is out of range");
  REFUSED(LINUX_WITH(JSON("personality": {"domain": "BSD"})),
          "config.json: linux.personality.domain: unknown execution domain \"BSD\"");
  REFUSED(LINUX_WITH(JSON("rootfsPropagation": "sideways")),
          "config.json: linux.rootfsPropagation: unknown propagation \"sideways\"");
  REFUSED(LINUX_WITH(JSON("rootfsPropagation": "nosuid")),
          "config.json: linux.rootfsPropagation: unknown propagation \"nosuid\"");
  REFUSED(LINUX_WITH(JSON("maskedPaths": ["/proc/kcore", "proc/keys"])),
          "config.json: linux.maskedPaths[1]: must be an absolute path");
  REFUSED(LINUX_WITH(JSON("readonlyPaths": ["proc/sys"])),
          "config.json: linux.readonlyPaths[0]: must be an absolute path");
  REFUSED(CONFIG_WITH("mounts", JSON([{"destination": "/data", "type": "none", "source": "/srv",
                                       "options": ["rbind", "idmap"],
                                       "uidMappings": [{"containerID": 0, "hostID": 1,
                                                        "size": 1}]}])),
          "config.json: mounts[0]: uidMappings and gidMappings must be given together");
  /* A rule holds at most 48 argument conditions (6 arguments, 8 each). */
  char linux_json[8192] = JSON({"namespaces": [{"type": "mount"}], "seccomp": {
                                "defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{
                                "names": ["read"], "action": "SCMP_ACT_ERRNO", "args": [);
  for (int i = 0; i < 49; i++)
    strcat(linux_json, i ? ", " JSON({"index": 0, "value": 0, "op": "SCMP_CMP_EQ"})
                         : JSON({"index": 0, "value": 0, "op": "SCMP_CMP_EQ"}));
  strcat(linux_json, "]}]}}");
  REFUSED(CONFIG_WITH("linux", linux_json),
          "config.json: linux.seccomp.syscalls[0].args: too many argument conditions");
}

static void unknown_fields_and_nulls_are_ignored(void)
{
  /* The spec: runtimes MUST ignore unknown properties; null counts as absent. */
  struct sr_config *c;
  PARSE(CONFIG_WITH("vm", JSON({"hypervisor": {"path": "/usr/bin/qemu"}}), "hostname",
                    JSON(null), "mounts", JSON(null), "org.example.future", JSON([1, 2])),
        c);
  if (c) {
    CHECK(c->hostname == NULL);
    CHECK_UINT_EQ(c->n_mounts, 0);
    sr_config_free(c);
  }
  PARSE(MINIMAL_CONFIG, c);
  if (c) {
    CHECK(c->process != NULL);
    CHECK(c->linux_.namespaces[SR_NS_MOUNT].present);
    sr_config_free(c);
  }
}

// clang-format on

int main(void)
{
  RUN(the_runc_spec_default_config_lands_field_by_field);
  RUN(the_rootless_template_is_the_default_turned_as_runc_turns_it);
  RUN(every_field_of_the_config_lands_where_the_runtime_reads_it);
  RUN(numbers_above_int64_max_survive_exactly);
  RUN(every_supported_oci_version_is_accepted);
  RUN(mount_options_split_into_flags_propagation_and_data);
  RUN(exec_process_json_parses_on_its_own);
  RUN(unknown_fields_and_nulls_are_ignored);

  RUN(a_document_that_is_not_a_json_object_is_refused);
  RUN(a_deep_nesting_bomb_is_refused_without_crashing);
  RUN(a_config_without_a_supported_oci_version_is_refused);
  RUN(a_config_without_a_root_is_refused);
  RUN(a_process_without_a_command_is_refused);
  RUN(a_process_with_a_bad_cwd_or_env_is_refused);
  RUN(a_process_with_a_bad_user_is_refused);
  RUN(unknown_capabilities_and_bad_rlimits_are_refused);
  RUN(bad_namespaces_are_refused);
  RUN(bad_text_labels_and_idmaps_are_refused_and_destinations_cleaned);
  RUN(user_namespace_mappings_must_match_the_namespaces);
  RUN(bad_mounts_are_refused);
  RUN(a_bad_seccomp_profile_is_refused);
  RUN(bad_devices_and_resources_are_refused);
  RUN(bad_hooks_are_refused);
  RUN(sysctl_keys_cannot_escape_proc_sys);
  RUN(sysctls_must_be_namespaced_and_in_a_namespace_of_the_container);
  RUN(a_key_given_twice_is_refused);
  RUN(a_value_of_the_wrong_type_is_refused);
  RUN(fields_seerun_cannot_honour_are_refused_not_ignored);
  RUN(other_unknown_names_and_relative_paths_are_refused);
  return unit_report();
}
