"""seerun under podman (Debian 12's podman 4.3, rootful, cgroupfs manager, no systemd).

The module starts podman with its own storage (--root, --runroot), its own containers.conf
(contrib/podman/containers.conf with this machine's settings over it) and storage.conf, and a
cgroup parent of its own; at the end it removes every container, cgroup, mount and file it made.

Podman calls the runtime without --root (conmon: `--log-format=json --log FILE create --bundle ...
--pid-file ... ID`; podman: `start ID`, `kill ID SIG`, `pause`, `resume`, `delete --force ID`,
`exec`, and `state ID` when a kill fails), so its containers live in seerun's default root,
/run/seerun, which other users share: the module records every container id podman used (its
events log) and deletes only those that are left there.

Run: SEERUN_BINARY=$PWD/build/seerun /usr/bin/python3 -m pytest -m engines tests/integration
"""
import json
import os
import resource
import shutil

import pytest

import engines
from conftest import wait_for_host_ticks
from engines import BUSYBOX_IMAGE, DEBIAN_IMAGE, run

pytestmark = [pytest.mark.engines, engines.skip_unless_installed("podman", "conmon")]

CONTRIB_CONF = os.path.join(engines.TOP, "contrib", "podman", "containers.conf")
# Podman 4.3 lowers its own RLIMIT_NPROC to 32768 at start-up: the runtime inherits that.
PODMAN_NPROC = 32768


class Podman:
    def __init__(self, sandbox):
        self.sandbox = sandbox
        self.root = sandbox.mkdir("root")
        self.runroot = sandbox.mkdir("runroot")
        self.events = sandbox.path("events.log")
        self.cgroup_parent = "/" + sandbox.tag
        # Podman names a runtime given by path after the file: the name must be "seerun" for
        # runtime_supports_json to match.
        self.runtime = engines.SEERUN
        if os.path.basename(self.runtime) != "seerun":
            self.runtime = os.path.join(sandbox.mkdir("bin"), "seerun")
            os.symlink(engines.SEERUN, self.runtime)
        nofile = engines.hard_limit(resource.RLIMIT_NOFILE)
        nproc = min(engines.hard_limit(resource.RLIMIT_NPROC), PODMAN_NPROC)
        conf = engines.deep_merge(engines.load_toml(CONTRIB_CONF), {
            "containers": {
                # No process here may raise a hard limit (no CAP_SYS_RESOURCE).
                "default_ulimits": [f"nofile={nofile}:{nofile}", f"nproc={nproc}:{nproc}"],
                # Podman's default bridge network would add a bridge, firewall rules and
                # ip_forward to the host: containers get no network unless a test asks.
                "netns": "none",
            },
            "network": {"network_config_dir": sandbox.mkdir("networks")},
            "engine": {
                "cgroup_manager": "cgroupfs",  # pid 1 is not systemd
                "events_logger": "file",       # no journald
                "events_logfile_path": self.events,
                "tmp_dir": sandbox.mkdir("tmp"),
                "volume_path": sandbox.mkdir("volumes"),
                "runtimes": {"seerun": [self.runtime]},
            },
        })
        self.conf = engines.write_file(sandbox.path("containers.conf"), engines.toml_dumps(conf))
        self.storage_conf = engines.write_file(sandbox.path("storage.conf"), engines.toml_dumps(
            {"storage": {"driver": "overlay", "graphroot": self.root, "runroot": self.runroot}}))
        self.env = dict(os.environ, CONTAINERS_CONF=self.conf,
                        CONTAINERS_STORAGE_CONF=self.storage_conf,
                        TMPDIR=sandbox.mkdir("tmp"))
        self.base = ["podman", "--root", self.root, "--runroot", self.runroot,
                     f"--runtime={self.runtime}"]
        # conmon leaves files (an "oom" marker) in the cwd it inherits: the sandbox's, not ours.
        self.cwd = sandbox.mkdir("cwd")

    def __call__(self, *args, check=True, timeout=120, input=None):
        return run([*self.base, *args], check=check, timeout=timeout, input=input, env=self.env,
                   cwd=self.cwd)

    def run(self, *args, **kw):
        """`podman run` with this module's cgroup parent."""
        return self("run", f"--cgroup-parent={self.cgroup_parent}", *args, **kw)

    def inspect(self, name, fmt):
        return self("inspect", "--format", fmt, name).stdout.strip()

    def container_ids(self):
        """Every container id that podman used in this module, from its events log."""
        ids = set()
        try:
            with open(self.events) as f:
                for line in f:
                    try:
                        ev = json.loads(line)
                    except ValueError:
                        continue
                    if ev.get("Type") == "container" and ev.get("ID"):
                        ids.add(ev["ID"])
        except FileNotFoundError:
            pass
        r = self("ps", "-a", "--no-trunc", "-q", check=False)
        return ids | set(r.stdout.split())


