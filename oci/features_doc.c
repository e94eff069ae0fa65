#include "build.h"

#include "features_doc.h"

#include "cleanup.h"
#include "config.h"
#include "json.h"
#include "mount_options.h"
#include "names.h"

#include <errno.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>

static void put_names(sr_json_gen_t g, const char *key, const struct sr_name *t, size_t n)
{
  sr_json_put_key(g, key);
  sr_json_array_open(g);
  for (size_t i = 0; i < n; i++)
    sr_json_put_string(g, t[i].name);
  sr_json_array_close(g);
}

static void put_bool_object(sr_json_gen_t g, const char *key, const char *field, bool value)
{
  sr_json_put_key(g, key);
  sr_json_map_open(g);
  sr_json_put_kv_bool(g, field, value);
  sr_json_map_close(g);
}

int sr_features_doc_json(bool systemd_driver, bool checkpoint, char **out, sr_error_t *err)
{
  _cleanup_gen_ sr_json_gen_t g = NULL;
  if (sr_json_gen_new(&g, true, err) < 0)
    return -1;
  sr_json_map_open(g);
  sr_json_put_kv_string(g, "ociVersionMin", "1.0.0");
  sr_json_put_kv_string(g, "ociVersionMax", "1.3.0");
  sr_json_put_key(g, "hooks");
  sr_json_array_open(g);
  for (int k = 0; k < SR_HOOK_COUNT; k++)
    sr_json_put_string(g, sr_config_hook_name(k));
  sr_json_array_close(g);
  sr_json_put_key(g, "mountOptions");
  sr_json_array_open(g);
  for (size_t i = 0; sr_mount_options_name(i); i++)
    sr_json_put_string(g, sr_mount_options_name(i));
  sr_json_array_close(g);

  sr_json_put_key(g, "linux");
  sr_json_map_open(g);
  sr_json_put_key(g, "namespaces");
  sr_json_array_open(g);
  for (int k = 0; k < SR_NS_COUNT; k++)
    sr_json_put_string(g, sr_config_ns_name(k));
  sr_json_array_close(g);
  put_names(g, "capabilities", SR_NAMES(sr_names_capability));

  sr_json_put_key(g, "cgroup");
  sr_json_map_open(g);
  sr_json_put_kv_bool(g, "v1", true);
  sr_json_put_kv_bool(g, "v2", true);
  sr_json_put_kv_bool(g, "systemd", systemd_driver);
  sr_json_put_kv_bool(g, "systemdUser", false);
  sr_json_put_kv_bool(g, "rdma", true);
  sr_json_map_close(g);

  sr_json_put_key(g, "seccomp");
  sr_json_map_open(g);
  sr_json_put_kv_bool(g, "enabled", true);
  put_names(g, "actions", SR_NAMES(sr_names_seccomp_action));
  put_names(g, "operators", SR_NAMES(sr_names_seccomp_op));
  put_names(g, "archs", SR_NAMES(sr_names_seccomp_arch));
  put_names(g, "knownFlags", SR_NAMES(sr_names_seccomp_flag));
  /* WAIT_KILLABLE_RECV needs libseccomp 2.6. */
  sr_json_put_key(g, "supportedFlags");
  sr_json_array_open(g);
  for (size_t i = 0; i < sr_names_seccomp_flag_n; i++)
    if (strcmp(sr_names_seccomp_flag[i].name, "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV") != 0 ||
        SCMP_VER_MAJOR > 2 || (SCMP_VER_MAJOR == 2 && SCMP_VER_MINOR >= 6))
      sr_json_put_string(g, sr_names_seccomp_flag[i].name);
  sr_json_array_close(g);
  sr_json_map_close(g);

  put_bool_object(g, "apparmor", "enabled", true);
  put_bool_object(g, "selinux", "enabled", true);
  put_bool_object(g, "intelRdt", "enabled", false);
  sr_json_put_key(g, "mountExtensions");
  sr_json_map_open(g);
  put_bool_object(g, "idmap", "enabled", true);
  sr_json_map_close(g);
  put_bool_object(g, "netDevices", "enabled", false);
  sr_json_map_close(g);

  char version[32];
  snprintf(version, sizeof(version), "%d.%d.%d", SCMP_VER_MAJOR, SCMP_VER_MINOR, SCMP_VER_MICRO);
  sr_json_put_key(g, "annotations");
  sr_json_map_open(g);
  sr_json_put_kv_string(g, "io.github.seccomp.libseccomp.version", version);
  sr_json_put_kv_string(g, "org.opencontainers.runc.checkpoint.enabled",
                        checkpoint ? "true" : "false");
  /* Only what works here: no pre-dump (no soft-dirty tracking), lazy pages, dedup, empty-ns. */
  if (checkpoint)
    sr_json_put_kv_string(g, "io.seerun.checkpoint.options",
                          "--image-path --work-path --leave-running --tcp-established "
                          "--ext-unix-sk --shell-job --file-locks --manage-cgroups-mode");
  sr_json_put_kv_string(g, "io.seerun.version", PACKAGE_VERSION);
  sr_json_map_close(g);
  sr_json_map_close(g);

  const unsigned char *buf;
  size_t len;
  if (sr_json_gen_buf(g, &buf, &len, err) < 0)
    return sr_error_wrap(err, "features");
  *out = strndup((const char *)buf, len);
  return *out ? 0 : sr_error_make(err, ENOMEM, "features");
}
