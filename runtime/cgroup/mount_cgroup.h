#ifndef SEERUN_MOUNT_CGROUP_H
#define SEERUN_MOUNT_CGROUP_H

#include <stdbool.h>

#include "cgroup.h"
#include "config.h"
#include "error.h"

/* Mounts the container's view of its cgroups at m->destination (types cgroup and cgroup2). */
int sr_mount_cgroup(const struct sr_mount *m, const struct sr_cgroup *cg, bool cgroupns,
                    int root_fd, sr_error_t *err);

#endif
