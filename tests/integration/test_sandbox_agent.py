"""seerun sandbox as a program drives it (issue 14): the code never holds the caller's
descriptors, the result document never shares a channel with the code's output, the sandbox
dies with its seerun (and its state goes with the next sandbox or gc), the caller's SIGTERM and
SIGINT end it with a documented status, a non-empty --out is refused, and the exit statuses and
messages are ones a caller can act on."""

import json
import os
import shutil
import signal
import subprocess
import time

import pytest

from conftest import SEERUN, Sandbox, alive, running_pid, state_entries, wait_for


def pid_ns(pid):
    try:
        return os.readlink(f"/proc/{pid}/ns/pid")
    except OSError:
        return None


def processes_in_ns(ns):
    pids = []
    for d in os.listdir("/proc"):
        if d.isdigit() and pid_ns(int(d)) == ns and alive(int(d)):
            pids.append(int(d))
    return pids


def children(pid):
    out = []
    try:
        for t in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{t}/children") as f:
                out += [int(x) for x in f.read().split()]
    except OSError:
        pass
    return out


# ---- 1. no shared descriptors ----------------------------------------------------------------


def test_the_commands_standard_streams_are_pipes(sandbox, tmp_path):
    """Whatever the caller's stdin, stdout and stderr are (files here), the command's are
    pipes: it never learns the host path behind them."""
    inp = tmp_path / "caller.in"
    inp.write_text("input line\n")
    with open(inp) as i:
        # cmd() gives seerun files for stdout and stderr.
        r = sandbox.seerun.cmd("sandbox", "--name", sandbox.seerun.id("sb"), "--", "sh", "-c",
                               "readlink /proc/self/fd/0 /proc/self/fd/1 /proc/self/fd/2 >&2; "
                               "cat; echo done", stdin=i, timeout=60)
        assert r.returncode == 0, r.stderr
    links = r.stderr.split()
    assert len(links) == 3 and all(l.startswith("pipe:") for l in links), r.stderr
    assert str(tmp_path) not in r.stderr
    # The caller's stdin reached the command through the relay, and its output the caller.
    assert r.stdout == "input line\ndone\n"


def test_with_tty_the_streams_are_a_pty_of_the_sandbox(sandbox, tmp_path):
    """--tty: a pty from the sandbox's own devpts (its controlling terminal), relayed both
    ways; still none of the caller's descriptors."""
    inp = tmp_path / "caller.in"
    inp.write_text("typed\n")
    with open(inp) as i:
        r = sandbox.seerun.cmd("sandbox", "--name", sandbox.seerun.id("sb"), "--tty", "--", "sh",
                               "-c", "read x; echo got-$x; tty; readlink /proc/self/fd/1 "
                               "/proc/self/fd/2; test -t 0 && echo stdin-is-a-tty",
                               stdin=i, timeout=60)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.replace("\r\n", "\n").splitlines()
    assert "got-typed" in lines and "stdin-is-a-tty" in lines, lines
    ptys = [l for l in lines if l.startswith("/dev/")]
    assert ptys and len(set(ptys)) == 1 and ptys[0].startswith("/dev/pts/"), lines
    assert str(tmp_path) not in r.stdout


