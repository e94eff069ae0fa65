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

import pytest

from conftest import SEERUN, Seerun
from test_escape import ALLOWED_MASK, attacker, decision, decisions, probe_dir, wait_stopped
from test_hostile_configs import refused, run

assert probe_dir  # a fixture, imported for the tests below

HOST = 200000  # the config's own user namespace: container 0-65535 on host 200000-265535


def own_userns(bundle, host=HOST):
    """A user namespace of the config's own, as podman --uidmap writes it (allowed: above the
    host's users, outside seerun's pool)."""
    bundle.linux["namespaces"].append({"type": "user"})
    bundle.linux["uidMappings"] = [{"containerID": 0, "hostID": host, "size": 65536}]
    bundle.linux["gidMappings"] = [{"containerID": 0, "hostID": host, "size": 65536}]


def bind(destination, source, *options, maps=None):
    m = {"destination": destination, "type": "bind", "source": str(source),
         "options": list(options)}
    if maps is not None:
        m["uidMappings"] = maps
        m["gidMappings"] = maps
    return m


def add_mount(bundle, m):
    bundle.config["mounts"].append(m)
    return len(bundle.config["mounts"]) - 1


def policy_check(s, bundle):
    """`seerun policy check --bundle`: its exit status and document."""
    r = s.cmd("policy", "check", "--bundle", bundle.write())
    return r, json.loads(r.stdout)


def check_agrees(s, bundle, field, created):
    """policy check refuses the same field for the same reason as create did."""
    r, doc = policy_check(s, bundle)
    assert r.returncode != 0 and doc["allowed"] is False, doc
    mine = [d for d in doc["decisions"] if d["field"] == field]
    assert mine and mine[-1]["kind"] == "refused", doc["decisions"]
    assert mine[-1]["reason"] == created["reason"], (mine[-1], created)


def refused_and_checked(s, bundle, field, *words):
    """create (run) is refused naming field and words, on record; policy check agrees."""
    d = refused(s, run(s, bundle), field, *words)
    check_agrees(s, bundle, field, d)
    return d


@pytest.fixture
def shared(tmp_path):
    d = tmp_path / "shared"
    d.mkdir()
    os.chmod(d, 0o755)
    return d


# ---- class 1: idmapped binds ----


def test_an_idmapped_bind_without_mappings_cannot_plant_a_setuid_root_file_on_the_host(
        hardened, bundle, shared):
    # "idmap" and no mappings: the container's own user namespace is the mount's, so on-disk
    # uid 0 is the container's root.
    own_userns(bundle)
    i = add_mount(bundle, bind("/shared", shared, "rbind", "rw", "idmap"))
    bundle.shell("cp /bin/sh /shared/sh && chmod 4755 /shared/sh")
    d = refused_and_checked(hardened, bundle, f"mounts[{i}].options", "on-disk uid 0",
                            "profiles.default.mounts.idmappable")
    assert "outside the host ids its user namespace maps" in d["reason"], d
    assert os.listdir(shared) == []


def test_explicit_mount_mappings_onto_the_containers_root_are_refused(hardened, bundle, shared):
    own_userns(bundle)
    i = add_mount(bundle, bind("/shared", shared, "rbind", "rw", "idmap",
                               maps=[{"containerID": 0, "hostID": HOST, "size": 65536}]))
    bundle.shell("cp /bin/sh /shared/sh && chmod 4755 /shared/sh")
    refused_and_checked(hardened, bundle, f"mounts[{i}].uidMappings", "on-disk uid 0")
    assert os.listdir(shared) == []


def test_a_read_only_idmapped_bind_cannot_read_a_root_only_host_file(hardened, bundle, tmp_path):
    secret_dir = tmp_path / "secrets"
    secret_dir.mkdir()
    secret = secret_dir / "key"
    secret.write_text("HOST-SECRET\n")
    os.chmod(secret, 0o600)
    own_userns(bundle)
    i = add_mount(bundle, bind("/secrets", secret_dir, "rbind", "ro", "idmap"))
    bundle.shell("cat /secrets/key")
    r = run(hardened, bundle)
    assert "HOST-SECRET" not in r.stdout
    d = refused(hardened, r, f"mounts[{i}].options", "on-disk uid 0")
    check_agrees(hardened, bundle, f"mounts[{i}].options", d)


