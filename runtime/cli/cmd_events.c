/* seerun events ID [--stats] [--interval 5s]: resource statistics as runc prints them (one JSON
 * object per line: type, id, data), which containerd reads; without --stats, every interval
 * until the container stops, plus an "oom" event when the OOM killer strikes. */
#include "build.h"

#include "cli_common.h"

#include "cgroup.h"
#include "cleanup.h"
#include "json.h"
#include "lifecycle.h"
#include "opts.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define USAGE "[command options] <container-id>"

static void put_u64(sr_json_gen_t g, const char *key, uint64_t v)
{
  sr_json_put_kv_u64(g, key, v);
}

static void gen_stats(sr_json_gen_t g, const struct sr_cgroup_stats *st)
{
  sr_json_map_open(g);
  sr_json_put_key(g, "cpu");
  sr_json_map_open(g);
  sr_json_put_key(g, "usage");
  sr_json_map_open(g);
  put_u64(g, "total", st->cpu_usage_total);
  if (st->n_percpu) {
    sr_json_put_key(g, "percpu");
    sr_json_array_open(g);
    for (size_t i = 0; i < st->n_percpu; i++)
      sr_json_put_u64(g, st->cpu_percpu[i]);
    sr_json_array_close(g);
  }
  put_u64(g, "kernel", st->cpu_usage_kernel);
  put_u64(g, "user", st->cpu_usage_user);
  sr_json_map_close(g);
  sr_json_put_key(g, "throttling");
  sr_json_map_open(g);
  put_u64(g, "periods", st->cpu_throttling_periods);
  put_u64(g, "throttled_periods", st->cpu_throttled_periods);
  put_u64(g, "throttled_time", st->cpu_throttled_time);
  sr_json_map_close(g);
  sr_json_map_close(g);

  sr_json_put_key(g, "memory");
  sr_json_map_open(g);
  put_u64(g, "cache", st->memory_cache);
  sr_json_put_key(g, "usage");
  sr_json_map_open(g);
  put_u64(g, "limit", st->memory_limit);
  put_u64(g, "usage", st->memory_usage);
  put_u64(g, "max", st->memory_max_usage);
  put_u64(g, "failcnt", st->memory_failcnt);
  sr_json_map_close(g);
  sr_json_put_key(g, "swap");
  sr_json_map_open(g);
  put_u64(g, "limit", st->swap_limit);
  put_u64(g, "usage", st->swap_usage);
  put_u64(g, "failcnt", 0);
  sr_json_map_close(g);
  if (st->n_memory_stat) {
    sr_json_put_key(g, "raw");
    sr_json_map_open(g);
    for (size_t i = 0; i < st->n_memory_stat; i++)
      put_u64(g, st->memory_stat_keys[i], st->memory_stat_values[i]);
    sr_json_map_close(g);
  }
  sr_json_map_close(g);

  sr_json_put_key(g, "pids");
  sr_json_map_open(g);
  put_u64(g, "current", st->pids_current);
  put_u64(g, "limit", st->pids_limit);
  sr_json_map_close(g);

  sr_json_put_key(g, "blkio");
  sr_json_map_open(g);
  sr_json_put_key(g, "ioServiceBytesRecursive");
  sr_json_array_open(g);
  for (size_t i = 0; i < st->n_blkio_bytes; i++) {
    sr_json_map_open(g);
    put_u64(g, "major", st->blkio_bytes[i].major);
    put_u64(g, "minor", st->blkio_bytes[i].minor);
    sr_json_put_kv_string(g, "op", st->blkio_bytes[i].op);
    put_u64(g, "value", st->blkio_bytes[i].value);
    sr_json_map_close(g);
  }
  sr_json_array_close(g);
  sr_json_map_close(g);

  sr_json_put_key(g, "hugetlb");
  sr_json_map_open(g);
  for (size_t i = 0; i < st->n_hugetlb; i++) {
    sr_json_put_key(g, st->hugetlb[i].page_size);
    sr_json_map_open(g);
    put_u64(g, "usage", st->hugetlb[i].usage);
    put_u64(g, "max", st->hugetlb[i].max_usage);
    put_u64(g, "failcnt", st->hugetlb[i].failcnt);
    sr_json_map_close(g);
  }
  sr_json_map_close(g);
  sr_json_map_close(g);
}

