#include "build.h"

/* The container's processes followed in the kernel (activity.h): an eBPF socket filter on the
 * supervisor's proc connector socket keeps a map of the container's processes by host tgid.
 * The proc connector runs a listener's filter in the context of the task whose event it is,
 * before the event is queued: a fork's event before the child first runs, an exec's after the
 * exec and before the new program runs, an exit's as the task ends.  So the map is always
 * exactly the live processes (until their last thread ends) descended from the seeded ones
 * (the init; a `seerun exec`'s caller), with no window in which a new child's own fork could
 * be missed, and only the execs of those processes ever reach the supervisor: the host's
 * other processes cost each container a filter run in the kernel, not a wake-up. */

#include "activity.h"

#include <errno.h>
#include <linux/bpf.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef BPF_ATOMIC
#define BPF_ATOMIC 0xc0
#endif
#ifndef BPF_FETCH
#define BPF_FETCH 0x01
#endif
#ifndef SO_ATTACH_BPF
#define SO_ATTACH_BPF 50
#endif

/* Processes the map holds: the container's pids limit and room for the `seerun exec`s under
 * way (their caller and intermediate are followed too); without a limit, TRACK_MAX.  The
 * entries are allocated as it fills (BPF_F_NO_PREALLOC), but the kernel allocates and clears
 * a bucket per entry when it makes the map: 65,536 cost 0.9 ms, the default profile's 4,096
 * about a tenth of that. */
#define TRACK_MAX 65536
#define TRACK_EXECS 256

static int sys_bpf(int cmd, union bpf_attr *attr)
{
  return (int)syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

#define INSN(c, d, s, o, i)                                                                    \
  ((struct bpf_insn){.code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i)})
#define MOV_REG(d, s) INSN(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define MOV_IMM(d, i) INSN(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define ADD_IMM(d, i) INSN(BPF_ALU64 | BPF_ADD | BPF_K, d, 0, 0, i)
#define LDX_W(d, s, o) INSN(BPF_LDX | BPF_MEM | BPF_W, d, s, o, 0)
#define JEQ_IMM(d, i, o) INSN(BPF_JMP | BPF_JEQ | BPF_K, d, 0, o, i)
/* 32 bits: the event kinds are u32 (EXIT is 0x80000000, which a 64-bit compare would
 * sign-extend). */
#define JEQ32_IMM(d, i, o) INSN(BPF_JMP32 | BPF_JEQ | BPF_K, d, 0, o, (int32_t)(i))
#define JNE_IMM(d, i, o) INSN(BPF_JMP | BPF_JNE | BPF_K, d, 0, o, i)
#define JEQ_REG(d, s, o) INSN(BPF_JMP | BPF_JEQ | BPF_X, d, s, o, 0)
#define JGT_IMM(d, i, o) INSN(BPF_JMP | BPF_JGT | BPF_K, d, 0, o, i) /* unsigned */
/* *(u32 *)dst op= src (BPF_FETCH: src gets the old value, zero-extended). */
#define ATOMIC_W(d, s, op) INSN(BPF_STX | BPF_ATOMIC | BPF_W, d, s, 0, op)
#define JA(o) INSN(BPF_JMP | BPF_JA, 0, 0, o, 0)
#define CALL(f) INSN(BPF_JMP | BPF_CALL, 0, 0, 0, f)
#define EXIT() INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)

/* The event (after the netlink and connector headers) is copied to the stack at fp-32: its
 * kind at fp-32, its time at fp-24, and the first four words of its data at fp-16..fp-4,
 * which for each kind followed are: fork (parent pid, parent tgid, child pid, child tgid);
 * exec and exit (pid, tgid, ...).  The tgid a lookup needs is at fp-12 for all three.  A new
 * entry's value is made at fp-48. */
