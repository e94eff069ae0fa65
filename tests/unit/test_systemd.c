/* The systemd cgroup driver's naming: what scope and cgroup a cgroupsPath gives.  (The D-Bus
 * calls need a running systemd, which this machine does not have.) */
#include "build.h"

#include "cgroup_systemd.h"
#include "sdbus.h"
#include "unit.h"

#include <stdlib.h>
#include <unistd.h>

static void slice_paths_nest_as_systemd_nests_them(void)
{
  char *p = NULL;
  sr_error_t err = NULL;
  CHECK_OK(sr_systemd_slice_path("system.slice", &p, &err), err);
  CHECK_STR_EQ(p, "/system.slice");
  free(p);
  CHECK_OK(sr_systemd_slice_path("machine-tenant-a.slice", &p, &err), err);
  CHECK_STR_EQ(p, "/machine.slice/machine-tenant.slice/machine-tenant-a.slice");
  free(p);
  CHECK_OK(sr_systemd_slice_path("-.slice", &p, &err), err);
  CHECK_STR_EQ(p, "");
  free(p);
  CHECK(sr_systemd_slice_path("a--b.slice", &p, &err) < 0);
  CHECK_ERR_CONTAINS(err, "empty slice name component");
  sr_error_free(&err);
  CHECK(sr_systemd_slice_path("notaslice", &p, &err) < 0);
  CHECK_ERR_CONTAINS(err, "is not a slice name");
  sr_error_free(&err);
}

static void cgroups_path_names_the_scope_in_its_slice(void)
{
  struct sr_systemd_unit u;
  sr_error_t err = NULL;
  CHECK_OK(sr_systemd_parse("machine.slice:libpod:abc123", "abc123", &u, &err), err);
  CHECK_STR_EQ(u.slice, "machine.slice");
  CHECK_STR_EQ(u.unit, "libpod-abc123.scope");
  CHECK_STR_EQ(u.path, "/machine.slice/libpod-abc123.scope");
  sr_systemd_unit_release(&u);
  CHECK_OK(sr_systemd_parse(":docker:c1", "c1", &u, &err), err);
  CHECK_STR_EQ(u.path, "/system.slice/docker-c1.scope");
  sr_systemd_unit_release(&u);
  CHECK_OK(sr_systemd_parse(NULL, "c2", &u, &err), err);
  CHECK_STR_EQ(u.path, "/system.slice/seerun-c2.scope");
  sr_systemd_unit_release(&u);
  CHECK(sr_systemd_parse("/not/systemd/form", "c3", &u, &err) < 0);
  CHECK_ERR_CONTAINS(err, "slice:prefix:name");
  sr_error_free(&err);
  CHECK(sr_systemd_parse("system.slice:x:a/b", "c4", &u, &err) < 0);
  CHECK_ERR_CONTAINS(err, "invalid unit name");
  sr_error_free(&err);
}

/* libsystemd is loaded on demand: every symbol the driver calls resolves, and what fails
 * without a system bus is the connection, not the loading. */
static void sd_bus_loads_on_demand(void)
{
  struct sr_sdbus s;
  sr_error_t err = NULL;
  int r = sr_sdbus_open(&s, &err);
  if (access("/run/dbus/system_bus_socket", F_OK) == 0 && r == 0) {
    CHECK(s.bus != NULL);
  } else {
    CHECK(r < 0);
    CHECK_ERR_CONTAINS(err, "systemd: connect to the system bus");
    sr_error_free(&err);
  }
  CHECK(s.lib != NULL && s.call != NULL && s.error_free != NULL);
  sr_sdbus_close(&s);
  CHECK(s.lib == NULL);
  sr_sdbus_close(&s);
}

int main(void)
{
  RUN(slice_paths_nest_as_systemd_nests_them);
  RUN(cgroups_path_names_the_scope_in_its_slice);
  RUN(sd_bus_loads_on_demand);
  return unit_report();
}
