/* Files changed (activity_files.h): the baseline at create, the walk when the container stops,
 * and the record's "files" member. */
#include "build.h"

#include "activity_files.h"

#include "cleanup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#define TABLE_SLOTS (SR_ACT_BASE_ENTRIES * 2) /* a power of two */

struct base_ent {
  uint64_t hash;
  uint32_t off, len;
  uint8_t place;
  bool seen;
  uint16_t mode;
  uint32_t uid, gid;
  uint64_t ino, size;
  int64_t mtime_ns, ctime_ns;
};

struct listed {
  uint8_t change, place;
  bool cut; /* the path was longer than SR_ACT_NAME_KEEP */
  uint16_t mode;
  uint64_t size;
  size_t len;
  char path[SR_ACT_NAME_KEEP];
};

struct sr_act_files {
  struct sr_act_places ps;
  struct timespec base_time; /* when the baseline was taken (the coarse clock files get) */
  bool walked;
  uint64_t entries; /* looked at by the walk in progress */
  struct timespec deadline;
  uint64_t limit;
  const char *cut; /* the walk in progress was stopped: "time", "entries" */
  /* baseline */
  struct base_ent *ent;
  size_t n_ent;
  int32_t *slot;
  char *arena;
  size_t arena_used;
  /* changes listed */
  struct listed list[SR_ACT_NCHANGE][SR_ACT_FILES_LISTED];
  size_t n_list[SR_ACT_NCHANGE];
};

struct sr_act_files *sr_activity_files_new(struct sr_act_places *ps)
{
  struct sr_act_files *f = calloc(1, sizeof(*f));
  if (f) {
    f->ent = calloc(SR_ACT_BASE_ENTRIES, sizeof(*f->ent));
    f->slot = malloc(TABLE_SLOTS * sizeof(*f->slot));
    f->arena = malloc(SR_ACT_BASE_BYTES);
  }
  if (f == NULL || f->ent == NULL || f->slot == NULL || f->arena == NULL) {
    sr_activity_files_free(f);
    sr_activity_places_close(ps);
    return NULL;
  }
  memset(f->slot, 0xff, TABLE_SLOTS * sizeof(*f->slot));
  f->ps = *ps;
  ps->n = 0;
  ps->mntns_fd = -1;
  return f;
}

void sr_activity_files_free(struct sr_act_files *f)
{
  if (f == NULL)
    return;
  sr_activity_places_close(&f->ps);
  free(f->ent);
  free(f->slot);
  free(f->arena);
  free(f);
}

/* ---- Names -------------------------------------------------------------------------------- */

void sr_activity_files_render_name(const char *s, size_t len, char *out, size_t size)
{
  static const char hex[] = "0123456789abcdef";
  size_t o = 0;
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)s[i];
    bool plain = c >= 0x20 && c <= 0x7e && c != '\\';
    if (o + (plain ? 1 : 4) + 4 > size) { /* room for this and "..." and the NUL */
      snprintf(out + o, size - o, "...");
      return;
    }
    if (plain) {
      out[o++] = (char)c;
    } else {
      out[o++] = '\\';
      out[o++] = 'x';
      out[o++] = hex[c >> 4];
      out[o++] = hex[c & 15];
    }
  }
  out[o] = '\0';
}

/* ---- The baseline ------------------------------------------------------------------------- */

static uint64_t hash_of(size_t place, const char *rel, size_t len)
{
  uint64_t h = 1469598103934665603ull ^ place;
  for (size_t i = 0; i < len; i++) {
    h ^= (unsigned char)rel[i];
    h *= 1099511628211ull;
  }
  return h;
}

static struct base_ent *lookup(struct sr_act_files *f, size_t place, const char *rel, size_t len)
{
  uint64_t h = hash_of(place, rel, len);
  for (size_t i = h & (TABLE_SLOTS - 1);; i = (i + 1) & (TABLE_SLOTS - 1)) {
    int32_t k = f->slot[i];
    if (k < 0)
      return NULL;
    struct base_ent *e = &f->ent[k];
    if (e->hash == h && e->place == place && e->len == len &&
        memcmp(f->arena + e->off, rel, len) == 0)
      return e;
  }
}

