/* The init's mounts of config.json, in order: the cgroup ones by the cgroup layer
 * (runtime/cgroup/mount_cgroup.h), the others by the Linux layer (runtime/linux/mount.h). */
#ifndef SEERUN_MOUNTS_H
#define SEERUN_MOUNTS_H

#include "cgroup.h"
#include "config.h"
#include "error.h"
#include "mount.h"

int sr_mounts_apply(const struct sr_config *c, struct sr_bind_plan *plan, int root_fd,
                    const struct sr_cgroup *cg, sr_error_t *err);

#endif
