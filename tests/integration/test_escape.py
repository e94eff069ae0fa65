"""Escape attempts from inside a container under the default profile (issues 3 and 4): whatever
config.json asks, the container cannot hurt the host.

Each test gives the container the worst config it could ask for on that point (every
capability, no seccomp, host namespaces, a writable root ...), runs the probe
(helpers/probe.c) inside it as the container's root -- what an attacker who owns the image
gets -- and checks what the probe saw, what the host shows, and the audit line of the
decision."""
import json
import os
import re
import shutil
import socket
import subprocess
import time
import uuid

import pytest

from conftest import SEERUN, TOP, reap_children, wait_for

HERE = os.path.dirname(os.path.abspath(__file__))
HELPERS = os.path.join(HERE, "helpers")

with open(os.path.join(TOP, "contrib", "policy", "default.json")) as _f:
    DEFAULT_PROFILE = json.load(_f)["profiles"]["default"]

CAP_NAMES = [
    "CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_DAC_READ_SEARCH", "CAP_FOWNER", "CAP_FSETID",
    "CAP_KILL", "CAP_SETGID", "CAP_SETUID", "CAP_SETPCAP", "CAP_LINUX_IMMUTABLE",
    "CAP_NET_BIND_SERVICE", "CAP_NET_BROADCAST", "CAP_NET_ADMIN", "CAP_NET_RAW", "CAP_IPC_LOCK",
    "CAP_IPC_OWNER", "CAP_SYS_MODULE", "CAP_SYS_RAWIO", "CAP_SYS_CHROOT", "CAP_SYS_PTRACE",
    "CAP_SYS_PACCT", "CAP_SYS_ADMIN", "CAP_SYS_BOOT", "CAP_SYS_NICE", "CAP_SYS_RESOURCE",
    "CAP_SYS_TIME", "CAP_SYS_TTY_CONFIG", "CAP_MKNOD", "CAP_LEASE", "CAP_AUDIT_WRITE",
    "CAP_AUDIT_CONTROL", "CAP_SETFCAP", "CAP_MAC_OVERRIDE", "CAP_MAC_ADMIN", "CAP_SYSLOG",
    "CAP_WAKE_ALARM", "CAP_BLOCK_SUSPEND", "CAP_AUDIT_READ", "CAP_PERFMON", "CAP_BPF",
    "CAP_CHECKPOINT_RESTORE",
]
ALLOWED_CAPS = set(DEFAULT_PROFILE["capabilities"]["allowed"])
ALLOWED_MASK = sum(1 << CAP_NAMES.index(c) for c in ALLOWED_CAPS)
# Device nodes of the profile's devices.allowed, by (type, major, minor); pts: any minor.
ALLOWED_NODES = {("c", 1, 3), ("c", 1, 5), ("c", 1, 7), ("c", 1, 8), ("c", 1, 9),
                 ("c", 5, 0), ("c", 5, 1), ("c", 5, 2)}


# ---- the probe ----


@pytest.fixture(scope="session")
def probe_dir(tmp_path_factory):
    """A directory holding the static probe, bind-mounted read-only at /probe."""
    d = tmp_path_factory.mktemp("probe")
    out = d / "probe"
    subprocess.run(["cc", "-static", "-O2", "-o", str(out), os.path.join(HELPERS, "probe.c")],
                   check=True, capture_output=True)
    os.chmod(d, 0o755)
    os.chmod(out, 0o755)
    return d


def probe_mount(probe_dir):
    return {"destination": "/probe", "type": "none", "source": str(probe_dir),
            "options": ["bind", "ro"]}


def attacker(bundle, probe_dir, *checks):
    """The worst process a config can ask for: root, every capability in every set, no
    no_new_privileges, the probe as its program."""
    bundle.process["user"] = {"uid": 0, "gid": 0}
    bundle.process["capabilities"] = {s: list(CAP_NAMES) for s in
                                      ("bounding", "effective", "permitted", "inheritable",
                                       "ambient")}
    bundle.process["noNewPrivileges"] = False
    bundle.config["mounts"].append(probe_mount(probe_dir))
    bundle.args("/probe/probe", *checks)
    return bundle


def host_namespaces(bundle):
    """No namespace but the mount one: the host's pid, network, ipc, uts and cgroup."""
    bundle.linux["namespaces"] = [{"type": "mount"}]
    bundle.config.pop("hostname", None)
    bundle.config.pop("domainname", None)


def parse(stdout):
    lines = [l for l in stdout.splitlines() if l.startswith("{")]
    assert lines, f"no probe output: {stdout!r}"
    return json.loads(lines[-1])


def run_probe(s, bundle, **kw):
    r = s.cmd("run", "--bundle", bundle.write(), s.id(uuid.uuid4().hex[:6]), **kw)
    assert r.returncode == 0, f"the probe did not run ({r.returncode}): {r.stderr}{r.stdout}"
    return parse(r.stdout)


def decisions(s, field=None):
    return [d for d in s.audit() if d.get("event") == "decision" and
            (field is None or d["field"] == field)]


def decision(s, field):
    found = decisions(s, field)
    assert found, f"no audit line for {field}: " + json.dumps(decisions(s), indent=1)
    return found[-1]


def status_of(pid):
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            out[k] = v.split()
    return out


def wait_stopped(s, cid, timeout=20):
    def stopped():
        # An exec'd process is the test's child (the runtime's CLONE_PARENT, as under a shim):
        # the container's init cannot finish dying before its zombie is reaped.
        reap_children()
        return s.state(cid)["status"] == "stopped"
    wait_for(stopped, timeout=timeout, what=f"{cid} to stop")


def container_pids(s, cid):
    r = s.cmd("ps", "--format", "json", cid, check=True)
    return json.loads(r.stdout)