def test_mount_mappings_of_a_container_seerun_remaps_are_refused_unless_identity(
        hardened, bundle, shared):
    # No user namespace in the config: seerun puts the container on a range of its pool
    # (this test's registry is fresh: the pool's first range, host 2^30).  Mapping that range
    # onto on-disk 0 would make its root host root there.
    pool_first = 1 << 30
    i = add_mount(bundle, bind("/shared", shared, "rbind", "rw", "idmap",
                               maps=[{"containerID": 0, "hostID": pool_first, "size": 65536}]))
    bundle.shell("cp /bin/sh /shared/sh && chmod 4755 /shared/sh")
    refused_and_checked(hardened, bundle, f"mounts[{i}].uidMappings", "not in config.json")
    assert os.listdir(shared) == []


def test_an_idmapped_bind_that_maps_only_the_containers_own_ids_is_allowed(hardened, bundle,
                                                                          shared):
    # Identity over the container's own host range: it acts on disk as the ids it holds.
    os.chown(shared, HOST, HOST)
    own_userns(bundle)
    i = add_mount(bundle, bind("/shared", shared, "rbind", "rw", "idmap",
                               maps=[{"containerID": HOST, "hostID": HOST, "size": 65536}]))
    bundle.shell("echo made > /shared/f")
    r = run(hardened, bundle)
    assert r.returncode == 0, r.stderr
    st = os.stat(shared / "f")
    assert (st.st_uid, st.st_gid) == (HOST, HOST), st
    d = decision(hardened, f"mounts[{i}].uidMappings")
    assert d["kind"] == "allowed", d


def list_idmappable(s, directory):
    """The default profile of s's policy, with mounts.idmappable listing directory.  (In the
    test itself: the bundle's fixture writes the policy file anew.)"""
    with open(s.policy) as f:
        policy = json.load(f)
    policy["profiles"]["default"].setdefault("mounts", {})["idmappable"] = [str(directory)]
    with open(s.policy, "w") as f:
        json.dump(policy, f)


def test_an_idmapped_bind_below_a_directory_the_profile_lists_as_idmappable_is_allowed(
        hardened, bundle, tmp_path):
    s, volumes = hardened, tmp_path / "volumes"
    list_idmappable(s, volumes)
    vol = volumes / "v1" / "_data"
    vol.mkdir(parents=True)
    own_userns(bundle)
    i = add_mount(bundle, bind("/vol", vol, "rbind", "rw", "idmap"))
    bundle.shell("echo made > /vol/f")
    r, doc = policy_check(s, bundle)
    assert r.returncode == 0 and doc["allowed"] is True, doc
    r = run(s, bundle)
    assert r.returncode == 0, r.stderr
    # The operator's choice: the container's root is the volume's on-disk root.
    st = os.stat(vol / "f")
    assert (st.st_uid, st.st_gid) == (0, 0), st
    d = [d for d in decisions(s, f"mounts[{i}].options") if d["asked"] == '"idmap"'][-1]
    assert d["kind"] == "allowed" and "profiles.default.mounts.idmappable" in d["reason"], d
    assert str(volumes) in d["reason"], d


# ---- class 3: seerun's own files ----


def start(s, bundle, *argv):
    cid = s.id(uuid.uuid4().hex[:6])
    bundle.args(*argv)
    s.cmd("run", "-d", "--bundle", bundle.write(), cid, check=True)
    return cid


def test_a_container_cannot_bind_another_containers_state_directory(hardened, bundle, tmp_path):
    victim = start(hardened, bundle, "sleep", "60")
    bundle.args("cat", "/victim/config.json")
    i = add_mount(bundle, bind("/victim", os.path.join(hardened.root, victim), "bind", "ro"))
    field = f"mounts[{i}].source"
    r = run(hardened, bundle)
    assert r.returncode != 0 and r.stdout == "", r.stdout
    assert field in r.stderr and "a seerun state root" in r.stderr, r.stderr
    d = decision(hardened, field)
    assert d["kind"] == "refused" and hardened.root in d["reason"], d
    assert hardened.list_ids() == [victim]
    check_agrees(hardened, bundle, field, d)
    hardened.cmd("kill", victim, "KILL")
    wait_stopped(hardened, victim)


