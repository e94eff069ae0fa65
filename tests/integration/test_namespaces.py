"""Namespaces as a user of linux.namespaces sees them: new ones of every type, the runtime's
own where the config lists none, joining another container's by path, user namespaces with
their id maps, devices in a user namespace, and sysctls inside.

Each test compares what the process inside sees (or what /proc/<pid>/ns/* shows from the host)
with the host and with other containers."""
import ctypes
import fcntl
import os
import re
import subprocess
import time

import pytest

from conftest import Bundle, wait_for

NS_FILES = {"pid": "pid", "network": "net", "ipc": "ipc", "uts": "uts", "mount": "mnt",
            "cgroup": "cgroup", "user": "user", "time": "time"}
# Host uids/gids the user namespace tests map the container's root to.
HOST_BASE = 200000


def ns_inode(pid, kind):
    return os.stat(f"/proc/{pid}/ns/{NS_FILES.get(kind, kind)}").st_ino


def host_ns(kind):
    return ns_inode("self", kind)


def owner_userns(pid, kind):
    """The inode of the user namespace that owns pid's namespace of this kind."""
    NS_GET_USERNS = 0xB701
    fd = os.open(f"/proc/{pid}/ns/{NS_FILES[kind]}", os.O_RDONLY)
    try:
        owner = fcntl.ioctl(fd, NS_GET_USERNS)
        try:
            return os.fstat(owner).st_ino
        finally:
            os.close(owner)
    finally:
        os.close(fd)


def without(config, *types):
    config["linux"]["namespaces"] = [n for n in config["linux"]["namespaces"]
                                     if n["type"] not in types]


def with_ns(config, kind, path=None):
    without(config, kind)
    entry = {"type": kind}
    if path:
        entry["path"] = path
    config["linux"]["namespaces"].append(entry)


def add_userns(config, host_base=HOST_BASE, size=65536):
    with_ns(config, "user")
    config["linux"]["uidMappings"] = [{"containerID": 0, "hostID": host_base, "size": size}]
    config["linux"]["gidMappings"] = [{"containerID": 0, "hostID": host_base, "size": size}]


def run(seerun, bundle, name="c"):
    """Runs the bundle in the foreground; returns the completed command (stdout is the
    container's)."""
    return seerun.cmd("run", "--bundle", bundle.write(), seerun.id(name), timeout=30)


def ok(r):
    assert r.returncode == 0, f"exit {r.returncode}: {r.stderr}{r.stdout}"
    return r.stdout


@pytest.fixture
def make_bundle(tmp_path, busybox_rootfs, seerun):
    """More bundles over the shared root filesystem, for tests with several containers."""
    count = [0]

    def make():
        count[0] += 1
        path = tmp_path / f"bundle{count[0]}"
        path.mkdir()
        return Bundle(path, busybox_rootfs, seerun)
    return make


def reap_orphans():
    """The test run is the subreaper of containers whose runtime exited: a container init
    killed by `delete` stays a zombie until reaped here.  One that joined another container's
    pid namespace must go before that namespace's init can."""
    try:
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass
    except ChildProcessError:
        pass


def start_sleeper(seerun, bundle, name):
    """A running container that waits; returns its init's host pid."""
    bundle.args("sleep", "60")
    cid = seerun.id(name)
    seerun.cmd("run", "--detach", "--bundle", bundle.write(), cid, check=True)
    return seerun.state(cid)["pid"]


def created_pid(seerun, bundle, name="c"):
    """Creates (not starts) the bundle; returns the init's host pid, already in every
    namespace of the container."""
    cid = seerun.id(name)
    seerun.cmd("create", "--bundle", bundle.write(), cid, check=True, timeout=30)
    return seerun.state(cid)["pid"]


# --- new namespaces ---------------------------------------------------------------------------

def test_every_namespace_of_the_default_config_is_new(seerun, bundle):
    pid = created_pid(seerun, bundle)
    for kind in ("pid", "network", "ipc", "uts", "mount", "cgroup"):
        assert ns_inode(pid, kind) != host_ns(kind), kind
    # No user or time namespace was asked for: those are the runtime's.
    assert ns_inode(pid, "user") == host_ns("user")
    assert ns_inode(pid, "time") == host_ns("time")


