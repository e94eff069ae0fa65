"""The container's root filesystem and mounts: what the process inside sees of its mounts,
/dev, masked and read-only paths, and what the host sees (nothing of the container's mounts,
nothing written through a symlink planted in the image)."""
import os
import shutil
import stat
import subprocess
import uuid

import pytest

from conftest import SEERUN, wait_for

# Where a mount's own options and the superblock's are in a /proc/self/mountinfo line.
MI_MOUNTPOINT, MI_OPTS = 4, 5


def mountinfo(text):
    """mount point -> {"opts", "optional", "fstype", "source", "super", "root"}, the last (top)
    mount winning; lines that are not mountinfo lines are skipped."""
    out = {}
    for line in text.splitlines():
        f = line.split()
        if " - " not in line or len(f) < 10 or not f[0].isdigit():
            continue
        sep = f.index("-")
        out[f[MI_MOUNTPOINT]] = {
            "root": f[3],
            "opts": set(f[MI_OPTS].split(",")),
            "optional": f[6:sep],
            "fstype": f[sep + 1],
            "source": f[sep + 2],
            "super": set(f[sep + 3].split(",")),
        }
    return out


def host_mountpoints():
    with open("/proc/self/mountinfo") as f:
        return {line.split()[MI_MOUNTPOINT] for line in f}


def section(out, name):
    """The text a script printed between `echo @name` and the next `echo @...`."""
    lines, inside = [], False
    for line in out.splitlines():
        if line.startswith("@"):
            inside = line == "@" + name
            continue
        if inside:
            lines.append(line)
    return "\n".join(lines)


def run(seerun, bundle, script, *args, rc=0):
    bundle.shell(script)
    r = seerun.cmd("run", *args, "--bundle", bundle.write(), seerun.id())
    assert r.returncode == rc, f"exit {r.returncode}\nstderr: {r.stderr}\nstdout: {r.stdout}"
    return r


def run_fails(seerun, bundle):
    """A run that must fail at create: its error, and the proof nothing is left."""
    bundle.args("true")
    r = seerun.cmd("run", "--bundle", bundle.write(), seerun.id())
    assert r.returncode != 0, r.stdout
    assert seerun.list_ids() == []
    return r.stderr


def seerun_cmd(seerun):
    """The command line for a run the test drives itself (the container keeps running)."""
    return [SEERUN, *seerun.global_args]


def wait_running(seerun, timeout=10):
    def running():
        ids = seerun.list_ids()
        return ids and seerun.state(ids[0])["status"] == "running"
    wait_for(running, timeout=timeout, what="the container to start")


def drop_namespace(bundle, ns):
    bundle.linux["namespaces"] = [n for n in bundle.linux["namespaces"] if n["type"] != ns]


def add_mount(bundle, destination, type_=None, source=None, options=None):
    m = {"destination": destination}
    if type_ is not None:
        m["type"] = type_
    if source is not None:
        m["source"] = str(source)
    if options is not None:
        m["options"] = options
    bundle.config["mounts"].append(m)
    return len(bundle.config["mounts"]) - 1


def add_caps(bundle, *caps):
    for s in ("bounding", "effective", "permitted"):
        bundle.process["capabilities"][s] += list(caps)


@pytest.fixture(autouse=True)
def rootfs(tmp_path, busybox_rootfs, bundle):
    """The test's own writable copy of the root filesystem: the stories plant files in the image
    and missing mount points are created in it (the shared one stays pristine)."""
    path = tmp_path / "own-rootfs"
    # Files hard-linked (no test writes to one of the image's files), directories its own.
    shutil.copytree(busybox_rootfs, path, symlinks=True, copy_function=os.link)
    bundle.config["root"]["path"] = str(path)
    return path


@pytest.fixture
def host_mounts(tmp_path):
    """Mounts the test makes on the host, unmounted (deepest first) afterwards."""
    made = []

    def mount(*args):
        subprocess.run(["mount", *map(str, args)], check=True, capture_output=True)
        made.append(str(args[-1]))

    yield mount
    for target in reversed(made):
        subprocess.run(["umount", "-l", target], capture_output=True)


@pytest.fixture
def host_tmp_dir():
    """A directory in the host's /tmp, the kind of target an image's symlink points at."""
    path = f"/tmp/seerun-host-{uuid.uuid4().hex[:10]}"
    os.mkdir(path)
    with open(os.path.join(path, "host-file"), "w") as f:
        f.write("host secret\n")
    yield path
    shutil.rmtree(path, ignore_errors=True)


def assert_untouched(host_dir):
    assert sorted(os.listdir(host_dir)) == ["host-file"], os.listdir(host_dir)
    assert host_dir not in host_mountpoints()
    assert not any(m.startswith(host_dir + "/") for m in host_mountpoints())


# ---------------------------------------------------------------------------------------------
# Mount types


def test_bind_mounts_of_a_host_directory_a_file_and_a_bundle_relative_source(
        seerun, bundle, tmp_path):
    hostdir = tmp_path / "data"
    hostdir.mkdir()
    (hostdir / "in-dir").write_text("from the host dir\n")
    hostfile = tmp_path / "settings.conf"
    hostfile.write_text("from the host file\n")
    (bundle.path / "shipped").mkdir()
    (bundle.path / "shipped" / "note").write_text("from the bundle\n")
    add_mount(bundle, "/data", "bind", hostdir, ["rbind", "rw"])
    add_mount(bundle, "/etc/settings.conf", "bind", hostfile, ["bind", "ro"])
    add_mount(bundle, "/shipped", None, "shipped", ["bind"])
    r = run(seerun, bundle, "cat /data/in-dir /etc/settings.conf /shipped/note;"
            "echo written > /data/from-container;"
            "echo x > /etc/settings.conf || echo file-bind-is-ro")
    assert r.stdout == ("from the host dir\nfrom the host file\nfrom the bundle\n"
                        "file-bind-is-ro\n")
    assert "Read-only file system" in r.stderr
    # A read-write bind writes through to the host.
    assert (hostdir / "from-container").read_text() == "written\n"
    assert hostfile.read_text() == "from the host file\n"


