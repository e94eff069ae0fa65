#include "build.h"

#include "activity.h"

#include "cleanup.h"
#include "fd_pass.h"
#include "fileio.h"
#include "proc.h"
#include "rfc3339.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <poll.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

void sr_activity_printable(char *s)
{
  /* Names and command lines are the container's: printable ASCII only, so that no byte of
   * theirs can make the audit line invalid (UTF-8) or blow up its size (escapes). */
  for (; *s; s++)
    if (*s < 0x20 || *s > 0x7e)
      *s = '?';
}

/* ---- Denied syscalls ---------------------------------------------------------------------- */

int sr_activity_notif_sizes(size_t *req, size_t *resp)
{
  struct seccomp_notif_sizes s;
  if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &s) < 0)
    return -1;
  *req = s.seccomp_notif > sizeof(struct seccomp_notif) ? s.seccomp_notif
                                                        : sizeof(struct seccomp_notif);
  *resp = s.seccomp_notif_resp > sizeof(struct seccomp_notif_resp)
              ? s.seccomp_notif_resp
              : sizeof(struct seccomp_notif_resp);
  return 0;
}

static void count_syscall(struct sr_activity *a, uint32_t arch, int nr)
{
  for (size_t i = 0; i < a->n_sys; i++)
    if (a->sys[i].nr == nr && a->sys[i].arch == arch) {
      a->sys[i].count++;
      return;
    }
  if (a->n_sys < SR_ACT_SYSCALLS)
    a->sys[a->n_sys++] = (struct sr_act_syscall){arch, nr, 1};
  else
    a->denied_other_syscalls++;
}

static void count_entry(struct sr_activity *a, const struct seccomp_notif *n, const char *exe)
{
  struct sr_act_entry *e = NULL;
  for (size_t i = 0; i < a->n_ent && e == NULL; i++)
    if (a->ent[i].nr == n->data.nr && a->ent[i].arch == n->data.arch &&
        strcmp(a->ent[i].exe, exe) == 0)
      e = &a->ent[i];
  if (e == NULL) {
    if (a->n_ent >= SR_ACT_ENTRIES) {
      a->denied_other_entries++;
      return;
    }
    e = &a->ent[a->n_ent++];
    memset(e, 0, sizeof(*e));
    e->arch = n->data.arch;
    e->nr = n->data.nr;
    snprintf(e->exe, sizeof(e->exe), "%s", exe);
  }
  e->count++;
  if (e->n_sample < SR_ACT_SAMPLES) {
    struct sr_act_sample *s = &e->sample[e->n_sample++];
    s->pid = (pid_t)n->pid;
    memcpy(s->args, n->data.args, sizeof(s->args));
  }
}

int sr_activity_serve(struct sr_activity *a, int listener, struct sr_act_listener_seq *seq,
                      struct seccomp_notif *req, size_t reqsz, struct seccomp_notif_resp *resp,
                      size_t respsz)
{
  memset(req, 0, reqsz);
  if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, req) < 0) {
    /* ENOENT: the caller was interrupted (a signal) before we read it (its id is skipped by
     * the next one read); EINTR: ours. */
    return errno == ENOENT || errno == EINTR ? 0 : -1;
  }
  /* Read in the kernel's order, so an id skipped is a call taken back unread (a code that
   * interrupts its own denied calls while the supervisor is busy must not hide them). */
  uint64_t step = req->id - seq->last;
  if (seq->have && step > 1 && step < (1ULL << 32)) {
    a->not_read += step - 1;
    a->dirty = true;
  }
  seq->last = req->id;
  seq->have = true;
  /* The executable while the caller is still blocked in the call; the id check after the
   * read makes sure the pid was the caller's and not a reused one. */
  char link[32], exe[SR_ACT_EXE_MAX];
  snprintf(link, sizeof(link), "/proc/%u/exe", req->pid);
  ssize_t l = readlink(link, exe, sizeof(exe) - 1);
  exe[l > 0 ? (size_t)l : 0] = '\0';
  if (l <= 0)
    snprintf(exe, sizeof(exe), "(unknown)");
  sr_activity_printable(exe);
  if (ioctl(listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &req->id) < 0)
    snprintf(exe, sizeof(exe), "(gone)");
  /* The errno of the plain filter: never CONTINUE, which would run the denied call. */
  memset(resp, 0, respsz);
  resp->id = req->id;
  resp->error = -EPERM;
  resp->val = 0;
  resp->flags = 0;
  if (ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, resp) < 0 && errno != ENOENT)
    return -1;
  a->denied++;
  count_syscall(a, req->data.arch, req->data.nr);
  count_entry(a, req, exe);
  a->dirty = true;
  return 0;
}

