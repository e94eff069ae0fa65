#include "build.h"

#include "seccomp_enosys.h"

#include <seccomp.h>

#include "cleanup.h"

#include <errno.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define X32_SYSCALL_BIT 0x40000000U
#define MAX_ARCHES 16

bool sr_seccomp_enosys_applies(const struct sr_seccomp *s)
{
  if (s == NULL || s->n_rules == 0)
    return false;
  uint32_t a = s->default_action, base = a & 0xffff0000U;
  if (a == SCMP_ACT_ALLOW || a == SCMP_ACT_LOG || a == SCMP_ACT_NOTIFY ||
      base == SCMP_ACT_TRACE(0))
    return false;
  return !(base == SCMP_ACT_ERRNO(0) && (a & 0xffffU) == ENOSYS);
}

/* The largest number a name of the profile has on `arch`, or -1. */
static long max_nr_on(const struct sr_seccomp *s, uint32_t arch)
{
  long max = -1;
  for (size_t i = 0; i < s->n_rules; i++)
    for (size_t j = 0; j < s->rules[i].n_names; j++) {
      int nr = seccomp_syscall_resolve_name_arch(arch, s->rules[i].names[j]);
      /* Negative: absent on arch, or a pseudo number (socketcall multiplexing on x86). */
      if (nr >= 0 && (arch != AUDIT_ARCH_X86_64 || (uint32_t)nr < X32_SYSCALL_BIT) && nr > max)
        max = nr;
    }
  return max;
}

struct arch_max {
  uint32_t arch;
  uint32_t max;
};

static size_t collect(const struct sr_seccomp *s, struct arch_max *out)
{
  size_t n = 0;
  uint32_t native = seccomp_arch_native();
  for (size_t i = 0; i <= s->n_architectures && n < MAX_ARCHES; i++) {
    uint32_t arch = i == 0 ? native : s->architectures[i - 1];
    bool seen = false;
    for (size_t k = 0; k < n; k++)
      seen |= out[k].arch == arch;
    long max = seen ? -1 : max_nr_on(s, arch);
    if (max >= 0)
      out[n++] = (struct arch_max){arch, (uint32_t)max};
  }
  return n;
}

int sr_seccomp_enosys_prepend(const struct sr_seccomp *s, struct sock_filter **insns, size_t *len,
                              sr_error_t *err)
{
  struct arch_max arches[MAX_ARCHES];
  size_t n = collect(s, arches);
  if (n == 0)
    return 0;

  /* Layout: ld arch; one jeq per architecture; ja prog; per architecture a block
   * (ld nr; [x86_64: jge X32 -> prog;] jgt max -> enosys; ja prog); ret ENOSYS; prog. */
  size_t blocks = 0;
  for (size_t i = 0; i < n; i++)
    blocks += arches[i].arch == AUDIT_ARCH_X86_64 ? 4 : 3;
  size_t head = 1 + n + 1, enosys = head + blocks, prog = enosys + 1;
  _cleanup_free_ struct sock_filter *out = calloc(prog + *len, sizeof(*out));
  if (out == NULL)
    return sr_error_make(err, ENOMEM, "seccomp: the ENOSYS stub");

  size_t pc = 0, block = head;
  out[pc++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
                                           offsetof(struct seccomp_data, arch));
  for (size_t i = 0; i < n; i++) {
    out[pc] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, arches[i].arch,
                                           (uint8_t)(block - pc - 1), 0);
    pc++;
    block += arches[i].arch == AUDIT_ARCH_X86_64 ? 4 : 3;
  }
  out[pc] = (struct sock_filter)BPF_STMT(BPF_JMP | BPF_JA, (uint32_t)(prog - pc - 1));
  pc++;
  for (size_t i = 0; i < n; i++) {
    out[pc++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
                                             offsetof(struct seccomp_data, nr));
    if (arches[i].arch == AUDIT_ARCH_X86_64) {
      /* x32 numbers are the program's business (the built-in filter kills them). */
      out[pc] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, X32_SYSCALL_BIT,
                                             (uint8_t)(prog - pc - 1), 0);
      pc++;
    }
    out[pc] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, arches[i].max,
                                           (uint8_t)(enosys - pc - 1), 0);
    pc++;
    out[pc] = (struct sock_filter)BPF_STMT(BPF_JMP | BPF_JA, (uint32_t)(prog - pc - 1));
    pc++;
  }
  out[pc++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS);
  memcpy(out + pc, *insns, *len * sizeof(*out));
  free(*insns);
  *insns = steal_ptr(out);
  *len += prog;
  return 0;
}
