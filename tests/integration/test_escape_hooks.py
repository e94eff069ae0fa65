"""Hooks as an attacker who writes config.json uses them (issue 13, classes 4, 2 and 3): a hook
runs on the host as root, outside every namespace of the container, so whatever config.json
names must not become the attacker's code running there.

- Only what the profile allows runs (hooks.allowedPaths names the file a hook resolves to and
  may constrain its argv); interpreters and env-style launchers are never allowed by their
  path alone.
- The hook's environment is filtered: nothing that makes an allowed program load or run the
  attacker's code (LD_PRELOAD pointing into the rootfs ...).
- The file judged is the file executed: opened once, judged from that descriptor, executed
  with execveat; a script's interpreter is judged like the hook.
- What is read back from the state directory (the config.json copy) is judged again: a hook
  written there after create never runs.

Each test checks the host (a marker file the attacker's code would write), the audit log and
`seerun policy check`, not only an exit status."""
import json
import os
import shutil
import subprocess
import textwrap
import uuid

import pytest

import conftest
from conftest import Bundle, check_no_leaks, make_seerun
from test_escape import decision, decisions


def policy_check(s, bundle):
    r = s.cmd("policy", "check", "--bundle", bundle.write())
    out = json.loads(r.stdout) if r.stdout.strip() else {}
    return r, out


def checked(out, field):
    found = [d for d in out.get("decisions", []) if d["field"] == field]
    assert found, f"policy check has no decision for {field}: {out}"
    return found[-1]


def with_profile_hooks(s, hooks, profile="default"):
    """The shipped policy with hooks.allowedPaths of the profile replaced (what an operator
    who allows a hook writes)."""
    with open(s.policy) as f:
        policy = json.load(f)
    policy["profiles"][profile]["hooks"] = {"allowedPaths": hooks}
    with open(s.policy, "w") as f:
        json.dump(policy, f, indent=2)
    return s


def allowed_script(s, trusted_dir, name, text):
    """An executable script NAME in the trusted directory with TEXT, the one hook the profile
    allows; its path."""
    script = f"{trusted_dir}/{name}"
    with open(script, "w") as f:
        f.write(text)
    os.chmod(script, 0o755)
    with_profile_hooks(s, [script])
    return script


@pytest.fixture
def hbundle(tmp_path, busybox_rootfs, hardened):
    path = tmp_path / "bundle"
    path.mkdir()
    b = Bundle(path, busybox_rootfs, hardened)
    b.args("true")
    return b


@pytest.fixture
def trusted_dir():
    """A directory an operator installs hooks in: root-owned, in root-owned directories nobody
    else can write, outside every bundle (not /tmp)."""
    d = f"/usr/local/lib/seerun-hook-test-{uuid.uuid4().hex[:8]}"
    os.makedirs(d, mode=0o755)
    os.chmod(d, 0o755)
    try:
        yield d
    finally:
        shutil.rmtree(d)


# ---- class 4: only what the profile allows ----


@pytest.mark.parametrize("path,argv", [
    ("/bin/sh", ["sh", "-c", "touch {marker}"]),
    ("/usr/bin/env", ["env", "sh", "-c", "touch {marker}"]),
    ("/bin/busybox", ["sh", "-c", "touch {marker}"]),
], ids=["sh", "env", "busybox"])
def test_a_shell_with_the_attackers_script_in_args_is_refused_under_default(
        hardened, hbundle, tmp_path, path, argv):
    # Root-owned, in /usr/bin: "on a trusted path".  What runs is the script in args.
    marker = tmp_path / "hook-ran"
    hbundle.config["hooks"] = {"prestart": [
        {"path": path, "args": [a.format(marker=marker) for a in argv]}]}
    rc, out = policy_check(hardened, hbundle)
    r = hardened.cmd("run", "--bundle", hbundle.write(), hardened.id())
    assert not marker.exists(), "the attacker's script ran on the host as root"
    assert r.returncode != 0, r.stderr
    assert "hooks.prestart[0].path" in r.stderr, r.stderr
    # The refusal says how an operator would allow a hook.
    assert "profiles.default.hooks.allowedPaths" in r.stderr, r.stderr
    d = decision(hardened, "hooks.prestart[0].path")
    assert d["kind"] == "refused", d
    # policy check agrees with create.
    assert rc.returncode != 0 and out["allowed"] is False, out
    assert checked(out, "hooks.prestart[0].path")["kind"] == "refused"
    assert hardened.list_ids() == []


