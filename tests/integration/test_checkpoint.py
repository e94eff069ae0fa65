"""checkpoint and restore with CRIU: a restored container keeps running and keeps every hardened
promise of a new one (user namespace on its own range, read-only root, seccomp, no_new_privs),
an image that would widen them is refused, and what cannot work here says so.

Skipped only when this seerun was built without libcriu or the criu binary is unusable."""
import json
import os
import shutil
import subprocess

import pytest

from conftest import SEERUN, wait_for

CRIU = "/usr/local/sbin/criu"
COUNTER = "i=0; while true; do i=$((i+1)); echo $i > /dev/shm/count; sleep 0.05; done"


def _criu_usable():
    if not os.access(CRIU, os.X_OK):
        return False, f"no criu binary at {CRIU} (contrib/setup-criu.sh installs CRIU 4.1)"
    out = subprocess.run([SEERUN, "features"], capture_output=True, text=True).stdout
    if json.loads(out)["annotations"].get("org.opencontainers.runc.checkpoint.enabled") != "true":
        return False, "this seerun was built without libcriu, or `criu check` fails here"
    return True, ""


_ok, _why = _criu_usable()
pytestmark = pytest.mark.skipif(not _ok, reason=_why)


def count_of(pid):
    try:
        with open(f"/proc/{pid}/root/dev/shm/count") as f:
            return int(f.read().strip() or 0)
    except (OSError, ValueError):
        return 0


def status_of(pid):
    with open(f"/proc/{pid}/status") as f:
        return dict(line.split(":\t", 1) for line in f.read().splitlines() if ":\t" in line)


def read(path):
    with open(path) as f:
        return f.read()


def start_counter(s, bundle, cid):
    bundle.shell(COUNTER)
    s.cmd("run", "-d", "--bundle", bundle.write(), cid, check=True)
    pid = s.state(cid)["pid"]
    wait_for(lambda: count_of(pid) >= 3, timeout=15, what="the counter to count")
    return pid


@pytest.fixture
def hbundle(make_hardened_bundle):
    return make_hardened_bundle("hbundle")


def test_checkpoint_help_exits_zero(hardened):
    r = hardened.cmd("checkpoint", "--help")
    assert r.returncode == 0 and "--image-path" in r.stdout and "--leave-running" in r.stdout
    r = hardened.cmd("restore", "--help")
    assert r.returncode == 0 and "--bundle" in r.stdout


def test_features_claim_checkpoint_only_when_criu_is_usable(hardened):
    feats = json.loads(hardened.cmd("features", check=True).stdout)
    assert feats["annotations"]["org.opencontainers.runc.checkpoint.enabled"] == "true"
    opts = feats["annotations"]["io.seerun.checkpoint.options"]
    for refused in ("--pre-dump", "--lazy-pages", "--auto-dedup", "--empty-ns"):
        assert refused not in opts
    r = subprocess.run([SEERUN, "--criu", "/nonexistent/criu", "features"], capture_output=True,
                       text=True, check=True)
    assert json.loads(r.stdout)["annotations"][
        "org.opencontainers.runc.checkpoint.enabled"] == "false"


