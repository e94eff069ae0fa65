/* What the policy needs to know about the host, found out before it runs (the policy itself
 * does no I/O): whether bind sources are or contain denied host paths, compared by device and
 * inode from O_PATH descriptors (never by string prefix); whether namespace paths are the
 * host's or another seerun container's; what file each hook's path opens, and whether it is
 * trusted. */
#ifndef SEERUN_POLICY_FACTS_H
#define SEERUN_POLICY_FACTS_H

#include "config.h"
#include "error.h"
#include "policy_apply.h"

/* A host path denied as a bind source at and below it (never above), and why. */
struct sr_denied_path {
  const char *path;
  const char *reason; /* "a seerun state root (recorded in ...)" */
  bool own_bundle_ok; /* a source within the container's own bundle, itself below the path,
                         is not denied (the sandbox's /out, below its state root) */
};

struct sr_facts_input {
  const char *bundle;    /* absolute */
  const char *rootfs;    /* absolute */
  int state_rootfd;      /* --root, to recognise other seerun containers; -1: none */
  const char *state_root;
  const char *id;        /* the container's id (its user namespace registry key) */
  bool dry_run;          /* policy check: no registry range is taken */
  const struct sr_denied_path *denied; /* besides the built-in list */
  size_t n_denied;
  char **idmappable;                   /* the profile's mounts.idmappable */
  size_t n_idmappable;
  const struct sr_policy_profile *profile; /* whose hooks.allowedPaths the hooks are matched
                                              against (set by sr_policy_enforce_create) */
};

/* Fills facts, allocating in c->arena. */
int sr_policy_facts_compute(const struct sr_config *c, const struct sr_facts_input *in,
                            struct sr_policy_facts *facts, sr_error_t *err);

#endif
