"""Helpers shared by the engine tests (test_podman.py, test_containerd.py, test_docker.py).

The engine tests drive seerun through real container engines from Debian's packages.  Each test
module starts its engine with private state, configuration and sockets under one directory of its
own (the "sandbox"), and on the way out stops the engine and removes everything it made: its
containers' processes, cgroups, mounts, seerun state entries, and the few host paths that an
engine writes whatever it is told (`Footprint`).  Nothing else on the machine is touched.

Images are made here, not pulled (no registry is reachable): a busybox root filesystem from the
host's busybox-static, and a Debian root filesystem with python3 and a non-root user built once
with debootstrap and cached under /var/cache/seerun-tests (SEERUN_TEST_CACHE).  Both are wrapped
in a docker-archive tarball (`docker_archive`), which `podman load`, `ctr images import` and
`docker load` all read.
"""
import ctypes
import fcntl
import functools
import hashlib
import io
import json
import os
import platform
import re
import resource
import shutil
import signal
import subprocess
import tarfile
import tempfile
import time
import uuid

import pytest

import conftest  # (loaded first, by pytest)

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
# The same binary as conftest.py's, as an absolute path (the engines run it from elsewhere).
SEERUN = os.path.abspath(os.environ.get("SEERUN_BINARY", os.path.join(TOP, "build", "seerun")))
SEERUN_DEFAULT_ROOT = "/run/seerun"
# The engines call seerun without --policy: it applies /etc/seerun/policy.json if there is one,
# else its built-in policy (contrib/policy/default.json), whose user namespace registry is this.
OPERATOR_POLICY = "/etc/seerun/policy.json"
USERNS_REGISTRY = "/var/lib/seerun/userns.ranges"
CACHE_DIR = os.environ.get("SEERUN_TEST_CACHE", "/var/cache/seerun-tests")
DEBIAN_SUITE = os.environ.get("SEERUN_TEST_DEBIAN_SUITE", "bookworm")
DEBIAN_MIRROR = os.environ.get("SEERUN_TEST_DEBIAN_MIRROR", "http://deb.debian.org/debian")
SETUP_HINT = "contrib/setup-engines.sh installs the engines from Debian's packages"

BUSYBOX_IMAGE = "localhost/seerun-test/busybox:latest"
DEBIAN_IMAGE = "localhost/seerun-test/debian-python3:latest"
IMAGE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
USER_UID = 1000  # the non-root user of both images: "user", uid and gid 1000
# Prints the container's terminal and its size. The engines' clients size the terminal just
# after the start (a resize request), so wait for a size before printing it (5 s at most).
TTY_SCRIPT = ("tty; for i in $(seq 50); do s=$(stty size 2>/dev/null); "
              "[ -n \"$s\" ] && [ \"$s\" != \"0 0\" ] && break; sleep 0.1; done; echo $s")


def skip_unless_installed(*binaries):
    """A pytest mark that skips a module when one of the engine's binaries is missing."""
    missing = [b for b in binaries if shutil.which(b) is None]
    return pytest.mark.skipif(bool(missing),
                              reason=f"{', '.join(missing)} not installed ({SETUP_HINT})")


def hard_limit(which):
    return resource.getrlimit(which)[1]


# The namespaces an exec'd process must share with the container's init (pid 1 inside).
NAMESPACES = ("user", "mnt", "pid", "net", "ipc", "uts", "cgroup")
# The exec'd process prints its own namespaces, which the test compares with the init's as the
# host sees them (namespaces_not_shared): under an enforcing profile the exec'd process cannot
# read /proc/1/ns itself, each exec being a Landlock domain of its own, and Landlock refuses
# ptrace-class access (/proc/<pid>/ns, root, fd, environ) across domains.
OWN_NAMESPACES_SCRIPT = " ".join(f'echo "{n}=$(readlink /proc/self/ns/{n})";'
                                 for n in NAMESPACES)


def namespaces_not_shared(stdout, pid):
    """The namespaces that the exec'd process (OWN_NAMESPACES_SCRIPT's output) does not share
    with the process of host pid `pid`."""
    seen = dict(line.split("=", 1) for line in stdout.split())
    return [n for n in NAMESPACES if seen.get(n) != os.readlink(f"/proc/{pid}/ns/{n}")]
