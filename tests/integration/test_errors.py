"""What a user sees when a container cannot be made: create says what failed in one line and
exits 1, and nothing is left behind (no state directory, cgroup, mount or process: the conftest
fixture checks after every test).  Config errors name the field or file and fail fast, before
anything is created; bad container ids are refused before anything is touched.  And the basics
of concurrency: two creates of one id, and a recycled pid."""
import inspect
import json
import os
import re
import subprocess
import threading
import time

import pytest

from conftest import SEERUN, CGROUP_ROOT, start_time, state_entries, wait_for


def without(config, *types):
    config["linux"]["namespaces"] = [n for n in config["linux"]["namespaces"]
                                     if n["type"] not in types]


def one_line(r):
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    return lines[0]


def cgroups_of(cid):
    found = []
    for hier in os.listdir(CGROUP_ROOT):
        if os.path.isdir(os.path.join(CGROUP_ROOT, hier, cid)):
            found.append(os.path.join(CGROUP_ROOT, hier, cid))
    return found


def mounts_mentioning(text):
    with open("/proc/self/mountinfo") as f:
        return [line for line in f if text in line]


def processes_in_cgroup(cid):
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cgroup") as f:
                if re.search(rf"/{re.escape(cid)}$", f.read(), re.M):
                    found.append(pid)
        except OSError:
            pass
    return found


def reap_orphans():
    try:
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass
    except ChildProcessError:
        pass


def rewrite_record(seerun, cid, **changes):
    """What seerun itself would have written at an earlier moment: state.json and the index
    (statedir.h) agree, as create keeps them."""
    for path in (os.path.join(seerun.root, cid, "state.json"),
                 os.path.join(seerun.root, ".index", cid)):
        with open(path) as f:
            rec = json.load(f)
        rec.update(changes)
        with open(path, "w") as f:
            json.dump(rec, f)


def assert_nothing_left(seerun, cid, rootfs=None):
    entries = state_entries(seerun)
    assert entries == [], f"state entries left: {entries}"
    assert cgroups_of(cid) == []
    assert processes_in_cgroup(cid) == []
    if rootfs:
        assert mounts_mentioning(str(rootfs)) == []
    r = seerun.cmd("state", cid)
    assert r.returncode != 0 and "does not exist" in r.stderr


# --- failures during create leave nothing -----------------------------------------------------

def bad_mount(b):
    b.config["mounts"].append({"destination": "/mnt", "type": "nosuchfs", "source": "none"})
    return "mounts[7]"


def bad_mount_option(b):
    b.config["mounts"].append({"destination": "/mnt", "type": "tmpfs", "source": "tmpfs",
                               "options": ["size=lots"]})
    return "mounts[7]"


def missing_executable(b):
    b.args("/no/such/program")
    return 'exec: "/no/such/program"'


def missing_executable_in_path(b):
    b.args("no-such-program")
    return "executable file not found in $PATH"


def unwritable_uid_map(b):
    b.config["linux"]["namespaces"].append({"type": "user"})
    b.config["linux"]["uidMappings"] = [{"containerID": 0, "hostID": 300000, "size": 100},
                                        {"containerID": 50, "hostID": 400000, "size": 100}]
    b.config["linux"]["gidMappings"] = [{"containerID": 0, "hostID": 300000, "size": 100}]
    return "linux.uidMappings"


def unwritable_gid_map(b):
    b.config["linux"]["namespaces"].append({"type": "user"})
    b.config["linux"]["uidMappings"] = [{"containerID": 0, "hostID": 300000, "size": 100}]
    b.config["linux"]["gidMappings"] = [{"containerID": 0, "hostID": 300000, "size": 100},
                                        {"containerID": 200, "hostID": 300050, "size": 10}]
    return "linux.gidMappings"


def missing_namespace_path(b):
    without(b.config, "network")
    b.config["linux"]["namespaces"].append({"type": "network", "path": "/run/netns/nope"})
    return "linux.namespaces"


