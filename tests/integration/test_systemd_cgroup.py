"""--systemd-cgroup against systemd's D-Bus API.  This machine has no systemd, so the tests run
a private dbus-daemon with a stand-in manager (helpers/fake_systemd.py) that answers
StartTransientUnit and StopUnit with systemd's signatures and moves the pids as systemd does;
seerun runs in a private mount namespace where /run/systemd/system exists, with
DBUS_SYSTEM_BUS_ADDRESS pointing at that bus.  What they show: the messages seerun builds are
what systemd accepts (name, mode, the properties and their types), the container ends up in the
scope with its resources written there, delete stops the unit, and a failing bus leaves
nothing behind."""
import json
import os
import shutil
import subprocess
import tempfile

import pytest

from conftest import SEERUN, wait_for

HELPER = os.path.join(os.path.dirname(__file__), "helpers", "fake_systemd.py")
BUS_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>custom</type>
  <listen>unix:path={socket}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
"""
# /run/systemd/system is how seerun (like sd_booted()) tells that systemd runs: made in a
# private mount namespace over a fresh /run, so the host's /run is untouched.
AS_IF_SYSTEMD = ('mount -t tmpfs -o mode=755 seerun-test /run && mkdir -p /run/systemd/system '
                 '&& exec "$@"')

pytestmark = pytest.mark.skipif(shutil.which("dbus-daemon") is None,
                                reason="dbus-daemon is not installed (contrib/setup.sh)")


class Bus:
    """A private bus, and optionally the stand-in manager on it."""

    def __init__(self, tmp_path):
        self.dir = tmp_path / "dbus"
        self.dir.mkdir()
        self.socket = self.dir / "bus"
        self.address = f"unix:path={self.socket}"
        self.log = self.dir / "calls.jsonl"
        conf = self.dir / "bus.conf"
        conf.write_text(BUS_CONFIG.format(socket=self.socket))
        self.daemon = subprocess.Popen(["dbus-daemon", "--nofork", f"--config-file={conf}"],
                                       stdin=subprocess.DEVNULL)
        self.manager = None
        wait_for(self.socket.exists, what="the bus socket")

    def start_manager(self):
        self.manager = subprocess.Popen(["/usr/bin/python3", HELPER, self.address,
                                         str(self.log)], stdout=subprocess.PIPE, text=True,
                                        stdin=subprocess.DEVNULL)
        assert self.manager.stdout.readline().strip() == "ready"

    def calls(self):
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines()]

    def stop(self):
        for p in (self.manager, self.daemon):
            if p is not None and p.poll() is None:
                p.terminate()
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        if self.manager is not None:
            self.manager.stdout.close()


def cgroup_mounts():
    out = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            fields = line.split()
            if fields[fields.index("-") + 1] in ("cgroup", "cgroup2"):
                out.append(fields[4])
    return out


def remove_tree(path):
    """What a failed test left of the slice: innermost directories first."""
    for mount in cgroup_mounts():
        base = mount + path
        if not os.path.isdir(base):
            continue
        for d, _, _ in sorted(os.walk(base), key=lambda t: -t[0].count("/")):
            try:
                os.rmdir(d)
            except OSError:
                pass


def sd(seerun, bus, *args, timeout=60):
    """seerun --systemd-cgroup ARGS, as on a systemd host whose bus is ours."""
    env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=bus.address)
    argv = ["unshare", "-m", "--propagation", "private", "sh", "-c", AS_IF_SYSTEMD, "sh", SEERUN,
            *seerun.global_args, "--systemd-cgroup", *args]
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        p = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err, text=True,
                           env=env, timeout=timeout)
        out.seek(0)
        err.seek(0)
        return subprocess.CompletedProcess(argv, p.returncode, out.read(), err.read())


@pytest.fixture
def bus(tmp_path, seerun):
    b = Bus(tmp_path)
    yield b
    for cid in sorted(seerun.created):
        if os.path.isdir(os.path.join(seerun.root, cid)):
            sd(seerun, b, "delete", "--force", cid)
    b.stop()
    remove_tree(f"/{seerun.prefix}.slice")


def slice_of(seerun):
    return f"{seerun.prefix}.slice"


def test_create_asks_systemd_for_a_delegated_scope_and_writes_the_limits_in_it(
        seerun, bundle, bus):
    bus.start_manager()
    cid = seerun.id()
    unit = f"{seerun.prefix}-{cid}.scope"
    bundle.linux["cgroupsPath"] = f"{slice_of(seerun)}:{seerun.prefix}:{cid}"
    bundle.linux["resources"] = {"memory": {"limit": 64 << 20}, "pids": {"limit": 42}}
    bundle.args("sleep", "100")
    r = sd(seerun, bus, "create", "--bundle", bundle.write(), cid)
    assert r.returncode == 0, r.stderr
    pid = seerun.state(cid)["pid"]

    start = [c for c in bus.calls() if c["method"] == "StartTransientUnit"]
    assert len(start) == 1, bus.calls()
    call = start[0]
    assert call["name"] == unit and call["mode"] == "fail"
    props = call["properties"]
    assert props["Slice"] == slice_of(seerun)
    assert props["Delegate"] is True and props["DefaultDependencies"] is False
    assert props["MemoryAccounting"] and props["CPUAccounting"] and props["TasksAccounting"]
    assert len(props["PIDs"]) == 1
    assert cid in props["Description"]

    # The container's init is in the scope systemd made, and seerun wrote the limits there.
    path = f"/{slice_of(seerun)}/{unit}"
    with open(f"/proc/{pid}/cgroup") as f:
        cgroups = f.read()
    assert f"memory:{path}\n" in cgroups and f"pids:{path}\n" in cgroups, cgroups
    with open(f"/sys/fs/cgroup/memory{path}/memory.limit_in_bytes") as f:
        assert int(f.read()) == 64 << 20
    with open(f"/sys/fs/cgroup/pids{path}/pids.max") as f:
        assert f.read().strip() == "42"
    # Hierarchies systemd leaves alone on v1 are seerun's to make and join (pause needs the
    # freezer), as runc does.
    for controller in ("freezer", "cpuset"):
        if os.path.isdir(f"/sys/fs/cgroup/{controller}"):
            assert f"{controller}:{path}\n" in cgroups, cgroups
    r = sd(seerun, bus, "start", cid)
    assert r.returncode == 0, r.stderr
    r = sd(seerun, bus, "pause", cid)
    assert r.returncode == 0, r.stderr
    assert seerun.state(cid)["status"] == "paused"
    r = sd(seerun, bus, "resume", cid)
    assert r.returncode == 0, r.stderr

    r = sd(seerun, bus, "delete", "--force", cid)
    assert r.returncode == 0, r.stderr
    stops = [c for c in bus.calls() if c["method"] == "StopUnit"]
    assert stops == [{"method": "StopUnit", "name": unit, "mode": "replace"}]
    for mount in cgroup_mounts():
        assert not os.path.exists(mount + path), mount + path
    assert not os.path.exists(f"/proc/{pid}") or open(f"/proc/{pid}/stat").read().split()[2] == "Z"
    assert seerun.list_ids() == []


def test_a_bus_without_systemd_fails_the_create_and_leaves_nothing(seerun, bundle, bus):
    # The bus is there, systemd's name is not: the call fails as it would with systemd down.
    cid = seerun.id()
    unit = f"{seerun.prefix}-{cid}.scope"
    bundle.linux["cgroupsPath"] = f"{slice_of(seerun)}:{seerun.prefix}:{cid}"
    r = sd(seerun, bus, "create", "--bundle", bundle.write(), cid)
    assert r.returncode != 0
    assert f"systemd: start {unit}" in r.stderr, r.stderr
    assert "org.freedesktop.systemd1" in r.stderr, r.stderr
    assert seerun.list_ids() == []
    assert not os.path.exists(os.path.join(seerun.root, cid))


def test_without_systemd_the_flag_is_refused_before_anything_is_made(seerun, bundle, tmp_path):
    if os.path.exists("/run/systemd/system"):
        pytest.skip("systemd runs on this host")
    cid = seerun.id()
    r = seerun.cmd("--systemd-cgroup", "create", "--bundle", bundle.write(), cid)
    assert r.returncode != 0
    assert "systemd is not running" in r.stderr, r.stderr
    assert seerun.list_ids() == []
