"""Red team (rt20): the activity record against the code in the container, which tries to do
something the record does not show while it says `complete: true`, or to make it say
something false (docs/audit.md, "activity").  Each test is one attack; the record must show
what was done, or say that it cannot."""
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time

import pytest

from conftest import wait_for, SEERUN
from test_redteam_activity import rt_bundle

HERE = os.path.dirname(os.path.abspath(__file__))
HELPERS = os.path.join(HERE, "helpers")


@pytest.fixture(scope="module")
def rt_dir():
    # Outside the tests' own directories: those hold the state root, a denied bind source.
    d = f"/tmp/sr-redteam-activity2-{os.getpid()}"
    os.makedirs(d, exist_ok=True)
    subprocess.run(["cc", "-static", "-O2", "-o", os.path.join(d, "rt2"),
                    os.path.join(HELPERS, "redteam_activity2.c")], check=True,
                   capture_output=True)
    os.chmod(d, 0o755)
    yield d
    shutil.rmtree(d)


@pytest.fixture
def rbundle(tmp_path, busybox_rootfs, hardened, rt_dir):
    # A root of the test's own: the mount points these tests add (/rt, /data, /s0...) are made
    # in it, not in the shared one (whose tests check that a failed create leaves none).
    own = tmp_path / "own-rootfs"
    shutil.copytree(busybox_rootfs, own, symlinks=True, copy_function=os.link)
    return rt_bundle(tmp_path, own, hardened, rt_dir)


@pytest.fixture
def volume():
    # A host directory the container may write (a volume), outside the tests' own directories.
    d = f"/tmp/sr-redteam-vol-{os.getpid()}-{os.urandom(3).hex()}"
    os.mkdir(d)
    os.chmod(d, 0o777)
    yield d
    shutil.rmtree(d)


def the_activity(seerun, cid):
    ev = [e for e in seerun.audit() if e["event"] == "activity" and e["id"] == cid]
    assert len(ev) == 1, ev
    return ev[0]


def review_of(seerun, cid):
    runs = {x["id"]: x for x in
            json.loads(seerun.cmd("review", "--json", check=True).stdout)["runs"]}
    return runs[cid]


def run(seerun, bundle, cid, timeout=120):
    r = seerun.cmd("run", "--bundle", bundle.write(), cid, timeout=timeout)
    assert r.returncode == 0 and "finished" in r.stdout, (r.stdout, r.stderr)
    return r


def counts(stdout):
    return {a: int(b) for a, b in (l.split() for l in stdout.splitlines() if " " in l)}


# ---- Files: a flood of scratch entries must not hide a write to a host volume -------------

def test_a_scratch_flood_does_not_hide_a_planted_file_in_a_volume(hardened, rbundle, volume):
    # The code fills its scratch tmpfs past the walk's entry bound, then plants a file in a
    # bound host directory: a walk that reaches its bound in /tmp never looks at /data.  The
    # planted file must be in the record (and flagged), or the record must say it is not
    # complete (and review flag that).
    rbundle.config["mounts"].append({"destination": "/data", "type": "bind", "source": volume,
                                     "options": ["rbind", "rw"]})
    rbundle.shell("/rt/rt2 files 210000 /tmp && echo planted > /data/planted && echo finished")
    cid = hardened.id("flood")
    run(hardened, rbundle, cid, timeout=180)
    assert os.path.exists(os.path.join(volume, "planted"))
    ev = the_activity(hardened, cid)
    files = ev["record"]["files"]
    paths = [c["path"] for c in files["changes"]]
    review = review_of(hardened, cid)
    flags = [f["flag"] for f in review["flags"]]
    seen = "/data/planted" in paths and "writes-outside-outputs" in flags
    told = ev["complete"] is False and "incomplete-record" in flags
    # Both, since the host directory is walked before scratch space, and the walk of /tmp hit
    # its bound.
    assert seen and told, (ev["complete"], ev.get("reason"), files["places"], flags)
    assert files["lowerBound"] is True and files["complete"] is False
    tmp = [p for p in files["places"] if p["path"] == "/tmp"][0]
    assert tmp["cut"] == "entries" and tmp["added"] >= 100000, tmp


