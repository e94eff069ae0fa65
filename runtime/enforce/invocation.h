/* What one invocation of seerun was given that the library acts on: the global options the
 * command line parsed (runtime/cli/main.c converts them once), without the log's, which stay
 * with the commands. */
#ifndef SEERUN_INVOCATION_H
#define SEERUN_INVOCATION_H

#include <stdbool.h>

/* --root when not given. */
#define SR_DEFAULT_ROOT "/run/seerun"

struct sr_invocation {
  const char *root;    /* --root: the state root */
  bool systemd_cgroup; /* --systemd-cgroup */
  const char *policy;  /* --policy FILE (default /etc/seerun/policy.json, else built in) */
  const char *profile; /* --profile NAME, as the engine's runtime entry binds it */
  char **argv;         /* the whole command line, for a sealed re-exec (runtime/linux/sealed.h) and
                          the profile bound to the program's name */
};

#endif
