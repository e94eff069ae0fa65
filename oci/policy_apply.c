#include "build.h"

#include "policy_apply.h"

#include "json.h"
#include "mount_options.h"
#include "names.h"

#include <errno.h>
#include <inttypes.h>
#include <linux/mount.h>
#include <seccomp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>

#define CAP_BIT(c) (UINT64_C(1) << (c))

/* ---- Texts: the short JSON of asked and applied values ---------------------------------- */

struct sb {
  char *buf;
  size_t len, cap;
  bool oom;
};

static void sb_addn(struct sb *b, const char *s, size_t n)
{
  if (b->oom)
    return;
  if (b->len + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->len + n + 1)
      cap *= 2;
    char *nb = realloc(b->buf, cap);
    if (nb == NULL) {
      b->oom = true;
      return;
    }
    b->buf = nb;
    b->cap = cap;
  }
  memcpy(b->buf + b->len, s, n);
  b->len += n;
  b->buf[b->len] = '\0';
}

static void sb_add(struct sb *b, const char *s)
{
  sb_addn(b, s, strlen(s));
}

__attribute__((format(printf, 2, 3))) static void sb_addf(struct sb *b, const char *fmt, ...)
{
  char tmp[256];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
  va_end(ap);
  if (n < 0 || (size_t)n >= sizeof(tmp)) {
    b->oom = true; /* only short numbers and names go through here */
    return;
  }
  sb_addn(b, tmp, (size_t)n);
}

static void sb_json_str(struct sb *b, const char *s)
{
  sb_add(b, "\"");
  for (; *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\') {
      char esc[2] = {'\\', (char)ch};
      sb_addn(b, esc, 2);
    } else if (ch < 0x20)
      sb_addf(b, "\\u%04x", ch);
    else
      sb_addn(b, s, 1);
  }
  sb_add(b, "\"");
}

/* The text in the arena; NULL when out of memory. */
static char *sb_finish(struct sb *b, struct sr_arena *a)
{
  char *s = b->oom ? NULL : sr_arena_strdup(a, b->buf ? b->buf : "");
  free(b->buf);
  memset(b, 0, sizeof(*b));
  return s;
}

static char *text_str(struct sr_arena *a, const char *s)
{
  if (s == NULL)
    return "null";
  struct sb b = {0};
  sb_json_str(&b, s);
  return sb_finish(&b, a);
}

static char *text_strv(struct sr_arena *a, char **v, size_t n)
{
  struct sb b = {0};
  sb_add(&b, "[");
  for (size_t i = 0; i < n; i++) {
    if (i)
      sb_add(&b, ",");
    sb_json_str(&b, v[i]);
  }
  sb_add(&b, "]");
  return sb_finish(&b, a);
}

static void sb_caps(struct sb *b, uint64_t caps)
{
  bool first = true;
  for (int c = 0; c < 64; c++)
    if (caps & CAP_BIT(c)) {
      const char *name = sr_name_of(SR_NAMES(sr_capability_names), c);
      if (!first)
        sb_add(b, ",");
      first = false;
      if (name)
        sb_json_str(b, name);
      else
        sb_addf(b, "\"%d\"", c);
    }
}

static char *text_caps(struct sr_arena *a, uint64_t caps)
{
  struct sb b = {0};
  sb_add(&b, "[");
  sb_caps(&b, caps);
  sb_add(&b, "]");
  return sb_finish(&b, a);
}

/* Capability names without JSON quoting, for reasons: "CAP_SYS_ADMIN, CAP_NET_RAW". */
static char *names_caps(struct sr_arena *a, uint64_t caps)
{
  struct sb b = {0};
  bool first = true;
  for (int c = 0; c < 64; c++)
    if (caps & CAP_BIT(c)) {
      const char *name = sr_name_of(SR_NAMES(sr_capability_names), c);
      if (!first)
        sb_add(&b, ", ");
      first = false;
      if (name)
        sb_add(&b, name);
      else
        sb_addf(&b, "%d", c);
    }
  return sb_finish(&b, a);
}

static void sb_rule(struct sb *b, const struct sr_device_rule *r)
{
  char maj[24] = "*", min[24] = "*";
  if (r->major >= 0)
    snprintf(maj, sizeof(maj), "%" PRId64, r->major);
  if (r->minor >= 0)
    snprintf(min, sizeof(min), "%" PRId64, r->minor);
  sb_addf(b, "\"%s %c %s:%s %s\"", r->allow ? "allow" : "deny", r->type, maj, min, r->access);
}

static char *text_rules(struct sr_arena *a, const struct sr_device_rule *r, size_t n)
{
  struct sb b = {0};
  sb_add(&b, "[");
  for (size_t i = 0; i < n; i++) {
    if (i)
      sb_add(&b, ",");
    sb_rule(&b, &r[i]);
  }
  sb_add(&b, "]");
  return sb_finish(&b, a);
}

static char *text_mount(struct sr_arena *a, const struct sr_mount *m)
{
  struct sb b = {0};
  sb_add(&b, "{\"destination\":");
  sb_json_str(&b, m->destination);
  sb_add(&b, ",\"type\":");
  sb_json_str(&b, m->type ? m->type : "");
  sb_add(&b, ",\"source\":");
  sb_json_str(&b, m->source ? m->source : "");
  sb_add(&b, ",\"options\":[");
  for (size_t i = 0; i < m->n_options; i++) {
    if (i)
      sb_add(&b, ",");
    sb_json_str(&b, m->options[i]);
  }
  sb_add(&b, "]}");
  return sb_finish(&b, a);
}

static char *text_i64(struct sr_arena *a, bool set, int64_t v)
{
  return set ? sr_arena_printf(a, "%" PRId64, v) : "null";
}

/* ---- Paths ------------------------------------------------------------------------------- */

/* A lexically clean absolute path ("/a//b/./c/../d/" -> "/a/b/d"); ".." stops at "/".  Only
 * for comparing what config.json names; the runtime resolves the real thing in the rootfs. */
static char *clean_path(struct sr_arena *a, const char *p)
{
  size_t len = strlen(p);
  char *out = sr_arena_alloc(a, len + 2);
  if (out == NULL)
    return NULL;
  size_t o = 0;
  const char *s = p;
  while (*s) {
    while (*s == '/')
      s++;
    const char *e = s;
    while (*e && *e != '/')
      e++;
    size_t n = (size_t)(e - s);
    if (n == 0 || (n == 1 && s[0] == '.')) {
      /* nothing */
    } else if (n == 2 && s[0] == '.' && s[1] == '.') {
      while (o > 0 && out[o - 1] != '/')
        o--;
      if (o > 0)
        o--;
    } else {
      out[o++] = '/';
      memcpy(out + o, s, n);
      o += n;
    }
    s = e;
  }
  if (o == 0)
    out[o++] = '/';
  out[o] = '\0';
  return out;
}