def test_an_allowed_interpreter_without_an_argv_constraint_is_not_allowed(
        hardened, hbundle, tmp_path):
    # The operator listed /bin/sh by its path alone: an interpreter runs whatever its
    # arguments say, so that entry allows nothing.
    with_profile_hooks(hardened, ["/bin/sh", "/usr/bin/sh"])
    marker = tmp_path / "hook-ran"
    hbundle.config["hooks"] = {"createRuntime": [
        {"path": "/bin/sh", "args": ["sh", "-c", f"touch {marker}"]}]}
    rc, out = policy_check(hardened, hbundle)
    r = hardened.cmd("run", "--bundle", hbundle.write(), hardened.id())
    assert not marker.exists(), "an interpreter ran the attacker's script as host root"
    assert r.returncode != 0 and "hooks.createRuntime[0].path" in r.stderr, r.stderr
    assert "interpreter" in r.stderr and "args" in r.stderr, r.stderr
    assert decision(hardened, "hooks.createRuntime[0].path")["kind"] == "refused"
    assert out["allowed"] is False
    assert checked(out, "hooks.createRuntime[0].path")["kind"] == "refused"


def test_a_shell_under_another_name_is_still_an_interpreter(hardened, hbundle, tmp_path,
                                                           trusted_dir):
    # The operator listed a hook by a name that hides what it is: a hard link to the host's
    # shell.  It is judged as the file it is (by inode), not by its name.
    shell = os.path.realpath("/bin/sh")
    hook = f"{trusted_dir}/myhook"
    try:
        os.link(shell, hook)
    except OSError as e:
        pytest.skip(f"no hard link of {shell} in {trusted_dir}: {e}")
    with_profile_hooks(hardened, [hook])
    marker = tmp_path / "hook-ran"
    hbundle.config["hooks"] = {"prestart": [
        {"path": hook, "args": ["sh", "-c", f"touch {marker}"]}]}
    rc, out = policy_check(hardened, hbundle)
    r = hardened.cmd("run", "--bundle", hbundle.write(), hardened.id())
    assert not marker.exists(), "a shell under another name ran the attacker's script"
    assert r.returncode != 0 and "interpreter" in r.stderr, r.stderr
    assert decision(hardened, "hooks.prestart[0].path")["kind"] == "refused"
    assert out["allowed"] is False


# ---- class 4: the environment ----


@pytest.fixture
def evil_rootfs(tmp_path, busybox_rootfs):
    """A root filesystem whose /lib/evil.so writes a marker on the host from its constructor
    (a library an attacker ships in the image)."""
    root = tmp_path / "evil-rootfs"
    shutil.copytree(busybox_rootfs, root, symlinks=True)
    marker = tmp_path / "preload-ran"
    src = tmp_path / "evil.c"
    src.write_text(textwrap.dedent(f"""
        #include <fcntl.h>
        #include <unistd.h>
        __attribute__((constructor)) static void evil(void)
        {{
          int fd = open("{marker}", O_WRONLY | O_CREAT, 0644);
          if (fd >= 0) {{ write(fd, "ran\\n", 4); close(fd); }}
        }}
        """))
    (root / "lib").mkdir(exist_ok=True)
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(root / "lib" / "evil.so"), str(src)],
                   check=True, capture_output=True)
    return root, marker


@pytest.mark.parametrize("vars", [["LD_PRELOAD={lib}"],
                                  ["LD_PRELOAD=evil.so", "LD_LIBRARY_PATH={dir}"]],
                         ids=["preload", "library-path"])