def test_hardened_counter_comes_back_counting_with_every_promise(hardened, hbundle, tmp_path,
                                                                 busybox_rootfs):
    """A counter in a container with a user namespace, a read-only root and seccomp, dumped and
    restored: it keeps counting, on the same user namespace range, with its root read-only
    again (a write fails and nothing lands on the host), Seccomp 2 and NoNewPrivs 1."""
    s = hardened
    cid = s.id("ctr")
    pid = start_counter(s, hbundle, cid)
    uid_map = read(f"/proc/{pid}/uid_map")
    assert status_of(pid)["Seccomp"].strip() == "2"
    img = tmp_path / "img"
    s.cmd("checkpoint", "--image-path", str(img), cid, check=True)
    before = int((img / "descriptors.json").exists()) and count_of(pid)
    assert cid not in s.list_ids(), "checkpoint without --leave-running removes the container"
    assert not os.path.exists(f"/proc/{pid}/status") or "Z" in status_of(pid).get("State", "Z")
    assert json.loads((img / "descriptors.json").read_text())[0], "runc's descriptors.json"

    s.cmd("restore", "--detach", "--image-path", str(img), "--bundle", hbundle.write(), cid,
          check=True)
    st = s.state(cid)
    assert st["status"] == "running"
    rpid = st["pid"]
    last = count_of(rpid)
    assert last >= 3
    wait_for(lambda: count_of(rpid) > last + 2, timeout=15,
             what="the restored counter to go on counting")
    # Same range, same promises.
    assert read(f"/proc/{rpid}/uid_map") == uid_map
    status = status_of(rpid)
    assert status["Seccomp"].strip() == "2"
    assert status["NoNewPrivs"].strip() == "1"
    root = [l for l in read(f"/proc/{rpid}/mountinfo").splitlines() if l.split()[4] == "/"]
    assert root and root[-1].split()[5].split(",")[0] == "ro", root
    probe = "checkpoint-probe-" + s.prefix
    r = s.cmd("exec", cid, "sh", "-c", f"echo x > /{probe}")
    assert r.returncode != 0 and "Read-only file system" in r.stderr
    assert not (busybox_rootfs / probe).exists(), "a write landed in the host's rootfs"
    events = [e["event"] for e in s.audit() if e.get("id") == cid]
    assert "checkpoint" in events and "restore" in events and "restored" in events
    assert "restore-landlock-lost" in events, "the lost Landlock domain is an audited decision"
    assert before is not None


def test_leave_running_and_an_image_of_a_running_id(hardened, hbundle, tmp_path):
    s = hardened
    cid = s.id("lr")
    pid = start_counter(s, hbundle, cid)
    img = tmp_path / "img"
    s.cmd("checkpoint", "--leave-running", "--image-path", str(img), cid, check=True)
    assert s.state(cid)["status"] == "running" and s.state(cid)["pid"] == pid
    last = count_of(pid)
    wait_for(lambda: count_of(pid) > last + 2, timeout=15, what="the container to keep counting")
    r = s.cmd("restore", "-d", "--image-path", str(img), "--bundle", hbundle.write(), cid)
    assert r.returncode == 1
    assert f"container `{cid}` exists (running)" in r.stderr
    assert s.state(cid)["pid"] == pid


def test_restore_under_a_new_id_is_refused_on_another_range(hardened, hbundle, tmp_path):
    """seerun never rewrites an image's user namespace: a new id gets its own range from the
    registry, the image's maps are another's, so the restore is refused (and the processes
    killed before they run); under the old id it works."""
    s = hardened
    cid, other = s.id("old"), s.id("new")
    start_counter(s, hbundle, cid)
    img = tmp_path / "img"
    s.cmd("checkpoint", "--image-path", str(img), cid, check=True)
    r = s.cmd("restore", "-d", "--image-path", str(img), "--bundle", hbundle.write(), other)
    assert r.returncode == 1
    assert "user namespace maps" in r.stderr and "does not rewrite" in r.stderr, r.stderr
    assert other not in s.list_ids()
    failed = [e for e in s.audit() if e.get("id") == other and e["event"] == "restore-failed"]
    assert failed, "the refusal is in the audit log"
    s.cmd("restore", "-d", "--image-path", str(img), "--bundle", hbundle.write(), cid, check=True)
    assert s.state(cid)["status"] == "running"


def test_restore_under_a_new_id_without_user_namespace(seerun, bundle, tmp_path):
    """Without a user namespace (the permissive profile) there are no maps to keep: a restore
    under a new id works and keeps counting."""
    s = seerun
    cid, other = s.id("p-old"), s.id("p-new")
    start_counter(s, bundle, cid)
    img = tmp_path / "img"
    s.cmd("checkpoint", "--image-path", str(img), cid, check=True)
    s.cmd("restore", "-d", "--image-path", str(img), "--bundle", bundle.write(), other,
          check=True)
    rpid = s.state(other)["pid"]
    last = count_of(rpid)
    wait_for(lambda: count_of(rpid) > last + 2, timeout=15, what="the restored counter to count")


