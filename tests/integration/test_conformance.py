"""Where runc's and crun's own suites, and the engines that switch from them, expect a runtime
to behave as they do (issue 17): loopback up in a new network namespace, HOME from the
container's /etc/passwd, exec into a paused container or with a seccomp agent, flags after the
container id, and the smaller CLI behaviours.  Each test runs the command as the peers' suites
do and asserts what they assert, under the permissive profile (the config applied as written)
unless it says otherwise."""
import errno
import fcntl
import json
import os
import shutil
import socket
import subprocess
import threading

import pytest

from conftest import (SECCOMP_IOCTL_NOTIF_RECV, SECCOMP_IOCTL_NOTIF_SEND, SEERUN,
                      SeccompNotif, SeccompNotifResp, wait_for)


def run(seerun, bundle, *extra, **kw):
    return seerun.cmd("run", *extra, "--bundle", bundle.write(), seerun.id(), **kw)


@pytest.fixture
def running(seerun, bundle):
    bundle.args("sleep", "300")
    cid = seerun.id()
    seerun.cmd("run", "-d", "--bundle", bundle.write(), cid, check=True)
    return cid


@pytest.fixture
def own_rootfs(tmp_path, busybox_rootfs):
    """A private copy of the busybox root filesystem, for tests that change its /etc."""
    root = tmp_path / "own-rootfs"
    shutil.copytree(busybox_rootfs, root, symlinks=True)
    return root


# ---- 1. loopback is up in every new network namespace ----

IFF_UP = 0x1
IFF_RUNNING = 0x40

LO_SCRIPT = ("cat /sys/class/net/lo/flags; cat /sys/class/net/lo/operstate; ls /sys/class/net; "
             # something listening on 127.0.0.1 is reachable
             # (the server runs `echo hi` on the connection: no race between its stdin's
             # end and the client's data)
             "nc -l -p 4444 -e echo hi & for i in $(seq 1 50); do "
             "got=$(nc 127.0.0.1 4444 </dev/null) && break; sleep 0.1; done; wait; echo $got")


def assert_lo_up(out):
    lines = out.split("\n")
    flags = int(lines[0], 16)
    assert flags & IFF_UP, f"lo flags {lines[0]}: not up"
    # runc/crun: `ip link show lo` says UP, operstate is "unknown" (never "down") for lo.
    assert lines[1] != "down"
    assert lines[2].split() == ["lo"]
    assert lines[-2] == "hi", out


def test_loopback_is_up_in_a_new_network_namespace(seerun, bundle):
    bundle.shell(LO_SCRIPT)
    r = run(seerun, bundle)
    assert r.returncode == 0, r.stderr
    assert_lo_up(r.stdout)


def test_loopback_is_up_in_a_new_network_namespace_with_a_user_namespace(seerun, bundle):
    bundle.linux["namespaces"].append({"type": "user"})
    bundle.linux["uidMappings"] = [{"containerID": 0, "hostID": 200000, "size": 65536}]
    bundle.linux["gidMappings"] = [{"containerID": 0, "hostID": 200000, "size": 65536}]
    bundle.shell(LO_SCRIPT)
    r = run(seerun, bundle)
    assert r.returncode == 0, r.stderr
    assert_lo_up(r.stdout)


def test_a_container_without_a_network_grant_has_only_lo_and_it_is_up(hardened,
                                                                       hardened_bundle):
    hardened_bundle.shell(LO_SCRIPT)
    r = hardened.cmd("run", "--bundle", hardened_bundle.write(), hardened.id())
    assert r.returncode == 0, r.stderr
    assert_lo_up(r.stdout)


