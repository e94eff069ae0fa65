"""Robustness: nothing lost and nothing left behind when seerun itself is killed at any step,
when a container's record is damaged, when its bundle goes away, when the state filesystem is
full, and when commands race.

* Kill points: a test-only build of seerun (./configure --enable-kill-points, given to these
  tests as SEERUN_KILLPOINT_BINARY; contrib/test.sh builds it in build-kp) kills itself with
  SIGKILL at the step named by SEERUN_KILL_POINT (runtime/linux/killpoint.h).  The names are read
  from the sources, and every one is tested: create, exec, delete or run is killed there (or
  its intermediate, init or exec process is); then `state` and `list` agree and tell the truth
  (a half-made container reads "stopped" with pid 0, never "created" or "running" unless it
  really can start or runs), `delete --force` exits 0 and leaves no process (in the cgroup or
  still carrying the test's environment), cgroup, mount or state entry, and the id can be
  created again.  Without the binary these tests skip, saying why.
* Random-timing kills of create, with the regular binary.
* A damaged record (corrupt, truncated, empty or missing state.json; recovery.json gone too):
  the other containers are listed, that one's error names the file, and `delete --force`
  still kills its process and removes its cgroup and directory (statedir.h: recovery.json).
* The bundle removed while the container runs; a full state filesystem (ENOSPC at every write
  of create, by blocks and by inodes); parallel creates of one id; 100 parallel
  create/start/delete; delete --force racing start; kill racing the process's own exit.
"""
import glob
import json
import os
import random
import re
import shutil
import subprocess
import threading
import time

import pytest

import conftest
from conftest import CGROUP_ROOT, TOP, Seerun, alive, wait_for

KP_BINARY = os.environ.get("SEERUN_KILLPOINT_BINARY")
needs_kill_points = pytest.mark.skipif(
    not KP_BINARY or not os.access(KP_BINARY, os.X_OK),
    reason="SEERUN_KILLPOINT_BINARY is not set to a seerun built with "
           "`configure --enable-kill-points` (contrib/test.sh builds one in build-kp)")


# --- helpers ----------------------------------------------------------------------------------

def kill_point_names():
    """Every SR_KILL_POINT("name") in the sources: the tests follow the code."""
    names = set()
    for f in sorted(glob.glob(os.path.join(TOP, "runtime", "*", "*.c"))):
        with open(f) as fh:
            names.update(re.findall(r'SR_KILL_POINT\("([^"]+)"\)', fh.read()))
    return sorted(names)


KILL_POINTS = kill_point_names()


def reap_orphans(keep=()):
    """The test run is the subreaper of what a killed runtime leaves (and of a killed exec's
    process: the init of a pid namespace cannot finish dying while a zombie of that namespace
    waits for its parent outside to reap it).  Children in keep are left to their Popen."""
    me = str(os.getpid())
    for pid in filter(str.isdigit, os.listdir("/proc")):
        if int(pid) in keep:
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] == "Z" and fields[1] == me:
            try:
                os.waitpid(int(pid), os.WNOHANG)
            except ChildProcessError:
                pass


