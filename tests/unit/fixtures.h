/* Fixtures shared by the unit tests: a base config.json with some top-level members replaced,
 * added or (UNIT_OMIT) removed, a config around a linux.seccomp object, parsed, and what a
 * filtered process sees of itself. */
#ifndef SEERUN_UNIT_FIXTURES_H
#define SEERUN_UNIT_FIXTURES_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cleanup.h"
#include "config.h"
#include "unit.h"

#define JSON(...) #__VA_ARGS__

static const char UNIT_OMIT[] = "(omit)";

struct unit_member {
  const char *key, *value;
};

/* M's first N members (room for CAP), each (key, value) pair of AP replacing the member of its
 * key or added after them, UNIT_OMIT leaving it out, as one JSON object into BUF. */
__attribute__((unused)) static const char *unit_config_merge(char *buf, size_t size,
                                                             struct unit_member *m, size_t n,
                                                             size_t cap, const char *key,
                                                             va_list ap)
{
  for (const char *k = key; k != NULL; k = va_arg(ap, const char *)) {
    const char *v = va_arg(ap, const char *);
    size_t i = 0;
    while (i < n && strcmp(m[i].key, k) != 0)
      i++;
    if (i == n) {
      if (n == cap)
        abort();
      m[n++].key = k;
    }
    m[i].value = v;
  }
  size_t used = 0;
  const char *sep = "";
  buf[used++] = '{';
  for (size_t i = 0; i < n; i++) {
    if (m[i].value == UNIT_OMIT)
      continue;
    int w = snprintf(buf + used, size - used, "%s\"%s\": %s", sep, m[i].key, m[i].value);
    if (w < 0 || (size_t)w >= size - used - 1)
      abort();
    used += (size_t)w;
    sep = ", ";
  }
  buf[used++] = '}';
  buf[used] = '\0';
  return buf;
}

/* The smallest config around SECCOMP_JSON (its linux.seccomp), parsed; NULL (a failed check)
 * when it does not parse or has no filter. */
__attribute__((unused)) static struct sr_config *unit_parse_seccomp(const char *seccomp_json)
{
  _cleanup_free_ char *json = NULL;
  _cleanup_error_ sr_error_t err = NULL;
  struct sr_config *c = NULL;
  if (asprintf(
          &json,
          "{\"ociVersion\": \"1.0.0\", \"root\": {\"path\": \"rootfs\"},"
          " \"process\": {\"user\": {\"uid\": 0, \"gid\": 0}, \"args\": [\"sh\"], \"cwd\": \"/\"},"
          " \"linux\": {\"namespaces\": [{\"type\": \"mount\"}], \"seccomp\": %s}}",
          seccomp_json) < 0)
    return NULL;
  int r = sr_config_parse(json, strlen(json), "config.json", &c, &err);
  CHECK_OK(r, err);
  if (r < 0)
    return NULL;
  CHECK(c->linux_.seccomp != NULL);
  return c;
}

/* Runs a raw syscall; returns errno when it failed, 0 when it succeeded. */
#define SYSCALL_ERRNO(...) (syscall(__VA_ARGS__) < 0 ? errno : 0)

/* A number field of /proc/self/status ("Seccomp", "Seccomp_filters"); -1 when absent. */
__attribute__((unused)) static int unit_status_field(const char *key)
{
  _cleanup_fclose_ FILE *f = fopen("/proc/self/status", "re");
  char line[256];
  size_t n = strlen(key);
  if (f == NULL)
    return -1;
  while (fgets(line, sizeof(line), f))
    if (strncmp(line, key, n) == 0 && line[n] == ':')
      return atoi(line + n + 1);
  return -1;
}

#endif
