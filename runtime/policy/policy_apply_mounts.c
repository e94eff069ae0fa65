/* The policy's mounts (sections 8 and 12), the read-only root and its tmpfs (section 1), and
 * the masked and read-only paths (section 6): everything that names a path. */
#include "build.h"

#include "policy_apply_internal.h"

#include "mount_options.h"
#include "mount_paths.h"
#include "path.h"

#include <inttypes.h>
#include <linux/mount.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>

/* ---- Paths ------------------------------------------------------------------------------- */

/* What config.json names, cleaned (oci/common/path.h) for comparing; the runtime resolves the
 * real thing in the rootfs. */
static char *clean_path(struct sr_arena *a, const char *p)
{
  char *out = sr_arena_alloc(a, strlen(p) + 2);
  if (out)
    sr_path_clean(p, out);
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

/* ---- 8, 12. Mounts, cwd ------------------------------------------------------------------ */

/* path is below one of the profile's directories (a knob's list). */
static bool listed_under(char **dirs, size_t n, const char *path)
{
  for (size_t i = 0; path && i < n; i++)
    if (path_under(path, dirs[i]))
      return true;
  return false;
}

/* A host object the container would get (a bind source, the root filesystem), judged on the
 * facts the runtime took from the very descriptor it then mounts: what the object is and where
 * it really lies, never the name config.json gives it. */
static int judge_host_object(struct sr_pa_ctx *x, const char *what, const char *field,
                             const char *asked, const char *shown,
                             const struct sr_policy_mount_fact *mf)
{
  const char *name = x->name;
  bool sockets_ok = listed_under(x->p->allow_sockets, x->p->n_allow_sockets, mf->resolved);
  /* A denied path under another name: a symlink, a hard link, a second mount view. */
  if (mf->source_denied && mf->denied_reason)
    return sr_policy_apply_refuse(
        x, field, asked, "%s: \"%s\" is, contains or is below the denied host path \"%s\" (%s)",
        what, shown, mf->denied_path ? mf->denied_path : shown, mf->denied_reason);
  if (mf->source_denied)
    return sr_policy_apply_refuse(x, field, asked,
                                  "%s: \"%s\" is or contains the denied host path \"%s\"", what,
                                  shown, mf->denied_path ? mf->denied_path : shown);
  if (mf->source_is_symlink_out)
    return sr_policy_apply_refuse(
        x, field, asked,
        "%s: \"%s\" resolves through a symbolic link that leads out of the "
        "directory it names",
        what, shown);
  if (mf->source_on_proc_or_sysfs)
    /* The host's /sys/firmware bound at /fw: the masks name /proc and /sys only. */
    return sr_policy_apply_refuse(
        x, field, asked,
        "%s: \"%s\" is on the host's proc or sysfs filesystem: the masked and "
        "read-only paths name /proc and /sys, a view of it elsewhere would carry "
        "none of them",
        what, shown);
  if (mf->location_unknown)
    return sr_policy_apply_refuse(
        x, field, asked,
        "%s: \"%s\": where it lies in its filesystem cannot be told (deleted, or "
        "outside the runtime's root), so it cannot be told apart from a denied "
        "host path",
        what, shown);
  /* A hard link elsewhere to a file below /root is that file. */
  if (mf->hard_links > 1 &&
      !listed_under(x->p->allow_hard_links, x->p->n_allow_hard_links, mf->resolved))
    return sr_policy_apply_refuse(
        x, field, asked,
        "%s: \"%s\" is a regular file with %u hard links on the filesystem of "
        "the denied host path \"%s\": another of its names may lie below it "
        "(profiles.%s.mounts.allowHardLinks lists paths that may be bound anyway)",
        what, shown, mf->hard_links, mf->hard_link_tree ? mf->hard_link_tree : "?", name);
  /* A host daemon's socket (or FIFO) bound in is a line to that daemon, as root. */
  if ((mf->is_socket || mf->is_fifo) && !sockets_ok)
    return sr_policy_apply_refuse(
        x, field, asked,
        "%s: \"%s\" is a %s: it would connect the container to a host process "
        "(profiles.%s.mounts.allowSockets lists the directories whose sockets "
        "and FIFOs may be bound)",
        what, shown, mf->is_socket ? "unix socket" : "FIFO", name);
  if (mf->socket_dir && !sockets_ok)
    return sr_policy_apply_refuse(
        x, field, asked,
        "%s: \"%s\" is, contains or is below the daemon socket directory "
        "\"%s\": it would connect the container to host daemons "
        "(profiles.%s.mounts.allowSockets lists the directories that may be bound)",
        what, shown, mf->socket_dir, name);
  if (mf->is_socket || mf->is_fifo || mf->socket_dir || mf->hard_links > 1)
    return sr_policy_apply_allow(
        x, field, asked,
        P("%s listed in profiles.%s.mounts.%s", mf->resolved, name,
          mf->hard_links > 1 && !mf->is_socket && !mf->is_fifo && !mf->socket_dir
              ? "allowHardLinks"
              : "allowSockets"));
  return sr_policy_apply_allow(x, field, asked, "not a denied host path");
}

int sr_policy_apply_mounts_check_root(struct sr_pa_ctx *x, const struct sr_policy_facts *facts,
                                      const struct sr_config *c)
{
  x->out->rootfs_idmap = true;
  /* No facts (the pure policy's own tests): nothing is known of the host's root. */
  if (facts == NULL || !facts->have_root || facts->root.resolved == NULL)
    return 0;
  TRY(judge_host_object(x, "root.path", "root.path", sr_policy_render_text_str(x->a, c->root_path),
                        c->root_path, &facts->root));
  char *asked = sr_policy_render_text_str(x->a, c->root_path);
  if (facts->root_is_overlay && facts->root_overlay_engine)
    /* The engine's image: rebuilt from its idmapped layers. */
    return sr_policy_apply_allow(
        x, "root.path", asked,
        P("the engine's overlay for this bundle (%s): rebuilt from its layers "
          "idmapped to the container's user namespace",
          facts->root_overlay_engine));
  if (facts->root_is_overlay) {
    /* Another container's root filesystem, or any overlay of the host, idmapped would be read
     * as its owners, and written (mount points are made in the engine's overlay). */
    int r = sr_policy_apply_change(
        x, "root.path", asked, "\"not idmapped\"",
        P("%s: mounted as it is, its files the host's, unmapped (nobody) "
          "inside, and no mount point is made in it",
          facts->root_overlay_not ? facts->root_overlay_not : "not this bundle's engine overlay"));
    TRY(r);
    if (r)
      x->out->rootfs_idmap = false;
    return 0;
  }
  /* Mapping ids is granting them: idmapped, a host directory named as root.path would be the
   * container root's as on-disk root (its 0600 files read, files made as root there). */
  if (facts->root_idmappable)
    return sr_policy_apply_allow(
        x, "root.path", asked,
        P("idmapped to the container's user namespace (in %s)", facts->root_idmappable));
  int r = sr_policy_apply_change(
      x, "root.path", asked, "\"not idmapped\"",
      P("a directory outside the bundle and profiles.%s.rootfs.idmapPaths is mounted as it is: "
        "its files are the host's, unmapped (nobody) inside",
        x->name));
  TRY(r);
  if (r)
    x->out->rootfs_idmap = false;
  return 0;
}

/* linux.seccomp.listenerPath: seerun connects to it as host root and hands it the
 * container's notification descriptor.  A socket anywhere but in the denied paths (the
 * engines' sockets, the state roots) and the daemon socket directories (D-Bus, systemd),
 * unless mounts.allowSockets lists its directory: a daemon must not get a connection from
 * host root that a config field asked for. */
int sr_policy_apply_mounts_check_listener(struct sr_pa_ctx *x, const struct sr_policy_facts *facts,
                                          const struct sr_config *c)
{
  const struct sr_seccomp *sc = c->linux_.seccomp;
  const char *field = "linux.seccomp.listenerPath";
  /* No facts (the pure policy's tests), or not opened: the connect reports a missing one. */
  if (sc == NULL || sc->listener_path == NULL || facts == NULL || !facts->have_listener ||
      facts->listener.resolved == NULL)
    return 0;
  const struct sr_policy_mount_fact *mf = &facts->listener;
  const char *asked = sr_policy_render_text_str(x->a, sc->listener_path);
  const char *name = x->name;
  bool sockets_ok = listed_under(x->p->allow_sockets, x->p->n_allow_sockets, mf->resolved);
  if (mf->source_denied && !sockets_ok)
    return sr_policy_apply_refuse(
        x, field, asked,
        "%s: \"%s\" is or is below the denied host path \"%s\"%s%s%s: seerun "
        "would connect to it as host root (profiles.%s.mounts.allowSockets lists "
        "the directories whose sockets may be connected to)",
        field, sc->listener_path, mf->denied_path ? mf->denied_path : sc->listener_path,
        mf->denied_reason ? " (" : "", mf->denied_reason ? mf->denied_reason : "",
        mf->denied_reason ? ")" : "", name);
  if (mf->in_socket_dir && !sockets_ok)
    return sr_policy_apply_refuse(
        x, field, asked,
        "%s: \"%s\" is below the daemon socket directory \"%s\": seerun would "
        "connect to a host daemon as host root (profiles.%s.mounts.allowSockets "
        "lists the directories whose sockets may be connected to)",
        field, sc->listener_path, mf->in_socket_dir, name);
  if (!mf->is_socket)
    return sr_policy_apply_refuse(x, field, asked, "%s: \"%s\" (%s) is no unix socket", field,
                                  sc->listener_path, mf->resolved);
  if (mf->source_denied || mf->in_socket_dir)
    return sr_policy_apply_allow(
        x, field, asked, P("%s listed in profiles.%s.mounts.allowSockets", mf->resolved, name));
  return sr_policy_apply_allow(x, field, asked,
                               "a unix socket outside the denied paths and daemon "
                               "socket directories");
}

/* The options of a bind, with nosuid and nodev (and their recursive forms for rbind). */
static int add_nosuid_nodev(struct sr_pa_ctx *x, struct sr_mount *m, char ***out, size_t *n)
{
  static const char *const drop[] = {"suid", "dev", "rsuid", "rdev"};
  static const char *const add_plain[] = {"nosuid", "nodev"};
  static const char *const add_rec[] = {"rnosuid", "rnodev"};
  char **v = sr_arena_array(x->a, m->n_options + 5, sizeof(char *));
  size_t k = 0;
  if (v == NULL)
    return sr_policy_apply_oom(x);
  for (size_t j = 0; j < m->n_options; j++) {
    bool skip = false;
    for (size_t d = 0; d < sizeof(drop) / sizeof(drop[0]); d++)
      skip = skip || strcmp(m->options[j], drop[d]) == 0;
    if (!skip)
      v[k++] = m->options[j];
  }
  for (size_t d = 0; d < 2; d++)
    if (!sr_policy_apply_in_list(v, k, add_plain[d]))
      v[k++] = (char *)add_plain[d];
  if (m->opts.rbind)
    for (size_t d = 0; d < 2; d++)
      if (!sr_policy_apply_in_list(v, k, add_rec[d]))
        v[k++] = (char *)add_rec[d];
  v[k] = NULL;
  *out = v;
  *n = k;
  return 0;
}

/* The first of the host ids [a, b) outside the host ranges of the container's own mappings;
 * b when it holds them all. */
static uint64_t first_unheld(const struct sr_id_map *own, size_t n_own, uint64_t a, uint64_t b)
{
  while (a < b) {
    bool moved = false;
    for (size_t j = 0; j < n_own; j++) {
      uint64_t s = own[j].host_id, e = s + own[j].size;
      if (s <= a && a < e) {
        a = e;
        moved = true;
      }
    }
    if (!moved)
      return a;
  }
  return b;
}

/* An idmapped mount whose mapping line is "containerID hostID size" (what the user namespace
 * of the mount is written with) shows on-disk id containerID+k as host id hostID+k: a process
 * holding host id hostID+k creates and opens files there as on-disk id containerID+k.  So the
 * container acts on disk as containerID + (K - hostID) for every host id K it holds in
 * [hostID, hostID+size).  own: the host ranges it holds; NULL: not known here (seerun's own
 * user namespace on a range of the pool, a pod's, or a joined one), when only an identity
 * line is harmless whatever the range.  Writes the first on-disk id that widens into *disk. */
static bool idmap_widens(const struct sr_id_map *mm, size_t n, const struct sr_id_map *own,
                         size_t n_own, uint64_t *disk)
{
  for (size_t i = 0; i < n; i++) {
    uint64_t c = mm[i].container_id, h = mm[i].host_id, sz = mm[i].size;
    if (c == h)
      continue; /* identity: as without the idmap */
    if (own == NULL) {
      *disk = c;
      return true;
    }
    for (size_t j = 0; j < n_own; j++) {
      uint64_t s = own[j].host_id, e = s + own[j].size;
      uint64_t lo = h > s ? h : s, hi = h + sz < e ? h + sz : e;
      if (lo < hi && (*disk = first_unheld(own, n_own, c + (lo - h), c + (hi - h))) < c + (hi - h))
        return true;
    }
  }
  return false;
}

/* An idmapped mount lets the container act on that tree as the on-disk ids its mapping
 * names: mapping on-disk 0 onto container root writes setuid-root files onto the host and
 * reads root's 0600 files, read-only or not.  So the mapping (the mount's own, or with
 * "idmap" and none, the container's user namespace's) may only let it act as host ids its own
 * user namespace already holds; below a directory of profiles.<name>.mounts.idmappable (a
 * volume store the engine idmaps) anything goes.  Judged here, with config.json's index,
 * before the profile's tmpfs are put first. */
static int check_idmap(struct sr_pa_ctx *x, size_t i, const struct sr_mount *m,
                       const struct sr_linux *l, const struct sr_policy_mount_fact *mf)
{
  bool explicit_maps = m->n_uid_mappings > 0 || m->n_gid_mappings > 0;
  if (!(m->opts.idmap || m->opts.ridmap || explicit_maps))
    return 0;
  const char *field = explicit_maps ? P("mounts[%zu].uidMappings", i) : P("mounts[%zu].options", i);
  const char *asked = explicit_maps ? "\"mappings\"" : "\"idmap\"";
  if (mf && mf->idmappable)
    return sr_policy_apply_allow(
        x, field, asked,
        P("the source is below \"%s\" (profiles.%s.mounts.idmappable)", mf->idmappable, x->name));
  /* The container's own ids are known only from its own new user namespace's mappings. */
  const struct sr_namespace *user = &l->namespaces[SR_NS_USER];
  bool known = user->present && user->path == NULL;
  const char *kind[2] = {"uid", "gid"};
  const struct sr_id_map *own[2] = {known ? l->uid_mappings : NULL, known ? l->gid_mappings : NULL};
  size_t n_own[2] = {l->n_uid_mappings, l->n_gid_mappings};
  const struct sr_id_map *mm[2] = {m->uid_mappings, m->gid_mappings};
  size_t n_mm[2] = {m->n_uid_mappings, m->n_gid_mappings};
  for (int k = 0; k < 2; k++) {
    /* "idmap" without mappings: the container's user namespace is the mount's. */
    const struct sr_id_map *maps = explicit_maps ? mm[k] : own[k];
    size_t n = explicit_maps ? n_mm[k] : n_own[k];
    uint64_t disk = 0;
    /* Not known (seerun's range, a pod's, a joined one): its container ids 0... are on-disk
     * ids, which it does not hold as host ids. */
    bool widens = (!explicit_maps && !known) || idmap_widens(maps, n, own[k], n_own[k], &disk);
    if (!widens)
      continue;
    const char *which = explicit_maps ? (k ? "gidMappings" : "uidMappings") : "options";
    return sr_policy_apply_refuse(
        x, P("mounts[%zu].%s", i, which), asked,
        "mounts[%zu].%s: an idmapped bind of \"%s\" lets the container act as on-disk %s "
        "%" PRIu64 ", %s: not allowed by profile \"%s\" (no directory of "
        "profiles.%s.mounts.idmappable is above the source)",
        i, which, m->source ? m->source : "", kind[k], disk,
        known ? "outside the host ids its user namespace maps"
              : "and its host ids are not in config.json (then only identity mappings are "
                "allowed)",
        x->name, x->name);
  }
  return sr_policy_apply_allow(x, field, asked,
                               "maps only host ids the container's user namespace holds");
}

/* proc and sysfs only at /proc and /sys: the masked and read-only paths name /proc/... and
 * /sys/..., so a second instance anywhere else (/p2, /proc/sys/kernel) would show /proc/keys or
 * /sys/firmware unmasked.  Refused rather than masked there too: the masks are the profile's
 * list of paths below /proc and /sys, and one instance at the one place keeps that list whole
 * (runc lets an instance elsewhere through). */
static int check_pseudo_fs_place(struct sr_pa_ctx *x, size_t i, const struct sr_mount *m)
{
  const char *home = strcmp(m->type, "proc") == 0    ? "/proc"
                     : strcmp(m->type, "sysfs") == 0 ? "/sys"
                                                     : NULL;
  if (home == NULL)
    return 0;
  char *cl = clean_path(x->a, m->destination);
  if (cl == NULL)
    return sr_policy_apply_oom(x);
  if (strcmp(cl, home) == 0)
    return 0;
  return sr_policy_apply_refuse(
      x, P("mounts[%zu].destination", i), sr_policy_render_text_str(x->a, m->destination),
      "mounts[%zu].destination: a %s filesystem at \"%s\": proc is mounted only "
      "at /proc and sysfs only at /sys (profile \"%s\": the masked and read-only "
      "paths name /proc and /sys, an instance elsewhere would carry none of them)",
      i, m->type, m->destination, x->name);
}

/* A setuid binary or a device node on the host must not work inside: nosuid,nodev on m
 * (rnosuid,rnodev too for rbind), and no option that clears them.  Recorded either way. */
static int force_nosuid_nodev(struct sr_pa_ctx *x, size_t i, struct sr_mount *m, const char *why)
{
  const unsigned long need = MS_NOSUID | MS_NODEV;
  const uint64_t rneed = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
  const uint64_t rclr = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
  char *ofield = P("mounts[%zu].options", i);
  if (ofield == NULL)
    return sr_policy_apply_oom(x);
  bool ok = (m->opts.flags & need) == need && (m->opts.clear & need) == 0 &&
            (m->opts.rec_attr_clr & rclr) == 0 &&
            (!m->opts.rbind || (m->opts.rec_attr_set & rneed) == rneed);
  if (ok) {
    if (m->opts.flags & MS_REMOUNT)
      return sr_policy_apply_allow(x, ofield,
                                   sr_policy_render_text_strv(x->a, m->options, m->n_options),
                                   "a remount with nosuid,nodev");
    return 0;
  }
  char **opts = NULL;
  size_t n = 0;
  TRY(add_nosuid_nodev(x, m, &opts, &n));
  int r =
      sr_policy_apply_change(x, ofield, sr_policy_render_text_strv(x->a, m->options, m->n_options),
                             sr_policy_render_text_strv(x->a, opts, n), why);
  TRY(r);
  if (r) {
    struct sr_mount_opts mo;
    if (sr_mount_options_parse(x->a, opts, n, ofield, &mo, x->err) < 0)
      return -1;
    m->options = opts;
    m->n_options = n;
    m->opts = mo;
  }
  return 0;
}

/* The host paths a filesystem mount names (overlay's lowerdir, lowerdir+, datadir+, upperdir,
 * workdir; any other type's source or "*dir=" option) are host directories the container gets
 * as surely as a bind's source: judged as one, on the descriptor the runtime mounts (an
 * "overlay" of lowerdir=/root, or upperdir in another container's state, is no way round the
 * checks on binds).  What seerun does not open itself, the kernel would look up by name as
 * the container's root: refused. */
static int check_option_paths(struct sr_pa_ctx *x, const struct sr_policy_facts *facts, size_t i,
                              struct sr_mount *m)
{
  const char *name = x->name;
  char *ofield = P("mounts[%zu].options", i);
  if (ofield == NULL)
    return sr_policy_apply_oom(x);
  if (sr_mount_paths_source_is_path(m))
    return sr_policy_apply_refuse(
        x, P("mounts[%zu].source", i), sr_policy_render_text_str(x->a, m->source),
        "mounts[%zu].source: \"%s\": a \"%s\" filesystem's source is a host "
        "path the kernel opens by name, which seerun does not judge (profile "
        "\"%s\": bind the directory, or an overlay of it, instead)",
        i, m->source, m->type, name);
  struct sr_mount_data d;
  sr_error_t e = NULL;
  if (sr_mount_paths_data_split(x->a, m, ofield, &d, &e) < 0) {
    char *why = sr_error_text(e);
    sr_error_free(&e);
    int r = sr_policy_apply_refuse(x, ofield,
                                   sr_policy_render_text_strv(x->a, m->options, m->n_options), "%s",
                                   why ? why : ofield);
    free(why);
    return r;
  }
  const struct sr_policy_mount_fact *mf = facts && facts->mounts ? &facts->mounts[i] : NULL;
  for (size_t k = 0; k < d.n_paths; k++) {
    const struct sr_mount_path *p = &d.paths[k];
    char *asked = sr_policy_render_text_str(x->a, p->option);
    char *what = P("mounts[%zu].options: %s", i, p->option);
    char *cl = p->path[0] == '/' ? clean_path(x->a, p->path) : NULL;
    if (what == NULL || (p->path[0] == '/' && cl == NULL))
      return sr_policy_apply_oom(x);
    if (p->kind == SR_MOUNT_PATH_UNJUDGED)
      TRY(sr_policy_apply_refuse(
          x, ofield, asked,
          "%s: a host path in the options of a \"%s\" mount, which the kernel "
          "would open by name: seerun judges and opens only overlay's lowerdir, "
          "lowerdir+, datadir+, upperdir and workdir (profile \"%s\")",
          what, m->type, name));
    else if (cl && through_proc(cl))
      TRY(sr_policy_apply_refuse(
          x, ofield, asked,
          "%s: \"%s\" is under /proc (or /dev/fd): a /proc/self/fd or "
          "/proc/<pid>/root path can reach the host's filesystem (CVE-2024-21626 "
          "class)",
          what, p->path));
    else if (cl == NULL && has_dotdot(p->path))
      TRY(sr_policy_apply_refuse(
          x, ofield, asked, "%s: \"%s\": a path relative to the bundle must not contain \"..\"",
          what, p->path));
    else if (mf == NULL || k >= mf->n_paths)
      TRY(sr_policy_apply_refuse(
          x, ofield, asked, "%s: no host facts were computed for this path (runtime error)", what));
    else if (mf->paths[k].resolved == NULL && !mf->paths[k].source_is_symlink_out)
      TRY(sr_policy_apply_refuse(x, ofield, asked,
                                 "%s: \"%s\" cannot be opened as a directory: it is judged, and "
                                 "mounted, only as the directory it names",
                                 what, p->path));
    else
      TRY(judge_host_object(x, what, ofield, asked, p->path, &mf->paths[k]));
  }
  if (d.n_paths == 0 || !sr_mount_paths_is_overlay(m))
    return 0;
  /* Its layers are host directories, as a bind's source is. */
  return force_nosuid_nodev(x, i, m, "an overlay of host directories gets nosuid,nodev like a "
                                     "bind: a setuid binary or a device node from the host "
                                     "must not work inside");
}

/* A remount's options go to the filesystem already at its destination (fspick): one naming a
 * host path (a layer, "*dir=") would be a lookup by name that nothing judged. */
static int check_remount_paths(struct sr_pa_ctx *x, size_t i, const struct sr_mount *m)
{
  char *ofield = P("mounts[%zu].options", i);
  if (ofield == NULL)
    return sr_policy_apply_oom(x);
  struct sr_mount_data d;
  sr_error_t e = NULL;
  int r = sr_mount_paths_data_split(x->a, m, ofield, &d, &e);
  sr_error_free(&e);
  if (r == 0 && d.n_paths == 0)
    return 0;
  return sr_policy_apply_refuse(
      x, ofield, sr_policy_render_text_strv(x->a, m->options, m->n_options),
      "%s: a remount naming a host path (%s): it would be looked up by name, "
      "never judged (profile \"%s\")",
      ofield, r == 0 ? d.paths[0].option : "options that do not parse", x->name);
}

int sr_policy_apply_mounts(struct sr_pa_ctx *x, const struct sr_policy_facts *facts,
                           struct sr_config *c)
{
  const char *name = x->name;
  for (size_t i = 0; i < c->n_mounts; i++) {
    struct sr_mount *m = &c->mounts[i];
    TRY(check_idmap(x, i, m, &c->linux_,
                    facts && facts->mounts && (m->opts.bind || m->opts.rbind) ? &facts->mounts[i]
                                                                              : NULL));
    if (!(m->opts.bind || m->opts.rbind)) {
      /* A remount creates no filesystem; any other type is a new one the runtime mounts as
       * root: a disk ("ext4" of /dev/sda1) or an overlay of host directories would bypass
       * every check on bind sources. */
      if (m->opts.flags & MS_REMOUNT) {
        /* A remount changes the flags of whatever is mounted at its destination, a host bind
         * included ("remount,dev,suid" would take off the nosuid,nodev forced on it below).
         * Forced on it like on a bind, rather than refused: that can only narrow what is
         * there (a remount of the container's own tmpfs, "ro" or "size=", keeps working), and
         * the dropped suid/dev/rsuid/rdev can clear neither flag from any mount. */
        TRY(force_nosuid_nodev(x, i, m, "a remount gets nosuid,nodev like a bind: it must not "
                                        "take them off a bind of the host at its destination"));
        TRY(check_remount_paths(x, i, m));
        continue;
      }
      TRY(check_pseudo_fs_place(x, i, m));
      if (sr_policy_apply_in_list(x->p->mount_types, x->p->n_mount_types, m->type)) {
        TRY(check_option_paths(x, facts, i, m));
        continue;
      }
      TRY(sr_policy_apply_refuse(
          x, P("mounts[%zu].type", i), sr_policy_render_text_str(x->a, m->type),
          "mounts[%zu].type: filesystem type \"%s\" is not allowed by profile \"%s\" "
          "(profiles.%s.mounts.allowedTypes)",
          i, m->type, name, name));
      continue;
    }
    char *field = P("mounts[%zu].source", i);
    char *asked = sr_policy_render_text_str(x->a, m->source);
    const struct sr_policy_mount_fact *mf = facts && facts->mounts ? &facts->mounts[i] : NULL;
    char *cl = m->source[0] == '/' ? clean_path(x->a, m->source) : NULL;
    if (m->source[0] == '/' && cl == NULL)
      return sr_policy_apply_oom(x);
    if (cl && through_proc(cl))
      TRY(sr_policy_apply_refuse(
          x, field, asked,
          "mounts[%zu].source: \"%s\" is under /proc (or /dev/fd): a /proc/self/fd or "
          "/proc/<pid>/root path can reach the host's filesystem (CVE-2024-21626 class)",
          i, m->source));
    else if (cl == NULL && has_dotdot(m->source))
      TRY(sr_policy_apply_refuse(
          x, field, asked,
          "mounts[%zu].source: \"%s\": a source relative to the bundle must not contain "
          "\"..\"",
          i, m->source));
    else if (mf == NULL)
      TRY(sr_policy_apply_refuse(
          x, field, asked,
          "mounts[%zu].source: \"%s\": no host facts were computed for this bind "
          "(runtime error)",
          i, m->source));
    else
      TRY(judge_host_object(x, P("mounts[%zu].source", i), field, asked, m->source, mf));

    TRY(force_nosuid_nodev(x, i, m, "bind mounts get nosuid,nodev: a setuid binary or a "
                                    "device node from the host must not work inside"));
  }
  return 0;
}

int sr_policy_apply_mounts_check_cwd(struct sr_pa_ctx *x, const struct sr_process *proc)
{
  if (proc == NULL || proc->cwd == NULL)
    return 0;
  char *cl = clean_path(x->a, proc->cwd);
  if (cl == NULL)
    return sr_policy_apply_oom(x);
  if (through_proc(cl))
    return sr_policy_apply_refuse(
        x, "process.cwd", sr_policy_render_text_str(x->a, proc->cwd),
        "process.cwd: \"%s\" is under /proc (or /dev/fd): a descriptor the runtime "
        "leaked there is a host directory (CVE-2024-21626)",
        proc->cwd);
  return 0;
}

/* ---- 1. Read-only root and tmpfs --------------------------------------------------------- */

int sr_policy_apply_mounts_rootfs(struct sr_pa_ctx *x, struct sr_config *c,
                                  const struct requests *rq)
{
  const struct sr_policy_profile *p = x->p;
  const char *name = x->name;
  if (p->rootfs.readonly && !c->root_readonly) {
    int r = sr_policy_apply_change(
        x, "root.readonly", "false", "true",
        P("the root filesystem is read-only (profiles.%s.rootfs.readonly)", name));
    TRY(r);
    if (r)
      c->root_readonly = true;
  } else
    TRY(sr_policy_apply_allow(x, "root.readonly", c->root_readonly ? "true" : "false",
                              c->root_readonly ? "read-only, as asked"
                                               : P("profiles.%s.rootfs.readonly is false", name)));

  size_t tmp_index = p->rootfs.n_tmpfs;
  for (size_t t = 0; t < p->rootfs.n_tmpfs; t++)
    if (strcmp(p->rootfs.tmpfs[t].path, "/tmp") == 0)
      tmp_index = t;
  const char *afield = "annotations." SR_ANNOTATION_TMP_SIZE;
  if (rq->has_tmp_size) {
    char *asked = sr_policy_render_text_str(x->a, rq->tmp_size_text);
    if (!p->rootfs.readonly || tmp_index == p->rootfs.n_tmpfs)
      TRY(sr_policy_apply_refuse(
          x, afield, asked,
          "annotation %s=%s: profile \"%s\" adds no tmpfs at /tmp (profiles.%s.rootfs)",
          SR_ANNOTATION_TMP_SIZE, rq->tmp_size_text, name, name));
    else if (rq->tmp_size > p->rootfs.tmpfs[tmp_index].max_size)
      TRY(sr_policy_apply_refuse(x, afield, asked,
                                 "annotation %s=%s: not allowed by profile \"%s\" "
                                 "(profiles.%s.rootfs.tmpfs[%zu].maxSize is %" PRIu64 ")",
                                 SR_ANNOTATION_TMP_SIZE, rq->tmp_size_text, name, name, tmp_index,
                                 p->rootfs.tmpfs[tmp_index].max_size));
    else
      TRY(sr_policy_apply_allow(
          x, afield, asked, P("within profiles.%s.rootfs.tmpfs[%zu].maxSize", name, tmp_index)));
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
    return sr_policy_apply_oom(x);
  for (size_t t = 0; t < p->rootfs.n_tmpfs; t++) {
    const struct sr_policy_tmpfs *tf = &p->rootfs.tmpfs[t];
    char *field = P("mounts[destination=%s]", tf->path);
    size_t conflict = c->n_mounts;
    for (size_t i = 0; i < c->n_mounts && conflict == c->n_mounts; i++) {
      char *d = clean_path(x->a, c->mounts[i].destination);
      if (d == NULL)
        return sr_policy_apply_oom(x);
      if (path_under(d, tf->path) || (strcmp(d, "/") != 0 && path_under(tf->path, d)))
        conflict = i;
    }
    if (conflict < c->n_mounts) {
      TRY(sr_policy_apply_allow(x, field,
                                sr_policy_render_text_str(x->a, c->mounts[conflict].destination),
                                P("config.json mounts[%zu] at \"%s\": no tmpfs added at %s",
                                  conflict, c->mounts[conflict].destination, tf->path)));
      continue;
    }
    uint64_t size = (t == tmp_index && rq->has_tmp_size) ? rq->tmp_size : tf->size;
    struct sr_mount *m = &added[n_added];
    char **opts = sr_arena_array(x->a, 6, sizeof(char *));
    size_t n = 0;
    if (opts == NULL)
      return sr_policy_apply_oom(x);
    opts[n++] = "nosuid";
    opts[n++] = "nodev";
    if (tf->noexec)
      opts[n++] = "noexec";
    opts[n++] = P("mode=%o", (unsigned)tf->mode);
    opts[n++] = P("size=%" PRIu64, size);
    if (opts[n - 1] == NULL || opts[n - 2] == NULL)
      return sr_policy_apply_oom(x);
    m->field = field;
    m->destination = tf->path;
    m->type = "tmpfs";
    m->source = "tmpfs";
    m->options = opts;
    m->n_options = n;
    if (field == NULL)
      return sr_policy_apply_oom(x);
    if (sr_mount_options_parse(x->a, opts, n, field, &m->opts, x->err) < 0)
      return -1;
    int r = sr_policy_apply_change(
        x, field, "null", sr_policy_render_text_mount(x->a, m),
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
    return sr_policy_apply_oom(x);
  memcpy(all, added, n_added * sizeof(*all));
  if (c->n_mounts)
    memcpy(all + n_added, c->mounts, c->n_mounts * sizeof(*all));
  c->mounts = all;
  c->n_mounts += n_added;
  return 0;
}

/* ---- 6. Masked and read-only paths ------------------------------------------------------- */

int sr_policy_apply_mounts_union_paths(struct sr_pa_ctx *x, const char *field, const char *knob,
                                       char ***v, size_t *n, char **add, size_t n_add)
{
  char **out = sr_arena_array(x->a, *n + n_add + 1, sizeof(char *));
  char **clean = sr_arena_array(x->a, *n + n_add + 1, sizeof(char *));
  size_t k = 0;
  if (out == NULL || clean == NULL)
    return sr_policy_apply_oom(x);
  for (size_t i = 0; i < *n; i++) {
    out[k] = (*v)[i];
    if ((clean[k++] = clean_path(x->a, (*v)[i])) == NULL)
      return sr_policy_apply_oom(x);
  }
  size_t before = k;
  for (size_t i = 0; i < n_add; i++)
    if (!sr_policy_apply_in_list(clean, k, add[i])) {
      out[k] = add[i];
      clean[k++] = add[i];
    }
  out[k] = NULL;
  char *asked = sr_policy_render_text_strv(x->a, *v, *n);
  if (k == before)
    return sr_policy_apply_allow(x, field, asked,
                                 P("already lists every path of profiles.%s.%s", x->name, knob));
  int r = sr_policy_apply_change(x, field, asked, sr_policy_render_text_strv(x->a, out, k),
                                 P("the paths of profiles.%s.%s are always added", x->name, knob));
  TRY(r);
  if (r) {
    *v = out;
    *n = k;
  }
  return 0;
}
