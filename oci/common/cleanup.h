/* Scope-bound release of resources (GCC/clang cleanup attribute), so that every early return
 * on an error path frees, closes and unlocks what the function acquired. */
#ifndef SEERUN_CLEANUP_H
#define SEERUN_CLEANUP_H

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "error.h"

#define _cleanup_(f) __attribute__((cleanup(f)))

static inline void sr_cleanup_freep(void *p)
{
  free(*(void **)p);
}

static inline void sr_cleanup_closep(int *fd)
{
  if (*fd >= 0) {
    int saved = errno;
    close(*fd);
    errno = saved;
  }
}

static inline void sr_cleanup_fclosep(FILE **f)
{
  if (*f)
    fclose(*f);
}

static inline void sr_cleanup_closedirp(DIR **d)
{
  if (*d)
    closedir(*d);
}

static inline void sr_cleanup_error_freep(sr_error_t *e)
{
  sr_error_free(e);
}

static inline void sr_cleanup_strv_freep(char ***v)
{
  if (*v) {
    for (char **p = *v; *p; p++)
      free(*p);
    free(*v);
  }
}

#define _cleanup_free_ _cleanup_(sr_cleanup_freep)
#define _cleanup_close_ _cleanup_(sr_cleanup_closep)
#define _cleanup_fclose_ _cleanup_(sr_cleanup_fclosep)
#define _cleanup_dir_ _cleanup_(sr_cleanup_closedirp)
#define _cleanup_error_ _cleanup_(sr_cleanup_error_freep)
#define _cleanup_strv_ _cleanup_(sr_cleanup_strv_freep)

/* Hands ownership out of a cleanup-managed variable. */
static inline void *sr_cleanup_steal_ptr(void *pp)
{
  void **p = pp;
  void *v = *p;
  *p = NULL;
  return v;
}
#define steal_ptr(p) sr_cleanup_steal_ptr(&(p))

static inline int sr_cleanup_steal_fd(int *fd)
{
  int v = *fd;
  *fd = -1;
  return v;
}
#define steal_fd(fd) sr_cleanup_steal_fd(&(fd))

#endif
