"""Red team 4: other containers' storage in the engines' default places, reached despite the
denial of README's hardened defaults (bind sources).

Each test plants a victim where the engine keeps it (in its default place on this host; what
the test created is removed afterwards, existing engine data is never touched), asks for what
a tenant controls (config.json), and checks what the container saw and what is left on the
host."""
import os
import subprocess

import pytest

from test_escape_engine_storage import mount_busybox_overlay, plant, victim_id  # noqa: F401
from test_escape_idmap_state import add_mount, bind
from test_escape_overlay import allow_types, open_dir, overlay  # noqa: F401 (fixture)
from test_hostile_configs import refused, run


# The directories that contain an engine's storage: a bind of one shows every container's
# files below it (cAdvisor's `-v /var/lib/docker:/var/lib/docker:ro`).
ABOVE = {
    "docker's data root": ("/var/lib/docker", "containers/{v}"),
    "podman's storage": ("/var/lib/containers/storage", "overlay-containers/{v}/userdata"),
    "podman's run-time storage": ("/run/containers/storage", "overlay-containers/{v}/userdata"),
    "containerd's root": ("/var/lib/containerd",
                          "io.containerd.snapshotter.v1.overlayfs/snapshots/{v}/fs"),
}


def bind_refused(hardened, bundle, source, destination, script, leaked, how="bind", mode="ro",
                 words=("container engine's storage",)):
    """A bind of source at destination, the container running script: refused naming the
    source field (and words), with nothing of leaked in the container's output."""
    bundle.shell(script)
    i = add_mount(bundle, bind(destination, source, how, mode))
    r = run(hardened, bundle)
    assert leaked not in r.stdout, r.stdout
    refused(hardened, r, f"mounts[{i}].source", *words)


@pytest.mark.parametrize("what", sorted(ABOVE))
@pytest.mark.parametrize("how", ["bind", "rbind"])
def test_a_directory_containing_an_engines_storage_is_no_bind_source(hardened, bundle, plant,
                                                                     what, how):
    top, below = ABOVE[what]
    rel = below.format(v=victim_id())
    victim = plant(os.path.join(top, rel))
    bundle.shell(f"cat /store/{rel}/secret; echo written > /store/{rel}/secret")
    i = add_mount(bundle, bind("/store", top, how, "rw"))
    r = run(hardened, bundle)
    # On the branch: the container prints the victim's secret and overwrites it.
    assert "victim's secret" not in r.stdout, r.stdout
    with open(os.path.join(victim, "secret")) as f:
        assert f.read() == "victim's secret"
    refused(hardened, r, f"mounts[{i}].source", "container engine's storage")


@pytest.fixture
def docker_c8d_rootfs(busybox_rootfs, plant):
    """Docker with its containerd image store (the default of fresh installs since Docker 29):
    containerd's overlayfs snapshotter keeps the layers, and Docker mounts each container's
    root filesystem at /var/lib/docker/rootfs/overlayfs/<id>.  make() mounts a victim's there
    (busybox below, its own files in its upper snapshot) and returns (mountpoint, upper); it is
    unmounted at the end and what was made removed.  name: the container id (a victim's)."""
    mounted = []

    def make(name=None):
        v = victim_id()
        snaps = "/var/lib/containerd/io.containerd.snapshotter.v1.overlayfs/snapshots"
        upper = f"{snaps}/{v}-2/fs"
        point = f"/var/lib/docker/rootfs/overlayfs/{name or v}"
        mount_busybox_overlay(plant, busybox_rootfs, f"{snaps}/{v}-1/fs", upper,
                              f"{snaps}/{v}-2/work", point)
        mounted.append(point)
        with open(os.path.join(upper, "secret"), "w") as f:
            f.write("victim's secret")
        os.chmod(os.path.join(upper, "secret"), 0o644)
        return point, upper

    yield make
    for m in mounted:
        subprocess.run(["umount", "-l", m], check=False)


@pytest.mark.parametrize("how", ["bind", "rbind"])
def test_another_containers_root_in_dockers_containerd_image_store_is_no_bind_source(
        hardened, bundle, docker_c8d_rootfs, how):
    point, upper = docker_c8d_rootfs()
    bundle.shell("cat /victim/secret; echo written > /victim/new")
    i = add_mount(bundle, bind("/victim", point, how, "rw"))
    r = run(hardened, bundle)
    # On the branch: the victim's secret printed, and /victim/new made in its upper snapshot.
    assert "victim's secret" not in r.stdout, r.stdout
    assert not os.path.exists(os.path.join(upper, "new"))
    refused(hardened, r, f"mounts[{i}].source", "container engine's storage")


def test_another_containers_root_in_dockers_containerd_image_store_is_no_root(
        hardened, bundle, docker_c8d_rootfs):
    point, _ = docker_c8d_rootfs()
    bundle.config["root"]["path"] = point
    bundle.shell("cat /secret")
    r = run(hardened, bundle)
    # On the branch: the container runs in the victim's root filesystem and prints its secret.
    assert "victim's secret" not in r.stdout, r.stdout
    refused(hardened, r, "root.path", "container engine's storage")


@pytest.fixture
def view(tmp_path):
    """view(source): a directory of tmp_path with a bind mount of source below it (a second
    view of the storage, as a data disk mounted twice makes one); unmounted at the end."""
    made = []

    def make(source):
        top = tmp_path / "views"
        point = top / "v"
        point.mkdir(parents=True)
        subprocess.run(["mount", "--bind", source, str(point)], check=True)
        made.append(point)
        return top

    yield make
    for m in made:
        subprocess.run(["umount", "-l", str(m)], check=False)