/* ---- Cgroup ------------------------------------------------------------------------------- */

static bool read_key(int dirfd, const char *file, const char *key, uint64_t *out)
{
  if (dirfd < 0)
    return false;
  _cleanup_close_ int fd = openat(dirfd, file, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  char buf[1024];
  ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
  if (n <= 0)
    return false;
  buf[n] = '\0';
  size_t kl = strlen(key);
  for (char *line = buf; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
    if (strncmp(line, key, kl) == 0 && line[kl] == ' ') {
      *out = strtoull(line + kl + 1, NULL, 10);
      return true;
    }
  return false;
}

void sr_activity_read_cgroup(struct sr_activity *a, const struct sr_act_cgroup *cg)
{
  uint64_t v;
  /* v2 memory.events "oom_kill N"; v1 memory.oom_control "oom_kill N" (kernels >= 4.13). */
  if (read_key(cg->memory_fd, "memory.events", "oom_kill", &v) ||
      read_key(cg->memory_fd, "memory.oom_control", "oom_kill", &v)) {
    if (!a->have_oom || v != a->oom_kills)
      a->dirty = true;
    a->have_oom = true;
    a->oom_kills = v;
  }
  if (read_key(cg->pids_fd, "pids.events", "max", &v)) {
    if (!a->have_pids || v != a->pids_max_hits)
      a->dirty = true;
    a->have_pids = true;
    a->pids_max_hits = v;
  }
}

bool sr_activity_read_process(int procfd, char *exe, size_t exe_size, char *cmdline,
                              size_t cmdline_size, const char *trim)
{
  ssize_t l = sr_proc_exe_at(procfd, exe, exe_size);
  sr_proc_text_at(procfd, "cmdline", cmdline, cmdline_size, true, trim);
  sr_activity_printable(exe);
  sr_activity_printable(cmdline);
  return l > 0;
}

void sr_activity_snapshot_procs(struct sr_activity *a, struct sr_act_procset *set,
                                const struct sr_act_cgroup *cg)
{
  set->taken = true;
  set->total = 0;
  set->n = 0;
  a->dirty = true;
  if (cg->pids_fd < 0)
    return;
  int fd = openat(cg->pids_fd, "cgroup.procs", O_RDONLY | O_CLOEXEC);
  _cleanup_fclose_ FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
  if (f == NULL) {
    if (fd >= 0)
      close(fd);
    return;
  }
  long pid;
  while (fscanf(f, "%ld", &pid) == 1) {
    set->total++;
    if (set->n >= SR_ACT_PROCS)
      continue;
    struct sr_act_proc *p = &set->procs[set->n++];
    p->pid = (pid_t)pid;
    _cleanup_close_ int procfd = sr_proc_open(p->pid);
    sr_activity_read_process(procfd, p->exe, sizeof(p->exe), p->cmdline, sizeof(p->cmdline), " ");
  }
}

void sr_activity_request_snapshot(int state_dirfd, const char *at)
{
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return;
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/%s", state_dirfd, SR_ACT_SOCKET);
  char msg[16];
  snprintf(msg, sizeof(msg), "S%s", at);
  if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
      send(fd, msg, strlen(msg), MSG_NOSIGNAL) == (ssize_t)strlen(msg)) {
    struct pollfd p = {fd, POLLIN, 0};
    char c;
    if (poll(&p, 1, SR_ACT_SNAPSHOT_MS) > 0)
      (void)!read(fd, &c, 1);
  }
  close(fd);
}

int sr_activity_wait_request(int state_dirfd)
{
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0)
    return -1;
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/%s", state_dirfd, SR_ACT_SOCKET);
  /* Not blocking: a full backlog (or no supervisor) is no wait here, the caller falls back. */
  if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || send(fd, "W", 1, MSG_NOSIGNAL) != 1) {
    close(fd);
    return -1;
  }
  return fd;
}

