"""The container process as config.json describes it: its arguments, environment, working
directory, identity, limits, capabilities, scheduling and seccomp filter, and the descriptors it
inherits.  Each test looks at what the process itself sees (its output, /proc/self/...) or what
the host shows."""
import errno
import fcntl
import json
import os
import pathlib
import resource
import signal
import socket
import threading
import time

import pytest

from conftest import (SECCOMP_IOCTL_NOTIF_RECV, SECCOMP_IOCTL_NOTIF_SEND,
                      SeccompNotif, SeccompNotifResp, check_no_leaks)

# Capability numbers (linux/capability.h).
CAP_CHOWN = 0
CAP_KILL = 5
CAP_NET_BIND_SERVICE = 10
CAP_SYS_RESOURCE = 24


def caps_mask(*caps):
    m = 0
    for c in caps:
        m |= 1 << c
    return m


def have_cap(cap):
    with open("/proc/self/status") as f:
        return bool(int(status_fields(f.read())["CapEff"], 16) & (1 << cap))


def run(seerun, bundle, *extra, **kw):
    """`seerun run` in the foreground: the process's output and exit status."""
    return seerun.cmd("run", *extra, "--bundle", bundle.write(), seerun.id(), **kw)


def status_fields(text):
    """The "Key:\tvalue" lines of a /proc/PID/status dump."""
    out = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            out[key] = value.strip()
    return out


def run_status(seerun, bundle, **kw):
    bundle.args("cat", "/proc/self/status")
    r = run(seerun, bundle, **kw)
    assert r.returncode == 0, r.stderr
    return status_fields(r.stdout)


def assert_nothing_left(seerun):
    """No container listed, and none of its state, cgroups, mounts or processes on the host."""
    assert seerun.list_ids() == []
    check_no_leaks(seerun, pathlib.Path(seerun.root).parent)


# ---- args, env, cwd ----


def test_the_process_gets_exactly_the_configured_arguments(seerun, bundle):
    bundle.args("sh", "-c", 'for a in "$@"; do echo "<$a>"; done', "zero", "one two", "",
                "$HOME", "*")
    r = run(seerun, bundle)
    assert r.returncode == 0, r.stderr
    # No word splitting, globbing or expansion on the way: each argument arrives as written.
    assert r.stdout == "<one two>\n<>\n<$HOME>\n<*>\n"


def test_the_environment_is_exactly_the_configs_and_nothing_of_the_runtimes(seerun, bundle):
    bundle.process["env"] = ["PATH=/bin", "ONE=1", "SPACES=a b  c", "EMPTY="]
    bundle.args("cat", "/proc/self/environ")
    leaky = dict(os.environ, SEERUN_LEAK="secret", HOME="/root-of-the-runtime")
    r = run(seerun, bundle, env=leaky)
    assert r.returncode == 0, r.stderr
    # Plus HOME, as runc adds it: the container's root's home from its /etc/passwd, never the
    # runtime's.
    assert r.stdout.split("\0")[:-1] == ["PATH=/bin", "ONE=1", "SPACES=a b  c", "EMPTY=",
                                          "HOME=/root"]


def test_the_process_starts_in_the_configured_cwd(seerun, bundle):
    bundle.process["cwd"] = "/home/user"
    bundle.args("pwd")
    r = run(seerun, bundle)
    assert (r.returncode, r.stdout) == (0, "/home/user\n"), r.stderr


# A process that cannot start fails create with what is wrong, and leaves nothing behind.
# The executable's texts are runc's: engines map 'executable file not found' to exit status 127.
@pytest.mark.parametrize("process, wants", [
    # A missing cwd is made, as runc does (test_conformance_b); one below a file cannot be.
    ({"cwd": "/etc/passwd/sub"}, ["process.cwd", "/etc/passwd", "Not a directory"]),
    ({"cwd": "/etc/passwd"}, ["process.cwd", "Not a directory"]),
    ({"args": ["nope"]}, ['exec: "nope": executable file not found in $PATH']),
    # PATH of the config, not the runtime's: /bin is not in it, so "true" is not found.
    ({"args": ["true"], "env": ["PATH=/sbin:/usr/bin"]},
     ['exec: "true": executable file not found in $PATH']),
    ({"args": ["/etc/passwd"]}, ['exec: "/etc/passwd"', "permission denied"]),
    ({"args": ["/bin"]}, ['exec: "/bin"', "directory"]),
], ids=["cwd-below-a-file", "cwd-a-file", "executable-missing", "executable-not-in-configs-path",
        "executable-not-executable", "executable-a-directory"])