def test_the_callers_log_file_is_untouched_by_the_code(hardened, tmp_path):
    """The attack: the code truncates its stdout, clears O_APPEND and rewrites from offset 0.
    With the caller's file as its fd 1 that destroyed the caller's log; through a pipe it only
    appends what the code printed."""
    log = tmp_path / "caller.log"
    log.write_text("caller's earlier line\n")
    attack = ("import fcntl, os, sys\n"
              "for name, f in (('truncate', lambda: os.ftruncate(1, 0)),\n"
              "                ('noappend', lambda: fcntl.fcntl(1, fcntl.F_SETFL, 0)),\n"
              "                ('seek', lambda: os.lseek(1, 0, os.SEEK_SET))):\n"
              "    try:\n"
              "        f(); print(name, 'worked', file=sys.stderr)\n"
              "    except OSError as e:\n"
              "        print(name, 'refused', e.errno, file=sys.stderr)\n"
              "os.write(1, b'FORGED\\n')\n")
    with open(log, "a") as out:
        p = subprocess.run([SEERUN, *hardened.global_args, "sandbox", "--name", hardened.id("sb"),
                            "--", "python3", "-c", attack], stdout=out, stderr=subprocess.PIPE,
                           stdin=subprocess.DEVNULL, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert "truncate refused" in p.stderr and "seek refused" in p.stderr, p.stderr
    assert log.read_text() == "caller's earlier line\nFORGED\n"


def test_output_beyond_the_bound_is_read_dropped_and_counted(sandbox):
    """--output-max-bytes per stream: the caller gets the first N bytes, the command is never
    blocked on the rest (seerun keeps reading), and the result says how much was dropped."""
    script = ("import sys\nsys.stdout.write('o' * 300000)\nsys.stdout.flush()\n"
              "sys.stderr.write('e' * 5000)\nprint('finished', file=sys.stderr)\n")
    r = sandbox.run("python3", "-c", script, opts=("--output-max-bytes", "1k"), timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "o" * 1024
    assert r.stderr == "e" * 1024
    doc = r.result
    assert doc["stdout"] == {"bytes": 1024, "droppedBytes": 300000 - 1024}
    assert doc["stderr"] == {"bytes": 1024, "droppedBytes": 5000 + len("finished\n") - 1024}
    assert doc["limits"]["outputMaxBytes"] == 1024


def test_output_is_bounded_by_default(sandbox):
    r = sandbox.run("true")
    assert r.result["limits"]["outputMaxBytes"] == 64 << 20
    assert r.result["stdout"] == {"bytes": 0, "droppedBytes": 0}


# ---- 2. the result document has its own channel ---------------------------------------------


@pytest.mark.parametrize("arg", ["--json", "--json=-"])
def test_json_on_stdout_is_refused(hardened, arg):
    """On stdout the code could print a forged result first, or break the parse."""
    r = hardened.cmd("sandbox", "--name", hardened.id("sb"), arg, "--", "sh", "-c",
                     "echo '{\"status\": 0}'")
    assert r.returncode == 125
    assert "use --json=FILE or --json-fd=N" in r.stderr
    assert r.stdout == ""  # nothing ran
    assert state_entries(hardened) == []


def test_json_fd_gets_the_result_and_stdout_only_the_output(hardened, tmp_path):
    rfd, wfd = os.pipe()
    try:
        p = subprocess.run([SEERUN, *hardened.global_args, "sandbox", "--name",
                            hardened.id("sb"), f"--json-fd={wfd}", "--", "sh", "-c",
                            "echo '{\"status\": 0}'; ls /proc/self/fd; exit 4"],
                           pass_fds=(wfd,), capture_output=True, text=True, timeout=60,
                           stdin=subprocess.DEVNULL)
        os.close(wfd)
        wfd = -1
        doc = json.loads(os.read(rfd, 1 << 20))
    finally:
        os.close(rfd)
        if wfd >= 0:
            os.close(wfd)
    assert p.returncode == 4
    lines = p.stdout.splitlines()
    assert lines[0] == '{"status": 0}'
    # The command holds 0, 1, 2 (and ls its directory's), never the result's descriptor.
    assert set(lines[1:]) <= {"0", "1", "2", "3"}, lines
    assert doc["status"] == 4 and doc["exitCode"] == 4


@pytest.mark.parametrize("fd", ["1", "2", "0"])
def test_json_fd_of_a_standard_stream_is_refused(hardened, fd):
    r = hardened.cmd("sandbox", f"--json-fd={fd}", "--", "true")
    assert r.returncode == 125 and "--json-fd" in r.stderr


# ---- 3. the sandbox dies with its seerun --------------------------------------------------


CLEAR_PDEATHSIG = ("import ctypes\n"
                   "libc = ctypes.CDLL(None)\n"
                   "s = ctypes.c_int(-1); libc.prctl(2, ctypes.byref(s))\n"  # PR_GET_PDEATHSIG
                   "print('pdeathsig', s.value, flush=True)\n"
                   "libc.prctl(1, 0, 0, 0, 0)\n"  # PR_SET_PDEATHSIG 0: undone by the code
                   )
# "ready" once every process is in place: the forked child in its own session (it says so
# through a pipe), the setsid'd sleep too (polled: a loop's interval, not a wait's length).
TREE = ("import os, subprocess, time\n"
        "subprocess.Popen(['sleep', '300'])\n"
        "s = subprocess.Popen(['setsid', 'sleep', '301'])\n"
        "r, w = os.pipe()\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    os.write(w, b'x')\n"
        "    time.sleep(302)\n"
        "    os._exit(0)\n"
        "os.read(r, 1)\n"
        "while os.getsid(s.pid) != s.pid:\n"
        "    time.sleep(0.01)\n"
        "print('ready', flush=True)\n"
        "time.sleep(303)\n")


@pytest.mark.parametrize("how", ["kill", "kill-pdeathsig-cleared", "killpg"])
def test_a_killed_seerun_leaves_no_process(hardened, tmp_path, how):
    """SIGKILL of seerun (what a driver's timeout does): within a second no process of the
    sandbox is left, be it the command, a child in a session of its own, or a command that
    cleared its parent-death signal; also when the driver kills seerun's whole process group."""
    cid = hardened.id("sb")
    script = (CLEAR_PDEATHSIG if how == "kill-pdeathsig-cleared" else "") + TREE
    out = tmp_path / "out.txt"
    with open(out, "w") as f:
        p = subprocess.Popen([SEERUN, *hardened.global_args, "sandbox", "--name", cid, "--",
                              "python3", "-c", script], stdout=f, stderr=subprocess.STDOUT,
                             stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        wait_for(lambda: "ready" in out.read_text(), timeout=30, what="the command to start")
        init = running_pid(hardened, cid)
        ns = pid_ns(init)
        inside = processes_in_ns(ns)
        assert len(inside) >= 4, inside  # python, two sleeps, the forked child
        if how == "kill-pdeathsig-cleared":
            assert "pdeathsig 9" in out.read_text()
        helpers = children(p.pid)
        if how == "killpg":
            os.killpg(p.pid, signal.SIGKILL)
        else:
            p.kill()
        p.wait()
        wait_for(lambda: not processes_in_ns(ns) and not any(alive(h) for h in helpers),
                 timeout=1.0, what="every process of the sandbox to be gone")
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    # What is left is state only, which `seerun gc` removes (and the next sandbox: see
    # test_sandbox.py::test_killed_seerun_is_cleaned_by_the_next_sandbox).
    assert cid in hardened.list_ids()
    r = hardened.cmd("gc", check=True)
    assert hardened.list_ids() == [] and state_entries(hardened) == [], r.stdout
    delete = [e for e in hardened.audit() if e.get("id") == cid and e["event"] == "delete"]
    assert delete and delete[-1]["reason"] == "its sandbox runtime is gone"


def test_a_killed_seerun_is_cleaned_by_the_next_sandbox(sandbox, hardened, tmp_path):
    cid = hardened.id("first")
    p = subprocess.Popen(sandbox.argv("--", "sleep", "300", name="first"),
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         stdin=subprocess.DEVNULL)
    try:
        init = wait_for(lambda: running_pid(hardened, cid), what="the sandbox to run")
        p.kill()
        p.wait()
        wait_for(lambda: not alive(init), timeout=1.0, what="the command to die with seerun")
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    r = sandbox.run("true", name="next")
    assert r.returncode == 0, r.stderr
    assert hardened.list_ids() == [] and state_entries(hardened) == []


def start_trapping(sandbox, tmp_path, opts=(), trap="echo got-$1 > /out/marker; exit 0"):
    out = tmp_path / "hostout"
    out.mkdir()
    ready = tmp_path / "ready.txt"
    script = (f"on() {{ {trap}; }}; trap 'on TERM' TERM; trap 'on INT' INT; "
              "echo ready; while :; do sleep 0.05; done")
    result = tmp_path / "result.json"
    f = open(ready, "w")
    p = subprocess.Popen(sandbox.argv(f"--json={result}", "--out", str(out), *opts, "--", "sh",
                                      "-c", script),
                         stdout=f, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
    f.close()
    wait_for(lambda: "ready" in ready.read_text(), timeout=30, what="the command to start")
    return p, out, result


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_one_signal_ends_the_sandbox(sandbox, tmp_path, sig):
    """A first SIGTERM or SIGINT ends the sandbox: the command gets SIGTERM (its trap writes
    the marker and exits), seerun exits 128+signal and the result says signalledByCaller."""
    p, out, result = start_trapping(sandbox, tmp_path)
    try:
        p.send_signal(sig)
        _, err = p.communicate(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 128 + sig, err
    assert (out / "marker").read_text() == "got-TERM\n"
    doc = json.loads(result.read_text())
    assert doc["signalledByCaller"] is True
    assert doc["callerSignal"] == signal.Signals(sig).name
    assert doc["exitCode"] == 0 and doc["interrupted"] is False and doc["status"] == 128 + sig
    assert f"seerun got {signal.Signals(sig).name}" in err


def test_a_command_ignoring_sigterm_is_killed_after_the_grace_period(sandbox, hardened,
                                                                       tmp_path):
    p, out, result = start_trapping(sandbox, tmp_path, opts=("--kill-after", "0.5"),
                                    trap="echo ignored > /out/marker")
    try:
        started = time.monotonic()
        p.send_signal(signal.SIGTERM)
        _, err = p.communicate(timeout=30)
        elapsed = time.monotonic() - started
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 128 + signal.SIGTERM, err
    assert 0.4 < elapsed < 10
    assert (out / "marker").read_text() == "ignored\n"
    doc = json.loads(result.read_text())
    assert doc["signalledByCaller"] and doc["interrupted"] and doc["signal"] == "SIGKILL"
    assert doc["limits"]["killAfterSeconds"] == 0.5
    assert hardened.list_ids() == []


# ---- 4. --out ---------------------------------------------------------------------------------


def test_a_non_empty_out_is_refused_up_front(sandbox, hardened, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "old").write_text("from an earlier run")
    r = sandbox.run("sh", "-c", "echo new > /out/new", opts=("--out", str(out)))
    assert r.returncode == 125
    assert "--out" in r.stderr and "not empty" in r.stderr and "--out-overwrite" in r.stderr
    assert sorted(os.listdir(out)) == ["old"]
    assert r.result["error"] and "not empty" in r.result["error"]
    assert "start" not in [e["event"] for e in hardened.audit()
                           if e.get("id") == hardened.id("sb")]
    r = sandbox.run("sh", "-c", "echo new > /out/new; echo again > /out/old",
                    opts=("--out", str(out), "--out-overwrite"))
    assert r.returncode == 0, r.stderr
    assert (out / "new").read_text() == "new\n" and (out / "old").read_text() == "again\n"
    assert r.result["output"]["complete"] is True


def test_a_result_with_refused_entries_is_never_complete(sandbox, tmp_path):
    out = tmp_path / "out"
    r = sandbox.run("sh", "-c", "echo a > /out/a; ln -s /etc/passwd /out/link; mkfifo /out/p",
                    opts=("--out", str(out)))
    assert r.returncode == 0, r.stderr
    o = r.result["output"]
    assert sorted(e["path"] for e in o["refused"]) == ["link", "p"]
    assert o["complete"] is False
    assert sorted(os.listdir(out)) == ["a"]


# ---- 5. exit statuses and messages ------------------------------------------------------------


def test_timeout_exits_124_with_one_line(sandbox):
    r = sandbox.run("sleep", "30", opts=("--timeout", "0.5"))
    assert r.returncode == 124
    assert r.stderr == "seerun sandbox: killed: --timeout 0.5 s reached\n"
    assert r.result["timedOut"] and r.result["status"] == 124


def test_oom_kill_says_so_in_one_line(sandbox):
    r = sandbox.run("python3", "-c", "a = []\nwhile True:\n    a.append(bytearray(1 << 20))\n",
                    opts=("--memory", "32m"))
    assert r.returncode == 128 + signal.SIGKILL
    lines = [l for l in r.stderr.splitlines() if l.startswith("seerun sandbox:")]
    assert lines == ["seerun sandbox: killed: out of memory (the memory limit, 32 MiB, "
                     "reached; --memory)"], r.stderr
    assert r.result["oomKilled"]


def test_a_command_missing_in_the_sandbox_exits_127_with_a_hint(sandbox, hardened):
    # /usr/local and the home directories are not there; nor is a name nobody has.
    for cmd in ("no-such-command-here", "/root/.bashrc", "/usr/local/bin/x"):
        r = sandbox.run(cmd)
        assert r.returncode == 127, (cmd, r.stderr)
        assert "not found" in r.stderr or "no such file" in r.stderr
        assert "only the host's /usr" in r.stderr and "--ro" in r.stderr
        assert r.result["status"] == 127
    assert hardened.list_ids() == [] and state_entries(hardened) == []


def test_a_command_that_is_not_executable_exits_126(sandbox, tmp_path):
    f = tmp_path / "script"
    f.write_text("#!/bin/sh\necho hi\n")
    f.chmod(0o644)
    r = sandbox.run("/in/script", opts=("--ro", f"{f}:/in/script"))
    assert r.returncode == 126, r.stderr
    assert "permission denied" in r.stderr
    r = sandbox.run("/usr")
    assert r.returncode == 126, r.stderr


def test_a_failure_of_seerun_itself_is_125(sandbox, tmp_path):
    r = sandbox.run("true", opts=("--rootfs", str(tmp_path / "missing")))
    assert r.returncode == 125 and "--rootfs" in r.stderr


@pytest.mark.parametrize("value", ["512", "1m", "8388607"])
def test_a_memory_limit_below_the_minimum_is_refused_up_front(hardened, value):
    r = hardened.cmd("sandbox", "--name", hardened.id("sb"), "--memory", value, "--", "true")
    assert r.returncode == 125
    assert f"--memory {value}" in r.stderr and "minimum, 8m" in r.stderr
    assert state_entries(hardened) == [] and hardened.audit() == []


@pytest.mark.parametrize("opt", ["--timeout", "--kill-after"])
@pytest.mark.parametrize("value", ["0", "-1"])
def test_a_zero_duration_must_be_positive(hardened, opt, value):
    r = hardened.cmd("sandbox", opt, value, "--", "true")
    assert r.returncode == 125
    assert f'{opt}: "{value}": must be positive' in r.stderr


def test_non_root_is_told_seerun_must_run_as_root(hardened):
    r = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", SEERUN,
                        *hardened.global_args, "sandbox", "--", "true"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 125
    assert r.stderr == "seerun sandbox: seerun must run as root (rootless is not implemented)\n"


def test_a_refused_ro_names_the_option_the_user_wrote(sandbox, tmp_path):
    r = sandbox.run("true", opts=("--ro", "/root"))
    assert r.returncode == 125
    assert "--ro /root (mounts[" in r.stderr, r.stderr
    assert "denied host path" in r.stderr
    # The one refused of several, as written.
    ok = tmp_path / "fine"
    ok.mkdir()
    r = sandbox.run("true", opts=("--ro", f"{ok}:/fine", "--ro", "/root:/r"))
    assert r.returncode == 125
    assert "--ro /root:/r (mounts[" in r.stderr and f"--ro {ok}" not in r.stderr, r.stderr


def test_an_unknown_profile_lists_the_profiles(hardened):
    argv = [SEERUN, "--root", hardened.root, "--policy", hardened.policy, "sandbox",
            "--profile", "nope", "--", "true"]
    r = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert r.returncode == 125
    assert 'unknown profile "nope"' in r.stderr
    for name in ("default", "untrusted-user-code", "permissive"):
        assert name in r.stderr, r.stderr


# ---- 6. what programs expect to find --------------------------------------------------------


def test_the_hosts_ca_certificates_are_readable_inside(sandbox):
    """pip, npm and curl verify HTTPS against the system bundle: the host's, read-only."""
    bundle = "/etc/ssl/certs/ca-certificates.crt"
    if not os.path.exists(bundle):
        pytest.skip("the host has no Debian CA bundle")
    r = sandbox.run("python3", "-c",
                    "import ssl, hashlib\n"
                    f"print(hashlib.sha256(open('{bundle}', 'rb').read()).hexdigest())\n"
                    "print(ssl.create_default_context().cert_store_stats()['x509_ca'])\n"
                    f"open('{bundle}', 'a')\n")
    lines = r.stdout.split()
    import hashlib
    assert lines[0] == hashlib.sha256(open(bundle, "rb").read()).hexdigest()
    assert int(lines[1]) > 10
    assert "Read-only file system" in r.stderr or "Permission denied" in r.stderr
    # Nothing else of the host's /etc.
    r = sandbox.run("sh", "-c", "ls /etc/ssl; test -e /etc/ssl/private && echo private")
    assert "private" not in r.stdout.split()


def test_home_is_writable_and_the_users(sandbox):
    r = sandbox.run("python3", "-c",
                    "import os, pwd\n"
                    "home = os.environ['HOME']\n"
                    "print(home, pwd.getpwuid(os.getuid()).pw_dir)\n"
                    "os.makedirs(os.path.join(home, '.cache', 'pip'))\n"
                    "open(os.path.join(home, '.npmrc'), 'w').write('x')\n"
                    "st = os.stat(home)\n"
                    "print(st.st_uid == os.getuid(), oct(st.st_mode & 0o777))\n")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["/home/sandbox", "/home/sandbox", "True", "0o700"]


def test_the_hosts_usr_local_is_left_out_unless_asked(sandbox):
    host = sorted(os.listdir("/usr/local"))
    if not host:
        pytest.skip("the host's /usr/local is empty")
    r = sandbox.run("python3", "-c", "import os; print(sorted(os.listdir('/usr/local')))\n"
                    "open('/usr/local/x', 'w')\n")
    assert r.stdout.strip() == "[]"
    assert "Read-only file system" in r.stderr or "Permission denied" in r.stderr
    r = sandbox.run("python3", "-c", "import os; print(sorted(os.listdir('/usr/local')))",
                    opts=("--ro", "/usr/local"))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str(host)
    sub = os.path.join("/usr/local", host[0])
    r = sandbox.run("python3", "-c", "import os; print(sorted(os.listdir('/usr/local')))",
                    opts=("--ro", sub))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str([host[0]])


# ---- 7. defaults for untrusted code --------------------------------------------------------


def cpu_quota_on_host(cid_prefix):
    """cpu.cfs_quota_us (v1) or cpu.max (v2) of the running container's cgroup."""
    for base, dirs, files in os.walk("/sys/fs/cgroup"):
        if os.path.basename(base).startswith(cid_prefix):
            for name in ("cpu.cfs_quota_us", "cpu.max"):
                if name in files:
                    return open(os.path.join(base, name)).read().split()[0]
        if base.count("/") > 6:
            dirs[:] = []
    return None


@pytest.fixture
def untrusted(tmp_path):
    """seerun under the shipped untrusted-user-code profile (its global --profile)."""
    from conftest import check_no_leaks, make_seerun
    d = tmp_path / "untrusted"
    d.mkdir()
    s = make_seerun(d, "untrusted-user-code")
    yield s
    s.cleanup()
    check_no_leaks(s, d)


def test_untrusted_user_code_gets_one_cpu_and_256_pids_by_default(untrusted, tmp_path):
    """A sandbox under untrusted-user-code without --cpus or --pids: 1 CPU and 256 processes,
    on the host's cgroup; asking for more than the profile's ceiling gets the ceiling."""
    sandbox = Sandbox(untrusted, tmp_path)
    cid = untrusted.id("sb")
    p = subprocess.Popen(sandbox.argv("--", "sleep", "30"), stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    try:
        wait_for(lambda: running_pid(untrusted, cid), what="the sandbox to run")
        assert cpu_quota_on_host(cid) == "100000"
    finally:
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=30)
    r = sandbox.run("true")
    assert r.result["limits"]["cpus"] == 1.0 and r.result["limits"]["pids"] == 256
    r = sandbox.run("true", opts=("--cpus", "8", "--pids", "100000"))
    assert r.result["limits"]["cpus"] == 2.0 and r.result["limits"]["pids"] == 1024
    fields = {d["field"]: d for d in r.result["decisions"]}
    assert "profiles.untrusted-user-code.resources.cpu.max" in \
        fields["linux.resources.cpu.quota"]["reason"]
    r = sandbox.run("true", opts=("--cpus", "0.5"))
    assert r.result["limits"]["cpus"] == 0.5


def test_engine_containers_get_the_profiles_cpu_limit_too(untrusted, busybox_rootfs, tmp_path):
    """The knob is the policy's: `run` of a bundle (what an engine does) under
    untrusted-user-code without a quota runs with 1 CPU; `update` above the ceiling is
    refused."""
    from conftest import Bundle
    s = untrusted
    path = tmp_path / "bundle"
    path.mkdir()
    b = Bundle(path, busybox_rootfs, s)
    b.args("sleep", "30")
    cid = s.id()
    s.cmd("run", "-d", "--bundle", b.write(), cid, check=True)
    assert cpu_quota_on_host(cid) == "100000"
    r = s.cmd("update", "--cpu-quota", "300000", "--cpu-period", "100000", cid)
    assert r.returncode != 0 and "profiles.untrusted-user-code.resources.cpu.max" in r.stderr
    assert cpu_quota_on_host(cid) == "100000"
    s.cmd("update", "--cpu-quota", "150000", cid, check=True)
    assert cpu_quota_on_host(cid) == "150000"


# ---- 8. unique ids, and an audit log a program can read ---------------------------------------


def test_every_run_has_a_unique_id_on_every_audit_line(hardened, tmp_path):
    """Two runs in the same slot (sandbox-0 both times): different runIds, in the result
    documents and on every audit line of each run."""
    docs = []
    for i in range(2):
        result = tmp_path / f"r{i}.json"
        r = hardened.cmd("sandbox", f"--json={result}", "--", "true")
        assert r.returncode == 0, r.stderr
        docs.append(json.loads(result.read_text()))
    assert docs[0]["id"] == docs[1]["id"] == "sandbox-0"
    ids = [d["runId"] for d in docs]
    assert ids[0] != ids[1] and all(len(i) == 32 and int(i, 16) >= 0 for i in ids)
    for run_id in ids:
        lines = [e for e in hardened.audit() if e.get("runId") == run_id]
        kinds = [e["event"] for e in lines]
        for kind in ("sandbox-start", "decision", "create", "start", "exit", "sandbox-result"):
            assert kind in kinds, (kind, kinds)
    # Lines of a run are the run's: none of the other one's.
    runtime_pids = {e["runtimePid"] for e in hardened.audit() if e.get("runId") == ids[0]}
    assert all(e.get("runId") == ids[0] for e in hardened.audit()
               if e["runtimePid"] in runtime_pids and e["id"] == "sandbox-0")


def test_the_audit_lines_carry_the_request_typed(hardened, tmp_path):
    """sandbox-start and sandbox-result: the argv, the caller's uid and cwd, absolute paths,
    numbers as numbers and booleans as booleans."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "data").mkdir()
    result = tmp_path / "r.json"
    r = hardened.cmd("sandbox", f"--json={result}", "--out", "results", "--ro", "data:/data",
                     "--env", "TOKEN=secret-value", "--memory", "64m", "--timeout", "30", "--",
                     "sh", "-c", "echo x > /out/f; exit 2", cwd=str(work))
    assert r.returncode == 2, r.stderr
    run_id = json.loads(result.read_text())["runId"]
    lines = {e["event"]: e for e in hardened.audit() if e.get("runId") == run_id}
    start, end = lines["sandbox-start"], lines["sandbox-result"]
    for e in (start, end):
        assert e["command"] == ["sh", "-c", "echo x > /out/f; exit 2"]
        assert e["caller"]["uid"] == os.getuid() and e["caller"]["cwd"] == str(work)
    assert start["out"] == str(work / "results")
    assert start["ro"] == [{"source": str(work / "data"), "destination": "/data"}]
    assert start["envKeys"] == ["TOKEN"] and "secret-value" not in json.dumps(start)
    assert start["asked"]["memoryBytes"] == 64 << 20 and start["asked"]["timeoutSeconds"] == 30
    assert start["network"] is False and start["tty"] is False
    assert end["status"] == 2 and end["exitCode"] == 2 and end["timedOut"] is False
    assert end["output"]["directory"] == str(work / "results")
    assert end["output"]["files"] == 1 and end["output"]["complete"] is True
    assert end["limits"]["memoryBytes"] == 64 << 20
    assert "decisions" not in end and "entries" not in end["output"]


def test_the_audit_log_can_be_rotated_without_a_signal(hardened, tmp_path):
    """seerun opens the log per line: moved away (as logrotate does), the next line makes a new
    file; the shipped logrotate configuration names the default log and sends no signal."""
    r = hardened.cmd("sandbox", "--", "true")
    assert r.returncode == 0, r.stderr
    rotated = hardened.audit_log + ".1"
    os.rename(hardened.audit_log, rotated)
    r = hardened.cmd("sandbox", "--", "true")
    assert r.returncode == 0, r.stderr
    assert any(e["event"] == "sandbox-result" for e in hardened.audit())
    assert oct(os.stat(hardened.audit_log).st_mode & 0o777) == "0o600"
    conf = open(os.path.join(os.path.dirname(__file__), "..", "..", "contrib", "logrotate",
                             "seerun")).read()
    assert "/var/log/seerun/audit.jsonl" in conf
    directives = [l.split()[0] for l in conf.splitlines() if l.strip() and
                  not l.lstrip().startswith(("#", "/", "}"))]
    assert "postrotate" not in directives and "copytruncate" not in directives, directives
    if shutil.which("logrotate"):
        state = tmp_path / "logrotate.state"
        p = subprocess.run(["logrotate", "--debug", "--state", str(state),
                            os.path.join(os.path.dirname(__file__), "..", "..", "contrib",
                                         "logrotate", "seerun")],
                           capture_output=True, text=True)
        assert p.returncode == 0 and "error" not in p.stderr.lower(), p.stderr
