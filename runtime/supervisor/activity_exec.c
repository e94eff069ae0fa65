#include "build.h"

#include "activity.h"
#include "cleanup.h"

#include "proc.h"
#include "rfc3339.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/filter.h>
#include <linux/netlink.h>
#include <arpa/inet.h>
#include <dirent.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

/* Linux 6.6's subscription with an event filter (not in older uapi headers). */
struct sr_proc_input {
  uint32_t mcast_op;
  uint32_t event_type;
};

static bool kernel_filters_events(void)
{
  struct utsname u;
  int major = 0, minor = 0;
  if (uname(&u) < 0 || sscanf(u.release, "%d.%d", &major, &minor) != 2)
    return false;
  return major > 6 || (major == 6 && minor >= 6);
}

/* Where the filter below looks: the event, after the netlink and connector headers. */
#define EV_OFF (NLMSG_HDRLEN + sizeof(struct cn_msg))
#define EV_WHAT (EV_OFF + offsetof(struct proc_event, what))
#define EV_DATA (EV_OFF + offsetof(struct proc_event, event_data))
#define LD_AT(off) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (uint32_t)(off))

/* The proc connector reports every process of the host: in the kernel, before they wake the
 * supervisor, the events it has no use for are dropped: every kind but exec, fork and exit
 * (kernels before 6.6 send them all), and the forks and exits of threads (the record follows
 * processes; a thread's exec is reported as its process's).  Every exec passes.  (A classic
 * BPF load reads in network byte order, hence htonl on the kinds compared with.) */
int sr_activity_exec_filter(int fd)
{
  struct sock_filter f[] = {
      LD_AT(EV_WHAT),                                                  /* 0 */
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, htonl(PROC_EVENT_EXEC), 12, 0), /* 1: -> 14 */
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, htonl(PROC_EVENT_FORK), 2, 0),  /* 2: -> 5 */
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, htonl(PROC_EVENT_EXIT), 5, 0),  /* 3: -> 9 */
      BPF_STMT(BPF_RET | BPF_K, 0),                                    /* 4: dropped */
      LD_AT(EV_DATA + offsetof(struct fork_proc_event, child_pid)),    /* 5: fork */
      BPF_STMT(BPF_MISC | BPF_TAX, 0),                                 /* 6 */
      LD_AT(EV_DATA + offsetof(struct fork_proc_event, child_tgid)),   /* 7 */
      BPF_JUMP(BPF_JMP | BPF_JA, 3, 0, 0),                             /* 8: -> 12 */
      LD_AT(EV_DATA + offsetof(struct exit_proc_event, process_pid)),  /* 9: exit */
      BPF_STMT(BPF_MISC | BPF_TAX, 0),                                 /* 10 */
      LD_AT(EV_DATA + offsetof(struct exit_proc_event, process_tgid)), /* 11 */
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_X, 0, 1, 0),                    /* 12: pid == tgid */
      BPF_STMT(BPF_RET | BPF_K, 0),                                    /* 13: a thread's */
      BPF_STMT(BPF_RET | BPF_K, 0xffffffffu),                          /* 14: kept */
  };
  struct sock_fprog prog = {.len = sizeof(f) / sizeof(f[0]), .filter = f};
  return setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog));
}

int sr_activity_exec_socket(int *out, pid_t init, uint64_t pids_max, int *map, sr_error_t *err)
{
  int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_CONNECTOR);
  if (fd < 0)
    return sr_error_sys(err, "activity: the proc connector's socket");
  struct sockaddr_nl sa = {.nl_family = AF_NETLINK, .nl_groups = CN_IDX_PROC, .nl_pid = 0};
  int size = 1 << 20;
  setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size));
  /* The container's processes followed in the kernel where eBPF can: its filter is on before
   * the socket joins the group, so that no event it has not judged is ever queued (the kernel
   * sends the group every event while any listener is subscribed: another container's
   * supervisor, and one queued unjudged would be counted as the container's). */
  if (sr_activity_exec_bpf_track(fd, init, pids_max, map) < 0)
    *map = -1;
  if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
    sr_error_sys(err, "activity: bind the proc connector's socket");
    if (*map >= 0)
      close(*map);
    *map = -1;
    close(fd);
    return -1;
  }
  struct {
    struct nlmsghdr nl;
    struct cn_msg cn;
    struct sr_proc_input in;
  } __attribute__((packed)) m;
  memset(&m, 0, sizeof(m));
  /* Only fork, exec and exit events where the kernel can filter them; every event on older
   * kernels. */
  size_t len = kernel_filters_events() ? sizeof(m.in) : sizeof(uint32_t);
  m.nl.nlmsg_len = (uint32_t)(sizeof(m.nl) + sizeof(m.cn) + len);
  m.nl.nlmsg_type = NLMSG_DONE;
  m.nl.nlmsg_pid = 0;
  m.cn.id.idx = CN_IDX_PROC;
  m.cn.id.val = CN_VAL_PROC;
  m.cn.len = (uint16_t)len;
  m.in.mcast_op = PROC_CN_MCAST_LISTEN;
  m.in.event_type = PROC_EVENT_FORK | PROC_EVENT_EXEC | PROC_EVENT_EXIT;
  if (send(fd, &m, m.nl.nlmsg_len, 0) < 0) {
    sr_error_sys(err, "activity: subscribe to the proc connector");
    if (*map >= 0)
      close(*map);
    *map = -1;
    close(fd);
    return -1;
  }
  *out = fd;
  return 0;
}

