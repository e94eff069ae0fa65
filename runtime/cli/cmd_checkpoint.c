/* seerun checkpoint / restore: not supported yet, and said so clearly (features does not
 * claim them either). */
#include "build.h"

#include "cli.h"

#include <stdio.h>

static int unsupported(const char *cmd)
{
  fprintf(stderr, "seerun: %s: checkpoint/restore is not supported by seerun yet\n", cmd);
  return 1;
}

int sr_cmd_checkpoint(const struct sr_global *g, int argc, char **argv)
{
  (void)g;
  (void)argc;
  (void)argv;
  return unsupported("checkpoint");
}

int sr_cmd_restore(const struct sr_global *g, int argc, char **argv)
{
  (void)g;
  (void)argc;
  (void)argv;
  return unsupported("restore");
}