# What a container sees of seerun's default profile, one "key=value" a line.
POLICY_PROBE_SCRIPT = (
    "read a b c < /proc/self/uid_map; echo uidmap=$a:$b:$c; "
    "touch /probe 2>/dev/null && echo rootfs=rw || echo rootfs=ro; "
    "touch /tmp/probe && echo tmp=rw || echo tmp=ro; "
    "grep -E '^(NoNewPrivs|Seccomp):' /proc/self/status | tr -d ' \\t' | tr : =; "
    "echo links=$(ls /sys/class/net | tr '\\n' ,); "
    "echo owner=$(stat -L -c %u:%g /bin/sh)")


def assert_default_policy(out, what=""):
    """Checks POLICY_PROBE_SCRIPT's output against the default profile."""
    seen = dict(line.split("=", 1) for line in out.split() if "=" in line)
    inside, host, size = (int(x) for x in seen["uidmap"].split(":"))
    assert inside == 0 and host != 0 and size < 1 << 32, f"{what}: no user namespace: {seen}"
    assert seen["rootfs"] == "ro" and seen["tmp"] == "rw", f"{what}: {seen}"
    assert seen["NoNewPrivs"] == "1" and seen["Seccomp"] == "2", f"{what}: {seen}"
    assert seen["links"] == "lo,", f"{what}: {seen}"
    # The engine's overlay root is rebuilt from idmapped layers: the image's files are root's
    # inside (not nobody's), though no host root owns anything the container can write.
    assert seen["owner"] == "0:0", f"{what}: {seen}"


# ---------------------------------------------------------------------------------------------
# Commands


def run(argv, *, check=True, timeout=120, env=None, input=None, cwd=None):
    """Runs a command; stdout and stderr go through files, not pipes, because a detached
    container (conmon, a shim) can inherit and keep a pipe open long after the command ends."""
    argv = [str(a) for a in argv]
    with tempfile.TemporaryFile("w+", errors="replace") as out, \
            tempfile.TemporaryFile("w+", errors="replace") as err:
        try:
            p = subprocess.run(argv, stdin=subprocess.DEVNULL if input is None else None,
                               input=input, stdout=out, stderr=err, text=True, env=env,
                               cwd=cwd, timeout=timeout)
            rc = p.returncode
        except subprocess.TimeoutExpired:
            rc = None
        out.seek(0)
        err.seek(0)
        r = subprocess.CompletedProcess(argv, rc, out.read(), err.read())
    if rc is None:
        raise AssertionError(f"timed out after {timeout}s: {' '.join(argv)}\n"
                             f"stdout: {r.stdout[-3000:]}\nstderr: {r.stderr[-3000:]}")
    if check and rc != 0:
        raise AssertionError(f"failed ({rc}): {' '.join(argv)}\n"
                             f"stdout: {r.stdout[-3000:]}\nstderr: {r.stderr[-3000:]}")
    return r


# conftest's wait_for at the engines' pace: an engine's command takes a fraction of a second
# and a start through an engine several seconds.
wait_for = functools.partial(conftest.wait_for, timeout=30, interval=0.1)


class Daemon:
    """A daemon started by a test (containerd, dockerd), in its own session, logging to a file."""

    def __init__(self, name, argv, log_path, env=None):
        self.name = name
        self.argv = [str(a) for a in argv]
        self.log_path = str(log_path)
        self.env = env
        self.proc = None

    def start(self, ready, timeout=60):
        log = open(self.log_path, "ab")
        try:
            self.proc = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL, stdout=log,
                                         stderr=subprocess.STDOUT, env=self.env,
                                         start_new_session=True,
                                         # Its sandbox, not ours: shims leave files in the cwd.
                                         cwd=os.path.dirname(self.log_path))
        finally:
            log.close()
        deadline = time.monotonic() + timeout
        while not ready():
            if self.proc.poll() is not None:
                raise AssertionError(f"{self.name} exited ({self.proc.returncode}) while "
                                     f"starting:\n{self.log_tail()}")
            if time.monotonic() > deadline:
                raise AssertionError(f"{self.name} not ready after {timeout}s:\n"
                                     f"{self.log_tail()}")
            time.sleep(0.1)

    def stop(self, timeout=30):
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)

    def log_tail(self, lines=60):
        try:
            with open(self.log_path, errors="replace") as f:
                return "".join(f.readlines()[-lines:])
        except OSError:
            return ""


# ---------------------------------------------------------------------------------------------
# Cleaning up after an engine


def processes_mentioning(text):
    """Live processes whose command line contains `text` (a sandbox path: only what a test
    started mentions it)."""
    found = []
    me = os.getpid()
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == me:
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmdline = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if text in cmdline:
            found.append(int(pid))
    return found