#define EV_OFF (NLMSG_HDRLEN + sizeof(struct cn_msg))
#define W_KIND (-32)
#define W_TIME (-24)
#define W_TGID (-12)
#define W_CHILD_PID (-8)
#define W_CHILD_TGID (-4)
#define W_VALUE (-48)

/* The program below, with its jumps by label (resolved into offsets by load). */
enum label { L_NONE, L_DROP, L_FORK, L_PROCESS, L_MAKER, L_EXIT, L_EXEC, L_KEEP, L_COUNT };
struct op {
  struct bpf_insn i;
  enum label at, to;
};
#define OP(insn) {insn, L_NONE, L_NONE}
#define AT(l, insn) {insn, l, L_NONE}
#define GO(insn, l) {insn, L_NONE, l}
#define LD_MAP_AT(l, d, fd)                                                                    \
  AT(l, INSN(BPF_LD | BPF_DW | BPF_IMM, d, BPF_PSEUDO_MAP_FD, 0, fd)), OP(INSN(0, 0, 0, 0, 0))
#define LD_MAP_OPS(d, fd) LD_MAP_AT(L_NONE, d, fd)
/* A look-up of the tgid at fp+off in the map (its first instruction labelled l): r0 the
 * value, or NULL. */
#define LOOKUP_AT(l, fd, off)                                                                  \
  LD_MAP_AT(l, BPF_REG_1, fd), OP(MOV_REG(BPF_REG_2, BPF_REG_10)), OP(ADD_IMM(BPF_REG_2, off)), \
      OP(CALL(BPF_FUNC_map_lookup_elem))
#define LOOKUP_OPS(fd, off) LOOKUP_AT(L_NONE, fd, off)

/* A map entry's value (struct sr_act_followed, activity.h): how many of the process's tasks
 * (its threads) are alive, and the time of its latest exec.  The process is followed until
 * the last of its tasks exits, not until its leader does: a leader can exit alone (SYS_exit)
 * and leave its threads to fork and exec (a non-leader's exec takes over the group's pid), and
 * a process no longer followed would hide everything it starts from then on.  A thread's fork
 * event names the group it joins (child tgid); every task's exit is counted down, atomically
 * (the group's threads exit on several CPUs at once).  A group whose count reaches 0 has no
 * task left that could fork one, so no count goes up again.  The exec's time is the event's:
 * the supervisor, which reads the program from /proc after the event, tells by it whether
 * what it read is still that exec's program (not one the process exec'd since). */
