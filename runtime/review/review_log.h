/* The audit log read back as runs: one container from its first line to its delete, or to the
 * next create of its id (run and sandbox write no delete line), a sandbox's lines by their runId
 * (an id used again starts a new run; its activity record, written after the delete, still belongs to the
 * old one).  docs/audit.md describes the lines. */
#ifndef SEERUN_REVIEW_LOG_H
#define SEERUN_REVIEW_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define SR_REVIEW_LOG_MAX_LINE (1024 * 1024) /* a longer line is skipped */
#define SR_REVIEW_LOG_MAX_HOSTS 8

struct sr_review_log_count {
  char *name;
  char *exe;
  uint64_t n;
};

struct sr_review_log_run {
  char *id, *profile, *bundle, *created;
  bool deleted; /* its delete was recorded: what follows (but its activity) is a new run */
  char *run_id;      /* seerun sandbox: its runId (the slot's next run has another) */
  bool created_seen; /* its create line was read: another create is the id's next run */
  double first, last, started, stopped;
  bool has_exit;
  long exit_status;
  uint64_t egress_requests, egress_refused;
  char *refused_hosts[SR_REVIEW_LOG_MAX_HOSTS];
  size_t n_hosts;
  bool record_expected; /* its create line says an activity record is kept */
  bool has_activity, complete;
  char *incomplete_reason;
  uint64_t denied;
  int64_t programs; /* executed; -1: not watched */
  /* every call the record names, by name (its arches summed: review's "denied" map has one
   * key per call); malloc'd */
  struct sr_review_log_count *sys;
  size_t n_sys;
  bool has_oom, has_pids;
  uint64_t oom, pids;
  int64_t procs_left;    /* after the init had gone; -1: not known */
  int64_t procs_at_kill; /* when seerun was asked to stop it (the init among them); -1: none */
  char *proc_example;
  /* files changed (activity_files.h): -1 when not recorded */
  int64_t files_added, files_modified, files_deleted;
  bool files_lower_bound;
  uint64_t files_elsewhere; /* in places that are neither outputs nor scratch */
  char *elsewhere_places, *elsewhere_example;
};

struct sr_review_log {
  struct sr_review_log_run *v;
  size_t n, cap;
};

/* One line of the log (LEN bytes, a trailing newline allowed).  A torn or foreign line, one
 * without an event, id or time, is skipped, and so is what memory cannot be found for. */
void sr_review_log_add_line(struct sr_review_log *log, const char *line, size_t len);
/* Every line of F, in order. */
void sr_review_log_read(struct sr_review_log *log, FILE *f);
void sr_review_log_free(struct sr_review_log *log);
#define _cleanup_review_log_ __attribute__((cleanup(sr_review_log_free)))

#endif