def cmd_reaping(seerun, *args, env=None, timeout=60):
    """seerun.cmd, reaping orphans meanwhile (see reap_orphans)."""
    with open(os.devnull, "rb") as null:
        p = subprocess.Popen([conftest.SEERUN, *seerun.global_args, *args], stdin=null,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    deadline = time.monotonic() + timeout
    while p.poll() is None:
        reap_orphans(keep=(p.pid,))
        assert time.monotonic() < deadline, f"seerun {args} timed out"
        time.sleep(0.01)
    out, err = p.communicate()
    return subprocess.CompletedProcess(p.args, p.returncode, out, err)


def cgroups_of(cid):
    found = []
    for hier in os.listdir(CGROUP_ROOT):
        base = os.path.join(CGROUP_ROOT, hier)
        if os.path.isdir(os.path.join(base, cid)):
            found.append(os.path.join(base, cid))
    return found


def processes_in_cgroup(cid):
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cgroup") as f:
                if re.search(rf"/{re.escape(cid)}$", f.read(), re.M) and alive(pid):
                    found.append(pid)
        except OSError:
            pass
    return found


def processes_with_token(token):
    """Live processes whose environment carries the token: seerun's own processes (the
    runtime, its intermediate, an init or exec process that has not exec'd yet)."""
    needle = f"SEERUN_TEST_TOKEN={token}".encode() + b"\0"
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        if int(pid) == os.getpid():
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                if needle in f.read() and alive(pid):
                    found.append(pid)
        except OSError:
            pass
    return found


def state_entries(seerun):
    if not os.path.isdir(seerun.root):
        return []
    return sorted(e for e in os.listdir(seerun.root) if e not in (".seccomp-cache", ".index"))


def index_entries(seerun):
    """The containers' indexes (statedir.h), outside their directories."""
    index = os.path.join(seerun.root, ".index")
    return sorted(os.listdir(index)) if os.path.isdir(index) else []


def assert_nothing_left(seerun, cid, token=None):
    """What delete --force must leave: no state entry (temporaries included), no cgroup, no
    live process in the container's cgroup or with the test's environment."""
    deadline = time.monotonic() + 5
    while True:
        reap_orphans()
        leaks = []
        if state_entries(seerun):
            leaks.append(f"state entries: {state_entries(seerun)}")
        if cid in index_entries(seerun):
            leaks.append(f"index entry .index/{cid}")
        leaks += [f"cgroup {c}" for c in cgroups_of(cid)]
        leaks += [f"process {p} in the cgroup" for p in processes_in_cgroup(cid)]
        if token:
            leaks += [f"process {p} of the killed command" for p in processes_with_token(token)]
        # Only processes may need a moment (the kernel finishing a SIGKILL): never state.
        if not leaks or time.monotonic() > deadline or any("process" not in x for x in leaks):
            break
        time.sleep(0.05)
    assert not leaks, f"left after delete --force of {cid}: {leaks}"


def listed(seerun):
    r = seerun.cmd("list", "--format", "json")
    assert r.returncode == 0, r.stderr
    return {e["id"]: e for e in json.loads(r.stdout or "[]")}, r.stderr


def observed(seerun, cid):
    """(status, pid) from `state`, None if it says the container does not exist; checked
    against `list`, which must agree."""
    r = seerun.cmd("state", cid)
    entries, _ = listed(seerun)
    if r.returncode != 0:
        assert "does not exist" in r.stderr, r.stderr
        assert cid not in entries
        return None
    st = json.loads(r.stdout)
    assert cid in entries, (st, entries)
    assert (entries[cid]["status"], entries[cid]["pid"]) == (st["status"], st["pid"])
    return st["status"], st["pid"]


def assert_truthful(seerun, cid, expected):
    """The container's status after the kill: `expected` is "absent", "stopped", "created" or
    "running", and what it claims must hold (a pid that lives, a start that works, a start
    that is refused)."""
    got = observed(seerun, cid)
    if expected == "absent":
        assert got is None, got
        return
    assert got is not None, f"{cid}: expected {expected}, state says it does not exist"
    status, pid = got
    assert status == expected, (status, pid)
    if status == "stopped":
        assert pid == 0
        r = seerun.cmd("start", cid)
        assert r.returncode != 0, r.stdout
    else:
        assert pid > 0 and alive(pid), (status, pid)
    if status == "created":
        seerun.cmd("start", cid, check=True)
        assert observed(seerun, cid)[0] in ("running", "stopped")


def killed_env(point, token):
    env = dict(os.environ, SEERUN_TEST_TOKEN=token)
    if point:
        env["SEERUN_KILL_POINT"] = point
    return env


def add_userns(config):
    config["linux"]["namespaces"].append({"type": "user"})
    config["linux"]["uidMappings"] = [{"containerID": 0, "hostID": 300000, "size": 65536}]
    config["linux"]["gidMappings"] = [{"containerID": 0, "hostID": 300000, "size": 65536}]


def two_step(config):
    """A new user namespace and time offsets: the intermediate process path."""
    add_userns(config)
    config["linux"]["namespaces"].append({"type": "time"})
    config["linux"]["timeOffsets"] = {"boottime": {"secs": 86400}}


@pytest.fixture
def kp(seerun, monkeypatch):
    """The seerun fixture, run through the kill-point build."""
    monkeypatch.setattr(conftest, "SEERUN", KP_BINARY)
    return seerun


def runs_again(seerun, bundle, cid):
    """The id is free and whole again: create, start, run, delete."""
    bundle_path = bundle.args("sleep", "30").write()
    seerun.cmd("create", "--bundle", bundle_path, cid, check=True)
    seerun.cmd("start", cid, check=True)
    assert observed(seerun, cid)[0] == "running"
    seerun.cmd("delete", "--force", cid, check=True)
    assert_nothing_left(seerun, cid)


# --- kill points ------------------------------------------------------------------------------

def test_the_sources_have_kill_points_at_every_step_the_issue_names():
    required = {"create.before-publish", "create.after-publish", "create.after-cgroup",
                "create.after-resources", "create.after-clone", "create.after-maps",
                "create.after-init-pid", "init.after-mounts", "init.before-ready",
                "create.after-pid-file", "create.after-created", "exec.after-clone",
                "delete.after-kill", "delete.after-cgroup", "delete.before-remove-dir"}
    assert required <= set(KILL_POINTS), required - set(KILL_POINTS)
    for name in KILL_POINTS:
        assert re.fullmatch(r"(create|intermediate|init|exec|exec-intermediate|exec-process|"
                            r"delete|run)\.[a-z-]+", name), name


def test_the_regular_build_has_no_kill_points(seerun, bundle):
    """SEERUN_KILL_POINT means nothing to a production build."""
    cid = seerun.id()
    path = bundle.args("sleep", "30").write()
    for point in ("create.after-cgroup", "init.after-mounts", "create.after-created"):
        r = seerun.cmd("create", "--bundle", path, cid, env=killed_env(point, cid))
        assert r.returncode == 0, r.stderr
        seerun.cmd("delete", "--force", cid, check=True)


# Points that only the two-step path (intermediate process) reaches.
TWO_STEP_ONLY = {"create.after-maps", "create.after-intermediate"}


def create_points(path):
    pts = [p for p in KILL_POINTS if p.split(".")[0] in ("create", "intermediate", "init")]
    if path == "fast":
        pts = [p for p in pts if not p.startswith("intermediate.") and p not in TWO_STEP_ONLY]
    return pts


def expected_after_create_kill(point):
    if point == "create.before-publish":
        return "absent"      # nothing published; the temporary is swept
    if point == "create.after-created":
        return "created"     # killed after its last step: the container is whole
    if point == "init.after-ready":
        return "stopped"     # create succeeded, then its init died
    if point.startswith(("init.", "intermediate.")):
        return "absent"      # create saw its child die, and removed everything
    return "stopped"         # a half-made container: reported, never startable


@needs_kill_points
@pytest.mark.parametrize("path,point",
                         [("fast", p) for p in create_points("fast")] +
                         [("two-step", p) for p in create_points("two-step")])
def test_create_killed_at_a_kill_point_is_reported_truthfully_and_removed(kp, bundle, tmp_path,
                                                                          path, point):
    bundle.args("sleep", "30")
    if path == "two-step":
        two_step(bundle.config)
    else:
        add_userns(bundle.config)
    bpath = bundle.write()
    cid = kp.id()
    r = kp.cmd("create", "--bundle", bpath, "--pid-file", str(tmp_path / "pid"), cid,
               env=killed_env(point, cid))
    if point.startswith("create."):
        assert r.returncode == -9, f"create was not killed at {point}: {r.returncode} {r.stderr}"
    elif point == "init.after-ready":
        assert r.returncode in (0, 1), r.stderr
    else:
        # The container process died at its step: create says so in one line and cleans up.
        assert r.returncode == 1, f"{point} not reached: {r.returncode} {r.stderr}"
        assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert_truthful(kp, cid, expected_after_create_kill(point))
    r = kp.cmd("delete", "--force", cid)
    assert r.returncode == 0, r.stderr
    assert_nothing_left(kp, cid, token=cid)
    runs_again(kp, bundle, cid)


def exec_points():
    return [p for p in KILL_POINTS if p.split(".")[0] in ("exec", "exec-intermediate",
                                                            "exec-process")]


@needs_kill_points
@pytest.mark.parametrize("point", exec_points())
def test_exec_killed_at_a_kill_point_leaves_the_container_whole_and_removable(kp, bundle,
                                                                              tmp_path, point):
    bpath = bundle.args("sleep", "30").write()
    cid = kp.id()
    kp.cmd("run", "-d", "--bundle", bpath, cid, check=True)
    init = kp.state(cid)["pid"]
    r = kp.cmd("exec", "--pid-file", str(tmp_path / "exec.pid"), cid, "sleep", "40",
               env=killed_env(point, cid))
    if point.startswith("exec."):
        assert r.returncode == -9, f"exec was not killed at {point}: {r.returncode} {r.stderr}"
    else:
        assert r.returncode != 0 and r.returncode != -9, f"{point}: {r.returncode} {r.stderr}"
    # The container is untouched: still running, same init, and exec works again.
    assert observed(kp, cid) == ("running", init)
    assert kp.cmd("exec", cid, "true").returncode == 0
    r = cmd_reaping(kp, "delete", "--force", cid)
    assert r.returncode == 0, r.stderr
    wait_for(lambda: (reap_orphans(), not alive(init))[1], what="the init to die")
    assert_nothing_left(kp, cid, token=cid)
    runs_again(kp, bundle, cid)


def delete_points():
    return [p for p in KILL_POINTS if p.startswith("delete.")]


@needs_kill_points
@pytest.mark.parametrize("point", delete_points())
def test_delete_killed_at_a_kill_point_can_be_finished(kp, bundle, point):
    bpath = bundle.args("sleep", "30").write()
    cid = kp.id()
    kp.cmd("run", "-d", "--bundle", bpath, cid, check=True)
    init = kp.state(cid)["pid"]
    r = kp.cmd("delete", "--force", cid, env=killed_env(point, cid))
    assert r.returncode == -9, f"delete was not killed at {point}: {r.returncode} {r.stderr}"
    # The init was killed first: whatever is left reads stopped (or, emptied, is gone).
    wait_for(lambda: not alive(init), what="the init to die")
    assert_truthful(kp, cid, "absent" if point == "delete.before-rmdir" else "stopped")
    r = kp.cmd("delete", "--force", cid)
    assert r.returncode == 0, r.stderr
    assert_nothing_left(kp, cid, token=cid)
    runs_again(kp, bundle, cid)


def run_points():
    return [p for p in KILL_POINTS if p.startswith("run.")]


@needs_kill_points
@pytest.mark.parametrize("point", run_points())
def test_run_killed_at_a_kill_point_leaves_a_truthful_removable_container(kp, bundle, point):
    foreground = point == "run.before-remove"
    bpath = bundle.args(*(["true"] if foreground else ["sleep", "30"])).write()
    cid = kp.id()
    args = ["run", "--bundle", bpath, cid] if foreground else ["run", "-d", "--bundle", bpath, cid]
    r = kp.cmd(*args, env=killed_env(point, cid))
    assert r.returncode == -9, f"run was not killed at {point}: {r.returncode} {r.stderr}"
    expected = {"run.after-create": "created", "run.after-start": "running",
                "run.before-remove": "stopped"}[point]
    if expected == "stopped":
        wait_for(lambda: observed(kp, cid)[0] == "stopped", what="the process to exit")
    assert_truthful(kp, cid, expected)
    r = kp.cmd("delete", "--force", cid)
    assert r.returncode == 0, r.stderr
    assert_nothing_left(kp, cid, token=cid)
    runs_again(kp, bundle, cid)


def test_create_killed_at_random_moments_is_always_removable(seerun, bundle):
    seed = int(os.environ.get("SEERUN_TEST_SEED", random.randrange(1 << 30)))
    rng = random.Random(seed)
    bpath = bundle.args("sleep", "30").write()
    seen = set()
    for i in range(20):
        cid = seerun.id(f"rnd{i}")
        delay = rng.uniform(0, 0.030)
        with open(os.devnull, "w") as null:
            p = subprocess.Popen([conftest.SEERUN, *seerun.global_args, "create", "--bundle",
                                  bpath, cid], stdin=subprocess.DEVNULL, stdout=null,
                                 stderr=null, env=killed_env(None, cid))
            time.sleep(delay)
            p.kill()
            p.wait()
        got = observed(seerun, cid)
        seen.add(got[0] if got else "absent")
        # Never "creating" once its creator is gone; "created" only if it finished.
        assert got is None or got[0] in ("stopped", "created"), (seed, delay, got)
        if got and got[0] == "stopped":
            assert got[1] == 0, (seed, delay, got)
        if got and got[0] == "created":
            # Its last record was written (it may have been killed on its way out): whole.
            assert alive(got[1]), (seed, delay, got)
            seerun.cmd("start", cid, check=True)
        r = seerun.cmd("delete", "--force", cid)
        assert r.returncode == 0, (seed, delay, r.stderr)
        assert_nothing_left(seerun, cid, token=cid)
    print(f"seed {seed}: outcomes {sorted(seen)}")


# --- damaged records --------------------------------------------------------------------------

def damage_corrupt(d):
    with open(os.path.join(d, "state.json"), "w") as f:
        f.write('{"version": 1, "id": \x01 garbage')


def damage_truncated(d):
    with open(os.path.join(d, "state.json"), "r+") as f:
        text = f.read()
        f.seek(0)
        f.truncate()
        f.write(text[:len(text) // 2])


def damage_empty(d):
    open(os.path.join(d, "state.json"), "w").close()


def damage_missing(d):
    os.unlink(os.path.join(d, "state.json"))


def damage_not_a_file(d):
    os.unlink(os.path.join(d, "state.json"))
    os.mkdir(os.path.join(d, "state.json"))


def damage_both_records(d):
    """Only the config.json copy is left to go by."""
    damage_corrupt(d)
    os.unlink(os.path.join(d, "recovery.json"))


@pytest.mark.parametrize("damage", [damage_corrupt, damage_truncated, damage_empty,
                                    damage_missing, damage_not_a_file, damage_both_records],
                         ids=lambda f: f.__name__[len("damage_"):])
def test_a_damaged_record_breaks_only_its_container_and_delete_force_still_cleans_it_up(
        seerun, bundle, damage):
    bpath = bundle.args("sleep", "30").write()
    victim, other = seerun.id("victim"), seerun.id("other")
    for cid in (victim, other):
        seerun.cmd("run", "-d", "--bundle", bpath, cid, check=True)
    pid = seerun.state(victim)["pid"]
    other_pid = seerun.state(other)["pid"]
    assert cgroups_of(victim)
    damage(os.path.join(seerun.root, victim))

    # list: the others are listed, the damaged one is named in a warning.
    entries, warnings = listed(seerun)
    assert list(entries) == [other] and entries[other]["status"] == "running"
    assert victim in warnings and "state.json" in warnings, warnings
    # state: a one-line error naming the container and the file, and what to do.
    r = seerun.cmd("state", victim)
    assert r.returncode == 1 and r.stdout == ""
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert victim in r.stderr and "state.json" in r.stderr and "delete --force" in r.stderr
    # Commands that need the record refuse the same way; a plain delete too.
    for args in (["kill", victim, "KILL"], ["start", victim], ["delete", victim],
                 ["exec", victim, "true"], ["pause", victim]):
        r = seerun.cmd(*args)
        assert r.returncode != 0 and "state.json" in r.stderr, (args, r.stderr)
    assert alive(pid)

    # delete --force: the process (checked by its start time), the cgroup and the directory.
    r = seerun.cmd("delete", "--force", victim)
    assert r.returncode == 0, r.stderr
    wait_for(lambda: not alive(pid), what="the damaged container's process to die")
    assert_nothing_left_but(seerun, victim, other)
    st = seerun.state(other)
    assert st["status"] == "running" and st["pid"] == other_pid
    assert seerun.cmd("exec", other, "true").returncode == 0


def assert_nothing_left_but(seerun, gone, other):
    assert state_entries(seerun) == [other]
    assert index_entries(seerun) == [other]
    assert cgroups_of(gone) == []
    assert processes_in_cgroup(gone) == []
    r = seerun.cmd("state", gone)
    assert r.returncode != 0 and "does not exist" in r.stderr


def test_a_recovery_record_of_another_container_is_not_trusted(seerun, bundle):
    """recovery.json copied from elsewhere names another id: delete --force does not act on
    that container's process."""
    bpath = bundle.args("sleep", "30").write()
    victim, other = seerun.id("victim"), seerun.id("other")
    for cid in (victim, other):
        seerun.cmd("run", "-d", "--bundle", bpath, cid, check=True)
    other_pid = seerun.state(other)["pid"]
    vdir = os.path.join(seerun.root, victim)
    shutil.copy(os.path.join(seerun.root, other, "recovery.json"), os.path.join(vdir,
                                                                                "recovery.json"))
    damage_corrupt(vdir)
    assert seerun.cmd("delete", "--force", victim).returncode == 0
    assert alive(other_pid) and seerun.state(other)["status"] == "running"
    # Its own cgroup (named after it, from config.json) went with it.
    assert_nothing_left_but(seerun, victim, other)


def test_a_stray_empty_directory_in_the_state_root_is_no_container(seerun, bundle):
    """What a delete killed just before its last step leaves."""
    cid = seerun.id()
    os.makedirs(os.path.join(seerun.root, cid))
    assert seerun.cmd("state", cid).returncode == 1
    entries, _ = listed(seerun)
    assert cid not in entries
    assert seerun.cmd("delete", "--force", cid).returncode == 0
    assert state_entries(seerun) == []


# --- the bundle goes away ---------------------------------------------------------------------

@pytest.mark.parametrize("with_rootfs", [False, True], ids=["bundle", "bundle-and-rootfs"])
def test_removing_the_bundle_of_a_running_container_does_not_stop_kill_or_delete(
        seerun, bundle, busybox_rootfs, tmp_path, with_rootfs):
    if with_rootfs:
        # A bundle as engines make them: config.json and the root filesystem inside it.
        shutil.copytree(busybox_rootfs, bundle.path / "rootfs", symlinks=True)
        bundle.config["root"]["path"] = "rootfs"
    bundle.config["hooks"] = {"poststop": [{"path": "/bin/sh", "args": [
        "sh", "-c", f"cat > {tmp_path}/poststop.state"]}]}
    bpath = bundle.args("sleep", "30").write()
    a, b = seerun.id("a"), seerun.id("b")
    for cid in (a, b):
        seerun.cmd("run", "-d", "--bundle", bpath, cid, check=True)
    shutil.rmtree(bpath)
    assert not os.path.exists(bpath)

    assert seerun.state(a)["status"] == "running"
    if not with_rootfs:
        # exec reads the config kept in the state directory (with its root filesystem gone,
        # there would be nothing to run).
        assert seerun.cmd("exec", a, "true").returncode == 0
    seerun.cmd("kill", a, "KILL", check=True)
    wait_for(lambda: seerun.state(a)["status"] == "stopped", what="a to stop")
    seerun.cmd("delete", a, check=True)
    assert json.loads((tmp_path / "poststop.state").read_text())["id"] == a

    pid_b = seerun.state(b)["pid"]
    seerun.cmd("delete", "--force", b, check=True)
    assert not alive(pid_b)
    assert state_entries(seerun) == []
    assert cgroups_of(a) == [] and cgroups_of(b) == []


# --- a full state filesystem ------------------------------------------------------------------

@pytest.fixture
def small_root(tmp_path, seerun):
    """A state root on a 1 MiB tmpfs (root-only, as seerun requires), unmounted afterwards."""
    mnt = tmp_path / "small-root"
    mnt.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m,nr_inodes=256,mode=0700", "tmpfs",
                    str(mnt)], check=True)
    try:
        yield Seerun(mnt, seerun.prefix, seerun.policy, "permissive")
    finally:
        subprocess.run(["umount", str(mnt)], check=True)


def fill_blocks(root, free_pages):
    """Leaves exactly free_pages pages of the filesystem free (a hidden filler file)."""
    filler = os.path.join(root, ".filler")
    if os.path.exists(filler):
        os.unlink(filler)
    st = os.statvfs(root)
    with open(filler, "wb") as f:
        f.write(b"x" * (st.f_bavail - free_pages) * st.f_bsize)
    assert os.statvfs(root).f_bavail == free_pages


def fill_inodes(root, free_inodes):
    """Leaves exactly free_inodes inodes free (hidden empty files)."""
    d = os.path.join(root, ".inodes")
    if os.path.isdir(d):
        shutil.rmtree(d)
    os.mkdir(d)
    n = 0
    try:
        while True:
            open(os.path.join(d, str(n)), "w").close()
            n += 1
    except OSError as e:
        assert e.errno == 28
    for i in range(free_inodes):
        os.unlink(os.path.join(d, str(n - 1 - i)))


@pytest.mark.parametrize("fill", [fill_blocks, fill_inodes], ids=["blocks", "inodes"])
def test_a_full_state_filesystem_fails_create_with_enospc_at_every_write_and_leaves_nothing(
        small_root, bundle, fill):
    bpath = bundle.args("sleep", "30").write()
    root = small_root.root
    failures = 0
    for free in range(0, 32):
        cid = small_root.id(f"f{free}")
        fill(root, free)
        r = small_root.cmd("create", "--bundle", bpath, cid)
        if r.returncode == 0:
            break
        failures += 1
        assert r.returncode == 1
        assert "No space left on device" in r.stderr, (free, r.stderr)
        assert len(r.stderr.strip().splitlines()) == 1, r.stderr
        # Nothing half-written: no container directory, no temporary, no cgroup.
        assert [e for e in os.listdir(root) if not e.startswith((".filler", ".inodes", ".index"))
                ] == [], (free, os.listdir(root))
        assert index_entries(small_root) == [], (free, index_entries(small_root))
        assert cgroups_of(cid) == [] and processes_in_cgroup(cid) == []
        assert small_root.cmd("state", cid).returncode == 1
    else:
        pytest.fail("create never succeeded, even with 31 pages or inodes free")
    # Every write of create failed once, cleanly, before there was room for all of them.
    assert failures >= 2, failures
    print(f"create failed cleanly {failures} times before it had room")
    assert small_root.state(cid)["status"] == "created"
    small_root.cmd("delete", "--force", cid, check=True)
    assert cgroups_of(cid) == []


# --- races ------------------------------------------------------------------------------------

def in_parallel(n, fn):
    barrier = threading.Barrier(n)
    results = [None] * n

    def go(i):
        barrier.wait()
        results[i] = fn(i)
    threads = [threading.Thread(target=go, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def test_parallel_creates_of_one_id_exactly_one_wins_and_the_others_leave_nothing(seerun,
                                                                                  bundle):
    bpath = bundle.args("sleep", "30").write()
    for round_ in range(3):
        cid = seerun.id(f"same{round_}")
        results = in_parallel(8, lambda i: seerun.cmd("create", "--bundle", bpath, cid,
                                                        timeout=60))
        winners = [r for r in results if r.returncode == 0]
        assert len(winners) == 1, [r.stderr for r in results]
        for r in results:
            if r.returncode != 0:
                assert r.stderr.strip() == \
                    f'seerun create failed: container with id "{cid}" already exists', r.stderr
        # Nothing of the losers: one directory, one cgroup per hierarchy, one process.
        assert state_entries(seerun) == [cid]
        st = seerun.state(cid)
        assert st["status"] == "created" and alive(st["pid"])
        assert processes_in_cgroup(cid) == [str(st["pid"])]
        seerun.cmd("start", cid, check=True)
        assert seerun.state(cid)["status"] == "running"
        seerun.cmd("delete", "--force", cid, check=True)
        assert_nothing_left(seerun, cid)


def test_a_hundred_parallel_create_start_delete_of_different_ids(seerun, bundle):
    bpath = bundle.args("true").write()
    n = int(os.environ.get("SEERUN_PARALLEL", "100"))

    def lifecycle(i):
        cid = seerun.id(f"p{i}")
        for args in (["create", "--bundle", bpath, cid], ["start", cid]):
            r = seerun.cmd(*args, timeout=300)
            if r.returncode != 0:
                return f"{args[0]} {cid}: {r.stderr}"
        # The process exits at once: wait for it, then a plain delete.
        deadline = time.monotonic() + 60
        while True:
            r = seerun.cmd("state", cid, timeout=300)
            if r.returncode != 0:
                return f"state {cid}: {r.stderr}"
            if json.loads(r.stdout)["status"] == "stopped":
                break
            if time.monotonic() > deadline:
                return f"{cid} did not stop"
            time.sleep(0.05)
        r = seerun.cmd("delete", cid, timeout=300)
        return None if r.returncode == 0 else f"delete {cid}: {r.stderr}"

    # `list` meanwhile, again and again: it never fails, and warns of nothing but containers
    # deleted between reading the directory and loading them.
    done = threading.Event()
    list_problems = []

    def lister():
        while not done.is_set():
            r = seerun.cmd("list", "--format", "json", timeout=300)
            json.loads(r.stdout or "null")
            bad = [line for line in r.stderr.splitlines() if "does not exist" not in line]
            if r.returncode != 0 or bad:
                list_problems.append((r.returncode, r.stderr))
    t = threading.Thread(target=lister)
    t.start()
    try:
        failures = [f for f in in_parallel(n, lifecycle) if f]
    finally:
        done.set()
        t.join()
    assert failures == [], failures
    assert list_problems == [], list_problems
    assert state_entries(seerun) == []
    for i in range(n):
        assert cgroups_of(f"{seerun.prefix}-p{i}") == []


def test_delete_force_racing_start_leaves_nothing(seerun, bundle):
    bpath = bundle.args("sleep", "30").write()
    rng = random.Random(7)
    outcomes = set()
    for i in range(12):
        cid = seerun.id(f"ds{i}")
        seerun.cmd("create", "--bundle", bpath, cid, check=True)
        init = seerun.state(cid)["pid"]
        delays = [0, rng.uniform(0, 0.02)]
        rng.shuffle(delays)

        def go(k):
            time.sleep(delays[k])
            return seerun.cmd(*(["start", cid] if k == 0 else ["delete", "--force", cid]))
        start, delete = in_parallel(2, go)
        assert delete.returncode == 0, delete.stderr
        if start.returncode != 0:
            assert "does not exist" in start.stderr, start.stderr
        outcomes.add("started" if start.returncode == 0 else "deleted first")
        wait_for(lambda: not alive(init), what="the init to die")
        assert_nothing_left(seerun, cid)
    print(f"outcomes: {sorted(outcomes)}")


@pytest.mark.parametrize("all_", [False, True], ids=["init", "all"])
def test_kill_racing_the_processes_own_exit_leaves_nothing_behind(seerun, bundle, all_):
    rng = random.Random(11)
    codes = set()
    for i in range(15):
        cid = seerun.id(f"kr{i}")
        life = rng.uniform(0, 0.03)
        bpath = bundle.shell(f"sleep {life:.3f}").write()
        seerun.cmd("run", "-d", "--bundle", bpath, cid, check=True)
        time.sleep(rng.uniform(0, 0.04))
        r = seerun.cmd("kill", *(["--all"] if all_ else []), cid, "KILL")
        if r.returncode != 0:
            assert "not running" in r.stderr, r.stderr
        codes.add(r.returncode)
        wait_for(lambda: seerun.state(cid)["status"] == "stopped", what="stopped")
        assert seerun.state(cid)["pid"] == 0
        # A plain delete: the container is stopped, whoever ended it.
        seerun.cmd("delete", cid, check=True)
        assert_nothing_left(seerun, cid)
    print(f"kill exit codes: {sorted(codes)}")
