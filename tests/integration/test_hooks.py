"""OCI hooks: each kind runs at its moment of the lifecycle, in the right namespaces, with the
container's state on stdin, exactly its own args and env; a failing or slow hook fails the
operation it belongs to (and says why), except poststop, which only warns."""
import json
import os
import pathlib
import shutil
import signal as sig
import time

import pytest

from conftest import Bundle, check_no_leaks, wait_for

KINDS = ["prestart", "createRuntime", "createContainer", "startContainer", "poststart",
         "poststop"]

# Records one hook's run into $2/<name>.*: its stdin, its mount namespace, its argv and env,
# and appends its name to $2/order.  /proc/self, not /proc/$$: a createContainer hook runs in
# the container's pid namespace while /proc is still the host's.  A redirection is opened by
# the shell (or its fork, whose argv and environment are the shell's).  Run by busybox's sh on the host and in the container (the
# host's dash keeps a descriptor of its own open).
BUSYBOX = shutil.which("busybox") or "/bin/busybox"
RECORD = r'''
name=$1; out=$2
cat > "$out/$name.json"
readlink /proc/self/ns/mnt > "$out/$name.ns"
cat < /proc/self/cmdline > "$out/$name.argv"
cat < /proc/self/environ > "$out/$name.env"
echo "$name" >> "$out/order"
'''


def hook(script, *args, path=BUSYBOX, argv0="sh", env=None, timeout=None):
    h = {"path": path, "args": [argv0, "-c", script, argv0, *args]}
    if env is not None:
        h["env"] = env
    if timeout is not None:
        h["timeout"] = timeout
    return h


@pytest.fixture
def logdir(tmp_path):
    """A host directory the hooks write to; the container sees it at /root (the startContainer
    hook, which runs inside, writes there)."""
    d = tmp_path / "hooklog"
    d.mkdir()
    return d


def bind_logdir(bundle, logdir):
    bundle.config["mounts"].append({"destination": "/root", "type": "bind",
                                    "source": str(logdir), "options": ["rbind", "rw"]})


def record_all(bundle, logdir):
    bind_logdir(bundle, logdir)
    env = ["HOOK_ENV=only-this", "PATH=/usr/bin:/bin"]
    hooks = {}
    for kind in KINDS:
        out = "/root" if kind == "startContainer" else str(logdir)
        # busybox picks its applet by the base name of argv[0]: the directory carries the mark.
        path = "/bin/busybox" if kind == "startContainer" else BUSYBOX
        hooks[kind] = [hook(RECORD, kind, out, path=path, argv0=f"/argv0-of-{kind}/sh",
                            env=env)]
    bundle.config["hooks"] = hooks


def read(logdir, name):
    return (logdir / name).read_text()


def assert_nothing_left(seerun):
    """No container listed, and none of its state, cgroups, mounts or processes on the host."""
    assert seerun.list_ids() == []
    check_no_leaks(seerun, pathlib.Path(seerun.root).parent)


def test_every_hook_runs_at_its_moment_with_the_state_on_stdin(seerun, bundle, logdir):
    record_all(bundle, logdir)
    bundle.config["annotations"] = {"org.test.hooks": "yes"}
    bundle.args("sleep", "30")
    cid = seerun.id()
    seerun.cmd("create", "--bundle", bundle.write(), cid, check=True)
    # create ran the first three, in order, and not the others.
    assert read(logdir, "order").split() == ["prestart", "createRuntime", "createContainer"]
    pid = seerun.state(cid)["pid"]

    seerun.cmd("start", cid, check=True)
    assert read(logdir, "order").split() == KINDS[:5]
    seerun.cmd("kill", cid, "KILL", check=True)
    wait_for(lambda: seerun.state(cid)["status"] == "stopped", what="stopped")
    seerun.cmd("delete", cid, check=True)
    assert read(logdir, "order").split() == KINDS

    # runtime.md: "creating" is step 2 of the lifecycle, "created" after it: the create-time
    # hooks are steps 3 to 5 (crun; runc says "creating").
    expected_status = {"prestart": "created", "createRuntime": "created",
                       "createContainer": "created", "startContainer": "created",
                       "poststart": "running", "poststop": "stopped"}
    for kind in KINDS:
        st = json.loads(read(logdir, f"{kind}.json"))
        assert st["id"] == cid, kind
        assert st["bundle"] == str(bundle.path), kind
        assert st["status"] == expected_status[kind], kind
        assert st["annotations"] == {"org.test.hooks": "yes"}, kind
        assert st["ociVersion"].startswith("1."), kind
        # (The pid a hook in the container's namespaces gets is checked below.)
        if kind in ("prestart", "createRuntime", "poststart"):
            assert st["pid"] == pid, kind


