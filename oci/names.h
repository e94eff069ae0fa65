/* The names config.json uses for kernel constants (capabilities, rlimits, seccomp actions,
 * scheduler policies, ...), in both directions.  The features command prints these lists. */
#ifndef SEERUN_NAMES_H
#define SEERUN_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sr_name {
  const char *name;
  int64_t value;
};

/* Looks name up in a table; returns false when it is not there. */
bool sr_names_lookup(const struct sr_name *table, size_t n, const char *name, int64_t *value);
const char *sr_names_of(const struct sr_name *table, size_t n, int64_t value);

#define SR_NAMES(t) (t), (t##_n)

extern const struct sr_name sr_names_capability[];
extern const size_t sr_names_capability_n;
#define SR_CAP_LAST_KNOWN 40

extern const struct sr_name sr_names_rlimit[];
extern const size_t sr_names_rlimit_n;

extern const struct sr_name sr_names_seccomp_action[];
extern const size_t sr_names_seccomp_action_n;
extern const struct sr_name sr_names_seccomp_op[];
extern const size_t sr_names_seccomp_op_n;
extern const struct sr_name sr_names_seccomp_flag[];
extern const size_t sr_names_seccomp_flag_n;
extern const struct sr_name sr_names_seccomp_arch[];
extern const size_t sr_names_seccomp_arch_n;

extern const struct sr_name sr_names_sched_policy[];
extern const size_t sr_names_sched_policy_n;
extern const struct sr_name sr_names_sched_flag[];
extern const size_t sr_names_sched_flag_n;
extern const struct sr_name sr_names_ioprio_class[];
extern const size_t sr_names_ioprio_class_n;

#endif
