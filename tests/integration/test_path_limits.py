"""Paths built from config.json never truncate: a path that does not fit is refused, naming
the field, and never cut to a prefix that names another object (issue 12 item 3: one
path-join helper that fails on truncation)."""
import os

from conftest import Bundle  # noqa: F401  (the fixtures come from conftest)


def run(seerun, bundle, **kw):
    return seerun.cmd("run", "--bundle", bundle.write(), seerun.id(), **kw)


def test_a_root_path_too_long_to_join_is_refused_not_cut_to_another_directory(seerun, bundle):
    # "<rootfs>/././.../missing": cut at PATH_MAX, what is left would name the shared root
    # filesystem although root.path names a directory that does not exist.  (The old code
    # refused it too, later, when the path was opened: a guard for the join, not an attack
    # that worked.)
    rootfs = bundle.config["root"]["path"]
    padding = "/." * ((4096 - len(rootfs)) // 2 + 8)
    bundle.config["root"]["path"] = rootfs + padding + "/missing"
    assert not os.path.exists(rootfs + "/missing")
    bundle.shell("echo RAN")
    r = run(seerun, bundle)
    assert "RAN" not in r.stdout, (r.stdout, r.stderr)
    assert r.returncode != 0
    assert "root.path" in r.stderr and "too long" in r.stderr, r.stderr
    assert seerun.list_ids() == []


def test_a_device_path_too_long_to_copy_is_refused_not_made_elsewhere(seerun, bundle):
    # Cut at 4096 bytes, the last "/" of what was left named another parent and another
    # name: the node was made at a path the config never named.
    name = "d" * 200
    path = "/dev/" + "/".join([name] * 21)  # about 4200 bytes, each component a valid name
    cut = path[:4095]
    bundle.linux["devices"] = [{"path": path, "type": "c", "major": 1, "minor": 3,
                                "fileMode": 0o666, "uid": 0, "gid": 0}]
    bundle.shell(f"test -e {cut} && echo CUT-NODE; echo RAN")
    r = run(seerun, bundle)
    assert "CUT-NODE" not in r.stdout and "RAN" not in r.stdout, (r.stdout, r.stderr)
    assert r.returncode != 0
    assert "linux.devices[0]" in r.stderr and "too long" in r.stderr, r.stderr
    assert seerun.list_ids() == []