def cgroup_dir(pid, controller):
    """The host directory of a process's cgroup for a controller: v1's hierarchy where the
    controller is mounted there (this hybrid host), else the unified one."""
    v2 = None
    with open(f"/proc/{pid}/cgroup") as f:
        for line in f:
            _, ctrls, path = line.rstrip("\n").split(":", 2)
            if controller in ctrls.split(",") and os.path.isdir(f"/sys/fs/cgroup/{controller}"):
                return f"/sys/fs/cgroup/{controller}{path}"
            if ctrls == "":
                v2 = path
    assert v2 is not None, f"no {controller} cgroup for {pid}"
    unified = "/sys/fs/cgroup/unified" if os.path.isdir("/sys/fs/cgroup/unified") else \
        "/sys/fs/cgroup"
    return unified + v2


def pids_max(pid):
    with open(os.path.join(cgroup_dir(pid, "pids"), "pids.max")) as f:
        return f.read().strip()


def memory_max(pid):
    d = cgroup_dir(pid, "memory")
    name = "memory.limit_in_bytes" if os.path.exists(f"{d}/memory.limit_in_bytes") else \
        "memory.max"
    with open(os.path.join(d, name)) as f:
        return int(f.read())


def device_rules(pid):
    """The cgroup v1 device rules of a process ("c 1:3 rwm" ...); None on cgroup v2 (an eBPF
    program, not readable as rules)."""
    path = os.path.join(cgroup_dir(pid, "devices"), "devices.list")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return [r for r in f.read().split("\n") if r]


# ---- read-only root ----


def test_the_root_filesystem_is_read_only_even_when_the_config_asks_for_a_writable_one(
        hardened, bundle, probe_dir, busybox_rootfs):
    attacker(bundle, probe_dir, "rootfs")
    bundle.config["root"]["readonly"] = False
    before = sorted(os.listdir(busybox_rootfs))
    busybox_stat = os.stat(busybox_rootfs / "bin" / "busybox")
    seen = run_probe(hardened, bundle)["rootfs"]
    for attempt in ("create_in_root", "mkdir_in_root", "open_busybox_for_writing",
                    "chmod_etc_passwd", "rename_etc_passwd"):
        assert seen[attempt] == "EROFS", (attempt, seen)
    # The writable places are the profile's tmpfs, not the image.
    assert seen["create_in_tmp"] == "ok" and seen["write_in_tmp"] == "ok", seen
    # Nothing new in the image but the (empty) mount points the runtime makes for the config's
    # mounts and the profile's tmpfs.
    destinations = {m["destination"].strip("/").split("/")[0] for m in bundle.config["mounts"]}
    destinations |= {t["path"].strip("/").split("/")[0]
                     for t in DEFAULT_PROFILE["rootfs"]["tmpfs"]}
    for name in set(os.listdir(busybox_rootfs)) - set(before):
        assert name in destinations, name
        assert os.path.isdir(busybox_rootfs / name), name
    assert not (busybox_rootfs / "probe-was-here").exists()
    after = os.stat(busybox_rootfs / "bin" / "busybox")
    assert (after.st_mode, after.st_size, after.st_mtime_ns) == \
        (busybox_stat.st_mode, busybox_stat.st_size, busybox_stat.st_mtime_ns)
    assert (busybox_rootfs / "etc" / "passwd").exists()
    d = decision(hardened, "root.readonly")
    assert (d["kind"], d["asked"], d["applied"]) == ("enforced", "false", "true"), d
    tmp = decision(hardened, "mounts[destination=/tmp]")
    assert tmp["kind"] == "enforced" and '"tmpfs"' in tmp["applied"], tmp


# ---- network ----


def host_ipv4_addresses():
    out = subprocess.run(["ip", "-4", "-o", "addr", "show"], capture_output=True, text=True,
                         check=True).stdout
    return [m.group(1) for m in re.finditer(r"inet (\d+\.\d+\.\d+\.\d+)/", out)]


def test_no_network_beyond_loopback_even_when_the_config_asks_for_the_hosts(
        hardened, bundle, probe_dir):
    tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    tcp.bind(("0.0.0.0", 0))
    tcp.listen(16)
    port = tcp.getsockname()[1]
    name = "seerun-probe-" + uuid.uuid4().hex[:8]
    unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    unix.bind("\0" + name)
    unix.listen(16)
    try:
        addrs = host_ipv4_addresses()
        assert "127.0.0.1" in addrs
        checks = ["net", f"unix:{name}"] + [f"tcp:{a}:{port}" for a in addrs]
        attacker(bundle, probe_dir, *checks)
        host_namespaces(bundle)
        seen = run_probe(hardened, bundle)
        assert seen["net"]["interfaces"] == ["lo"], seen["net"]
        assert seen["net"]["proc_net_dev"] == ["lo"], seen["net"]
        # No raw or packet sockets either (CAP_NET_RAW is not in the profile), nor vsock.
        for kind in ("raw_socket", "packet_socket", "vsock_socket"):
            assert seen["net"][kind] != "ok", seen["net"]
        for a in addrs:
            assert seen[f"tcp:{a}:{port}"] != "ok", seen
        assert seen[f"unix:{name}"] != "ok", seen
        # ... and the host's listeners saw nobody.
        for s in (tcp, unix):
            s.setblocking(False)
            with pytest.raises(BlockingIOError):
                s.accept()
    finally:
        tcp.close()
        unix.close()
    d = decision(hardened, "linux.namespaces.network")
    assert d["kind"] == "enforced" and d["asked"] == '"host"', d
    assert "loopback only" in d["applied"], d


# ---- seccomp, no_new_privileges, capabilities ----


