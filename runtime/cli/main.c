/* seerun: the command line.  Global options, then a command, as runc takes them. */
#include "build.h"

#include "cli.h"
#include "help.h"

#include "cleanup.h"
#include "log.h"
#include "opts.h"
#include "state.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

static const struct {
  const char *name;
  sr_command_fn fn;
  const char *summary;
} commands[] = {
    {"checkpoint", sr_cmd_checkpoint, "checkpoint a running container"},
    {"create", sr_cmd_create, "create a container"},
    {"delete", sr_cmd_delete, "delete any resources held by the container"},
    {"events", sr_cmd_events, "display container events such as OOM notifications and stats"},
    {"exec", sr_cmd_exec, "execute new process inside the container"},
    {"features", sr_cmd_features, "show the enabled features"},
    {"gc", sr_cmd_gc, "release the user namespace ranges of deleted containers"},
    {"kill", sr_cmd_kill, "send a signal to the container's init process"},
    {"list", sr_cmd_list, "list containers started by seerun with the given root"},
    {"pause", sr_cmd_pause, "pause all processes inside the container"},
    {"policy", sr_cmd_policy, "show the bound profile, or check a bundle against it"},
    {"ps", sr_cmd_ps, "ps displays the processes running inside a container"},
    {"restore", sr_cmd_checkpoint_restore, "restore a container from a checkpoint"},
    {"resume", sr_cmd_pause_resume, "resume all processes that have been previously paused"},
    {"review", sr_cmd_review, "summarise the recorded runs and flag what deserves a look"},
    {"run", sr_cmd_run, "create and run a container"},
    {"sandbox", sr_cmd_sandbox, "run a command in a throwaway container seerun builds itself"},
    {"spec", sr_cmd_spec, "create a new specification file"},
    {"start", sr_cmd_start, "execute the user defined process in a created container"},
    {"state", sr_cmd_state, "output the state of a container"},
    {"update", sr_cmd_update, "update container resource constraints"},
};

static void usage(FILE *f)
{
  fprintf(f, "Usage: seerun [global options] command [command options] [arguments...]\n\n"
             "seerun is a hardened OCI container runtime with runc's command line.\n\n"
             "Commands:\n");
  for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
    fprintf(f, "   %-10s %s\n", commands[i].name, commands[i].summary);
  fprintf(f, "\nGlobal options:\n"
             "   --root value          state directory (default: " "/run/seerun" ")\n"
             "   --log value           log file (default: stderr)\n"
             "   --log-format value    text or json (default: text)\n"
             "   --debug               debug logging\n"
             "   --systemd-cgroup      cgroupsPath is slice:prefix:name, managed by systemd\n"
             "   --policy value        the operator's policy (default: /etc/seerun/policy.json,\n"
             "                         else the built-in one)\n"
             "   --profile value       the policy profile this engine entry is bound to\n"
             "   --help, -h            show help\n"
             "   --version, -v         print the version\n");
}

static void version(void)
{
  printf("seerun version %s\ncommit: %s\nspec: %s\n", PACKAGE_VERSION, SEERUN_COMMIT,
         SR_OCI_VERSION);
}

int sr_cli_fail(struct sr_error_s **err)
{
  _cleanup_free_ char *text = sr_error_text(*err);
  const char *t = text ? text : "out of memory";
  if (sr_log_to_file())
    sr_log(SR_LOG_ERROR, "%s", t);
  fprintf(stderr, "seerun: %s\n", t);
  sr_error_free(err);
  return 1;
}

int sr_cli_fail_verb(const char *verb, struct sr_error_s **err)
{
  _cleanup_free_ char *text = sr_error_text(*err);
  const char *t = text ? text : "out of memory";
  /* containerd's and Docker's shims report the last error of the JSON log as "OCI runtime
   * create failed: <msg>": the message names the program, as runc's "runc create failed: ". */
  if (sr_log_to_file())
    sr_log(SR_LOG_ERROR, "seerun %s failed: %s", verb, t);
  fprintf(stderr, "seerun %s failed: %s\n", verb, t);
  sr_error_free(err);
  return 1;
}

int sr_cli_usage_error(const char *cmd, const char *usage_line, const char *fmt, ...)
{
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  if (sr_log_to_file())
    sr_log(SR_LOG_ERROR, "%s: %s", cmd, msg);
  fprintf(stderr, "seerun %s: %s\nUsage: seerun %s %s\n", cmd, msg, cmd, usage_line);
  return 1;
}

int sr_cli_unknown_option(const char *cmd, const char *usage_line, char **argv)
{
  const char *arg = argv[optind - 1];
  char shortopt[3] = {'-', (char)optopt, '\0'};
  /* Within a group of short options ("-fh", f refused) getopt has not moved past the group
   * yet, so argv[optind - 1] is the argument before it: the character is optopt (0 for a long
   * option). */
  if (optopt > 0 && optopt < 128 && strncmp(arg, "--", 2) != 0)
    arg = shortopt;
  return sr_cli_usage_error(cmd, usage_line, "unknown option `%s`", arg);
}

