/* The policy's namespaces (section 7) and network (section 2): what a container keeps of the
 * host's, joins by path, or gets new -- and whether it may have network beyond loopback. */
#include "build.h"

#include "policy_apply_internal.h"

#include <stdbool.h>
#include <string.h>

/* ---- 7. Namespaces ----------------------------------------------------------------------- */

static const struct sr_policy_ns_fact *ns_fact(const struct sr_policy_facts *f, int k)
{
  static const struct sr_policy_ns_fact unknown; /* not host, not a seerun container */
  return f ? &f->ns[k] : &unknown;
}

static char *text_ns(struct sr_arena *a, const struct sr_namespace *ns)
{
  if (!ns->present)
    return "\"host\"";
  if (ns->path == NULL)
    return "\"new\"";
  return sr_policy_render_text_str(a, ns->path);
}

/* A namespace joined by a path that is not the host's. */
static int join_path(struct sr_pa_ctx *x, int k, const struct sr_namespace *ns,
                     const struct sr_policy_ns_fact *f)
{
  const char *type = sr_config_ns_name(k);
  char *field = P("linux.namespaces.%s", type);
  char *asked = text_ns(x->a, ns);
  if (f->is_seerun_container)
    return sr_policy_apply_allow(x, field, asked,
                                 "joins another seerun container's namespace (a pod)");
  if (x->p->namespaces.allow_join[k])
    return sr_policy_apply_allow(
        x, field, asked, P("joining it is allowed (profiles.%s.namespaces.allowJoin)", x->name));
  return sr_policy_apply_refuse(
      x, field, asked,
      "linux.namespaces.%s: path \"%s\" is no seerun container's namespace; joining "
      "it is not allowed by profile \"%s\" (profiles.%s.namespaces.allowJoin does not "
      "list \"%s\")",
      type, ns->path, x->name, x->name, type);
}

int sr_policy_apply_namespaces(struct sr_pa_ctx *x, const struct sr_policy_facts *facts,
                               struct sr_config *c)
{
  struct sr_namespace *nss = c->linux_.namespaces;
  const char *name = x->name;

  /* user: without one, container root is host root; joining one grants nothing by itself on
   * the host, but its owner could ptrace what runs inside, so only pods and listed paths. */
  struct sr_namespace *user = &nss[SR_NS_USER];
  const struct sr_policy_ns_fact *uf = ns_fact(facts, SR_NS_USER);
  if (!user->present && x->p->namespaces.require_user)
    TRY(sr_policy_apply_refuse(
        x, "linux.namespaces.user", "\"host\"",
        "linux.namespaces.user: a user namespace is required by profile \"%s\" "
        "(profiles.%s.namespaces.requireUser)",
        name, name));
  else if (user->present && user->path) {
    if (uf->is_host)
      TRY(sr_policy_apply_allow(x, "linux.namespaces.user", text_ns(x->a, user),
                                "the host's user namespace (as without one)"));
    else
      TRY(join_path(x, SR_NS_USER, user, uf));
  }

  /* mount: the host's (no entry, or its path) would let the container change the host's
   * mounts and see its whole file hierarchy: no enforcing profile allows it (the permissive
   * one runs it as runtime.md says, with the runtime's mounts and root.path as its root by
   * chroot, which does not confine root, and records the refusal). */
  struct sr_namespace *mnt = &nss[SR_NS_MOUNT];
  const struct sr_policy_ns_fact *mf = ns_fact(facts, SR_NS_MOUNT);
  if (!mnt->present)
    TRY(sr_policy_apply_refuse(
        x, "linux.namespaces.mount", "\"host\"",
        "linux.namespaces.mount: no mount namespace (the container would have the "
        "host's mounts, and only a chroot into root.path), which no enforcing "
        "profile allows"));
  else if (mnt->path) {
    if (mf->is_host)
      TRY(sr_policy_apply_refuse(
          x, "linux.namespaces.mount", text_ns(x->a, mnt),
          "linux.namespaces.mount: path \"%s\" is the host's mount namespace, which no "
          "profile allows",
          mnt->path));
    else
      TRY(join_path(x, SR_NS_MOUNT, mnt, mf));
  }

