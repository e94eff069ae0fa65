#include "build.h"

/* Build-time generator of seerun's default seccomp filter.
 *
 *   gen_seccomp_default > runtime/seccomp/seccomp_default_prog.c   the C source of the BPF program
 *   gen_seccomp_default --list                             the decision for every syscall
 *
 * The policy is runtime/seccomp/seccomp_default_syscalls.h; libseccomp supplies the syscall tables
 * (names to numbers, per architecture) and compiles the argument comparisons.  The program:
 *
 *  1. The architecture: x86_64 and i386 go on, anything else kills the process.
 *  2. Per architecture, a binary search over syscall-number ranges, each with one verdict:
 *       - allowed, or denied with EPERM, as the lists say, for every name in libseccomp's
 *         table (a number the table lacks is decided by SR_SD_BY_NUMBER, if listed there);
 *       - ENOSYS for clone3 and for every number the filter does not know (newer than it, or a
 *         hole), so callers take their "old kernel" path;
 *       - killed: x32 syscalls (the x32 bit set on AUDIT_ARCH_X86_64), except -1;
 *       - socket and ioctl: EPERM for AF_VSOCK and TIOCSTI/TIOCLINUX, compared on the low 32
 *         bits (what the kernel reads from an int argument), allowed otherwise;
 *       - clone and personality: on to part 3.
 *     Contiguous numbers share a range, so the search is a few comparisons deep and the whole
 *     program about a third of the size of libseccomp's per-syscall tree for the same policy
 *     (which matters: the kernel's cost to load a filter grows with its size).
 *  3. libseccomp's filter (x86_64 + x86, default EPERM) with Docker's argument conditions on
 *     clone and personality.
 *
 * Before writing anything, the generator runs the program in a small BPF interpreter against
 * every syscall of both tables, the lists and the edge cases, so a wrong filter fails the build
 * on any build host without being loaded.  Nothing here runs in seerun: the output is a
 * constant array.
 */

#include <seccomp.h>

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "seccomp_default_syscalls.h"

#if !defined(__x86_64__)
#error "the default seccomp filter is defined for x86_64 (with i386) only; add the architecture"
#endif

#define STR(n) #n,
static const char *const allow_names[] = {SR_SD_ALLOW(STR)};
static const char *const cond_names[] = {SR_SD_CONDITIONAL(STR)};
static const char *const deny_names[] = {SR_SD_DENY(STR)};
static const char *const enosys_names[] = {SR_SD_ENOSYS(STR)};
#define NUM(v) v##ULL,
static const uint64_t personality_values[] = {SR_SD_PERSONALITY(NUM)};

struct by_number {
  const char *name;
  uint32_t nr;
  int flags;
};
#define BYNR(n, nr, f) {#n, nr, f},
static const struct by_number by_number[] = {SR_SD_BY_NUMBER(BYNR)};

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

/* Numbers scanned for libseccomp's table; every table ends far below. */
#define NR_SCAN 4096
#define X32_SYSCALL_BIT 0x40000000U

struct arch {
  uint32_t token; /* libseccomp's token, which is the AUDIT_ARCH_* value */
  const char *name;
  bool is64;
};
static const struct arch arches[] = {
    {SCMP_ARCH_X86_64, "x86_64", true},
    {SCMP_ARCH_X86, "x86", false},
};

enum verdict { V_LIBSECCOMP, V_ALLOW, V_EPERM, V_ENOSYS, V_KILL, V_IOCTL, V_SOCKET, V_COUNT };

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
  va_list ap;
  fputs("gen_seccomp_default: ", stderr);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  exit(1);
}

static bool in_list(const char *const *list, size_t n, const char *name)
{
  for (size_t i = 0; i < n; i++)
    if (strcmp(list[i], name) == 0)
      return true;
  return false;
}

static bool is_allowed(const char *name)
{
  return in_list(allow_names, N_OF(allow_names), name) ||
         in_list(cond_names, N_OF(cond_names), name);
}

/* The number of `name` on `arch` in libseccomp's table, or -1. */
static int arch_nr(const struct arch *a, const char *name)
{
  int nr = seccomp_syscall_resolve_name_arch(a->token, name);
  return nr >= 0 ? nr : -1;
}

