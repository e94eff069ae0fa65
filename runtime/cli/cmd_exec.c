/* seerun exec ID CMD [ARGS...] | --process FILE: a new process in a running container.  In
 * the foreground, exits with the process's status; seerun's own failures exit with 255, as
 * runc's do. */
#include "build.h"

#include "cli_common.h"

#include "cleanup.h"
#include "exec.h"
#include "exec_judge.h"
#include "lifecycle.h"
#include "names.h"
#include "opts.h"
#include "policy_run.h"
#include "sealed.h"
#include "terminal.h"
#include "fileio.h"
#include "number.h"
#include "pidfd.h"
#include "proc.h"
#include "unix_socket.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define USAGE "[command options] <container-id> <command> [command options]  ||  --process FILE <container-id>"
#define EXEC_FAILED 255

struct exec_args {
  const char *process_file, *cwd, *user, *process_label, *apparmor;
  char *process_json; /* --process FILE's content, read before the descriptors are closed */
  size_t process_len;
  bool tty, no_new_privs;
  char **env;
  size_t n_env;
  char **caps;
  size_t n_caps;
  char **gids;
  size_t n_gids;
};

static int push(char ***v, size_t *n, const char *s)
{
  char **nv = realloc(*v, (*n + 2) * sizeof(char *));
  if (nv == NULL)
    return -1;
  nv[(*n)++] = (char *)s;
  nv[*n] = NULL;
  *v = nv;
  return 0;
}

static void exec_args_release(struct exec_args *ea)
{
  free(ea->process_json);
  free(ea->env);
  free(ea->caps);
  free(ea->gids);
}

static int out_of_memory(void)
{
  fprintf(stderr, "seerun: out of memory\n");
  return EXEC_FAILED;
}

/* "uid[:gid]" as runc takes it. */
static int parse_user(const char *s, struct sr_user *u, sr_error_t *err)
{
  unsigned long long uid, gid;
  const char *colon = strchr(s, ':');
  char ubuf[32];
  size_t len = colon ? (size_t)(colon - s) : strlen(s);
  if (len == 0 || len >= sizeof(ubuf))
    return sr_error_make(err, 0, "--user: \"%s\" is not uid[:gid]", s);
  memcpy(ubuf, s, len);
  ubuf[len] = '\0';
  if (!sr_number_parse_uint(ubuf, UINT32_MAX, &uid) ||
      (colon && !sr_number_parse_uint(colon + 1, UINT32_MAX, &gid)))
    return sr_error_make(err, 0, "--user: \"%s\" is not uid[:gid] (numbers)", s);
  u->uid = (uint32_t)uid;
  if (colon)
    u->gid = (uint32_t)gid;
  return 0;
}

/* The env of the template with NAME=VALUE entries replaced or added. */
static int merge_env(struct sr_arena *a, struct sr_process *p, char **add, size_t n_add,
                     sr_error_t *err)
{
  char **env = sr_arena_array(a, p->n_env + n_add + 1, sizeof(char *));
  if (env == NULL)
    return sr_error_make(err, ENOMEM, "--env");
  size_t n = 0;
  for (size_t i = 0; i < p->n_env; i++)
    env[n++] = p->env[i];
  for (size_t j = 0; j < n_add; j++) {
    const char *eq = strchr(add[j], '=');
    if (eq == NULL || eq == add[j])
      return sr_error_make(err, 0, "--env: \"%s\" is not NAME=VALUE", add[j]);
    size_t klen = (size_t)(eq - add[j]) + 1;
    size_t i;
    for (i = 0; i < n; i++)
      if (strncmp(env[i], add[j], klen) == 0)
        break;
    env[i] = add[j];
    if (i == n)
      n++;
  }
  env[n] = NULL;
  p->env = env;
  p->n_env = n;
  return 0;
}

/* --process FILE: a file, or a pipe the caller passed (`-p /dev/fd/N`, as runc's tests and
 * some shims do), read to its end up to the config size bound. */