  /* pid, ipc, uts, cgroup: a host namespace is the absence of an entry, not something the
   * engine set up and would report; replacing it by a new one only takes away (another
   * container's processes, the host's SysV IPC, sethostname on the host, the host's cgroup
   * paths), like --cap-drop, so it is neutralised, unless the profile allows it. */
  static const enum sr_ns_kind hostable[] = {SR_NS_PID, SR_NS_IPC, SR_NS_UTS, SR_NS_CGROUP};
  for (size_t i = 0; i < sizeof(hostable) / sizeof(hostable[0]); i++) {
    int k = hostable[i];
    struct sr_namespace *ns = &nss[k];
    const struct sr_policy_ns_fact *f = ns_fact(facts, k);
    const char *type = sr_config_ns_name(k);
    char *field = P("linux.namespaces.%s", type);
    char *asked = text_ns(x->a, ns);
    bool host = !ns->present || (ns->path && f->is_host);
    if (host && x->p->namespaces.allow_host[k])
      TRY(sr_policy_apply_allow(x, field, asked,
                                P("the host's %s namespace, allowed by profile \"%s\" "
                                  "(profiles.%s.namespaces.allowHost)",
                                  type, name, name)));
    else if (host) {
      int r = sr_policy_apply_change(
          x, field, asked, "\"new\"",
          P("the host's %s namespace is replaced by a new one (profiles.%s.namespaces."
            "allowHost does not list \"%s\")",
            type, name, type));
      TRY(r);
      if (r) {
        ns->present = true;
        ns->path = NULL;
      }
    } else if (ns->path)
      TRY(join_path(x, k, ns, f));
  }

  /* time: the host's is what every container has; a path is judged like the others. */
  struct sr_namespace *tns = &nss[SR_NS_TIME];
  const struct sr_policy_ns_fact *tf = ns_fact(facts, SR_NS_TIME);
  if (tns->present && tns->path && !tf->is_host)
    TRY(join_path(x, SR_NS_TIME, tns, tf));

  const struct sr_policy_ns_fact *ipcf = ns_fact(facts, SR_NS_IPC),
                                 *utsf = ns_fact(facts, SR_NS_UTS);
  x->own_ipc = nss[SR_NS_IPC].present && !(nss[SR_NS_IPC].path && ipcf->is_host);
  x->own_uts = nss[SR_NS_UTS].present && !(nss[SR_NS_UTS].path && utsf->is_host);
  return 0;
}

/* ---- 2. Network -------------------------------------------------------------------------- */

int sr_policy_apply_namespaces_network(struct sr_pa_ctx *x, const struct sr_policy_facts *facts,
                                       struct sr_config *c, const struct requests *rq)
{
  struct sr_namespace *ns = &c->linux_.namespaces[SR_NS_NET];
  const struct sr_policy_ns_fact *f = ns_fact(facts, SR_NS_NET);
  const char *name = x->name, *field = "linux.namespaces.network";
  char *asked = text_ns(x->a, ns);
  bool granted = false, host = false;
  const char *why_not = NULL; /* why a granting profile still leaves loopback only */
  /* Network beyond loopback: the profile must allow it, and with onRequest (the default) the
   * container must also ask for it (annotation io.seerun.network=enabled). */
  bool may = x->p->network.allow && (!x->p->network.on_request || rq->network == NET_ENABLED);
  const char *no_network = !x->p->network.allow
                               ? P("profiles.%s.network.allow is false", name)
                               : P("no annotation %s=enabled (profiles.%s.network.onRequest)",
                                   SR_ANNOTATION_NETWORK, name);