def test_the_state_on_a_hooks_stdin_as_the_validation_suite_reads_it(seerun, bundle, tmp_path):
    # runtime-tools' hooks_stdin: each hook `sh -c "cat > FILE"` (timeout 1), process `true`,
    # an annotation; create, state's pid, start, wait for stopped, delete; then each file's
    # id, bundle, pid (not poststop's), annotations, and status: prestart "created", poststart
    # "running", poststop not empty.
    out = tmp_path / "stdin"
    out.mkdir()
    bundle.config["annotations"] = {"org.opencontainers.runtime-tools": "hook stdin test"}
    bundle.config["hooks"] = {kind: [hook(f"cat > {out}/{kind}", timeout=1)]
                              for kind in ("prestart", "poststart", "poststop")}
    bundle.args("true")
    cid = seerun.id()
    seerun.cmd("create", "--bundle", bundle.write(), cid, check=True)
    pid = seerun.state(cid)["pid"]
    seerun.cmd("start", cid, check=True)
    wait_for(lambda: seerun.state(cid)["status"] == "stopped", what="stopped")
    seerun.cmd("delete", cid, check=True)
    for kind, status in (("prestart", "created"), ("poststart", "running"),
                         ("poststop", "stopped")):
        st = json.loads((out / kind).read_text())
        assert st["id"] == cid and st["bundle"] == str(bundle.path), kind
        assert st["annotations"] == {"org.opencontainers.runtime-tools": "hook stdin test"}
        assert st["status"] == status, kind
        if kind != "poststop":
            assert st["pid"] == pid, kind


def test_a_poststart_hook_gets_running_and_the_pid_even_when_the_process_is_quick(
        seerun, bundle, tmp_path):
    # runtime-tools' hooks_stdin runs `true`: the hook ran after `true` had exited and got
    # "stopped" and no pid about every other time.  Step 9 follows the program's execution:
    # "running", and the pid the container had at create.
    out = tmp_path / "poststart.json"
    bundle.config["hooks"] = {"poststart": [hook(f"cat > {out}")]}
    bundle.args("true")
    path = bundle.write()
    for i in range(10):
        cid = seerun.id(f"q{i}")
        seerun.cmd("create", "--bundle", path, cid, check=True)
        pid = seerun.state(cid)["pid"]
        seerun.cmd("start", cid, check=True)
        st = json.loads(out.read_text())
        assert (st["status"], st.get("pid")) == ("running", pid), (i, st)
        wait_for(lambda: seerun.state(cid)["status"] == "stopped", what="stopped")
        seerun.cmd("delete", cid, check=True)


def test_hooks_run_in_the_runtimes_or_the_containers_namespaces(seerun, bundle, logdir):
    record_all(bundle, logdir)
    bundle.args("sleep", "30")
    cid = seerun.id()
    seerun.cmd("create", "--bundle", bundle.write(), cid, check=True)
    pid = seerun.state(cid)["pid"]
    container_mnt = os.readlink(f"/proc/{pid}/ns/mnt")
    seerun.cmd("start", cid, check=True)
    seerun.cmd("delete", "--force", cid, check=True)
    host_mnt = os.readlink("/proc/self/ns/mnt")
    assert container_mnt != host_mnt
    for kind in ("prestart", "createRuntime", "poststart", "poststop"):
        assert read(logdir, f"{kind}.ns").strip() == host_mnt, kind
    for kind in ("createContainer", "startContainer"):
        assert read(logdir, f"{kind}.ns").strip() == container_mnt, kind


