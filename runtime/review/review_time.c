/* The times `seerun review` reads (review_time.h). */
#include "build.h"

#include "review_time.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double sr_review_time_parse(const char *s)
{
  struct tm tm = {0};
  const char *p = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
  if (p == NULL)
    return -1;
  double frac = 0;
  if (*p == '.') {
    /* Digits only: strtod would take ".9e999" (infinity, which --json would print as "inf"). */
    size_t digits = strspn(p + 1, "0123456789");
    char *end;
    frac = strtod(p, &end);
    if (digits == 0 || end != p + 1 + digits)
      return -1;
    p = end;
  }
  long off = 0;
  if (*p == 'Z' || *p == 'z') {
    p++;
  } else if (*p == '+' || *p == '-') {
    /* Exactly "+hh:mm": a shorter one must not move p past the end of the string. */
    for (int i = 1; i <= 5; i++)
      if (i == 3 ? p[i] != ':' : !isdigit((unsigned char)p[i]))
        return -1;
    int h = (p[1] - '0') * 10 + (p[2] - '0'), m = (p[4] - '0') * 10 + (p[5] - '0');
    off = (h * 3600 + m * 60) * (*p == '-' ? -1 : 1);
    p += 6;
  } else {
    return -1;
  }
  if (*p)
    return -1;
  return (double)timegm(&tm) - (double)off + frac;
}

int sr_review_time_since(const char *s, double now, double *out)
{
  double t = sr_review_time_parse(s);
  if (t >= 0) {
    *out = t;
    return 0;
  }
  const char *p = s[0] == '-' ? s + 1 : s;
  char *end;
  double n = strtod(p, &end);
  if (end == p || n < 0)
    return -1;
  double unit = strcmp(end, "s") == 0   ? 1
                : strcmp(end, "m") == 0 ? 60
                : strcmp(end, "h") == 0 ? 3600
                : strcmp(end, "d") == 0 ? 86400
                                        : 0;
  if (unit == 0)
    return -1;
  *out = now - n * unit;
  return 0;
}
