/* What the audit log says of a sandbox, beyond what every container's lines say: each run's
 * unique id (on every line of the run: the container id is a slot, sandbox-0 again and again,
 * so that its user namespace range is reused), who asked for it (uid, gid, login uid, parent
 * pid, cwd), and what was asked (the command, the paths as absolute paths, the limits), typed
 * as in the result document: numbers as numbers, booleans as booleans. */
#include "build.h"

#include "sandbox.h"

#include "path.h"

#include "cleanup.h"
#include "json.h"
#include "paths.h"
#include "fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

void sr_sandbox_audit_caller_init(struct sr_sandbox_caller *c)
{
  memset(c, 0, sizeof(*c));
  c->uid = getuid();
  c->gid = getgid();
  c->pid = getppid();
  c->login_uid = -1;
  char buf[32];
  size_t len;
  sr_error_t e = NULL;
  if (sr_fileio_read_small_at(AT_FDCWD, "/proc/self/loginuid", buf, sizeof(buf), &len, &e) == 0) {
    char *end;
    unsigned long long v = strtoull(buf, &end, 10);
    if (end != buf && v < 4294967295ull) /* (uid_t)-1: no login */
      c->login_uid = (int64_t)v;
  } else
    sr_error_free(&e);
  c->cwd = getcwd(NULL, 0);
}

void sr_sandbox_audit_caller_release(struct sr_sandbox_caller *c)
{
  free(c->cwd);
  c->cwd = NULL;
}

int sr_sandbox_audit_run_id(char out[33], sr_error_t *err)
{
  unsigned char b[16];
  size_t got = 0;
  while (got < sizeof(b)) {
    ssize_t n = getrandom(b + got, sizeof(b) - got, 0);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return sr_error_sys(err, "sandbox: getrandom (the run's id)");
    got += (size_t)n;
  }
  for (size_t i = 0; i < sizeof(b); i++)
    snprintf(out + 2 * i, 3, "%02x", b[i]);
  return 0;
}

char *sr_sandbox_audit_abs_path(const struct sr_sandbox_caller *c, const char *path)
{
  char buf[PATH_MAX];
  sr_error_t err = NULL;
  if (path[0] == '/' ? snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf)
                     : c->cwd == NULL || sr_path_join(buf, sizeof(buf), c->cwd, path, &err) < 0) {
    sr_error_free(&err);
    return NULL;
  }
  sr_path_clean(buf, buf);
  return strdup(buf);
}

void sr_sandbox_audit_put_caller(sr_json_gen_t g, const struct sr_sandbox_caller *c)
{
  sr_json_put_key(g, "caller");
  sr_json_map_open(g);
  sr_json_put_kv_i64(g, "uid", c->uid);
  sr_json_put_kv_i64(g, "gid", c->gid);
  sr_json_put_key(g, "loginUid");
  if (c->login_uid >= 0)
    sr_json_put_i64(g, c->login_uid);
  else
    sr_json_put_null(g);
  sr_json_put_kv_i64(g, "pid", c->pid);
  sr_json_put_key(g, "cwd");
  if (c->cwd)
    sr_json_put_string(g, c->cwd);
  else
    sr_json_put_null(g);
  sr_json_map_close(g);
}

static void put_opt_string(sr_json_gen_t g, const char *key, const char *v)
{
  sr_json_put_key(g, key);
  if (v)
    sr_json_put_string(g, v);
  else
    sr_json_put_null(g);
}

static void put_opt_u64(sr_json_gen_t g, const char *key, uint64_t v)
{
  sr_json_put_key(g, key);
  if (v)
    sr_json_put_i64(g, (long long)v);
  else
    sr_json_put_null(g);
}

static void put_opt_seconds(sr_json_gen_t g, const char *key, double v)
{
  sr_json_put_key(g, key);
  if (v > 0) {
    char buf[32];
    int n = snprintf(buf, sizeof(buf), "%.6f", v);
    sr_json_put_raw(g, buf, (size_t)n);
  } else
    sr_json_put_null(g);
}

