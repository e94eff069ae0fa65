#include "build.h"

#include "names.h"

#include <linux/capability.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <string.h>
#include <sys/resource.h>

bool sr_names_lookup(const struct sr_name *table, size_t n, const char *name, int64_t *value)
{
  for (size_t i = 0; i < n; i++)
    if (strcmp(table[i].name, name) == 0) {
      *value = table[i].value;
      return true;
    }
  return false;
}

const char *sr_names_of(const struct sr_name *table, size_t n, int64_t value)
{
  for (size_t i = 0; i < n; i++)
    if (table[i].value == value)
      return table[i].name;
  return NULL;
}

#define N(x) {#x, x}

const struct sr_name sr_names_capability[] = {
    {"CAP_CHOWN", 0},
    {"CAP_DAC_OVERRIDE", 1},
    {"CAP_DAC_READ_SEARCH", 2},
    {"CAP_FOWNER", 3},
    {"CAP_FSETID", 4},
    {"CAP_KILL", 5},
    {"CAP_SETGID", 6},
    {"CAP_SETUID", 7},
    {"CAP_SETPCAP", 8},
    {"CAP_LINUX_IMMUTABLE", 9},
    {"CAP_NET_BIND_SERVICE", 10},
    {"CAP_NET_BROADCAST", 11},
    {"CAP_NET_ADMIN", 12},
    {"CAP_NET_RAW", 13},
    {"CAP_IPC_LOCK", 14},
    {"CAP_IPC_OWNER", 15},
    {"CAP_SYS_MODULE", 16},
    {"CAP_SYS_RAWIO", 17},
    {"CAP_SYS_CHROOT", 18},
    {"CAP_SYS_PTRACE", 19},
    {"CAP_SYS_PACCT", 20},
    {"CAP_SYS_ADMIN", 21},
    {"CAP_SYS_BOOT", 22},
    {"CAP_SYS_NICE", 23},
    {"CAP_SYS_RESOURCE", 24},
    {"CAP_SYS_TIME", 25},
    {"CAP_SYS_TTY_CONFIG", 26},
    {"CAP_MKNOD", 27},
    {"CAP_LEASE", 28},
    {"CAP_AUDIT_WRITE", 29},
    {"CAP_AUDIT_CONTROL", 30},
    {"CAP_SETFCAP", 31},
    {"CAP_MAC_OVERRIDE", 32},
    {"CAP_MAC_ADMIN", 33},
    {"CAP_SYSLOG", 34},
    {"CAP_WAKE_ALARM", 35},
    {"CAP_BLOCK_SUSPEND", 36},
    {"CAP_AUDIT_READ", 37},
    {"CAP_PERFMON", 38},
    {"CAP_BPF", 39},
    {"CAP_CHECKPOINT_RESTORE", 40},
};
const size_t sr_names_capability_n = sizeof(sr_names_capability) / sizeof(sr_names_capability[0]);

const struct sr_name sr_names_rlimit[] = {
    N(RLIMIT_AS),     N(RLIMIT_CORE),   N(RLIMIT_CPU),        N(RLIMIT_DATA),
    N(RLIMIT_FSIZE),  N(RLIMIT_LOCKS),  N(RLIMIT_MEMLOCK),    N(RLIMIT_MSGQUEUE),
    N(RLIMIT_NICE),   N(RLIMIT_NOFILE), N(RLIMIT_NPROC),      N(RLIMIT_RSS),
    N(RLIMIT_RTPRIO), N(RLIMIT_RTTIME), N(RLIMIT_SIGPENDING), N(RLIMIT_STACK),
};
const size_t sr_names_rlimit_n = sizeof(sr_names_rlimit) / sizeof(sr_names_rlimit[0]);

/* SCMP_ACT_ERRNO and SCMP_ACT_TRACE carry a value; the parser folds errnoRet in. */
const struct sr_name sr_names_seccomp_action[] = {
    {"SCMP_ACT_KILL", SCMP_ACT_KILL_THREAD},
    {"SCMP_ACT_KILL_PROCESS", SCMP_ACT_KILL_PROCESS},
    {"SCMP_ACT_KILL_THREAD", SCMP_ACT_KILL_THREAD},
    {"SCMP_ACT_TRAP", SCMP_ACT_TRAP},
    {"SCMP_ACT_ERRNO", SCMP_ACT_ERRNO(0)},
    {"SCMP_ACT_TRACE", SCMP_ACT_TRACE(0)},
    {"SCMP_ACT_ALLOW", SCMP_ACT_ALLOW},
    {"SCMP_ACT_LOG", SCMP_ACT_LOG},
    {"SCMP_ACT_NOTIFY", SCMP_ACT_NOTIFY},
};
const size_t sr_names_seccomp_action_n =
    sizeof(sr_names_seccomp_action) / sizeof(sr_names_seccomp_action[0]);