def process_alive(pid):
    """Whether `pid` exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except (OSError, IndexError):
        return False


def kill_processes_mentioning(text):
    for pid in processes_mentioning(text):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def cgroup_mounts():
    """The mount points of every cgroup hierarchy (v1 controllers and the v2 unified one)."""
    mounts = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            left, _, right = line.partition(" - ")
            if right.split()[0] in ("cgroup", "cgroup2"):
                mounts.append(left.split()[4])
    return mounts


def cgroup_paths(relative):
    """The directories of the cgroup `relative` (e.g. "seerun-test-x") in every hierarchy."""
    relative = relative.strip("/")
    return [p for p in (os.path.join(m, relative) for m in cgroup_mounts()) if os.path.isdir(p)]


def _thaw_and_kill(cgroup_dir):
    for name, value in (("freezer.state", "THAWED"), ("cgroup.freeze", "0")):
        path = os.path.join(cgroup_dir, name)
        if os.path.exists(path):
            try:
                with open(path, "w") as f:
                    f.write(value)
            except OSError:
                pass
    try:
        with open(os.path.join(cgroup_dir, "cgroup.procs")) as f:
            pids = [int(p) for p in f.read().split()]
    except OSError:
        return
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def remove_cgroup_tree(relative, timeout=10):
    """Kills what is left in the cgroup `relative` and its descendants, in every hierarchy, and
    removes them bottom-up.  Returns the directories that could not be removed."""
    left = []
    for top in cgroup_paths(relative):
        for base, _, _ in sorted(os.walk(top), key=lambda w: -w[0].count("/")):
            deadline = time.monotonic() + timeout
            while True:
                _thaw_and_kill(base)
                try:
                    os.rmdir(base)
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        left.append(base)
                        break
                    time.sleep(0.1)
    return left


_libc = ctypes.CDLL(None, use_errno=True)
MNT_DETACH = 2


def mounts_under(path):
    path = os.path.realpath(path).rstrip("/") + "/"
    found = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            mnt = line.split()[4].replace("\\040", " ")
            if (mnt + "/").startswith(path):
                found.append(mnt)
    return found


def unmount_under(path):
    """Detaches every mount at or below `path`, deepest first (overlays, shm, bind mounts that an
    engine left behind).  Returns what is still mounted."""
    for _ in range(3):
        mounts = mounts_under(path)
        if not mounts:
            return []
        for mnt in sorted(set(mounts), key=lambda m: -m.count("/")):
            _libc.umount2(mnt.encode(), MNT_DETACH)
    return mounts_under(path)


def seerun_state_ids(root=SEERUN_DEFAULT_ROOT):
    try:
        return {e for e in os.listdir(root) if not e.startswith(".")}
    except FileNotFoundError:
        return set()


def builtin_policy():
    """Whether the engines' seerun runs under the built-in policy (its default profile)."""
    return not os.path.exists(OPERATOR_POLICY)


def userns_ranges_held(keys=(), prefix=None):
    """Of seerun's user namespace registry, the keys (STATE_ROOT/ID) still holding a range:
    those in `keys`, or starting with `prefix`. A deleted container's range is released (it
    stays in the file, marked, for the policy's grace period)."""
    from conftest import read_userns_registry  # (conftest is loaded first, by pytest)
    try:
        ranges = read_userns_registry(USERNS_REGISTRY).values()
    except FileNotFoundError:
        return []
    keys = set(keys)
    return sorted(r["key"] for r in ranges if not r.get("released") and
                  (r["key"] in keys or (prefix is not None and r["key"].startswith(prefix))))


def audit_events(cid):
    """seerun's audit log entries about container `cid` (the log the engines' seerun writes:
    the policy's auditLog)."""
    path = json.loads(run([SEERUN, "policy", "show"]).stdout)["auditLog"]
    events = []
    try:
        with open(path) as f:
            for line in f:
                if cid in line:
                    e = json.loads(line)
                    if e.get("id") == cid:
                        events.append(e)
    except FileNotFoundError:
        pass
    return events


def delete_seerun_state(ids, root=SEERUN_DEFAULT_ROOT):
    """`seerun delete --force` of the containers `ids` still in `root`; returns those left."""
    left = set()
    for cid in sorted(ids & seerun_state_ids(root)):
        run([SEERUN, "--root", root, "delete", "--force", cid], check=False, timeout=60)
        if cid in seerun_state_ids(root):
            left.add(cid)
    return left