def test_an_allowed_hook_cannot_load_a_library_of_the_rootfs(hardened, hbundle, evil_rootfs,
                                                             tmp_path, vars):
    root, marker = evil_rootfs
    with_profile_hooks(hardened, ["/usr/bin/true", "/bin/true"])
    hbundle.config["root"]["path"] = str(root)
    env = [v.format(lib=root / "lib" / "evil.so", dir=root / "lib") for v in vars]
    env.append("PATH=/usr/bin:/bin")
    hbundle.config["hooks"] = {"prestart": [{"path": "/usr/bin/true", "args": ["true"],
                                             "env": env}]}
    rc, out = policy_check(hardened, hbundle)
    r = hardened.cmd("run", "--bundle", hbundle.write(), hardened.id())
    assert not marker.exists(), "a library of the rootfs ran inside a host hook as root"
    # The hook itself is allowed and ran; its environment lost what pointed into the image.
    assert r.returncode == 0, r.stderr
    assert decision(hardened, "hooks.prestart[0].path")["kind"] == "allowed"
    d = decision(hardened, "hooks.prestart[0].env")
    assert d["kind"] == "enforced", d
    assert json.loads(d["applied"]) == ["PATH=/usr/bin:/bin"], d
    assert out["allowed"] is True
    assert checked(out, "hooks.prestart[0].env")["kind"] == "enforced"


# ---- class 2: the file judged is the file executed ----


@pytest.mark.parametrize("later", ["prestart", "createRuntime"])
def test_a_hook_symlink_swapped_after_the_check_does_not_run_the_new_target(
        hardened, hbundle, tmp_path, later):
    # The hook is a symlink to /usr/bin/touch when the policy looks; prestart[0] (an allowed
    # ln) points it at a script of the bundle before it runs.  A runtime that judges one
    # resolution of the name and executes another runs the script as host root.  seerun runs
    # the descriptor it judged (a hook of the same kind: opened before the swap), or judges
    # the descriptor it opens after the swap (a later kind) and refuses it.
    marker, judged = tmp_path / "hook-ran", tmp_path / "judged-ran"
    evil = hbundle.path / "evil.sh"
    evil.write_text(f"#!/bin/sh\ntouch {marker}\n")
    os.chmod(evil, 0o755)
    link = tmp_path / "hook-link"
    link.symlink_to("/usr/bin/touch")
    with_profile_hooks(hardened, ["/usr/bin/ln", "/bin/ln", "/usr/bin/touch", str(link)])
    swap = {"path": "/usr/bin/ln", "args": ["ln", "-sfn", str(evil), str(link)]}
    victim = {"path": str(link), "args": ["touch", str(judged)]}
    if later == "prestart":
        hbundle.config["hooks"] = {"prestart": [swap, victim]}
    else:
        hbundle.config["hooks"] = {"prestart": [swap], "createRuntime": [victim]}
    r = hardened.cmd("run", "--bundle", hbundle.write(), hardened.id())
    assert not marker.exists(), "the swapped-in script ran as a host hook"
    assert os.readlink(link) == str(evil)  # the swap happened
    field = f"hooks.{later}[{1 if later == 'prestart' else 0}].path"
    if later == "prestart":
        assert r.returncode == 0, r.stderr
        assert judged.exists(), "the file judged did not run"
    else:
        assert r.returncode != 0, r.stderr
        assert field.replace(".path", "") in r.stderr and "in the bundle" in r.stderr, r.stderr
        # The refusal at the moment of exec is on record too, after the allowed one of create.
        kinds = [d["kind"] for d in decisions(hardened, field)]
        assert kinds == ["allowed", "refused"], decisions(hardened, field)
        assert not judged.exists()
    assert hardened.list_ids() == []


