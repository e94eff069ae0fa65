"""Files changed (issue 16 slice d): what the code changed in its container's writable places,
in the activity record (the "activity" audit event and the sandbox's result document), walked
by the supervisor when the container stops, and `seerun review` flagging writes outside the
expected outputs (docs/audit.md)."""
import json
import os
import signal
import shutil
import subprocess
import time

import pytest

from conftest import (Bundle, Sandbox, make_profiled_seerun, make_norecord_seerun, check_no_leaks,
                      wait_for)


def activity_of(seerun, cid):
    ev = [e for e in seerun.audit() if e["event"] == "activity" and e["id"] == cid]
    assert len(ev) == 1, ev
    return ev[0]


def files_of(seerun, cid):
    return activity_of(seerun, cid)["record"]["files"]


def changes(files):
    return {c["path"]: c for c in files["changes"]}


def place(files, path):
    return [p for p in files["places"] if p["path"] == path][0]


def audit_line(seerun, cid):
    with open(seerun.audit_log) as f:
        return [l for l in f if '"event":"activity"' in l and cid in l][0]


def last_activity_id(seerun):
    return [e["id"] for e in seerun.audit() if e["event"] == "activity"][-1]


@pytest.fixture
def hbundle(make_hardened_bundle):
    return make_hardened_bundle("bundle")


WRITER = ("printf 12345 > /tmp/five; mkdir /tmp/dir; printf abc > /tmp/dir/three; "
          "echo gone > /tmp/gone; rm /tmp/gone; "
          "printf 1234567 > /out/result; mkdir /out/sub; : > /out/sub/empty; "
          "printf xx > /tmp/dir/three")


def test_sandbox_writes_in_tmp_and_out_are_recorded(sandbox, hardened):
    r = sandbox.ok("sh", "-c", WRITER)
    files = r.result["activity"]["files"]
    assert files["walked"] is True and files["complete"] is True, files
    ch = changes(files)
    # Net changes: a file made and removed in the run is no change; one written twice is
    # added with its last size.
    assert set(ch) == {"/tmp/five", "/tmp/dir", "/tmp/dir/three", "/out/result", "/out/sub",
                       "/out/sub/empty"}, ch
    assert all(c["change"] == "added" for c in ch.values())
    assert ch["/tmp/five"]["type"] == "file" and ch["/tmp/five"]["size"] == 5
    assert ch["/tmp/dir/three"]["size"] == 2
    assert ch["/tmp/dir"]["type"] == "dir" and "size" not in ch["/tmp/dir"]
    assert ch["/out/result"]["size"] == 7 and ch["/out/sub/empty"]["size"] == 0
    assert (files["added"], files["modified"], files["deleted"]) == (6, 0, 0)
    assert files["bytesAdded"] == 5 + 2 + 7
    tmp, out = place(files, "/tmp"), place(files, "/out")
    assert (tmp["role"], tmp["kind"], tmp["added"], tmp["bytesAdded"]) == ("scratch", "tmpfs", 3, 7)
    assert (out["role"], out["added"], out["bytesAdded"]) == ("output", 3, 7)
    assert out["deletions"] == "exact"
    # The audit event carries the same record.
    assert files_of(hardened, last_activity_id(hardened)) == files


def test_a_quiet_run_records_no_file_change_and_review_flags_nothing(sandbox, hardened):
    r = sandbox.ok("sh", "-c", "cat /etc/passwd > /dev/null; ls /tmp /out")
    files = r.result["activity"]["files"]
    assert files["walked"] is True and files["complete"] is True
    assert (files["added"], files["modified"], files["deleted"]) == (0, 0, 0), files
    assert files["changes"] == []
    # The sandbox's writable places are all there: scratch tmpfs, /out, and /dev.
    roles = {p["path"]: p["role"] for p in files["places"]}
    assert roles["/tmp"] == "scratch" and roles["/out"] == "output" and roles["/dev"] == "other"
    runs = json.loads(hardened.cmd("review", "--json", check=True).stdout)["runs"]
    assert len(runs) == 1 and runs[0]["flags"] == [], runs
    assert runs[0]["filesChanged"] == {"added": 0, "modified": 0, "deleted": 0,
                                       "lowerBound": False, "outsideOutputs": 0}


