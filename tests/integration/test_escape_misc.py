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
import uuid

import pytest

from conftest import read_userns_registry


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