static int read_process_file(const char *path, char **out, size_t *len, sr_error_t *err)
{
  /* O_NONBLOCK: opening a fifo without a writer must not hang; cleared to read it. */
  _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) < 0)
    return sr_error_sys(err, "--process: open `%s`", path);
  if (S_ISREG(st.st_mode))
    return sr_fileio_read_at(AT_FDCWD, path, SR_MAX_CONFIG_SIZE, out, len, err) < 0
               ? sr_error_wrap(err, "--process")
               : 0;
  if (!S_ISFIFO(st.st_mode) && !S_ISSOCK(st.st_mode))
    return sr_error_make(err, 0, "--process: `%s`: not a regular file or a pipe", path);
  if (fcntl(fd, F_SETFL, 0) < 0)
    return sr_error_sys(err, "--process: `%s`", path);
  _cleanup_free_ char *buf = malloc(SR_MAX_CONFIG_SIZE + 1);
  if (buf == NULL)
    return sr_error_make(err, ENOMEM, "--process");
  size_t have = 0;
  for (;;) {
    ssize_t n = read(fd, buf + have, SR_MAX_CONFIG_SIZE + 1 - have);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return sr_error_sys(err, "--process: read `%s`", path);
    if (n == 0)
      break;
    have += (size_t)n;
    if (have > SR_MAX_CONFIG_SIZE)
      return sr_error_make(err, 0, "--process: `%s`: too large (the limit is %zu bytes)", path,
                           (size_t)SR_MAX_CONFIG_SIZE);
  }
  buf[have] = '\0';
  *out = steal_ptr(buf);
  *len = have;
  return 0;
}

/* The process to run: --process FILE, or the container's own process with the command line's
 * arguments and overrides. */
static int build_process(const struct exec_args *ea, char **args, int nargs,
                         struct sr_config *config, struct sr_process **out, sr_error_t *err)
{
  struct sr_arena *a = &config->arena;
  if (ea->process_file)
    return sr_config_parse_process(ea->process_json, ea->process_len, "--process", a, out, err);
  if (nargs == 0)
    return sr_error_make(err, 0, "exec: a command is required (or --process)");
  if (config->process == NULL)
    return sr_error_config(err, NULL, "process", "config.json: process: required for exec");
  struct sr_process *p = sr_arena_alloc(a, sizeof(*p));
  if (p == NULL)
    return sr_error_make(err, ENOMEM, "exec");
  *p = *config->process;
  p->args = sr_arena_array(a, (size_t)nargs + 1, sizeof(char *));
  if (p->args == NULL)
    return sr_error_make(err, ENOMEM, "exec");
  for (int i = 0; i < nargs; i++)
    p->args[i] = args[i];
  p->n_args = (size_t)nargs;
  p->terminal = ea->tty;
  p->has_console_size = false;
  if (ea->cwd)
    p->cwd = (char *)ea->cwd;
  if (ea->user && parse_user(ea->user, &p->user, err) < 0)
    return -1;
  if (ea->n_gids) {
    p->user.additional_gids = sr_arena_array(a, ea->n_gids, sizeof(uint32_t));
    if (p->user.additional_gids == NULL)
      return sr_error_make(err, ENOMEM, "exec");
    for (size_t i = 0; i < ea->n_gids; i++) {
      unsigned long long g;
      if (!sr_number_parse_uint(ea->gids[i], UINT32_MAX, &g))
        return sr_error_make(err, 0, "--additional-gids: \"%s\" is not a gid", ea->gids[i]);
      p->user.additional_gids[i] = (uint32_t)g;
    }
    p->user.n_additional_gids = ea->n_gids;
  }
  if (ea->no_new_privs)
    p->no_new_privileges = true;
  if (ea->process_label)
    p->selinux_label = (char *)ea->process_label;
  if (ea->apparmor)
    p->apparmor_profile = (char *)ea->apparmor;
  if (ea->n_caps) {
    struct sr_capabilities *caps = sr_arena_alloc(a, sizeof(*caps));
    if (caps == NULL)
      return sr_error_make(err, ENOMEM, "exec");
    if (p->capabilities)
      *caps = *p->capabilities;
    for (size_t i = 0; i < ea->n_caps; i++) {
      int64_t cap;
      if (!sr_names_lookup(SR_NAMES(sr_names_capability), ea->caps[i], &cap))
        return sr_error_make(err, 0, "--cap: unknown capability \"%s\"", ea->caps[i]);
      /* Never the inheritable set: that would pass the capability on across execs. */
      uint64_t bit = UINT64_C(1) << cap;
      caps->sets[SR_CAP_BOUNDING] |= bit;
      caps->sets[SR_CAP_EFFECTIVE] |= bit;
      caps->sets[SR_CAP_PERMITTED] |= bit;
    }
    p->capabilities = caps;
  }
  if (ea->n_env && merge_env(a, p, ea->env, ea->n_env, err) < 0)
    return -1;
  *out = p;
  return 0;
}

