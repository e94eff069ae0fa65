/* seerun sandbox [options] -- COMMAND [ARG...]: the command line of a sandbox (its options,
 * checked before anything is made), the run (sandbox_run.c), the error and the result
 * document (--json=FILE, --json-fd=N: never on stdout, the command's channel).  Exits with the
 * command's status (128+N for a signal), 124 at --timeout, 126/127 for a command that cannot
 * be executed / does not exist in the sandbox, 128+N for the caller's signal N, or 125 when
 * seerun itself fails. */
#include "build.h"

#include "cli_common.h"

#include "cleanup.h"
#include "opts.h"
#include "path.h"
#include "paths.h"
#include "policy.h"
#include "sandbox.h"
#include "fileio.h"
#include "number.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CMD "sandbox"
#define USAGE "[command options] -- COMMAND [ARG...]"
#define DEFAULT_OUT_MAX_BYTES (256ull << 20)
#define DEFAULT_OUT_MAX_FILES 10000
#define DEFAULT_KILL_AFTER_MS 2000

static const struct option longopts[] = {
    {"name", required_argument, NULL, 'n'},
    {"profile", required_argument, NULL, 'P'},
    {"rootfs", required_argument, NULL, 'r'},
    {"ro", required_argument, NULL, 'R'},
    {"workdir", required_argument, NULL, 'w'},
    {"env", required_argument, NULL, 'e'},
    {"out", required_argument, NULL, 'o'},
    {"out-max-bytes", required_argument, NULL, 'B'},
    {"out-max-files", required_argument, NULL, 'F'},
    {"memory", required_argument, NULL, 'm'},
    {"pids", required_argument, NULL, 'p'},
    {"cpus", required_argument, NULL, 'c'},
    {"timeout", required_argument, NULL, 't'},
    {"tmp-size", required_argument, NULL, 'T'},
    {"network", optional_argument, NULL, 'N'},
    {"allow-host", required_argument, NULL, 'A'},
    {"json", optional_argument, NULL, 'j'},
    {"json-fd", required_argument, NULL, 'J'},
    {"output-max-bytes", required_argument, NULL, 'O'},
    {"kill-after", required_argument, NULL, 'K'},
    {"out-overwrite", no_argument, NULL, 'W'},
    {"tty", no_argument, NULL, 'y'},
    {"workspace", required_argument, NULL, 'X'},
    {"workspace-size", required_argument, NULL, 'Z'},
    {"protect", required_argument, NULL, 'G'},
    {"apply", no_argument, NULL, 'a'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* In the form of the other commands' help (help.c). */
static void help(void)
{
  printf("NAME:\n   seerun sandbox\n\n"
         "USAGE:\n   seerun sandbox " USAGE "\n\n"
         "DESCRIPTION:\n"
         "The sandbox command runs COMMAND in a container seerun builds itself (the host's /usr,\n"
         "read-only, without /usr/local unless --ro /usr/local; a generated /etc with the host's\n"
         "CA certificates; no network; /tmp, /out and HOME, /home/sandbox, writable), under\n"
         "the operator's policy, relays its output and removes everything afterwards.  The\n"
         "command never holds the caller's descriptors: its stdin, stdout and stderr are pipes\n"
         "(a pty with --tty) seerun relays.  It sees only the host's /usr (and /bin, /lib ...\n"
         "where they are directories) and the --ro paths.\n\n"
         "EXIT STATUS:\n"
         "   the command's status (128+N when signal N killed it); 124: --timeout reached;\n"
         "   126: the command is not executable; 127: it does not exist in the sandbox;\n"
         "   128+N: seerun got signal N (see SIGNALS); 125: seerun itself failed.\n\n"
         "SIGNALS:\n"
         "   SIGTERM, SIGINT, SIGHUP  end the sandbox: the command gets SIGTERM, every process\n"
         "                            SIGKILL after --kill-after (or at a second signal);\n"
         "                            seerun exits 128+signal; the result: signalledByCaller\n"
         "   SIGQUIT, SIGUSR1/2       forwarded to the command\n"
         "   SIGKILL                  every process of the sandbox dies with seerun; what is left\n"
         "                            in the state root goes with the next `seerun sandbox` or\n"
         "                            `seerun gc`\n\n"
         "OPTIONS:\n"
         "   --profile value        the policy profile (default: as bound, else the policy's)\n"
         "   --rootfs value         root filesystem directory, read-only (default: built in)\n"
         "   --ro value             HOST[:DEST]: bind HOST read-only at DEST (default: the same\n"
         "                          path); repeatable\n"
         "   --workdir value        working directory (default: /tmp)\n"
         "   --env value            KEY=VALUE; repeatable\n"
         "   --out value            HOSTDIR: copy /out there once every process has exited\n"
         "   --out-max-bytes value  bound on the bytes copied (default: 256m)\n"
         "   --out-max-files value  bound on the files and directories copied (default: 10000)\n"
         "   --out-overwrite        HOSTDIR may hold files (replaced by name); without it a\n"
         "                          non-empty HOSTDIR is refused\n"
         "   --output-max-bytes value  bound on what is relayed of stdout and of stderr, each\n"
         "                          (default: 64m); the rest is read, dropped and counted\n"
         "   --memory value         memory limit, at least 8m (default: the profile's)\n"
         "   --pids value           process limit (default: the profile's)\n"
         "   --cpus value           CPU limit, in CPUs (default: the profile's, or none)\n"
         "   --timeout value        wall-clock limit in seconds: every process is killed at it\n"
         "   --kill-after value     seconds from the caller's SIGTERM/SIGINT to SIGKILL\n"
         "                          (default: 2)\n"
         "   --tmp-size value       size of /tmp (the profile bounds it)\n"
         "   --network[=MODE]       MODE proxy (the default): egress by host name through\n"
         "                          seerun's proxy at 127.0.0.1:3128 (HTTP_PROXY and the like\n"
         "                          are set), to what the profile's network.egress.allow and\n"
         "                          --allow-host list; host: the host's network, where the\n"
         "                          profile allows it; none: loopback only (without --network)\n"
         "   --allow-host NAME[:PORT]  with the proxy, also this host (80 and 443 without a\n"
         "                          port; *.domain for the names below it), where the profile's\n"
         "                          network.egress.callerMayAllow lets the caller add names\n"
         "   --tty                  a pty (from the sandbox's own devpts) as the command's\n"
         "                          stdin, stdout and stderr instead of pipes; seerun relays it\n"
         "                          (and the caller's terminal is raw meanwhile)\n"
         "   --workspace value      HOST:DEST: HOST read-write at DEST as a copy-on-write\n"
         "                          overlay (HOST itself is never written while the command\n"
         "                          runs; the result lists what changed: added, modified,\n"
         "                          deleted, with sizes); HOST's owner appears as the sandbox\n"
         "                          user; no symlink may be on HOST's path\n"
         "   --workspace-size value  bound on what the command may change there (default: 1g;\n"
         "                          past it, writes fail with ENOSPC inside)\n"
         "   --protect value        PATH (relative to HOST): read-only inside and never\n"
         "                          applied; repeatable (every .git always is)\n"
         "   --apply                copy the changes back into HOST once every process has\n"
         "                          exited: regular files, directories and deletions; symlinks\n"
         "                          and entries that changed on the host during the run are\n"
         "                          listed, not applied; nothing outside HOST is touched;\n"
         "                          nothing is applied of a command killed at --timeout, by\n"
         "                          a signal to seerun or out of memory; applied file by\n"
         "                          file (each whole or not at all, not all or none); a\n"
         "                          signal during it stops it, a temporary file left by a\n"
         "                          killed seerun is removed by the next sandbox or gc\n"
         "   --name value           the container id (default: the first free sandbox-N)\n"
         "   --json=FILE            the result document in FILE (never on stdout, the command's)\n"
         "   --json-fd value        the result document on descriptor N (3 or above)\n");
}

/* Where a --ro bind may not go: the sandbox's own mounts and system directories (at, below
 * or above them); /usr/local, which the sandbox hides, excepted. */
static const char *const reserved_dests[] = {
    "/proc", "/dev", "/sys",  "/usr", "/etc",   "/tmp",   "/var/tmp", "/run",
    "/out",  "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",  SR_SANDBOX_HOME};

static bool under(const char *path, const char *dir)
{
  size_t l = strlen(dir);
  return strncmp(path, dir, l) == 0 && (path[l] == '/' || path[l] == '\0');
}

static bool overlaps(const char *a, const char *b)
{
  return under(a, b) || under(b, a);
}

struct cli {
  struct sr_sandbox_opts o;
  const char *profile;
  const char *json_path;
  char *json_abs; /* json_path made absolute (owned) */
  int json_fd; /* --json-fd, or the opened --json=FILE; -1: no result document */
  bool json_fd_owned;
  /* What the user wrote for each --ro, in order (the config's mounts name them by index). */
  const char **ro_args;
  char *ws_host;         /* --workspace's HOST */
  const char *ws_arg;    /* --workspace as the user wrote it */
  bool protect_given;
  struct sr_arena arena; /* --allow-host entries */
};

static void cli_free(struct cli *c)
{
  for (size_t i = 0; i < c->o.n_ro; i++) {
    free(c->o.ro[i].source);
    free(c->o.ro[i].dest);
  }
  free(c->o.ro);
  free(c->ro_args);
  for (size_t i = 0; i < c->o.n_ws_protect; i++)
    free(c->o.ws_protect[i]);
  free(c->o.ws_protect);
  free(c->o.ws_dest);
  free(c->ws_host);
  free(c->o.env);
  if (c->json_fd_owned && c->json_fd >= 0)
    close(c->json_fd);
  free(c->json_abs);
  free((char *)c->o.rootfs_dir);
  free((char *)c->o.workdir);
  sr_arena_release(&c->arena);
}

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  sr_cli_usage_error(CMD, USAGE, "%s", msg);
  return SR_SANDBOX_EXIT_RUNTIME;
}

static int parse_ro(struct cli *c, const char *arg)
{
  _cleanup_free_ char *spec = strdup(arg);
  if (spec == NULL)
    return usage_error("out of memory");
  char *colon = strchr(spec, ':');
  if (colon)
    *colon = '\0';
  char host[PATH_MAX];
  if (spec[0] == '\0')
    return usage_error("--ro `%s`: no host path", arg);
  if (realpath(spec, host) == NULL) {
    fprintf(stderr, "seerun sandbox: --ro `%s`: %s\n", spec, strerror(errno));
    return SR_SANDBOX_EXIT_RUNTIME;
  }
  struct stat st;
  if (stat(host, &st) < 0)
    return usage_error("--ro `%s`: cannot stat it", spec);
  char dest[PATH_MAX];
  snprintf(dest, sizeof(dest), "%s", colon ? colon + 1 : host);
  if (dest[0] != '/')
    return usage_error("--ro: the destination `%s` must be an absolute path", dest);
  sr_path_clean(dest, dest);
  if (strcmp(dest, "/") == 0)
    return usage_error("--ro: the destination cannot be `%s`", dest);
  bool usr_local = under(dest, SR_SANDBOX_USR_LOCAL);
  for (size_t i = 0; i < sizeof(reserved_dests) / sizeof(reserved_dests[0]); i++)
    if (overlaps(dest, reserved_dests[i]) &&
        !(usr_local && strcmp(reserved_dests[i], "/usr") == 0)) {
      fprintf(stderr,
              "seerun sandbox: --ro: the destination `%s` overlaps the sandbox's own "
              "`%s` (give another one: --ro HOST:DEST)\n",
              dest, reserved_dests[i]);
      return SR_SANDBOX_EXIT_RUNTIME;
    }
  for (size_t i = 0; i < c->o.n_ro; i++)
    if (overlaps(dest, c->o.ro[i].dest))
      return usage_error("--ro: the destination `%s` overlaps another --ro", dest);
  struct sr_sandbox_bind *nv = realloc(c->o.ro, (c->o.n_ro + 1) * sizeof(*nv));
  if (nv == NULL)
    return usage_error("out of memory");
  c->o.ro = nv;
  const char **na = realloc(c->ro_args, (c->o.n_ro + 1) * sizeof(*na));
  if (na == NULL)
    return usage_error("out of memory");
  c->ro_args = na;
  na[c->o.n_ro] = arg;
  nv[c->o.n_ro] = (struct sr_sandbox_bind){strdup(host), strdup(dest), S_ISDIR(st.st_mode)};
  if (nv[c->o.n_ro].source == NULL || nv[c->o.n_ro].dest == NULL)
    return usage_error("out of memory");
  c->o.n_ro++;
  return 0;
}

/* --workspace HOST[:DEST]: DEST checked as a --ro's (HOST is opened at the run, once). */
static int parse_workspace(struct cli *c, const char *arg)
{
  if (c->o.ws_host)
    return usage_error("--workspace: give one");
  const char *colon = strrchr(arg, ':');
  size_t hlen = colon ? (size_t)(colon - arg) : strlen(arg);
  if (hlen == 0)
    return usage_error("--workspace `%s`: no host path", arg);
  char dest[PATH_MAX];
  snprintf(dest, sizeof(dest), "%s", colon ? colon + 1 : "/workspace");
  if (dest[0] != '/')
    return usage_error("--workspace: the destination `%s` must be an absolute path", dest);
  sr_path_clean(dest, dest);
  if (strcmp(dest, "/") == 0)
    return usage_error("--workspace: the destination cannot be `/`");
  for (size_t i = 0; i < sizeof(reserved_dests) / sizeof(reserved_dests[0]); i++)
    if (overlaps(dest, reserved_dests[i])) {
      fprintf(stderr,
              "seerun sandbox: --workspace: the destination `%s` overlaps the sandbox's own "
              "`%s` (give another one: --workspace HOST:DEST)\n",
              dest, reserved_dests[i]);
      return SR_SANDBOX_EXIT_RUNTIME;
    }
  c->ws_host = strndup(arg, hlen);
  c->o.ws_dest = strdup(dest);
  if (c->ws_host == NULL || c->o.ws_dest == NULL)
    return usage_error("out of memory");
  c->o.ws_host = c->ws_host;
  c->ws_arg = arg;
  return 0;
}

static int add_protect(struct cli *c, const char *arg)
{
  char path[PATH_MAX];
  if (arg[0] == '/' || strlen(arg) + 2 > sizeof(path))
    return usage_error("--protect `%s`: a path relative to the workspace", arg);
  snprintf(path, sizeof(path), "/%s", arg);
  sr_path_clean(path, path);
  /* Cleaned as an absolute path, ".." cannot climb above the workspace; still refused, since
   * "a/../b" is rarely what was meant. */
  if (strcmp(path, "/") == 0 || strstr(arg, "..") != NULL)
    return usage_error("--protect `%s`: a path below the workspace, without `..`", arg);
  for (size_t i = 0; i < c->o.n_ws_protect; i++)
    if (strcmp(c->o.ws_protect[i], path + 1) == 0)
      return 0;
  char **nv = realloc(c->o.ws_protect, (c->o.n_ws_protect + 1) * sizeof(*nv));
  if (nv == NULL)
    return usage_error("out of memory");
  c->o.ws_protect = nv;
  nv[c->o.n_ws_protect] = strdup(path + 1);
  if (nv[c->o.n_ws_protect] == NULL)
    return usage_error("out of memory");
  c->o.n_ws_protect++;
  return 0;
}

static int parse_size(const char *opt, const char *arg, uint64_t *out)
{
  if (sr_policy_parse_size(arg, out) < 0 || *out == 0) {
    fprintf(stderr,
            "seerun sandbox: %s: \"%s\" is not a size (bytes, or a number with a k, m, "
            "g or t suffix)\n",
            opt, arg);
    return SR_SANDBOX_EXIT_RUNTIME;
  }
  return 0;
}

static int parse_positive(const char *opt, const char *arg, double max, double *out)
{
  char *end;
  errno = 0;
  double v = strtod(arg, &end);
  if (errno || end == arg || *end != '\0' || v != v) {
    fprintf(stderr, "seerun sandbox: %s: \"%s\" is not a number\n", opt, arg);
    return SR_SANDBOX_EXIT_RUNTIME;
  }
  if (!(v > 0) || v > max) {
    fprintf(stderr, "seerun sandbox: %s: \"%s\": must be positive, at most %g\n", opt, arg, max);
    return SR_SANDBOX_EXIT_RUNTIME;
  }
  *out = v;
  return 0;
}

static uint64_t ceil_u64(double v)
{
  uint64_t u = (uint64_t)v;
  return (double)u < v ? u + 1 : u;
}

static int parse_option(struct cli *c, int opt, const char *arg)
{
  struct sr_sandbox_opts *o = &c->o;
  unsigned long long u;
  double d;
  char path[PATH_MAX];
  int r;
  switch (opt) {
  case 'n': {
    sr_error_t err = NULL;
    if (sr_statedir_validate_id(arg, &err) < 0) {
      sr_cli_fail(&err);
      return SR_SANDBOX_EXIT_RUNTIME;
    }
    if (strlen(arg) > 200)
      return usage_error("--name: \"%s\" is longer than 200 bytes", arg);
    o->name = arg;
    return 0;
  }
  case 'P':
    c->profile = arg;
    return 0;
  case 'r': {
    struct stat st;
    if (realpath(arg, path) == NULL || stat(path, &st) < 0 || !S_ISDIR(st.st_mode))
      return usage_error("--rootfs `%s`: not a directory", arg);
    free((char *)o->rootfs_dir);
    o->rootfs_dir = strdup(path);
    return o->rootfs_dir ? 0 : usage_error("out of memory");
  }
  case 'R':
    return parse_ro(c, arg);
  case 'w':
    if (arg[0] != '/' || strlen(arg) >= sizeof(path))
      return usage_error("--workdir `%s`: must be an absolute path", arg);
    snprintf(path, sizeof(path), "%s", arg);
    sr_path_clean(path, path);
    free((char *)o->workdir);
    o->workdir = strdup(path);
    return o->workdir ? 0 : usage_error("out of memory");
  case 'e': {
    if (strchr(arg, '=') == NULL || arg[0] == '=')
      return usage_error("--env `%s`: must be KEY=VALUE", arg);
    char **nv = realloc(o->env, (o->n_env + 1) * sizeof(char *));
    if (nv == NULL)
      return usage_error("out of memory");
    o->env = nv;
    o->env[o->n_env++] = (char *)arg;
    return 0;
  }
  case 'o':
    o->out_dir = arg;
    return 0;
  case 'B':
    return parse_size("--out-max-bytes", arg, &o->out_max_bytes);
  case 'F':
    if (!sr_number_parse_uint(arg, 100000000, &u) || u == 0)
      return usage_error("--out-max-files: \"%s\" is not a positive number", arg);
    o->out_max_files = u;
    return 0;
  case 'm':
    if ((r = parse_size("--memory", arg, &o->memory)) != 0)
      return r;
    if (o->memory < SR_SANDBOX_MEMORY_MIN) {
      fprintf(stderr,
              "seerun sandbox: --memory %s: below the minimum, %llum (a size without a suffix "
              "is in bytes)\n",
              arg, SR_SANDBOX_MEMORY_MIN >> 20);
      return SR_SANDBOX_EXIT_RUNTIME;
    }
    return 0;
  case 'p':
    if (!sr_number_parse_uint(arg, INT32_MAX, &u) || u == 0)
      return usage_error("--pids: \"%s\" is not a positive number", arg);
    o->pids = (int64_t)u;
    return 0;
  case 'c':
    if ((r = parse_positive("--cpus", arg, 1024, &d)) != 0)
      return r;
    o->cpu_quota_us = ceil_u64(d * SR_SANDBOX_CPU_PERIOD_US);
    if (o->cpu_quota_us < 1000)
      o->cpu_quota_us = 1000; /* the kernel's minimum quota */
    return 0;
  case 't':
    if ((r = parse_positive("--timeout", arg, 1e7, &d)) != 0)
      return r;
    o->timeout_ms = ceil_u64(d * 1000);
    return 0;
  case 'T': {
    uint64_t size;
    if ((r = parse_size("--tmp-size", arg, &size)) != 0)
      return r;
    o->tmp_size = arg;
    o->own_tmp_size = size;
    return 0;
  }
  case 'N':
    /* A change from the host's network: --network alone is the proxy now. */
    if (arg == NULL || strcmp(arg, "proxy") == 0) {
      o->proxy = true;
      o->network = false;
    } else if (strcmp(arg, "host") == 0) {
      o->network = true;
      o->proxy = false;
    } else if (strcmp(arg, "none") == 0) {
      o->network = o->proxy = false;
    } else {
      fprintf(stderr, "seerun sandbox: --network=%s: unknown mode (proxy, host or none)\n", arg);
      return SR_SANDBOX_EXIT_RUNTIME;
    }
    return 0;
  case 'A': {
    struct sr_egress_host *v =
        sr_arena_array(&c->arena, o->n_allow_hosts + 1, sizeof(*o->allow_hosts));
    sr_error_t perr = NULL;
    if (v == NULL)
      return SR_SANDBOX_EXIT_RUNTIME;
    if (o->n_allow_hosts)
      memcpy(v, o->allow_hosts, o->n_allow_hosts * sizeof(*v));
    if (sr_policy_egress_host_parse(&c->arena, arg, "--allow-host", &v[o->n_allow_hosts], &perr) <
        0) {
      _cleanup_free_ char *text = sr_error_text(perr);
      sr_error_free(&perr);
      fprintf(stderr, "seerun sandbox: %s\n", text ? text : "--allow-host");
      return SR_SANDBOX_EXIT_RUNTIME;
    }
    o->allow_hosts = v;
    o->n_allow_hosts++;
    if (!o->network)
      o->proxy = true; /* names to allow mean the proxy */
    return 0;
  }
  case 'j':
    /* The command's output is untrusted: a result on its channel could be forged by it. */
    if (arg == NULL || arg[0] == '\0' || strcmp(arg, "-") == 0) {
      fprintf(stderr, "seerun sandbox: --json: the result document is not written to stdout "
                      "(the command's output): use --json=FILE or --json-fd=N\n");
      return SR_SANDBOX_EXIT_RUNTIME;
    }
    c->json_path = arg;
    return 0;
  case 'J':
    if (!sr_number_parse_uint(arg, INT32_MAX, &u) || u < 3)
      return usage_error("--json-fd: \"%s\" is not a descriptor of 3 or above (0, 1 and 2 are "
                         "the command's)",
                         arg);
    /* Close-on-exec: the descriptor is the caller's, never the command's. */
    if (fcntl((int)u, F_GETFL) < 0 || fcntl((int)u, F_SETFD, FD_CLOEXEC) < 0)
      return usage_error("--json-fd %s: not an open descriptor", arg);
    c->json_fd = (int)u;
    return 0;
  case 'O':
    return parse_size("--output-max-bytes", arg, &o->output_max_bytes);
  case 'K':
    if ((r = parse_positive("--kill-after", arg, 3600, &d)) != 0)
      return r;
    o->kill_after_ms = ceil_u64(d * 1000);
    return 0;
  case 'W':
    o->out_overwrite = true;
    return 0;
  case 'y':
    o->tty = true;
    return 0;
  case 'X':
    return parse_workspace(c, arg);
  case 'Z':
    if ((r = parse_size("--workspace-size", arg, &o->ws_size)) != 0)
      return r;
    if (o->ws_size < (1ull << 20))
      return usage_error("--workspace-size %s: below the minimum, 1m", arg);
    return 0;
  case 'G':
    c->protect_given = true;
    return add_protect(c, arg);
  case 'a':
    o->ws_apply = true;
    return 0;
  }
  return -1;
}

/* 0: parsed; SR_SANDBOX_EXIT_RUNTIME: error (printed); -2: help printed. */
static int parse_args(struct cli *c, int argc, char **argv)
{
  sr_opts_begin(argc, argv, longopts, true);
  int opt;
  while ((opt = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
    if (opt == 'h') {
      help();
      return -2;
    }
    if (opt == '?' || opt == ':') {
      const char *bad = argv[optind - 1];
      bool missing = optopt && strchr("nPrRweoBFmpctTJOKXZG", optopt);
      return usage_error(missing ? "option `%s` needs a value" : "unknown option `%s`", bad);
    }
    int r = parse_option(c, opt, optarg);
    if (r != 0)
      return r;
  }
  if (optind >= argc)
    return usage_error("a command is required");
  c->o.argv = argv + optind;
  c->o.argc = (size_t)(argc - optind);
  if (c->o.out_max_bytes == 0)
    c->o.out_max_bytes = DEFAULT_OUT_MAX_BYTES;
  if (c->o.out_max_files == 0)
    c->o.out_max_files = DEFAULT_OUT_MAX_FILES;
  if (c->o.output_max_bytes == 0)
    c->o.output_max_bytes = SR_SANDBOX_OUTPUT_MAX_BYTES;
  if (c->o.kill_after_ms == 0)
    c->o.kill_after_ms = DEFAULT_KILL_AFTER_MS;
  if (c->json_path && c->json_fd >= 0)
    return usage_error("--json=FILE and --json-fd: give one");
  if (c->o.ws_host == NULL && (c->o.ws_apply || c->protect_given || c->o.ws_size))
    return usage_error("--apply, --protect and --workspace-size need --workspace");
  if (c->o.ws_host) {
    int r = add_protect(c, ".git");
    if (r != 0)
      return r;
    if (c->o.ws_size == 0)
      c->o.ws_size = SR_SANDBOX_WS_SIZE_DEFAULT;
    for (size_t i = 0; i < c->o.n_ro; i++)
      if (overlaps(c->o.ws_dest, c->o.ro[i].dest))
        return usage_error("--workspace: the destination `%s` overlaps --ro `%s`",
                           c->o.ws_dest, c->o.ro[i].dest);
  }
  if (c->o.workdir == NULL) {
    c->o.workdir = strdup("/tmp");
    if (c->o.workdir == NULL)
      return usage_error("out of memory");
  }
  return 0;
}

/* --json=FILE: opened before anything runs, so that a path it cannot write fails first. */
static int open_json(struct cli *c)
{
  if (c->json_path == NULL)
    return 0;
  /* Absolute: write_json looks at the name once more, wherever seerun's cwd is by then. */
  if (c->json_path[0] != '/') {
    char cwd[PATH_MAX];
    if (getcwd(cwd, sizeof(cwd)) == NULL ||
        asprintf(&c->json_abs, "%s/%s", cwd, c->json_path) < 0) {
      c->json_abs = NULL;
      fprintf(stderr, "seerun sandbox: --json=%s: %s\n", c->json_path, strerror(errno));
      return SR_SANDBOX_EXIT_RUNTIME;
    }
    c->json_path = c->json_abs;
  }
  c->json_fd = open(c->json_path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (c->json_fd < 0) {
    fprintf(stderr, "seerun sandbox: --json=%s: %s\n", c->json_path, strerror(errno));
    return SR_SANDBOX_EXIT_RUNTIME;
  }
  c->json_fd_owned = true;
  return 0;
}

static int write_json(const struct cli *c, const struct sr_sandbox_result *r)
{
  _cleanup_free_ char *doc = NULL;
  size_t len;
  sr_error_t err = NULL;
  if (sr_sandbox_result_json(r, &doc, &len, &err) < 0)
    return sr_cli_fail(&err);
  if (sr_fileio_write_all(c->json_fd, doc, len) < 0 ||
      sr_fileio_write_all(c->json_fd, "\n", 1) < 0) {
    if (c->json_path)
      fprintf(stderr, "seerun sandbox: --json=%s: %s\n", c->json_path, strerror(errno));
    else
      fprintf(stderr, "seerun sandbox: --json-fd %d: %s\n", c->json_fd, strerror(errno));
    return 1;
  }
  /* FILE inside --out (with --out-overwrite) or inside the workspace (with --apply) may have
   * been replaced, by name, with a file of the code's while it ran: the document goes to the
   * name the caller reads too, never leaving the code's there. */
  struct stat held, named;
  if (c->json_path && fstat(c->json_fd, &held) == 0 &&
      (lstat(c->json_path, &named) < 0 || named.st_dev != held.st_dev ||
       named.st_ino != held.st_ino)) {
    fprintf(stderr, "seerun sandbox: --json=%s: replaced while the command ran (by /out or "
                    "--apply): written again\n", c->json_path);
    int fd = open(c->json_path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
    bool ok =
        fd >= 0 && sr_fileio_write_all(fd, doc, len) == 0 && sr_fileio_write_all(fd, "\n", 1) == 0;
    int saved = errno;
    if (fd >= 0)
      close(fd);
    if (!ok) {
      fprintf(stderr, "seerun sandbox: --json=%s: %s\n", c->json_path, strerror(saved));
      return 1;
    }
  }
  return 0;
}

/* The profiles the policy has, "a, b, c"; whether `name` is one of them. */
static bool list_profiles(const struct sr_global *g, const char *name, char *buf, size_t size)
{
  buf[0] = '\0';
  struct sr_invocation any = g->run;
  any.profile = NULL;
  _cleanup_policy_ctx_ struct sr_policy_ctx pc = {0};
  sr_error_t err = NULL;
  if (sr_policy_run_load(&any, &pc, &err) < 0) {
    sr_error_free(&err);
    return true; /* unreadable: nothing to add */
  }
  bool found = false;
  size_t used = 0;
  for (size_t i = 0; i < pc.policy->n_profiles; i++) {
    found = found || strcmp(pc.policy->profiles[i].name, name) == 0;
    if (used >= size)
      continue;
    int n = snprintf(buf + used, size - used, "%s%s", i ? ", " : "", pc.policy->profiles[i].name);
    used += n > 0 ? (size_t)n : 0;
  }
  return found;
}

/* A refusal of "mounts[N]..." (the error's field, set where it was made) is of the config
 * seerun generated: the user wrote --ro HOST[:DEST].  The --ro binds are its last mounts, in
 * order, from ro_first_mount on. */
static char *user_words(const struct cli *c, long ro_first_mount, const struct sr_error_s *e,
                        const char *text)
{
  const char *field = e->field;
  if (field == NULL || strncmp(field, "mounts[", 7) != 0 || ro_first_mount < 0)
    return NULL;
  char *end;
  long n = strtol(field + 7, &end, 10);
  if (end == field + 7 || *end != ']')
    return NULL;
  /* The workspace's bind comes right before them. */
  bool ws = c->ws_arg && n == ro_first_mount - 1;
  if (!ws && (n < ro_first_mount || n - ro_first_mount >= (long)c->o.n_ro))
    return NULL;
  const char *opt = ws ? "--workspace" : "--ro";
  const char *arg = ws ? c->ws_arg : c->ro_args[n - ro_first_mount];
  /* "mounts[8].source: ..." -> "--ro /root (mounts[8].source): ..." */
  const char *at = strstr(text, field);
  char *out = NULL;
  int r = at ? asprintf(&out, "%.*s%s %s (%s)%s", (int)(at - text), text, opt, arg, field,
                        at + strlen(field))
             : asprintf(&out, "%s %s (%s): %s", opt, arg, field, text);
  return r < 0 ? NULL : out;
}

static void print_error(const struct cli *c, const struct sr_global *g, long ro_first_mount,
                        sr_error_t *err)
{
  _cleanup_free_ char *text = sr_error_text(*err);
  _cleanup_free_ char *mine = text ? user_words(c, ro_first_mount, *err, text) : NULL;
  sr_error_free(err);
  if (text == NULL) {
    fprintf(stderr, "seerun sandbox: out of memory\n");
    return;
  }
  const char *shown = mine ? mine : text;
  char names[1024];
  if (c->profile && !list_profiles(g, c->profile, names, sizeof(names)))
    fprintf(stderr, "seerun sandbox: %s (the policy's profiles: %s)\n", shown,
            names[0] ? names : "none");
  else
    fprintf(stderr, "seerun sandbox: %s\n", shown);
}

static void format_bytes(uint64_t v, char *buf, size_t size)
{
  if (v >= (1ull << 20) && v % (1ull << 20) == 0)
    snprintf(buf, size, "%llu MiB", (unsigned long long)(v >> 20));
  else
    snprintf(buf, size, "%llu bytes", (unsigned long long)v);
}

/* One line on stderr a person can act on, for what ended the command from outside it. */
static void explain(const struct sr_sandbox_result *r)
{
  if (r->error) {
    if (r->exit_code == SR_SANDBOX_EXIT_NOTFOUND)
      fprintf(stderr, "seerun sandbox: hint: only the host's /usr (with /bin, /lib ...) and the "
                      "--ro paths are visible in the sandbox; the command must be there\n");
    return;
  }
  if (r->timed_out)
    fprintf(stderr, "seerun sandbox: killed: --timeout %g s reached\n",
            (double)r->timeout_ms / 1000.0);
  else if (r->usage.oom_kills > 0) {
    char limit[64];
    format_bytes(r->memory_limit > 0 ? (uint64_t)r->memory_limit : 0, limit, sizeof(limit));
    fprintf(stderr,
            "seerun sandbox: killed: out of memory (the memory limit, %s, reached; "
            "--memory)\n",
            limit);
  } else if (r->caller_signal) {
    char name[32];
    const char *abbrev = sigabbrev_np(r->caller_signal);
    snprintf(name, sizeof(name), "SIG%s", abbrev ? abbrev : "?");
    fprintf(stderr, "seerun sandbox: stopped: seerun got %s%s\n", name,
            r->interrupted ? " (the command was killed)" : "");
  }
}

int sr_cmd_sandbox(const struct sr_global *g, int argc, char **argv)
{
  struct cli c = {.json_fd = -1};
  int r = parse_args(&c, argc, argv);
  if (r == 0 && c.profile && g->run.profile && strcmp(c.profile, g->run.profile) != 0)
    r = usage_error("--profile: \"%s\" contradicts the global --profile", c.profile);
  /* Rootless is not implemented: say so before anything fails halfway. */
  if (r == 0 && geteuid() != 0) {
    fprintf(stderr, "seerun sandbox: seerun must run as root (rootless is not implemented)\n");
    r = SR_SANDBOX_EXIT_RUNTIME;
  }
  /* The caller's other descriptors are closed, or with --json-fd made close-on-exec. */
  if (r == 0 && sr_cli_setup(g, 0, c.json_fd < 0) < 0)
    r = SR_SANDBOX_EXIT_RUNTIME;
  if (r == 0)
    r = open_json(&c);
  if (r != 0) {
    cli_free(&c);
    return r == -2 ? 0 : r;
  }
  struct sr_sandbox s;
  sr_sandbox_run_init(&s, &g->run, c.profile, &c.o);
  sr_error_t err = NULL;
  if (sr_sandbox_run(&s, &err) < 0)
    print_error(&c, g, s.ro_first_mount, &err);
  explain(&s.res);
  int status = s.res.exit_code;
  if (c.json_fd >= 0 && write_json(&c, &s.res) != 0 && status == 0)
    status = SR_SANDBOX_EXIT_RUNTIME;
  sr_sandbox_run_release(&s);
  cli_free(&c);
  return status;
}
