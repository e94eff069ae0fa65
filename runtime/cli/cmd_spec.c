/* seerun spec: writes a default config.json into the bundle directory. */
#include "build.h"

#include "cli.h"

#include "cleanup.h"
#include "opts.h"
#include "spec_default.h"
#include "fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define USAGE "[command options]"

int sr_cmd_spec(const struct sr_global *g, int argc, char **argv)
{
  static const struct option longopts[] = {{"bundle", required_argument, NULL, 'b'},
                                           {"rootless", no_argument, NULL, 'r'},
                                           {"help", no_argument, NULL, 'h'},
                                           {NULL, 0, NULL, 0}};
  const char *bundle = ".";
  bool rootless = false;
  sr_opts_begin(argc, argv, longopts, false);
  int c;
  while ((c = getopt_long(argc, argv, "b:h", longopts, NULL)) != -1) {
    switch (c) {
    case 'b':
      bundle = optarg;
      break;
    case 'r':
      /* The template only: running rootless stays refused (--rootless=true, main.c). */
      rootless = true;
      break;
    case 'h':
      printf("Usage: seerun spec %s\n", USAGE);
      return 0;
    default:
      return sr_cli_unknown_option("spec", USAGE, argv);
    }
  }
  if (optind != argc)
    return sr_cli_usage_error("spec", USAGE, "takes no arguments");
  if (sr_cli_setup(g, 0, false) < 0)
    return 1;
  sr_error_t err = NULL;
  _cleanup_close_ int dir = open(bundle, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) {
    sr_error_sys(&err, "bundle `%s`", bundle);
    return sr_cli_fail(&err);
  }
  _cleanup_free_ char *text = rootless ? sr_spec_default_rootless(geteuid(), getegid()) : NULL;
  if (rootless && text == NULL) {
    sr_error_make(&err, ENOMEM, "spec --rootless");
    return sr_cli_fail(&err);
  }
  const char *spec = rootless ? text : sr_spec_default;
  if (sr_fileio_write_at(dir, "config.json", spec, strlen(spec), O_CREAT | O_EXCL, &err) < 0) {
    if (err->status == EEXIST) {
      sr_error_free(&err);
      sr_error_make(&err, 0, "%s/config.json already exists: remove it first", bundle);
    }
    return sr_cli_fail(&err);
  }
  return 0;
}