def test_every_state_root_seerun_was_used_with_is_recorded_and_denied(hardened, bundle,
                                                                       tmp_path):
    # Another state root (as Docker's or containerd's are), recorded at its first create.
    other = Seerun(tmp_path / "other-state", hardened.prefix, hardened.policy, "default")
    cid = other.id("victim")
    record_dir = os.path.dirname(hardened.registry)
    os.makedirs(record_dir, mode=0o700, exist_ok=True)
    # What a runtime killed while rewriting the record leaves: swept at the next rewrite.
    stale = os.path.join(record_dir, ".state-roots.99999.tmp")
    with open(stale, "w") as f:
        f.write("/half/written\n")
    try:
        other.cmd("create", "--bundle", bundle.write(), cid, check=True)
        assert not os.path.exists(stale)
        i = add_mount(bundle, bind("/victim", tmp_path / "other-state" / cid, "bind", "ro"))
        d = refused_and_checked(hardened, bundle, f"mounts[{i}].source", "a seerun state root",
                                "recorded in")
        record = os.path.join(os.path.dirname(hardened.registry), "state-roots")
        assert record in d["reason"], d
        with open(record) as f:
            assert str(tmp_path / "other-state") in f.read().split("\n")
    finally:
        other.cleanup()


@pytest.mark.parametrize("what", ["directory", "file"])
def test_the_audit_log_cannot_be_bound(hardened, bundle, what):
    run(hardened, bundle)  # the log exists
    path = hardened.audit_log if what == "file" else os.path.dirname(hardened.audit_log)
    assert os.path.exists(path)
    i = add_mount(bundle, bind(f"/audit-{what}", path, "bind", "rw"))
    refused_and_checked(hardened, bundle, f"mounts[{i}].source",
                        "the audit log's directory (auditLog)")


def test_the_runtime_binary_cannot_be_bound(hardened, bundle):
    i = add_mount(bundle, bind("/seerun", os.path.realpath(SEERUN), "bind", "ro"))
    refused_and_checked(hardened, bundle, f"mounts[{i}].source", "the seerun binary")


def test_binds_above_seeruns_files_still_work(hardened, bundle):
    # /usr holds an installed binary, /var/log the default audit log: not denied above them.
    add_mount(bundle, bind("/hostusr", "/usr", "rbind", "ro"))
    add_mount(bundle, bind("/hostlog", "/var/log", "rbind", "ro"))
    add_mount(bundle, bind("/hostbin", os.path.dirname(os.path.realpath(SEERUN)), "rbind", "ro"))
    bundle.shell("test -d /hostusr/bin && test -d /hostlog && test -d /hostbin && echo ok")
    r = run(hardened, bundle)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


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
    if r.returncode != 0:
        # The records disagree with the container's index (statedir.h): refused, nothing ran.
        assert r.stdout == "" and "state.json" in r.stderr, r.stderr
    else:
        seen = {l.split(":")[0]: l.split(":")[1].split() for l in r.stdout.splitlines()
                if ":" in l}
        assert seen["Seccomp"] == ["2"], seen["Seccomp"]
        assert seen["NoNewPrivs"] == ["1"], seen["NoNewPrivs"]
        assert int(seen["CapEff"][0], 16) & ~ALLOWED_MASK == 0, seen["CapEff"]
        assert int(seen["CapBnd"][0], 16) & ~ALLOWED_MASK == 0, seen["CapBnd"]
    # What the index records is removed, whatever state.json says.
    hardened.cmd("delete", "--force", cid, check=True)


def start_time(pid):
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[19])


def test_a_pid_rewritten_in_state_json_does_not_let_exec_join_the_hosts_namespaces(
        hardened, bundle, probe_dir):
    cid = start(hardened, bundle, "sleep", "60")
    sdir = os.path.join(hardened.root, cid)
    saved = {}
    try:
        # The init named as a host process (this test's own, with its start time): exec would
        # join its namespaces, the host's, as host root.
        for name in ("state.json", "recovery.json"):
            with open(os.path.join(sdir, name)) as f:
                saved[name] = f.read()
            st = json.loads(saved[name])
            st["pid"], st["pidStartTime"] = os.getpid(), start_time(os.getpid())
            with open(os.path.join(sdir, name), "w") as f:
                json.dump(st, f)
        r = hardened.cmd("exec", cid, "readlink", "/proc/self/ns/user")
        assert r.stdout.strip() != os.readlink("/proc/self/ns/user"), "exec ran on the host"
        assert r.returncode != 0 and "state.json" in r.stderr, (r.stdout, r.stderr)
    finally:
        # Before anything kills "the container's init" that state.json names.
        for name, text in saved.items():
            with open(os.path.join(sdir, name), "w") as f:
                f.write(text)
    hardened.cmd("kill", cid, "KILL")
    wait_stopped(hardened, cid)