def test_bind_leaves_out_submounts_and_rbind_carries_them(seerun, bundle, tmp_path, host_mounts):
    src = tmp_path / "src"
    (src / "sub").mkdir(parents=True)
    (src / "sub" / "under-the-mount").write_text("hidden by the submount\n")
    host_mounts("-t", "tmpfs", "subfs", src / "sub")
    (src / "sub" / "on-submount").write_text("on the submount\n")
    add_mount(bundle, "/plain", "bind", src, ["bind"])
    add_mount(bundle, "/recursive", "bind", src, ["rbind"])
    r = run(seerun, bundle, "echo @plain; ls /plain/sub; echo @rec; ls /recursive/sub")
    assert section(r.stdout, "plain").split() == ["under-the-mount"]
    assert section(r.stdout, "rec").split() == ["on-submount"]


def test_a_tmpfs_honours_size_and_mode(seerun, bundle):
    add_mount(bundle, "/scratch", "tmpfs", "tmpfs", ["size=2m", "mode=1770", "uid=1000",
                                                       "gid=0"])
    r = run(seerun, bundle, "stat -c '%a %u %g' /scratch; df -k /scratch | tail -n 1;"
            "dd if=/dev/zero of=/scratch/big bs=1k count=4096 2>&1 | grep -i space")
    lines = r.stdout.splitlines()
    assert lines[0] == "1770 1000 0"
    assert lines[1].split()[1] == "2048"  # 1k blocks
    assert "No space left on device" in r.stdout


def test_proc_and_sysfs_are_the_containers_own(seerun, bundle):
    r = run(seerun, bundle, "echo @mi; cat /proc/self/mountinfo; echo @pid; echo $$;"
            "echo @net; ls /sys/class/net")
    mi = mountinfo(section(r.stdout, "mi"))
    assert mi["/proc"]["fstype"] == "proc"
    assert mi["/sys"]["fstype"] == "sysfs"
    # The default spec's sysfs is read-only, nosuid, nodev, noexec.
    assert {"ro", "nosuid", "nodev", "noexec"} <= mi["/sys"]["opts"]
    # This /proc belongs to the container's pid namespace: the shell is pid 1.
    assert section(r.stdout, "pid") == "1"
    # This /sys belongs to the container's network namespace: only its loopback.
    assert section(r.stdout, "net").split() == ["lo"]


def test_devpts_is_a_new_instance_holding_only_the_containers_ptys(seerun, bundle):
    # A pty on the host, which must not show up inside.
    master, slave = os.openpty()
    try:
        assert len(os.listdir("/dev/pts")) >= 2
        r = run(seerun, bundle, "echo @ls; ls /dev/pts; echo @mi; cat /proc/self/mountinfo;"
                "echo @ptmx; readlink /dev/ptmx; stat -c '%a' /dev/pts/ptmx")
    finally:
        os.close(master)
        os.close(slave)
    assert section(r.stdout, "ls").split() == ["ptmx"]
    pts = mountinfo(section(r.stdout, "mi"))["/dev/pts"]
    assert pts["fstype"] == "devpts"
    assert {"nosuid", "noexec"} <= pts["opts"]
    assert {"mode=620", "ptmxmode=666", "gid=5"} <= pts["super"]
    assert section(r.stdout, "ptmx").split() == ["pts/ptmx", "666"]


def test_mqueue_is_mounted_for_the_containers_ipc_namespace(seerun, bundle):
    r = run(seerun, bundle, "cat /proc/self/mountinfo; ls -A /dev/mqueue | wc -l")
    mq = mountinfo(r.stdout)["/dev/mqueue"]
    assert mq["fstype"] == "mqueue"
    assert {"nosuid", "nodev", "noexec"} <= mq["opts"]
    assert r.stdout.splitlines()[-1] == "0"


@pytest.mark.parametrize("cgroupns", [True, False])
def test_cgroup_v1_mount_shows_the_containers_own_cgroups_read_only(seerun, bundle, cgroupns):
    if not cgroupns:
        drop_namespace(bundle, "cgroup")
    host = sorted(e for e in os.listdir("/sys/fs/cgroup"))
    if not os.path.isdir("/sys/fs/cgroup/pids") or not os.path.isdir("/sys/fs/cgroup/memory"):
        pytest.skip("needs the cgroup v1 pids and memory hierarchies")
    bundle.linux["resources"]["pids"] = {"limit": 42}
    bundle.linux["resources"]["memory"] = {"limit": 64 * 1024 * 1024}
    r = run(seerun, bundle, "echo @ls; ls /sys/fs/cgroup; echo @pids; cat /sys/fs/cgroup/pids/pids.max;"
            "echo @mem; cat /sys/fs/cgroup/memory/memory.limit_in_bytes;"
            "echo @devices; cat /sys/fs/cgroup/devices/devices.list;"
            "echo @write; mkdir /sys/fs/cgroup/pids/child 2>&1; touch /sys/fs/cgroup/new 2>&1;"
            "echo @mi; cat /proc/self/mountinfo")
    assert section(r.stdout, "ls").split() == host
    # Not the host's root cgroup (which has no pids.max): the container's own, with its limits.
    assert section(r.stdout, "pids") == "42"
    assert section(r.stdout, "mem") == str(64 * 1024 * 1024)
    assert "a *:* rwm" not in section(r.stdout, "devices")
    assert section(r.stdout, "write").count("Read-only file system") == 2
    mi = mountinfo(section(r.stdout, "mi"))
    assert "ro" in mi["/sys/fs/cgroup"]["opts"]
    assert mi["/sys/fs/cgroup/pids"]["fstype"] == "cgroup"
    assert "ro" in mi["/sys/fs/cgroup/pids"]["opts"]


