"""Host objects a hostile config names under the default profile (issue 13, classes 2, 5, 7, 8):
the policy judges the object itself, from the descriptor that is then mounted, whatever name
reaches it.

- a bind source swapped for a symlink to / while create runs (check one object, mount
  another) never puts the host's / inside, nor a namespace path swapped for the host's the
  host's network;
- a hard link elsewhere to a file below a denied directory, and a second bind-mount view of a
  denied directory, are refused like the denied path itself;
- a host unix socket, a FIFO and the daemons' socket directories (/run/dbus, /run/systemd, ...)
  are refused unless the profile's `mounts.allowSockets` lists them;
- a root.path that is the host's / (a symlink to it, a bind view of it) is refused.

Every refusal names the field, the rule and the knob, is in the audit log, and `seerun policy
check --bundle` agrees with create."""
import ctypes
import json
import os
import shutil
import socket
import subprocess
import threading
import time
import uuid

import pytest

libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD = -100
RENAME_EXCHANGE = 2


def exchange(a, b):
    """renameat2(RENAME_EXCHANGE): the two names swap atomically."""
    if libc.renameat2(AT_FDCWD, a.encode(), AT_FDCWD, b.encode(), RENAME_EXCHANGE) != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))


def decisions(s, field):
    return [d for d in s.audit() if d.get("event") == "decision" and d["field"] == field]


def bind(bundle, source, destination, *options):
    bundle.config["mounts"].append({"destination": destination, "type": "none",
                                    "source": str(source),
                                    "options": list(options) or ["rbind", "ro"]})
    return len(bundle.config["mounts"]) - 1


def assert_refused(s, bundle, field, *words):
    """create is refused for field, with words in the error; audited; policy check agrees;
    nothing is left."""
    path = bundle.write()
    r = s.cmd("create", "--bundle", path, s.id(uuid.uuid4().hex[:6]))
    assert r.returncode != 0, f"{field}: created: {r.stdout}{r.stderr}"
    assert f"{field}:" in r.stderr, r.stderr
    for w in words:
        assert w in r.stderr, f"{w!r} not in: {r.stderr}"
    found = decisions(s, field)
    assert found and found[-1]["kind"] == "refused", found
    for w in words:
        assert w in found[-1]["reason"], found[-1]
    assert s.list_ids() == []
    c = s.cmd("policy", "check", "--bundle", path)
    assert c.returncode == 1, f"policy check allowed what create refused: {c.stdout}"
    out = json.loads(c.stdout)
    assert out["allowed"] is False
    checked = [d for d in out["decisions"] if d["field"] == field]
    assert checked and checked[-1]["kind"] == "refused", out["decisions"]
    for w in words:
        assert w in checked[-1]["reason"], checked[-1]
    return r.stderr


def run_ok(s, bundle):
    r = s.cmd("run", "--bundle", bundle.write(), s.id(uuid.uuid4().hex[:6]))
    assert r.returncode == 0, f"({r.returncode}) {r.stderr}{r.stdout}"
    return r.stdout


def set_profile_knob(s, section, key, value):
    """Edits this test's policy file: profiles.default.<section>.<key> = value."""
    with open(s.policy) as f:
        policy = json.load(f)
    policy["profiles"]["default"].setdefault(section, {})[key] = value
    with open(s.policy, "w") as f:
        json.dump(policy, f, indent=2)


@pytest.fixture(autouse=True)
def own_rootfs(tmp_path, busybox_rootfs, bundle):
    """The test's own copy of the root filesystem (files hard-linked, directories its own): the
    mount points of the binds that are allowed are made in it, not in the shared one."""
    path = tmp_path / "own-rootfs"
    shutil.copytree(busybox_rootfs, path, symlinks=True, copy_function=os.link)
    bundle.config["root"]["path"] = str(path)
    return path