def test_a_process_that_cannot_start_fails_create_clearly_and_leaves_nothing(seerun, bundle,
                                                                            process, wants):
    bundle.process.update(process)
    r = seerun.cmd("create", "--bundle", bundle.write(), seerun.id())
    assert r.returncode != 0
    for want in wants:
        assert want in r.stderr, r.stderr
    assert_nothing_left(seerun)


# ---- identity ----


def test_a_non_root_user_gets_its_uid_gid_groups_and_umask(seerun, bundle):
    bundle.process["user"] = {"uid": 1000, "gid": 1000, "additionalGids": [5, 2000],
                              "umask": 0o027}
    bundle.shell("id; umask; cat /proc/self/status")
    r = run(seerun, bundle)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("uid=1000(user) gid=1000(user) groups=")
    assert lines[1] == "0027"
    st = status_fields("\n".join(lines[2:]))
    assert st["Uid"].split() == ["1000"] * 4
    assert st["Gid"].split() == ["1000"] * 4
    # Exactly the additional gids: none of the runtime's own supplementary groups.
    assert sorted(st["Groups"].split()) == ["2000", "5"]
    assert st["Umask"] == "0027"


def test_root_without_additional_gids_has_no_supplementary_groups(seerun, bundle):
    st = run_status(seerun, bundle, preexec_fn=lambda: os.setgroups([4, 27]))
    assert st["Uid"].split() == ["0"] * 4
    assert st["Groups"] == ""


def test_the_process_starts_with_default_signal_dispositions(seerun, bundle):
    # What the caller ignored or blocked (nohup, a shell's background job) and the runtime's
    # own SIGPIPE setting do not reach the container.
    def caller():
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR1])
    st = run_status(seerun, bundle, preexec_fn=caller)
    assert int(st["SigIgn"], 16) == 0
    assert int(st["SigBlk"], 16) == 0


def test_under_the_default_profile_the_user_groups_and_umask_are_still_the_configs(
        hardened, hardened_bundle):
    # The default profile puts the container in a user namespace: its ids are the config's as
    # the container sees them.
    hardened_bundle.process["user"] = {"uid": 1000, "gid": 1000, "additionalGids": [5],
                                       "umask": 0o077}
    st = run_status(hardened, hardened_bundle)
    assert st["Uid"].split() == ["1000"] * 4
    assert st["Gid"].split() == ["1000"] * 4
    assert st["Groups"] == "5"
    assert st["Umask"] == "0077"
    assert st["NoNewPrivs"] == "1"


# ---- rlimits ----


def test_a_lowered_nofile_limit_is_what_the_process_sees(seerun, bundle):
    bundle.process["rlimits"] = [{"type": "RLIMIT_NOFILE", "soft": 100, "hard": 200}]
    bundle.shell("ulimit -n; ulimit -Hn; grep 'open files' /proc/self/limits")
    r = run(seerun, bundle)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[:2] == ["100", "200"]
    assert lines[2].split()[3:5] == ["100", "200"]


def test_raising_a_hard_limit_above_the_runtimes_fails_with_a_clear_error(seerun, bundle):
    if have_cap(CAP_SYS_RESOURCE):
        pytest.skip("the runtime could raise it here")
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    assert hard != resource.RLIM_INFINITY
    bundle.process["rlimits"] = [{"type": "RLIMIT_NOFILE", "soft": 1024, "hard": hard + 1}]
    r = seerun.cmd("create", "--bundle", bundle.write(), seerun.id())
    assert r.returncode != 0
    assert "process.rlimits" in r.stderr and "RLIMIT_NOFILE" in r.stderr
    assert f"above the current {hard}" in r.stderr and "CAP_SYS_RESOURCE" in r.stderr
    assert_nothing_left(seerun)


# ---- capabilities and privileges ----


