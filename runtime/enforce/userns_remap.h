/* Never host root: a config that would run anything as host uid or gid 0 runs in a user
 * namespace whose ids map onto an unprivileged host range from the registry; a mapping onto
 * host 0 asked for explicitly is refused; a container that joins another seerun container's
 * namespaces (a pod) joins its user namespace too, and shares its range. */
#ifndef SEERUN_USERNS_REMAP_H
#define SEERUN_USERNS_REMAP_H

#include <stdbool.h>

#include "config.h"
#include "error.h"
#include "policy.h"
#include "policy_apply.h"

struct sr_remap_input {
  const struct sr_userns_pool *pool;
  const char *key;      /* the registry key of this container */
  bool enforce;         /* false: permissive, only record what would happen */
  bool dry_run;         /* policy check: decide, but take no range from the registry */
  const char *profile;  /* for messages */
  int user_ns_fd;       /* the joined user namespace the facts opened; -1: open the path */
};

/* Changes c in place, appending decisions to d (allocated in c->arena). */
int sr_userns_remap(struct sr_config *c, const struct sr_policy_facts *facts,
                    const struct sr_remap_input *in, struct sr_decisions *d, sr_error_t *err);

#endif
