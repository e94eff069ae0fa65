/* The state directory (`--root`, default /run/seerun): one directory per container holding
 * state.json (the versioned record), recovery.json (what cleaning up needs, see below),
 * config.json (the config it was created from) and exec.fifo (present from create until start).
 *
 * A container directory appears atomically: it is made under a temporary name, locked and given
 * its first record, then renamed into place with RENAME_NOREPLACE, which is also what makes two
 * creates of one id exclusive.  Commands that change a container hold an exclusive flock on its
 * directory; readers (state, list) need none because every file is replaced atomically.
 *
 * Crashes and damage.  The record is written before each step of create that makes something
 * (phase "creating", the cgroup before mkdir, the init's pid and start time as soon as it is
 * known), so a runtime killed at any moment leaves a directory that `delete --force` can act
 * on.  The first record is written with recovery.json beside it: the same record without the
 * annotations and decided capabilities (id, bundle, phase, creator, init pid and start time,
 * cgroup version/path/created, profile); every later step writes the index (below) first
 * instead, which then holds all of that.  When state.json is corrupt, truncated or missing,
 * `state`, `list` and the other commands report that container's error (naming state.json) and
 * leave the others alone, and `delete --force` takes the record from the index below (else
 * recovery.json, unverified; sr_container_recover in lifecycle.h) to kill the init (checked by
 * its start time) and the cgroup's processes, remove the cgroup if seerun made it, and remove
 * the directory.  Removal
 * takes state.json last, so a delete killed midway leaves a loadable record or an empty
 * directory.  A create killed before publishing leaves a ".new-*" temporary, which create,
 * delete and list sweep once its creator is gone.
 *
 * The index.  A container (or anyone) that rewrites state.json, recovery.json and the config.json
 * copy could point kill, update, pause and delete --force at a host process or a host cgroup, or
 * another container's.  So create also keeps the record, without the annotations, in
 * <root>/.index/<id>, outside the container's directory (written by create alone, at every step
 * it records, before recovery.json and state.json; while the create is at work state.json is
 * written only at its first step and when the phase ends, so it may be a step behind the index;
 * removed first by delete).  Loading takes the
 * deciding fields from the index; a state.json that disagrees with it is refused, naming the
 * field and both files (delete --force then acts on what the index records alone).  A
 * directory without an index (a create killed right after publishing, or an older seerun) is
 * unverified: its record is read as a stopped container with no process and no cgroup, and
 * delete says what it left alone. */
#ifndef SEERUN_STATEDIR_H
#define SEERUN_STATEDIR_H

#include <stdbool.h>
#include <sys/types.h>

#include "error.h"
#include "invocation.h" /* SR_DEFAULT_ROOT */
/* Every file that acts on a container's state has the test-only kill points. */
#include "killpoint.h"
#include "state.h"

/* A directory name (NAME_MAX): a longer id could never be stored. */
#define SR_ID_MAX 255

struct sr_container {
  char *id;
  int rootfd; /* not owned */
  int dirfd;  /* holds the lock when locked */
  /* What commands act on: the fields that decide (pid, cgroup, what the policy decided) come
   * from the index, never from state.json alone (see "The index" above). */
  struct sr_state_record *rec;
  struct sr_state_record *file_rec; /* state.json as read, when rec is the index's */
  bool writes_index;                /* the create that made it: its saves write the index */
  /* Loaded without a usable index, or refused for disagreeing with it: what the files in its
   * directory name and nothing confirms (left alone), for delete to tell; else NULL. */
  char *unverified;
  int index_lock; /* the index directory's lock, held while acting on an orphan index; or -1 */
  /* Why state.json could not be used, for a container loaded by sr_statedir_load_damaged
   * (rec then comes from recovery.json, or is NULL); NULL for a sound one. */
  char *damage;
  bool removed; /* its directory is gone (sr_statedir_remove_dir): nothing left to delete */
};

/* Ids: [A-Za-z0-9_.+-] (what runc accepts), not "." or "..", at most SR_ID_MAX bytes.  The
 * message shows the id escaped and shortened, on one line. */
int sr_statedir_validate_id(const char *id, sr_error_t *err);

/* Opens (and with create, makes, mode 0700) the state root. */
int sr_statedir_open_root(const char *root, bool create, int *rootfd, sr_error_t *err);

/* Publishes a new container directory holding rec as state.json and the config text as
 * config.json, locked.  Fails with "already exists" when the id is taken. */
int sr_statedir_begin(int rootfd, const char *id, struct sr_state_record *rec, const char *config,
                      size_t config_len, struct sr_container **out, sr_error_t *err);

/* In the refusal of a state.json that disagrees with the index (the command layer audits it). */
#define SR_RECORD_NOT_OURS "state.json is not what seerun wrote"

/* Loads a container; with lock, waits for the exclusive lock first.  A missing id is an error
 * with status ENOENT and runc's words "container ID does not exist"; an unreadable state.json
 * is an error naming the file (never with status ENOENT: the container is there, damaged).
 * Without lock, a directory whose state.json is gone while another command holds its lock is
 * being deleted: ENOENT too. */
int sr_statedir_load(int rootfd, const char *id, bool lock, struct sr_container **out,
                     sr_error_t *err);

/* Many containers of one state directory, unlocked (list): the directory checked and its
 * index directory opened once, not per container.  rootfd stays the caller's. */
struct sr_statedir_reader {
  int rootfd, indexfd;
};
int sr_statedir_reader_open(int rootfd, struct sr_statedir_reader *r, sr_error_t *err);
/* sr_statedir_load(rootfd, id, false, ...) through the reader. */
int sr_statedir_reader_load(const struct sr_statedir_reader *r, const char *id,
                            struct sr_container **out, sr_error_t *err);
void sr_statedir_reader_close(struct sr_statedir_reader *r);
static inline void sr_statedir_reader_closep(struct sr_statedir_reader *r)
{
  sr_statedir_reader_close(r);
}
#define _cleanup_statedir_reader_ __attribute__((cleanup(sr_statedir_reader_closep)))

/* For delete --force only: loads and locks a container whatever its state.json holds.  When
 * state.json is sound this is sr_statedir_load; otherwise c->damage says why and c->rec is
 * the index's, else rebuilt from recovery.json, or NULL when that is unusable too.  A
 * directory that is gone while its index is there (removed by someone else) is loaded from the
 * index alone (dirfd -1, the index directory locked against creates until it is freed), so
 * that what it records is still removed.  ENOENT: no such container. */
int sr_statedir_load_damaged(int rootfd, const char *id, struct sr_container **out,
                             sr_error_t *err);

int sr_statedir_save(struct sr_container *c, sr_error_t *err);

/* Removes the directory and what is in it (the caller has stopped everything else); state.json
 * goes last. */
int sr_statedir_remove_dir(struct sr_container *c, sr_error_t *err);

void sr_statedir_free(struct sr_container *c);
static inline void sr_statedir_freep(struct sr_container **c)
{
  if (*c)
    sr_statedir_free(*c);
}
#define _cleanup_container_ __attribute__((cleanup(sr_statedir_freep)))

/* --pid-file of create, run and exec: runc's pid file, the decimal pid without a newline,
 * replaced atomically (a temporary file beside it, then rename). */
int sr_statedir_write_pid_file(const char *path, pid_t pid, sr_error_t *err);

/* Names of the container directories, sorted; also removes temporary directories left by a
 * create that was killed before publishing. */
int sr_statedir_list(int rootfd, char ***ids, size_t *n, sr_error_t *err);

#endif
