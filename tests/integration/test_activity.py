"""The activity record (issue 16): what the code in a container tried, as the audit log keeps it
(one "activity" event when the container stops, docs/audit.md), and `seerun review` reading it.

The built-in seccomp filter answers its denied set with a notification that the container's
supervisor serves (it replies EPERM, as the plain filter does): the calls still fail as before,
and each shows up, counted, with the executable that made it."""
import json
import os
import shutil
import signal
import socket
import subprocess
import threading
import time

import pytest

from conftest import make_norecord_seerun, check_no_leaks, Bundle, wait_for, SEERUN
from test_conformance import Agent

HERE = os.path.dirname(os.path.abspath(__file__))
HELPERS = os.path.join(HERE, "helpers")
EPERM, ENOSYS, EDQUOT = 1, 38, 122


@pytest.fixture(scope="module")
def probe_dir():
    # Outside the tests' own directories: those hold the state root, a denied bind source.
    d = f"/tmp/sr-activity-probe-{os.getpid()}"
    os.makedirs(d, exist_ok=True)
    subprocess.run(["cc", "-static", "-O2", "-o", os.path.join(d, "activity_probe"),
                    os.path.join(HELPERS, "activity_probe.c")], check=True, capture_output=True)
    os.chmod(d, 0o755)
    yield d
    os.unlink(os.path.join(d, "activity_probe"))
    os.rmdir(d)


def with_probe(bundle, probe_dir):
    bundle.config["mounts"].append({"destination": "/probe", "type": "none",
                                    "source": probe_dir, "options": ["bind", "ro"]})
    return bundle


@pytest.fixture
def hbundle(tmp_path, busybox_rootfs, hardened, probe_dir):
    path = tmp_path / "bundle"
    path.mkdir()
    return with_probe(Bundle(path, busybox_rootfs, hardened), probe_dir)


def activity_events(seerun, cid):
    return [e for e in seerun.audit() if e["event"] == "activity" and e["id"] == cid]


def the_activity(seerun, cid):
    ev = activity_events(seerun, cid)
    assert len(ev) == 1, ev
    return ev[0]


def denied_counts(event):
    return {s["syscall"]: s["count"] for s in event["record"]["seccomp"]["syscalls"]}


def probe_output(stdout):
    return {a: int(b) for a, b in (l.split() for l in stdout.splitlines() if " " in l)}


PROBE = ["mount:3", "unshare:2", "keyctl:1", "bpf:4", "ptrace:5"]
EXPECTED = {"mount": 3, "unshare": 2, "keyctl": 1, "bpf": 4, "ptrace": 5}


def test_privileged_attempts_are_recorded_with_their_counts(hardened, hbundle):
    hbundle.args("/probe/activity_probe", *PROBE)
    cid = hardened.id()
    r = hardened.cmd("run", "--bundle", hbundle.write(), cid, timeout=60)
    assert r.returncode == 0, r.stderr
    # What the code sees has not changed: EPERM, as the plain filter answers.
    assert probe_output(r.stdout) == {k: EPERM for k in EXPECTED}, r.stdout
    ev = the_activity(hardened, cid)
    assert ev["complete"] is True, ev
    sc = ev["record"]["seccomp"]
    assert sc["visible"] is True and sc["listeners"] == 1
    assert denied_counts(ev) == EXPECTED
    assert sc["denied"] == sum(EXPECTED.values())
    by = {e["syscall"]: e for e in sc["byExecutable"]}
    for name, n in EXPECTED.items():
        assert by[name]["executable"] == "/probe/activity_probe"
        assert by[name]["count"] == n
        assert 1 <= len(by[name]["first"]) <= 4
    # Arguments rendered by name where that is cheap.
    assert by["unshare"]["first"][0]["args"][0] == "CLONE_NEWUSER"
    assert by["mount"]["first"][0]["args"][3] == "MS_NOSUID|MS_NODEV"
    assert by["keyctl"]["first"][0]["args"][0] == "KEYCTL_GET_KEYRING_ID"
    assert by["bpf"]["first"][0]["args"][0] == "BPF_PROG_LOAD"
    assert by["ptrace"]["first"][0]["args"][0] == "PTRACE_ATTACH"
    assert "oomKills" in ev["record"]["resources"]
    assert "pidsLimitHits" in ev["record"]["resources"]
    assert ev["record"]["processesAtStop"]["count"] == 0


