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
