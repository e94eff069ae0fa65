"""`seerun sandbox -- CMD`: a throwaway container seerun builds itself around one command.

The user's story: run a command you do not trust with the host's own tools (python3, sh from
the host's /usr), get its output and exit status back, optionally the files it wrote to /out,
and nothing else — no secret of the host readable, no host network, no host root, nothing
writable but scratch space and /out, limits enforced, and nothing left on the host afterwards,
even when seerun itself is killed.

Every test runs under the shipped default profile (the `hardened` fixture), whose teardown
checks the host for leftovers: state entries (seerun's own dot-files included), cgroups,
mounts and processes.  Sandboxes are named with the fixture's prefix (--name) so that those
checks see their cgroups and processes."""
import json
import os
import re
import signal
import socket
import stat
import subprocess
import threading
import time

import pytest

from conftest import SEERUN, running_pid, signal_pending, state_entries, wait_for

SHELL_WRITE_PROBE = r"""
for d in "$@"; do
  if ( : > "$d/probe" ) 2>/dev/null; then echo "writable $d"; else echo "refused $d"; fi
done
"""


def sigterm_taken(p):
    """Sends SIGTERM to a sandbox's seerun and waits until seerun has taken it: a second one
    sent before would merge into the first (standard signals are not queued)."""
    p.send_signal(signal.SIGTERM)
    wait_for(lambda: p.poll() is not None or not signal_pending(p.pid, signal.SIGTERM),
             what="seerun to take the SIGTERM")


def stop(p):
    """Asks a sandbox's seerun to stop twice: the first SIGTERM goes to the command, the
    second kills the sandbox."""
    for _ in range(2):
        if p.poll() is None:
            sigterm_taken(p)
    p.wait(timeout=30)


# ---- what runs inside ----------------------------------------------------------------------


def test_host_python_and_sh_run_inside(sandbox):
    """The built-in root filesystem is the host's /usr: its python3 and sh run as they do on
    the host, with a generated /etc that knows the sandbox user."""
    r = sandbox.ok("python3", "-c", "import sys, os, pwd; print(sys.version_info.major, "
                   "pwd.getpwuid(os.getuid()).pw_name, os.getcwd())")
    assert r.stdout.split() == ["3", "sandbox", "/tmp"]
    r = sandbox.ok("sh", "-c", "echo $0 $HOME; hostname; /bin/sh -c 'echo via /bin'")
    assert r.stdout.split() == ["sh", "/home/sandbox", "sandbox", "via", "/bin"]


def test_exit_status_and_output_stream_through(sandbox):
    """stdout and stderr are the command's, and so is the exit status."""
    r = sandbox.run("sh", "-c", "echo out; echo err >&2; exit 7")
    assert r.returncode == 7
    assert r.stdout == "out\n"
    assert "err\n" in r.stderr
    assert r.result["status"] == 7 and r.result["exitCode"] == 7 and r.result["signal"] is None
    assert not r.result["timedOut"] and not r.result["oomKilled"]


def test_the_result_document_says_what_ran(sandbox, hardened):
    """The result document (--json=FILE here; never on stdout, see test_sandbox_agent.py)."""
    r = sandbox.ok("sh", "-c", "echo hello")
    assert r.stdout == "hello\n"
    doc = r.result
    assert doc["id"] == hardened.id("sb") and doc["profile"] == "default"
    assert doc["command"] == ["sh", "-c", "echo hello"]
    assert doc["wallSeconds"] > 0 and doc["cpuSeconds"]["total"] >= 0
    assert doc["peakMemoryBytes"] > 0
    # The policy's decisions: the user namespace on a registry range, seccomp, the limits.
    fields = {d["field"]: d for d in doc["decisions"]}
    assert fields["linux.namespaces.user"]["kind"] == "enforced"
    assert fields["linux.seccomp"]["kind"] == "enforced"
    assert fields["linux.resources.memory.limit"]["applied"] == str(doc["limits"]["memoryBytes"])


