"""What seerun reads back from a container's state directory never widens what create decided
(issue 13, class 3): kill, kill --all, update, pause, resume, ps, events and delete --force act
on the init pid and the cgroup that state.json names.  A container (or anyone) that rewrites
state.json, recovery.json and the config.json copy could point them at a host process (kill
--all and delete --force SIGKILL a host daemon) or at a host cgroup or another container's
(update writes limits into it, pause freezes it, delete --force kills everything in it and
removes it).

Each test rewrites the files the way an attacker would, with a host process the test starts
(a `sleep` outside every container) and a host cgroup the test makes, or with another
container's init and cgroup, then runs the commands and checks what the host shows: the process
alive and not frozen, the cgroup there with its limits, the other container running; each
command refuses naming state.json; `delete --force` removes the container's own init, cgroup
and directory and names what it left alone."""
import json
import os
import subprocess
import time
import uuid

import pytest

from conftest import CGROUP_ROOT, alive, reap_children, start_time, wait_gone

V2 = os.path.exists(os.path.join(CGROUP_ROOT, "cgroup.controllers"))


def hierarchies():
    if V2:
        return [CGROUP_ROOT]
    out = []
    for name in sorted(os.listdir(CGROUP_ROOT)):
        d = os.path.join(CGROUP_ROOT, name)
        if os.path.isdir(d) and not os.path.islink(d) and \
                os.path.exists(os.path.join(d, "cgroup.procs")):
            out.append(d)
    return out


class HostCgroup:
    """A cgroup of the host's, outside every container, with a host `sleep` in it."""

    def __init__(self, name):
        self.path = "/" + name
        self.dirs = []
        self.proc = subprocess.Popen(["sleep", "600"])
        self.pid = self.proc.pid
        try:
            self._make()
        except BaseException:
            self.cleanup()
            raise

    def _make(self):
        for h in hierarchies():
            d = h + self.path
            os.mkdir(d)
            self.dirs.append(d)
            for name in ("cpuset.cpus", "cpuset.mems"):
                if not V2 and os.path.exists(os.path.join(d, name)):
                    with open(os.path.join(h, name)) as f:
                        value = f.read().strip()
                    with open(os.path.join(d, name), "w") as f:
                        f.write(value)
            with open(os.path.join(d, "cgroup.procs"), "w") as f:
                f.write(str(self.pid))
        self.memory = self._memory_file()
        with open(self.memory, "w") as f:
            f.write(str(512 << 20))
        self.memory_limit = self.read_memory()

    def _memory_file(self):
        if V2:
            return os.path.join(CGROUP_ROOT + self.path, "memory.max")
        return os.path.join(CGROUP_ROOT, "memory" + self.path, "memory.limit_in_bytes")

    def read_memory(self):
        with open(self.memory) as f:
            return f.read().strip()

    def frozen(self):
        if V2:
            with open(os.path.join(CGROUP_ROOT + self.path, "cgroup.freeze")) as f:
                return f.read().strip() != "0"
        with open(os.path.join(CGROUP_ROOT, "freezer" + self.path, "freezer.state")) as f:
            return f.read().strip() != "THAWED"

    def untouched(self):
        assert alive(self.pid), "the host process was killed"
        assert all(os.path.isdir(d) for d in self.dirs), "the host cgroup was removed"
        assert not self.frozen(), "the host cgroup was frozen"
        assert self.read_memory() == self.memory_limit, "limits were written into the host cgroup"

    def cleanup(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        deadline = time.monotonic() + 5
        for d in reversed(self.dirs):
            if not V2 and d.endswith("freezer" + self.path) and os.path.isdir(d):
                with open(os.path.join(d, "freezer.state"), "w") as f:
                    f.write("THAWED")
            while os.path.isdir(d):
                try:
                    os.rmdir(d)
                except OSError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.02)