@pytest.mark.parametrize("cgroupns", [True, False])
def test_a_cgroup2_mount_shows_the_unified_hierarchy_of_the_container(seerun, bundle, cgroupns):
    if not cgroupns:
        if not (os.path.exists("/sys/fs/cgroup/cgroup.controllers")
                or os.path.exists("/sys/fs/cgroup/unified/cgroup.controllers")):
            pytest.skip("no cgroup2 hierarchy on the host to bind the container's cgroup from")
        drop_namespace(bundle, "cgroup")
    add_mount(bundle, "/cg2", "cgroup2", "cgroup2", ["nosuid", "nodev", "noexec", "ro"])
    r = run(seerun, bundle, "echo @mi; cat /proc/self/mountinfo; echo @procs;"
            "cat /cg2/cgroup.procs; echo @self; cat /proc/self/cgroup | grep '^0::'")
    mi = mountinfo(section(r.stdout, "mi"))
    assert mi["/cg2"]["fstype"] == "cgroup2"
    assert {"ro", "nosuid", "nodev", "noexec"} <= mi["/cg2"]["opts"]
    # Its root is the container's cgroup (the namespace's root, or a bind of it): its processes
    # only (the shell, pid 1, and the cat).
    procs = section(r.stdout, "procs").split()
    assert "1" in procs and len(procs) == 2, procs
    if cgroupns:
        assert section(r.stdout, "self") == "0::/"


# ---------------------------------------------------------------------------------------------
# Mount options


def test_mount_flags_are_applied_and_noexec_stops_execution(seerun, bundle):
    add_mount(bundle, "/ro", "tmpfs", "tmpfs", ["ro", "nosuid", "nodev"])
    add_mount(bundle, "/rw", "tmpfs", "tmpfs", ["rw", "noexec"])
    add_mount(bundle, "/ex", "tmpfs", "tmpfs", ["exec"])
    r = run(seerun, bundle, "echo @mi; cat /proc/self/mountinfo;"
            "echo @ro; touch /ro/x 2>&1;"
            "echo @noexec; cp /bin/busybox /rw/busybox && /rw/busybox true 2>&1; echo rc=$?;"
            "echo @exec; cp /bin/busybox /ex/busybox && /ex/busybox echo ran")
    mi = mountinfo(section(r.stdout, "mi"))
    assert {"ro", "nosuid", "nodev"} <= mi["/ro"]["opts"]
    assert "rw" in mi["/rw"]["opts"] and "noexec" in mi["/rw"]["opts"]
    assert not {"noexec", "ro"} & mi["/ex"]["opts"]
    assert "Read-only file system" in section(r.stdout, "ro")
    noexec = section(r.stdout, "noexec")
    assert "Permission denied" in noexec and "rc=126" in noexec
    assert section(r.stdout, "exec") == "ran"


@pytest.mark.parametrize("option,expected", [("relatime", "relatime"),
                                             ("strictatime", None),
                                             ("noatime", "noatime")])
def test_atime_options_show_in_mountinfo(seerun, bundle, tmp_path, option, expected):
    (tmp_path / "d").mkdir()
    add_mount(bundle, "/t", "tmpfs", "tmpfs", [option])
    add_mount(bundle, "/b", "bind", tmp_path / "d", ["bind", option])
    r = run(seerun, bundle, "cat /proc/self/mountinfo")
    mi = mountinfo(r.stdout)
    for mp in ("/t", "/b"):
        atime = mi[mp]["opts"] & {"relatime", "noatime", "strictatime"}
        # strictatime is the absence of relatime and noatime in mountinfo.
        assert atime == ({expected} if expected else set()), (mp, mi[mp]["opts"])


def test_rro_makes_submounts_read_only_and_plain_ro_does_not(seerun, bundle, tmp_path,
                                                            host_mounts):
    src = tmp_path / "src"
    (src / "sub").mkdir(parents=True)
    host_mounts("-t", "tmpfs", "subfs", src / "sub")
    add_mount(bundle, "/plain", "bind", src, ["rbind", "ro"])
    add_mount(bundle, "/rec", "bind", src, ["rbind", "rro"])
    r = run(seerun, bundle, "echo @plain-top; touch /plain/x 2>&1;"
            "echo @plain-sub; touch /plain/sub/x 2>&1 && echo writable;"
            "echo @rec-top; touch /rec/x 2>&1; echo @rec-sub; touch /rec/sub/y 2>&1;"
            "echo @mi; cat /proc/self/mountinfo")
    assert "Read-only file system" in section(r.stdout, "plain-top")
    assert section(r.stdout, "plain-sub") == "writable"
    assert "Read-only file system" in section(r.stdout, "rec-top")
    assert "Read-only file system" in section(r.stdout, "rec-sub")
    mi = mountinfo(section(r.stdout, "mi"))
    assert "rw" in mi["/plain/sub"]["opts"] and "ro" in mi["/rec/sub"]["opts"]
    # The host's submount is untouched by either.
    assert sorted(os.listdir(src / "sub")) == ["x"]
    assert not (src / "x").exists()


@pytest.fixture
def shared_host_dir(tmp_path, host_mounts):
    """A host directory that is a shared mount, the way engines' volume directories often are."""
    d = tmp_path / "shared"
    d.mkdir()
    host_mounts("--bind", d, d)
    subprocess.run(["mount", "--make-shared", str(d)], check=True)
    return d


@pytest.mark.parametrize("prop", ["rprivate", "rslave", "rshared"])
def test_bind_propagation_shows_in_mountinfo(seerun, bundle, shared_host_dir, prop):
    add_mount(bundle, "/vol", "bind", shared_host_dir, ["rbind", prop])
    r = run(seerun, bundle, "cat /proc/self/mountinfo")
    tags = {t.split(":")[0] for t in mountinfo(r.stdout)["/vol"]["optional"]}
    # Always a slave of the host's mount at most: the container never joins the host's peer
    # group, so nothing it mounts there reaches the host.
    assert tags == {"rprivate": set(), "rslave": {"master"},
                    "rshared": {"shared", "master"}}[prop]


