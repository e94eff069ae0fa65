"""`seerun sandbox --workspace HOST:DEST [--apply]`: generated code edits a checkout without
being given the checkout (issue 14 item 9).

The user's story: an agent hands a checkout to code it does not trust.  The code sees it at
DEST, read-write, owned by the sandbox user; the checkout itself is not written while the code
runs.  Afterwards the result document lists what the code changed (added, modified, deleted,
with sizes); only with --apply are the changes copied back, and then only regular files,
directories and deletions, never through a symlink or outside the checkout, never over an
entry the host changed meanwhile, never into .git or a --protect path.

The code controls every byte of the copy's upper layer: the attacks below (symlinks and hard
links planted to reach outside, a workspace path swapped during the run, names with newlines,
deep trees, a full upper layer, overlay xattrs) are the code's, or a host race's."""
import hashlib
import json
import os
import subprocess

import pytest

from conftest import wait_for


def tree(path):
    """Every entry below path: type, mode, size, bytes' digest or link target, and times,
    so that "byte-identical" includes nothing having been touched."""
    out = {}
    for base, dirs, files in os.walk(path):
        for name in dirs + files:
            p = os.path.join(base, name)
            st = os.lstat(p)
            rel = os.path.relpath(p, path)
            if os.path.islink(p):
                what = "link:" + os.readlink(p)
            elif os.path.isfile(p):
                with open(p, "rb") as f:
                    what = hashlib.sha256(f.read()).hexdigest()
            else:
                what = "dir"
            out[rel] = (what, st.st_mode, st.st_size, st.st_ino, st.st_mtime_ns, st.st_ctime_ns)
    return out


@pytest.fixture
def checkout(tmp_path):
    """A small checkout: sources, a file to delete, a .git with a config."""
    ws = tmp_path / "checkout"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "main.py").write_text("print('hello')\n")
    (ws / "README").write_text("readme\n")
    (ws / "old.txt").write_text("to be deleted\n")
    (ws / ".git").mkdir()
    (ws / ".git" / "config").write_text("[core]\n")
    (ws / ".git" / "hooks").mkdir()
    return ws


def changes(result):
    return {c["path"]: c for c in result["workspace"]["changes"]}


EDIT = ("echo 'print(1)' >> /w/src/main.py && echo new > /w/new.txt && rm /w/old.txt && "
        "mkdir /w/pkg && printf 12345 > /w/pkg/mod.py")


def test_changes_listed_and_host_untouched_without_apply(sandbox, checkout):
    before = tree(checkout)
    r = sandbox.ok("sh", "-c", EDIT + " && cat /w/src/main.py && stat -c '%U %a' /w /w/src/main.py",
                   opts=("--workspace", f"{checkout}:/w"))
    # Inside: the edit happened, on files the sandbox user owns.
    assert "print('hello')\nprint(1)\n" in r.stdout
    assert "sandbox 755" in r.stdout and "sandbox 644" in r.stdout
    ws = r.result["workspace"]
    assert ws["directory"] == str(checkout) and ws["destination"] == "/w"
    assert ws["examined"] and ws["complete"] and ws["apply"] is None
    assert not ws["applyRequested"]
    c = changes(r.result)
    assert c["src/main.py"]["change"] == "modified" and c["src/main.py"]["size"] == 24
    assert c["new.txt"] == {"path": "new.txt", "change": "added", "type": "file", "size": 4}
    assert c["old.txt"]["change"] == "deleted" and c["old.txt"]["size"] == 14
    assert c["pkg"]["change"] == "added" and c["pkg"]["type"] == "directory"
    assert c["pkg/mod.py"]["size"] == 5
    # Copied up but unchanged: not a change.
    assert "src" not in c and "README" not in c
    assert (ws["added"], ws["modified"], ws["deleted"]) == (3, 1, 1)
    assert tree(checkout) == before


