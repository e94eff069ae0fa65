"""Hostile config.json files under the default profile (issues 3 and 4): each is neutralised
(the container runs, with what the profile allows) or refused with an error naming the field,
and either way the decision is in the audit log.  Then the configs engines really write (podman
4.3, Docker 20.10, ctr) run unmodified under the same profile."""
import json
import os
import resource
import shutil
import subprocess
import uuid

import pytest

from conftest import SEERUN
from test_escape import (ALLOWED_MASK, CAP_NAMES, attacker, container_pids, decision,
                         decisions, device_rules, host_namespaces, memory_max, parse, pids_max,
                         probe_dir, run_probe, status_of, wait_stopped)

assert probe_dir  # a fixture, imported for the tests below


def refused(s, r, field, *words, said=None):
    """The run failed, naming the field (or what `said` gives) and words on stderr, and the
    audit log has the refusal of that field."""
    assert r.returncode != 0, f"not refused: {r.stdout}"
    assert (said or field) in r.stderr, r.stderr
    for w in words:
        assert w in r.stderr, (w, r.stderr)
    d = decision(s, field)
    assert d["kind"] == "refused", d
    assert s.list_ids() == []
    return d


def run(s, bundle, **kw):
    return s.cmd("run", "--bundle", bundle.write(), s.id(uuid.uuid4().hex[:6]), **kw)


@pytest.fixture
def netns():
    """A network namespace the way CNI and netavark make one: `ip netns add`."""
    name = "seerun-test-" + uuid.uuid4().hex[:8]
    subprocess.run(["ip", "netns", "add", name], check=True)
    yield f"/run/netns/{name}"
    subprocess.run(["ip", "netns", "del", name], check=False)


@pytest.fixture
def own_rootfs(tmp_path, busybox_rootfs):
    """A private copy of the busybox root filesystem, for tests that plant things in it."""
    root = tmp_path / "own-rootfs"
    shutil.copytree(busybox_rootfs, root, symlinks=True)
    return root


# ---- the process ----


def test_all_capabilities_are_narrowed_to_the_profiles(hardened, bundle, probe_dir):
    attacker(bundle, probe_dir, "status")
    st = run_probe(hardened, bundle)["status"]
    for s in ("CapEff", "CapPrm", "CapBnd", "CapInh", "CapAmb"):
        assert int(st[s], 16) & ~ALLOWED_MASK == 0, (s, st)
    for s in ("bounding", "effective", "permitted", "inheritable", "ambient"):
        d = decision(hardened, f"process.capabilities.{s}")
        assert d["kind"] == "enforced", d
        assert "CAP_SYS_ADMIN" in d["asked"] and "CAP_SYS_ADMIN" not in d["applied"], d
        assert "profiles.default.capabilities.allowed" in d["reason"], d


@pytest.mark.parametrize("seccomp", [
    None,
    {"defaultAction": "SCMP_ACT_ALLOW"},
    {"defaultAction": "SCMP_ACT_LOG", "syscalls": [
        {"names": ["mount", "unshare", "keyctl"], "action": "SCMP_ACT_ALLOW"}]},
], ids=["none", "allow-all", "log-all"])
def test_no_or_an_allow_all_seccomp_profile_still_gets_the_built_in_filter(
        hardened, bundle, probe_dir, seccomp):
    attacker(bundle, probe_dir, "status", "syscalls")
    bundle.linux.pop("seccomp", None)
    if seccomp is not None:
        bundle.linux["seccomp"] = seccomp
    seen = run_probe(hardened, bundle)
    assert seen["status"]["Seccomp"] == "2", seen["status"]
    for call in ("mount_tmpfs", "unshare_user", "keyctl", "bpf", "init_module"):
        assert seen["syscalls"][call] == "EPERM", (call, seen["syscalls"])
    d = decision(hardened, "linux.seccomp")
    assert d["kind"] == "enforced" and "built-in default filter" in d["applied"], d


def test_a_writable_root_is_made_read_only_with_tmpfs_for_the_writable_places(
        hardened, bundle, probe_dir):
    attacker(bundle, probe_dir, "rootfs")
    bundle.config["root"]["readonly"] = False
    seen = run_probe(hardened, bundle)["rootfs"]
    assert seen["create_in_root"] == "EROFS" and seen["create_in_tmp"] == "ok", seen
    d = decision(hardened, "root.readonly")
    assert (d["kind"], d["applied"]) == ("enforced", "true"), d


def test_no_new_privileges_false_is_made_true(hardened, bundle, probe_dir):
    attacker(bundle, probe_dir, "status")
    assert bundle.process["noNewPrivileges"] is False
    assert run_probe(hardened, bundle)["status"]["NoNewPrivs"] == "1"
    d = decision(hardened, "process.noNewPrivileges")
    assert (d["kind"], d["asked"], d["applied"]) == ("enforced", "false", "true"), d


def test_a_cwd_through_proc_self_fd_is_refused(hardened, bundle, probe_dir):
    attacker(bundle, probe_dir, "ids")
    bundle.process["cwd"] = "/proc/self/fd/7"
    r = run(hardened, bundle)
    d = refused(hardened, r, "process.cwd", "/proc/self/fd/7", "CVE-2024-21626")
    assert d["asked"] == '"/proc/self/fd/7"', d


# ---- network ----


def test_host_network_is_replaced_by_a_new_namespace_with_loopback_only(hardened, bundle,
                                                                       probe_dir):
    attacker(bundle, probe_dir, "net")
    bundle.linux["namespaces"] = [n for n in bundle.linux["namespaces"]
                                  if n["type"] != "network"]
    seen = run_probe(hardened, bundle)
    assert seen["net"]["interfaces"] == ["lo"], seen
    d = decision(hardened, "linux.namespaces.network")
    assert (d["kind"], d["asked"]) == ("enforced", '"host"'), d
    assert "profiles.default.network.allowHost" in d["reason"], d


def test_a_foreign_network_namespace_path_is_refused(hardened, bundle, probe_dir, netns):
    attacker(bundle, probe_dir, "net")
    for n in bundle.linux["namespaces"]:
        if n["type"] == "network":
            n["path"] = netns
    r = run(hardened, bundle)
    d = refused(hardened, r, "linux.namespaces.network", netns,
                "profiles.default.network.onRequest")
    assert d["asked"] == json.dumps(netns), d


