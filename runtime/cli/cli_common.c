#include "build.h"

#include "cli_common.h"

#include "activity.h"

#include "cleanup.h"
#include "policy_run.h"
#include "sealed.h"
#include "userns_registry.h"
#include "log.h"
#include "util.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include "opts.h"
#include <fcntl.h>
#include <limits.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A state.json that disagrees with the container's index (statedir.h): rewritten by someone
 * to point the command at a process or cgroup not the container's; the refusal is audited. */
static void audit_refused_record(const struct sr_global *g, const char *id,
                                 const sr_error_t refusal)
{
  _cleanup_free_ char *text = sr_error_text(refusal);
  if (text == NULL || strstr(text, SR_RECORD_NOT_OURS) == NULL)
    return;
  struct sr_policy_ctx pc;
  sr_error_t e = NULL;
  if (sr_policy_load(g, &pc, &e) == 0) {
    pc.audit.id = id;
    sr_audit_refusal(&pc.audit, "state.json", "\"the container's record\"", text, &e);
    sr_policy_ctx_release(&pc);
  }
  if (e) {
    _cleanup_free_ char *t = sr_error_text(e);
    sr_warn("audit the refused state.json: %s", t ? t : "");
    sr_error_free(&e);
  }
}

int sr_cli_open_container(const struct sr_global *g, const char *id, bool lock,
                          struct sr_container **out, sr_error_t *err)
{
  int rootfd = open(g->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (rootfd < 0) {
    if (errno == ENOENT) {
      if (sr_validate_id(id, err) < 0)
        return -1;
      return sr_error_make(err, ENOENT, "container \"%s\" does not exist", id);
    }
    return sr_error_sys(err, "open state directory `%s`", g->root);
  }
  if (sr_container_load(rootfd, id, lock, out, err) < 0) {
    close(rootfd);
    audit_refused_record(g, id, *err);
    return -1;
  }
  return 0;
}

void sr_cli_close_container(struct sr_container *c)
{
  int rootfd = c->rootfd;
  sr_container_free(c);
  if (rootfd >= 0)
    close(rootfd);
}

void sr_cli_rootfs_path(const struct sr_config *c, const char *bundle, char *buf, size_t size)
{
  if (c->root_path[0] == '/')
    snprintf(buf, size, "%s", c->root_path);
  else
    snprintf(buf, size, "%s/%s", bundle, c->root_path);
}

int sr_cli_load_bundle(const char *bundle_arg, char **bundle, struct sr_create_ctx *ctx,
                       sr_error_t *err)
{
  char abs[PATH_MAX];
  if (realpath(bundle_arg && bundle_arg[0] ? bundle_arg : ".", abs) == NULL)
    return sr_error_sys(err, "bundle `%s`", bundle_arg ? bundle_arg : ".");
  *bundle = strdup(abs);
  if (*bundle == NULL)
    return sr_error_make(err, ENOMEM, "bundle");
  _cleanup_close_ int dirfd = open(abs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dirfd < 0)
    return sr_error_sys(err, "bundle `%s`", abs);
  if (sr_read_file_at(dirfd, "config.json", SR_MAX_CONFIG_SIZE, &ctx->config_text,
                      &ctx->config_len, err) < 0)
    return sr_error_wrap(err, "bundle `%s`", abs);
  if (sr_config_parse(ctx->config_text, ctx->config_len, "config.json", &ctx->config, err) < 0)
    return -1;
  /* The spec makes process optional (a config can describe a container to be joined), but
   * create, run and policy check judge and start one: without it there is nothing to run, and
   * every step after this one may rely on it (a config without it crashed create). */
  if (ctx->config->process == NULL)
    return sr_error_config(err, NULL, "process",
                           "config.json: process: required for create (the container's "
                           "process is what create prepares and start runs)");
  return 0;
}

static void audit_refused_config(const struct sr_global *g, const char *id, const char *bundle,
                                 const sr_error_t refusal)
{
  if (sr_error_kind(refusal) != SR_ERR_CONFIG)
    return; /* no config.json to judge: a missing or unreadable bundle, a failed call */
  /* The field as the parser named it where it refused it ("linux.sysctl.kernel.core_pattern",
   * as the policy names it); the document as a whole when it is no valid JSON. */
  const char *field = refusal->field ? refusal->field : "config.json";
  _cleanup_free_ char *text = sr_error_text(refusal);
  struct sr_policy_ctx pc;
  sr_error_t e = NULL;
  if (sr_policy_load(g, &pc, &e) == 0) {
    pc.audit.id = id;
    pc.audit.bundle = bundle;
    sr_audit_refusal(&pc.audit, field, "\"config.json\"", text ? text : "config.json: refused", &e);
    sr_policy_ctx_release(&pc);
  }
  if (e) {
    _cleanup_free_ char *t = sr_error_text(e);
    sr_warn("audit the refused config.json: %s", t ? t : "");
    sr_error_free(&e);
  }
}

int sr_cli_load_bundle_audited(const struct sr_global *g, const char *id, const char *bundle_arg,
                               char **bundle, struct sr_create_ctx *ctx, sr_error_t *err)
{
  if (sr_cli_load_bundle(bundle_arg, bundle, ctx, err) == 0)
    return 0;
  audit_refused_config(g, id, *bundle, *err);
  return -1;
}

int sr_cli_parse_flag(const char *cmd, const char *usage, int argc, char **argv, const char *flag,
                      bool *set)
{
  struct option longopts[] = {
      {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}, {NULL, 0, NULL, 0}};
  char shortopts[3] = "h";
  if (flag) {
    longopts[1] = (struct option){flag, no_argument, NULL, flag[0]};
    shortopts[1] = flag[0];
  }
  sr_opts_normalize(argc, argv, longopts, false);
  optind = 0; /* a full restart of getopt: see opts.h */
  opterr = 0;
  int c;
  while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
    if (c == 'h') {
      printf("Usage: seerun %s %s\n", cmd, usage);
      return 2;
    }
    if (flag == NULL || c != flag[0])
      return sr_cli_unknown_option(cmd, usage, argv);
    *set = true;
  }
  return 0;
}