def _varint(v):
    out = b""
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def test_tampered_image_mapping_host_root_is_refused(hardened, hbundle, tmp_path):
    """An image whose user namespace maps the container's root to host root (userns-*.img
    edited) is refused while the tasks are still stopped: nothing of it runs or remains."""
    s = hardened
    cid = s.id("tamper")
    pid = start_counter(s, hbundle, cid)
    host_first = int(read(f"/proc/{pid}/uid_map").split()[1])
    img = tmp_path / "img"
    s.cmd("checkpoint", "--image-path", str(img), cid, check=True)
    [userns] = [p for p in os.listdir(img) if p.startswith("userns-")]
    data = (img / userns).read_bytes()
    enc = _varint(host_first)
    assert data.count(enc) >= 2, "the uid and gid maps name the range"
    # The same length, value 0: host root.
    zero = b"\x80" * (len(enc) - 1) + b"\x00"
    (img / userns).write_bytes(data.replace(enc, zero))
    r = s.cmd("restore", "-d", "--image-path", str(img), "--bundle", hbundle.write(), cid)
    assert r.returncode == 1
    assert "user namespace maps" in r.stderr and "0 0 " in r.stderr, r.stderr
    assert cid not in s.list_ids()


def test_a_failure_putting_the_root_back_read_only_aborts(hardened, hbundle, tmp_path):
    s = hardened
    cid = s.id("fault")
    start_counter(s, hbundle, cid)
    img = tmp_path / "img"
    s.cmd("checkpoint", "--image-path", str(img), cid, check=True)
    r = s.cmd("restore", "-d", "--image-path", str(img), "--bundle", hbundle.write(), cid,
              env={**os.environ, "SEERUN_TEST_RESTORE_FAULT": "remount"})
    assert r.returncode == 1
    assert "read-only again: injected failure" in r.stderr and "killed" in r.stderr, r.stderr
    assert cid not in s.list_ids()


def test_pre_dump_is_refused_clearly(hardened, hbundle, tmp_path):
    s = hardened
    cid = s.id("pre")
    pid = start_counter(s, hbundle, cid)
    for flag in (["--pre-dump"], ["--auto-dedup"], ["--empty-ns", "network"]):
        r = s.cmd("checkpoint", *flag, "--image-path", str(tmp_path / "img"), cid)
        assert r.returncode == 1 and "not supported" in r.stderr, r.stderr
    r = s.cmd("checkpoint", "--pre-dump", "--image-path", str(tmp_path / "img"), cid)
    assert "soft-dirty" in r.stderr
    assert s.state(cid)["status"] == "running" and s.state(cid)["pid"] == pid


def test_missing_criu_is_named(hardened, hbundle, tmp_path):
    s = hardened
    cid = s.id("nocriu")
    pid = start_counter(s, hbundle, cid)
    saved = s.global_args
    s.global_args = saved + ["--criu", "/nonexistent/criu"]
    try:
        r = s.cmd("checkpoint", "--image-path", str(tmp_path / "img"), cid)
        assert r.returncode == 1
        assert "/nonexistent/criu" in r.stderr and "CRIU 4.0" in r.stderr, r.stderr
        r = s.cmd("restore", "--image-path", str(tmp_path / "img"), "--bundle",
                  hbundle.write(), s.id("x"))
        assert r.returncode == 1 and "/nonexistent/criu" in r.stderr
    finally:
        s.global_args = saved
    assert s.state(cid)["status"] == "running" and s.state(cid)["pid"] == pid


