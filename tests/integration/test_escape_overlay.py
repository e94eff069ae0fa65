"""Host paths named in a mount's options, and overlay root filesystems that are not the
engine's (the red team's open gaps 1 and 2).

A profile that allows `overlay` in `mounts.allowedTypes` (podman's `-v SRC:DST:O` volumes)
must judge every host directory an overlay's options name (`lowerdir=`, `lowerdir+=`,
`datadir+=`, `upperdir=`, `workdir=`, escaped `\\:` and `\\,` included) as it judges a bind's
source, and mount the very directories it judged:

- `lowerdir=/etc` (or `lowerdir+=`, or as a second layer) would show the host's /etc, which
  no bind may: refused, naming `mounts[i].options` and the option;
- `upperdir=` in a denied tree (the audit log's directory) would let the container write
  there: refused;
- a layer through /proc/self/fd, a relative one with `..` or through a symlink out of the
  bundle: refused; a name swapped for a symlink to /etc while create runs is never mounted;
- a layer the policy allows is mounted from the directory judged: its files show, writes go
  to the upper directory, nosuid,nodev are forced;
- any other filesystem type whose source or `*dir=` option is a host path: refused.
"""
import ctypes
import json
import os
import shutil
import subprocess
import threading
import uuid

import pytest

libc = ctypes.CDLL(None, use_errno=True)


def exchange(a, b):
    """renameat2(RENAME_EXCHANGE): the two names swap atomically."""
    if libc.renameat2(-100, a.encode(), -100, b.encode(), 2) != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))


def decisions(s, field):
    return [d for d in s.audit() if d.get("event") == "decision" and d["field"] == field]


def allow_types(s, *types):
    with open(s.policy) as f:
        policy = json.load(f)
    prof = policy["profiles"]["default"]
    base = prof.get("mounts", {}).get("allowedTypes", [])
    prof.setdefault("mounts", {})["allowedTypes"] = base + list(types)
    with open(s.policy, "w") as f:
        json.dump(policy, f, indent=2)


def overlay(bundle, destination, *options):
    bundle.config["mounts"].append({"destination": destination, "type": "overlay",
                                    "source": "overlay", "options": list(options)})
    return len(bundle.config["mounts"]) - 1


@pytest.fixture
def hostile(hardened, bundle, tmp_path, busybox_rootfs):
    """The default profile with overlay allowed, over the test's own copy of the rootfs."""
    allow_types(hardened, "overlay")
    root = tmp_path / "own-rootfs"
    shutil.copytree(busybox_rootfs, root, symlinks=True, copy_function=os.link)
    (root / "x").mkdir(exist_ok=True)  # the shared tree may have one: tests bind at /x
    bundle.config["root"]["path"] = str(root)
    return hardened


@pytest.fixture
def open_dir():
    """A directory the container's root can search (pytest's own are 0700 root's: overlayfs
    reads its layers as the container's root), removed afterwards."""
    d = f"/tmp/seerun-ovl-{uuid.uuid4().hex[:8]}"
    os.mkdir(d)
    os.chmod(d, 0o755)
    try:
        yield __import__("pathlib").Path(d)
    finally:
        subprocess.run(["umount", "-R", "-l", d], capture_output=True)
        shutil.rmtree(d, ignore_errors=True)


def run(s, bundle):
    r = s.cmd("run", "--bundle", bundle.write(), s.id(uuid.uuid4().hex[:6]))
    return r


def assert_refused(s, bundle, field, *words):
    path = bundle.write()
    r = s.cmd("run", "--bundle", path, s.id(uuid.uuid4().hex[:6]))
    assert r.returncode != 0, f"{field}: ran: {r.stdout}{r.stderr}"
    assert f"{field}" in r.stderr, r.stderr
    for w in words:
        assert w in r.stderr, f"{w!r} not in: {r.stderr}"
    found = decisions(s, field.split(":")[0])
    assert found and found[-1]["kind"] == "refused", found
    c = s.cmd("policy", "check", "--bundle", path)
    assert c.returncode == 1, f"policy check allowed what create refused: {c.stdout}"
    return r.stderr


