"""Red-team reproductions (third round: overlay mounts, overlay roots, the console and listener
sockets).  Each test asserts a promise of README.md / contrib/policy/README.md and failed on the
code it was written against (see the commit message for the finding)."""
import os
import socket
import uuid

import pytest



@pytest.fixture
def containerd_dir_socket():
    """A listening unix socket directly in /run/containerd, where containerd keeps
    containerd.sock.ttrpc and debug.sock (the directory is one of seerun's daemon socket
    directories); removed afterwards, with the directory if the test made it."""
    top = "/run/containerd"
    made = not os.path.isdir(top)
    if made:
        os.mkdir(top, 0o700)
    path = os.path.join(top, f"srt-{uuid.uuid4().hex[:8]}.sock")
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    srv.listen(4)
    srv.settimeout(0.5)
    try:
        yield path, srv
    finally:
        srv.close()
        os.unlink(path)
        if made:
            os.rmdir(top)


def test_a_seccomp_listener_below_containerds_socket_directory_is_refused(
        hardened, make_hardened_bundle, containerd_dir_socket):
    """contrib/policy/README.md row 8: a listenerPath "below a daemon socket directory is
    refused unless in mounts.allowSockets".  /run/containerd is one (socket_dirs), but only
    its own inode is protected (not below, so that binds of the CRI's /dev/shm below it work):
    a socket in it is neither denied nor in a socket directory, and seerun connects to
    containerd's ttrpc or debug socket as host root and writes the state JSON to it."""
    sock_path, srv = containerd_dir_socket
    b = make_hardened_bundle("bundle")
    b.linux["seccomp"] = {"defaultAction": "SCMP_ACT_ALLOW", "listenerPath": sock_path,
                          "syscalls": [{"names": ["getcwd"], "action": "SCMP_ACT_NOTIFY"}]}
    b.args("true")
    b.write()
    chk = hardened.cmd("policy", "check", "--bundle", str(b.path))
    r = hardened.cmd("create", "--bundle", str(b.path), hardened.id(), timeout=20)
    try:
        conn, _ = srv.accept()
        conn.close()
        accepted = True
    except (socket.timeout, BlockingIOError):
        accepted = False
    assert not accepted, "seerun connected as host root to a socket in /run/containerd"
    assert r.returncode != 0 and "linux.seccomp.listenerPath" in r.stderr, r.stderr
    assert "daemon socket directory" in r.stderr, r.stderr
    assert chk.returncode != 0, chk.stdout


def test_exec_connects_only_to_the_listener_socket_the_policy_judged(hardened, make_hardened_bundle):
    """contrib/policy/README.md row 8: linux.seccomp.listenerPath is "judged from the
    descriptor it then connects through".  create does; exec opens the path again by name,
    unjudged, and connects to whatever it names by then as host root.  The path's directory
    is one a container can write (a volume): its socket swapped for a symlink to a denied
    socket (here one in seerun's state root; the engines' sockets, D-Bus) between create and
    an exec (an engine's health check, kubectl exec), seerun connects there and writes the
    container's state to it."""
    d = f"/tmp/srt-l-{uuid.uuid4().hex[:8]}"
    os.mkdir(d)
    agent_path = os.path.join(d, "agent.sock")
    agent = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    agent.bind(agent_path)
    agent.listen(8)
    os.makedirs(hardened.root, exist_ok=True)
    victim_path = os.path.join(hardened.root, "victim.sock")
    victim = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    victim.bind(victim_path)
    victim.listen(8)
    victim.settimeout(0.5)
    try:
        b = make_hardened_bundle("bundle")
        b.linux["seccomp"] = {"defaultAction": "SCMP_ACT_ALLOW", "listenerPath": agent_path,
                              "syscalls": [{"names": ["getcwd"], "action": "SCMP_ACT_NOTIFY"}]}
        b.args("sleep", "60")
        cid = hardened.id("lx")
        hardened.cmd("run", "-d", "--bundle", b.write(), cid, check=True, timeout=30)
        # The volume's socket replaced (by the container, another one, any writer of the
        # directory) with a symlink to a socket the policy refuses.
        os.unlink(agent_path)
        os.symlink(victim_path, agent_path)
        hardened.cmd("exec", cid, "true", timeout=30)
        try:
            conn, _ = victim.accept()
            conn.close()
            reached = True
        except (socket.timeout, BlockingIOError):
            reached = False
        assert not reached, ("seerun exec connected as host root to a socket in the state root "
                             "that listenerPath was swapped to")
    finally:
        agent.close()
        victim.close()
        os.unlink(victim_path)
        for f in os.listdir(d):
            os.unlink(os.path.join(d, f))
        os.rmdir(d)