def test_a_joined_network_namespace_is_left_as_it_is(seerun, bundle, tmp_path):
    # A network namespace made by someone else (CNI, `ip netns`), joined by path: its owner
    # decides its interfaces; seerun leaves its lo down.
    holder = subprocess.Popen(["unshare", "--net", "sleep", "300"])
    try:
        ns = f"/proc/{holder.pid}/ns/net"
        wait_for(lambda: os.stat(ns).st_ino != os.stat("/proc/self/ns/net").st_ino,
                 timeout=20, what="the namespace holder")
        bundle.linux["namespaces"] = [n for n in bundle.linux["namespaces"]
                                      if n["type"] != "network"]
        bundle.linux["namespaces"].append({"type": "network", "path": ns})
        bundle.shell("cat /sys/class/net/lo/flags")
        r = run(seerun, bundle)
        assert r.returncode == 0, r.stderr
        assert int(r.stdout, 16) & IFF_UP == 0, r.stdout
    finally:
        holder.kill()
        holder.wait()


# ---- 3. HOME from the container's /etc/passwd ----

def test_home_is_set_from_the_containers_passwd_for_run_and_exec(seerun, bundle):
    bundle.process["env"] = [e for e in bundle.process["env"] if not e.startswith("HOME=")]
    bundle.shell("echo $HOME")
    r = run(seerun, bundle)
    assert (r.returncode, r.stdout) == (0, "/root\n"), r.stderr
    bundle.process["user"] = {"uid": 1000, "gid": 1000}
    r = run(seerun, bundle)
    assert (r.returncode, r.stdout) == (0, "/home/user\n"), r.stderr
    # A uid the container's passwd does not know: "/", as runc.
    bundle.process["user"] = {"uid": 4242, "gid": 4242}
    r = run(seerun, bundle)
    assert (r.returncode, r.stdout) == (0, "/\n"), r.stderr


def test_home_from_the_config_is_kept(seerun, bundle):
    bundle.process["env"].append("HOME=/from/config")
    bundle.shell("echo $HOME")
    r = run(seerun, bundle)
    assert (r.returncode, r.stdout) == (0, "/from/config\n"), r.stderr


def test_exec_sets_home_for_its_user_unless_env_sets_it(seerun, bundle):
    bundle.process["env"] = [e for e in bundle.process["env"] if not e.startswith("HOME=")]
    bundle.args("sleep", "300")
    cid = seerun.id()
    seerun.cmd("run", "-d", "--bundle", bundle.write(), cid, check=True)
    r = seerun.cmd("exec", cid, "sh", "-c", "echo $HOME", check=True)
    assert r.stdout == "/root\n"
    r = seerun.cmd("exec", "--user", "1000:1000", cid, "sh", "-c", "echo $HOME", check=True)
    assert r.stdout == "/home/user\n"
    r = seerun.cmd("exec", "--user", "4242", cid, "sh", "-c", "echo $HOME", check=True)
    assert r.stdout == "/\n"
    r = seerun.cmd("exec", "--env", "HOME=/x", cid, "sh", "-c", "echo $HOME", check=True)
    assert r.stdout == "/x\n"


def test_home_is_read_inside_the_container_root_never_through_a_symlink_out(
        seerun, bundle, own_rootfs, tmp_path):
    # /etc/passwd is an absolute symlink: it names the container's /outside-passwd, not the
    # host's file of that name; a host file there must not be read.
    host_decoy = "/tmp/seerun-home-decoy-passwd"
    with open(host_decoy, "w") as f:
        f.write("root:x:0:0:root:/HOST-FILE-READ:/bin/sh\n")
    try:
        os.unlink(own_rootfs / "etc" / "passwd")
        os.symlink(host_decoy, own_rootfs / "etc" / "passwd")
        os.makedirs(own_rootfs / "tmp", exist_ok=True)
        with open(own_rootfs / host_decoy.lstrip("/"), "w") as f:
            f.write("root:x:0:0:root:/inside-root:/bin/sh\n")
        bundle.config["root"]["path"] = str(own_rootfs)
        bundle.process["env"] = [e for e in bundle.process["env"] if not e.startswith("HOME=")]
        bundle.shell("echo $HOME")
        r = run(seerun, bundle)
        assert (r.returncode, r.stdout) == (0, "/inside-root\n"), r.stderr
    finally:
        os.unlink(host_decoy)