/* path is dir or below it (both clean). */
static bool path_under(const char *path, const char *dir)
{
  size_t n = strlen(dir);
  if (strcmp(dir, "/") == 0)
    return true;
  return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* Paths through which a process reaches descriptors or other processes' roots: a working
 * directory or bind source there can be a host directory (CVE-2024-21626: runc started a
 * container in a leaked /proc/self/fd/N). */
static bool through_proc(const char *clean)
{
  return path_under(clean, "/proc") || path_under(clean, "/dev/fd") ||
         strcmp(clean, "/dev/stdin") == 0 || strcmp(clean, "/dev/stdout") == 0 ||
         strcmp(clean, "/dev/stderr") == 0;
}

static bool has_dotdot(const char *p)
{
  for (const char *s = p; (s = strstr(s, "..")) != NULL; s += 2)
    if ((s == p || s[-1] == '/') && (s[2] == '\0' || s[2] == '/'))
      return true;
  return false;
}

/* ---- Recording decisions ----------------------------------------------------------------- */

struct ctx {
  const struct sr_policy_profile *p;
  struct sr_arena *a;
  struct sr_decisions *out;
  sr_error_t *err;
  const char *name; /* the profile's */
  /* What the container ends up with, for the checks that depend on it. */
  bool own_net, own_ipc, own_uts;
};

static int oom(struct ctx *x)
{
  return sr_error_make(x->err, ENOMEM, "policy: record a decision");
}

/* NULL texts are allocations that failed (absent values are written "null"). */
static int record(struct ctx *x, enum sr_decision_kind kind, const char *field, const char *asked,
                  const char *applied, const char *reason)
{
  struct sr_decisions *d = x->out;
  if (field == NULL || asked == NULL || reason == NULL ||
      (applied == NULL && kind != SR_DECISION_REFUSED))
    return oom(x);
  if (d->n == d->cap) {
    size_t cap = d->cap ? d->cap * 2 : 32;
    struct sr_decision *list = sr_arena_array(x->a, cap, sizeof(*list));
    if (list == NULL)
      return oom(x);
    if (d->n)
      memcpy(list, d->list, d->n * sizeof(*list));
    d->list = list;
    d->cap = cap;
  }
  d->list[d->n++] = (struct sr_decision){kind, field, asked, applied, reason};
  return 0;
}

static int allow(struct ctx *x, const char *field, const char *asked, const char *reason)
{
  return record(x, SR_DECISION_ALLOWED, field, asked, asked, reason);
}

/* A change the profile makes to the config.  Returns 1: make it; 0: the profile is permissive
 * (recorded as what would have been applied), leave the config alone; -1: error. */
static int change(struct ctx *x, const char *field, const char *asked, const char *applied,
                  const char *reason)
{
  if (x->p->enforce)
    return record(x, SR_DECISION_ENFORCED, field, asked, applied, reason) < 0 ? -1 : 1;
  return record(x, SR_DECISION_ALLOWED, field, asked, applied, "permissive") < 0 ? -1 : 0;
}

/* A request the profile forbids.  Returns -1 with the error (also recorded); in a permissive
 * profile records what would have happened and returns 0. */
__attribute__((format(printf, 4, 5))) static int refuse(struct ctx *x, const char *field,
                                                        const char *asked, const char *fmt, ...)
{
  va_list ap;
  char *msg = NULL;
  va_start(ap, fmt);
  int n = vasprintf(&msg, fmt, ap);
  va_end(ap);
  if (n < 0)
    return oom(x);
  char *amsg = sr_arena_strdup(x->a, msg);
  free(msg);
  if (amsg == NULL)
    return oom(x);
  if (!x->p->enforce)
    return record(x, SR_DECISION_ALLOWED, field, asked, sr_arena_printf(x->a, "refused: %s", amsg),
                  "permissive");
  if (record(x, SR_DECISION_REFUSED, field, asked, NULL, amsg) < 0)
    return -1;
  return sr_error_make(x->err, 0, "%s", amsg);
}

#define P(...) sr_arena_printf(x->a, __VA_ARGS__)
#define TRY(e)                                                                                     \
  do {                                                                                             \
    if ((e) < 0)                                                                                   \
      return -1;                                                                                   \
  } while (0)

/* ---- 14. Annotations --------------------------------------------------------------------- */

enum net_request { NET_UNSET, NET_NONE, NET_ENABLED };

struct requests {
  enum net_request network;
  bool has_tmp_size;
  uint64_t tmp_size;
  const char *tmp_size_text;
};

static int check_annotations(struct ctx *x, const struct sr_config *c, struct requests *rq)
{
  static const char prefix[] = "io.seerun.";
  for (size_t i = 0; i < c->n_annotations; i++) {
    const char *k = c->annotation_keys[i], *v = c->annotation_values[i];
    if (strncmp(k, prefix, sizeof(prefix) - 1) != 0)
      continue; /* other annotations are the engine's business */
    char *field = P("annotations.%s", k);
    char *asked = text_str(x->a, v);
    if (strcmp(k, SR_ANNOTATION_NETWORK) == 0) {
      if (strcmp(v, "none") == 0)
        rq->network = NET_NONE;
      else if (strcmp(v, "enabled") == 0)
        rq->network = NET_ENABLED;
      else
        TRY(refuse(x, field, asked, "annotation %s=%s: unknown value (\"none\" or \"enabled\")", k,
                   v));
    } else if (strcmp(k, SR_ANNOTATION_TMP_SIZE) == 0) {
      if (sr_policy_parse_size(v, &rq->tmp_size) < 0 || rq->tmp_size == 0)
        TRY(refuse(x, field, asked,
                   "annotation %s=%s: not a size (bytes, or a number with a k, m, g or t "
                   "suffix)",
                   k, v));
      else {
        rq->has_tmp_size = true;
        rq->tmp_size_text = v;
      }
    } else
      /* A typo must not pass for a request that was granted. */
      TRY(refuse(x, field, asked,
                 "annotation %s=%s: unknown seerun annotation (known: %s, %s; a profile is "
                 "chosen by the operator's bindings, not by an annotation)",
                 k, v, SR_ANNOTATION_NETWORK, SR_ANNOTATION_TMP_SIZE));
  }
  return 0;
}

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
  return text_str(a, ns->path);
}

/* A namespace joined by a path that is not the host's. */
static int join_path(struct ctx *x, int k, const struct sr_namespace *ns,
                     const struct sr_policy_ns_fact *f)
{
  const char *type = sr_ns_name(k);
  char *field = P("linux.namespaces.%s", type);
  char *asked = text_ns(x->a, ns);
  if (f->is_seerun_container)
    return allow(x, field, asked, "joins another seerun container's namespace (a pod)");
  if (x->p->namespaces.allow_join[k])
    return allow(x, field, asked,
                 P("joining it is allowed (profiles.%s.namespaces.allowJoin)", x->name));
  return refuse(x, field, asked,
                "linux.namespaces.%s: path \"%s\" is no seerun container's namespace; joining "
                "it is not allowed by profile \"%s\" (profiles.%s.namespaces.allowJoin does not "
                "list \"%s\")",
                type, ns->path, x->name, x->name, type);
}

