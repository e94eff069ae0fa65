"""seerun under Docker (Debian 12's docker.io 20.10 and the containerd it starts).

The module starts its own dockerd: contrib/docker/daemon.json (its `runtimes` entries, with this
build's binary) as --config-file, its own --data-root, --exec-root, unix socket and --pidfile, no
firewall, bridge, masquerading or ip_forward changes (--iptables=false --bridge=none ...), and a
cgroup parent of its own. dockerd starts its own containerd under the exec root; the runc shim
calls `seerun [runtimeArgs] --root EXEC_ROOT/runtime-NAME/moby --log BUNDLE/log.json
--log-format json VERB ...`. At the end it removes every container, cgroup, mount and file it
made.

Run: SEERUN_BINARY=$PWD/build/seerun /usr/bin/python3 -m pytest -m engines tests/integration
"""
import json
import os
import shutil
import uuid

import pytest

import engines
from engines import BUSYBOX_IMAGE, DEBIAN_IMAGE, run

pytestmark = [pytest.mark.engines, engines.skip_unless_installed("dockerd", "docker")]

CONTRIB_CONF = os.path.join(engines.TOP, "contrib", "docker", "daemon.json")
# Debian's CLI; /usr/local/bin may hold another one.
DOCKER_CLI = "/usr/bin/docker" if os.path.exists("/usr/bin/docker") else shutil.which("docker")
# Docker's default bounding set (CAP_CHOWN ... CAP_AUDIT_WRITE, CAP_SETFCAP).
DOCKER_DEFAULT_CAPS = 0xa80425fb


class Docker:
    def __init__(self, sandbox):
        self.sandbox = sandbox
        self.sock = sandbox.path("docker.sock")
        self.exec_root = sandbox.mkdir("exec")
        self.cgroup_parent = "/" + sandbox.tag
        with open(CONTRIB_CONF) as f:
            conf = json.load(f)
        for rt in conf["runtimes"].values():
            rt["path"] = engines.SEERUN
        # Not in contrib: the untrusted profile, which Docker's configs do not pass yet.
        conf["runtimes"]["seerun-untrusted-test"] = {
            "path": engines.SEERUN, "runtimeArgs": ["--profile", "untrusted-user-code"]}
        # A profile with "network": {"mode": "proxy"}: Docker 20.10 passes no annotations.
        conf["runtimes"]["seerun-python-packages-test"] = {
            "path": engines.SEERUN, "runtimeArgs": ["--profile", "python-packages"]}
        self.runtimes = conf["runtimes"]
        self.config = engines.write_file(sandbox.path("daemon.json"), json.dumps(conf, indent=2))
        self.env = dict(os.environ, DOCKER_HOST=f"unix://{self.sock}",
                        DOCKER_CONFIG=sandbox.mkdir("cli"))
        self.env.pop("DOCKER_CONTEXT", None)
        self.daemon = engines.Daemon("dockerd", [
            "dockerd", "--config-file", self.config,
            "--data-root", sandbox.mkdir("data"), "--exec-root", self.exec_root,
            "-H", f"unix://{self.sock}", "--pidfile", sandbox.path("docker.pid"),
            # Nothing on the host's network: no firewall rules, bridge, NAT or forwarding.
            "--iptables=false", "--ip6tables=false", "--ip-forward=false", "--ip-masq=false",
            "--bridge=none", "--userland-proxy=false",
            "--storage-driver=overlay2", "--exec-opt", "native.cgroupdriver=cgroupfs",
            "--cgroup-parent", self.cgroup_parent,
        ], sandbox.path("dockerd.log"), env=self.env)

    def start(self):
        self.daemon.start(lambda: os.path.exists(self.sock) and
                          self("version", check=False).returncode == 0, timeout=90)

    def __call__(self, *args, check=True, timeout=120, input=None):
        return run([DOCKER_CLI, *args], check=check, timeout=timeout, input=input, env=self.env)

    def run(self, *args, runtime="seerun", **kw):
        return self("run", f"--runtime={runtime}", "--network=none", *args, **kw)

    def inspect(self, name, fmt):
        return self("inspect", "--format", fmt, name).stdout.strip()

    def seerun_ids(self):
        """Container ids in the runtimes' --root: dockerd 20.10 gives every runtime (runc's and
        those of daemon.json) the same one, EXEC_ROOT/runtime-runc/moby."""
        return engines.seerun_state_ids(os.path.join(self.exec_root, "runtime-runc", "moby"))