/* The number the kernel knows `name` by on `arch` (on x86, the direct socket and IPC syscalls
 * that libseccomp resolves to socketcall/ipc pseudo numbers), or -1. */
static int real_nr(const struct arch *a, const char *name)
{
  int nr = arch_nr(a, name);
  for (int n = 0; nr < 0 && n < NR_SCAN; n++) {
    char *known = seccomp_syscall_resolve_num_arch(a->token, n);
    if (known && strcmp(known, name) == 0)
      nr = n;
    free(known);
  }
  return nr;
}

/* Whether libseccomp can place a rule for `name` on `arch`: a real number, or one of the
 * socketcall/ipc pseudo numbers that it rewrites itself on x86. */
static bool arch_has(const struct arch *a, const char *name)
{
  int nr = seccomp_syscall_resolve_name_arch(a->token, name);
  return nr >= 0 || (nr <= -100 && nr > -10000);
}

static const struct by_number *number_of(const char *name)
{
  for (size_t i = 0; i < N_OF(by_number); i++)
    if (strcmp(by_number[i].name, name) == 0)
      return &by_number[i];
  return NULL;
}

static void check_lists(void)
{
  const char *const *lists[] = {allow_names, cond_names, deny_names, enosys_names};
  size_t sizes[] = {N_OF(allow_names), N_OF(cond_names), N_OF(deny_names), N_OF(enosys_names)};

  for (size_t l = 0; l < N_OF(lists); l++)
    for (size_t i = 0; i < sizes[l]; i++) {
      const char *name = lists[l][i];
      int seen = 0;
      for (size_t m = 0; m < N_OF(lists); m++)
        for (size_t j = 0; j < sizes[m]; j++)
          seen += strcmp(lists[m][j], name) == 0;
      if (seen != 1)
        die("syscall \"%s\" is listed %d times in seccomp_default_syscalls.h", name, seen);
      if (seccomp_syscall_resolve_name(name) == __NR_SCMP_ERROR && number_of(name) == NULL)
        die("syscall \"%s\" is unknown to libseccomp and has no SR_SD_BY_NUMBER entry", name);
    }
  for (size_t i = 0; i < N_OF(by_number); i++)
    if (!is_allowed(by_number[i].name) && !in_list(deny_names, N_OF(deny_names), by_number[i].name))
      die("SR_SD_BY_NUMBER entry \"%s\" is neither allowed nor denied", by_number[i].name);
}

/* ---- part 3: libseccomp's filter, for the argument conditions --------------------------- */

static void add_rule(scmp_filter_ctx ctx, uint32_t action, const char *name, unsigned int n,
                     const struct scmp_arg_cmp *cmp)
{
  bool somewhere = false;
  for (size_t a = 0; a < N_OF(arches); a++)
    somewhere |= arch_has(&arches[a], name);
  if (!somewhere)
    return; /* only by number (SR_SD_BY_NUMBER), or on no x86 ABI (skipped) */
  int rc = seccomp_rule_add_array(ctx, action, seccomp_syscall_resolve_name(name), n, cmp);
  if (rc < 0)
    die("libseccomp: add a rule for \"%s\": %s", name, strerror(-rc));
}

static struct sock_filter *libseccomp_part(size_t *len)
{
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ERRNO(EPERM));
  if (ctx == NULL)
    die("libseccomp: seccomp_init failed");
  if (seccomp_arch_native() != SCMP_ARCH_X86_64)
    die("libseccomp's native architecture is not x86_64");
  /* Only x86_64 and i386 numbers get here, so this is never reached; the kernel may not offer
   * KILL_PROCESS to libseccomp's probe on a build host. */
  if (seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS) < 0 &&
      seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL) < 0)
    die("libseccomp: set the bad architecture action");
  if (seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0) < 0 ||
      seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2) < 0)
    die("libseccomp: set attributes");
  if (seccomp_arch_add(ctx, SCMP_ARCH_X86) < 0)
    die("libseccomp: add the x86 architecture");

  /* Only the syscalls with argument conditions reach this part (V_LIBSECCOMP below). */
  struct scmp_arg_cmp clone_ok = SCMP_A0(SCMP_CMP_MASKED_EQ, SR_SD_CLONE_NS_FLAGS, 0);
  add_rule(ctx, SCMP_ACT_ALLOW, "clone", 1, &clone_ok);
  for (size_t i = 0; i < N_OF(personality_values); i++) {
    struct scmp_arg_cmp p = SCMP_A0(SCMP_CMP_EQ, personality_values[i]);
    add_rule(ctx, SCMP_ACT_ALLOW, "personality", 1, &p);
  }

  int fd = memfd_create("seccomp-default", MFD_CLOEXEC);
  if (fd < 0)
    die("memfd_create: %s", strerror(errno));
  int rc = seccomp_export_bpf(ctx, fd);
  if (rc < 0)
    die("libseccomp: export the filter: %s", strerror(-rc));
  seccomp_release(ctx);
  off_t size = lseek(fd, 0, SEEK_END);
  if (size <= 0 || size % sizeof(struct sock_filter) != 0)
    die("libseccomp exported %lld bytes", (long long)size);
  struct sock_filter *prog = malloc((size_t)size);
  if (prog == NULL || pread(fd, prog, (size_t)size, 0) != size)
    die("read the exported filter");
  close(fd);
  *len = (size_t)size / sizeof(struct sock_filter);
  return prog;
}

