"""Red team against `seerun sandbox` (the code inside is hostile, the caller a root program).

Each test is an attack that worked when it was written: it fails until the break is fixed."""
import json
import os

import pytest


def result_bytes(sandbox, *command, opts=()):
    """Runs a sandbox and returns (CompletedProcess, the result document's raw bytes)."""
    sandbox.count += 1
    path = sandbox.tmp / f"redteam-result-{sandbox.count}.json"
    r = sandbox.seerun.cmd("sandbox", "--name", sandbox.seerun.id("sb"), f"--json={path}",
                           *opts, "--", *command)
    return r, path.read_bytes() if path.exists() else b""


# Byte sequences that look like UTF-8 by their lead byte but are not UTF-8 (RFC 3629): a
# UTF-16 surrogate, overlong encodings, a code point past U+10FFFF, an F5 lead.
NOT_UTF8 = [b"\xed\xa0\x80", b"\xe0\x80\xaf", b"\xf0\x80\x80\xaf", b"\xf4\x90\x80\x80",
            b"\xf5\x80\x80\x80"]


def _sh_name(b):
    return "".join("\\%03o" % c for c in b)


def test_result_document_stays_utf8_whatever_the_names_in_out_and_the_workspace(
        sandbox, tmp_path):
    """README: "Paths are printable: control bytes, backslashes and bytes that are not UTF-8
    as \\xNN".  sr_sandbox_collect_printable takes any lead byte 0xE0-0xF7 followed by continuation
    bytes as UTF-8, so surrogates, overlong forms and code points past U+10FFFF reach the
    result document raw (yajl_gen_validate_utf8 is off): the document is no longer UTF-8 JSON
    and a strict reader (Python's json, serde_json, ...) cannot read the result at all --
    the code corrupts the caller's result channel with one file name in /out or the
    workspace."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "keep").write_text("k\n")
    out = tmp_path / "out"
    script = "; ".join(f'printf x > "/out/a$(printf \'{_sh_name(b)}\')"; '
                       f'printf y > "/w/b$(printf \'{_sh_name(b)}\')"' for b in NOT_UTF8)
    r, doc = result_bytes(sandbox, "sh", "-c", script,
                          opts=("--out", str(out), "--workspace", f"{ws}:/w"))
    assert r.returncode == 0, r.stderr
    # The files were made (the attack ran) ...
    assert len(os.listdir(out)) == len(NOT_UTF8)
    # ... and the result document must still be UTF-8 JSON, naming them escaped.
    text = doc.decode("utf-8")  # UnicodeDecodeError on the current code
    result = json.loads(text)
    paths = [e["path"] for e in result["output"]["entries"]]
    assert sorted(paths) == sorted("a" + "".join("\\x%02x" % c for c in b) for b in NOT_UTF8)
    changes = [c["path"] for c in result["workspace"]["changes"]]
    assert sorted(changes) == sorted("b" + "".join("\\x%02x" % c for c in b) for b in NOT_UTF8)


def test_audit_log_stays_utf8_whatever_the_refused_names(sandbox, hardened, tmp_path):
    """The same bytes through the audit log: the sandbox-result line lists /out's refused
    entries (a symlink, say) with sr_sandbox_collect_printable, so one line of the operator's audit
    log is not UTF-8 (and `seerun review`, or any JSON-lines reader, trips on it)."""
    out = tmp_path / "out"
    script = "; ".join(f'ln -s /etc/passwd "/out/l$(printf \'{_sh_name(b)}\')"'
                       for b in NOT_UTF8)
    r, doc = result_bytes(sandbox, "sh", "-c", script, opts=("--out", str(out)))
    assert r.returncode == 0, r.stderr
    with open(hardened.audit_log, "rb") as f:
        lines = f.read().splitlines()
    assert lines
    for line in lines:
        json.loads(line.decode("utf-8"))  # UnicodeDecodeError on the current code


FORGED = '{"exitCode":0,"status":0,"timedOut":false,"signalledByCaller":false,"forged":true}'


def test_result_file_inside_out_is_not_replaced_by_the_codes(sandbox, tmp_path):
    """--json=FILE is opened (O_TRUNC) before the run and written through that descriptor at
    the end; /out is collected before.  With --out-overwrite and FILE inside HOSTDIR (one
    results directory for everything, as a CI job has it), the code's /out/result.json is
    collected "by name": the file seerun opened is unlinked and the code's put at FILE.
    seerun then writes the real result into the unlinked inode: the caller reads the code's
    forged document (here: exit 0, where the command exited 3)."""
    res = tmp_path / "results"
    res.mkdir()
    doc = res / "result.json"
    r = sandbox.seerun.cmd("sandbox", "--name", sandbox.seerun.id("sb"), "--out", str(res),
                           "--out-overwrite", f"--json={doc}", "--", "sh", "-c",
                           f"echo '{FORGED}' > /out/result.json; exit 3")
    assert r.returncode == 3, r.stderr
    result = json.loads(doc.read_text())
    assert "forged" not in result, "the result document at --json=FILE is the code's"
    assert result["exitCode"] == 3


def test_result_file_inside_the_workspace_is_not_replaced_by_the_codes(sandbox, tmp_path):
    """The README's own example, `seerun sandbox --workspace ~/src/app:/app --workdir /app
    --apply --json=r.json -- make fmt`, run from the checkout: r.json (created empty by seerun
    before the snapshot) is a file of the workspace, the code rewrites it at /app/r.json, and
    --apply renames the code's over it (unchanged on the host since the snapshot: seerun
    writes the real result through its descriptor only at the very end).  The workspace here
    is root's, as an agent framework running as root checks it out."""
    ws = tmp_path / "app"
    ws.mkdir()
    (ws / "main.c").write_text("int main(void){return 0;}\n")
    r = sandbox.seerun.cmd("sandbox", "--name", sandbox.seerun.id("sb"),
                           "--workspace", f"{ws}:/app", "--workdir", "/app", "--apply",
                           "--json=r.json", "--", "sh", "-c",
                           f"echo '{FORGED}' > /app/r.json; exit 4", cwd=str(ws))
    assert r.returncode == 4, r.stderr
    result = json.loads((ws / "r.json").read_text())
    assert "forged" not in result, "the result document at --json=FILE is the code's"
    assert result["exitCode"] == 4


def test_a_nested_git_directory_is_protected_too(sandbox, tmp_path):
    """`--protect`'s help says ".git always is", but only HOST/.git is: a workspace holding
    more than one repository (`--workspace ~/src:/src`, a vendored clone, a submodule checked
    out with its own .git) has every other .git writable inside and applied.  The code sets
    core.fsmonitor (or a hook) there, and the owner's next `git status` in that repository
    runs the code's program on the host, outside any sandbox."""
    ws = tmp_path / "src"
    for repo in ("app", "lib"):
        (ws / repo / ".git" / "hooks").mkdir(parents=True)
        (ws / repo / ".git" / "config").write_text("[core]\n\tbare = false\n")
        (ws / repo / "main.c").write_text("int main(void){return 0;}\n")
    before = (ws / "lib" / ".git" / "config").read_bytes()
    r = sandbox.run("sh", "-c",
                    "printf '\\tfsmonitor = /tmp/evil\\n' >> /src/lib/.git/config && "
                    "printf '#!/bin/sh\\necho pwned\\n' > /src/app/.git/hooks/pre-commit && "
                    "chmod 755 /src/app/.git/hooks/pre-commit",
                    opts=("--workspace", f"{ws}:/src", "--apply"))
    assert r.returncode == 0, r.stderr
    assert (ws / "lib" / ".git" / "config").read_bytes() == before
    assert not (ws / "app" / ".git" / "hooks" / "pre-commit").exists()


def test_seerun_killed_during_apply_leaves_nothing_in_the_workspace(sandbox, tmp_path):
    """"It dies with its caller ... the state it leaves is removed by the next `seerun
    sandbox` or `seerun gc`": but --apply writes each file beside its name
    (.seerun-apply.<random>) before renaming it, and nothing records those names.  The code
    makes the apply long (a large file; a driver's deadline is then likely to fall in it) and
    a SIGKILL of seerun there leaves the temporary file in HOST for good, whatever runs next
    (and the checkout half applied, which the apply's own rule calls worse than none)."""
    import signal
    import subprocess
    import time
    from conftest import SEERUN, wait_for
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("a\n")
    argv = [SEERUN, *sandbox.seerun.global_args, "sandbox", "--name", sandbox.seerun.id("sb"),
            "--workspace", f"{ws}:/w", "--apply", "--", "sh", "-c",
            "echo changed > /w/a.txt && head -c 400m /dev/zero | tr '\\0' x > /w/big"]
    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    try:
        def applying():
            return [n for n in os.listdir(ws) if n.startswith(".seerun-apply.")] or \
                p.poll() is not None
        seen = wait_for(applying, timeout=120, what="the apply writing into the workspace",
                        interval=0.001)
        assert seen is not True, "seerun ended before the apply was seen"
        p.send_signal(signal.SIGKILL)
    finally:
        if p.poll() is None:
            p.kill()
        p.wait()
    # What comes next cleans up after a killed sandbox.
    sandbox.seerun.cmd("gc")
    sandbox.ok("true")
    left = [n for n in os.listdir(ws) if n.startswith(".seerun-apply.")]
    assert left == [], f"left in the workspace after a killed apply: {left}"
