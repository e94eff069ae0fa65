/* The policy of the default seccomp filter that seerun installs in every container process,
 * whatever config.json says (a config filter stacks on top of it and can only narrow it).
 *
 * Read by tools/gen_seccomp_default.c at build time, which turns it into BPF
 * (runtime/seccomp_default_prog.c in the build directory); nothing here is used at run time.
 *
 * The starting point is Docker's default profile (moby profiles/seccomp/default.json) for a
 * container with Docker's default capabilities, for x86_64 with its i386 compat ABI:
 *   - allowed: what programs, glibc, shells, interpreters, compilers, package managers and
 *     language runtimes use;
 *   - denied with EPERM: every other syscall the filter knows (libseccomp's table for the
 *     architecture), the ones named in SR_SD_DENY with the reason;
 *   - ENOSYS: clone3 (glibc falls back to clone, where the namespace-flag check applies) and
 *     every number the filter does not know (newer than this list), so that libraries take
 *     their fallback paths as on an older kernel;
 *   - x32 syscalls and every other architecture: the process is killed (SIGSYS).
 *
 * Departures from Docker, each on purpose:
 *   - denied although Docker allows them: io_uring_* (a large kernel attack surface behind many
 *     recent privilege escalations; callers fall back to epoll/threads), ptrace,
 *     process_vm_readv/writev (Docker allows them on kernels >= 4.8), name_to_handle_at;
 *   - ioctl TIOCSTI/TIOCLINUX denied (typing into the terminal the container may share with
 *     the host: CVE-2017-5226 class), by the low 32 bits of the request, which is what the
 *     kernel reads;
 *   - socket(AF_VSOCK) denied by the low 32 bits of the family, likewise (a Docker-style
 *     64-bit "arg0 != 40" rule lets socket(0x100000028, ...) through);
 *   - allowed although Docker wants CAP_SYS_NICE: get_mempolicy, mbind, set_mempolicy,
 *     set_mempolicy_home_node (they place the caller's own memory; moving pages that are not
 *     the caller's needs CAP_SYS_NICE in the kernel anyway).  move_pages and migrate_pages,
 *     which act on other processes, stay denied.
 *   - chroot allowed (Docker: with CAP_SYS_CHROOT, which is in its default set; the kernel
 *     checks the capability, and a chroot inside the container's pivoted mount namespace
 *     cannot climb above the container's root).
 *
 * Every list holds syscall names as libseccomp spells them; a name an architecture lacks is
 * skipped for that architecture.
 */
#ifndef SEERUN_SECCOMP_DEFAULT_SYSCALLS_H
#define SEERUN_SECCOMP_DEFAULT_SYSCALLS_H

/* clang-format off */