int sr_cli_parse_id_only(const char *cmd, int argc, char **argv, const char **id)
{
  int r = sr_cli_parse_flag(cmd, "<container-id>", argc, argv, NULL, NULL);
  if (r)
    return r;
  if (optind != argc - 1)
    return sr_cli_usage_error(cmd, "<container-id>", "exactly one container id is required");
  *id = argv[optind];
  return 0;
}

#define CREATE_USAGE "[command options] <container-id>"

int sr_parse_create_options(const char *cmd, int argc, char **argv, const struct option *opts,
                            const char *shortopts, struct sr_create_opts *o, const char **bundle,
                            int (*extra)(int c, void *data), void *data)
{
  sr_opts_normalize(argc, argv, opts, false);
  optind = 0; /* a full restart of getopt: see opts.h */
  opterr = 0;
  int c;
  while ((c = getopt_long(argc, argv, shortopts, opts, NULL)) != -1) {
    switch (c) {
    case 'b':
      *bundle = optarg;
      break;
    case 'p':
      o->pid_file = optarg;
      break;
    case 'c':
      o->console_socket = optarg;
      break;
    case 'P':
      o->no_pivot = true;
      break;
    case 'k':
      o->no_new_keyring = true;
      break;
    case 'f':
      if (!sr_opts_int(optarg, 4096, &o->preserve_fds))
        return sr_cli_usage_error(cmd, CREATE_USAGE, "--preserve-fds: \"%s\" is not a number",
                                  optarg);
      break;
    case 'h':
      printf("Usage: seerun %s %s\n", cmd, CREATE_USAGE);
      return 2;
    default:
      if (extra && extra(c, data) == 0)
        break;
      return sr_cli_unknown_option(cmd, CREATE_USAGE, argv);
    }
  }
  if (optind != argc - 1)
    return sr_cli_usage_error(cmd, CREATE_USAGE, "exactly one container id is required");
  o->id = argv[optind];
  return 0;
}

