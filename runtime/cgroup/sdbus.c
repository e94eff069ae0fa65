#include "build.h"

#include "sdbus.h"

#include <dlfcn.h>
#include <errno.h>
#include <string.h>

#define LIBSYSTEMD "libsystemd.so.0"

static int load_symbol(struct sr_sdbus *s, void *slot, const char *name, sr_error_t *err)
{
  void *sym = dlsym(s->lib, name);
  if (sym == NULL)
    return sr_error_make(err, 0, "systemd: %s: no symbol %s", LIBSYSTEMD, name);
  memcpy(slot, &sym, sizeof(sym));
  return 0;
}

int sr_sdbus_open(struct sr_sdbus *s, sr_error_t *err)
{
  memset(s, 0, sizeof(*s));
  s->error = (sd_bus_error)SD_BUS_ERROR_NULL;
  s->lib = dlopen(LIBSYSTEMD, RTLD_NOW | RTLD_LOCAL);
  if (s->lib == NULL) {
    const char *why = dlerror();
    return sr_error_make(err, 0, "systemd: load %s (needed by --systemd-cgroup): %s", LIBSYSTEMD,
                         why ? why : "unknown error");
  }
  const struct {
    void *slot;
    const char *name;
  } syms[] = {
      {&s->open_system, "sd_bus_open_system"},
      {&s->flush_close_unref, "sd_bus_flush_close_unref"},
      {&s->message_new_method_call, "sd_bus_message_new_method_call"},
      {&s->message_append, "sd_bus_message_append"},
      {&s->message_open_container, "sd_bus_message_open_container"},
      {&s->message_close_container, "sd_bus_message_close_container"},
      {&s->message_unref, "sd_bus_message_unref"},
      {&s->call, "sd_bus_call"},
      {&s->call_method, "sd_bus_call_method"},
      {&s->error_has_name, "sd_bus_error_has_name"},
      {&s->error_free, "sd_bus_error_free"},
  };
  for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++)
    if (load_symbol(s, syms[i].slot, syms[i].name, err) < 0)
      return -1;
  int r = s->open_system(&s->bus);
  if (r < 0)
    return sr_error_make(err, -r, "systemd: connect to the system bus");
  return 0;
}

void sr_sdbus_close(struct sr_sdbus *s)
{
  if (s->lib == NULL)
    return;
  if (s->error_free)
    s->error_free(&s->error);
  if (s->reply && s->message_unref)
    s->message_unref(s->reply);
  if (s->msg && s->message_unref)
    s->message_unref(s->msg);
  if (s->bus && s->flush_close_unref)
    s->flush_close_unref(s->bus);
  dlclose(s->lib);
  memset(s, 0, sizeof(*s));
}

bool sr_sdbus_available(void)
{
  void *lib = dlopen(LIBSYSTEMD, RTLD_LAZY | RTLD_LOCAL);
  if (lib == NULL)
    return false;
  bool ok = dlsym(lib, "sd_bus_open_system") != NULL;
  dlclose(lib);
  return ok;
}
