/* The devices every container has, whatever linux.devices says (the runtime spec's "Default
 * Devices", and the pseudo-terminals): one list, from which the runtime makes its nodes
 * (runtime/linux/devices.c), the cgroup allows them (runtime/cgroup/cgroup.c) and the policy
 * knows their names (runtime/policy/policy.c). */
#ifndef SEERUN_DEFAULT_DEVICES_H
#define SEERUN_DEFAULT_DEVICES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sr_default_device {
  const char *name; /* "null": the name the policy knows it by */
  const char *path; /* "/dev/null" */
  char type;        /* 'c' */
  int64_t major;
  int64_t minor; /* -1: any (the pts) */
  /* Made by the runtime as a node (mode 0666, root's); the others come another way: the
   * console is the pty bound over it, ptmx a link to pts/ptmx, the pts a devpts. */
  bool node;
};

extern const struct sr_default_device sr_default_devices[];
extern const size_t sr_default_devices_n;

/* The entry called name, or NULL. */
const struct sr_default_device *sr_default_devices_find(const char *name);

#endif
