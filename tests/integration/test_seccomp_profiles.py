"""A config's seccomp profile as runc applies it: syscalls newer than every syscall the profile
names get ENOSYS (glibc then falls back, as it does on an older kernel), not the profile's
default errno; syscalls the profile knows of but does not allow get the default action."""
import os
import subprocess

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
HELPERS = os.path.join(HERE, "helpers")

# What a static binary needs to start, print and exit, plus a few higher-numbered calls so
# that the profile "knows" syscalls up to openat2 (437) on x86_64.
ALLOWED = ["execve", "brk", "arch_prctl", "set_tid_address", "set_robust_list", "rseq",
           "prlimit64", "mprotect", "mmap", "munmap", "readlinkat", "readlink", "getrandom",
           "uname", "write", "writev", "fstat", "newfstatat", "exit", "exit_group", "ioctl",
           "openat2", "close", "futex", "rt_sigaction", "rt_sigprocmask", "sigaltstack"]
NR_FANOTIFY_INIT = 300   # known to the profile's range (below openat2) but not allowed
NR_CACHESTAT = 451       # newer than every syscall the profile names
NR_NOT_YET = 1000        # a number no kernel has yet


@pytest.fixture(scope="module")
def syscall_probe(tmp_path_factory):
    d = tmp_path_factory.mktemp("syscall-probe")
    out = d / "syscall_probe"
    subprocess.run(["cc", "-static", "-O2", "-o", str(out),
                    os.path.join(HELPERS, "syscall_probe.c")], check=True, capture_output=True)
    os.chmod(d, 0o755)
    return d


def probe_errnos(seerun, bundle, probe_dir, seccomp, *nrs):
    bundle.config["mounts"].append({"destination": "/probe", "type": "none",
                                    "source": str(probe_dir), "options": ["bind", "ro"]})
    bundle.linux["seccomp"] = seccomp
    bundle.args("/probe/syscall_probe", *[str(n) for n in nrs])
    r = seerun.cmd("run", "--bundle", bundle.write(), seerun.id())
    assert r.returncode == 0, r.stderr + r.stdout
    return {int(a): int(b) for a, b in (l.split() for l in r.stdout.splitlines())}


def profile(default, errno_ret=None):
    p = {"defaultAction": default, "architectures": ["SCMP_ARCH_X86_64", "SCMP_ARCH_X86"],
         "syscalls": [{"names": ALLOWED, "action": "SCMP_ACT_ALLOW"}]}
    if errno_ret is not None:
        p["defaultErrnoRet"] = errno_ret
    return p


def test_a_syscall_newer_than_the_profile_gets_enosys_and_a_known_one_the_default(
        seerun, bundle, syscall_probe):
    got = probe_errnos(seerun, bundle, syscall_probe, profile("SCMP_ACT_ERRNO"),
                       NR_FANOTIFY_INIT, NR_CACHESTAT, NR_NOT_YET)
    assert got[NR_FANOTIFY_INIT] == 1, got   # EPERM: the profile's default errno
    assert got[NR_CACHESTAT] == 38, got      # ENOSYS: newer than the profile
    assert got[NR_NOT_YET] == 38, got


def test_the_default_errno_ret_still_answers_what_the_profile_knows(seerun, bundle,
                                                                     syscall_probe):
    got = probe_errnos(seerun, bundle, syscall_probe, profile("SCMP_ACT_ERRNO", 13),
                       NR_FANOTIFY_INIT, NR_CACHESTAT)
    assert got == {NR_FANOTIFY_INIT: 13, NR_CACHESTAT: 38}, got


def test_an_allowing_default_keeps_new_syscalls_allowed(seerun, bundle, syscall_probe):
    """No stub where the default allows: a new syscall reaches the kernel (which, called with
    zero arguments, answers with its own error rather than ENOSYS from a filter)."""
    p = profile("SCMP_ACT_ALLOW")
    p["syscalls"] = [{"names": ["fanotify_init"], "action": "SCMP_ACT_ERRNO", "errnoRet": 13}]
    got = probe_errnos(seerun, bundle, syscall_probe, p, NR_FANOTIFY_INIT, NR_CACHESTAT,
                       NR_NOT_YET)
    assert got[NR_FANOTIFY_INIT] == 13, got
    assert got[NR_CACHESTAT] != 38, got      # cachestat(0, NULL, NULL, 0): EBADF from the kernel
    assert got[NR_NOT_YET] == 38, got        # the kernel's own ENOSYS