@pytest.fixture(scope="module")
def podman():
    sandbox = engines.Sandbox("/tmp", "podman")
    footprint = engines.Footprint([
        "/var/lib/containers/cache/blob-info-cache-v1.boltdb", "/var/lib/containers/cache",
        "/var/lib/containers", "/run/containers/networks", "/run/containers",
        "/etc/containers/networks", "/run/libpod", engines.SEERUN_DEFAULT_ROOT])
    p = None
    try:
        p = Podman(sandbox)
        images = engines.Images(sandbox.mkdir("images"))
        p.images = images
        p("load", "-i", images.busybox, timeout=300)
        yield p
    finally:
        problems = []
        ids = set()
        if p is not None:
            p("rm", "--all", "--force", "--time", "0", check=False, timeout=300)
            ids = p.container_ids()
            left = ids & engines.seerun_state_ids()
            if left:
                problems.append(f"seerun state left by podman in /run/seerun: {sorted(left)}")
                problems += [f"seerun state could not be deleted: {c}"
                             for c in engines.delete_seerun_state(left)]
        problems += sandbox.remove(cgroup_parents=[sandbox.tag])
        problems += footprint.clean()
        assert not problems, "podman tests left behind:\n" + "\n".join(problems)


def seerun_state(cid):
    """`seerun state ID` as podman runs it: without --root."""
    r = run([engines.SEERUN, "state", cid], check=True)
    return json.loads(r.stdout)


# ---------------------------------------------------------------------------------------------


def test_podman_uses_seerun(podman):
    info = json.loads(podman("info", "--format", "json").stdout)
    # A runtime given by path is named by its path; its file name selects the JSON log.
    assert os.path.basename(info["host"]["ociRuntime"]["name"]) == "seerun"
    assert os.path.realpath(info["host"]["ociRuntime"]["path"]) == os.path.realpath(engines.SEERUN)
    assert info["host"]["cgroupManager"] == "cgroupfs"


def test_run_foreground_output_and_exit_code(podman):
    r = podman.run("--rm", BUSYBOX_IMAGE, "sh", "-c", "echo out; echo err >&2; id -u; exit 3",
                   check=False)
    assert r.returncode == 3, r.stderr
    assert r.stdout.split() == ["out", "0"]
    assert "err" in r.stderr
    r = podman.run("--rm", BUSYBOX_IMAGE, "true")
    assert r.returncode == 0


def test_run_stdin(podman):
    r = podman.run("--rm", "-i", BUSYBOX_IMAGE, "sh", "-c", "tr a-z A-Z", input="hello\n")
    assert r.stdout == "HELLO\n"