@pytest.fixture
def volume(tmp_path):
    # A host directory outside the tests' own (those hold the state root, a denied source).
    d = f"/tmp/sr-files-vol-{os.getpid()}-{os.urandom(3).hex()}"
    os.mkdir(d)
    for name, text in (("keep", "same"), ("change", "before"), ("remove", "old text"),
                       ("touchme", "t")):
        with open(os.path.join(d, name), "w") as f:
            f.write(text)
        os.chmod(os.path.join(d, name), 0o666)
    os.mkdir(os.path.join(d, "olddir"))
    with open(os.path.join(d, "olddir", "inner"), "w") as f:
        f.write("12")
    # Writable by the container's root, a user of its own namespace's range.
    os.chmod(os.path.join(d, "olddir"), 0o777)
    os.chmod(d, 0o777)
    yield d
    shutil.rmtree(d)


def test_a_bind_volume_added_modified_deleted_and_review_flags_it(hardened, hbundle, volume,
                                                                  tmp_path, busybox_rootfs):
    # A root of the test's own: /data's mount point is made in it (the shared one stays as it
    # is; files hard-linked, directories its own).
    own = tmp_path / "own-rootfs"
    shutil.copytree(busybox_rootfs, own, symlinks=True, copy_function=os.link)
    hbundle.config["root"]["path"] = str(own)
    hbundle.config["mounts"].append({"destination": "/data", "type": "bind", "source": volume,
                                     "options": ["rbind", "rw"]})
    hbundle.shell("echo after-the-change > /data/change; rm /data/remove; rm -r /data/olddir; "
                  "printf 123 > /data/new; touch /data/touchme; echo hi > /tmp/scratch")
    cid = hardened.id("vol")
    r = hardened.cmd("run", "--bundle", hbundle.write(), cid, timeout=60)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    files = files_of(hardened, cid)
    data = place(files, "/data")
    assert (data["kind"], data["role"], data["baseline"]) == ("bind", "other", "complete")
    ch = changes(files)
    assert ch["/data/new"]["change"] == "added" and ch["/data/new"]["size"] == 3
    assert ch["/data/change"]["change"] == "modified"
    assert ch["/data/change"]["size"] == len("after-the-change\n")
    assert ch["/data/touchme"]["change"] == "modified"  # its times
    assert ch["/data/remove"]["change"] == "deleted" and ch["/data/remove"]["size"] == 8
    assert ch["/data/olddir"]["change"] == "deleted"
    assert ch["/data/olddir/inner"]["change"] == "deleted"
    assert "/data/keep" not in ch
    assert (data["added"], data["modified"], data["deleted"]) == (1, 2, 3)
    assert data["bytesDeleted"] == 8 + 2 and data["deletions"] == "exact"
    assert ch["/tmp/scratch"]["change"] == "added"
    runs = {x["id"]: x for x in
            json.loads(hardened.cmd("review", "--json", check=True).stdout)["runs"]}
    flags = runs[cid]["flags"]
    assert [f["flag"] for f in flags] == ["writes-outside-outputs"], flags
    assert "/data (6)" in flags[0]["reason"] and "/tmp" not in flags[0]["reason"]
    assert runs[cid]["filesChanged"]["outsideOutputs"] == 6
    text = hardened.cmd("review", cid, check=True).stdout
    assert "FLAG writes-outside-outputs" in text
    assert "2 added, 2 modified, 3 deleted (6 outside" in text


def test_the_workspace_is_an_output_walked_against_its_lower_layer(sandbox, hardened, tmp_path):
    ws = f"/tmp/sr-files-ws-{os.getpid()}-{os.urandom(3).hex()}"
    os.makedirs(os.path.join(ws, "sub"))
    for name, text in (("edit", "old"), ("del", "12345"), ("keep", "k")):
        with open(os.path.join(ws, name), "w") as f:
            f.write(text)
    try:
        r = sandbox.ok("sh", "-c", "echo newer > /work/edit; rm /work/del; echo n > /work/sub/new",
                       opts=["--workspace", f"{ws}:/work"])
        files = r.result["activity"]["files"]
        work = place(files, "/work")
        assert (work["kind"], work["role"], work["baseline"]) == ("upper", "output", "lower layer")
        ch = changes(files)
        assert ch["/work/edit"]["change"] == "modified" and ch["/work/edit"]["size"] == 6
        assert ch["/work/del"] == {"change": "deleted", "path": "/work/del", "type": "file",
                                   "size": 5}, ch
        assert ch["/work/sub/new"]["change"] == "added"
        assert "/work/sub" not in ch and "/work/keep" not in ch  # copied up, unchanged
        assert (work["added"], work["modified"], work["deleted"]) == (1, 1, 1)
        # The host's directory is as it was (no --apply), and review flags nothing.
        with open(os.path.join(ws, "edit")) as f:
            assert f.read() == "old"
        runs = json.loads(hardened.cmd("review", "--json", check=True).stdout)["runs"]
        assert runs[-1]["flags"] == [], runs[-1]
    finally:
        shutil.rmtree(ws)


