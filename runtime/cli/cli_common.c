#include "build.h"

#include "cli_common.h"

#include "opts.h"

#include <getopt.h>
#include <stdio.h>

int sr_cli_common_parse_flag(const char *cmd, const char *usage, int argc, char **argv,
                             const char *flag, bool *set)
{
  struct option longopts[] = {
      {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}, {NULL, 0, NULL, 0}};
  char shortopts[3] = "h";
  if (flag) {
    longopts[1] = (struct option){flag, no_argument, NULL, flag[0]};
    shortopts[1] = flag[0];
  }
  sr_opts_begin(argc, argv, longopts, false);
  int c;
  while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
    if (c == 'h') {
      printf("Usage: seerun %s %s\n", cmd, usage);
      return 2;
    }
    if (flag == NULL || c != flag[0])
      return sr_cli_unknown_option(cmd, usage, argv);
    *set = true;
  }
  return 0;
}

int sr_cli_common_parse_id_only(const char *cmd, int argc, char **argv, const char **id)
{
  int r = sr_cli_common_parse_flag(cmd, "<container-id>", argc, argv, NULL, NULL);
  if (r)
    return r;
  if (optind != argc - 1)
    return sr_cli_usage_error(cmd, "<container-id>", "exactly one container id is required");
  *id = argv[optind];
  return 0;
}

int sr_cli_common_print_json(sr_json_gen_t g, sr_error_t *err)
{
  const unsigned char *buf;
  size_t len;
  if (sr_json_gen_buf(g, &buf, &len, err) < 0)
    return -1;
  printf("%.*s\n", (int)len, buf);
  return 0;
}

int sr_cli_common_open_id_only(const struct sr_global *g, const char *cmd, int argc, char **argv,
                        bool lock, const char **id, struct sr_container **ct)
{
  int r = sr_cli_common_parse_id_only(cmd, argc, argv, id);
  if (r)
    return r;
  if (sr_cli_setup(g, 0, false) < 0)
    return 1;
  sr_error_t err = NULL;
  if (sr_stored_open(&g->run, *id, lock, ct, &err) < 0)
    return sr_cli_fail(&err);
  return 0;
}

#define CREATE_USAGE "[command options] <container-id>"

int sr_cli_common_parse_create_options(const char *cmd, int argc, char **argv,
                                       const struct option *opts, const char *shortopts,
                                       struct sr_create_opts *o, const char **bundle,
                                       int (*extra)(int c, void *data), void *data)
{
  sr_opts_begin(argc, argv, opts, false);
  int c;
  while ((c = getopt_long(argc, argv, shortopts, opts, NULL)) != -1) {
    switch (c) {
    case 'b':
      *bundle = optarg;
      break;
    case 'p':
      o->pid_file = optarg;
      break;
    case 'c':
      o->console_socket = optarg;
      break;
    case 'P':
      o->no_pivot = true;
      break;
    case 'k':
      o->no_new_keyring = true;
      break;
    case 'f':
      if (!sr_opts_int(optarg, 4096, &o->preserve_fds))
        return sr_cli_usage_error(cmd, CREATE_USAGE, "--preserve-fds: \"%s\" is not a number",
                                  optarg);
      break;
    case 'h':
      printf("Usage: seerun %s %s\n", cmd, CREATE_USAGE);
      return 2;
    default:
      if (extra && extra(c, data) == 0)
        break;
      return sr_cli_unknown_option(cmd, CREATE_USAGE, argv);
    }
  }
  if (optind != argc - 1)
    return sr_cli_usage_error(cmd, CREATE_USAGE, "exactly one container id is required");
  o->id = argv[optind];
  return 0;
}
