/* checkpoint and restore with CRIU (libcriu, which starts the criu binary).
 *
 * checkpoint dumps a running container's process tree into an image directory with what runc
 * writes beside CRIU's images (descriptors.json: the init's stdio), then, unless
 * --leave-running, deletes the container like `delete --force`.
 *
 * restore is a create whose processes come from the image: the bundle's config goes through
 * the policy like a new container's (same profile, the id's own user namespace range, mounts,
 * devices, cgroup and limits as decided), and the image, untrusted input, only supplies the
 * processes.  CRIU is given nothing but what the policy decided: the root filesystem (the
 * idmapped tree seerun prepared), the bind sources and device nodes it opened, /dev/null for
 * masked files; an image asking for any other host mount fails.  While the restored tasks are
 * still stopped, seerun checks them (criu_notify "post-restore" and "pre-resume"): the user
 * namespace maps are the decided ones, every namespace is a new one, no mount other than the
 * decided ones or the kernel's virtual filesystems, the root put back read-only (CRIU 4.1.1
 * restores it read-write, its issue 2632), masked and read-only paths in place, and in every
 * task: ids inside the range, capabilities within the decided set, no_new_privs, a seccomp
 * filter, the container's cgroup.  Any failure kills the restored tasks before they run again
 * and removes everything.  A Landlock domain cannot be carried across a restore: the restored
 * processes run without it, an audited decision the profile's restoreWithoutLandlock allows
 * (default) or refuses. */
#ifndef SEERUN_CHECKPOINT_H
#define SEERUN_CHECKPOINT_H

#include <stdbool.h>

#include "container.h"
#include "error.h"
#include "statedir.h"

struct sr_criu_opts {
  const char *binary;     /* the criu binary (global --criu), NULL: the one configure found */
  const char *image_path; /* default "checkpoint" (runc's) */
  const char *work_path;  /* default: the image directory */
  const char *manage_cgroups_mode; /* soft (default), full, strict, ignore */
  const char *empty_ns;
  bool leave_running, tcp_established, ext_unix_sk, shell_job, file_locks;
  bool pre_dump, auto_dedup, lazy_pages;
  /* restore */
  bool detach, no_subreaper;
};

/* Whether checkpoint/restore can work here: built with libcriu, and the criu binary starts and
 * is 4.0 or newer. */
bool sr_criu_usable(const char *binary);
/* The criu binary to start: o->binary or the one configure found; an error naming it when it
 * is not there (or seerun was built without libcriu). */
int sr_criu_binary(const struct sr_criu_opts *o, const char **out, sr_error_t *err);

/* checkpoint ID: c is loaded and locked; config is the one it was created from. */
int sr_checkpoint(struct sr_container *c, const struct sr_config *config,
                  const struct sr_criu_opts *o, sr_error_t *err);

/* restore ID: ctx is a create context the policy has been applied to (as create's).  On
 * success the container is running; *status is the init's exit status when not detached. */
int sr_restore(struct sr_create_ctx *ctx, const struct sr_criu_opts *o, int *status,
               sr_error_t *err);

#endif
