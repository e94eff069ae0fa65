#include "build.h"

/* The cgroup v2 device filter: linux.resources.devices compiled into a
 * BPF_PROG_TYPE_CGROUP_DEVICE program, loaded and attached with bpf(2) directly.
 *
 * Semantics are runc's devicefilter: the rules are tried last to first and the first match
 * decides (so the last matching rule in config order wins); no match denies.  The program is
 * named "seerun_dev", which is how an update finds the one seerun attached before and replaces
 * it, leaving programs of others (systemd, a parent runtime) attached. */

#include "cgroup.h"

#include "cleanup.h"

#include <errno.h>
#include <linux/bpf.h>
#include <linux/magic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PROG_NAME "seerun_dev"
#define MAX_OLD 64

/* Registers once the prologue has run. */
enum { R0, R1, R2_TYPE, R3_ACCESS, R4_MAJOR, R5_MINOR };

static int sys_bpf(int cmd, union bpf_attr *attr)
{
  return (int)syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

static uint64_t ptr(const void *p)
{
  return (uint64_t)(uintptr_t)p;
}

struct prog {
  struct bpf_insn *v;
  size_t n, cap;
  bool oom;
};

static void emit(struct prog *p, uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm)
{
  if (p->n == p->cap) {
    size_t cap = p->cap ? p->cap * 2 : 64;
    struct bpf_insn *nv = realloc(p->v, cap * sizeof(*nv));
    if (nv == NULL) {
      p->oom = true;
      return;
    }
    p->v = nv;
    p->cap = cap;
  }
  struct bpf_insn *i = &p->v[p->n++];
  memset(i, 0, sizeof(*i));
  i->code = code;
  i->dst_reg = dst & 0xf;
  i->src_reg = src & 0xf;
  i->off = off;
  i->imm = imm;
}

static int32_t access_bits(const char *a)
{
  int32_t bits = 0;
  for (; *a; a++)
    bits |= *a == 'r'   ? BPF_DEVCG_ACC_READ
            : *a == 'w' ? BPF_DEVCG_ACC_WRITE
            : *a == 'm' ? BPF_DEVCG_ACC_MKNOD
                        : 0;
  return bits;
}

#define ALL_ACCESS (BPF_DEVCG_ACC_READ | BPF_DEVCG_ACC_WRITE | BPF_DEVCG_ACC_MKNOD)

/* One block per rule: each test that fails jumps to the next block; all passing, the block
 * returns the rule's verdict. */
static void emit_rule(struct prog *p, const struct sr_device_rule *r, int32_t acc)
{
  bool type = r->type != 'a', part = acc != ALL_ACCESS, major = r->major >= 0,
       minor = r->minor >= 0;
  int len = type + 3 * part + major + minor + 2, pos = 0;
  /* A jump at block offset pos lands at pc + 1 + off: the next block is len - (pos + 1)
   * instructions after the jump. */
  if (type) {
    pos++;
    emit(p, BPF_JMP | BPF_JNE | BPF_K, R2_TYPE, 0, (int16_t)(len - pos),
         r->type == 'c' ? BPF_DEVCG_DEV_CHAR : BPF_DEVCG_DEV_BLOCK);
  }
  if (part) {
    /* The access asked for must be a subset of the rule's. */
    emit(p, BPF_ALU | BPF_MOV | BPF_X, R1, R3_ACCESS, 0, 0);
    emit(p, BPF_ALU | BPF_AND | BPF_K, R1, 0, 0, ~acc & ALL_ACCESS);
    pos += 3;
    emit(p, BPF_JMP | BPF_JNE | BPF_K, R1, 0, (int16_t)(len - pos), 0);
  }
  /* Registers hold the numbers zero-extended; a number above INT32_MAX (no Linux device has
   * one: majors have 12 bits, minors 20) sign-extends and so never matches. */
  if (major) {
    pos++;
    emit(p, BPF_JMP | BPF_JNE | BPF_K, R4_MAJOR, 0, (int16_t)(len - pos), (int32_t)r->major);
  }
  if (minor) {
    pos++;
    emit(p, BPF_JMP | BPF_JNE | BPF_K, R5_MINOR, 0, (int16_t)(len - pos), (int32_t)r->minor);
  }
  emit(p, BPF_ALU64 | BPF_MOV | BPF_K, R0, 0, 0, r->allow ? 1 : 0);
  emit(p, BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
}

static int build(const struct sr_device_rule *rules, size_t n, struct prog *p, sr_error_t *err)
{
  /* struct bpf_cgroup_dev_ctx { u32 access_type (type | access << 16); u32 major, minor; } */
  emit(p, BPF_LDX | BPF_MEM | BPF_W, R2_TYPE, R1, 0, 0);
  emit(p, BPF_ALU | BPF_AND | BPF_K, R2_TYPE, 0, 0, 0xffff);
  emit(p, BPF_LDX | BPF_MEM | BPF_W, R3_ACCESS, R1, 0, 0);
  emit(p, BPF_ALU | BPF_RSH | BPF_K, R3_ACCESS, 0, 0, 16);
  emit(p, BPF_LDX | BPF_MEM | BPF_W, R4_MAJOR, R1, 4, 0);
  emit(p, BPF_LDX | BPF_MEM | BPF_W, R5_MINOR, R1, 8, 0);
  bool complete = false;
  for (size_t i = n; i-- > 0 && !complete;) {
    const struct sr_device_rule *r = &rules[i];
    int32_t acc = access_bits(r->access);
    if (acc == 0)
      continue; /* grants or denies nothing */
    emit_rule(p, r, acc);
    /* A rule matching everything decides alone: the earlier ones are unreachable, and the
     * verifier refuses unreachable code. */
    complete = r->type == 'a' && r->major < 0 && r->minor < 0 && acc == ALL_ACCESS;
  }
  if (!complete) {
    emit(p, BPF_ALU64 | BPF_MOV | BPF_K, R0, 0, 0, 0); /* default deny */
    emit(p, BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
  }
  if (p->oom)
    return sr_error_make(err, ENOMEM, "bpf: device filter of %zu rules", n);
  return 0;
}

static int load(const struct prog *p, sr_error_t *err)
{
  union bpf_attr a;
  memset(&a, 0, sizeof(a));
  a.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
  a.insns = ptr(p->v);
  a.insn_cnt = (uint32_t)p->n;
  /* No helper is called, so the licence restricts nothing. */
  a.license = ptr("GPL");
  memcpy(a.prog_name, PROG_NAME, sizeof(PROG_NAME));
  int fd = sys_bpf(BPF_PROG_LOAD, &a);
  if (fd >= 0)
    return fd;
  int saved = errno;
  if (saved != EINVAL && saved != EACCES)
    return sr_error_make(err, saved, "bpf: load the device filter (%zu instructions)", p->n);
  /* Rejected by the verifier: load again with its log, for the message. */
  size_t log_size = 1 << 16;
  _cleanup_free_ char *log = calloc(1, log_size);
  if (log) {
    a.log_buf = ptr(log);
    a.log_size = (uint32_t)log_size;
    a.log_level = 1;
    fd = sys_bpf(BPF_PROG_LOAD, &a);
    if (fd >= 0)
      return fd;
    size_t l = strlen(log);
    while (l > 0 && log[l - 1] == '\n')
      log[--l] = '\0';
    const char *last = strrchr(log, '\n');
    return sr_error_make(err, saved, "bpf: load the device filter (%zu instructions): %s", p->n,
                         last ? last + 1 : log);
  }
  return sr_error_make(err, saved, "bpf: load the device filter (%zu instructions)", p->n);
}

/* fds of the seerun programs attached directly to the cgroup. */
static int find_ours(int cgfd, int *fds, size_t *n, sr_error_t *err)
{
  uint32_t ids[MAX_OLD] = {0};
  union bpf_attr a;
  memset(&a, 0, sizeof(a));
  a.query.target_fd = (uint32_t)cgfd;
  a.query.attach_type = BPF_CGROUP_DEVICE;
  a.query.prog_ids = ptr(ids);
  a.query.prog_cnt = MAX_OLD;
  *n = 0;
  if (sys_bpf(BPF_PROG_QUERY, &a) < 0)
    return sr_error_sys(err, "bpf: list the device programs");
  for (uint32_t i = 0; i < a.query.prog_cnt && i < MAX_OLD; i++) {
    union bpf_attr b;
    memset(&b, 0, sizeof(b));
    b.prog_id = ids[i];
    int fd = sys_bpf(BPF_PROG_GET_FD_BY_ID, &b);
    if (fd < 0) {
      if (errno == ENOENT) /* detached meanwhile */
        continue;
      return sr_error_sys(err, "bpf: open program %u", ids[i]);
    }
    struct bpf_prog_info info;
    memset(&info, 0, sizeof(info));
    union bpf_attr c;
    memset(&c, 0, sizeof(c));
    c.info.bpf_fd = (uint32_t)fd;
    c.info.info_len = sizeof(info);
    c.info.info = ptr(&info);
    if (sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &c) < 0) {
      int saved = errno;
      close(fd);
      return sr_error_make(err, saved, "bpf: describe program %u", ids[i]);
    }
    if (info.type == BPF_PROG_TYPE_CGROUP_DEVICE &&
        strncmp(info.name, PROG_NAME, sizeof(info.name)) == 0)
      fds[(*n)++] = fd;
    else
      close(fd);
  }
  return 0;
}

/* The seerun programs found attached (find_ours), closed on every return. */
struct old_progs {
  int fd[MAX_OLD];
  size_t n;
};

static void old_progs_close(struct old_progs *o)
{
  for (size_t i = 0; i < o->n; i++)
    close(o->fd[i]);
}

static int attach(int cgfd, int progfd, int replace_fd)
{
  union bpf_attr a;
  memset(&a, 0, sizeof(a));
  a.target_fd = (uint32_t)cgfd;
  a.attach_bpf_fd = (uint32_t)progfd;
  a.attach_type = BPF_CGROUP_DEVICE;
  /* MULTI: programs of ancestors and others stay in force; each must allow an access. */
  a.attach_flags = BPF_F_ALLOW_MULTI;
  if (replace_fd >= 0) {
    a.attach_flags |= BPF_F_REPLACE;
    a.replace_bpf_fd = (uint32_t)replace_fd;
  }
  return sys_bpf(BPF_PROG_ATTACH, &a);
}

int sr_cgroup_devices_bpf_apply(const struct sr_cg_dir *d, const struct sr_device_rule *rules,
                                size_t n, sr_error_t *err)
{
  struct statfs sfs;
  if (fstatfs(d->fd, &sfs) < 0)
    return sr_error_sys(err, "bpf: statfs `%s`", d->path);
  if (sfs.f_type != CGROUP2_SUPER_MAGIC)
    return sr_error_make(err, 0,
                         "bpf: `%s` is not a cgroup2 directory: no device filter can be "
                         "attached",
                         d->path);
  struct prog p = {NULL, 0, 0, false};
  int rc = build(rules, n, &p, err);
  _cleanup_close_ int progfd = rc < 0 ? -1 : load(&p, err);
  free(p.v);
  if (progfd < 0)
    return -1;
  _cleanup_(old_progs_close) struct old_progs old = {.n = 0};
  if (find_ours(d->fd, old.fd, &old.n, err) < 0)
    return -1;
  /* One old program: swapped in place, no moment with neither or both.  Otherwise (or before
   * Linux 5.6, no BPF_F_REPLACE) the new one goes in first and the old ones then go: for that
   * moment both apply, which only ever denies more. */
  bool replaced = false;
  if (old.n == 1 && attach(d->fd, progfd, old.fd[0]) == 0)
    replaced = true;
  else if (attach(d->fd, progfd, -1) < 0)
    return sr_error_sys(err, "bpf: attach the device filter to `%s`", d->path);
  for (size_t i = 0; i < old.n && !replaced; i++) {
    union bpf_attr a;
    memset(&a, 0, sizeof(a));
    a.target_fd = (uint32_t)d->fd;
    a.attach_bpf_fd = (uint32_t)old.fd[i];
    a.attach_type = BPF_CGROUP_DEVICE;
    if (sys_bpf(BPF_PROG_DETACH, &a) < 0 && errno != ENOENT)
      return sr_error_sys(err, "bpf: detach the previous device filter from `%s`", d->path);
  }
  return 0;
}
