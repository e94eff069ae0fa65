"""Terminals: with process.terminal, the container's stdio, controlling terminal and
/dev/console are a pty from its own devpts.  The master goes to the engine over
--console-socket (one message: the pty's name as data, the master fd as SCM_RIGHTS, no reply),
or, for `run` in the foreground, stays with seerun, which relays the caller's terminal."""
import errno
import fcntl
import os
import select
import socket
import struct
import subprocess
import termios
import threading
import time

import pytest

from conftest import SEERUN, Bundle, wait_for


def read_until_eof(fd, timeout=10.0):
    """Everything the other side writes until it hangs up (EIO on a pty master)."""
    out = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        r, _, _ = select.select([fd], [], [], 0.1)
        if not r:
            continue
        try:
            chunk = os.read(fd, 4096)
        except OSError as e:
            if e.errno == errno.EIO:
                return out
            raise
        if not chunk:
            return out
        out += chunk
    raise AssertionError(f"no end of output; so far: {out!r}")


class ConsoleSocket:
    """What an engine (conmon, containerd's shim) listens with: every message and every
    descriptor received on every connection."""

    def __init__(self, path):
        self.path = str(path)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(self.path)
        self.sock.listen(4)
        self.sock.settimeout(20)
        self.messages = []  # (data, [fds])
        self.error = None
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        try:
            conn, _ = self.sock.accept()
            with conn:
                conn.settimeout(20)
                while True:
                    data, fds, _, _ = socket.recv_fds(conn, 4096, 8)
                    if not data and not fds:
                        break
                    self.messages.append((data, fds))
        except Exception as e:
            self.error = e

    def join(self):
        self.thread.join(25)
        assert not self.thread.is_alive(), "the console socket is still waiting"
        if self.error:
            raise self.error

    def close(self):
        for _, fds in self.messages:
            for fd in fds:
                os.close(fd)
        self.sock.close()


@pytest.fixture
def console(tmp_path):
    # sockaddr_un holds 108 bytes: pytest's tmp_path may be longer.
    d = f"/tmp/src-{os.getpid()}-{os.urandom(3).hex()}"
    os.mkdir(d)
    c = ConsoleSocket(os.path.join(d, "console.sock"))
    yield c
    c.close()
    os.unlink(c.path)
    os.rmdir(d)


def terminal_bundle(bundle, *argv, rows=None, cols=None):
    bundle.process["terminal"] = True
    if rows:
        bundle.process["consoleSize"] = {"height": rows, "width": cols}
    bundle.args(*argv)
    return bundle


def create_with_console(seerun, bundle, console):
    cid = seerun.id()
    seerun.cmd("create", "--bundle", bundle.write(), "--console-socket", console.path, cid,
               check=True)
    # The runtime closed its end: the listener's connection ends after the one message.
    console.join()
    assert len(console.messages) == 1, console.messages
    data, fds = console.messages[0]
    assert len(fds) == 1
    return cid, data.decode(), fds[0]


def test_the_console_socket_receives_the_pty_name_and_master(seerun, bundle, console):
    terminal_bundle(bundle, "sh")
    cid, name, master = create_with_console(seerun, bundle, console)
    assert name == "/dev/pts/0"
    # The descriptor is a pty master (ptmx), and its slave is pts 0 of the container's devpts.
    assert os.readlink(f"/proc/self/fd/{master}") == "/dev/pts/ptmx"
    TIOCGPTN = 0x80045430
    assert struct.unpack("I", fcntl.ioctl(master, TIOCGPTN, b"\0" * 4))[0] == 0
    seerun.cmd("start", cid, check=True)
    os.write(master, b"echo hi; tty; exit 3\n")
    out = read_until_eof(master).decode()
    assert "hi\r\n" in out
    assert "/dev/pts/0\r\n" in out
    wait_for(lambda: seerun.state(cid)["status"] == "stopped", what="stopped")


def test_the_pty_is_stdio_controlling_terminal_and_dev_console(seerun, bundle, console):
    script = ("for fd in 0 1 2; do readlink /proc/self/fd/$fd; done;"
              "stat -L -c 'console %t:%T' /dev/console;"
              "stat -L -c 'pts0 %t:%T' /dev/pts/0;"
              "cut -d' ' -f7 /proc/self/stat;"  # tty_nr: the controlling terminal
              "echo to-stderr >&2")
    terminal_bundle(bundle, "sh", "-c", script)
    cid, _, master = create_with_console(seerun, bundle, console)
    seerun.cmd("start", cid, check=True)
    lines = read_until_eof(master).decode().replace("\r\n", "\n").splitlines()
    assert lines[:3] == ["/dev/pts/0"] * 3
    console_dev = lines[3].split()[1]
    assert console_dev == lines[4].split()[1] == "88:0"  # major 136 in hex, minor 0
    assert int(lines[5]) == os.makedev(136, 0)
    assert lines[6] == "to-stderr"