static int load(int map, bool maker, int *out)
{
  struct op ops[] = {
      OP(MOV_IMM(BPF_REG_2, (int32_t)EV_OFF)),
      OP(MOV_REG(BPF_REG_3, BPF_REG_10)),
      OP(ADD_IMM(BPF_REG_3, W_KIND)),
      OP(MOV_IMM(BPF_REG_4, 32)),
      OP(CALL(BPF_FUNC_skb_load_bytes)), /* r1: the packet, as the program got it */
      GO(JNE_IMM(BPF_REG_0, 0, 0), L_DROP),
      OP(LDX_W(BPF_REG_1, BPF_REG_10, W_KIND)),
      GO(JEQ32_IMM(BPF_REG_1, PROC_EVENT_FORK, 0), L_FORK),
      GO(JEQ32_IMM(BPF_REG_1, PROC_EVENT_EXIT, 0), L_EXIT),
      GO(JEQ32_IMM(BPF_REG_1, PROC_EVENT_EXEC, 0), L_EXEC),
      AT(L_DROP, MOV_IMM(BPF_REG_0, 0)),
      OP(EXIT()),
      /* fork: a thread of a followed process is one more of its tasks */
      AT(L_FORK, LDX_W(BPF_REG_1, BPF_REG_10, W_CHILD_PID)),
      OP(LDX_W(BPF_REG_2, BPF_REG_10, W_CHILD_TGID)),
      GO(JEQ_REG(BPF_REG_1, BPF_REG_2, 0), L_PROCESS),
      LOOKUP_OPS(map, W_CHILD_TGID), /* the group it joins */
      GO(JEQ_IMM(BPF_REG_0, 0, 0), L_DROP),
      OP(MOV_IMM(BPF_REG_1, 1)),
      OP(ATOMIC_W(BPF_REG_0, BPF_REG_1, BPF_ADD)),
      GO(JA(0), L_DROP),
      /* A new process made by a followed one is followed (its one task).  The one that made
       * it is the task the filter runs in: the event names the child's parent, which with
       * CLONE_PARENT is the maker's parent, a process of the host's once the maker is an
       * orphan of `seerun exec` (its caller gone, its parent the host's init). */
      AT(L_PROCESS, CALL(BPF_FUNC_get_current_pid_tgid)),
      OP(INSN(BPF_ALU64 | BPF_RSH | BPF_K, BPF_REG_0, 0, 0, 32)), /* its tgid */
      OP(INSN(BPF_STX | BPF_MEM | BPF_W, BPF_REG_10, BPF_REG_0, W_TGID, 0)),
      LOOKUP_OPS(map, W_TGID), /* the maker's (the parent's, without the three above) */
      GO(JEQ_IMM(BPF_REG_0, 0, 0), L_DROP),
      OP(INSN(BPF_ST | BPF_MEM | BPF_DW, BPF_REG_10, 0, W_VALUE, 1)),    /* one task */
      OP(INSN(BPF_ST | BPF_MEM | BPF_DW, BPF_REG_10, 0, W_VALUE + 8, 0)), /* no exec yet */
      LD_MAP_OPS(BPF_REG_1, map),
      OP(MOV_REG(BPF_REG_2, BPF_REG_10)),
      OP(ADD_IMM(BPF_REG_2, W_CHILD_TGID)),
      OP(MOV_REG(BPF_REG_3, BPF_REG_10)),
      OP(ADD_IMM(BPF_REG_3, W_VALUE)),
      OP(MOV_IMM(BPF_REG_4, BPF_ANY)),
      OP(CALL(BPF_FUNC_map_update_elem)),
      GO(JEQ_IMM(BPF_REG_0, 0, 0), L_DROP), /* followed */
      GO(JA(0), L_KEEP), /* not followed (the map is full): kept, so that the record says so */
      /* exit of any task: one fewer; the process no longer followed after its last */
      LOOKUP_AT(L_EXIT, map, W_TGID),
      GO(JEQ_IMM(BPF_REG_0, 0, 0), L_DROP),
      OP(MOV_IMM(BPF_REG_1, -1)),
      OP(ATOMIC_W(BPF_REG_0, BPF_REG_1, BPF_ADD | BPF_FETCH)), /* r1: the count before */
      GO(JGT_IMM(BPF_REG_1, 1, 0), L_DROP),                     /* others live */
      LD_MAP_OPS(BPF_REG_1, map),
      OP(MOV_REG(BPF_REG_2, BPF_REG_10)),
      OP(ADD_IMM(BPF_REG_2, W_TGID)),
      OP(CALL(BPF_FUNC_map_delete_elem)),
      GO(JA(0), L_DROP),
      /* exec: kept if the process is followed, its time noted */
      LOOKUP_AT(L_EXEC, map, W_TGID),
      GO(JEQ_IMM(BPF_REG_0, 0, 0), L_DROP),
      OP(INSN(BPF_LDX | BPF_MEM | BPF_DW, BPF_REG_1, BPF_REG_10, W_TIME, 0)),
      OP(INSN(BPF_STX | BPF_MEM | BPF_DW, BPF_REG_0, BPF_REG_1, 8, 0)),
      AT(L_KEEP, MOV_IMM(BPF_REG_0, -1)),
      OP(EXIT()),
  };
  enum { N = sizeof(ops) / sizeof(ops[0]) };
  size_t at[L_COUNT] = {0};
  /* The maker's three instructions follow L_PROCESS's label. */
  for (size_t k = 0; k < N; k++)
    if (ops[k].at != L_NONE)
      at[ops[k].at] = k;
  at[L_MAKER] = at[L_PROCESS];
  struct bpf_insn p[N];
  for (size_t k = 0; k < N; k++) {
    p[k] = ops[k].i;
    if (ops[k].to != L_NONE)
      p[k].off = (int16_t)((long)at[ops[k].to] - (long)k - 1);
  }
  /* A kernel whose socket filters may not call it (older than 6.x): the event's parent, a
   * no-op in its place (CLONE_PARENT children of exec's orphans are then not followed). */
  if (!maker)
    p[at[L_MAKER]] = p[at[L_MAKER] + 1] = p[at[L_MAKER] + 2] = JA(0);
  union bpf_attr a;
  memset(&a, 0, sizeof(a));
  a.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
  a.insns = (uint64_t)(uintptr_t)p;
  a.insn_cnt = N;
  a.license = (uint64_t)(uintptr_t) "GPL";
  memcpy(a.prog_name, "seerun_procs", sizeof("seerun_procs"));
  int fd = sys_bpf(BPF_PROG_LOAD, &a);
  if (fd < 0)
    return -1;
  *out = fd;
  return 0;
}