struct start_event {
  const struct sr_sandbox_opts *o;
  const struct sr_sandbox_caller *c;
  const char *out_abs;
};

static void put_start(sr_json_gen_t g, const void *arg)
{
  const struct start_event *e = arg;
  const struct sr_sandbox_opts *o = e->o;
  sr_json_put_key(g, "command");
  sr_json_array_open(g);
  for (size_t i = 0; i < o->argc; i++)
    sr_json_put_string(g, o->argv[i]);
  sr_json_array_close(g);
  sr_sandbox_audit_put_caller(g, e->c);
  /* Every path absolute: the --ro sources are resolved already, --out as the caller meant it. */
  put_opt_string(g, "rootfs", o->rootfs_dir);
  sr_json_put_key(g, "ro");
  sr_json_array_open(g);
  for (size_t i = 0; i < o->n_ro; i++) {
    sr_json_map_open(g);
    sr_json_put_kv_string(g, "source", o->ro[i].source);
    sr_json_put_kv_string(g, "destination", o->ro[i].dest);
    sr_json_map_close(g);
  }
  sr_json_array_close(g);
  put_opt_string(g, "out", e->out_abs);
  sr_json_put_kv_bool(g, "outOverwrite", o->out_overwrite);
  /* --workspace as asked: the directory (absolute, as the caller named it), where, its bound,
   * what stays read-only, whether the changes are to be applied. */
  sr_json_put_key(g, "workspace");
  if (o->ws_host) {
    char *abs = sr_sandbox_audit_abs_path(e->c, o->ws_host);
    sr_json_map_open(g);
    sr_json_put_kv_string(g, "directory", abs ? abs : o->ws_host);
    free(abs);
    sr_json_put_kv_string(g, "destination", o->ws_dest);
    sr_json_put_kv_u64(g, "sizeBytes", o->ws_size);
    sr_json_put_key(g, "protected");
    sr_json_array_open(g);
    for (size_t i = 0; i < o->n_ws_protect; i++)
      sr_json_put_string(g, o->ws_protect[i]);
    sr_json_array_close(g);
    sr_json_put_kv_bool(g, "apply", o->ws_apply);
    sr_json_map_close(g);
  } else
    sr_json_put_null(g);
  put_opt_string(g, "workdir", o->workdir);
  /* The names only: values may be secrets the command needs. */
  sr_json_put_key(g, "envKeys");
  sr_json_array_open(g);
  for (size_t i = 0; i < o->n_env; i++) {
    const char *eq = strchr(o->env[i], '=');
    size_t n = eq ? (size_t)(eq - o->env[i]) : strlen(o->env[i]);
    char *key = strndup(o->env[i], n);
    sr_json_put_string(g, key ? key : "");
    free(key);
  }
  sr_json_array_close(g);
  sr_json_put_kv_bool(g, "network", o->network);
  sr_json_put_kv_bool(g, "tty", o->tty);
  /* What was asked (null: the profile's); the result says what was applied. */
  sr_json_put_key(g, "asked");
  sr_json_map_open(g);
  put_opt_u64(g, "memoryBytes", o->memory);
  put_opt_u64(g, "pids", o->pids > 0 ? (uint64_t)o->pids : 0);
  put_opt_seconds(g, "cpus", (double)o->cpu_quota_us / SR_SANDBOX_CPU_PERIOD_US);
  put_opt_seconds(g, "timeoutSeconds", (double)o->timeout_ms / 1000.0);
  put_opt_u64(g, "outputMaxBytes", o->output_max_bytes);
  put_opt_seconds(g, "killAfterSeconds", (double)o->kill_after_ms / 1000.0);
  sr_json_map_close(g);
}

int sr_sandbox_audit_start(const struct sr_audit *a, const struct sr_sandbox_opts *o,
                           const struct sr_sandbox_caller *c, const char *out_abs, sr_error_t *err)
{
  struct start_event e = {o, c, out_abs};
  return sr_audit_event_with(a, "sandbox-start", put_start, &e, err);
}
