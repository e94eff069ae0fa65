/* The one lexical path cleaner, with one meaning wherever seerun compares or builds paths as
 * text (the policy's judgement of config.json, the cgroup path, the runtime's own paths). */
#ifndef SEERUN_PATH_H
#define SEERUN_PATH_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"

/* A path is taken from "/" (a relative one as if it began with "/"): empty and "." components
 * are dropped, ".." removes the component before it and never climbs above "/" ("/a/../.."
 * is "/"); the result is absolute, with no trailing "/" ("/" when nothing is left).  Text
 * only, no file system: symbolic links are not followed, so the result is for comparing what
 * a document names; the runtime opens the real object in the root (RESOLVE_IN_ROOT).
 * out holds at least strlen(in) + 2 bytes and may be in itself when in begins with "/" (the
 * result is never longer then).  Returns the number of ".." components met, for a caller that
 * refuses them (a cgroup path must stay below its hierarchy, whatever it spells). */
size_t sr_path_clean(const char *in, char *out);

/* Whether p is absolute and clean in that sense: sr_path_clean(p) would return p itself (no
 * empty, "." or ".." component, no trailing "/" but for "/" itself). */
bool sr_path_is_clean(const char *p);

/* dir and name joined by one "/" (none added when dir ends with one or name begins with one)
 * into buf, or an error (ENAMETOOLONG) naming what was to be joined: never a truncated path,
 * which would name another file (a parent directory of the one meant). */
int sr_path_join(char *buf, size_t size, const char *dir, const char *name, sr_error_t *err);

#endif