/* ---- parts 1 and 2: the architecture and the number ranges ---------------------------- */

struct interval {
  uint32_t hi; /* from the previous interval's hi + 1 */
  enum verdict v;
};

/* The verdict on syscall `nr` of `a`. */
static enum verdict verdict_of(const struct arch *a, uint32_t nr)
{
  if (a->is64 && nr >= X32_SYSCALL_BIT)
    return nr == 0xffffffffU ? V_ENOSYS : V_KILL; /* -1: "no syscall", as the kernel says */
  /* Looked up once per architecture: real_nr scans the table. */
  static int ioctl_nr[N_OF(arches)], socket_nr[N_OF(arches)];
  size_t ai = (size_t)(a - arches);
  if (ioctl_nr[ai] == 0) {
    ioctl_nr[ai] = real_nr(a, "ioctl");
    socket_nr[ai] = real_nr(a, "socket");
    if (ioctl_nr[ai] <= 0 || socket_nr[ai] <= 0)
      die("%s: no ioctl or socket syscall", a->name);
  }
  if ((int)nr == ioctl_nr[ai])
    return V_IOCTL;
  if ((int)nr == socket_nr[ai])
    return V_SOCKET;
  for (size_t i = 0; i < N_OF(by_number); i++) {
    const struct by_number *b = &by_number[i];
    if (b->nr != nr || ((b->flags & SR_SD_64) && !a->is64) || arch_has(a, b->name))
      continue;
    char *known = seccomp_syscall_resolve_num_arch(a->token, (int)nr);
    if (known)
      die("SR_SD_BY_NUMBER: %s %u is \"%s\" for libseccomp", a->name, nr, known);
    return is_allowed(b->name) ? V_ALLOW : V_EPERM;
  }
  if (nr >= NR_SCAN)
    return V_ENOSYS;
  char *name = seccomp_syscall_resolve_num_arch(a->token, (int)nr);
  enum verdict v = name == NULL                                      ? V_ENOSYS
                   : in_list(cond_names, N_OF(cond_names), name)     ? V_LIBSECCOMP
                   : in_list(enosys_names, N_OF(enosys_names), name) ? V_ENOSYS
                   : in_list(allow_names, N_OF(allow_names), name)   ? V_ALLOW
                                                                     : V_EPERM;
  free(name);
  return v;
}

static size_t intervals_of(const struct arch *a, struct interval *out, size_t max)
{
  size_t n = 0;
  /* Every number above NR_SCAN behaves like NR_SCAN, except the x32 range and -1. */
  static const uint32_t tail[] = {X32_SYSCALL_BIT - 1, 0xfffffffeU, 0xffffffffU};
  for (size_t t = 0;; t++) {
    uint32_t nr = t <= NR_SCAN ? (uint32_t)t : tail[t - NR_SCAN - 1];
    enum verdict v = verdict_of(a, nr);
    if (n > 0 && out[n - 1].v == v) {
      out[n - 1].hi = nr;
    } else {
      if (n == max)
        die("%s: too many ranges", a->name);
      out[n++] = (struct interval){nr, v};
    }
    if (nr == 0xffffffffU)
      return n;
  }
}

