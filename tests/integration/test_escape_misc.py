"""Issue 13, classes 6, 9, 10 and 11: attacks a hostile config.json still had under the default
policy, written as the attacker would, each asserting what the user sees.

- 6: a second proc or sysfs instance anywhere but /proc and /sys carries none of the masks
  (the masked and read-only paths name /proc/... and /sys/...), so /sys/firmware and the masked
  /proc files were readable there.  Refused under enforcing profiles.
- 9: a config without `process` crashed `create` (SIGSEGV).  Refused, clearly, and nothing is
  left behind.
- 10: a refusal reached containerd and Docker as `OCI runtime create failed: policy ...`, not
  naming the program: the error is `seerun create failed: ...`, as runc's is
  `runc create failed: ...`, in stderr and in the JSON log the shims read.
- 11: the device cgroup allowed every linux.devices node even when linux.resources.devices
  denied all: it is exactly resources.devices (after the policy) plus the default nodes.
"""
import json
import os
import shutil
import uuid

import pytest

from conftest import read_userns_registry


@pytest.fixture(autouse=True)
def own_rootfs(tmp_path, busybox_rootfs, bundle):
    """The test's own copy of the root filesystem: mount points and, without a /dev mount,
    device nodes are made in it (the shared one stays pristine)."""
    path = tmp_path / "own-rootfs"
    shutil.copytree(busybox_rootfs, path, symlinks=True, copy_function=os.link)
    bundle.config["root"]["path"] = str(path)
    return path


def run(s, bundle, *flags, verb="run", cid=None):
    cid = cid or s.id(uuid.uuid4().hex[:6])
    return s.cmd(*flags, verb, "--bundle", bundle.write(), cid), cid


def refusals(s, field):
    return [d for d in s.audit() if d.get("event") == "decision" and d.get("field") == field
            and d.get("kind") == "refused"]


def policy_check(s, bundle):
    r = s.cmd("policy", "check", "--bundle", bundle.write())
    doc = json.loads(r.stdout) if r.stdout.strip().startswith("{") else None
    return r, doc


def nothing_left(s, cid):
    assert cid not in s.list_ids()
    assert not os.path.exists(os.path.join(s.root, cid))
    if os.path.exists(s.registry):
        held = [k for k, v in read_userns_registry(s.registry).items()
                if cid in k and v["released"] == 0]
        assert held == [], held


# ---- 6. proc and sysfs only at /proc and /sys ----

# (type, destination, what the container reads there that is masked at /proc or /sys)
SECOND_INSTANCES = [
    ("proc", "/p2", "/p2/keys"),                       # /proc/keys is masked
    ("sysfs", "/s2", "/s2/firmware/memmap/1/end"),     # /sys/firmware is masked
    ("proc", "/proc/sys/kernel", "/proc/sys/kernel/keys"),  # a proc inside proc
    ("sysfs", "s3/../s2", "/s2/firmware/memmap/1/end"),     # relative, not clean
]


@pytest.mark.parametrize("fstype,dest,masked", SECOND_INSTANCES,
                         ids=[f"{t}-at-{d}" for t, d, _ in SECOND_INSTANCES])
def test_a_second_proc_or_sysfs_instance_elsewhere_is_refused(hardened, bundle, fstype, dest,
                                                             masked):
    if fstype == "sysfs" and not os.path.exists("/sys/firmware/memmap/1/end"):
        pytest.skip("no readable /sys/firmware file on this host")
    index = len(bundle.config["mounts"])
    bundle.config["mounts"].append({"destination": dest, "type": fstype, "source": fstype})
    bundle.shell(f"echo MASKED-READ; cat {masked} | wc -c")
    r, cid = run(hardened, bundle)
    assert "MASKED-READ" not in r.stdout, r.stdout
    assert r.returncode == 1, (r.returncode, r.stdout, r.stderr)
    field = f"mounts[{index}].destination"
    assert field in r.stderr and fstype in r.stderr, r.stderr
    assert "/proc" in r.stderr and "/sys" in r.stderr and "masked" in r.stderr, r.stderr
    found = refusals(hardened, field)
    # The parser cleans a destination as runc does (issue 17): the decision names the path
    # the mount would land on.
    assert found and os.path.normpath(os.path.join("/", dest)) in found[-1]["asked"], hardened.audit()
    nothing_left(hardened, cid)
    # `policy check` agrees with create.
    pr, doc = policy_check(hardened, bundle)
    assert pr.returncode == 1 and doc is not None and doc["allowed"] is False, pr.stdout
    assert any(d["field"] == field and d["kind"] == "refused" for d in doc["decisions"])


