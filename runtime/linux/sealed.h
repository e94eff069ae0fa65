/* Protection of the runtime binary against a container that could open it for writing
 * (CVE-2019-5736).  Containers in a user namespace cannot (the host binary's owner is not
 * theirs), and every runtime process inside a container is non-dumpable, so /proc/<pid>/exe
 * is closed to them unless they hold CAP_SYS_PTRACE over the host's user namespace: that is, a
 * container without a user namespace that keeps CAP_SYS_PTRACE.  For such a config, seerun
 * re-executes itself once from a read-only bind of its own binary (a detached mount: no copy,
 * nothing left behind), so that every handle the container could get is read-only. */
#ifndef SEERUN_SEALED_H
#define SEERUN_SEALED_H

#include <stdbool.h>

#include "config.h"
#include "error.h"

bool sr_sealed_needed(const struct sr_config *c);
/* True when the running binary is already on a read-only mount. */
bool sr_sealed_exe_is_sealed(void);
/* Re-executes argv from a read-only view of /proc/self/exe; returns only on failure. */
int sr_sealed_reexec(char **argv, sr_error_t *err);
/* Both: when the config needs it and the binary is not sealed yet, re-exec. */
int sr_sealed_seal_if_needed(const struct sr_config *c, char **argv, sr_error_t *err);

#endif
