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
bool sr_name_lookup(const struct sr_name *table, size_t n, const char *name, int64_t *value);
const char *sr_name_of(const struct sr_name *table, size_t n, int64_t value);

#define SR_NAMES(t) (t), (t##_n)

extern const struct sr_name sr_capability_names[];
extern const size_t sr_capability_names_n;
#define SR_CAP_LAST_KNOWN 40

extern const struct sr_name sr_rlimit_names[];
extern const size_t sr_rlimit_names_n;

extern const struct sr_name sr_seccomp_action_names[];
extern const size_t sr_seccomp_action_names_n;
extern const struct sr_name sr_seccomp_op_names[];
extern const size_t sr_seccomp_op_names_n;
extern const struct sr_name sr_seccomp_flag_names[];
extern const size_t sr_seccomp_flag_names_n;
extern const struct sr_name sr_seccomp_arch_names[];
extern const size_t sr_seccomp_arch_names_n;

extern const struct sr_name sr_sched_policy_names[];
extern const size_t sr_sched_policy_names_n;
extern const struct sr_name sr_sched_flag_names[];
extern const size_t sr_sched_flag_names_n;
extern const struct sr_name sr_ioprio_class_names[];
extern const size_t sr_ioprio_class_names_n;

#endif