@pytest.mark.parametrize("seccomp", ["none", "allow-all"])
def test_seccomp_no_new_privileges_and_a_small_capability_set_are_always_there(
        hardened, bundle, probe_dir, seccomp):
    attacker(bundle, probe_dir, "status", "syscalls")
    if seccomp == "none":
        bundle.linux.pop("seccomp", None)
    else:
        bundle.linux["seccomp"] = {"defaultAction": "SCMP_ACT_ALLOW",
                                   "architectures": ["SCMP_ARCH_X86_64"], "syscalls": []}
    seen = run_probe(hardened, bundle)
    st = seen["status"]
    assert st["Seccomp"] == "2" and st["NoNewPrivs"] == "1", st
    for s in ("CapEff", "CapBnd", "CapPrm", "CapInh", "CapAmb"):
        assert int(st[s], 16) & ~ALLOWED_MASK == 0, (s, st[s])
    # What the config asked and the profile allows is there: the set is small, not empty.
    assert int(st["CapBnd"], 16) == ALLOWED_MASK, st
    sc = seen["syscalls"]
    denied = ["mount_tmpfs", "mount_proc", "remount_root_rw", "bind_mount", "open_tree", "fsopen",
              "unshare_user", "unshare_mount", "unshare_net", "clone_newuser", "clone_newns",
              "keyctl", "add_key", "request_key", "bpf", "perf_event_open", "init_module",
              "finit_module", "delete_module", "kexec_load", "reboot", "swapoff",
              "open_by_handle_at", "name_to_handle_at", "userfaultfd", "io_uring_setup",
              "pivot_root", "syslog", "iopl", "ioperm", "settimeofday", "clock_settime",
              "acct", "quotactl", "pidfd_getfd", "mknod_block", "mknod_char_mem"]
    for call in denied:
        assert sc[call] == "EPERM", (call, sc[call])
    assert sc["clone3"] == "ENOSYS", sc
    assert sc["clone_plain"] == "ok", sc  # the filter is not simply killing everything
    d = decision(hardened, "linux.seccomp")
    assert d["kind"] == "enforced" and "built-in default filter" in d["applied"], d
    assert decision(hardened, "process.noNewPrivileges")["kind"] == "enforced"
    b = decision(hardened, "process.capabilities.bounding")
    assert b["kind"] == "enforced" and "CAP_SYS_ADMIN" in b["reason"], b
    assert "CAP_SYS_ADMIN" not in b["applied"]


# ---- /proc and /sys ----


def test_proc_and_sys_are_masked_and_read_only_even_with_empty_lists_in_the_config(
        hardened, bundle, probe_dir):
    attacker(bundle, probe_dir, "procfs", "cgroupwrite")
    bundle.linux["maskedPaths"] = []
    bundle.linux["readonlyPaths"] = []
    seen = run_probe(hardened, bundle)
    p = seen["procfs"]
    # /proc/kcore and /proc/sysrq-trigger are not on every kernel (this one: config options).
    if os.path.exists("/proc/kcore"):
        assert p["kcore"]["open"] != "ok" or p["kcore"]["bytes"] == 0, p["kcore"]
    else:
        assert p["kcore"]["open"] == "ENOENT", p["kcore"]
    for masked in ("keys", "timer_list"):
        if os.path.exists(f"/proc/{masked}"):
            assert p[masked]["open"] != "ok" or p[masked]["bytes"] == 0, (masked, p[masked])
    for masked in ("acpi", "sys_firmware"):
        if p[masked]["open"] == "ok":  # an empty read-only tmpfs over it
            assert p[masked]["type"] == "dir", p[masked]
    for path, result in p["open_for_writing"].items():
        assert result != "ok", (path, result)
    if os.path.exists("/proc/sysrq-trigger"):
        assert p["open_for_writing"]["/proc/sysrq-trigger"] in ("EROFS", "EACCES"), p
    for path, result in seen["cgroupwrite"].items():
        assert result != "ok", (path, result)
    m = decision(hardened, "linux.maskedPaths")
    assert m["kind"] == "enforced" and "/proc/kcore" in m["applied"], m
    r = decision(hardened, "linux.readonlyPaths")
    assert r["kind"] == "enforced" and "/proc/sysrq-trigger" in r["applied"], r


# ---- namespaces ----


def test_no_host_namespace_is_kept_and_none_can_be_entered(hardened, bundle, probe_dir):
    attacker(bundle, probe_dir, "setns", "sleep:20")
    host_namespaces(bundle)
    cid = hardened.id()
    hardened.cmd("run", "-d", "--bundle", bundle.write(), cid, check=True)
    pid = hardened.state(cid)["pid"]
    for kind in ("pid", "net", "ipc", "uts", "cgroup", "mnt", "user"):
        assert os.readlink(f"/proc/{pid}/ns/{kind}") != os.readlink(f"/proc/self/ns/{kind}"), kind
    hardened.cmd("kill", cid, "KILL")
    wait_stopped(hardened, cid)
    for kind in ("pid", "ipc", "uts", "cgroup", "network"):
        d = decision(hardened, f"linux.namespaces.{kind}")
        assert d["kind"] == "enforced" and d["asked"] == '"host"', d
    bundle.args("/probe/probe", "setns")
    seen = run_probe(hardened, bundle)
    for kind, result in seen["setns"].items():
        assert result == "EPERM", (kind, result)


# ---- bind sources ----


@pytest.mark.parametrize("source,denied", [
    ("/etc", "/etc"), ("/", "/"), ("/root", "/root"), ("/proc", "/proc"), ("/sys", "/sys"),
    ("/dev", "/dev"), ("/boot", "/boot"), ("/var/lib", "/var/lib/seerun"), ("/var", None),
])
def test_a_bind_of_a_denied_host_path_or_of_a_directory_containing_one_is_refused(
        hardened, bundle, probe_dir, source, denied):
    if not os.path.exists(source) or (denied and not os.path.exists(denied)):
        pytest.skip(f"{source} or {denied} does not exist on this host")
    attacker(bundle, probe_dir, "ids")
    bundle.config["mounts"].append({"destination": "/host", "type": "none", "source": source,
                                    "options": ["rbind", "ro"]})
    index = len(bundle.config["mounts"]) - 1
    r = hardened.cmd("run", "--bundle", bundle.write(), hardened.id())
    assert r.returncode != 0 and r.stdout == "", r.stdout
    assert f"mounts[{index}].source" in r.stderr, r.stderr
    d = decision(hardened, f"mounts[{index}].source")
    assert d["kind"] == "refused" and d["asked"] == json.dumps(source), d
    if denied:
        assert f'"{denied}"' in d["reason"], d
    assert hardened.list_ids() == []


