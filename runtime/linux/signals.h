/* Signal names as kill(1) and runc take them: "TERM", "SIGTERM", "15", "RTMIN+3". */
#ifndef SEERUN_SIGNALS_H
#define SEERUN_SIGNALS_H

int sr_signals_parse(const char *s);

#endif