@pytest.fixture
def secret_dir():
    """A directory of the test's below /root (a denied tree), removed afterwards."""
    if not os.path.isdir("/root"):
        pytest.skip("no /root on this host")
    d = f"/root/seerun-test-{uuid.uuid4().hex[:8]}"
    os.mkdir(d, 0o700)
    with open(os.path.join(d, "secret"), "w") as f:
        f.write("host-root-secret\n")
    os.chmod(os.path.join(d, "secret"), 0o600)
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def bind_view(tmp_path):
    """mount --bind SOURCE at a directory of the test's; unmounted afterwards."""
    made = []

    def view(source, name="view"):
        target = tmp_path / name
        target.mkdir()
        subprocess.run(["mount", "--bind", source, str(target)], check=True)
        made.append(target)
        return target
    yield view
    for t in reversed(made):
        subprocess.run(["umount", "-l", str(t)], check=False)


# ---- class 2: the object judged is the object mounted ----


def test_a_bind_source_swapped_for_a_symlink_to_root_during_create_never_binds_the_host_root(
        hardened, bundle, tmp_path):
    # A directory and a symlink to / trade names as fast as a thread can swap them, while
    # containers are created binding that name: whichever the policy judged is what is
    # mounted, so each either sees the directory or is refused for "/", never the host's /.
    src = tmp_path / "src"
    src.mkdir()
    (src / "mine").write_text("tenant\n")
    other = tmp_path / "other"
    os.symlink("/", other)
    index = bind(bundle, src, "/host")
    bundle.shell("ls /host")
    path = bundle.write()
    stop = threading.Event()

    def flip():
        while not stop.is_set():
            exchange(str(src), str(other))

    t = threading.Thread(target=flip, daemon=True)
    t.start()
    seen = {"mine": 0, "refused": 0}
    try:
        deadline = time.monotonic() + 60
        for n in range(150):
            if time.monotonic() > deadline:
                break
            r = hardened.cmd("run", "--bundle", path, hardened.id(f"race{n}"))
            listing = r.stdout.split()
            assert "etc" not in listing and "proc" not in listing and "boot" not in listing, \
                f"run {n}: the host's / was bound: {listing}"
            if r.returncode == 0:
                assert listing == ["mine"], r.stdout
                seen["mine"] += 1
            else:
                assert f"mounts[{index}].source" in r.stderr, r.stderr
                seen["refused"] += 1
    finally:
        stop.set()
        t.join()
    assert seen["mine"] + seen["refused"] > 0
    assert hardened.list_ids() == []


# ---- class 5: other names for a denied inode ----


def test_a_hard_link_to_a_file_below_a_denied_directory_is_refused(hardened, bundle, tmp_path,
                                                                   secret_dir):
    secret = os.path.join(secret_dir, "secret")
    link = tmp_path / "innocent"
    if os.stat(tmp_path).st_dev != os.stat(secret_dir).st_dev:
        pytest.skip("the test's directory is not on /root's filesystem")
    os.link(secret, link)
    index = bind(bundle, link, "/innocent", "bind", "ro")
    bundle.shell("cat /innocent")
    assert_refused(hardened, bundle, f"mounts[{index}].source", "hard link",
                   "mounts.allowHardLinks")
    # The operator can allow it by name (the file is host root's 0600: the container's root,
    # an unprivileged host uid, sees it bound but cannot read it).
    set_profile_knob(hardened, "mounts", "allowHardLinks", [str(tmp_path)])
    bundle.shell("test -f /innocent && echo bound")
    assert "bound" in run_ok(hardened, bundle)


def test_a_second_bind_view_of_a_denied_directory_is_refused(hardened, bundle, secret_dir,
                                                             bind_view):
    view = bind_view(secret_dir)
    index = bind(bundle, view, "/view")
    bundle.shell("cat /view/secret")
    assert_refused(hardened, bundle, f"mounts[{index}].source", '"/root"')


def test_a_bind_view_of_a_file_below_a_denied_directory_is_refused(hardened, bundle, tmp_path,
                                                                  secret_dir):
    target = tmp_path / "file-view"
    target.write_text("")
    subprocess.run(["mount", "--bind", os.path.join(secret_dir, "secret"), str(target)],
                   check=True)
    try:
        index = bind(bundle, target, "/f", "bind", "ro")
        bundle.shell("cat /f")
        assert_refused(hardened, bundle, f"mounts[{index}].source", '"/root"')
    finally:
        subprocess.run(["umount", "-l", str(target)], check=False)