def start(s, bundle, name):
    cid = s.id(name + uuid.uuid4().hex[:6])
    bundle.args("sleep", "600")
    s.cmd("run", "-d", "--bundle", bundle.write(), cid, check=True)
    return cid


def own_cgroups(cid):
    return [h for h in hierarchies() if os.path.isdir(h + "/" + cid)]


class Victim:
    """The attacker's container; on a failure (the old code), its init and cgroup are removed
    by hand, since its own record no longer leads to them."""

    def __init__(self, s, bundle):
        self.cid = start(s, bundle, "victim")
        self.init = s.state(self.cid)["pid"]
        self.init_start = start_time(self.init)
        self.cgroups = own_cgroups(self.cid)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        try:
            if alive(self.init) and start_time(self.init) == self.init_start:
                os.kill(self.init, 9)
        except OSError:
            pass
        deadline = time.monotonic() + 5
        for h in self.cgroups:
            d = h + "/" + self.cid
            while os.path.isdir(d) and time.monotonic() < deadline:
                reap_children()
                try:
                    os.rmdir(d)
                except OSError:
                    time.sleep(0.02)
        return False


def rewrite(s, cid, pid, cgroup_path):
    """state.json, recovery.json and the config.json copy name pid and cgroup_path."""
    sdir = os.path.join(s.root, cid)
    for name in ("state.json", "recovery.json"):
        with open(os.path.join(sdir, name)) as f:
            st = json.load(f)
        st["pid"], st["pidStartTime"] = pid, start_time(pid)
        st["cgroup"]["path"] = cgroup_path
        st["cgroup"]["created"] = True
        with open(os.path.join(sdir, name), "w") as f:
            json.dump(st, f)
    with open(os.path.join(sdir, "config.json")) as f:
        config = json.load(f)
    config["linux"]["cgroupsPath"] = cgroup_path
    with open(os.path.join(sdir, "config.json"), "w") as f:
        json.dump(config, f)


def refuses(s, *args):
    r = s.cmd(*args)
    assert r.returncode != 0, (args, r.stdout, r.stderr)
    assert "state.json" in r.stderr, (args, r.stderr)
    return r


COMMANDS = [("kill", "{cid}", "KILL"), ("kill", "--all", "{cid}", "KILL"),
            ("update", "--memory", "64m", "{cid}"), ("pause", "{cid}"), ("resume", "{cid}"),
            ("ps", "{cid}"), ("events", "--stats", "{cid}")]


def run_commands_and_delete(s, cid, init, untouched):
    for args in COMMANDS:
        refuses(s, *[a.format(cid=cid) for a in args])
        untouched()
    assert alive(init), "the container's own init was killed by a refused command"
    refusals = [e for e in s.audit() if e.get("field") == "state.json" and e.get("id") == cid]
    assert refusals and "index" in refusals[-1]["reason"], s.audit()[-3:]
    # delete --force removes what is provably the container's, and names what it refused.
    r = s.cmd("delete", "--force", cid)
    assert r.returncode == 0, r.stderr
    assert "state.json" in r.stderr, r.stderr
    untouched()
    wait_gone(init, what="delete --force to kill the container's own init")
    assert own_cgroups(cid) == [], "delete --force left the container's own cgroup"
    assert not os.path.exists(os.path.join(s.root, cid))
    assert not os.path.exists(os.path.join(s.root, ".index", cid))


@pytest.mark.parametrize("profile", ["hardened", "seerun"])
def test_a_state_json_rewritten_to_name_a_host_process_and_cgroup_reaches_neither(
        request, profile, bundle):
    s = request.getfixturevalue(profile)
    host = HostCgroup(s.prefix + "-hostcg")
    try:
        with Victim(s, bundle) as v:
            rewrite(s, v.cid, host.pid, host.path)
            # state does not report the host process as the container's.
            r = s.cmd("state", v.cid)
            assert str(host.pid) not in r.stdout, r.stdout
            run_commands_and_delete(s, v.cid, v.init, host.untouched)
    finally:
        host.cleanup()