def test_a_new_pid_namespace_makes_the_process_pid_1_seeing_only_its_own(seerun, bundle):
    bundle.shell("echo $$; sleep 5 & ls /proc | grep '^[0-9]' | sort -n | tr '\\n' ' '")
    out = ok(run(seerun, bundle)).split("\n")
    assert out[0] == "1"
    pids = out[1].split()
    # sh (1), the background sleep and ls/grep/sort/tr of the pipeline: nothing from the host.
    assert pids[0] == "1" and len(pids) <= 6, pids
    assert all(int(p) < 10 for p in pids), pids


def test_a_new_network_namespace_has_only_a_loopback_brought_up(seerun, bundle):
    bundle.shell("ls /sys/class/net; cat /sys/class/net/lo/operstate; cat /sys/class/net/lo/flags")
    out = ok(run(seerun, bundle)).split()
    assert out[0] == "lo" and len(out) == 3, out
    # The kernel creates lo down; the runtime brings it up, as runc and crun do (lo's
    # operstate is "unknown" when up).
    assert out[1] != "down"
    assert int(out[2], 16) & 1 == 1


def host_interfaces():
    with open("/proc/net/dev") as f:
        return {line.split(":")[0].strip() for line in f.read().splitlines()[2:]}


def test_without_a_network_entry_the_container_shares_the_host_interfaces(seerun, bundle):
    without(bundle.config, "network")
    bundle.shell("cat /proc/net/dev")
    before = host_interfaces()
    out = ok(run(seerun, bundle))
    inside = {line.split(":")[0].strip() for line in out.splitlines()[2:]}
    # Other work on the host may add or remove interfaces meanwhile: those that stayed count.
    stayed = before & host_interfaces()
    assert len(stayed) > 1 and stayed <= inside, (inside, stayed)


def test_namespaces_absent_from_the_config_are_the_runtimes(seerun, bundle):
    without(bundle.config, "network", "ipc", "uts", "cgroup")
    del bundle.config["hostname"]
    pid = created_pid(seerun, bundle)
    for kind in ("network", "ipc", "uts", "cgroup"):
        assert ns_inode(pid, kind) == host_ns(kind), kind
    for kind in ("pid", "mount"):
        assert ns_inode(pid, kind) != host_ns(kind), kind


def test_a_new_ipc_namespace_hides_the_hosts_shared_memory(seerun, bundle):
    libc = ctypes.CDLL(None, use_errno=True)
    IPC_PRIVATE, IPC_CREAT, IPC_RMID = 0, 0o1000, 0
    shmid = libc.shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0o600)
    assert shmid >= 0
    try:
        pid = created_pid(seerun, bundle, "ns")
        assert ns_inode(pid, "ipc") != host_ns("ipc")
        bundle.shell("cat /proc/sysvipc/shm | wc -l")
        out = ok(run(seerun, bundle))
        assert out.strip() == "1"  # the header only
        with open("/proc/sysvipc/shm") as f:
            assert any(line.split()[1] == str(shmid) for line in f.read().splitlines()[1:])
    finally:
        libc.shmctl(shmid, IPC_RMID, None)


def test_a_new_uts_namespace_has_the_configs_hostname_and_domainname(seerun, bundle):
    bundle.config["hostname"] = "box-one"
    bundle.config["domainname"] = "example.test"
    bundle.shell("hostname; cat /proc/sys/kernel/domainname")
    assert ok(run(seerun, bundle)) == "box-one\nexample.test\n"
    # The host's names did not change.
    assert os.uname().nodename != "box-one"
    with open("/proc/sys/kernel/domainname") as f:
        assert f.read().strip() != "example.test"


