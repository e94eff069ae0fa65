/* The config.json of a sandbox, generated as text: it is then parsed and policed exactly as an
 * engine's would be, so the sandbox asks and the operator's policy decides.
 *
 * What the sandbox asks for, beyond runc's defaults: uid and gid 1000 with no capability at
 * all (and no user namespace of its own: the policy puts every container in one, on a range
 * from its registry); a read-only root; no network (io.seerun.network=none), or with
 * --network egress by host name through seerun's proxy (io.seerun.network=proxy), or with
 * --network=host the host's, which only a profile with network.allowHost lets through; no /sys;
 * core dumps off; /usr and the --ro sources bound read-only (recursively); /out writable;
 * scratch space is the policy's tmpfs (/tmp, /var/tmp) and /dev/shm. */
#include "build.h"

#include "sandbox.h"

#include "cleanup.h"
#include "json.h"
#include "policy_apply.h"
#include "state.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const default_env[] = {
    "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "LANG=C.UTF-8",
};

static void put_strv(sr_json_gen_t g, const char *key, const char *const *v, size_t n)
{
  sr_json_put_key(g, key);
  sr_json_array_open(g);
  for (size_t i = 0; i < n; i++)
    sr_json_put_string(g, v[i]);
  sr_json_array_close(g);
}

static void put_mount(sr_json_gen_t g, const char *dest, const char *type, const char *source,
                      const char *const *opts, size_t n_opts)
{
  sr_json_map_open(g);
  sr_json_put_kv_string(g, "destination", dest);
  sr_json_put_kv_string(g, "type", type);
  sr_json_put_kv_string(g, "source", source);
  put_strv(g, "options", opts, n_opts);
  sr_json_map_close(g);
}

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* A user's KEY=VALUE replaces the default of the same key. */
static bool overridden(const struct sr_sandbox_opts *o, const char *def)
{
  size_t k = strcspn(def, "=");
  for (size_t i = 0; i < o->n_env; i++)
    if (strncmp(o->env[i], def, k) == 0 && o->env[i][k] == '=')
      return true;
  return false;
}

static void put_process(sr_json_gen_t g, const struct sr_sandbox_config_in *in)
{
  const struct sr_sandbox_opts *o = in->o;
  /* The built-in root filesystem has a HOME of the user's; a given one has /tmp. */
  const char *home = in->sys ? "HOME=" SR_SANDBOX_HOME : "HOME=/tmp";
  sr_json_put_key(g, "process");
  sr_json_map_open(g);
  sr_json_put_kv_bool(g, "terminal", o->tty);
  sr_json_put_key(g, "user");
  sr_json_map_open(g);
  sr_json_put_kv_u64(g, "uid", SR_SANDBOX_UID);
  sr_json_put_kv_u64(g, "gid", SR_SANDBOX_UID);
  sr_json_map_close(g);
  put_strv(g, "args", (const char *const *)o->argv, o->argc);
  sr_json_put_key(g, "env");
  sr_json_array_open(g);
  for (size_t i = 0; i < N(default_env); i++)
    if (!overridden(o, default_env[i]))
      sr_json_put_string(g, default_env[i]);
  if (!overridden(o, home))
    sr_json_put_string(g, home);
  for (size_t i = 0; i < o->n_env; i++)
    sr_json_put_string(g, o->env[i]);
  sr_json_array_close(g);
  sr_json_put_kv_string(g, "cwd", o->workdir ? o->workdir : "/tmp");
  /* Every set empty: the command holds no capability, not even inside its namespace. */
  sr_json_put_key(g, "capabilities");
  sr_json_map_open(g);
  static const char *const sets[] = {"bounding", "effective", "inheritable", "permitted",
                                     "ambient"};
  for (size_t i = 0; i < N(sets); i++)
    put_strv(g, sets[i], NULL, 0);
  sr_json_map_close(g);
  sr_json_put_key(g, "rlimits");
  sr_json_array_open(g);
  static const struct {
    const char *type;
    uint64_t v;
  } rl[] = {{"RLIMIT_NOFILE", 1024}, {"RLIMIT_CORE", 0}};
  for (size_t i = 0; i < N(rl); i++) {
    sr_json_map_open(g);
    sr_json_put_kv_string(g, "type", rl[i].type);
    sr_json_put_kv_u64(g, "hard", rl[i].v);
    sr_json_put_kv_u64(g, "soft", rl[i].v);
    sr_json_map_close(g);
  }
  sr_json_array_close(g);
  sr_json_put_kv_bool(g, "noNewPrivileges", true);
  sr_json_map_close(g);
}