@pytest.fixture(scope="module")
def docker():
    sandbox = engines.Sandbox("/tmp", "docker")
    # dockerd writes its identity key to /etc/docker/key.json whatever its data root; the runc
    # shim puts its sockets in /run/containerd/s.
    footprint = engines.Footprint(["/etc/docker/key.json", "/etc/docker", "/run/docker/plugins",
                                   "/run/docker", "/run/containerd/s", "/run/containerd"])
    d = None
    try:
        d = Docker(sandbox)
        d.start()
        d.images = engines.Images(sandbox.mkdir("images"))
        d("load", "-i", d.images.busybox, timeout=300)
        yield d
    finally:
        problems = []
        if d is not None:
            ids = d("ps", "-aq", check=False).stdout.split()
            if ids:
                d("rm", "-f", *ids, check=False, timeout=300)
            left = d.seerun_ids()
            if left:
                problems.append(f"runtime state left by Docker: {sorted(left)}")
            d.daemon.stop(timeout=60)
        problems += sandbox.remove(cgroup_parents=[sandbox.tag])
        problems += footprint.clean()
        assert not problems, "Docker tests left behind:\n" + "\n".join(problems)


# ---------------------------------------------------------------------------------------------


def test_runtimes_registered(docker):
    info = json.loads(docker("info", "--format", "{{json .}}").stdout)
    assert {"seerun", "seerun-third-party"} <= set(info["Runtimes"])
    assert info["Runtimes"]["seerun"]["path"] == engines.SEERUN
    assert info["CgroupDriver"] == "cgroupfs"


def test_run_foreground(docker):
    r = docker.run("--rm", BUSYBOX_IMAGE, "sh", "-c", "echo out; echo err >&2; id -u; exit 6",
                   check=False)
    assert r.returncode == 6, r.stderr
    assert r.stdout.split() == ["out", "0"]
    assert "err" in r.stderr
    r = docker.run("--rm", "-i", BUSYBOX_IMAGE, "tr", "a-z", "A-Z", input="hello\n")
    assert r.stdout == "HELLO\n"


def test_runtime_error_reaches_docker(docker):
    r = docker.run("--rm", BUSYBOX_IMAGE, "/no/such/command", check=False)
    assert r.returncode == 127, r.stderr
    assert "/no/such/command" in r.stderr, r.stderr


def test_tty(docker):
    script = shutil.which("script")
    if script is None:
        pytest.skip("script(1) (bsdutils) is needed to give docker a terminal")
    cmd = f"{DOCKER_CLI} run --rm -t --runtime=seerun --network=none {BUSYBOX_IMAGE} " \
        f"sh -c '{engines.TTY_SCRIPT}'"
    r = run([script, "-qec", f"stty rows 24 cols 80; {cmd}", "/dev/null"], env=docker.env)
    lines = [l.strip() for l in r.stdout.replace("\r", "").splitlines() if l.strip()]
    assert lines == ["/dev/pts/0", "24 80"], r.stdout


def test_detached_exec_stop_rm(docker):
    cid = docker.run("-d", "--name", "detached", BUSYBOX_IMAGE, "sh", "-c",
                     "trap 'echo got-term; exit 0' TERM; echo started; "
                     "while :; do sleep 0.1; done").stdout.strip()
    engines.wait_for(lambda: "started" in docker("logs", "detached").stdout, what="started")
    assert docker.inspect("detached", "{{.State.Status}} {{.HostConfig.Runtime}}") == \
        "running seerun"
    assert cid in docker.seerun_ids()
    r = docker("exec", "detached", "sh", "-c", "echo in-exec; exit 3", check=False)
    assert (r.returncode, r.stdout) == (3, "in-exec\n")
    r = docker("exec", "-u", "1000:1000", "-w", "/tmp", "-e", "FOO=bar", "detached", "sh", "-c",
               "id -u; id -g; pwd; echo $FOO")
    assert r.stdout.split() == ["1000", "1000", "/tmp", "bar"]
    r = docker("exec", "-i", "detached", "cat", input="through stdin\n")
    assert r.stdout == "through stdin\n"
    r = docker("exec", "detached", "sh", "-c", engines.OWN_NAMESPACES_SCRIPT)
    init = int(docker.inspect("detached", "{{.State.Pid}}"))
    assert engines.namespaces_not_shared(r.stdout, init) == [], r.stdout
    docker("stop", "-t", "10", "detached")
    assert docker.inspect("detached", "{{.State.Status}} {{.State.ExitCode}}") == "exited 0"
    assert docker("logs", "detached").stdout.split() == ["started", "got-term"]
    docker("rm", "detached")
    assert cid not in docker.seerun_ids()