def unknown_sysctl(b):
    b.config["linux"]["sysctl"] = {"kernel.no_such_sysctl": "1"}
    return "kernel.no_such_sysctl"


def sysctl_bad_value(b):
    b.config["linux"]["sysctl"] = {"net.ipv4.ip_forward": "lots"}
    return "net.ipv4.ip_forward"


def host_sysctl(key):
    with open("/proc/sys/" + key.replace(".", "/")) as f:
        return f.read().strip()


# The next three would write the host's kernel settings.  They ask for the value the host
# already has, so that a runtime that wrongly writes it changes nothing while the test fails.
def sysctl_of_the_host(b):
    # Not namespaced at all.
    b.config["linux"]["sysctl"] = {"vm.swappiness": host_sysctl("vm.swappiness")}
    return "vm.swappiness"


def ipc_sysctl_without_ipc_namespace(b):
    without(b.config, "ipc")
    b.config["linux"]["sysctl"] = {"kernel.shmmni": host_sysctl("kernel.shmmni")}
    return "kernel.shmmni"


def net_sysctl_in_the_hosts_network_namespace(b):
    without(b.config, "network")
    b.config["linux"]["namespaces"].append({"type": "network", "path": "/proc/self/ns/net"})
    b.config["linux"]["sysctl"] = {"net.ipv4.ip_forward": host_sysctl("net.ipv4.ip_forward")}
    return "net.ipv4.ip_forward"


def time_offset_refused(b):
    # The clock would go below zero inside.
    b.config["linux"]["namespaces"].append({"type": "time"})
    b.config["linux"]["timeOffsets"] = {"monotonic": {"secs": -10 ** 12}}
    return "linux.timeOffsets"


def unified_on_v1(b):
    if os.path.exists(os.path.join(CGROUP_ROOT, "cgroup.controllers")):
        pytest.skip("a cgroup v2 host honours linux.resources.unified")
    b.config["linux"]["resources"]["unified"] = {"memory.max": "100000000"}
    return "linux.resources.unified"


def cpu_quota_below_minimum(b):
    b.config["linux"]["resources"]["cpu"] = {"quota": 500, "period": 100000}
    return "linux.resources.cpu"


def cpuset_of_missing_cpus(b):
    b.config["linux"]["resources"]["cpu"] = {"cpus": "4000-4001"}
    return "linux.resources.cpu.cpus"


def memory_limit_below_usage(b):
    # A limit the kernel takes but the container cannot live in: the init dies while it is
    # being set up, and create must still say so and clean up.
    b.config["linux"]["resources"]["memory"] = {"limit": 4096, "swap": 4096}
    return "linux.resources.memory"


def bad_cwd(b):
    b.process["cwd"] = "/etc/passwd/sub"  # a missing one is made (as runc); below a file, not
    return "process.cwd"


def bind_source_missing(b, tmp_path):
    b.config["mounts"].append({"destination": "/mnt", "type": "bind",
                               "source": str(tmp_path / "absent"), "options": ["bind"]})
    return "mounts[7]"


def hook_fails(b, tmp_path):
    b.config["hooks"] = {"createRuntime": [{"path": "/bin/false"}]}
    return "createRuntime"


FAILURES = [bad_mount, bad_mount_option, missing_executable, missing_executable_in_path,
            unwritable_uid_map, unwritable_gid_map, missing_namespace_path, unknown_sysctl,
            sysctl_bad_value, sysctl_of_the_host, ipc_sysctl_without_ipc_namespace,
            net_sysctl_in_the_hosts_network_namespace, time_offset_refused, unified_on_v1,
            cpu_quota_below_minimum, cpuset_of_missing_cpus, memory_limit_below_usage, bad_cwd,
            bind_source_missing, hook_fails]