def test_env_and_workdir(sandbox, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "input.txt").write_text("payload\n")
    r = sandbox.ok("sh", "-c", 'echo "$GREETING"; pwd; cat input.txt',
                   opts=("--env", "GREETING=hi there", "--ro", f"{data}:/work",
                         "--workdir", "/work"))
    assert r.stdout.splitlines() == ["hi there", "/work", "payload"]


# ---- isolation -----------------------------------------------------------------------------


def test_host_secrets_and_homes_are_unreachable(sandbox):
    """Only a generated /etc: no /etc/shadow, no SSH keys, no host users; no /home, /root or
    /var of the host."""
    r = sandbox.ok("sh", "-c", "ls -A /etc; echo ---; ls -A /; echo ---; ls -A /var; "
                   "echo ---; cat /etc/passwd; echo ---; ls -A /home /etc/ssl")
    etc, top, var, passwd, home = r.stdout.split("---\n")
    assert set(etc.split()) <= {"passwd", "group", "hosts", "hostname", "resolv.conf",
                                "nsswitch.conf", "mtab", "alternatives", "ssl", "pki"}
    # /home holds the sandbox user's own HOME only; /etc/ssl the CA certificates only.
    assert home.split() == ["/etc/ssl:", "certs", "/home:", "sandbox"], home
    assert not {"root", "srv", "mnt", "opt", "boot"} & set(top.split())
    assert var.split() == ["tmp"]
    users = [line.split(":")[0] for line in passwd.splitlines()]
    assert users == ["root", "sandbox", "nobody"]
    for path in ("/etc/shadow", "/etc/gshadow", "/etc/ssh", "/root/.ssh", "/home/root",
                 "/etc/sudoers", "/etc/ssl/private"):
        r = sandbox.run("cat", path)
        assert r.returncode == 1 and "No such file or directory" in r.stderr, (path, r.stderr)
    # /proc shows the sandbox's own processes only: pid 1 is the command.
    r = sandbox.ok("sh", "-c", "ls /proc | grep -E '^[0-9]+$' | wc -l; cat /proc/1/cmdline")
    count, cmdline = r.stdout.split("\n", 1)
    assert int(count) <= 5 and cmdline.startswith("sh")


@pytest.fixture
def host_listener():
    """A TCP server on every host address, accepting in a thread."""
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("0.0.0.0", 0))
    srv.listen(8)
    srv.settimeout(0.2)
    accepted = []
    stop = threading.Event()

    def loop():
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
                accepted.append(conn)
            except OSError:
                pass

    t = threading.Thread(target=loop, daemon=True)
    t.start()
    yield srv.getsockname()[1], accepted
    stop.set()
    t.join()
    srv.close()
    for c in accepted:
        c.close()


def host_addresses():
    out = subprocess.run(["ip", "-o", "-4", "addr", "show"], capture_output=True, text=True,
                         check=True)
    return [m.group(1) for m in re.finditer(r"inet (\d+\.\d+\.\d+\.\d+)/", out.stdout)]


def test_host_network_is_unreachable(sandbox, host_listener):
    """Loopback only: the sandbox's 127.0.0.1 is its own, and no host address is routable."""
    port, accepted = host_listener
    probe = ("import socket, sys\n"
             "print(sorted(n for _, n in socket.if_nameindex()))\n"
             "for a in sys.argv[1:]:\n"
             "    s = socket.socket(); s.settimeout(2)\n"
             "    try:\n"
             f"        s.connect((a, {port})); print(a, 'connected')\n"
             "    except OSError as e:\n"
             "        print(a, 'refused', e.errno)\n")
    addrs = host_addresses()
    assert "127.0.0.1" in addrs, addrs
    r = sandbox.ok("python3", "-c", probe, *addrs)
    lines = r.stdout.splitlines()
    assert lines[0] == "['lo']"
    assert len(lines) == 1 + len(addrs), r.stdout
    assert all("refused" in line for line in lines[1:]), r.stdout
    assert accepted == []


def test_network_is_only_where_the_policy_allows_it(sandbox):
    """--network=host asks for the host's network: the default profile refuses it (allowHost)."""
    r = sandbox.run("true", opts=("--network=host",))
    assert r.returncode == 125
    assert "network.allowHost is false" in r.stderr
    refused = [d for d in r.result["decisions"] if d["kind"] == "refused"]
    assert refused and refused[0]["field"] == "linux.namespaces.network"