def test_runtime_errors_reach_podman(podman):
    """Podman reads the failure from seerun's JSON log (runtime_supports_json: conmon passes
    `--log-format=json --log USERDATA/oci-log`), and maps it to the exit codes of `docker run`:
    127 for a missing command, 126 for one it cannot run."""
    r = podman.run("--name", "badcmd", BUSYBOX_IMAGE, "/no/such/command", check=False)
    assert r.returncode == 127, r.stderr
    assert "seerun" in r.stderr and "/no/such/command" in r.stderr, r.stderr
    cid = podman.inspect("badcmd", "{{.Id}}")
    with open(os.path.join(podman.runroot, "overlay-containers", cid, "userdata", "oci-log")) as f:
        entries = [json.loads(line) for line in f if line.strip()]
    assert any(e.get("level") == "error" and "/no/such/command" in e.get("msg", "")
               for e in entries), entries
    podman("rm", "badcmd")
    r = podman.run("--rm", BUSYBOX_IMAGE, "/etc/passwd", check=False)
    assert r.returncode == 126, r.stderr
    assert "seerun" in r.stderr and "ermission denied" in r.stderr, r.stderr


def test_detached_logs_stop_rm(podman):
    cid = podman.run("-d", "--name", "detached", BUSYBOX_IMAGE, "sh", "-c",
                     "trap 'echo got-term; exit 0' TERM; echo started; "
                     "while :; do sleep 0.1; done").stdout.strip()
    engines.wait_for(lambda: "started" in podman("logs", "detached").stdout, what="first log")
    assert podman.inspect("detached", "{{.State.Status}}") == "running"
    st = seerun_state(cid)
    assert st["status"] == "running"
    assert st["pid"] == int(podman.inspect("detached", "{{.State.Pid}}"))
    podman("stop", "-t", "10", "detached")
    assert podman.inspect("detached", "{{.State.Status}} {{.State.ExitCode}}") == "exited 0"
    assert podman("logs", "detached").stdout.split() == ["started", "got-term"]
    podman("rm", "detached")
    assert cid not in engines.seerun_state_ids()
    assert "detached" not in podman("ps", "-a", "--format", "{{.Names}}").stdout.split()


def test_exec(podman):
    podman.run("-d", "--name", "exec", BUSYBOX_IMAGE, "sleep", "300")
    try:
        r = podman("exec", "exec", "sh", "-c", "echo in-exec; cat /proc/1/cmdline | tr '\\0' ' '")
        assert r.stdout.splitlines() == ["in-exec", "sleep 300 "]
        assert podman("exec", "exec", "sh", "-c", "exit 7", check=False).returncode == 7
        r = podman("exec", "--user", "1000:1000", "--workdir", "/tmp", "--env", "FOO=bar",
                   "exec", "sh", "-c", "id -u; id -g; pwd; echo $FOO")
        assert r.stdout.split() == ["1000", "1000", "/tmp", "bar"]
        r = podman("exec", "-i", "exec", "cat", input="through stdin\n")
        assert r.stdout == "through stdin\n"
        r = podman("exec", "exec", "/no/such/command", check=False)
        assert r.returncode == 127, r.stderr
        # The exec'd process is in every namespace of the container's, its user namespace too.
        r = podman("exec", "exec", "sh", "-c", engines.OWN_NAMESPACES_SCRIPT)
        init = int(podman.inspect("exec", "{{.State.Pid}}"))
        assert engines.namespaces_not_shared(r.stdout, init) == [], r.stdout
    finally:
        podman("rm", "-f", "-t", "0", "exec")


def test_tty(podman):
    """-t: the container's stdio is a terminal of its own, sized like podman's."""
    script = shutil.which("script")
    if script is None:
        pytest.skip("script(1) (bsdutils) is needed to give podman a terminal")
    cmd = " ".join(podman.base) + f" run --rm -t --cgroup-parent={podman.cgroup_parent} " \
        f"{BUSYBOX_IMAGE} sh -c '{engines.TTY_SCRIPT}; test -t 0 && echo stdin-tty'"
    r = run([script, "-qec", f"stty rows 24 cols 80; {cmd}", "/dev/null"], env=podman.env)
    lines = [l.strip() for l in r.stdout.replace("\r", "").splitlines() if l.strip()]
    assert lines == ["/dev/pts/0", "24 80", "stdin-tty"], r.stdout
    # Without a terminal on podman's side, -t still gives the container one.
    r = podman.run("--rm", "-t", BUSYBOX_IMAGE, "tty")
    assert r.stdout.strip() == "/dev/pts/0"


