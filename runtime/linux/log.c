#include "build.h"

#include "log.h"

#include "json.h"
#include "fileio.h"
#include "rfc3339.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Derived from the command line once, in main(); never changed after. */
static struct {
  int fd; /* -1: stderr, and only warnings and errors */
  bool json;
  bool debug;
} log_cfg = {-1, false, false};

int sr_log_setup(const char *path, bool json, bool debug)
{
  log_cfg.json = json;
  log_cfg.debug = debug;
  if (path && path[0]) {
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0600);
    if (fd < 0)
      return -1;
    log_cfg.fd = fd;
  }
  return 0;
}

bool sr_log_to_file(void)
{
  return log_cfg.fd >= 0;
}

bool sr_log_debug_enabled(void)
{
  return log_cfg.debug;
}

static const char *level_names[] = {"error", "warning", "info", "debug"};

void sr_log(enum sr_log_level level, const char *fmt, ...)
{
  if (level == SR_LOG_DEBUG && !log_cfg.debug)
    return;
  char *msg = NULL;
  va_list ap;
  va_start(ap, fmt);
  if (vasprintf(&msg, fmt, ap) < 0)
    msg = NULL;
  va_end(ap);
  if (msg == NULL)
    return;
  char now[64];
  sr_rfc3339_now(now, sizeof(now));
  int fd = log_cfg.fd >= 0 ? log_cfg.fd : STDERR_FILENO;
  if (log_cfg.json) {
    _cleanup_gen_ sr_json_gen_t g = NULL;
    sr_error_t err = NULL;
    if (sr_json_gen_new(&g, false, &err) == 0) {
      const unsigned char *out;
      size_t len;
      sr_json_map_open(g);
      sr_json_put_kv_string(g, "level", level_names[level]);
      sr_json_put_kv_string(g, "msg", msg);
      sr_json_put_kv_string(g, "time", now);
      sr_json_map_close(g);
      if (sr_json_gen_buf(g, &out, &len, &err) < 0) {
        /* Never half a line: the engine parses each one.  Our own text, nothing to escape. */
        dprintf(fd,
                "{\"level\":\"error\",\"msg\":\"log: a line could not be generated\","
                "\"time\":\"%s\"}\n",
                now);
      } else {
        /* One write per line, so lines of concurrent processes never interleave. */
        char *line = malloc(len + 1);
        if (line) {
          memcpy(line, out, len);
          line[len] = '\n';
          sr_fileio_write_all(fd, line, len + 1);
          free(line);
        }
      }
    }
    sr_error_free(&err);
  } else if (log_cfg.fd >= 0) {
    dprintf(fd, "time=\"%s\" level=%s msg=\"%s\"\n", now, level_names[level], msg);
  } else {
    dprintf(fd, "seerun: %s: %s\n", level_names[level], msg);
  }
  free(msg);
}
