"""Landlock: a host descriptor that reaches a container grants nothing beneath it.

The attack: a descriptor of a host directory reaches the container's process (here on
purpose, through --preserve-fds, as a future bug of the runtime or an engine would hand it in:
the CVE-2024-21626 class).  Without Landlock the process opens files beneath it with openat(),
after fchdir(), or by /proc/self/fd/N/NAME, and plants files there.  Under an enforcing profile
every process of the container -- the init and each `exec` -- is confined to the container's
own file hierarchy: each of those fails with EACCES, while the container's own files, /proc
and the descriptors the caller hands over as stdio keep working.
"""
import json
import os
import socket
import subprocess
import uuid

import pytest

from conftest import SEERUN, Bundle, make_profiled_seerun, check_no_leaks

PROBE_C = r"""
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* llprobe CHECK...: one line "CHECK RESULT" per check; RESULT is ok[:content] or an errno. */
static const char *ename(int e)
{
  static char b[32];
  switch (e) {
  case EACCES: return "EACCES";
  case EPERM: return "EPERM";
  case ENOENT: return "ENOENT";
  case EBADF: return "EBADF";
  case ECONNREFUSED: return "ECONNREFUSED";
  }
  snprintf(b, sizeof(b), "errno%d", e);
  return b;
}

static void report(const char *check, int fd)
{
  if (fd < 0) {
    printf("%s %s\n", check, ename(errno));
    return;
  }
  char buf[64] = "";
  ssize_t n = read(fd, buf, sizeof(buf) - 1);
  buf[n > 0 ? n : 0] = '\0';
  buf[strcspn(buf, "\n")] = '\0';
  printf("%s ok:%s\n", check, buf);
  close(fd);
}

int main(int argc, char **argv)
{
  for (int i = 1; i < argc; i++) {
    char what[64], name[256];
    int fd = -1;
    if (sscanf(argv[i], "%63[^:]:%d:%255s", what, &fd, name) == 3) {
      if (strcmp(what, "openat") == 0)
        report(argv[i], openat(fd, name, O_RDONLY | O_CLOEXEC));
      else if (strcmp(what, "fchdir") == 0)
        report(argv[i], fchdir(fd) < 0 ? -1 : open(name, O_RDONLY | O_CLOEXEC));
      else if (strcmp(what, "proc") == 0) {
        char p[300];
        snprintf(p, sizeof(p), "/proc/self/fd/%d/%s", fd, name);
        report(argv[i], open(p, O_RDONLY | O_CLOEXEC));
      } else if (strcmp(what, "create") == 0) {
        int w = openat(fd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (w >= 0 && write(w, "planted\n", 8) != 8)
          w = -1;
        if (w < 0)
          printf("%s %s\n", argv[i], ename(errno));
        else
          printf("%s ok\n", argv[i]);
      }
    } else if (sscanf(argv[i], "reopen%63[^:]:%d", what, &fd) == 2) {
      /* reopenr:FD, reopenw:FD: the descriptor's /proc/self/fd name, for reading or writing */
      char p[64];
      snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
      int o = open(p, (what[0] == 'w' ? O_WRONLY : O_RDONLY) | O_CLOEXEC);
      if (o >= 0 && what[0] == 'w') {
        printf("%s ok\n", argv[i]);
        close(o);
      } else
        report(argv[i], o);
    } else if (strncmp(argv[i], "read:", 5) == 0)
      report(argv[i], open(argv[i] + 5, O_RDONLY | O_CLOEXEC));
    else if (strncmp(argv[i], "unix:", 5) == 0) {
      struct sockaddr_un a = {.sun_family = AF_UNIX};
      size_t l = strlen(argv[i] + 5);
      memcpy(a.sun_path + 1, argv[i] + 5, l);
      int s = socket(AF_UNIX, SOCK_STREAM, 0);
      if (connect(s, (struct sockaddr *)&a, (socklen_t)(sizeof(sa_family_t) + 1 + l)) < 0)
        printf("%s %s\n", argv[i], ename(errno));
      else
        printf("%s ok\n", argv[i]);
    }
  }
  return 0;
}
"""

