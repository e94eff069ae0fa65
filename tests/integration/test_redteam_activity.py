"""Red team (issue 19): the activity record's list of programs against a hostile container.

The container's processes are followed in the kernel (activity_exec_bpf.c): each attack here
starts programs in a way that a follower of the container's processes could miss, and asserts
that the record still counts them (exactly, unless it says that events were lost)."""
import os
import subprocess

import pytest

from conftest import Bundle

HERE = os.path.dirname(os.path.abspath(__file__))
HELPERS = os.path.join(HERE, "helpers")


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


@pytest.fixture
def rbundle(tmp_path, busybox_rootfs, hardened, rt_dir):
    path = tmp_path / "bundle"
    path.mkdir()
    b = Bundle(path, busybox_rootfs, hardened)
    b.config["mounts"].append({"destination": "/rt", "type": "none", "source": rt_dir,
                               "options": ["bind", "ro"]})
    return b


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


def test_a_clone_parent_child_is_followed(hardened, rbundle):
    # CLONE_PARENT: the child's parent is the caller's parent (the fork event names that one).
    rbundle.shell(f"/rt/rt cloneparent '{CHILD}'; sleep 1.5; echo finished")
    cid = hardened.id()
    progs = run(hardened, rbundle, cid)
    assert ran(progs, "sleep 1.01"), argvs(progs)


def test_a_program_run_from_a_memfd_is_listed(hardened, rbundle):
    rbundle.shell(f"/rt/rt memfd '{CHILD}; echo finished'")
    cid = hardened.id()
    progs = run(hardened, rbundle, cid)
    assert ran(progs, "sleep 1.01"), argvs(progs)
    memfd = [p for p in progs["listed"] if p["argv"].startswith("sh -c /bin/sleep 1.01")]
    assert memfd and "memfd:hidden" in memfd[0]["executable"], progs["listed"]