def test_hostile_names_are_valid_json(sandbox, hardened):
    script = ("import os\n"
              "os.close(os.open(b'/tmp/new\\nline', os.O_CREAT | os.O_WRONLY))\n"
              "os.close(os.open(b'/tmp/bad\\xff\\xfeutf8', os.O_CREAT | os.O_WRONLY))\n"
              "os.close(os.open(b'/tmp/quote\"back\\\\slash\\x1b[31m', os.O_CREAT | os.O_WRONLY))\n"
              "os.close(os.open(b'/tmp/' + b'L' * 250, os.O_CREAT | os.O_WRONLY))\n")
    r = sandbox.ok("python3", "-c", script)
    ch = changes(r.result["activity"]["files"])
    assert "/tmp/new\\x0aline" in ch, ch
    assert "/tmp/bad\\xff\\xfeutf8" in ch
    assert '/tmp/quote"back\\x5cslash\\x1b[31m' in ch
    long = [p for p in ch if p.startswith("/tmp/LLL")]
    assert len(long) == 1 and long[0].endswith("..."), long  # cut at the bound, said so
    # The audit line is one valid JSON line, ASCII only.
    line = audit_line(hardened, last_activity_id(hardened))
    assert line.count("\n") == 1 and line.isascii()
    json.loads(line)


def test_a_symlink_to_a_host_path_is_not_followed(sandbox, tmp_path):
    host = f"/tmp/sr-files-host-{os.getpid()}-{os.urandom(3).hex()}"
    os.makedirs(os.path.join(host, "sub"))
    open(os.path.join(host, "sub", "hostmarker"), "w").close()
    try:
        # Absolute and relative links, to a directory and to a file, made by the code, and a
        # directory swapped for a link while nothing runs.
        r = sandbox.ok("sh", "-c", f"ln -s {host} /tmp/abs; ln -s {host}/sub/hostmarker /tmp/f; "
                       f"ln -s ../../../../../../..{host} /tmp/rel; mkdir /tmp/d; "
                       f"ln -s {host}/sub /tmp/d/in")
        files = r.result["activity"]["files"]
        ch = changes(files)
        assert set(ch) == {"/tmp/abs", "/tmp/f", "/tmp/rel", "/tmp/d", "/tmp/d/in"}, ch
        assert all(c["type"] == "symlink" for p, c in ch.items() if p != "/tmp/d")
        assert ch["/tmp/abs"]["size"] == len(host)
        assert "hostmarker" not in json.dumps(files)
        assert files["added"] == 5
    finally:
        shutil.rmtree(host)


def test_a_million_files_and_a_deep_tree_stay_bounded(sandbox, hardened):
    n = 1000000
    script = (f"import os\nos.mkdir('/tmp/many')\nfor i in range({n}):\n"
              "    os.close(os.open('/tmp/many/%d' % i, os.O_CREAT | os.O_WRONLY, 0o644))\n"
              "os.mkdir('/tmp/deep'); os.chdir('/tmp/deep')\n"
              "for i in range(10000):\n    os.mkdir('d'); os.chdir('d')\n"
              "open('bottom', 'w').close()\nprint('made')\n")
    t0 = time.monotonic()
    r = sandbox.ok("python3", "-c", script, timeout=600, opts=["--timeout", "500"])
    elapsed = time.monotonic() - t0
    assert "made" in r.stdout
    files = r.result["activity"]["files"]
    assert files["walked"] is True and files["complete"] is False
    assert files["lowerBound"] is True
    tmp = place(files, "/tmp")
    assert tmp["cut"] in ("entries", "time") and tmp["deletions"] == "unknown"
    # Counts are lower bounds (the walk stopped at a bound), the details capped.
    assert 0 < files["added"] <= 200000
    assert len(files["changes"]) <= 32 * 3
    assert files["notListed"] == files["added"] + files["modified"] + files["deleted"] - \
        len(files["changes"])
    assert len(audit_line(hardened, last_activity_id(hardened))) <= 256 * 1024
    print(f"{n} files: the run took {elapsed:.1f}s, {files['added']} seen")