@pytest.mark.parametrize("denied", ["/root", "/etc/ssh", "/boot", "/var/lib/seerun"])
def test_a_bind_of_something_below_a_secret_directory_is_refused(hardened, bundle, probe_dir,
                                                                 denied):
    # /root/.ssh/authorized_keys, /etc/ssh/ssh_host_ed25519_key: a secret is not less exposed
    # as a file of a denied directory than as the directory.
    below = None
    for base, dirs, files in os.walk(denied):
        if files:
            below = os.path.join(base, sorted(files)[0])
            break
    if below is None:
        pytest.skip(f"nothing below {denied} on this host")
    attacker(bundle, probe_dir, "readlen:/secret")
    bundle.config["mounts"].append({"destination": "/secret", "type": "none", "source": below,
                                    "options": ["bind", "ro"]})
    index = len(bundle.config["mounts"]) - 1
    r = hardened.cmd("run", "--bundle", bundle.write(), hardened.id())
    assert r.returncode != 0, f"{below} was bound: {r.stdout}"
    assert f"mounts[{index}].source" in r.stderr and f'"{denied}"' in r.stderr, r.stderr
    assert decision(hardened, f"mounts[{index}].source")["kind"] == "refused"


def test_files_engines_bind_from_etc_are_still_allowed(hardened, bundle, probe_dir):
    # /etc itself is denied, not what is below it: `docker run -v /etc/localtime:...`.
    if not os.path.exists("/etc/localtime"):
        pytest.skip("no /etc/localtime on this host")
    attacker(bundle, probe_dir, "readlen:/etc/localtime")
    bundle.config["mounts"].append({"destination": "/etc/localtime", "type": "none",
                                    "source": "/etc/localtime", "options": ["bind", "ro"]})
    seen = run_probe(hardened, bundle)
    assert isinstance(seen["readlen:/etc/localtime"], int), seen


def test_a_bind_of_the_state_root_is_refused(hardened, bundle, probe_dir):
    os.makedirs(hardened.root, exist_ok=True)
    attacker(bundle, probe_dir, "ids")
    bundle.config["mounts"].append({"destination": "/state", "type": "none",
                                    "source": hardened.root, "options": ["bind"]})
    index = len(bundle.config["mounts"]) - 1
    r = hardened.cmd("run", "--bundle", bundle.write(), hardened.id())
    assert r.returncode != 0, r.stdout
    assert decision(hardened, f"mounts[{index}].source")["kind"] == "refused"


@pytest.mark.parametrize("through", ["/proc/self/fd/{fd}", "/proc/{pid}/root/etc",
                                     "/dev/fd/{fd}"])
def test_a_bind_source_or_cwd_through_proc_is_refused(hardened, bundle, probe_dir, through):
    # CVE-2024-21626: a descriptor of a host directory the runtime leaked.
    fd = os.open("/etc", os.O_RDONLY | os.O_DIRECTORY)
    try:
        path = through.format(fd=fd, pid=os.getpid())
        attacker(bundle, probe_dir, "ids")
        bundle.config["mounts"].append({"destination": "/leak", "type": "none", "source": path,
                                        "options": ["bind"]})
        index = len(bundle.config["mounts"]) - 1
        r = hardened.cmd("run", "--bundle", bundle.write(), hardened.id(), pass_fds=(fd,))
        assert r.returncode != 0 and f"mounts[{index}].source" in r.stderr, r.stderr
        assert "/proc" in r.stderr, r.stderr
        assert decision(hardened, f"mounts[{index}].source")["kind"] == "refused"
        bundle.config["mounts"].pop()
        bundle.process["cwd"] = path
        r = hardened.cmd("run", "--bundle", bundle.write(), hardened.id(), pass_fds=(fd,))
        assert r.returncode != 0 and "process.cwd" in r.stderr, r.stderr
        d = decision(hardened, "process.cwd")
        assert d["kind"] == "refused" and d["asked"] == json.dumps(path), d
    finally:
        os.close(fd)


# ---- devices ----


def test_only_safe_devices_even_with_an_allow_all_device_rule(hardened, bundle, probe_dir,
                                                               tmp_path):
    attacker(bundle, probe_dir, "devices", "syscalls", "sleep:1")
    bundle.linux["resources"] = {"devices": [{"allow": True, "access": "rwm"}]}
    cid = hardened.id()
    out, err = tmp_path / "probe.out", tmp_path / "probe.err"
    with open(out, "w") as o, open(err, "w") as e:
        subprocess.run([SEERUN, *hardened.global_args, "create", "--bundle", bundle.write(), cid],
                       stdin=subprocess.DEVNULL, stdout=o, stderr=e, check=True, timeout=60)
    pid = hardened.state(cid)["pid"]
    rules = device_rules(pid)
    assert rules is None or (rules and "a *:* rwm" not in rules), rules
    for rule in rules or []:
        t, mm, _ = rule.split()
        major, minor = mm.split(":")
        # Only the allowed character devices; pts (136) with any minor.
        assert t == "c" and major != "*", rules
        assert major == "136" or (t, int(major), int(minor)) in ALLOWED_NODES, rules
    hardened.cmd("start", cid, check=True)
    wait_stopped(hardened, cid)
    seen = parse(out.read_text())
    for node in seen["devices"]:
        assert (node["type"], node["major"], node["minor"]) in ALLOWED_NODES, node
    assert seen["syscalls"]["mknod_block"] == "EPERM"
    d = decision(hardened, "linux.resources.devices")
    assert d["kind"] == "enforced" and d["asked"] == '["allow a *:* rwm"]', d
    assert d["applied"].startswith('["deny a *:* rwm"'), d