def test_places_left_out_make_the_record_incomplete(hardened, rbundle, volume):
    # config.json asks for more writable mounts than the record has places for, the host
    # directory last: a file planted there is not seen, and the record must say so.
    for i in range(16):
        rbundle.config["mounts"].append({"destination": f"/s{i}", "type": "tmpfs",
                                         "source": "tmpfs", "options": ["nosuid", "nodev"]})
    rbundle.config["mounts"].append({"destination": "/data", "type": "bind", "source": volume,
                                     "options": ["rbind", "rw"]})
    rbundle.shell("echo planted > /data/planted && echo finished")
    cid = hardened.id("places")
    run(hardened, rbundle, cid)
    assert os.path.exists(os.path.join(volume, "planted"))
    ev = the_activity(hardened, cid)
    files = ev["record"]["files"]
    assert files["placesNotRecorded"] >= 1, files["places"]
    assert "/data/planted" not in [c["path"] for c in files["changes"]]
    assert ev["complete"] is False and "writable place" in ev["reason"], ev
    flags = [f["flag"] for f in review_of(hardened, cid)["flags"]]
    assert "incomplete-record" in flags, flags


# ---- Denied calls interrupted before the supervisor read them ------------------------------

def test_a_denied_call_interrupted_before_it_was_read_is_not_hidden(hardened, rbundle):
    # Many processes keep the supervisor's queue of notifications long; each mount is
    # interrupted by a timer (a handler without SA_RESTART) while it waits in that queue: the
    # kernel takes the notification back and the call fails with EINTR.  One more denied
    # call afterwards, read normally.  Every mount tried must be counted, or the record must
    # say how many denied calls it could not read (and not be complete).
    rbundle.shell("/rt/rt2 eintr 24 400 1 && echo finished")
    cid = hardened.id("eintr")
    r = run(hardened, rbundle, cid)
    tried = counts(r.stdout)
    assert tried["mount"] == 400 and tried["other"] == 0, tried
    assert tried["eintr"] > 0, tried  # the attack worked: some mounts were interrupted
    ev = the_activity(hardened, cid)
    sc = ev["record"]["seccomp"]
    mounts = {s["syscall"]: s["count"] for s in sc["syscalls"]}.get("mount", 0)
    assert mounts >= tried["eperm"]
    unread = sc.get("notRead", 0)
    assert mounts == 400 or (ev["complete"] is False and mounts + unread >= 400), \
        (tried, mounts, unread, ev["complete"], ev.get("reason"))
    if mounts < 400:
        assert "incomplete-record" in [f["flag"] for f in review_of(hardened, cid)["flags"]]


def run_with_supervisor_held(s, bundle, cid, marks, n):
    """create; the supervisor stopped (SIGSTOP) across start until the code has left n marks in
    the host directory marks (bound at /marks): what the code does while the supervisor is
    behind it, made certain instead of raced; then let go, and the container waited for and
    deleted."""
    bundle.config["mounts"].append({"destination": "/marks", "type": "none", "source": marks,
                                    "options": ["bind", "rw"]})
    s.cmd("create", "--bundle", bundle.write(), cid, check=True, timeout=60)
    with open(os.path.join(s.root, cid, "state.json")) as f:
        sup = json.load(f)["supervisor"]["pid"]
    os.kill(sup, signal.SIGSTOP)
    try:
        s.cmd("start", cid, check=True, timeout=60)
        wait_for(lambda: len(os.listdir(marks)) >= n, timeout=60, what=f"{n} marks")
    finally:
        os.kill(sup, signal.SIGCONT)
    wait_for(lambda: s.state(cid)["status"] == "stopped", timeout=60, what="the end")
    s.cmd("delete", cid, check=True)


def listed_programs(s, bundle, marks, name, command, ours, n=40):
    """Runs command (n programs, each marking once it has done its part) with the supervisor
    held; the listed programs ours() picks, which with those not listed (gone before they were
    read, or replaced: the shell that execs the command is one) must make up all n."""
    bundle.shell(command)
    cid = s.id(name)
    run_with_supervisor_held(s, bundle, cid, marks, n)
    progs = the_activity(s, cid)["record"]["programs"]
    mine = [p for p in progs["listed"] if ours(p)]
    assert len(mine) + progs.get("goneBeforeRead", 0) >= n, progs
    return mine


# ---- Programs: the command line as the program ran it ------------------------------------