def test_root_gets_exactly_the_listed_capability_sets(seerun, bundle):
    three = ["CAP_CHOWN", "CAP_KILL", "CAP_NET_BIND_SERVICE"]
    bundle.process["capabilities"] = {
        "bounding": three, "permitted": three, "effective": three,
        "inheritable": ["CAP_NET_BIND_SERVICE"], "ambient": ["CAP_NET_BIND_SERVICE"],
    }
    st = run_status(seerun, bundle)
    three_mask = caps_mask(CAP_CHOWN, CAP_KILL, CAP_NET_BIND_SERVICE)
    assert int(st["CapBnd"], 16) == three_mask
    assert int(st["CapPrm"], 16) == three_mask
    assert int(st["CapEff"], 16) == three_mask
    assert int(st["CapInh"], 16) == caps_mask(CAP_NET_BIND_SERVICE)
    assert int(st["CapAmb"], 16) == caps_mask(CAP_NET_BIND_SERVICE)


def test_a_non_root_user_keeps_its_ambient_capabilities_across_exec(seerun, bundle):
    two = ["CAP_KILL", "CAP_NET_BIND_SERVICE"]
    bundle.process["user"] = {"uid": 1000, "gid": 1000}
    bundle.process["capabilities"] = {
        "bounding": two + ["CAP_CHOWN"], "permitted": two, "effective": two,
        "inheritable": two, "ambient": two,
    }
    st = run_status(seerun, bundle)
    two_mask = caps_mask(CAP_KILL, CAP_NET_BIND_SERVICE)
    assert st["Uid"].split() == ["1000"] * 4
    assert int(st["CapBnd"], 16) == two_mask | caps_mask(CAP_CHOWN)
    # Ambient capabilities are what a non-root process keeps across execve.
    assert int(st["CapInh"], 16) == two_mask
    assert int(st["CapPrm"], 16) == two_mask
    assert int(st["CapEff"], 16) == two_mask
    assert int(st["CapAmb"], 16) == two_mask


def test_a_non_root_user_without_ambient_capabilities_has_none_after_exec(seerun, bundle):
    bundle.process["user"] = {"uid": 1000, "gid": 1000}
    bundle.process["capabilities"] = {"bounding": ["CAP_KILL"], "permitted": ["CAP_KILL"],
                                      "effective": ["CAP_KILL"]}
    st = run_status(seerun, bundle)
    assert int(st["CapBnd"], 16) == caps_mask(CAP_KILL)
    for s in ("CapInh", "CapPrm", "CapEff", "CapAmb"):
        assert int(st[s], 16) == 0, s


def test_no_capabilities_section_means_no_capabilities_at_all(seerun, bundle):
    del bundle.process["capabilities"]
    st = run_status(seerun, bundle)
    for s in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"):
        assert int(st[s], 16) == 0, s


@pytest.mark.parametrize("nnp", [True, False])
def test_no_new_privileges_is_set_as_configured(seerun, bundle, nnp):
    bundle.process["noNewPrivileges"] = nnp
    st = run_status(seerun, bundle)
    assert st["NoNewPrivs"] == ("1" if nnp else "0")


# ---- oom, personality, scheduling, affinity ----


def test_oom_score_adj_is_applied(seerun, bundle):
    bundle.process["oomScoreAdj"] = 432
    bundle.args("cat", "/proc/self/oom_score_adj")
    r = run(seerun, bundle)
    assert (r.returncode, r.stdout) == (0, "432\n"), r.stderr


def test_lowering_oom_score_adj_without_cap_sys_resource_fails_clearly(seerun, bundle):
    if have_cap(CAP_SYS_RESOURCE):
        pytest.skip("the runtime could lower it here")
    with open("/proc/self/oom_score_adj") as f:
        if int(f.read()) != 0:
            pytest.skip("expects the test run's oom_score_adj to be 0")
    bundle.process["oomScoreAdj"] = -100
    r = seerun.cmd("create", "--bundle", bundle.write(), seerun.id())
    assert r.returncode != 0
    assert "process.oomScoreAdj" in r.stderr and "-100" in r.stderr
    assert "CAP_SYS_RESOURCE" in r.stderr and "Permission denied" in r.stderr
    assert_nothing_left(seerun)


