"""Fixtures shared by the integration tests.

Every test reaches seerun through the `seerun` fixture, which sets the global flags (its own
--root, and later the policy), so the same tests can run under different profiles.  Each test
gets its own state directory and bundle; after it, everything it made is force-deleted and the
host is checked for leaks (state entries, cgroups, mounts, processes): a leak fails the test.
"""
import contextlib
import ctypes
import http.server
import json
import os
import shutil
import signal
import ssl
import subprocess
import tempfile
import threading
import time
import uuid

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
SEERUN = os.environ.get("SEERUN_BINARY", os.path.join(TOP, "build", "seerun"))
CGROUP_ROOT = "/sys/fs/cgroup"


# The seccomp user-notification ABI (linux/seccomp.h), for the tests' seccomp agents.
SECCOMP_IOCTL_NOTIF_RECV = 0xC0502100  # _IOWR('!', 0, struct seccomp_notif)
SECCOMP_IOCTL_NOTIF_SEND = 0xC0182101  # _IOWR('!', 1, struct seccomp_notif_resp)


class SeccompData(ctypes.Structure):
    _fields_ = [("nr", ctypes.c_int), ("arch", ctypes.c_uint32),
                ("instruction_pointer", ctypes.c_uint64), ("args", ctypes.c_uint64 * 6)]


class SeccompNotif(ctypes.Structure):
    _fields_ = [("id", ctypes.c_uint64), ("pid", ctypes.c_uint32), ("flags", ctypes.c_uint32),
                ("data", SeccompData)]


class SeccompNotifResp(ctypes.Structure):
    _fields_ = [("id", ctypes.c_uint64), ("val", ctypes.c_int64), ("error", ctypes.c_int32),
                ("flags", ctypes.c_uint32)]


def wait_for(predicate, timeout=10.0, what="condition", interval=0.02):
    """Calls predicate every interval seconds until it returns a true value, and returns that
    value; after timeout seconds, fails naming what was awaited and the last value seen.  The
    one way the tests wait for something to happen (never a fixed sleep)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            seen = repr(value)
            if len(seen) > 300:
                seen = seen[:300] + "..."
            raise AssertionError(f"timed out after {timeout} s waiting for {what} "
                                 f"(last value: {seen})")
        time.sleep(interval)


def alive(pid):
    """The process exists and is not a zombie (a dead one its parent has not reaped)."""
    try:
        return proc_state(pid) not in ("Z", "X")
    except OSError:
        return False


def proc_state(pid):
    """The process's state letter (R, S, D, T, Z...), from /proc/PID/stat."""
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0]


def start_time(pid):
    """When the process started, in clock ticks since boot (/proc/PID/stat)."""
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[19])


def wait_gone(pid, timeout=10.0, what=None):
    """Waits for a process to die, reaping this run's exited children meanwhile (as the
    subreaper, the zombies of a pid namespace whose parent was outside are ours to reap, and
    its init cannot finish dying before they are)."""
    def gone():
        reap_children()
        return not alive(pid)
    wait_for(gone, timeout=timeout, what=what or f"process {pid} to die")


def signal_pending(pid, signum):
    """Whether a signal sent to the process has not been taken yet (by a handler, a signalfd
    or its default action): after kill() returns, the signal is pending until then."""
    bit = 1 << (signum - 1)
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/status") as f:
                for line in f:
                    key, _, value = line.partition(":")
                    if key in ("SigPnd", "ShdPnd") and int(value, 16) & bit:
                        return True
    except OSError:
        return False  # gone: nothing is pending any more
    return False