/* The program under construction; jumps name labels, resolved at the end. */
#define MAX_CODE 1024
#define MAX_LABELS 1024
struct code {
  struct sock_filter insn[MAX_CODE];
  int jt[MAX_CODE], jf[MAX_CODE]; /* labels; L_NEXT: the next instruction */
  size_t n;
  int at[MAX_LABELS]; /* label -> instruction */
  int n_labels;
};
#define L_NEXT (-1)

static int new_label(struct code *c)
{
  if (c->n_labels == MAX_LABELS)
    die("too many labels");
  c->at[c->n_labels] = -1;
  return c->n_labels++;
}

static void place(struct code *c, int label)
{
  c->at[label] = (int)c->n;
}

static void emit(struct code *c, struct sock_filter f, int label_jt, int label_jf)
{
  if (c->n == MAX_CODE)
    die("program too long");
  c->insn[c->n] = f;
  c->jt[c->n] = label_jt;
  c->jf[c->n] = label_jf;
  c->n++;
}

#define LD(off) ((struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (off)))
#define RET(k) ((struct sock_filter)BPF_STMT(BPF_RET | BPF_K, (k)))
#define JGT(k) ((struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, (k), 0, 0))
#define JEQ(k) ((struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (k), 0, 0))
#define JA() ((struct sock_filter)BPF_STMT(BPF_JMP | BPF_JA, 0))
/* Little-endian: an argument's low 32 bits are its first word. */
#define ARG_LO(i) (offsetof(struct seccomp_data, args) + (i) * sizeof(uint64_t))

/* The labels of one architecture's verdict blocks. */
struct verdicts {
  int label[V_COUNT];
};

/* A balanced binary search over iv[lo, hi): "nr > boundary ? right : left"; a single range is
 * its verdict's label, so every leaf is a jump straight to a verdict.  Returns the label to
 * jump to for the range set. */
static int emit_search(struct code *c, const struct interval *iv, size_t lo, size_t hi,
                       const struct verdicts *vl)
{
  if (hi - lo == 1)
    return vl->label[iv[lo].v];
  int self = new_label(c);
  size_t mid = lo + (hi - lo) / 2, node = c->n;
  place(c, self);
  emit(c, JGT(iv[mid - 1].hi), L_NEXT, L_NEXT);
  int left = emit_search(c, iv, lo, mid, vl);
  int right = emit_search(c, iv, mid, hi, vl);
  c->jt[node] = right;
  c->jf[node] = left;
  return self;
}

/* One architecture: load the number, search, then the verdict blocks it jumps to. */
static void emit_arch(struct code *c, const struct arch *a, int start, int libseccomp)
{
  struct interval iv[512];
  size_t n = intervals_of(a, iv, N_OF(iv));
  struct verdicts vl;
  for (int v = 0; v < V_COUNT; v++)
    vl.label[v] = new_label(c);

  place(c, start);
  emit(c, LD(offsetof(struct seccomp_data, nr)), L_NEXT, L_NEXT);
  int root = emit_search(c, iv, 0, n, &vl);
  if (n == 1) /* one verdict for every number: no search, a jump to it */
    emit(c, JA(), root, L_NEXT);

  place(c, vl.label[V_IOCTL]);
  emit(c, LD(ARG_LO(1)), L_NEXT, L_NEXT);
  emit(c, JEQ(SR_SD_TIOCSTI), vl.label[V_EPERM], L_NEXT);
  emit(c, JEQ(SR_SD_TIOCLINUX), vl.label[V_EPERM], vl.label[V_ALLOW]);
  place(c, vl.label[V_SOCKET]);
  emit(c, LD(ARG_LO(0)), L_NEXT, L_NEXT);
  emit(c, JEQ(SR_SD_AF_VSOCK), vl.label[V_EPERM], vl.label[V_ALLOW]);
  place(c, vl.label[V_ALLOW]);
  emit(c, RET(SECCOMP_RET_ALLOW), L_NEXT, L_NEXT);
  place(c, vl.label[V_EPERM]);
  emit(c, RET(SECCOMP_RET_ERRNO | EPERM), L_NEXT, L_NEXT);
  place(c, vl.label[V_ENOSYS]);
  emit(c, RET(SECCOMP_RET_ERRNO | ENOSYS), L_NEXT, L_NEXT);
  place(c, vl.label[V_KILL]);
  emit(c, RET(SECCOMP_RET_KILL_PROCESS), L_NEXT, L_NEXT);
  place(c, vl.label[V_LIBSECCOMP]);
  emit(c, JA(), libseccomp, L_NEXT);
}

