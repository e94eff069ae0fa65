/* Files changed (issue 16 slice d): what the code changed in every writable place of its
 * container, kept by the supervisor as part of the activity record (activity.h).
 *
 * A place is a writable directory (or file) the container sees: each of its writable tmpfs
 * mounts, bind mounts and a writable root, found in its mount table when it is created
 * (sr_activity_places_open) and opened then, by descriptor, before any of its code has run.  The
 * supervisor holds those descriptors and the container's mount namespace, so what is in a
 * tmpfs outlives the container's processes until it has been walked.
 *
 *  - At create, a baseline of each place (names, inode, type, size, mtime, ctime), bounded
 *    (SR_ACT_BASE_*): a fresh tmpfs holds nothing or what seerun put there (/dev's nodes).
 *  - When the container stops, each place is walked and compared: "added" (not in the
 *    baseline), "modified" (another inode, type, size, mtime or ctime), "deleted" (in the
 *    baseline, not found).  Where the baseline was cut (a large bind or root), an entry not
 *    in it counts when its ctime is later than the baseline (a ctime cannot be set back):
 *    "added" if its birth time is later too, else "modified"; deletions are then not known.
 *  - A place with a lower layer (an overlay's upper directory, sr_activity_places_add with a lower
 *    descriptor) needs no baseline: its upper directory is the change (a whiteout: deleted,
 *    a name the lower layer has: modified, else added).
 *
 * Every name is the container's: nothing is followed (openat2 RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV, statx AT_SYMLINK_NOFOLLOW),
 * another mount met in a place is not entered, and names are rendered as printable ASCII with
 * every other byte (and the backslash) as \xNN.  The walk is bounded in entries, depth and time
 * (SR_ACT_WALK_*): past a bound the counts are lower bounds and the record says which bound;
 * details are capped (SR_ACT_FILES_LISTED per kind), counts are exact otherwise. */
#ifndef SEERUN_ACTIVITY_FILES_H
#define SEERUN_ACTIVITY_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"
#include "json.h"

#define SR_ACT_PLACES 16          /* places recorded (more: counted, not walked) */
#define SR_ACT_FILES_LISTED 32    /* changes listed per kind (added, modified, deleted) */
#define SR_ACT_NAME_KEEP 200      /* bytes of a changed path kept for the list */
#define SR_ACT_BASE_ENTRIES 8192  /* baseline entries, all places */
#define SR_ACT_BASE_BYTES (512 * 1024) /* baseline path bytes, all places */
#define SR_ACT_BASE_MS 100        /* the baseline's time (create waits for it) */
#define SR_ACT_WALK_ENTRIES 200000 /* entries looked at when the container stops */
#define SR_ACT_WALK_DEPTH 32       /* directories below a place's root entered */
#define SR_ACT_WALK_MS 1000        /* the walk's time (delete gives the supervisor 2 s) */
#define SR_ACT_PATH_MAX 4096       /* a relative path longer than this is not entered */

enum sr_act_change { SR_ACT_ADDED, SR_ACT_MODIFIED, SR_ACT_DELETED, SR_ACT_NCHANGE };

/* What a place is, for the record and for review: "scratch" (a tmpfs: it goes with the
 * container), "output" (what the caller expects the code to write: the sandbox's /out, its
 * workspace), "other" (a writable root, a bind of a host directory, /dev). */
struct sr_act_place {
  char path[256];  /* where the container sees it */
  char fs[32];     /* file system type */
  char kind[16];   /* "tmpfs", "bind", "root", "upper" */
  char role[16];   /* "scratch", "output", "other" */
  int fd;          /* the place's root (a directory, O_RDONLY; a file, O_PATH) */
  int lower_fd;    /* "upper": the lower layer's root; else -1 */
  uint64_t mnt_id; /* the mount it is (STATX_MNT_ID): another met inside is not entered */
  bool is_file;
  bool upper; /* an overlay's upper layer (lower_fd) */
  /* results */
  bool baseline_cut;
  const char *cut; /* the bound the walk hit in it ("entries", "depth", "time"), or NULL */
  uint64_t n[SR_ACT_NCHANGE];
  uint64_t bytes[SR_ACT_NCHANGE]; /* sizes: now (added, modified), before (deleted) */
  uint64_t unreadable;            /* directories that could not be opened */
};

/* The places of a container, as create hands them to the supervisor. */
struct sr_act_places {
  struct sr_act_place p[SR_ACT_PLACES];
  size_t n;
  uint64_t not_recorded; /* writable places past SR_ACT_PLACES */
  int mntns_fd;          /* the container's mount namespace, held until the walk is done */
};

/* Finds and opens the writable places of the container whose init is `pid` (alive: pidfd),
 * before any of its code has run.  `outputs` (NULL-terminated, may be NULL): the container
 * paths the caller expects to be written (role "output").  On failure nothing stays open. */
int sr_activity_places_open(pid_t pid, int pidfd, const char *const *outputs,
                            struct sr_act_places *out, sr_error_t *err);
/* Adds a place by descriptor (taken over: closed with the set, also on failure): label is the
 * path the container sees, kind "tmpfs"/"bind"/"root"/"upper" ("upper": dirfd is an overlay's
 * upper directory and lower_fd the lower layer's root, else -1), role as above.  It replaces a
 * place of the same label that the mount table gave (the overlay mount itself). */
int sr_activity_places_add(struct sr_act_places *ps, const char *label, const char *kind,
                           const char *role, int dirfd, int lower_fd, sr_error_t *err);
void sr_activity_places_close(struct sr_act_places *ps);

struct sr_act_files;

/* The supervisor's record of the places (taken over); NULL on ENOMEM. */
struct sr_act_files *sr_activity_files_new(struct sr_act_places *ps);
void sr_activity_files_free(struct sr_act_files *f);
/* At create, before the container's code runs. */
void sr_activity_files_baseline(struct sr_act_files *f);
/* When it stops: walks and compares (the places stay open: sr_activity_files_free, or the exit). */
void sr_activity_files_walk(struct sr_act_files *f);
/* Whether every change in every writable place was seen: each place walked to its end (no
 * bound hit) and none left out (SR_ACT_PLACES).  A partial baseline does not count here: its
 * entries are still told by their ctime, only deletions are unknown (the record says so per
 * place). */
bool sr_activity_files_complete(const struct sr_act_files *f);
/* The "files" member of the record (brief: without the list of changes). */
void sr_activity_files_to_json(const struct sr_act_files *f, sr_json_gen_t g, bool brief);

/* A name of the container's as printable ASCII, any other byte and '\' as \xNN (at most
 * size-1 characters; "..." ends a name cut short). */
void sr_activity_files_render_name(const char *s, size_t len, char *out, size_t size);

#endif
