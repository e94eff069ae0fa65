"""The rest of runc's commands engines call: pause/resume, ps, events, update, features, and
checkpoint/restore saying clearly that they are not supported yet."""
import json
import os

import pytest

from conftest import read_userns_registry, wait_for, wait_for_host_ticks


@pytest.fixture
def running(seerun, bundle):
    bundle.shell("while :; do echo tick >> /dev/shm/ticks; sleep 0.05; done")
    cid = seerun.id()
    seerun.cmd("run", "-d", "--bundle", bundle.write(), cid, check=True)
    return cid, seerun.state(cid)["pid"]


def proc_state(pid):
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0]


def ticks(seerun, cid):
    r = seerun.cmd("exec", "--ignore-paused", cid, "wc", "-l", "/dev/shm/ticks")
    return int(r.stdout.split()[0]) if r.returncode == 0 else None


def test_pause_freezes_every_process_and_resume_thaws_them(seerun, running):
    cid, pid = running
    seerun.cmd("pause", cid, check=True)
    assert seerun.state(cid)["status"] == "paused"
    # A frozen task shows as sleeping in D/S, but its loop makes no progress (read from the
    # host: an exec would join the frozen cgroup).
    with open(f"/sys/fs/cgroup/freezer/{cid}/freezer.state") as f:
        assert f.read().strip() == "FROZEN"

    def host_ticks():
        with open(f"/proc/{pid}/root/dev/shm/ticks") as f:
            return len(f.read().splitlines())
    frozen_at = host_ticks()
    # Long enough for the loop to tick several times had it not been frozen.
    wait_for_host_ticks(6)
    assert host_ticks() == frozen_at
    r = seerun.cmd("pause", cid)
    assert r.returncode != 0 and "not running" in r.stderr
    r = seerun.cmd("exec", cid, "true")
    assert r.returncode == 255 and "paused" in r.stderr
    seerun.cmd("resume", cid, check=True)
    assert seerun.state(cid)["status"] == "running"
    before = ticks(seerun, cid)
    wait_for(lambda: ticks(seerun, cid) > before, what="the loop to tick again after resume")
    r = seerun.cmd("resume", cid)
    assert r.returncode != 0 and "not paused" in r.stderr


def test_list_tells_a_paused_container_from_a_running_one(seerun, running, bundle):
    # list reads the host's cgroup layout once for all containers (not once each): each
    # container's status still comes from its own freezer.
    cid, _ = running
    other = seerun.id("other")
    bundle.shell("sleep 300")
    seerun.cmd("run", "-d", "--bundle", bundle.write(), other, check=True)
    seerun.cmd("pause", cid, check=True)

    def statuses():
        rows = json.loads(seerun.cmd("list", "--format", "json", check=True).stdout)
        return {r["id"]: r["status"] for r in rows}
    assert statuses() == {cid: "paused", other: "running"}
    table = seerun.cmd("list", check=True).stdout.splitlines()[1:]
    assert {l.split()[0]: l.split()[2] for l in table} == {cid: "paused", other: "running"}
    seerun.cmd("resume", cid, check=True)
    assert statuses() == {cid: "running", other: "running"}


def test_a_paused_container_can_be_killed_and_deleted(seerun, running):
    cid, pid = running
    seerun.cmd("pause", cid, check=True)
    seerun.cmd("delete", "--force", cid, check=True)
    assert seerun.list_ids() == []


def test_ps_lists_the_containers_processes_as_json_pids_and_as_a_table(seerun, running):
    cid, pid = running
    pids = json.loads(seerun.cmd("ps", "--format", "json", cid, check=True).stdout)
    assert pid in pids
    for p in pids:
        try:
            with open(f"/proc/{p}/cgroup") as f:
                assert cid in f.read()
        except FileNotFoundError:
            pass  # one of the loop's `sleep 0.05`, gone since ps listed it
    table = seerun.cmd("ps", cid, check=True).stdout.splitlines()
    assert "PID" in table[0].split()
    col = table[0].split().index("PID")
    assert str(pid) in [line.split()[col] for line in table[1:]]
    table = seerun.cmd("ps", cid, "-o", "pid,comm", check=True).stdout.splitlines()
    assert table[0].split() == ["PID", "COMMAND"]


