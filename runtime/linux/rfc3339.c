#include "build.h"

#include "rfc3339.h"

#include "cleanup.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

void sr_rfc3339_format(char *buf, size_t size, const struct timespec *ts)
{
  struct tm tm;
  gmtime_r(&ts->tv_sec, &tm);
  char base[32];
  strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
  /* Go's RFC3339Nano drops trailing zeros of the fraction. */
  char frac[16] = "";
  if (ts->tv_nsec) {
    snprintf(frac, sizeof(frac), ".%09ld", ts->tv_nsec);
    size_t l = strlen(frac);
    while (l > 1 && frac[l - 1] == '0')
      frac[--l] = '\0';
  }
  snprintf(buf, size, "%s%sZ", base, frac);
}

void sr_rfc3339_now(char *buf, size_t size)
{
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  sr_rfc3339_format(buf, size, &ts);
}