@pytest.mark.parametrize("path", ["/proc/1/ns/net", "/proc/{pid}/ns/net", "/proc/self/ns/net"])
def test_the_hosts_network_namespace_by_path_is_refused(hardened, bundle, probe_dir, path):
    path = path.format(pid=os.getpid())
    attacker(bundle, probe_dir, "net")
    for n in bundle.linux["namespaces"]:
        if n["type"] == "network":
            n["path"] = path
    r = run(hardened, bundle)
    assert r.returncode != 0 and "linux.namespaces.network" in r.stderr, r.stderr
    assert r.stdout == ""  # the probe never ran
    refusals = [d for d in decisions(hardened) if d["kind"] == "refused"]
    assert refusals, f"no refusal audited: {r.stderr}"
    assert refusals[-1]["field"] == "linux.namespaces.network", refusals[-1]
    try:
        os.stat(path)
        assert "host's network namespace" in refusals[-1]["reason"], refusals[-1]
    except PermissionError:
        # This machine's pid 1 cannot be looked at (not even by root): the runtime cannot tell
        # it is the host's, and refuses it as a network it does not grant.
        assert "does not grant" in refusals[-1]["reason"], refusals[-1]


def test_the_network_annotation_under_default_is_granted_and_recorded(hardened, bundle,
                                                                     probe_dir):
    attacker(bundle, probe_dir, "net")
    bundle.config["annotations"] = {"io.seerun.network": "enabled"}
    seen = run_probe(hardened, bundle)
    # Nothing configured a network here (no engine): the grant is what is recorded.
    assert seen["net"]["interfaces"] == ["lo"], seen
    a = decision(hardened, "annotations.io.seerun.network")
    assert (a["kind"], a["asked"]) == ("allowed", '"enabled"'), a
    n = decision(hardened, "linux.namespaces.network")
    assert n["kind"] == "allowed" and "network granted" in n["reason"], n


def test_the_network_annotation_under_untrusted_user_code_is_refused(untrusted, bundle,
                                                                    probe_dir):
    attacker(bundle, probe_dir, "net")
    bundle.config["annotations"] = {"io.seerun.network": "enabled"}
    r = run(untrusted, bundle)
    d = refused(untrusted, r, "annotations.io.seerun.network",
                "profiles.untrusted-user-code.network.allow",
                said="annotation io.seerun.network=enabled")
    assert "profiles.untrusted-user-code.network.allow is false" in d["reason"], d


def test_an_unknown_seerun_annotation_cannot_pick_a_profile(hardened, bundle, probe_dir):
    attacker(bundle, probe_dir, "ids")
    bundle.config["annotations"] = {"io.seerun.profile": "permissive"}
    r = run(hardened, bundle)
    refused(hardened, r, "annotations.io.seerun.profile", "unknown seerun annotation",
            said="io.seerun.profile")


# ---- namespaces ----


def test_host_pid_ipc_uts_and_cgroup_namespaces_are_replaced_by_new_ones(
        hardened, bundle, probe_dir):
    attacker(bundle, probe_dir, "ids", "sleep:20")
    host_namespaces(bundle)
    cid = hardened.id()
    hardened.cmd("run", "-d", "--bundle", bundle.write(), cid, check=True)
    pid = hardened.state(cid)["pid"]
    status = status_of(pid)
    assert status["NSpid"][-1] == "1", status["NSpid"]  # pid 1 of a pid namespace of its own
    for kind in ("pid", "ipc", "uts", "cgroup", "net"):
        assert os.readlink(f"/proc/{pid}/ns/{kind}") != os.readlink(f"/proc/self/ns/{kind}")
    hardened.cmd("kill", cid, "KILL")
    wait_stopped(hardened, cid)
    for kind in ("pid", "ipc", "uts", "cgroup"):
        d = decision(hardened, f"linux.namespaces.{kind}")
        assert (d["kind"], d["asked"], d["applied"]) == ("enforced", '"host"', '"new"'), d


def test_the_hosts_mount_namespace_is_refused(hardened, bundle, probe_dir):
    attacker(bundle, probe_dir, "ids")
    for n in bundle.linux["namespaces"]:
        if n["type"] == "mount":
            n["path"] = f"/proc/{os.getpid()}/ns/mnt"
    r = run(hardened, bundle)
    refused(hardened, r, "linux.namespaces.mount", "host's mount namespace")


def test_a_config_mapping_host_uid_0_into_its_user_namespace_is_refused(hardened, bundle,
                                                                      probe_dir):
    attacker(bundle, probe_dir, "ids")
    bundle.linux["namespaces"].append({"type": "user"})
    bundle.linux["uidMappings"] = [{"containerID": 0, "hostID": 0, "size": 1},
                                   {"containerID": 1, "hostID": 200000, "size": 65535}]
    bundle.linux["gidMappings"] = [{"containerID": 0, "hostID": 200000, "size": 65536}]
    r = run(hardened, bundle)
    refused(hardened, r, "linux.uidMappings[0]", "host id 0")


@pytest.mark.parametrize("host_id, words", [
    (1000, "the host's own users"),  # a person's files, wherever a mount reaches them
    (65535, "the host's own users"),
    ((1 << 30) + 5 * 65536, "inside the registry's pool"),  # another container's range
])
def test_a_config_mapping_onto_host_users_or_seeruns_pool_is_refused(hardened, bundle, probe_dir,
                                                                     host_id, words):
    attacker(bundle, probe_dir, "ids")
    bundle.linux["namespaces"].append({"type": "user"})
    bundle.linux["uidMappings"] = [{"containerID": 0, "hostID": 300000, "size": 65536}]
    bundle.linux["gidMappings"] = [{"containerID": 0, "hostID": 300000, "size": 1},
                                   {"containerID": 1, "hostID": host_id, "size": 1}]
    r = run(hardened, bundle)
    refused(hardened, r, "linux.gidMappings[1]", words)


def test_a_config_mapping_above_the_host_users_and_outside_the_pool_is_kept(hardened, bundle,
                                                                          probe_dir):
    attacker(bundle, probe_dir, "ids")
    bundle.linux["namespaces"].append({"type": "user"})
    bundle.linux["uidMappings"] = [{"containerID": 0, "hostID": 300000, "size": 65536}]
    bundle.linux["gidMappings"] = [{"containerID": 0, "hostID": 300000, "size": 65536}]
    bundle.args("cat", "/proc/self/uid_map", "/proc/self/gid_map")
    r = run(hardened, bundle, check=True)
    assert [l.split() for l in r.stdout.splitlines()] == [["0", "300000", "65536"]] * 2