def test_user(podman):
    r = podman.run("--rm", "--user", "1000:1000", BUSYBOX_IMAGE, "sh", "-c",
                   "id -u; id -g; grep CapEff /proc/self/status")
    uid, gid, _, capeff = r.stdout.split()
    assert (uid, gid, capeff) == ("1000", "1000", "0000000000000000")
    r = podman.run("--rm", "--user", "user", BUSYBOX_IMAGE, "id", "-un")
    assert r.stdout.strip() == "user"


def test_read_only(podman):
    r = podman.run("--rm", "--read-only", BUSYBOX_IMAGE, "sh", "-c",
                   "touch /x 2>&1; touch /tmp/ok && echo tmp-writable", check=False)
    assert "Read-only file system" in r.stdout
    assert "tmp-writable" in r.stdout
    r = podman.run("--rm", "--read-only", BUSYBOX_IMAGE, "sh", "-c",
                   "grep ' / ' /proc/self/mounts")
    assert " ro," in r.stdout, r.stdout


def test_network_none(podman):
    r = podman.run("--rm", "--network=none", BUSYBOX_IMAGE, "sh", "-c",
                   "ls /sys/class/net; readlink /proc/self/ns/net")
    links, netns = r.stdout.split()[:-1], r.stdout.split()[-1]
    assert links == ["lo"]
    assert netns != os.readlink("/proc/self/ns/net")


def test_memory_limit(podman):
    r = podman.run("--rm", "--memory=32m", "--memory-swap=32m", BUSYBOX_IMAGE, "sh", "-c",
                   "cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null "
                   "|| cat /sys/fs/cgroup/memory.max")
    assert r.stdout.strip() == str(32 << 20)
    # Enforced: 100 MB held in a shell variable gets the container OOM-killed (128 + 9).
    r = podman.run("--rm", "--memory=32m", "--memory-swap=32m", BUSYBOX_IMAGE, "sh", "-c",
                   "x=$(head -c 100000000 /dev/zero | tr '\\0' a); echo survived ${#x}",
                   check=False)
    assert r.returncode == 137, (r.stdout, r.stderr)
    assert "survived" not in r.stdout


def test_pids_limit(podman):
    """The limit seen from inside and enforced: forks fail once the cgroup holds 10 tasks."""
    r = podman.run("--rm", "--pids-limit=10", BUSYBOX_IMAGE, "sh", "-c",
                   # Only builtins after the loop: every fork is refused by then.
                   "read max < /sys/fs/cgroup/pids/pids.max; "
                   "(i=0; while [ $i -lt 30 ]; do sleep 60 & i=$((i+1)); echo $i > /tmp/n; done);"
                   "read n < /tmp/n; read cur < /sys/fs/cgroup/pids/pids.current; "
                   "echo max=$max forked=$n current=$cur", check=False)
    assert r.returncode == 0, r.stderr
    fields = dict(kv.split("=") for kv in r.stdout.split())
    assert fields["max"] == "10"
    assert int(fields["forked"]) < 10 and int(fields["current"]) <= 10, r.stdout
    assert "can't fork" in r.stderr or "Resource temporarily unavailable" in r.stderr, r.stderr


def test_kill(podman):
    podman.run("-d", "--name", "kill", BUSYBOX_IMAGE, "sh", "-c",
               "trap 'echo got-usr1' USR1; echo ready; while :; do sleep 0.1; done")
    try:
        engines.wait_for(lambda: "ready" in podman("logs", "kill").stdout, what="ready")
        podman("kill", "--signal", "USR1", "kill")
        engines.wait_for(lambda: "got-usr1" in podman("logs", "kill").stdout, what="USR1 trap")
        assert podman.inspect("kill", "{{.State.Status}}") == "running"
        podman("kill", "kill")  # SIGKILL
        engines.wait_for(lambda: podman.inspect("kill", "{{.State.Status}}") == "exited",
                         what="exit after SIGKILL")
        assert podman.inspect("kill", "{{.State.ExitCode}}") == "137"
    finally:
        podman("rm", "-f", "-t", "0", "kill")