class Footprint:
    """Host paths that an engine creates whatever its configuration says (podman's blob-info
    cache under /var/lib/containers, netavark's /run/containers, containerd's shim sockets under
    /run/containerd/s, dockerd's /etc/docker/key.json, seerun's default root ...).  Remembers
    which of them existed before the test; afterwards removes, of those that did not, the files
    and the directories left empty: a directory that still holds something (another user's) is
    left alone and reported."""

    def __init__(self, paths):
        self.paths = list(paths)
        self.existed = {p for p in self.paths if os.path.lexists(p)}

    def created(self):
        return [p for p in self.paths if p not in self.existed and os.path.lexists(p)]

    def clean(self):
        # Deepest first so that a parent that the test created is empty when its turn comes.
        for p in sorted(self.created(), key=lambda p: -p.count("/")):
            try:
                if os.path.isdir(p) and not os.path.islink(p):
                    os.rmdir(p)
                else:
                    os.unlink(p)
            except OSError:
                pass
        return [f"left on the host: {p}" for p in self.created()]


class Sandbox:
    """The directory of one engine's run, with a unique tag used for its cgroups, names and
    namespaces, and the clean-up of everything below it."""

    def __init__(self, base, engine):
        self.tag = f"seerun-{engine}-{uuid.uuid4().hex[:8]}"
        # Unix socket paths are limited to 108 bytes: keep the sandbox path short.
        self.dir = tempfile.mkdtemp(prefix=f"{self.tag}-", dir=base)
        self.problems = []

    def path(self, *parts):
        p = os.path.join(self.dir, *parts)
        return p

    def mkdir(self, *parts):
        p = self.path(*parts)
        os.makedirs(p, exist_ok=True)
        return p

    def remove(self, cgroup_parents=()):
        """Kills every process that mentions the sandbox, removes the given cgroup trees,
        unmounts and deletes the directory.  What could not be cleaned is in self.problems."""
        deadline = time.monotonic() + 10
        while processes_mentioning(self.dir) and time.monotonic() < deadline:
            kill_processes_mentioning(self.dir)
            time.sleep(0.1)
            conftest.reap_children()  # (their helpers end up our children)
        self.problems += [f"process left: {p}" for p in processes_mentioning(self.dir)]
        for cg in cgroup_parents:
            self.problems += [f"cgroup left: {d}" for d in remove_cgroup_tree(cg)]
        still = unmount_under(self.dir)
        self.problems += [f"mount left: {m}" for m in still]
        if not still:
            shutil.rmtree(self.dir, ignore_errors=True)
        if os.path.exists(self.dir):
            self.problems.append(f"directory left: {self.dir}")
        return self.problems


# ---------------------------------------------------------------------------------------------
# Configuration files


def load_toml(path):
    import tomllib  # Python 3.11 (Debian 12's python3)
    with open(path, "rb") as f:
        return tomllib.load(f)


def tomllib_loads(text):
    import tomllib
    return tomllib.loads(text)


def deep_merge(base, override):
    """`base` with `override`'s keys put over it, tables merged key by key."""
    out = dict(base)
    for k, v in override.items():
        out[k] = deep_merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) \
            else v
    return out


def toml_dumps(data):
    """Enough TOML for the engines' configuration files: tables, strings, numbers, booleans and
    lists of them."""
    lines = []

    def key(k):
        return k if re.fullmatch(r"[A-Za-z0-9_-]+", k) else json.dumps(k)

    def value(v):
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, (int, float)):
            return repr(v)
        if isinstance(v, str):
            return json.dumps(v)  # a TOML basic string takes JSON's escapes
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        raise TypeError(f"no TOML for {v!r}")

    def table(prefix, d):
        scalars = [(k, v) for k, v in d.items() if not isinstance(v, dict)]
        tables = [(k, v) for k, v in d.items() if isinstance(v, dict)]
        if prefix and (scalars or not tables):
            lines.append(f"\n[{prefix}]")
        for k, v in scalars:
            lines.append(f"{key(k)} = {value(v)}")
        for k, v in tables:
            table(f"{prefix}.{key(k)}" if prefix else key(k), v)

    table("", data)
    return "\n".join(lines).lstrip("\n") + "\n"


def write_file(path, text):
    with open(path, "w") as f:
        f.write(text)
    return path


# ---------------------------------------------------------------------------------------------
# Images


def oci_arch():
    machine = platform.machine()
    return {"x86_64": "amd64", "aarch64": "arm64", "armv7l": "arm", "ppc64le": "ppc64le",
            "s390x": "s390x", "riscv64": "riscv64", "i686": "386"}.get(machine, machine)


def _sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def tar_rootfs(rootfs, out):
    """A layer tarball of a root filesystem, with numeric owners (ids as on disk)."""
    run(["tar", "--numeric-owner", "-C", rootfs, "-cf", out, "."], timeout=600)
    return out