def test_oom_score_adj_is_inherited_when_not_configured(seerun, bundle):
    bundle.args("cat", "/proc/self/oom_score_adj")

    def set_own():
        with open("/proc/self/oom_score_adj", "w") as f:
            f.write("123")
    r = run(seerun, bundle, preexec_fn=set_own)
    assert (r.returncode, r.stdout) == (0, "123\n"), r.stderr


def test_personality_linux32_makes_uname_report_a_32_bit_machine(seerun, bundle):
    if os.uname().machine != "x86_64":
        pytest.skip("the 32-bit personality name checked here is x86's")
    bundle.linux["personality"] = {"domain": "LINUX32"}
    bundle.args("uname", "-m")
    r = run(seerun, bundle)
    assert (r.returncode, r.stdout) == (0, "i686\n"), r.stderr


def test_the_scheduler_policy_and_nice_value_are_applied(seerun, bundle):
    bundle.process["scheduler"] = {"policy": "SCHED_BATCH", "nice": 7}
    bundle.args("cat", "/proc/self/stat")
    r = run(seerun, bundle)
    assert r.returncode == 0, r.stderr
    # Fields after the command name: nice is field 19, policy field 41 (proc(5)).
    fields = r.stdout.rsplit(")", 1)[1].split()
    nice, policy = int(fields[19 - 3]), int(fields[41 - 3])
    assert (policy, nice) == (os.SCHED_BATCH, 7)


def test_an_impossible_scheduler_fails_create_clearly(seerun, bundle):
    # A real-time priority above 99 does not exist.
    bundle.process["scheduler"] = {"policy": "SCHED_FIFO", "priority": 100}
    r = seerun.cmd("create", "--bundle", bundle.write(), seerun.id())
    assert r.returncode != 0
    assert "process.scheduler" in r.stderr and "SCHED_FIFO" in r.stderr
    assert_nothing_left(seerun)


def test_the_io_priority_is_applied(seerun, bundle):
    bundle.process["ioPriority"] = {"class": "IOPRIO_CLASS_BE", "priority": 6}
    bundle.shell("ionice -p $$")
    r = run(seerun, bundle)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "best-effort: prio 6"


def test_exec_cpu_affinity_final_pins_the_process(seerun, bundle):
    if len(os.sched_getaffinity(0)) < 2 or 1 not in os.sched_getaffinity(0):
        pytest.skip("needs CPUs 0 and 1")
    bundle.process["execCPUAffinity"] = {"final": "1"}
    st = run_status(seerun, bundle)
    assert st["Cpus_allowed_list"] == "1"


def test_lsm_labels_are_accepted_and_ignored_without_selinux_or_apparmor(seerun, bundle):
    if os.path.exists("/sys/fs/selinux/enforce"):
        pytest.skip("SELinux is enabled here")
    try:
        with open("/sys/module/apparmor/parameters/enabled") as f:
            if f.read().startswith("Y"):
                pytest.skip("AppArmor is enabled here")
    except FileNotFoundError:
        pass
    bundle.process["apparmorProfile"] = "seerun-test-profile"
    bundle.process["selinuxLabel"] = "system_u:system_r:container_t:s0:c1,c2"
    # With no LSM active, the attr files read as EINVAL.
    bundle.shell("cat /proc/self/attr/current 2>/dev/null; echo ran")
    r = run(seerun, bundle)
    assert r.returncode == 0, r.stderr
    # Not confined by anything, and no error on the way.
    assert r.stdout == "ran\n"
    assert r.stderr == ""


def test_ignored_lsm_labels_are_named_in_the_debug_log(seerun, bundle, tmp_path):
    if os.path.exists("/sys/fs/selinux/enforce"):
        pytest.skip("SELinux is enabled here")
    bundle.process["selinuxLabel"] = "system_u:system_r:container_t:s0:c1,c2"
    log = tmp_path / "debug.log"
    seerun.cmd("--log", str(log), "--debug", "create", "--bundle", bundle.write(), seerun.id(),
               check=True)
    assert "process.selinuxLabel" in log.read_text() and "ignored" in log.read_text()


