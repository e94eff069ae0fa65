/* The flags of a run that deserve a look, and their reasons (review_flags.h; the table in
 * docs/audit.md, "seerun review"). */
#include "build.h"

#include "review_flags.h"

#include <stdio.h>
#include <string.h>

/* The system calls whose attempt is worth a look: they act on mounts, namespaces, other
 * processes, the kernel itself, or the kernel's largest attack surfaces. */
static const char *const privileged[] = {"mount",
                                         "umount",
                                         "umount2",
                                         "move_mount",
                                         "open_tree",
                                         "fsopen",
                                         "fsconfig",
                                         "fsmount",
                                         "fspick",
                                         "mount_setattr",
                                         "pivot_root",
                                         "unshare",
                                         "setns",
                                         "ptrace",
                                         "process_vm_readv",
                                         "process_vm_writev",
                                         "pidfd_getfd",
                                         "kcmp",
                                         "bpf",
                                         "perf_event_open",
                                         "userfaultfd",
                                         "keyctl",
                                         "add_key",
                                         "request_key",
                                         "init_module",
                                         "finit_module",
                                         "delete_module",
                                         "kexec_load",
                                         "kexec_file_load",
                                         "reboot",
                                         "swapon",
                                         "swapoff",
                                         "open_by_handle_at",
                                         "iopl",
                                         "ioperm",
                                         "io_uring_setup",
                                         NULL};

static bool is_privileged(const char *name)
{
  for (size_t i = 0; privileged[i]; i++)
    if (strcmp(privileged[i], name) == 0)
      return true;
  return false;
}

static bool crash_signal(long status, const char **name)
{
  static const struct {
    int sig;
    const char *name;
  } sigs[] = {{4, "SIGILL"}, {6, "SIGABRT"},  {7, "SIGBUS"},
              {8, "SIGFPE"}, {11, "SIGSEGV"}, {31, "SIGSYS"}};
  for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
    if (status == 128 + sigs[i].sig) {
      *name = sigs[i].name;
      return true;
    }
  return false;
}

size_t sr_review_flags_of(const struct sr_review_log_run *r, struct sr_review_flag *f, size_t max)
{
  size_t n = 0;
  char buf[512];
  size_t off = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < r->n_sys; i++)
    if (is_privileged(r->sys[i].name) && off < sizeof(buf))
      off += (size_t)snprintf(buf + off, sizeof(buf) - off, "%s%s x%llu%s%s%s", off ? ", " : "",
                              r->sys[i].name, (unsigned long long)r->sys[i].n,
                              r->sys[i].exe ? " (" : "", r->sys[i].exe ? r->sys[i].exe : "",
                              r->sys[i].exe ? ")" : "");
  if (off && n < max) {
    f[n].flag = "privileged-syscall";
    snprintf(f[n++].reason, sizeof(f->reason), "tried, and was denied: %s", buf);
  }
  if (r->egress_refused && n < max) {
    off = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < r->n_hosts && off < sizeof(buf); i++)
      off += (size_t)snprintf(buf + off, sizeof(buf) - off, "%s%s", i ? ", " : "",
                              r->refused_hosts[i]);
    f[n].flag = "denied-egress";
    snprintf(f[n++].reason, sizeof(f->reason), "%llu request(s) to hosts the profile denies: %s",
             (unsigned long long)r->egress_refused, buf);
  }
  if (r->procs_left > 0 && n < max) {
    f[n].flag = "processes-left";
    snprintf(f[n++].reason, sizeof(f->reason),
             "%lld process(es) still running when the container's init had gone (e.g. %s)",
             (long long)r->procs_left, r->proc_example ? r->proc_example : "?");
  } else if (r->procs_at_kill > 1 && n < max) {
    f[n].flag = "processes-left";
    snprintf(f[n++].reason, sizeof(f->reason),
             "%lld process(es) besides the init still running when the container was stopped "
             "(e.g. %s)",
             (long long)r->procs_at_kill - 1, r->proc_example ? r->proc_example : "?");
  }
  const char *sig;
  if (r->has_exit && crash_signal(r->exit_status, &sig) && n < max) {
    f[n].flag = "crash";
    snprintf(f[n++].reason, sizeof(f->reason), "the command ended by %s (exit status %ld)", sig,
             r->exit_status);
  }
  if (((r->has_oom && r->oom) || (r->has_pids && r->pids)) && n < max) {
    f[n].flag = "limit-hit";
    snprintf(f[n++].reason, sizeof(f->reason), "%llu OOM kill(s), %llu pids-limit hit(s)",
             (unsigned long long)r->oom, (unsigned long long)r->pids);
  }
  if (r->files_elsewhere && n < max) {
    f[n].flag = "writes-outside-outputs";
    snprintf(f[n++].reason, sizeof(f->reason),
             "%llu change(s) in writable places that are neither outputs nor scratch space: %s%s%s",
             (unsigned long long)r->files_elsewhere,
             r->elsewhere_places ? r->elsewhere_places : "?", r->elsewhere_example ? "; e.g. " : "",
             r->elsewhere_example ? r->elsewhere_example : "");
  }
  if (r->has_activity && !r->complete && n < max) {
    f[n].flag = "incomplete-record";
    snprintf(f[n++].reason, sizeof(f->reason), "%s",
             r->incomplete_reason ? r->incomplete_reason : "the record is incomplete");
  }
  /* Started, and no record in the log though its profile keeps one: still running, or its
   * line never reached the log (a full disk, which may have kept its exit and delete lines
   * out too, so the end is not required here): nothing of what it tried is known. */
  if (r->record_expected && !r->has_activity && r->started >= 0 && n < max) {
    f[n].flag = "incomplete-record";
    snprintf(f[n++].reason, sizeof(f->reason),
             "no activity record in the log, though the profile keeps one: the container is "
             "still running, or the log did not take the record's line (what the code tried "
             "is not known)");
  }
  return n;
}
