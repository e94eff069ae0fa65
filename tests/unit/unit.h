/* A tiny assertion helper for seerun's unit tests.
 *
 * Each test program is one file with a main():
 *
 *   static void a_config_without_root_is_refused(void) { ... CHECK(...); ... }
 *   int main(void) { RUN(a_config_without_root_is_refused); return unit_report(); }
 *
 * A failed check prints "FAIL file:line: test: what" and the test goes on (so one run shows
 * every failure); unit_report() prints a summary and returns the exit status (0: all passed).
 */
#ifndef SEERUN_UNIT_H
#define SEERUN_UNIT_H

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>

#include "error.h"

static int unit_failures;
static int unit_checks;
static int unit_tests;
static const char *unit_current = "(no test)";

__attribute__((format(printf, 3, 4), unused)) static void unit_fail(const char *file, int line,
                                                                    const char *fmt, ...)
{
  va_list ap;
  unit_failures++;
  fprintf(stderr, "FAIL %s:%d: %s: ", file, line, unit_current);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
}

#define CHECK(cond)                                                                                \
  do {                                                                                             \
    unit_checks++;                                                                                 \
    if (!(cond))                                                                                   \
      unit_fail(__FILE__, __LINE__, "CHECK(%s) failed", #cond);                                    \
  } while (0)

#define CHECK_STR_EQ(actual, expected)                                                             \
  do {                                                                                             \
    const char *unit_a_ = (actual), *unit_e_ = (expected);                                         \
    unit_checks++;                                                                                 \
    if (unit_a_ == NULL || unit_e_ == NULL ? unit_a_ != unit_e_ : strcmp(unit_a_, unit_e_) != 0)   \
      unit_fail(__FILE__, __LINE__, "%s is \"%s\", expected \"%s\"", #actual,                      \
                unit_a_ ? unit_a_ : "(null)", unit_e_ ? unit_e_ : "(null)");                       \
  } while (0)

/* Integers of any width; compared as signed or unsigned 64-bit values. */
#define CHECK_INT_EQ(actual, expected)                                                             \
  do {                                                                                             \
    intmax_t unit_a_ = (intmax_t)(actual), unit_e_ = (intmax_t)(expected);                         \
    unit_checks++;                                                                                 \
    if (unit_a_ != unit_e_)                                                                        \
      unit_fail(__FILE__, __LINE__, "%s is %jd, expected %jd", #actual, unit_a_, unit_e_);         \
  } while (0)

#define CHECK_UINT_EQ(actual, expected)                                                            \
  do {                                                                                             \
    uintmax_t unit_a_ = (uintmax_t)(actual), unit_e_ = (uintmax_t)(expected);                      \
    unit_checks++;                                                                                 \
    if (unit_a_ != unit_e_)                                                                        \
      unit_fail(__FILE__, __LINE__, "%s is %ju (%#jx), expected %ju (%#jx)", #actual, unit_a_,     \
                unit_a_, unit_e_, unit_e_);                                                        \
  } while (0)

/* A call that must have succeeded: ret >= 0 and no error; prints the error otherwise. */
#define CHECK_OK(ret, err)                                                                         \
  do {                                                                                             \
    int unit_r_ = (ret);                                                                           \
    unit_checks++;                                                                                 \
    if (unit_r_ < 0 || (err) != NULL) {                                                            \
      char *unit_t_ = (err) ? sr_error_text(err) : NULL;                                           \
      unit_fail(__FILE__, __LINE__, "%s returned %d: %s", #ret, unit_r_,                           \
                unit_t_ ? unit_t_ : "(no error set)");                                             \
      free(unit_t_);                                                                               \
    }                                                                                              \
  } while (0)

/* An error must be set and its full text (sr_error_text) must contain `text`. */
#define CHECK_ERR_CONTAINS(err, text)                                                              \
  do {                                                                                             \
    const char *unit_w_ = (text);                                                                  \
    unit_checks++;                                                                                 \
    if ((err) == NULL) {                                                                           \
      unit_fail(__FILE__, __LINE__, "no error, expected one containing \"%s\"", unit_w_);          \
    } else {                                                                                       \
      char *unit_t_ = sr_error_text(err);                                                          \
      if (unit_t_ == NULL || strstr(unit_t_, unit_w_) == NULL)                                     \
        unit_fail(__FILE__, __LINE__, "error \"%s\" does not contain \"%s\"",                      \
                  unit_t_ ? unit_t_ : "(null)", unit_w_);                                          \
      free(unit_t_);                                                                               \
    }                                                                                              \
  } while (0)

/* A test child reaped: its wait status, or -1 when PID is not one (a failed fork). */
__attribute__((unused)) static int unit_reap(pid_t pid)
{
  int status = -1;
  if (pid < 0)
    return -1;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
    ;
  return status;
}

/* A child that passed: exited 0 (its own failed checks make it exit 1); says how it ended. */
#define CHECK_CHILD_OK(status)                                                                     \
  do {                                                                                             \
    int st_ = (status);                                                                            \
    CHECK(WIFEXITED(st_) && WEXITSTATUS(st_) == 0);                                                \
    if (WIFSIGNALED(st_))                                                                          \
      fprintf(stderr, "  child killed by signal %d\n", WTERMSIG(st_));                             \
    else if (WIFEXITED(st_) && WEXITSTATUS(st_) != 0)                                              \
      fprintf(stderr, "  child exited %d\n", WEXITSTATUS(st_));                                    \
  } while (0)

/* Runs one test function, naming it in failure messages. */
#define RUN(test)                                                                                  \
  do {                                                                                             \
    unit_current = #test;                                                                          \
    unit_tests++;                                                                                  \
    test();                                                                                        \
    unit_current = "(no test)";                                                                    \
  } while (0)

__attribute__((unused)) static int unit_report(void)
{
  if (unit_failures > 0) {
    fprintf(stderr, "%d of %d checks failed (%d tests)\n", unit_failures, unit_checks, unit_tests);
    return 1;
  }
  fprintf(stderr, "all %d checks passed (%d tests)\n", unit_checks, unit_tests);
  return 0;
}

#endif