static void put_mounts(sr_json_gen_t g, const struct sr_sandbox_config_in *in)
{
  const struct sr_sandbox_opts *o = in->o;
  sr_json_put_key(g, "mounts");
  sr_json_array_open(g);
  static const char *const proc[] = {"nosuid", "noexec", "nodev"};
  static const char *const dev[] = {"nosuid", "noexec", "strictatime", "mode=755", "size=65536k"};
  static const char *const pts[] = {"nosuid", "noexec", "newinstance", "ptmxmode=0666",
                                    "mode=0620"};
  static const char *const shm[] = {"nosuid", "noexec", "nodev", "mode=1777", "size=65536k"};
  static const char *const mqueue[] = {"nosuid", "noexec", "nodev"};
  put_mount(g, "/proc", "proc", "proc", proc, N(proc));
  put_mount(g, "/dev", "tmpfs", "tmpfs", dev, N(dev));
  put_mount(g, "/dev/pts", "devpts", "devpts", pts, N(pts));
  put_mount(g, "/dev/shm", "tmpfs", "shm", shm, N(shm));
  put_mount(g, "/dev/mqueue", "mqueue", "mqueue", mqueue, N(mqueue));
  /* The host's system directories: read-only all the way down (a writable mount below /usr
   * stays read-only here too). */
  static const char *const sys_ro[] = {"rbind", "ro", "rro", "nosuid", "nodev"};
  static const char *const alt_ro[] = {"bind", "ro", "nosuid", "nodev", "noexec"};
  for (size_t i = 0; in->sys && i < in->sys->n; i++) {
    bool etc = strncmp(in->sys->paths[i], "/etc/", 5) == 0;
    put_mount(g, in->sys->paths[i], "bind", in->sys->paths[i], etc ? alt_ro : sys_ro,
              etc ? N(alt_ro) : N(sys_ro));
  }
  if (in->sys) {
    /* The host's /usr/local holds its site configuration and tools: not the sandbox's unless
     * given (--ro /usr/local).  Root's and 0755 inside, so the user cannot write it; not
     * read-only only where a --ro below it needs its mount point made. */
    bool given = false, below = false;
    for (size_t i = 0; i < o->n_ro; i++) {
      given = given || strcmp(o->ro[i].dest, SR_SANDBOX_USR_LOCAL) == 0;
      below = below || strncmp(o->ro[i].dest, SR_SANDBOX_USR_LOCAL "/", 11) == 0;
    }
    static const char *const mask_ro[] = {"ro", "nosuid", "nodev", "noexec", "mode=755", "size=4k"};
    static const char *const mask[] = {"nosuid", "nodev", "noexec", "mode=755", "size=64k"};
    if (!given)
      put_mount(g, SR_SANDBOX_USR_LOCAL, "tmpfs", "tmpfs", below ? mask : mask_ro,
                below ? N(mask) : N(mask_ro));
    char size[48], uid[32], gid[32];
    snprintf(size, sizeof(size), "size=%llu",
             (unsigned long long)(o->own_tmp_size ? o->own_tmp_size : 64ull << 20));
    snprintf(uid, sizeof(uid), "uid=%d", SR_SANDBOX_UID);
    snprintf(gid, sizeof(gid), "gid=%d", SR_SANDBOX_UID);
    const char *home[] = {"nosuid", "nodev", "mode=700", size, uid, gid};
    put_mount(g, SR_SANDBOX_HOME, "tmpfs", "tmpfs", home, N(home));
  }
  if (o->own_tmp) {
    char size[48];
    snprintf(size, sizeof(size), "size=%llu", (unsigned long long)o->own_tmp_size);
    const char *tmp[] = {"nosuid", "nodev", "mode=1777", size};
    put_mount(g, "/tmp", "tmpfs", "tmpfs", tmp, N(tmp));
  }
  if (in->out_source) {
    /* The runtime's own tmpfs, which it reads after the container is gone. */
    static const char *const out[] = {"bind", "rw", "nosuid", "nodev"};
    put_mount(g, SR_SANDBOX_OUT, "bind", in->out_source, out, N(out));
  } else {
    char size[48], uid[32], gid[32];
    snprintf(size, sizeof(size), "size=%llu",
             (unsigned long long)(o->out_max_bytes > SR_SANDBOX_OUT_MIN_SIZE
                                      ? o->out_max_bytes
                                      : SR_SANDBOX_OUT_MIN_SIZE));
    snprintf(uid, sizeof(uid), "uid=%d", SR_SANDBOX_UID);
    snprintf(gid, sizeof(gid), "gid=%d", SR_SANDBOX_UID);
    const char *out[] = {"nosuid", "nodev", "mode=755", size, uid, gid};
    put_mount(g, SR_SANDBOX_OUT, "tmpfs", "tmpfs", out, N(out));
  }
  if (in->ws_source) {
    /* Judged as a bind of HOST; what the container gets is seerun's overlay of it (with the
     * read-only protected paths below: rbind). */
    static const char *const ws[] = {"rbind", "rw", "nosuid", "nodev"};
    put_mount(g, o->ws_dest, "bind", in->ws_source, ws, N(ws));
  }
  static const char *const ro[] = {"rbind", "ro", "rro", "nosuid", "nodev"};
  for (size_t i = 0; i < o->n_ro; i++)
    put_mount(g, o->ro[i].dest, "bind", o->ro[i].source, ro, N(ro));
  sr_json_array_close(g);
}