def test_pause_unpause(podman):
    cid = podman.run("-d", "--name", "pause", BUSYBOX_IMAGE, "sh", "-c",
                     "while :; do echo tick; sleep 0.05; done").stdout.strip()
    try:
        engines.wait_for(lambda: "tick" in podman("logs", "pause").stdout, what="ticks")
        podman("pause", "pause")
        assert podman.inspect("pause", "{{.State.Status}}") == "paused"
        assert seerun_state(cid)["status"] == "paused"
        freezer = [os.path.join(d, f"libpod-{cid}", "freezer.state")
                   for d in engines.cgroup_paths(podman.cgroup_parent)
                   if os.path.exists(os.path.join(d, f"libpod-{cid}", "freezer.state"))]
        for f in freezer:
            with open(f) as fh:
                assert fh.read().strip() == "FROZEN"
        before = podman("logs", "pause").stdout.count("tick")
        # Long enough for the loop to tick several times had it not been frozen.
        wait_for_host_ticks(10)
        assert podman("logs", "pause").stdout.count("tick") == before, "ticked while paused"
        podman("unpause", "pause")
        assert podman.inspect("pause", "{{.State.Status}}") == "running"
        engines.wait_for(lambda: podman("logs", "pause").stdout.count("tick") > before + 2,
                         what="ticks after unpause")
    finally:
        podman("rm", "-f", "-t", "0", "pause")


def test_inspect(podman):
    cid = podman.run("-d", "--name", "inspect", BUSYBOX_IMAGE, "sleep", "300").stdout.strip()
    try:
        data = json.loads(podman("inspect", "inspect").stdout)[0]
        assert data["Id"] == cid
        assert os.path.basename(data["OCIRuntime"]) == "seerun"
        assert data["State"]["Running"] is True
        pid = data["State"]["Pid"]
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            assert f.read().split(b"\0")[:2] == [b"sleep", b"300"]
        with open(f"/proc/{pid}/cgroup") as f:
            assert f"{podman.cgroup_parent}/libpod-{cid}" in f.read()
        assert os.readlink(f"/proc/{pid}/ns/pid") != os.readlink("/proc/self/ns/pid")
        top = podman("top", "inspect", "pid", "args").stdout.split("\n", 1)[1]
        assert top.split() == ["1", "sleep", "300"]
    finally:
        podman("rm", "-f", "-t", "0", "inspect")


def test_rm_force_running(podman):
    cid = podman.run("-d", "--name", "rmf", BUSYBOX_IMAGE, "sh", "-c",
                     "trap 'exit 0' TERM; while :; do sleep 0.1; done").stdout.strip()
    pid = int(podman.inspect("rmf", "{{.State.Pid}}"))
    assert cid in engines.seerun_state_ids()
    podman("rm", "-f", "rmf", timeout=60)
    assert "rmf" not in podman("ps", "-a", "--format", "{{.Names}}").stdout.split()
    assert cid not in engines.seerun_state_ids()
    engines.wait_for(lambda: not engines.process_alive(pid), what="the container's process to die")
    assert not any(os.path.exists(os.path.join(d, f"libpod-{cid}"))
                   for d in engines.cgroup_paths(podman.cgroup_parent))


