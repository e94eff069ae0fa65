"""Other containers' storage as a bind source, under the default profile.

A container engine keeps every container's image layers, root filesystem and private files in
its storage: podman's and CRI-O's /var/lib/containers/storage, Docker's /var/lib/docker,
containerd's snapshots and the bundles below /run/containerd.  A tenant who names one of those
directories as a bind source (`podman run -v /var/lib/containers/storage/overlay/...:/x`)
reads another tenant's files (secrets in its environment file, its root filesystem) and, with
a writable bind, rewrites them.  Each test plants a victim where the engine would keep it (in
the engine's default place on this host, removed afterwards), asks for the bind the way a
tenant would, and checks what the container saw, the audit log and `seerun policy check`.
What an engine legitimately binds from its storage stays allowed: the container's own files
(its bundle, its own directory named by its id) and named volumes."""
import json
import os
import pathlib
import shutil
import subprocess
import uuid

import pytest

from conftest import Bundle
from test_escape import decision, decisions
from test_escape_idmap_state import add_mount, bind, check_agrees
from test_hostile_configs import refused, run


@pytest.fixture
def plant():
    """plant(path, secret): makes path (a directory) with a file `secret` in it, creating
    what is missing above it; everything it created is removed at the end."""
    made = []

    def make(path, secret="victim's secret"):
        top = path
        while not os.path.exists(os.path.dirname(top)):
            top = os.path.dirname(top)
        if not os.path.exists(top):
            made.append(top)
        os.makedirs(path, mode=0o755, exist_ok=True)
        with open(os.path.join(path, "secret"), "w") as f:
            f.write(secret)
        os.chmod(os.path.join(path, "secret"), 0o644)
        return path

    yield make
    for top in reversed(made):
        shutil.rmtree(top, ignore_errors=True)


def victim_id():
    return "victim" + uuid.uuid4().hex[:10]


STORES = {
    "podman's image layers": "/var/lib/containers/storage/overlay/{v}/diff",
    "podman's container root filesystems": "/var/lib/containers/storage/overlay/{v}/merged",
    "podman's other containers' files": "/var/lib/containers/storage/overlay-containers/{v}"
                                        "/userdata",
    "podman's other containers' run-time files": "/run/containers/storage/overlay-containers/"
                                                 "{v}/userdata",
    "docker's layers": "/var/lib/docker/overlay2/{v}/merged",
    "docker's other containers' files": "/var/lib/docker/containers/{v}",
    "containerd's snapshots": "/var/lib/containerd/io.containerd.snapshotter.v1.overlayfs/"
                              "snapshots/{v}/fs",
    "containerd's other bundles": "/run/containerd/io.containerd.runtime.v2.task/k8s.io/{v}"
                                  "/rootfs",
}


@pytest.mark.parametrize("what", sorted(STORES))
@pytest.mark.parametrize("mode", ["ro", "rw"])
def test_another_containers_storage_cannot_be_bound(hardened, bundle, plant, what, mode):
    victim = plant(STORES[what].format(v=victim_id()))
    bundle.shell("cat /victim/secret; echo written > /victim/secret")
    i = add_mount(bundle, bind("/victim", victim, "rbind", mode))
    field = f"mounts[{i}].source"
    r = run(hardened, bundle)
    assert "victim's secret" not in r.stdout, r.stdout
    d = refused(hardened, r, field, "container engine's storage")
    assert victim in r.stderr, r.stderr
    check_agrees(hardened, bundle, field, d)
    with open(os.path.join(victim, "secret")) as f:
        assert f.read() == "victim's secret"


def test_another_name_for_an_engines_storage_is_refused_too(hardened, bundle, plant, tmp_path):
    # A symlink elsewhere, and the directory above the victim: judged by what they are.
    v = victim_id()
    victim = plant(STORES["podman's container root filesystems"].format(v=v))
    link = tmp_path / "innocent"
    os.symlink(victim, link)
    bundle.shell("cat /victim/secret")
    i = add_mount(bundle, bind("/victim", link, "bind", "ro"))
    r = run(hardened, bundle)
    assert "victim's secret" not in r.stdout
    refused(hardened, r, f"mounts[{i}].source", "container engine's storage")


@pytest.mark.parametrize("store", ["/var/lib/containers/storage/overlay-containers/{id}/userdata",
                                   "/run/containers/storage/overlay-containers/{id}/userdata",
                                   "/var/lib/docker/containers/{id}"])
def test_the_containers_own_directory_in_the_engines_storage_can_be_bound(hardened, bundle,
                                                                          plant, store):
    # What podman, CRI-O and Docker bind from there: the container's own hosts, resolv.conf,
    # hostname, .containerenv, in the directory named by its id.
    cid = hardened.id(uuid.uuid4().hex[:6])
    own = plant(store.format(id=cid), secret="own hosts file")
    bundle.shell("cat /etc/x-hosts")
    add_mount(bundle, bind("/etc/x-hosts", os.path.join(own, "secret"), "bind", "ro"))
    r = hardened.cmd("run", "--bundle", bundle.write(), cid)
    assert r.returncode == 0 and r.stdout == "own hosts file", r.stderr
    # Another id's directory beside it is not the container's own.
    other = plant(store.format(id=cid + "x"))
    bundle.config["mounts"][-1]["source"] = os.path.join(other, "secret")
    r = hardened.cmd("run", "--bundle", bundle.write(), hardened.id(uuid.uuid4().hex[:6]))
    assert r.returncode != 0 and "own hosts file" not in r.stdout
    assert decision(hardened, f"mounts[{len(bundle.config['mounts']) - 1}].source")[
        "kind"] == "refused"


