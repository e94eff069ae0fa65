"""Red team (issue 19): the activity record's list of programs against a hostile container.

The container's processes are followed in the kernel (activity_exec_bpf.c): each attack here
starts programs in a way that a follower of the container's processes could miss, and asserts
that the record still counts them (exactly, unless it says that events were lost)."""
import ctypes
import json
import os
import signal
import subprocess
import sys

import pytest

from conftest import Bundle, wait_for, SEERUN

HERE = os.path.dirname(os.path.abspath(__file__))
HELPERS = os.path.join(HERE, "helpers")
sys.path.insert(0, HELPERS)
import bpfmap  # noqa: E402


@pytest.fixture(scope="module")
def rt_dir():
    # Outside the tests' own directories: those hold the state root, a denied bind source.
    d = f"/tmp/sr-redteam-activity-{os.getpid()}"
    os.makedirs(d, exist_ok=True)
    subprocess.run(["cc", "-static", "-O2", "-pthread", "-o", os.path.join(d, "rt"),
                    os.path.join(HELPERS, "redteam_threads.c")], check=True, capture_output=True)
    os.chmod(d, 0o755)
    yield d
    os.unlink(os.path.join(d, "rt"))
    os.rmdir(d)


def rt_bundle(tmp_path, rootfs, seerun, rt_dir):
    """A bundle on rootfs with the red team's helpers at /rt, read-only."""
    path = tmp_path / "bundle"
    path.mkdir()
    b = Bundle(path, rootfs, seerun)
    b.config["mounts"].append({"destination": "/rt", "type": "none", "source": rt_dir,
                               "options": ["bind", "ro"]})
    return b


@pytest.fixture
def rbundle(tmp_path, busybox_rootfs, hardened, rt_dir):
    return rt_bundle(tmp_path, busybox_rootfs, hardened, rt_dir)


def programs(seerun, cid):
    ev = [e for e in seerun.audit() if e["event"] == "activity" and e["id"] == cid]
    assert len(ev) == 1, ev
    progs = ev[0]["record"]["programs"]
    assert progs["followed"] == "kernel", progs  # the attacks are on the kernel's follower
    return progs


def run(seerun, bundle, cid):
    r = seerun.cmd("run", "--bundle", bundle.write(), cid, timeout=120)
    assert r.returncode == 0 and "finished" in r.stdout, (r.stdout, r.stderr)
    return programs(seerun, cid)


def argvs(progs):
    return [p["argv"] for p in progs["listed"]]


def ran(progs, cmd):
    # `sh -c CMD` execs its last command itself: "/bin/sleep 1.01" or "sleep 1.01".
    return any(a == cmd or a == "/bin/" + cmd for a in argvs(progs))


# Programs that live long enough to be read (listed with their command lines).
CHILD = "/bin/sleep 1.01"
THREAD = "/bin/sleep 1.02"


def test_a_thread_group_whose_leader_exited_is_still_followed(hardened, rbundle):
    # The main thread exits alone (SYS_exit): the group lives on in its second thread, which
    # forks a child and then execs itself.  Both programs are the container's.
    rbundle.shell(f"/rt/rt leaderexit '{CHILD}' '{THREAD}'; echo finished")
    cid = hardened.id()
    progs = run(hardened, rbundle, cid)
    a = argvs(progs)
    assert ran(progs, "sleep 1.01"), a  # the child of the leaderless group
    assert ran(progs, "sleep 1.02"), a  # the non-leader thread's own exec
    if not progs.get("eventsLost"):
        # sh, rt, the child's sh and sleep, the thread's sh and sleep
        assert progs["count"] == 6, progs


def test_an_init_whose_leader_exited_does_not_hide_the_container(hardened, rbundle):
    # The same, as the container's init: had its entry gone with its leader, nothing the
    # container ran afterwards would be seen.
    rbundle.args("/rt/rt", "leaderexit", f"{CHILD}; /bin/sleep 1.03", f"{THREAD}; echo finished")
    cid = hardened.id()
    progs = run(hardened, rbundle, cid)
    a = argvs(progs)
    for want in ("sleep 1.01", "sleep 1.02", "sleep 1.03"):
        assert ran(progs, want), (want, a)


def test_a_leaderless_groups_short_programs_are_counted(hardened, rbundle):
    # The thread's child runs no program itself: it is the container's by its fork alone, and
    # so are the 100 short programs it starts.
    rbundle.shell("/rt/rt leaderfork 100; echo finished")
    cid = hardened.id()
    progs = run(hardened, rbundle, cid)
    if not progs.get("eventsLost"):
        assert progs["count"] == 102, progs  # sh, rt and the 100 true


def test_a_clone_parent_child_is_followed(hardened, rbundle):
    # CLONE_PARENT: the child's parent is the caller's parent (the fork event names that one).
    rbundle.shell(f"/rt/rt cloneparent '{CHILD}'; sleep 1.5; echo finished")
    cid = hardened.id()
    progs = run(hardened, rbundle, cid)
    assert ran(progs, "sleep 1.01"), argvs(progs)