def test_apply_copies_the_changes_back(sandbox, checkout):
    r = sandbox.ok("sh", "-c", EDIT + " && chmod 4777 /w/new.txt",
                   opts=("--workspace", f"{checkout}:/w", "--apply"))
    ws = r.result["workspace"]
    assert ws["apply"]["complete"] and ws["apply"]["refused"] == 0, ws
    assert all(c["applied"] for c in ws["changes"])
    assert (checkout / "src" / "main.py").read_text() == "print('hello')\nprint(1)\n"
    assert (checkout / "new.txt").read_text() == "new\n"
    assert not (checkout / "old.txt").exists()
    assert (checkout / "pkg" / "mod.py").read_text() == "12345"
    # No set-id, sticky or world-write bit comes back; owned as the directory.
    st = os.stat(checkout / "new.txt")
    assert st.st_mode & 0o7777 == 0o775
    assert st.st_uid == os.stat(checkout).st_uid
    # Nothing of seerun's left in the checkout.
    assert not [n for n in os.listdir(checkout) if n.startswith(".seerun")]


def test_git_is_read_only_inside_and_never_applied(sandbox, checkout):
    before = tree(checkout / ".git")
    r = sandbox.run("sh", "-c",
                    "echo evil > /w/.git/config; echo $?; mkdir /w/.git/hooks/x; echo $?; "
                    "echo '#!/bin/sh' > /w/.git/hooks/pre-commit; echo $?; "
                    "rm -rf /w/.git 2>&1; echo done",
                    opts=("--workspace", f"{checkout}:/w", "--apply"))
    assert r.returncode == 0, r.stderr
    assert "Read-only file system" in r.stderr
    assert r.stdout.split()[:3] == ["2", "1", "2"], r.stdout
    assert tree(checkout / ".git") == before
    assert ".git" in r.result["workspace"]["protected"]
    for c in r.result["workspace"]["changes"]:
        assert not c["path"].startswith(".git/") or not c["applied"]


def test_protect_path_is_read_only_and_never_applied(sandbox, checkout):
    (checkout / "secrets").mkdir()
    (checkout / "secrets" / "key").write_text("k\n")
    before = tree(checkout / "secrets")
    r = sandbox.run("sh", "-c", "echo x > /w/secrets/key; echo $?; echo y > /w/secrets/new; "
                    "echo $?; echo z > /w/ok.txt",
                    opts=("--workspace", f"{checkout}:/w", "--protect", "secrets", "--apply"))
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["2", "2"], r.stdout
    assert tree(checkout / "secrets") == before
    assert (checkout / "ok.txt").read_text() == "z\n"
    assert r.result["workspace"]["protected"] == ["secrets", ".git"]


def test_protect_path_created_inside_is_listed_not_applied(sandbox, tmp_path):
    """A protected path that does not exist on the host cannot be made read-only inside; the
    code may create it in its copy, and --apply still never writes it."""
    ws = tmp_path / "plain"
    ws.mkdir()
    r = sandbox.ok("sh", "-c", "mkdir -p /w/.git/hooks && echo evil > /w/.git/hooks/post-checkout",
                   opts=("--workspace", f"{ws}:/w", "--apply"))
    c = changes(r.result)
    assert c[".git"]["applied"] is False and "protected" in c[".git"]["reason"]
    assert c[".git/hooks/post-checkout"]["applied"] is False
    assert os.listdir(ws) == []


def run_paused(sandbox, checkout, script, opts=()):
    """Starts a sandbox whose script prints `ready` and waits for a line on stdin."""
    result = sandbox.tmp / "paused.json"
    out = sandbox.tmp / "paused.out"
    f = open(out, "w")
    p = subprocess.Popen(sandbox.argv(f"--json={result}", "--workspace", f"{checkout}:/w",
                                      *opts, "--", "sh", "-c", script + "; echo ready; read x"),
                         stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.PIPE)
    f.close()
    wait_for(lambda: "ready" in out.read_text(), timeout=30, what="the command to edit")
    return p, result, out