def test_events_stats_prints_runcs_json_shape(seerun, running):
    cid, _ = running
    line = seerun.cmd("events", "--stats", cid, check=True).stdout.strip().splitlines()
    assert len(line) == 1
    ev = json.loads(line[0])
    assert ev["type"] == "stats" and ev["id"] == cid
    data = ev["data"]
    assert data["pids"]["current"] >= 1
    assert data["memory"]["usage"]["usage"] > 0
    assert data["cpu"]["usage"]["total"] > 0
    for key in ("cpu", "memory", "pids", "blkio", "hugetlb"):
        assert key in data


def test_events_streams_until_the_container_stops(seerun, bundle):
    bundle.args("sleep", "1")
    cid = seerun.id()
    seerun.cmd("run", "-d", "--bundle", bundle.write(), cid, check=True)
    r = seerun.cmd("events", "--interval", "200ms", cid, timeout=10, check=True)
    events = [json.loads(line) for line in r.stdout.splitlines()]
    assert len(events) >= 2
    assert all(e["type"] == "stats" for e in events)


def test_update_changes_limits_of_a_running_container(seerun, running, tmp_path):
    cid, _ = running
    seerun.cmd("update", "--memory", "64m", "--pids-limit", "42", cid, check=True)
    with open(f"/sys/fs/cgroup/memory/{cid}/memory.limit_in_bytes") as f:
        assert int(f.read()) == 64 * 1024 * 1024
    with open(f"/sys/fs/cgroup/pids/{cid}/pids.max") as f:
        assert f.read().strip() == "42"
    # --resources - reads linux.resources from stdin, as containerd sends it.
    res = json.dumps({"pids": {"limit": 17}, "memory": {"limit": 32 * 1024 * 1024}})
    seerun.cmd("update", "--resources", "-", cid, input=res, stdin=None, check=True)
    with open(f"/sys/fs/cgroup/pids/{cid}/pids.max") as f:
        assert f.read().strip() == "17"
    with open(f"/sys/fs/cgroup/memory/{cid}/memory.limit_in_bytes") as f:
        assert int(f.read()) == 32 * 1024 * 1024
    r = seerun.cmd("update", "--memory", "lots", cid)
    assert r.returncode != 0 and "--memory" in r.stderr


def test_a_pids_limit_is_enforced_inside(seerun, bundle):
    bundle.linux["resources"]["pids"] = {"limit": 8}
    # Only shell builtins once the limit is reached: counting must not need a fork.
    # (busybox sh gives up on a failed fork, hence the subshell.)
    bundle.shell("(for i in $(seq 20); do sleep 5 & done) 2>/dev/null; set -- /proc/[0-9]*; "
                 "echo $#")
    cid = seerun.id()
    r = seerun.cmd("run", "--bundle", bundle.write(), cid)
    alive = int(r.stdout.strip().splitlines()[-1])
    assert 4 <= alive <= 8, r.stdout + r.stderr  # 21 without the limit