@pytest.mark.parametrize("breakage", FAILURES, ids=[f.__name__ for f in FAILURES])
def test_a_create_that_fails_says_what_and_leaves_nothing(seerun, bundle, tmp_path, breakage):
    bundle.args("sleep", "30")
    if len(inspect.signature(breakage).parameters) == 2:
        what = breakage(bundle, tmp_path)
    else:
        what = breakage(bundle)
    cid = seerun.id()
    pidfile = tmp_path / "pid"
    t = time.monotonic()
    r = seerun.cmd("create", "--bundle", bundle.write(), "--pid-file", str(pidfile), cid,
                   timeout=30)
    assert time.monotonic() - t < 10
    assert r.returncode == 1, r.stderr
    line = one_line(r)
    # runc's form, which engines show after "OCI runtime create failed: ".
    assert line.startswith("seerun create failed: ") and what in line, line
    assert not pidfile.exists()
    assert_nothing_left(seerun, cid, bundle.config["root"]["path"])


def test_run_that_fails_at_create_leaves_nothing_either(seerun, bundle):
    bundle.config["mounts"].append({"destination": "/mnt", "type": "nosuchfs"})
    cid = seerun.id()
    r = seerun.cmd("run", "--bundle", bundle.write(), cid)
    assert r.returncode == 1 and "mounts[7]" in one_line(r)
    assert_nothing_left(seerun, cid)


def test_a_failed_create_keeps_the_ids_of_other_containers_working(seerun, bundle):
    good = seerun.id("good")
    path = bundle.args("sleep", "30").write()
    seerun.cmd("create", "--bundle", path, good, check=True)
    bundle.args("/no/such/program")
    bad = seerun.id("bad")
    r = seerun.cmd("create", "--bundle", bundle.write(), bad)
    assert r.returncode == 1
    assert seerun.list_ids() == [good]
    assert seerun.state(good)["status"] == "created"
    # The failed id is free again.
    bundle.args("true")
    seerun.cmd("create", "--bundle", bundle.write(), bad, check=True)
    assert sorted(seerun.list_ids()) == sorted([good, bad])


# --- config errors ----------------------------------------------------------------------------

def edit(config, path, value):
    """Sets config[a][b]... = value for path "a.b"; value DELETE removes the key."""
    keys = path.split(".")
    obj = config
    for k in keys[:-1]:
        obj = obj[int(k)] if isinstance(obj, list) else obj[k]
    last = keys[-1]
    if value is DELETE:
        del obj[last]
    elif isinstance(obj, list):
        obj[int(last)] = value
    else:
        obj[last] = value


DELETE = object()

CONFIG_ERRORS = [
    # (story, path, value, words the error must contain)
    ("a string where a list goes", "process.args", "sh", "process.args"),
    ("a number where a string goes", "hostname", 5, "hostname"),
    ("an object where a list goes", "linux.namespaces", {}, "linux.namespaces"),
    ("a negative uid", "process.user.uid", -1, "process.user.uid"),
    ("a boolean as a string", "process.terminal", "false", "process.terminal"),
    ("no ociVersion", "ociVersion", DELETE, "ociVersion"),
    ("no root", "root", DELETE, "root"),
    ("no root.path", "root.path", DELETE, "root.path"),
    ("no process.cwd", "process.cwd", DELETE, "process.cwd"),
    ("no process.user", "process.user", DELETE, "process.user"),
    ("an unknown namespace type", "linux.namespaces.0", {"type": "pids"},
     "linux.namespaces[0].type"),
    ("a namespace twice", "linux.namespaces.1", {"type": "pid"}, "duplicate"),
    ("a relative namespace path", "linux.namespaces.1", {"type": "network", "path": "x"},
     "linux.namespaces[1].path"),
    ("an unknown capability", "process.capabilities.bounding", ["CAP_KILL", "CAP_NO_SUCH"],
     "CAP_NO_SUCH"),
    ("a mount without destination", "mounts.0", {"type": "proc", "source": "proc"},
     "mounts[0].destination"),
    ("ociVersion 2.0.0", "ociVersion", "2.0.0", "ociVersion"),
    ("ociVersion 1.4.0", "ociVersion", "1.4.0", "ociVersion"),
    ("ociVersion 0.9.0", "ociVersion", "0.9.0", "ociVersion"),
    ("ociVersion not semver", "ociVersion", "1.0", "ociVersion"),
    ("uid maps without a user namespace", "linux.uidMappings",
     [{"containerID": 0, "hostID": 1000, "size": 1}], "linux.uidMappings"),
    ("a map of size 0", "linux.uidMappings", [{"containerID": 0, "hostID": 1000, "size": 0}],
     "linux.uidMappings[0].size"),
    ("a map past 2^32", "linux.uidMappings",
     [{"containerID": 4294967295, "hostID": 0, "size": 2}], "linux.uidMappings[0]"),
    ("time offsets without a time namespace", "linux.timeOffsets",
     {"monotonic": {"secs": 1}}, "linux.timeOffsets"),
    ("an unknown clock", "linux.timeOffsets", {"realtime": {"secs": 1}}, "linux.timeOffsets"),
    ("a sysctl key with ..", "linux.sysctl", {"net/../../x": "1"}, "linux.sysctl"),
    ("a sysctl that is not namespaced", "linux.sysctl", {"vm.overcommit_memory": "0"},
     "vm.overcommit_memory"),
    ("no mount namespace", "linux.namespaces", [{"type": "pid"}, {"type": "uts"}],
     "mount namespace"),
]