def test_a_new_mount_namespace_keeps_the_containers_mounts_from_the_host(seerun, bundle):
    pid = created_pid(seerun, bundle)
    assert ns_inode(pid, "mount") != host_ns("mount")
    with open(f"/proc/{pid}/mountinfo") as f:
        inside = f.read()
    with open("/proc/self/mountinfo") as f:
        host = f.read()
    # The container's /proc and /dev/shm exist in its mount table only.
    assert re.search(r" /proc \S+ .*- proc ", inside)
    assert re.search(r" /dev/shm \S+ .*- tmpfs ", inside)
    root = str(bundle.config["root"]["path"])
    assert root not in host


def test_a_new_cgroup_namespace_shows_the_containers_cgroup_as_root(seerun, bundle):
    bundle.shell("cat /proc/self/cgroup")
    out = ok(run(seerun, bundle))
    lines = out.split()
    assert lines, out
    for line in lines:
        assert line.split(":", 2)[2] == "/", out


def test_without_a_cgroup_namespace_the_full_cgroup_path_shows(seerun, bundle):
    without(bundle.config, "cgroup")
    cid = seerun.id()
    bundle.shell("cat /proc/self/cgroup")
    out = seerun.cmd("run", "--bundle", bundle.write(), cid)
    assert out.returncode == 0, out.stderr
    assert any(line.endswith(f"/{cid}") for line in out.stdout.split()), out.stdout


def test_a_new_time_namespace_shifts_uptime_by_the_boottime_offset(seerun, bundle):
    with_ns(bundle.config, "time")
    day = 86400
    bundle.config["linux"]["timeOffsets"] = {"boottime": {"secs": 10 * day},
                                              "monotonic": {"secs": 3 * day, "nanosecs": 5}}
    bundle.shell("cat /proc/uptime; cat /proc/self/timens_offsets")
    with open("/proc/uptime") as f:
        before = float(f.read().split()[0])
    out = ok(run(seerun, bundle)).splitlines()
    with open("/proc/uptime") as f:
        after = float(f.read().split()[0])
    inside = float(out[0].split()[0])
    assert before + 10 * day - 1 <= inside <= after + 10 * day + 1, (before, inside, after)
    offsets = {line.split()[0]: line.split()[1:] for line in out[1:]}
    assert offsets == {"monotonic": [str(3 * day), "5"], "boottime": [str(10 * day), "0"]}


def test_a_new_time_namespace_without_offsets_keeps_the_hosts_clocks(seerun, bundle):
    with_ns(bundle.config, "time")
    pid = created_pid(seerun, bundle)
    assert ns_inode(pid, "time") != host_ns("time")
    with open(f"/proc/{pid}/timens_offsets") as f:
        assert [line.split()[1:] for line in f] == [["0", "0"], ["0", "0"]]


# --- joining namespaces by path ---------------------------------------------------------------

def test_a_second_container_joins_the_firsts_namespaces_by_path(seerun, make_bundle):
    first = make_bundle()
    first.config["hostname"] = "first-box"
    pid1 = start_sleeper(seerun, first, "first")

    second = make_bundle()
    del second.config["hostname"]
    for kind in ("network", "ipc", "uts", "pid"):
        with_ns(second.config, kind, f"/proc/{pid1}/ns/{NS_FILES[kind]}")
    second.shell("hostname; ps -o comm | grep -c sleep; echo $$")
    cid2 = seerun.id("second")
    seerun.cmd("create", "--bundle", second.write(), cid2, check=True)
    pid2 = seerun.state(cid2)["pid"]
    for kind in ("network", "ipc", "uts", "pid"):
        assert ns_inode(pid2, kind) == ns_inode(pid1, kind), kind
    for kind in ("mount", "cgroup"):
        assert ns_inode(pid2, kind) not in (ns_inode(pid1, kind), host_ns(kind)), kind
    seerun.cmd("delete", "--force", cid2, check=True)
    reap_orphans()

    out = ok(run(seerun, second, "third")).split()
    # The joiner sees the first's hostname and its sleep, and is not pid 1 there.
    assert out[0] == "first-box"
    assert out[1] == "1"
    assert out[2] != "1"


