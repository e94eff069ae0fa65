/* Runtime log, as runc writes it: `--log FILE` (stderr by default) and `--log-format text|json`.
 * JSON lines carry level, msg and an RFC 3339 time; containerd reports the last "error" line. */
#ifndef SEERUN_LOG_H
#define SEERUN_LOG_H

#include <stdbool.h>

enum sr_log_level { SR_LOG_ERROR, SR_LOG_WARNING, SR_LOG_INFO, SR_LOG_DEBUG };

/* Set once from the command line, before anything logs. */
int sr_log_setup(const char *path, bool json, bool debug);
bool sr_log_debug_enabled(void);
/* A --log file is in use (errors are then written there as well as on stderr). */
bool sr_log_to_file(void);
void sr_log(enum sr_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define sr_debug(...)                                                                              \
  do {                                                                                             \
    if (sr_log_debug_enabled())                                                                    \
      sr_log(SR_LOG_DEBUG, __VA_ARGS__);                                                           \
  } while (0)
#define sr_warn(...) sr_log(SR_LOG_WARNING, __VA_ARGS__)

#endif