def test_idmapped_and_plain_binds_come_back_as_they_were(hardened, hbundle, tmp_path):
    """seerun's own set-up survives: an idmapped bind (host root's files are the container
    root's) and a plain one (they are nobody's) come back the same, given by seerun (never
    from the image), and a write through the idmapped bind lands on the host as root's."""
    s = hardened
    vol = tmp_path / "vol"
    vol.mkdir()
    (vol / "owned-by-root").write_text("")
    # An idmapped bind that lets the container act as on-disk root needs the profile's
    # mounts.idmappable (an operator's volume store).
    policy = json.loads(open(s.policy).read())
    policy["profiles"]["default"].setdefault("mounts", {})["idmappable"] = [str(tmp_path)]
    with open(s.policy, "w") as f:
        json.dump(policy, f)
    hbundle.linux["namespaces"].append({"type": "user"})
    # The policy puts the container on its own range whatever the config maps.
    hbundle.linux["uidMappings"] = [{"containerID": 0, "hostID": 300000, "size": 65536}]
    hbundle.linux["gidMappings"] = [{"containerID": 0, "hostID": 300000, "size": 65536}]
    hbundle.config["mounts"] += [
        {"destination": "/tmp/idmapped", "type": "bind", "source": str(vol),
         "options": ["bind", "rw", "idmap"]},
        {"destination": "/tmp/plain", "type": "bind", "source": str(vol),
         "options": ["bind", "ro"]}]
    cid = s.id("binds")
    start_counter(s, hbundle, cid)
    probe = "stat -c '%u' /tmp/idmapped/owned-by-root /tmp/plain/owned-by-root"
    assert s.cmd("exec", cid, "sh", "-c", probe, check=True).stdout.split() == ["0", "65534"]
    img = tmp_path / "img"
    s.cmd("checkpoint", "--image-path", str(img), cid, check=True)
    s.cmd("restore", "-d", "--image-path", str(img), "--bundle", hbundle.write(), cid,
          check=True)
    assert s.cmd("exec", cid, "sh", "-c", probe, check=True).stdout.split() == ["0", "65534"]
    s.cmd("exec", cid, "sh", "-c", "echo after > /tmp/idmapped/written", check=True)
    assert (vol / "written").read_text() == "after\n" and (vol / "written").stat().st_uid == 0
    r = s.cmd("exec", cid, "sh", "-c", "echo x > /tmp/plain/no")
    assert r.returncode != 0 and not (vol / "no").exists()


def test_an_image_asking_for_a_mount_seerun_did_not_decide_is_refused(hardened, hbundle,
                                                                       tmp_path):
    """The image names the mounts CRIU must bind from outside; seerun gives only the decided
    ones.  An image renaming one (here /proc/keys, masked with /dev/null, to a name seerun
    never gives) cannot make CRIU bind anything: the restore fails and nothing remains."""
    s = hardened
    cid = s.id("mnt")
    start_counter(s, hbundle, cid)
    img = tmp_path / "img"
    s.cmd("checkpoint", "--image-path", str(img), cid, check=True)
    [mnts] = [p for p in os.listdir(img) if p.startswith("mountpoints-")]
    data = (img / mnts).read_bytes()
    assert b"/proc/keys" in data
    (img / mnts).write_bytes(data.replace(b"/proc/keys", b"/etc/sh/ad"))
    r = s.cmd("restore", "-d", "--image-path", str(img), "--bundle", hbundle.write(), cid)
    assert r.returncode == 1 and "criu restore failed" in r.stderr, r.stderr
    assert cid not in s.list_ids()


def test_a_container_behind_the_egress_proxy_is_not_checkpointed(tmp_path, busybox_rootfs):
    from conftest import Bundle, check_no_leaks, make_seerun
    s = make_seerun(tmp_path, "default")
    try:
        with open(s.policy) as f:
            policy = json.load(f)
        policy["profiles"]["default"].setdefault("network", {}).update(
            {"proxy": True, "egress": {"allow": ["allowed.test:80"]}})
        with open(s.policy, "w") as f:
            json.dump(policy, f)
        path = tmp_path / "pbundle"
        path.mkdir()
        b = Bundle(path, busybox_rootfs, s)
        b.config.setdefault("annotations", {})["io.seerun.network"] = "proxy"
        cid = s.id("proxied")
        pid = start_counter(s, b, cid)
        r = s.cmd("checkpoint", "--image-path", str(tmp_path / "img"), cid)
        assert r.returncode == 1
        assert "egress proxy" in r.stderr and "decided.egressProxy" in r.stderr, r.stderr
        assert s.state(cid)["pid"] == pid and s.state(cid)["status"] == "running"
        assert not (tmp_path / "img" / "inventory.img").exists()
    finally:
        s.cleanup()
    check_no_leaks(s, tmp_path)