def test_a_second_container_joins_the_firsts_time_namespace_and_its_clocks(seerun, make_bundle):
    first = make_bundle()
    with_ns(first.config, "time")
    first.config["linux"]["timeOffsets"] = {"boottime": {"secs": 5 * 86400}}
    pid1 = start_sleeper(seerun, first, "first")
    second = make_bundle()
    with_ns(second.config, "time", f"/proc/{pid1}/ns/time")
    second.shell("cat /proc/uptime")
    with open("/proc/uptime") as f:
        host = float(f.read().split()[0])
    inside = float(ok(run(seerun, second, "second")).split()[0])
    assert 5 * 86400 - 5 < inside - host < 5 * 86400 + 5


def test_joining_a_user_namespace_with_its_network_namespace(seerun, make_bundle):
    first = make_bundle()
    add_userns(first.config)
    pid1 = start_sleeper(seerun, first, "first")

    second = make_bundle()
    with_ns(second.config, "user", f"/proc/{pid1}/ns/user")
    with_ns(second.config, "network", f"/proc/{pid1}/ns/net")
    second.shell("id -u; cat /proc/self/uid_map")
    cid2 = seerun.id("second")
    seerun.cmd("create", "--bundle", second.write(), cid2, check=True)
    pid2 = seerun.state(cid2)["pid"]
    assert ns_inode(pid2, "user") == ns_inode(pid1, "user") != host_ns("user")
    assert ns_inode(pid2, "network") == ns_inode(pid1, "network")
    # The new namespaces are owned by the joined user namespace: pid 2's root is its root.
    with open(f"/proc/{pid2}/status") as f:
        uids = re.search(r"^Uid:\s+(.*)$", f.read(), re.M).group(1).split()
    assert uids == [str(HOST_BASE)] * 4
    seerun.cmd("delete", "--force", cid2, check=True)

    out = ok(run(seerun, second, "third")).split()
    assert out[0] == "0"
    assert out[1:] == ["0", str(HOST_BASE), "65536"]


def test_joining_a_user_namespace_and_the_runtimes_network_namespace(seerun, make_bundle):
    # The network namespace is owned by the runtime's user namespace, not by the joined one:
    # it must be joined while the runtime still has its privileges, before the user namespace.
    first = make_bundle()
    add_userns(first.config)
    pid1 = start_sleeper(seerun, first, "first")
    second = make_bundle()
    with_ns(second.config, "user", f"/proc/{pid1}/ns/user")
    with_ns(second.config, "network", "/proc/self/ns/net")
    with_ns(second.config, "ipc", f"/proc/{pid1}/ns/ipc")
    cid2 = seerun.id("second")
    r = seerun.cmd("create", "--bundle", second.write(), cid2)
    assert r.returncode == 0, r.stderr
    pid2 = seerun.state(cid2)["pid"]
    assert ns_inode(pid2, "user") == ns_inode(pid1, "user")
    assert ns_inode(pid2, "network") == host_ns("network")
    assert ns_inode(pid2, "ipc") == ns_inode(pid1, "ipc")


@pytest.mark.parametrize("kind,wrong", [("network", "ipc"), ("pid", "net"), ("uts", "mnt")])
def test_joining_a_namespace_of_another_type_fails_naming_linux_namespaces(seerun, bundle,
                                                                           kind, wrong):
    with_ns(bundle.config, kind, f"/proc/self/ns/{wrong}")
    cid = seerun.id()
    r = seerun.cmd("create", "--bundle", bundle.write(), cid)
    assert r.returncode == 1
    assert "linux.namespaces" in r.stderr and f"not a {kind} namespace" in r.stderr, r.stderr
    assert not os.path.exists(os.path.join(seerun.root, cid))


def test_joining_a_file_that_is_no_namespace_fails_clearly(seerun, bundle, tmp_path):
    plain = tmp_path / "plain"
    plain.write_text("")
    with_ns(bundle.config, "network", str(plain))
    r = seerun.cmd("create", "--bundle", bundle.write(), seerun.id())
    assert r.returncode == 1
    assert "linux.namespaces" in r.stderr and str(plain) in r.stderr, r.stderr
    assert "not a network namespace" in r.stderr, r.stderr


