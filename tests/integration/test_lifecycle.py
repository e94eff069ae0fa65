"""The container lifecycle through runc's command line: create, start, state, kill, delete,
run and list, with the statuses, outputs and exit codes engines rely on."""
import json
import os
import signal
import subprocess

import pytest

from conftest import SEERUN, process_leaks, reap_children, wait_for


def test_run_foreground_returns_the_process_output_and_exit_status(seerun, bundle):
    bundle.shell("echo hello from $(hostname); exit 7")
    r = seerun.cmd("run", "--bundle", bundle.write(), seerun.id())
    assert r.returncode == 7, r.stderr
    assert r.stdout == "hello from seerun\n"
    # Without --keep, run removes the container after it exits.
    assert seerun.list_ids() == []


def test_run_reports_death_by_signal_as_128_plus_n(seerun, bundle):
    # Not pid 1 of a pid namespace, which ignores signals sent from inside it.
    bundle.linux["namespaces"] = [n for n in bundle.linux["namespaces"] if n["type"] != "pid"]
    bundle.shell("kill -KILL $$")
    r = seerun.cmd("run", "--bundle", bundle.write(), seerun.id())
    assert r.returncode == 128 + signal.SIGKILL, r.stderr


def test_create_start_state_and_delete_move_through_the_oci_statuses(seerun, bundle, tmp_path):
    bundle.shell("echo started > /dev/shm/mark; sleep 30")
    cid = seerun.id()
    pidfile = tmp_path / "pid"
    seerun.cmd("create", "--bundle", bundle.write(), "--pid-file", str(pidfile), cid, check=True)

    st = seerun.state(cid)
    assert st["status"] == "created"
    assert st["id"] == cid
    assert st["bundle"] == str(bundle.path)
    assert st["rootfs"] == bundle.config["root"]["path"]
    assert st["ociVersion"].startswith("1.")
    assert st["created"].endswith("Z")
    # runc's pid file: the host pid, no newline.
    assert pidfile.read_text() == str(st["pid"])
    # The init waits for start; the user process has not run yet.
    with open(f"/proc/{st['pid']}/cmdline", "rb") as f:
        assert b"sleep" not in f.read()

    seerun.cmd("start", cid, check=True)
    st = seerun.state(cid)
    assert st["status"] == "running"
    with open(f"/proc/{st['pid']}/cmdline", "rb") as f:
        assert f.read().split(b"\0")[0] == b"sleep"

    seerun.cmd("kill", cid, "KILL", check=True)
    wait_for(lambda: seerun.state(cid)["status"] == "stopped", what="stopped")
    assert seerun.state(cid)["pid"] == 0
    seerun.cmd("delete", cid, check=True)
    r = seerun.cmd("state", cid)
    assert r.returncode != 0 and "does not exist" in r.stderr


def test_state_is_right_after_the_runtime_exits_and_after_the_container_dies(seerun, bundle):
    bundle.shell("sleep 0.3")
    cid = seerun.id()
    seerun.cmd("run", "--detach", "--bundle", bundle.write(), cid, check=True)
    assert seerun.state(cid)["status"] == "running"
    wait_for(lambda: seerun.state(cid)["status"] == "stopped", what="the container to exit")


def test_start_of_a_container_that_is_not_created_fails(seerun, bundle):
    bundle.args("sleep", "30")
    cid = seerun.id()
    seerun.cmd("run", "--detach", "--bundle", bundle.write(), cid, check=True)
    r = seerun.cmd("start", cid)
    assert r.returncode != 0
    assert "not created" in r.stderr
    assert seerun.state(cid)["status"] == "running"


def test_delete_of_a_running_container_fails_without_force(seerun, bundle):
    bundle.args("sleep", "30")
    cid = seerun.id()
    seerun.cmd("run", "-d", "--bundle", bundle.write(), cid, check=True)
    pid = seerun.state(cid)["pid"]
    r = seerun.cmd("delete", cid)
    assert r.returncode != 0 and "not stopped" in r.stderr
    assert seerun.state(cid)["status"] == "running"
    seerun.cmd("delete", "--force", cid, check=True)
    assert not os.path.exists(f"/proc/{pid}/status") or "Z" in open(f"/proc/{pid}/stat").read().split()[2]
    assert seerun.list_ids() == []


def test_delete_force_of_an_unknown_id_succeeds(seerun):
    assert seerun.cmd("delete", "--force", "no-such-container").returncode == 0
    r = seerun.cmd("delete", "no-such-container")
    assert r.returncode != 0 and "does not exist" in r.stderr


def test_creating_an_existing_id_fails_and_leaves_the_first_alone(seerun, bundle):
    bundle.args("sleep", "30")
    cid = seerun.id()
    path = bundle.write()
    seerun.cmd("run", "-d", "--bundle", path, cid, check=True)
    pid = seerun.state(cid)["pid"]
    r = seerun.cmd("create", "--bundle", path, cid)
    assert r.returncode != 0 and "already exists" in r.stderr
    st = seerun.state(cid)
    assert st["status"] == "running" and st["pid"] == pid