def finish(p):
    p.communicate(b"go\n", timeout=60)


def test_a_host_change_during_the_run_is_refused_at_apply(sandbox, checkout):
    p, result, out = run_paused(sandbox, checkout,
                                "echo code > /w/README && echo code > /w/src/main.py && "
                                "rm /w/old.txt && echo code > /w/fresh.txt", ("--apply",))
    try:
        (checkout / "README").write_text("host edit\n")  # same name, edited by the host
        (checkout / "old.txt").write_text("host edit too\n")
        (checkout / "fresh.txt").write_text("host made it\n")
    finally:
        finish(p)
    assert p.returncode == 0, out.read_text()
    ws = json.loads(result.read_text())["workspace"]
    c = {x["path"]: x for x in ws["changes"]}
    for path in ("README", "old.txt", "fresh.txt"):
        assert c[path]["applied"] is False, c[path]
        assert "changed on the host during the run" in c[path]["reason"]
    assert c["src/main.py"]["applied"] is True
    assert not ws["apply"]["complete"] and ws["apply"]["refused"] == 3
    assert (checkout / "README").read_text() == "host edit\n"
    assert (checkout / "old.txt").read_text() == "host edit too\n"
    assert (checkout / "fresh.txt").read_text() == "host made it\n"
    assert (checkout / "src" / "main.py").read_text() == "code\n"


def test_symlinks_made_inside_are_listed_not_applied(sandbox, checkout):
    r = sandbox.ok("sh", "-c", "ln -s /etc/shadow /w/shadow && ln -s ../.. /w/src/up && "
                   "mkfifo /w/fifo", opts=("--workspace", f"{checkout}:/w", "--apply"))
    c = changes(r.result)
    assert c["shadow"]["type"] == "symlink" and c["shadow"]["applied"] is False
    assert "symbolic link" in c["shadow"]["reason"]
    assert c["src/up"]["applied"] is False
    assert c["fifo"]["type"] == "fifo" and c["fifo"]["applied"] is False
    assert not os.path.lexists(checkout / "shadow")
    assert not os.path.lexists(checkout / "src" / "up")
    assert not os.path.lexists(checkout / "fifo")


@pytest.fixture
def outside(tmp_path):
    d = tmp_path / "outside"
    d.mkdir()
    (d / "victim").write_text("precious\n")
    return d


def test_a_host_symlink_replaced_inside_never_leads_apply_out(sandbox, checkout, outside):
    """The checkout holds a symlink to a directory outside it; the code replaces it with a
    directory of files of the same names: --apply deletes the link and makes the directory,
    it never writes through the link."""
    os.symlink("../outside", checkout / "lnk")
    os.symlink("../outside/victim", checkout / "flnk")
    before = tree(outside)
    r = sandbox.ok("sh", "-c", "rm /w/lnk /w/flnk && mkdir /w/lnk && echo pwned > /w/lnk/victim "
                   "&& echo pwned > /w/flnk",
                   opts=("--workspace", f"{checkout}:/w", "--apply"))
    assert r.result["workspace"]["apply"]["complete"], r.result["workspace"]
    assert tree(outside) == before
    assert (checkout / "lnk").is_dir() and not (checkout / "lnk").is_symlink()
    assert (checkout / "lnk" / "victim").read_text() == "pwned\n"
    assert (checkout / "flnk").read_text() == "pwned\n"
    assert not (checkout / "flnk").is_symlink()


def test_a_host_symlink_deleted_inside_deletes_the_link_only(sandbox, checkout, outside):
    (checkout / "dir").mkdir()
    os.symlink("../../outside", checkout / "dir" / "lnk")
    os.symlink("../outside", checkout / "top")
    before = tree(outside)
    r = sandbox.ok("sh", "-c", "rm -rf /w/dir /w/top",
                   opts=("--workspace", f"{checkout}:/w", "--apply"))
    assert r.result["workspace"]["apply"]["complete"], r.result["workspace"]
    assert tree(outside) == before
    assert not os.path.lexists(checkout / "dir") and not os.path.lexists(checkout / "top")