def test_joining_the_hosts_user_namespace_is_refused(hardened, bundle, probe_dir):
    attacker(bundle, probe_dir, "ids")
    bundle.linux["namespaces"].append({"type": "user", "path": f"/proc/{os.getpid()}/ns/user"})
    r = run(hardened, bundle)
    refused(hardened, r, "linux.namespaces.user", "maps host uid or gid 0")


def test_a_writable_mount_idmapped_onto_host_root_is_refused(hardened, bundle, probe_dir,
                                                             tmp_path):
    shared = tmp_path / "idmapped"
    shared.mkdir()
    attacker(bundle, probe_dir, "ids")
    bundle.config["mounts"].append({
        "destination": "/idmapped", "type": "bind", "source": str(shared),
        "options": ["bind", "rw", "idmap"],
        # On-disk 0 shown as the container's root: its host id, the first range of this
        # test's (fresh) registry.
        "uidMappings": [{"containerID": 0, "hostID": 1 << 30, "size": 65536}],
        "gidMappings": [{"containerID": 0, "hostID": 1 << 30, "size": 65536}]})
    index = len(bundle.config["mounts"]) - 1
    r = run(hardened, bundle)
    refused(hardened, r, f"mounts[{index}].uidMappings", "on-disk uid 0")


# ---- mounts ----


def bind(destination, source, *options):
    return {"destination": destination, "type": "bind", "source": str(source),
            "options": ["rbind", *options]}


@pytest.mark.parametrize("how", ["/", "absolute symlink to /", "relative symlink to /"])
def test_a_bind_of_the_host_root_is_refused(hardened, bundle, probe_dir, how):
    attacker(bundle, probe_dir, "ids")
    (bundle.path / "rootlink").symlink_to("/")
    source = {"/": "/", "absolute symlink to /": str(bundle.path / "rootlink"),
              "relative symlink to /": "rootlink"}[how]
    bundle.config["mounts"].append(bind("/host", source, "ro"))
    index = len(bundle.config["mounts"]) - 1
    r = run(hardened, bundle)
    d = refused(hardened, r, f"mounts[{index}].source")
    assert d["asked"] == json.dumps(source), d
    assert "denied host path \"/\"" in d["reason"], d


@pytest.mark.parametrize("fstype,source", [("ext4", "/dev/vda"), ("overlay", "overlay")])
def test_a_filesystem_type_outside_the_profile_is_refused(hardened, bundle, probe_dir, fstype,
                                                          source):
    attacker(bundle, probe_dir, "ids")
    bundle.config["mounts"].append({"destination": "/disk", "type": fstype, "source": source,
                                    "options": ["lowerdir=/etc"] if fstype == "overlay" else []})
    index = len(bundle.config["mounts"]) - 1
    r = run(hardened, bundle)
    refused(hardened, r, f"mounts[{index}].type", "allowedTypes")


def test_a_mount_destination_that_is_a_symlink_out_of_the_rootfs_lands_inside(
        hardened, bundle, probe_dir, own_rootfs, tmp_path):
    # The image's links point at the host's /etc (which the rootfs has too, so they resolve in
    # it); a runtime that followed them on the host would make directories in the host's /etc
    # and mount over them.
    name = "seerun-escape-" + uuid.uuid4().hex[:8]
    (own_rootfs / "abs-escape").symlink_to("/etc")
    (own_rootfs / "rel-escape").symlink_to("../" * 12 + "etc")
    data = tmp_path / "data"
    data.mkdir()
    (data / "payload").write_text("payload\n")
    os.chmod(data, 0o755)
    os.chmod(data / "payload", 0o644)
    attacker(bundle, probe_dir, "ids")
    bundle.config["root"]["path"] = str(own_rootfs)
    bundle.config["mounts"] += [bind(f"/abs-escape/{name}/bind", data, "ro"),
                                {"destination": f"/rel-escape/{name}/tmpfs", "type": "tmpfs",
                                 "source": "tmpfs", "options": ["size=1m"]}]
    n = len(bundle.config["mounts"])
    bundle.shell(f"cat /etc/{name}/bind/payload && echo written > /etc/{name}/tmpfs/file && "
                 f"cat /rel-escape/{name}/tmpfs/file")
    try:
        r = run(hardened, bundle)
        assert not os.path.lexists(f"/etc/{name}"), "the runtime followed the link on the host"
    finally:
        if os.path.isdir(f"/etc/{name}"):
            shutil.rmtree(f"/etc/{name}")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["payload", "written"], r.stdout
    # The mount points were made in the rootfs, where the links lead inside.
    assert (own_rootfs / "etc" / name / "bind").is_dir()
    assert (own_rootfs / "etc" / name / "tmpfs").is_dir()
    assert not (own_rootfs / "etc" / name / "tmpfs" / "file").exists()
    assert decision(hardened, f"mounts[{n - 2}].source")["kind"] == "allowed"


def test_a_mount_destination_climbing_out_with_dotdot_lands_inside(hardened, bundle,
                                                                   probe_dir, own_rootfs):
    name = "seerun-escape-" + uuid.uuid4().hex[:8]
    attacker(bundle, probe_dir, "ids")
    bundle.config["root"]["path"] = str(own_rootfs)
    bundle.config["mounts"].append({"destination": f"/../../../../../../../etc/{name}",
                                    "type": "tmpfs", "source": "tmpfs", "options": ["size=1m"]})
    bundle.shell(f"echo inside > /etc/{name}/file && cat /etc/{name}/file")
    try:
        r = run(hardened, bundle)
        assert not os.path.lexists(f"/etc/{name}"), "the runtime climbed out of the rootfs"
    finally:
        if os.path.isdir(f"/etc/{name}"):
            shutil.rmtree(f"/etc/{name}")
    assert r.returncode == 0 and r.stdout.split() == ["inside"], r.stderr + r.stdout
    assert (own_rootfs / "etc" / name).is_dir()


