/* seerun list: the containers under --root, as a table (runc's columns), JSON or ids. */
#include "build.h"

#include "cli_common.h"

#include "cleanup.h"
#include "json.h"
#include "lifecycle.h"
#include "log.h"
#include "opts.h"

#include <errno.h>
#include <getopt.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define USAGE "[command options]"

struct row {
  char *id, *status, *bundle, *created, *owner;
  pid_t pid;
  char *rootfs;
  struct sr_container *c;
};

/* The last uid looked up: every container usually has the same owner, and each getpwuid reads
 * the passwd database again. */
struct owner_cache {
  uid_t uid;
  char *name;
};

static char *owner_name(int dirfd, struct owner_cache *cache)
{
  struct stat st;
  if (fstat(dirfd, &st) < 0)
    return strdup("");
  if (cache->name == NULL || cache->uid != st.st_uid) {
    char buf[32];
    struct passwd *pw = getpwuid(st.st_uid);
    if (pw == NULL)
      snprintf(buf, sizeof(buf), "#%u", st.st_uid);
    free(cache->name);
    cache->name = strdup(pw ? pw->pw_name : buf);
    cache->uid = st.st_uid;
  }
  return cache->name ? strdup(cache->name) : NULL;
}

static void print_table(struct row *rows, size_t n)
{
  /* Go's tabwriter as runc sets it up: minimum width 12, padding 3. */
  const char *heads[6] = {"ID", "PID", "STATUS", "BUNDLE", "CREATED", "OWNER"};
  size_t w[6];
  for (int k = 0; k < 6; k++)
    w[k] = strlen(heads[k]);
  char pidbuf[32];
  for (size_t i = 0; i < n; i++) {
    snprintf(pidbuf, sizeof(pidbuf), "%d", rows[i].pid);
    const char *cells[5] = {rows[i].id, pidbuf, rows[i].status, rows[i].bundle, rows[i].created};
    for (int k = 0; k < 5; k++)
      if (strlen(cells[k]) > w[k])
        w[k] = strlen(cells[k]);
  }
  for (int k = 0; k < 5; k++)
    w[k] = (w[k] + 3 < 12) ? 12 : w[k] + 3;
  printf("%-*s%-*s%-*s%-*s%-*s%s\n", (int)w[0], heads[0], (int)w[1], heads[1], (int)w[2],
         heads[2], (int)w[3], heads[3], (int)w[4], heads[4], heads[5]);
  for (size_t i = 0; i < n; i++) {
    snprintf(pidbuf, sizeof(pidbuf), "%d", rows[i].pid);
    printf("%-*s%-*s%-*s%-*s%-*s%s\n", (int)w[0], rows[i].id, (int)w[1], pidbuf, (int)w[2],
           rows[i].status, (int)w[3], rows[i].bundle, (int)w[4], rows[i].created, rows[i].owner);
  }
}

static int print_json(struct row *rows, size_t n, sr_error_t *err)
{
  _cleanup_gen_ sr_json_gen_t g = NULL;
  if (sr_json_gen_new(&g, false, err) < 0)
    return -1;
  sr_json_array_open(g);
  for (size_t i = 0; i < n; i++) {
    const struct sr_state_record *r = rows[i].c->rec;
    sr_json_map_open(g);
    sr_json_put_kv_string(g, "ociVersion", SR_OCI_VERSION);
    sr_json_put_kv_string(g, "id", rows[i].id);
    sr_json_put_kv_i64(g, "pid", rows[i].pid);
    sr_json_put_kv_string(g, "status", rows[i].status);
    sr_json_put_kv_string(g, "bundle", rows[i].bundle);
    sr_json_put_kv_string(g, "rootfs", rows[i].rootfs);
    sr_json_put_kv_string(g, "created", rows[i].created);
    sr_json_put_kv_string(g, "owner", rows[i].owner);
    if (r->n_annotations) {
      sr_json_put_key(g, "annotations");
      sr_json_map_open(g);
      for (size_t k = 0; k < r->n_annotations; k++)
        sr_json_put_kv_string(g, r->annotation_keys[k], r->annotation_values[k]);
      sr_json_map_close(g);
    }
    sr_json_map_close(g);
  }
  sr_json_array_close(g);
  return sr_cli_common_print_json(g, err);
}