static struct sock_filter *ranges_part(size_t libseccomp_len, size_t *len)
{
  static struct code c;
  int arch_start[N_OF(arches)], kill, libseccomp;

  c.n = 0;
  c.n_labels = 0;
  for (size_t ai = 0; ai < N_OF(arches); ai++)
    arch_start[ai] = new_label(&c);
  kill = new_label(&c);
  libseccomp = new_label(&c);

  emit(&c, LD(offsetof(struct seccomp_data, arch)), L_NEXT, L_NEXT);
  for (size_t ai = 0; ai < N_OF(arches); ai++)
    emit(&c, JEQ(arches[ai].token), arch_start[ai], ai + 1 < N_OF(arches) ? L_NEXT : kill);
  place(&c, kill);
  emit(&c, RET(SECCOMP_RET_KILL_PROCESS), L_NEXT, L_NEXT);
  for (size_t ai = 0; ai < N_OF(arches); ai++)
    emit_arch(&c, &arches[ai], arch_start[ai], libseccomp);
  place(&c, libseccomp);

  for (size_t i = 0; i < c.n; i++) {
    struct sock_filter *f = &c.insn[i];
    if (BPF_CLASS(f->code) != BPF_JMP)
      continue;
    long djt = c.jt[i] == L_NEXT ? 0 : c.at[c.jt[i]] - (long)i - 1;
    long djf = c.jf[i] == L_NEXT ? 0 : c.at[c.jf[i]] - (long)i - 1;
    if (BPF_OP(f->code) == BPF_JA) {
      if (djt < 0)
        die("backward jump at %zu", i);
      f->k = (uint32_t)djt;
      continue;
    }
    if (djt < 0 || djt > 255 || djf < 0 || djf > 255)
      die("jump out of range at %zu (%ld, %ld)", i, djt, djf);
    f->jt = (uint8_t)djt;
    f->jf = (uint8_t)djf;
  }
  if (c.n + libseccomp_len > BPF_MAXINSNS)
    die("the filter has %zu instructions, the kernel takes %d", c.n + libseccomp_len, BPF_MAXINSNS);
  struct sock_filter *out = malloc(c.n * sizeof(*out));
  if (out == NULL)
    die("out of memory");
  memcpy(out, c.insn, c.n * sizeof(*out));
  *len = c.n;
  return out;
}

/* ---- the self-check: a classic BPF interpreter ----------------------------------------- */

static uint32_t run(const struct sock_filter *prog, size_t len, const struct seccomp_data *d)
{
  uint32_t A = 0, X = 0, M[BPF_MEMWORDS] = {0};
  const unsigned char *data = (const unsigned char *)d;
  for (size_t pc = 0; pc < len; pc++) {
    const struct sock_filter *f = &prog[pc];
    uint32_t src = BPF_SRC(f->code) == BPF_X ? X : f->k;
    switch (BPF_CLASS(f->code)) {
    case BPF_LD:
      if (f->code == (BPF_LD | BPF_W | BPF_ABS)) {
        if (f->k % 4 || f->k + 4 > sizeof(*d))
          die("self-check: bad load offset %u at %zu", f->k, pc);
        memcpy(&A, data + f->k, 4);
      } else if (f->code == (BPF_LD | BPF_MEM) && f->k < BPF_MEMWORDS) {
        A = M[f->k];
      } else if (f->code == (BPF_LD | BPF_IMM)) {
        A = f->k;
      } else {
        die("self-check: unsupported load 0x%x at %zu", f->code, pc);
      }
      break;
    case BPF_LDX:
      if (f->code == (BPF_LDX | BPF_MEM) && f->k < BPF_MEMWORDS)
        X = M[f->k];
      else if (f->code == (BPF_LDX | BPF_IMM))
        X = f->k;
      else
        die("self-check: unsupported ldx 0x%x at %zu", f->code, pc);
      break;
    case BPF_ST:
    case BPF_STX:
      if (f->k >= BPF_MEMWORDS)
        die("self-check: bad store at %zu", pc);
      M[f->k] = BPF_CLASS(f->code) == BPF_ST ? A : X;
      break;
    case BPF_ALU:
      switch (BPF_OP(f->code)) {
      case BPF_AND:
        A &= src;
        break;
      case BPF_OR:
        A |= src;
        break;
      case BPF_ADD:
        A += src;
        break;
      case BPF_SUB:
        A -= src;
        break;
      default:
        die("self-check: unsupported alu 0x%x at %zu", f->code, pc);
      }
      break;
    case BPF_MISC:
      if (BPF_MISCOP(f->code) == BPF_TAX)
        X = A;
      else
        A = X;
      break;
    case BPF_JMP: {
      bool t;
      switch (BPF_OP(f->code)) {
      case BPF_JA:
        pc += f->k;
        continue;
      case BPF_JEQ:
        t = A == src;
        break;
      case BPF_JGT:
        t = A > src;
        break;
      case BPF_JGE:
        t = A >= src;
        break;
      case BPF_JSET:
        t = (A & src) != 0;
        break;
      default:
        die("self-check: unsupported jump 0x%x at %zu", f->code, pc);
      }
      pc += t ? f->jt : f->jf;
      break;
    }
    case BPF_RET:
      if (BPF_RVAL(f->code) != BPF_K)
        die("self-check: unsupported return 0x%x at %zu", f->code, pc);
      return f->k;
    default:
      die("self-check: unsupported instruction 0x%x at %zu", f->code, pc);
    }
  }
  die("self-check: the program runs off its end");
}