@pytest.mark.parametrize("source", ["/sys/firmware", "/sys/firmware/memmap",
                                    "/sys/devices/../firmware"])
def test_a_bind_of_the_hosts_sysfs_below_sys_is_refused(hardened, bundle, tmp_path, source):
    # The host's /sys/firmware bound elsewhere is the masked directory under another name;
    # judged on the opened source (its filesystem), so a symlink to it is the same.
    if not os.path.exists("/sys/firmware/memmap/1/end"):
        pytest.skip("no readable /sys/firmware file on this host")
    link = tmp_path / "fw-link"
    link.symlink_to(source)
    index = len(bundle.config["mounts"])
    bundle.config["mounts"] += [
        {"destination": "/fw", "type": "bind", "source": source, "options": ["rbind", "ro"]},
        {"destination": "/fw2", "type": "bind", "source": str(link), "options": ["rbind", "ro"]}]
    bundle.shell("echo MASKED-READ; find /fw /fw2 -name end | head -3")
    r, cid = run(hardened, bundle)
    assert "MASKED-READ" not in r.stdout, r.stdout
    assert r.returncode == 1, (r.returncode, r.stdout, r.stderr)
    field = f"mounts[{index}].source"
    assert field in r.stderr and "sysfs" in r.stderr and "masked" in r.stderr, r.stderr
    assert refusals(hardened, field), hardened.audit()
    nothing_left(hardened, cid)
    # The symlink alone is refused the same way.
    del bundle.config["mounts"][index]
    r, cid = run(hardened, bundle)
    assert r.returncode == 1 and "MASKED-READ" not in r.stdout, r.stdout
    assert field in r.stderr and "sysfs" in r.stderr, r.stderr
    pr, doc = policy_check(hardened, bundle)
    assert pr.returncode == 1 and doc["allowed"] is False, pr.stdout


def test_proc_and_sysfs_at_their_places_and_other_types_elsewhere_still_work(hardened, bundle):
    # The rule is about proc and sysfs: a cgroup, mqueue or tmpfs mount elsewhere is no second
    # name for a masked file, and a proc at "/proc/" (trailing slash) is /proc.
    bundle.config["mounts"] = [m for m in bundle.config["mounts"]
                               if m["type"] not in ("proc", "sysfs")]
    bundle.config["mounts"] += [
        {"destination": "/proc/", "type": "proc", "source": "proc"},
        {"destination": "//sys", "type": "sysfs", "source": "sysfs", "options": ["ro"]},
        {"destination": "/mq2", "type": "mqueue", "source": "mqueue"},
        {"destination": "/cg2", "type": "cgroup", "source": "cgroup", "options": ["ro"]},
    ]
    bundle.shell("wc -c < /proc/keys; ls /sys/firmware | wc -l; echo OK")
    r, _ = run(hardened, bundle)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.split()
    assert lines == ["0", "0", "OK"], r.stdout


def test_a_second_proc_instance_under_a_permissive_profile_is_only_audited(seerun, bundle):
    index = len(bundle.config["mounts"])
    bundle.config["mounts"].append({"destination": "/p2", "type": "proc", "source": "proc"})
    bundle.shell("test -e /p2/self && echo THERE")
    r, _ = run(seerun, bundle)
    assert r.returncode == 0 and "THERE" in r.stdout, r.stderr
    d = [x for x in seerun.audit() if x.get("field") == f"mounts[{index}].destination"]
    assert d and d[-1]["kind"] == "allowed" and d[-1]["reason"] == "permissive", d


# ---- 9. no input crashes seerun ----


@pytest.mark.parametrize("verb", ["create", "run"])
def test_a_config_without_process_is_refused_clearly_and_leaves_nothing(hardened, bundle, verb):
    del bundle.config["process"]
    r, cid = run(hardened, bundle, verb=verb)
    assert r.returncode == 1, (r.returncode, r.stderr)  # not -11 (SIGSEGV)
    assert "config.json: process: required" in r.stderr, r.stderr
    nothing_left(hardened, cid)
    assert refusals(hardened, "process"), hardened.audit()
    # `policy check` names the same problem (it crashed as well).
    pr, doc = policy_check(hardened, bundle)
    assert pr.returncode == 1, (pr.returncode, pr.stderr)
    assert "config.json: process: required" in pr.stderr, pr.stderr