def test_hard_links_never_carry_apply_out(sandbox, checkout, outside):
    """A host file hard-linked to one outside is replaced, not written through; a hard link
    the code makes is listed, not applied."""
    os.link(outside / "victim", checkout / "hl")
    before = (outside / "victim").read_text()
    r = sandbox.ok("sh", "-c", "echo pwned > /w/hl && ln /w/README /w/hl2",
                   opts=("--workspace", f"{checkout}:/w", "--apply"))
    c = changes(r.result)
    assert c["hl"]["applied"] is True
    assert (outside / "victim").read_text() == before
    assert (checkout / "hl").read_text() == "pwned\n"
    assert os.stat(checkout / "hl").st_ino != os.stat(outside / "victim").st_ino
    assert c["hl2"]["applied"] is False and "more than one link" in c["hl2"]["reason"]
    assert not os.path.lexists(checkout / "hl2")


def test_a_workspace_path_through_a_symlink_is_refused(sandbox, checkout, tmp_path):
    link = tmp_path / "via-link"
    os.symlink(checkout, link)
    r = sandbox.run("true", opts=("--workspace", f"{link}:/w", "--apply"))
    assert r.returncode == 125
    assert "symbolic link on the path" in r.stderr
    assert r.result["workspace"]["examined"] is False