@pytest.mark.xfail(strict=True, reason=(
    "the command line is read from /proc/<pid>/cmdline after the exec event, i.e. from the "
    "program's own memory once it runs: a program that overwrites its arguments as it starts "
    "is listed with the text it wrote (here \"harmless\"), not the one it was run with; the "
    "proc connector's event carries no arguments and a socket filter cannot read them"))
def test_a_program_cannot_rewrite_its_listed_command_line(hardened, rbundle, volume):
    # Each program overwrites its own arguments (the memory /proc/<pid>/cmdline reads) as it
    # starts, before the supervisor (held) reads its exec event.  The record must list the
    # command line each was run with, or not list it.
    mine = listed_programs(hardened, rbundle, volume, "argv", "/rt/rt2 argvmany 40 /marks",
                           lambda p: p["executable"] == "/rt/rt2" and
                           not p["argv"].startswith("/rt/rt2 argvmany"))
    false = [p for p in mine if p["argv"] != "/rt/rt2 argv --upload-secrets-to-evil"]
    assert false == [], false


# ---- Files: a directory's own mode and owner ---------------------------------------------

def test_a_directorys_mode_and_owner_changes_are_recorded(hardened, rbundle, volume):
    # A directory of the volume that the container's root owns (chowned by the host before
    # the container runs: the container's own ids, from its init's uid_map) and the root of
    # its /tmp: the code makes the one world-writable and setgid and gives the other away.
    # What the host sees changed (a world-writable directory in a host volume) must be in the
    # record, as a file's chmod is.
    sub = os.path.join(volume, "sub")
    os.mkdir(sub, 0o755)
    rbundle.config["mounts"].append({"destination": "/data", "type": "bind", "source": volume,
                                     "options": ["rbind", "rw"]})
    rbundle.shell("chmod 2777 /data/sub && chmod 0700 /tmp && echo finished")
    cid = hardened.id("dirmode")
    hardened.cmd("create", "--bundle", rbundle.write(), cid, check=True)
    with open(f"/proc/{json.loads(hardened.cmd('state', cid, check=True).stdout)['pid']}"
              "/uid_map") as f:
        host_root = int(f.read().split()[1])
    os.chown(sub, host_root, host_root)
    hardened.cmd("start", cid, check=True)
    from conftest import wait_for
    wait_for(lambda: json.loads(hardened.cmd("state", cid, check=True).stdout)["status"]
             == "stopped", what="the container's end")
    hardened.cmd("delete", cid, check=True)
    assert os.stat(sub).st_mode & 0o7777 == 0o2777  # what the host sees
    ev = the_activity(hardened, cid)
    ch = {c["path"]: c["change"] for c in ev["record"]["files"]["changes"]}
    assert ch.get("/data/sub") == "modified", ev["record"]["files"]
    assert ch.get("/tmp") == "modified", ev["record"]["files"]
    flags = review_of(hardened, cid)["flags"]
    assert any(f["flag"] == "writes-outside-outputs" and "/data" in f["reason"]
               for f in flags), flags


@pytest.mark.xfail(strict=True, reason=(
    "the executable is read from /proc/<pid>/exe after the exec event: its path is the file's "
    "name at that moment, so a program that renames its own file as it starts (in a writable "
    "place it may exec from, /tmp) is listed under the new name (here /tmp/harmlessN for "
    "/tmp/evilN); the exec event carries no name, and /proc/<pid>/comm can be rewritten too"))
def test_a_program_cannot_rename_its_listed_executable(hardened, rbundle, volume):
    # Programs run from the code's own scratch space rename their files as they start, before
    # the supervisor (held) reads their exec events: the record must name the program that was
    # run (/tmp/evilN), or not list it.
    mine = listed_programs(hardened, rbundle, volume, "rename",
                           "/rt/rt2 renamemany 40 /tmp /marks",
                           lambda p: p["executable"].startswith("/tmp/"))
    false = [p["executable"] for p in mine if not p["executable"].startswith("/tmp/evil")]
    assert false == [], false


@pytest.mark.xfail(strict=True, reason=(
    "a denied call's executable is /proc/<pid>/exe read when the supervisor gets to the "
    "notification: the path is the file's name then, and another process of the container "
    "can rename the file while the call waits (here the mount is put down to /tmp/harmless, "
    "made by /tmp/evil)"))