@pytest.mark.parametrize("make", ["fifo", "directory", "device", "symlink-to-fifo"])
def test_joining_something_that_is_no_namespace_fails_at_once(seerun, bundle, tmp_path, make):
    # Opening a FIFO would wait for a writer forever; a device must not even be opened.
    path = tmp_path / "ns"
    if make == "fifo":
        os.mkfifo(path)
    elif make == "directory":
        path.mkdir()
    elif make == "device":
        path = "/dev/null"
    else:
        os.mkfifo(tmp_path / "fifo")
        path.symlink_to(tmp_path / "fifo")
    with_ns(bundle.config, "ipc", str(path))
    t = time.monotonic()
    r = seerun.cmd("create", "--bundle", bundle.write(), seerun.id(), timeout=10)
    assert time.monotonic() - t < 5
    assert r.returncode == 1
    assert f"linux.namespaces: `{path}` is not an ipc namespace" in r.stderr, r.stderr


def test_joining_a_namespace_path_that_does_not_exist_fails_clearly(seerun, bundle):
    with_ns(bundle.config, "ipc", "/proc/999999999/ns/ipc")
    r = seerun.cmd("create", "--bundle", bundle.write(), seerun.id())
    assert r.returncode == 1
    assert "linux.namespaces" in r.stderr and "/proc/999999999/ns/ipc" in r.stderr
    assert "No such file or directory" in r.stderr, r.stderr


# --- user namespaces --------------------------------------------------------------------------

def read_status_ids(pid):
    with open(f"/proc/{pid}/status") as f:
        text = f.read()
    uid = re.search(r"^Uid:\s+(.*)$", text, re.M).group(1).split()
    gid = re.search(r"^Gid:\s+(.*)$", text, re.M).group(1).split()
    return uid, gid


def test_a_user_namespace_maps_the_containers_root_to_the_configured_host_ids(seerun, bundle):
    add_userns(bundle.config)
    bundle.config["linux"]["gidMappings"] = [{"containerID": 0, "hostID": HOST_BASE + 70000,
                                              "size": 1000}]
    bundle.args("sleep", "30")
    cid = seerun.id()
    seerun.cmd("run", "-d", "--bundle", bundle.write(), cid, check=True)
    pid = seerun.state(cid)["pid"]
    with open(f"/proc/{pid}/uid_map") as f:
        assert f.read().split() == ["0", str(HOST_BASE), "65536"]
    with open(f"/proc/{pid}/gid_map") as f:
        assert f.read().split() == ["0", str(HOST_BASE + 70000), "1000"]
    assert ns_inode(pid, "user") != host_ns("user")
    for kind in ("mount", "pid", "network", "ipc", "uts", "cgroup"):
        assert owner_userns(pid, kind) == ns_inode(pid, "user"), kind
    uid, gid = read_status_ids(pid)
    assert uid == [str(HOST_BASE)] * 4
    assert gid == [str(HOST_BASE + 70000)] * 4


def test_the_process_user_inside_a_user_namespace_is_the_mapped_host_user(seerun, bundle):
    add_userns(bundle.config)
    bundle.process["user"] = {"uid": 1000, "gid": 1000}
    bundle.shell("id -u; id -g")
    assert ok(run(seerun, bundle, "inside")).split() == ["1000", "1000"]
    # On the host, the same process is 1000 above the map's base.
    bundle.args("sleep", "30")
    cid = seerun.id("host-view")
    seerun.cmd("run", "-d", "--bundle", bundle.write(), cid, check=True)
    pid = seerun.state(cid)["pid"]
    wait_for(lambda: read_status_ids(pid)[0][0] == str(HOST_BASE + 1000), timeout=5,
             what="the process to take its user")
    uid, gid = read_status_ids(pid)
    assert uid == [str(HOST_BASE + 1000)] * 4
    assert gid == [str(HOST_BASE + 1000)] * 4