@pytest.mark.parametrize("store", ["/var/lib/docker/containers/{v}",
                                   "/var/lib/containers/storage/overlay-containers/{v}/userdata",
                                   "/run/containers/storage/overlay-containers/{v}/userdata"])
def test_an_rbind_with_another_containers_directory_mounted_below_is_refused(
        hardened, bundle, plant, view, store):
    top = view(plant(store.format(v=victim_id())))
    # On the branch: the victim's private files, through the mount below the rbind's source.
    bind_refused(hardened, bundle, top, "/views", "cat /views/v/secret", "victim's secret",
                 how="rbind")


def test_the_containers_own_root_in_dockers_containerd_image_store_is_still_its_root(
        hardened, bundle, docker_c8d_rootfs):
    # The one named by the container's own id: what Docker itself would hand over.
    cid = hardened.id("own")
    point, _ = docker_c8d_rootfs(cid)
    bundle.config["root"]["path"] = point
    bundle.shell("cat /secret")
    r = hardened.cmd("run", "--bundle", bundle.write(), cid)
    assert r.returncode == 0 and r.stdout == "victim's secret", r.stderr


# Other containers' files in the engines' default places the list left out: the CRI plugin's
# per-container directories (not the per-pod sandbox ones: README leaves those out), the
# persistent half of containerd's task directories, podman's database (every container's
# configuration, its environment among it) and its secrets.
UNLISTED = {
    "containerd CRI's container state": "/var/lib/containerd/io.containerd.grpc.v1.cri/"
                                        "containers/{v}",
    "containerd CRI's container stdio": "/run/containerd/io.containerd.grpc.v1.cri/containers/"
                                        "{v}/io/1",
    "containerd's task work directories": "/var/lib/containerd/io.containerd.runtime.v2.task/"
                                          "k8s.io/{v}",
    "podman's database": "/var/lib/containers/storage/libpod/{v}",
    "podman's secrets": "/var/lib/containers/storage/secrets/{v}",
}


@pytest.mark.parametrize("what", sorted(UNLISTED))
def test_another_containers_files_the_list_left_out_are_no_bind_source(hardened, bundle, plant,
                                                                       what):
    victim = plant(UNLISTED[what].format(v=victim_id()))
    # On the branch: the victim's file is printed.
    bind_refused(hardened, bundle, victim, "/victim", "cat /victim/secret", "victim's secret")


@pytest.mark.parametrize("file", ["/var/lib/containers/storage/db.sql",
                                  "/var/lib/containers/storage/libpod/bolt_state.db"])
def test_podmans_database_is_no_bind_source(hardened, bundle, plant, file):
    # Every container's configuration: its environment (`podman run -e TOKEN=...`) among it.
    if os.path.exists(file):
        pytest.skip(f"{file} is podman's own on this host: not touched")
    d = plant(os.path.dirname(file))
    os.rename(os.path.join(d, "secret"), file)
    try:
        bind_refused(hardened, bundle, file, "/db", "cat /db", "victim's secret")
    finally:
        os.unlink(file)


def test_podmans_attach_sockets_directory_is_no_bind_source(hardened, bundle, plant, tmp_path):
    # conmon's attach socket for each container (its terminal: read its output, type into it)
    # lies in podman's tmpdir, /run/libpod/socket/<id>/attach.
    import socket
    d = plant(f"/run/libpod/socket/{victim_id()}")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.bind(os.path.join(d, "attach"))
    s.listen(1)
    try:
        # On the branch: the socket is there to connect to.
        bind_refused(hardened, bundle, d, "/attach",
                     "test -S /attach/attach && echo attach socket visible", "attach socket",
                     words=("socket",))
    finally:
        s.close()


def test_an_overlay_layer_containing_an_engines_storage_is_refused(hardened, bundle, plant,
                                                                   open_dir):
    # A profile that allows overlay mounts: lowerdir=/var/lib/docker is the same view as a bind.
    allow_types(hardened, "overlay")
    rel = f"containers/{victim_id()}"
    plant(f"/var/lib/docker/{rel}")
    bundle.shell(f"cat /ovl-store/{rel}/secret")
    i = overlay(bundle, "/ovl-store", f"lowerdir=/var/lib/docker:{open_dir}")
    r = run(hardened, bundle)
    # On the branch: the victim's file through the overlay's lower layer.
    assert "victim's secret" not in r.stdout, r.stdout
    refused(hardened, r, f"mounts[{i}].options", "lowerdir=/var/lib/docker",
            "container engine's storage")


def test_a_root_containing_an_engines_storage_is_refused(hardened, bundle, plant,
                                                        busybox_rootfs):
    # root.path /var/lib/docker, the process a static busybox in a victim's layer.
    v = victim_id()
    layer = plant(f"/var/lib/docker/overlay2/{v}/diff")
    os.makedirs(os.path.join(layer, "bin"))
    subprocess.run(["cp", os.path.join(busybox_rootfs, "bin", "busybox"),
                    os.path.join(layer, "bin")], check=True)
    plant(f"/var/lib/docker/containers/{v}")
    for sub in ("dev", "proc", "sys", "tmp", "var/tmp", "run"):  # the mount points
        os.unlink(os.path.join(plant(f"/var/lib/docker/{sub}"), "secret"))
    bundle.config["root"]["path"] = "/var/lib/docker"
    bundle.args(f"/overlay2/{v}/diff/bin/busybox", "cat", f"/containers/{v}/secret")
    r = run(hardened, bundle)
    # On the branch: the victim's file, from a root that is the whole of Docker's storage.
    assert "victim's secret" not in r.stdout, r.stdout
    refused(hardened, r, "root.path", "container engine's storage")