static int apply_namespaces(struct ctx *x, const struct sr_policy_facts *facts, struct sr_config *c)
{
  struct sr_namespace *nss = c->linux_.namespaces;
  const char *name = x->name;

  /* user: without one, container root is host root; joining one grants nothing by itself on
   * the host, but its owner could ptrace what runs inside, so only pods and listed paths. */
  struct sr_namespace *user = &nss[SR_NS_USER];
  const struct sr_policy_ns_fact *uf = ns_fact(facts, SR_NS_USER);
  if (!user->present && x->p->namespaces.require_user)
    TRY(refuse(x, "linux.namespaces.user", "\"host\"",
               "linux.namespaces.user: a user namespace is required by profile \"%s\" "
               "(profiles.%s.namespaces.requireUser)",
               name, name));
  else if (user->present && user->path) {
    if (uf->is_host)
      TRY(allow(x, "linux.namespaces.user", text_ns(x->a, user),
                "the host's user namespace (as without one)"));
    else
      TRY(join_path(x, SR_NS_USER, user, uf));
  }

  /* mount: always present (the parser requires it).  The host's would let the container
   * change the host's mounts: never. */
  struct sr_namespace *mnt = &nss[SR_NS_MOUNT];
  const struct sr_policy_ns_fact *mf = ns_fact(facts, SR_NS_MOUNT);
  if (mnt->present && mnt->path) {
    if (mf->is_host)
      TRY(refuse(x, "linux.namespaces.mount", text_ns(x->a, mnt),
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
    const char *type = sr_ns_name(k);
    char *field = P("linux.namespaces.%s", type);
    char *asked = text_ns(x->a, ns);
    bool host = !ns->present || (ns->path && f->is_host);
    if (host && x->p->namespaces.allow_host[k])
      TRY(allow(x, field, asked,
                P("the host's %s namespace, allowed by profile \"%s\" "
                  "(profiles.%s.namespaces.allowHost)",
                  type, name, name)));
    else if (host) {
      int r = change(x, field, asked, "\"new\"",
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

static int apply_network(struct ctx *x, const struct sr_policy_facts *facts, struct sr_config *c,
                         const struct requests *rq)
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
  const char *no_network =
      !x->p->network.allow ? P("profiles.%s.network.allow is false", name)
                           : P("no annotation %s=enabled (profiles.%s.network.onRequest)",
                               SR_ANNOTATION_NETWORK, name);

  if (!ns->present) {
    if (x->p->network.allow_host) {
      TRY(allow(x, field, asked,
                P("host network, allowed by profile \"%s\" (profiles.%s.network.allowHost)", name,
                  name)));
      granted = host = true;
    } else {
      /* Loopback only: a container asking for the host's network gets less, never more. */
      why_not = P("host network is replaced by a new network namespace with loopback only "
                  "(profiles.%s.network.allowHost is false)",
                  name);
      int r = change(x, field, asked, "\"new (loopback only)\"", why_not);
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
      TRY(allow(x, field, asked,
                P("the host's network namespace, allowed by profile \"%s\" "
                  "(profiles.%s.network.allowHost)",
                  name, name)));
      granted = true;
    } else
      /* The engine named it: it would report a network the container would not have. */
      TRY(refuse(x, field, asked,
                 "linux.namespaces.network: path \"%s\" is the host's network namespace, not "
                 "allowed by profile \"%s\" (profiles.%s.network.allowHost is false)",
                 ns->path, name, name));
  } else if (ns->path && f->is_seerun_container) {
    if (f->container_has_network && !may)
      TRY(refuse(x, field, asked,
                 "linux.namespaces.network: path \"%s\" joins a seerun container that has "
                 "network, not allowed by profile \"%s\" (%s)",
                 ns->path, name, no_network));
    else {
      TRY(allow(x, field, asked,
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
      TRY(allow(x, field, asked,
                P("a network namespace the engine configured; network granted "
                  "(profiles.%s.network.allow)",
                  name)));
      granted = true;
    } else
      TRY(refuse(x, field, asked,
                 "linux.namespaces.network: path \"%s\": the engine configured a network, which "
                 "profile \"%s\" does not grant (%s)",
                 ns->path, name, no_network));
  } else {
    granted = may;
    if (!granted)
      why_not = no_network;
    TRY(allow(x, field, asked,
              granted
                  ? P("a new network namespace; network granted (profiles.%s.network.allow)", name)
                  : P("a new network namespace with loopback only (%s)", no_network)));
  }

  const char *afield = "annotations." SR_ANNOTATION_NETWORK;
  if (rq->network == NET_ENABLED) {
    if (!x->p->network.allow)
      TRY(refuse(x, afield, "\"enabled\"",
                 "annotation %s=enabled: not allowed by profile \"%s\" (profiles.%s.network.allow "
                 "is false)",
                 SR_ANNOTATION_NETWORK, name, name));
    else if (!granted)
      TRY(refuse(x, afield, "\"enabled\"",
                 "annotation %s=enabled: the container would have loopback only (%s)",
                 SR_ANNOTATION_NETWORK, why_not ? why_not : "no network"));
    else
      TRY(allow(x, afield, "\"enabled\"", "network requested and granted"));
  } else if (rq->network == NET_NONE) {
    if (granted && (host || ns->path))
      TRY(refuse(x, afield, "\"none\"",
                 "annotation %s=none: linux.namespaces.network is a namespace that has network",
                 SR_ANNOTATION_NETWORK));
    else {
      granted = false;
      TRY(allow(x, afield, "\"none\"", "loopback only, as asked"));
    }
  }
  x->out->network_granted = x->p->enforce ? granted : true;
  x->own_net = ns->present && !host;
  return 0;
}

/* ---- 8, 12. Mounts, cwd ------------------------------------------------------------------ */

static bool in_list(char **v, size_t n, const char *s)
{
  for (size_t i = 0; i < n; i++)
    if (strcmp(v[i], s) == 0)
      return true;
  return false;
}

/* The options of a bind, with nosuid and nodev (and their recursive forms for rbind). */
static int add_nosuid_nodev(struct ctx *x, struct sr_mount *m, char ***out, size_t *n)
{
  static const char *const drop[] = {"suid", "dev", "rsuid", "rdev"};
  static const char *const add_plain[] = {"nosuid", "nodev"};
  static const char *const add_rec[] = {"rnosuid", "rnodev"};
  char **v = sr_arena_array(x->a, m->n_options + 5, sizeof(char *));
  size_t k = 0;
  if (v == NULL)
    return oom(x);
  for (size_t j = 0; j < m->n_options; j++) {
    bool skip = false;
    for (size_t d = 0; d < sizeof(drop) / sizeof(drop[0]); d++)
      skip = skip || strcmp(m->options[j], drop[d]) == 0;
    if (!skip)
      v[k++] = m->options[j];
  }
  for (size_t d = 0; d < 2; d++)
    if (!in_list(v, k, add_plain[d]))
      v[k++] = (char *)add_plain[d];
  if (m->opts.rbind)
    for (size_t d = 0; d < 2; d++)
      if (!in_list(v, k, add_rec[d]))
        v[k++] = (char *)add_rec[d];
  v[k] = NULL;
  *out = v;
  *n = k;
  return 0;
}

static int apply_mounts(struct ctx *x, const struct sr_policy_facts *facts, struct sr_config *c)
{
  const char *name = x->name;
  for (size_t i = 0; i < c->n_mounts; i++) {
    struct sr_mount *m = &c->mounts[i];
    if (!(m->opts.bind || m->opts.rbind)) {
      /* A remount creates no filesystem; any other type is a new one the runtime mounts as
       * root: a disk ("ext4" of /dev/sda1) or an overlay of host directories would bypass
       * every check on bind sources. */
      if ((m->opts.flags & MS_REMOUNT) || in_list(x->p->mount_types, x->p->n_mount_types, m->type))
        continue;
      TRY(refuse(x, P("mounts[%zu].type", i), text_str(x->a, m->type),
                 "mounts[%zu].type: filesystem type \"%s\" is not allowed by profile \"%s\" "
                 "(profiles.%s.mounts.allowedTypes)",
                 i, m->type, name, name));
      continue;
    }
    char *field = P("mounts[%zu].source", i);
    char *asked = text_str(x->a, m->source);
    const struct sr_policy_mount_fact *mf = facts && facts->mounts ? &facts->mounts[i] : NULL;
    char *cl = m->source[0] == '/' ? clean_path(x->a, m->source) : NULL;
    if (m->source[0] == '/' && cl == NULL)
      return oom(x);
    if (cl && through_proc(cl))
      TRY(refuse(x, field, asked,
                 "mounts[%zu].source: \"%s\" is under /proc (or /dev/fd): a /proc/self/fd or "
                 "/proc/<pid>/root path can reach the host's filesystem (CVE-2024-21626 class)",
                 i, m->source));
    else if (cl == NULL && has_dotdot(m->source))
      TRY(refuse(x, field, asked,
                 "mounts[%zu].source: \"%s\": a source relative to the bundle must not contain "
                 "\"..\"",
                 i, m->source));
    else if (mf == NULL)
      TRY(refuse(x, field, asked,
                 "mounts[%zu].source: \"%s\": no host facts were computed for this bind "
                 "(runtime error)",
                 i, m->source));
    else if (mf->source_denied)
      TRY(refuse(x, field, asked,
                 "mounts[%zu].source: \"%s\" is or contains the denied host "
                 "path \"%s\"",
                 i, m->source, mf->denied_path ? mf->denied_path : m->source));
    else if (mf->source_is_symlink_out)
      TRY(refuse(x, field, asked,
                 "mounts[%zu].source: \"%s\" resolves through a symbolic link that leads out "
                 "of the directory it names",
                 i, m->source));
    else
      TRY(allow(x, field, asked, "not a denied host path"));

    /* A setuid binary or a device node on the host must not work inside. */
    const unsigned long need = MS_NOSUID | MS_NODEV;
    const uint64_t rneed = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
    bool ok = (m->opts.flags & need) == need &&
              (!m->opts.rbind || (m->opts.rec_attr_set & rneed) == rneed);
    if (ok)
      continue;
    char **opts = NULL;
    size_t n = 0;
    TRY(add_nosuid_nodev(x, m, &opts, &n));
    char *ofield = P("mounts[%zu].options", i);
    int r = change(x, ofield, text_strv(x->a, m->options, m->n_options), text_strv(x->a, opts, n),
                   "bind mounts get nosuid,nodev: a setuid binary or a device node from the "
                   "host must not work inside");
    TRY(r);
    if (r) {
      struct sr_mount_opts mo;
      if (ofield == NULL)
        return oom(x);
      if (sr_mount_options_parse(x->a, opts, n, ofield, &mo, x->err) < 0)
        return -1;
      m->options = opts;
      m->n_options = n;
      m->opts = mo;
    }
  }
  return 0;
}

static int check_cwd(struct ctx *x, const struct sr_process *proc)
{
  if (proc == NULL || proc->cwd == NULL)
    return 0;
  char *cl = clean_path(x->a, proc->cwd);
  if (cl == NULL)
    return oom(x);
  if (through_proc(cl))
    return refuse(x, "process.cwd", text_str(x->a, proc->cwd),
                  "process.cwd: \"%s\" is under /proc (or /dev/fd): a descriptor the runtime "
                  "leaked there is a host directory (CVE-2024-21626)",
                  proc->cwd);
  return 0;
}

/* ---- 1. Read-only root and tmpfs --------------------------------------------------------- */

static int apply_rootfs(struct ctx *x, struct sr_config *c, const struct requests *rq)
{
  const struct sr_policy_profile *p = x->p;
  const char *name = x->name;
  if (p->rootfs.readonly && !c->root_readonly) {
    int r = change(x, "root.readonly", "false", "true",
                   P("the root filesystem is read-only (profiles.%s.rootfs.readonly)", name));
    TRY(r);
    if (r)
      c->root_readonly = true;
  } else
    TRY(allow(x, "root.readonly", c->root_readonly ? "true" : "false",
              c->root_readonly ? "read-only, as asked"
                               : P("profiles.%s.rootfs.readonly is false", name)));

  size_t tmp_index = p->rootfs.n_tmpfs;
  for (size_t t = 0; t < p->rootfs.n_tmpfs; t++)
    if (strcmp(p->rootfs.tmpfs[t].path, "/tmp") == 0)
      tmp_index = t;
  const char *afield = "annotations." SR_ANNOTATION_TMP_SIZE;
  if (rq->has_tmp_size) {
    char *asked = text_str(x->a, rq->tmp_size_text);
    if (!p->rootfs.readonly || tmp_index == p->rootfs.n_tmpfs)
      TRY(refuse(x, afield, asked,
                 "annotation %s=%s: profile \"%s\" adds no tmpfs at /tmp (profiles.%s.rootfs)",
                 SR_ANNOTATION_TMP_SIZE, rq->tmp_size_text, name, name));
    else if (rq->tmp_size > p->rootfs.tmpfs[tmp_index].max_size)
      TRY(refuse(x, afield, asked,
                 "annotation %s=%s: not allowed by profile \"%s\" "
                 "(profiles.%s.rootfs.tmpfs[%zu].maxSize is %" PRIu64 ")",
                 SR_ANNOTATION_TMP_SIZE, rq->tmp_size_text, name, name, tmp_index,
                 p->rootfs.tmpfs[tmp_index].max_size));
    else
      TRY(allow(x, afield, asked,
                P("within profiles.%s.rootfs.tmpfs[%zu].maxSize", name, tmp_index)));
  }
  if (!p->rootfs.readonly || p->rootfs.n_tmpfs == 0)
    return 0;

  /* A writable tmpfs where config.json mounts nothing at, under or above the path: podman's
   * /run/.containerenv keeps /run as the image has it.  The added mounts come first, so that
   * what config.json mounts through a symlink into them (/var/run/secrets into /run) lands
   * on top, not below. */
  struct sr_mount *added = sr_arena_array(x->a, p->rootfs.n_tmpfs, sizeof(*added));
  size_t n_added = 0;
  if (added == NULL)
    return oom(x);
  for (size_t t = 0; t < p->rootfs.n_tmpfs; t++) {
    const struct sr_policy_tmpfs *tf = &p->rootfs.tmpfs[t];
    char *field = P("mounts[destination=%s]", tf->path);
    size_t conflict = c->n_mounts;
    for (size_t i = 0; i < c->n_mounts && conflict == c->n_mounts; i++) {
      char *d = clean_path(x->a, c->mounts[i].destination);
      if (d == NULL)
        return oom(x);
      if (path_under(d, tf->path) || (strcmp(d, "/") != 0 && path_under(tf->path, d)))
        conflict = i;
    }
    if (conflict < c->n_mounts) {
      TRY(allow(x, field, text_str(x->a, c->mounts[conflict].destination),
                P("config.json mounts[%zu] at \"%s\": no tmpfs added at %s", conflict,
                  c->mounts[conflict].destination, tf->path)));
      continue;
    }
    uint64_t size = (t == tmp_index && rq->has_tmp_size) ? rq->tmp_size : tf->size;
    struct sr_mount *m = &added[n_added];
    char **opts = sr_arena_array(x->a, 6, sizeof(char *));
    size_t n = 0;
    if (opts == NULL)
      return oom(x);
    opts[n++] = "nosuid";
    opts[n++] = "nodev";
    if (tf->noexec)
      opts[n++] = "noexec";
    opts[n++] = P("mode=%o", (unsigned)tf->mode);
    opts[n++] = P("size=%" PRIu64, size);
    if (opts[n - 1] == NULL || opts[n - 2] == NULL)
      return oom(x);
    m->destination = tf->path;
    m->type = "tmpfs";
    m->source = "tmpfs";
    m->options = opts;
    m->n_options = n;
    if (field == NULL)
      return oom(x);
    if (sr_mount_options_parse(x->a, opts, n, field, &m->opts, x->err) < 0)
      return -1;
    int r = change(x, field, "null", text_mount(x->a, m),
                   P("read-only root: a writable tmpfs where config.json mounts nothing "
                     "(profiles.%s.rootfs.tmpfs[%zu])",
                     name, t));
    TRY(r);
    if (r)
      n_added++;
  }
  if (n_added == 0)
    return 0;
  struct sr_mount *all = sr_arena_array(x->a, n_added + c->n_mounts, sizeof(*all));
  if (all == NULL)
    return oom(x);
  memcpy(all, added, n_added * sizeof(*all));
  if (c->n_mounts)
    memcpy(all + n_added, c->mounts, c->n_mounts * sizeof(*all));
  c->mounts = all;
  c->n_mounts += n_added;
  return 0;
}

/* ---- 4, 5, 3. No new privileges, capabilities, seccomp ----------------------------------- */

static int force_nnp(struct ctx *x, struct sr_process *proc)
{
  if (proc->no_new_privileges)
    return allow(x, "process.noNewPrivileges", "true", "as asked");
  int r = change(x, "process.noNewPrivileges", "false", "true",
                 "setuid binaries and file capabilities cannot raise privileges");
  if (r > 0)
    proc->no_new_privileges = true;
  return r < 0 ? -1 : 0;
}

static const char *cap_set_names[SR_CAP_SET_COUNT] = {
    [SR_CAP_EFFECTIVE] = "effective",     [SR_CAP_BOUNDING] = "bounding",
    [SR_CAP_INHERITABLE] = "inheritable", [SR_CAP_PERMITTED] = "permitted",
    [SR_CAP_AMBIENT] = "ambient",
};

/* Every set intersected with ceiling.  Dropping is what --cap-drop does: nothing is refused.
 * why: why a capability is dropped; within: why the sets pass as they are. */
static int limit_caps(struct ctx *x, struct sr_process *proc, uint64_t ceiling, const char *why,
                      const char *within)
{
  struct sr_capabilities *caps = proc->capabilities;
  if (caps == NULL)
    return allow(x, "process.capabilities", "null", "no capabilities");
  bool any = false;
  uint64_t all = 0;
  for (int s = 0; s < SR_CAP_SET_COUNT; s++) {
    all |= caps->sets[s];
    uint64_t drop = caps->sets[s] & ~ceiling;
    if (drop == 0)
      continue;
    any = true;
    int r = change(x, P("process.capabilities.%s", cap_set_names[s]),
                   text_caps(x->a, caps->sets[s]), text_caps(x->a, caps->sets[s] & ceiling),
                   P("dropped %s: %s", names_caps(x->a, drop), why));
    TRY(r);
    if (r)
      caps->sets[s] &= ceiling;
  }
  if (!any)
    TRY(allow(x, "process.capabilities", text_caps(x->a, all), within));
  return 0;
}

static bool is_allow_action(uint32_t a)
{
  return a == SCMP_ACT_ALLOW || a == SCMP_ACT_LOG;
}

static const char *action_name(uint32_t a)
{
  if ((a & 0xffff0000u) == SCMP_ACT_ERRNO(0))
    return "SCMP_ACT_ERRNO";
  if ((a & 0xffff0000u) == SCMP_ACT_TRACE(0))
    return "SCMP_ACT_TRACE";
  const char *n = sr_name_of(SR_NAMES(sr_seccomp_action_names), a);
  return n ? n : "?";
}

static int record_seccomp(struct ctx *x, const struct sr_seccomp *s)
{
  const char *field = "linux.seccomp";
  if (s == NULL)
    return change(x, field, "null", "\"built-in default filter\"",
                  "seccomp is mandatory: the runtime installs its built-in default filter") < 0
               ? -1
               : 0;
  bool allow_all = is_allow_action(s->default_action);
  for (size_t i = 0; i < s->n_rules && allow_all; i++)
    allow_all = is_allow_action(s->rules[i].action);
  char *asked =
      P("{\"defaultAction\":\"%s\",\"rules\":%zu}", action_name(s->default_action), s->n_rules);
  if (allow_all)
    return change(x, field, asked, "\"built-in default filter, then the config's\"",
                  "the config's filter allows every system call: the built-in default filter "
                  "is installed as well") < 0
               ? -1
               : 0;
  return allow(x, field, asked,
               "kept, and installed in addition to the built-in default filter (together they "
               "can only narrow)");
}

/* ---- 6. Masked and read-only paths ------------------------------------------------------- */

static int union_paths(struct ctx *x, const char *field, const char *knob, char ***v, size_t *n,
                       char **add, size_t n_add)
{
  char **out = sr_arena_array(x->a, *n + n_add + 1, sizeof(char *));
  char **clean = sr_arena_array(x->a, *n + n_add + 1, sizeof(char *));
  size_t k = 0;
  if (out == NULL || clean == NULL)
    return oom(x);
  for (size_t i = 0; i < *n; i++) {
    out[k] = (*v)[i];
    if ((clean[k++] = clean_path(x->a, (*v)[i])) == NULL)
      return oom(x);
  }
  size_t before = k;
  for (size_t i = 0; i < n_add; i++)
    if (!in_list(clean, k, add[i])) {
      out[k] = add[i];
      clean[k++] = add[i];
    }
  out[k] = NULL;
  char *asked = text_strv(x->a, *v, *n);
  if (k == before)
    return allow(x, field, asked, P("already lists every path of profiles.%s.%s", x->name, knob));
  int r = change(x, field, asked, text_strv(x->a, out, k),
                 P("the paths of profiles.%s.%s are always added", x->name, knob));
  TRY(r);
  if (r) {
    *v = out;
    *n = k;
  }
  return 0;
}

/* ---- 9. Devices -------------------------------------------------------------------------- */

static bool device_allowed(const struct sr_policy_profile *p, char type, int64_t major,
                           int64_t minor)
{
  for (size_t i = 0; i < p->n_devices; i++) {
    const struct sr_policy_device *d = &p->devices[i];
    if (d->type == type && d->major == major && (d->minor < 0 || d->minor == minor))
      return true;
  }
  return false;
}

static int check_devices(struct ctx *x, const struct sr_linux *l)
{
  const char *name = x->name;
  for (size_t i = 0; i < l->n_devices; i++) {
    const struct sr_device *d = &l->devices[i];
    char *field = P("linux.devices[%zu]", i);
    if (d->type == 'p')
      continue; /* a FIFO is no device */
    char type = d->type == 'u' ? 'c' : d->type;
    char *asked = P("\"%s (%c %" PRId64 ":%" PRId64 ")\"", d->path, d->type, d->major, d->minor);
    /* Dropping it would be a --device that silently is not there: refused. */
    if (!device_allowed(x->p, type, d->major, d->minor))
      TRY(refuse(x, field, asked,
                 "linux.devices[%zu]: %s device \"%s\" (%c %" PRId64 ":%" PRId64 ") is not "
                 "allowed by profile \"%s\" (profiles.%s.devices.allowed)",
                 i, type == 'b' ? "block" : "character", d->path, d->type, d->major, d->minor, name,
                 name));
    else
      TRY(allow(x, field, asked, P("in profiles.%s.devices.allowed", name)));
  }
  return 0;
}

/* An allow rule that only reaches nodes the profile allows. */
static bool rule_covered(const struct sr_policy_profile *p, const struct sr_device_rule *r)
{
  if (!r->allow)
    return true;
  if (r->type == 'a' || r->major < 0)
    return false;
  for (size_t i = 0; i < p->n_devices; i++) {
    const struct sr_policy_device *d = &p->devices[i];
    if (d->type == r->type && d->major == r->major && (d->minor < 0 || d->minor == r->minor))
      return true;
  }
  return false;
}

/* The part of an allow rule that an allowed device covers. */
static bool rule_intersect(const struct sr_device_rule *r, const struct sr_policy_device *d,
                           struct sr_device_rule *out)
{
  if ((r->type != 'a' && r->type != d->type) || (r->major >= 0 && r->major != d->major))
    return false;
  int64_t minor;
  if (d->minor < 0)
    minor = r->minor;
  else if (r->minor < 0 || r->minor == d->minor)
    minor = d->minor;
  else
    return false;
  *out = (struct sr_device_rule){true, d->type, d->major, minor, ""};
  memcpy(out->access, r->access, sizeof(out->access));
  return true;
}

static int apply_device_rules(struct ctx *x, struct sr_resources *r)
{
  const char *field = "linux.resources.devices";
  if (r == NULL || r->n_devices == 0)
    return 0;
  size_t uncovered = 0;
  for (size_t i = 0; i < r->n_devices; i++)
    uncovered += !rule_covered(x->p, &r->devices[i]);
  char *asked = text_rules(x->a, r->devices, r->n_devices);
  if (uncovered == 0)
    return allow(x, field, asked,
                 P("every allow rule is within profiles.%s.devices.allowed", x->name));
  /* "a *:* rwm" (privileged) or a block device: each such rule becomes the allowed nodes it
   * reaches, after a deny-all; deny rules stay. */
  size_t cap = 1 + r->n_devices + uncovered * x->p->n_devices;
  struct sr_device_rule *v = sr_arena_array(x->a, cap, sizeof(*v));
  size_t n = 0;
  if (v == NULL)
    return oom(x);
  const struct sr_device_rule *first = &r->devices[0];
  if (first->allow || first->type != 'a' || first->major >= 0 || first->minor >= 0 ||
      strcmp(first->access, "rwm") != 0)
    v[n++] = (struct sr_device_rule){false, 'a', -1, -1, "rwm"};
  for (size_t i = 0; i < r->n_devices; i++) {
    if (rule_covered(x->p, &r->devices[i])) {
      v[n++] = r->devices[i];
      continue;
    }
    for (size_t d = 0; d < x->p->n_devices; d++)
      if (rule_intersect(&r->devices[i], &x->p->devices[d], &v[n]))
        n++;
  }
  int ch = change(x, field, asked, text_rules(x->a, v, n),
                  P("allow rules beyond profiles.%s.devices.allowed (every device, block devices, "
                    "...) are narrowed to the allowed nodes",
                    x->name));
  TRY(ch);
  if (ch) {
    r->devices = v;
    r->n_devices = n;
  }
  return 0;
}

/* ---- 10. Resources ----------------------------------------------------------------------- */

/* value < 0 (or unset): no limit. */
static int floor_ceiling(struct ctx *x, const char *field, const char *knob, const char *asked,
                         int64_t value, const struct sr_policy_limit *l, int64_t *out,
                         bool *changed)
{
  const char *name = x->name;
  *changed = false;
  if (value < 0) {
    if (!l->has_default)
      return allow(x, field, asked,
                   P("no limit (profiles.%s.resources.%s has no default)", name, knob));
    int r = change(
        x, field, asked, text_i64(x->a, true, l->def),
        P("no limit asked: the profile's applies (profiles.%s.resources.%s.default)", name, knob));
    TRY(r);
    *out = l->def;
    *changed = r > 0;
    return 0;
  }
  if (l->has_max && value > l->max) {
    int r = change(x, field, asked, text_i64(x->a, true, l->max),
                   P("above the ceiling, lowered (profiles.%s.resources.%s.max)", name, knob));
    TRY(r);
    *out = l->max;
    *changed = r > 0;
    return 0;
  }
  return allow(x, field, asked, P("within profiles.%s.resources.%s", name, knob));
}

/* A cgroup v2 value: "max" -> -1, digits -> the number; -2 for anything else. */
static int64_t unified_value(const char *v)
{
  if (strcmp(v, "max") == 0)
    return -1;
  size_t n = strlen(v);
  if (n == 0 || n > 18 || strspn(v, "0123456789") != n)
    return -2;
  return (int64_t)strtoll(v, NULL, 10);
}

static int apply_resources(struct ctx *x, struct sr_config *c)
{
  struct sr_resources dummy = {0};
  struct sr_resources *r = c->linux_.resources;
  bool floors = x->p->pids.has_default || x->p->memory.has_default;
  if (r == NULL && x->p->enforce && floors) {
    r = c->linux_.resources = sr_arena_alloc(x->a, sizeof(*r));
    if (r == NULL)
      return oom(x);
  } else if (r == NULL)
    r = &dummy;
  TRY(apply_device_rules(x, r));

  int64_t v;
  bool changed;
  /* pids.limit: 0 and -1 both mean no limit to runc; memory.limit likewise. */
  bool pset = r->pids_limit.set && r->pids_limit.v > 0;
  TRY(floor_ceiling(x, "linux.resources.pids.limit", "pids",
                    text_i64(x->a, r->pids_limit.set, r->pids_limit.v), pset ? r->pids_limit.v : -1,
                    &x->p->pids, &v, &changed));
  if (changed)
    r->pids_limit = (sr_opt_i64){true, v};
  /* memory.swap is memory+swap and must not be below the limit; when set, it bounds the memory
   * already, so a default limit above it becomes it. */
  struct sr_policy_limit mem = x->p->memory;
  if (mem.has_default && r->memory.swap.set && r->memory.swap.v > 0 && r->memory.swap.v < mem.def)
    mem.def = r->memory.swap.v;
  bool mset = r->memory.limit.set && r->memory.limit.v > 0;
  TRY(floor_ceiling(x, "linux.resources.memory.limit", "memory",
                    text_i64(x->a, r->memory.limit.set, r->memory.limit.v),
                    mset ? r->memory.limit.v : -1, &mem, &v, &changed));
  if (changed)
    r->memory.limit = (sr_opt_i64){true, v};

  /* unified is written last and wins: "pids.max": "max" must not lift the floor. */
  for (size_t i = 0; i < r->n_unified; i++) {
    const char *k = r->unified_keys[i];
    const struct sr_policy_limit *l = strcmp(k, "pids.max") == 0     ? &x->p->pids
                                      : strcmp(k, "memory.max") == 0 ? &x->p->memory
                                                                     : NULL;
    int64_t uv = l ? unified_value(r->unified_values[i]) : -2;
    if (uv == -2)
      continue;
    TRY(floor_ceiling(x, P("linux.resources.unified.%s", k), l == &x->p->pids ? "pids" : "memory",
                      text_str(x->a, r->unified_values[i]), uv, l, &v, &changed));
    if (changed) {
      r->unified_values[i] = P("%" PRId64, v);
      if (r->unified_values[i] == NULL)
        return oom(x);
    }
  }
  return 0;
}

/* ---- 11. Sysctls ------------------------------------------------------------------------- */

static bool sysctl_allowed(const struct sr_policy_profile *p, const char *key)
{
  for (size_t i = 0; i < p->n_sysctls; i++) {
    const char *pat = p->sysctls[i];
    size_t n = strlen(pat);
    if (n && pat[n - 1] == '*' ? strncmp(key, pat, n - 1) == 0 : strcmp(key, pat) == 0)
      return true;
  }
  return false;
}

static int check_sysctls(struct ctx *x, const struct sr_linux *l)
{
  const char *name = x->name;
  for (size_t i = 0; i < l->n_sysctl; i++) {
    const char *key = l->sysctl_keys[i];
    char *norm = sr_arena_strdup(x->a, key); /* "net/ipv4/ip_forward" is "net.ipv4.ip_forward" */
    char *field = P("linux.sysctl.%s", key);
    char *asked = text_str(x->a, l->sysctl_values[i]);
    if (norm == NULL)
      return oom(x);
    for (char *s = norm; *s; s++)
      if (*s == '/')
        *s = '.';
    bool net = strncmp(norm, "net.", 4) == 0;
    bool ipc = strncmp(norm, "kernel.shm", 10) == 0 || strncmp(norm, "kernel.msg", 10) == 0 ||
               strcmp(norm, "kernel.sem") == 0 || strncmp(norm, "fs.mqueue.", 10) == 0;
    bool uts = strcmp(norm, "kernel.hostname") == 0 || strcmp(norm, "kernel.domainname") == 0;
    if (!sysctl_allowed(x->p, norm))
      TRY(refuse(x, field, asked,
                 "linux.sysctl.%s: not allowed by profile \"%s\" (profiles.%s.sysctls.allowed)",
                 key, name, name));
    else if ((net && !x->own_net) || (ipc && !x->own_ipc) || (uts && !x->own_uts))
      TRY(refuse(x, field, asked,
                 "linux.sysctl.%s: needs the container's own %s namespace (it would change the "
                 "host's)",
                 key,
                 net   ? "network"
                 : ipc ? "ipc"
                       : "uts"));
    else
      TRY(allow(x, field, asked, P("namespaced, in profiles.%s.sysctls.allowed", name)));
  }
  return 0;
}

/* ---- 13. Hooks --------------------------------------------------------------------------- */

static int check_hooks(struct ctx *x, const struct sr_policy_facts *facts, const struct sr_hooks *h)
{
  const char *name = x->name;
  for (int k = 0; k < SR_HOOK_COUNT; k++)
    for (size_t i = 0; i < h->n[k]; i++) {
      const char *path = h->list[k][i].path;
      const struct sr_policy_hook_fact *f = facts && facts->hooks[k] ? &facts->hooks[k][i] : NULL;
      char *field = P("hooks.%s[%zu].path", sr_hook_name(k), i);
      char *asked = text_str(x->a, path);
      /* Hooks run on the host, as root, outside every namespace of the container. */
      if (f == NULL || !f->trusted_path)
        TRY(refuse(x, field, asked,
                   "hooks.%s[%zu].path: \"%s\" is not on a trusted path (a root-owned file in "
                   "root-owned directories no other user can write, outside the bundle and the "
                   "rootfs)",
                   sr_hook_name(k), i, path));
      else if (x->p->has_hook_paths && !in_list(x->p->hook_paths, x->p->n_hook_paths, path))
        TRY(refuse(x, field, asked,
                   "hooks.%s[%zu].path: \"%s\" is not allowed by profile \"%s\" "
                   "(profiles.%s.hooks.allowedPaths)",
                   sr_hook_name(k), i, path, name, name));
      else
        TRY(allow(x, field, asked, "on a trusted path"));
    }
  return 0;
}

/* ---- The entry points -------------------------------------------------------------------- */

static void ctx_init(struct ctx *x, const struct sr_policy_profile *p, struct sr_arena *a,
                     struct sr_decisions *out, sr_error_t *err)
{
  memset(x, 0, sizeof(*x));
  x->p = p;
  x->a = a;
  x->out = out;
  x->err = err;
  x->name = p->name ? p->name : "(unnamed)";
}

int sr_policy_apply(const struct sr_policy_profile *p, const struct sr_policy_facts *facts,
                    struct sr_config *c, struct sr_decisions *out, sr_error_t *err)
{
  struct ctx ctx, *x = &ctx;
  struct requests rq = {NET_UNSET, false, 0, NULL};
  ctx_init(x, p, &c->arena, out, err);
  struct sr_linux *l = &c->linux_;

  /* Binds are judged with the facts of their index in config.json, so before the tmpfs are
   * added (apply_rootfs puts them first). */
  TRY(check_annotations(x, c, &rq));
  TRY(apply_namespaces(x, facts, c));
  TRY(apply_network(x, facts, c, &rq));
  TRY(apply_mounts(x, facts, c));
  TRY(check_cwd(x, c->process));
  TRY(apply_rootfs(x, c, &rq));
  if (c->process) {
    TRY(force_nnp(x, c->process));
    TRY(limit_caps(x, c->process, p->capabilities,
                   P("not in profiles.%s.capabilities.allowed", x->name),
                   P("every capability is in profiles.%s.capabilities.allowed", x->name)));
  }
  TRY(record_seccomp(x, l->seccomp));
  TRY(union_paths(x, "linux.maskedPaths", "maskedPaths", &l->masked_paths, &l->n_masked_paths,
                  p->masked_paths, p->n_masked_paths));
  TRY(union_paths(x, "linux.readonlyPaths", "readonlyPaths", &l->readonly_paths,
                  &l->n_readonly_paths, p->readonly_paths, p->n_readonly_paths));
  TRY(check_devices(x, l));
  TRY(apply_resources(x, c));
  TRY(check_sysctls(x, l));
  TRY(check_hooks(x, facts, &c->hooks));
  return 0;
}

static int update_limit(struct ctx *x, const char *field, const char *knob, int64_t value,
                        const struct sr_policy_limit *l)
{
  const char *name = x->name;
  char *asked = text_i64(x->a, value >= 0, value);
  if (value < 0 && l->has_default)
    return refuse(x, field, asked,
                  "update: %s: the limit cannot be removed (profile \"%s\" requires one: "
                  "profiles.%s.resources.%s.default)",
                  field, name, name, knob);
  if (value >= 0 && l->has_max && value > l->max)
    return refuse(x, field, asked,
                  "update: %s: %" PRId64 " is above the ceiling of profile \"%s\" "
                  "(profiles.%s.resources.%s.max is %" PRId64 ")",
                  field, value, name, name, knob, l->max);
  return allow(x, field, asked, P("within profiles.%s.resources.%s", name, knob));
}

int sr_policy_check_update(const struct sr_policy_profile *p, struct sr_arena *a,
                           const struct sr_resources *requested, struct sr_resources *applied,
                           struct sr_decisions *out, sr_error_t *err)
{
  struct ctx ctx, *x = &ctx;
  ctx_init(x, p, a, out, err);
  const struct sr_resources *r = requested;
  /* Unset fields stay as they are: only what the update sets is judged. */
  if (r->pids_limit.set)
    TRY(update_limit(x, "linux.resources.pids.limit", "pids",
                     r->pids_limit.v > 0 ? r->pids_limit.v : -1, &p->pids));
  if (r->memory.limit.set)
    TRY(update_limit(x, "linux.resources.memory.limit", "memory",
                     r->memory.limit.v > 0 ? r->memory.limit.v : -1, &p->memory));
  for (size_t i = 0; i < r->n_unified; i++) {
    const char *k = r->unified_keys[i];
    const struct sr_policy_limit *l = strcmp(k, "pids.max") == 0     ? &p->pids
                                      : strcmp(k, "memory.max") == 0 ? &p->memory
                                                                     : NULL;
    int64_t v = l ? unified_value(r->unified_values[i]) : -2;
    if (v != -2)
      TRY(update_limit(x, P("linux.resources.unified.%s", k), l == &p->pids ? "pids" : "memory", v,
                       l));
  }
  for (size_t i = 0; i < r->n_devices; i++)
    if (!rule_covered(p, &r->devices[i])) {
      struct sr_device_rule one = r->devices[i];
      TRY(refuse(x, P("linux.resources.devices[%zu]", i), text_rules(a, &one, 1),
                 "update: linux.resources.devices[%zu]: an allow rule beyond profile \"%s\" "
                 "(profiles.%s.devices.allowed)",
                 i, x->name, x->name));
    }
  *applied = *requested;
  return 0;
}

static bool same_str(const char *a, const char *b)
{
  return (a == NULL || b == NULL) ? a == b : strcmp(a, b) == 0;
}

static int keep_label(struct ctx *x, const char *field, char **label, const char *created,
                      const char *what)
{
  if (same_str(*label, created))
    return 0;
  int r = change(x, field, text_str(x->a, *label), text_str(x->a, created),
                 P("an exec keeps the %s decided at create", what));
  TRY(r);
  if (r && created) {
    *label = sr_arena_strdup(x->a, created);
    if (*label == NULL)
      return oom(x);
  } else if (r)
    *label = NULL;
  return 0;
}

int sr_policy_apply_exec(const struct sr_policy_profile *p, struct sr_arena *a,
                         const struct sr_process *created, struct sr_process *e,
                         struct sr_decisions *out, sr_error_t *err)
{
  struct ctx ctx, *x = &ctx;
  ctx_init(x, p, a, out, err);
  TRY(check_cwd(x, e));
  TRY(force_nnp(x, e));
  /* The bounding set decided at create is the ceiling of every process of the container. */
  uint64_t ceiling = created && created->capabilities
                         ? created->capabilities->sets[SR_CAP_BOUNDING] & p->capabilities
                         : 0;
  TRY(limit_caps(x, e, ceiling, "beyond the bounding set the container was created with",
                 "every capability is in the bounding set the container was created with"));
  /* "unconfined" in process.json must not lift the container's confinement. */
  TRY(keep_label(x, "process.apparmorProfile", &e->apparmor_profile,
                 created ? created->apparmor_profile : NULL, "AppArmor profile"));
  TRY(keep_label(x, "process.selinuxLabel", &e->selinux_label,
                 created ? created->selinux_label : NULL, "SELinux label"));
  return 0;
}

bool sr_policy_network_granted(const struct sr_decisions *d)
{
  return d->network_granted;
}

bool sr_policy_builtin_seccomp(const struct sr_policy_profile *p)
{
  return p->enforce;
}

const char *sr_decision_kind_name(enum sr_decision_kind k)
{
  switch (k) {
  case SR_DECISION_ENFORCED:
    return "enforced";
  case SR_DECISION_ALLOWED:
    return "allowed";
  case SR_DECISION_REFUSED:
    return "refused";
  }
  return "?";
}

int sr_decisions_to_json(const struct sr_decisions *d, yajl_gen g)
{
  yajl_gen_array_open(g);
  for (size_t i = 0; i < d->n; i++) {
    const struct sr_decision *x = &d->list[i];
    yajl_gen_map_open(g);
    sr_json_put_kv_string(g, "kind", sr_decision_kind_name(x->kind));
    sr_json_put_kv_string(g, "field", x->field);
    sr_json_put_kv_string(g, "asked", x->asked);
    sr_json_put_key(g, "applied");
    if (x->applied)
      sr_json_put_string(g, x->applied);
    else
      yajl_gen_null(g);
    sr_json_put_kv_string(g, "reason", x->reason);
    yajl_gen_map_close(g);
  }
  yajl_gen_array_close(g);
  return 0;
}
