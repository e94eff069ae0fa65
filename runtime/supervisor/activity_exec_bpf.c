#include "build.h"

/* The container's processes followed in the kernel (activity.h): an eBPF socket filter on the
 * supervisor's proc connector socket keeps a map of the container's processes by host tgid.
 * The proc connector runs a listener's filter in the context of the task whose event it is,
 * before the event is queued: a fork's event before the child first runs, an exec's after the
 * exec and before the new program runs, an exit's as the task ends.  So the map is always
 * exactly the live processes (until their last thread ends) descended from the seeded ones (the init; a `seerun exec`'s
 * caller), with no window in which a new child's own fork could be missed, and only the
 * execs of those processes ever reach the supervisor: the host's other processes cost each
 * container a filter run in the kernel, not a wake-up. */

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
#define ST_W(d, o, i) INSN(BPF_ST | BPF_MEM | BPF_W, d, 0, o, i)
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
#define LD_MAP(d, fd) INSN(BPF_LD | BPF_DW | BPF_IMM, d, BPF_PSEUDO_MAP_FD, 0, fd), INSN(0, 0, 0, 0, 0)

/* The event (after the netlink and connector headers) is copied to the stack at fp-32: its
 * kind at fp-32, and the first four words of its data at fp-16..fp-4, which for each kind
 * followed are: fork (parent pid, parent tgid, child pid, child tgid); exec and exit (pid,
 * tgid, ...).  The tgid a lookup needs is at fp-12 for all three. */
#define EV_OFF (NLMSG_HDRLEN + sizeof(struct cn_msg))
#define W_KIND (-32)
#define W_PID (-16)
#define W_TGID (-12)
#define W_CHILD_PID (-8)
#define W_CHILD_TGID (-4)
#define W_VALUE (-40)

/* A map entry's value: how many of the process's tasks (its threads) are alive.  The process
 * is followed until the last of them exits, not until its leader does: a leader can exit
 * alone (SYS_exit) and leave its threads to fork and exec (a non-leader's exec takes over the
 * group's pid), and a process no longer followed would hide everything it starts from then
 * on.  A thread's fork event names the group it joins (child tgid); every task's exit is
 * counted down, atomically (the group's threads exit on several CPUs at once).  A group
 * whose count reaches 0 has no task left that could fork one, so no count goes up again. */
