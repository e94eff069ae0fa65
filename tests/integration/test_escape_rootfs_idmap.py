"""root.path names a host directory: idmapped, the container's root would be on-disk root there
(its 0600 files read, root-owned files made).  Mapping ids is granting them: only a root
filesystem in the bundle, below the profile's rootfs.idmapPaths, or an engine's overlay (rebuilt
from its idmapped layers) is idmapped; any other directory is mounted as it is, its files the
host's, unmapped (nobody) inside.  (A red-team finding.)"""
import json
import os
import shutil
import tempfile

import pytest


@pytest.fixture
def host_dir(busybox_rootfs):
    # Outside the test session's temporary directory, which the test policy lists.
    d = tempfile.mkdtemp(prefix="seerun-rootfs-test.", dir="/var/tmp")
    try:
        root = os.path.join(d, "root")
        shutil.copytree(busybox_rootfs, root, symlinks=True, copy_function=os.link)
        # Its mount points exist (an unmapped root gets none made: nothing of the host's is
        # written on a config's say-so).
        for m in ("var/tmp", "run", "tmp", "proc", "sys", "dev"):
            os.makedirs(os.path.join(root, m), exist_ok=True)
        os.chmod(d, 0o700)
        with open(os.path.join(root, "secret"), "w") as f:
            f.write("TOPSECRET\n")
        os.chmod(os.path.join(root, "secret"), 0o600)
        yield root
    finally:
        shutil.rmtree(d, ignore_errors=True)


def test_a_host_directory_as_root_path_is_not_idmapped(hardened, bundle, host_dir):
    bundle.config["root"]["path"] = host_dir
    bundle.shell("cat /secret 2>&1; id -u; stat -c %u /bin/busybox")
    r = hardened.cmd("run", "--bundle", bundle.write(), hardened.id())
    assert r.returncode == 0, r.stderr
    out = r.stdout.splitlines()
    assert "TOPSECRET" not in r.stdout, r.stdout
    assert "Permission denied" in out[0], out
    assert out[1] == "0"
    assert out[2] == "65534", out  # the host's root-owned files are nobody's inside
    d = [x for x in hardened.audit() if x.get("field") == "root.path" and
         x.get("kind") == "enforced"]
    assert d and d[0]["applied"] == '"not idmapped"', hardened.audit()
    assert "rootfs.idmapPaths" in d[0]["reason"]
    # policy check says the same.
    r = hardened.cmd("policy", "check", "--bundle", bundle.write())
    doc = json.loads(r.stdout)
    assert any(x["field"] == "root.path" and x["applied"] == '"not idmapped"'
               for x in doc["decisions"]), doc


def test_a_root_in_the_bundle_is_idmapped(hardened, bundle, busybox_rootfs):
    inside = os.path.join(bundle.path, "rootfs")
    shutil.copytree(busybox_rootfs, inside, symlinks=True, copy_function=os.link)
    bundle.config["root"]["path"] = "rootfs"
    bundle.shell("stat -c %u /bin/busybox")
    r = hardened.cmd("run", "--bundle", bundle.write(), hardened.id())
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "0"  # the image's owners show inside


def test_an_unmapped_root_gets_no_mount_points_made_in_it(hardened, bundle, host_dir):
    """Nothing is written into a host directory on the config's say-so: a mount point it lacks
    is an error, not a directory made there as root."""
    os.rmdir(os.path.join(host_dir, "run"))
    bundle.config["root"]["path"] = host_dir
    r = hardened.cmd("run", "--bundle", bundle.write(), hardened.id())
    assert r.returncode != 0
    assert "create `/run` in the container: Permission denied" in r.stderr, r.stderr
    assert not os.path.exists(os.path.join(host_dir, "run"))
