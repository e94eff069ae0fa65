/* seerun update ID: change a running container's resource limits, from --resources FILE (or -
 * for stdin: a linux.resources object) and runc's individual flags, which override it. */
#include "build.h"

#include "cli_common.h"

#include "cleanup.h"
#include "opts.h"
#include "update.h"
#include "fileio.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define USAGE "[command options] <container-id>"

enum {
  OPT_RESOURCES = 'r',
  OPT_BLKIO_WEIGHT = 256,
  OPT_CPU_PERIOD,
  OPT_CPU_QUOTA,
  OPT_CPU_SHARE,
  OPT_CPU_RT_PERIOD,
  OPT_CPU_RT_RUNTIME,
  OPT_CPUSET_CPUS,
  OPT_CPUSET_MEMS,
  OPT_KERNEL_MEMORY,
  OPT_KERNEL_MEMORY_TCP,
  OPT_MEMORY,
  OPT_MEMORY_RESERVATION,
  OPT_MEMORY_SWAP,
  OPT_PIDS_LIMIT,
  OPT_CPU_IDLE,
  OPT_L3,
  OPT_MEMBW,
};

static const struct option longopts[] = {
    {"resources", required_argument, NULL, OPT_RESOURCES},
    {"blkio-weight", required_argument, NULL, OPT_BLKIO_WEIGHT},
    {"cpu-period", required_argument, NULL, OPT_CPU_PERIOD},
    {"cpu-quota", required_argument, NULL, OPT_CPU_QUOTA},
    {"cpu-share", required_argument, NULL, OPT_CPU_SHARE},
    {"cpu-rt-period", required_argument, NULL, OPT_CPU_RT_PERIOD},
    {"cpu-rt-runtime", required_argument, NULL, OPT_CPU_RT_RUNTIME},
    {"cpuset-cpus", required_argument, NULL, OPT_CPUSET_CPUS},
    {"cpuset-mems", required_argument, NULL, OPT_CPUSET_MEMS},
    {"kernel-memory", required_argument, NULL, OPT_KERNEL_MEMORY},
    {"kernel-memory-tcp", required_argument, NULL, OPT_KERNEL_MEMORY_TCP},
    {"memory", required_argument, NULL, OPT_MEMORY},
    {"memory-reservation", required_argument, NULL, OPT_MEMORY_RESERVATION},
    {"memory-swap", required_argument, NULL, OPT_MEMORY_SWAP},
    {"pids-limit", required_argument, NULL, OPT_PIDS_LIMIT},
    {"cpu-idle", required_argument, NULL, OPT_CPU_IDLE},
    {"l3-cache-schema", required_argument, NULL, OPT_L3},
    {"mem-bw-schema", required_argument, NULL, OPT_MEMBW},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* Sizes as runc and Docker take them: bytes, or a number with k, m, g, t (binary units, an
 * optional "b"); -1 is unlimited. */
static bool parse_size(const char *s, int64_t *out)
{
  if (strcmp(s, "-1") == 0) {
    *out = -1;
    return true;
  }
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (end == s || errno || v < 0)
    return false;
  double mult = 1;
  switch (tolower((unsigned char)*end)) {
  case '\0':
    break;
  case 'b':
    end++;
    break;
  case 'k':
    mult = 1024.0, end++;
    break;
  case 'm':
    mult = 1024.0 * 1024, end++;
    break;
  case 'g':
    mult = 1024.0 * 1024 * 1024, end++;
    break;
  case 't':
    mult = 1024.0 * 1024 * 1024 * 1024, end++;
    break;
  default:
    return false;
  }
  if (mult > 1 && tolower((unsigned char)*end) == 'b')
    end++;
  if (*end != '\0' || v * mult > 9.2e18)
    return false;
  *out = (int64_t)(v * mult);
  return true;
}

static bool parse_i64(const char *s, int64_t *out)
{
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (end == s || *end || errno)
    return false;
  *out = v;
  return true;
}

static int read_resources(const char *path, struct sr_arena *a, struct sr_resources **out,
                          sr_error_t *err)
{
  _cleanup_free_ char *buf = NULL;
  size_t len = 0;
  if (strcmp(path, "-") == 0) {
    /* stdin may be a pipe: read it with the same cap as a file. */
    size_t cap = 4096;
    buf = malloc(cap + 1);
    while (buf) {
      ssize_t r = read(0, buf + len, cap - len);
      if (r < 0 && errno == EINTR)
        continue;
      if (r < 0)
        return sr_error_sys(err, "--resources: read stdin");
      if (r == 0)
        break;
      len += (size_t)r;
      if (len == cap) {
        if (cap >= SR_MAX_CONFIG_SIZE)
          return sr_error_make(err, 0, "--resources: stdin: too large");
        char *nb = realloc(buf, cap * 2 + 1);
        if (nb == NULL) /* not a break: the part read so far is not the document */
          return sr_error_make(err, ENOMEM, "--resources");
        buf = nb;
        cap *= 2;
      }
    }
    if (buf == NULL)
      return sr_error_make(err, ENOMEM, "--resources");
    buf[len] = '\0';
  } else if (sr_fileio_read_at(AT_FDCWD, path, SR_MAX_CONFIG_SIZE, &buf, &len, err) < 0)
    return sr_error_wrap(err, "--resources");
  return sr_config_update_parse_resources(buf, len, "--resources", a, out, err);
}

struct flag {
  int opt;
  const char *value;
};

/* runc's individual flags, which override --resources: 0, 1 after a usage error (printed), or
 * -1 with err. */
static int apply_flags(struct sr_arena *arena, struct sr_resources *r, const struct flag *flags,
                       size_t nflags, sr_error_t *err)
{
  for (size_t i = 0; i < nflags; i++) {
    const char *v = flags[i].value;
    const char *name = "";
    for (const struct option *o = longopts; o->name; o++)
      if (o->val == flags[i].opt)
        name = o->name;
    int64_t n = 0;
    bool ok = true;
    switch (flags[i].opt) {
    case OPT_MEMORY:
      ok = parse_size(v, &n), r->memory.limit = (sr_opt_i64){true, n};
      break;
    case OPT_MEMORY_RESERVATION:
      ok = parse_size(v, &n), r->memory.reservation = (sr_opt_i64){true, n};
      break;
    case OPT_MEMORY_SWAP:
      ok = parse_size(v, &n), r->memory.swap = (sr_opt_i64){true, n};
      break;
    case OPT_KERNEL_MEMORY:
      ok = parse_size(v, &n), r->memory.kernel = (sr_opt_i64){true, n};
      break;
    case OPT_KERNEL_MEMORY_TCP:
      ok = parse_size(v, &n), r->memory.kernel_tcp = (sr_opt_i64){true, n};
      break;
    case OPT_PIDS_LIMIT:
      ok = parse_i64(v, &n), r->pids_limit = (sr_opt_i64){true, n};
      break;
    case OPT_CPU_QUOTA:
      ok = parse_i64(v, &n), r->cpu.quota = (sr_opt_i64){true, n};
      break;
    case OPT_CPU_RT_RUNTIME:
      ok = parse_i64(v, &n), r->cpu.realtime_runtime = (sr_opt_i64){true, n};
      break;
    case OPT_CPU_IDLE:
      ok = parse_i64(v, &n) && (n == 0 || n == 1), r->cpu.idle = (sr_opt_i64){true, n};
      break;
    case OPT_CPU_PERIOD:
      ok = parse_i64(v, &n) && n >= 0, r->cpu.period = (sr_opt_u64){true, (uint64_t)n};
      break;
    case OPT_CPU_SHARE:
      ok = parse_i64(v, &n) && n >= 0, r->cpu.shares = (sr_opt_u64){true, (uint64_t)n};
      break;
    case OPT_CPU_RT_PERIOD:
      ok = parse_i64(v, &n) && n >= 0, r->cpu.realtime_period = (sr_opt_u64){true, (uint64_t)n};
      break;
    case OPT_BLKIO_WEIGHT:
      ok = parse_i64(v, &n) && n >= 0 && n <= 1000,
      r->block_io.weight = (sr_opt_u64){true, (uint64_t)n};
      break;
    case OPT_CPUSET_CPUS:
      r->cpu.cpus = sr_arena_strdup(arena, v);
      break;
    case OPT_CPUSET_MEMS:
      r->cpu.mems = sr_arena_strdup(arena, v);
      break;
    case OPT_L3:
    case OPT_MEMBW:
      return sr_error_make(err, 0, "--%s: Intel RDT is not supported by seerun", name);
    }
    if (!ok)
      return sr_cli_usage_error("update", USAGE, "--%s: invalid value \"%s\"", name, v);
  }
  return 0;
}

int sr_cmd_update(const struct sr_global *g, int argc, char **argv)
{
  _cleanup_(sr_arena_release) struct sr_arena arena = {0};
  struct sr_resources *r = NULL;
  const char *resources_path = NULL;
  sr_error_t err = NULL;
  struct flag flags[32];
  size_t nflags = 0;
  sr_opts_begin(argc, argv, longopts, false);
  int c;
  while ((c = getopt_long(argc, argv, "r:h", longopts, NULL)) != -1) {
    if (c == 'h') {
      printf("Usage: seerun update %s\n", USAGE);
      return 0;
    }
    if (c == OPT_RESOURCES) {
      resources_path = optarg;
      continue;
    }
    if (c == '?' || nflags == sizeof(flags) / sizeof(flags[0]))
      return sr_cli_unknown_option("update", USAGE, argv);
    flags[nflags].opt = c;
    flags[nflags++].value = optarg;
  }
  if (optind != argc - 1)
    return sr_cli_usage_error("update", USAGE, "exactly one container id is required");
  if (sr_cli_setup(g, 0, false) < 0)
    return 1;
  const char *id = argv[optind];
  if (resources_path) {
    if (read_resources(resources_path, &arena, &r, &err) < 0)
      return sr_cli_fail(&err);
  } else if ((r = sr_arena_alloc(&arena, sizeof(*r))) == NULL) {
    sr_error_make(&err, ENOMEM, "update");
    return sr_cli_fail(&err);
  }
  int fr = apply_flags(&arena, r, flags, nflags, &err);
  if (fr < 0)
    return sr_cli_fail(&err);
  if (fr > 0)
    return fr;
  if (sr_update_resources(&g->run, id, &arena, r, &err) < 0)
    return sr_cli_fail(&err);
  return 0;
}