def wait_for_host_ticks(n, period=0.05):
    """Runs on the host a loop like the tests' ticking containers (a tick, then `sleep
    period`) until it has ticked n times.  A test that checks that a frozen container makes no
    progress checks it across this window: as long as an unfrozen loop needs for n ticks on
    this machine at this moment, however loaded it is."""
    with tempfile.TemporaryDirectory() as d:
        ticks = os.path.join(d, "ticks")
        p = subprocess.Popen(["sh", "-c", f"while :; do echo tick >> {ticks}; sleep {period}; "
                              "done"], stdin=subprocess.DEVNULL, start_new_session=True)
        try:
            def count():
                try:
                    with open(ticks) as f:
                        return len(f.read().splitlines()) >= n
                except FileNotFoundError:
                    return False
            wait_for(count, what=f"{n} ticks of a loop on the host")
        finally:
            os.killpg(p.pid, signal.SIGKILL)  # the loop and its sleep
            p.wait()


def read_userns_registry(path):
    """seerun's user namespace registry: {key: {"first", "size", "released"}} (a header line,
    then "FIRST SIZE RELEASED KEY" lines)."""
    with open(path) as f:
        lines = f.read().splitlines()
    assert lines and lines[0].startswith("seerun user namespace registry 2:"), lines[:1]
    out = {}
    for line in lines[1:]:
        first, size, released, key = line.split(" ", 3)
        out[key] = {"key": key, "first": int(first), "size": int(size),
                    "released": int(released)}
    return out

def pytest_configure(config):
    config.addinivalue_line("markers", "engines: drive podman, containerd and Docker "
                            "(contrib/setup-engines.sh installs them)")
    # Like an engine's shim, the test run is the subreaper of the containers it starts, so
    # their processes are reaped here rather than left as zombies of the host's init.
    libc = ctypes.CDLL(None, use_errno=True)
    PR_SET_CHILD_SUBREAPER = 36
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    if os.geteuid() != 0:
        raise pytest.UsageError("the integration tests run as root")
    if not os.access(SEERUN, os.X_OK):
        raise pytest.UsageError(f"no seerun binary at {SEERUN} (set SEERUN_BINARY)")


@pytest.fixture(scope="session")
def busybox_rootfs(tmp_path_factory):
    """A minimal root filesystem from busybox-static, shared by the tests (read-only to them)."""
    root = tmp_path_factory.mktemp("rootfs") / "rootfs"
    subprocess.run([os.path.join(TOP, "contrib", "make-busybox-rootfs.sh"), str(root)],
                   check=True, capture_output=True)
    (root / "home" / "user").mkdir(parents=True)
    return root


def write_policy(directory):
    """The shipped default policy (the built-in one), plus the documented permissive profile,
    with the audit log in the test's own directory."""
    with open(os.path.join(TOP, "contrib", "policy", "default.json")) as f:
        policy = json.load(f)
    with open(os.path.join(TOP, "contrib", "policy", "risk-classes.json")) as f:
        policy["profiles"]["permissive"] = json.load(f)["profiles"]["permissive"]
    # In a directory of its own: the audit log's directory is a denied bind source, at and
    # below, and tests bind things from their own directory.
    policy["auditLog"] = str(directory / "audit" / "audit.jsonl")
    # The tests' root filesystems (the shared busybox one, and the copies a test makes in its
    # own directory) lie outside their bundles, in the session's temporary directory: listed
    # in rootfs.idmapPaths, as an operator lists an image store (a root.path elsewhere is
    # mounted as it is, its files unmapped: mapping ids is granting them).
    for prof in policy["profiles"].values():
        prof.setdefault("rootfs", {})["idmapPaths"] = [os.path.dirname(str(directory))]
    # The test's own user namespace registry: ranges it takes never mix with the host's.
    policy["userNamespaces"]["registry"] = str(directory / "userns" / "ranges")
    path = directory / "policy.json"
    path.write_text(json.dumps(policy, indent=2))
    os.chmod(path, 0o644)
    return path