def test_restart(podman):
    podman.run("-d", "--name", "restart", BUSYBOX_IMAGE, "sh", "-c",
               "trap 'exit 0' TERM; echo start; while :; do sleep 0.1; done")
    try:
        engines.wait_for(lambda: "start" in podman("logs", "restart").stdout, what="start")
        pid1 = podman.inspect("restart", "{{.State.Pid}}")
        podman("restart", "-t", "5", "restart")
        assert podman.inspect("restart", "{{.State.Status}}") == "running"
        assert podman.inspect("restart", "{{.State.Pid}}") != pid1
        engines.wait_for(lambda: podman("logs", "restart").stdout.split() == ["start", "start"],
                         what="the second start")
        # A stopped container restarts too.
        podman("stop", "-t", "5", "restart")
        podman("restart", "restart")
        assert podman.inspect("restart", "{{.State.Status}}") == "running"
    finally:
        podman("rm", "-f", "-t", "0", "restart")


def test_runtime_by_name(podman):
    """The contrib containers.conf's runtime entry: `--runtime seerun` by name."""
    base = [a for a in podman.base if not a.startswith("--runtime")]
    r = run([*base, "--runtime", "seerun", "run", "--rm", "--name", "byname",
             f"--cgroup-parent={podman.cgroup_parent}", BUSYBOX_IMAGE, "echo", "by-name"],
            env=podman.env)
    assert r.stdout.strip() == "by-name"


def test_debian_image(podman):
    podman("load", "-i", podman.images.debian, timeout=600)
    r = podman.run("--rm", DEBIAN_IMAGE, "python3", "-c",
                   "import os, sys; print(sys.version_info[0], os.getuid())")
    assert r.stdout.split() == ["3", "0"]
    # (Under seerun's default policy the root filesystem is read-only: the file goes to /tmp.)
    r = podman.run("--rm", "--user", "user", "--workdir", "/home/user", DEBIAN_IMAGE, "sh", "-c",
                   "whoami; pwd; python3 -c 'open(\"/tmp/f\", \"w\").write(\"x\")' && "
                   "ls -n /tmp/f")
    lines = r.stdout.splitlines()
    assert lines[:2] == ["user", "/home/user"]
    assert lines[2].split()[2:4] == ["1000", "1000"], lines


@pytest.mark.skipif(not engines.builtin_policy(), reason="an operator policy is installed")
def test_default_policy_applies(podman):
    """What seerun's default profile does to a plain `podman run` (no --read-only, no --user):
    a user namespace on an unprivileged host range, a read-only root with a tmpfs /tmp,
    no_new_privs, seccomp; and `podman exec` gets the same."""
    podman.run("-d", "--name", "policy", BUSYBOX_IMAGE, "sleep", "300")
    try:
        r = podman.run("--rm", BUSYBOX_IMAGE, "sh", "-c", engines.POLICY_PROBE_SCRIPT)
        engines.assert_default_policy(r.stdout, "run")
        r = podman("exec", "policy", "sh", "-c", engines.POLICY_PROBE_SCRIPT)
        engines.assert_default_policy(r.stdout, "exec")
    finally:
        podman("rm", "-f", "-t", "0", "policy")
    # The host's network is replaced by a namespace with loopback only (network.allowHost).
    r = podman.run("--rm", "--network=host", BUSYBOX_IMAGE, "ls", "/sys/class/net")
    assert r.stdout.split() == ["lo"]


@pytest.mark.skipif(not engines.builtin_policy(), reason="an operator policy is installed")
def test_egress_proxy_by_annotation(podman):
    """`--annotation io.seerun.network=proxy`: seerun's egress proxy at 127.0.0.1:3128, the proxy
    variables set, and `podman run` returns (the supervisor holds none of conmon's descriptors).
    The built-in default profile grants the proxy and allows no host: the refusal names the
    knob (no request leaves this machine)."""
    r = podman.run("--rm", "--network=none", "--annotation", "io.seerun.network=proxy",
                   BUSYBOX_IMAGE, "sh", "-c", "echo $http_proxy; wget -q -O - http://example.test/ 2>&1 | tail -1; printf 'GET http://example.test/ HTTP/1.0\\r\\n\\r\\n' | nc 127.0.0.1 3128 | tail -1", timeout=60)
    lines = r.stdout.splitlines()
    assert lines[0] == "http://127.0.0.1:3128", r.stdout
    assert "403 Forbidden" in lines[1], r.stdout
    assert lines[2] == ('seerun: egress to example.test:80 denied by profile "default" '
                        "(network.egress.allow)"), r.stdout