static void put_linux(sr_json_gen_t g, const struct sr_sandbox_config_in *in)
{
  const struct sr_sandbox_opts *o = in->o;
  sr_json_put_key(g, "linux");
  sr_json_map_open(g);
  sr_json_put_key(g, "namespaces");
  sr_json_array_open(g);
  static const char *const ns[] = {"pid", "ipc", "uts", "mount", "cgroup"};
  for (size_t i = 0; i < N(ns); i++) {
    sr_json_map_open(g);
    sr_json_put_kv_string(g, "type", ns[i]);
    sr_json_map_close(g);
  }
  sr_json_map_open(g);
  sr_json_put_kv_string(g, "type", "network");
  /* The host's: a request the policy judges (network.allowHost). */
  if (o->network)
    sr_json_put_kv_string(g, "path", "/proc/self/ns/net");
  sr_json_map_close(g);
  sr_json_array_close(g);
  sr_json_put_kv_string(g, "cgroupsPath", in->cgroup_path);
  sr_json_put_key(g, "resources");
  sr_json_map_open(g);
  if (o->memory) {
    sr_json_put_key(g, "memory");
    sr_json_map_open(g);
    sr_json_put_kv_u64(g, "limit", o->memory);
    /* memory+swap: no swap beyond the limit, so --memory is what the command gets. */
    sr_json_put_kv_u64(g, "swap", o->memory);
    sr_json_map_close(g);
  }
  if (o->pids) {
    sr_json_put_key(g, "pids");
    sr_json_map_open(g);
    sr_json_put_kv_i64(g, "limit", o->pids);
    sr_json_map_close(g);
  }
  if (o->cpu_quota_us) {
    sr_json_put_key(g, "cpu");
    sr_json_map_open(g);
    sr_json_put_kv_u64(g, "quota", o->cpu_quota_us);
    sr_json_put_kv_u64(g, "period", SR_SANDBOX_CPU_PERIOD_US);
    sr_json_map_close(g);
  }
  sr_json_map_close(g);
  sr_json_map_close(g);
}

int sr_sandbox_config_text(const struct sr_sandbox_config_in *in, char **out, size_t *len,
                           sr_error_t *err)
{
  const struct sr_sandbox_opts *o = in->o;
  _cleanup_gen_ sr_json_gen_t g = NULL;
  if (sr_json_gen_new(&g, false, err) < 0)
    return -1;
  sr_json_map_open(g);
  sr_json_put_kv_string(g, "ociVersion", SR_OCI_VERSION);
  put_process(g, in);
  sr_json_put_key(g, "root");
  sr_json_map_open(g);
  sr_json_put_kv_string(g, "path", in->rootfs);
  sr_json_put_kv_bool(g, "readonly", true);
  sr_json_map_close(g);
  sr_json_put_kv_string(g, "hostname", SR_SANDBOX_HOSTNAME);
  sr_json_put_key(g, "annotations");
  sr_json_map_open(g);
  if (o->proxy)
    sr_json_put_kv_string(g, SR_ANNOTATION_NETWORK, "proxy");
  else if (!o->network)
    sr_json_put_kv_string(g, SR_ANNOTATION_NETWORK, "none");
  if (o->tmp_size && !o->own_tmp)
    sr_json_put_kv_string(g, SR_ANNOTATION_TMP_SIZE, o->tmp_size);
  sr_json_map_close(g);
  put_mounts(g, in);
  put_linux(g, in);
  sr_json_map_close(g);
  const unsigned char *buf;
  size_t n;
  if (sr_json_gen_buf(g, &buf, &n, err) < 0)
    return sr_error_wrap(err, "sandbox: config.json");
  *out = strndup((const char *)buf, n);
  if (*out == NULL)
    return sr_error_make(err, ENOMEM, "sandbox: config.json");
  *len = n;
  return 0;
}