/* Allowed without conditions. */
#define SR_SD_ALLOW(X)                                                                            \
  X(accept) X(accept4) X(access) X(adjtimex) X(alarm) X(arch_prctl) X(bind) X(brk) X(cachestat)   \
  X(capget) X(capset) X(chdir) X(chmod) X(chown) X(chown32) X(chroot) X(clock_adjtime)            \
  X(clock_adjtime64) X(clock_getres) X(clock_getres_time64) X(clock_gettime) X(clock_gettime64)   \
  X(clock_nanosleep) X(clock_nanosleep_time64) X(close) X(close_range) X(connect)                 \
  X(copy_file_range) X(creat) X(dup) X(dup2) X(dup3) X(epoll_create) X(epoll_create1)             \
  X(epoll_ctl) X(epoll_ctl_old) X(epoll_pwait) X(epoll_pwait2) X(epoll_wait) X(epoll_wait_old)    \
  X(eventfd) X(eventfd2) X(execve) X(execveat) X(exit) X(exit_group) X(faccessat) X(faccessat2)   \
  X(fadvise64) X(fadvise64_64) X(fallocate) X(fanotify_mark) X(fchdir) X(fchmod) X(fchmodat)      \
  X(fchmodat2) X(fchown) X(fchown32) X(fchownat) X(fcntl) X(fcntl64) X(fdatasync) X(fgetxattr)    \
  X(file_getattr) X(file_setattr) X(flistxattr) X(flock) X(fork) X(fremovexattr) X(fsetxattr)     \
  X(fstat) X(fstat64) X(fstatat64) X(fstatfs) X(fstatfs64) X(fsync) X(ftruncate) X(ftruncate64)   \
  X(futex) X(futex_requeue) X(futex_time64) X(futex_wait) X(futex_waitv) X(futex_wake)            \
  X(futimesat) X(get_mempolicy) X(get_robust_list) X(get_thread_area) X(getcpu) X(getcwd)         \
  X(getdents) X(getdents64) X(getegid) X(getegid32) X(geteuid) X(geteuid32) X(getgid) X(getgid32) \
  X(getgroups) X(getgroups32) X(getitimer) X(getpeername) X(getpgid) X(getpgrp) X(getpid)         \
  X(getppid) X(getpriority) X(getrandom) X(getresgid) X(getresgid32) X(getresuid) X(getresuid32)  \
  X(getrlimit) X(getrusage) X(getsid) X(getsockname) X(getsockopt) X(gettid) X(gettimeofday)      \
  X(getuid) X(getuid32) X(getxattr) X(getxattrat) X(inotify_add_watch) X(inotify_init)            \
  X(inotify_init1) X(inotify_rm_watch) X(io_cancel) X(io_destroy) X(io_getevents)                 \
  X(io_pgetevents) X(io_pgetevents_time64) X(io_setup) X(io_submit) X(ioctl) X(ioprio_get)        \
  X(ioprio_set) X(ipc) X(kill) X(landlock_add_rule) X(landlock_create_ruleset)                    \
  X(landlock_restrict_self) X(lchown) X(lchown32) X(lgetxattr) X(link) X(linkat) X(listen)        \
  X(listxattr) X(listxattrat) X(llistxattr) X(_llseek) X(lremovexattr) X(lseek) X(lsetxattr)      \
  X(lstat) X(lstat64) X(madvise) X(map_shadow_stack) X(mbind) X(membarrier) X(memfd_create)       \
  X(memfd_secret) X(mincore) X(mkdir) X(mkdirat) X(mknod) X(mknodat) X(mlock) X(mlock2)           \
  X(mlockall) X(mmap) X(mmap2) X(modify_ldt) X(mprotect) X(mq_getsetattr) X(mq_notify) X(mq_open) \
  X(mq_timedreceive) X(mq_timedreceive_time64) X(mq_timedsend) X(mq_timedsend_time64)             \
  X(mq_unlink) X(mremap) X(mseal) X(msgctl) X(msgget) X(msgrcv) X(msgsnd) X(msync) X(munlock)     \
  X(munlockall) X(munmap) X(nanosleep) X(newfstatat) X(_newselect) X(open) X(openat) X(openat2)   \
  X(pause) X(pidfd_open) X(pidfd_send_signal) X(pipe) X(pipe2) X(pkey_alloc) X(pkey_free)         \
  X(pkey_mprotect) X(poll) X(ppoll) X(ppoll_time64) X(prctl) X(pread64) X(preadv) X(preadv2)      \
  X(prlimit64) X(process_mrelease) X(pselect6) X(pselect6_time64) X(pwrite64) X(pwritev)          \
  X(pwritev2) X(read) X(readahead) X(readlink) X(readlinkat) X(readv) X(recv) X(recvfrom)         \
  X(recvmmsg) X(recvmmsg_time64) X(recvmsg) X(remap_file_pages) X(removexattr) X(removexattrat)   \
  X(rename) X(renameat) X(renameat2) X(restart_syscall) X(rmdir) X(rseq) X(rt_sigaction)          \
  X(rt_sigpending) X(rt_sigprocmask) X(rt_sigqueueinfo) X(rt_sigreturn) X(rt_sigsuspend)          \
  X(rt_sigtimedwait) X(rt_sigtimedwait_time64) X(rt_tgsigqueueinfo) X(sched_get_priority_max)     \
  X(sched_get_priority_min) X(sched_getaffinity) X(sched_getattr) X(sched_getparam)               \
  X(sched_getscheduler) X(sched_rr_get_interval) X(sched_rr_get_interval_time64)                  \
  X(sched_setaffinity) X(sched_setattr) X(sched_setparam) X(sched_setscheduler) X(sched_yield)    \
  X(seccomp) X(select) X(semctl) X(semget) X(semop) X(semtimedop) X(semtimedop_time64) X(send)    \
  X(sendfile) X(sendfile64) X(sendmmsg) X(sendmsg) X(sendto) X(set_mempolicy)                     \
  X(set_mempolicy_home_node) X(set_robust_list) X(set_thread_area) X(set_tid_address) X(setfsgid) \
  X(setfsgid32) X(setfsuid) X(setfsuid32) X(setgid) X(setgid32) X(setgroups) X(setgroups32)       \
  X(setitimer) X(setpgid) X(setpriority) X(setregid) X(setregid32) X(setresgid) X(setresgid32)    \
  X(setresuid) X(setresuid32) X(setreuid) X(setreuid32) X(setrlimit) X(setsid) X(setsockopt)      \
  X(setuid) X(setuid32) X(setxattr) X(setxattrat) X(shmat) X(shmctl) X(shmdt) X(shmget)           \
  X(shutdown) X(sigaltstack) X(signalfd) X(signalfd4) X(sigprocmask) X(sigreturn) X(socket)       \
  X(socketcall) X(socketpair) X(splice) X(stat) X(stat64) X(statfs) X(statfs64) X(statx)          \
  X(symlink) X(symlinkat) X(sync) X(sync_file_range) X(syncfs) X(sysinfo) X(tee) X(tgkill)        \
  X(time) X(timer_create) X(timer_delete) X(timer_getoverrun) X(timer_gettime) X(timer_gettime64) \
  X(timer_settime) X(timer_settime64) X(timerfd_create) X(timerfd_gettime) X(timerfd_gettime64)   \
  X(timerfd_settime) X(timerfd_settime64) X(times) X(tkill) X(truncate) X(truncate64)             \
  X(ugetrlimit) X(umask) X(uname) X(unlink) X(unlinkat) X(uprobe) X(uretprobe) X(utime)           \
  X(utimensat) X(utimensat_time64) X(utimes) X(vfork) X(vmsplice) X(wait4) X(waitid) X(waitpid)   \
  X(write) X(writev)

