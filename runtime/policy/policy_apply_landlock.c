/* Landlock (section 16 of contrib/policy/README.md): whether every process of the container is
 * confined to the container's own file hierarchy, decided from the profile's `landlock` knob
 * and the kernel's Landlock ABI (a fact).  A kernel without it, or without some of its rights,
 * is said in the decision and never refused: Landlock is defence in depth, not a promise the
 * other protections rest on. */
#include "build.h"

#include "policy_apply_internal.h"

#include <stdio.h>

/* The newest ABI whose filesystem rights the runtime handles (runtime/linux/landlock.c). */
#define KNOWN_ABI 7

/* What an older ABI leaves uncovered (the rights a leaked host descriptor still has). */
static const char *missing_rights(int abi)
{
  if (abi > KNOWN_ABI)
    return "; rights the kernel added after ABI 7, if any, are not handled by this build";
  if (abi < 2)
    return "; this kernel's ABI lacks: moving files between directories (REFER, ABI 2), "
           "truncate (ABI 3), device ioctls (ABI 5), scoping (ABI 6)";
  if (abi < 3)
    return "; this kernel's ABI lacks: truncate (ABI 3), device ioctls (ABI 5), scoping (ABI 6)";
  if (abi < 5)
    return "; this kernel's ABI lacks: device ioctls (ABI 5), scoping (ABI 6)";
  if (abi < 6)
    return "; this kernel's ABI lacks: scoping of abstract unix sockets (ABI 6)";
  return "";
}

int sr_policy_apply_landlock_in_ctx(struct sr_pa_ctx *x, int abi, bool host_network)
{
  const char *field = "landlock", *name = x->name;
  x->out->landlock_abi = 0;
  x->out->landlock_scope_abstract_unix = false;
  if (!x->p->landlock)
    return sr_policy_apply_allow(x, field, "null", P("off (profiles.%s.landlock is false)", name));
  if (abi <= 0)
    /* A notice, never a refusal: the kernel lacks it (not built, or not in lsm= at boot). */
    return sr_policy_apply_allow(
        x, field, "null",
        P("not applied: the kernel has no Landlock (profiles.%s.landlock asks for "
          "it); the container runs without this defence in depth",
          name));
  bool scope = host_network && abi >= 6;
  char *applied = P("{\"abi\":%d,\"filesystem\":\"beneath /\",\"scoped\":%s}", abi,
                    scope ? "[\"abstractUnixSocket\"]" : "[]");
  int r = sr_policy_apply_change(
      x, field, "null", applied,
      P("profiles.%s.landlock: every process of the container reaches only files beneath its "
        "own / (a leaked host descriptor grants nothing beneath it)%s%s",
        name,
        scope ? "; abstract unix sockets scoped: the container shares the host's network "
                "namespace"
              : "",
        missing_rights(abi)));
  if (r < 0)
    return -1;
  if (r > 0) {
    x->out->landlock_abi = abi;
    x->out->landlock_scope_abstract_unix = scope;
  }
  return 0;
}

int sr_policy_apply_landlock(const struct sr_policy_profile *p, struct sr_arena *a, int abi,
                             bool host_network, struct sr_decisions *out, sr_error_t *err)
{
  struct sr_pa_ctx ctx;
  sr_policy_apply_ctx_init(&ctx, p, a, out, err);
  return sr_policy_apply_landlock_in_ctx(&ctx, abi, host_network);
}
