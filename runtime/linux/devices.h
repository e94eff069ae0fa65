/* /dev in the container: the standard nodes (null, zero, full, random, urandom, tty), the
 * config's linux.devices, and the usual symlinks.  Without a user namespace nodes are made with
 * mknod; in one (where mknod is impossible) the host's node is bind-mounted, after checking it
 * is the device asked for, and the host node's owner and mode are never changed. */
#ifndef SEERUN_DEVICES_H
#define SEERUN_DEVICES_H

#include <stdbool.h>

#include "config.h"
#include "error.h"

struct sr_dev_plan {
  struct sr_device *devices; /* the defaults, then linux.devices (a later path wins) */
  size_t n;
  size_t first_config; /* devices[first_config..] are linux.devices[0..] */
  int *host_node_fd;   /* user namespace: detached bind of the host node; else -1 */
  bool skip;           /* /dev is the host's own /dev (a bind): leave it alone */
};

/* Parent, before clone. */
int sr_devices_prepare(const struct sr_config *c, bool userns, struct sr_dev_plan *plan,
                       sr_error_t *err);
void sr_devices_plan_close(struct sr_dev_plan *plan);
/* Init, before pivot_root.  A default node replaces whatever the image has at its path (a
 * symlink, a file, another device); for linux.devices an existing file that is not the device
 * asked for is an error, as the spec requires. */
int sr_devices_create(const struct sr_dev_plan *plan, int root_fd, sr_error_t *err);

#endif