def test_features_describes_this_build_truthfully(seerun):
    f = json.loads(seerun.cmd("features", check=True).stdout)
    assert f["ociVersionMin"] == "1.0.0" and f["ociVersionMax"].startswith("1.3")
    assert set(f["hooks"]) == {"prestart", "createRuntime", "createContainer", "startContainer",
                                "poststart", "poststop"}
    assert "rro" in f["mountOptions"] and "idmap" in f["mountOptions"]
    assert set(f["linux"]["namespaces"]) == {"pid", "network", "mount", "ipc", "uts", "user",
                                             "cgroup", "time"}
    assert "CAP_SYS_ADMIN" in f["linux"]["capabilities"]
    assert f["linux"]["seccomp"]["enabled"] is True
    assert "SCMP_ACT_NOTIFY" in f["linux"]["seccomp"]["actions"]
    # The systemd driver is there whenever libsystemd can be loaded (as on any Debian).
    assert f["linux"]["cgroup"]["systemd"] is True
    assert f["linux"]["cgroup"]["systemdUser"] is False
    # Claimed only when built with libcriu and the criu binary starts (test_checkpoint.py).
    assert f["annotations"]["org.opencontainers.runc.checkpoint.enabled"] in ("true", "false")
    r = seerun.cmd("--criu", "/nonexistent/criu", "features", check=True)
    assert json.loads(r.stdout)["annotations"][
        "org.opencontainers.runc.checkpoint.enabled"] == "false"


def test_checkpoint_of_an_id_that_does_not_exist_says_so(seerun):
    r = seerun.cmd("checkpoint", "x")
    assert r.returncode == 1 and "does not exist" in r.stderr


def test_policy_show_prints_the_bound_profile(hardened):
    out = json.loads(hardened.cmd("policy", "show", check=True).stdout)
    assert out["profile"] == "default"
    assert out["settings"]["enforce"] is True
    assert out["settings"]["rootfs"]["readonly"] is True


def test_policy_check_prints_the_decisions_without_running_anything(hardened, bundle):
    bundle.process["capabilities"]["bounding"].append("CAP_SYS_ADMIN")
    r = hardened.cmd("policy", "check", "--bundle", bundle.write(), check=True)
    out = json.loads(r.stdout)
    assert out["allowed"] is True
    fields = {d["field"]: d for d in out["decisions"]}
    assert fields["process.capabilities.bounding"]["kind"] == "enforced"
    assert "CAP_SYS_ADMIN" not in fields["process.capabilities.bounding"]["applied"]
    assert fields["linux.namespaces.user"]["kind"] == "enforced"
    assert hardened.list_ids() == [] and hardened.audit() == []
    # A refusal: exit status 1, the decisions still printed.
    bundle.config["mounts"].append({"destination": "/host", "type": "none", "source": "/",
                                    "options": ["rbind", "ro"]})
    r = hardened.cmd("policy", "check", "--bundle", bundle.write())
    assert r.returncode == 1 and "mounts[" in r.stderr and "denied" in r.stderr
    assert json.loads(r.stdout)["allowed"] is False


def test_gc_releases_the_ranges_of_deleted_containers(hardened, bundle, tmp_path):
    bundle.args("sleep", "30")
    path = bundle.write()
    gone, live = hardened.id("gone"), hardened.id("live")
    hardened.cmd("run", "--bundle", path, "-d", gone, check=True)
    hardened.cmd("run", "--bundle", path, "-d", live, check=True)
    hardened.cmd("delete", "--force", gone, check=True)
    before = read_userns_registry(hardened.registry)
    assert len(before) == 2
    assert sorted(e["released"] > 0 for e in before.values()) == [False, True]
    # Within the grace period a deleted container keeps its range; --all forgets it.
    r = hardened.cmd("gc", check=True)
    assert r.stdout == "released 0 user namespace ranges\n"
    r = hardened.cmd("gc", "--all", check=True)
    assert r.stdout == "released 1 user namespace range\n"
    after = read_userns_registry(hardened.registry)
    assert list(after.values()) == [e for e in before.values() if e["released"] == 0]


@pytest.mark.parametrize("cmd", ["create", "run", "start", "state", "kill", "delete", "list",
                                 "exec", "ps", "events", "update", "pause", "resume", "spec",
                                 "features", "policy", "gc"])
def test_every_command_has_help_in_runcs_form(seerun, cmd):
    r = seerun.cmd(cmd, "--help", check=True)
    assert r.stdout.startswith(f"NAME:\n   seerun {cmd}\n")
    assert "USAGE:" in r.stdout and "DESCRIPTION:" in r.stdout
