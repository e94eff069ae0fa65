#include "build.h"

#include "cgroup_systemd.h"

#include "cleanup.h"
#include "sdbus.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define WAIT_MS 5000

void sr_systemd_unit_release(struct sr_systemd_unit *u)
{
  free(u->slice);
  free(u->unit);
  free(u->path);
  memset(u, 0, sizeof(*u));
}

static bool valid_unit_part(const char *s)
{
  if (s[0] == '\0')
    return false;
  for (const char *p = s; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
          strchr(":-_.\\@", *p)))
      return false;
  return true;
}

int sr_systemd_slice_path(const char *slice, char **out, sr_error_t *err)
{
  size_t len = strlen(slice);
  if (len < 7 || strcmp(slice + len - 6, ".slice") != 0 || strchr(slice, '/'))
    return sr_error_make(err, 0, "linux.cgroupsPath: \"%s\" is not a slice name", slice);
  if (strcmp(slice, "-.slice") == 0)
    return (*out = strdup("")) ? 0 : sr_error_make(err, ENOMEM, "slice");
  size_t stem = len - 6;
  /* Each dash-separated prefix is a parent slice: a-b-c.slice -> a.slice/a-b.slice/... */
  size_t cap = (stem + 7) * (stem + 1) + 1, used = 0;
  char *path = malloc(cap);
  if (path == NULL)
    return sr_error_make(err, ENOMEM, "slice");
  for (size_t i = 0; i <= stem; i++) {
    if (i < stem && slice[i] != '-')
      continue;
    if (i == 0 || slice[i - 1] == '-') {
      free(path);
      return sr_error_make(err, 0, "linux.cgroupsPath: \"%s\": empty slice name component",
                           slice);
    }
    used += (size_t)snprintf(path + used, cap - used, "/%.*s.slice", (int)i, slice);
  }
  *out = path;
  return 0;
}

int sr_systemd_parse(const char *cgroups_path, const char *id, struct sr_systemd_unit *u,
                     sr_error_t *err)
{
  memset(u, 0, sizeof(*u));
  const char *slice = "system.slice", *prefix = "seerun", *name = id;
  char buf[512];
  if (cgroups_path && cgroups_path[0]) {
    if (strlen(cgroups_path) >= sizeof(buf))
      return sr_error_make(err, ENAMETOOLONG, "linux.cgroupsPath");
    strcpy(buf, cgroups_path);
    char *c1 = strchr(buf, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    if (c2 == NULL || strchr(c2 + 1, ':'))
      return sr_error_make(err, 0, "linux.cgroupsPath: \"%s\": with --systemd-cgroup it must be "
                                   "slice:prefix:name", cgroups_path);
    *c1 = *c2 = '\0';
    if (buf[0])
      slice = buf;
    prefix = c1 + 1;
    name = c2 + 1;
  }
  if (!valid_unit_part(name) || (prefix[0] && !valid_unit_part(prefix)))
    return sr_error_make(err, 0, "linux.cgroupsPath: \"%s\": invalid unit name",
                         cgroups_path ? cgroups_path : id);
  _cleanup_free_ char *slice_path = NULL;
  if (sr_systemd_slice_path(slice, &slice_path, err) < 0)
    return -1;
  size_t nl = strlen(name);
  if (nl > 6 && strcmp(name + nl - 6, ".slice") == 0)
    return sr_error_make(err, 0,
                         "linux.cgroupsPath: \"%s\": a slice as the container's own unit "
                         "is not supported (use slice:prefix:name)",
                         cgroups_path ? cgroups_path : id);
  int r = prefix[0] ? asprintf(&u->unit, "%s-%s.scope", prefix, name)
                    : asprintf(&u->unit, "%s.scope", name);
  if (r >= 0 && (u->slice = strdup(slice)) != NULL &&
      asprintf(&u->path, "%s/%s", slice_path, u->unit) >= 0)
    return 0;
  /* asprintf leaves its pointer undefined on failure: reset before the release. */
  if (r < 0)
    u->unit = NULL;
  u->path = NULL;
  sr_systemd_unit_release(u);
  return sr_error_make(err, ENOMEM, "systemd unit");
}

bool sr_systemd_running(void)
{
  return access("/run/systemd/system", F_OK) == 0;
}

static int bus_fail(sr_error_t *err, int r, const sd_bus_error *e, const char *what,
                    const char *unit)
{
  return sr_error_make(err, -r, "systemd: %s %s: %s", what, unit,
                       e && e->message ? e->message : strerror(-r));
}

/* The pid is in the scope once /proc/<pid>/cgroup names it. */
static int wait_for_scope(pid_t pid, const char *unit, sr_error_t *err)
{
  char path[64], buf[4096];
  snprintf(path, sizeof(path), "/proc/%d/cgroup", pid);
  for (int waited = 0; waited < WAIT_MS; waited += 5) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
    if (fd >= 0)
      close(fd);
    if (n > 0) {
      buf[n] = '\0';
      if (strstr(buf, unit))
        return 0;
    }
    struct timespec ts = {0, 5 * 1000 * 1000};
    nanosleep(&ts, NULL);
  }
  return sr_error_make(err, ETIMEDOUT, "systemd: scope %s: process %d did not appear in it",
                       unit, pid);
}

