"""Red team (rtaudit): the audit log as an operator reads it afterwards, and `seerun review`
over it, against the code in the container (and config.json).  Each test is one attack: the
code tries to make review miss a flag it should raise, or to make the log lose a line.  The
activity record's own completeness is test_redteam_activity*.py's."""
import ctypes
import json
import os
import re
import shutil
import subprocess

import pytest

from conftest import TOP, static_helpers, wait_for
from test_redteam_activity import rt_bundle

@pytest.fixture(scope="module")
def rt_dir():
    with static_helpers("sr-redteam-audit", {"ra": "redteam_audit.c"}) as d:
        yield d


@pytest.fixture
def rbundle(tmp_path, busybox_rootfs, hardened, rt_dir):
    own = tmp_path / "own-rootfs"
    shutil.copytree(busybox_rootfs, own, symlinks=True, copy_function=os.link)
    return rt_bundle(tmp_path, own, hardened, rt_dir)


def pairs_unique(pairs):
    keys = [k for k, _ in pairs]
    assert len(keys) == len(set(keys)), f"duplicate keys in review's document: {keys}"
    return dict(pairs)


def review_of(seerun, cid):
    # Parsed as a strict reader would (a key given twice is not JSON one can rely on).
    doc = json.loads(seerun.cmd("review", "--json", check=True).stdout,
                     object_pairs_hook=pairs_unique)
    runs = [x for x in doc["runs"] if x["id"] == cid]
    assert len(runs) == 1, doc["runs"]
    return runs[0]


def flags_of(run):
    return {f["flag"]: f["reason"] for f in run["flags"]}


def the_activity(seerun, cid):
    ev = [e for e in seerun.audit() if e["event"] == "activity" and e["id"] == cid]
    assert len(ev) == 1, ev
    return ev[0]


# ---- Denied calls: a privileged one after many ordinary ones -----------------------------

# Review's privileged-syscall names (docs/audit.md, the flag table).
PRIVILEGED = set("""mount umount umount2 move_mount open_tree fsopen fsconfig fsmount fspick
mount_setattr pivot_root unshare setns ptrace process_vm_readv process_vm_writev pidfd_getfd
kcmp bpf perf_event_open userfaultfd keyctl add_key request_key init_module finit_module
delete_module kexec_load kexec_file_load reboot swapon swapoff open_by_handle_at iopl ioperm
io_uring_setup""".split())


def denied_calls(privileged=False):
    """The built-in filter's denied calls (those that review does not call privileged, or
    all), per ABI: what libseccomp knows for the arch less what seccomp_default_syscalls.h
    allows."""
    src = open(os.path.join(TOP, "runtime", "seccomp", "seccomp_default_syscalls.h")).read()
    allowed = set()
    for name in ("SR_SD_ALLOW", "SR_SD_CONDITIONAL", "SR_SD_ENOSYS"):
        body = re.search(r"#define %s\(X\)(.*?)\n(?:\n|/\*)" % name, src, re.S).group(1)
        allowed |= set(re.findall(r"X\((\w+)\)", body))
    lib = ctypes.CDLL("libseccomp.so.2")
    lib.seccomp_syscall_resolve_num_arch.restype = ctypes.c_void_p
    libc = ctypes.CDLL(None)
    libc.free.argtypes = [ctypes.c_void_p]
    calls = []
    for abi, arch in (("64", 0xc000003e), ("32", 0x40000003)):
        for nr in range(1024):
            p = lib.seccomp_syscall_resolve_num_arch(ctypes.c_uint32(arch), nr)
            if not p:
                continue
            name = ctypes.cast(p, ctypes.c_char_p).value.decode()
            libc.free(p)
            if name not in allowed and (privileged or name not in PRIVILEGED):
                calls.append((f"{abi}:{nr}", name))
    return calls