def test_ambient_capabilities_that_cannot_be_raised_are_warned_about(seerun, bundle):
    # runc's default spec lists ambient capabilities that are not inheritable: the kernel
    # refuses them, and the spec wants a warning rather than a silent gap.
    bundle.process["user"] = {"uid": 1000, "gid": 1000}
    bundle.process["capabilities"] = {"bounding": ["CAP_KILL"], "permitted": ["CAP_KILL"],
                                      "effective": ["CAP_KILL"], "ambient": ["CAP_KILL"]}
    bundle.args("grep", "CapAmb", "/proc/self/status")
    r = run(seerun, bundle)
    assert r.returncode == 0, r.stderr
    assert int(r.stdout.split()[1], 16) == 0
    assert "warning" in r.stderr and "ambient" in r.stderr and "CAP_KILL" in r.stderr


# ---- seccomp ----


def seccomp(default="SCMP_ACT_ALLOW", syscalls=(), **kw):
    s = {"defaultAction": default, "syscalls": list(syscalls)}
    s.update(kw)
    return s


def test_a_syscall_blocked_with_errno_ret_fails_with_that_errno_inside(seerun, bundle):
    bundle.linux["seccomp"] = seccomp(syscalls=[
        {"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO",
         "errnoRet": errno.EDQUOT}])
    bundle.shell("mkdir /dev/shm/d; echo status=$?; touch /dev/shm/f && echo touched")
    r = run(seerun, bundle)
    assert r.returncode == 0, r.stderr
    assert os.strerror(errno.EDQUOT) in r.stderr
    assert "status=1" in r.stdout
    # Only the listed syscalls: creating a file still works.
    assert "touched" in r.stdout


def test_errno_without_errno_ret_is_eperm(seerun, bundle):
    bundle.linux["seccomp"] = seccomp(syscalls=[
        {"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO"}])
    bundle.shell("mkdir /dev/shm/d")
    r = run(seerun, bundle)
    assert r.returncode == 1
    assert os.strerror(errno.EPERM) in r.stderr


def test_a_syscall_with_kill_process_kills_the_process_with_sigsys(seerun, bundle):
    bundle.linux["seccomp"] = seccomp(syscalls=[
        {"names": ["uname"], "action": "SCMP_ACT_KILL_PROCESS"}])
    bundle.args("uname", "-a")
    r = run(seerun, bundle)
    assert r.returncode == 128 + 31  # SIGSYS
    assert r.stdout == ""


def test_argument_conditions_select_which_calls_are_blocked(seerun, bundle):
    # kill(pid, SIGUSR1) is refused; kill(pid, 0) and kill(pid, SIGUSR2) are not.
    bundle.linux["seccomp"] = seccomp(syscalls=[
        {"names": ["kill"], "action": "SCMP_ACT_ERRNO", "errnoRet": errno.EACCES,
         "args": [{"index": 1, "value": 10, "op": "SCMP_CMP_EQ"}]},
        # Masked: any signal number whose low bits are 0b1101 (13 = SIGPIPE, 29 = SIGIO).
        {"names": ["kill"], "action": "SCMP_ACT_ERRNO", "errnoRet": errno.ENOEXEC,
         "args": [{"index": 1, "value": 0xf, "valueTwo": 13, "op": "SCMP_CMP_MASKED_EQ"}]}])
    bundle.shell("trap 'echo got-usr2' USR2; trap '' PIPE IO;"
                 "kill -0 $$ && echo zero-ok;"
                 "kill -USR1 $$ 2>&1;"
                 "kill -PIPE $$ 2>&1;"
                 "kill -IO $$ 2>&1;"
                 "kill -USR2 $$; echo end")
    r = run(seerun, bundle)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "zero-ok" in out
    assert out.count(os.strerror(errno.EACCES)) == 1
    assert out.count(os.strerror(errno.ENOEXEC)) == 2
    assert "got-usr2" in out and out.rstrip().endswith("end")


def test_a_filter_with_extra_architectures_still_blocks_the_native_calls(seerun, bundle):
    bundle.linux["seccomp"] = seccomp(
        architectures=["SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"],
        syscalls=[{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO",
                   "errnoRet": errno.EROFS}])
    bundle.shell("mkdir /dev/shm/d")
    r = run(seerun, bundle)
    assert r.returncode == 1
    assert os.strerror(errno.EROFS) in r.stderr


