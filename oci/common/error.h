/* The one error type of seerun.
 *
 * A fallible function returns a negative int (or NULL) and fills `sr_error_t *err`.
 * Callers add context as the error travels up (sr_error_wrap), and only the command layer
 * prints it.  The final text reads "context: ...: message: strerror(status)".
 */
#ifndef SEERUN_ERROR_H
#define SEERUN_ERROR_H

#include <stdarg.h>

struct sr_error_s {
  int status; /* errno of the failing call, 0 when the error is not a syscall failure */
  char *msg;
};
typedef struct sr_error_s *sr_error_t;

/* Sets *err (which must be NULL) and returns -1.  status is an errno value or 0. */
int sr_error_make(sr_error_t *err, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int sr_error_makev(sr_error_t *err, int status, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

/* Shorthand for a failed syscall: status = errno. */
#define sr_error_sys(err, ...) sr_error_make((err), errno, __VA_ARGS__)

/* Prefixes context to an existing error: "context: old message".  Returns -1. */
int sr_error_wrap(sr_error_t *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The full text, including strerror(status); owned by the caller. */
char *sr_error_text(const sr_error_t err);

void sr_error_free(sr_error_t *err);

/* Used by child processes that report an error to their parent as (status, text). */
int sr_error_from_wire(sr_error_t *err, int status, const char *text);

#endif