def test_a_privileged_call_after_many_ordinary_ones_is_still_flagged(hardened, rbundle):
    # The code makes a denied call of every ordinary kind it can (both ABIs: the i386 one is
    # another arch, another entry), then one mount through each ABI.  The record counts them
    # all; review must flag the mounts, and count them as one call (its "denied" map is keyed
    # by name: the two arches must not give it the same key twice).
    ordinary = denied_calls()
    assert len(ordinary) > 64, ordinary  # more than review kept
    argv = [c for c, _ in ordinary] + ["64:165", "32:21"]  # mount, x86_64 and i386
    rbundle.args("/rt/ra", *argv)
    cid = hardened.id("many")
    r = hardened.cmd("run", "--bundle", rbundle.write(), cid, timeout=120)
    assert r.returncode == 0 and f"calls {len(argv)}" in r.stdout, (r.stdout, r.stderr)
    ev = the_activity(hardened, cid)
    assert ev["complete"] is True, ev
    sc = ev["record"]["seccomp"]
    mounts = [s for s in sc["syscalls"] if s["syscall"] == "mount"]
    assert sorted(s["arch"] for s in mounts) == ["x86", "x86_64"], sc
    run = review_of(hardened, cid)
    shutil.copy(hardened.audit_log, "/tmp/rtaudit-scratch/log.jsonl")
    assert run["denied"].get("mount") == 2, run["denied"]
    flags = flags_of(run)
    assert "privileged-syscall" in flags and "mount" in flags["privileged-syscall"], run


def test_every_denied_call_is_named_in_the_record(hardened, rbundle):
    # Every kind of denied call, ordinary and privileged, through both ABIs (more kinds than
    # the record had room for), the mount last: the record names each call it counts (no
    # "deniedOtherSyscalls"), the mount too.
    calls = [c for c, _ in denied_calls(privileged=True) if c != "64:165"]
    assert len(calls) > 128, calls
    argv = calls + ["64:165"]
    rbundle.args("/rt/ra", *argv)
    cid = hardened.id("allkinds")
    r = hardened.cmd("run", "--bundle", rbundle.write(), cid, timeout=120)
    assert r.returncode == 0 and f"calls {len(argv)}" in r.stdout, (r.stdout, r.stderr)
    sc = the_activity(hardened, cid)["record"]["seccomp"]
    assert "deniedOtherSyscalls" not in sc, sc
    assert sum(s["count"] for s in sc["syscalls"]) == sc["denied"] == len(argv)
    assert [s["count"] for s in sc["syscalls"] if s["syscall"] == "mount" and
            s["arch"] == "x86_64"] == [1], sc["syscalls"]


# ---- Files: a bound host tmpfs is not the container's scratch space ----------------------

@pytest.fixture
def host_tmpfs():
    # A tmpfs of the host's (as /dev/shm, /run or a tmpfs /tmp are), outside the tests' own
    # directories: what the container writes there outlives it and the host sees it.
    d = f"/tmp/sr-redteam-shm-{os.getpid()}-{os.urandom(3).hex()}"
    os.mkdir(d)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m,mode=0777", "tmpfs", d], check=True)
    try:
        yield d
    finally:
        subprocess.run(["umount", "-l", d], check=True)
        os.rmdir(d)


def test_a_bound_host_tmpfs_is_not_scratch_space(hardened, rbundle, host_tmpfs):
    # config.json binds a host directory that happens to be a tmpfs (the host's /dev/shm, a
    # tmpfs /tmp); the code plants a file in it.  It is a write outside the outputs: review
    # must flag it, not count it as the container's own scratch space.
    rbundle.config["mounts"].append({"destination": "/hostshm", "type": "bind",
                                     "source": host_tmpfs, "options": ["rbind", "rw"]})
    rbundle.shell("echo planted > /hostshm/planted && echo finished")
    cid = hardened.id("shm")
    r = hardened.cmd("run", "--bundle", rbundle.write(), cid, timeout=60)
    assert r.returncode == 0 and "finished" in r.stdout, (r.stdout, r.stderr)
    assert os.path.exists(os.path.join(host_tmpfs, "planted"))  # the host sees it
    files = the_activity(hardened, cid)["record"]["files"]
    place = [p for p in files["places"] if p["path"] == "/hostshm"]
    assert len(place) == 1 and place[0]["added"] == 1, files["places"]
    assert place[0]["role"] == "other", place
    flags = flags_of(review_of(hardened, cid))
    assert "/hostshm" in flags.get("writes-outside-outputs", ""), flags