/* ---- The container's processes, by host tgid ------------------------------------------- */

static size_t slot_of(pid_t pid)
{
  return ((size_t)pid * 2654435761u) & (SR_ACT_KNOWN - 1);
}

static bool known_has(const struct sr_activity *a, pid_t pid)
{
  for (size_t i = slot_of(pid), n = 0; n < SR_ACT_KNOWN; i = (i + 1) & (SR_ACT_KNOWN - 1), n++) {
    if (a->known[i] == pid)
      return true;
    if (a->known[i] == 0)
      return false;
  }
  return false;
}

static void known_rebuild(struct sr_activity *a)
{
  static pid_t live[SR_ACT_KNOWN];
  size_t n = 0;
  char path[32];
  /* Only the live: a process kept past its leader's exit (threads_live) is not removed by
   * an event when its last thread ends (the classic filter drops threads' exits). */
  for (size_t i = 0; i < SR_ACT_KNOWN; i++) {
    if (a->known[i] <= 0)
      continue;
    snprintf(path, sizeof(path), "/proc/%d", a->known[i]);
    if (access(path, F_OK) == 0)
      live[n++] = a->known[i];
  }
  memset(a->known, 0, sizeof(a->known));
  a->known_used = 0;
  for (size_t k = 0; k < n; k++) {
    size_t i = slot_of(live[k]);
    while (a->known[i] != 0)
      i = (i + 1) & (SR_ACT_KNOWN - 1);
    a->known[i] = live[k];
    a->known_used++;
  }
}

static void known_add(struct sr_activity *a, pid_t pid)
{
  if (pid <= 0 || known_has(a, pid))
    return;
  if (a->known_used >= SR_ACT_KNOWN * 3 / 4) {
    known_rebuild(a);
    if (a->known_used >= SR_ACT_KNOWN * 3 / 4)
      return; /* that many live processes: attributed by their pid namespace instead */
  }
  size_t i = slot_of(pid);
  while (a->known[i] > 0)
    i = (i + 1) & (SR_ACT_KNOWN - 1);
  if (a->known[i] == 0)
    a->known_used++;
  a->known[i] = pid;
}

static void known_del(struct sr_activity *a, pid_t pid)
{
  for (size_t i = slot_of(pid), n = 0; n < SR_ACT_KNOWN; i = (i + 1) & (SR_ACT_KNOWN - 1), n++) {
    if (a->known[i] == pid) {
      a->known[i] = -1;
      return;
    }
    if (a->known[i] == 0)
      return;
  }
}

/* Whether a process whose leader has exited has a thread left, which can fork and exec on:
 * it stays the container's (else its threads' children would be told by their pid namespace
 * only, and those that end before they are looked at missed). */
static bool threads_live(pid_t tgid)
{
  char path[48];
  snprintf(path, sizeof(path), "/proc/%d/task", tgid);
  _cleanup_dir_ DIR *d = opendir(path);
  if (d == NULL)
    return false;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    pid_t tid = (pid_t)strtol(e->d_name, NULL, 10);
    char state = 0;
    if (tid > 0 && tid != tgid && sr_proc_stat(tid, NULL, &state) == 0 && state != 'Z' &&
        state != 'X')
      return true;
  }
  return false;
}

void sr_activity_exec_seed(struct sr_activity *a, pid_t init)
{
  known_add(a, init);
}