/* Allowed only with the argument values below (denied with EPERM otherwise). */
#define SR_SD_CONDITIONAL(X) X(clone) X(personality)

/* Denied with EPERM, and why.  The filter denies every known syscall that SR_SD_ALLOW does not
 * list; these are the ones worth naming (the generator checks that each one is denied). */
#define SR_SD_DENY(X)                                                                             \
  /* keyrings are not namespaced: another container's or the host's keys */                       \
  X(add_key) X(keyctl) X(request_key)                                                             \
  /* kernel attack surface: eBPF, perf, userfaultfd (race widening), io_uring */                  \
  X(bpf) X(perf_event_open) X(userfaultfd) X(io_uring_setup) X(io_uring_enter)                    \
  X(io_uring_register)                                                                            \
  /* the kernel itself: modules, kexec, reboot, swap, accounting, quotas */                       \
  X(init_module) X(finit_module) X(delete_module) X(create_module) X(get_kernel_syms)             \
  X(query_module) X(kexec_load) X(kexec_file_load) X(reboot) X(swapon) X(swapoff) X(acct)         \
  X(quotactl) X(quotactl_fd) X(nfsservctl) X(lookup_dcookie) X(uselib) X(ustat) X(sysfs)          \
  X(_sysctl)                                                                                      \
  /* mounts and namespaces: the container's view of the filesystem and its isolation */           \
  X(mount) X(umount) X(umount2) X(move_mount) X(open_tree) X(open_tree_attr) X(fsopen)            \
  X(fsconfig) X(fsmount) X(fspick) X(mount_setattr) X(pivot_root) X(unshare) X(setns)             \
  X(sethostname) X(setdomainname)                                                                 \
  /* the host clock is not namespaced (adjtimex and clock_adjtime stay allowed: read-only without \
   * CAP_SYS_TIME, and seccomp cannot see their modes field) */                                   \
  X(settimeofday) X(stime) X(clock_settime) X(clock_settime64)                                    \
  /* other processes' memory and files */                                                         \
  X(ptrace) X(process_vm_readv) X(process_vm_writev) X(process_madvise) X(kcmp) X(pidfd_getfd)    \
  X(move_pages) X(migrate_pages)                                                                  \
  /* file handles: open_by_handle_at walks out of a bind mount ("shocker") */                     \
  X(name_to_handle_at) X(open_by_handle_at)                                                       \
  /* the host's log, terminals, I/O ports, fanotify, vm86 */                                      \
  X(syslog) X(vhangup) X(iopl) X(ioperm) X(fanotify_init) X(vm86) X(vm86old)