/* ---- Rendering ---------------------------------------------------------------------------- */

struct flag_name {
  uint64_t bit;
  const char *name;
};

#define F(x) {x, #x}
static const struct flag_name clone_flags[] = {
    F(CLONE_NEWNS),  F(CLONE_NEWUTS), F(CLONE_NEWIPC),    F(CLONE_NEWUSER), F(CLONE_NEWPID),
    F(CLONE_NEWNET), F(CLONE_NEWCGROUP), F(CLONE_FILES), F(CLONE_FS),      F(CLONE_SYSVSEM),
    {0, NULL}};
static const struct flag_name mount_flags[] = {
    F(MS_RDONLY),  F(MS_NOSUID),  F(MS_NODEV), F(MS_NOEXEC),  F(MS_REMOUNT), F(MS_BIND),
    F(MS_MOVE),    F(MS_REC),     F(MS_PRIVATE), F(MS_SLAVE), F(MS_SHARED),  F(MS_UNBINDABLE),
    {0, NULL}};
#undef F

static void put_flags(sr_json_gen_t g, uint64_t v, const struct flag_name *t)
{
  char buf[512];
  size_t off = 0;
  buf[0] = '\0';
  for (; t->name; t++)
    if (v & t->bit) {
      off += (size_t)snprintf(buf + off, sizeof(buf) - off, "%s%s", off ? "|" : "", t->name);
      v &= ~t->bit;
    }
  if (v || off == 0)
    snprintf(buf + off, sizeof(buf) - off, "%s0x%llx", off ? "|" : "", (unsigned long long)v);
  sr_json_put_string(g, buf);
}

static const char *const keyctl_ops[] = {
    "KEYCTL_GET_KEYRING_ID", "KEYCTL_JOIN_SESSION_KEYRING", "KEYCTL_UPDATE", "KEYCTL_REVOKE",
    "KEYCTL_CHOWN", "KEYCTL_SETPERM", "KEYCTL_DESCRIBE", "KEYCTL_CLEAR", "KEYCTL_LINK",
    "KEYCTL_UNLINK", "KEYCTL_SEARCH", "KEYCTL_READ", "KEYCTL_INSTANTIATE", "KEYCTL_NEGATE",
    "KEYCTL_SET_REQKEY_KEYRING", "KEYCTL_SET_TIMEOUT", "KEYCTL_ASSUME_AUTHORITY"};
static const char *const bpf_cmds[] = {
    "BPF_MAP_CREATE", "BPF_MAP_LOOKUP_ELEM", "BPF_MAP_UPDATE_ELEM", "BPF_MAP_DELETE_ELEM",
    "BPF_MAP_GET_NEXT_KEY", "BPF_PROG_LOAD", "BPF_OBJ_PIN", "BPF_OBJ_GET", "BPF_PROG_ATTACH",
    "BPF_PROG_DETACH", "BPF_PROG_TEST_RUN"};
static const char *ptrace_request(uint64_t r)
{
  switch (r) {
  case 0: return "PTRACE_TRACEME";
  case 1: return "PTRACE_PEEKTEXT";
  case 2: return "PTRACE_PEEKDATA";
  case 4: return "PTRACE_POKETEXT";
  case 5: return "PTRACE_POKEDATA";
  case 7: return "PTRACE_CONT";
  case 12: return "PTRACE_GETREGS";
  case 13: return "PTRACE_SETREGS";
  case 16: return "PTRACE_ATTACH";
  case 17: return "PTRACE_DETACH";
  case 0x4206: return "PTRACE_SEIZE";
  default: return NULL;
  }
}

