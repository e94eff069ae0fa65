/* seerun sandbox [options] -- COMMAND [ARG...]: the command line of a sandbox (its options,
 * checked before anything is made), the run (sandbox_run.c), the error and the result
 * document (--json).  Exits with the command's status (128+N for a signal), or 125 when
 * seerun itself fails. */
#include "build.h"

#include "cli_common.h"

#include "cleanup.h"
#include "opts.h"
#include "path.h"
#include "paths.h"
#include "policy.h"
#include "sandbox.h"
#include "util.h"

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
    {"network", no_argument, NULL, 'N'},
    {"json", optional_argument, NULL, 'j'},
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
         "read-only, with a generated /etc; no network; scratch space and /out writable), under\n"
         "the operator's policy, streams its output and removes everything afterwards.  It exits\n"
         "with the command's status (128+N for signal N), or 125 when seerun itself fails.\n\n"
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
         "   --memory value         memory limit (default: the profile's)\n"
         "   --pids value           process limit (default: the profile's)\n"
         "   --cpus value           CPU limit, in CPUs (default: none)\n"
         "   --timeout value        wall-clock limit in seconds: every process is killed at it\n"
         "   --tmp-size value       size of /tmp (the profile bounds it)\n"
         "   --network              the host's network, where the profile allows it\n"
         "   --name value           the container id (default: the first free sandbox-N)\n"
         "   --json[=FILE]          the result document on stdout (or in FILE)\n");
}

/* Where a --ro bind may not go: the sandbox's own mounts and system directories (at, below
 * or above them). */
static const char *const reserved_dests[] = {"/proc", "/dev",     "/sys",   "/usr",   "/etc",
                                             "/tmp",  "/var/tmp", "/run",   "/out",   "/bin",
                                             "/sbin", "/lib",     "/lib32", "/lib64", "/libx32"};

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
  bool json;
  const char *json_path;
};

static void cli_free(struct cli *c)
{
  for (size_t i = 0; i < c->o.n_ro; i++) {
    free(c->o.ro[i].source);
    free(c->o.ro[i].dest);
  }
  free(c->o.ro);
  free(c->o.env);
  free((char *)c->o.rootfs_dir);
  free((char *)c->o.workdir);
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
  for (size_t i = 0; i < sizeof(reserved_dests) / sizeof(reserved_dests[0]); i++)
    if (overlaps(dest, reserved_dests[i])) {
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
  nv[c->o.n_ro] = (struct sr_sandbox_bind){strdup(host), strdup(dest), S_ISDIR(st.st_mode)};
  if (nv[c->o.n_ro].source == NULL || nv[c->o.n_ro].dest == NULL)
    return usage_error("out of memory");
  c->o.n_ro++;
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
  if (errno || end == arg || *end != '\0' || !(v > 0) || v > max) {
    fprintf(stderr, "seerun sandbox: %s: \"%s\" is not a number between 0 and %g\n", opt, arg, max);
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
    if (sr_validate_id(arg, &err) < 0) {
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
    if (!sr_parse_uint(arg, 100000000, &u) || u == 0)
      return usage_error("--out-max-files: \"%s\" is not a positive number", arg);
    o->out_max_files = u;
    return 0;
  case 'm':
    return parse_size("--memory", arg, &o->memory);
  case 'p':
    if (!sr_parse_uint(arg, INT32_MAX, &u) || u == 0)
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
    o->network = true;
    return 0;
  case 'j':
    c->json = true;
    c->json_path = arg;
    return 0;
  }
  return -1;
}

/* 0: parsed; SR_SANDBOX_EXIT_RUNTIME: error (printed); -2: help printed. */
static int parse_args(struct cli *c, int argc, char **argv)
{
  sr_opts_normalize(argc, argv, longopts, true);
  optind = 0; /* a full restart of getopt: see opts.h */
  opterr = 0;
  int opt;
  while ((opt = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
    if (opt == 'h') {
      help();
      return -2;
    }
    if (opt == '?' || opt == ':') {
      const char *bad = argv[optind - 1];
      bool missing = optopt && strchr("nPrRweoBFmpctT", optopt);
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
  if (c->o.workdir == NULL) {
    c->o.workdir = strdup("/tmp");
    if (c->o.workdir == NULL)
      return usage_error("out of memory");
  }
  return 0;
}

static int write_json(const struct cli *c, const struct sr_sandbox_result *r)
{
  _cleanup_free_ char *doc = NULL;
  size_t len;
  sr_error_t err = NULL;
  if (sr_sandbox_result_json(r, &doc, &len, &err) < 0)
    return sr_cli_fail(&err);
  if (c->json_path == NULL || strcmp(c->json_path, "-") == 0) {
    fflush(stdout);
    if (sr_write_all(STDOUT_FILENO, doc, len) < 0 || sr_write_all(STDOUT_FILENO, "\n", 1) < 0)
      return 1;
    return 0;
  }
  _cleanup_close_ int fd =
      open(c->json_path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0 || sr_write_all(fd, doc, len) < 0 || sr_write_all(fd, "\n", 1) < 0) {
    fprintf(stderr, "seerun sandbox: --json `%s`: %s\n", c->json_path, strerror(errno));
    return 1;
  }
  return 0;
}

int sr_cmd_sandbox(const struct sr_global *g, int argc, char **argv)
{
  struct cli c = {0};
  int r = parse_args(&c, argc, argv);
  if (r == 0 && c.profile && g->run.profile && strcmp(c.profile, g->run.profile) != 0)
    r = usage_error("--profile: \"%s\" contradicts the global --profile", c.profile);
  if (r == 0 && sr_cli_setup(g, 0, true) < 0)
    r = SR_SANDBOX_EXIT_RUNTIME;
  if (r != 0) {
    cli_free(&c);
    return r == -2 ? 0 : r;
  }
  struct sr_sandbox s;
  sr_sandbox_init(&s, &g->run, c.profile, &c.o);
  sr_error_t err = NULL;
  if (sr_sandbox_run(&s, &err) < 0)
    sr_cli_fail(&err);
  int status = s.res.exit_code;
  if (c.json && write_json(&c, &s.res) != 0 && status == 0)
    status = SR_SANDBOX_EXIT_RUNTIME;
  sr_sandbox_release(&s);
  cli_free(&c);
  return status;
}