@pytest.mark.parametrize("prop", ["rslave", "rshared"])
def test_host_mounts_reach_a_slave_or_shared_bind_and_container_mounts_never_reach_the_host(
        seerun, bundle, shared_host_dir, tmp_path, host_mounts, prop):
    # A container allowed to mount (CAP_SYS_ADMIN) mounts in its volume: even when it asked
    # for a shared one, nothing comes back to the host.
    add_caps(bundle, "CAP_SYS_ADMIN")
    add_mount(bundle, "/vol", "bind", shared_host_dir, ["rbind", prop])
    (shared_host_dir / "from-host").mkdir()
    (shared_host_dir / "from-container").mkdir()
    cid = seerun.id()
    bundle.shell("mount -t tmpfs mine /vol/from-container && touch /vol/from-container/x;"
                 "touch /vol/ready;"
                 "for i in $(seq 100); do [ -e /vol/from-host/marker ] && break; sleep 0.05; done;"
                 "ls /vol/from-host")
    out = tmp_path / "out"
    with open(out, "w") as f:
        p = subprocess.Popen([*seerun_cmd(seerun), "run", "--bundle", bundle.write(), cid],
                             stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        try:
            wait_for((shared_host_dir / "ready").exists,
                     what=f"the container's ready mark ({out.read_text()!r} so far)")
            # The container's mount did not propagate to the host.
            assert os.listdir(shared_host_dir / "from-container") == []
            assert str(shared_host_dir / "from-container") not in host_mountpoints()
            host_mounts("-t", "tmpfs", "hostfs", shared_host_dir / "from-host")
            (shared_host_dir / "from-host" / "marker").write_text("")
            assert p.wait(timeout=20) == 0, out.read_text()
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
    assert out.read_text().split() == ["marker"]


def test_remount_changes_the_flags_and_options_of_an_earlier_mount(seerun, bundle):
    add_mount(bundle, "/data", "tmpfs", "tmpfs", ["size=1m"])
    add_mount(bundle, "/data", "tmpfs", "tmpfs", ["remount", "ro", "nosuid", "size=2m"])
    r = run(seerun, bundle, "echo @mi; cat /proc/self/mountinfo; echo @w; touch /data/x 2>&1; true")
    lines = [l for l in section(r.stdout, "mi").splitlines() if l.split()[MI_MOUNTPOINT] == "/data"]
    # Still the one tmpfs, not a second one over it.
    assert len(lines) == 1, lines
    mi = mountinfo(lines[0])
    assert {"ro", "nosuid"} <= mi["/data"]["opts"]
    assert "size=2048k" in mi["/data"]["super"]
    assert "Read-only file system" in section(r.stdout, "w")


# ---------------------------------------------------------------------------------------------
# Ordering and destinations


def test_a_bind_lands_inside_a_tmpfs_mounted_before_it(seerun, bundle, rootfs, tmp_path):
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "app.conf").write_text("inside the tmpfs\n")
    add_mount(bundle, "/srv", "tmpfs", "tmpfs", [])
    add_mount(bundle, "/srv/app/conf", "bind", tmp_path / "conf", ["bind", "ro"])
    r = run(seerun, bundle, "cat /srv/app/conf/app.conf; echo @mi; cat /proc/self/mountinfo")
    assert r.stdout.splitlines()[0] == "inside the tmpfs"
    mi = mountinfo(section(r.stdout, "mi"))
    assert mi["/srv"]["fstype"] == "tmpfs" and "/srv/app/conf" in mi
    # The mount point was made in the tmpfs, not in the image.
    assert os.listdir(rootfs / "srv") == []


def test_relative_and_dotdot_destinations_are_inside_the_root(seerun, bundle, rootfs):
    add_mount(bundle, "tmp/rel", "tmpfs", "tmpfs", [])
    add_mount(bundle, "/../../../tmp/../tmp/up", "tmpfs", "tmpfs", [])
    r = run(seerun, bundle, "cat /proc/self/mountinfo")
    mi = mountinfo(r.stdout)
    assert mi["/tmp/rel"]["fstype"] == "tmpfs"
    assert mi["/tmp/up"]["fstype"] == "tmpfs"


def test_missing_destination_directories_and_files_are_created(seerun, bundle, rootfs, tmp_path):
    (tmp_path / "secret.txt").write_text("a file bind\n")
    (tmp_path / "vol").mkdir()
    add_mount(bundle, "/run/secrets/deep/secret.txt", "bind", tmp_path / "secret.txt", ["bind"])
    add_mount(bundle, "/var/lib/app/data", "bind", tmp_path / "vol", ["bind"])
    r = run(seerun, bundle, "cat /run/secrets/deep/secret.txt;"
            "stat -c %F /var/lib/app/data /run/secrets/deep/secret.txt")
    assert r.stdout.splitlines() == ["a file bind", "directory", "regular file"]
    assert (rootfs / "run/secrets/deep/secret.txt").is_file()
    assert (rootfs / "var/lib/app/data").is_dir()


# ---------------------------------------------------------------------------------------------
# The root


def test_a_read_only_root_refuses_writes_but_tmpfs_mounts_take_them(seerun, bundle):
    assert bundle.config["root"]["readonly"] is True
    add_mount(bundle, "/tmp", "tmpfs", "tmpfs", [])
    r = run(seerun, bundle, "echo @root; touch /newfile 2>&1; mkdir /etc/x 2>&1;"
            "echo @tmp; echo ok > /tmp/f && cat /tmp/f; echo ok > /dev/shm/f && cat /dev/shm/f;"
            "echo @mi; cat /proc/self/mountinfo")
    assert section(r.stdout, "root").count("Read-only file system") == 2
    assert section(r.stdout, "tmp").split() == ["ok", "ok"]
    assert "ro" in mountinfo(section(r.stdout, "mi"))["/"]["opts"]


@pytest.mark.parametrize("prop,tags", [("rprivate", set()), ("rshared", {"shared"}),
                                       ("private", set())])
def test_rootfs_propagation_shows_on_the_root(seerun, bundle, prop, tags):
    bundle.linux["rootfsPropagation"] = prop
    r = run(seerun, bundle, "cat /proc/self/mountinfo")
    optional = mountinfo(r.stdout)["/"]["optional"]
    assert {t.split(":")[0] for t in optional} == tags


@pytest.fixture
def shared_rootfs(rootfs, host_mounts):
    """The root filesystem on a shared mount of the host, as on systemd hosts."""
    host_mounts("--bind", rootfs, rootfs)
    subprocess.run(["mount", "--make-shared", str(rootfs)], check=True)
    return rootfs


@pytest.mark.parametrize("prop,tags", [(None, {"master"}), ("slave", {"master"}),
                                       ("rslave", {"master"}), ("private", set()),
                                       ("rprivate", set()), ("rshared", {"shared", "master"})])
