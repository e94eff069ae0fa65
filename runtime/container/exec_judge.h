/* seerun exec's judgement of the new process, under the profile of the container's create:
 * no capability beyond the container's bounding set, always no_new_privileges, the create's
 * LSM labels, Landlock and the seccomp floor decided again from the profile and the kernel
 * (never read back from the state), the proxy's environment; audited. */
#ifndef SEERUN_EXEC_JUDGE_H
#define SEERUN_EXEC_JUDGE_H

#include "config.h"
#include "error.h"
#include "exec.h"
#include "invocation.h"
#include "statedir.h"

/* Judges p (built from the exec's options) for container ct, whose config is config (p and
 * what it is given are allocated in config's arena); sets what o must apply.  A refusal is the
 * policy's error, audited. */
int sr_exec_judge(const struct sr_invocation *inv, const struct sr_container *ct,
                  struct sr_config *config, struct sr_process *p, struct sr_exec_opts *o,
                  sr_error_t *err);

#endif