def test_a_workspace_swapped_during_the_run_does_not_redirect_apply(sandbox, checkout, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    (other / "README").write_text("other's\n")
    before = tree(other)
    p, result, out = run_paused(sandbox, checkout, "echo code > /w/README && echo x > /w/new",
                                ("--apply",))
    moved = tmp_path / "moved"
    try:
        os.rename(checkout, moved)
        os.symlink(other, checkout)
    finally:
        finish(p)
    assert p.returncode == 0, out.read_text()
    assert tree(other) == before
    # The directory held from the start got the changes, wherever it is now.
    assert (moved / "README").read_text() == "code\n"
    assert (moved / "new").read_text() == "x\n"


def test_names_with_newlines_and_bad_bytes(sandbox, checkout):
    r = sandbox.ok("python3", "-c",
                   "import os\n"
                   "open('/w/a\\nb', 'w').write('1')\n"
                   "open(b'/w/\\xff\\x01', 'w').write('22')\n",
                   opts=("--workspace", f"{checkout}:/w", "--apply"))
    c = changes(r.result)
    assert c["a\\x0ab"]["size"] == 1 and c["a\\x0ab"]["applied"]
    assert c["\\xff\\x01"]["size"] == 2
    assert (checkout / "a\nb").read_text() == "1"
    assert os.path.exists(os.path.join(os.fsencode(checkout), b"\xff\x01"))


def test_a_deep_tree_makes_the_diff_incomplete_and_nothing_applied(sandbox, checkout):
    before = tree(checkout)
    r = sandbox.ok("sh", "-c", "cd /w && for i in $(seq 70); do mkdir d && cd d; done && "
                   "echo x > f && echo y > /w/README",
                   opts=("--workspace", f"{checkout}:/w", "--apply"))
    ws = r.result["workspace"]
    assert ws["complete"] is False and "deeper" in ws["incompleteReason"]
    assert ws["apply"]["applied"] == 0
    assert all(not c["applied"] and "incomplete" in c["reason"] for c in ws["changes"])
    assert tree(checkout) == before


def test_the_upper_layer_is_bounded(sandbox, checkout):
    r = sandbox.run("sh", "-c", "dd if=/dev/zero of=/w/big bs=1M count=8 2>&1; "
                    "i=0; while [ $i -lt 3000 ] && touch /w/f$i 2>/dev/null; do i=$((i+1)); done; "
                    "echo files $i",
                    opts=("--workspace", f"{checkout}:/w", "--workspace-size", "2m"))
    assert r.returncode == 0, r.stderr
    assert "No space left on device" in r.stdout
    files = int(r.stdout.split("files ")[1].split()[0])
    assert files < 3000  # the inode bound: 1024 for a 2m layer
    assert r.result["workspace"]["sizeBytes"] == 2 << 20
    big = changes(r.result)["big"]
    assert 0 < big["size"] <= 2 << 20
    # The host's disk got none of it.
    assert sorted(os.listdir(checkout)) == [".git", "README", "old.txt", "src"]


def test_overlay_xattrs_from_inside_do_not_delete(sandbox, checkout):
    """user.overlay.opaque is the code's to set (and means nothing to a trusted-xattr overlay);
    trusted.overlay.* cannot be set from inside."""
    r = sandbox.ok("python3", "-c",
                   "import os\n"
                   "os.setxattr('/w/src', 'user.overlay.opaque', b'y')\n"
                   "try:\n"
                   "    os.setxattr('/w/src', 'trusted.overlay.opaque', b'y'); print('set')\n"
                   "except OSError as e:\n"
                   "    print('refused', e.errno)\n",
                   opts=("--workspace", f"{checkout}:/w", "--apply"))
    assert "refused" in r.stdout
    assert [c for c in r.result["workspace"]["changes"] if c["change"] == "deleted"] == []
    assert (checkout / "src" / "main.py").exists()


def test_a_denied_workspace_is_refused_with_nothing_left(sandbox):
    r = sandbox.run("true", opts=("--workspace", "/etc:/w"))
    assert r.returncode == 125
    assert "denied host path" in r.stderr, r.stderr
    assert "--workspace /etc:/w (mounts[" in r.stderr, r.stderr


def test_options_need_a_workspace(sandbox):
    r = sandbox.run("true", opts=("--apply",))
    assert r.returncode == 125 and "need --workspace" in r.stderr
    r = sandbox.run("true", opts=("--workspace", "/tmp:/usr/x"))
    assert r.returncode == 125 and "overlaps the sandbox's own `/usr`" in r.stderr
    r = sandbox.run("true", opts=("--workspace", "/tmp:/w", "--protect", "../x"))
    assert r.returncode == 125 and "--protect" in r.stderr


def test_a_sparse_file_cannot_fill_the_host_at_apply(sandbox, checkout):
    """A terabyte-sized sparse file takes nothing of the upper layer; --apply writes no more
    than --workspace-size in all."""
    r = sandbox.ok("sh", "-c", "truncate -s 1T /w/sparse && echo ok > /w/small",
                   opts=("--workspace", f"{checkout}:/w", "--apply"))
    c = changes(r.result)
    assert c["sparse"]["size"] == 1 << 40
    assert c["sparse"]["applied"] is False and "--workspace-size" in c["sparse"]["reason"]
    assert not (checkout / "sparse").exists()
    assert (checkout / "small").read_text() == "ok\n"


def test_the_audit_log_has_the_workspace(sandbox, hardened, checkout):
    r = sandbox.ok("sh", "-c", "echo x > /w/new && ln -s / /w/root",
                   opts=("--workspace", f"{checkout}:/w", "--apply", "--protect", "src"))
    lines = {e["event"]: e for e in hardened.audit() if e.get("runId") == r.result["runId"]}
    start = lines["sandbox-start"]["workspace"]
    assert start == {"directory": str(checkout), "destination": "/w", "sizeBytes": 1 << 30,
                     "protected": ["src", ".git"], "apply": True}
    end = lines["sandbox-result"]["workspace"]
    assert (end["added"], end["modified"], end["deleted"]) == (2, 0, 0)
    assert "changes" not in end  # the counts only; the result document has the list
    assert end["apply"]["applied"] == 1 and end["apply"]["refused"] == 1
    assert end["apply"]["refusedEntries"] == [
        {"path": "root", "change": "added", "reason": "a symbolic link: listed, not applied"}]


def test_a_mount_below_the_workspace_is_neither_shown_nor_written(sandbox, checkout):
    """HOST's clone is not recursive: a filesystem mounted below HOST is not the code's to
    read, and --apply never crosses into it."""
    mnt = checkout / "mnt"
    mnt.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mnt)], check=True)
    try:
        (mnt / "private").write_text("other filesystem\n")
        before = tree(mnt)
        r = sandbox.ok("sh", "-c", "ls -A /w/mnt; echo pwned > /w/mnt/evil",
                       opts=("--workspace", f"{checkout}:/w", "--apply"))
        assert "private" not in r.stdout
        c = changes(r.result)
        assert c["mnt/evil"]["applied"] is False
        assert "another filesystem" in c["mnt/evil"]["reason"]
        assert tree(mnt) == before
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=True)