def test_exec_hands_its_listener_over_too(hardened, hbundle):
    hbundle.args("sleep", "300")
    cid = hardened.id()
    hardened.cmd("run", "-d", "--bundle", hbundle.write(), cid, check=True, timeout=30)
    assert hardened.state(cid)["status"] == "running"
    r = hardened.cmd("exec", cid, "/probe/activity_probe", "keyctl:7", timeout=30)
    assert probe_output(r.stdout) == {"keyctl": EPERM}, (r.stdout, r.stderr)
    r = hardened.cmd("exec", cid, "/probe/activity_probe", "bpf:2", timeout=30)
    assert probe_output(r.stdout) == {"bpf": EPERM}, (r.stdout, r.stderr)
    hardened.cmd("delete", "--force", cid, check=True)
    ev = the_activity(hardened, cid)
    assert ev["complete"] is True
    assert ev["record"]["seccomp"]["listeners"] == 3  # start and two execs
    assert denied_counts(ev) == {"keyctl": 7, "bpf": 2}


def test_a_million_denials_stay_bounded(hardened, hbundle):
    n = 1000000
    hbundle.args("/probe/activity_probe", f"keyctl:{n}", "bpf:3")
    cid = hardened.id()
    t0 = time.monotonic()
    r = hardened.cmd("run", "--bundle", hbundle.write(), cid, timeout=900)
    elapsed = time.monotonic() - t0
    assert r.returncode == 0, r.stderr
    assert probe_output(r.stdout) == {"keyctl": EPERM, "bpf": EPERM}
    ev = the_activity(hardened, cid)
    assert denied_counts(ev) == {"keyctl": n, "bpf": 3}  # counts exact
    by = {e["syscall"]: e for e in ev["record"]["seccomp"]["byExecutable"]}
    assert by["keyctl"]["count"] == n and len(by["keyctl"]["first"]) == 4  # details capped
    with open(hardened.audit_log) as f:
        line = [l for l in f if '"event":"activity"' in l and cid in l][0]
    assert len(line) < 256 * 1024
    print(f"{n} denials in {elapsed:.1f}s ({elapsed / n * 1e6:.1f} us each)")