@pytest.mark.parametrize("sig", ["TERM", "SIGTERM", "15"])
def test_kill_takes_signal_names_and_numbers(seerun, bundle, sig, tmp_path):
    # The trap leaves a mark only for SIGTERM: another signal would stop it without one.
    out = tmp_path / "out"
    out.mkdir()
    bundle.config["mounts"].append({"destination": "/out", "type": "bind", "source": str(out),
                                    "options": ["rbind", "rw"]})
    bundle.shell("trap 'echo term > /out/sig; exit 3' TERM; touch /out/trapped; "
                 "while :; do sleep 0.05; done")
    cid = seerun.id()
    seerun.cmd("run", "-d", "--bundle", bundle.write(), cid, check=True)
    wait_for((out / "trapped").exists, what="the shell to install its trap")
    seerun.cmd("kill", cid, sig, check=True)
    wait_for(lambda: seerun.state(cid)["status"] == "stopped", what="exit on SIGTERM")
    assert (out / "sig").read_text() == "term\n"


def test_kill_of_a_stopped_container_fails(seerun, bundle):
    cid = seerun.id()
    seerun.cmd("run", "--keep", "--bundle", bundle.write(), cid, check=True)
    assert seerun.state(cid)["status"] == "stopped"
    r = seerun.cmd("kill", cid, "KILL")
    assert r.returncode != 0 and "not running" in r.stderr


def test_kill_all_reaches_every_process(seerun, bundle):
    # Without a pid namespace, the init's death would not take its children along.
    bundle.linux["namespaces"] = [n for n in bundle.linux["namespaces"] if n["type"] != "pid"]
    bundle.shell("sleep 100 & sleep 100 & wait")
    cid = seerun.id()
    seerun.cmd("run", "-d", "--bundle", bundle.write(), cid, check=True)
    # The init and both sleeps, before the kill (else it could reach fewer and still pass).
    wait_for(lambda: len(process_leaks(seerun.prefix)) == 3, what="the container's 3 processes")
    seerun.cmd("kill", "--all", cid, "KILL", check=True)
    wait_for(lambda: seerun.state(cid)["status"] == "stopped", what="stopped")

    # Both sleeps died too (the init's death alone would not take them along), before any
    # delete could kill them.
    def all_dead():
        reap_children()
        return not process_leaks(seerun.prefix)
    wait_for(all_dead, what="every process of the container to die")


def test_list_shows_containers_in_table_json_and_quiet_forms(seerun, bundle):
    bundle.args("sleep", "30")
    path = bundle.write()
    a, b = seerun.id("a"), seerun.id("b")
    seerun.cmd("run", "-d", "--bundle", path, a, check=True)
    seerun.cmd("create", "--bundle", path, b, check=True)
    assert seerun.list_ids() == sorted([a, b])
    table = seerun.cmd("list", check=True).stdout.splitlines()
    assert table[0].split() == ["ID", "PID", "STATUS", "BUNDLE", "CREATED", "OWNER"]
    rows = {line.split()[0]: line.split() for line in table[1:]}
    assert rows[a][2] == "running" and rows[b][2] == "created"
    entries = {e["id"]: e for e in json.loads(seerun.cmd("list", "--format", "json", check=True).stdout)}
    assert entries[a]["status"] == "running" and entries[a]["pid"] > 0
    assert entries[b]["status"] == "created"


def test_list_of_an_empty_or_missing_root_is_empty(seerun):
    assert seerun.cmd("list", "--format=json", check=True).stdout.strip() == "[]"


def test_flags_are_accepted_with_equals_and_single_dash(seerun, bundle):
    bundle.shell("echo ok")
    r = subprocess.run([SEERUN,
                        f"--root={seerun.root}", "run", f"--bundle={bundle.write()}",
                        seerun.id()], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout == "ok\n", r.stderr
    r = subprocess.run([SEERUN, "-root", seerun.root, "run", "-bundle",
                        bundle.write(), seerun.id("b")], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout == "ok\n", r.stderr


def test_version_prints_runc_style_lines(seerun):
    out = seerun.cmd("--version", check=True).stdout.splitlines()
    assert out[0].startswith("seerun version ")
    assert out[1].startswith("commit: ")
    assert out[2].startswith("spec: 1.")


def test_json_log_lines_carry_level_msg_and_time(seerun, tmp_path):
    log = tmp_path / "log.json"
    r = seerun.cmd("--log", str(log), "--log-format", "json", "state", "nope")
    assert r.returncode != 0
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert lines[-1]["level"] == "error"
    assert "does not exist" in lines[-1]["msg"]
    assert lines[-1]["time"].endswith("Z")
