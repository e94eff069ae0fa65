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
    as \\xNN".  sr_sandbox_printable takes any lead byte 0xE0-0xF7 followed by continuation
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
    entries (a symlink, say) with sr_sandbox_printable, so one line of the operator's audit
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
