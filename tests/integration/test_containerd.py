"""seerun under containerd (Debian 12's containerd 1.6, runc shim v2), driven with ctr.

The module starts its own containerd: its own config (contrib/containerd/config.toml over a
version 2 file with private paths), root, state and socket, and a namespace of its own (which is
also its containers' cgroup parent). ctr picks the runtime per container with --runc-binary; the
shim then calls `seerun --root ROOT/NS --log BUNDLE/log.json --log-format json VERB ...`.
At the end it stops containerd and removes every container, cgroup, mount and file it made.

Run: SEERUN_BINARY=$PWD/build/seerun /usr/bin/python3 -m pytest -m engines tests/integration
"""
import json
import os
import shutil

import pytest

import engines
from engines import BUSYBOX_IMAGE, DEBIAN_IMAGE, run

pytestmark = [pytest.mark.engines,
              engines.skip_unless_installed("containerd", "ctr", "containerd-shim-runc-v2")]

CONTRIB_CONF = os.path.join(engines.TOP, "contrib", "containerd", "config.toml")
RUNTIMECLASS = os.path.join(engines.TOP, "contrib", "kubernetes", "runtimeclass.yaml")
CRI = "io.containerd.grpc.v1.cri"
# Plugins that this containerd does not need: CRI (no kubelet here; it would also watch the
# host's CNI directories) and the snapshotters and tracing that would probe the host.
DISABLED_PLUGINS = [CRI, "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs",
                    "io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.devmapper",
                    "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]


def private_config(sandbox):
    """Version 2, the contrib runtime handler, and every path in the sandbox."""
    return engines.deep_merge({"version": 2}, engines.deep_merge(
        engines.load_toml(CONTRIB_CONF), {
            "root": sandbox.mkdir("root"),
            "state": sandbox.mkdir("state"),
            "disabled_plugins": DISABLED_PLUGINS,
            "grpc": {"address": sandbox.path("containerd.sock")},
            "ttrpc": {"address": sandbox.path("containerd.sock.ttrpc")},
            "debug": {"address": ""},
            "metrics": {"address": ""},
            "plugins": {"io.containerd.internal.v1.opt": {"path": sandbox.mkdir("opt")}},
        }))


class Containerd:
    def __init__(self, sandbox):
        self.sandbox = sandbox
        self.namespace = sandbox.tag
        self.address = sandbox.path("containerd.sock")
        self.seerun_root = sandbox.mkdir("seerun-root")
        self.fifo_dir = sandbox.mkdir("fifo")
        self.config = engines.write_file(sandbox.path("config.toml"),
                                         engines.toml_dumps(private_config(sandbox)))
        self.daemon = engines.Daemon("containerd", ["containerd", "--config", self.config],
                                     sandbox.path("containerd.log"))

    def start(self):
        self.daemon.start(lambda: os.path.exists(self.address) and
                          self.ctr("version", check=False).returncode == 0)

    def ctr(self, *args, check=True, timeout=120, input=None):
        # In the sandbox's directory: ctr leaves files named after containers in its cwd.
        return run(["ctr", "--address", self.address, "--namespace", self.namespace, *args],
                   check=check, timeout=timeout, input=input, cwd=self.seerun_root)

    def run_ctr(self, *args, **kw):
        """`ctr run` with seerun as the shim's runtime binary, its state in the sandbox."""
        return self.ctr("run", "--runc-binary", engines.SEERUN, "--runc-root", self.seerun_root,
                        "--fifo-dir", self.fifo_dir, *args, **kw)

    def seerun_ids(self):
        return engines.seerun_state_ids(os.path.join(self.seerun_root, self.namespace))

    def task_status(self, cid):
        for line in self.ctr("task", "ls").stdout.splitlines()[1:]:
            fields = line.split()
            if fields and fields[0] == cid:
                return fields[2]
        return None

    def remove_everything(self):
        for line in self.ctr("task", "ls", "-q", check=False).stdout.split():
            self.ctr("task", "kill", "--signal", "SIGKILL", line, check=False)
            self.ctr("task", "delete", "--force", line, check=False)
        for cid in self.ctr("container", "ls", "-q", check=False).stdout.split():
            self.ctr("container", "delete", cid, check=False)


@pytest.fixture(scope="module")
def containerd():
    sandbox = engines.Sandbox("/tmp", "containerd")
    # The runc shim v2 puts its sockets in /run/containerd/s whatever the state directory is;
    # ctr's default FIFO directory is /run/containerd/fifo.
    footprint = engines.Footprint(["/run/containerd/s", "/run/containerd/fifo", "/run/containerd"])
    c = None
    try:
        c = Containerd(sandbox)
        c.start()
        c.images = engines.Images(sandbox.mkdir("images"))
        c.ctr("images", "import", c.images.busybox, timeout=300)
        yield c
    finally:
        problems = []
        if c is not None:
            c.remove_everything()
            left = c.seerun_ids() if os.path.isdir(c.seerun_root) else set()
            if left:
                problems.append(f"seerun state left by containerd: {sorted(left)}")
                engines.delete_seerun_state(left, os.path.join(c.seerun_root, c.namespace))
            c.daemon.stop()
        problems += sandbox.remove(cgroup_parents=[sandbox.tag])
        problems += footprint.clean()
        assert not problems, "containerd tests left behind:\n" + "\n".join(problems)


def shim_log(c, cid):
    path = os.path.join(c.sandbox.path("state"), "io.containerd.runtime.v2.task", c.namespace,
                        cid, "log.json")
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


# ---------------------------------------------------------------------------------------------


def test_contrib_config_handler():
    """contrib/containerd/config.toml: appended to Debian's /etc/containerd/config.toml it is
    valid, and containerd reads the handler from it."""
    with open(CONTRIB_CONF) as f:
        contrib = f.read()
    base = "version = 2\n"
    if os.path.exists("/etc/containerd/config.toml"):
        with open("/etc/containerd/config.toml") as f:
            base = f.read()
    scratch = engines.Sandbox("/tmp", "containerd-conf")
    try:
        conf = engines.write_file(scratch.path("config.toml"), base + "\n" + contrib)
        engines.load_toml(conf)  # valid TOML, no table defined twice
        r = run(["containerd", "--config", conf, "config", "dump"])
        dumped = engines.tomllib_loads(r.stdout)
    finally:
        scratch.remove()
    handler = dumped["plugins"][CRI]["containerd"]["runtimes"]["seerun"]
    assert handler["runtime_type"] == "io.containerd.runc.v2"
    assert os.path.basename(handler["options"]["BinaryName"]) == "seerun"
    assert handler["options"]["Root"] == "/run/containerd/seerun"


def test_runtimeclass_manifest():
    yaml = pytest.importorskip("yaml")
    with open(RUNTIMECLASS) as f:
        rc = yaml.safe_load(f)
    assert rc["apiVersion"] == "node.k8s.io/v1" and rc["kind"] == "RuntimeClass"
    # The handler is the CRI runtime name of the containerd configuration.
    runtimes = engines.load_toml(CONTRIB_CONF)["plugins"][CRI]["containerd"]["runtimes"]
    assert rc["handler"] in runtimes


def test_run_foreground(containerd):
    r = containerd.run_ctr("--rm", BUSYBOX_IMAGE, "fg", "sh", "-c",
                           "echo out; echo err >&2; exit 5", check=False)
    assert r.returncode == 5, r.stderr
    assert r.stdout == "out\n"
    assert "err" in r.stderr
    assert "fg" not in containerd.seerun_ids()
    assert containerd.run_ctr("--rm", BUSYBOX_IMAGE, "fg2", "true").returncode == 0


def test_run_tty(containerd):
    script = shutil.which("script")
    if script is None:
        pytest.skip("script(1) (bsdutils) is needed to give ctr a terminal")
    cmd = (f"ctr --address {containerd.address} --namespace {containerd.namespace} run --rm -t "
           f"--runc-binary {engines.SEERUN} --runc-root {containerd.seerun_root} "
           f"--fifo-dir {containerd.fifo_dir} {BUSYBOX_IMAGE} tty sh -c '{engines.TTY_SCRIPT}'")
    r = run([script, "-qec", f"stty rows 30 cols 100; {cmd}", "/dev/null"])
    # ctr (with runc as well) echoes a NUL into the terminal first: "^@".
    out = r.stdout.replace("\r", "").replace("^@", "")
    lines = [l.strip() for l in out.splitlines() if l.strip()]
    assert lines == ["/dev/pts/0", "30 100"], r.stdout


def test_detached_exec_kill_delete(containerd):
    log = containerd.sandbox.path("detached.log")
    containerd.run_ctr("-d", "--log-uri", f"file://{log}", BUSYBOX_IMAGE, "det", "sh", "-c",
                       "trap 'echo got-term; exit 3' TERM; echo up; while :; do sleep 0.1; done")
    try:
        engines.wait_for(lambda: os.path.exists(log) and "up" in open(log).read(), what="up")
        assert containerd.task_status("det") == "RUNNING"
        assert "det" in containerd.seerun_ids()
        state = json.loads(run([engines.SEERUN, "--root",
                                os.path.join(containerd.seerun_root, containerd.namespace),
                                "state", "det"]).stdout)
        assert state["status"] == "running"
        # The task's cgroup is ctr's default, /NAMESPACE/ID.
        with open(f"/proc/{state['pid']}/cgroup") as f:
            assert f"/{containerd.namespace}/det" in f.read()

        # exec: output, exit code, user and working directory, stdin.
        r = containerd.ctr("task", "exec", "--fifo-dir", containerd.fifo_dir, "--exec-id", "e1",
                           "det", "sh", "-c", "echo in-exec; exit 4", check=False)
        assert (r.returncode, r.stdout) == (4, "in-exec\n"), r.stderr
        r = containerd.ctr("task", "exec", "--fifo-dir", containerd.fifo_dir, "--exec-id", "e2",
                           "--user", "1000", "--cwd", "/tmp", "det", "sh", "-c", "id -u; pwd")
        assert r.stdout.split() == ["1000", "/tmp"]
        # In every namespace of the init, its user namespace too.
        r = containerd.ctr("task", "exec", "--fifo-dir", containerd.fifo_dir, "--exec-id", "ns",
                           "det", "sh", "-c", engines.OWN_NAMESPACES_SCRIPT)
        assert engines.namespaces_not_shared(r.stdout, state["pid"]) == [], r.stdout
        # ps lists the init and the exec'd process while it runs.
        containerd.ctr("task", "exec", "-d", "--fifo-dir", containerd.fifo_dir, "--exec-id", "e3",
                       "det", "sleep", "30")
        engines.wait_for(lambda: len(containerd.ctr("task", "ps", "det").stdout.split("\n")[1:])
                         >= 2 and "sleep 30" in procs_of(containerd, "det"), what="ps")

        # pause / resume
        containerd.ctr("task", "pause", "det")
        assert containerd.task_status("det") == "PAUSED"
        containerd.ctr("task", "resume", "det")
        assert containerd.task_status("det") == "RUNNING"

        # kill: SIGTERM reaches the trap; the exit status is the task's.
        containerd.ctr("task", "kill", "det")
        engines.wait_for(lambda: containerd.task_status("det") == "STOPPED", what="STOPPED")
        assert open(log).read().split() == ["up", "got-term"]
        r = containerd.ctr("task", "delete", "det")
        assert "exit code 3" in r.stderr, r.stderr
        assert "det" not in containerd.seerun_ids()
        containerd.ctr("container", "delete", "det")
    finally:
        containerd.ctr("task", "delete", "--force", "det", check=False)
        containerd.ctr("container", "delete", "det", check=False)
    assert not engines.cgroup_paths(f"{containerd.namespace}/det")


def procs_of(containerd, cid):
    """The command lines of the task's processes (`ctr task ps` gives host pids)."""
    out = []
    for line in containerd.ctr("task", "ps", cid).stdout.splitlines()[1:]:
        pid = line.split()[0]
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                out.append(f.read().replace(b"\0", b" ").decode().strip())
        except OSError:
            pass
    return out


def test_kill_sigkill_and_delete_force(containerd):
    containerd.run_ctr("-d", BUSYBOX_IMAGE, "k9", "sleep", "300")
    engines.wait_for(lambda: containerd.task_status("k9") == "RUNNING", what="RUNNING")
    containerd.ctr("task", "kill", "--signal", "SIGKILL", "k9")
    engines.wait_for(lambda: containerd.task_status("k9") == "STOPPED", what="STOPPED")
    r = containerd.ctr("task", "delete", "k9")
    assert "exit code 137" in r.stderr, r.stderr
    containerd.ctr("container", "delete", "k9")
    # delete --force of a running task.
    containerd.run_ctr("-d", BUSYBOX_IMAGE, "kf", "sleep", "300")
    engines.wait_for(lambda: containerd.task_status("kf") == "RUNNING", what="RUNNING")
    containerd.ctr("task", "delete", "--force", "kf")
    containerd.ctr("container", "delete", "kf")
    assert not {"k9", "kf"} & containerd.seerun_ids()


def test_memory_limit(containerd):
    """ctr's spec mounts no cgroup filesystem in the container: the limit is read on the host,
    and its enforcement seen from inside (an OOM kill: 128 + 9)."""
    containerd.run_ctr("-d", "--memory-limit", str(32 << 20), BUSYBOX_IMAGE, "mem", "sleep", "300")
    try:
        engines.wait_for(lambda: containerd.task_status("mem") == "RUNNING", what="RUNNING")
        limits = []
        for d in engines.cgroup_paths(f"{containerd.namespace}/mem"):
            for name in ("memory.limit_in_bytes", "memory.max"):
                if os.path.exists(os.path.join(d, name)):
                    with open(os.path.join(d, name)) as f:
                        limits.append(f.read().strip())
        assert str(32 << 20) in limits, limits
    finally:
        containerd.ctr("task", "kill", "--signal", "SIGKILL", "mem", check=False)
        engines.wait_for(lambda: containerd.task_status("mem") in ("STOPPED", None), what="stop")
        containerd.ctr("task", "delete", "mem", check=False)
        containerd.ctr("container", "delete", "mem", check=False)
    r = containerd.run_ctr("--rm", "--memory-limit", str(32 << 20), BUSYBOX_IMAGE, "oom", "sh",
                           "-c", "x=$(head -c 100000000 /dev/zero | tr '\\0' a); echo ${#x}",
                           check=False)
    assert r.returncode == 137, (r.stdout, r.stderr)


def test_runtime_error_reaches_ctr(containerd):
    """The shim reads the failure from seerun's JSON log (--log BUNDLE/log.json)."""
    r = containerd.run_ctr("--rm", BUSYBOX_IMAGE, "bad", "/no/such/command", check=False)
    assert r.returncode != 0
    assert "/no/such/command" in r.stderr, r.stderr
    containerd.ctr("container", "delete", "bad", check=False)


def test_debian_image(containerd):
    containerd.ctr("images", "import", containerd.images.debian, timeout=600)
    r = containerd.run_ctr("--rm", DEBIAN_IMAGE, "deb", "python3", "-c",
                           "import sys, os; print(sys.version_info[0], os.getuid())")
    assert r.stdout.split() == ["3", "0"]
    containerd.run_ctr("-d", DEBIAN_IMAGE, "deb2", "sleep", "300")
    try:
        engines.wait_for(lambda: containerd.task_status("deb2") == "RUNNING", what="RUNNING")
        # (The file goes to the tmpfs /tmp: the default policy makes the root read-only.)
        r = containerd.ctr("task", "exec", "--fifo-dir", containerd.fifo_dir, "--exec-id", "u",
                           "--user", "user", "--cwd", "/home/user", "deb2", "python3", "-c",
                           "import os, pwd; open('/tmp/f', 'w').write('x'); "
                           "print(pwd.getpwuid(os.getuid()).pw_name, os.getcwd(), "
                           "os.stat('/tmp/f').st_uid)")
        assert r.stdout.split() == ["user", "/home/user", "1000"]
    finally:
        containerd.ctr("task", "kill", "--signal", "SIGKILL", "deb2", check=False)
        engines.wait_for(lambda: containerd.task_status("deb2") in ("STOPPED", None),
                         what="STOPPED")
        containerd.ctr("task", "delete", "deb2", check=False)
        containerd.ctr("container", "delete", "deb2", check=False)


@pytest.mark.skipif(not engines.builtin_policy(), reason="an operator policy is installed")
def test_default_policy_applies(containerd):
    r = containerd.run_ctr("--rm", BUSYBOX_IMAGE, "pol", "sh", "-c", engines.POLICY_PROBE_SCRIPT)
    engines.assert_default_policy(r.stdout, "run")
    # The host's network is replaced by a namespace with loopback only (network.allowHost).
    r = containerd.run_ctr("--rm", "--net-host", BUSYBOX_IMAGE, "polnet", "ls", "/sys/class/net")
    assert r.stdout.split() == ["lo"]
    containerd.run_ctr("-d", BUSYBOX_IMAGE, "pol2", "sleep", "300")
    try:
        engines.wait_for(lambda: containerd.task_status("pol2") == "RUNNING", what="RUNNING")
        r = containerd.ctr("task", "exec", "--fifo-dir", containerd.fifo_dir, "--exec-id", "p",
                           "pol2", "sh", "-c", engines.POLICY_PROBE_SCRIPT)
        engines.assert_default_policy(r.stdout, "exec")
    finally:
        containerd.ctr("task", "kill", "--signal", "SIGKILL", "pol2", check=False)
        engines.wait_for(lambda: containerd.task_status("pol2") in ("STOPPED", None),
                         what="STOPPED")
        containerd.ctr("task", "delete", "pol2", check=False)
        containerd.ctr("container", "delete", "pol2", check=False)


@pytest.mark.skipif(not engines.builtin_policy(), reason="an operator policy is installed")
def test_egress_proxy_by_annotation(containerd):
    """ctr's --annotation io.seerun.network=proxy: seerun's egress proxy inside, refusing the
    host the built-in default profile does not list, and ctr returns (the supervisor holds
    none of the shim's descriptors)."""
    r = containerd.run_ctr("--rm", "--annotation", "io.seerun.network=proxy", BUSYBOX_IMAGE,
                           "egress", "sh", "-c", "echo $http_proxy; wget -q -O - http://example.test/ 2>&1 | tail -1; printf 'GET http://example.test/ HTTP/1.0\\r\\n\\r\\n' | nc 127.0.0.1 3128 | tail -1")
    lines = r.stdout.splitlines()
    assert lines[0] == "http://127.0.0.1:3128", r.stdout
    assert "403 Forbidden" in lines[1], r.stdout
    assert lines[2] == ('seerun: egress to example.test:80 denied by profile "default" '
                        "(network.egress.allow)"), r.stdout


def test_nothing_left_behind(containerd):
    containerd.remove_everything()
    assert not containerd.seerun_ids()
    held = engines.userns_ranges_held(prefix=containerd.seerun_root + "/")
    assert not held, f"user namespace ranges still held: {held}"
    leftovers = [d for top in engines.cgroup_paths(containerd.namespace) for d in os.listdir(top)
                 if os.path.isdir(os.path.join(top, d))]
    assert not leftovers