def test_names_the_apply_uses_planted_by_the_code(sandbox, checkout):
    """The code cannot make --apply fail, or write through, by planting files named like the
    apply's temporary files (once named for seerun's pid, which the code can guess: the pids
    after the host's last one)."""
    with open("/proc/sys/kernel/ns_last_pid") as f:
        last = int(f.read())
    # 1200 names for the 20 pids after the host's last: some are on the host before the
    # apply would make them, whatever its order.
    script = ("import os\n"
              "base = int(os.environ['BASE'])\n"
              "open('/w/src/main.py', 'w').write('edited')\n"
              "for seq in range(60):\n"
              "    for pid in range(base, base + 20):\n"
              "        open(f'/w/src/.seerun-apply.{pid}.{seq}', 'w').write('planted')\n")
    r = sandbox.ok("python3", "-c", script,
                   opts=("--workspace", f"{checkout}:/w", "--apply", "--env", f"BASE={last}"))
    assert r.result["workspace"]["apply"]["complete"], r.result["workspace"]["apply"]
    assert (checkout / "src" / "main.py").read_text() == "edited"
    planted = sorted(n for n in os.listdir(checkout / "src") if n.startswith(".seerun-apply."))
    assert planted == sorted(f".seerun-apply.{p}.{q}" for p in range(last, last + 20)
                             for q in range(60))


def test_a_whiteout_made_inside_is_a_deletion_only(sandbox, checkout, outside):
    """mknod c 0 0 (allowed without CAP_MKNOD) is what overlayfs takes for a whiteout: the
    code can delete its own copy's entries that way, and --apply deletes no more than rm
    would."""
    os.symlink("../outside/victim", checkout / "lnk")
    before = tree(outside)
    r = sandbox.run("python3", "-c",
                    "import os, stat\n"
                    "for p in ('/w/README', '/w/lnk', '/w/fresh'):\n"
                    "    try:\n"
                    "        if os.path.lexists(p): os.unlink(p)\n"
                    "        os.mknod(p, stat.S_IFCHR | 0o600, os.makedev(0, 0)); print('made', p)\n"
                    "    except OSError as e:\n"
                    "        print('refused', p, e.errno)\n",
                    opts=("--workspace", f"{checkout}:/w", "--apply"))
    assert r.returncode == 0, r.stderr
    assert tree(outside) == before
    c = changes(r.result)
    assert "fresh" not in c or c["fresh"]["applied"] is False
    assert not os.path.lexists(checkout / "fresh")
    assert c["README"]["change"] == "deleted" and not (checkout / "README").exists()


def test_a_command_killed_at_its_timeout_has_nothing_applied(sandbox, checkout):
    """Killed midway, its files may be half written: listed, not applied."""
    before = tree(checkout)
    r = sandbox.run("sh", "-c", "echo half > /w/README; sleep 60",
                    opts=("--workspace", f"{checkout}:/w", "--apply", "--timeout", "1"))
    assert r.returncode == 124
    c = changes(r.result)
    assert c["README"]["applied"] is False and "--timeout" in c["README"]["reason"]
    assert tree(checkout) == before