static void put_enum(sr_json_gen_t g, uint64_t v, const char *const *names, size_t n)
{
  if (v < n) {
    sr_json_put_string(g, names[v]);
    return;
  }
  char buf[32];
  snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v);
  sr_json_put_string(g, buf);
}

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* Arguments by name where that is cheap (flags and operation numbers: no memory of the
 * caller is read), else as numbers. */
static void put_args(sr_json_gen_t g, const char *name, const uint64_t *args)
{
  sr_json_array_open(g);
  for (int i = 0; i < 6; i++) {
    if (strcmp(name, "unshare") == 0 && i == 0)
      put_flags(g, args[0], clone_flags);
    else if (strcmp(name, "setns") == 0 && i == 1)
      put_flags(g, args[1], clone_flags);
    else if (strcmp(name, "mount") == 0 && i == 3)
      put_flags(g, args[3], mount_flags);
    else if (strcmp(name, "keyctl") == 0 && i == 0)
      put_enum(g, args[0], keyctl_ops, N(keyctl_ops));
    else if (strcmp(name, "bpf") == 0 && i == 0)
      put_enum(g, args[0], bpf_cmds, N(bpf_cmds));
    else if (strcmp(name, "ptrace") == 0 && i == 0 && ptrace_request(args[0]))
      sr_json_put_string(g, ptrace_request(args[0]));
    else {
      char buf[24];
      snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)args[i]);
      sr_json_put_string(g, buf);
    }
  }
  sr_json_array_close(g);
}

static void syscall_name(uint32_t arch, int nr, char *out, size_t size)
{
  /* libseccomp's SCMP_ARCH_* values are the AUDIT_ARCH_* the kernel reports. */
  char *n = seccomp_syscall_resolve_num_arch(arch, nr);
  if (n)
    snprintf(out, size, "%s", n);
  else
    snprintf(out, size, "syscall_%d", nr);
  free(n);
}

static const char *arch_name(uint32_t arch)
{
  return arch == AUDIT_ARCH_X86_64 ? "x86_64" : arch == AUDIT_ARCH_I386 ? "x86" : "other";
}

static void put_procs(sr_json_gen_t g, const char *key, const struct sr_act_procset *set,
                      bool brief)
{
  sr_json_put_key(g, key);
  if (!set->taken) {
    sr_json_put_null(g);
    return;
  }
  sr_json_map_open(g);
  if (set->at[0])
    sr_json_put_kv_string(g, "at", set->at);
  sr_json_put_kv_u64(g, "count", set->total);
  sr_json_put_key(g, "processes");
  sr_json_array_open(g);
  for (size_t i = 0; i < (brief ? 0 : set->n); i++) {
    sr_json_map_open(g);
    sr_json_put_kv_i64(g, "pid", set->procs[i].pid);
    sr_json_put_kv_string(g, "executable", set->procs[i].exe);
    sr_json_put_kv_string(g, "cmdline", set->procs[i].cmdline);
    sr_json_map_close(g);
  }
  sr_json_array_close(g);
  sr_json_map_close(g);
}

