#include "build.h"

#include "cli_common.h"

#include "cleanup.h"
#include "util.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include "opts.h"
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int sr_cli_open_container(const struct sr_global *g, const char *id, bool lock,
                          struct sr_container **out, sr_error_t *err)
{
  int rootfd = open(g->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (rootfd < 0) {
    if (errno == ENOENT) {
      sr_error_t e = NULL;
      if (sr_validate_id(id, &e) < 0) {
        *err = e;
        return -1;
      }
      return sr_error_make(err, ENOENT, "container \"%s\" does not exist", id);
    }
    return sr_error_sys(err, "open state directory `%s`", g->root);
  }
  if (sr_container_load(rootfd, id, lock, out, err) < 0) {
    close(rootfd);
    return -1;
  }
  return 0;
}

void sr_cli_close_container(struct sr_container *c)
{
  int rootfd = c->rootfd;
  sr_container_free(c);
  if (rootfd >= 0)
    close(rootfd);
}

int sr_cli_load_bundle(const char *bundle_arg, char **bundle, struct sr_create_ctx *ctx,
                       sr_error_t *err)
{
  char abs[PATH_MAX];
  if (realpath(bundle_arg && bundle_arg[0] ? bundle_arg : ".", abs) == NULL)
    return sr_error_sys(err, "bundle `%s`", bundle_arg ? bundle_arg : ".");
  *bundle = strdup(abs);
  if (*bundle == NULL)
    return sr_error_make(err, ENOMEM, "bundle");
  _cleanup_close_ int dirfd = open(abs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dirfd < 0)
    return sr_error_sys(err, "bundle `%s`", abs);
  if (sr_read_file_at(dirfd, "config.json", SR_MAX_CONFIG_SIZE, &ctx->config_text,
                      &ctx->config_len, err) < 0)
    return sr_error_wrap(err, "bundle `%s`", abs);
  return sr_config_parse(ctx->config_text, ctx->config_len, "config.json", &ctx->config, err);
}

int sr_cli_parse_id_only(const char *cmd, int argc, char **argv, const char **id)
{
  static const struct option longopts[] = {{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
  sr_opts_normalize(argc, argv, longopts, false);
  optind = 1;
  opterr = 0;
  int c;
  while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
    if (c == 'h') {
      printf("Usage: seerun %s <container-id>\n", cmd);
      return 2;
    }
    return sr_cli_usage_error(cmd, "<container-id>", "unknown option `%s`", argv[optind - 1]);
  }
  if (optind != argc - 1)
    return sr_cli_usage_error(cmd, "<container-id>", "exactly one container id is required");
  *id = argv[optind];
  return 0;
}