def test_a_denied_calls_executable_is_the_callers_not_a_renamed_name(hardened, rbundle,
                                                                     volume):
    # /tmp/evil makes a mount while the supervisor is held; another process renames the file
    # /tmp/harmless while the call waits.  The record must attribute the mount to /tmp/evil.
    rbundle.shell("/rt/rt2 renamecall /tmp /marks")
    cid = hardened.id("rncall")
    run_with_supervisor_held(hardened, rbundle, cid, volume, 1)
    sc = the_activity(hardened, cid)["record"]["seccomp"]
    exes = [e["executable"] for e in sc["byExecutable"] if e["syscall"] == "mount"]
    assert exes == ["/tmp/evil"], sc["byExecutable"]


# ---- Programs: a pid taken by a host process before the exec event was read ---------------

def take_pid(pid, argv, tries=50):
    """A host process running argv with the pid given (free now): the host's next pid set
    through ns_last_pid, as a process that cycles through the pids would get it, made certain
    instead of raced.  Another process of the host may take it first: tried again."""
    for _ in range(tries):
        with open("/proc/sys/kernel/ns_last_pid", "w") as f:
            f.write(str(pid - 1))
        p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, start_new_session=True)
        if p.pid == pid:
            return p
        p.kill()
        p.wait()
    raise AssertionError(f"pid {pid}: another process took it {tries} times")


@pytest.mark.parametrize("followed", ["kernel", "events"])
def test_a_program_whose_pid_a_host_process_took_is_not_listed_as_that_process(
        hardened, rbundle, without_bpf, followed):
    # A program of the container ends (its shell reaps it) while the supervisor is behind
    # (held), and a host process takes its pid before the supervisor reads its exec event.
    # What the supervisor then reads from /proc is the host's process: the record must not
    # list it as the container's program (it may list the program, or count it as gone).
    # Both followers: the eBPF map's, and the events' (no eBPF: its supervisor is made by a
    # create that may not use bpf).
    from test_redteam_activity import in_container
    rbundle.shell("/bin/sleep 299.5; echo finished")
    cid = hardened.id("pidtaken")
    # Not into pipes: the container's init holds create's stdio.
    with tempfile.TemporaryFile("w+") as err:
        r = subprocess.run(([without_bpf] if followed == "events" else []) +
                           [SEERUN, *hardened.global_args, "create", "--bundle",
                            rbundle.write(), cid], stdin=subprocess.DEVNULL,
                           stdout=subprocess.DEVNULL, stderr=err, timeout=60)
        err.seek(0)
        assert r.returncode == 0, err.read()
    with open(os.path.join(hardened.root, cid, "state.json")) as f:
        sup = json.load(f)["supervisor"]["pid"]
    init = hardened.state(cid)["pid"]
    host = None
    os.kill(sup, signal.SIGSTOP)
    try:
        hardened.cmd("start", cid, check=True, timeout=60)
        prog = wait_for(lambda: in_container(init, ["/bin/sleep", "299.5"]), timeout=60,
                        what="the container's program")
        found = time.monotonic()  # its exec was before this
        os.kill(prog, signal.SIGKILL)
        wait_for(lambda: not os.path.exists(f"/proc/{prog}"), timeout=60,
                 what="the program reaped")
        # A start time is known to a clock tick (10 ms): a process that started within the
        # exec's tick cannot be told from the exec's (docs/audit.md).  This one starts two
        # ticks after it at least.
        wait_for(lambda: time.monotonic() > found + 0.02, what="two clock ticks", interval=0.005)
        host = take_pid(prog, ["sleep", "301.25"])
    finally:
        os.kill(sup, signal.SIGCONT)
    try:
        wait_for(lambda: hardened.state(cid)["status"] == "stopped", timeout=60, what="the end")
        hardened.cmd("delete", cid, check=True)
        progs = the_activity(hardened, cid)["record"]["programs"]
    finally:
        if host:
            host.kill()
            host.wait()
    assert progs["followed"] == followed, progs
    hosts = [p for p in progs["listed"] if p["argv"] == "sleep 301.25"]
    assert hosts == [], progs
    mine = [p for p in progs["listed"] if p["argv"] == "/bin/sleep 299.5"]
    assert len(mine) + progs.get("goneBeforeRead", 0) >= 1, progs