@pytest.mark.parametrize("interp", ["rootfs", "env", "writable"])
def test_a_script_hook_with_an_untrusted_interpreter_is_refused(hardened, hbundle, tmp_path,
                                                                trusted_dir, busybox_rootfs,
                                                                interp):
    # The script is the operator's (root-owned, in a trusted directory, allowed); its #! line
    # names the image's shell, an env launcher, or a program anyone can rewrite.
    marker = tmp_path / "hook-ran"
    if interp == "rootfs":
        line = f"#!{busybox_rootfs}/bin/sh"
    elif interp == "env":
        line = "#!/usr/bin/env sh"
    else:
        (tmp_path / "shared").mkdir()
        shared = tmp_path / "shared" / "sh"  # busybox runs the applet of its name
        shutil.copy("/bin/busybox", shared)
        os.chmod(shared, 0o777)
        line = f"#!{shared}"
    script = allowed_script(hardened, trusted_dir, "hook.sh", f"{line}\ntouch {marker}\n")
    hbundle.config["hooks"] = {"prestart": [{"path": script}]}
    rc, out = policy_check(hardened, hbundle)
    r = hardened.cmd("run", "--bundle", hbundle.write(), hardened.id())
    assert not marker.exists(), "an untrusted interpreter ran as a host hook"
    assert r.returncode != 0 and "hooks.prestart[0].path" in r.stderr, r.stderr
    assert "interpreter" in r.stderr, r.stderr
    assert decision(hardened, "hooks.prestart[0].path")["kind"] == "refused"
    assert out["allowed"] is False
    assert checked(out, "hooks.prestart[0].path")["kind"] == "refused"


def test_an_allowed_script_hook_with_a_trusted_interpreter_runs(hardened, hbundle, tmp_path,
                                                                trusted_dir):
    marker = tmp_path / "hook-ran"
    script = allowed_script(hardened, trusted_dir, "hook.sh",
                            f"#!/bin/sh\ncat > /dev/null\necho \"$@\" > {marker}\n")
    hbundle.config["hooks"] = {"prestart": [{"path": script, "args": ["hook", "a", "b"]}]}
    r = hardened.cmd("run", "--bundle", hbundle.write(), hardened.id())
    assert r.returncode == 0, r.stderr
    assert marker.read_text() == "a b\n"
    assert decision(hardened, "hooks.prestart[0].path")["kind"] == "allowed"


# ---- class 3: what the state directory says at delete ----


@pytest.mark.parametrize("kind", ["poststop", "poststart"])
def test_a_hook_written_into_the_state_copy_after_create_never_runs(hardened, hbundle,
                                                                    tmp_path, kind):
    marker = tmp_path / "hook-ran"
    hbundle.args("sleep", "30")
    cid = hardened.id()
    hardened.cmd("create", "--bundle", hbundle.write(), cid, check=True)
    # What an attacker who can write another container's state directory does.
    copy = os.path.join(hardened.root, cid, "config.json")
    with open(copy) as f:
        cfg = json.load(f)
    cfg["hooks"] = {kind: [{"path": "/bin/sh", "args": ["sh", "-c", f"touch {marker}"]}]}
    with open(copy, "w") as f:
        json.dump(cfg, f)
    # Two layers stop it: the copy is not what create kept (its digest is in the container's
    # index), and a hook read back is judged again.  The first refuses the copy outright.
    copy_refused = "the copy is not what create kept"
    if kind == "poststart":
        r = hardened.cmd("start", cid)
        assert not marker.exists(), "a hook from the state directory ran at start"
        assert (r.returncode == 0 and "poststart[0]" in r.stderr) or \
            (r.returncode == 1 and copy_refused in r.stderr), r.stderr
    r = hardened.cmd("delete", "--force", cid)
    assert not marker.exists(), "a hook from the state directory ran as host root"
    # delete never fails for it, and the container is gone.
    assert r.returncode == 0, r.stderr
    if kind == "poststop":
        assert f"{kind}[0]" in r.stderr or copy_refused in r.stderr, r.stderr
    assert hardened.list_ids() == []
    refused = [d for d in hardened.audit() if d.get("event") == "decision" and
               d.get("kind") == "refused" and d.get("id") == cid and
               d.get("field") in (f"hooks.{kind}[0].path", "config.json")]
    assert refused, hardened.audit()