def test_network_where_the_profile_allows_the_hosts(hardened, tmp_path):
    """A profile with network.allowHost (none of the shipped ones) lets --network=host through:
    the host's interfaces, and the host's resolvers in the generated resolv.conf."""
    policy = json.loads(open(hardened.policy).read())
    policy["profiles"]["sandbox-net"] = {"base": "default", "network": {"allowHost": True}}
    path = tmp_path / "policy-net.json"
    path.write_text(json.dumps(policy))
    os.chmod(path, 0o644)
    argv = [SEERUN, "--root", hardened.root, "--policy", str(path), "sandbox", "--profile",
            "sandbox-net", "--name", hardened.id("net"), "--network=host", "--", "python3", "-c",
            "import socket; print(len(socket.if_nameindex()))"]
    r = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert int(r.stdout) == len(socket.if_nameindex())


def test_the_process_is_not_host_root(sandbox):
    """uid 1000 without any capability, inside a user namespace whose root is an
    unprivileged host id; seccomp and no_new_privs on."""
    r = sandbox.ok("sh", "-c", "id -u; id -g; cat /proc/self/uid_map; "
                   "grep -E '^(CapEff|CapPrm|CapBnd|NoNewPrivs|Seccomp):' /proc/self/status")
    lines = r.stdout.splitlines()
    assert lines[0:2] == ["1000", "1000"]
    inside, outside, size = map(int, lines[2].split())
    assert inside == 0 and outside >= 65536 and size <= 65536
    status = dict(line.split(":\t") for line in lines[3:])
    assert status["CapEff"] == status["CapPrm"] == status["CapBnd"] == "0000000000000000"
    assert status["NoNewPrivs"] == "1" and status["Seccomp"] == "2"


