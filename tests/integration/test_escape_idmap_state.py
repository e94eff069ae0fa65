"""Escapes through idmapped bind mounts and through seerun's own files (issue 13, classes 1
and 3), under the default profile.

An idmapped bind lets the container act on that tree as the on-disk ids its mapping names:
mapped so that on-disk 0 is the container's root, the container writes setuid-root files onto
the host and reads root's 0600 files.  A container that reaches another container's state
directory reads its config (secrets) and rewrites what exec and delete read back.  Each test
performs the attack the way a tenant who controls config.json and the image would, and checks
what the host shows, the audit log, and that `seerun policy check` says what `create` does."""
import json
import os
import uuid

from test_escape import ALLOWED_MASK, attacker, probe_dir, wait_stopped

assert probe_dir  # a fixture, imported for the tests below


# ---- class 3: what is read back from a state directory ----


def start(s, bundle, *argv):
    cid = s.id(uuid.uuid4().hex[:6])
    bundle.args(*argv)
    s.cmd("run", "-d", "--bundle", bundle.write(), cid, check=True)
    return cid


def test_a_tampered_state_file_does_not_take_the_seccomp_filter_off_an_exec(hardened, bundle,
                                                                             probe_dir):
    attacker(bundle, probe_dir)
    cid = start(hardened, bundle, "sleep", "60")
    # What a container that reached its state directory would write: no built-in filter,
    # every capability, a permissive profile (the policy has one), no no_new_privileges.
    sdir = os.path.join(hardened.root, cid)
    for name in ("state.json", "recovery.json"):
        with open(os.path.join(sdir, name)) as f:
            st = json.load(f)
        dec = st.setdefault("decided", {})
        dec["builtinSeccomp"] = False
        dec["profile"] = "permissive"
        if "capabilities" in dec:
            dec["capabilities"] = [(1 << 41) - 1] * 5
        with open(os.path.join(sdir, name), "w") as f:
            json.dump(st, f)
    with open(os.path.join(sdir, "config.json")) as f:
        cfg = json.load(f)
    cfg["process"]["noNewPrivileges"] = False
    cfg["linux"].pop("seccomp", None)
    with open(os.path.join(sdir, "config.json"), "w") as f:
        json.dump(cfg, f)
    r = hardened.cmd("exec", "--cap", "CAP_SYS_ADMIN", cid, "cat", "/proc/self/status")
    assert r.returncode == 0, r.stderr
    seen = {l.split(":")[0]: l.split(":")[1].split() for l in r.stdout.splitlines() if ":" in l}
    assert seen["Seccomp"] == ["2"], seen["Seccomp"]
    assert seen["NoNewPrivs"] == ["1"], seen["NoNewPrivs"]
    assert int(seen["CapEff"][0], 16) & ~ALLOWED_MASK == 0, seen["CapEff"]
    assert int(seen["CapBnd"][0], 16) & ~ALLOWED_MASK == 0, seen["CapBnd"]
    hardened.cmd("kill", cid, "KILL")
    wait_stopped(hardened, cid)