@pytest.mark.parametrize("story,path,value,words", CONFIG_ERRORS,
                         ids=[c[0].replace(" ", "-") for c in CONFIG_ERRORS])
def test_a_config_error_names_the_field_and_creates_nothing(seerun, bundle, story, path, value,
                                                            words):
    if path.startswith("linux.uidMappings") and story != "uid maps without a user namespace":
        bundle.config["linux"]["namespaces"].append({"type": "user"})
        bundle.config["linux"]["gidMappings"] = [{"containerID": 0, "hostID": 1000, "size": 1}]
    edit(bundle.config, path, value)
    cid = seerun.id()
    t = time.monotonic()
    r = seerun.cmd("create", "--bundle", bundle.write(), cid, timeout=10)
    assert time.monotonic() - t < 5
    assert r.returncode != 0
    line = one_line(r)
    assert "config.json" in line and words in line, line
    # Nothing was made: not even the state root.
    assert not os.path.exists(seerun.root)
    assert cgroups_of(cid) == []


@pytest.mark.parametrize("text,words", [
    ('{"ociVersion": "1.0.0",', "invalid JSON"),
    ('{"ociVersion": "1.0.0"} {}', "invalid JSON"),
    ("[]", "config.json"),
    ("", "config.json"),
    ('{"ociVersion": "1.0.0", "root": {"path": "r"}, "root": {"path": "s"}}', "duplicate"),
    ('{"ociVersion": "1.0.0", /* comment */ "root": {"path": "r"}}', "invalid JSON"),
    ('{"ociVersion": "1.0.0\\u0000", "root": {"path": "r"}}', "config.json"),
    ("[" * 100000 + "]" * 100000, "config.json"),
], ids=["truncated", "trailing-garbage", "array", "empty", "duplicate-key", "comment",
        "nul-escape", "deep-nesting"])
def test_malformed_json_is_one_line_naming_config_json(seerun, bundle, text, words):
    (bundle.path / "config.json").write_text(text)
    t = time.monotonic()
    r = seerun.cmd("create", "--bundle", str(bundle.path), seerun.id(), timeout=10)
    assert time.monotonic() - t < 5
    assert r.returncode != 0
    line = one_line(r)
    assert "config.json" in line and words in line, line
    assert not os.path.exists(seerun.root)


def config_fifo(path):
    os.mkfifo(path)


def config_directory(path):
    os.mkdir(path)


def config_dev_zero(path):
    os.symlink("/dev/zero", path)


