/* A hook's file, opened once and judged from that descriptor: what the policy decides about
 * and what is executed (execveat) are the same object, whatever happens to the path in
 * between (a symlink swapped, a directory renamed).  A script's #! interpreter is opened and
 * judged the same way, and executed by its descriptor too. */
#ifndef SEERUN_HOOK_FILES_H
#define SEERUN_HOOK_FILES_H

#include <limits.h>
#include <stdbool.h>

#include "arena.h"
#include "policy.h"
#include "policy_apply.h"

/* Where the tenant's files are (no hook runs from there). */
struct sr_hook_places {
  const char *bundle;     /* may be NULL */
  const char *rootfs;     /* may be NULL */
  const char *state_root; /* may be NULL */
};

struct sr_hook_file {
  int fd;               /* O_PATH of what the path opened; -1: it did not open */
  int error;            /* fd < 0: open's errno */
  int interp_fd;        /* a script's interpreter, O_PATH; -1: not a script */
  char interp[256];     /* the #! line's interpreter, as written */
  char interp_arg[256]; /* its optional argument ("" : none) */
  bool has_interp_arg;
  char resolved[PATH_MAX]; /* the file's name on the host; "" when unknown */
  bool trusted;
  char why[768]; /* not trusted: why */
};

void sr_hook_files_init(struct sr_hook_file *f);
void sr_hook_files_close(struct sr_hook_file *f);

/* Opens path once (O_PATH) and judges what it opened: a regular file, owned by root and
 * writable by nobody else, in root-owned directories nobody else can write, that its own name
 * on the host opens too (a magic link into another mount namespace does not qualify), outside
 * the places and the engines' image stores; a script (#!) also needs an interpreter that is
 * such a file, an ELF program, and no env-style launcher.  Never fails: f says what it found
 * (f->fd < 0: the path did not open). */
void sr_hook_files_open(const char *path, const struct sr_hook_places *pl, struct sr_hook_file *f);

/* The policy's fact about f, for profile p (which allow entries name this same file);
 * allocations in a.  -1: out of memory. */
int sr_hook_files_fact(const struct sr_hook_file *f, const struct sr_policy_profile *p,
                       struct sr_arena *a, struct sr_policy_hook_fact *out, sr_error_t *err);

/* The bundle's and the rootfs's names (as given and canonical) into facts->tenant_dirs. */
void sr_hook_files_places_tenant_dirs(const struct sr_hook_places *pl, struct sr_arena *a,
                                      struct sr_policy_facts *facts);

#endif