int sr_cmd_list(const struct sr_global *g, int argc, char **argv)
{
  static const struct option longopts[] = {{"format", required_argument, NULL, 'f'},
                                           {"quiet", no_argument, NULL, 'q'},
                                           {"help", no_argument, NULL, 'h'},
                                           {NULL, 0, NULL, 0}};
  const char *format = "table";
  bool quiet = false;
  sr_opts_begin(argc, argv, longopts, false);
  int c;
  while ((c = getopt_long(argc, argv, "f:qh", longopts, NULL)) != -1) {
    switch (c) {
    case 'f':
      if (strcmp(optarg, "table") != 0 && strcmp(optarg, "json") != 0)
        return sr_cli_usage_error("list", USAGE, "--format: \"%s\" is not table or json", optarg);
      format = optarg;
      break;
    case 'q':
      quiet = true;
      break;
    case 'h':
      printf("Usage: seerun list %s\n", USAGE);
      return 0;
    default:
      return sr_cli_unknown_option("list", USAGE, argv);
    }
  }
  if (optind != argc)
    return sr_cli_usage_error("list", USAGE, "takes no arguments");
  if (sr_cli_setup(g, 0, false) < 0)
    return 1;
  sr_error_t err = NULL;
  _cleanup_close_ int rootfd = -1;
  _cleanup_strv_ char **ids = NULL;
  size_t n = 0;
  if (access(g->run.root, F_OK) == 0) {
    if (sr_statedir_open_root(g->run.root, false, &rootfd, &err) < 0 ||
        sr_statedir_list(rootfd, &ids, &n, &err) < 0)
      return sr_cli_fail(&err);
  }
  _cleanup_statedir_reader_ struct sr_statedir_reader reader = {.rootfd = -1, .indexfd = -1};
  if (n > 0 && sr_statedir_reader_open(rootfd, &reader, &err) < 0)
    return sr_cli_fail(&err);
  struct row *rows = calloc(n + 1, sizeof(*rows));
  if (rows == NULL) {
    /* Not an empty list: that would tell the engine its containers are gone. */
    sr_error_make(&err, ENOMEM, "list");
    return sr_cli_fail(&err);
  }
  size_t nrows = 0;
  struct owner_cache owners = {0};
  /* The host's cgroup layout and our user namespace once for all of them. */
  struct sr_container_host host = {0};
  if (n > 0)
    sr_container_host_scan(&host);
  for (size_t i = 0; i < n; i++) {
    struct sr_container *ct = NULL;
    /* One broken container must not hide the others (its error names it and the file); one
     * deleted since the directory was read is simply gone. */
    if (sr_statedir_reader_load(&reader, ids[i], &ct, &err) < 0) {
      if (err->status != ENOENT) {
        _cleanup_free_ char *t = sr_error_text(err);
        sr_warn("list: %s", t ? t : "");
      }
      sr_error_free(&err);
      continue;
    }
    struct row *r = &rows[nrows++];
    r->c = ct;
    r->id = ct->rec->id;
    r->status = (char *)sr_container_status_name(
        sr_container_observe_in(ct, &host, &r->pid));
    r->bundle = ct->rec->bundle;
    r->rootfs = ct->rec->rootfs;
    r->created = ct->rec->created;
    r->owner = owner_name(ct->dirfd, &owners);
  }
  free(owners.name);
  sr_container_host_release(&host);
  int ret = 0;
  if (quiet) {
    for (size_t i = 0; i < nrows; i++)
      printf("%s\n", rows[i].id);
  } else if (strcmp(format, "json") == 0) {
    if (print_json(rows, nrows, &err) < 0)
      ret = sr_cli_fail(&err);
  } else
    print_table(rows, nrows);
  for (size_t i = 0; i < nrows; i++) {
    free(rows[i].owner);
    sr_statedir_free(rows[i].c);
  }
  free(rows);
  return ret;
}