def config_huge(path):
    with open(path, "w") as f:
        f.write('{"ociVersion": "1.0.0", "annotations": {"x": "')
        f.write("a" * (4 << 20))
        f.write('"}}')


def config_missing(path):
    pass


def config_dangling_symlink(path):
    os.symlink("/no/such/file", path)


CONFIG_FILES = [config_fifo, config_directory, config_dev_zero, config_huge, config_missing,
                config_dangling_symlink]


@pytest.mark.parametrize("make", CONFIG_FILES, ids=[f.__name__ for f in CONFIG_FILES])
def test_a_config_json_that_is_not_a_small_regular_file_fails_at_once(seerun, tmp_path, make):
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    make(bundle / "config.json")
    t = time.monotonic()
    r = seerun.cmd("create", "--bundle", str(bundle), seerun.id(), timeout=10)
    assert time.monotonic() - t < 5
    assert r.returncode != 0
    line = one_line(r)
    assert "config.json" in line and str(bundle) in line, line
    assert not os.path.exists(seerun.root)


def test_a_bundle_that_does_not_exist_is_named(seerun, tmp_path):
    r = seerun.cmd("create", "--bundle", str(tmp_path / "nope"), seerun.id())
    assert r.returncode != 0
    assert str(tmp_path / "nope") in one_line(r)
    assert not os.path.exists(seerun.root)


# --- container ids ----------------------------------------------------------------------------

BAD_IDS = ["a/b", "..", ".", "../escape", "has space", "tab\there", "new\nline", "bell\x07",
           "x" * 256, "x" * 1025, "", "dollar$", "semi;colon", "ünïcode"]


@pytest.mark.parametrize("cid", BAD_IDS, ids=[repr(i)[:20] for i in BAD_IDS])
@pytest.mark.parametrize("verb", ["create", "run"])
def test_a_bad_container_id_is_refused_before_anything_is_touched(seerun, tmp_path, cid, verb):
    # The bundle does not even exist: the id is checked first.
    r = seerun.cmd(verb, "--bundle", str(tmp_path / "no-bundle"), "--", cid)
    assert r.returncode != 0
    line = one_line(r)
    assert "invalid container id" in line, line
    assert "no-bundle" not in line, line
    assert not os.path.exists(seerun.root)


@pytest.mark.parametrize("verb", [["state"], ["start"], ["kill"], ["delete"], ["delete", "-f"]])
def test_other_commands_refuse_a_bad_id_too(seerun, tmp_path, verb):
    os.makedirs(seerun.root)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "state.json").write_text("{}")
    r = seerun.cmd(*verb, "../outside")
    assert r.returncode != 0
    assert "invalid container id" in one_line(r)
    assert (outside / "state.json").exists()


def test_the_longest_id_a_directory_can_hold_works_and_one_more_byte_is_refused(seerun, bundle):
    cid = seerun.id("x" * (255 - len(seerun.prefix) - 1))
    assert len(cid) == 255
    seerun.cmd("create", "--bundle", bundle.write(), cid, check=True)
    assert seerun.state(cid)["status"] == "created"
    r = seerun.cmd("create", "--bundle", bundle.write(), cid + "x")
    assert r.returncode == 1
    line = one_line(r)
    assert "invalid container id" in line and "longer than 255 bytes" in line, line
    assert len(line) < 200
    assert seerun.list_ids() == [cid]


@pytest.mark.parametrize("mode", [0o777, 0o770, 0o1777], ids=["0777", "0770", "1777"])
def test_a_state_directory_others_can_write_is_refused(seerun, bundle, mode):
    # Anyone who can write there could plant a record whose pid is a victim's, for kill and
    # delete to act on.
    cid = seerun.id()
    seerun.cmd("create", "--bundle", bundle.args("sleep", "30").write(), cid, check=True)
    pid = seerun.state(cid)["pid"]
    os.chmod(seerun.root, mode)
    try:
        for args in (["state", cid], ["kill", cid, "KILL"], ["delete", "--force", cid],
                     ["list"], ["create", "--bundle", str(bundle.path), seerun.id("other")]):
            r = seerun.cmd(*args)
            assert r.returncode != 0, args
            assert f"writable by others (mode {mode:04o}): refusing it" in one_line(r), args
        # Nothing was acted on.
        assert os.path.exists(f"/proc/{pid}")
        assert state_entries(seerun) == [".index/" + cid, cid]
    finally:
        os.chmod(seerun.root, 0o700)
    assert seerun.state(cid)["status"] == "created"