HOST_ETC_MARK = open("/etc/passwd").read().splitlines()[0]


@pytest.mark.parametrize("form", ["lowerdir", "lowerdir+", "second-layer", "escaped-colon"])
def test_an_overlay_lower_layer_of_the_hosts_etc_is_refused_like_a_bind_of_it(
        hostile, bundle, open_dir, form):
    ok = open_dir / "ok"
    ok.mkdir()
    (open_dir / "a:b").mkdir()
    opts = {"lowerdir": ["lowerdir=/etc:" + str(ok)],
            "lowerdir+": ["lowerdir+=/etc", f"lowerdir+={ok}"],
            "second-layer": [f"lowerdir={ok}:/etc"],
            "escaped-colon": [f"lowerdir={open_dir}/a\\:b:/etc"]}[form]
    i = overlay(bundle, "/x", *opts)
    bundle.shell("head -n1 /x/passwd")
    err = assert_refused(hostile, bundle, f"mounts[{i}].options", "lowerdir", "\"/etc\"",
                         "denied host path")
    assert HOST_ETC_MARK not in err


@pytest.fixture
def x11_dir():
    """Subdirectories of /tmp/.X11-unix (a daemon socket directory: X clients connect to the
    sockets there), world-writable as X makes it; removed afterwards."""
    top = "/tmp/.X11-unix"
    made_top = not os.path.isdir(top)
    if made_top:
        os.mkdir(top)
        os.chmod(top, 0o1777)
    d = os.path.join(top, f"seerun-test-{uuid.uuid4().hex[:8]}")
    os.mkdir(d)
    os.chmod(d, 0o1777)
    for sub in ("up", "work"):
        os.mkdir(os.path.join(d, sub))
        os.chmod(os.path.join(d, sub), 0o1777)
    try:
        yield __import__("pathlib").Path(d)
    finally:
        shutil.rmtree(d, ignore_errors=True)
        if made_top:
            shutil.rmtree(top, ignore_errors=True)


def test_an_overlay_upper_layer_in_a_daemon_socket_directory_is_refused(
        hostile, bundle, open_dir, x11_dir):
    # A bind of /tmp/.X11-unix is refused (a socket planted there is one the host's X clients
    # connect to): an overlay with its upper layer there would let the container write one.
    lower = open_dir / "lower"
    lower.mkdir()
    i = overlay(bundle, "/x", f"lowerdir={lower}", f"upperdir={x11_dir}/up",
                f"workdir={x11_dir}/work")
    bundle.shell("echo planted > /x/planted")
    assert_refused(hostile, bundle, f"mounts[{i}].options: upperdir={x11_dir}/up",
                   "daemon socket directory")
    assert not (x11_dir / "up" / "planted").exists()


def test_an_escaped_comma_cannot_smuggle_a_second_option_past_the_judge(
        hostile, bundle, open_dir, x11_dir):
    # One element of config.json's options holding a comma is two options to overlayfs: the
    # second (upperdir in the socket directory) is judged as what it is.
    lower = open_dir / "lower"
    lower.mkdir()
    i = overlay(bundle, "/x", f"lowerdir={lower},upperdir={x11_dir}/up,workdir={x11_dir}/work")
    bundle.shell("echo planted > /x/planted")
    assert_refused(hostile, bundle, f"mounts[{i}].options: upperdir={x11_dir}/up",
                   "daemon socket directory")
    assert not (x11_dir / "up" / "planted").exists()


