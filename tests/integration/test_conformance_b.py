"""Conformance with the OCI runtime spec and runc, as runc's bats suite, crun's suite and the
runtime-tools validation suite check it (issue 17, slices c, d (item 8) and e): under the
permissive profile a config is applied as written, as an OCI runtime must."""
import json
import os
import shutil
import signal
import subprocess
import time

import pytest

from conftest import SEERUN
from test_rootfs import add_mount, mountinfo, section, run, run_fails
from test_terminal import ConsoleSocket, create_with_console, read_until_eof, terminal_bundle
from test_terminal import console  # noqa: F401  (fixture)


def wait_for(pred, timeout=10.0, what="condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


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