def test_a_config_listener_still_gets_its_notifications(tmp_path, hardened, hbundle):
    d = f"/tmp/sra-{os.getpid()}-{os.urandom(3).hex()}"
    os.mkdir(d)
    agent = Agent(os.path.join(d, "agent.sock"))
    try:
        hbundle.linux["seccomp"] = {
            "defaultAction": "SCMP_ACT_ALLOW", "listenerPath": agent.path,
            "architectures": ["SCMP_ARCH_X86", "SCMP_ARCH_X86_64"],
            "syscalls": [{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_NOTIFY"}]}
        hbundle.args("sleep", "300")
        cid = hardened.id()
        hardened.cmd("run", "-d", "--bundle", hbundle.write(), cid, check=True, timeout=30)
        r = hardened.cmd("exec", cid, "sh", "-c", "mkdir /tmp/d; echo status=$?", timeout=30)
        assert "status=1" in r.stdout and "quota" in r.stderr.lower(), (r.stdout, r.stderr)
        assert len(agent.states) == 2  # the init's and the exec's listeners: the agent's
        # The built-in filter still denies, unseen.
        r = hardened.cmd("exec", cid, "/probe/activity_probe", "mount:2", timeout=30)
        assert probe_output(r.stdout) == {"mount": EPERM}, (r.stdout, r.stderr)
        hardened.cmd("delete", "--force", cid, check=True)
        ev = the_activity(hardened, cid)
        assert ev["complete"] is False
        sc = ev["record"]["seccomp"]
        assert sc["visible"] is False and "listenerPath" in sc["unseen"]
        assert sc["denied"] == 0 and sc["listeners"] == 0
    finally:
        agent.close()
        for f in os.listdir(d):
            os.unlink(os.path.join(d, f))
        os.rmdir(d)


def test_a_killed_supervisor_leaves_an_incomplete_record(hardened, hbundle):
    # The init tries mount twice, then waits for /tmp/go (made by an exec) and tries keyctl:
    # its listener has gone with the supervisor by then, so the call fails with ENOSYS.
    hbundle.shell("/probe/activity_probe mount:2 > /tmp/first; "
                  "while [ ! -e /tmp/go ]; do sleep 0.05; done; "
                  "/probe/activity_probe keyctl > /tmp/second; sleep 300")
    cid = hardened.id()
    hardened.cmd("run", "-d", "--bundle", hbundle.write(), cid, check=True, timeout=30)
    statedir = os.path.join(hardened.root, cid)

    def flushed():
        try:
            with open(os.path.join(statedir, "activity.json")) as f:
                return json.load(f)["seccomp"]["denied"] == 2
        except (OSError, ValueError, KeyError):
            return False
    wait_for(flushed, timeout=20, what="the record's flush")
    with open(os.path.join(statedir, "state.json")) as f:
        sup = json.load(f)["supervisor"]["pid"]
    os.kill(sup, signal.SIGKILL)
    wait_for(lambda: not os.path.exists(f"/proc/{sup}") or
             open(f"/proc/{sup}/stat").read().split()[2] == "Z", timeout=20,
             what="the supervisor's end")
    hardened.cmd("exec", cid, "touch", "/tmp/go", check=True, timeout=30)
    out = wait_for(lambda: hardened.cmd("exec", cid, "cat", "/tmp/second", timeout=30).stdout,
                   timeout=20, what="the second probe")
    # Denied all the same: the listener has gone, the kernel answers ENOSYS.
    assert probe_output(out) == {"keyctl": ENOSYS}, out
    # An exec finds no supervisor: the plain filter, EPERM.
    r = hardened.cmd("exec", cid, "/probe/activity_probe", "bpf", timeout=30)
    assert probe_output(r.stdout) == {"bpf": EPERM}
    hardened.cmd("delete", "--force", cid, check=True)
    ev = the_activity(hardened, cid)
    assert ev["complete"] is False and "supervisor" in ev["reason"]
    assert denied_counts(ev) == {"mount": 2}


def test_activity_record_can_be_turned_off(tmp_path, busybox_rootfs, probe_dir):
    s = make_norecord_seerun(tmp_path)
    try:
        path = tmp_path / "bundle"
        path.mkdir()
        b = with_probe(Bundle(path, busybox_rootfs, s), probe_dir)
        b.args("/probe/activity_probe", "mount")
        cid = s.id()
        r = s.cmd("run", "--bundle", b.write(), cid, timeout=60)
        assert probe_output(r.stdout) == {"mount": EPERM}, (r.stdout, r.stderr)
        assert activity_events(s, cid) == []
        shown = json.loads(s.cmd("policy", "show", check=True).stdout)
        assert shown["settings"]["activity"] == {"record": False}
    finally:
        s.cleanup()
    check_no_leaks(s, tmp_path)


def review(seerun, *args):
    r = seerun.cmd("review", "--json", *args, check=True)
    return {run["id"]: run for run in json.loads(r.stdout)["runs"]}


def test_review_flags_what_it_should_and_nothing_on_a_quiet_run(hardened, hbundle):
    quiet, tried, crashed = hardened.id("quiet"), hardened.id("tried"), hardened.id("crash")
    hbundle.args("sh", "-c", "echo hello > /tmp/x; cat /tmp/x; ls / > /dev/null")
    assert hardened.cmd("run", "--bundle", hbundle.write(), quiet, timeout=60).returncode == 0
    hbundle.args("/probe/activity_probe", *PROBE)
    assert hardened.cmd("run", "--bundle", hbundle.write(), tried, timeout=60).returncode == 0
    # In a child (pid 1 ignores a signal it has no handler for; "; exit" keeps sh from exec'ing).
    hbundle.shell("sh -c 'kill -SEGV $$'; exit $?")
    assert hardened.cmd("run", "--bundle", hbundle.write(), crashed, timeout=60).returncode == 139

    runs = review(hardened)
    assert runs[quiet]["flags"] == [], runs[quiet]
    assert runs[quiet]["deniedSyscalls"] == 0 and runs[quiet]["exitStatus"] == 0
    assert [f["flag"] for f in runs[tried]["flags"]] == ["privileged-syscall"], runs[tried]
    reason = runs[tried]["flags"][0]["reason"]
    for name in EXPECTED:
        assert name in reason
    assert runs[tried]["denied"] == EXPECTED
    assert [f["flag"] for f in runs[crashed]["flags"]] == ["crash"], runs[crashed]
    assert "SIGSEGV" in runs[crashed]["flags"][0]["reason"]

    # By id, and by time.
    assert list(review(hardened, quiet)) == [quiet]
    assert review(hardened, "--since", "2999-01-01T00:00:00Z") == {}
    assert set(review(hardened, "--since", "-1h")) == {quiet, tried, crashed}
    text = hardened.cmd("review", quiet, check=True).stdout
    assert "FLAG" not in text and "1 run(s), 0 flagged" in text
    text = hardened.cmd("review", tried, check=True).stdout
    assert "FLAG privileged-syscall" in text
    r = hardened.cmd("review", "--since", "yesterday")
    assert r.returncode != 0 and "--since" in r.stderr


def test_processes_running_when_stopped_are_listed_and_flagged(hardened, hbundle):
    busy, lone = hardened.id("busy"), hardened.id("lone")
    # sh execs its last command: the init is that sleep, the other one its child.
    hbundle.shell("sleep 301 & exec sleep 300")
    hardened.cmd("run", "-d", "--bundle", hbundle.write(), busy, check=True, timeout=30)
    wait_for(lambda: len(json.loads(hardened.cmd("ps", "--format", "json", busy).stdout or "[]"))
             == 2, timeout=20, what="both processes")
    hbundle.args("sleep", "300")
    hardened.cmd("run", "-d", "--bundle", hbundle.write(), lone, check=True, timeout=30)
    for cid in (busy, lone):
        hardened.cmd("kill", cid, "KILL", check=True)
        hardened.cmd("delete", "--force", cid, check=True)
    at_kill = the_activity(hardened, busy)["record"]["processesAtKill"]
    assert at_kill["at"] == "kill" and at_kill["count"] == 2, at_kill
    assert sorted(p["cmdline"] for p in at_kill["processes"]) == ["sleep 300", "sleep 301"]
    assert the_activity(hardened, lone)["record"]["processesAtKill"]["count"] == 1
    runs = review(hardened)
    assert [f["flag"] for f in runs[busy]["flags"]] == ["processes-left"], runs[busy]
    assert "sleep 301" in runs[busy]["flags"][0]["reason"]
    assert runs[lone]["flags"] == [], runs[lone]


def test_programs_executed_are_listed_and_bounded(hardened, hbundle):
    # A program that lives long enough to be read (sleep), then thousands of short ones.
    hbundle.shell("/bin/sleep 1; i=0; while [ $i -lt 3000 ]; do /bin/true; i=$((i+1)); done; "
                  "echo finished")
    cid = hardened.id()
    r = hardened.cmd("run", "--bundle", hbundle.write(), cid, timeout=300)
    assert r.returncode == 0 and "finished" in r.stdout, r.stderr
    ev = the_activity(hardened, cid)
    progs = ev["record"]["programs"]
    listed = progs["listed"]
    init = listed[0]
    assert init["argv"].startswith("sh -c /bin/sleep 1;"), init
    sleep = [p for p in listed if p["argv"] == "/bin/sleep 1"]
    assert sleep and sleep[0]["ppid"] == init["pid"] and sleep[0]["executable"] == "/bin/busybox"
    # Bounded: at most 64 listed, the rest counted, exactly (the container's processes are
    # known from the fork events, so even those that have ended are its own) unless the
    # kernel dropped events.
    assert len(listed) <= 64
    if not progs.get("eventsLost"):
        assert progs["count"] == 3002, progs["count"]  # sh, sleep, 3000 true
    assert progs["count"] == len(listed) + progs.get("notListed", 0)
    with open(hardened.audit_log) as f:
        line = [l for l in f if '"event":"activity"' in l and cid in l][0]
    assert len(line) < 256 * 1024


def test_delete_waits_for_the_record_not_for_the_supervisors_end(hardened, hbundle):
    # delete asks the supervisor, over activity.sock, to say when the record is written (it
    # closes the connection after activity.done), instead of waiting for its whole end (letting
    # go of the container's mount namespace, its exit).  What delete relies on, as a client
    # would see it: the answer comes once the record is in the audit log, never before.
    hbundle.args("sleep", "300")
    cid = hardened.id()
    hardened.cmd("run", "-d", "--bundle", hbundle.write(), cid, check=True, timeout=30)
    statedir = os.path.join(hardened.root, cid)
    with open(os.path.join(statedir, "state.json")) as f:
        st = json.load(f)
    c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        c.connect(os.path.join(statedir, "activity.sock"))
        c.sendall(b"W")
        os.kill(st["pid"], signal.SIGKILL)  # the container ends; seerun is not involved
        c.settimeout(20)
        assert c.recv(16) == b""  # closed: the record is written
        assert os.path.exists(os.path.join(statedir, "activity.done"))
        ev = the_activity(hardened, cid)
        assert ev["complete"] is True and ev["record"]["stoppedAt"]
    finally:
        c.close()
    hardened.cmd("delete", "--force", cid, check=True)
    assert len(activity_events(hardened, cid)) == 1


def test_a_wait_for_the_record_that_comes_with_the_containers_end_gets_eof_not_a_reset(
        hardened, hbundle):
    # The request arrives as the init ends (in the same poll, or while the supervisor writes
    # the record): it is answered with EOF once the record is written, never by a reset of
    # the connection (a socket closed with unread data, or a connection never accepted).
    hbundle.args("sleep", "300")
    answered = 0
    for n in range(12):
        cid = hardened.id(f"w{n}")
        hardened.cmd("run", "-d", "--bundle", hbundle.write(), cid, check=True, timeout=30)
        statedir = os.path.join(hardened.root, cid)
        with open(os.path.join(statedir, "state.json")) as f:
            pid = json.load(f)["pid"]
        c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            os.kill(pid, signal.SIGKILL)
            try:
                c.connect(os.path.join(statedir, "activity.sock"))
                c.sendall(b"W")
            except (ConnectionRefusedError, FileNotFoundError, BrokenPipeError):
                continue  # the supervisor had already answered everyone and gone
            c.settimeout(20)
            assert c.recv(16) == b""  # no ConnectionResetError
            assert os.path.exists(os.path.join(statedir, "activity.done"))
            answered += 1
        finally:
            c.close()
            hardened.cmd("delete", "--force", cid, check=True)
    assert answered > 0


def host_storm(stop, processes=True):
    """Until stop is set: threads started and joined, and (processes) short programs run, on
    the host: events of the proc connector that are none of the container's."""
    while not stop.is_set():
        for _ in range(50):
            t = threading.Thread(target=lambda: None)
            t.start()
            t.join()
        if processes:
            subprocess.run(["/bin/true"])


def test_every_exec_is_recorded_while_the_host_runs_other_processes(hardened, hbundle):
    # The supervisor's socket filter drops the events it has no use for in the kernel; none
    # of the container's execs may go with them, whatever else the host runs meanwhile.
    hbundle.shell("i=0; while [ $i -lt 500 ]; do /bin/true; i=$((i+1)); done; echo finished")
    cid = hardened.id()
    stop = threading.Event()
    storms = [threading.Thread(target=host_storm, args=(stop,)) for _ in range(2)]
    for t in storms:
        t.start()
    try:
        r = hardened.cmd("run", "--bundle", hbundle.write(), cid, timeout=300)
    finally:
        stop.set()
        for t in storms:
            t.join()
    assert r.returncode == 0 and "finished" in r.stdout, r.stderr
    progs = the_activity(hardened, cid)["record"]["programs"]
    if not progs.get("eventsLost"):
        assert progs["count"] == 501, progs  # sh and 500 true
    assert progs["count"] == len(progs["listed"]) + progs.get("notListed", 0)


def supervisor_wakes(pid):
    with open(f"/proc/{pid}/status") as f:
        return int([l for l in f if l.startswith("voluntary_ctxt_switches")][0].split()[1])


def idle_container(seerun, bundle):
    """A container that sleeps, and its supervisor's pid."""
    bundle.args("sleep", "300")
    cid = seerun.id()
    seerun.cmd("run", "-d", "--bundle", bundle.write(), cid, check=True, timeout=30)
    with open(os.path.join(seerun.root, cid, "state.json")) as f:
        return cid, json.load(f)["supervisor"]["pid"]


def test_the_hosts_threads_do_not_wake_the_supervisor(hardened, hbundle):
    # A thread's fork and exit are dropped by the kernel: thousands of them on the host wake
    # the supervisor no more than the host's other events do in as long a while.
    cid, sup = idle_container(hardened, hbundle)

    def wakes():
        return supervisor_wakes(sup)
    n = 3000
    before, t0 = wakes(), time.monotonic()
    for _ in range(n):
        t = threading.Thread(target=lambda: None)
        t.start()
        t.join()
    during, spent = wakes() - before, time.monotonic() - t0
    # As long again without the threads: what the rest of the host costs meanwhile.
    before, t0 = wakes(), time.monotonic()
    wait_for(lambda: time.monotonic() - t0 >= spent, timeout=spent + 10, what="as long again",
             interval=0.01)
    idle = wakes() - before
    hardened.cmd("delete", "--force", cid, check=True)
    assert during < idle + n // 10, (during, idle)


def test_the_hosts_processes_do_not_wake_the_supervisor(hardened, hbundle):
    # The container's processes are followed in the kernel (an eBPF filter on the socket,
    # `programs.followed` "kernel"): the host's processes' forks, execs and exits are dropped
    # before they wake the supervisor.  Before, each woke every container's supervisor: a host
    # with many containers paid for each of its processes once per container.
    cid, sup = idle_container(hardened, hbundle)
    n = 400
    before = supervisor_wakes(sup)
    for _ in range(n):
        subprocess.run(["/bin/true"], check=True)
    during = supervisor_wakes(sup) - before
    hardened.cmd("delete", "--force", cid, check=True)
    # Its own flushes (every 2 s) and nothing per host process.
    assert during < n // 10, during
    progs = the_activity(hardened, cid)["record"]["programs"]
    assert progs["followed"] == "kernel", progs
    assert progs["count"] == 1 and progs["listed"][0]["argv"] == "sleep 300", progs


def test_what_exec_starts_is_followed_from_its_fork(hardened, hbundle):
    # `seerun exec` has itself followed before it forks the process that joins the container:
    # that process and its children are the container's from their first instruction, and
    # their programs are counted, even those that end at once.
    hbundle.args("sleep", "300")
    cid = hardened.id()
    hardened.cmd("run", "-d", "--bundle", hbundle.write(), cid, check=True, timeout=30)
    r = hardened.cmd("exec", cid, "sh", "-c",
                     "i=0; while [ $i -lt 50 ]; do /bin/true; i=$((i+1)); done; echo done",
                     timeout=60)
    assert r.returncode == 0 and "done" in r.stdout, r.stderr
    hardened.cmd("delete", "--force", cid, check=True)
    progs = the_activity(hardened, cid)["record"]["programs"]
    argvs = [p["argv"] for p in progs["listed"]]
    assert argvs[0] == "sleep 300", argvs
    assert any(a.startswith("sh -c i=0;") for a in argvs), argvs
    if not progs.get("eventsLost"):
        assert progs["count"] == 52, progs  # sleep, sh and 50 true


def test_an_exec_the_supervisor_could_not_follow_is_counted_and_told(hardened, hbundle):
    # A supervisor that does not answer exec's request to be followed within a second (here:
    # stopped; on a host: starved of CPU): the exec goes on, and what it starts is not in the
    # record.  The record must say so, not read as complete, and exec says so on stderr.
    cid, sup = idle_container(hardened, hbundle)
    try:
        os.kill(sup, signal.SIGSTOP)
        try:
            r = hardened.cmd("exec", cid, "sh", "-c", "/bin/true; echo ran", timeout=60)
        finally:
            os.kill(sup, signal.SIGCONT)
        assert r.returncode == 0 and "ran" in r.stdout, r.stderr
        assert "not followed" in r.stderr and "activity record" in r.stderr, r.stderr
        # An exec the supervisor answers is followed as before, and not counted.
        r = hardened.cmd("exec", cid, "/bin/true", timeout=60)
        assert r.returncode == 0 and r.stderr == "", r.stderr
    finally:
        hardened.cmd("delete", "--force", cid, check=True)
    progs = the_activity(hardened, cid)["record"]["programs"]
    assert progs["followed"] == "kernel", progs
    assert progs["unfollowedExecs"] == 1, progs
    # sleep and the second exec's /bin/true (counted even when it ended before it was read);
    # nothing of the first exec's.
    assert progs["count"] == 2, progs
    argvs = [p["argv"] for p in progs["listed"]]
    assert argvs[0] == "sleep 300" and not any(a.startswith("sh -c") for a in argvs), argvs
    ev = the_activity(hardened, cid)
    assert ev["complete"] is False and "seerun exec" in ev["reason"], ev
    flags = {f["flag"]: f["reason"] for f in review(hardened)[cid]["flags"]}
    assert "not in programs" in flags["incomplete-record"], flags


def test_without_ebpf_the_events_follow_the_processes_exactly(hardened, hbundle, without_bpf):
    # Where the bpf system call is refused, the supervisor follows the processes itself (every
    # process event of the host wakes it): the same exact count, `followed` "events".
    hbundle.shell("i=0; while [ $i -lt 200 ]; do /bin/true; i=$((i+1)); done; echo finished")
    cid = hardened.id()
    stop = threading.Event()
    storm = threading.Thread(target=host_storm, args=(stop,))
    storm.start()
    try:
        r = subprocess.run([without_bpf, SEERUN, *hardened.global_args, "run", "--bundle",
                            hbundle.write(), cid], capture_output=True, text=True, timeout=300,
                           stdin=subprocess.DEVNULL)
    finally:
        stop.set()
        storm.join()
    assert r.returncode == 0 and "finished" in r.stdout, r.stderr
    progs = the_activity(hardened, cid)["record"]["programs"]
    assert progs["followed"] == "events", progs
    if not progs.get("eventsLost"):
        assert progs["count"] == 201, progs  # sh and 200 true


def test_oom_kills_and_pids_limit_hits_are_recorded_and_flagged(hardened, hbundle):
    hbundle.linux["resources"] = {"pids": {"limit": 8},
                                  "memory": {"limit": 32 * 1024 * 1024,
                                             "swap": 32 * 1024 * 1024}}
    # Forks past the pids limit (refused, counted by the cgroup), then a 256 MiB buffer: the
    # OOM killer ends dd.
    hbundle.shell("(for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16; do sleep 30 & done) "
                  "2>/dev/null; kill -9 -1; wait; "
                  "dd if=/dev/zero of=/dev/null bs=256M count=1; echo dd=$?")
    cid = hardened.id()
    r = hardened.cmd("run", "--bundle", hbundle.write(), cid, timeout=120)
    assert "dd=137" in r.stdout, (r.stdout, r.stderr)
    res = the_activity(hardened, cid)["record"]["resources"]
    assert res["oomKills"] >= 1 and res["pidsLimitHits"] >= 1, res
    flags = [f["flag"] for f in review(hardened)[cid]["flags"]]
    assert flags == ["limit-hit"], flags


def test_hostile_names_cannot_break_the_record(hardened, hbundle, probe_dir):
    # An executable and arguments with control bytes, quotes and escapes: kept as printable
    # ASCII, so the audit line stays one valid JSON line.
    name = 'p\x01q"\\\x1b[31m'
    weird = os.path.join(probe_dir, name)
    shutil.copy(os.path.join(probe_dir, "activity_probe"), weird)
    try:
        hbundle.args("/probe/" + name, "mount")
        cid = hardened.id()
        r = hardened.cmd("run", "--bundle", hbundle.write(), cid, timeout=60)
        assert probe_output(r.stdout) == {"mount": EPERM}, (r.stdout, r.stderr)
        ev = the_activity(hardened, cid)  # parsed: the line is valid JSON
        by = ev["record"]["seccomp"]["byExecutable"]
        assert by[0]["executable"] == '/probe/p?q"\\?[31m', by
        argv = ev["record"]["programs"]["listed"][0]["argv"]
        assert argv == '/probe/p?q"\\?[31m mount', argv
    finally:
        os.unlink(weird)