class Seerun:
    """The seerun command line with this test's global flags: its own state root, the shipped
    policy (audit log in the test's directory) and a profile.  Spec-conformance tests run under
    the permissive profile (nothing enforced, everything audited); hardening and engine tests
    under the default one."""

    def __init__(self, state_dir, prefix, policy, profile):
        self.root = str(state_dir)
        self.prefix = prefix
        self.policy = str(policy)
        self.profile = profile
        self.audit_log = os.path.join(os.path.dirname(self.policy), "audit", "audit.jsonl")
        self.registry = os.path.join(os.path.dirname(self.policy), "userns", "ranges")
        self.global_args = ["--root", self.root, "--policy", self.policy, "--profile", profile]
        self.created = set()

    def audit(self):
        """The audit log's lines, parsed."""
        if not os.path.exists(self.audit_log):
            return []
        with open(self.audit_log) as f:
            return [json.loads(line) for line in f]

    def id(self, name="c"):
        cid = f"{self.prefix}-{name}"
        self.created.add(cid)
        return cid

    def cmd(self, *args, check=False, timeout=60, **kw):
        """Runs seerun; stdout and stderr are collected through files, not pipes, because a
        created or detached container keeps the runtime's stdio open."""
        with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
            if "input" not in kw:
                kw.setdefault("stdin", subprocess.DEVNULL)
            elif kw.get("stdin", 0) is None:
                del kw["stdin"]
            p = subprocess.run([SEERUN, *self.global_args, *args], timeout=timeout,
                               stdout=out, stderr=err, text=True, **kw)
            out.seek(0)
            err.seek(0)
            r = subprocess.CompletedProcess(p.args, p.returncode, out.read(), err.read())
        if check and r.returncode != 0:
            raise AssertionError(f"seerun {' '.join(args)} failed ({r.returncode}): "
                                 f"{r.stderr}{r.stdout}")
        return r

    def state(self, cid):
        r = self.cmd("state", cid, check=True)
        return json.loads(r.stdout)

    def list_ids(self):
        r = self.cmd("list", "--quiet", check=True)
        return r.stdout.split()

    def cleanup(self):
        for cid in sorted(self.created):
            self.cmd("delete", "--force", cid)
        if os.path.isdir(self.root):
            for cid in os.listdir(self.root):
                if not cid.startswith("."):
                    self.cmd("delete", "--force", cid)


class Bundle:
    """An OCI bundle: config.json (runc's default from `seerun spec`, made non-interactive)
    over the shared busybox root filesystem."""

    def __init__(self, path, rootfs, seerun):
        self.path = path
        seerun.cmd("spec", "--bundle", str(path), check=True)
        with open(path / "config.json") as f:
            self.config = json.load(f)
        self.config["root"]["path"] = str(rootfs)
        self.config["process"]["terminal"] = False
        self.config["process"]["args"] = ["true"]

    @property
    def process(self):
        return self.config["process"]

    @property
    def linux(self):
        return self.config["linux"]

    def args(self, *argv):
        self.config["process"]["args"] = list(argv)
        return self

    def shell(self, script):
        return self.args("sh", "-c", script)

    def write(self):
        with open(self.path / "config.json", "w") as f:
            json.dump(self.config, f, indent=2)
        return str(self.path)


def make_seerun(tmp_path, profile):
    prefix = "srt" + uuid.uuid4().hex[:8]
    return Seerun(tmp_path / "state", prefix, write_policy(tmp_path), profile)


@contextlib.contextmanager
def http_origin(body, tls=None):
    """A loopback HTTP origin (for the egress proxy's tests) answering every GET with 200 and
    body(request) as its text, over TLS with tls = (cert.pem, key.pem); yields its port."""
    class Origin(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            text = body(self).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(text)))
            self.end_headers()
            self.wfile.write(text)

        def log_message(self, *a):
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Origin)
    if tls:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(*tls)
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        yield srv.server_address[1]
    finally:
        srv.shutdown()
        srv.server_close()


