/* --systemd-cgroup: the container's cgroup is a transient scope unit that systemd creates and
 * removes (through its D-Bus API, with libsystemd's sd-bus), as runc's systemd driver does.
 * linux.cgroupsPath is "slice:prefix:name" (default "system.slice:seerun:<id>"); the scope is
 * "<prefix>-<name>.scope" in that slice, with Delegate=yes so that seerun writes the resource
 * files itself. */
#ifndef SEERUN_CGROUP_SYSTEMD_H
#define SEERUN_CGROUP_SYSTEMD_H

#include <stdbool.h>
#include <sys/types.h>

#include "error.h"

struct sr_systemd_unit {
  char *slice; /* "system.slice" */
  char *unit;  /* "seerun-<id>.scope" */
  char *path;  /* the cgroup systemd gives it: "/system.slice/seerun-<id>.scope" */
};

/* Parses "slice:prefix:name" (pure: no systemd needed). */
int sr_systemd_parse(const char *cgroups_path, const char *id, struct sr_systemd_unit *u,
                     sr_error_t *err);
void sr_systemd_unit_release(struct sr_systemd_unit *u);

/* "a-b.slice" -> "/a.slice/a-b.slice", as systemd nests slices. */
int sr_systemd_slice_path(const char *slice, char **out, sr_error_t *err);

bool sr_systemd_running(void);
/* Starts the scope with pid in it and waits until the pid is in its cgroup. */
int sr_systemd_start_scope(const struct sr_systemd_unit *u, pid_t pid, const char *description,
                           sr_error_t *err);
/* Stops the unit (systemd removes its cgroup); a unit that is already gone is success. */
int sr_systemd_stop_unit(const char *unit, sr_error_t *err);

/* After the container's processes are gone: stops the scope whose cgroup is path. */
int sr_systemd_stop_scope_of(const char *path, sr_error_t *err);

#endif