def test_an_unknown_architecture_is_refused_by_name(seerun, bundle):
    bundle.linux["seccomp"] = seccomp(architectures=["SCMP_ARCH_NOPE"])
    r = seerun.cmd("create", "--bundle", bundle.write(), seerun.id())
    assert r.returncode != 0 and "SCMP_ARCH_NOPE" in r.stderr
    assert_nothing_left(seerun)


def test_filter_flags_are_accepted_and_the_filter_is_loaded(seerun, bundle):
    bundle.linux["seccomp"] = seccomp(flags=["SECCOMP_FILTER_FLAG_LOG"], syscalls=[
        {"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO", "errnoRet": errno.EDQUOT}])
    bundle.shell("grep Seccomp: /proc/self/status; mkdir /dev/shm/x")
    r = run(seerun, bundle)
    assert r.returncode == 1
    assert status_fields(r.stdout)["Seccomp"] == "2"
    assert os.strerror(errno.EDQUOT) in r.stderr


def test_an_unknown_filter_flag_is_refused_by_name(seerun, bundle):
    bundle.linux["seccomp"] = seccomp(flags=["SECCOMP_FILTER_FLAG_NOPE"])
    r = seerun.cmd("create", "--bundle", bundle.write(), seerun.id())
    assert r.returncode != 0 and "SECCOMP_FILTER_FLAG_NOPE" in r.stderr
    assert_nothing_left(seerun)


def test_a_config_without_no_new_privileges_still_gets_its_filter(seerun, bundle):
    bundle.process["noNewPrivileges"] = False
    bundle.process["user"] = {"uid": 1000, "gid": 1000}
    bundle.linux["seccomp"] = seccomp(syscalls=[
        {"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO", "errnoRet": errno.EDQUOT}])
    bundle.shell("grep -E '^(Seccomp|NoNewPrivs):' /proc/self/status; mkdir /dev/shm/x")
    r = run(seerun, bundle)
    assert r.returncode == 1
    st = status_fields(r.stdout)
    assert (st["Seccomp"], st["NoNewPrivs"]) == ("2", "0")
    assert os.strerror(errno.EDQUOT) in r.stderr


def test_a_default_errno_filter_allows_only_the_listed_syscalls(seerun, bundle):
    # A whitelist that forgets exit_group and friends would kill the process on its way out:
    # here the process must still be able to run and report.
    allowed = ["execve", "brk", "arch_prctl", "set_tid_address", "set_robust_list", "rseq",
               "prlimit64", "mprotect", "mmap", "munmap", "readlink", "readlinkat", "uname",
               "getuid", "geteuid", "getgid", "getegid", "getpid", "getppid", "write",
               "writev", "exit", "exit_group", "fstat", "newfstatat", "ioctl", "rt_sigaction",
               "rt_sigprocmask", "getrandom", "read", "close"]
    bundle.linux["seccomp"] = seccomp(default="SCMP_ACT_ERRNO", syscalls=[
        {"names": allowed, "action": "SCMP_ACT_ALLOW"}])
    bundle.args("echo", "still alive")
    r = run(seerun, bundle)
    assert (r.returncode, r.stdout) == (0, "still alive\n"), r.stderr


# ---- seccomp notify: the agent at listenerPath ----

