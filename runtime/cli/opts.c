#include "build.h"

#include "opts.h"

#include "number.h"

#include <stdlib.h>
#include <string.h>

void sr_opts_normalize(int argc, char **argv, const struct option *longopts, bool stop_at_arg)
{
  for (int i = 1; i < argc; i++) {
    char *a = argv[i];
    if (strcmp(a, "--") == 0)
      return;
    if (a[0] != '-' || a[1] == '\0') {
      if (stop_at_arg)
        return;
      continue;
    }
    bool dashdash = a[1] == '-';
    const char *name = dashdash ? a + 2 : a + 1;
    size_t len = strcspn(name, "=");
    const struct option *o;
    for (o = longopts; o->name; o++)
      if (strlen(o->name) == len && strncmp(o->name, name, len) == 0)
        break;
    if (o->name == NULL || (!dashdash && len < 2))
      continue;
    if (!dashdash) {
      /* argv strings may be rewritten in place but not grown: build a new one. */
      size_t full = strlen(a);
      char *n = malloc(full + 2);
      if (n == NULL)
        return;
      n[0] = '-';
      memcpy(n + 1, a, full + 1);
      argv[i] = n;
    }
    /* "--flag value": the value is not an argument. */
    if (o->has_arg == required_argument && name[len] != '=')
      i++;
  }
}

bool sr_opts_int(const char *s, int max, int *out)
{
  unsigned long long v;
  if (!sr_number_parse_uint(s, (unsigned long long)max, &v))
    return false;
  *out = (int)v;
  return true;
}

void sr_opts_begin(int argc, char **argv, const struct option *longopts, bool stop_at_arg)
{
  sr_opts_normalize(argc, argv, longopts, stop_at_arg);
  optind = 0;
  opterr = 0;
}
