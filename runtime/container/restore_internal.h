/* restore's parts (restore.c orchestrates): what the image says, read before CRIU starts
 * (restore_image.c), and the checks of the restored tasks while CRIU holds them stopped
 * (restore_checks.c, through libcriu's notify callback). */
#ifndef SEERUN_RESTORE_INTERNAL_H
#define SEERUN_RESTORE_INTERNAL_H

#include <stdbool.h>
#include <sys/types.h>

#include "container.h"
#include "error.h"

#ifdef HAVE_CRIU
#include <criu.h>

#define MAX_EXT 256

/* What the checks need while CRIU holds the restored tasks stopped. */
struct restore_run {
  struct sr_create_ctx *ctx;
  pid_t pid;      /* the restored init, from "post-restore" */
  dev_t root_dev; /* the root filesystem seerun handed CRIU */
  size_t n_ext;
  const char *ext_key[MAX_EXT]; /* mount points CRIU binds from what seerun gives */
  dev_t ext_dev[MAX_EXT];
  char failed[1024]; /* the first failed check; the restore is aborted */
  bool killed_criu;  /* its mounts in the work directory are left to remove */
};

/* The restore in progress, for the notify callback (libcriu's has no argument of ours): set
 * only around criu_local_restore_child. */
void sr_restore_checks_begin(struct restore_run *run);
void sr_restore_checks_end(void);
/* libcriu's notify callback: the checks at "post-restore" and "pre-resume". */
int sr_restore_checks_notify(char *action, criu_notify_arg_t na);

/* The image's user namespace maps (the decided ones) and every thread's seccomp stack (holding
 * the built-in filter when it is mandatory). */
int sr_restore_image_check(int imgfd, const struct sr_linux *l, bool builtin_seccomp,
                           sr_error_t *err);
#endif

#endif