# Runs a command with landlock_create_ruleset, landlock_add_rule and landlock_restrict_self
# failing with ENOSYS: a kernel built without Landlock, as the runtime (and the container) see.
NO_LANDLOCK_C = r"""
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <unistd.h>

int main(int argc, char **argv)
{
  struct sock_filter f[] = {
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
    BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 444, 0, 2),
    BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, 446, 1, 0),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog prog = {sizeof(f) / sizeof(f[0]), f};
  if (argc < 2 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0) {
    perror("no-landlock");
    return 125;
  }
  execv(argv[1], argv + 1);
  perror("no-landlock: exec");
  return 125;
}
"""

SECRET = "host-secret-data"


def kernel_abi():
    """The kernel's Landlock ABI (0: none), asked as the runtime asks."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    v = libc.syscall(444, None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    return v if v > 0 else 0


ABI = kernel_abi()
needs_landlock = pytest.mark.skipif(ABI == 0, reason="the kernel has no Landlock")


@pytest.fixture(scope="module")
def helpers(tmp_path_factory):
    d = tmp_path_factory.mktemp("llprobe")
    for name, src in (("llprobe", PROBE_C), ("no-landlock", NO_LANDLOCK_C)):
        (d / f"{name}.c").write_text(src)
        subprocess.run(["cc", "-static", "-O2", "-o", str(d / name), str(d / f"{name}.c")],
                       check=True, capture_output=True)
        os.chmod(d / name, 0o755)
    os.chmod(d, 0o755)
    return d


@pytest.fixture
def host_dir(tmp_path):
    """A host directory the container must not reach: a secret to read, room to plant."""
    d = tmp_path / "host-dir"
    d.mkdir()
    os.chmod(d, 0o777)
    (d / "secret").write_text(SECRET + "\n")
    os.chmod(d / "secret", 0o644)
    return d


@pytest.fixture
def extra_profiles(tmp_path):
    made = []

    def make(name, profile):
        (tmp_path / name).mkdir()
        s = make_profiled_seerun(tmp_path / name, name, profile)
        made.append((s, tmp_path / name))
        return s
    yield make
    for s, path in made:
        s.cleanup()
        check_no_leaks(s, path)


def probe_bundle(s, tmp_path, rootfs, helpers, *checks):
    path = tmp_path / f"bundle-{uuid.uuid4().hex[:6]}"
    path.mkdir(parents=True)
    b = Bundle(path, rootfs, s)
    b.config["mounts"].append({"destination": "/llprobe", "type": "none",
                               "source": str(helpers), "options": ["bind", "ro"]})
    b.args("/llprobe/llprobe", *checks)
    return b


def parse(stdout):
    out = {}
    for line in stdout.splitlines():
        check, _, result = line.partition(" ")
        out[check] = result
    return out


LEAK_CHECKS = ("openat:3:secret", "fchdir:3:secret", "proc:3:secret", "create:3:planted",
               "read:/etc/passwd", "read:/proc/self/status")


def run_with_host_dir(s, bundle, host_dir, *extra, runner=()):
    """`run --preserve-fds 1` with fd 3 open on the host directory (the leak)."""
    fd = os.open(host_dir, os.O_RDONLY | os.O_DIRECTORY)
    try:
        cid = s.id(uuid.uuid4().hex[:6])
        args = [*runner, SEERUN, *s.global_args, "run", "--preserve-fds", "1", *extra,
                "--bundle", bundle.write(), cid]
        r = subprocess.run(args, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                           timeout=60, pass_fds=(3,), preexec_fn=lambda: os.dup2(fd, 3))
    finally:
        os.close(fd)
    assert r.returncode == 0, r.stderr + r.stdout
    return parse(r.stdout)


def landlock_decisions(s):
    return [d for d in s.audit() if d.get("event") == "decision" and d.get("field") == "landlock"]


def assert_confined(seen, host_dir):
    for check in ("openat:3:secret", "fchdir:3:secret", "proc:3:secret", "create:3:planted"):
        assert seen[check] == "EACCES", (check, seen)
    assert not (host_dir / "planted").exists()
    # The container's own files and its /proc stay readable.
    assert seen["read:/etc/passwd"].startswith("ok:root:"), seen
    assert seen["read:/proc/self/status"].startswith("ok:Name:"), seen


@needs_landlock
def test_a_host_directory_handed_to_the_init_grants_nothing_beneath_it(
        hardened, busybox_rootfs, tmp_path, helpers, host_dir):
    bundle = probe_bundle(hardened, tmp_path, busybox_rootfs, helpers, *LEAK_CHECKS)
    seen = run_with_host_dir(hardened, bundle, host_dir)
    assert_confined(seen, host_dir)
    d = landlock_decisions(hardened)[-1]
    assert d["kind"] == "enforced", d
    assert json.loads(d["applied"]) == {"abi": ABI, "filesystem": "beneath /", "scoped": []}, d
    assert "profiles.default.landlock" in d["reason"], d
    # `policy check` says the same as the create.
    r = hardened.cmd("policy", "check", "--bundle", bundle.write(), check=True)
    checked = [c for c in json.loads(r.stdout)["decisions"] if c["field"] == "landlock"]
    assert [{k: c[k] for k in ("kind", "applied", "reason")} for c in checked] == \
        [{k: d[k] for k in ("kind", "applied", "reason")}], checked


@pytest.mark.parametrize("profile", ["permissive", "landlock-off"])
def test_without_landlock_the_same_descriptor_reaches_the_host(
        profile, seerun, extra_profiles, busybox_rootfs, tmp_path, helpers, host_dir):
    # The leak class itself, shown where Landlock is off: the permissive profile, and an
    # enforcing one with "landlock": false.
    s = seerun if profile == "permissive" else extra_profiles(
        profile, {"base": "default", "landlock": False})
    bundle = probe_bundle(s, tmp_path, busybox_rootfs, helpers, *LEAK_CHECKS)
    seen = run_with_host_dir(s, bundle, host_dir)
    for check in ("openat:3:secret", "fchdir:3:secret", "proc:3:secret"):
        assert seen[check] == "ok:" + SECRET, (check, seen)
    assert seen["create:3:planted"] == "ok", seen
    assert (host_dir / "planted").read_text() == "planted\n"
    d = landlock_decisions(s)[-1]
    assert d["kind"] == "allowed" and d["applied"] == "null", d
    assert f"profiles.{profile}.landlock is false" in d["reason"], d


@needs_landlock
def test_exec_d_processes_are_confined_like_the_init(
        hardened, busybox_rootfs, tmp_path, helpers, host_dir):
    bundle = probe_bundle(hardened, tmp_path, busybox_rootfs, helpers)
    bundle.args("sleep", "60")
    cid = hardened.id()
    hardened.cmd("create", "--bundle", bundle.write(), cid, check=True)
    hardened.cmd("start", cid, check=True)
    fd = os.open(host_dir, os.O_RDONLY | os.O_DIRECTORY)
    try:
        r = hardened.cmd("exec", "--preserve-fds", "1", cid, "/llprobe/llprobe", *LEAK_CHECKS,
                         pass_fds=(3,), preexec_fn=lambda: os.dup2(fd, 3))
    finally:
        os.close(fd)
    assert r.returncode == 0, r.stderr
    assert_confined(parse(r.stdout), host_dir)
    # The state records it (for `state` and the audit; exec decides again from the policy).
    with open(os.path.join(hardened.root, cid, "state.json")) as f:
        assert json.load(f)["decided"]["landlock"] == ABI
    decisions = landlock_decisions(hardened)
    assert len(decisions) == 2 and all(d["kind"] == "enforced" for d in decisions), decisions
    # Each exec is a Landlock domain of its own (a process cannot join another's): signals to
    # the container's processes still work (not scoped), ptrace-class access to them
    # (/proc/1/ns, /proc/1/root, ptrace) does not -- the documented price.
    r = hardened.cmd("exec", cid, "sh", "-c", "kill -0 1 && echo signal-ok; "
                     "readlink /proc/1/ns/net || echo ns-refused; readlink /proc/self/ns/net")
    lines = r.stdout.split()
    assert lines[:2] == ["signal-ok", "ns-refused"] and lines[2].startswith("net:["), r.stdout
    hardened.cmd("delete", "--force", cid, check=True)


@needs_landlock
def test_descriptors_the_caller_hands_over_stay_usable_by_name(
        hardened, busybox_rootfs, tmp_path, helpers):
    # stdio that are host files: /dev/stdin, /dev/stdout, /dev/stderr reopen them by their
    # /proc/self/fd name (nginx logs to /dev/stdout), which the ruleset grants, with the
    # access each was opened with.
    src, out, err = (tmp_path / n for n in ("stdin.txt", "stdout.txt", "stderr.txt"))
    src.write_text("from-stdin\n")
    for f in (out, err):
        f.write_text("")
        os.chmod(f, 0o666)  # the container's root is no host root: others may write
    bundle = probe_bundle(hardened, tmp_path, busybox_rootfs, helpers)
    bundle.shell("cat /dev/stdin; echo to-stdout >> /dev/stdout; echo to-stderr > /dev/stderr; "
                 "{ echo x > /dev/stdin; } 2>/dev/null || echo ro-stdin")
    with open(src) as i, open(out, "a") as o, open(err, "a") as e:
        r = subprocess.run([SEERUN, *hardened.global_args, "run", "--bundle", bundle.write(),
                            hardened.id()], stdin=i, stdout=o, stderr=e, timeout=60)
    assert r.returncode == 0, err.read_text()
    assert out.read_text() == "from-stdin\nto-stdout\nro-stdin\n", out.read_text()
    assert err.read_text() == "to-stderr\n", err.read_text()
    assert src.read_text() == "from-stdin\n"


@needs_landlock
def test_a_host_file_handed_in_read_only_cannot_be_reopened_for_writing(
        hardened, busybox_rootfs, tmp_path, helpers):
    # Another name for a handed-over file: /proc/self/fd/3.  It reopens with the access the
    # descriptor has (reading), never more, even where the file's mode would let it write.
    note = tmp_path / "note"
    note.write_text("original\n")
    os.chmod(note, 0o666)
    bundle = probe_bundle(hardened, tmp_path, busybox_rootfs, helpers, "reopenr:3", "reopenw:3")
    fd = os.open(note, os.O_RDONLY)
    try:
        r = subprocess.run([SEERUN, *hardened.global_args, "run", "--preserve-fds", "1",
                            "--bundle", bundle.write(), hardened.id()],
                           stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60,
                           pass_fds=(3,), preexec_fn=lambda: os.dup2(fd, 3))
    finally:
        os.close(fd)
    assert r.returncode == 0, r.stderr
    seen = parse(r.stdout)
    assert seen == {"reopenr:3": "ok:original", "reopenw:3": "EACCES"}, seen
    assert note.read_text() == "original\n"


def test_where_the_kernel_has_no_landlock_the_audit_says_so_and_the_container_runs(
        hardened, busybox_rootfs, tmp_path, helpers, host_dir):
    bundle = probe_bundle(hardened, tmp_path, busybox_rootfs, helpers, *LEAK_CHECKS)
    seen = run_with_host_dir(hardened, bundle, host_dir, runner=(str(helpers / "no-landlock"),))
    # Nothing confines it then (the leak is back); the decision says so.
    assert seen["openat:3:secret"] == "ok:" + SECRET, seen
    d = landlock_decisions(hardened)[-1]
    assert d["kind"] == "allowed" and d["applied"] == "null", d
    assert "the kernel has no Landlock" in d["reason"], d


@needs_landlock
@pytest.mark.skipif(ABI < 6, reason="scoping needs Landlock ABI 6")
def test_with_the_hosts_network_kept_abstract_unix_sockets_of_the_host_are_out_of_reach(
        extra_profiles, busybox_rootfs, tmp_path, helpers):
    # containerd-shim's abstract socket (CVE-2020-15257): a container in the host's network
    # namespace reached it.  Scoped under a profile that keeps the host's network.
    name = "srt-ll-" + uuid.uuid4().hex[:8]
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind("\0" + name)
    listener.listen(4)
    try:
        for profile, knobs, expect in (("host-net", {}, "EPERM"),
                                       ("host-net-off", {"landlock": False}, "ok")):
            s = extra_profiles(profile, {"base": "default", "network": {"allowHost": True},
                                         **knobs})
            bundle = probe_bundle(s, tmp_path / profile, busybox_rootfs, helpers,
                                  f"unix:{name}")
            bundle.linux["namespaces"] = [n for n in bundle.linux["namespaces"]
                                          if n["type"] != "network"]
            r = s.cmd("run", "--bundle", bundle.write(), s.id())
            assert r.returncode == 0, r.stderr
            assert parse(r.stdout)[f"unix:{name}"] == expect, (profile, r.stdout)
            scoped = (json.loads(landlock_decisions(s)[-1]["applied"]) or {}).get("scoped")
            assert scoped == (["abstractUnixSocket"] if expect == "EPERM" else None), scoped
    finally:
        listener.close()