/* Denied with ENOSYS: callers fall back (glibc's clone3 users to clone). */
#define SR_SD_ENOSYS(X) X(clone3)

/* Syscalls that libseccomp 2.5.4 as released does not know, by number: the same on x86_64 and
 * i386 (the common table from 424 on) unless SR_SD_64 says x86_64 only.  The generator uses a
 * number only where libseccomp cannot resolve the name (a newer libseccomp, or a distribution's
 * backport, knows some of them); the lists above decide the action. */
#define SR_SD_64 1
#define SR_SD_BY_NUMBER(X)                                                                       \
  X(uretprobe, 335, SR_SD_64) X(uprobe, 336, SR_SD_64) X(cachestat, 451, 0) X(fchmodat2, 452, 0) \
  X(map_shadow_stack, 453, SR_SD_64) X(futex_wake, 454, 0) X(futex_wait, 455, 0)                 \
  X(futex_requeue, 456, 0) X(mseal, 462, 0) X(setxattrat, 463, 0) X(getxattrat, 464, 0)          \
  X(listxattrat, 465, 0) X(removexattrat, 466, 0) X(open_tree_attr, 467, 0)                      \
  X(file_getattr, 468, 0) X(file_setattr, 469, 0)

/* clang-format on */

/* Argument conditions, as Docker has them. */
/* clone without CLONE_NEWNS|CLONE_NEWUTS|CLONE_NEWIPC|CLONE_NEWUSER|CLONE_NEWPID|CLONE_NEWNET|
 * CLONE_NEWCGROUP (the kernel reads the low 32 bits of the flags; the mask has no high bits). */
#define SR_SD_CLONE_NS_FLAGS 0x7E020000ULL
/* personality: PER_LINUX, PER_LINUX32, UNAME26, UNAME26|PER_LINUX32 and the query 0xffffffff;
 * not ADDR_NO_RANDOMIZE, READ_IMPLIES_EXEC, ... (ASLR off, executable data). */
#define SR_SD_PERSONALITY(X) X(0x0) X(0x8) X(0x20000) X(0x20008) X(0xffffffff)

/* Checked on the low 32 bits of an int argument, before the allowlist. */
#define SR_SD_AF_VSOCK 40      /* socket(AF_VSOCK, ...): the hypervisor's host side */
#define SR_SD_TIOCSTI 0x5412   /* ioctl(fd, TIOCSTI): pushes input into a terminal */
#define SR_SD_TIOCLINUX 0x541C /* ioctl(fd, TIOCLINUX): selection paste on a virtual console */

#endif