def test_rootfs_propagation_on_a_shared_host_mount(seerun, bundle, shared_rootfs, prop, tags):
    if prop:
        bundle.linux["rootfsPropagation"] = prop
    r = run(seerun, bundle, "cat /proc/self/mountinfo")
    optional = mountinfo(r.stdout)["/"]["optional"]
    # Never a peer of the host's mount: at most its slave.
    assert {t.split(":")[0] for t in optional} == tags


@pytest.mark.parametrize("prop,seen", [("slave", ["marker"]), ("private", [])])
def test_host_mounts_under_the_rootfs_reach_a_slave_root_only(seerun, bundle, shared_rootfs,
                                                              tmp_path, host_mounts, prop, seen):
    bundle.linux["rootfsPropagation"] = prop
    (shared_rootfs / "mnt" / "later").mkdir(parents=True)
    bundle.shell("for i in $(seq 200); do [ -e /go ] && break; sleep 0.05; done; ls /mnt/later")
    out = tmp_path / "out"
    with open(out, "w") as f:
        p = subprocess.Popen([*seerun_cmd(seerun), "run", "--bundle", bundle.write(),
                              seerun.id()], stdout=f, stderr=subprocess.STDOUT,
                             stdin=subprocess.DEVNULL)
    try:
        # Running: its root is in place; only now does the host mount.
        wait_running(seerun)
        host_mounts("-t", "tmpfs", "later", shared_rootfs / "mnt" / "later")
        (shared_rootfs / "mnt" / "later" / "marker").write_text("")
        (shared_rootfs / "go").write_text("")
        assert p.wait(timeout=20) == 0, out.read_text()
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert out.read_text().split() == seen


@pytest.mark.parametrize("mode", ["create", "run"])
def test_no_pivot_gives_the_same_root(seerun, bundle, rootfs, tmp_path, mode):
    (rootfs / "image-marker").write_text("the image\n")
    script = ("cat /image-marker; ls / | wc -l; cd /..; ls | wc -l; ls /proc/1/root/ | wc -l;"
              f"ls {tmp_path} 2>&1 | head -n 1; echo @mi; cat /proc/self/mountinfo")
    n_entries = len(os.listdir(rootfs))
    if mode == "run":
        r = run(seerun, bundle, script, "--no-pivot")
        out = r.stdout
    else:
        cid = seerun.id()
        outfile = tmp_path / "out"
        bundle.shell(script)
        with open(outfile, "w") as f:
            subprocess.run([*seerun_cmd(seerun), "create", "--no-pivot", "--bundle",
                            bundle.write(), cid], stdout=f, stderr=subprocess.STDOUT,
                           stdin=subprocess.DEVNULL, check=True, timeout=30)
        seerun.cmd("start", cid, check=True)
        wait_for(lambda: seerun.state(cid)["status"] == "stopped", what="the container to stop")
        out = outfile.read_text()
    lines = out.splitlines()
    assert lines[0] == "the image"
    assert lines[1:4] == [str(n_entries)] * 3
    assert "No such file or directory" in lines[4]
    assert mountinfo(section(out, "mi"))["/"]["root"].endswith("/own-rootfs")


def test_the_hosts_old_root_is_not_reachable(seerun, bundle, tmp_path):
    (tmp_path / "host-only").write_text("")
    r = run(seerun, bundle, f"ls {tmp_path} 2>&1; echo @up; ls /../../ | wc -l;"
            "echo @root1; ls /proc/1/root/ | wc -l; echo @n; ls / | wc -l;"
            "echo @mi; cat /proc/self/mountinfo")
    assert "No such file or directory" in r.stdout.splitlines()[0]
    n = section(r.stdout, "n")
    assert section(r.stdout, "up") == n and section(r.stdout, "root1") == n
    # Only the container's own mounts: none of the host's is left in its namespace.
    for mp in mountinfo(section(r.stdout, "mi")):
        assert mp == "/" or mp.startswith(("/proc", "/dev", "/sys")), mp


# ---------------------------------------------------------------------------------------------
# /dev


def test_the_default_dev_has_the_standard_nodes_links_and_shm(seerun, bundle):
    r = run(seerun, bundle,
            "echo @nodes; for d in null zero full random urandom tty; do"
            " stat -c '%n %F %t:%T %a' /dev/$d; done;"
            "echo @links; for l in fd stdin stdout stderr ptmx; do echo $l $(readlink /dev/$l); done;"
            "echo @use; echo gone > /dev/null && echo null-ok;"
            "head -c 4 /dev/zero | od -An -tx1 | tr -d ' ';"
            "head -c 16 /dev/urandom | wc -c; head -c 16 /dev/random | wc -c;"
            "{ echo x > /dev/full; } 2>&1;"
            "echo @shm; stat -c '%F %a' /dev/shm; echo ok > /dev/shm/f && cat /dev/shm/f;"
            "echo @fd; ls /dev/fd/ | head -n 1; echo @core; readlink /dev/core; true")
    assert section(r.stdout, "nodes").splitlines() == [
        "/dev/null character special file 1:3 666",
        "/dev/zero character special file 1:5 666",
        "/dev/full character special file 1:7 666",
        "/dev/random character special file 1:8 666",
        "/dev/urandom character special file 1:9 666",
        "/dev/tty character special file 5:0 666",
    ]
    assert section(r.stdout, "links").splitlines() == [
        "fd /proc/self/fd", "stdin /proc/self/fd/0", "stdout /proc/self/fd/1",
        "stderr /proc/self/fd/2", "ptmx pts/ptmx"]
    use = section(r.stdout, "use").splitlines()
    assert use[:4] == ["null-ok", "00000000", "16", "16"]
    assert "No space left on device" in use[4]
    assert section(r.stdout, "shm").splitlines() == ["directory 1777", "ok"]
    assert section(r.stdout, "fd") == "0"
    # /dev/core only where the kernel has a /proc/kcore to point it at.
    assert section(r.stdout, "core") == ("/proc/kcore" if os.path.exists("/proc/kcore") else "")