static void to_json(const struct sr_activity *a, sr_json_gen_t g, bool brief)
{
  char name[64];
  sr_json_map_open(g);
  if (brief)
    sr_json_put_kv_bool(g, "truncated", true); /* the lists left out: over SR_ACT_MAX_BYTES */
  sr_json_put_kv_string(g, "startedAt", a->started);
  if (a->stopped[0])
    sr_json_put_kv_string(g, "stoppedAt", a->stopped);
  sr_json_put_key(g, "seccomp");
  sr_json_map_open(g);
  sr_json_put_kv_bool(g, "visible", a->seccomp_visible);
  if (!a->seccomp_visible && a->seccomp_unseen)
    sr_json_put_kv_string(g, "unseen", a->seccomp_unseen);
  sr_json_put_kv_u64(g, "listeners", a->listeners);
  if (a->listeners_refused)
    sr_json_put_kv_u64(g, "listenersUnserved", a->listeners_refused);
  sr_json_put_kv_u64(g, "denied", a->denied);
  if (a->not_read)
    sr_json_put_kv_u64(g, "notRead", a->not_read);
  sr_json_put_kv_string(g, "errno", "EPERM");
  sr_json_put_key(g, "syscalls");
  sr_json_array_open(g);
  for (size_t i = 0; i < a->n_sys; i++) {
    sr_json_map_open(g);
    syscall_name(a->sys[i].arch, a->sys[i].nr, name, sizeof(name));
    sr_json_put_kv_string(g, "syscall", name);
    sr_json_put_kv_string(g, "arch", arch_name(a->sys[i].arch));
    sr_json_put_kv_u64(g, "count", a->sys[i].count);
    sr_json_map_close(g);
  }
  sr_json_array_close(g);
  if (a->denied_other_syscalls)
    sr_json_put_kv_u64(g, "deniedOtherSyscalls", a->denied_other_syscalls);
  sr_json_put_key(g, "byExecutable");
  sr_json_array_open(g);
  for (size_t i = 0; i < (brief ? 0 : a->n_ent); i++) {
    const struct sr_act_entry *e = &a->ent[i];
    sr_json_map_open(g);
    syscall_name(e->arch, e->nr, name, sizeof(name));
    sr_json_put_kv_string(g, "syscall", name);
    sr_json_put_kv_string(g, "executable", e->exe);
    sr_json_put_kv_u64(g, "count", e->count);
    sr_json_put_key(g, "first");
    sr_json_array_open(g);
    for (size_t k = 0; k < e->n_sample; k++) {
      sr_json_map_open(g);
      sr_json_put_kv_i64(g, "pid", e->sample[k].pid);
      sr_json_put_key(g, "args");
      put_args(g, name, e->sample[k].args);
      sr_json_map_close(g);
    }
    sr_json_array_close(g);
    sr_json_map_close(g);
  }
  sr_json_array_close(g);
  if (a->denied_other_entries)
    sr_json_put_kv_u64(g, "deniedOtherExecutables", a->denied_other_entries);
  sr_json_map_close(g);

  sr_json_put_key(g, "resources");
  sr_json_map_open(g);
  if (a->have_oom)
    sr_json_put_kv_u64(g, "oomKills", a->oom_kills);
  if (a->have_pids)
    sr_json_put_kv_u64(g, "pidsLimitHits", a->pids_max_hits);
  sr_json_map_close(g);

  sr_json_put_key(g, "programs");
  if (!a->execs_watched) {
    sr_json_put_null(g);
  } else {
    sr_json_map_open(g);
    sr_json_put_kv_u64(g, "count", a->execs);
    if (a->execs > a->n_exec)
      sr_json_put_kv_u64(g, "notListed", a->execs - a->n_exec);
    if (a->execs_gone)
      sr_json_put_kv_u64(g, "goneBeforeRead", a->execs_gone);
    if (a->execs_lost)
      sr_json_put_kv_bool(g, "eventsLost", true);
    if (a->execs_unfollowed)
      sr_json_put_kv_u64(g, "unfollowedExecs", a->execs_unfollowed);
    sr_json_put_kv_string(g, "followed", a->execs_in_kernel ? "kernel" : "events");
    sr_json_put_key(g, "listed");
    sr_json_array_open(g);
    for (size_t i = 0; i < (brief ? 0 : a->n_exec); i++) {
      sr_json_map_open(g);
      sr_json_put_kv_string(g, "time", a->exec[i].time);
      sr_json_put_kv_i64(g, "pid", a->exec[i].pid);
      sr_json_put_kv_i64(g, "ppid", a->exec[i].ppid);
      sr_json_put_kv_string(g, "executable", a->exec[i].exe);
      sr_json_put_kv_string(g, "argv", a->exec[i].argv);
      sr_json_map_close(g);
    }
    sr_json_array_close(g);
    sr_json_map_close(g);
  }
  sr_json_put_key(g, "files");
  if (a->files) {
    sr_activity_files_to_json(a->files, g, brief);
  } else if (a->files_unseen) {
    sr_json_map_open(g);
    sr_json_put_kv_bool(g, "walked", false);
    sr_json_put_kv_string(g, "unseen", a->files_unseen);
    sr_json_map_close(g);
  } else {
    sr_json_put_null(g);
  }
  put_procs(g, "processesAtStop", &a->at_stop, brief);
  put_procs(g, "processesAtKill", &a->at_kill, brief);
  sr_json_map_close(g);
}