int sr_cli_prepare_create(const struct sr_global *g, struct sr_create_ctx *ctx,
                          struct sr_policy_ctx *pc, struct sr_decisions *decided,
                          sr_error_t *err)
{
  struct sr_config *c = ctx->config;
  char rootfs[PATH_MAX];
  sr_cli_rootfs_path(c, ctx->o->bundle, rootfs, sizeof(rootfs));
  if (pc->policy == NULL && sr_policy_load(g, pc, err) < 0)
    return -1;
  pc->audit.id = ctx->o->id;
  pc->audit.bundle = ctx->o->bundle;
  /* The state root exists before anything is keyed by its real path. */
  int rootfd = -1;
  if (sr_statedir_open_root(g->root, true, &rootfd, err) < 0)
    return -1;
  struct sr_facts_input in = {.bundle = ctx->o->bundle, .rootfs = rootfs, .state_rootfd = rootfd,
                              .state_root = g->root, .id = ctx->o->id, .keep = &ctx->host};
  struct sr_decisions local = {0};
  struct sr_decisions *d = decided ? decided : &local;
  int r = sr_policy_enforce_create(pc, c, &in, d, err);
  if (rootfd >= 0)
    close(rootfd);
  if (r < 0)
    return -1;
  ctx->profile = pc->profile->name;
  ctx->hook_profile = pc->profile;
  ctx->cgroup_must_be_new = pc->profile->enforce;
  ctx->audit = &pc->audit;
  ctx->network_granted = sr_policy_network_granted(d);
  ctx->builtin_seccomp = sr_policy_builtin_seccomp(pc->profile);
  ctx->egress_proxy = d->egress_proxy;
  ctx->activity = sr_policy_activity_record(pc->profile);
  if (c->linux_.seccomp && c->linux_.seccomp->uses_notify)
    ctx->activity_unseen = "linux.seccomp.listenerPath: the config's agent holds the filter "
                           "stack's one listener, so the built-in filter's denials are not seen";
  ctx->egress = &pc->profile->network.egress;
  ctx->egress_narrow = d->egress_narrow;
  ctx->n_egress_narrow = d->n_egress_narrow;
  ctx->landlock.abi = d->landlock_abi;
  ctx->rootfs_no_idmap = !d->rootfs_idmap;
  ctx->landlock.scope_abstract_unix = d->landlock_scope_abstract_unix;
  if (sr_audit_event(&pc->audit, ctx->o->audit_event ? ctx->o->audit_event : "create", NULL,
                     err) < 0)
    return -1;
  return sr_seal_if_needed(c, g->argv, err);
}

int sr_cli_audit(const struct sr_global *g, const struct sr_container *c, const char *event,
                 const char *const *fields, sr_error_t *err)
{
  struct sr_policy_ctx pc;
  if (sr_policy_load(g, &pc, err) < 0)
    return -1;
  /* The event is recorded under the profile of the create, even if the policy has changed. */
  pc.audit.id = c->id;
  pc.audit.bundle = c->rec->bundle;
  if (c->rec->profile)
    pc.audit.profile = c->rec->profile;
  int r = sr_audit_event(&pc.audit, event, fields, err);
  sr_policy_ctx_release(&pc);
  return r;
}

void sr_cli_activity_settle(const struct sr_global *g, const struct sr_container *c)
{
  /* A live supervisor writes its own record when the init has gone; one that is gone (killed)
   * left only its last flush, which goes to the audit log as an incomplete record. */
  if (!c->rec->supervisor_activity || c->dirfd < 0 ||
      sr_proc_is(c->rec->supervisor_pid, c->rec->supervisor_start))
    return;
  struct sr_policy_ctx pc;
  sr_error_t err = NULL;
  if (sr_policy_load(g, &pc, &err) == 0) {
    pc.audit.id = c->id;
    pc.audit.bundle = c->rec->bundle;
    if (c->rec->profile)
      pc.audit.profile = c->rec->profile;
    sr_activity_settle(&pc.audit, c->dirfd, &err);
    sr_policy_ctx_release(&pc);
  }
  if (err) {
    _cleanup_free_ char *t = sr_error_text(err);
    sr_warn("delete: the activity record: %s", t ? t : "");
    sr_error_free(&err);
  }
}