def test_limits_and_confinement(docker):
    """Docker's config reaches the container: memory and pids limits (enforced), read-only root,
    a non-root user, no network, Docker's capabilities and its seccomp profile."""
    r = docker.run("--rm", "--memory=64m", "--pids-limit=10", "--read-only", "--user=1000:1000",
                   BUSYBOX_IMAGE, "sh", "-c",
                   "cat /sys/fs/cgroup/memory/memory.limit_in_bytes "
                   "/sys/fs/cgroup/pids/pids.max; id -u; ls /sys/class/net; "
                   "touch /x 2>&1; grep -E '^(Seccomp|CapBnd|CapEff):' /proc/self/status",
                   check=False)
    out = r.stdout
    assert out.split()[:4] == [str(64 << 20), "10", "1000", "lo"], out
    assert "Read-only file system" in out
    status = dict(l.split(":\t") for l in out.splitlines() if ":\t" in l)
    assert status["Seccomp"] == "2"
    # Docker's set, or less (seerun's policy may narrow it).
    assert int(status["CapBnd"], 16) & ~DOCKER_DEFAULT_CAPS == 0, status["CapBnd"]
    assert int(status["CapEff"], 16) == 0
    r = docker.run("--rm", "--pids-limit=10", BUSYBOX_IMAGE, "sh", "-c",
                   "(i=0; while [ $i -lt 30 ]; do sleep 60 & i=$((i+1)); echo $i > /tmp/n; done);"
                   "read n < /tmp/n; echo forked=$n", check=False)
    assert int(r.stdout.strip().split("=")[1]) < 10, (r.stdout, r.stderr)
    # The default seccomp profile denies what it should (unshare of a user namespace: EPERM).
    r = docker.run("--rm", BUSYBOX_IMAGE, "unshare", "-U", "true", check=False)
    assert r.returncode != 0 and "Operation not permitted" in r.stderr, (r.stdout, r.stderr)


def test_pause_kill_restart(docker):
    docker.run("-d", "--name", "life", BUSYBOX_IMAGE, "sh", "-c",
               "trap 'exit 0' TERM; trap 'echo got-usr1' USR1; echo start; "
               "while :; do sleep 0.1; done")
    try:
        engines.wait_for(lambda: "start" in docker("logs", "life").stdout, what="start")
        docker("pause", "life")
        assert docker.inspect("life", "{{.State.Status}}") == "paused"
        docker("unpause", "life")
        assert docker.inspect("life", "{{.State.Status}}") == "running"
        docker("kill", "--signal", "USR1", "life")
        engines.wait_for(lambda: "got-usr1" in docker("logs", "life").stdout, what="USR1")
        pid = docker.inspect("life", "{{.State.Pid}}")
        docker("restart", "-t", "5", "life")
        assert docker.inspect("life", "{{.State.Status}}") == "running"
        assert docker.inspect("life", "{{.State.Pid}}") != pid
        docker("kill", "life")
        engines.wait_for(lambda: docker.inspect("life", "{{.State.Status}}") == "exited",
                         what="exited")
        assert docker.inspect("life", "{{.State.ExitCode}}") == "137"
    finally:
        docker("rm", "-f", "life")


def run_and_audit(docker, runtime, *args):
    """Runs `echo ok` under `runtime`; returns the result and the profile of its create event
    in seerun's audit log."""
    cidfile = docker.sandbox.path(f"{runtime}-{uuid.uuid4().hex[:8]}.cid")
    r = docker.run("--rm", "--cidfile", cidfile, *args, BUSYBOX_IMAGE, "echo", "ok",
                   runtime=runtime, check=False)
    with open(cidfile) as f:
        cid = f.read().strip()
    profiles = {e["profile"] for e in engines.audit_events(cid) if e["event"] == "create"}
    return r, profiles


def test_runtime_with_args(docker):
    """The second daemon.json entry binds seerun to a policy profile with runtimeArgs: dockerd
    runs it through a wrapper that puts them before the shim's arguments. The audit log shows
    which profile each container got."""
    args = docker.runtimes["seerun-third-party"]["runtimeArgs"]
    profile = args[args.index("--profile") + 1]
    for runtime, expected in (("seerun", "default"), ("seerun-third-party", profile)):
        r, profiles = run_and_audit(docker, runtime)
        assert (r.returncode, r.stdout) == (0, "ok\n"), r.stderr
        assert profiles == {expected}, (runtime, profiles)
    wrapper = os.path.join(docker.sandbox.path("data"), "runtimes", "seerun-third-party")
    with open(wrapper) as f:
        text = f.read()
    assert engines.SEERUN in text and " ".join(args) in text, text


def test_untrusted_profile(docker):
    # (Docker 20.10 sets net.ipv4.ip_unprivileged_port_start=0 in every container: the profile
    # allows that sysctl, namespaced, and nothing else.)
    r, profiles = run_and_audit(docker, "seerun-untrusted-test")
    assert (r.returncode, r.stdout) == (0, "ok\n"), r.stderr
    assert profiles == {"untrusted-user-code"}