def test_a_deep_tree_is_cut_at_the_depth_bound(sandbox):
    script = ("import os\nos.chdir('/tmp')\n"
              "for i in range(10000):\n    os.mkdir('d'); os.chdir('d')\n"
              "open('bottom', 'w').close()\n")
    r = sandbox.ok("python3", "-c", script, timeout=120)
    files = r.result["activity"]["files"]
    tmp = place(files, "/tmp")
    assert tmp["cut"] == "depth" and files["lowerBound"] is True, tmp
    assert tmp["added"] == 33  # the directories down to the bound (32 below the root, +1 seen)
    assert not any("bottom" in c["path"] for c in files["changes"])


def test_record_off_records_no_files(tmp_path):
    s = make_norecord_seerun(tmp_path)
    try:
        r = Sandbox(s, tmp_path).ok("sh", "-c", "echo x > /tmp/x; echo y > /out/y")
        assert r.result["activity"] is None, r.result["activity"]
        assert [e for e in s.audit() if e["event"] == "activity"] == []
    finally:
        s.cleanup()
    check_no_leaks(s, tmp_path)


def test_a_killed_supervisor_leaves_an_incomplete_record(hardened, hbundle):
    hbundle.shell("echo x > /tmp/x; touch /tmp/ready; sleep 300")
    cid = hardened.id("killed")
    hardened.cmd("run", "-d", "--bundle", hbundle.write(), cid, check=True, timeout=30)
    statedir = os.path.join(hardened.root, cid)
    wait_for(lambda: hardened.cmd("exec", cid, "test", "-e", "/tmp/ready").returncode == 0,
             timeout=20, what="the writes")

    def flushed():
        try:
            with open(os.path.join(statedir, "activity.json")) as f:
                return json.load(f)["files"]["walked"] is False
        except (OSError, ValueError, KeyError, TypeError):
            return False
    wait_for(flushed, what="the record's flush")
    with open(os.path.join(statedir, "state.json")) as f:
        sup = json.load(f)["supervisor"]["pid"]
    os.kill(sup, signal.SIGKILL)
    hardened.cmd("delete", "--force", cid, check=True)
    ev = activity_of(hardened, cid)
    assert ev["complete"] is False and "supervisor" in ev["reason"]
    files = ev["record"]["files"]
    # What was flushed: the places, never walked (their changes are not known).
    assert files["walked"] is False and "added" not in files
    assert "/tmp" in [p["path"] for p in files["places"]]


def test_engine_lifecycle_create_start_delete_and_a_writable_root(tmp_path, busybox_rootfs):
    s = make_profiled_seerun(tmp_path, "rwroot", {"base": "default", "description": "writable root",
                                                  "rootfs": {"readonly": False}})
    root = tmp_path / "rootfs"
    subprocess.run(["cp", "-a", str(busybox_rootfs), str(root)], check=True)
    (root / "etc" / "motd").write_text("welcome\n")
    try:
        path = tmp_path / "bundle"
        path.mkdir()
        b = Bundle(path, root, s)
        b.config["root"]["readonly"] = False
        b.shell("echo owned > /etc/owned; rm /etc/motd; echo t > /tmp/t; "
                "touch /tmp/done")
        cid = s.id("engine")
        s.cmd("create", "--bundle", b.write(), cid, check=True)
        s.cmd("start", cid, check=True)
        wait_for(lambda: s.state(cid)["status"] == "stopped", what="the container's end")
        s.cmd("delete", cid, check=True)
        files = [e for e in s.audit() if e["event"] == "activity" and e["id"] == cid]
        assert len(files) == 1, files
        files = files[0]["record"]["files"]
        rootp = place(files, "/")
        assert (rootp["kind"], rootp["role"]) == ("root", "other")
        ch = changes(files)
        assert ch["/etc/owned"]["change"] == "added" and ch["/etc/owned"]["size"] == 6
        assert ch["/etc/motd"]["change"] == "deleted" and ch["/etc/motd"]["size"] == 8
        assert ch["/tmp/t"]["change"] == "added"  # the root's own /tmp here
        assert (rootp["added"], rootp["deleted"]) == (3, 1), rootp
        # /proc and /dev are mounts of their own: not counted as the root's.
        assert not any(p.startswith("/proc/") or p.startswith("/dev/") for p in ch)
        runs = {x["id"]: x for x in
                json.loads(s.cmd("review", "--json", check=True).stdout)["runs"]}
        assert [f["flag"] for f in runs[cid]["flags"]] == ["writes-outside-outputs"]
        assert "/ (4)" in runs[cid]["flags"][0]["reason"]
    finally:
        s.cleanup()
    check_no_leaks(s, tmp_path)