int sr_systemd_start_scope(const struct sr_systemd_unit *u, pid_t pid, const char *description,
                           sr_error_t *err)
{
  __attribute__((cleanup(sr_sdbus_close))) struct sr_sdbus s = {0};
  if (sr_sdbus_open(&s, err) < 0)
    return -1;
  int r = s.message_new_method_call(s.bus, &s.msg, "org.freedesktop.systemd1",
                                    "/org/freedesktop/systemd1",
                                    "org.freedesktop.systemd1.Manager", "StartTransientUnit");
  if (r >= 0)
    r = s.message_append(s.msg, "ss", u->unit, "fail");
  if (r >= 0)
    r = s.message_open_container(s.msg, 'a', "(sv)");
  /* Delegate: seerun writes the resource files itself, as runc does. */
  if (r >= 0)
    r = s.message_append(s.msg, "(sv)(sv)(sv)(sv)(sv)(sv)(sv)(sv)", "Description", "s",
                         description, "Slice", "s", u->slice, "Delegate", "b", 1,
                         "DefaultDependencies", "b", 0, "MemoryAccounting", "b", 1,
                         "CPUAccounting", "b", 1, "TasksAccounting", "b", 1, "PIDs", "au", 1,
                         (uint32_t)pid);
  if (r >= 0)
    r = s.message_close_container(s.msg);
  if (r >= 0)
    r = s.message_append(s.msg, "a(sa(sv))", 0);
  if (r < 0)
    return bus_fail(err, r, NULL, "build StartTransientUnit for", u->unit);
  r = s.call(s.bus, s.msg, WAIT_MS * 1000ULL, &s.error, &s.reply);
  if (r < 0)
    return bus_fail(err, r, &s.error, "start", u->unit);
  return wait_for_scope(pid, u->unit, err);
}

int sr_systemd_stop_unit(const char *unit, sr_error_t *err)
{
  __attribute__((cleanup(sr_sdbus_close))) struct sr_sdbus s = {0};
  if (sr_sdbus_open(&s, err) < 0)
    return -1;
  int r = s.call_method(s.bus, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                        "org.freedesktop.systemd1.Manager", "StopUnit", &s.error, &s.reply, "ss",
                        unit, "replace");
  if (r < 0 && !s.error_has_name(&s.error, "org.freedesktop.systemd1.NoSuchUnit"))
    return bus_fail(err, r, &s.error, "stop", unit);
  return 0;
}

int sr_systemd_stop_scope_of(const char *path, sr_error_t *err)
{
  const char *unit = strrchr(path, '/');
  unit = unit ? unit + 1 : path;
  if (unit[0] == '\0' || !sr_systemd_running())
    return 0;
  return sr_systemd_stop_unit(unit, err);
}