@pytest.mark.skipif(not engines.builtin_policy(), reason="an operator policy is installed")
def test_egress_proxy_through_a_bound_profile(docker):
    """An entry bound to python-packages (network.mode "proxy"): the container gets seerun's
    egress proxy without an annotation; a host the profile does not list is refused, naming the
    profile and the knob (no request leaves this machine: pypi.org is not asked for)."""
    r = docker.run("--rm", BUSYBOX_IMAGE, "sh", "-c",
                   "echo $http_proxy; wget -q -O - http://example.test/ 2>&1 | tail -1; printf 'GET http://example.test/ HTTP/1.0\\r\\n\\r\\n' | nc 127.0.0.1 3128 | tail -1", runtime="seerun-python-packages-test")
    lines = r.stdout.splitlines()
    assert lines[0] == "http://127.0.0.1:3128", r.stdout + r.stderr
    assert "403 Forbidden" in lines[1], r.stdout
    assert lines[2] == ('seerun: egress to example.test:80 denied by profile "python-packages" '
                        "(network.egress.allow)"), r.stdout


def test_debian_image(docker):
    docker("load", "-i", docker.images.debian, timeout=600)
    r = docker.run("--rm", DEBIAN_IMAGE, "python3", "-c",
                   "import sys, os; print(sys.version_info[0], os.getuid())")
    assert r.stdout.split() == ["3", "0"]
    # (The file goes to the tmpfs /tmp: the default policy makes the root read-only.)
    r = docker.run("--rm", "--user", "user", "--workdir", "/home/user", DEBIAN_IMAGE, "python3",
                   "-c", "import os, pwd; open('/tmp/f', 'w').write('x'); "
                   "print(pwd.getpwuid(os.getuid()).pw_name, os.getcwd(), "
                   "os.stat('/tmp/f').st_uid)")
    assert r.stdout.split() == ["user", "/home/user", "1000"]


@pytest.mark.skipif(not engines.builtin_policy(), reason="an operator policy is installed")
def test_default_policy_applies(docker):
    r = docker.run("--rm", BUSYBOX_IMAGE, "sh", "-c", engines.POLICY_PROBE_SCRIPT)
    engines.assert_default_policy(r.stdout, "run")
    docker.run("-d", "--name", "policy", BUSYBOX_IMAGE, "sleep", "300")
    try:
        r = docker("exec", "policy", "sh", "-c", engines.POLICY_PROBE_SCRIPT)
        engines.assert_default_policy(r.stdout, "exec")
    finally:
        docker("rm", "-f", "policy")
    # Docker names the host's network namespace by path (EXEC_ROOT/netns/default): refused
    # (network.allowHost), with the reason, rather than silently replaced.
    r = docker("run", "--rm", "--runtime=seerun", "--network=host", BUSYBOX_IMAGE,
               "ls", "/sys/class/net", check=False)
    assert r.returncode != 0 and "the host's network namespace" in r.stderr, r.stderr
    # The message names the program, as runc's does (read from seerun's --log JSON file).
    assert 'seerun create failed: policy "default": ' in r.stderr, r.stderr


def test_libnetwork_hook_runs_as_dockerds_own_binary(docker):
    """dockerd 20.10 adds `/proc/<its pid>/exe libnetwork-setkey ...` as a prestart hook to
    every container with its own network namespace (--network=none too).  The profile allows it
    as dockerd's binary with that argv, and nothing else: the container runs, and the audit log
    says which file the hook was."""
    docker.run("-d", "--name", "hooked", BUSYBOX_IMAGE, "sleep", "300")
    try:
        cid = docker.inspect("hooked", "{{.Id}}")
        hooks = [e for e in engines.audit_events(cid) if e.get("event") == "decision" and
                 e.get("field", "").startswith("hooks.")]
        assert [h["field"] for h in hooks] == ["hooks.prestart[0].path"], hooks
        assert hooks[0]["kind"] == "allowed", hooks
        real = os.path.realpath(shutil.which("dockerd"))
        assert hooks[0]["asked"].startswith('"/proc/') and real in hooks[0]["reason"], hooks
        assert docker.inspect("hooked", "{{.State.Running}}") == "true"
    finally:
        docker("rm", "-f", "hooked")


def test_nothing_left_behind(docker):
    ids = docker("ps", "-aq").stdout.split()
    if ids:
        docker("rm", "-f", *ids)
    assert not docker.seerun_ids()
    held = engines.userns_ranges_held(prefix=docker.exec_root + "/")
    assert not held, f"user namespace ranges still held: {held}"
    leftovers = [d for top in engines.cgroup_paths(docker.cgroup_parent) for d in os.listdir(top)
                 if os.path.isdir(os.path.join(top, d))]
    assert not leftovers