/* The record's text within SR_ACT_MAX_BYTES: in full, else without its lists (malloc'd). */
static char *render(const struct sr_activity *a, size_t *len)
{
  for (int brief = 0; brief < 2; brief++) {
    _cleanup_gen_ sr_json_gen_t g = NULL;
    sr_error_t err = NULL;
    const unsigned char *buf;
    if (sr_json_gen_new(&g, false, &err) < 0) {
      sr_error_free(&err);
      return NULL;
    }
    to_json(a, g, brief);
    if (sr_json_gen_buf(g, &buf, len, &err) < 0) {
      sr_error_free(&err);
      return NULL;
    }
    if (*len <= SR_ACT_MAX_BYTES) {
      char *out = malloc(*len + 1);
      if (out) {
        memcpy(out, buf, *len);
        out[*len] = '\0';
      }
      return out;
    }
  }
  return NULL;
}

int sr_activity_flush(struct sr_activity *a, int state_dirfd)
{
  if (state_dirfd < 0)
    return 0;
  size_t len;
  _cleanup_free_ char *text = render(a, &len);
  sr_error_t err = NULL;
  if (text == NULL || sr_fileio_write_atomic(state_dirfd, SR_ACT_FILE, text, len, 0600, &err) < 0) {
    sr_error_free(&err);
    return -1;
  }
  a->dirty = false;
  return 0;
}

struct event_fields {
  bool complete;
  const char *reason;
  const char *raw;
  size_t raw_len;
};

static void put_event(sr_json_gen_t g, const void *data)
{
  const struct event_fields *f = data;
  sr_json_put_kv_bool(g, "complete", f->complete);
  if (f->reason)
    sr_json_put_kv_string(g, "reason", f->reason);
  sr_json_put_key(g, "record");
  if (f->raw)
    sr_json_put_raw(g, f->raw, f->raw_len);
  else
    sr_json_put_null(g);
}

/* activity.done: an empty marker (its existence says the event is in the audit log), made
 * once; one there already (the other of supervisor and settle got first) is as good. */
static int mark_done(int state_dirfd, sr_error_t *err)
{
  if (sr_fileio_write_new(state_dirfd, SR_ACT_DONE, "", 0, 0600, err) == 0)
    return 0;
  if ((*err)->status != EEXIST)
    return -1;
  sr_error_free(err);
  return 0;
}