static int load(int map, bool maker, int *out)
{
  /* Jump offsets count the instructions between the jump and its target. */
  struct bpf_insn p[] = {
      /* 0 */ MOV_IMM(BPF_REG_2, (int32_t)EV_OFF),
      /* 1 */ MOV_REG(BPF_REG_3, BPF_REG_10),
      /* 2 */ ADD_IMM(BPF_REG_3, W_KIND),
      /* 3 */ MOV_IMM(BPF_REG_4, 32),
      /* 4 */ CALL(BPF_FUNC_skb_load_bytes), /* r1: the packet, as the program got it */
      /* 5 */ JNE_IMM(BPF_REG_0, 0, 4),      /* -> 10: drop */
      /* 6 */ LDX_W(BPF_REG_1, BPF_REG_10, W_KIND),
      /* 7 */ JEQ32_IMM(BPF_REG_1, PROC_EVENT_FORK, 4),  /* -> 12 */
      /* 8 */ JEQ32_IMM(BPF_REG_1, PROC_EVENT_EXIT, 35), /* -> 44 */
      /* 9 */ JEQ32_IMM(BPF_REG_1, PROC_EVENT_EXEC, 49), /* -> 59 */
      /* 10: drop */ MOV_IMM(BPF_REG_0, 0),
      /* 11 */ EXIT(),
      /* 12: fork */ LDX_W(BPF_REG_1, BPF_REG_10, W_CHILD_PID),
      /* 13 */ LDX_W(BPF_REG_2, BPF_REG_10, W_CHILD_TGID),
      /* 14 */ JEQ_REG(BPF_REG_1, BPF_REG_2, 9), /* a process -> 24 */
      /* 15: a thread of a followed process: one more of its tasks */
      LD_MAP(BPF_REG_1, map),
      /* 17 */ MOV_REG(BPF_REG_2, BPF_REG_10),
      /* 18 */ ADD_IMM(BPF_REG_2, W_CHILD_TGID), /* the group it joins */
      /* 19 */ CALL(BPF_FUNC_map_lookup_elem),
      /* 20 */ JEQ_IMM(BPF_REG_0, 0, -11), /* -> 10 */
      /* 21 */ MOV_IMM(BPF_REG_1, 1),
      /* 22 */ ATOMIC_W(BPF_REG_0, BPF_REG_1, BPF_ADD),
      /* 23 */ JA(-14), /* -> 10 */
      /* 24: a new process made by a followed one is followed (its one task).  The one that
       * made it is the task the filter runs in: the event names the child's parent, which
       * with CLONE_PARENT is the maker's parent, a process of the host's once the maker is
       * an orphan of `seerun exec` (its caller gone, its parent the host's init). */
      CALL(BPF_FUNC_get_current_pid_tgid),
      /* 25 */ INSN(BPF_ALU64 | BPF_RSH | BPF_K, BPF_REG_0, 0, 0, 32), /* its tgid */
      /* 26 */ INSN(BPF_STX | BPF_MEM | BPF_W, BPF_REG_10, BPF_REG_0, W_TGID, 0),
      /* 27 */ LD_MAP(BPF_REG_1, map),
      /* 29 */ MOV_REG(BPF_REG_2, BPF_REG_10),
      /* 30 */ ADD_IMM(BPF_REG_2, W_TGID), /* the maker's (the parent's: no-ops above) */
      /* 31 */ CALL(BPF_FUNC_map_lookup_elem),
      /* 32 */ JEQ_IMM(BPF_REG_0, 0, -23), /* -> 10 */
      /* 33 */ ST_W(BPF_REG_10, W_VALUE, 1),
      /* 34 */ LD_MAP(BPF_REG_1, map),
      /* 36 */ MOV_REG(BPF_REG_2, BPF_REG_10),
      /* 37 */ ADD_IMM(BPF_REG_2, W_CHILD_TGID),
      /* 38 */ MOV_REG(BPF_REG_3, BPF_REG_10),
      /* 39 */ ADD_IMM(BPF_REG_3, W_VALUE),
      /* 40 */ MOV_IMM(BPF_REG_4, BPF_ANY),
      /* 41 */ CALL(BPF_FUNC_map_update_elem),
      /* 42: followed: dropped */ JEQ_IMM(BPF_REG_0, 0, -33), /* -> 10 */
      /* 43: not followed (the map is full): kept, so that the record says so */
      JA(21), /* -> 65 */
      /* 44: exit of any task: one fewer; the process no longer followed after its last */
      LD_MAP(BPF_REG_1, map),
      /* 46 */ MOV_REG(BPF_REG_2, BPF_REG_10),
      /* 47 */ ADD_IMM(BPF_REG_2, W_TGID),
      /* 48 */ CALL(BPF_FUNC_map_lookup_elem),
      /* 49 */ JEQ_IMM(BPF_REG_0, 0, -40), /* -> 10 */
      /* 50 */ MOV_IMM(BPF_REG_1, -1),
      /* 51 */ ATOMIC_W(BPF_REG_0, BPF_REG_1, BPF_ADD | BPF_FETCH), /* r1: the count before */
      /* 52 */ JGT_IMM(BPF_REG_1, 1, -43), /* others live -> 10 */
      /* 53 */ LD_MAP(BPF_REG_1, map),
      /* 55 */ MOV_REG(BPF_REG_2, BPF_REG_10),
      /* 56 */ ADD_IMM(BPF_REG_2, W_TGID),
      /* 57 */ CALL(BPF_FUNC_map_delete_elem),
      /* 58 */ JA(-49), /* -> 10 */
      /* 59: exec: kept if the process is followed */
      LD_MAP(BPF_REG_1, map),
      /* 61 */ MOV_REG(BPF_REG_2, BPF_REG_10),
      /* 62 */ ADD_IMM(BPF_REG_2, W_TGID),
      /* 63 */ CALL(BPF_FUNC_map_lookup_elem),
      /* 64 */ JEQ_IMM(BPF_REG_0, 0, -55), /* -> 10 */
      /* 65: keep */ MOV_IMM(BPF_REG_0, -1),
      /* 66 */ EXIT(),
  };
  _Static_assert(sizeof(p) / sizeof(p[0]) == 67, "the jump offsets above count 67 instructions");
  /* A kernel whose socket filters may not call it (older than 6.x): the event's parent, a
   * no-op in its place (CLONE_PARENT children of exec's orphans are then not followed). */
  if (!maker)
    p[24] = p[25] = p[26] = JA(0);
  union bpf_attr a;
  memset(&a, 0, sizeof(a));
  a.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
  a.insns = (uint64_t)(uintptr_t)p;
  a.insn_cnt = (uint32_t)(sizeof(p) / sizeof(p[0]));
  a.license = (uint64_t)(uintptr_t) "GPL";
  memcpy(a.prog_name, "seerun_procs", sizeof("seerun_procs"));
  int fd = sys_bpf(BPF_PROG_LOAD, &a);
  if (fd < 0)
    return -1;
  *out = fd;
  return 0;
}

int sr_activity_exec_follow(int map_fd, pid_t pid)
{
  /* One task: the init and `seerun exec` are single-threaded when they are seeded. */
  uint32_t key = (uint32_t)pid, value = 1;
  union bpf_attr a;
  memset(&a, 0, sizeof(a));
  a.map_fd = (uint32_t)map_fd;
  a.key = (uint64_t)(uintptr_t)&key;
  a.value = (uint64_t)(uintptr_t)&value;
  a.flags = BPF_ANY;
  return sys_bpf(BPF_MAP_UPDATE_ELEM, &a) < 0 ? -1 : 0;
}

int sr_activity_exec_track(int sock, pid_t init, uint64_t pids_max, int *map_out)
{
  union bpf_attr a;
  memset(&a, 0, sizeof(a));
  a.map_type = BPF_MAP_TYPE_HASH;
  a.key_size = sizeof(uint32_t);
  a.value_size = sizeof(uint32_t);
  a.max_entries = pids_max && pids_max < TRACK_MAX - TRACK_EXECS
                      ? (uint32_t)pids_max + TRACK_EXECS
                      : TRACK_MAX;
  a.map_flags = BPF_F_NO_PREALLOC;
  memcpy(a.map_name, "seerun_procs", sizeof("seerun_procs"));
  int map = sys_bpf(BPF_MAP_CREATE, &a);
  if (map < 0)
    return -1;
  int prog = -1;
  if (sr_activity_exec_follow(map, init) < 0 ||
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
  /* What was queued before the filter: none of it is the container's (its init has not run
   * yet), and none of it was judged by the filter. */
  char buf[4096];
  while (recv(sock, buf, sizeof(buf), MSG_DONTWAIT) >= 0 || errno == ENOBUFS)
    ;
  *map_out = map;
  return 0;
}