def test_linux_devices_are_created_with_their_mode_and_owner_and_allowed(seerun, bundle):
    bundle.linux["devices"] = [
        {"path": "/dev/mynull", "type": "c", "major": 1, "minor": 3, "fileMode": 0o640,
         "uid": 1000, "gid": 1000},
        {"path": "/dev/sub/myzero", "type": "c", "major": 1, "minor": 5},
        # Minors of the memory devices no driver answers: the device cgroup lets the open
        # through (to ENXIO) only because resources.devices allows it; listing the node in
        # linux.devices creates it, and no more (as runc and crun): EPERM.
        {"path": "/dev/nodriver", "type": "c", "major": 1, "minor": 200},
        {"path": "/dev/nodriver2", "type": "c", "major": 1, "minor": 201},
    ]
    bundle.linux.setdefault("resources", {}).setdefault("devices", []).append(
        {"allow": True, "type": "c", "major": 1, "minor": 200, "access": "r"})
    r = run(seerun, bundle, "stat -c '%F %t:%T %a %u:%g' /dev/mynull /dev/sub/myzero;"
            "head -c 2 /dev/sub/myzero | wc -c; head -c 1 /dev/nodriver 2>&1;"
            "head -c 1 /dev/nodriver2 2>&1; true")
    assert r.stdout.splitlines() == [
        "character special file 1:3 640 1000:1000",
        "character special file 1:5 666 0:0",
        "2", "head: /dev/nodriver: No such device or address",
        "head: /dev/nodriver2: Operation not permitted"]


def test_a_linux_device_over_a_different_file_of_the_image_is_an_error(seerun, bundle, rootfs):
    (rootfs / "srv").mkdir()
    (rootfs / "srv" / "mydev").write_text("an ordinary file\n")
    bundle.linux["devices"] = [
        {"path": "/dev/ok", "type": "c", "major": 1, "minor": 3},
        {"path": "/srv/mydev", "type": "c", "major": 1, "minor": 3}]
    err = run_fails(seerun, bundle)
    assert "linux.devices[1]" in err and "/srv/mydev" in err and "not device c 1:3" in err, err
    assert (rootfs / "srv" / "mydev").read_text() == "an ordinary file\n"


def test_a_linux_device_already_in_the_image_is_kept_and_given_its_mode(seerun, bundle, rootfs):
    (rootfs / "srv").mkdir()
    os.mknod(rootfs / "srv" / "mynull", 0o600 | stat.S_IFCHR, os.makedev(1, 3))
    bundle.linux["devices"] = [{"path": "/srv/mynull", "type": "c", "major": 1, "minor": 3,
                                "fileMode": 0o666}]
    r = run(seerun, bundle, "stat -c '%t:%T %a' /srv/mynull; echo x > /srv/mynull && echo ok")
    assert r.stdout.splitlines() == ["1:3 666", "ok"]


def test_default_nodes_replace_what_the_image_planted(seerun, bundle, rootfs, host_tmp_dir):
    # Without a /dev mount the image's /dev is used: its /dev/null is a symlink to a host file,
    # its /dev/zero a regular file, its /dev/ptmx a link elsewhere; all give way.
    bundle.config["mounts"] = [m for m in bundle.config["mounts"]
                               if not m["destination"].startswith("/dev")]
    os.symlink(host_tmp_dir + "/host-file", rootfs / "dev" / "null")
    (rootfs / "dev" / "zero").write_text("not zero\n")
    os.symlink("/tmp/my-ptmx", rootfs / "dev" / "ptmx")
    r = run(seerun, bundle, "stat -c '%F %t:%T' /dev/null /dev/zero; echo x > /dev/null;"
            "readlink /dev/ptmx")
    assert r.stdout.splitlines() == ["character special file 1:3", "character special file 1:5",
                                     "pts/ptmx"]
    assert_untouched(host_tmp_dir)
    with open(os.path.join(host_tmp_dir, "host-file")) as f:
        assert f.read() == "host secret\n"


def test_in_a_user_namespace_devices_are_the_hosts_nodes_and_idmap_binds_show_owners(
        seerun, bundle, tmp_path):
    bundle.linux["namespaces"].append({"type": "user"})
    bundle.linux["uidMappings"] = [{"containerID": 0, "hostID": 300000, "size": 65536}]
    bundle.linux["gidMappings"] = [{"containerID": 0, "hostID": 300000, "size": 65536}]
    vol = tmp_path / "vol"
    vol.mkdir()
    (vol / "owned-by-root").write_text("")
    # /tmp of the image is world-writable: the mapped root can make its mount points there.
    add_mount(bundle, "/tmp/idmapped", "bind", vol, ["bind", "idmap"])
    add_mount(bundle, "/tmp/plain", "bind", vol, ["bind"])
    r = run(seerun, bundle, "stat -c '%t:%T' /dev/null /dev/zero; echo x > /dev/null && echo ok;"
            "stat -c '%u' /tmp/idmapped/owned-by-root /tmp/plain/owned-by-root;"
            "echo @mi; cat /proc/self/mountinfo")
    assert r.stdout.splitlines()[:5] == ["1:3", "1:5", "ok", "0", "65534"]
    # mknod is impossible there: the nodes are binds of the host's.
    mi = mountinfo(section(r.stdout, "mi"))
    assert "/dev/null" in mi and "/dev/zero" in mi


def test_in_a_user_namespace_on_the_hosts_network_sys_is_the_runtimes_read_only_throughout(
        seerun, bundle):
    # sysfs cannot be mounted for a network namespace the container's user namespace does not
    # own: the runtime's /sys is bound instead, with the mount's flags on every submount.
    bundle.linux["namespaces"] = [n for n in bundle.linux["namespaces"]
                                  if n["type"] != "network"]
    bundle.linux["namespaces"] += [{"type": "user"},
                                   {"type": "network", "path": "/proc/self/ns/net"}]
    bundle.linux["uidMappings"] = [{"containerID": 0, "hostID": 300000, "size": 65536}]
    bundle.linux["gidMappings"] = [{"containerID": 0, "hostID": 300000, "size": 65536}]
    r = run(seerun, bundle, "echo @net; ls /sys/class/net; echo @mi; cat /proc/self/mountinfo")
    assert set(os.listdir("/sys/class/net")) <= set(section(r.stdout, "net").split())
    assert mountinfo(section(r.stdout, "mi"))["/sys"]["fstype"] == "sysfs"
    # Every line, the submounts the container's own mounts cover included.
    under_sys = [line for line in section(r.stdout, "mi").splitlines()
                 if line.split()[MI_MOUNTPOINT].startswith("/sys")]
    assert len(under_sys) > 1
    for line in under_sys:
        assert {"ro", "nosuid", "nodev", "noexec"} <= set(line.split()[MI_OPTS].split(",")), line