static int exec_failed(sr_error_t *err)
{
  sr_cli_fail(err);
  return EXEC_FAILED;
}

/* Everything after the command line: open, build, exec, wait. */
static int exec_run(const struct sr_global *g, const struct exec_args *ea, struct sr_exec_opts *o,
                    const char *id, char **args, int nargs)
{
  sr_error_t err = NULL;
  _cleanup_stored_ struct sr_container *ct = NULL;
  _cleanup_config_ struct sr_config *config = NULL;
  _cleanup_close_ int console_parent = -1;
  _cleanup_close_ int master = -1;
  struct sr_process *p = NULL;
  struct sr_exec_result res = {.pid = 0, .pidfd = -1};
  if (sr_stored_open(&g->run, id, true, &ct, &err) < 0 ||
      sr_container_load_config(ct, &config, &err) < 0 ||
      build_process(ea, args, nargs, config, &p, &err) < 0)
    return exec_failed(&err);
  if (sr_exec_judge(&g->run, ct, config, p, o, &err) < 0)
    return exec_failed(&err);
  if (sr_sealed_needed(config) && !sr_sealed_exe_is_sealed()) {
    /* Re-executed from the sealed binary, we come back here and take the lock again. */
    sr_stored_close(ct);
    ct = NULL;
    sr_sealed_reexec(g->run.argv, &err);
    return exec_failed(&err);
  }
  /* Resolved once and held from here on (after the sealed re-exec, whose new image would
   * connect again): see sr_create_console_connect. */
  if (p->terminal && o->console_socket && o->console_fd < 0 &&
      sr_unix_socket_connect_once(o->console_socket, "--console-socket", &o->console_fd, NULL,
                                  &err) < 0)
    return exec_failed(&err);
  if (p->terminal && o->console_socket == NULL &&
      sr_terminal_console_pair(o->detach, &console_parent, &o->console_fd, &err) < 0)
    return exec_failed(&err);
  int r = sr_exec(ct, config, p, o, &res, &err);
  if (o->console_fd >= 0)
    close(o->console_fd);
  if (r < 0)
    return exec_failed(&err);
  /* The process runs: the container is no longer ours to hold. */
  sr_stored_close(ct);
  ct = NULL;
  if (o->detach) {
    close(res.pidfd);
    return 0;
  }
  if (console_parent >= 0 && sr_terminal_recv_master(console_parent, &master, &err) < 0) {
    /* Nobody could reach its terminal or wait for it: it must not run on unwatched. */
    sr_pidfd_send_signal(res.pidfd, SIGKILL);
    while (waitpid(res.pid, NULL, 0) < 0 && errno == EINTR)
      ;
    close(res.pidfd);
    return exec_failed(&err);
  }
  sr_terminal_foreground_wait(master, res.pidfd, &err);
  sr_error_free(&err);
  close(res.pidfd);
  int status = 0;
  while (waitpid(res.pid, &status, 0) < 0 && errno == EINTR)
    ;
  return sr_proc_exit_status(status, EXEC_FAILED);
}

