"""process.scheduler: a real-time policy, and the error that says what it needs when the
container's cpu cgroup has no real-time budget (a new v1 cpu cgroup has none)."""
import os

import pytest

RT_V1 = os.path.exists("/sys/fs/cgroup/cpu/cpu.rt_runtime_us")


@pytest.mark.skipif(not RT_V1, reason="no real-time group scheduling (cgroup v1 cpu controller)")
def test_sched_fifo_without_a_budget_fails_naming_what_it_needs(seerun, bundle):
    bundle.process["scheduler"] = {"policy": "SCHED_FIFO", "priority": 1}
    cid = seerun.id()
    r = seerun.cmd("run", "--bundle", bundle.write(), cid)
    assert r.returncode != 0
    assert "process.scheduler: sched_setattr SCHED_FIFO" in r.stderr, r.stderr
    assert "linux.resources.cpu.realtimeRuntime" in r.stderr, r.stderr
    assert "Operation not permitted" in r.stderr, r.stderr
    assert cid not in seerun.list_ids()


@pytest.mark.skipif(not RT_V1, reason="no real-time group scheduling (cgroup v1 cpu controller)")
def test_sched_fifo_with_the_budget_the_config_asks_for_runs_real_time(seerun, bundle):
    bundle.process["scheduler"] = {"policy": "SCHED_FIFO", "priority": 1}
    bundle.linux.setdefault("resources", {})["cpu"] = {"realtimeRuntime": 10000,
                                                       "realtimePeriod": 1000000}
    # /proc/self/stat fields 40 and 41: rt_priority and policy (1: SCHED_FIFO).
    bundle.shell("read -r line </proc/self/stat; set -- ${line##*) }; shift 37; echo $1 $2")
    r = seerun.cmd("run", "--bundle", bundle.write(), seerun.id())
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["1", "1"], r.stdout