static int failures;

static void expect(const struct sock_filter *prog, size_t len, uint32_t arch, uint32_t nr,
                   uint64_t a0, uint64_t a1, uint32_t want, const char *what)
{
  struct seccomp_data d = {.nr = (int)nr, .arch = arch, .args = {a0, a1}};
  uint32_t got = run(prog, len, &d);
  if (got != want) {
    fprintf(stderr,
            "gen_seccomp_default: self-check: %s (arch 0x%x nr %u args 0x%llx 0x%llx): got "
            "0x%08x, want 0x%08x\n",
            what, arch, nr, (unsigned long long)a0, (unsigned long long)a1, got, want);
    failures++;
  }
}

#define R_ALLOW SECCOMP_RET_ALLOW
#define R_EPERM (SECCOMP_RET_ERRNO | EPERM)
#define R_ENOSYS (SECCOMP_RET_ERRNO | ENOSYS)
#define R_KILL SECCOMP_RET_KILL_PROCESS

/* The number of `name` on `a`, from libseccomp or SR_SD_BY_NUMBER; -1 when it has none. */
static int number_on(const struct arch *a, const char *name)
{
  int nr = real_nr(a, name);
  const struct by_number *b = number_of(name);
  if (nr < 0 && b && (a->is64 || !(b->flags & SR_SD_64)))
    nr = (int)b->nr;
  return nr;
}