def test_a_state_that_names_a_looser_profile_does_not_let_an_injected_hook_run(hardened, hbundle,
                                                                              tmp_path):
    # The attacker also rewrites the profile the container's state.json names ("permissive":
    # audit only).  The profile this delete is bound to still judges the hook.
    marker = tmp_path / "hook-ran"
    hbundle.args("sleep", "30")
    cid = hardened.id()
    hardened.cmd("create", "--bundle", hbundle.write(), cid, check=True)
    copy = os.path.join(hardened.root, cid, "config.json")
    with open(copy) as f:
        cfg = json.load(f)
    cfg["hooks"] = {"poststop": [{"path": "/bin/sh", "args": ["sh", "-c", f"touch {marker}"]}]}
    with open(copy, "w") as f:
        json.dump(cfg, f)
    state = os.path.join(hardened.root, cid, "state.json")
    with open(state) as f:
        st = json.load(f)
    assert st["decided"]["profile"] == "default"
    st["decided"]["profile"] = "permissive"
    with open(state, "w") as f:
        json.dump(st, f)
    r = hardened.cmd("delete", "--force", cid)
    assert not marker.exists(), "a hook from the state directory ran under the profile it named"
    assert r.returncode == 0, r.stderr
    # The index (state.json's profile disagrees with it) and the copy's digest stop it before the
    # hook is judged again; either way it never runs and the refusal is on record.
    assert ("poststop[0]" in r.stderr and 'policy "default"' in r.stderr) or \
        "the copy is not what create kept" in r.stderr, r.stderr
    assert hardened.list_ids() == []
    refused = decisions(hardened, "hooks.poststop[0].path") + decisions(hardened, "config.json")
    assert refused and refused[-1]["kind"] == "refused"


def test_an_allowed_poststop_hook_still_runs_at_delete(hardened, hbundle, tmp_path,
                                                       trusted_dir):
    marker = tmp_path / "hook-ran"
    script = allowed_script(hardened, trusted_dir, "poststop.sh", f"#!/bin/sh\ncat > {marker}\n")
    hbundle.config["hooks"] = {"poststop": [{"path": script}]}
    cid = hardened.id()
    hardened.cmd("run", "--bundle", hbundle.write(), cid, check=True)
    assert json.loads(marker.read_text())["id"] == cid
    assert hardened.list_ids() == []


def test_a_poststop_hook_the_policy_stopped_allowing_while_run_waited_does_not_run(
        hardened, hbundle, tmp_path, trusted_dir):
    """`run` judges its poststop hooks again at its delete: the policy is read again there, and
    its parse at create is reused only when the bytes are the same (issue 19)."""
    marker = tmp_path / "hook-ran"
    script = allowed_script(hardened, trusted_dir, "poststop.sh", f"#!/bin/sh\ncat > {marker}\n")
    hbundle.config["hooks"] = {"poststop": [{"path": script}]}
    hbundle.args("sh", "-c", "echo up; read line")
    cid = hardened.id()
    p = subprocess.Popen([conftest.SEERUN,
                          *hardened.global_args, "run", "--bundle", hbundle.write(), cid],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    try:
        assert p.stdout.readline() == "up\n", p.stderr.read()
        # The operator withdraws the hook while the container runs.
        with_profile_hooks(hardened, [])
        out, err = p.communicate("go\n", timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 0, err
    assert not marker.exists(), "a hook the policy no longer allows ran at run's delete"
    assert "poststop[0]" in err, err
    assert hardened.list_ids() == []
    refused = decisions(hardened, "hooks.poststop[0].path")
    assert refused and refused[-1]["kind"] == "refused" and refused[-1].get("id") == cid, refused


# ---- the permissive profile: audit only ----


def test_the_permissive_profile_runs_hooks_as_written_and_records_them(tmp_path, busybox_rootfs):
    s = make_seerun(tmp_path, "permissive")
    try:
        path = tmp_path / "pbundle"
        path.mkdir()
        b = Bundle(path, busybox_rootfs, s)
        marker = tmp_path / "hook-ran"
        b.config["hooks"] = {"prestart": [{"path": "/bin/sh", "args": [
            "sh", "-c", f"echo $LD_BIND_NOW > {marker}"], "env": ["LD_BIND_NOW=1"]}]}
        r = s.cmd("run", "--bundle", b.write(), s.id())
        assert r.returncode == 0, r.stderr
        assert marker.read_text() == "1\n"
        d = decision(s, "hooks.prestart[0].path")
        assert d["kind"] == "allowed" and d["reason"] == "permissive", d
        assert d["applied"].startswith("refused: "), d
    finally:
        s.cleanup()
        check_no_leaks(s, tmp_path)