def in_container(init, argv):
    ns = os.stat(f"/proc/{init}/ns/pid").st_ino
    for e in os.listdir("/proc"):
        try:
            if not e.isdigit() or os.stat(f"/proc/{e}/ns/pid").st_ino != ns:
                continue
            with open(f"/proc/{e}/cmdline", "rb") as f:
                if f.read().split(b"\0")[:-1] == [a.encode() for a in argv]:
                    return int(e)
        except OSError:
            pass
    return None


def named(init, comm):
    ns = os.stat(f"/proc/{init}/ns/pid").st_ino
    for e in os.listdir("/proc"):
        try:
            if e.isdigit() and os.stat(f"/proc/{e}/ns/pid").st_ino == ns:
                with open(f"/proc/{e}/comm") as f:
                    if f.read().strip() == comm:
                        return int(e)
        except OSError:
            pass
    return None


def reap_orphans():
    # Our children that have ended and that subprocess does not wait for: the orphans we took
    # as their subreaper (the container's init among them, once it has ended).
    for e in os.listdir("/proc"):
        try:
            with open(f"/proc/{e}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            if e.isdigit() and int(fields[1]) == os.getpid() and fields[0] == "Z":
                os.waitpid(int(e), 0)
        except (OSError, ChildProcessError):
            pass


@pytest.fixture
def subreaper():
    # The orphans of `seerun exec` come to us, not to the host's init (which may reap them
    # late: the container's init waits for its pid namespace's last zombie), as they would to
    # a container engine's shim.
    libc = ctypes.CDLL(None, use_errno=True)
    assert libc.prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
    try:
        yield
    finally:
        reap_orphans()
        libc.prctl(36, 0, 0, 0, 0)


@pytest.mark.parametrize("mode, detach", [("orphancp", True), ("orphancp2", False)])
def test_a_clone_parent_child_of_an_exec_orphan_is_followed(hardened, rbundle, subreaper, mode,
                                                            detach):
    # What `seerun exec` starts is its caller's child (CLONE_PARENT): once that caller has
    # gone, the orphan's parent is a process of the host (its init, or a subreaper: here the
    # test), and a CLONE_PARENT child of the orphan is that host process's child.  It is still
    # made by one of the container's, and its programs are the container's.
    rbundle.args("sleep", "300")
    cid = hardened.id()
    hardened.cmd("run", "-d", "--bundle", rbundle.write(), cid, check=True, timeout=30)
    try:
        init = hardened.state(cid)["pid"]
        hardened.cmd("exec", *(["--detach"] if detach else []), cid, "/rt/rt", mode,
                     "/bin/sleep 1.04; /bin/sleep 1.05", check=True, timeout=30)
        # `seerun exec` has returned: its caller has gone, the orphans are ours.
        waiting = wait_for(lambda: named(init, "rt-waiting"), timeout=20, what="the orphan")
        os.kill(waiting, signal.SIGUSR1)
        hidden = wait_for(lambda: in_container(init, ["/bin/sleep", "1.05"]), timeout=20,
                          what="the CLONE_PARENT child's second program")
        os.waitpid(hidden, 0)  # ours (the subreaper's), once it has ended
        reap_orphans()
    finally:
        hardened.cmd("delete", "--force", cid, check=True)
        reap_orphans()
    progs = programs(hardened, cid)
    a = argvs(progs)
    assert "/bin/sleep 1.04" in a and "/bin/sleep 1.05" in a, progs  # all of it, pids too


def test_a_program_run_from_a_memfd_is_listed(hardened, rbundle):
    rbundle.shell(f"/rt/rt memfd '{CHILD}; echo finished'")
    cid = hardened.id()
    progs = run(hardened, rbundle, cid)
    assert ran(progs, "sleep 1.01"), argvs(progs)
    memfd = [p for p in progs["listed"] if p["argv"].startswith("sh -c /bin/sleep 1.01")]
    assert memfd and "memfd:hidden" in memfd[0]["executable"], progs["listed"]


def supervisor_of(seerun, cid):
    with open(os.path.join(seerun.root, cid, "state.json")) as f:
        return json.load(f)["supervisor"]["pid"]


def container_procs(init):
    # By their pid namespace (cgroup v1 or v2 alike).
    ns = os.stat(f"/proc/{init}/ns/pid").st_ino
    procs = []
    for e in os.listdir("/proc"):
        try:
            if e.isdigit() and os.stat(f"/proc/{e}/ns/pid").st_ino == ns:
                procs.append(int(e))
        except OSError:
            pass
    # Tasks, as the kernel counts them for the map (a zombie leader's group still counts its
    # live threads only: /proc lists the zombie too).
    tasks = {}
    for p in procs:
        n = 0
        try:
            task_ids = os.listdir(f"/proc/{p}/task")
        except OSError:
            continue  # ended since /proc was listed (the test waits until the set settles)
        for t in task_ids:
            try:
                with open(f"/proc/{p}/task/{t}/stat") as f:
                    state = f.read().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            n += state not in ("Z", "X")
        tasks[p] = n
    return tasks


def test_the_map_holds_exactly_the_containers_live_processes(hardened, rbundle):
    # After threads came and went, a leader exited alone and a non-leader exec'd: every live
    # process of the container is followed, with its live tasks counted, and nothing else
    # (an entry left behind would follow a host process that reuses its pid).
    rbundle.shell("/rt/rt leaderexit /bin/true '/rt/rt threads 3' & "
                  "/rt/rt leaderexit /bin/true 'sleep 300' & "
                  "/rt/rt threadexec 'sleep 301' & "
                  "/rt/rt threads 5 & /rt/rt cloneparent 'sleep 300'; sleep 300")
    cid = hardened.id()
    hardened.cmd("run", "-d", "--bundle", rbundle.write(), cid, check=True, timeout=30)
    init = hardened.state(cid)["pid"]
    sup = supervisor_of(hardened, cid)
    try:
        def settled():
            procs = container_procs(init)
            # sh, the two sleep 300 (one the leaderless group's exec), rt threads 5 and the
            # leaderless rt threads 3, the CLONE_PARENT child's sleep, and sleep 301 (a
            # second thread's exec while its leader lived)
            return len(procs) == 6 and sorted(procs.values()) == [1, 1, 1, 1, 4, 6] and procs
        procs = wait_for(settled, timeout=20, what="the container's processes")
        assert bpfmap.followed(sup) == procs
    finally:
        hardened.cmd("delete", "--force", cid)


def test_a_program_that_execs_at_once_is_not_listed_as_the_next_one(hardened, rbundle):
    # The record reads a program's executable and command line from /proc when it handles
    # the exec's event: a program that at once execs another would be listed as that other
    # one (twice), its own name nowhere.  It must be listed as itself, or not at all (counted,
    # as a program gone before it could be read).
    # 30 of each: all within the 64 listed.
    rbundle.shell("i=0; while [ $i -lt 30 ]; do /rt/rt reexec /bin/sleep 0.01; i=$((i+1)); done;"
                  " echo finished")
    cid = hardened.id()
    progs = run(hardened, rbundle, cid)
    listed = progs["listed"]
    assert len(listed) + progs.get("goneBeforeRead", 0) == 61, progs
    shown = [(p["executable"], p["argv"]) for p in listed]
    disguised = [p for p in listed
                 if p["argv"] == "/bin/sleep 0.01" and p["executable"] == "/bin/busybox"]
    assert len(disguised) <= 30, shown  # more sleeps listed than ran: rt listed as sleep
    if not progs.get("eventsLost"):
        assert progs["count"] == 61, progs  # sh, 30 rt, 30 sleep


def test_without_ebpf_a_leaderless_groups_children_are_counted(hardened, rbundle, without_bpf):
    # The events' follower (no eBPF) forgets a process when its leader exits: the children of
    # its remaining threads are then told by their pid namespace only, which misses those that
    # have ended before the supervisor looks.  The count must stay exact (or say eventsLost).
    # The thread's child runs no program: it is known by nothing but its fork, and so are the
    # 100 short programs it starts.
    rbundle.shell("/rt/rt leaderfork 100; echo finished")
    cid = hardened.id()
    r = subprocess.run([without_bpf, SEERUN, *hardened.global_args, "run", "--bundle",
                        rbundle.write(), cid], capture_output=True, text=True, timeout=120,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 0 and "finished" in r.stdout, (r.stdout, r.stderr)
    ev = [e for e in hardened.audit() if e["event"] == "activity" and e["id"] == cid]
    progs = ev[0]["record"]["programs"]
    assert progs["followed"] == "events", progs
    if not progs.get("eventsLost"):
        # sh, rt and the 100 true
        assert progs["count"] == 102, progs


def test_a_host_process_exec_as_the_supervisor_starts_is_not_the_containers(hardened, rbundle,
                                                                            tmp_path,
                                                                            busybox_rootfs):
    # The supervisor's socket joins the proc connector's group, and from then on gets every
    # event the kernel sends to the group (which it does while any listener is subscribed:
    # here another container's supervisor).  Events queued before its own filter is on are
    # not the container's: a host program exec'd then must not be in the record.  The host
    # runs a program in a loop meanwhile, which makes that moment likely to hold one.
    os.mkdir(tmp_path / "other")
    other = Bundle(tmp_path / "other", busybox_rootfs, hardened)
    other.args("sleep", "300")
    oid = hardened.id("listener")
    hardened.cmd("run", "-d", "--bundle", other.write(), oid, check=True, timeout=30)
    loop = subprocess.Popen(["sh", "-c", "while :; do /bin/true srt-host-marker; done"],
                            stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        rbundle.shell("echo finished")
        for i in range(8):
            cid = hardened.id(f"c{i}")
            progs = run(hardened, rbundle, cid)
            host = [p for p in progs["listed"] if "srt-host-marker" in p["argv"]]
            assert host == [] and progs["count"] == 1, progs
    finally:
        os.killpg(loop.pid, signal.SIGKILL)
        loop.wait()
        hardened.cmd("delete", "--force", oid, check=True)