static int64_t ns_of(const struct statx_timestamp *t)
{
  return t->tv_sec * 1000000000ll + t->tv_nsec;
}

/* false: the baseline is full. */
static bool remember(struct sr_act_files *f, size_t place, const char *rel, size_t len,
                     const struct statx *sx)
{
  if (f->n_ent >= SR_ACT_BASE_ENTRIES || f->arena_used + len > SR_ACT_BASE_BYTES)
    return false;
  uint64_t h = hash_of(place, rel, len);
  size_t i = h & (TABLE_SLOTS - 1);
  while (f->slot[i] >= 0)
    i = (i + 1) & (TABLE_SLOTS - 1);
  struct base_ent *e = &f->ent[f->n_ent];
  *e = (struct base_ent){.hash = h,
                         .off = (uint32_t)f->arena_used,
                         .len = (uint32_t)len,
                         .place = (uint8_t)place,
                         .mode = sx->stx_mode,
                         .uid = sx->stx_uid,
                         .gid = sx->stx_gid,
                         .ino = sx->stx_ino,
                         .size = sx->stx_size,
                         .mtime_ns = ns_of(&sx->stx_mtime),
                         .ctime_ns = ns_of(&sx->stx_ctime)};
  memcpy(f->arena + f->arena_used, rel, len);
  f->arena_used += len;
  f->slot[i] = (int32_t)f->n_ent++;
  return true;
}

/* ---- The walk ----------------------------------------------------------------------------- */

#define STATX_WANT                                                                              \
  (STATX_TYPE | STATX_MODE | STATX_UID | STATX_GID | STATX_INO | STATX_SIZE | STATX_MTIME |       \
   STATX_CTIME | STATX_BTIME | STATX_MNT_ID)

typedef void (*visit_fn)(struct sr_act_files *f, size_t place, const char *rel, size_t len,
                         const struct statx *sx);

static bool past(const struct timespec *deadline)
{
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return now.tv_sec > deadline->tv_sec ||
         (now.tv_sec == deadline->tv_sec && now.tv_nsec >= deadline->tv_nsec);
}

/* false: the walk as a whole was stopped (f->cut). */
static bool count_entry(struct sr_act_files *f)
{
  if (f->cut)
    return false;
  if (++f->entries > f->limit)
    f->cut = "entries";
  else if ((f->entries & 255) == 0 && past(&f->deadline))
    f->cut = "time";
  return f->cut == NULL;
}