def test_a_state_json_rewritten_to_name_another_container_leaves_that_container_alone(
        hardened, bundle):
    other = start(hardened, bundle, "other")
    other_state = hardened.state(other)
    other_cg = own_cgroups(other)
    assert other_cg
    mem = (os.path.join(CGROUP_ROOT, other, "memory.max") if V2 else
           os.path.join(CGROUP_ROOT, "memory", other, "memory.limit_in_bytes"))
    with open(mem) as f:
        other_limit = f.read().strip()
    v = Victim(hardened, bundle)
    rewrite(hardened, v.cid, other_state["pid"], "/" + other)

    def untouched():
        st = hardened.state(other)
        assert st["status"] == "running" and st["pid"] == other_state["pid"], st
        assert own_cgroups(other) == other_cg
        with open(mem) as f:
            assert f.read().strip() == other_limit, "update wrote into the other container"

    with v:
        run_commands_and_delete(hardened, v.cid, v.init, untouched)
    assert hardened.cmd("exec", other, "true").returncode == 0


def test_a_record_copied_from_another_container_is_refused(hardened, bundle):
    """state.json and recovery.json replaced by another container's (every field consistent,
    its id too): the index says which container this directory is."""
    other = start(hardened, bundle, "other")
    other_pid = hardened.state(other)["pid"]
    v = Victim(hardened, bundle)
    for name in ("state.json", "recovery.json"):
        with open(os.path.join(hardened.root, other, name)) as f:
            st = json.load(f)
        st["id"] = v.cid
        with open(os.path.join(hardened.root, v.cid, name), "w") as f:
            json.dump(st, f)

    def untouched():
        st = hardened.state(other)
        assert st["status"] == "running" and st["pid"] == other_pid, st
        assert own_cgroups(other)

    with v:
        run_commands_and_delete(hardened, v.cid, v.init, untouched)


def test_a_rewritten_state_json_that_claims_a_create_at_work_is_read_through_the_index(
        hardened, bundle):
    """While create is at work state.json may be a step behind the index, so a "creating"
    state.json is not refused: it is not believed either, the index's pid and cgroup are."""
    host = HostCgroup(hardened.prefix + "-hostcg")
    try:
        with Victim(hardened, bundle) as v:
            rewrite(hardened, v.cid, host.pid, host.path)
            for name in ("state.json", "recovery.json"):
                path = os.path.join(hardened.root, v.cid, name)
                with open(path) as f:
                    st = json.load(f)
                st["phase"], st["creatorPid"] = "creating", host.pid
                st["creatorStartTime"] = start_time(host.pid)
                with open(path, "w") as f:
                    json.dump(st, f)
            st = hardened.state(v.cid)
            assert st["status"] == "running" and st["pid"] == v.init, st
            r = hardened.cmd("update", "--memory", "64m", v.cid)
            assert r.returncode == 0, r.stderr
            host.untouched()
            r = hardened.cmd("kill", "--all", v.cid, "KILL")
            assert r.returncode == 0, r.stderr
            host.untouched()
            wait_gone(v.init, what="kill --all to reach the container's own init")
            r = hardened.cmd("delete", "--force", v.cid)
            assert r.returncode == 0, r.stderr
            host.untouched()
            assert own_cgroups(v.cid) == []
    finally:
        host.cleanup()