def test_an_rbind_of_a_directory_holding_a_view_of_a_denied_directory_is_refused(
        hardened, bundle, tmp_path, secret_dir):
    # The mounts below an rbind source come along: a view of /root/x mounted inside an
    # innocent directory is /root/x inside the container.
    outer = tmp_path / "outer"
    (outer / "inner").mkdir(parents=True)
    subprocess.run(["mount", "--bind", secret_dir, str(outer / "inner")], check=True)
    try:
        index = bind(bundle, outer, "/outer", "rbind", "ro")
        bundle.shell("cat /outer/inner/secret")
        assert_refused(hardened, bundle, f"mounts[{index}].source", '"/root"')
    finally:
        subprocess.run(["umount", "-l", str(outer / "inner")], check=False)


def test_a_root_path_holding_a_view_of_the_hosts_root_is_refused(hardened, bundle, own_rootfs):
    (own_rootfs / "host").mkdir()
    subprocess.run(["mount", "--bind", "/", str(own_rootfs / "host")], check=True)
    try:
        bundle.shell("cat /host/etc/shadow")
        assert_refused(hardened, bundle, "root.path", '"/"')
    finally:
        subprocess.run(["umount", "-l", str(own_rootfs / "host")], check=False)


# ---- class 7: host sockets ----


def test_a_bind_of_a_host_unix_socket_is_refused_unless_the_profile_allows_it(
        hardened, bundle, tmp_path):
    # A daemon's control socket under another name: bound in, the container talks to it.
    sockdir = tmp_path / "sock"
    sockdir.mkdir()
    path = sockdir / "ctl"
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        srv.bind(str(path))
        srv.listen(1)
        index = bind(bundle, path, "/ctl.sock", "bind")
        bundle.shell("test -S /ctl.sock && echo socket-inside")
        assert_refused(hardened, bundle, f"mounts[{index}].source", "socket",
                       "mounts.allowSockets")
        set_profile_knob(hardened, "mounts", "allowSockets", [str(sockdir)])
        assert "socket-inside" in run_ok(hardened, bundle)
    finally:
        srv.close()