def test_the_console_size_is_applied(seerun, bundle, console):
    terminal_bundle(bundle, "stty", "size", rows=33, cols=111)
    cid, _, master = create_with_console(seerun, bundle, console)
    seerun.cmd("start", cid, check=True)
    assert read_until_eof(master).decode().strip() == "33 111"


def test_the_console_socket_listener_gets_nothing_else(seerun, bundle, console):
    # No second message and no reply expected: the connection closes after the master.
    terminal_bundle(bundle, "true")
    cid, name, _ = create_with_console(seerun, bundle, console)
    assert name.startswith("/dev/pts/")
    seerun.cmd("delete", "--force", cid, check=True)


def test_a_terminal_without_a_console_socket_fails_create(seerun, bundle):
    terminal_bundle(bundle, "sh")
    r = seerun.cmd("create", "--bundle", bundle.write(), seerun.id())
    assert r.returncode != 0
    assert "--console-socket" in r.stderr and "terminal" in r.stderr
    assert seerun.list_ids() == []


def test_a_console_socket_nobody_listens_on_fails_create(seerun, bundle, tmp_path):
    terminal_bundle(bundle, "sh")
    r = seerun.cmd("create", "--bundle", bundle.write(), "--console-socket",
                   str(tmp_path / "nobody.sock"), seerun.id())
    assert r.returncode != 0
    assert "--console-socket" in r.stderr and "nobody.sock" in r.stderr
    assert seerun.list_ids() == []


def test_a_detached_run_with_a_terminal_and_no_console_socket_fails(seerun, bundle):
    terminal_bundle(bundle, "sh")
    r = seerun.cmd("run", "--detach", "--bundle", bundle.write(), seerun.id())
    assert r.returncode != 0
    assert "--console-socket" in r.stderr
    assert seerun.list_ids() == []


class CallerTerminal:
    """seerun run under a pty, as from an interactive shell: the caller's terminal is the pty's
    slave, and the test types on and reads from its master."""

    def __init__(self, seerun, bundle, rows=24, cols=80):
        self.master, self.slave = os.openpty()
        fcntl.ioctl(self.master, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        self.before = termios.tcgetattr(self.slave)
        self.cid = seerun.id()
        self.proc = subprocess.Popen(
            [SEERUN, *seerun.global_args, "run", "--bundle", bundle.write(), self.cid],
            stdin=self.slave, stdout=self.slave, stderr=self.slave, start_new_session=True,
            preexec_fn=lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0))

    def wait_raw(self):
        # seerun puts the caller's terminal in raw mode before it relays anything.
        wait_for(lambda: not (termios.tcgetattr(self.slave)[3] & termios.ICANON),
                 what="the caller's terminal in raw mode")

    def wait_output(self, text, timeout=10):
        buf = b""
        deadline = time.monotonic() + timeout
        while text not in buf and time.monotonic() < deadline:
            r, _, _ = select.select([self.master], [], [], 0.1)
            if r:
                buf += os.read(self.master, 4096)
        assert text in buf, buf
        return buf

    def finish(self):
        out = b""
        while True:
            r, _, _ = select.select([self.master], [], [], 0.1)
            if r:
                try:
                    chunk = os.read(self.master, 4096)
                except OSError:
                    break
                out += chunk
                continue
            # wait4: seerun's own CPU time, for the tests that check it does not spin.
            pid, wstatus, self.rusage = os.wait4(self.proc.pid, os.WNOHANG)
            if pid:
                self.proc.returncode = os.waitstatus_to_exitcode(wstatus)
                break
        return self.proc.returncode, out.decode(errors="replace")

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        os.close(self.master)
        os.close(self.slave)


def test_run_in_the_foreground_relays_the_callers_terminal(seerun, bundle):
    terminal_bundle(bundle, "sh")
    t = CallerTerminal(seerun, bundle, rows=40, cols=120)
    try:
        t.wait_raw()
        os.write(t.master, b"echo hi; tty; stty size; exit 3\n")
        status, out = t.finish()
        assert status == 3, out
        assert "hi\r\n" in out
        assert "/dev/pts/0\r\n" in out
        # The caller's window size reaches the container's pty.
        assert "40 120\r\n" in out
        # And the caller's terminal is as it was.
        assert termios.tcgetattr(t.slave) == t.before
    finally:
        t.close()