int sr_cmd_exec(const struct sr_global *g, int argc, char **argv)
{
  static const struct option longopts[] = {
      {"console-socket", required_argument, NULL, 'C'},
      {"cwd", required_argument, NULL, 'w'},
      {"env", required_argument, NULL, 'e'},
      {"tty", no_argument, NULL, 't'},
      {"user", required_argument, NULL, 'u'},
      {"additional-gids", required_argument, NULL, 'g'},
      {"process", required_argument, NULL, 'p'},
      {"detach", no_argument, NULL, 'd'},
      {"pid-file", required_argument, NULL, 'P'},
      {"process-label", required_argument, NULL, 'l'},
      {"apparmor", required_argument, NULL, 'a'},
      {"no-new-privs", no_argument, NULL, 'n'},
      {"cap", required_argument, NULL, 'c'},
      {"preserve-fds", required_argument, NULL, 'f'},
      {"ignore-paused", no_argument, NULL, 'i'},
      {"cgroup", required_argument, NULL, 'G'},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0},
  };
  _cleanup_(exec_args_release) struct exec_args ea = {0};
  struct sr_exec_opts o = {.console_fd = -1};
  sr_opts_begin(argc, argv, longopts, true);
  int c;
  while ((c = getopt_long(argc, argv, "+e:tu:g:p:dc:h", longopts, NULL)) != -1) {
    switch (c) {
    case 'C':
      o.console_socket = optarg;
      break;
    case 'w':
      ea.cwd = optarg;
      break;
    case 'e':
      if (push(&ea.env, &ea.n_env, optarg) < 0)
        return out_of_memory();
      break;
    case 't':
      ea.tty = true;
      break;
    case 'u':
      ea.user = optarg;
      break;
    case 'g':
      if (push(&ea.gids, &ea.n_gids, optarg) < 0)
        return out_of_memory();
      break;
    case 'p':
      ea.process_file = optarg;
      break;
    case 'd':
      o.detach = true;
      break;
    case 'P':
      o.pid_file = optarg;
      break;
    case 'l':
      ea.process_label = optarg;
      break;
    case 'a':
      ea.apparmor = optarg;
      break;
    case 'n':
      ea.no_new_privs = true;
      break;
    case 'c':
      if (push(&ea.caps, &ea.n_caps, optarg) < 0)
        return out_of_memory();
      break;
    case 'f':
      if (!sr_opts_int(optarg, 4096, &o.preserve_fds)) {
        sr_cli_usage_error("exec", USAGE, "--preserve-fds: \"%s\" is not a number", optarg);
        return EXEC_FAILED;
      }
      break;
    case 'i':
      o.ignore_paused = true;
      break;
    case 'G':
      /* runc moves the process into a sub-cgroup of the container's; ignoring it would run
       * the process under other limits than the caller asked for. */
      sr_cli_usage_error("exec", USAGE,
                         "--cgroup %s: not supported by seerun (the process "
                         "always joins the container's own cgroup)",
                         optarg);
      return EXEC_FAILED;
    case 'h':
      printf("Usage: seerun exec %s\n", USAGE);
      return 0;
    default:
      sr_cli_unknown_option("exec", USAGE, argv);
      return EXEC_FAILED;
    }
  }
  if (optind >= argc) {
    sr_cli_usage_error("exec", USAGE, "a container id is required");
    return EXEC_FAILED;
  }
  /* -p /dev/fd/N names a descriptor the caller passed: read before they are closed. */
  if (ea.process_file) {
    sr_error_t err = NULL;
    if (read_process_file(ea.process_file, &ea.process_json, &ea.process_len, &err) < 0)
      return exec_failed(&err);
  }
  if (sr_cli_setup(g, o.preserve_fds, true) < 0)
    return EXEC_FAILED;
  return exec_run(g, &ea, &o, argv[optind], argv + optind + 1, argc - optind - 1);
}