def test_the_workspace_as_working_directory_and_its_default_destination(sandbox, checkout):
    r = sandbox.ok("sh", "-c", "pwd && ls && echo x > made", opts=("--workspace", f"{checkout}:/work/app",
                                                             "--workdir", "/work/app"))
    assert r.stdout.splitlines()[0] == "/work/app" and "README" in r.stdout
    assert changes(r.result)["made"]["change"] == "added"
    r = sandbox.ok("ls", "/workspace", opts=("--workspace", str(checkout)))
    assert "README" in r.stdout
    assert r.result["workspace"]["destination"] == "/workspace"


# --- a killed or stopped --apply ----------------------------------------------------------------

def _kill_during_apply(sandbox, ws, sig, ignore=()):
    """A sandbox whose apply is long (a 400 MB file), sent sig once its temporary file is in
    ws; returns (the temporaries seen, the CompletedProcess-like (returncode, stderr), the
    result document or None)."""
    import signal  # noqa: F401 (sig is one of its constants)
    from conftest import SEERUN
    sandbox.count += 1
    result = sandbox.tmp / f"result-kill-{sandbox.count}.json"
    argv = [SEERUN, *sandbox.seerun.global_args, "sandbox", "--name", sandbox.seerun.id("sb"),
            f"--json={result}", "--workspace", f"{ws}:/w", "--apply", "--", "sh", "-c",
            "echo changed > /w/a.txt && head -c 400m /dev/zero | tr '\\0' x > /w/big"]
    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE)
    try:
        def big_temporary(name):
            try:
                return os.stat(ws / name).st_size > (1 << 20)
            except FileNotFoundError:
                return False

        # The big file's temporary, part written: a.txt's is renamed into place at once, so a
        # signal sent when that one shows may land after the apply (nothing left to reap).
        def applying():
            return [n for n in os.listdir(ws) if n.startswith(".seerun-apply.") and
                    n not in ignore and big_temporary(n)] or p.poll() is not None
        seen = wait_for(applying, timeout=120, what="the apply writing into the workspace",
                        interval=0.001)
        assert seen is not True, "seerun ended before the apply was seen"
        p.send_signal(sig)
        _, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
        p.wait()
    doc = json.loads(result.read_text()) if result.exists() and result.stat().st_size else None
    return seen, (p.returncode, err.decode(errors="replace")), doc


def _records(sandbox):
    return [n for n in os.listdir(sandbox.seerun.root) if n.startswith(".sandbox-apply")]


def test_gc_removes_the_temporary_of_a_killed_apply_and_says_so(sandbox, tmp_path):
    """seerun SIGKILLed while --apply writes a file (a driver's deadline): its temporary file
    is in HOST, and the record of it in the state root; `seerun gc` removes exactly that file
    (no other file of HOST), says so on stderr, and drops the record.  Each file is applied
    whole or not at all (a.txt is the old or the new one)."""
    import signal
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("a\n")
    (ws / ".seerun-apply.mine").write_text("the owner's, not seerun's\n")
    seen, (status, _), _ = _kill_during_apply(sandbox, ws, signal.SIGKILL,
                                              ignore=(".seerun-apply.mine",))
    assert status == -signal.SIGKILL
    assert _records(sandbox), "no record of the apply's temporaries in the state root"
    left = [n for n in os.listdir(ws)
            if n.startswith(".seerun-apply.") and n != ".seerun-apply.mine"]
    assert left, "the kill came after the apply: nothing to reap"
    r = sandbox.seerun.cmd("gc")
    assert r.returncode == 0, r.stderr
    for name in left:
        assert name in r.stderr, r.stderr
        assert not (ws / name).exists()
    assert (ws / ".seerun-apply.mine").read_text() == "the owner's, not seerun's\n"
    assert (ws / "a.txt").read_text() in ("a\n", "changed\n")
    assert not (ws / "big").exists() or (ws / "big").stat().st_size == 400 << 20
    assert _records(sandbox) == []


