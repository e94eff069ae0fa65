#include "build.h"

#include "path.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

size_t sr_path_clean(const char *in, char *out)
{
  size_t o = 0, dotdots = 0;
  const char *p = in;
  while (*p) {
    while (*p == '/')
      p++;
    size_t n = strcspn(p, "/");
    if (n == 0 || (n == 1 && p[0] == '.')) {
      /* nothing */
    } else if (n == 2 && p[0] == '.' && p[1] == '.') {
      dotdots++;
      while (o > 0 && out[o - 1] != '/')
        o--;
      if (o > 0)
        o--;
    } else {
      /* In place, o stays below p: every component written was read with a '/' before it. */
      out[o++] = '/';
      memmove(out + o, p, n);
      o += n;
    }
    p += n;
  }
  if (o == 0)
    out[o++] = '/';
  out[o] = '\0';
  return dotdots;
}

bool sr_path_is_clean(const char *p)
{
  if (p[0] != '/')
    return false;
  if (p[1] == '\0')
    return true;
  for (const char *s = p + 1;;) {
    size_t n = strcspn(s, "/");
    if (n == 0 || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
      return false;
    if (s[n] == '\0')
      return true;
    s += n + 1;
  }
}

int sr_path_join(char *buf, size_t size, const char *dir, const char *name, sr_error_t *err)
{
  size_t dl = strlen(dir);
  bool slash = dl > 0 && dir[dl - 1] != '/' && name[0] != '/';
  int n = snprintf(buf, size, "%s%s%s", dir, slash ? "/" : "", name);
  if (n < 0 || (size_t)n >= size) {
    if (size > 0)
      buf[0] = '\0';
    return sr_error_make(err, ENAMETOOLONG, "`%s%s%s`: path too long (%d bytes, at most %zu)",
                         dir, slash ? "/" : "", name, n, size ? size - 1 : 0);
  }
  return 0;
}