def test_a_directory_without_an_index_is_not_believed(hardened, bundle):
    """What a create killed right after publishing, or an older seerun, leaves: nothing confirms
    the record, so nothing it names is acted on, and delete --force says what it left alone."""
    host = HostCgroup(hardened.prefix + "-hostcg")
    try:
        with Victim(hardened, bundle) as v:
            rewrite(hardened, v.cid, host.pid, host.path)
            os.unlink(os.path.join(hardened.root, ".index", v.cid))
            st = hardened.state(v.cid)
            assert st["status"] == "stopped" and st["pid"] == 0, st
            for args in COMMANDS:
                r = hardened.cmd(*[a.format(cid=v.cid) for a in args])
                # ps and events of a stopped container show nothing; the others refuse.
                assert r.returncode != 0 or args[0] in ("ps", "events"), (args, r.stdout)
                assert str(host.pid) not in r.stdout, (args, r.stdout)
                host.untouched()
            r = hardened.cmd("delete", "--force", v.cid)
            assert r.returncode == 0, r.stderr
            assert "no index" in r.stderr and "left alone" in r.stderr, r.stderr
            assert str(host.pid) in r.stderr and host.path in r.stderr, r.stderr
            host.untouched()
            assert not os.path.exists(os.path.join(hardened.root, v.cid))
    finally:
        host.cleanup()


# ---- the config.json copy: hooks run from it as host root, exec takes its process and filter

def rewrite_config(s, cid, change):
    path = os.path.join(s.root, cid, "config.json")
    with open(path) as f:
        config = json.load(f)
    change(config)
    with open(path, "w") as f:
        json.dump(config, f)


def add_hook(kind, marker):
    def change(config):
        config.setdefault("hooks", {})[kind] = [
            {"path": "/bin/sh", "args": ["sh", "-c", f"echo ran > {marker}"]}]
    return change


@pytest.mark.parametrize("profile", ["hardened", "seerun"])
def test_a_poststop_hook_added_to_the_config_copy_does_not_run_at_delete(request, profile,
                                                                         bundle, tmp_path):
    s = request.getfixturevalue(profile)
    marker = tmp_path / "poststop-ran"
    cid = start(s, bundle, "victim")
    rewrite_config(s, cid, add_hook("poststop", marker))
    r = s.cmd("delete", "--force", cid)
    assert r.returncode == 0, r.stderr
    assert not marker.exists(), "delete ran a hook from the rewritten config.json copy"
    assert "config.json" in r.stderr and "poststop hooks skipped" in r.stderr, r.stderr
    assert not os.path.exists(os.path.join(s.root, cid))


def test_a_poststart_hook_added_to_the_config_copy_does_not_run_at_start(hardened, bundle,
                                                                         tmp_path):
    marker = tmp_path / "poststart-ran"
    cid = hardened.id("victim" + uuid.uuid4().hex[:6])
    hardened.cmd("create", "--bundle", bundle.args("sleep", "600").write(), cid, check=True)
    rewrite_config(hardened, cid, add_hook("poststart", marker))
    r = hardened.cmd("start", cid)
    assert not marker.exists(), "start ran a hook from the rewritten config.json copy"
    assert r.returncode != 0 and "config.json" in r.stderr, r.stderr
    assert hardened.cmd("delete", "--force", cid).returncode == 0