void sr_activity_finish(struct sr_activity *a, const struct sr_audit *audit, int state_dirfd)
{
  sr_rfc3339_now(a->stopped, sizeof(a->stopped));
  /* Files changed: every place walked to its end, none left out (a walk cut by its bounds,
   * which the code can reach by filling a place, has not seen what it did not reach). */
  bool files_seen = a->files ? sr_activity_files_complete(a->files) : a->files_unseen == NULL;
  struct event_fields f = {
      .complete = a->seccomp_visible && !a->listeners_refused && !a->not_read &&
                  !a->execs_unfollowed && files_seen,
      .reason = !a->seccomp_visible ? a->seccomp_unseen
                : a->listeners_refused ? "some processes' denied system calls were not seen"
                : a->not_read ? "denied system calls were taken back before the supervisor read "
                                "them (their callers interrupted or killed): counted in "
                                "seccomp.notRead, not by system call"
                : a->execs_unfollowed
                    ? "a `seerun exec` could not be followed (the supervisor did not answer in "
                      "time): what it started is not in programs"
                : !files_seen
                    ? "not every writable place was walked to its end (a bound was hit, or "
                      "places were left out): files changed there are not all in files"
                    : NULL};
  /* Rendered once: the last activity.json (the sandbox's result) and the audit line are the
   * same text. */
  _cleanup_free_ char *text = render(a, &f.raw_len);
  f.raw = text;
  sr_error_t err = NULL;
  if (text && state_dirfd >= 0 &&
      sr_fileio_write_atomic(state_dirfd, SR_ACT_FILE, text, f.raw_len, 0600, &err) < 0)
    sr_error_free(&err);
  if (sr_audit_event_with(audit, "activity", put_event, &f, &err) < 0)
    sr_error_free(&err);
  else if (state_dirfd >= 0)
    mark_done(state_dirfd, &err);
  sr_error_free(&err);
}

int sr_activity_settle(const struct sr_audit *audit, int state_dirfd, sr_error_t *err)
{
  if (faccessat(state_dirfd, SR_ACT_DONE, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
    return 0;
  _cleanup_close_ int fd = openat(state_dirfd, SR_ACT_FILE, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0)
    return 0; /* no record (none was kept, or the supervisor never flushed) */
  _cleanup_free_ char *buf = malloc(SR_ACT_MAX_BYTES + 1);
  if (buf == NULL)
    return sr_error_make(err, ENOMEM, "activity");
  ssize_t n = read(fd, buf, SR_ACT_MAX_BYTES + 1);
  if (n <= 0 || n > SR_ACT_MAX_BYTES)
    return 0;
  buf[n] = '\0';
  /* Only a well-formed object goes into the audit line as it is. */
  yajl_val v = NULL;
  if (sr_json_parse(buf, (size_t)n, &v, err) < 0)
    return -1;
  bool object = YAJL_IS_OBJECT(v);
  yajl_tree_free(v);
  if (!object)
    return sr_error_make(err, 0, "%s: not a JSON object", SR_ACT_FILE);
  struct event_fields f = {.complete = false,
                           .reason = "the supervisor ended before the container (killed?): the "
                                     "record is its last flush",
                           .raw = buf,
                           .raw_len = (size_t)n};
  if (sr_audit_event_with(audit, "activity", put_event, &f, err) < 0)
    return -1;
  return mark_done(state_dirfd, err);
}

/* ---- The hand-over ------------------------------------------------------------------------ */

int sr_activity_recv_listener(int sock, char *msg, size_t size)
{
  char buf[16] = "";
  size_t got;
  int fd = sr_fd_pass_recv(sock, MSG_DONTWAIT, buf, sizeof(buf) - 1, &got);
  if (got > 0)
    snprintf(msg, size, "%.*s", (int)got, buf);
  return fd;
}

int sr_activity_send_listener(int sock, int listener)
{
  return sr_fd_pass_send(sock, listener, "L", 1);
}

int sr_activity_follow_me(int sock)
{
  if (send(sock, "T", 1, MSG_NOSIGNAL) != 1)
    return -1;
  /* Blocking, bounded: a supervisor that is there answers at once. */
  struct pollfd p = {sock, POLLIN, 0};
  int r = poll(&p, 1, SR_ACT_SNAPSHOT_MS);
  if (r == 0)
    return SR_ACT_NOT_ANSWERED;
  if (r != 1)
    return -1;
  char msg[4];
  size_t got = 0;
  _cleanup_close_ int map = sr_fd_pass_recv(sock, 0, msg, sizeof(msg), &got);
  if (got != 1)
    return -1;
  return map < 0 ? 0 : sr_activity_exec_bpf_follow(map, getpid());
}