def test_a_user_namespace_with_several_map_lines(seerun, bundle):
    add_userns(bundle.config, size=1000)
    bundle.config["linux"]["uidMappings"].append(
        {"containerID": 1000, "hostID": HOST_BASE + 5000, "size": 10})
    pid = created_pid(seerun, bundle)
    with open(f"/proc/{pid}/uid_map") as f:
        assert [line.split() for line in f] == [["0", str(HOST_BASE), "1000"],
                                                ["1000", str(HOST_BASE + 5000), "10"]]


@pytest.mark.parametrize("second,why", [
    ({"containerID": 500, "hostID": HOST_BASE + 90000, "size": 10},
     "in the container (ids 500-509)"),
    ({"containerID": 2000, "hostID": HOST_BASE + 10, "size": 10},
     f"on the host (ids {HOST_BASE + 10}-{HOST_BASE + 19})"),
], ids=["container-ids-twice", "host-ids-twice"])
def test_a_uid_map_the_kernel_refuses_fails_create_cleanly(seerun, bundle, second, why):
    add_userns(bundle.config, size=1000)
    bundle.config["linux"]["uidMappings"].append(second)
    cid = seerun.id()
    t = time.monotonic()
    r = seerun.cmd("create", "--bundle", bundle.write(), cid)
    assert time.monotonic() - t < 10
    assert r.returncode == 1
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "linux.uidMappings[1] overlaps linux.uidMappings[0] " + why in r.stderr, r.stderr
    assert not os.path.exists(os.path.join(seerun.root, cid))


def test_a_user_namespace_can_own_a_container_that_joins_the_hosts_network(seerun, bundle):
    # A network namespace joined by path is owned by the host's user namespace: the new user
    # namespace must still work (sysfs cannot be mounted for a network namespace it does not
    # own, so the runtime must cope with that, as runc does).
    add_userns(bundle.config)
    with_ns(bundle.config, "network", "/proc/self/ns/net")
    bundle.shell("id -u; ls /sys/class/net")
    before = set(os.listdir("/sys/class/net"))
    out = ok(run(seerun, bundle)).split()
    assert out[0] == "0"
    stayed = before & set(os.listdir("/sys/class/net"))
    assert stayed <= set(out[1:]) and len(stayed) > 1, out


def test_a_user_namespace_joins_another_containers_network(seerun, make_bundle):
    first = make_bundle()
    pid1 = start_sleeper(seerun, first, "first")
    second = make_bundle()
    add_userns(second.config)
    with_ns(second.config, "network", f"/proc/{pid1}/ns/net")
    cid = seerun.id("second")
    seerun.cmd("create", "--bundle", second.write(), cid, check=True)
    pid2 = seerun.state(cid)["pid"]
    assert ns_inode(pid2, "network") == ns_inode(pid1, "network")
    assert ns_inode(pid2, "user") != host_ns("user")
    with open(f"/proc/{pid2}/uid_map") as f:
        assert f.read().split() == ["0", str(HOST_BASE), "65536"]
    # The namespaces the container made are owned by its user namespace (made after it, so
    # that its root has power over them); the joined network namespace keeps its owner.
    for kind in ("mount", "pid", "ipc", "uts", "cgroup"):
        assert owner_userns(pid2, kind) == ns_inode(pid2, "user"), kind
    assert owner_userns(pid2, "network") == host_ns("user")