def test_the_device_cgroup_refuses_a_device_not_in_the_config(seerun, bundle):
    # The host's /dev/kmsg bound in: the node is there, but the container may not open it.
    if not os.path.exists("/dev/kmsg"):
        pytest.skip("no /dev/kmsg on the host")
    add_mount(bundle, "/dev/kmsg", "bind", "/dev/kmsg", ["bind"])
    r = run(seerun, bundle, "stat -c '%t:%T' /dev/kmsg; head -c 1 /dev/kmsg 2>&1; echo rc=$?;"
            "head -c 1 /dev/zero | wc -c")
    lines = r.stdout.splitlines()
    assert lines[0] == "1:b"
    assert "Operation not permitted" in lines[1]
    assert lines[-1] == "1"


# ---------------------------------------------------------------------------------------------
# maskedPaths and readonlyPaths


def test_masked_paths_hide_files_and_directories(seerun, bundle, rootfs):
    (rootfs / "srv" / "private").mkdir(parents=True)
    (rootfs / "srv" / "private" / "key.pem").write_text("secret\n")
    bundle.linux["maskedPaths"] = ["/proc/kcore", "/proc/keys", "/srv/private", "/sys/firmware",
                                   "/proc/does-not-exist", "/no/such/dir"]
    r = run(seerun, bundle, "echo @kcore; [ -e /proc/kcore ] && wc -c < /proc/kcore;"
            "echo @keys; wc -c < /proc/keys; echo @private; ls -A /srv/private | wc -l;"
            "{ echo x > /srv/private/new; } 2>&1; echo @fw; ls -A /sys/firmware | wc -l;"
            "echo @mi; cat /proc/self/mountinfo")
    if os.path.exists("/proc/kcore"):
        assert section(r.stdout, "kcore") == "0"
    # /proc/keys is not empty on the host (it lists at least the session keyring).
    with open("/proc/keys") as f:
        assert f.read()
    assert section(r.stdout, "keys") == "0"
    private = section(r.stdout, "private").splitlines()
    assert private[0] == "0" and "Read-only file system" in private[1]
    assert (rootfs / "srv" / "private" / "key.pem").read_text() == "secret\n"
    assert section(r.stdout, "fw") == "0"
    mi = mountinfo(section(r.stdout, "mi"))
    assert "ro" in mi["/srv/private"]["opts"] and "ro" in mi["/sys/firmware"]["opts"]


def test_readonly_paths_cannot_be_written(seerun, bundle, tmp_path):
    conf = tmp_path / "app.conf"
    conf.write_text("original\n")
    add_mount(bundle, "/etc/app.conf", "bind", conf, ["bind", "rw"])
    bundle.linux["readonlyPaths"] += ["/etc/app.conf", "/does/not/exist"]
    r = run(seerun, bundle, "cat /proc/sys/kernel/ostype;"
            "{ echo other > /proc/sys/kernel/hostname; } 2>&1; hostname;"
            "{ echo changed > /etc/app.conf; } 2>&1; cat /etc/app.conf;"
            "echo @mi; cat /proc/self/mountinfo")
    lines = r.stdout.splitlines()
    assert lines[0] == "Linux"
    assert "Read-only file system" in lines[1]
    assert lines[2] == "seerun"
    assert "Read-only file system" in lines[3]
    assert lines[4] == "original"
    assert conf.read_text() == "original\n"
    mi = mountinfo(section(r.stdout, "mi"))
    assert "ro" in mi["/proc/sys"]["opts"] and "rw" in mi["/proc"]["opts"]


# ---------------------------------------------------------------------------------------------
# Path safety (the CVE-2021-30465 class): the image controls the root filesystem, so every
# path in it is resolved inside it.


def test_a_destination_symlink_out_of_the_root_lands_inside_the_container(
        seerun, bundle, rootfs, host_tmp_dir, tmp_path):
    name = os.path.basename(host_tmp_dir)
    (rootfs / "tmp" / name).mkdir()
    os.symlink(host_tmp_dir, rootfs / "evil")
    os.symlink(host_tmp_dir + "/../" + name, rootfs / "evil2")
    (tmp_path / "vol").mkdir()
    add_mount(bundle, "/evil", "tmpfs", "tmpfs", [])
    add_mount(bundle, "/evil2/bound", "bind", tmp_path / "vol", ["bind"])
    r = run(seerun, bundle, "echo planted > /evil/file; ls /evil; ls /evil/bound;"
            "echo @mi; cat /proc/self/mountinfo")
    mi = mountinfo(section(r.stdout, "mi"))
    assert mi[f"/tmp/{name}"]["fstype"] == "tmpfs"
    assert f"/tmp/{name}/bound" in mi
    assert_untouched(host_tmp_dir)
    # The bind's mount point was made inside the image's /tmp, under the container's tmpfs.
    assert os.listdir(rootfs / "tmp" / name) == []


def test_a_destination_through_a_symlinked_parent_and_dotdot_stays_inside(
        seerun, bundle, rootfs, host_tmp_dir):
    name = os.path.basename(host_tmp_dir)
    (rootfs / "tmp" / name).mkdir()
    os.symlink("../../../../../../" + host_tmp_dir.lstrip("/"), rootfs / "up")
    add_mount(bundle, "/up/sub", "tmpfs", "tmpfs", [])
    r = run(seerun, bundle, "cat /proc/self/mountinfo")
    assert mountinfo(r.stdout)[f"/tmp/{name}/sub"]["fstype"] == "tmpfs"
    assert_untouched(host_tmp_dir)
    assert os.listdir(rootfs / "tmp" / name) == ["sub"]


