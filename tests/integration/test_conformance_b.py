"""Conformance with the OCI runtime spec and runc, as runc's bats suite, crun's suite and the
runtime-tools validation suite check it (issue 17, slices c, d (item 8) and e): under the
permissive profile a config is applied as written, as an OCI runtime must."""
import json
import os
import shutil
import signal
import subprocess

import pytest

from conftest import SEERUN, wait_for
from test_rootfs import add_mount, mountinfo, section, run, run_fails
from test_terminal import ConsoleSocket, create_with_console, read_until_eof, terminal_bundle
from test_terminal import console  # noqa: F401  (fixture)


@pytest.fixture
def own_rootfs(tmp_path, busybox_rootfs, bundle):
    """The test's own copy of the root filesystem (files hard-linked, directories its own)."""
    path = tmp_path / "own-rootfs"
    shutil.copytree(busybox_rootfs, path, symlinks=True, copy_function=os.link)
    bundle.config["root"]["path"] = str(path)
    return path


def gone(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True


# ---- 6. the console pty belongs to process.user -------------------------------------------


@pytest.mark.parametrize("user, expected", [((0, 0), "0:5"), ((1000, 1000), "1000:5")])
def test_the_console_pty_is_owned_by_the_process_user_and_the_tty_group(
        seerun, bundle, console, user, expected):
    # runc's tty.bats "runc run [tty owner]": the uid is process.user.uid, the gid the one
    # devpts gives (gid=5 in the default spec).
    bundle.process["user"] = {"uid": user[0], "gid": user[1]}
    terminal_bundle(bundle, "sh", "-c", "stat -L -c %u:%g /proc/self/fd/0")
    cid, _, master = create_with_console(seerun, bundle, console)
    seerun.cmd("start", cid, check=True)
    assert read_until_eof(master).decode().strip() == expected


def test_an_exec_console_pty_is_owned_by_the_exec_user(seerun, bundle, tmp_path):
    # runc's tty.bats "runc exec [tty owner]".
    bundle.args("sleep", "60")
    cid = seerun.id()
    seerun.cmd("run", "--detach", "--bundle", bundle.write(), cid, check=True)
    d = f"/tmp/src-{os.getpid()}-{os.urandom(3).hex()}"
    os.mkdir(d)
    c = ConsoleSocket(os.path.join(d, "console.sock"))
    try:
        p = subprocess.Popen([SEERUN, *seerun.global_args, "exec", "--tty", "--user", "1000:1000",
                              "--console-socket", c.path, "--detach", cid, "sh", "-c",
                              "stat -L -c %u:%g /proc/self/fd/0; sleep 1"],
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
        out, err = p.communicate(timeout=30)
        assert p.returncode == 0, err
        c.join()
        master = c.messages[0][1][0]
        assert read_until_eof(master).decode().strip() == "1000:5"
    finally:
        c.close()
        os.unlink(c.path)
        os.rmdir(d)


# ---- 10. mounts ----------------------------------------------------------------------------


def test_a_missing_cwd_is_created_inside_the_root(seerun, bundle, own_rootfs):
    # runc makes process.cwd (as root of the container, before the user switch) if missing.
    add_mount(bundle, "/work", "tmpfs", "tmpfs", [])
    bundle.process["cwd"] = "/work/a/b"
    bundle.process["user"] = {"uid": 1000, "gid": 1000}
    r = run(seerun, bundle, "pwd; stat -c '%a %u' /work/a/b")
    assert r.stdout.splitlines() == ["/work/a/b", "755 0"]
    # In the image too, when nothing is mounted there.
    bundle.process["cwd"] = "/made/by/seerun"
    run(seerun, bundle, "pwd")
    assert (own_rootfs / "made" / "by" / "seerun").is_dir()


def test_a_cwd_through_a_symlink_out_of_the_root_is_created_inside(
        seerun, bundle, own_rootfs, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(str(outside), own_rootfs / "escape")
    bundle.process["cwd"] = "/escape/x"
    r = run(seerun, bundle, "pwd")
    # The symlink resolved in the container's root: the directory is the image's.
    assert r.stdout.strip() == f"{outside}/x"
    assert os.listdir(outside) == []
    assert (own_rootfs / str(outside).lstrip("/") / "x").is_dir()


def test_a_dangling_symlink_destination_gets_its_target_made_inside_the_root(
        seerun, bundle, own_rootfs, tmp_path):
    # runc resolves the destination inside the root and makes what is missing there.
    outside = tmp_path / "host-target"
    os.symlink(str(outside), own_rootfs / "dangling")
    os.symlink("rel/target", own_rootfs / "tmp" / "dangling-rel")
    add_mount(bundle, "/dangling", "tmpfs", "tmpfs", [])
    add_mount(bundle, "/tmp/dangling-rel", "tmpfs", "tmpfs", [])
    r = run(seerun, bundle, "cat /proc/self/mountinfo")
    mi = mountinfo(r.stdout)
    assert mi[str(outside)]["fstype"] == "tmpfs"
    assert mi["/tmp/rel/target"]["fstype"] == "tmpfs"
    assert not outside.exists()
    assert (own_rootfs / str(outside).lstrip("/")).is_dir()
    assert (own_rootfs / "tmp" / "rel" / "target").is_dir()


def test_a_dangling_symlink_climbing_out_with_dotdot_stays_inside(
        seerun, bundle, own_rootfs, tmp_path):
    (tmp_path / "vol").mkdir()
    os.symlink("../../../../../../../../../tmp/srt-escaped-" + os.path.basename(tmp_path),
               own_rootfs / "tmp" / "up")
    add_mount(bundle, "/tmp/up", "bind", tmp_path / "vol", ["bind"])
    r = run(seerun, bundle, "cat /proc/self/mountinfo")
    target = "/tmp/srt-escaped-" + os.path.basename(tmp_path)
    assert target in mountinfo(r.stdout)
    assert not os.path.exists(target)
    assert (own_rootfs / target.lstrip("/")).is_dir()


def test_a_tmpfs_without_mode_gets_the_mode_of_the_directory_it_covers(
        seerun, bundle, own_rootfs):
    (own_rootfs / "covered").mkdir()
    os.chmod(own_rootfs / "covered", 0o710)
    add_mount(bundle, "/covered", "tmpfs", "tmpfs", ["size=1m"])
    add_mount(bundle, "/fresh", "tmpfs", "tmpfs", [])
    add_mount(bundle, "/given", "tmpfs", "tmpfs", ["mode=750"])
    (own_rootfs / "given").mkdir()
    os.chmod(own_rootfs / "given", 0o700)
    r = run(seerun, bundle, "stat -c %a /covered /fresh /given")
    # A directory seerun makes has no mode to keep: tmpfs's own 1777, as runc.
    assert r.stdout.split() == ["710", "1777", "750"]


def test_a_read_only_dev_keeps_its_submounts_and_nodes(seerun, bundle):
    for m in bundle.config["mounts"]:
        if m["destination"] == "/dev":
            m["options"] = [o for o in m["options"] if o != "rw"] + ["ro"]
    r = run(seerun, bundle, "cat /proc/self/mountinfo; echo @w; touch /dev/x 2>&1; "
            "stat -c %t:%T /dev/null")
    mi = mountinfo(r.stdout.split("@w")[0])
    assert "ro" in mi["/dev"]["opts"]
    assert mi["/dev/pts"]["fstype"] == "devpts"
    assert mi["/dev/shm"]["fstype"] == "tmpfs"
    assert "Read-only file system" in section(r.stdout, "w")
    assert section(r.stdout, "w").splitlines()[-1] == "1:3"


def test_a_read_only_dev_bind_keeps_its_submounts(seerun, bundle, tmp_path):
    devdir = tmp_path / "devdir"
    devdir.mkdir()
    for m in bundle.config["mounts"]:
        if m["destination"] == "/dev":
            m.clear()
            m.update({"destination": "/dev", "type": "bind", "source": str(devdir),
                      "options": ["rbind", "ro", "nosuid"]})
    # (A bound /dev gets no default nodes, so no /dev/null to mask files with.)
    bundle.linux["maskedPaths"] = []
    r = run(seerun, bundle, "cat /proc/self/mountinfo; echo @w; touch /dev/x 2>&1; true")
    mi = mountinfo(r.stdout.split("@w")[0])
    assert "ro" in mi["/dev"]["opts"]
    assert mi["/dev/pts"]["fstype"] == "devpts"
    assert "Read-only file system" in section(r.stdout, "w")


def test_idmap_on_a_mount_that_is_not_a_bind_is_refused(seerun, bundle):
    # The spec: an idmap option MUST be applied or the create fails; only binds can be.
    i = add_mount(bundle, "/scratch", "tmpfs", "tmpfs", ["idmap"])
    err = run_fails(seerun, bundle)
    assert f"mounts[{i}]" in err and "idmap" in err and "bind" in err, err


def test_idmap_on_a_bind_without_a_user_namespace_is_refused(seerun, bundle, tmp_path):
    (tmp_path / "vol").mkdir()
    i = add_mount(bundle, "/vol", "bind", tmp_path / "vol", ["bind", "idmap"])
    err = run_fails(seerun, bundle)
    assert f"mounts[{i}]" in err and "idmap" in err and "user namespace" in err, err


def test_bind_mounts_follow_the_root_in_mountinfo_in_config_order(seerun, bundle, tmp_path):
    # runtime-tools' validation checks that the config's mounts appear in mountinfo in order.
    for n in ("a", "b"):
        (tmp_path / n).mkdir()
    add_mount(bundle, "/first", "tmpfs", "tmpfs", [])
    add_mount(bundle, "/second", "bind", tmp_path / "a", ["bind"])
    add_mount(bundle, "/third", "tmpfs", "tmpfs", [])
    add_mount(bundle, "/fourth", "bind", tmp_path / "b", ["rbind"])
    r = run(seerun, bundle, "cat /proc/self/mountinfo")
    points = [line.split()[4] for line in r.stdout.splitlines()]
    assert points[0] == "/", points
    want = ["/proc", "/dev", "/first", "/second", "/third", "/fourth"]
    assert [p for p in points if p in want] == want, points


# ---- 8. a failed poststart hook ----------------------------------------------------------


def failing_poststart(bundle, version, tmp_path):
    bundle.config["ociVersion"] = version
    bundle.config["hooks"] = {
        "poststart": [{"path": "/bin/sh", "args": ["sh", "-c", "echo says-no >&2; exit 5"]},
                      {"path": "/bin/sh", "args": ["sh", "-c", f"touch {tmp_path}/second"]}],
        "poststop": [{"path": "/bin/sh", "args": ["sh", "-c", f"touch {tmp_path}/poststop"]}]}
    bundle.args("sleep", "30")


def test_a_failed_poststart_hook_stops_and_destroys_a_1_3_container(seerun, bundle, tmp_path):
    failing_poststart(bundle, "1.3.0", tmp_path)
    cid = seerun.id()
    seerun.cmd("create", "--bundle", bundle.write(), cid, check=True)
    pid = seerun.state(cid)["pid"]
    r = seerun.cmd("start", cid)
    assert r.returncode != 0
    assert "poststart[0]" in r.stderr and "says-no" in r.stderr
    # runtime.md step 9: stop the container, continue at step 12 (destroy, poststop hooks).
    assert seerun.list_ids() == []
    assert seerun.cmd("state", cid).returncode != 0
    wait_for(lambda: gone(pid), what="the container's process to die")
    assert not (tmp_path / "second").exists()
    assert (tmp_path / "poststop").exists()


def test_run_with_a_failed_poststart_hook_destroys_once(seerun, bundle, tmp_path):
    failing_poststart(bundle, "1.3.0", tmp_path)
    bundle.config["hooks"]["poststop"] = [
        {"path": "/bin/sh", "args": ["sh", "-c", f"echo once >> {tmp_path}/poststop"]}]
    r = seerun.cmd("run", "--bundle", bundle.write(), seerun.id())
    assert r.returncode != 0 and "says-no" in r.stderr
    assert seerun.list_ids() == []
    # Destroyed by start; run's own clean-up finds nothing left (no second poststop run).
    assert (tmp_path / "poststop").read_text() == "once\n"
    assert "poststop hooks skipped" not in r.stderr, r.stderr


@pytest.mark.parametrize("version", ["1.0.2", "1.2.1"])
def test_a_failed_poststart_hook_of_an_older_config_is_a_warning(seerun, bundle, tmp_path,
                                                                  version):
    failing_poststart(bundle, version, tmp_path)
    cid = seerun.id()
    seerun.cmd("create", "--bundle", bundle.write(), cid, check=True)
    r = seerun.cmd("start", cid)
    assert r.returncode == 0, r.stderr
    assert "poststart[0]" in r.stderr and "says-no" in r.stderr and "warn" in r.stderr.lower()
    assert seerun.state(cid)["status"] == "running"
    # The remaining hooks run as if the hook had succeeded.
    assert (tmp_path / "second").exists()
    seerun.cmd("delete", "--force", cid, check=True)


# ---- delete of a created container: as runc --------------------------------------------------


def test_delete_of_a_created_container_kills_and_removes_it(seerun, bundle):
    # runc's delete.bats "runc delete" of a created container, and containerd's shim.
    bundle.args("sleep", "30")
    cid = seerun.id()
    seerun.cmd("create", "--bundle", bundle.write(), cid, check=True)
    st = seerun.state(cid)
    assert st["status"] == "created"
    r = seerun.cmd("delete", cid)
    assert r.returncode == 0, r.stderr
    assert seerun.list_ids() == []
    wait_for(lambda: gone(st["pid"]), what="the init to die")


def test_delete_of_a_running_container_without_force_is_still_refused(seerun, bundle):
    bundle.args("sleep", "30")
    cid = seerun.id()
    seerun.cmd("run", "--detach", "--bundle", bundle.write(), cid, check=True)
    r = seerun.cmd("delete", cid)
    assert r.returncode != 0 and "running" in r.stderr
    assert seerun.state(cid)["status"] == "running"


# ---- 12. no mount namespace ---------------------------------------------------------------


def no_mount_ns(bundle):
    bundle.linux["namespaces"] = [n for n in bundle.linux["namespaces"] if n["type"] != "mount"]
    bundle.config["mounts"] = []
    bundle.linux.pop("maskedPaths", None)
    bundle.linux.pop("readonlyPaths", None)


def only_in_root(rootfs, name="only-in-root"):
    """An executable at /<name> of the container's root that the host's / does not have (as the
    validation suite's /runtimetest, copied into the bundle)."""
    assert not os.path.exists(f"/{name}")
    script = rootfs / name
    script.write_text("#!/bin/sh\necho in root.path; pwd\n")
    script.chmod(0o755)
    return f"/{name}"


def test_without_a_mount_namespace_the_root_is_root_path_and_the_mounts_the_hosts(
        seerun, bundle, own_rootfs, tmp_path):
    # runtime.md: a namespace not listed is the runtime's -- the mounts; the root is still
    # root.path: runc chroots there, and the validation suite runs /runtimetest from the bundle.
    # (permissive only: below, every enforcing profile refuses it.)
    no_mount_ns(bundle)
    host_marker = tmp_path / "host-marker"
    host_marker.write_text("on the host\n")
    bundle.process["cwd"] = "/made-cwd"
    r = run(seerun, bundle, f"{only_in_root(own_rootfs)}; cat {host_marker} || echo no host file")
    assert r.stdout == "in root.path\n/made-cwd\nno host file\n", r.stdout
    assert (own_rootfs / "made-cwd").is_dir()
    # Seen from the host while it lives: the host's mount namespace, root.path as its root.
    bundle.args("sleep", "30")
    cid = seerun.id()
    seerun.cmd("create", "--bundle", bundle.write(), cid, check=True)
    pid = seerun.state(cid)["pid"]
    assert os.readlink(f"/proc/{pid}/ns/mnt") == os.readlink("/proc/self/ns/mnt")
    assert os.readlink(f"/proc/{pid}/root") == str(own_rootfs)
    assert os.readlink(f"/proc/{pid}/cwd") == str(own_rootfs / "made-cwd")
    seerun.cmd("delete", "--force", cid, check=True)


def test_without_any_namespace_the_container_has_every_namespace_of_the_runtime(
        seerun, bundle, own_rootfs):
    # runtime-tools' linux_ns_itype: every namespace removed (and the hostname), create with
    # the suite's process (a program only the bundle has), each /proc/<pid>/ns/* is ours.
    bundle.linux["namespaces"] = []
    bundle.config.pop("hostname", None)
    no_mount_ns(bundle)
    bundle.args(only_in_root(own_rootfs))
    cid = seerun.id()
    r = seerun.cmd("create", "--bundle", bundle.write(), cid)
    assert r.returncode == 0, r.stderr
    pid = seerun.state(cid)["pid"]
    for ns in ("cgroup", "ipc", "mnt", "net", "pid", "user", "uts"):
        assert os.readlink(f"/proc/{pid}/ns/{ns}") == os.readlink(f"/proc/self/ns/{ns}"), ns
    seerun.cmd("delete", "--force", cid, check=True)
    assert seerun.list_ids() == []


def test_exec_without_a_mount_namespace_runs_in_root_path_too(seerun, bundle, own_rootfs):
    no_mount_ns(bundle)
    prog = only_in_root(own_rootfs)
    bundle.args("sleep", "30")
    cid = seerun.id()
    seerun.cmd("run", "--detach", "--bundle", bundle.write(), cid, check=True)
    r = seerun.cmd("exec", "--cwd", "/bin", cid, prog)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "in root.path\n/bin\n"
    seerun.cmd("delete", "--force", cid, check=True)


def test_without_a_mount_namespace_a_terminal_is_a_pty_of_the_hosts_devpts(seerun, bundle,
                                                                           console):
    no_mount_ns(bundle)
    terminal_bundle(bundle, "sleep", "30")
    bundle.process["user"] = {"uid": 1000, "gid": 1000}
    cid, name, master = create_with_console(seerun, bundle, console)
    assert name.startswith("/dev/pts/")
    seerun.cmd("start", cid, check=True)
    # Seen from the host (the container's root has neither /proc nor /dev/pts mounted).
    pid = seerun.state(cid)["pid"]
    assert os.readlink(f"/proc/{pid}/fd/0") == name
    assert os.stat(name).st_uid == 1000
    assert os.readlink(f"/proc/{pid}/root") == bundle.config["root"]["path"]
    # Nothing was bound on the host's /dev/console.
    with open("/proc/self/mountinfo") as f:
        assert " /dev/console " not in f.read()
    seerun.cmd("delete", "--force", cid, check=True)


def test_without_a_mount_namespace_masked_paths_are_refused(seerun, bundle):
    # runc: "unable to restrict sys entries without a private MNT namespace".
    no_mount_ns(bundle)
    bundle.linux["maskedPaths"] = ["/proc/kcore"]
    err = run_fails(seerun, bundle)
    assert "maskedPaths" in err and "mount namespace" in err, err


def test_every_enforcing_profile_refuses_a_config_without_a_mount_namespace(hardened, bundle):
    no_mount_ns(bundle)
    bundle.args("true")
    r = hardened.cmd("run", "--bundle", bundle.write(), hardened.id())
    assert r.returncode != 0
    assert "linux.namespaces.mount" in r.stderr, r.stderr
    assert hardened.list_ids() == []
    refused = [a for a in hardened.audit() if "linux.namespaces.mount" in json.dumps(a)]
    assert refused, hardened.audit()
    chk = hardened.cmd("policy", "check", "--bundle", bundle.path)
    assert chk.returncode != 0 and "linux.namespaces.mount" in chk.stdout + chk.stderr


# ---- robustness leftovers -----------------------------------------------------------------


def raw_config(bundle, text_from, text_to):
    path = bundle.write()
    cfg = os.path.join(path, "config.json")
    with open(cfg) as f:
        text = f.read()
    assert text_from in text
    with open(cfg, "w") as f:
        f.write(text.replace(text_from, text_to, 1))
    return path


@pytest.mark.parametrize("escape", ["\\ud800", "\\udfff", "\\ud800\\u0041", "x\\udbff"])
def test_a_lone_utf16_surrogate_in_a_string_is_refused(seerun, bundle, escape):
    bundle.process["env"].append("MARK=@@")
    path = raw_config(bundle, '"MARK=@@"', '"MARK=' + escape + '"')
    r = seerun.cmd("run", "--bundle", path, seerun.id())
    assert r.returncode != 0
    assert "surrogate" in r.stderr and "config.json" in r.stderr, r.stderr
    assert seerun.list_ids() == []


def test_a_surrogate_pair_is_accepted(seerun, bundle):
    bundle.process["env"].append("MARK=@@")
    bundle.args("sh", "-c", "echo $MARK")
    path = raw_config(bundle, '"MARK=@@"', '"MARK=\\ud83d\\ude00"')
    r = seerun.cmd("run", "--bundle", path, seerun.id())
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("path", ["system.slice:docker:abc", ":seerun:abc"])
def test_a_systemd_cgroups_path_without_systemd_cgroup_is_refused(seerun, bundle, path):
    bundle.linux["cgroupsPath"] = path
    r = seerun.cmd("run", "--bundle", bundle.write(), seerun.id())
    assert r.returncode != 0
    assert "linux.cgroupsPath" in r.stderr and "--systemd-cgroup" in r.stderr, r.stderr
    assert seerun.list_ids() == []


@pytest.mark.parametrize("label", ["garbage", "a:b", "u:r:t:s0\nx", "u:r:t:s0,uid=0", "u r:t:s0"])
def test_a_garbage_mount_label_is_refused(seerun, bundle, label):
    bundle.linux["mountLabel"] = label
    r = seerun.cmd("run", "--bundle", bundle.write(), seerun.id())
    assert r.returncode != 0
    assert "linux.mountLabel" in r.stderr and "SELinux" in r.stderr, r.stderr
    assert seerun.list_ids() == []


def test_a_well_formed_mount_label_is_accepted_without_selinux(seerun, bundle):
    bundle.linux["mountLabel"] = "system_u:object_r:container_file_t:s0:c1,c2"
    run(seerun, bundle, "true")


def test_a_destination_climbing_above_the_root_is_cleaned_as_runc(seerun, bundle):
    # runc cleans a destination as filepath.Clean("/" + dest): ".." stops at "/".  So does
    # seerun, and everything after the parser (policy, audit, mounts) sees the cleaned path.
    add_mount(bundle, "/../../proc/../tmp/./x/../up", "tmpfs", "tmpfs", [])
    r = run(seerun, bundle, "cat /proc/self/mountinfo")
    assert mountinfo(r.stdout)["/tmp/up"]["fstype"] == "tmpfs"
    dests = [json.dumps(a) for a in seerun.audit()]
    assert not any("/../../proc" in d for d in dests)