def test_a_mount_destination_that_is_a_dangling_symlink_out_of_the_rootfs_lands_inside(
        hardened, bundle, probe_dir, own_rootfs, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (own_rootfs / "abs-escape").symlink_to(outside)  # no such directory in the rootfs
    attacker(bundle, probe_dir, "ids")
    bundle.config["root"]["path"] = str(own_rootfs)
    bundle.config["mounts"].append({"destination": "/abs-escape/sub", "type": "tmpfs",
                                    "source": "tmpfs", "options": ["size=1m"]})
    r = run(hardened, bundle)
    # As runc (issue 17): the symlink's target is made, resolved inside the root.
    assert r.returncode == 0, r.stderr
    # (Inside, the target is under the profile's /tmp tmpfs: nothing reaches the image either.)
    assert os.listdir(outside) == []
    with open("/proc/self/mountinfo") as f:
        assert str(outside) not in f.read()


def test_second_cgroup_mounts_elsewhere_give_no_way_around_limits(hardened, bundle, probe_dir):
    # A second cgroup mount elsewhere, writable, is the classic way around the limits.  What
    # stops it here is the user namespace: the files belong to host root, who is nobody inside.
    # (A second proc or sysfs elsewhere is refused: test_escape_misc.py.)
    bundle.config["mounts"] += [
        {"destination": "/xcg2", "type": "cgroup2", "source": "cgroup2"},
        {"destination": "/xcg1", "type": "cgroup", "source": "cgroup", "options": ["rw"]},
    ]
    writes = ["/xcg2/cgroup.procs", "/xcg2/cgroup.subtree_control",
              "/xcg2/pids.max", "/xcg2/memory.max", "/xcg1/pids/pids.max",
              "/xcg1/pids/cgroup.procs", "/xcg1/pids/notify_on_release",
              "/xcg1/pids/release_agent", "/xcg1/memory/memory.limit_in_bytes",
              "/xcg1/devices/devices.allow"]
    attacker(bundle, probe_dir, *[f"openw:{w}" for w in writes])
    seen = run_probe(hardened, bundle)
    for w in writes:
        assert seen[f"openw:{w}"] != "ok", (w, seen)


# ---- /proc, devices, resources, sysctls, hooks ----


def test_empty_masked_paths_still_get_the_profiles(hardened, bundle, probe_dir):
    attacker(bundle, probe_dir, "procfs")
    bundle.linux["maskedPaths"] = []
    bundle.linux["readonlyPaths"] = []
    p = run_probe(hardened, bundle)["procfs"]
    if os.path.exists("/proc/kcore"):
        assert p["kcore"]["open"] != "ok" or p["kcore"]["bytes"] == 0, p["kcore"]
    else:  # this kernel has no /proc/kcore (CONFIG_PROC_KCORE): the others show the masking
        assert p["kcore"]["open"] == "ENOENT", p["kcore"]
    assert p["timer_list"]["open"] != "ok" or p["timer_list"]["bytes"] == 0, p
    assert p["keys"]["open"] != "ok" or p["keys"]["bytes"] == 0, p
    d = decision(hardened, "linux.maskedPaths")
    assert (d["kind"], d["asked"]) == ("enforced", "[]"), d
    for path in ("/proc/kcore", "/proc/keys", "/proc/timer_list", "/sys/firmware"):
        assert json.dumps(path) in d["applied"], d


def test_an_allow_all_device_rule_is_narrowed_to_the_allowed_nodes(hardened, bundle, probe_dir):
    attacker(bundle, probe_dir, "sleep:20")
    bundle.linux["resources"] = {"devices": [{"allow": True, "access": "rwm"},
                                             {"allow": True, "type": "b", "access": "rwm"}]}
    cid = hardened.id()
    hardened.cmd("run", "-d", "--bundle", bundle.write(), cid, check=True)
    pid = hardened.state(cid)["pid"]
    rules = device_rules(pid)
    kinds = [r.split()[0] for r in rules or []]
    assert rules is None or (rules and "a" not in kinds and "b" not in kinds), rules
    hardened.cmd("kill", cid, "KILL")
    wait_stopped(hardened, cid)
    d = decision(hardened, "linux.resources.devices")
    assert d["kind"] == "enforced" and "allow a *:* rwm" in d["asked"], d
    assert "allow a" not in d["applied"] and "allow b" not in d["applied"], d


def test_a_device_node_outside_the_profile_is_refused(hardened, bundle, probe_dir):
    attacker(bundle, probe_dir, "ids")
    bundle.linux["devices"] = [{"path": "/dev/kmsg", "type": "c", "major": 1, "minor": 11}]
    r = run(hardened, bundle)
    refused(hardened, r, "linux.devices[0]", "/dev/kmsg", "profiles.default.devices.allowed")


@pytest.mark.parametrize("key", ["kernel.core_pattern", "kernel.domainname"])
def test_a_sysctl_outside_the_allowlist_is_refused(hardened, bundle, probe_dir, key):
    attacker(bundle, probe_dir, "ids")
    bundle.linux["sysctl"] = {key: "|/bin/sh -c evil" if key == "kernel.core_pattern" else "x"}
    before = open("/proc/sys/kernel/core_pattern").read()
    r = run(hardened, bundle)
    assert r.returncode != 0 and key in r.stderr, r.stderr
    assert open("/proc/sys/kernel/core_pattern").read() == before
    d = decision(hardened, f"linux.sysctl.{key}")
    assert d["kind"] == "refused", d


def test_a_hook_from_inside_the_bundle_is_refused(hardened, bundle, probe_dir, tmp_path):
    marker = tmp_path / "hook-ran"
    hook = bundle.path / "hook.sh"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\n")
    os.chmod(hook, 0o755)  # root-owned, not writable by others: only its place is wrong
    attacker(bundle, probe_dir, "ids")
    bundle.config["hooks"] = {"createRuntime": [{"path": str(hook)}]}
    r = run(hardened, bundle)
    d = refused(hardened, r, "hooks.createRuntime[0].path", str(hook))
    assert "outside the bundle" in d["reason"], d
    assert not marker.exists()


def test_a_hook_through_a_host_daemons_proc_exe_runs_as_dockers_does(hardened, bundle,
                                                                     probe_dir, tmp_path):
    # Docker 20.10's libnetwork hook is /proc/<dockerd pid>/exe: a host daemon's program, judged
    # by the file the link opens (here a host busybox standing in for dockerd), which the
    # profile's hooks.allowedPaths names (the shipped default names dockerd's, with
    # libnetwork-setkey's argv).
    marker = tmp_path / "hook-ran"
    script = f"cat > /dev/null; touch {marker}"
    with open(hardened.policy) as f:
        policy = json.load(f)
    policy["profiles"]["default"]["hooks"] = {"allowedPaths": [
        {"path": "/bin/busybox", "args": ["sh", "-c", script]}]}
    with open(hardened.policy, "w") as f:
        json.dump(policy, f)
    daemon = subprocess.Popen(["/bin/busybox", "sleep", "60"])
    try:
        attacker(bundle, probe_dir, "ids")
        bundle.config["hooks"] = {"prestart": [{
            "path": f"/proc/{daemon.pid}/exe", "args": ["sh", "-c", script]}]}
        r = run(hardened, bundle)
    finally:
        daemon.kill()
        daemon.wait()
    assert r.returncode == 0, r.stderr
    assert marker.exists()
    d = decision(hardened, "hooks.prestart[0].path")
    assert d["kind"] == "allowed", d


def test_limits_above_the_untrusted_profiles_ceilings_are_lowered(untrusted, bundle, probe_dir):
    attacker(bundle, probe_dir, "sleep:20")
    bundle.linux["resources"] = {"pids": {"limit": 1 << 20}, "memory": {"limit": 1 << 40}}
    cid = untrusted.id()
    untrusted.cmd("run", "-d", "--bundle", bundle.write(), cid, check=True)
    pid = untrusted.state(cid)["pid"]
    assert pids_max(pid) == "1024"
    assert memory_max(pid) == 2 << 30
    untrusted.cmd("kill", cid, "KILL")
    wait_stopped(untrusted, cid)
    d = decision(untrusted, "linux.resources.pids.limit")
    assert (d["kind"], d["applied"]) == ("enforced", "1024"), d


# ---- exec ----


def test_exec_asking_for_cap_sys_admin_does_not_get_it(hardened, bundle, probe_dir):
    attacker(bundle, probe_dir, "sleep:30")
    cid = hardened.id()
    hardened.cmd("run", "-d", "--bundle", bundle.write(), cid, check=True)
    before = set(container_pids(hardened, cid))
    r = hardened.cmd("exec", "-d", "--cap", "CAP_SYS_ADMIN", cid, "/bin/sleep", "30")
    assert r.returncode == 0, r.stderr
    new = set(container_pids(hardened, cid)) - before
    assert len(new) == 1, new
    st = status_of(new.pop())
    assert not int(st["CapEff"][0], 16) & (1 << CAP_NAMES.index("CAP_SYS_ADMIN")), st["CapEff"]
    assert int(st["CapBnd"][0], 16) & ~ALLOWED_MASK == 0, st["CapBnd"]
    hardened.cmd("kill", cid, "KILL")
    wait_stopped(hardened, cid)
    d = [x for x in decisions(hardened) if x["field"].startswith("process.capabilities.") and
         "CAP_SYS_ADMIN" in x["asked"] and "created with" in x["reason"]]
    assert d and all(x["kind"] == "enforced" for x in d), decisions(hardened)
    assert [x for x in hardened.audit() if x.get("event") == "exec"]


def test_exec_with_a_hostile_process_json_is_narrowed_or_refused(hardened, bundle, probe_dir,
                                                                tmp_path):
    attacker(bundle, probe_dir, "sleep:30")
    cid = hardened.id()
    hardened.cmd("run", "-d", "--bundle", bundle.write(), cid, check=True)
    process = {"terminal": False, "user": {"uid": 0, "gid": 0}, "cwd": "/",
               "args": ["/probe/probe", "status", "syscalls"], "noNewPrivileges": False,
               "apparmorProfile": "unconfined",
               "capabilities": {s: list(CAP_NAMES) for s in ("bounding", "effective",
                                                             "permitted", "ambient")}}
    pj = tmp_path / "process.json"
    pj.write_text(json.dumps(process))
    r = hardened.cmd("exec", "--process", str(pj), cid)
    assert r.returncode == 0, r.stderr
    seen = parse(r.stdout)
    assert seen["status"]["NoNewPrivs"] == "1" and seen["status"]["Seccomp"] == "2", seen
    for s in ("CapEff", "CapBnd", "CapAmb"):
        assert int(seen["status"][s], 16) & ~ALLOWED_MASK == 0, (s, seen["status"])
    assert seen["syscalls"]["mount_tmpfs"] == "EPERM", seen["syscalls"]
    assert decision(hardened, "process.noNewPrivileges")["kind"] == "enforced"
    process["cwd"] = "/proc/self/fd/5"
    pj.write_text(json.dumps(process))
    r = hardened.cmd("exec", "--process", str(pj), cid)
    assert r.returncode != 0 and "process.cwd" in r.stderr, r.stderr
    assert decision(hardened, "process.cwd")["kind"] == "refused"
    hardened.cmd("kill", cid, "KILL")
    wait_stopped(hardened, cid)


@pytest.mark.parametrize("args,field", [
    (["--pids-limit", "-1"], "linux.resources.pids.limit"),
    (["--memory", "-1"], "linux.resources.memory.limit"),
    (["--resources", "{unified}"], "linux.resources.unified.pids.max"),
])
def test_update_cannot_remove_the_profiles_limits(hardened, bundle, probe_dir, tmp_path, args,
                                                  field):
    attacker(bundle, probe_dir, "sleep:30")
    cid = hardened.id()
    hardened.cmd("run", "-d", "--bundle", bundle.write(), cid, check=True)
    pid = hardened.state(cid)["pid"]
    if args[1] == "{unified}":
        res = tmp_path / "resources.json"
        res.write_text(json.dumps({"unified": {"pids.max": "max"}}))
        args = ["--resources", str(res)]
    r = hardened.cmd("update", *args, cid)
    assert r.returncode != 0 and "cannot be removed" in r.stderr, r.stderr
    d = decision(hardened, field)
    assert d["kind"] == "refused", d
    assert pids_max(pid) == "4096"
    hardened.cmd("kill", cid, "KILL")
    wait_stopped(hardened, cid)


def test_a_tmp_size_annotation_above_the_profiles_ceiling_is_refused(hardened, bundle,
                                                                    probe_dir):
    attacker(bundle, probe_dir, "ids")
    bundle.config["annotations"] = {"io.seerun.tmp-size": "100g"}
    r = run(hardened, bundle)
    refused(hardened, r, "annotations.io.seerun.tmp-size", "maxSize",
            said="io.seerun.tmp-size=100g")


# ---- what engines really write ----
#
# The configs podman 4.3 (Debian 12), Docker 20.10 and `ctr run` (containerd 1.6) write, with
# their per-container files (hosts, resolv.conf, hostname, shm, .containerenv) in a directory of
# the test, their seccomp profile (containers-common's, as podman resolves it), capabilities,
# sysctls, cgroup mount, and process.user 0.  Only the root filesystem, the cgroup path (no
# systemd here: cgroupfs paths) and the command are the test's; terminal is off.

PODMAN_CAPS = ["CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FOWNER", "CAP_FSETID", "CAP_KILL",
               "CAP_NET_BIND_SERVICE", "CAP_SETFCAP", "CAP_SETGID", "CAP_SETPCAP", "CAP_SETUID",
               "CAP_SYS_CHROOT"]
DOCKER_CAPS = ["CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FSETID", "CAP_FOWNER", "CAP_MKNOD",
               "CAP_NET_RAW", "CAP_SETGID", "CAP_SETUID", "CAP_SETFCAP", "CAP_SETPCAP",
               "CAP_NET_BIND_SERVICE", "CAP_SYS_CHROOT", "CAP_KILL", "CAP_AUDIT_WRITE"]
SECCOMP_JSON = "/usr/share/containers/seccomp.json"
X86_ARCHES = ["SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"]

MASKED = ["/proc/acpi", "/proc/kcore", "/proc/keys", "/proc/latency_stats", "/proc/timer_list",
          "/proc/timer_stats", "/proc/sched_debug", "/proc/scsi", "/sys/firmware"]
READONLY = ["/proc/asound", "/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys",
            "/proc/sysrq-trigger"]


def engine_seccomp(caps, default_errno):
    """The OCI form of a containers/moby seccomp profile, resolved the way podman and Docker do
    for x86_64 and the given capabilities (includes/excludes by capability and architecture)."""
    if not os.path.exists(SECCOMP_JSON):
        pytest.skip(f"{SECCOMP_JSON} (containers-common) is not installed")
    with open(SECCOMP_JSON) as f:
        profile = json.load(f)
    rules = []
    for call in profile["syscalls"]:
        inc, exc = call.get("includes") or {}, call.get("excludes") or {}
        if inc.get("caps") and not all(c in caps for c in inc["caps"]):
            continue
        if inc.get("arches") and not {"amd64", "x86_64"} & set(inc["arches"]):
            continue
        if exc.get("caps") and any(c in caps for c in exc["caps"]):
            continue
        if exc.get("arches") and {"amd64", "x86_64"} & set(exc["arches"]):
            continue
        rule = {"names": call["names"], "action": call["action"]}
        if call.get("args"):
            rule["args"] = call["args"]
        if call.get("errnoRet") is not None:
            rule["errnoRet"] = call["errnoRet"]
        rules.append(rule)
    return {"defaultAction": profile["defaultAction"], "defaultErrnoRet": default_errno,
            "architectures": X86_ARCHES, "syscalls": rules}


def userdata(tmp_path, cid):
    """The engine's per-container directory: what it bind-mounts into the container."""
    d = tmp_path / "userdata" / cid
    (d / "shm").mkdir(parents=True)
    (d / "hosts").write_text(f"127.0.0.1\tlocalhost\n::1\tlocalhost\n10.88.0.7\t{cid[:12]}\n")
    (d / "resolv.conf").write_text("nameserver 10.88.0.1\nsearch example.test\n")
    (d / "hostname").write_text(cid[:12] + "\n")
    (d / ".containerenv").write_text('engine="podman-4.3.1"\nname="test"\nrootless=0\n')
    for p in [d, d / "shm"] + [d / f for f in ("hosts", "resolv.conf", "hostname",
                                              ".containerenv")]:
        os.chmod(p, 0o755 if p.is_dir() else 0o644)
    os.chmod(d / "shm", 0o1777)
    return d


def common_mounts():
    return [
        {"destination": "/proc", "type": "proc", "source": "proc",
         "options": ["nosuid", "noexec", "nodev"]},
        {"destination": "/dev", "type": "tmpfs", "source": "tmpfs",
         "options": ["nosuid", "strictatime", "mode=755", "size=65536k"]},
        {"destination": "/dev/pts", "type": "devpts", "source": "devpts",
         "options": ["nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", "gid=5"]},
        {"destination": "/sys", "type": "sysfs", "source": "sysfs",
         "options": ["nosuid", "noexec", "nodev", "ro"]},
        {"destination": "/dev/mqueue", "type": "mqueue", "source": "mqueue",
         "options": ["nosuid", "noexec", "nodev"]},
    ]


def limit(kind, wanted):
    hard = resource.getrlimit(kind)[1]
    return wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)


