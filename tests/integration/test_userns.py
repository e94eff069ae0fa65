"""Never host root: every container runs in a user namespace whose ids map onto an unprivileged
host range from the registry (issue 4), under the default profile."""
import json
import os
import subprocess
import threading
import time

import pytest

from conftest import read_userns_registry, wait_for


def status_ids(pid):
    """The Uid and Gid lines of /proc/<pid>/status, as the host sees them."""
    ids = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("Uid", "Gid"):
                ids[key] = [int(v) for v in value.split()]
    return ids


def container_pids(cid):
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/cgroup") as f:
                    if f"/{cid}" in f.read():
                        found.append(int(pid))
            except OSError:
                pass
    return found


def registry(hardened):
    return read_userns_registry(hardened.registry)


def test_no_process_of_a_container_holds_host_uid_or_gid_0(hardened, bundle):
    # The config asks for root without a user namespace, as podman and Docker send it.
    bundle.shell("sleep 30 & sleep 30 & wait")
    cid = hardened.id()
    hardened.cmd("run", "-d", "--bundle", bundle.write(), cid, check=True)
    hardened.cmd("exec", "-d", cid, "sleep", "30", check=True)
    def all_four():  # the init, two sleeps and the exec'd one
        pids = container_pids(cid)
        return len(pids) >= 4 and pids
    pids = wait_for(all_four, what="the container's four processes")
    for pid in pids:
        ids = status_ids(pid)
        assert 0 not in ids["Uid"] and 0 not in ids["Gid"], (pid, ids)
    with open(f"/proc/{hardened.state(cid)['pid']}/uid_map") as f:
        inside, outside, size = f.read().split()
    assert inside == "0" and int(outside) > 65535 and size == "65536"


def test_inside_the_process_is_root_of_its_own_namespace(hardened, bundle):
    bundle.shell("id -u; cat /proc/self/uid_map; ls -ln /bin/busybox")
    r = hardened.cmd("run", "--bundle", bundle.write(), hardened.id(), check=True)
    lines = r.stdout.splitlines()
    assert lines[0] == "0"
    assert lines[1].split()[1] != "0"
    # The busybox rootfs is a plain directory: idmapped, its files keep their owner inside.
    assert lines[2].split()[2:4] == ["0", "0"]


def test_a_mapping_onto_host_0_is_refused(hardened, bundle):
    bundle.linux["namespaces"].append({"type": "user"})
    bundle.linux["uidMappings"] = [{"containerID": 0, "hostID": 0, "size": 65536}]
    bundle.linux["gidMappings"] = [{"containerID": 0, "hostID": 0, "size": 65536}]
    r = hardened.cmd("run", "--bundle", bundle.write(), hardened.id())
    assert r.returncode == 1 and "host id 0" in r.stderr
    assert any(l.get("kind") == "refused" and "uidMappings" in l.get("field", "")
               for l in hardened.audit())


def test_two_concurrent_creates_never_get_overlapping_ranges(hardened, bundle):
    bundle.args("sleep", "30")
    path = bundle.write()
    ids = [hardened.id(f"c{i}") for i in range(6)]
    results = {}

    def create(cid):
        results[cid] = hardened.cmd("create", "--bundle", path, cid)

    threads = [threading.Thread(target=create, args=(c,)) for c in ids]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(r.returncode == 0 for r in results.values()), results
    ranges = sorted((r["first"], r["first"] + r["size"]) for r in registry(hardened).values())
    assert len(ranges) == 6
    for (a_lo, a_hi), (b_lo, _) in zip(ranges, ranges[1:]):
        assert a_hi <= b_lo, ranges
    # Each container really runs on its own range.
    outside = set()
    for cid in ids:
        with open(f"/proc/{hardened.state(cid)['pid']}/uid_map") as f:
            outside.add(int(f.read().split()[1]))
    assert len(outside) == 6


def test_a_restarted_container_gets_its_range_again(hardened, bundle):
    # podman and Docker restart as delete + create of the same id: files it wrote to a volume
    # must still be its own.
    bundle.args("true")
    path = bundle.write()
    cid = hardened.id()
    hardened.cmd("run", "--bundle", path, cid, check=True)
    first = registry(hardened)
    assert len(first) == 1
    (key, entry), = first.items()
    assert entry["released"] > 0  # deleted, its range kept for it
    other = hardened.id("other")
    hardened.cmd("run", "--bundle", path, other, check=True)
    hardened.cmd("run", "--bundle", path, cid, check=True)
    again = registry(hardened)
    assert again[key]["first"] == entry["first"]
    assert again[key]["first"] != next(v for k, v in again.items() if k != key)["first"]