@pytest.mark.parametrize("cmd", ["run", "exec"])
def test_home_never_carries_the_runtimes_own_proc_files_into_the_container(
        seerun, bundle, own_rootfs, cmd):
    # /etc/passwd -> /proc/self/environ: read by the runtime (the init before its exec, the
    # exec'd process before its), "self" is a runtime process and its environ the engine's.
    os.unlink(own_rootfs / "etc" / "passwd")
    os.symlink("/proc/self/environ", own_rootfs / "etc" / "passwd")
    bundle.config["root"]["path"] = str(own_rootfs)
    bundle.process["env"] = [e for e in bundle.process["env"] if not e.startswith("HOME=")]
    env = {"A": "x:x:0:0:x:/LEAKED-FROM-THE-RUNTIME:/bin/sh", **os.environ}
    if cmd == "run":
        bundle.shell("echo $HOME")
        r = run(seerun, bundle, env=env)
    else:
        bundle.args("sleep", "300")
        cid = seerun.id()
        seerun.cmd("run", "-d", "--bundle", bundle.write(), cid, check=True)
        r = seerun.cmd("exec", cid, "sh", "-c", "echo $HOME", env=env)
    assert (r.returncode, r.stdout) == (0, "/\n"), r.stderr


def test_a_passwd_that_is_a_fifo_or_huge_does_not_block_or_exhaust_the_runtime(
        seerun, bundle, own_rootfs):
    bundle.config["root"]["path"] = str(own_rootfs)
    bundle.process["env"] = [e for e in bundle.process["env"] if not e.startswith("HOME=")]
    bundle.shell("echo $HOME")
    passwd = own_rootfs / "etc" / "passwd"
    os.unlink(passwd)
    os.mkfifo(passwd)
    r = run(seerun, bundle, timeout=30)
    assert (r.returncode, r.stdout) == (0, "/\n"), r.stderr
    os.unlink(passwd)
    # Megabytes of other users before root's line: past the bound, root is not looked for.
    with open(passwd, "w") as f:
        for i in range(200000):
            f.write(f"u{i}:x:{100000 + i}:100:u:/home/u{i}:/bin/sh\n")
        f.write("root:x:0:0:root:/late-root:/bin/sh\n")
    r = run(seerun, bundle, timeout=30)
    assert (r.returncode, r.stdout) == (0, "/\n"), r.stderr
    # A line longer than any passwd line is skipped whole (its tail is not taken for a line);
    # the entry after it is found, and a last line without a newline too.
    with open(passwd, "w") as f:
        f.write("x" * 20000 + ":0:0:x:/from-the-tail:/bin/sh\n")
        f.write("user:x:1000:1000:user:/home/user:/bin/sh\n")
        f.write("root:x:0:0:root:/root-last:/bin/sh")
    r = run(seerun, bundle, timeout=30)
    assert (r.returncode, r.stdout) == (0, "/root-last\n"), r.stderr


# ---- 4. the hangs ----