def test_a_tampered_seccomp_filter_is_refused(hardened, hbundle, tmp_path):
    """An image whose filters were rewritten to allow what seerun's built-in filter refuses
    (its `ret ERRNO` and `ret KILL` turned into `ret ALLOW`) still has a filter, so Seccomp
    would say 2: the filter stacks are compared with the built-in one, byte for byte."""
    s = hardened
    cid = s.id("sc")
    start_counter(s, hbundle, cid)
    img = tmp_path / "img"
    s.cmd("checkpoint", "--image-path", str(img), cid, check=True)
    data = (img / "seccomp.img").read_bytes()
    allow = bytes.fromhex("060000000000ff7f")
    tampered = data
    for ret in ("0600000001000500", "0600000026000500", "0600000000000080"):  # EPERM ENOSYS KILL
        tampered = tampered.replace(bytes.fromhex(ret), allow)
    assert tampered != data
    (img / "seccomp.img").write_bytes(tampered)
    r = s.cmd("restore", "-d", "--image-path", str(img), "--bundle", hbundle.write(), cid)
    assert r.returncode == 1
    assert "built-in seccomp filter is mandatory" in r.stderr, r.stderr
    assert cid not in s.list_ids()


def test_a_profile_can_refuse_a_restore_without_landlock(hardened, hbundle, tmp_path):
    """CRIU cannot restore a Landlock domain: a profile with restoreWithoutLandlock false
    refuses the restore (audited, naming the knob) instead of running the processes
    unconfined."""
    s = hardened
    cid = s.id("ll")
    start_counter(s, hbundle, cid)
    img = tmp_path / "img"
    s.cmd("checkpoint", "--image-path", str(img), cid, check=True)
    with open(s.policy) as f:
        policy = json.load(f)
    policy["profiles"]["default"]["restoreWithoutLandlock"] = False
    with open(s.policy, "w") as f:
        json.dump(policy, f)
    shown = json.loads(s.cmd("policy", "show", check=True).stdout)
    assert json.dumps(shown).count('"restoreWithoutLandlock": false') == 1
    r = s.cmd("restore", "-d", "--image-path", str(img), "--bundle", hbundle.write(), cid)
    assert r.returncode == 1 and "restoreWithoutLandlock" in r.stderr, r.stderr
    refusals = [e for e in s.audit() if e.get("id") == cid and e["event"] == "refuse"]
    assert refusals and refusals[-1]["knob"] == "restoreWithoutLandlock"
    assert cid not in s.list_ids()


def test_restore_in_the_foreground_waits_and_gives_the_exit_status(hardened, hbundle, tmp_path):
    s = hardened
    cid = s.id("fg")
    hbundle.shell("i=0; while [ $i -lt 40 ]; do i=$((i+1)); echo $i > /dev/shm/count; "
                  "sleep 0.05; done; exit 7")
    s.cmd("run", "-d", "--bundle", hbundle.write(), cid, check=True)
    pid = s.state(cid)["pid"]
    wait_for(lambda: count_of(pid) >= 3, timeout=15, what="the counter to count")
    img = tmp_path / "img"
    s.cmd("checkpoint", "--image-path", str(img), cid, check=True)
    pidfile = tmp_path / "restored.pid"
    r = s.cmd("restore", "--image-path", str(img), "--pid-file", str(pidfile), "--bundle",
              hbundle.write(), cid)
    assert r.returncode == 7, r.stderr
    assert pidfile.read_text().strip().isdigit()
    assert s.state(cid)["status"] == "stopped"


def test_a_killed_restores_mounts_are_swept_by_the_next_restore(hardened, hbundle, tmp_path):
    """What a restore attaches for CRIU (/run/seerun-restore/<pid>.<id>) outlives it only
    when it is killed; the next restore removes it once that process is gone."""
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = f"/run/seerun-restore/{dead.pid}.{hardened.prefix}-killed"
    os.makedirs(stale)
    subprocess.run(["mount", "-t", "tmpfs", "none", stale], check=True)
    try:
        s = hardened
        cid = s.id("sweep")
        start_counter(s, hbundle, cid)
        img = tmp_path / "img"
        s.cmd("checkpoint", "--image-path", str(img), cid, check=True)
        s.cmd("restore", "-d", "--image-path", str(img), "--bundle", hbundle.write(), cid,
              check=True)
        assert not os.path.exists(stale)
        assert stale not in read("/proc/self/mountinfo")
        assert not [e for e in os.listdir("/run/seerun-restore") if hardened.prefix in e]
    finally:
        subprocess.run(["umount", stale], stderr=subprocess.DEVNULL)
        shutil.rmtree(stale, ignore_errors=True)