static void self_check(const struct sock_filter *prog, size_t len)
{
  for (size_t ai = 0; ai < N_OF(arches); ai++) {
    const struct arch *a = &arches[ai];
    uint32_t t = a->token;
    int nr;

    for (size_t i = 0; i < N_OF(allow_names); i++)
      if ((nr = number_on(a, allow_names[i])) >= 0)
        expect(prog, len, t, (uint32_t)nr, 0, 0, R_ALLOW, allow_names[i]);
    for (size_t i = 0; i < N_OF(deny_names); i++)
      if ((nr = number_on(a, deny_names[i])) >= 0)
        expect(prog, len, t, (uint32_t)nr, 0, 0, R_EPERM, deny_names[i]);
    for (size_t i = 0; i < N_OF(enosys_names); i++)
      if ((nr = number_on(a, enosys_names[i])) >= 0)
        expect(prog, len, t, (uint32_t)nr, 0, 0, R_ENOSYS, enosys_names[i]);
    /* Every other name in the table is denied. */
    for (int n = 0; n < NR_SCAN; n++) {
      char *name = seccomp_syscall_resolve_num_arch(t, n);
      if (name && !is_allowed(name) && !in_list(enosys_names, N_OF(enosys_names), name))
        expect(prog, len, t, (uint32_t)n, 0, 0, R_EPERM, name);
      else if (name == NULL && verdict_of(a, (uint32_t)n) == V_ENOSYS)
        expect(prog, len, t, (uint32_t)n, 0, 0, R_ENOSYS, "a number the filter does not know");
      free(name);
    }
    expect(prog, len, t, 1000, 0, 0, R_ENOSYS, "syscall 1000");
    expect(prog, len, t, 0xffffffffU, 0, 0, R_ENOSYS, "syscall -1");

    nr = real_nr(a, "clone");
    expect(prog, len, t, (uint32_t)nr, 17 /* SIGCHLD */, 0, R_ALLOW, "clone(SIGCHLD)");
    expect(prog, len, t, (uint32_t)nr, 0x3d0f00, 0, R_ALLOW, "clone(thread flags)");
    for (int bit = 0; bit < 32; bit++)
      if (SR_SD_CLONE_NS_FLAGS & (1ULL << bit))
        expect(prog, len, t, (uint32_t)nr, 17 | (1ULL << bit), 0, R_EPERM,
               "clone with a namespace flag");
    nr = real_nr(a, "personality");
    for (size_t i = 0; i < N_OF(personality_values); i++)
      expect(prog, len, t, (uint32_t)nr, personality_values[i], 0, R_ALLOW, "personality");
    expect(prog, len, t, (uint32_t)nr, 0x0040000 /* ADDR_NO_RANDOMIZE */, 0, R_EPERM,
           "personality(ADDR_NO_RANDOMIZE)");
    expect(prog, len, t, (uint32_t)nr, 0x0400000 /* READ_IMPLIES_EXEC */, 0, R_EPERM,
           "personality(READ_IMPLIES_EXEC)");
    nr = real_nr(a, "socket");
    expect(prog, len, t, (uint32_t)nr, 2 /* AF_INET */, 1, R_ALLOW, "socket(AF_INET)");
    expect(prog, len, t, (uint32_t)nr, 1 /* AF_UNIX */, 1, R_ALLOW, "socket(AF_UNIX)");
    expect(prog, len, t, (uint32_t)nr, SR_SD_AF_VSOCK, 1, R_EPERM, "socket(AF_VSOCK)");
    expect(prog, len, t, (uint32_t)nr, 0x100000000ULL | SR_SD_AF_VSOCK, 1, R_EPERM,
           "socket(AF_VSOCK with high bits)");
    nr = real_nr(a, "ioctl");
    expect(prog, len, t, (uint32_t)nr, 0, 0x5401 /* TCGETS */, R_ALLOW, "ioctl(TCGETS)");
    expect(prog, len, t, (uint32_t)nr, 0, SR_SD_TIOCSTI, R_EPERM, "ioctl(TIOCSTI)");
    expect(prog, len, t, (uint32_t)nr, 0, 0xffffffff00000000ULL | SR_SD_TIOCSTI, R_EPERM,
           "ioctl(TIOCSTI with high bits)");
    expect(prog, len, t, (uint32_t)nr, 0, SR_SD_TIOCLINUX, R_EPERM, "ioctl(TIOCLINUX)");
  }
  /* x32 and foreign architectures. */
  expect(prog, len, AUDIT_ARCH_X86_64, X32_SYSCALL_BIT | 39, 0, 0, R_KILL, "x32 getpid");
  expect(prog, len, AUDIT_ARCH_X86_64, X32_SYSCALL_BIT | 1000, 0, 0, R_KILL, "x32 1000");
  expect(prog, len, AUDIT_ARCH_AARCH64, 172, 0, 0, R_KILL, "aarch64 getpid");
  expect(prog, len, 0x40000028 /* AUDIT_ARCH_ARM */, 20, 0, 0, R_KILL, "arm getpid");
  if (failures)
    die("self-check: %d failures", failures);
}

/* ---- output ---------------------------------------------------------------------------- */

