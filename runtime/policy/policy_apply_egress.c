/* The policy's egress through seerun's proxy (section 2b): whether a container gets the proxy
 * (annotation io.seerun.network=proxy, or network.mode "proxy"), what it may reach (the
 * profile's network.egress, narrowed by io.seerun.egress.allow), and the environment that
 * points its clients at 127.0.0.1:3128. */
#include "build.h"

#include "policy_apply_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#define PROXY_URL "http://127.0.0.1:3128"

int sr_policy_apply_egress_parse_allow(struct sr_pa_ctx *x, const char *value, struct requests *rq)
{
  const char *field = "annotations." SR_ANNOTATION_EGRESS_ALLOW;
  char *asked = sr_policy_render_text_str(x->a, value);
  size_t n = 1;
  for (const char *c = value; *c; c++)
    n += *c == ',';
  rq->egress_allow = sr_arena_array(x->a, n, sizeof(*rq->egress_allow));
  if (rq->egress_allow == NULL)
    return sr_policy_apply_oom(x);
  rq->n_egress_allow = 0;
  for (const char *s = value;;) {
    const char *e = strchrnul(s, ',');
    char *item = sr_arena_strndup(x->a, s, (size_t)(e - s));
    if (item == NULL)
      return sr_policy_apply_oom(x);
    sr_error_t perr = NULL;
    if (sr_policy_egress_host_parse(x->a, item, field, &rq->egress_allow[rq->n_egress_allow],
                                    &perr) < 0) {
      char *text = sr_error_text(perr);
      sr_error_free(&perr);
      int r = sr_policy_apply_refuse(x, field, asked, "%s", text ? text : field);
      free(text);
      return r;
    }
    rq->n_egress_allow++;
    if (*e == '\0')
      break;
    s = e + 1;
  }
  rq->has_egress_allow = true;
  return 0;
}

/* Replaces or adds NAME=VALUE in the process's environment; -1: out of memory. */
static int set_env(struct sr_arena *a, struct sr_process *p, const char *name, const char *value)
{
  size_t nl = strlen(name);
  char *entry = sr_arena_printf(a, "%s=%s", name, value);
  if (entry == NULL)
    return -1;
  for (size_t i = 0; i < p->n_env; i++)
    if (strncmp(p->env[i], name, nl) == 0 && p->env[i][nl] == '=') {
      p->env[i] = entry;
      return 0;
    }
  /* NULL-terminated, as execve takes it. */
  char **env = sr_arena_array(a, p->n_env + 2, sizeof(*env));
  if (env == NULL)
    return -1;
  if (p->n_env)
    memcpy(env, p->env, p->n_env * sizeof(*env));
  env[p->n_env++] = entry;
  p->env = env;
  return 0;
}

int sr_policy_apply_egress_proxy_env(struct sr_arena *a, struct sr_process *p, sr_error_t *err)
{
  /* Every client that honours the variables goes to the proxy; loopback stays direct. */
  static const char *const names[] = {"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY",
                                      "http_proxy", "https_proxy", "all_proxy"};
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
    if (set_env(a, p, names[i], PROXY_URL) < 0)
      return sr_error_make(err, ENOMEM, "process.env");
  if (set_env(a, p, "NO_PROXY", "localhost,127.0.0.1") < 0 ||
      set_env(a, p, "no_proxy", "localhost,127.0.0.1") < 0)
    return sr_error_make(err, ENOMEM, "process.env");
  return 0;
}

int sr_policy_apply_egress(struct sr_pa_ctx *x, struct sr_config *c, const struct requests *rq)
{
  const char *name = x->name, *field = "annotations." SR_ANNOTATION_NETWORK;
  bool asked = rq->network == NET_PROXY;
  bool want = asked || (rq->network == NET_UNSET && x->p->network.mode_proxy);
  if (!want) {
    if (rq->has_egress_allow)
      TRY(sr_policy_apply_refuse(
          x, "annotations." SR_ANNOTATION_EGRESS_ALLOW, sr_policy_render_text_str(x->a, "(hosts)"),
          "annotation %s: only with egress through seerun's proxy (annotation "
          "%s=proxy, or profiles.%s.network.mode \"proxy\")",
          SR_ANNOTATION_EGRESS_ALLOW, SR_ANNOTATION_NETWORK, name));
    return 0;
  }
  if (asked && !x->p->network.proxy && !x->p->network.mode_proxy)
    return sr_policy_apply_refuse(
        x, field, "\"proxy\"",
        "annotation %s=proxy: not allowed by profile \"%s\" (profiles.%s.network."
        "proxy is false)",
        SR_ANNOTATION_NETWORK, name, name);
  const struct sr_namespace *net = &c->linux_.namespaces[SR_NS_NET];
  if (!net->present || net->path) {
    /* The proxy's listener goes into a namespace seerun creates; a joined or the host's one
     * would keep its own network (or share the proxy with containers that did not ask). */
    if (asked)
      return sr_policy_apply_refuse(x, field, "\"proxy\"",
                                    "annotation %s=proxy: needs a new network namespace "
                                    "(linux.namespaces.network without a path)",
                                    SR_ANNOTATION_NETWORK);
    return sr_policy_apply_allow(x, "network.egress", "\"proxy\"",
                                 P("no proxy: the container joins a network namespace "
                                   "(profiles.%s.network.mode \"proxy\" applies to new ones)",
                                   name));
  }
  int r = sr_policy_apply_change(
      x, "network.egress", asked ? "\"proxy\"" : "null", "\"proxy\"",
      P("egress through seerun's proxy at 127.0.0.1:3128 (profiles.%s.network.%s), to what "
        "profiles.%s.network.egress.allow%s allows; nothing else leaves the container",
        name, asked ? "proxy" : "mode", name,
        rq->has_egress_allow ? " and annotation " SR_ANNOTATION_EGRESS_ALLOW : ""));
  TRY(r);
  if (r == 0)
    return 0; /* permissive: recorded as what would have been done */
  /* Loopback and the proxy only: a network the engine's hooks would configure is not kept. */
  x->out->network_granted = false;
  x->out->egress_proxy = true;
  x->out->egress_narrow = rq->has_egress_allow ? rq->egress_allow : NULL;
  x->out->n_egress_narrow = rq->has_egress_allow ? rq->n_egress_allow : 0;
  if (c->process) {
    TRY(sr_policy_apply_egress_proxy_env(x->a, c->process, x->err));
    TRY(sr_policy_apply_allow(x, "process.env", "(proxy variables)",
                              "HTTP_PROXY, HTTPS_PROXY, ALL_PROXY (and lower case) are " PROXY_URL
                              ", NO_PROXY localhost,127.0.0.1"));
  }
  return 0;
}