def make_profiled_seerun(tmp_path, name, profile):
    """seerun with the shipped policy plus one more profile, `name`, selected."""
    s = make_seerun(tmp_path, name)
    with open(s.policy) as f:
        policy = json.load(f)
    policy["profiles"][name] = profile
    with open(s.policy, "w") as f:
        json.dump(policy, f, indent=2)
    return s


@pytest.fixture(scope="module")
def without_bpf(tmp_path_factory):
    """A program that runs its arguments with the bpf system call refused (EPERM), as on a
    host where seerun cannot load eBPF (helpers/without_bpf.c)."""
    d = tmp_path_factory.mktemp("without-bpf")
    exe = str(d / "without_bpf")
    subprocess.run(["cc", "-O2", "-o", exe, os.path.join(HERE, "helpers", "without_bpf.c")],
                   check=True, capture_output=True)
    return exe


@contextlib.contextmanager
def static_helpers(name, programs):
    """A directory of the tests' helper programs ({executable: source in helpers/}), each
    built static, outside the tests' own directories (those hold the state root, a denied
    bind source), for a container to bind; removed afterwards."""
    d = f"/tmp/{name}-{os.getpid()}"
    os.makedirs(d, exist_ok=True)
    try:
        for exe, source in programs.items():
            subprocess.run(["cc", "-static", "-O2", "-o", os.path.join(d, exe),
                            os.path.join(HERE, "helpers", source)], check=True,
                           capture_output=True)
        os.chmod(d, 0o755)
        yield d
    finally:
        shutil.rmtree(d)


def make_norecord_seerun(tmp_path):
    """seerun under a profile "norecord": the default one with the activity record off."""
    return make_profiled_seerun(tmp_path, "norecord", {
        "base": "default", "description": "no record", "activity": {"record": False}})


def seerun_under(profile, doc):
    """A fixture: seerun bound to a profile of the shipped policy, cleaned up and checked for
    leaks after the test."""
    @pytest.fixture
    def fixture(tmp_path):
        s = make_seerun(tmp_path, profile)
        yield s
        s.cleanup()
        check_no_leaks(s, tmp_path)
    fixture.__doc__ = doc
    return fixture


seerun = seerun_under("permissive", "seerun under the permissive profile (nothing enforced, "
                                    "everything audited).")
hardened = seerun_under("default", "seerun as users run it: the default profile of the shipped "
                                   "policy.")
untrusted = seerun_under("untrusted-user-code", "seerun bound to the shipped untrusted-user-code "
                                                "profile.")


@pytest.fixture
def bundle(tmp_path, busybox_rootfs, seerun):
    path = tmp_path / "bundle"
    path.mkdir()
    return Bundle(path, busybox_rootfs, seerun)


@pytest.fixture
def make_hardened_bundle(tmp_path, busybox_rootfs, hardened):
    """make_hardened_bundle(name, rootfs=busybox): a bundle of the hardened seerun's in
    tmp_path/name."""
    def make(name, rootfs=busybox_rootfs):
        path = tmp_path / name
        path.mkdir()
        return Bundle(path, rootfs, hardened)
    return make


@pytest.fixture
def hardened_bundle(make_hardened_bundle):
    """A bundle for the `hardened` seerun (the shipped default profile: a user namespace)."""
    return make_hardened_bundle("hardened-bundle")


class Sandbox:
    """`seerun sandbox` with a Seerun's global flags, as a program drives it; each run gets
    its own result document (--json=FILE), parsed into r.result (None when there is none)."""

    def __init__(self, seerun, tmp_path):
        self.seerun = seerun
        self.tmp = tmp_path
        self.count = 0

    def argv(self, *args, name="sb"):
        return [SEERUN, *self.seerun.global_args, "sandbox", "--name", self.seerun.id(name),
                *args]

    def run(self, *command, opts=(), name="sb", timeout=60, **kw):
        self.count += 1
        result = self.tmp / f"result-{self.count}.json"
        r = self.seerun.cmd("sandbox", "--name", self.seerun.id(name), f"--json={result}",
                            *opts, "--", *command, timeout=timeout, **kw)
        r.result = json.loads(result.read_text()) if result.exists() and \
            result.stat().st_size else None
        return r

    def ok(self, *command, **kw):
        r = self.run(*command, **kw)
        assert r.returncode == 0, f"exit {r.returncode}: {r.stderr}{r.stdout}"
        return r