class Agent:
    """A seccomp agent: listens at a unix socket, collects what the runtime sends (data until
    EOF, descriptors), and answers up to `answers` notifications with `value`."""

    def __init__(self, path, value=None, answers=0):
        self.path = str(path)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(self.path)
        self.sock.listen(4)
        self.sock.settimeout(20)
        self.value, self.answers = value, answers
        self.connections = 0
        self.data = b""
        self.fds = []
        self.messages_with_fds = 0
        self.notifications = []
        self.error = None
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        try:
            conn, _ = self.sock.accept()
            self.connections += 1
            conn.settimeout(20)
            with conn:
                while True:
                    msg, fds, _, _ = socket.recv_fds(conn, 65536, 4)
                    if fds:
                        self.messages_with_fds += 1
                        self.fds += fds
                    if not msg:
                        break
                    self.data += msg
            for _ in range(self.answers):
                self.answer_one()
        except Exception as e:  # reported by the test
            self.error = e

    def answer_one(self):
        fd = self.fds[0]
        req = SeccompNotif()
        fcntl.ioctl(fd, SECCOMP_IOCTL_NOTIF_RECV, req)
        self.notifications.append((req.pid, req.data.nr))
        resp = SeccompNotifResp(id=req.id, val=self.value, error=0, flags=0)
        fcntl.ioctl(fd, SECCOMP_IOCTL_NOTIF_SEND, resp)

    def join(self):
        self.thread.join(25)
        assert not self.thread.is_alive(), "the agent is still waiting"
        if self.error:
            raise self.error

    def close(self):
        for fd in self.fds:
            os.close(fd)
        self.sock.close()


@pytest.fixture
def agent_path(tmp_path):
    # sockaddr_un holds 108 bytes: pytest's tmp_path may be longer.
    d = f"/tmp/sra-{os.getpid()}-{os.urandom(3).hex()}"
    os.mkdir(d)
    yield os.path.join(d, "agent.sock")
    for f in os.listdir(d):
        os.unlink(os.path.join(d, f))
    os.rmdir(d)


def test_the_seccomp_agent_receives_the_container_process_state_and_the_notify_fd(
        seerun, bundle, agent_path):
    agent = Agent(agent_path)
    try:
        bundle.config["annotations"] = {"org.test.agent": "yes"}
        bundle.linux["seccomp"] = seccomp(
            listenerPath=agent_path, listenerMetadata="MKNOD=/dev/null",
            syscalls=[{"names": ["getppid"], "action": "SCMP_ACT_NOTIFY"}])
        bundle.args("sleep", "30")
        cid = seerun.id()
        seerun.cmd("create", "--bundle", bundle.write(), cid, check=True)
        pid = seerun.state(cid)["pid"]
        seerun.cmd("start", cid, check=True)
        agent.join()
        assert agent.connections == 1
        assert agent.messages_with_fds == 1 and len(agent.fds) == 1
        # The descriptor is a seccomp listener.
        assert os.readlink(f"/proc/self/fd/{agent.fds[0]}") == "anon_inode:seccomp notify"
        state = json.loads(agent.data)
        assert state["ociVersion"].startswith("1.")
        assert state["fds"] == ["seccompFd"]
        assert state["pid"] == pid
        assert state["metadata"] == "MKNOD=/dev/null"
        s = state["state"]
        assert s["id"] == cid and s["pid"] == pid
        assert s["bundle"] == str(bundle.path)
        assert s["status"] in ("creating", "created")
        assert s["annotations"] == {"org.test.agent": "yes"}
    finally:
        agent.close()


def test_the_seccomp_agent_answers_a_notification_and_the_process_sees_its_value(
        seerun, bundle, agent_path):
    agent = Agent(agent_path, value=4242, answers=1)
    try:
        bundle.linux["seccomp"] = seccomp(
            listenerPath=agent_path,
            syscalls=[{"names": ["getppid"], "action": "SCMP_ACT_NOTIFY"}])
        # The shell learns $PPID from getppid() at start.
        bundle.shell("echo ppid=$PPID")
        r = run(seerun, bundle, timeout=30)
        agent.join()
        assert r.returncode == 0, r.stderr
        assert r.stdout == "ppid=4242\n"
        assert len(agent.notifications) == 1
    finally:
        agent.close()


def test_an_unreachable_seccomp_agent_fails_create_and_leaves_nothing(seerun, bundle,
                                                                     agent_path):
    bundle.linux["seccomp"] = seccomp(
        listenerPath=agent_path,
        syscalls=[{"names": ["getppid"], "action": "SCMP_ACT_NOTIFY"}])
    r = seerun.cmd("create", "--bundle", bundle.write(), seerun.id())
    assert r.returncode != 0
    assert "listenerPath" in r.stderr and agent_path in r.stderr
    assert_nothing_left(seerun)


# ---- descriptors ----


def fd_list_script():
    # The shell's own descriptors, listed by a child (ls would list the one it opens on the
    # directory; in a pipeline, the shell would hold pipe ends).
    return "ls /proc/$$/fd; true"