@pytest.mark.skipif(not engines.builtin_policy(), reason="an operator policy is installed")
def test_files_changed_are_in_the_activity_record(podman):
    """An engine's container gets the activity record's files too (issue 16 slice d): what it
    wrote in its tmpfs mounts, walked when it stopped; the files podman binds in (/etc/hosts)
    are places too."""
    r = podman("create", f"--cgroup-parent={podman.cgroup_parent}", "--name", "files",
               BUSYBOX_IMAGE, "sh", "-c", "printf abc > /tmp/x; printf 12 > /dev/shm/y")
    cid = r.stdout.strip()
    try:
        podman("start", "-a", "files", timeout=60)
    finally:
        podman("rm", "-f", "-t", "0", "files")
    ev = [e for e in engines.audit_events(cid) if e["event"] == "activity"]
    assert len(ev) == 1, ev
    files = ev[0]["record"]["files"]
    changes = {c["path"]: c for c in files["changes"]}
    assert changes["/tmp/x"]["change"] == "added" and changes["/tmp/x"]["size"] == 3, changes
    assert changes["/dev/shm/y"]["change"] == "added" and changes["/dev/shm/y"]["size"] == 2
    assert files["added"] == 2 and files["modified"] == 0 and files["deleted"] == 0, files
    roles = {p["path"]: p["role"] for p in files["places"]}
    assert roles["/tmp"] == "scratch" and roles["/etc/hosts"] == "other", roles


def test_nothing_left_behind(podman):
    """After `podman rm --all`, seerun holds no state, process, cgroup or user namespace range
    of podman's."""
    podman("rm", "--all", "--force", "--time", "0")
    ids = podman.container_ids()
    assert ids, "the events log names no container"
    assert not ids & engines.seerun_state_ids()
    held = engines.userns_ranges_held(
        keys=[os.path.join(engines.SEERUN_DEFAULT_ROOT, i) for i in ids])
    assert not held, f"user namespace ranges still held: {held}"
    leftovers = [d for top in engines.cgroup_paths(podman.cgroup_parent)
                 for d in os.listdir(top) if d.startswith("libpod-")]
    assert not leftovers


def test_checkpoint_and_restore_through_seerun(podman):
    """`podman container checkpoint` and `restore` drive seerun's checkpoint (probed with
    `checkpoint --help`) and restore (through conmon): the counter keeps counting on its
    read-only root, with its seccomp filter and no_new_privs."""
    name = "seerun-cr"
    podman.run("-d", "--name", name, BUSYBOX_IMAGE, "sh", "-c",
               "i=0; while true; do i=$((i+1)); echo $i > /tmp/count; sleep 0.05; done")
    try:
        def count():
            r = podman("exec", name, "cat", "/tmp/count", check=False)
            return int(r.stdout.strip() or 0) if r.returncode == 0 else 0
        engines.wait_for(lambda: count() >= 3, what="the counter to count")
        podman("container", "checkpoint", name, timeout=180)
        assert podman.inspect(name, "{{.State.Status}}") == "exited"
        podman("container", "restore", name, timeout=180)
        assert podman.inspect(name, "{{.State.Status}}") == "running"
        last = count()
        engines.wait_for(lambda: count() > last + 2, what="the restored counter to count")
        r = podman("exec", name, "sh", "-c",
                   "grep -E '^(Seccomp|NoNewPrivs):' /proc/1/status; touch /x 2>&1; true")
        assert "Seccomp:\t2" in r.stdout and "NoNewPrivs:\t1" in r.stdout, r.stdout
        assert "Read-only file system" in r.stdout
    finally:
        podman("rm", "--force", "--time", "0", name, check=False)