def podman_4_3(rootfs, cid, ud, netns_path):
    """`podman run --annotation io.seerun.network=enabled debian sh -c ...` (rootful, netavark:
    the network namespace is a path podman made)."""
    return {
        "ociVersion": "1.0.2-dev",
        "process": {
            "terminal": False,
            "user": {"uid": 0, "gid": 0,
                     "additionalGids": [0, 1, 2, 3, 4, 6, 10, 11, 20, 26, 27]},
            "args": ["sh"],
            "env": ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                    "TERM=xterm", "container=podman", "HOME=/root", f"HOSTNAME={cid[:12]}"],
            "cwd": "/",
            "capabilities": {s: list(PODMAN_CAPS) for s in ("bounding", "effective",
                                                            "permitted")},
            # podman raises its own limits to these first and writes what it got: here the
            # host's hard limits when they are lower (no CAP_SYS_RESOURCE in this sandbox).
            "rlimits": [{"type": "RLIMIT_NOFILE", "hard": limit(resource.RLIMIT_NOFILE, 1048576),
                         "soft": limit(resource.RLIMIT_NOFILE, 1048576)},
                        {"type": "RLIMIT_NPROC", "hard": limit(resource.RLIMIT_NPROC, 4194304),
                         "soft": limit(resource.RLIMIT_NPROC, 4194304)}],
            "apparmorProfile": "containers-default-0.50.1",
            "oomScoreAdj": 0,
        },
        "root": {"path": str(rootfs)},
        "hostname": cid[:12],
        "mounts": common_mounts()[:1] + [
            {"destination": "/dev", "type": "tmpfs", "source": "tmpfs",
             "options": ["nosuid", "strictatime", "mode=755", "size=65536k"]},
            {"destination": "/sys", "type": "sysfs", "source": "sysfs",
             "options": ["nosuid", "noexec", "nodev", "ro"]},
            {"destination": "/dev/pts", "type": "devpts", "source": "devpts",
             "options": ["nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620",
                         "gid=5"]},
            {"destination": "/dev/mqueue", "type": "mqueue", "source": "mqueue",
             "options": ["nosuid", "noexec", "nodev"]},
            {"destination": "/etc/resolv.conf", "type": "bind", "source": str(ud / "resolv.conf"),
             "options": ["bind", "rprivate"]},
            {"destination": "/etc/hosts", "type": "bind", "source": str(ud / "hosts"),
             "options": ["bind", "rprivate"]},
            {"destination": "/dev/shm", "type": "bind", "source": str(ud / "shm"),
             "options": ["bind", "rprivate", "nosuid", "noexec", "nodev"]},
            {"destination": "/etc/hostname", "type": "bind", "source": str(ud / "hostname"),
             "options": ["bind", "rprivate"]},
            {"destination": "/run/.containerenv", "type": "bind",
             "source": str(ud / ".containerenv"), "options": ["bind", "rprivate"]},
            {"destination": "/sys/fs/cgroup", "type": "cgroup", "source": "cgroup",
             "options": ["rprivate", "nosuid", "noexec", "nodev", "relatime", "ro"]},
        ],
        "annotations": {
            "io.container.manager": "libpod",
            "io.kubernetes.cri-o.Created": "2024-03-01T10:00:00.000000000Z",
            "io.kubernetes.cri-o.TTY": "false",
            "io.podman.annotations.autoremove": "FALSE",
            "io.podman.annotations.init": "FALSE",
            "io.podman.annotations.privileged": "FALSE",
            "io.podman.annotations.publish-all": "FALSE",
            "org.opencontainers.image.stopSignal": "15",
            "io.seerun.network": "enabled",
        },
        "linux": {
            "sysctl": {"net.ipv4.ping_group_range": "0 0"},
            "resources": {"devices": [{"allow": False, "access": "rwm"}],
                          "pids": {"limit": 2048}},
            "cgroupsPath": f"/libpod_parent/libpod-{cid}",
            "namespaces": [{"type": "pid"}, {"type": "network", "path": netns_path},
                           {"type": "ipc"}, {"type": "uts"}, {"type": "mount"},
                           {"type": "cgroup"}],
            "seccomp": engine_seccomp(PODMAN_CAPS, 38),
            "maskedPaths": MASKED + ["/sys/fs/selinux", "/sys/dev/block"],
            "readonlyPaths": READONLY,
        },
    }


