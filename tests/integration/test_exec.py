"""exec: a new process in a running container sees what the container's own process sees."""
import json
import os
import time

import pytest


@pytest.fixture
def running(seerun, bundle):
    """A running container whose init sleeps; yields (id, init pid)."""
    bundle.process["env"].append("FROM_CONFIG=1")
    bundle.process["cwd"] = "/tmp"
    bundle.args("sleep", "300")
    cid = seerun.id()
    seerun.cmd("run", "-d", "--bundle", bundle.write(), cid, check=True)
    return cid, seerun.state(cid)["pid"]


def ns_inode(pid, kind):
    return os.stat(f"/proc/{pid}/ns/{kind}").st_ino


def test_exec_runs_in_the_containers_namespaces_and_returns_its_status(seerun, running):
    cid, init = running
    r = seerun.cmd("exec", cid, "sh", "-c", "echo $$ > /dev/shm/pid; cat /proc/self/cgroup; "
                   "hostname; pwd; echo $FROM_CONFIG; exit 4")
    assert r.returncode == 4, r.stderr
    lines = r.stdout.splitlines()
    assert "seerun" in lines  # the container's uts namespace
    assert "/tmp" in lines    # the config's cwd
    assert "1" in lines       # the config's env
    r = seerun.cmd("exec", cid, "ps", "-o", "pid,args")
    assert "sleep 300" in r.stdout  # the container's pid namespace


def test_exec_process_shares_every_namespace_and_the_cgroup_of_the_init(seerun, running):
    cid, init = running
    r = seerun.cmd("exec", "--detach", "--pid-file", "/dev/shm/seerun-exec.pid", cid,
                   "sleep", "30", check=True)
    try:
        with open("/dev/shm/seerun-exec.pid") as f:
            pid = int(f.read())
        for kind in ("mnt", "pid", "net", "ipc", "uts", "cgroup"):
            assert ns_inode(pid, kind) == ns_inode(init, kind), kind
        with open(f"/proc/{pid}/cgroup") as a, open(f"/proc/{init}/cgroup") as b:
            assert a.read() == b.read()
        with open(f"/proc/{pid}/status") as f:
            status = f.read()
        assert "NoNewPrivs:\t1" in status
    finally:
        os.unlink("/dev/shm/seerun-exec.pid")


def test_exec_overrides_user_cwd_env_and_adds_capabilities(seerun, running):
    cid, _ = running
    r = seerun.cmd("exec", "--user", "1000:1000", "--cwd", "/", "--env", "A=b", "--env",
                   "FROM_CONFIG=2", cid, "sh", "-c", "id -u; id -g; pwd; echo $A $FROM_CONFIG",
                   check=True)
    assert r.stdout.split() == ["1000", "1000", "/", "b", "2"]
    r = seerun.cmd("exec", "--cap", "CAP_NET_RAW", cid, "grep", "-E", "Cap(Eff|Inh)",
                   "/proc/self/status", check=True)
    eff = int(r.stdout.split("CapEff:")[1].split()[0], 16)
    inh = int(r.stdout.split("CapInh:")[1].split()[0], 16)
    assert eff & (1 << 13)  # CAP_NET_RAW
    assert inh == 0         # never added to the inheritable set


def test_exec_with_a_process_file_as_containerd_sends_it(seerun, running, tmp_path):
    cid, _ = running
    process = {"terminal": False, "user": {"uid": 0, "gid": 0}, "args": ["sh", "-c", "echo $X; pwd"],
               "env": ["PATH=/bin", "X=from-file"], "cwd": "/bin"}
    path = tmp_path / "process.json"
    path.write_text(json.dumps(process))
    r = seerun.cmd("exec", "--process", str(path), cid, check=True)
    assert r.stdout.split() == ["from-file", "/bin"]


def test_exec_of_a_missing_executable_fails_with_runcs_words_and_exit_255(seerun, running):
    cid, _ = running
    r = seerun.cmd("exec", cid, "no-such-program")
    assert r.returncode == 255
    assert 'exec: "no-such-program": executable file not found in $PATH' in r.stderr


def test_exec_in_a_stopped_container_fails(seerun, bundle):
    cid = seerun.id()
    seerun.cmd("run", "--keep", "--bundle", bundle.write(), cid, check=True)
    r = seerun.cmd("exec", cid, "true")
    assert r.returncode == 255 and "stopped" in r.stderr


def test_exec_cannot_run_the_runtime_binary_inside_the_container(seerun, running):
    # CVE-2019-5736: the runtime's own binary, reached through /proc/self/exe, must never run
    # in the container (its process could then open the host binary for writing).
    cid, _ = running
    r = seerun.cmd("exec", cid, "/proc/self/exe", "--version")
    assert r.returncode == 255
    assert "refusing to run the runtime binary" in r.stderr