def test_a_host_block_device_node_is_refused(hardened, bundle, probe_dir):
    attacker(bundle, probe_dir, "devices")
    bundle.linux["devices"] = [{"path": "/dev/sda", "type": "b", "major": 8, "minor": 0}]
    r = hardened.cmd("run", "--bundle", bundle.write(), hardened.id())
    assert r.returncode != 0 and "linux.devices[0]" in r.stderr, r.stderr
    assert decision(hardened, "linux.devices[0]")["kind"] == "refused"


# ---- pids and memory ----


def test_a_fork_bomb_stops_at_the_pids_limit(hardened, bundle, probe_dir):
    attacker(bundle, probe_dir, "bomb:10")
    bundle.linux["resources"] = {"pids": {"limit": 64}}
    seen = run_probe(hardened, bundle, timeout=60)["bomb"]
    # 64 tasks: the probe and 63 children, then fork fails.
    assert seen["stopped_by"] == "EAGAIN", seen
    assert seen["children"] == 63, seen
    d = decision(hardened, "linux.resources.pids.limit")
    assert d["kind"] == "allowed" and d["asked"] == "64", d


@pytest.mark.parametrize("pids,memory", [(None, None), (-1, -1), (0, 0)])
def test_a_config_without_limits_gets_the_profiles_pids_and_memory_floors(
        hardened, bundle, probe_dir, pids, memory):
    attacker(bundle, probe_dir, "sleep:20")
    res = {}
    if pids is not None:
        res["pids"] = {"limit": pids}
        res["memory"] = {"limit": memory}
    bundle.linux["resources"] = res
    cid = hardened.id()
    hardened.cmd("run", "-d", "--bundle", bundle.write(), cid, check=True)
    pid = hardened.state(cid)["pid"]
    assert pids_max(pid) == str(DEFAULT_PROFILE["resources"]["pids"]["default"])
    assert memory_max(pid) == 4 << 30
    hardened.cmd("kill", cid, "KILL")
    wait_stopped(hardened, cid)
    assert decision(hardened, "linux.resources.pids.limit")["applied"] == "4096"
    assert decision(hardened, "linux.resources.memory.limit")["applied"] == str(4 << 30)


# ---- sysctls ----


@pytest.mark.parametrize("key,value", [
    # Not namespaced: they would change the host's kernel.
    ("kernel.core_pattern", "|/tmp/x"), ("kernel.randomize_va_space", "0"),
    ("vm.overcommit_memory", "1"), ("kernel/modprobe", "/tmp/x"),
    # Namespaced, but not in the profile's sysctls.allowed.
    ("kernel.domainname", "evil"),
])
def test_a_sysctl_outside_the_allowlist_is_refused_audited_and_the_host_keeps_its_value(
        hardened, bundle, probe_dir, key, value):
    path = "/proc/sys/" + key.replace(".", "/")
    before = open(path).read() if os.path.exists(path) else None
    attacker(bundle, probe_dir, "ids")
    bundle.linux["sysctl"] = {key: value}
    r = hardened.cmd("run", "--bundle", bundle.write(), hardened.id())
    assert r.returncode != 0 and "linux.sysctl" in r.stderr and key in r.stderr, r.stderr
    if before is not None:
        assert open(path).read() == before
    refused = [d for d in decisions(hardened) if d["kind"] == "refused"]
    assert refused and refused[-1]["field"].startswith("linux.sysctl"), decisions(hardened)
    assert key in refused[-1]["field"] + refused[-1]["reason"], refused[-1]


def test_an_allowed_network_sysctl_is_the_containers_own(hardened, bundle, probe_dir):
    host = open("/proc/sys/net/ipv4/ip_unprivileged_port_start").read()
    attacker(bundle, probe_dir, "sysctl:net.ipv4.ip_unprivileged_port_start")
    bundle.linux["sysctl"] = {"net.ipv4.ip_unprivileged_port_start": "80"}
    seen = run_probe(hardened, bundle)
    assert seen["sysctl:net.ipv4.ip_unprivileged_port_start"].strip() == "80"
    assert open("/proc/sys/net/ipv4/ip_unprivileged_port_start").read() == host
    assert decision(hardened, "linux.sysctl.net.ipv4.ip_unprivileged_port_start")["kind"] == \
        "allowed"


# ---- descriptors ----


def test_descriptors_beyond_stdio_are_closed_in_the_init_and_in_exec(hardened, bundle,
                                                                     probe_dir):
    # The caller (an engine with a bug) leaks a host directory and a socket into the runtime.
    d = os.open("/etc", os.O_RDONLY | os.O_DIRECTORY)
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        attacker(bundle, probe_dir, "fds")
        seen = run_probe(hardened, bundle, pass_fds=(d, s.fileno()))
        assert sorted(f["fd"] for f in seen["fds"]) == [0, 1, 2], seen["fds"]
        bundle.args("/probe/probe", "sleep:20")
        cid = hardened.id()
        hardened.cmd("run", "-d", "--bundle", bundle.write(), cid, check=True,
                     pass_fds=(d, s.fileno()))
        pid = hardened.state(cid)["pid"]
        assert sorted(int(f) for f in os.listdir(f"/proc/{pid}/fd")) == [0, 1, 2]
        r = hardened.cmd("exec", cid, "/probe/probe", "fds", pass_fds=(d, s.fileno()))
        assert r.returncode == 0, r.stderr
        assert sorted(f["fd"] for f in parse(r.stdout)["fds"]) == [0, 1, 2], r.stdout
        hardened.cmd("kill", cid, "KILL")
        wait_stopped(hardened, cid)
    finally:
        os.close(d)
        s.close()


# ---- hooks ----


def test_a_hook_from_an_untrusted_path_is_refused_and_never_runs(hardened, bundle, probe_dir,
                                                                tmp_path):
    marker = tmp_path / "hook-ran"
    hook = tmp_path / "hook.sh"  # /tmp is writable by every user: not a trusted path
    hook.write_text(f"#!/bin/sh\ntouch {marker}\n")
    os.chmod(hook, 0o755)
    attacker(bundle, probe_dir, "ids")
    bundle.config["hooks"] = {"prestart": [{"path": str(hook)}]}
    r = hardened.cmd("run", "--bundle", bundle.write(), hardened.id())
    assert r.returncode != 0 and "hooks.prestart[0].path" in r.stderr, r.stderr
    assert not marker.exists()
    d = decision(hardened, "hooks.prestart[0].path")
    assert d["kind"] == "refused" and "trusted path" in d["reason"], d