def test_a_seccomp_filter_dropped_from_the_config_copy_is_not_dropped_from_an_exec(
        hardened, bundle):
    bundle.linux["seccomp"] = {
        "defaultAction": "SCMP_ACT_ALLOW",
        "syscalls": [{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO"}]}
    cid = start(hardened, bundle, "victim")
    r = hardened.cmd("exec", cid, "mkdir", "/tmp/d1")
    assert r.returncode != 0, "the config's filter does not deny mkdir"
    rewrite_config(hardened, cid, lambda c: c["linux"].pop("seccomp"))
    r = hardened.cmd("exec", cid, "mkdir", "/tmp/d2")
    assert r.returncode != 0, "exec ran without the filter create applied"
    assert "config.json" in r.stderr, r.stderr
    assert hardened.cmd("delete", "--force", cid).returncode == 0


# ---- the index outlives a directory someone removed

@pytest.mark.parametrize("profile", ["hardened", "seerun"])
def test_delete_force_removes_what_the_index_records_when_the_directory_is_gone(
        request, profile, bundle):
    s = request.getfixturevalue(profile)
    with Victim(s, bundle) as v:
        import shutil
        shutil.rmtree(os.path.join(s.root, v.cid))
        r = s.cmd("delete", "--force", v.cid)
        assert r.returncode == 0, r.stderr
        # It says what it removed.
        assert "index" in r.stderr and str(v.init) in r.stderr, r.stderr
        wait_gone(v.init, what="delete --force to kill the container's init")
        assert own_cgroups(v.cid) == []
        assert not os.path.exists(os.path.join(s.root, ".index", v.cid))
        # Nothing left to act on: a second delete --force is the usual no-op.
        r = s.cmd("delete", "--force", v.cid)
        assert r.returncode == 0 and r.stderr == "", r.stderr


def status_in_state_and_list(s, cid):
    st = json.loads(s.cmd("state", cid, check=True).stdout)
    listed = {c["id"]: c for c in json.loads(s.cmd("list", "--format", "json",
                                                   check=True).stdout)}
    return (st["status"], st["pid"]), (listed[cid]["status"], listed[cid]["pid"])


def test_state_and_list_agree_on_an_init_that_left_its_cgroup(hardened, bundle):
    # The second look at the process: the init is the container's only while it is in the
    # recorded cgroup (in some v1 hierarchy, or in the v2 one).  list reads one hierarchy's
    # line first where it can (the cpuset one, for speed) and must not answer differently
    # from state, which reads them all.
    cid = start(hardened, bundle, "moved")
    init = json.loads(hardened.cmd("state", cid, check=True).stdout)["pid"]
    try:
        ours = own_cgroups(cid)
        cpuset = [h for h in ours if os.path.basename(h) == "cpuset"]
        for h in cpuset:  # out of the cpuset cgroup alone: still in the others
            with open(os.path.join(h, "cgroup.procs"), "w") as f:
                f.write(str(init))
        assert status_in_state_and_list(hardened, cid) == (("running", init),) * 2
        for h in ours:  # out of all of them: not the container's any more
            with open(os.path.join(h, "cgroup.procs"), "w") as f:
                f.write(str(init))
        assert status_in_state_and_list(hardened, cid) == (("stopped", 0),) * 2
    finally:
        # No longer the container's, so delete leaves it alone: ended here.
        os.kill(init, 9)
        wait_gone(init)
        hardened.cmd("delete", "--force", cid, check=True)


@pytest.mark.parametrize("own_userns", [True, False])
def test_a_record_naming_a_process_of_the_runtimes_user_namespace_is_not_believed(
        hardened, bundle, own_userns):
    # Every record (the index too) names a host process with its start time, moved into the
    # container's cgroups: only the user namespace tells it from the init create saw, in a
    # namespace of its own (ownUserns).  Where the record says the init had none, the same
    # process is the container's: the check, not something else, is what refuses it.
    with Victim(hardened, bundle) as v:
        host = subprocess.Popen(["sleep", "600"])
        try:
            for h in v.cgroups:
                with open(os.path.join(h, v.cid, "cgroup.procs"), "w") as f:
                    f.write(str(host.pid))
            paths = [os.path.join(hardened.root, v.cid, n) for n in
                     ("state.json", "recovery.json")] + [
                os.path.join(hardened.root, ".index", v.cid)]
            for path in paths:
                with open(path) as f:
                    st = json.load(f)
                assert st.get("ownUserns") is True or path.endswith("recovery.json"), st
                st["pid"], st["pidStartTime"] = host.pid, start_time(host.pid)
                if own_userns:
                    st["ownUserns"] = True
                else:
                    st.pop("ownUserns", None)
                with open(path, "w") as f:
                    json.dump(st, f)
            want = ("stopped", 0) if own_userns else ("running", host.pid)
            assert status_in_state_and_list(hardened, v.cid) == (want, want)
        finally:
            host.kill()
            host.wait()
        os.kill(v.init, 9)
        wait_gone(v.init)
        hardened.cmd("delete", "--force", v.cid, check=True)