def test_run_in_the_foreground_forwards_a_window_change(seerun, bundle):
    terminal_bundle(bundle, "sh", "-c", "trap 'stty size; exit 0' WINCH; echo ready; "
                    "while :; do sleep 0.05; done")
    t = CallerTerminal(seerun, bundle, rows=24, cols=80)
    try:
        buf = t.wait_output(b"ready")
        # A terminal resize: the kernel signals SIGWINCH to the foreground process group of
        # the caller's terminal, seerun's.
        fcntl.ioctl(t.master, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 132, 0, 0))
        status, out = t.finish()
        assert status == 0, buf + out.encode()
        assert "50 132" in out
    finally:
        t.close()


def test_run_in_the_foreground_with_a_terminal_reports_a_kill_as_137(seerun, bundle):
    terminal_bundle(bundle, "sh", "-c", "echo ready; sleep 30")
    t = CallerTerminal(seerun, bundle)
    try:
        t.wait_output(b"ready")
        seerun.cmd("kill", t.cid, "KILL", check=True)
        status, out = t.finish()
        assert status == 128 + 9, out
    finally:
        t.close()


def test_run_does_not_spin_while_the_process_has_closed_its_terminal(seerun, bundle):
    # The process closes every descriptor of the pty and keeps running: the master then reports
    # a hang-up, and seerun must wait for the exit rather than poll in a loop.
    terminal_bundle(bundle, "sh", "-c", "exec 0<&- 1>&- 2>&-; sleep 2.5")
    t = CallerTerminal(seerun, bundle)
    try:
        status, out = t.finish()
        assert status == 0, out
    finally:
        t.close()
    # Spinning costs a second or more of CPU time here; waiting, a few hundredths.
    assert t.rusage.ru_utime + t.rusage.ru_stime < 0.5, t.rusage


def test_a_terminal_works_under_the_default_profile(hardened, busybox_rootfs, tmp_path):
    # A user namespace (the default profile's) and its own devpts: still a controlling pty.
    path = tmp_path / "hardened-bundle"
    path.mkdir()
    bundle = terminal_bundle(Bundle(path, busybox_rootfs, hardened), "sh")
    t = CallerTerminal(hardened, bundle, rows=30, cols=90)
    try:
        t.wait_raw()
        os.write(t.master, b"tty; stty size; exit 4\n")
        status, out = t.finish()
        assert status == 4, out
        assert "/dev/pts/0\r\n" in out and "30 90\r\n" in out
    finally:
        t.close()


def test_the_console_socket_is_resolved_once_before_create_does_anything_else(
        hardened, bundle, console, tmp_path):
    # The engine names its socket through a symlink (conmon's short names); while create is
    # busy (here: waiting for the user namespace registry's lock, which the test holds), the
    # link is swapped to another listener. The pty master goes to the socket the name led to
    # when create began, never to what it leads to by the time the terminal is made.
    d = os.path.dirname(console.path)
    other = ConsoleSocket(os.path.join(d, "other.sock"))
    link = os.path.join(d, "link.sock")
    os.symlink(console.path, link)
    registry = hardened.registry
    os.makedirs(os.path.dirname(registry), mode=0o700, exist_ok=True)
    lock = os.open(os.path.join(os.path.dirname(registry), "." + os.path.basename(registry) +
                                ".lock"), os.O_RDWR | os.O_CREAT, 0o600)
    terminal_bundle(bundle, "true")
    cid = hardened.id()
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        p = subprocess.Popen([SEERUN, *hardened.global_args, "create", "--bundle", bundle.write(),
                              "--console-socket", link, cid],
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True)

        def waiting():
            with open("/proc/locks") as f:
                return any("->" in line and "FLOCK" in line for line in f)
        wait_for(waiting, what="create waiting for the registry lock")
        os.unlink(link)
        os.symlink(other.path, link)
        fcntl.flock(lock, fcntl.LOCK_UN)
        _, err = p.communicate(timeout=60)
        assert p.returncode == 0, err
        console.join()
        assert len(console.messages) == 1 and len(console.messages[0][1]) == 1, console.messages
        assert other.messages == []
        events = [e for e in hardened.audit() if e.get("id") == cid and
                  e.get("event") == "console-socket"]
        assert events and events[0]["path"] == link, events
        assert events[0]["resolved"] == console.path, events
    finally:
        os.close(lock)
        other.close()
        os.unlink(other.path)
        if os.path.lexists(link):
            os.unlink(link)