def test_a_directory_whose_name_holds_escaped_separators_is_judged_and_mounted_as_named(
        hostile, bundle, open_dir):
    tmp_path = open_dir
    odd = tmp_path / "a,b:c"
    odd.mkdir()
    (odd / "marker").write_text("odd-layer\n")
    up, work = tmp_path / "up", tmp_path / "work"
    for d in (up, work):
        d.mkdir()
        os.chmod(d, 0o1777)
    i = overlay(bundle, "/x", f"lowerdir={tmp_path}/a\\,b\\:c", f"upperdir={up}",
                f"workdir={work}")
    bundle.shell("cat /x/marker; echo written > /x/new; grep ' /x ' /proc/self/mounts")
    r = run(hostile, bundle)
    assert r.returncode == 0, r.stderr
    assert "odd-layer" in r.stdout
    assert (up / "new").read_text() == "written\n"
    # nosuid,nodev forced as on a bind, and on record.
    line = [ln for ln in r.stdout.splitlines() if " /x " in ln][0]
    assert "nosuid" in line and "nodev" in line, line
    changed = decisions(hostile, f"mounts[{i}].options")
    assert any(d["kind"] in ("changed", "enforced") and "nosuid" in json.dumps(d)
               for d in changed), changed


@pytest.mark.parametrize("layer,words", [
    ("/proc/self/fd/3", ["/proc"]),
    ("../../..", ["\"..\""]),
])
def test_a_layer_through_proc_or_out_of_the_bundle_is_refused(hostile, bundle, open_dir, layer,
                                                              words):
    i = overlay(bundle, "/x", f"lowerdir={layer}:{open_dir}")
    assert_refused(hostile, bundle, f"mounts[{i}].options: lowerdir=", *words)


def test_a_relative_layer_is_the_bundles_and_a_symlink_out_of_it_is_refused(
        hostile, bundle, open_dir):
    # The bundle where the container's root can search it (layers are read as that root).
    from conftest import Bundle
    root = bundle.config["root"]["path"]
    (open_dir / "bundle").mkdir()
    bundle = Bundle(open_dir / "bundle", root, hostile)
    (bundle.path / "data").mkdir()
    (bundle.path / "data" / "marker").write_text("bundle-layer\n")
    (bundle.path / "out").symlink_to("/usr")
    (bundle.path / "data2").mkdir()
    i = overlay(bundle, "/x", "lowerdir=data:out")
    assert_refused(hostile, bundle, f"mounts[{i}].options: lowerdir=", "symbolic link")
    bundle.config["mounts"][i]["options"] = ["lowerdir=data:data2", "ro"]
    bundle.shell("cat /x/marker")
    r = run(hostile, bundle)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "bundle-layer\n"


def test_a_layer_swapped_for_a_symlink_to_etc_during_create_never_shows_the_hosts_etc(
        hostile, bundle, open_dir):
    tmp_path = open_dir
    # The judged descriptor is what is mounted: whichever the policy saw, the container gets
    # that directory, or nothing.
    d = tmp_path / "swap"
    d.mkdir()
    (d / "passwd").write_text("layer-own\n")
    link = tmp_path / "swap-link"
    link.symlink_to("/etc")
    other = tmp_path / "ok"
    other.mkdir()
    i = overlay(bundle, "/x", f"lowerdir={d}:{other}")
    bundle.shell("head -n1 /x/passwd")
    path = bundle.write()
    stop = threading.Event()

    def swapper():
        while not stop.is_set():
            try:
                exchange(str(d), str(link))
            except OSError:
                pass
    t = threading.Thread(target=swapper, daemon=True)
    t.start()
    seen = []
    try:
        for n in range(12):
            r = hostile.cmd("run", "--bundle", path, hostile.id(f"sw{n}"))
            seen.append((r.returncode, r.stdout, r.stderr))
    finally:
        stop.set()
        t.join()
    for rc, out, err in seen:
        assert HOST_ETC_MARK not in out, (rc, out, err)
        assert rc != 0 or out == "layer-own\n", (rc, out, err)