def docker_20_10(rootfs, cid, ud):
    """`docker run debian sh -c ...` (default bridge network: a new namespace, which libnetwork
    would configure from its prestart hook; no daemon here, so no hook)."""
    return {
        "ociVersion": "1.0.2-dev",
        "process": {
            "terminal": False,
            "user": {"uid": 0, "gid": 0},
            "args": ["sh"],
            "env": ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                    f"HOSTNAME={cid[:12]}"],
            "cwd": "/",
            "capabilities": {s: list(DOCKER_CAPS) for s in ("bounding", "effective",
                                                            "inheritable", "permitted")},
            "apparmorProfile": "docker-default",
            "oomScoreAdj": 0,
        },
        "root": {"path": str(rootfs)},
        "hostname": cid[:12],
        "mounts": common_mounts()[:3] + [
            {"destination": "/sys", "type": "sysfs", "source": "sysfs",
             "options": ["nosuid", "noexec", "nodev", "ro"]},
            {"destination": "/sys/fs/cgroup", "type": "cgroup", "source": "cgroup",
             "options": ["ro", "nosuid", "noexec", "nodev"]},
            {"destination": "/dev/mqueue", "type": "mqueue", "source": "mqueue",
             "options": ["nosuid", "noexec", "nodev"]},
            {"destination": "/dev/shm", "type": "bind", "source": str(ud / "shm"),
             "options": ["rbind", "rprivate"]},
            {"destination": "/etc/resolv.conf", "type": "bind", "source": str(ud / "resolv.conf"),
             "options": ["rbind", "rprivate"]},
            {"destination": "/etc/hostname", "type": "bind", "source": str(ud / "hostname"),
             "options": ["rbind", "rprivate"]},
            {"destination": "/etc/hosts", "type": "bind", "source": str(ud / "hosts"),
             "options": ["rbind", "rprivate"]},
        ],
        "linux": {
            "sysctl": {"net.ipv4.ip_unprivileged_port_start": "0",
                       "net.ipv4.ping_group_range": "0 2147483647"},
            "resources": {
                "devices": [{"allow": False, "access": "rwm"}] + [
                    {"allow": True, "type": "c", "major": ma, "minor": mi, "access": "rwm"}
                    for ma, mi in ((1, 5), (1, 3), (1, 9), (1, 8), (5, 0), (5, 1))] + [
                    {"allow": False, "type": "c", "major": 10, "minor": 229, "access": "rwm"}],
                "memory": {"disableOOMKiller": False},
                "cpu": {"shares": 0},
                "blockIO": {"weight": 0},
            },
            "cgroupsPath": f"/docker/{cid}",
            "namespaces": [{"type": "mount"}, {"type": "network"}, {"type": "uts"},
                           {"type": "pid"}, {"type": "ipc"}, {"type": "cgroup"}],
            "seccomp": engine_seccomp(DOCKER_CAPS, 1),
            "maskedPaths": ["/proc/asound"] + MASKED,
            "readonlyPaths": READONLY[1:],
        },
    }