int sr_cli_setup(const struct sr_global *g, int preserve_fds, bool close_others)
{
  /* The caller's descriptors never reach the container (or a hook): those passed on purpose
   * with --preserve-fds excepted.  A leaked host directory descriptor is an escape
   * (CVE-2024-21626). */
  unsigned first = 3u + (unsigned)preserve_fds;
  /* --preserve-fds N promises descriptors 3 to 3+N-1: one that is not open would be taken by
   * one of the runtime's own (the exec fifo, the log) and passed to the container. */
  for (int fd = 3; fd < (int)first; fd++)
    if (fcntl(fd, F_GETFD) < 0) {
      fprintf(stderr, "seerun: --preserve-fds %d: descriptor %d is not open\n", preserve_fds, fd);
      return -1;
    }
  if (syscall(SYS_close_range, first, ~0U, close_others ? 0 : CLOSE_RANGE_CLOEXEC) < 0 &&
      close_others)
    for (int fd = (int)first; fd < 1024; fd++)
      close(fd);
  bool json = g->log_format && strcmp(g->log_format, "json") == 0;
  if (sr_log_setup(g->log, json, g->debug) < 0) {
    fprintf(stderr, "seerun: --log `%s`: %s\n", g->log, strerror(errno));
    return -1;
  }
  return 0;
}

/* Descriptors 0-2 must exist, or our own descriptors would take their numbers and reach the
 * container as its stdio. */
static void ensure_stdio(void)
{
  for (int fd = 0; fd < 3; fd++)
    if (fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
      int n = open("/dev/null", O_RDWR);
      if (n >= 0 && n != fd) {
        dup2(n, fd);
        close(n);
      }
    }
}

int main(int argc, char **argv)
{
  static const struct option longopts[] = {
      {"root", required_argument, NULL, 'r'},
      {"log", required_argument, NULL, 'l'},
      {"log-format", required_argument, NULL, 'f'},
      {"debug", no_argument, NULL, 'd'},
      {"systemd-cgroup", no_argument, NULL, 's'},
      {"criu", required_argument, NULL, 'c'},
      {"rootless", required_argument, NULL, 'R'},
      {"policy", required_argument, NULL, 'P'},
      {"profile", required_argument, NULL, 'p'},
      {"help", no_argument, NULL, 'h'},
      {"version", no_argument, NULL, 'v'},
      {NULL, 0, NULL, 0},
  };
  ensure_stdio();
  /* Writes to a closed pipe are errors we report, not a silent death. */
  signal(SIGPIPE, SIG_IGN);
  struct sr_global g = {.run = {.root = SR_DEFAULT_ROOT, .argv = argv}, .log_format = "text"};
  sr_opts_normalize(argc, argv, longopts, true);
  int c;
  opterr = 0;
  while ((c = getopt_long(argc, argv, "+hv", longopts, NULL)) != -1) {
    switch (c) {
    case 'r':
      g.run.root = optarg;
      break;
    case 'l':
      g.log = optarg;
      break;
    case 'f':
      if (strcmp(optarg, "text") != 0 && strcmp(optarg, "json") != 0) {
        fprintf(stderr, "seerun: --log-format: \"%s\" is not text or json\n", optarg);
        return 1;
      }
      g.log_format = optarg;
      break;
    case 'd':
      g.debug = true;
      break;
    case 's':
      g.run.systemd_cgroup = true;
      break;
    case 'P':
      g.run.policy = optarg;
      break;
    case 'p':
      g.run.profile = optarg;
      break;
    case 'c':
      g.criu = optarg;
      break;
    case 'R':
      if (strcmp(optarg, "true") == 0) {
        fprintf(stderr, "seerun: --rootless=true: rootless mode is not supported yet\n");
        return 1;
      }
      break;
    case 'h':
      usage(stdout);
      return 0;
    case 'v':
      version();
      return 0;
    default:
      fprintf(stderr, "seerun: unknown global option `%s`\n", argv[optind - 1]);
      usage(stderr);
      return 1;
    }
  }
  if (optind >= argc) {
    usage(stderr);
    return 1;
  }
  const char *name = argv[optind];
  if (strcmp(name, "help") == 0) {
    if (optind + 1 < argc && sr_help_print(argv[optind + 1]))
      return 0;
    usage(stdout);
    return 0;
  }
  /* COMMAND --help (or -h) anywhere before a "--": the command's help, in runc's form. */
  for (int i = optind + 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
    if ((strcmp(name, "exec") == 0 || strcmp(name, "sandbox") == 0) && argv[i][0] != '-')
      break; /* exec CMD ARGS: the rest belongs to the command run in the container */
    if ((strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) && sr_help_print(name))
      return 0;
  }
  for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
    if (strcmp(commands[i].name, name) == 0) {
      optind++;
      /* The command parses from argv[optind - 1] as its argv[0]. */
      return commands[i].fn(&g, argc - (optind - 1), argv + (optind - 1));
    }
  fprintf(stderr, "seerun: unknown command \"%s\"\n", name);
  usage(stderr);
  return 1;
}
