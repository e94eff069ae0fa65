#include "build.h"

#include "signals.h"

#include "number.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const struct {
  const char *name;
  int sig;
} signals[] = {
    {"HUP", SIGHUP},     {"INT", SIGINT},       {"QUIT", SIGQUIT},     {"ILL", SIGILL},
    {"TRAP", SIGTRAP},   {"ABRT", SIGABRT},     {"IOT", SIGIOT},       {"BUS", SIGBUS},
    {"FPE", SIGFPE},     {"KILL", SIGKILL},     {"USR1", SIGUSR1},     {"SEGV", SIGSEGV},
    {"USR2", SIGUSR2},   {"PIPE", SIGPIPE},     {"ALRM", SIGALRM},     {"TERM", SIGTERM},
    {"STKFLT", SIGSTKFLT}, {"CHLD", SIGCHLD},   {"CONT", SIGCONT},     {"STOP", SIGSTOP},
    {"TSTP", SIGTSTP},   {"TTIN", SIGTTIN},     {"TTOU", SIGTTOU},     {"URG", SIGURG},
    {"XCPU", SIGXCPU},   {"XFSZ", SIGXFSZ},     {"VTALRM", SIGVTALRM}, {"PROF", SIGPROF},
    {"WINCH", SIGWINCH}, {"IO", SIGIO},         {"POLL", SIGPOLL},     {"PWR", SIGPWR},
    {"SYS", SIGSYS},
};

int sr_signals_parse(const char *s)
{
  unsigned long long n;
  if (sr_number_parse_uint(s, SIGRTMAX, &n))
    return n == 0 ? -1 : (int)n;
  if (strncasecmp(s, "SIG", 3) == 0)
    s += 3;
  for (size_t i = 0; i < sizeof(signals) / sizeof(signals[0]); i++)
    if (strcasecmp(signals[i].name, s) == 0)
      return signals[i].sig;
  if (strncasecmp(s, "RTMIN", 5) == 0 || strncasecmp(s, "RTMAX", 5) == 0) {
    bool max = strncasecmp(s, "RTMAX", 5) == 0;
    const char *rest = s + 5;
    if (*rest == '\0')
      return max ? SIGRTMAX : SIGRTMIN;
    if ((*rest == '+' && !max) || (*rest == '-' && max)) {
      if (!sr_number_parse_uint(rest + 1, SIGRTMAX - SIGRTMIN, &n))
        return -1;
      int sig = max ? SIGRTMAX - (int)n : SIGRTMIN + (int)n;
      return (sig >= SIGRTMIN && sig <= SIGRTMAX) ? sig : -1;
    }
  }
  return -1;
}
