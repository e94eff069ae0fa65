#include "build.h"

#include "number.h"

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

bool sr_number_parse_uint(const char *s, unsigned long long max, unsigned long long *out)
{
  if (s == NULL || *s < '0' || *s > '9')
    return false;
  errno = 0;
  char *end;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || *end != '\0' || v > max)
    return false;
  *out = v;
  return true;
}