def test_host_sees_an_unprivileged_process(sandbox, hardened):
    """From the host, the sandboxed process runs as a high, unprivileged uid."""
    cid = hardened.id("sb")
    p = subprocess.Popen(sandbox.argv("--", "sleep", "30"), stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    try:
        pid = wait_for(lambda: running_pid(hardened, cid), what="the sandbox to run")
        with open(f"/proc/{pid}/status") as f:
            uids = next(line for line in f if line.startswith("Uid:")).split()[1:]
        assert all(int(u) >= 65536 for u in uids), uids
    finally:
        stop(p)


def test_nothing_is_writable_but_scratch_and_out(sandbox):
    dirs = ["/", "/etc", "/usr", "/usr/bin", "/bin", "/var", "/run", "/dev", "/proc",
            "/proc/sys/kernel", "/etc/alternatives", "/etc/ssl/certs", "/usr/local", "/tmp",
            "/var/tmp", "/dev/shm", "/out", "/home/sandbox"]
    r = sandbox.ok("sh", "-c", SHELL_WRITE_PROBE, "probe", *dirs)
    result = dict(line.split(" ", 1)[::-1] for line in r.stdout.splitlines())
    writable = {d for d, v in result.items() if v == "writable"}
    assert writable == {"/tmp", "/var/tmp", "/dev/shm", "/out", "/home/sandbox"}, r.stdout


def test_read_only_binds(sandbox, tmp_path):
    data = tmp_path / "ro"
    data.mkdir()
    (data / "f").write_text("x\n")
    r = sandbox.run("sh", "-c", "cat /data/f; echo y > /data/f || echo refused; "
                    "touch /data/new || echo refused", opts=("--ro", f"{data}:/data"))
    assert r.returncode == 0
    assert r.stdout.splitlines() == ["x", "refused", "refused"]
    assert (data / "f").read_text() == "x\n" and not (data / "new").exists()


@pytest.mark.parametrize("source", ["/etc", "/", "/var/lib", "/proc"])
def test_binds_of_denied_host_paths_are_refused(sandbox, source):
    """A source equal to or above a path the policy denies (/etc, /var/lib/seerun, ...) never
    reaches the container: the policy refuses it, and nothing runs."""
    r = sandbox.run("true", opts=("--ro", f"{source}:/host"))
    assert r.returncode == 125
    # In the words the user wrote, with the config field the policy refused.
    assert re.search(re.escape(f"--ro {source}:/host (mounts[") + r"\d+\]\.source\): " +
                     re.escape(f'"{source}"'), r.stderr), r.stderr
    why = "CVE-2024-21626" if source == "/proc" else "is or contains the denied host path"
    assert why in r.stderr, r.stderr


def test_a_sandbox_needs_an_enforcing_profile(hardened):
    """The permissive profile enforces nothing: a sandbox refuses to run under it."""
    argv = [SEERUN, "--root", hardened.root, "--policy", hardened.policy, "sandbox",
            "--profile", "permissive", "--", "true"]
    r = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert r.returncode == 125
    assert "does not enforce" in r.stderr


# ---- limits --------------------------------------------------------------------------------


def test_timeout_kills_everything_and_says_so(sandbox):
    started = time.monotonic()
    r = sandbox.run("sh", "-c", "sleep 60 & sleep 61 & exec sleep 62", opts=("--timeout", "1"))
    elapsed = time.monotonic() - started
    assert r.returncode == 124  # as timeout(1)
    assert r.stderr == "seerun sandbox: killed: --timeout 1 s reached\n"
    assert elapsed < 15
    doc = r.result
    assert doc["timedOut"] and doc["signal"] == "SIGKILL" and doc["exitCode"] is None
    assert 0.9 < doc["wallSeconds"] < 10
    assert doc["limits"]["timeoutSeconds"] == 1.0
    # The fixture's teardown finds no process of the sandbox's cgroup left.


def test_a_memory_hog_is_oom_killed_within_the_limit(sandbox):
    hog = "a = []\nwhile True:\n    a.append(bytearray(1 << 20))\n"
    r = sandbox.run("python3", "-c", hog, opts=("--memory", "64m"))
    assert r.returncode == 128 + signal.SIGKILL
    doc = r.result
    assert doc["oomKilled"] and doc["oomKills"] >= 1
    assert doc["limits"]["memoryBytes"] == 64 << 20
    assert 0 < doc["peakMemoryBytes"] <= 64 << 20
    assert not doc["timedOut"]


def test_pids_limit(sandbox):
    forks = ("import os, time\nn = 0\nfor i in range(64):\n    try:\n        pid = os.fork()\n"
             "    except OSError:\n        break\n    if pid == 0:\n        time.sleep(2)\n"
             "        os._exit(0)\n    n += 1\nprint(n)\n")
    r = sandbox.ok("python3", "-c", forks, opts=("--pids", "16"))
    assert int(r.stdout) < 16
    assert r.result["limits"]["pids"] == 16


def test_tmp_size_is_bounded_by_the_profile(sandbox):
    r = sandbox.ok("df", "-k", "/tmp", opts=("--tmp-size", "200m"))
    assert r.stdout.splitlines()[1].split()[1] == str(200 * 1024)
    r = sandbox.run("true", opts=("--tmp-size", "2g"))
    assert r.returncode == 125 and "maxSize" in r.stderr


# ---- outputs -------------------------------------------------------------------------------


def tree(path):
    """{relative path: ("dir"|"file"|"other", size)} without following anything."""
    found = {}
    for base, dirs, files in os.walk(path, followlinks=False):
        for name in dirs + files:
            full = os.path.join(base, name)
            st = os.lstat(full)
            kind = "dir" if stat.S_ISDIR(st.st_mode) else "file" if stat.S_ISREG(
                st.st_mode) else "other"
            found[os.path.relpath(full, path)] = (kind, st.st_size)
    return found


def test_out_is_collected_safely(sandbox, tmp_path):
    """Regular files and directories are copied; a symlink to /etc/passwd, a fifo, a hard
    link and a 10 GB sparse file are not, and each refusal says why."""
    out = tmp_path / "out"
    script = ("set -e; echo data > /out/file; mkdir -p /out/dir/sub; echo nested > "
              "/out/dir/sub/n; chmod 4755 /out/file; ln -s /etc/passwd /out/passwd; "
              "ln -s ../../.. /out/dir/up; mkfifo /out/fifo; echo h > /out/h1; "
              "ln /out/h1 /out/h2; truncate -s 10G /out/sparse")
    r = sandbox.ok("sh", "-c", script, opts=("--out", str(out)))
    assert tree(out) == {"file": ("file", 5), "dir": ("dir", tree(out)["dir"][1]),
                         "dir/sub": ("dir", tree(out)["dir/sub"][1]),
                         "dir/sub/n": ("file", 7)}
    assert (out / "file").read_text() == "data\n"
    # No set-id bit survives the copy; everything belongs to the caller (root here).
    assert stat.S_IMODE(os.lstat(out / "file").st_mode) == 0o755
    o = r.result["output"]
    assert o["files"] == 2 and o["directories"] == 2 and o["bytes"] == 12
    refused = {e["path"]: (e["type"], e["reason"]) for e in o["refused"]}
    assert refused["passwd"][0] == "symlink" and refused["dir/up"][0] == "symlink"
    assert refused["fifo"][0] == "fifo"
    assert refused["h1"][0] == refused["h2"][0] == "hardlink"
    assert refused["sparse"][0] == "file" and "byte bound" in refused["sparse"][1]
    assert not o["complete"]


def test_out_bounds_on_bytes_and_files(sandbox, tmp_path):
    """The bounds hold whatever /out holds: sparse files count by their size, and the walk
    stops at the file bound."""
    out = tmp_path / "bytes"
    r = sandbox.ok("sh", "-c", "for i in 1 2 3 4 5; do truncate -s 300K /out/f$i; done",
                   opts=("--out", str(out), "--out-max-bytes", "1m"))
    o = r.result["output"]
    assert o["files"] == 3 and o["bytes"] == 3 * 300 * 1024
    assert sum(size for _, size in tree(out).values()) <= 1 << 20
    assert len(tree(out)) == 3
    assert [e["reason"] for e in o["refused"]].count(
        "larger than what is left of the byte bound: not collected") == 2
    out = tmp_path / "files"
    r = sandbox.ok("sh", "-c", "for i in 1 2 3 4 5; do echo $i > /out/f$i; done",
                   opts=("--out", str(out), "--out-max-files", "3"))
    o = r.result["output"]
    assert o["files"] == 3 and len(tree(out)) == 3 and not o["complete"]
    assert len(o["refused"]) == 1 and "file count bound" in o["refused"][0]["reason"]


def test_out_with_100000_files_is_collected_within_the_file_bound(sandbox, tmp_path):
    out = tmp_path / "out"
    make = ("import os\nos.mkdir('/out/many')\nfor i in range(100000):\n"
            "    open(f'/out/many/{i}', 'w').close()\n")
    r = sandbox.ok("python3", "-c", make, opts=("--out", str(out)), timeout=300)
    o = r.result["output"]
    assert o["files"] + o["directories"] == 10000
    assert len(os.listdir(out / "many")) == 9999
    assert not o["complete"]
    assert any("file count bound" in e["reason"] for e in o["refused"])


def test_out_never_writes_outside_hostdir(sandbox, tmp_path):
    """What HOSTDIR already holds is never followed: a symlink planted in it is refused up
    front (HOSTDIR is not empty), and with --out-overwrite replaced by name, never written
    through; a directory in the way is refused."""
    out = tmp_path / "out"
    out.mkdir()
    victim = tmp_path / "victim"
    victim.write_text("untouched")
    os.symlink(victim, out / "x")
    (out / "d").mkdir()
    script = "echo evil > /out/x; echo fine > /out/y; echo no > /out/d"
    r = sandbox.run("sh", "-c", script, opts=("--out", str(out)))
    assert r.returncode == 125 and "not empty" in r.stderr
    assert victim.read_text() == "untouched" and sorted(os.listdir(out)) == ["d", "x"]
    r = sandbox.run("sh", "-c", script, opts=("--out", str(out), "--out-overwrite"))
    assert r.returncode == 0, r.stderr
    assert victim.read_text() == "untouched"
    assert not os.path.islink(out / "x") and (out / "x").read_text() == "evil\n"
    assert (out / "y").read_text() == "fine\n"
    refused = {e["path"]: e["reason"] for e in r.result["output"]["refused"]}
    assert list(refused) == ["d"] and "exists" in refused["d"]
    assert r.result["output"]["complete"] is False
    # HOSTDIR itself must not be a symlink either.
    link = tmp_path / "outlink"
    os.symlink(out, link)
    r = sandbox.run("true", opts=("--out", str(link)))
    assert r.returncode == 125 and "symlink" in r.stderr


def test_audit_log_records_the_result(sandbox, hardened):
    sandbox.run("sh", "-c", "exit 3")
    events = [e for e in hardened.audit() if e.get("id") == hardened.id("sb")]
    kinds = [e["event"] for e in events]
    assert "decision" in kinds and "create" in kinds and "start" in kinds
    result = next(e for e in events if e["event"] == "sandbox-result")
    # Typed, as in the result document.
    assert result["status"] == 3 and result["exitCode"] == 3
    assert result["timedOut"] is False and result["oomKilled"] is False


# ---- a container like the others; nothing left behind ---------------------------------------


def test_a_running_sandbox_is_listed_and_deletable(sandbox, hardened):
    cid = hardened.id("sb")
    p = subprocess.Popen(sandbox.argv("--cpus", "0.5", "--", "sleep", "30"),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: running_pid(hardened, cid), what="the sandbox to run")
        assert cid in hardened.list_ids()
        quota = [os.path.join(b, "cpu.cfs_quota_us") for b, _, _ in
                 os.walk("/sys/fs/cgroup/cpu") if os.path.basename(b).startswith(cid)]
        if quota:  # cgroup v1 (the v2 file is cpu.max)
            assert open(quota[0]).read().strip() == "50000"
        # delete --force from outside: the sandbox's seerun reports the kill and exits.
        hardened.cmd("delete", "--force", cid, check=True)
        out, err = p.communicate(timeout=30)
        assert p.returncode == 128 + signal.SIGKILL, err
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert cid not in hardened.list_ids()


def kill_running_sandbox(sandbox, hardened, name, settled=False):
    """settled: killed only once the sandbox's workspace is gone (what is left then is an
    ordinary container); otherwise a leftover workspace is the next sandbox's or gc's."""
    cid = hardened.id(name)
    p = subprocess.Popen(sandbox.argv("--", "sleep", "60", name=name),
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    pid = wait_for(lambda: running_pid(hardened, cid), what="the sandbox to run")
    if settled:
        wait_for(lambda: not [e for e in state_entries(hardened) if e.startswith(".sandbox")],
                 what="the sandbox's workspace to be removed once its container exists")
    p.kill()
    p.wait()
    return cid, pid


def test_killed_seerun_is_cleaned_by_delete_force(sandbox, hardened):
    # A workspace left by a runtime killed while removing it is the next sandbox's or gc's
    # (test_seerun_killed_at_any_moment_leaves_nothing_after_cleanup): delete --force removes
    # the container.
    cid, pid = kill_running_sandbox(sandbox, hardened, "killed", settled=True)
    # The sandbox is an ordinary container: still listed, but its processes died with seerun.
    assert cid in hardened.list_ids()
    wait_for(lambda: not os.path.exists(f"/proc/{pid}") or
             open(f"/proc/{pid}/stat").read().split(") ")[1][0] == "Z",
             timeout=1.0, what="the sandbox's process to die with seerun")
    hardened.cmd("delete", "--force", cid, check=True)
    assert hardened.list_ids() == []
    assert state_entries(hardened) == []
    # The fixture's teardown checks cgroups, mounts and processes.


def test_killed_seerun_is_cleaned_by_the_next_sandbox(sandbox, hardened):
    cid, pid = kill_running_sandbox(sandbox, hardened, "killed")
    sandbox.ok("true", name="next")
    assert hardened.list_ids() == []
    assert state_entries(hardened) == []
    wait_for(lambda: not os.path.exists(f"/proc/{pid}") or
             open(f"/proc/{pid}/stat").read().split(") ")[1][0] == "Z",
             what="the orphan's process to die")
    delete = [e for e in hardened.audit() if e.get("id") == cid and e["event"] == "delete"]
    assert delete and delete[-1]["reason"] == "its sandbox runtime is gone"


def test_seerun_killed_at_any_moment_leaves_nothing_after_cleanup(sandbox, hardened):
    """seerun killed at increasing delays, through setup, create and the run: whatever it
    left, the next sandbox removes (and delete --force removes a container it left)."""
    for delay_ms in (0, 2, 5, 10, 15, 20, 30, 45, 60, 90):
        p = subprocess.Popen(sandbox.argv("--", "sleep", "30", name=f"k{delay_ms}"),
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(delay_ms / 1000)
        p.kill()
        p.wait()
    sandbox.ok("true", name="sweeper")
    assert hardened.list_ids() == []
    assert state_entries(hardened) == []


def test_a_stale_workspace_is_removed(sandbox, hardened):
    """What a seerun killed before its container existed leaves (its workspace, named for
    its dead process) goes with the next sandbox; a live sandbox's is left alone."""
    os.makedirs(hardened.root, mode=0o700, exist_ok=True)
    dead = "999999999-1"
    for top in (f".sandbox.{hardened.id('gone')}", f".sandbox-new.{dead}"):
        for sub in ("rootfs", "out"):
            os.makedirs(os.path.join(hardened.root, top, dead, sub))
    sandbox.ok("true", name="next")
    assert state_entries(hardened) == []


def test_default_ids_are_reused_slots(hardened):
    """Without --name, a sandbox takes the first free sandbox-N: the same id (and user
    namespace range) run after run, a new one only for sandboxes running at once."""
    result = hardened.root + ".result.json"
    r = hardened.cmd("sandbox", f"--json={result}", "--", "true")
    assert json.loads(open(result).read())["id"] == "sandbox-0"
    p = subprocess.Popen([SEERUN, *hardened.global_args, "sandbox", "--", "sleep", "30"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: running_pid(hardened, "sandbox-0"), what="sandbox-0 to run")
        r = hardened.cmd("sandbox", f"--json={result}", "--", "true")
        assert json.loads(open(result).read())["id"] == "sandbox-1"
    finally:
        stop(p)
        os.unlink(result)
    assert state_entries(hardened) == []


def test_given_rootfs_is_used_read_only(sandbox, busybox_rootfs):
    r = sandbox.run("/bin/sh", "-c", "ls /bin/busybox && test ! -e /usr/bin/python3 && "
                    "touch /etc/x", opts=("--rootfs", str(busybox_rootfs)))
    assert r.returncode != 0
    assert "/bin/busybox" in r.stdout and "Read-only" in r.stderr


def test_signals_are_forwarded(sandbox, hardened):
    """SIGTERM to seerun reaches the command (and ends the sandbox: seerun exits 143); a second
    one kills the sandbox."""
    handler = ("import signal, sys, time\n"
               "signal.signal(signal.SIGTERM, lambda *a: sys.exit(3))\n"
               "print('ready', flush=True)\ntime.sleep(60)\n")
    cid = hardened.id("sb")
    p = subprocess.Popen(sandbox.argv("--", "python3", "-c", handler),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert p.stdout.readline() == "ready\n"
    p.send_signal(signal.SIGTERM)
    p.communicate(timeout=30)
    assert p.returncode == 128 + signal.SIGTERM
    p = subprocess.Popen(sandbox.argv("--", "sleep", "60"), stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    wait_for(lambda: running_pid(hardened, cid), what="the sandbox to run")
    sigterm_taken(p)  # sleep, pid 1 of its namespace, ignores it
    assert p.poll() is None, "seerun ended on the first SIGTERM"
    p.send_signal(signal.SIGTERM)
    p.wait(timeout=30)
    assert p.returncode == 128 + signal.SIGTERM