/* Depth first, one open directory per level; nothing the container named is followed. */
static void walk_place(struct sr_act_files *f, size_t place, visit_fn visit)
{
  struct sr_act_place *pl = &f->ps.p[place];
  struct statx sx;
  if (pl->is_file) {
    if (count_entry(f) &&
        statx(pl->fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_WANT, &sx) == 0)
      visit(f, place, "", 0, &sx);
    return;
  }
  struct {
    DIR *d;
    size_t len;
  } st[SR_ACT_WALK_DEPTH + 1];
  int fd0 = openat(pl->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  st[0].d = fd0 >= 0 ? fdopendir(fd0) : NULL;
  st[0].len = 0;
  if (st[0].d == NULL) {
    if (fd0 >= 0)
      close(fd0);
    pl->unreadable++;
    return;
  }
  /* The place's own root is an entry too (""): its mode and owner (a bound host directory
   * made world-writable), not its times. */
  if (!pl->upper && count_entry(f) &&
      statx(pl->fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_WANT, &sx) == 0)
    visit(f, place, "", 0, &sx);
  static char path[SR_ACT_PATH_MAX + 1]; /* the supervisor is one thread */
  int depth = 0;
  while (depth >= 0) {
    struct dirent *de = f->cut ? NULL : readdir(st[depth].d);
    if (de == NULL) {
      closedir(st[depth--].d);
      continue;
    }
    const char *name = de->d_name;
    if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
      continue;
    if (!count_entry(f))
      continue; /* unwinds */
    size_t nl = strlen(name), base = st[depth].len, len = base + (base ? 1 : 0) + nl;
    if (len > SR_ACT_PATH_MAX) {
      pl->cut = "depth";
      continue;
    }
    if (base)
      path[base] = '/';
    memcpy(path + base + (base ? 1 : 0), name, nl);
    path[len] = '\0';
    int dfd = dirfd(st[depth].d);
    if (statx(dfd, name, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT | AT_STATX_DONT_SYNC, STATX_WANT,
              &sx) < 0)
      continue; /* gone since readdir */
    /* Another mount (a tmpfs over /dev/shm, a device node bound in /dev) is its own place, or
     * not a writable one: not entered, not counted here. */
    if ((sx.stx_mask & STATX_MNT_ID) && pl->mnt_id && sx.stx_mnt_id != pl->mnt_id)
      continue;
    visit(f, place, path, len, &sx);
    if (!S_ISDIR(sx.stx_mode))
      continue;
    if (depth + 1 > SR_ACT_WALK_DEPTH) {
      pl->cut = pl->cut ? pl->cut : "depth";
      continue;
    }
    struct open_how how = {.flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
                           .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
                                      RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV};
    int cfd = (int)syscall(SYS_openat2, dfd, name, &how, sizeof(how));
    struct stat cst;
    if (cfd >= 0 && (fstat(cfd, &cst) < 0 || cst.st_ino != sx.stx_ino)) {
      close(cfd); /* swapped since the statx: not the directory that was looked at */
      cfd = -1;
    }
    DIR *d = cfd >= 0 ? fdopendir(cfd) : NULL;
    if (d == NULL) {
      if (cfd >= 0)
        close(cfd);
      pl->unreadable++;
      continue;
    }
    depth++;
    st[depth].d = d;
    st[depth].len = len;
  }
  if (f->cut)
    pl->cut = f->cut; /* the walk was stopped: what matters more than a depth cut */
}

static void visit_baseline(struct sr_act_files *f, size_t place, const char *rel, size_t len,
                           const struct statx *sx)
{
  if (!remember(f, place, rel, len, sx))
    f->ps.p[place].baseline_cut = true;
}

void sr_activity_files_baseline(struct sr_act_files *f)
{
  clock_gettime(CLOCK_REALTIME_COARSE, &f->base_time);
  clock_gettime(CLOCK_MONOTONIC, &f->deadline);
  f->deadline.tv_nsec += (SR_ACT_BASE_MS % 1000) * 1000000l;
  f->deadline.tv_sec += SR_ACT_BASE_MS / 1000 + f->deadline.tv_nsec / 1000000000l;
  f->deadline.tv_nsec %= 1000000000l;
  f->limit = SR_ACT_BASE_ENTRIES + 1; /* one past: the table says it is full */
  for (size_t i = 0; i < f->ps.n; i++) {
    struct sr_act_place *pl = &f->ps.p[i];
    if (pl->upper)
      continue; /* an upper layer is the change itself */
    f->cut = NULL;
    pl->cut = NULL;
    walk_place(f, i, visit_baseline);
    if (pl->cut)
      pl->baseline_cut = true;
    pl->cut = NULL;
  }
  f->cut = NULL;
  f->entries = 0;
}

static void note(struct sr_act_files *f, size_t place, enum sr_act_change c, const char *rel,
                 size_t len, uint16_t mode, uint64_t size)
{
  struct sr_act_place *pl = &f->ps.p[place];
  pl->n[c]++;
  if (S_ISREG(mode))
    pl->bytes[c] += size; /* a file's contents (a symlink's "size" is its target's length) */
  if (f->n_list[c] >= SR_ACT_FILES_LISTED)
    return;
  struct listed *l = &f->list[c][f->n_list[c]++];
  l->change = (uint8_t)c;
  l->place = (uint8_t)place;
  l->mode = mode;
  l->size = size;
  l->cut = len > sizeof(l->path);
  l->len = l->cut ? sizeof(l->path) : len;
  memcpy(l->path, rel, l->len);
}

static bool after_base(const struct sr_act_files *f, const struct statx_timestamp *t)
{
  return t->tv_sec > f->base_time.tv_sec ||
         (t->tv_sec == f->base_time.tv_sec && t->tv_nsec >= (uint32_t)f->base_time.tv_nsec);
}

/* An entry of an overlay's upper layer: the lower layer says what it changed. */
static void visit_upper(struct sr_act_files *f, size_t place, const char *rel, size_t len,
                        const struct statx *sx)
{
  struct sr_act_place *pl = &f->ps.p[place];
  /* What the lower layer has by that name (nothing followed on the way). */
  struct open_how how = {.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
                         .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
                                    RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV};
  int lfd = (int)syscall(SYS_openat2, pl->lower_fd, rel, &how, sizeof(how));
  struct stat lst;
  bool in_lower = lfd >= 0 && fstat(lfd, &lst) == 0;
  if (lfd >= 0)
    close(lfd);
  if (S_ISCHR(sx->stx_mode) && sx->stx_rdev_major == 0 && sx->stx_rdev_minor == 0) {
    /* A whiteout: the lower entry is gone (its type and size, where it had one). */
    note(f, place, SR_ACT_DELETED, rel, len, in_lower ? (uint16_t)lst.st_mode : 0,
         in_lower ? (uint64_t)lst.st_size : 0);
    return;
  }
  if (in_lower && S_ISDIR(sx->stx_mode) && S_ISDIR(lst.st_mode))
    return; /* a directory copied up for what changed below it */
  note(f, place, in_lower ? SR_ACT_MODIFIED : SR_ACT_ADDED, rel, len, sx->stx_mode,
       sx->stx_size);
}

static void visit_stop(struct sr_act_files *f, size_t place, const char *rel, size_t len,
                       const struct statx *sx)
{
  struct sr_act_place *pl = &f->ps.p[place];
  if (pl->upper) {
    visit_upper(f, place, rel, len, sx);
    return;
  }
  struct base_ent *e = lookup(f, place, rel, len);
  if (e) {
    e->seen = true;
    /* Its mode and owner for everything (a directory made world-writable or setgid in a
     * host volume is a change the host sees); the rest of a directory's own change (its
     * size and times) is in its entries. */
    bool same = e->ino == sx->stx_ino && e->mode == sx->stx_mode && e->uid == sx->stx_uid &&
                e->gid == sx->stx_gid;
    if (same && !S_ISDIR(sx->stx_mode))
      same = e->size == sx->stx_size && e->mtime_ns == ns_of(&sx->stx_mtime) &&
             e->ctime_ns == ns_of(&sx->stx_ctime);
    if (!same)
      note(f, place, SR_ACT_MODIFIED, rel, len, sx->stx_mode, sx->stx_size);
    return;
  }
  if (!pl->baseline_cut) {
    note(f, place, SR_ACT_ADDED, rel, len, sx->stx_mode, sx->stx_size);
    return;
  }
  /* Not in a baseline that was cut: changed if its ctime is later (the code cannot set a
   * ctime back), added if it was born later too (where the file system says). */
  if (!after_base(f, &sx->stx_ctime))
    return;
  bool born = (sx->stx_mask & STATX_BTIME) && after_base(f, &sx->stx_btime);
  note(f, place, born ? SR_ACT_ADDED : SR_ACT_MODIFIED, rel, len, sx->stx_mode, sx->stx_size);
}

/* The order of the walk at stop: "other" (a bind of a host directory, a writable root: what
 * lands there stays), then "output", then "scratch" (what goes with the container). */
static int walk_rank(const struct sr_act_place *pl)
{
  return strcmp(pl->role, "scratch") == 0 ? 2 : strcmp(pl->role, "output") == 0 ? 1 : 0;
}

void sr_activity_files_walk(struct sr_act_files *f)
{
  clock_gettime(CLOCK_MONOTONIC, &f->deadline);
  f->deadline.tv_nsec += (SR_ACT_WALK_MS % 1000) * 1000000l;
  f->deadline.tv_sec += SR_ACT_WALK_MS / 1000 + f->deadline.tv_nsec / 1000000000l;
  f->deadline.tv_nsec %= 1000000000l;
  f->limit = SR_ACT_WALK_ENTRIES;
  f->entries = 0;
  f->cut = NULL;
  /* The places where what the code writes outlives the run first, scratch space last: the
   * bounds are the walk's as a whole, and a tmpfs the code filled must not use them up before
   * a bound host directory is looked at. */
  for (int rank = 0; rank < 3; rank++)
    for (size_t i = 0; i < f->ps.n; i++) {
      if (walk_rank(&f->ps.p[i]) != rank)
        continue;
      f->ps.p[i].cut = NULL;
      if (f->cut)
        f->ps.p[i].cut = f->cut; /* not walked at all */
      else
        walk_place(f, i, visit_stop);
    }
  /* What the baseline had and the walk did not find, where the walk saw all of the place. */
  for (size_t k = 0; k < f->n_ent; k++) {
    struct base_ent *e = &f->ent[k];
    if (!e->seen && f->ps.p[e->place].cut == NULL && !f->ps.p[e->place].upper)
      note(f, e->place, SR_ACT_DELETED, f->arena + e->off, e->len, e->mode, e->size);
  }
  f->walked = true;
  /* The places stay open until the supervisor ends, after the record is written: the last
   * reference to a large tmpfs frees it there and then (seconds for a million files). */
}

/* ---- The record --------------------------------------------------------------------------- */

static const char *type_name(uint16_t mode)
{
  switch (mode & S_IFMT) {
  case S_IFREG: return "file";
  case S_IFDIR: return "dir";
  case S_IFLNK: return "symlink";
  case S_IFIFO: return "fifo";
  case S_IFSOCK: return "socket";
  case S_IFCHR: return "char";
  case S_IFBLK: return "block";
  default: return mode ? "other" : "whiteout";
  }
}

static const char *const change_name[SR_ACT_NCHANGE] = {"added", "modified", "deleted"};
static const char *const bytes_name[SR_ACT_NCHANGE] = {"bytesAdded", "bytesModified",
                                                       "bytesDeleted"};

static void put_path(sr_json_gen_t g, const struct sr_act_place *pl, const struct listed *l)
{
  char rendered[SR_ACT_NAME_KEEP * 4 + 8], label[sizeof(pl->path) * 4 + 8];
  char full[sizeof(rendered) + sizeof(label) + 8];
  sr_activity_files_render_name(l->path, l->len, rendered, sizeof(rendered));
  sr_activity_files_render_name(pl->path, strlen(pl->path), label, sizeof(label));
  bool root = strcmp(pl->path, "/") == 0;
  snprintf(full, sizeof(full), "%s%s%s%s", root ? "" : label, l->len || root ? "/" : "",
           rendered, l->cut ? "..." : "");
  sr_json_put_kv_string(g, "path", full);
}

bool sr_activity_files_complete(const struct sr_act_files *f)
{
  if (!f->walked || f->ps.not_recorded)
    return false;
  for (size_t i = 0; i < f->ps.n; i++)
    if (f->ps.p[i].cut)
      return false;
  return true;
}

void sr_activity_files_to_json(const struct sr_act_files *f, sr_json_gen_t g, bool brief)
{
  uint64_t total[SR_ACT_NCHANGE] = {0}, bytes[SR_ACT_NCHANGE] = {0};
  bool lower_bound = false, deletions_known = true;
  for (size_t i = 0; i < f->ps.n; i++)
    for (int c = 0; c < SR_ACT_NCHANGE; c++) {
      total[c] += f->ps.p[i].n[c];
      bytes[c] += f->ps.p[i].bytes[c];
    }
  for (size_t i = 0; i < f->ps.n; i++) {
    lower_bound = lower_bound || f->ps.p[i].cut;
    deletions_known = deletions_known && !f->ps.p[i].cut && !f->ps.p[i].baseline_cut;
  }
  sr_json_map_open(g);
  sr_json_put_kv_bool(g, "walked", f->walked);
  if (f->walked) {
    sr_json_put_kv_bool(g, "complete", !lower_bound && deletions_known && !f->ps.not_recorded);
    if (lower_bound)
      sr_json_put_kv_bool(g, "lowerBound", true); /* counts are at least these */
    for (int c = 0; c < SR_ACT_NCHANGE; c++)
      sr_json_put_kv_u64(g, change_name[c], total[c]);
    for (int c = 0; c < SR_ACT_NCHANGE; c++)
      sr_json_put_kv_u64(g, bytes_name[c], bytes[c]);
  }
  if (f->ps.not_recorded)
    sr_json_put_kv_u64(g, "placesNotRecorded", f->ps.not_recorded);
  sr_json_put_key(g, "places");
  sr_json_array_open(g);
  for (size_t i = 0; i < f->ps.n; i++) {
    const struct sr_act_place *pl = &f->ps.p[i];
    char label[sizeof(pl->path) * 4 + 8];
    sr_activity_files_render_name(pl->path, strlen(pl->path), label, sizeof(label));
    sr_json_map_open(g);
    sr_json_put_kv_string(g, "path", label);
    sr_json_put_kv_string(g, "kind", pl->kind);
    if (pl->fs[0])
      sr_json_put_kv_string(g, "fs", pl->fs);
    sr_json_put_kv_string(g, "role", pl->role);
    sr_json_put_kv_string(g, "baseline", pl->upper ? "lower layer"
                                         : pl->baseline_cut ? "partial"
                                                            : "complete");
    if (f->walked) {
      for (int c = 0; c < SR_ACT_NCHANGE; c++)
        sr_json_put_kv_u64(g, change_name[c], pl->n[c]);
      for (int c = 0; c < SR_ACT_NCHANGE; c++)
        sr_json_put_kv_u64(g, bytes_name[c], pl->bytes[c]);
      sr_json_put_kv_string(g, "deletions",
                            pl->cut || pl->baseline_cut ? "unknown" : "exact");
      if (pl->cut)
        sr_json_put_kv_string(g, "cut", pl->cut);
      if (pl->unreadable)
        sr_json_put_kv_u64(g, "unreadableDirectories", pl->unreadable);
    }
    sr_json_map_close(g);
  }
  sr_json_array_close(g);
  if (f->walked) {
    uint64_t listed = 0;
    sr_json_put_key(g, "changes");
    sr_json_array_open(g);
    for (int c = 0; c < SR_ACT_NCHANGE && !brief; c++)
      for (size_t k = 0; k < f->n_list[c]; k++) {
        const struct listed *l = &f->list[c][k];
        const struct sr_act_place *pl = &f->ps.p[l->place];
        sr_json_map_open(g);
        sr_json_put_kv_string(g, "change", change_name[c]);
        put_path(g, pl, l);
        sr_json_put_kv_string(g, "type", type_name(l->mode));
        if (!S_ISDIR(l->mode))
          sr_json_put_kv_u64(g, "size", l->size);
        sr_json_map_close(g);
        listed++;
      }
    sr_json_array_close(g);
    uint64_t all = total[0] + total[1] + total[2];
    if (all > listed)
      sr_json_put_kv_u64(g, "notListed", all - listed);
  }
  sr_json_map_close(g);
}