def test_a_bind_of_a_host_fifo_is_refused(hardened, bundle, tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    index = bind(bundle, fifo, "/pipe", "bind")
    bundle.shell("test -p /pipe && echo fifo-inside")
    assert_refused(hardened, bundle, f"mounts[{index}].source", "FIFO", "mounts.allowSockets")


@pytest.mark.parametrize("where", ["/run/dbus", "/run/systemd", "/var/run/dbus",
                                   "/run/containerd", "/run/docker", "/run/podman"])
def test_a_bind_of_a_daemon_socket_directory_is_refused(hardened, bundle, where):
    if not os.path.isdir(where):
        pytest.skip(f"no {where} on this host")
    index = bind(bundle, where, "/d")
    # /run/containerd holds containerd's bundles where containerd runs: refused first as
    # containing that engine storage (test_escape_engine_storage.py), else as a socket
    # directory.
    if os.path.isdir(os.path.join(where, "io.containerd.runtime.v2.task")):
        assert_refused(hardened, bundle, f"mounts[{index}].source",
                       "a container engine's storage")
        return
    assert_refused(hardened, bundle, f"mounts[{index}].source", "socket",
                   "mounts.allowSockets")


def test_a_bind_of_a_directory_below_a_daemon_socket_directory_is_refused(hardened, bundle):
    # A directory of the test's below /run/systemd (where the journal's and systemd's own
    # sockets live, in subdirectories).  A regular file there reaches no daemon: allowed.
    if not os.path.isdir("/run/systemd"):
        pytest.skip("no /run/systemd on this host")
    d = f"/run/systemd/seerun-test-{uuid.uuid4().hex[:8]}"
    os.mkdir(d)
    try:
        with open(os.path.join(d, "plain"), "w") as f:
            f.write("plain\n")
        index = bind(bundle, d, "/d")
        assert_refused(hardened, bundle, f"mounts[{index}].source", '"/run/systemd"',
                       "mounts.allowSockets")
        bundle.config["mounts"].pop()
        bind(bundle, os.path.join(d, "plain"), "/plain", "bind", "ro")
        bundle.shell("cat /plain")
        assert run_ok(hardened, bundle) == "plain\n"
    finally:
        shutil.rmtree(d, ignore_errors=True)


# ---- class 8: root.path ----


def test_a_root_path_that_is_a_symlink_to_the_hosts_root_is_refused(hardened, bundle, tmp_path):
    os.symlink("/", bundle.path / "rootfs")
    bundle.config["root"]["path"] = "rootfs"
    bundle.shell("cat /etc/shadow")
    assert_refused(hardened, bundle, "root.path", '"/"')


def test_a_root_path_that_is_a_bind_view_of_the_hosts_root_is_refused(hardened, bundle,
                                                                      bind_view):
    view = bind_view("/")
    bundle.config["root"]["path"] = str(view)
    bundle.shell("cat /etc/shadow")
    assert_refused(hardened, bundle, "root.path", '"/"')


def test_a_root_path_below_a_denied_directory_is_refused(hardened, bundle, secret_dir,
                                                         busybox_rootfs):
    root = os.path.join(secret_dir, "rootfs")
    shutil.copytree(busybox_rootfs, root, symlinks=True)
    bundle.config["root"]["path"] = root
    assert_refused(hardened, bundle, "root.path", '"/root"')


def test_an_ordinary_root_and_binds_still_run(hardened, bundle, tmp_path):
    d = tmp_path / "data"
    d.mkdir()
    (d / "x").write_text("hello\n")
    f = tmp_path / "file"
    f.write_text("file\n")
    bind(bundle, d, "/data", "rbind", "ro")
    bind(bundle, f, "/file", "bind", "ro")
    bundle.shell("cat /data/x /file")
    assert run_ok(hardened, bundle).split() == ["hello", "file"]


def test_a_namespace_path_swapped_for_the_hosts_during_create_never_joins_the_host(
        hardened, bundle, tmp_path):
    # The netns path is judged (a namespace the engine configured, granted by the annotation)
    # and then joined: a swap to /proc/1/ns/net in between would put the container on the
    # host's network.  Whatever is judged is what is joined.
    name = f"seerun-test-{uuid.uuid4().hex[:8]}"
    subprocess.run(["ip", "netns", "add", name], check=True)
    try:
        ns = tmp_path / "ns"
        other = tmp_path / "other"
        os.symlink(f"/run/netns/{name}", ns)
        os.symlink("/proc/self/ns/net", other)  # the runtime's own: the host's
        bundle.config.setdefault("annotations", {})["io.seerun.network"] = "enabled"
        bundle.linux["namespaces"] = [n for n in bundle.linux["namespaces"]
                                      if n["type"] != "network"]
        bundle.linux["namespaces"].append({"type": "network", "path": str(ns)})
        bundle.shell("tail -n +3 /proc/net/dev | cut -d: -f1")
        path = bundle.write()
        stop = threading.Event()

        def flip():
            while not stop.is_set():
                exchange(str(ns), str(other))

        t = threading.Thread(target=flip, daemon=True)
        t.start()
        ran = refused = 0
        try:
            deadline = time.monotonic() + 60
            for n in range(150):
                if time.monotonic() > deadline:
                    break
                r = hardened.cmd("run", "--bundle", path, hardened.id(f"ns{n}"))
                interfaces = r.stdout.split()
                assert interfaces in ([], ["lo"]), f"run {n}: the host's network: {interfaces}"
                if r.returncode == 0:
                    ran += 1
                else:
                    assert "linux.namespaces" in r.stderr, r.stderr
                    refused += 1
        finally:
            stop.set()
            t.join()
        assert ran + refused > 0
    finally:
        subprocess.run(["ip", "netns", "del", name], check=False)


def test_a_fifo_device_entry_is_the_containers_own_not_the_hosts(hardened, bundle, tmp_path):
    # In a user namespace host nodes are bound in; a FIFO (linux.devices type "p") named after
    # a host FIFO (/run/initctl, say) must not be that FIFO.
    fifo = tmp_path / "hostfifo"
    os.mkfifo(fifo)
    bundle.linux["devices"] = [{"path": str(fifo), "type": "p", "fileMode": 0o600}]
    bundle.shell(f"test -p {fifo} && stat -c %i {fifo}")
    out = run_ok(hardened, bundle).split()
    assert out and int(out[-1]) != os.stat(fifo).st_ino, out