static void list(const struct sock_filter *prog, size_t len)
{
  for (size_t ai = 0; ai < N_OF(arches); ai++) {
    const struct arch *a = &arches[ai];
    for (int n = 0; n < 512; n++) {
      char *name = seccomp_syscall_resolve_num_arch(a->token, n);
      const struct by_number *b = NULL;
      for (size_t i = 0; name == NULL && i < N_OF(by_number); i++)
        if (by_number[i].nr == (uint32_t)n && (a->is64 || !(by_number[i].flags & SR_SD_64)))
          b = &by_number[i];
      if (name == NULL && b == NULL)
        continue;
      struct seccomp_data d = {.nr = n, .arch = a->token};
      uint32_t r = run(prog, len, &d);
      const char *what = r == R_ALLOW    ? "allow"
                         : r == R_EPERM  ? "EPERM"
                         : r == R_ENOSYS ? "ENOSYS"
                         : r == R_KILL   ? "kill"
                                         : "?";
      bool cond = in_list(cond_names, N_OF(cond_names), name ? name : b->name) ||
                  strcmp(name ? name : b->name, "socket") == 0 ||
                  strcmp(name ? name : b->name, "ioctl") == 0;
      printf("%-7s %4d %-28s %s%s%s\n", a->name, n, name ? name : b->name, what,
             cond ? " (argument conditions)" : "", name ? "" : " (by number)");
      free(name);
    }
  }
}

static void disassemble(const struct sock_filter *f, char *buf, size_t size)
{
  switch (BPF_CLASS(f->code)) {
  case BPF_LD:
  case BPF_LDX:
    snprintf(buf, size, "%s [%u]", BPF_CLASS(f->code) == BPF_LD ? "ld" : "ldx", f->k);
    break;
  case BPF_JMP:
    if (BPF_OP(f->code) == BPF_JA)
      snprintf(buf, size, "ja +%u", f->k);
    else
      snprintf(buf, size, "%s 0x%x ? +%u : +%u",
               BPF_OP(f->code) == BPF_JEQ   ? "jeq"
               : BPF_OP(f->code) == BPF_JGT ? "jgt"
               : BPF_OP(f->code) == BPF_JGE ? "jge"
                                            : "jset",
               f->k, f->jt, f->jf);
    break;
  case BPF_RET:
    snprintf(buf, size, "ret 0x%08x", f->k);
    break;
  case BPF_ALU:
    snprintf(buf, size, "%s 0x%x", BPF_OP(f->code) == BPF_AND ? "and" : "alu", f->k);
    break;
  default:
    snprintf(buf, size, "op 0x%x k 0x%x", f->code, f->k);
  }
}

static void write_source(const struct sock_filter *prog, size_t len, size_t ranges_len)
{
  const struct scmp_version *v = seccomp_version();
  printf("/* Generated by tools/gen_seccomp_default from runtime/seccomp/seccomp_default_syscalls.h with "
         "libseccomp %u.%u.%u.\n * Do not edit; never commit.  Instructions 0-%zu are the "
         "number ranges, the rest is libseccomp's. */\n\n",
         v->major, v->minor, v->micro, ranges_len - 1);
  printf("#include \"build.h\"\n\n#include \"seccomp_default.h\"\n\n");
  printf("const struct sock_filter sr_seccomp_default_prog[] = {\n");
  for (size_t i = 0; i < len; i++) {
    char text[64];
    disassemble(&prog[i], text, sizeof(text));
    printf("    {0x%02x, %3u, %3u, 0x%08x}, /* %4zu: %s */\n", prog[i].code, prog[i].jt, prog[i].jf,
           prog[i].k, i, text);
  }
  printf("};\n\nconst unsigned short sr_seccomp_default_prog_len = %zu;\n", len);
}

int main(int argc, char **argv)
{
  bool listing = argc > 1 && strcmp(argv[1], "--list") == 0;
  if (argc > 1 && !listing)
    die("usage: gen_seccomp_default [--list]");

  check_lists();
  size_t lib_len, pro_len;
  struct sock_filter *lib = libseccomp_part(&lib_len);
  struct sock_filter *pro = ranges_part(lib_len, &pro_len);
  size_t len = pro_len + lib_len;
  struct sock_filter *prog = malloc(len * sizeof(*prog));
  if (prog == NULL)
    die("out of memory");
  memcpy(prog, pro, pro_len * sizeof(*prog));
  memcpy(prog + pro_len, lib, lib_len * sizeof(*prog));
  self_check(prog, len);

  if (listing)
    list(prog, len);
  else
    write_source(prog, len, pro_len);
  free(prog);
  free(pro);
  free(lib);
  if (fflush(stdout) != 0 || ferror(stdout))
    die("write the output");
  return 0;
}