# ---- The log itself: a line cut short by a full disk must not swallow the next ------------

@pytest.fixture
def small_disk(hardened):
    # A small file system holding the audit log and a volume the container may write (the
    # host's /var/log and a volume on one disk); the hardened seerun's log is moved there.
    d = f"/tmp/sr-redteam-disk-{os.getpid()}-{os.urandom(3).hex()}"
    own_log = hardened.audit_log
    os.mkdir(d)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m,mode=0755", "tmpfs", d], check=True)
    try:
        os.mkdir(os.path.join(d, "audit"), 0o700)
        os.mkdir(os.path.join(d, "vol"))
        os.chmod(os.path.join(d, "vol"), 0o777)
        use_audit_log(hardened, os.path.join(d, "audit", "audit.jsonl"))
        yield d
    finally:
        # Its deletes write to the log here: before it goes, and to the test's own after.
        hardened.cleanup()
        use_audit_log(hardened, own_log)
        subprocess.run(["umount", "-l", d], check=True)
        os.rmdir(d)


def use_audit_log(seerun, path):
    with open(seerun.policy) as f:
        policy = json.load(f)
    policy["auditLog"] = path
    with open(seerun.policy, "w") as f:
        json.dump(policy, f)
    seerun.audit_log = path


def fill_the_disk(bundle, disk):
    # A mount tried, programs with long command lines (a large activity line), then the disk
    # filled through the volume before the container ends.
    bundle.config["mounts"].append({"destination": "/vol", "type": "bind",
                                    "source": os.path.join(disk, "vol"),
                                    "options": ["rbind", "rw"]})
    long_arg = "A" * 200
    bundle.shell(f"i=0; while [ $i -lt 64 ]; do /rt/ra 64:165 {long_arg}; i=$((i+1)); done; "
                 "dd if=/dev/zero of=/vol/fill bs=4096 2>/dev/null; echo finished")
    return bundle


def test_a_line_cut_by_a_full_disk_does_not_swallow_the_next(hardened, rbundle, small_disk):
    # The code fills the disk the audit log is on before it ends: the supervisor's activity
    # line is cut where the disk was full (the write is short: the kernel writes what fits in
    # the file's last page).  Once the operator has made room, `delete` writes its line and
    # the record again (incomplete: its supervisor never finished).  Each must be a line of its
    # own, not the tail of the cut one: a lost delete makes the next run of the same id the
    # same run to review, whose record replaces this one's (and its flags with it).
    fill_the_disk(rbundle, small_disk)
    cid = hardened.id("full")
    hardened.cmd("create", "--bundle", rbundle.write(), cid, check=True, timeout=60)
    hardened.cmd("start", cid, check=True, timeout=60)
    wait_for(lambda: hardened.state(cid)["status"] == "stopped", timeout=60,
             what="the container's end")
    # Its supervisor has written what it could and gone.
    sup = json.load(open(os.path.join(hardened.root, cid, "state.json")))["supervisor"]["pid"]
    wait_for(lambda: not os.path.exists(f"/proc/{sup}") or
             open(f"/proc/{sup}/stat").read().rsplit(")", 1)[1].split()[0] == "Z",
             timeout=60, what="the supervisor's end")
    with open(hardened.audit_log, "rb") as f:
        log = f.read()
    assert not log.endswith(b"\n"), log[-200:]  # the activity line was cut
    os.unlink(os.path.join(small_disk, "vol", "fill"))  # room again
    hardened.cmd("delete", "--force", cid, check=True)
    # The id again, for a quiet run (an engine's name, a sandbox's slot): a run of its own.
    rbundle.args("true")
    r = hardened.cmd("run", "--bundle", rbundle.write(), cid, timeout=60)
    assert r.returncode == 0, r.stderr
    doc = json.loads(hardened.cmd("review", "--json", check=True).stdout)
    runs = [x for x in doc["runs"] if x["id"] == cid]
    assert len(runs) == 2, runs  # the first one's delete was not lost
    first = flags_of(runs[0])
    assert "mount" in first.get("privileged-syscall", ""), runs[0]
    assert "incomplete-record" in first, runs[0]
    assert runs[1]["flags"] == [], runs[1]