def test_a_bundle_in_containerds_task_directory_binds_its_own_files(hardened, busybox_rootfs,
                                                                    seerun, plant):
    # containerd keeps each container's bundle (its rootfs, the files the shim writes) in
    # /run/containerd/io.containerd.runtime.v2.task/<namespace>/<id>.
    cid = hardened.id(uuid.uuid4().hex[:6])
    path = plant(f"/run/containerd/io.containerd.runtime.v2.task/sr-test/{cid}",
                 secret="own file")
    b = Bundle(pathlib.Path(path), busybox_rootfs, seerun)
    b.shell("cat /own/secret")
    add_mount(b, bind("/own", path, "bind", "ro"))
    r = hardened.cmd("run", "--bundle", b.write(), cid)
    assert r.returncode == 0 and r.stdout == "own file", r.stderr


@pytest.mark.parametrize("volume", ["/var/lib/docker/volumes/{v}/_data",
                                    "/var/lib/containers/storage/volumes/{v}/_data"])
def test_named_volumes_are_still_bound(hardened, bundle, plant, volume):
    vol = plant(volume.format(v=victim_id()), secret="shared volume")
    # Not /data: the mount point is made in the shared busybox tree, where test_escape_overlay
    # needs /data absent.
    bundle.shell("cat /named-volume/secret")
    add_mount(bundle, bind("/named-volume", vol, "rbind", "rw"))
    r = run(hardened, bundle)
    assert r.returncode == 0 and r.stdout == "shared volume", r.stderr


def mount_busybox_overlay(plant, busybox_rootfs, lower, upper, work, merged):
    """An overlay at merged (planted, as are its layers, empty): the busybox tree as its
    lower layer; the caller unmounts it."""
    for d in (lower, upper, work, merged):
        os.unlink(os.path.join(plant(d), "secret"))
    shutil.copytree(busybox_rootfs, lower, symlinks=True, dirs_exist_ok=True)
    for sub in ("run", "var/tmp", "tmp"):
        os.makedirs(os.path.join(lower, sub), exist_ok=True)
    subprocess.run(["mount", "-t", "overlay", "overlay", "-o",
                    f"lowerdir={lower},upperdir={upper},workdir={work}", merged], check=True)


@pytest.fixture
def podman_layer(busybox_rootfs, plant):
    """podman's layout in its default storage: a layer's overlay mounted at
    overlay/<L>/merged and containers.json naming the container that owns it.  make(cid)
    returns (merged, userdata); everything is unmounted and removed after."""
    store = "/var/lib/containers/storage"
    if os.path.exists(f"{store}/overlay-containers/containers.json"):
        pytest.skip("podman's own records are on this host: not touched")
    mounted = []

    def make(cid):
        layer = victim_id()
        merged = f"{store}/overlay/{layer}/merged"
        mount_busybox_overlay(plant, busybox_rootfs, f"{store}/overlay/{layer}/lower",
                              f"{store}/overlay/{layer}/diff", f"{store}/overlay/{layer}/work",
                              merged)
        mounted.append(merged)
        userdata = plant(f"{store}/overlay-containers/{cid}/userdata")
        with open(f"{store}/overlay-containers/containers.json", "w") as f:
            json.dump([{"id": cid, "layer": layer}], f)
        return merged, userdata

    yield make
    for m in mounted:
        subprocess.run(["umount", "-l", m], check=False)
    if os.path.exists(f"{store}/overlay-containers/containers.json"):
        os.unlink(f"{store}/overlay-containers/containers.json")


def test_podmans_own_overlay_in_its_storage_is_the_root(hardened, busybox_rootfs, seerun,
                                                       podman_layer, plant):
    cid = hardened.id(uuid.uuid4().hex[:6])
    merged, userdata = podman_layer(cid)
    b = Bundle(pathlib.Path(userdata), busybox_rootfs, seerun)
    b.config["root"]["path"] = merged
    b.shell("echo own root")
    r = hardened.cmd("run", "--bundle", b.write(), cid)
    assert r.returncode == 0 and r.stdout == "own root\n", r.stderr
    d = [e for e in decisions(hardened, "root.path") if e.get("id") == cid]
    assert d and d[-1]["kind"] == "allowed" and "containers.json" in d[-1]["reason"], d


def test_another_containers_overlay_in_an_engines_storage_is_not_a_root(hardened, bundle,
                                                                       podman_layer):
    # The layer is the victim's (containers.json says so); this bundle is not its userdata.
    merged, _ = podman_layer(hardened.id("victim"))
    bundle.config["root"]["path"] = merged
    bundle.shell("echo ran")
    r = run(hardened, bundle)
    assert r.stdout == ""
    refused(hardened, r, "root.path", "container engine's storage")