def test_a_tampered_image_granting_capabilities_is_killed_before_it_resumes(hardened, hbundle,
                                                                             tmp_path):
    """The image's credentials (core-*.img) edited to add CAP_SYS_ADMIN to every set: CRIU
    would restore it (the tasks hold it in their user namespace: mounts, unshare); seerun's
    check of every stopped task (pre-resume) finds capabilities beyond those decided, kills
    them before they run again and removes everything."""
    s = hardened
    cid = s.id("caps")
    pid = start_counter(s, hbundle, cid)
    cap_eff = int(status_of(pid)["CapEff"], 16)
    img = tmp_path / "img"
    s.cmd("checkpoint", "--image-path", str(img), cid, check=True)
    wider = cap_eff | (1 << 21)  # CAP_SYS_ADMIN
    old, new = _varint(cap_eff & 0xFFFFFFFF), _varint(wider & 0xFFFFFFFF)
    assert len(old) == len(new)
    changed = 0
    for name in os.listdir(img):
        if name.startswith("core-"):
            data = (img / name).read_bytes()
            if old in data:
                (img / name).write_bytes(data.replace(old, new))
                changed += 1
    assert changed
    r = s.cmd("restore", "-d", "--image-path", str(img), "--bundle", hbundle.write(), cid)
    assert r.returncode == 1
    assert "beyond those decided" in r.stderr and "killed" in r.stderr, r.stderr
    assert cid not in s.list_ids()
    failed = [e for e in s.audit() if e.get("id") == cid and e["event"] == "restore-failed"]
    assert failed and "capabilities" in failed[-1]["error"]


def children_of(pid):
    try:
        return [int(c) for c in read(f"/proc/{pid}/task/{pid}/children").split()]
    except OSError:
        return []


def test_a_zombie_in_the_image_does_not_fail_the_restore(hardened, hbundle, tmp_path):
    """A child that has exited and is not yet reaped is dumped as a zombie; CRIU recreates it
    with its own credentials (it runs no code, so CRIU restores none). It is not a task holding
    capabilities: the restore goes on, and every live task is still checked."""
    s = hardened
    cid = s.id("zombie")
    # After the exec, the init (sleep) never reaps its first child: a zombie until the end.
    hbundle.shell("sleep 0 & exec sleep 1000")
    s.cmd("run", "-d", "--bundle", hbundle.write(), cid, check=True)
    pid = s.state(cid)["pid"]
    wait_for(lambda: any("Z" in status_of(c).get("State", "") for c in children_of(pid)),
             timeout=15, what="the init's child to be a zombie")
    caps = {k: status_of(pid)[k] for k in ("CapPrm", "CapEff", "CapBnd")}
    img = tmp_path / "img"
    s.cmd("checkpoint", "--image-path", str(img), cid, check=True)
    r = s.cmd("restore", "--detach", "--image-path", str(img), "--bundle", hbundle.write(), cid)
    assert r.returncode == 0, r.stderr
    st = s.state(cid)
    assert st["status"] == "running"
    rpid = st["pid"]
    status = status_of(rpid)
    assert status["Seccomp"].strip() == "2" and status["NoNewPrivs"].strip() == "1"
    assert {k: status[k] for k in caps} == caps, "the live init keeps the decided capabilities"
    zombies = [c for c in children_of(rpid) if "Z" in status_of(c).get("State", "")]
    assert zombies, "the zombie came back as a zombie"
    s.cmd("delete", "--force", cid, check=True)
    assert not os.path.exists(f"/proc/{rpid}/status") or "Z" in status_of(rpid).get("State", "Z")