def busybox_layer(workdir):
    """The busybox root filesystem of the integration tests (contrib/make-busybox-rootfs.sh), with
    the home directory of its non-root user, as a layer tarball."""
    rootfs = os.path.join(workdir, "busybox-rootfs")
    run([os.path.join(TOP, "contrib", "make-busybox-rootfs.sh"), rootfs])
    home = os.path.join(rootfs, "home", "user")
    os.makedirs(home)
    os.chown(home, USER_UID, USER_UID)
    out = tar_rootfs(rootfs, os.path.join(workdir, "busybox-layer.tar"))
    shutil.rmtree(rootfs)
    return out


def debian_layer():
    """A Debian root filesystem (debootstrap minbase + python3, user "user" with uid 1000) as a
    layer tarball, built once and cached in CACHE_DIR; concurrent runs wait on a lock."""
    arch = oci_arch()
    out = os.path.join(CACHE_DIR, f"debian-{DEBIAN_SUITE}-python3-{arch}.tar")
    if os.path.exists(out):
        return out
    if shutil.which("debootstrap") is None:
        pytest.skip(f"debootstrap not installed ({SETUP_HINT}) and no cached {out}")
    os.makedirs(CACHE_DIR, exist_ok=True)
    with open(out + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if os.path.exists(out):
            return out
        work = tempfile.mkdtemp(prefix="debootstrap-", dir=CACHE_DIR)
        try:
            root = os.path.join(work, "root")
            run(["debootstrap", "--variant=minbase", "--include=python3", f"--arch={arch}",
                 DEBIAN_SUITE, root, DEBIAN_MIRROR], timeout=1800)
            run(["chroot", root, "useradd", "--create-home", "--uid", str(USER_UID),
                 "--user-group", "--shell", "/bin/bash", "user"])
            # What an image does not need: downloaded packages, package lists, device nodes
            # (every runtime makes /dev), and the host's resolv.conf/hostname.
            for d in ("var/cache/apt/archives", "var/lib/apt/lists", "dev"):
                for e in os.listdir(os.path.join(root, d)):
                    p = os.path.join(root, d, e)
                    if os.path.isdir(p) and not os.path.islink(p):
                        shutil.rmtree(p)
                    else:
                        os.unlink(p)
            tmp = os.path.join(work, "layer.tar")
            tar_rootfs(root, tmp)
            os.rename(tmp, out)
        finally:
            unmount_under(work)  # debootstrap mounts /proc and /sys in the target while it runs
            shutil.rmtree(work, ignore_errors=True)
    return out


def docker_archive(layer, out, tag, cmd=("sh",), user=None):
    """Wraps one layer tarball into a docker-archive image (`docker save`'s format), readable by
    `podman load`, `ctr images import` and `docker load`."""
    diff_id = _sha256_file(layer)
    config = {
        "architecture": oci_arch(),
        "os": "linux",
        "created": "2024-01-01T00:00:00Z",
        "config": {"Env": [f"PATH={IMAGE_PATH}"], "Cmd": list(cmd), "WorkingDir": "/"},
        "rootfs": {"type": "layers", "diff_ids": [f"sha256:{diff_id}"]},
        "history": [{"created": "2024-01-01T00:00:00Z", "created_by": "seerun engine tests"}],
    }
    if user:
        config["config"]["User"] = user
    config_bytes = json.dumps(config, sort_keys=True).encode()
    config_name = hashlib.sha256(config_bytes).hexdigest() + ".json"
    manifest = [{"Config": config_name, "RepoTags": [tag], "Layers": [f"{diff_id}/layer.tar"]}]

    def add_bytes(t, name, data):
        info = tarfile.TarInfo(name)
        info.size = len(data)
        info.mtime = 0
        t.addfile(info, io.BytesIO(data))

    with tarfile.open(out, "w") as t:
        t.add(layer, arcname=f"{diff_id}/layer.tar")
        add_bytes(t, config_name, config_bytes)
        add_bytes(t, "manifest.json", json.dumps(manifest).encode())
    return out


class Images:
    """The two test images as docker-archive tarballs in `workdir`."""

    def __init__(self, workdir):
        self.workdir = workdir
        self.busybox = docker_archive(busybox_layer(workdir),
                                      os.path.join(workdir, "busybox-image.tar"), BUSYBOX_IMAGE)
        self._debian = None

    @property
    def debian(self):
        if self._debian is None:
            self._debian = docker_archive(debian_layer(),
                                          os.path.join(self.workdir, "debian-image.tar"),
                                          DEBIAN_IMAGE, cmd=("/bin/bash",))
        return self._debian