const struct sr_name sr_names_seccomp_op[] = {
    N(SCMP_CMP_NE), N(SCMP_CMP_LT), N(SCMP_CMP_LE),        N(SCMP_CMP_EQ),
    N(SCMP_CMP_GE), N(SCMP_CMP_GT), N(SCMP_CMP_MASKED_EQ),
};
const size_t sr_names_seccomp_op_n = sizeof(sr_names_seccomp_op) / sizeof(sr_names_seccomp_op[0]);

#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif
const struct sr_name sr_names_seccomp_flag[] = {
    N(SECCOMP_FILTER_FLAG_TSYNC),
    N(SECCOMP_FILTER_FLAG_LOG),
    N(SECCOMP_FILTER_FLAG_SPEC_ALLOW),
    N(SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV),
};
const size_t sr_names_seccomp_flag_n =
    sizeof(sr_names_seccomp_flag) / sizeof(sr_names_seccomp_flag[0]);

const struct sr_name sr_names_seccomp_arch[] = {
    {"SCMP_ARCH_X86", SCMP_ARCH_X86},
    {"SCMP_ARCH_X86_64", SCMP_ARCH_X86_64},
    {"SCMP_ARCH_X32", SCMP_ARCH_X32},
    {"SCMP_ARCH_ARM", SCMP_ARCH_ARM},
    {"SCMP_ARCH_AARCH64", SCMP_ARCH_AARCH64},
    {"SCMP_ARCH_MIPS", SCMP_ARCH_MIPS},
    {"SCMP_ARCH_MIPS64", SCMP_ARCH_MIPS64},
    {"SCMP_ARCH_MIPS64N32", SCMP_ARCH_MIPS64N32},
    {"SCMP_ARCH_MIPSEL", SCMP_ARCH_MIPSEL},
    {"SCMP_ARCH_MIPSEL64", SCMP_ARCH_MIPSEL64},
    {"SCMP_ARCH_MIPSEL64N32", SCMP_ARCH_MIPSEL64N32},
    {"SCMP_ARCH_PPC", SCMP_ARCH_PPC},
    {"SCMP_ARCH_PPC64", SCMP_ARCH_PPC64},
    {"SCMP_ARCH_PPC64LE", SCMP_ARCH_PPC64LE},
    {"SCMP_ARCH_S390", SCMP_ARCH_S390},
    {"SCMP_ARCH_S390X", SCMP_ARCH_S390X},
    {"SCMP_ARCH_PARISC", SCMP_ARCH_PARISC},
    {"SCMP_ARCH_PARISC64", SCMP_ARCH_PARISC64},
    {"SCMP_ARCH_RISCV64", SCMP_ARCH_RISCV64},
};
const size_t sr_names_seccomp_arch_n =
    sizeof(sr_names_seccomp_arch) / sizeof(sr_names_seccomp_arch[0]);

#ifndef SCHED_DEADLINE
#define SCHED_DEADLINE 6
#endif
#ifndef SCHED_ISO
#define SCHED_ISO 4
#endif
const struct sr_name sr_names_sched_policy[] = {
    N(SCHED_OTHER), N(SCHED_FIFO), N(SCHED_RR),       N(SCHED_BATCH),
    N(SCHED_ISO),   N(SCHED_IDLE), N(SCHED_DEADLINE),
};
const size_t sr_names_sched_policy_n =
    sizeof(sr_names_sched_policy) / sizeof(sr_names_sched_policy[0]);

/* The SCHED_FLAG_* values of <linux/sched.h>. */
const struct sr_name sr_names_sched_flag[] = {
    {"SCHED_FLAG_RESET_ON_FORK", 0x01},  {"SCHED_FLAG_RECLAIM", 0x02},
    {"SCHED_FLAG_DL_OVERRUN", 0x04},     {"SCHED_FLAG_KEEP_POLICY", 0x08},
    {"SCHED_FLAG_KEEP_PARAMS", 0x10},    {"SCHED_FLAG_UTIL_CLAMP_MIN", 0x20},
    {"SCHED_FLAG_UTIL_CLAMP_MAX", 0x40},
};
const size_t sr_names_sched_flag_n = sizeof(sr_names_sched_flag) / sizeof(sr_names_sched_flag[0]);

/* IOPRIO_CLASS_* of <linux/ioprio.h>. */
const struct sr_name sr_names_ioprio_class[] = {
    {"IOPRIO_CLASS_RT", 1},
    {"IOPRIO_CLASS_BE", 2},
    {"IOPRIO_CLASS_IDLE", 3},
};
const size_t sr_names_ioprio_class_n =
    sizeof(sr_names_ioprio_class) / sizeof(sr_names_ioprio_class[0]);