def test_a_killed_apply_whose_host_path_now_names_another_directory_is_not_reaped_into(
        sandbox, tmp_path):
    """The record names HOST by path and identity: HOST renamed away after the kill and a new
    directory made at its path (holding a file of the temporary's very name) is not the
    workspace -- gc removes nothing there, and says it left it alone."""
    import signal
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("a\n")
    seen, _, _ = _kill_during_apply(sandbox, ws, signal.SIGKILL)
    left = [n for n in os.listdir(ws) if n.startswith(".seerun-apply.")]
    assert left
    moved = tmp_path / "ws.moved"
    os.rename(ws, moved)
    ws.mkdir()
    for name in left:
        (ws / name).write_text("another directory's file\n")
    r = sandbox.seerun.cmd("gc")
    assert r.returncode == 0, r.stderr
    assert "left alone" in r.stderr and str(ws) in r.stderr, r.stderr
    for name in left:
        assert (ws / name).read_text() == "another directory's file\n"
        assert (moved / name).exists()  # not looked for anywhere but at the recorded path
    assert _records(sandbox) == []


def test_sigterm_during_apply_rolls_back_the_file_and_stops(sandbox, tmp_path):
    """The caller's SIGTERM while --apply writes a large file: that file's temporary is removed
    (the file is not applied), nothing after it is applied, seerun exits 143 and the result
    says the caller stopped it -- nothing of the apply's is left in HOST or the state root."""
    import signal
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("a\n")
    seen, (status, err), doc = _kill_during_apply(sandbox, ws, signal.SIGTERM)
    assert status == 143, err
    assert [n for n in os.listdir(ws) if n.startswith(".seerun-apply.")] == []
    assert not (ws / "big").exists()
    assert doc is not None and doc["signalledByCaller"] and doc["callerSignal"] == "SIGTERM", doc
    apply = doc["workspace"]["apply"]
    assert apply["complete"] is False
    big = [c for c in doc["workspace"]["changes"] if c["path"] == "big"][0]
    assert big["applied"] is False and "stopped by the caller's signal" in big["reason"], big
    assert _records(sandbox) == []


def test_a_nested_git_is_read_only_inside(sandbox, tmp_path):
    """Every .git below HOST's top (a second repository, a vendored clone) is read-only inside
    as HOST/.git is; a .git the code makes in its copy is writable there and never applied."""
    ws = tmp_path / "src"
    for repo in ("app", "vendor/lib"):
        (ws / repo / ".git" / "hooks").mkdir(parents=True)
        (ws / repo / ".git" / "config").write_text("[core]\n")
    (ws / "sub").mkdir()
    (ws / "sub" / ".git").write_text("gitdir: ../app/.git\n")  # a submodule's .git file
    script = ("for f in /src/app/.git/config /src/vendor/lib/.git/config /src/sub/.git "
              "/src/app/.git/hooks/pre-commit; do "
              "if (echo x >> $f) 2>/dev/null; then echo WROTE $f; fi; done; "
              "mkdir -p /src/new/.git && echo y > /src/new/.git/config && echo MADE")
    r = sandbox.ok("sh", "-c", script, opts=("--workspace", f"{ws}:/src", "--apply"))
    assert "WROTE" not in r.stdout, r.stdout
    assert "MADE" in r.stdout, r.stdout
    assert (ws / "app" / ".git" / "config").read_text() == "[core]\n"
    assert (ws / "vendor" / "lib" / ".git" / "config").read_text() == "[core]\n"
    assert (ws / "sub" / ".git").read_text() == "gitdir: ../app/.git\n"
    assert not (ws / "new" / ".git").exists()