def test_a_hook_gets_exactly_its_args_and_env(seerun, bundle, logdir):
    record_all(bundle, logdir)
    bundle.args("sleep", "30")
    cid = seerun.id()
    seerun.cmd("create", "--bundle", bundle.write(), cid, check=True,
               env=dict(os.environ, RUNTIME_SECRET="leak"))
    seerun.cmd("start", cid, check=True)
    seerun.cmd("delete", "--force", cid, check=True)
    for kind in KINDS:
        argv = read(logdir, f"{kind}.argv").split("\0")[:-1]
        out = "/root" if kind == "startContainer" else str(logdir)
        assert argv == [f"/argv0-of-{kind}/sh", "-c", RECORD, f"/argv0-of-{kind}/sh", kind,
                        out], kind
        # What the hook got at execve, in order: nothing of the runtime's.
        env = read(logdir, f"{kind}.env").split("\0")[:-1]
        assert env == ["HOOK_ENV=only-this", "PATH=/usr/bin:/bin"], kind


def test_a_hook_without_env_gets_an_empty_environment(seerun, bundle, logdir):
    bundle.config["hooks"] = {"prestart": [hook("cat < /proc/self/environ > $1/env",
                                                str(logdir))]}
    seerun.cmd("create", "--bundle", bundle.write(), seerun.id(), check=True,
               env=dict(os.environ, RUNTIME_SECRET="leak"))
    assert read(logdir, "env") == ""


@pytest.mark.parametrize("kind", KINDS)
def test_a_hook_inherits_only_stdio_even_when_the_caller_leaks_descriptors(seerun, bundle,
                                                                            kind):
    # The hook fails on purpose so that its output, the list of its descriptors, shows in the
    # error (a redirection or pipe in the shell would add descriptors of its own).  ls lists
    # its own: 0-2 and 3, the directory it reads; a leaked one would push that to 4.
    path = "/bin/busybox" if kind == "startContainer" else BUSYBOX
    bundle.config["hooks"] = {kind: [hook("ls /proc/self/fd; exit 1", path=path)]}
    bundle.args("sleep", "30")
    cid = seerun.id()
    leaked = os.open("/etc/hostname", os.O_RDONLY)
    try:
        results = [seerun.cmd("create", "--bundle", bundle.write(), cid, pass_fds=(leaked,))]
        if results[-1].returncode == 0:
            results.append(seerun.cmd("start", cid, pass_fds=(leaked,)))
        if results[-1].returncode == 0:
            results.append(seerun.cmd("delete", "--force", cid, pass_fds=(leaked,)))
    finally:
        os.close(leaked)
    err = results[-1].stderr
    assert f"hook {kind}[0]" in err, err
    listing = err.split("exit status 1: ", 1)[1].split()
    assert listing == ["0", "1", "2", "3"], err


@pytest.mark.parametrize("kind", ["prestart", "createRuntime", "createContainer"])
def test_a_failing_create_hook_fails_create_with_its_output_and_leaves_nothing(
        seerun, bundle, kind):
    bundle.config["hooks"] = {kind: [
        {"path": "/bin/sh", "args": ["sh", "-c", "echo out-of-hook; echo boom >&2; exit 3"]}]}
    r = seerun.cmd("create", "--bundle", bundle.write(), seerun.id())
    assert r.returncode != 0
    assert f"hook {kind}[0]" in r.stderr
    assert "exit status 3" in r.stderr
    assert "boom" in r.stderr and "out-of-hook" in r.stderr
    assert_nothing_left(seerun)


def test_a_slow_hook_is_killed_at_its_timeout_and_fails_create(seerun, bundle, logdir):
    # The hook leaves a child behind: the timeout kills it too.
    bundle.config["hooks"] = {"createRuntime": [
        hook("sleep 60 & echo $! > $1/child; wait", str(logdir), timeout=1)]}
    t0 = time.monotonic()
    r = seerun.cmd("create", "--bundle", bundle.write(), seerun.id())
    elapsed = time.monotonic() - t0
    assert r.returncode != 0
    assert "hook createRuntime[0]" in r.stderr and "timed out after 1 s" in r.stderr
    assert elapsed < 5
    assert_nothing_left(seerun)
    child = int(read(logdir, "child"))

    def gone():
        try:
            with open(f"/proc/{child}/stat") as f:
                return f.read().rsplit(")", 1)[1].split()[0] == "Z"
        except FileNotFoundError:
            return True
    wait_for(gone, timeout=3, what="the hook's child to be killed")