def test_a_config_without_any_optional_object_runs(hardened, bundle):
    # Only what the spec requires (ociVersion, root, process' user/args/cwd) and the mount
    # namespace seerun requires: no mounts, hooks, annotations, resources, seccomp, devices,
    # capabilities, rlimits, masked paths.
    bundle.config = {"ociVersion": bundle.config["ociVersion"],
                     "root": {"path": bundle.config["root"]["path"]},
                     "process": {"user": {"uid": 0, "gid": 0}, "cwd": "/",
                                 "args": ["/bin/sh", "-c", "echo MINIMAL"]},
                     "linux": {"namespaces": [{"type": "mount"}]}}
    r, _ = run(hardened, bundle)
    assert r.returncode == 0 and "MINIMAL" in r.stdout, (r.returncode, r.stderr)
    pr, doc = policy_check(hardened, bundle)
    assert pr.returncode == 0 and doc["allowed"] is True, pr.stderr


# ---- 10. the refusal names the program, as runc's does ----


@pytest.mark.parametrize("verb", ["create", "run"])
def test_a_refusal_names_the_program_in_stderr_and_in_the_json_log(hardened, bundle, tmp_path,
                                                                  verb):
    log = tmp_path / "log.json"
    index = len(bundle.config["mounts"])
    bundle.config["mounts"].append({"destination": "/d", "type": "ext4", "source": "/dev/sda1"})
    r, cid = run(hardened, bundle, "--log", str(log), "--log-format", "json", verb=verb)
    assert r.returncode == 1
    want = f'seerun {verb} failed: policy "default": mounts[{index}].type: '
    # What containerd's and Docker's shims read: the last error line of the JSON log.
    errors = [json.loads(line) for line in log.read_text().splitlines()]
    errors = [e for e in errors if e.get("level") == "error"]
    assert errors and errors[-1]["msg"].startswith(want), errors
    assert r.stderr.strip().splitlines()[-1].startswith(want), r.stderr
    nothing_left(hardened, cid)


def test_a_config_error_names_the_program_too(hardened, bundle, tmp_path):
    log = tmp_path / "log.json"
    del bundle.config["process"]
    r, _ = run(hardened, bundle, "--log", str(log), "--log-format", "json", verb="create")
    assert r.returncode == 1
    errors = [json.loads(line) for line in log.read_text().splitlines()]
    msgs = [e["msg"] for e in errors if e.get("level") == "error"]
    assert msgs and msgs[-1].startswith("seerun create failed: config.json: process: "), msgs


# ---- 11. the device cgroup is exactly resources.devices ----


def kmsg_bundle(bundle, rules):
    bundle.linux["devices"] = [{"path": "/dev/kmsg", "type": "c", "major": 1, "minor": 11,
                                "fileMode": 0o644, "uid": 0, "gid": 0}]
    bundle.linux.setdefault("resources", {})["devices"] = rules
    bundle.shell("if echo seerun-escape-misc-test > /dev/kmsg; then echo WROTE; "
                 "else echo REFUSED; fi; test -c /dev/kmsg && echo NODE")
    return bundle


def test_a_listed_device_is_not_reachable_when_resources_devices_denies_all(seerun, bundle):
    # Permissive: the node is created as asked; only the device cgroup stands in the way.
    kmsg_bundle(bundle, [{"allow": False, "access": "rwm"}])
    r, _ = run(seerun, bundle)
    assert r.returncode == 0, r.stderr
    assert "NODE" in r.stdout, r.stdout
    assert "REFUSED" in r.stdout and "WROTE" not in r.stdout, r.stdout


def test_a_listed_device_that_resources_devices_allows_is_reachable(seerun, bundle):
    kmsg_bundle(bundle, [{"allow": False, "access": "rwm"},
                         {"allow": True, "type": "c", "major": 1, "minor": 11, "access": "w"}])
    r, _ = run(seerun, bundle)
    assert r.returncode == 0, r.stderr
    assert "WROTE" in r.stdout and "NODE" in r.stdout, r.stdout


def test_the_default_nodes_stay_reachable_with_deny_all(hardened, bundle):
    bundle.linux.setdefault("resources", {})["devices"] = [{"allow": False, "access": "rwm"}]
    bundle.shell("echo x > /dev/null && head -c 1 /dev/zero | wc -c && echo OK")
    r, _ = run(hardened, bundle)
    assert r.returncode == 0 and r.stdout.split() == ["1", "OK"], (r.stdout, r.stderr)
