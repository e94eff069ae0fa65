#include "build.h"

#include "default_devices.h"

#include <string.h>

const struct sr_default_device sr_default_devices[] = {
    {"null", "/dev/null", 'c', 1, 3, true},
    {"zero", "/dev/zero", 'c', 1, 5, true},
    {"full", "/dev/full", 'c', 1, 7, true},
    {"random", "/dev/random", 'c', 1, 8, true},
    {"urandom", "/dev/urandom", 'c', 1, 9, true},
    {"tty", "/dev/tty", 'c', 5, 0, true},
    {"console", "/dev/console", 'c', 5, 1, false},
    {"ptmx", "/dev/ptmx", 'c', 5, 2, false},
    {"pts", "/dev/pts", 'c', 136, -1, false},
};
const size_t sr_default_devices_n = sizeof(sr_default_devices) / sizeof(sr_default_devices[0]);

const struct sr_default_device *sr_default_devices_find(const char *name)
{
  for (size_t i = 0; i < sr_default_devices_n; i++)
    if (strcmp(sr_default_devices[i].name, name) == 0)
      return &sr_default_devices[i];
  return NULL;
}