static int emit(const char *type, const char *id, const struct sr_cgroup_stats *st, sr_error_t *err)
{
  _cleanup_gen_ sr_json_gen_t g = NULL;
  if (sr_json_gen_new(&g, false, err) < 0)
    return -1;
  sr_json_map_open(g);
  sr_json_put_kv_string(g, "type", type);
  sr_json_put_kv_string(g, "id", id);
  if (st) {
    sr_json_put_key(g, "data");
    gen_stats(g, st);
  }
  sr_json_map_close(g);
  if (sr_cli_common_print_json(g, err) < 0)
    return -1;
  fflush(stdout);
  return 0;
}

/* Go durations as runc takes them: "5s", "500ms", "1m", "1m30s". */
static bool parse_duration(const char *s, double *seconds)
{
  double total = 0;
  while (*s) {
    char *end;
    double v = strtod(s, &end);
    if (end == s || v < 0)
      return false;
    if (strncmp(end, "ms", 2) == 0) {
      total += v / 1000;
      end += 2;
    } else if (*end == 's') {
      total += v;
      end++;
    } else if (*end == 'm') {
      total += v * 60;
      end++;
    } else if (*end == 'h') {
      total += v * 3600;
      end++;
    } else
      return false;
    s = end;
  }
  *seconds = total;
  return total > 0;
}

static int collect(const struct sr_container *ct, struct sr_cgroup_stats *st, sr_error_t *err)
{
  _cleanup_cgroup_ struct sr_cgroup *cg = NULL;
  memset(st, 0, sizeof(*st));
  if (sr_container_open_cgroup(ct, &cg, err) < 0)
    return -1;
  return cg ? sr_cgroup_stats(cg, st, err) : 0;
}

int sr_cmd_events(const struct sr_global *g, int argc, char **argv)
{
  static const struct option longopts[] = {{"stats", no_argument, NULL, 's'},
                                           {"interval", required_argument, NULL, 'i'},
                                           {"help", no_argument, NULL, 'h'},
                                           {NULL, 0, NULL, 0}};
  bool once = false;
  double interval = 5;
  sr_opts_begin(argc, argv, longopts, false);
  int c;
  while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
    switch (c) {
    case 's':
      once = true;
      break;
    case 'i':
      if (!parse_duration(optarg, &interval))
        return sr_cli_usage_error("events", USAGE, "--interval: \"%s\" is not a duration", optarg);
      break;
    case 'h':
      printf("Usage: seerun events %s\n", USAGE);
      return 0;
    default:
      return sr_cli_unknown_option("events", USAGE, argv);
    }
  }
  if (optind != argc - 1)
    return sr_cli_usage_error("events", USAGE, "exactly one container id is required");
  if (sr_cli_setup(g, 0, false) < 0)
    return 1;
  const char *id = argv[optind];
  sr_error_t err = NULL;
  _cleanup_stored_ struct sr_container *ct = NULL;
  if (sr_stored_open(&g->run, id, false, &ct, &err) < 0)
    return sr_cli_fail(&err);
  uint64_t ooms = 0;
  for (bool first = true;; first = false) {
    enum sr_status s = sr_container_status(ct);
    if (s == SR_STATUS_STOPPED) {
      if (first) {
        sr_error_make(&err, 0, "container \"%s\" not running", id);
        return sr_cli_fail(&err);
      }
      return 0;
    }
    struct sr_cgroup_stats st;
    if (collect(ct, &st, &err) < 0) {
      sr_cgroup_stats_clear(&st);
      return sr_cli_fail(&err);
    }
    if (!first && st.oom_kill_count > ooms)
      emit("oom", id, NULL, &err);
    ooms = st.oom_kill_count;
    int r = emit("stats", id, &st, &err);
    sr_cgroup_stats_clear(&st);
    if (r < 0)
      return sr_cli_fail(&err);
    if (once)
      return 0;
    struct timespec ts = {(time_t)interval, (long)((interval - (double)(time_t)interval) * 1e9)};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
      ;
  }
}