@pytest.fixture
def sandbox(hardened, tmp_path):
    """Sandboxes under the shipped default profile, named with the fixture's prefix so that
    the leak checks see their cgroups and processes."""
    return Sandbox(hardened, tmp_path)


def state_entries(seerun):
    """The state root's entries; the index directory's (statedir.h) as ".index/<id>"."""
    if not os.path.isdir(seerun.root):
        return []
    entries = [e for e in os.listdir(seerun.root) if e != ".index"]
    index = os.path.join(seerun.root, ".index")
    if os.path.isdir(index):
        entries += [".index/" + e for e in os.listdir(index)]
    return sorted(entries)


def running_pid(seerun, cid):
    """The container's init pid on the host once it runs (0 before, and once it has gone)."""
    r = seerun.cmd("state", cid)
    if r.returncode != 0:
        return 0
    st = json.loads(r.stdout)
    return st["pid"] if st["status"] == "running" else 0


def cgroup_leaks(prefix):
    found = []
    for base, dirs, _ in os.walk(CGROUP_ROOT):
        for d in dirs:
            if d.startswith(prefix):
                found.append(os.path.join(base, d))
        # Containers' cgroups sit near the top; do not crawl the whole tree.
        if base.count("/") > 5:
            dirs[:] = []
    return found


def mount_leaks(tmp_path):
    with open("/proc/self/mountinfo") as f:
        return [line for line in f if str(tmp_path) in line]


def process_leaks(prefix):
    """Live processes still in a cgroup of this test's containers.  Zombies are dead: when a
    container's pid namespace dies, its leftover zombies go to the host's init, which on this
    machine (a VM whose pid 1 is not a full init) does not always reap them."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cgroup") as f:
                if prefix not in f.read():
                    continue
            with open(f"/proc/{pid}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
            if state not in ("Z", "X"):
                found.append(pid)
        except OSError:
            pass
    return found


def reap_children():
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def check_no_leaks(seerun, tmp_path):
    # The init of a pid namespace finishes dying only once the namespace's zombies are reaped,
    # and those whose parent was a runtime process outside (a `seerun exec` that has exited)
    # are ours to reap, as the subreaper: reap, and give it a moment before calling it a leak.
    deadline = time.monotonic() + 2
    reap_children()
    while process_leaks(seerun.prefix) and time.monotonic() < deadline:
        time.sleep(0.02)
        reap_children()
    leaks = []
    if os.path.isdir(seerun.root):
        # The compiled-filter cache is meant to outlive containers; anything else is a leak.
        # The index directory stays; an index entry left in it is a leak.
        left = [e for e in os.listdir(seerun.root) if e not in (".seccomp-cache", ".index")]
        index = os.path.join(seerun.root, ".index")
        if os.path.isdir(index):
            left += [".index/" + e for e in os.listdir(index)]
        if left:
            leaks.append(f"state entries: {left}")
    leaks += [f"cgroup: {c}" for c in cgroup_leaks(seerun.prefix)]
    leaks += [f"mount: {m.strip()}" for m in mount_leaks(tmp_path)]
    # The shared busybox root filesystem (busybox_rootfs: <basetemp>/rootfsN) too.
    leaks += [f"mount: {m.strip()}" for m in mount_leaks(tmp_path.parent / "rootfs")]
    leaks += [f"process: {p}" for p in process_leaks(seerun.prefix)]
    assert not leaks, "leaked after the test:\n" + "\n".join(leaks)