def test_devices_in_a_user_namespace_are_the_hosts_nodes_bind_mounted(seerun, bundle):
    add_userns(bundle.config)
    bundle.linux["devices"] = [{"type": "c", "path": "/dev/null", "major": 1, "minor": 3,
                                "fileMode": 0o600, "uid": 1000, "gid": 1000},
                               {"type": "c", "path": "/dev/kmsg", "major": 1, "minor": 11,
                                "fileMode": 0o600, "uid": 5, "gid": 5}]
    host = {p: os.stat(p) for p in ("/dev/null", "/dev/zero", "/dev/kmsg")}
    bundle.shell("stat -c '%t:%T %F' /dev/null /dev/zero /dev/kmsg; "
                 "mknod /dev/made c 1 3 2>/dev/null && echo mknod-worked || echo mknod-refused; "
                 "echo x > /dev/null && echo null-writable")
    out = ok(run(seerun, bundle)).splitlines()
    assert out[:3] == ["1:3 character special file", "1:5 character special file",
                       "1:b character special file"]
    assert out[3] == "mknod-refused"
    assert out[4] == "null-writable"
    # The host's nodes keep their owner and mode.
    for path, before in host.items():
        after = os.stat(path)
        assert (after.st_mode, after.st_uid, after.st_gid) == \
            (before.st_mode, before.st_uid, before.st_gid), path


# --- sysctls ----------------------------------------------------------------------------------

def test_namespaced_sysctls_are_set_inside_and_not_on_the_host(seerun, bundle):
    with open("/proc/sys/net/ipv4/ip_forward") as f:
        host_forward = f.read().strip()
    with open("/proc/sys/kernel/shmmni") as f:
        host_shmmni = f.read().strip()
    want_forward = "0" if host_forward == "1" else "1"
    bundle.linux["sysctl"] = {"net.ipv4.ip_forward": want_forward, "kernel.shmmni": "1234",
                              "kernel.msgmax": "9000"}
    bundle.shell("cat /proc/sys/net/ipv4/ip_forward /proc/sys/kernel/shmmni "
                 "/proc/sys/kernel/msgmax")
    assert ok(run(seerun, bundle)).split() == [want_forward, "1234", "9000"]
    with open("/proc/sys/net/ipv4/ip_forward") as f:
        assert f.read().strip() == host_forward
    with open("/proc/sys/kernel/shmmni") as f:
        assert f.read().strip() == host_shmmni


def test_a_sysctl_of_a_joined_network_namespace_is_seen_by_its_owner(seerun, make_bundle):
    first = make_bundle()
    pid1 = start_sleeper(seerun, first, "first")

    def ttl_in_first():
        # /proc/sys/net shows the network namespace of the reader: read it from inside.
        return subprocess.run(["nsenter", f"--net=/proc/{pid1}/ns/net", "cat",
                               "/proc/sys/net/ipv4/ip_default_ttl"], check=True,
                              capture_output=True, text=True).stdout.strip()
    assert ttl_in_first() == "64"
    second = make_bundle()
    with_ns(second.config, "network", f"/proc/{pid1}/ns/net")
    second.linux["sysctl"] = {"net.ipv4.ip_default_ttl": "99"}
    ok(run(seerun, second, "second"))
    assert ttl_in_first() == "99"
    with open("/proc/sys/net/ipv4/ip_default_ttl") as f:
        assert f.read().strip() != "99"


def test_hostname_is_refused_in_the_runtimes_own_uts_namespace(seerun, bundle):
    # Joined by path, the runtime's uts namespace is the host's: setting the name would rename
    # the host.  (The test asks for the name the host already has, so that a runtime with the
    # bug fails the test without renaming anything.)
    with_ns(bundle.config, "uts", "/proc/self/ns/uts")
    bundle.config["hostname"] = os.uname().nodename
    cid = seerun.id()
    r = seerun.cmd("create", "--bundle", bundle.write(), cid)
    assert r.returncode == 1
    assert "hostname: the uts namespace `/proc/self/ns/uts` is the runtime's own" in r.stderr, \
        r.stderr
    assert not os.path.exists(os.path.join(seerun.root, cid))


def test_an_unknown_sysctl_fails_create_naming_the_key(seerun, bundle):
    bundle.linux["sysctl"] = {"net.ipv4.no_such_knob": "1"}
    cid = seerun.id()
    r = seerun.cmd("create", "--bundle", bundle.write(), cid)
    assert r.returncode == 1
    assert "linux.sysctl" in r.stderr and "net.ipv4.no_such_knob" in r.stderr, r.stderr
    assert not os.path.exists(os.path.join(seerun.root, cid))