def ctr_1_6(rootfs, cid, ud):
    """`ctr run docker.io/library/debian:12 <id> sh -c ...` (containerd 1.6: `ctr oci spec`
    plus the id's cgroup; no seccomp, no cgroup namespace, a /run tmpfs)."""
    caps = [c for c in DOCKER_CAPS]
    return {
        "ociVersion": "1.0.2-dev",
        "process": {
            "user": {"uid": 0, "gid": 0},
            "args": ["sh"],
            "env": ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],
            "cwd": "/",
            "capabilities": {s: list(caps) for s in ("bounding", "effective", "permitted")},
            "rlimits": [{"type": "RLIMIT_NOFILE", "hard": 1024, "soft": 1024}],
            "noNewPrivileges": True,
        },
        "root": {"path": str(rootfs)},
        "mounts": common_mounts()[:3] + [
            {"destination": "/dev/shm", "type": "tmpfs", "source": "shm",
             "options": ["nosuid", "noexec", "nodev", "mode=1777", "size=65536k"]},
            {"destination": "/dev/mqueue", "type": "mqueue", "source": "mqueue",
             "options": ["nosuid", "noexec", "nodev"]},
            {"destination": "/sys", "type": "sysfs", "source": "sysfs",
             "options": ["nosuid", "noexec", "nodev", "ro"]},
            {"destination": "/run", "type": "tmpfs", "source": "tmpfs",
             "options": ["nosuid", "strictatime", "mode=755", "size=65536k"]},
        ],
        "linux": {
            "resources": {"devices": [{"allow": False, "access": "rwm"}]},
            "cgroupsPath": f"/default/{cid}",
            "namespaces": [{"type": "pid"}, {"type": "ipc"}, {"type": "uts"}, {"type": "mount"},
                           {"type": "network"}],
            "maskedPaths": ["/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys",
                            "/proc/latency_stats", "/proc/timer_list", "/proc/timer_stats",
                            "/proc/sched_debug", "/sys/firmware", "/proc/scsi"],
            "readonlyPaths": READONLY[1:],
        },
    }