def test_pod_members_share_one_user_namespace_and_range(hardened, bundle):
    bundle.args("sleep", "30")
    infra = hardened.id("infra")
    hardened.cmd("run", "-d", "--bundle", bundle.write(), infra, check=True)
    infra_pid = hardened.state(infra)["pid"]
    # A member joins the infra container's network and ipc namespaces, as a Kubernetes pod does.
    for ns in bundle.linux["namespaces"]:
        if ns["type"] in ("network", "ipc"):
            ns["path"] = f"/proc/{infra_pid}/ns/{'net' if ns['type'] == 'network' else 'ipc'}"
    member = hardened.id("member")
    hardened.cmd("run", "-d", "--bundle", bundle.write(), member, check=True)
    member_pid = hardened.state(member)["pid"]
    for kind in ("user", "net", "ipc"):
        assert os.stat(f"/proc/{member_pid}/ns/{kind}").st_ino == \
            os.stat(f"/proc/{infra_pid}/ns/{kind}").st_ino, kind
    assert len(registry(hardened)) == 1  # one range for the pod


def test_the_hosts_dev_nodes_keep_their_owner_and_mode(hardened, bundle):
    before = {n: os.stat(f"/dev/{n}") for n in ("null", "zero", "full", "random", "urandom", "tty")}
    bundle.shell("ls -l /dev/null > /dev/null; echo x > /dev/null")
    hardened.cmd("run", "--bundle", bundle.write(), hardened.id(), check=True)
    for n, st in before.items():
        now = os.stat(f"/dev/{n}")
        assert (now.st_uid, now.st_gid, now.st_mode) == (st.st_uid, st.st_gid, st.st_mode), n


def test_files_written_to_a_volume_belong_to_the_mapped_ids_on_the_host(hardened, bundle, tmp_path):
    vol = tmp_path / "volume"
    vol.mkdir()
    os.chmod(vol, 0o777)
    bundle.config["mounts"].append({"destination": "/data", "type": "none", "source": str(vol),
                                    "options": ["rbind", "rw"]})
    bundle.shell("echo hi > /data/file")
    cid = hardened.id()
    hardened.cmd("run", "--bundle", bundle.write(), cid, check=True)
    st = os.stat(vol / "file")
    first = next(iter(registry(hardened).values()))["first"]
    assert st.st_uid == first and st.st_gid == first


def small_pool(hardened, count):
    with open(hardened.policy) as f:
        policy = json.load(f)
    policy["userNamespaces"]["count"] = count
    with open(hardened.policy, "w") as f:
        json.dump(policy, f)


def test_a_full_pool_takes_the_range_released_longest_ago_never_a_live_one(hardened, bundle):
    small_pool(hardened, 2)
    path = bundle.args("true").write()
    a, b, c = hardened.id("a"), hardened.id("b"), hardened.id("c")
    hardened.cmd("run", "--bundle", path, a, check=True)
    # Release times are in seconds: b's must come after a's.
    released_a = next(v["released"] for k, v in registry(hardened).items()
                      if k.endswith("/" + a))
    assert released_a > 0
    wait_for(lambda: time.time() >= released_a + 1, interval=0.05,
             what="the clock to pass the second a was released in")
    hardened.cmd("run", "--bundle", path, b, check=True)
    ranges = registry(hardened)
    first_a = next(v["first"] for k, v in ranges.items() if k.endswith("/" + a))
    # Both ranges are in their grace period: c gets a's, deleted first, and says so.
    hardened.cmd("run", "--bundle", path, c, check=True)
    ranges = registry(hardened)
    assert [k.rsplit("/", 1)[1] for k, v in ranges.items() if v["first"] == first_a] == [c]
    reasons = [l["reason"] for l in hardened.audit() if l.get("id") == c and
               l.get("field") == "linux.namespaces.user"]
    assert reasons and "the pool was full" in reasons[-1], reasons
    # With every range held by a container that exists, nothing is taken from it.
    bundle.args("sleep", "30")
    path = bundle.write()
    hardened.cmd("run", "-d", "--bundle", path, a, check=True)
    hardened.cmd("run", "-d", "--bundle", path, b, check=True)
    r = hardened.cmd("run", "-d", "--bundle", path, c)
    assert r.returncode == 1 and "all 2 ranges are held by containers that exist" in r.stderr, \
        r.stderr
    assert sorted(hardened.list_ids()) == sorted([a, b])


def test_a_writer_killed_mid_save_leaves_no_temporary_file(hardened, bundle):
    directory = os.path.dirname(hardened.registry)
    os.makedirs(directory, mode=0o700, exist_ok=True)
    leftover = os.path.join(directory, ".ranges.999999.tmp")
    with open(leftover, "w") as f:
        f.write("half a registry")
    hardened.cmd("run", "--bundle", bundle.args("true").write(), hardened.id(), check=True)
    assert not os.path.exists(leftover)
    assert len(registry(hardened)) == 1


@pytest.mark.parametrize("how", ["run", "create"])
def test_a_failed_create_leaves_no_range_held(hardened, bundle, how):
    # No container is left for the engine's `delete --force` to find: a range still held for
    # the id would never be handed out again.  One fails after the container was made (its
    # process does not exist), one while the policy's decisions are recorded.
    cid = hardened.id(how)
    if how == "run":
        bundle.args("/no/such/program")
    else:
        os.makedirs(hardened.audit_log)  # the audit log cannot be written
    r = hardened.cmd(how, "--bundle", bundle.write(), cid)
    assert r.returncode != 0
    assert ("/no/such/program" if how == "run" else "audit log") in r.stderr, r.stderr
    assert hardened.list_ids() == []
    entries = registry(hardened)
    assert entries, "the policy took no range: the test shows nothing"
    assert all(e["released"] > 0 for e in entries.values()), entries
    if how == "create":
        os.rmdir(hardened.audit_log)