def test_exec_ignore_paused_returns_once_the_container_is_resumed(seerun, running):
    # runc's exec.bats "runc exec --ignore-paused": the exec blocks while paused (its process
    # joins the frozen cgroup) and finishes after resume.
    cid = running
    seerun.cmd("pause", cid, check=True)
    p = subprocess.Popen([SEERUN, *seerun.global_args, "exec", "--ignore-paused", cid,
                          "echo", "hello"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         stdin=subprocess.DEVNULL, text=True)
    try:
        # resume must not wait for the exec (which waits for resume)
        r = seerun.cmd("resume", cid, timeout=20)
        assert r.returncode == 0, r.stderr
        stdout, stderr = p.communicate(timeout=20)
        assert (p.returncode, stdout) == (0, "hello\n"), stderr
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


def frozen_cgroup(name):
    """A v1 freezer cgroup (this machine's freezer) that is FROZEN before the container."""
    path = f"/sys/fs/cgroup/freezer/{name}"
    os.makedirs(path, exist_ok=True)
    with open(f"{path}/freezer.state", "w") as f:
        f.write("FROZEN")
    return path


def test_run_into_a_preexisting_frozen_cgroup_is_refused(seerun, bundle):
    # runc's cgroups.bats: "runc run/create should refuse pre-existing frozen cgroup".
    cid = seerun.id()
    bundle.linux["cgroupsPath"] = f"/{cid}"
    path = f"/sys/fs/cgroup/freezer/{cid}"
    try:
        for cmd in ("run", "create"):
            frozen_cgroup(cid)
            r = seerun.cmd(cmd, "--bundle", bundle.write(), cid, timeout=20)
            assert r.returncode != 0
            assert "frozen" in r.stderr, r.stderr
            assert cid not in seerun.list_ids()
    finally:
        if os.path.isdir(path):
            with open(f"{path}/freezer.state", "w") as f:
                f.write("THAWED")
        for base in os.listdir("/sys/fs/cgroup"):
            p = f"/sys/fs/cgroup/{base}/{cid}"
            if os.path.isdir(p):
                os.rmdir(p)


class Agent:
    """A seccomp agent as runc's contrib/cmd/seccompagent: accepts any number of runtimes,
    takes the listener fd of each, and answers every notification with -EDQUOT."""

    def __init__(self, path):
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(path)
        self.sock.listen(8)
        self.fds = []
        self.states = []
        self.stop = False
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        self.sock.settimeout(0.2)
        while not self.stop:
            try:
                conn, _ = self.sock.accept()
            except (socket.timeout, OSError):
                continue
            with conn:
                conn.settimeout(10)
                msg, fds, _, _ = socket.recv_fds(conn, 65536, 4)
                self.states.append(msg)
                # As runc's agent: the listener is the fd that "fds" names "seccompFd"; a
                # message without it is dropped (and its process is never answered).
                try:
                    names = json.loads(msg).get("fds", [])
                except ValueError:
                    names = []
                for i, fd in enumerate(fds):
                    if i < len(names) and names[i] == "seccompFd":
                        self.fds.append(fd)
                        threading.Thread(target=self.answer, args=(fd,), daemon=True).start()
                    else:
                        os.close(fd)

    def answer(self, fd):
        while not self.stop:
            req = SeccompNotif()
            try:
                fcntl.ioctl(fd, SECCOMP_IOCTL_NOTIF_RECV, req)
            except OSError:
                return
            resp = SeccompNotifResp(id=req.id, val=0, error=-errno.EDQUOT, flags=0)
            try:
                fcntl.ioctl(fd, SECCOMP_IOCTL_NOTIF_SEND, resp)
            except OSError:
                pass

    def close(self):
        self.stop = True
        self.sock.close()
        self.thread.join(5)
        for fd in self.fds:
            os.close(fd)


@pytest.fixture
def agent():
    d = f"/tmp/sra-{os.getpid()}-{os.urandom(3).hex()}"
    os.mkdir(d)
    a = Agent(os.path.join(d, "agent.sock"))
    yield a
    a.close()
    for f in os.listdir(d):
        os.unlink(os.path.join(d, f))
    os.rmdir(d)


@pytest.mark.parametrize("nnp", [False, True])
def test_exec_with_a_seccomp_notify_filter_reaches_the_agent(seerun, bundle, agent, nnp):
    # runc's seccomp-notify.bats "runc exec [seccomp] (SCMP_ACT_NOTIFY)".
    bundle.process["noNewPrivileges"] = nnp
    bundle.linux["seccomp"] = {
        "defaultAction": "SCMP_ACT_ALLOW", "listenerPath": agent.path,
        "architectures": ["SCMP_ARCH_X86", "SCMP_ARCH_X32", "SCMP_ARCH_X86_64"],
        "syscalls": [{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_NOTIFY"}]}
    bundle.args("sleep", "300")
    cid = seerun.id()
    seerun.cmd("run", "-d", "--bundle", bundle.write(), cid, check=True, timeout=20)
    r = seerun.cmd("exec", cid, "sh", "-c", "mkdir /tmp/d; echo status=$?; ls -d /tmp/d",
                   timeout=20)
    assert "status=1" in r.stdout, (r.stdout, r.stderr)
    assert "quota" in r.stderr.lower(), r.stderr  # the agent's answer, EDQUOT
    assert len(agent.states) == 2  # the init's and the exec's
    init = seerun.state(cid)["pid"]
    m = json.loads(agent.states[1])
    assert m["fds"] == ["seccompFd"]
    assert m["pid"] != init                      # the exec'd process
    assert m["state"]["id"] == cid and m["state"]["pid"] == init
    assert m["state"]["status"] == "running"


# ---- 5. flags after positional arguments, as runc's urfave/cli reorders them ----

def test_update_accepts_flags_after_the_container_id(seerun, running):
    cid = running
    r = seerun.cmd("update", cid, "--cpu-period", "900000", "--pids-limit", "77")
    assert r.returncode == 0, r.stderr
    with open(f"/sys/fs/cgroup/cpu/{cid}/cpu.cfs_period_us") as f:
        assert f.read().strip() == "900000"
    with open(f"/sys/fs/cgroup/pids/{cid}/pids.max") as f:
        assert f.read().strip() == "77"


def test_create_run_kill_delete_accept_flags_after_the_id(seerun, bundle, tmp_path):
    bundle.args("sleep", "300")
    path = bundle.write()
    cid = seerun.id()
    pidfile = tmp_path / "pid"
    r = seerun.cmd("create", cid, "--bundle", path, "--pid-file", str(pidfile))
    assert r.returncode == 0, r.stderr
    assert int(pidfile.read_text()) == seerun.state(cid)["pid"]
    seerun.cmd("start", cid, check=True)
    r = seerun.cmd("kill", cid, "KILL", "--all")
    assert r.returncode == 0, r.stderr
    wait_for(lambda: seerun.state(cid)["status"] == "stopped", timeout=20,
             what="the container to stop")
    r = seerun.cmd("delete", cid, "--force")
    assert r.returncode == 0, r.stderr
    assert cid not in seerun.list_ids()
    cid2 = seerun.id("d")
    r = seerun.cmd("run", cid2, "--bundle", path, "-d")
    assert r.returncode == 0, r.stderr
    assert seerun.state(cid2)["status"] == "running"
    r = seerun.cmd("list", "-q")
    assert r.returncode == 0 and cid2 in r.stdout.split()


def test_exec_arguments_after_the_command_belong_to_the_command(seerun, running):
    # runc's exec skips reordering: what follows the id is the command line.
    cid = running
    r = seerun.cmd("exec", cid, "echo", "--cwd", "/x", "-t")
    assert (r.returncode, r.stdout) == (0, "--cwd /x -t\n"), r.stderr
    r = seerun.cmd("exec", "--cwd", "/tmp", cid, "pwd")
    assert (r.returncode, r.stdout) == (0, "/tmp\n"), r.stderr
    # "--" before the id ends the options (runc's Go flag parsing does the same).
    r = seerun.cmd("exec", "--", cid, "echo", "a")
    assert (r.returncode, r.stdout) == (0, "a\n"), r.stderr


def test_a_double_dash_ends_the_options(seerun, running):
    cid = running
    # kill ID -- 9: "9" is the signal even though "--" came first
    r = seerun.cmd("kill", "--", cid, "KILL")
    assert r.returncode == 0, r.stderr
    wait_for(lambda: seerun.state(cid)["status"] == "stopped", timeout=20,
             what="the container to stop")
    r = seerun.cmd("delete", "--", "--force")
    assert r.returncode != 0  # "--force" after "--" is an id, not the flag


# ---- 11. CLI items ----

def test_kill_with_signal_0_checks_that_the_container_exists(seerun, running, bundle):
    cid = running
    r = seerun.cmd("kill", cid, "0")
    assert r.returncode == 0, r.stderr
    assert seerun.state(cid)["status"] == "running"
    seerun.cmd("kill", cid, "KILL", check=True)
    wait_for(lambda: seerun.state(cid)["status"] == "stopped", timeout=20,
             what="the container to stop")
    r = seerun.cmd("kill", cid, "0")
    assert r.returncode != 0 and "not running" in r.stderr
    r = seerun.cmd("kill", "nonexistent-" + cid, "0")
    assert r.returncode != 0 and "does not exist" in r.stderr


def test_exec_process_from_an_inherited_descriptor(seerun, running):
    # runc's exec.bats: `runc exec --process /dev/fd/5 ...` (a process.json on a pipe)
    cid = running
    process = {"terminal": False, "user": {"uid": 0, "gid": 0}, "cwd": "/",
               "args": ["echo", "from-fd"], "env": ["PATH=/bin"]}
    rfd, wfd = os.pipe()
    os.write(wfd, json.dumps(process).encode())
    os.close(wfd)
    try:
        r = seerun.cmd("exec", "-p", f"/dev/fd/{rfd}", cid, pass_fds=[rfd])
    finally:
        os.close(rfd)
    assert (r.returncode, r.stdout) == (0, "from-fd\n"), r.stderr


def test_exec_cgroup_is_refused_not_ignored(seerun, running):
    cid = running
    for arg in (["--cgroup", "sub"], ["--cgroup", "cpu:sub"]):
        r = seerun.cmd("exec", *arg, cid, "true")
        assert r.returncode == 255
        assert "--cgroup" in r.stderr and "not supported" in r.stderr, r.stderr


def test_spec_rootless_prints_runcs_rootless_template(seerun, tmp_path):
    r = seerun.cmd("spec", "--rootless", "--bundle", str(tmp_path))
    assert r.returncode == 0, r.stderr
    with open(tmp_path / "config.json") as f:
        spec = json.load(f)
    linux = spec["linux"]
    types = [n["type"] for n in linux["namespaces"]]
    assert "user" in types and "network" not in types
    assert linux["uidMappings"] == [{"containerID": 0, "hostID": os.geteuid(), "size": 1}]
    assert linux["gidMappings"] == [{"containerID": 0, "hostID": os.getegid(), "size": 1}]
    assert "resources" not in linux
    mounts = {m["destination"]: m for m in spec["mounts"]}
    assert not any(o.startswith("gid=") for o in mounts["/dev/pts"]["options"])
    sysfs = mounts["/sys"]
    assert sysfs["type"] == "none" and sysfs["source"] == "/sys"
    assert set(sysfs["options"]) == {"rbind", "nosuid", "noexec", "nodev", "ro"}
    # The ordinary template is unchanged.
    r = seerun.cmd("spec", "--bundle", str(tmp_path / "x"))
    assert r.returncode != 0  # no such bundle directory
    os.mkdir(tmp_path / "plain")
    seerun.cmd("spec", "--bundle", str(tmp_path / "plain"), check=True)
    with open(tmp_path / "plain" / "config.json") as f:
        plain = json.load(f)
    assert "network" in [n["type"] for n in plain["linux"]["namespaces"]]
    assert "uidMappings" not in plain["linux"]


def test_running_rootless_stays_refused(seerun, bundle):
    r = seerun.cmd("--rootless=true", "run", "--bundle", bundle.write(), seerun.id())
    assert r.returncode != 0 and "rootless" in r.stderr


def test_a_device_path_with_a_trailing_slash_is_cleaned(seerun, bundle):
    # runc cleans the path (filepath.Clean): the node, its cgroup rule and the policy see
    # /dev/mynull, whatever slashes and dots the config spells it with.
    bundle.linux["devices"] = [
        {"path": "/dev/mynull/", "type": "c", "major": 1, "minor": 3, "fileMode": 0o666,
         "uid": 0, "gid": 0},
        {"path": "/dev//./myzero//", "type": "c", "major": 1, "minor": 5, "fileMode": 0o666,
         "uid": 0, "gid": 0}]
    bundle.shell("ls -l /dev/mynull /dev/myzero; echo x > /dev/mynull && echo written; "
                 "head -c 3 /dev/myzero | od -An -tx1")
    r = run(seerun, bundle)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("c") and lines[0].endswith("/dev/mynull"), r.stdout
    assert lines[1].startswith("c") and lines[1].endswith("/dev/myzero"), r.stdout
    assert "written" in lines
    assert lines[-1].split() == ["00", "00", "00"]


@pytest.mark.parametrize("key,field", [("kernel.hostname", "hostname"),
                                       ("kernel.domainname", "domainname")])
def test_a_uts_sysctl_beside_its_config_field_is_refused(seerun, bundle, key, field):
    bundle.config[field] = "fromfield"
    bundle.linux["sysctl"] = {key: "fromsysctl"}
    r = run(seerun, bundle)
    assert r.returncode != 0
    assert key in r.stderr and field in r.stderr, r.stderr
    refused = [e for e in seerun.audit() if e.get("kind") == "refused"]
    assert any(key in e["reason"] and "conflicts" in e["reason"] for e in refused)
    r = seerun.cmd("policy", "check", "--bundle", bundle.write())
    assert r.returncode != 0 and key in (r.stdout + r.stderr)
    # Without the field, the sysctl is the way to set it.
    del bundle.config[field]
    bundle.shell("cat /proc/sys/" + key.replace(".", "/"))
    r = run(seerun, bundle)
    assert (r.returncode, r.stdout) == (0, "fromsysctl\n"), r.stderr


def test_seccomp_notify_on_write_is_refused(seerun, bundle, tmp_path):
    bundle.linux["seccomp"] = {
        "defaultAction": "SCMP_ACT_ALLOW", "listenerPath": "/tmp/nonexistent-agent.sock",
        "syscalls": [{"names": ["getppid", "write"], "action": "SCMP_ACT_NOTIFY"}]}
    r = run(seerun, bundle, timeout=20)
    assert r.returncode != 0
    assert "write" in r.stderr and "SCMP_ACT_NOTIFY" in r.stderr, r.stderr
    assert "deadlock" in r.stderr
    refused = [e for e in seerun.audit() if e.get("kind") == "refused"]
    assert any("write" in e["reason"] and "SCMP_ACT_NOTIFY" in e["reason"] for e in refused)
    path = bundle.write()
    r = seerun.cmd("policy", "check", "--bundle", path)
    assert r.returncode != 0 and "write" in (r.stdout + r.stderr)


def test_two_containers_sharing_a_cgroup_get_a_warning(seerun, bundle):
    bundle.args("sleep", "300")
    shared = f"/{seerun.prefix}-shared"
    bundle.linux["cgroupsPath"] = shared
    path = bundle.write()
    a, b = seerun.id("a"), seerun.id("b")
    r = seerun.cmd("run", "-d", "--bundle", path, a)
    assert r.returncode == 0, r.stderr
    assert "warning" not in r.stderr.lower()
    r = seerun.cmd("run", "-d", "--bundle", path, b)
    assert r.returncode == 0, r.stderr
    assert "warning" in r.stderr.lower() and "not empty" in r.stderr, r.stderr
    assert shared in r.stderr
    seerun.cmd("delete", "--force", b, check=True)
    seerun.cmd("delete", "--force", a, check=True)