ENGINE_SCRIPT = r"""
echo "uid=$(id -u) gid=$(id -g)"
grep -E '^(NoNewPrivs|Seccomp):' /proc/self/status | tr -d '\t'
echo "hosts=$(grep -c localhost /etc/hosts)"
echo "resolv=$(cat /etc/resolv.conf | head -n 1)"
echo "ping=$(cat /proc/sys/net/ipv4/ping_group_range | tr '\t' ' ')"
touch /tmp/ok && echo tmp=writable
touch /root/x 2>/dev/null && echo root=writable || echo root=read-only
touch /dev/shm/ok && echo shm=writable
ls /sys/fs/cgroup >/dev/null && echo cgroup=mounted
echo "ifaces=$(awk -F: 'NR > 2 { gsub(/ /, "", $1); print $1 }' /proc/net/dev | tr '\n' ' ')"
echo "sys_ifaces=$(ls /sys/class/net | tr '\n' ' ')"
"""


def run_engine_config(s, bundle, config, cid, tmp_path):
    """create (the host looks at the init), start, wait, and the output of the script."""
    config["process"]["args"] = ["sh", "-c", ENGINE_SCRIPT]
    bundle.config = config
    out, err = tmp_path / f"{cid}.out", tmp_path / f"{cid}.err"
    with open(out, "w") as o, open(err, "w") as e:
        p = subprocess.run([SEERUN, *s.global_args, "create", "--bundle", bundle.write(), cid],
                           stdin=subprocess.DEVNULL, stdout=o, stderr=e, timeout=60)
    assert p.returncode == 0, err.read_text()
    pid = s.state(cid)["pid"]
    st = status_of(pid)
    uids, gids = [int(x) for x in st["Uid"]], [int(x) for x in st["Gid"]]
    assert 0 not in uids and 0 not in gids, f"the init is host root: {st['Uid']} {st['Gid']}"
    s.cmd("start", cid, check=True)
    wait_stopped(s, cid)
    s.cmd("delete", cid, check=True)
    lines = dict(l.split("=", 1) for l in out.read_text().splitlines() if "=" in l)
    return lines, err.read_text()


def check_engine_run(s, lines, err):
    assert lines.get("uid") == "0 gid=0", (lines, err)  # root, inside only
    assert lines["tmp"] == "writable" and lines["root"] == "read-only", lines
    assert lines["shm"] == "writable" and lines["cgroup"] == "mounted", lines
    assert lines["ifaces"].split() == ["lo"], lines
    assert not [d for d in decisions(s) if d["kind"] == "refused"], decisions(s)


def test_podman_4_3_config_runs_under_the_default_profile(hardened, bundle, busybox_rootfs,
                                                          tmp_path, netns):
    cid = hardened.id("podman")
    ud = userdata(tmp_path, cid)
    lines, err = run_engine_config(hardened, bundle, podman_4_3(busybox_rootfs, cid, ud, netns),
                                   cid, tmp_path)
    check_engine_run(hardened, lines, err)
    assert lines["hosts"] == "2" and lines["resolv"] == "nameserver 10.88.0.1", lines
    assert lines["ping"] == "0 0", lines
    n = decision(hardened, "linux.namespaces.network")
    assert n["kind"] == "allowed" and n["asked"] == json.dumps(netns), n
    assert decision(hardened, "linux.seccomp")["kind"] == "allowed"
    assert "Seccomp:2" in (tmp_path / f"{cid}.out").read_text()


def test_docker_20_10_config_runs_and_its_ping_group_range_is_clamped(hardened, bundle,
                                                                      busybox_rootfs, tmp_path):
    cid = hardened.id("docker")
    ud = userdata(tmp_path, cid)
    lines, err = run_engine_config(hardened, bundle, docker_20_10(busybox_rootfs, cid, ud), cid,
                                   tmp_path)
    check_engine_run(hardened, lines, err)
    assert lines["resolv"] == "nameserver 10.88.0.1", lines
    # Docker's "0 2147483647" names gids the user namespace does not have: clamped to its own.
    assert lines["ping"] == "0 65535", lines
    d = decision(hardened, "linux.sysctl.net.ipv4.ping_group_range")
    assert (d["kind"], d["applied"]) == ("enforced", "0 65535"), d
    caps = decision(hardened, "process.capabilities.bounding")
    assert caps["kind"] == "enforced" and "CAP_NET_RAW" in caps["reason"], caps
    out = (tmp_path / f"{cid}.out").read_text()
    assert "NoNewPrivs:1" in out and "Seccomp:2" in out, out


def test_ctr_config_runs_under_the_default_profile(hardened, bundle, busybox_rootfs, tmp_path):
    cid = hardened.id("ctr")
    ud = userdata(tmp_path, cid)
    config = ctr_1_6(busybox_rootfs, cid, ud)
    lines, err = run_engine_config(hardened, bundle, config, cid, tmp_path)
    # ctr mounts a /run tmpfs itself, no /sys/fs/cgroup and no /dev/shm bind.
    assert lines.get("uid") == "0 gid=0", (lines, err)
    assert lines["tmp"] == "writable" and lines["root"] == "read-only", lines
    assert lines["shm"] == "writable" and lines["ifaces"].split() == ["lo"], lines
    assert not [d for d in decisions(hardened) if d["kind"] == "refused"]
    d = decision(hardened, "linux.seccomp")
    assert d["kind"] == "enforced", d
    out = (tmp_path / f"{cid}.out").read_text()
    assert "NoNewPrivs:1" in out and "Seccomp:2" in out, out