def test_another_filesystem_type_with_a_host_path_is_refused(hostile, bundle):
    allow_types(hostile, "ext4")
    bundle.config["mounts"].append({"destination": "/x", "type": "ext4", "source": "/dev/vda",
                                    "options": ["ro"]})
    i = len(bundle.config["mounts"]) - 1
    assert_refused(hostile, bundle, f"mounts[{i}].source", "opens by name")
    bundle.config["mounts"][i] = {"destination": "/x", "type": "tmpfs", "source": "tmpfs",
                                  "options": ["workdir=/etc"]}
    assert_refused(hostile, bundle, f"mounts[{i}].options: workdir=/etc", "by name")


# ---- gap 2: an overlay root.path is the engine's only if it is this bundle's ----


@pytest.fixture
def victim_overlay(busybox_rootfs, open_dir):
    """Another container's engine-made overlay root, outside this bundle: the busybox tree as
    its lower layer, an upper layer holding a 0600 file of host root's; unmounted after."""
    d = open_dir / "victim"
    lower = d / "lower"
    shutil.copytree(busybox_rootfs, lower, symlinks=True, copy_function=os.link)
    for sub in ("run", "var/tmp", "tmp"):
        (lower / sub).mkdir(parents=True, exist_ok=True)
    for sub in ("upper/etc", "work", "merged"):
        (d / sub).mkdir(parents=True)
    secret = d / "upper" / "etc" / "victim-secret"
    secret.write_text("victim-root-only\n")
    os.chmod(secret, 0o600)
    subprocess.run(["mount", "-t", "overlay", "overlay", "-o",
                    f"lowerdir={lower},upperdir={d}/upper,workdir={d}/work", str(d / "merged")],
                   check=True)
    try:
        yield d
    finally:
        subprocess.run(["umount", "-l", str(d / "merged")], check=False)


def test_another_containers_overlay_named_as_root_path_is_neither_idmapped_nor_written(
        hardened, bundle, victim_overlay):
    bundle.config["root"]["path"] = str(victim_overlay / "merged")
    bundle.shell("stat -c '%u' /etc/victim-secret; cat /etc/victim-secret 2>&1; true")
    cid = hardened.id("thief")
    r = hardened.cmd("run", "--bundle", bundle.write(), cid)
    assert "victim-root-only" not in r.stdout, r.stdout
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0] == "65534", r.stdout
    d = [e for e in decisions(hardened, "root.path") if e.get("id") == cid]
    assert d and d[-1]["kind"] == "enforced" and d[-1]["applied"] == '"not idmapped"', d
    assert "not in the bundle" in d[-1]["reason"], d[-1]
    assert not [e for e in hardened.audit() if e.get("id") == cid and
                e.get("event") == "rootfs-idmap"]
    # A mount point the image lacks is not made in the victim's overlay as host root.
    bundle.config["mounts"].append({"destination": "/data", "type": "tmpfs",
                                    "source": "tmpfs", "options": []})
    r = hardened.cmd("run", "--bundle", bundle.write(), hardened.id("thief2"))
    assert not (victim_overlay / "upper" / "data").exists()
    assert r.returncode != 0, r.stdout


def test_a_layer_that_is_a_second_mount_view_of_a_denied_tree_is_refused(hostile, bundle, open_dir):
    # mount --bind /etc elsewhere: the layer is /etc wherever it is seen from.
    view = open_dir / "view"
    view.mkdir()
    other = open_dir / "other"
    other.mkdir()
    subprocess.run(["mount", "--bind", "/etc", str(view)], check=True)
    try:
        i = overlay(bundle, "/x", f"lowerdir={view}:{other}")
        bundle.shell("head -n1 /x/passwd")
        assert_refused(hostile, bundle, f"mounts[{i}].options: lowerdir=", "\"/etc\"")
    finally:
        subprocess.run(["umount", "-l", str(view)], check=False)


def test_a_remount_naming_a_host_path_is_refused(hostile, bundle):
    bundle.config["mounts"].append({"destination": "/tmp", "type": "overlay", "source": "overlay",
                                    "options": ["remount", "upperdir=/etc"]})
    i = len(bundle.config["mounts"]) - 1
    assert_refused(hostile, bundle, f"mounts[{i}].options", "upperdir=/etc", "remount")