bool sr_cli_container_exists(const struct sr_global *g, const char *id)
{
  sr_error_t err = NULL;
  struct sr_container *ct = NULL;
  if (sr_cli_open_container(g, id, false, &ct, &err) == 0) {
    sr_cli_close_container(ct);
    return true;
  }
  bool gone = err != NULL && err->status == ENOENT;
  sr_error_free(&err);
  return !gone; /* when in doubt, it exists: its range must not be released */
}

void sr_cli_create_failed(const struct sr_global *g, const char *id)
{
  if (!sr_cli_container_exists(g, id))
    sr_cli_release_userns(g, id);
}

void sr_cli_hook_gate(const struct sr_global *g, const struct sr_container *c,
                      struct sr_policy_ctx *pc, struct sr_policy_ctx *prev,
                      struct sr_hook_gate *gate)
{
  sr_error_t err = NULL;
  *gate = (struct sr_hook_gate){.rejudge = true,
                                .places = {c->rec->bundle, c->rec->rootfs, g->root}};
  if (sr_policy_load_for(g, c, pc, prev, &err) < 0) {
    _cleanup_free_ char *t = sr_error_text(err);
    sr_warn("container \"%s\": no hook will run: %s", c->id, t ? t : "");
    sr_error_free(&err);
    return;
  }
  gate->profile = pc->profile;
  gate->audit = &pc->audit;
  /* The profile is named by the container's state.json, which is read back from disk: the
   * profile this invocation's bindings select must allow each hook as well. */
  const char *argv0 = g->argv && g->argv[0] ? g->argv[0] : "seerun";
  const char *base = strrchr(argv0, '/') ? strrchr(argv0, '/') + 1 : argv0;
  char root[PATH_MAX];
  const char *root_dir = realpath(g->root, root) ? root : g->root;
  if (sr_policy_select(pc->policy, g->profile, base, root_dir, &gate->also, &err) < 0) {
    _cleanup_free_ char *t = sr_error_text(err);
    sr_warn("container \"%s\": no hook will run: %s", c->id, t ? t : "");
    sr_error_free(&err);
    gate->profile = NULL;
  }
}

void sr_cli_release_userns_with(const struct sr_global *g, const struct sr_policy *policy,
                                const char *id)
{
  struct sr_policy_ctx pc = {0};
  sr_error_t err = NULL;
  _cleanup_free_ char *key = sr_userns_key(g->root, id);
  if (key == NULL || (policy == NULL && sr_policy_load(g, &pc, &err) < 0)) {
    sr_error_free(&err);
    return;
  }
  if (sr_userns_release(&(policy ? policy : pc.policy)->userns, key, &err) < 0) {
    _cleanup_free_ char *t = sr_error_text(err);
    sr_warn("release the user namespace range of \"%s\": %s", id, t ? t : "");
    sr_error_free(&err);
  }
  sr_policy_ctx_release(&pc);
}

void sr_cli_release_userns(const struct sr_global *g, const char *id)
{
  sr_cli_release_userns_with(g, NULL, id);
}

int sr_cli_exit_status(int status, int otherwise)
{
  if (WIFEXITED(status))
    return WEXITSTATUS(status);
  if (WIFSIGNALED(status))
    return 128 + WTERMSIG(status);
  return otherwise;
}

int sr_cli_console_pair(bool detach, int *ours, int *theirs, sr_error_t *err)
{
  if (detach)
    return sr_error_make(err, 0, "cannot allocate a terminal for a detached process without "
                                 "--console-socket");
  int sp[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0)
    return sr_error_sys(err, "socketpair");
  *ours = sp[0];
  *theirs = sp[1];
  return 0;
}