static void record_exec(struct sr_activity *a, pid_t pid, uint64_t pidns, uint64_t when)
{
  struct stat st;
  /* Everything read of the process through one /proc/PID descriptor: once the process has
   * ended, nothing more is read through it, even when another has taken its pid. */
  _cleanup_close_ int procfd = sr_proc_open(pid);
  /* Only the container's own processes: followed in the kernel (every exec that arrives), or
   * descendants of its init (fork events), or, for what `exec` started from outside and its
   * children, by their pid namespace. */
  if (!a->execs_in_kernel && !known_has(a, pid)) {
    if (procfd < 0 || fstatat(procfd, "ns/pid", &st, 0) < 0 || (uint64_t)st.st_ino != pidns)
      return; /* another's, or gone before we looked (whose it was is not known) */
    known_add(a, pid);
  }
  a->execs++;
  a->dirty = true;
  if (a->n_exec >= SR_ACT_EXECS)
    return;
  struct sr_act_exec *e = &a->exec[a->n_exec];
  memset(e, 0, sizeof(*e));
  e->pid = pid;
  sr_rfc3339_now(e->time, sizeof(e->time));
  bool exe =
      sr_activity_read_process(procfd, e->exe, sizeof(e->exe), e->argv, sizeof(e->argv), " \n");
  /* Read after the event, so believed only if what was read is this exec's program.  Not
   * when the process started after the event: the exec's process had ended and another has
   * its pid (a host process's program would be listed as the container's).  Not when the
   * map, looked at after the read, no longer holds the process (ended: the entry goes at its
   * last task's exit, before the pid is free) or holds a later exec of it (its next program).
   * A map the kernel does not let the supervisor read says nothing. */
  uint64_t started = 0, latest = 0;
  if (sr_proc_stat_at(procfd, &started, NULL, &e->ppid) < 0 || sr_proc_started_after(started, when))
    exe = false;
  if (exe && a->exec_map >= 0) {
    if (sr_activity_exec_bpf_exec_time(a->exec_map, pid, &latest) == 0)
      exe = latest == when;
    else if (errno == ENOENT)
      exe = false;
  }
  if (!exe) {
    a->execs_gone++;
    return;
  }
  a->n_exec++;
}

void sr_activity_exec_drain(struct sr_activity *a, int fd, uint64_t pidns)
{
  char buf[8192] __attribute__((aligned(NLMSG_ALIGNTO)));
  for (;;) {
    struct sockaddr_nl from;
    socklen_t fl = sizeof(from);
    ssize_t n = recvfrom(fd, buf, sizeof(buf), MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
    if (n < 0) {
      if (errno == ENOBUFS) {
        a->execs_lost = true; /* events were dropped; go on with the next */
        a->dirty = true;
        continue;
      }
      return;
    }
    if (fl != sizeof(from) || from.nl_pid != 0)
      continue; /* only the kernel's */
    for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)n);
         h = NLMSG_NEXT(h, n)) {
      struct cn_msg *cn = NLMSG_DATA(h);
      if (cn->id.idx != CN_IDX_PROC || cn->id.val != CN_VAL_PROC ||
          cn->len < sizeof(struct proc_event) ||
          (size_t)(cn->data - (unsigned char *)h) + sizeof(struct proc_event) > h->nlmsg_len)
        continue;
      /* Copied out: the event sits 4-byte aligned after the headers, and it holds a u64. */
      struct proc_event event;
      memcpy(&event, cn->data, sizeof(event));
      const struct proc_event *ev = &event;
      if (ev->what == PROC_EVENT_EXEC) {
        record_exec(a, ev->event_data.exec.process_tgid, pidns, ev->timestamp_ns);
      } else if (ev->what == PROC_EVENT_FORK && a->execs_in_kernel) {
        /* A new process the kernel's filter could not follow (its map was full). */
        a->execs_lost = true;
        a->dirty = true;
      } else if (ev->what == PROC_EVENT_FORK) {
        /* A new process (not a thread) of one of the container's. */
        const struct fork_proc_event *f = &ev->event_data.fork;
        if (f->child_pid != f->child_tgid)
          continue;
        /* A new process with the pid of one still known: that one has ended (kept past
         * its leader's exit, its last thread's exit unseen); the pid is another's now. */
        known_del(a, f->child_tgid);
        if (known_has(a, f->parent_tgid))
          known_add(a, f->child_tgid);
      } else if (ev->what == PROC_EVENT_EXIT && !a->execs_in_kernel) {
        const struct exit_proc_event *x = &ev->event_data.exit;
        if (x->process_pid == x->process_tgid && !threads_live(x->process_tgid))
          known_del(a, x->process_tgid);
      }
    }
  }
}