def test_a_hook_that_does_not_read_its_stdin_does_not_block(seerun, bundle, logdir):
    bundle.config["annotations"] = {f"org.test.{i}": "x" * 1000 for i in range(200)}
    bundle.config["hooks"] = {"prestart": [hook("sleep 0.2; echo ran > $1/ran", str(logdir),
                                                timeout=10)]}
    seerun.cmd("create", "--bundle", bundle.write(), seerun.id(), check=True)
    assert read(logdir, "ran") == "ran\n"


def test_a_hook_reading_all_of_a_large_state_gets_all_of_it(seerun, bundle, logdir):
    bundle.config["annotations"] = {f"org.test.{i}": "x" * 1000 for i in range(200)}
    bundle.config["hooks"] = {"prestart": [hook("sleep 0.2; cat > $1/state", str(logdir),
                                                timeout=10)]}
    seerun.cmd("create", "--bundle", bundle.write(), seerun.id(), check=True)
    st = json.loads(read(logdir, "state"))
    assert len(st["annotations"]) == 200


def test_a_hook_that_cannot_be_executed_fails_create_clearly(seerun, bundle):
    # A root-owned file in root-owned directories, as a policy may require, but no program.
    bundle.config["hooks"] = {"prestart": [{"path": "/etc/passwd"}]}
    r = seerun.cmd("create", "--bundle", bundle.write(), seerun.id())
    assert r.returncode != 0
    assert "hook prestart[0] `/etc/passwd`" in r.stderr
    assert "exec /etc/passwd: Permission denied" in r.stderr
    assert_nothing_left(seerun)


def test_a_failing_start_container_hook_fails_start(seerun, bundle):
    bundle.config["hooks"] = {"startContainer": [
        {"path": "/bin/sh", "args": ["sh", "-c", "echo inside-says-no >&2; exit 4"]}]}
    bundle.args("sleep", "30")
    cid = seerun.id()
    seerun.cmd("create", "--bundle", bundle.write(), cid, check=True)
    r = seerun.cmd("start", cid)
    assert r.returncode != 0
    assert "hook startContainer[0]" in r.stderr and "inside-says-no" in r.stderr
    wait_for(lambda: seerun.state(cid)["status"] == "stopped", what="stopped")


def test_a_failing_poststart_hook_fails_start_and_stops_the_container(seerun, bundle):
    bundle.config["hooks"] = {"poststart": [
        {"path": "/bin/sh", "args": ["sh", "-c", "echo poststart-says-no >&2; exit 5"]}]}
    bundle.args("sleep", "30")
    cid = seerun.id()
    seerun.cmd("create", "--bundle", bundle.write(), cid, check=True)
    pid = seerun.state(cid)["pid"]
    r = seerun.cmd("start", cid)
    assert r.returncode != 0
    assert "hook poststart[0]" in r.stderr and "poststart-says-no" in r.stderr
    assert "exit status 5" in r.stderr
    # ociVersion 1.3 (the spec's): stopped and destroyed (test_conformance_b has the older
    # versions' warning).
    assert seerun.list_ids() == []
    # The process is gone, not just reported so.
    wait_for(lambda: not os.path.exists(f"/proc/{pid}") or
             open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0] == "Z",
             what="the process to die")


def test_a_failing_poststop_hook_is_only_a_warning(seerun, bundle, logdir):
    bundle.config["hooks"] = {"poststop": [
        {"path": "/bin/sh", "args": ["sh", "-c", "echo poststop-says-no >&2; exit 6"]},
        hook("echo second > $1/second", str(logdir))]}
    cid = seerun.id()
    seerun.cmd("run", "--keep", "--bundle", bundle.write(), cid, check=True)
    r = seerun.cmd("delete", cid)
    assert r.returncode == 0, r.stderr
    assert "poststop" in r.stderr and "poststop-says-no" in r.stderr
    assert seerun.list_ids() == []
    # The spec: a failing poststop hook is logged and the remaining hooks still run.
    assert read(logdir, "second") == "second\n"


