/* The steps of create that restore (checkpoint.h) takes too: a restored container is prepared,
 * recorded and given its cgroup exactly as a new one, only its processes come from an image. */
#ifndef SEERUN_CREATE_STEPS_H
#define SEERUN_CREATE_STEPS_H

#include "container.h"

/* On the host, before anything is recorded: root filesystem (idmapped trees where the policy
 * gives a user namespace), bind sources, device nodes, the cgroup's path. */
int sr_create_prepare(struct sr_create_ctx *ctx, sr_error_t *err);
/* Publishes the state directory, phase "creating" (ctx->container, locked), its record
 * calling the cgroup ours unless one that must be new was there already. */
int sr_create_record_begin(struct sr_create_ctx *ctx, int rootfd, sr_error_t *err);
/* The cgroup (refused if it was there already), recorded before it is made, with the decided resources and device rules. */
int sr_create_setup_cgroup(struct sr_create_ctx *ctx, sr_error_t *err);
/* Kills what was made (ctx->init_pid, ctx->child_pid, the supervisor) and removes it. */
void sr_create_abort(struct sr_create_ctx *ctx);

#endif