REGISTRY_HEADER = "seerun user namespace registry 2: FIRST SIZE RELEASED KEY\n"
POOL_FIRST = 1073741824  # the default policy's userNamespaces.first and size
POOL_SIZE = 65536


def others(n, released, start=100):
    """n lines of other keys in the default pool, released at `released` (in their grace)."""
    return "".join(f"{POOL_FIRST + (start + i) * POOL_SIZE} {POOL_SIZE} {released} "
                   f"/elsewhere/other-{i}\n" for i in range(n))


# A range released two days ago (past the default policy's grace of a day): any rewrite of the
# file leaves it out, an append or an in-place mark keeps it (an inode number is no proof:
# ext4 hands a freed one to the next file).
EXPIRED = (f"{POOL_FIRST + 9000 * POOL_SIZE} {POOL_SIZE} {int(time.time()) - 2 * 86400} "
           "/gone/long-ago\n")


def write_registry(hardened, text):
    os.makedirs(os.path.dirname(hardened.registry), mode=0o700, exist_ok=True)
    with open(hardened.registry, "w") as f:
        f.write(text)
    os.chmod(hardened.registry, 0o600)


def key_of(hardened, cid):
    return os.path.join(os.path.realpath(hardened.root), cid)


def test_a_create_and_delete_write_their_own_line_and_leave_every_other_as_it_was(hardened,
                                                                                  bundle):
    # Thousands of ranges wait out their grace period on a busy host: a create appends its
    # line and a delete marks it released where it is, never rewriting the rest (whose bytes
    # stay: the expired line a rewrite would leave out too), and the file stays the format an
    # older seerun reads.
    before = REGISTRY_HEADER + others(2000, int(time.time()) - 60) + EXPIRED
    write_registry(hardened, before)
    cid = hardened.id()
    r = hardened.cmd("run", "--bundle", bundle.args("cat", "/proc/self/uid_map").write(), cid,
                     check=True)
    with open(hardened.registry) as f:
        after = f.read()
    assert after.startswith(before), "the registry was rewritten whole"
    line = after[len(before):]
    first, size, released, key = line.rstrip("\n").split(" ", 3)
    assert key == key_of(hardened, cid) and line.count("\n") == 1, line
    assert int(size) == POOL_SIZE and len(released) == 10 and int(released) > 0, line
    entries = registry(hardened)
    assert len(entries) == 2002 and entries[key]["first"] == int(first)
    # The range it took is none of the others' (all in their grace period).
    assert all(v["first"] != int(first) for k, v in entries.items() if k != key)
    assert r.stdout.split()[:3] == ["0", first, str(POOL_SIZE)], r.stdout


def test_an_older_seeruns_line_is_released_by_rewriting_the_file(hardened, bundle):
    # An older seerun writes a held range's RELEASED as "0" (one digit, not ten): the delete
    # cannot mark it in place, so it rewrites the file, the line released, the rest kept.
    cid = hardened.id()
    key = key_of(hardened, cid)
    mine = POOL_FIRST + 7 * POOL_SIZE
    write_registry(hardened, REGISTRY_HEADER + others(3, int(time.time()) - 60) + EXPIRED +
                   f"{mine} {POOL_SIZE} 0 {key}\n")
    r = hardened.cmd("run", "--bundle", bundle.args("cat", "/proc/self/uid_map").write(), cid,
                     check=True)
    assert r.stdout.split()[:3] == ["0", str(mine), str(POOL_SIZE)], r.stdout  # its own range
    entries = registry(hardened)
    assert len(entries) == 4, entries  # rewritten: the expired range left out
    assert entries[key]["first"] == mine and entries[key]["released"] > 0, entries[key]


def test_a_line_that_would_cross_a_page_is_written_by_rewriting_the_file(hardened, bundle):
    # A write that crosses a page could be cut short by a kill (the kernel checks for a fatal
    # signal between pages): such a line goes to a temporary copy renamed over the file.
    head = REGISTRY_HEADER + others(3, int(time.time()) - 60) + EXPIRED
    cid = hardened.id()
    pad = 4096 - len(head) - 20  # the next line starts 20 bytes before the page's end
    line = f"{POOL_FIRST + 50 * POOL_SIZE} {POOL_SIZE} {int(time.time()) - 60} /elsewhere/"
    head += line + "p" * (pad - len(line) - 1) + "\n"
    assert len(head) == 4096 - 20
    write_registry(hardened, head)
    hardened.cmd("run", "--bundle", bundle.args("true").write(), cid, check=True)
    entries = registry(hardened)
    assert "/gone/long-ago" not in entries, "the line was appended across the page"
    assert len(entries) == 5 and entries[key_of(hardened, cid)]["released"] > 0, entries