def test_a_dangling_symlink_destination_gets_its_target_made_inside(seerun, bundle, rootfs,
                                                                    host_tmp_dir):
    # As runc: the target is made, resolved in the root (it was refused before issue 17).
    os.symlink(host_tmp_dir, rootfs / "dangling")
    add_mount(bundle, "/dangling", "tmpfs", "tmpfs", [])
    r = run(seerun, bundle, "cat /proc/self/mountinfo")
    assert mountinfo(r.stdout)[host_tmp_dir]["fstype"] == "tmpfs"
    assert_untouched(host_tmp_dir)
    assert (rootfs / host_tmp_dir.lstrip("/")).is_dir()


def test_an_image_dev_symlinked_to_a_host_path_is_not_followed(seerun, bundle, rootfs,
                                                               host_tmp_dir):
    shutil.rmtree(rootfs / "dev")
    os.symlink(host_tmp_dir, rootfs / "dev")
    r = run(seerun, bundle, "stat -c '%t:%T' /dev/null; cat /proc/self/mountinfo")
    assert r.stdout.splitlines()[0] == "1:3"
    assert mountinfo(r.stdout)[host_tmp_dir]["fstype"] == "tmpfs"
    assert_untouched(host_tmp_dir)
    assert (rootfs / host_tmp_dir.lstrip("/")).is_dir()


def test_device_nodes_through_an_image_dev_symlink_are_made_inside(seerun, bundle, rootfs,
                                                                   host_tmp_dir):
    # Without a /dev mount the nodes are made in the image's /dev, which here is a symlink.
    bundle.config["mounts"] = [m for m in bundle.config["mounts"]
                               if not m["destination"].startswith("/dev")]
    name = os.path.basename(host_tmp_dir)
    (rootfs / "tmp" / name).mkdir()
    shutil.rmtree(rootfs / "dev")
    os.symlink(host_tmp_dir, rootfs / "dev")
    r = run(seerun, bundle, "stat -c '%t:%T' /dev/null")
    assert r.stdout == "1:3\n"
    assert_untouched(host_tmp_dir)
    assert stat.S_ISCHR(os.lstat(rootfs / "tmp" / name / "null").st_mode)


# ---------------------------------------------------------------------------------------------
# Errors name the mount and leave nothing behind (the fixture checks state, cgroups, mounts,
# processes).


def test_a_missing_bind_source_is_a_clear_error(seerun, bundle, rootfs, tmp_path):
    i = add_mount(bundle, "/data", "bind", tmp_path / "nope", ["bind"])
    err = run_fails(seerun, bundle)
    assert f"mounts[{i}]" in err and str(tmp_path / "nope") in err
    assert "No such file or directory" in err
    assert not (rootfs / "data").exists()


def test_an_unknown_filesystem_type_is_a_clear_error(seerun, bundle, rootfs):
    i = add_mount(bundle, "/data", "nosuchfs", "none", [])
    err = run_fails(seerun, bundle)
    assert f"mounts[{i}]" in err and "nosuchfs" in err, err
    assert not (rootfs / "data").exists()


def test_a_bad_tmpfs_option_is_a_clear_error(seerun, bundle, rootfs):
    i = add_mount(bundle, "/data", "tmpfs", "tmpfs", ["size=banana"])
    err = run_fails(seerun, bundle)
    assert f"mounts[{i}]" in err and "size=banana" in err, err
    assert not (rootfs / "data").exists()


@pytest.fixture
def overlay_root(busybox_rootfs, tmp_path, bundle):
    """An engine-style overlay root: the busybox tree as its lower layer, an upper layer with
    a file of host root's and one of host uid 1000's, mounted at merged, which is the bundle's
    rootfs, as containerd's shim mounts it (unmounted after)."""
    d = tmp_path / "ovl"
    for sub in ("upper/etc", "work"):
        (d / sub).mkdir(parents=True)
    (bundle.path / "rootfs").mkdir()
    os.symlink(bundle.path / "rootfs", d / "merged")
    (d / "upper" / "etc" / "from-upper").write_text("upper\n")
    (d / "upper" / "etc" / "users-file").write_text("")
    os.chown(d / "upper" / "etc" / "users-file", 1000, 1000)
    subprocess.run(["mount", "-t", "overlay", "overlay", "-o",
                    f"lowerdir={busybox_rootfs},upperdir={d}/upper,workdir={d}/work",
                    str(d / "merged")], check=True)
    try:
        yield d
    finally:
        subprocess.run(["umount", "-l", str(d / "merged")], check=False)


def test_an_overlay_root_is_rebuilt_from_idmapped_layers_so_the_images_owners_show(
        hardened, bundle, overlay_root):
    bundle.config["root"]["path"] = "rootfs"
    # A mount point the image lacks: made through the engine's overlay before the read-only
    # rebuild (it lands in the upper layer, as the engine's own mount points do).
    add_mount(bundle, "/data", "tmpfs", "tmpfs", [])
    cid = hardened.id()
    r = hardened.cmd("run", "--bundle", bundle.args(
        "sh", "-c", "stat -c '%u:%g' /bin/busybox /etc/from-upper /etc/users-file; "
        "cat /etc/from-upper; touch /etc/x 2>&1; grep ' /data ' /proc/self/mounts | cut -d' ' -f3"
    ).write(), cid, check=True)
    lines = r.stdout.splitlines()
    assert lines[:4] == ["0:0", "0:0", "1000:1000", "upper"], lines
    assert "Read-only file system" in lines[4] and lines[5] == "tmpfs", lines
    events = [l for l in hardened.audit() if l.get("id") == cid and
              l.get("event", "").startswith("rootfs-")]
    assert [e["event"] for e in events] == ["rootfs-idmap"], events
    assert "overlay rebuilt read-only" in events[0]["applied"]
    # The engine's overlay is as it was: mounted, its upper layer holding only mount points
    # (/data; the profile's tmpfs /run and /var/tmp if the shared busybox tree lacks them).
    assert os.path.ismount(os.path.realpath(overlay_root / "merged"))
    assert {"data", "etc"} <= set(os.listdir(overlay_root / "upper")) <= {"data", "etc", "run",
                                                                         "var"}