def test_a_record_the_full_log_did_not_take_is_flagged(hardened, rbundle, small_disk):
    # The same full disk, under `run`: the supervisor's record is cut, and nothing writes it
    # again before `run` removes the container (the disk is still full; its exit line may be
    # kept out too).  The record is gone: review must say so for a run whose profile keeps
    # one, not show it as a run with nothing to flag.
    fill_the_disk(rbundle, small_disk)
    cid = hardened.id("fullrun")
    r = hardened.cmd("run", "--bundle", rbundle.write(), cid, timeout=120)
    assert "finished" in r.stdout, (r.stdout, r.stderr)
    os.unlink(os.path.join(small_disk, "vol", "fill"))
    hardened.cmd("delete", "--force", cid, check=True)
    run = review_of(hardened, cid)
    assert run["activityRecord"] is False, run  # the record did not reach the log
    assert "incomplete-record" in flags_of(run), run


# ---- Runs: an id used again is another run ------------------------------------------------

def test_a_quiet_run_of_the_same_id_does_not_take_the_first_ones_flags(hardened, rbundle):
    # `run` removes its container itself, with no delete line: the code tries a mount, and the
    # next `run` of the same id (an engine's name used again) is quiet.  Review must show two
    # runs, the first one flagged, not one run whose record is the quiet one's.
    rbundle.args("/rt/ra", "64:165")
    cid = hardened.id("again")
    r = hardened.cmd("run", "--bundle", rbundle.write(), cid, timeout=60)
    assert r.returncode == 0 and "calls 1" in r.stdout, (r.stdout, r.stderr)
    rbundle.args("true")
    r = hardened.cmd("run", "--bundle", rbundle.write(), cid, timeout=60)
    assert r.returncode == 0, r.stderr
    doc = json.loads(hardened.cmd("review", "--json", check=True).stdout)
    runs = [x for x in doc["runs"] if x["id"] == cid]
    assert len(runs) == 2, runs
    assert "mount" in flags_of(runs[0]).get("privileged-syscall", ""), runs[0]
    assert runs[1]["flags"] == [], runs[1]


def test_a_sandbox_slot_used_again_is_another_run(sandbox, hardened, rt_dir):
    # A sandbox's id is a slot, used again by the next run (here its --name): the code of the
    # first run tries a mount, the second is quiet.  Each run has its runId: review must keep
    # them apart.
    r = sandbox.run("/rt/ra", "64:165", opts=("--ro", f"{rt_dir}:/rt"))
    assert r.returncode == 0 and "calls 1" in r.stdout, (r.stdout, r.stderr)
    sandbox.ok("true")
    cid = hardened.id("sb")
    doc = json.loads(hardened.cmd("review", "--json", check=True).stdout)
    runs = [x for x in doc["runs"] if x["id"] == cid]
    assert len(runs) == 2, runs
    assert "mount" in flags_of(runs[0]).get("privileged-syscall", ""), runs[0]
    assert runs[1]["flags"] == [], runs[1]