def test_a_hook_naming_another_containers_program_through_proc_exe_is_refused(
        hardened, bundle, tmp_path, busybox_rootfs, probe_dir):
    # Docker's hook is /proc/<dockerd pid>/exe, judged by the file that link names.  Here the
    # link names a program of another container: the text of the link ("/bin/busybox") is a
    # trusted host path, but what would run, as host root outside every namespace, is the
    # container's own file (here a busybox with bytes of its own appended).
    other_root = tmp_path / "other-rootfs"
    shutil.copytree(busybox_rootfs, other_root, symlinks=True)
    with open(other_root / "bin" / "busybox", "ab") as f:
        f.write(b"\0" * 4096)
    other_dir = tmp_path / "other"
    other_dir.mkdir()
    other_cfg = json.loads(json.dumps(bundle.config))
    other_cfg["root"]["path"] = str(other_root)
    other_cfg["process"]["args"] = ["sleep", "30"]
    (other_dir / "config.json").write_text(json.dumps(other_cfg))
    other_id = hardened.id("other")
    hardened.cmd("run", "-d", "--bundle", str(other_dir), other_id, check=True)
    pid = hardened.state(other_id)["pid"]
    assert os.readlink(f"/proc/{pid}/exe") == "/bin/busybox"
    marker = tmp_path / "hook-ran"
    attacker(bundle, probe_dir, "ids")
    bundle.config["hooks"] = {"prestart": [{
        "path": f"/proc/{pid}/exe",
        "args": ["busybox", "sh", "-c", f"wc -c < /proc/$$/exe > {marker}"]}]}
    r = hardened.cmd("run", "--bundle", bundle.write(), hardened.id())
    ran = marker.read_text().strip() if marker.exists() else None
    hardened.cmd("kill", other_id, "KILL")
    wait_stopped(hardened, other_id)
    assert ran is None, f"the other container's busybox ({ran} bytes) ran as a host hook"
    assert r.returncode != 0 and "hooks.prestart[0].path" in r.stderr, r.stderr
    assert decision(hardened, "hooks.prestart[0].path")["kind"] == "refused"


@pytest.fixture
def trusted_place_rootfs(busybox_rootfs, tmp_path):
    """A root filesystem where images live (root-owned directories nobody else can write, not
    /tmp), reached through a symlink as root.path -- as an engine may name it."""
    place = f"/var/lib/seerun-escape-test-{uuid.uuid4().hex[:8]}"
    os.mkdir(place, 0o755)
    try:
        shutil.copytree(busybox_rootfs, f"{place}/rootfs", symlinks=True)
        os.chmod(f"{place}/rootfs", 0o755)
        (tmp_path / "rootfs-link").symlink_to(f"{place}/rootfs")
        yield tmp_path / "rootfs-link", f"{place}/rootfs"
    finally:
        shutil.rmtree(place)


def test_a_hook_from_inside_the_rootfs_named_through_a_symlink_is_refused(
        hardened, bundle, probe_dir, trusted_place_rootfs, tmp_path):
    link, real = trusted_place_rootfs
    marker = tmp_path / "hook-ran"
    attacker(bundle, probe_dir, "ids")
    bundle.config["root"]["path"] = str(link)
    # The image's own program, on the host, as root, outside every namespace.
    bundle.config["hooks"] = {"createRuntime": [{
        "path": f"{real}/bin/busybox", "args": ["sh", "-c", f"touch {marker}"]}]}
    r = hardened.cmd("run", "--bundle", bundle.write(), hardened.id())
    assert not marker.exists(), "a program of the image ran as a host hook"
    assert r.returncode != 0 and "hooks.createRuntime[0].path" in r.stderr, r.stderr
    assert decision(hardened, "hooks.createRuntime[0].path")["kind"] == "refused"


def test_a_hook_from_an_engines_image_store_is_refused(hardened, bundle, probe_dir, tmp_path):
    # An image layer's files are root-owned in root-owned directories, like /usr/bin's: the
    # place, not the owner, says they are the tenant's.
    store = "/var/lib/containers"
    made_store = not os.path.exists(store)
    layer = f"{store}/seerun-escape-test-{uuid.uuid4().hex[:8]}"
    marker = tmp_path / "hook-ran"
    try:
        os.makedirs(f"{layer}/diff/bin", mode=0o755)
        shutil.copy("/bin/busybox", f"{layer}/diff/bin/busybox")
        attacker(bundle, probe_dir, "ids")
        bundle.config["hooks"] = {"prestart": [{
            "path": f"{layer}/diff/bin/busybox", "args": ["sh", "-c", f"touch {marker}"]}]}
        r = hardened.cmd("run", "--bundle", bundle.write(), hardened.id())
    finally:
        shutil.rmtree(store if made_store else layer)
    assert not marker.exists(), "a program of an image layer ran as a host hook"
    assert r.returncode != 0 and "hooks.prestart[0].path" in r.stderr, r.stderr
    assert decision(hardened, "hooks.prestart[0].path")["kind"] == "refused"


# ---- the host's files ----


def test_the_hosts_files_cannot_be_read_through_any_path(hardened, bundle, probe_dir, tmp_path):
    canary = tmp_path / "host-secret"
    canary.write_text("HOST-SECRET-" + uuid.uuid4().hex)
    os.chmod(canary, 0o644)
    attacker(bundle, probe_dir, "shadow", f"read:{canary}", f"read:{HERE}/conftest.py")
    seen = run_probe(hardened, bundle)
    with open("/etc/shadow", "rb") as f:
        shadow_head = f.read(16).decode("latin-1")
    for target in ("/etc/shadow", str(canary), f"{HERE}/conftest.py"):
        results = seen[f"read:{target}"]
        assert len(results) > 10, results  # the probe tried
        for path, result in results.items():
            assert not result.startswith("read:"), (target, path, result)
            assert shadow_head not in result and "HOST-SECRET" not in result
    # The chroot escape (chroot, climb "..", chroot ".") stays inside the container's root.
    assert seen["read:/etc/shadow"]["chroot-escape"] == "ENOENT", seen["read:/etc/shadow"]


