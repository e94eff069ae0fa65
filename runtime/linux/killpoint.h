/* Named kill points: a test-only way to crash seerun at one exact step.
 *
 * SR_KILL_POINT("create.after-cgroup") marks a step.  In a build configured with
 * --enable-kill-points (SEERUN_KILL_POINTS), the process that reaches it kills itself with
 * SIGKILL when the environment variable SEERUN_KILL_POINT holds exactly that name, so the
 * integration tests (tests/integration/test_robustness.py) can stop `create`, `exec`, `delete`
 * and `run` at every step, one after the other, and check that what is left is reported
 * truthfully and removed by `delete --force`.  In every other build the marker is nothing at
 * all: no getenv, no code.
 *
 * Names are "<process>.<step>": create, run, exec and delete are the runtime's own process;
 * intermediate and init the container's processes of create; exec-intermediate and
 * exec-process those of exec.  The tests find the names by reading the sources for
 * SR_KILL_POINT("..."), so a name must be a string literal on the marker's line.
 *
 * The init of a new pid namespace cannot be killed by a signal sent from inside it (the
 * kernel drops it: SIGNAL_UNKILLABLE), so there the point ends it with _exit(128 + SIGKILL)
 * instead: as sudden, without a word to its parent, which is what matters to the test. */
#ifndef SEERUN_KILLPOINT_H
#define SEERUN_KILLPOINT_H

#ifdef SEERUN_KILL_POINTS
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static inline void sr_killpoint_hit(const char *name)
{
  const char *want = getenv("SEERUN_KILL_POINT");
  if (want == NULL || strcmp(want, name) != 0)
    return;
  kill(getpid(), SIGKILL);
  _exit(128 + SIGKILL);
}
#define SR_KILL_POINT(name) sr_killpoint_hit(name)
#else
#define SR_KILL_POINT(name) ((void)0)
#endif

#endif
