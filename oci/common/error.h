/* The one error type of seerun.
 *
 * A fallible function returns a negative int (or NULL) and fills `sr_error_t *err`.
 * Callers add context as the error travels up (sr_error_wrap), and only the command layer
 * prints it.  The final text reads "context: ...: message: strerror(status)".
 *
 * The text is for people.  Code that acts on an error tests its kind, status and field, which
 * are set where the error is made and survive sr_error_wrap; it never parses the text.
 */
#ifndef SEERUN_ERROR_H
#define SEERUN_ERROR_H

#include <stdarg.h>

enum sr_error_kind {
  SR_ERR_OTHER = 0, /* any other failure: a call that failed (status), a broken invariant */
  SR_ERR_CONFIG,    /* a document seerun was given (config.json above all) is invalid */
  SR_ERR_POLICY,    /* the policy refuses what a field of config.json asks */
  SR_ERR_PEER_GONE, /* the process at the other end of a sync channel exited or was killed */
  SR_ERR_RECORD,    /* a record seerun reads back (state.json) is not what seerun wrote */
  SR_ERR_NOT_FOUND, /* the container's program does not exist where it was looked for */
  SR_ERR_NOT_EXECUTABLE, /* the container's program exists but cannot be executed */
};

struct sr_error_s {
  int status; /* errno of the failing call, 0 when the error is not a syscall failure */
  enum sr_error_kind kind;
  /* SR_ERR_CONFIG and SR_ERR_POLICY: the field concerned, as the policy names it and relative
   * to its document ("mounts[3].source", "linux.sysctl.kernel.core_pattern"); NULL for the
   * document as a whole. */
  char *field;
  char *msg;
};
typedef struct sr_error_s *sr_error_t;

/* Sets *err (which must be NULL) and returns -1.  status is an errno value or 0. */
int sr_error_make(sr_error_t *err, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int sr_error_makev(sr_error_t *err, int status, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

/* An invalid field of a document (SR_ERR_CONFIG).  The field is "parent.key" ("parent[3]" when
 * the key is "[3]"; key alone when parent is NULL or "", parent alone when key is NULL; none
 * when both are: the document as a whole).  sr_error_config_at makes the text "parent.key: "
 * followed by fmt, sr_error_config takes fmt as the whole text. */
int sr_error_config_at(sr_error_t *err, const char *parent, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
int sr_error_config(sr_error_t *err, const char *parent, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* A refusal of the policy (SR_ERR_POLICY) of what field asks; the text is fmt. */
int sr_error_policy(sr_error_t *err, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The peer of a sync channel is gone (SR_ERR_PEER_GONE); the text is fmt. */
int sr_error_peer_gone(sr_error_t *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A record read back from disk is not what seerun wrote (SR_ERR_RECORD); the text is fmt. */
int sr_error_record(sr_error_t *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* An error of the given kind with status (an errno value or 0) and the text fmt: for a
 * process that rebuilds an error another process reported (sync.h) and for the kinds without a
 * constructor of their own. */
int sr_error_kinded(sr_error_t *err, enum sr_error_kind kind, int status, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* err's kind, SR_ERR_OTHER for no error. */
static inline enum sr_error_kind sr_error_kind(const struct sr_error_s *err)
{
  return err ? err->kind : SR_ERR_OTHER;
}

/* Shorthand for a failed syscall: status = errno. */
#define sr_error_sys(err, ...) sr_error_make((err), errno, __VA_ARGS__)

/* Prefixes context to an existing error: "context: old message".  Returns -1. */
int sr_error_wrap(sr_error_t *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The full text, including strerror(status); owned by the caller. */
char *sr_error_text(const sr_error_t err);

void sr_error_free(sr_error_t *err);

#endif