def test_container_root_cannot_write_host_root_files_in_a_writable_bind(
        hardened, bundle, probe_dir, tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o755)
    victim = shared / "owned-by-root"
    victim.write_text("host\n")
    os.chmod(victim, 0o644)
    attacker(bundle, probe_dir, "hostwrite:/shared")
    bundle.config["mounts"].append({"destination": "/shared", "type": "none",
                                    "source": str(shared), "options": ["bind", "rw"]})
    seen = run_probe(hardened, bundle)["hostwrite:/shared"]
    for attempt in ("create", "open_root_file_for_writing", "chmod_root_file",
                    "chown_root_file", "unlink_root_file"):
        assert seen[attempt] in ("EACCES", "EPERM"), (attempt, seen)
    # Host root is nobody inside: its files are not the container root's.
    assert seen["root_file_uid_seen"] == 65534, seen
    assert sorted(os.listdir(shared)) == ["owned-by-root"]
    assert victim.read_text() == "host\n"
    st = os.stat(victim)
    assert (st.st_uid, st.st_gid, st.st_mode & 0o7777) == (0, 0, 0o644)


# ---- /proc/<pid>/exe of the container's own programs ----


@pytest.mark.parametrize("init", ["probe", "busybox"])
def test_the_containers_programs_cannot_be_overwritten_through_proc_exe(
        hardened, bundle, probe_dir, busybox_rootfs, init):
    # The probe is a read-only bind of a host file; busybox is the image's (the root
    # filesystem, idmapped: its files are the container root's own).  Either way: no writing.
    attacker(bundle, probe_dir, "exe")
    if init == "busybox":
        bundle.shell("/probe/probe exe; true")
    files = [probe_dir / "probe", busybox_rootfs / "bin" / "busybox"]
    before = [f.read_bytes() for f in files]
    seen = run_probe(hardened, bundle)["exe"]
    target = "/probe/probe" if init == "probe" else "/bin/busybox"
    assert seen["/proc/1/exe"]["target"] == target, seen
    for link, results in seen.items():
        for attempt in ("open_wronly", "open_rdwr", "reopen_wronly"):
            assert results[attempt] in ("EACCES", "EROFS", "ETXTBSY", "EPERM"), (link, results)
    assert [f.read_bytes() for f in files] == before


# ---- every decision on record, or nothing runs ----


def test_a_container_whose_decisions_cannot_be_audited_does_not_run(hardened, bundle, probe_dir):
    attacker(bundle, probe_dir, "ids")
    os.makedirs(hardened.audit_log)  # the log cannot be written: a directory in its place
    r = hardened.cmd("run", "--bundle", bundle.write(), hardened.id())
    assert r.returncode != 0 and "audit log" in r.stderr, r.stderr
    assert r.stdout == ""  # the probe, had it run, would have printed its findings
    assert hardened.list_ids() == []
    os.rmdir(hardened.audit_log)


def test_every_decision_and_lifecycle_event_of_a_run_is_on_record(hardened, bundle, probe_dir):
    attacker(bundle, probe_dir, "ids")
    host_namespaces(bundle)
    bundle.config["root"]["readonly"] = False
    bundle.linux.pop("seccomp", None)
    cid = hardened.id()
    r = hardened.cmd("run", "--bundle", bundle.write(), cid)
    assert r.returncode == 0, r.stderr
    lines = [l for l in hardened.audit() if l.get("id") == cid]
    events = [l["event"] for l in lines]
    assert events[0] == "decision" and "create" in events and "start" in events, events
    assert events.index("create") > max(i for i, e in enumerate(events) if e == "decision")
    # The supervisor's activity record may come last (it is written when the init has gone).
    assert [e for e in events if e != "activity"][-1] == "exit", events
    assert events.count("activity") == 1, events
    fields = {l["field"]: l for l in lines if l["event"] == "decision"}
    for field in ("root.readonly", "linux.seccomp", "process.noNewPrivileges",
                  "process.capabilities.bounding", "linux.namespaces.network",
                  "linux.namespaces.pid", "linux.namespaces.user", "linux.maskedPaths",
                  "linux.readonlyPaths", "linux.resources.pids.limit",
                  "linux.resources.memory.limit", f"mounts[{len(bundle.config['mounts']) - 1}]"
                  ".source"):
        assert field in fields, (field, sorted(fields))
    for l in lines:
        assert l["profile"] == "default" and l["bundle"] == str(bundle.path), l
        if l["event"] == "decision":
            assert l["kind"] in ("enforced", "allowed"), l
            assert l["reason"], l


# ---- ptrace ----


def test_a_sibling_cannot_be_traced(hardened, bundle, probe_dir):
    attacker(bundle, probe_dir, "ptrace")
    seen = run_probe(hardened, bundle)["ptrace"]
    for attempt in ("attach_sibling", "seize_sibling", "process_vm_readv", "kcmp", "traceme"):
        assert seen[attempt] == "EPERM", (attempt, seen)


# ---- never host root ----


def host_ids(pid):
    st = status_of(pid)
    return [int(x) for x in st["Uid"]], [int(x) for x in st["Gid"]]


