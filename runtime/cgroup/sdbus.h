/* libsystemd's sd-bus, loaded with dlopen only when --systemd-cgroup needs it.  Linking it
 * costs every invocation several milliseconds (its dependencies' constructors and relocations)
 * although only the systemd cgroup driver uses it. */
#ifndef SEERUN_SDBUS_H
#define SEERUN_SDBUS_H

#include <stdbool.h>
#include <systemd/sd-bus.h>

#include "error.h"

/* One call's worth of sd-bus: the library, the functions, the connection and the messages.
 * sr_sdbus_close releases all of it (safe on a zeroed or half-loaded one). */
struct sr_sdbus {
  void *lib;
  int (*open_system)(sd_bus **bus);
  sd_bus *(*flush_close_unref)(sd_bus *bus);
  int (*message_new_method_call)(sd_bus *bus, sd_bus_message **m, const char *destination,
                                 const char *path, const char *interface, const char *member);
  int (*message_append)(sd_bus_message *m, const char *types, ...);
  int (*message_open_container)(sd_bus_message *m, char type, const char *contents);
  int (*message_close_container)(sd_bus_message *m);
  sd_bus_message *(*message_unref)(sd_bus_message *m);
  int (*call)(sd_bus *bus, sd_bus_message *m, uint64_t usec, sd_bus_error *e,
              sd_bus_message **reply);
  int (*call_method)(sd_bus *bus, const char *destination, const char *path,
                     const char *interface, const char *member, sd_bus_error *e,
                     sd_bus_message **reply, const char *types, ...);
  int (*error_has_name)(const sd_bus_error *e, const char *name);
  void (*error_free)(sd_bus_error *e);

  sd_bus *bus;
  sd_bus_message *msg, *reply;
  sd_bus_error error;
};

/* Loads libsystemd and connects to the system bus. */
int sr_sdbus_open(struct sr_sdbus *s, sr_error_t *err);
void sr_sdbus_close(struct sr_sdbus *s);
/* Whether libsystemd can be loaded (what `features` reports for the systemd driver). */
bool sr_sdbus_available(void);

#endif