def test_the_process_has_only_stdio_even_when_the_caller_leaks_descriptors(seerun, bundle,
                                                                            tmp_path):
    leaked = [os.open(str(tmp_path), os.O_RDONLY | os.O_DIRECTORY),
              os.open("/etc/hostname", os.O_RDONLY)]
    r_pipe, w_pipe = os.pipe()
    leaked += [r_pipe, w_pipe]
    try:
        bundle.shell(fd_list_script())
        r = run(seerun, bundle, pass_fds=leaked)
        assert r.returncode == 0, r.stderr
        assert r.stdout.split() == ["0", "1", "2"]
    finally:
        for fd in leaked:
            os.close(fd)


def test_preserve_fds_passes_exactly_the_next_n_descriptors(seerun, bundle):
    r3, w3 = os.pipe()
    r4, w4 = os.pipe()
    extra = os.open("/etc/hostname", os.O_RDONLY)

    def arrange():
        # fd 3 and 4 are pipes to us; fd 5 is one more the runtime must not pass on.
        os.dup2(w3, 3)
        os.dup2(w4, 4)
        os.dup2(extra, 5)
    try:
        bundle.shell(fd_list_script() + "; echo to-three >&3; echo to-four >&4")
        r = run(seerun, bundle, "--preserve-fds", "2", pass_fds=(3, 4, 5),
                preexec_fn=arrange)
        os.close(w3)
        os.close(w4)
        assert r.returncode == 0, r.stderr
        assert r.stdout.split() == ["0", "1", "2", "3", "4"]
        assert os.read(r3, 100) == b"to-three\n"
        assert os.read(r4, 100) == b"to-four\n"
    finally:
        for fd in (r3, r4, extra):
            os.close(fd)


def test_preserve_fds_beyond_what_the_caller_passed_leaks_nothing_of_the_runtime(
        seerun, bundle, tmp_path):
    # The caller passes fd 3 only but asks for 4: descriptors 4 to 6 must not become the
    # runtime's own (its log, the exec fifo's write end) and so reach the container; nor may
    # `start` wait for the container's exit because the container holds the exec fifo.
    r3, w3 = os.pipe()
    log = tmp_path / "runtime.log"
    bundle.shell("ls -l /proc/$$/fd >&3; exec 3>&-; sleep 3")
    cid = seerun.id()
    try:
        r = seerun.cmd("--log", str(log), "create", "--preserve-fds", "4", "--bundle",
                       bundle.write(), cid, pass_fds=(3,), preexec_fn=lambda: os.dup2(w3, 3))
        os.close(w3)
        if r.returncode != 0:
            # Refusing is fine, if it says why.
            assert "--preserve-fds" in r.stderr
            return
        t0 = time.monotonic()
        seerun.cmd("start", cid, check=True)
        started = time.monotonic() - t0
        listing = b""
        while chunk := os.read(r3, 4096):
            listing += chunk
    finally:
        os.close(r3)
    assert b"3 -> pipe:" in listing, listing  # what fd 3 is: the one the caller passed
    assert b"exec.fifo" not in listing and str(log).encode() not in listing, listing
    assert started < 2, "start waited for the container's exit"


def test_session_keyring_is_the_containers_own_unless_no_new_keyring(seerun, bundle):
    # /proc/keys lists the keys the process can see: its session keyring among them.
    bundle.linux["maskedPaths"] = [p for p in bundle.linux.get("maskedPaths", [])
                                   if p != "/proc/keys"]
    bundle.shell("cat /proc/keys")
    cid = seerun.id()
    r = seerun.cmd("run", "--bundle", bundle.write(), cid)
    assert r.returncode == 0, r.stderr
    own = [line for line in r.stdout.splitlines() if f"keyring   _ses.{cid}:" in line]
    assert len(own) == 1, r.stdout
    cid2 = seerun.id("nokr")
    r = seerun.cmd("run", "--no-new-keyring", "--bundle", bundle.write(), cid2)
    assert r.returncode == 0, r.stderr
    assert "keyring" in r.stdout  # the caller's session keyring, still listed
    assert "_ses." + cid2 not in r.stdout
