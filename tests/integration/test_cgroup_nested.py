"""A container's cgroup with cgroups below it: `delete --force` kills the processes there and
removes the whole tree in every hierarchy.  The removal no longer reads a directory whose link
count says it has no subdirectory (issue 19); these tests keep the directories that do have
some honest."""
import os
import subprocess

from conftest import alive, wait_for


CGROUP_ROOT = "/sys/fs/cgroup"


def hierarchies():
    """The container's cgroup directories' parents: the v1 hierarchies, or the v2 root."""
    if os.path.exists(os.path.join(CGROUP_ROOT, "cgroup.controllers")):
        return [CGROUP_ROOT]
    out = []
    for name in sorted(os.listdir(CGROUP_ROOT)):
        p = os.path.join(CGROUP_ROOT, name)
        if name != "unified" and not os.path.islink(p) and \
                os.path.exists(os.path.join(p, "cgroup.procs")):
            out.append(p)
    return out


def test_delete_force_kills_and_removes_cgroups_nested_below_the_container(seerun, bundle):
    bundle.args("/bin/sleep", "1000")
    cid = seerun.id()
    seerun.cmd("create", "--bundle", bundle.write(), cid, check=True)
    seerun.cmd("start", cid, check=True)
    hs = hierarchies()
    made = []
    # A process of the host's placed two levels below the container's cgroup, in every
    # hierarchy: what a container with cgroup write access (or an agent) could leave.
    intruder = subprocess.Popen(["sleep", "1000"])
    try:
        for h in hs:
            d = os.path.join(h, cid, "nested", "deeper")
            os.makedirs(d)
            made.append(d)
            # A new cpuset cgroup has no cpus or mems, and no task can join it until it has.
            for sub in (os.path.dirname(d), d):
                for name in ("cpuset.cpus", "cpuset.mems"):
                    mine = os.path.join(sub, name)
                    if os.path.exists(mine):
                        with open(os.path.join(os.path.dirname(sub), name)) as f:
                            value = f.read().strip()
                        with open(mine, "w") as f:
                            f.write(value)
        for d in made:
            with open(os.path.join(d, "cgroup.procs"), "w") as f:
                f.write(str(intruder.pid))
        for d in made:
            with open(os.path.join(d, "cgroup.procs")) as f:
                assert str(intruder.pid) in f.read().split(), d
        r = seerun.cmd("delete", "--force", cid)
        assert r.returncode == 0, r.stderr
        wait_for(lambda: intruder.poll() is not None, what="the nested process's death")
        assert not alive(intruder.pid)
        for h in hs:
            assert not os.path.exists(os.path.join(h, cid)), f"{h}/{cid} left behind"
        assert cid not in seerun.list_ids()
    finally:
        if intruder.poll() is None:
            intruder.kill()
            intruder.wait()
        for d in reversed(made):
            for p in (d, os.path.dirname(d), os.path.dirname(os.path.dirname(d))):
                try:
                    os.rmdir(p)
                except OSError:
                    pass
        seerun.cmd("delete", "--force", cid)