  if (!ns->present) {
    if (x->p->network.allow_host) {
      TRY(sr_policy_apply_allow(
          x, field, asked,
          P("host network, allowed by profile \"%s\" (profiles.%s.network.allowHost)", name,
            name)));
      granted = host = true;
    } else {
      /* Loopback only: a container asking for the host's network gets less, never more. */
      why_not = P("host network is replaced by a new network namespace with loopback only "
                  "(profiles.%s.network.allowHost is false)",
                  name);
      int r = sr_policy_apply_change(x, field, asked, "\"new (loopback only)\"", why_not);
      TRY(r);
      if (r) {
        ns->present = true;
        ns->path = NULL;
      } else
        host = true;
    }
  } else if (ns->path && f->is_host) {
    host = true;
    if (x->p->network.allow_host) {
      TRY(sr_policy_apply_allow(x, field, asked,
                                P("the host's network namespace, allowed by profile \"%s\" "
                                  "(profiles.%s.network.allowHost)",
                                  name, name)));
      granted = true;
    } else
      /* The engine named it: it would report a network the container would not have. */
      TRY(sr_policy_apply_refuse(
          x, field, asked,
          "linux.namespaces.network: path \"%s\" is the host's network namespace, not "
          "allowed by profile \"%s\" (profiles.%s.network.allowHost is false)",
          ns->path, name, name));
  } else if (ns->path && f->is_seerun_container) {
    if (f->container_has_network && !may)
      TRY(sr_policy_apply_refuse(
          x, field, asked,
          "linux.namespaces.network: path \"%s\" joins a seerun container that has "
          "network, not allowed by profile \"%s\" (%s)",
          ns->path, name, no_network));
    else {
      TRY(sr_policy_apply_allow(
          x, field, asked,
          f->container_has_network
              ? "joins another seerun container's network namespace (a pod), which has "
                "network"
              : "joins another seerun container's network namespace (a pod), loopback "
                "only"));
      granted = f->container_has_network;
      if (!granted)
        why_not = "the pod's network namespace has loopback only";
    }
  } else if (ns->path) {
    /* A namespace the engine configured (CNI, netavark, slirp4netns): a request for network,
     * refused rather than hidden, since the engine would report a network that is not there. */
    if (may) {
      TRY(sr_policy_apply_allow(x, field, asked,
                                P("a network namespace the engine configured; network granted "
                                  "(profiles.%s.network.allow)",
                                  name)));
      granted = true;
    } else
      TRY(sr_policy_apply_refuse(
          x, field, asked,
          "linux.namespaces.network: path \"%s\": the engine configured a network, which "
          "profile \"%s\" does not grant (%s)",
          ns->path, name, no_network));
  } else {
    granted = may;
    if (!granted)
      why_not = no_network;
    TRY(sr_policy_apply_allow(
        x, field, asked,
        granted ? P("a new network namespace; network granted (profiles.%s.network.allow)", name)
                : P("a new network namespace with loopback only (%s)", no_network)));
  }

  const char *afield = "annotations." SR_ANNOTATION_NETWORK;
  if (rq->network == NET_ENABLED) {
    if (!x->p->network.allow)
      TRY(sr_policy_apply_refuse(
          x, afield, "\"enabled\"",
          "annotation %s=enabled: not allowed by profile \"%s\" (profiles.%s.network.allow "
          "is false)",
          SR_ANNOTATION_NETWORK, name, name));
    else if (!granted)
      TRY(sr_policy_apply_refuse(
          x, afield, "\"enabled\"",
          "annotation %s=enabled: the container would have loopback only (%s)",
          SR_ANNOTATION_NETWORK, why_not ? why_not : "no network"));
    else
      TRY(sr_policy_apply_allow(x, afield, "\"enabled\"", "network requested and granted"));
  } else if (rq->network == NET_NONE) {
    if (granted && (host || ns->path))
      TRY(sr_policy_apply_refuse(
          x, afield, "\"none\"",
          "annotation %s=none: linux.namespaces.network is a namespace that has network",
          SR_ANNOTATION_NETWORK));
    else {
      granted = false;
      TRY(sr_policy_apply_allow(x, afield, "\"none\"", "loopback only, as asked"));
    }
  }
  x->out->network_granted = x->p->enforce ? granted : true;
  x->own_net = ns->present && !host;
  return 0;
}