def test_run_runs_every_hook_once(seerun, bundle, logdir):
    record_all(bundle, logdir)
    bundle.shell("echo hi")
    r = seerun.cmd("run", "--bundle", bundle.write(), seerun.id())
    assert (r.returncode, r.stdout) == (0, "hi\n"), r.stderr
    assert read(logdir, "order").split() == KINDS


def test_a_hook_starts_with_default_signal_dispositions(seerun, bundle):
    # The runtime ignores SIGPIPE for itself; a hook's pipelines must not inherit that, nor
    # what the caller ignored (nohup).
    bundle.config["hooks"] = {"prestart": [
        hook("grep -E '^Sig(Ign|Blk):' /proc/self/status; exit 1")]}

    def caller_ignores_hup():
        sig.signal(sig.SIGHUP, sig.SIG_IGN)
    r = seerun.cmd("create", "--bundle", bundle.write(), seerun.id(),
                   preexec_fn=caller_ignores_hup)
    assert "hook prestart[0]" in r.stderr
    words = r.stderr.split("exit status 1: ", 1)[1].split()
    fields = dict(zip(words[::2], words[1::2]))
    assert int(fields["SigIgn:"], 16) == 0, r.stderr
    assert int(fields["SigBlk:"], 16) == 0, r.stderr


def test_hooks_in_the_container_namespace_get_the_pid_the_container_sees(seerun, bundle,
                                                                          logdir):
    # runtime.md, State: "For hooks executed in the container namespace, it is the pid as seen
    # by the container" (1, in its own pid namespace).
    record_all(bundle, logdir)
    bundle.args("sleep", "30")
    cid = seerun.id()
    seerun.cmd("create", "--bundle", bundle.write(), cid, check=True)
    host_pid = seerun.state(cid)["pid"]
    seerun.cmd("start", cid, check=True)
    seerun.cmd("delete", "--force", cid, check=True)
    for kind in ("prestart", "createRuntime", "poststart"):
        assert json.loads(read(logdir, f"{kind}.json"))["pid"] == host_pid, kind
    for kind in ("createContainer", "startContainer"):
        assert json.loads(read(logdir, f"{kind}.json"))["pid"] == 1, kind


def test_under_the_default_profile_container_hooks_run_in_the_containers_user_namespace(
        hardened, busybox_rootfs, tmp_path):
    path = tmp_path / "hardened-bundle"
    path.mkdir()
    bundle = Bundle(path, busybox_rootfs, hardened)
    # The container's root is no host root here: the hooks report through the debug log (a
    # successful hook's output), not through a file of the host.
    script = "cat > /dev/null; echo userns=$(readlink /proc/self/ns/user)"
    # The default profile runs no hook but Docker's: the operator allows this one, an
    # interpreter, only with exactly these arguments.
    with open(hardened.policy) as f:
        policy = json.load(f)
    policy["profiles"]["default"]["hooks"] = {"allowedPaths": [
        {"path": BUSYBOX, "args": ["sh", "-c", script, "sh"]}]}
    with open(hardened.policy, "w") as f:
        json.dump(policy, f)
    bundle.config["hooks"] = {"createRuntime": [hook(script)],
                              "createContainer": [hook(script)]}
    bundle.args("sleep", "30")
    cid = hardened.id()
    log = tmp_path / "debug.log"
    hardened.cmd("--log", str(log), "--debug", "create", "--bundle", bundle.write(), cid,
                 check=True)
    pid = hardened.state(cid)["pid"]
    container_userns = os.readlink(f"/proc/{pid}/ns/user")
    assert container_userns != os.readlink("/proc/self/ns/user")
    seen = {}
    for line in log.read_text().splitlines():
        for kind in ("createRuntime", "createContainer"):
            if f"hook {kind}[0]" in line and "userns=" in line:
                seen[kind] = line.split("userns=", 1)[1].split('"')[0].strip()
    assert seen == {"createRuntime": os.readlink("/proc/self/ns/user"),
                    "createContainer": container_userns}, log.read_text()