@pytest.mark.parametrize("namespaces", ["engine", "host"])
def test_no_process_of_the_container_is_host_root_init_or_exec(hardened, bundle, probe_dir,
                                                               namespaces):
    # "engine": the namespaces an engine asks for, but no user namespace (runc's default spec,
    # Docker, podman as root); "host": not even those.
    attacker(bundle, probe_dir, "ids", "sleep:30")
    if namespaces == "host":
        host_namespaces(bundle)
    bundle.linux.pop("uidMappings", None)
    bundle.linux.pop("gidMappings", None)
    cid = hardened.id()
    hardened.cmd("run", "-d", "--bundle", bundle.write(), cid, check=True)
    init = hardened.state(cid)["pid"]
    hardened.cmd("exec", "-d", cid, "/bin/sleep", "30", check=True)
    hardened.cmd("exec", "-d", "--user", "0:0", "--cap", "CAP_SYS_ADMIN", cid, "/bin/sleep", "31",
                 check=True)
    pids = container_pids(hardened, cid)
    assert init in pids and len(pids) >= 3, pids
    for pid in pids:
        uids, gids = host_ids(pid)
        assert 0 not in uids and 0 not in gids, f"pid {pid} is host root: Uid {uids} Gid {gids}"
        assert min(uids) >= 65536 and min(gids) >= 65536, (pid, uids, gids)
    r = hardened.cmd("exec", cid, "/probe/probe", "ids", "status", check=True)
    seen = parse(r.stdout)
    assert seen["ids"]["uid"] == 0  # root inside ...
    inside, outside, count = (int(x) for x in seen["ids"]["uid_map"].split())
    assert inside == 0 and outside >= 65536, seen["ids"]  # ... a range of the registry outside
    for line in seen["ids"]["uid_map"].splitlines() + seen["ids"]["gid_map"].splitlines():
        assert int(line.split()[1]) != 0, seen["ids"]
    hardened.cmd("kill", cid, "KILL")
    wait_stopped(hardened, cid)
    d = decision(hardened, "linux.namespaces.user")
    assert d["kind"] == "enforced" and d["applied"].startswith("new: container 0-"), d


def test_a_config_mapping_host_root_into_its_user_namespace_is_refused(hardened, bundle,
                                                                       probe_dir):
    attacker(bundle, probe_dir, "ids")
    bundle.linux["namespaces"].append({"type": "user"})
    bundle.linux["uidMappings"] = [{"containerID": 0, "hostID": 0, "size": 65536}]
    bundle.linux["gidMappings"] = [{"containerID": 0, "hostID": 0, "size": 65536}]
    r = hardened.cmd("run", "--bundle", bundle.write(), hardened.id())
    assert r.returncode != 0 and "host id 0" in r.stderr, r.stderr
    d = decision(hardened, "linux.uidMappings[0]")
    assert d["kind"] == "refused", d


# ---- exec ----


def test_exec_cannot_gain_capabilities_or_leave_the_seccomp_filter(hardened, bundle, probe_dir):
    attacker(bundle, probe_dir, "sleep:30")
    cid = hardened.id()
    hardened.cmd("run", "-d", "--bundle", bundle.write(), cid, check=True)
    before = set(container_pids(hardened, cid))
    hardened.cmd("exec", "-d", "--cap", "CAP_SYS_ADMIN", "--cap", "CAP_SYS_MODULE", cid,
                 "/bin/sleep", "30", check=True)
    new = set(container_pids(hardened, cid)) - before
    assert len(new) == 1, new
    st = status_of(new.pop())
    assert int(st["CapEff"][0], 16) & ~ALLOWED_MASK == 0, st["CapEff"]
    assert int(st["CapBnd"][0], 16) & ~ALLOWED_MASK == 0, st["CapBnd"]
    assert st["Seccomp"] == ["2"] and st["NoNewPrivs"] == ["1"], st
    r = hardened.cmd("exec", "--cap", "CAP_SYS_ADMIN", cid, "/probe/probe", "status", "syscalls")
    assert r.returncode == 0, r.stderr
    seen = parse(r.stdout)
    assert int(seen["status"]["CapEff"], 16) & ~ALLOWED_MASK == 0, seen["status"]
    assert seen["syscalls"]["mount_tmpfs"] == "EPERM"
    assert seen["syscalls"]["unshare_user"] == "EPERM"
    hardened.cmd("kill", cid, "KILL")
    wait_stopped(hardened, cid)
    d = [x for x in decisions(hardened, "process.capabilities.effective") if
         "CAP_SYS_ADMIN" in x["asked"] and "create" in x["reason"]]
    assert d and d[-1]["kind"] == "enforced", decisions(hardened)


def test_the_runtime_binary_cannot_be_opened_for_writing_during_exec(
        hardened, bundle, probe_dir, tmp_path):
    # CVE-2019-5736 with the worst config for it (CAP_SYS_PTRACE, which the profile drops, and
    # no user namespace, which the profile adds): while the test runs `exec` in a loop, the
    # probe grabs /proc/<pid>/exe of every process that is not its own program.
    binary = os.path.realpath(SEERUN)
    digest = open(binary, "rb").read()
    attacker(bundle, probe_dir, "grab:3.5")
    out, err = tmp_path / "grab.out", tmp_path / "grab.err"
    cid = hardened.id()
    with open(out, "w") as o, open(err, "w") as e:
        subprocess.run([SEERUN, *hardened.global_args, "create", "--bundle", bundle.write(), cid],
                       stdin=subprocess.DEVNULL, stdout=o, stderr=e, check=True, timeout=60)
    hardened.cmd("start", cid, check=True)
    execs = 0
    deadline = time.monotonic() + 3.5
    while time.monotonic() < deadline:
        if hardened.cmd("exec", cid, "true").returncode == 0:
            execs += 1
    wait_stopped(hardened, cid)
    assert execs > 5, err.read_text()
    seen = parse(out.read_text())["grab"]
    # The runtime was there to be grabbed: its processes showed up in the container's /proc,
    # and the probe was denied a look at them (non-dumpable, and not its user namespace's).
    assert seen["pids_seen"] > 0 and seen["readlink_denied"] > 0, seen
    for h in seen["handles"]:
        assert h["reopen_wronly"] != "ok", seen
    assert open(binary, "rb").read() == digest
