/* seerun ps ID [ps options]: the container's processes, as ps(1) shows them (table, default
 * "-ef") or as a JSON array of host pids. */
#include "build.h"

#include "cli_common.h"

#include "cgroup.h"
#include "cleanup.h"
#include "lifecycle.h"
#include "opts.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define USAGE "[command options] <container-id> [ps options]"

static bool contains(const pid_t *pids, size_t n, long pid)
{
  for (size_t i = 0; i < n; i++)
    if (pids[i] == pid)
      return true;
  return false;
}

/* Field col (from 0) of a line of ps output, fields separated by blanks: its start, and its
 * length in *len; NULL past the last field. */
static const char *field(const char *line, int col, size_t *len)
{
  for (int i = 0;; i++) {
    line += strspn(line, " \t\n");
    if (*line == '\0')
      return NULL;
    *len = strcspn(line, " \t\n");
    if (i == col)
      return line;
    line += *len;
  }
}

/* Runs ps with the given options and keeps the header and the container's lines. */
static int ps_table(char **ps_args, int n_args, const pid_t *pids, size_t n, sr_error_t *err)
{
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) < 0)
    return sr_error_sys(err, "pipe");
  fflush(NULL);
  pid_t child = fork();
  if (child < 0) {
    sr_error_sys(err, "fork");
    close(fds[0]);
    close(fds[1]);
    return -1;
  }
  if (child == 0) {
    dup2(fds[1], 1);
    char **argv = calloc((size_t)n_args + 3, sizeof(char *));
    if (argv == NULL)
      _exit(127);
    argv[0] = "ps";
    int k = 1;
    if (n_args == 0)
      argv[k++] = "-ef";
    for (int i = 0; i < n_args; i++)
      argv[k++] = ps_args[i];
    execvp("ps", argv);
    _exit(127);
  }
  close(fds[1]);
  FILE *f = fdopen(fds[0], "r");
  if (f == NULL) {
    close(fds[0]);
    waitpid(child, NULL, 0);
    return sr_error_sys(err, "read ps output");
  }
  char *line = NULL;
  size_t cap = 0;
  int pid_col = -1;
  bool header = true;
  while (getline(&line, &cap, f) > 0) {
    const char *t;
    size_t len;
    if (header) {
      /* The PID column, wherever the options put it. */
      for (int col = 0; (t = field(line, col, &len)) != NULL; col++)
        if (len == 3 && memcmp(t, "PID", 3) == 0)
          pid_col = col;
      fputs(line, stdout);
      header = false;
      continue;
    }
    t = pid_col >= 0 ? field(line, pid_col, &len) : NULL;
    if (contains(pids, n, t ? strtol(t, NULL, 10) : -1))
      fputs(line, stdout);
  }
  free(line);
  fclose(f);
  int status;
  waitpid(child, &status, 0);
  if (pid_col < 0)
    return sr_error_make(err, 0, "ps: no PID column in the output of ps");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return sr_error_make(err, 0, "ps: ps failed (exit status %d)", WEXITSTATUS(status));
  return 0;
}

int sr_cmd_ps(const struct sr_global *g, int argc, char **argv)
{
  static const struct option longopts[] = {{"format", required_argument, NULL, 'f'},
                                           {"help", no_argument, NULL, 'h'},
                                           {NULL, 0, NULL, 0}};
  const char *format = "table";
  sr_opts_begin(argc, argv, longopts, true);
  int c;
  while ((c = getopt_long(argc, argv, "+f:h", longopts, NULL)) != -1) {
    switch (c) {
    case 'f':
      if (strcmp(optarg, "table") != 0 && strcmp(optarg, "json") != 0)
        return sr_cli_usage_error("ps", USAGE, "--format: \"%s\" is not table or json", optarg);
      format = optarg;
      break;
    case 'h':
      printf("Usage: seerun ps %s\n", USAGE);
      return 0;
    default:
      return sr_cli_unknown_option("ps", USAGE, argv);
    }
  }
  if (optind >= argc)
    return sr_cli_usage_error("ps", USAGE, "a container id is required");
  if (sr_cli_setup(g, 0, false) < 0)
    return 1;
  const char *id = argv[optind];
  sr_error_t err = NULL;
  _cleanup_stored_ struct sr_container *ct = NULL;
  _cleanup_free_ pid_t *pids = NULL;
  size_t n = 0;
  _cleanup_cgroup_ struct sr_cgroup *cg = NULL;
  if (sr_stored_open(&g->run, id, false, &ct, &err) < 0)
    return sr_cli_fail(&err);
  if (sr_container_open_cgroup(ct, &cg, &err) < 0 ||
      (cg && sr_cgroup_pids(cg, &pids, &n, &err) < 0))
    return sr_cli_fail(&err);
  if (strcmp(format, "json") == 0) {
    printf("[");
    for (size_t i = 0; i < n; i++)
      printf("%s%d", i ? "," : "", pids[i]);
    printf("]\n");
    return 0;
  }
  if (ps_table(argv + optind + 1, argc - optind - 1, pids, n, &err) < 0)
    return sr_cli_fail(&err);
  return 0;
}