# --- concurrency ------------------------------------------------------------------------------

def test_two_parallel_creates_of_one_id_one_wins_and_keeps_running(seerun, bundle):
    path = bundle.args("sleep", "30").write()
    for round_ in range(4):
        cid = seerun.id(f"race{round_}")
        barrier = threading.Barrier(2)
        results = [None, None]

        def go(i):
            barrier.wait()
            results[i] = seerun.cmd("create", "--bundle", path, cid, timeout=30)
        threads = [threading.Thread(target=go, args=(i,)) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        codes = sorted(r.returncode for r in results)
        assert codes[0] == 0 and codes[1] != 0, [r.stderr for r in results]
        loser = [r for r in results if r.returncode != 0][0]
        assert "already exists" in loser.stderr, loser.stderr
        st = seerun.state(cid)
        assert st["status"] == "created"
        assert os.path.exists(f"/proc/{st['pid']}")
        seerun.cmd("start", cid, check=True)
        assert seerun.state(cid)["status"] == "running"
        # Exactly one cgroup and one container process.
        assert len(processes_in_cgroup(cid)) == 1


def test_a_reused_pid_is_not_taken_for_the_container(seerun, bundle):
    cid = seerun.id()
    seerun.cmd("run", "-d", "--bundle", bundle.args("sleep", "30").write(), cid, check=True)
    real = seerun.state(cid)["pid"]
    # An unrelated process, started later: its start time differs from the container's.
    ticks = os.sysconf("SC_CLK_TCK")
    wait_for(lambda: time.clock_gettime(time.CLOCK_BOOTTIME) * ticks > start_time(real) + 1,
             what="a clock tick after the container's start")
    other = subprocess.Popen(["sleep", "30"])
    try:
        assert start_time(other.pid) != start_time(real)
        with open(os.path.join(seerun.root, cid, "state.json")) as f:
            assert json.load(f)["pid"] == real
        # The pid the runtime recorded, reused: both records name it.
        rewrite_record(seerun, cid, pid=other.pid)
        st = seerun.state(cid)
        assert st["status"] == "stopped" and st["pid"] == 0
        assert cid in seerun.cmd("list", check=True).stdout
        # Nothing aims at the unrelated process: kill refuses, delete leaves it alone.
        r = seerun.cmd("kill", cid, "KILL")
        assert r.returncode != 0 and "not running" in r.stderr
        seerun.cmd("delete", "--force", cid, check=True)
        assert other.poll() is None
    finally:
        other.kill()
        other.wait()
        subprocess.run(["kill", "-9", str(real)])


def test_a_create_killed_midway_reads_stopped_and_delete_removes_what_it_left(seerun, bundle,
                                                                                tmp_path):
    hook_pid = tmp_path / "hook.pid"
    bundle.config["hooks"] = {"createRuntime": [
        {"path": "/bin/sh", "args": ["sh", "-c", f"echo $$ > {hook_pid}; exec sleep 30"]}]}
    cid = seerun.id()
    with open(tmp_path / "out", "w") as out:
        create = subprocess.Popen([SEERUN, *seerun.global_args, "create", "--bundle",
                                   bundle.write(), cid], stdin=subprocess.DEVNULL, stdout=out,
                                  stderr=out)
    try:
        wait_for(lambda: create.poll() is not None or
                 (hook_pid.exists() and hook_pid.read_text().strip()),
                 what="the createRuntime hook to run")
        assert create.poll() is None, (tmp_path / "out").read_text()
        # The runtime is in the middle of create: the container is being made.
        assert seerun.state(cid)["status"] == "creating"
        assert cgroups_of(cid) != []
        create.kill()
        create.wait()
        st = seerun.state(cid)
        assert st["status"] == "stopped" and st["pid"] == 0
        # The half-made init died with its parent (it must not wait forever for a start).
        def none_left():
            reap_orphans()  # we are the subreaper of the dead runtime's children
            return processes_in_cgroup(cid) == []
        wait_for(none_left, timeout=5, what="the half-made init to die")
        seerun.cmd("delete", cid, check=True)
        assert_nothing_left(seerun, cid)
    finally:
        if hook_pid.exists() and hook_pid.read_text().strip():
            subprocess.run(["kill", "-9", hook_pid.read_text().strip()])


def test_a_create_killed_after_the_init_was_ready_leaves_nothing_delete_cannot_remove(seerun,
                                                                                      bundle):
    # The window: the init is set up (no longer tied to its creator's life) and the runtime is
    # killed before it records "created".  Simulated on a real container by putting its record
    # back to that moment: phase "creating", its creator a process that is gone.
    cid = seerun.id()
    seerun.cmd("create", "--bundle", bundle.args("sleep", "30").write(), cid, check=True)
    init = seerun.state(cid)["pid"]
    gone = subprocess.Popen(["true"])
    gone.wait()
    rewrite_record(seerun, cid, phase="creating", creatorPid=gone.pid, creatorStartTime=1)
    # The container never came to be: stopped, and no pid to aim at.
    st = seerun.state(cid)
    assert st["status"] == "stopped" and st["pid"] == 0, st
    listed = json.loads(seerun.cmd("list", "--format", "json", check=True).stdout)
    assert [(e["status"], e["pid"]) for e in listed] == [("stopped", 0)]
    # delete (no --force: it is stopped) still kills the init it left, and removes the rest.
    seerun.cmd("delete", cid, check=True)
    def init_gone():
        reap_orphans()
        return not os.path.exists(f"/proc/{init}")
    wait_for(init_gone, timeout=5, what="the init delete killed to be gone")
    assert_nothing_left(seerun, cid)


def test_list_sweeps_what_a_killed_create_left_but_never_a_create_at_work(seerun, bundle):
    os.makedirs(seerun.root, exist_ok=True)
    # A temporary directory of a create that is still running (this process stands in for
    # it: it is alive) and not locked yet, and one of a create whose process is gone.
    dead = subprocess.Popen(["true"])
    dead.wait()
    at_work = os.path.join(seerun.root, f".new-{os.getpid()}-1")
    left = os.path.join(seerun.root, f".new-{dead.pid}-1")
    for d in (at_work, left):
        os.mkdir(d)
        with open(os.path.join(d, "state.json"), "w") as f:
            f.write("{}")
    try:
        assert seerun.list_ids() == []
        assert os.path.isdir(at_work) and os.path.exists(os.path.join(at_work, "state.json"))
        assert not os.path.exists(left)
    finally:
        for d in (at_work, left):
            if os.path.isdir(d):
                for f in os.listdir(d):
                    os.unlink(os.path.join(d, f))
                os.rmdir(d)


def test_a_runtime_mount_error_names_config_jsons_index_under_a_profile(hardened, bundle):
    # The profile puts its tmpfs (/tmp, /var/tmp, /run) before config.json's mounts; an error
    # must still name the entry as config.json numbers it.
    bundle.config["mounts"].append({"destination": "/data", "type": "tmpfs", "source": "tmpfs",
                                    "options": ["size=not-a-size"]})
    index = len(bundle.config["mounts"]) - 1
    r = hardened.cmd("run", "--bundle", bundle.write(), hardened.id())
    assert r.returncode == 1
    assert f"mounts[{index}]" in r.stderr and "/data" in r.stderr, r.stderr
    assert hardened.list_ids() == []