int sr_activity_exec_bpf_follow(int map_fd, pid_t pid)
{
  /* One task: the init and `seerun exec` are single-threaded when they are seeded. */
  uint32_t key = (uint32_t)pid;
  struct sr_act_followed value = {.tasks = 1};
  union bpf_attr a;
  memset(&a, 0, sizeof(a));
  a.map_fd = (uint32_t)map_fd;
  a.key = (uint64_t)(uintptr_t)&key;
  a.value = (uint64_t)(uintptr_t)&value;
  a.flags = BPF_ANY;
  return sys_bpf(BPF_MAP_UPDATE_ELEM, &a) < 0 ? -1 : 0;
}

int sr_activity_exec_bpf_exec_time(int map_fd, pid_t pid, uint64_t *ns)
{
  uint32_t key = (uint32_t)pid;
  struct sr_act_followed value;
  union bpf_attr a;
  memset(&a, 0, sizeof(a));
  a.map_fd = (uint32_t)map_fd;
  a.key = (uint64_t)(uintptr_t)&key;
  a.value = (uint64_t)(uintptr_t)&value;
  if (sys_bpf(BPF_MAP_LOOKUP_ELEM, &a) < 0)
    return -1;
  *ns = value.exec_ns;
  return 0;
}

int sr_activity_exec_bpf_track(int sock, pid_t init, uint64_t pids_max, int *map_out)
{
  union bpf_attr a;
  memset(&a, 0, sizeof(a));
  a.map_type = BPF_MAP_TYPE_HASH;
  a.key_size = sizeof(uint32_t);
  a.value_size = sizeof(struct sr_act_followed);
  a.max_entries = pids_max && pids_max < TRACK_MAX - TRACK_EXECS
                      ? (uint32_t)pids_max + TRACK_EXECS
                      : TRACK_MAX;
  a.map_flags = BPF_F_NO_PREALLOC;
  memcpy(a.map_name, "seerun_procs", sizeof("seerun_procs"));
  int map = sys_bpf(BPF_MAP_CREATE, &a);
  if (map < 0)
    return -1;
  int prog = -1;
  if (sr_activity_exec_bpf_follow(map, init) < 0 ||
      (load(map, true, &prog) < 0 && load(map, false, &prog) < 0) ||
      setsockopt(sock, SOL_SOCKET, SO_ATTACH_BPF, &prog, sizeof(prog)) < 0) {
    int saved = errno;
    if (prog >= 0)
      close(prog);
    close(map);
    errno = saved;
    return -1;
  }
  close(prog); /* the socket holds it, and it the map */
  *map_out = map;
  return 0;
}
