#!/usr/bin/python3
"""Side-by-side benchmark of seerun against crun and runc (issue 7).

    contrib/bench/run.sh [--quick] [-o REPORT.md] [--json RAW.json] [--seerun PATH]
                         [--crun PATH] [--runc PATH] [--bwrap PATH]

Runs, as root, every operation for every runtime present, interleaved (one iteration of each
runtime in turn, the order rotated every round) so that the machine's drift falls on all alike,
and prints a Markdown report (also written to -o).  It installs nothing: a runtime that is
missing is reported as such; without podman's seccomp profile the "hardened" variant is skipped.

The harness re-executes itself in a private mount namespace (`unshare -m --propagation
private`) and unmounts /sys/fs/cgroup/unified there: crun 1.8 refuses the hybrid cgroup layout
of this machine otherwise, and every runtime runs in the same namespace so that they pay the
same.  The host's mounts are never changed.  Every runtime gets its own --root on a tmpfs the
harness mounts there (as /run, every runtime's default root, is on a standard host; this VM's
/run is on its ext4 root, where each atomic state write costs several times more:
--state-on-disk measures that); containers, state directories, bundles and the cgroup
directories the runtimes leave behind are removed at the end, also after a failure or Ctrl-C.
"""

import argparse
import ctypes
import datetime
import json
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ in the source tree

import bundles  # noqa: E402
import procs  # noqa: E402
import report  # noqa: E402
import seccomp_convert  # noqa: E402
import steps  # noqa: E402

NS_ENV = "SEERUN_BENCH_IN_PRIVATE_MOUNT_NS"
UNIFIED = "/sys/fs/cgroup/unified"
RUNTIME_ORDER = ["seerun", "crun", "runc"]
ENV = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
       "HOME": "/root", "LC_ALL": "C"}

# Hook for seerun's own default filter.  Once seerun always installs a default seccomp filter
# of its own (on top of config.json's), set this to a short description of it: the
# micro-benchmark then labels seerun's rows with it, since seerun's "no profile" case measures
# that filter and its "podman profile" case both filters stacked.
SEERUN_BUILTIN_FILTER = None

PARAMS = {
    # A full run: a few minutes on 2 cores.
    "full": dict(iterations=20, warmup=1, concurrent=50, concurrent_rounds=1, many=200,
                 many_parallel=max(1, os.cpu_count() or 1), rss_iterations=5,
                 micro_calls=1_000_000, micro_iterations=2, timeout=60),
    # --quick: a smoke run of about half a minute on an idle machine.
    "quick": dict(iterations=3, warmup=1, concurrent=10, concurrent_rounds=1, many=10,
                  many_parallel=max(1, os.cpu_count() or 1), rss_iterations=1,
                  micro_calls=100_000, micro_iterations=1, timeout=30),
}

ALL_OPS = ["lifecycle", "run", "exec", "concurrent", "many", "rss", "micro", "steps"]
NOT_IMPLEMENTED = re.compile(r"unknown command|no help topic|not implemented|unrecognized command"
                             r"|invalid command", re.I)


class OpFailed(Exception):
    pass


class NotImplementedByRuntime(Exception):
    pass


class Runtime:
    def __init__(self, name, path, root):
        self.name = name
        self.path = path
        self.root = root

    def cmd(self, *args):
        return [self.path, "--root", self.root, *args]


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def now():
    return time.perf_counter()


def rotate(items, i):
    k = i % len(items) if items else 0
    return items[k:] + items[:k]


# -- the private mount namespace ----------------------------------------------------------------

def mount_points():
    with open("/proc/self/mountinfo") as f:
        return [line.split()[4].replace("\\040", " ") for line in f]


def cgroup_layout():
    fstypes = {}
    with open("/proc/self/mountinfo") as f:
        for line in f:
            parts = line.split()
            fstypes[parts[4]] = parts[parts.index("-") + 1]
    if fstypes.get("/sys/fs/cgroup") == "cgroup2":
        return "cgroup v2"
    if UNIFIED in fstypes:
        return "hybrid cgroups (v1 + unified)"
    return "cgroup v1"


def enter_private_mount_namespace(argv):
    """Re-executes this script under `unshare -m --propagation private` (same pid: unshare
    execs), unless already there; there, unmounts /sys/fs/cgroup/unified."""
    if os.environ.get(NS_ENV) != "1":
        unshare = shutil.which("unshare")
        if not unshare:
            sys.exit("bench: unshare not found (util-linux)")
        env = dict(os.environ)
        env[NS_ENV] = "1"
        env["SEERUN_BENCH_HOST_CGROUPS"] = cgroup_layout()
        env["SEERUN_BENCH_HOST_MNT_NS"] = os.readlink("/proc/self/ns/mnt")
        os.execve(unshare, [unshare, "-m", "--propagation", "private", sys.executable,
                            os.path.abspath(__file__)] + argv, env)
    if os.readlink("/proc/self/ns/mnt") == os.environ.get("SEERUN_BENCH_HOST_MNT_NS"):
        sys.exit("bench: not in a private mount namespace; refusing to change mounts")
    if UNIFIED in mount_points():
        subprocess.run(["umount", UNIFIED], check=True)


# -- the benchmark ------------------------------------------------------------------------------

class Bench:
    def __init__(self, args, params, work):
        self.args = args
        self.p = params
        self.work = work
        self.reaper = procs.Reaper(os.path.join(work, "out"), ENV)
        self.prefix = f"srb{os.getpid()}-"
        self._n = 0
        self.runtimes = {}       # name -> Runtime, in RUNTIME_ORDER
        self.missing = {}        # name -> why
        self.filter_bpf = None   # seerun's built-in filter for bwrap --seccomp (load_filter)
        self.filter_insns = None
        self.live = {}           # runtime name -> container ids that may exist
        self.owner = {}          # container id -> runtime name
        self.created_at = {}     # container id -> perf_counter() before its create
        self.failures = {}       # (variant, op, runtime) -> {"count", "message"}
        self.notes = []
        self.unimplemented = {}    # runtime name -> {op: message}
        self.container_tally = {}  # (variant, runtime) -> [failed, total] containers
        self.pid_dir = os.path.join(work, "pids")
        self.state_fs = None
        os.makedirs(self.pid_dir)
        self.floor = None
        self.rootfs = None
        self.bundles = {}
        self.results = {"variants": {}, "failures": [], "notes": self.notes}
        self.load_start = self.loadavg()

    # -- helpers --------------------------------------------------------------------------
    def new_id(self, rt):
        self._n += 1
        cid = f"{self.prefix}{self._n}"
        self.live[rt.name].add(cid)
        self.owner[cid] = rt.name
        self.created_at[cid] = now()
        return cid

    def pidfile(self, cid):
        return os.path.join(self.pid_dir, cid)

    def read_pid(self, cid):
        """The container's init pid, from --pid-file.  pids wrap around (pid_max 32768 goes
        by in a full run): an exit the reaper recorded for this pid before the container was
        made belongs to an older process and is dropped."""
        try:
            with open(self.pidfile(cid)) as f:
                pid = int(f.read().strip())
        except (OSError, ValueError) as e:
            raise OpFailed(f"--pid-file {self.pidfile(cid)}: {e}")
        self.reaper.drop_stale(pid, self.created_at.get(cid, 0))
        return pid

    def run(self, argv, slot="main", capture_out=False, timeout=None, open_fds=()):
        try:
            return self.reaper.run(argv, timeout=timeout or self.p["timeout"], slot=slot,
                                   capture_out=capture_out, open_fds=open_fds)
        except procs.Timeout as e:
            raise OpFailed(f"`{' '.join(argv)}`: {e}")

    def rtcmd(self, rt, *args, **kw):
        job = self.run(rt.cmd(*args), **kw)
        if not job.ok:
            raise OpFailed(job.describe())
        return job

    def force_delete(self, rt, cid, pid=None):
        """Untimed: deletes the container if it is there, waits for its init."""
        if os.path.exists(os.path.join(rt.root, cid)):
            try:
                job = self.run(rt.cmd("delete", "--force", cid), slot="cleanup")
                if not job.ok and os.path.exists(os.path.join(rt.root, cid)):
                    return False
            except OpFailed:
                return False
        if pid:
            try:
                self.reaper.wait_pid_exit(pid, 10)
            except procs.Timeout:
                pass
        self.live[rt.name].discard(cid)
        return True

    def short(self, text):
        """Messages without the temporary directory's name."""
        return str(text).replace(self.work + "/", "").replace(self.work, "$WORK")

    def fail(self, variant, op, who, message):
        message = self.short(message)
        key = (variant, op, who)
        if key in self.failures:
            self.failures[key]["count"] += 1
        else:
            self.failures[key] = {"variant": variant, "op": op, "runtime": who, "count": 1,
                                  "message": message}
            log(f"  FAILED {variant}/{op}/{who}: {message[:300]}")

    def new_series(self):
        return {"samples": [], "failures": []}

    # -- setup ----------------------------------------------------------------------------
    def discover(self):
        paths = {}
        seerun = self.args.seerun or os.environ.get("SEERUN_BINARY")
        if not seerun:
            for cand in (os.path.join(bundles.TOP, "build", "seerun"), shutil.which("seerun")):
                if cand and os.path.exists(cand):
                    seerun = cand
                    break
        paths["seerun"] = seerun
        paths["crun"] = self.args.crun or shutil.which("crun", path=ENV["PATH"])
        paths["runc"] = self.args.runc or shutil.which("runc", path=ENV["PATH"])
        # bubblewrap: the sandbox row's peer (Debian: apt-get install bubblewrap).
        self.bwrap = self.args.bwrap or shutil.which("bwrap", path=ENV["PATH"])
        if self.bwrap and not os.access(self.bwrap, os.X_OK):
            self.missing["bwrap"] = f"{self.bwrap} is not an executable"
            self.bwrap = None
        elif not self.bwrap:
            self.missing["bwrap"] = "not installed (apt-get install bubblewrap)"
        self.filter_src = self.args.seerun_filter or os.path.join(
            bundles.TOP, "build", "runtime", "seccomp", "seccomp_default_prog.c")
        wanted = self.args.runtimes.split(",") if self.args.runtimes else RUNTIME_ORDER
        for name in RUNTIME_ORDER:
            path = paths.get(name)
            if name not in wanted:
                continue
            if not path or not os.access(path, os.X_OK):
                if path:
                    self.missing[name] = f"{path} is not an executable"
                elif name == "seerun":
                    self.missing[name] = "no binary: build it, or pass --seerun"
                else:
                    self.missing[name] = f"not installed (apt-get install {name})"
                continue
            root = os.path.join(self.state_base(), "state-" + name)
            os.makedirs(root, mode=0o700)
            self.runtimes[name] = Runtime(name, os.path.abspath(path), root)
            self.live[name] = set()
        if not self.runtimes:
            raise SystemExit("bench: no runtime to benchmark")

    def state_base(self):
        """Where the runtimes' --root directories go: a tmpfs of the harness's own (in its
        private mount namespace), as /run (every runtime's default root) is on a standard
        host; --state-on-disk: the work directory's filesystem."""
        base = os.path.join(self.work, "state")
        if os.path.isdir(base):
            return base
        os.makedirs(base, mode=0o700)
        if self.args.state_on_disk:
            self.state_fs = "the work directory's filesystem (--state-on-disk)"
            return base
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.mount(b"tmpfs", base.encode(), b"tmpfs", 0, b"mode=0700,size=1g") != 0:
            raise SystemExit(f"bench: mount a tmpfs at {base}: "
                             f"{os.strerror(ctypes.get_errno())}")
        self.state_fs = "a tmpfs, as /run is on a standard host (--state-on-disk: not)"
        return base

    def setup(self):
        log(f"bench: work directory {self.work}")
        progs = bundles.build_c(self.work)
        self.floor = progs["floor"]
        self.rss_of = progs["rss"]
        self.rootfs = bundles.make_rootfs(self.work, progs["syscalls"])
        self.syscalls_host = progs["syscalls"]
        wanted = self.args.variants.split(",")
        for v in wanted:
            if v not in bundles.VARIANTS:
                raise bundles.SetupError(f"--variants: unknown variant {v!r} "
                                         f"(known: {', '.join(bundles.VARIANTS)})")
        seccomp, stats = seccomp_convert.load_and_convert(self.args.seccomp_profile)
        if seccomp is None:
            self.seccomp_meta = {"skipped": stats}  # the report's header says so
        else:
            self.seccomp_meta = stats
        base, spec_by = bundles.base_config(self.work, self.runtimes)
        self.spec_by = spec_by
        self.bundles = bundles.make_bundles(self.work, base, self.rootfs, seccomp,
                                            self.p["micro_calls"], wanted)
        self.filter_bpf = self.load_filter() if self.bwrap else None

    # -- CPU accounting ---------------------------------------------------------------------
    def cpu_mark(self):
        """Where cpu_since measures from: the CPU time reaped so far and the harness's
        children."""
        return procs.cpu_children(), set(self.reaper.children())

    def cpu_since(self, mark):
        """CPU time of what ran since mark, once every process it left to the subreaper has
        ended and been reaped (bwrap's inner init and a sandbox's outlive their command by a
        moment): counted for the iteration that made it, never for the next one, which may be
        another runtime's."""
        self.reaper.settle(mark[1], self.p["timeout"])
        return procs.cpu_children() - mark[0]

    # -- operations: one iteration each -----------------------------------------------------
    def it_lifecycle(self, rt, variant):
        b = self.bundles[variant]["true"]
        cid = self.new_id(rt)
        pid = None
        mark = self.cpu_mark()
        t0 = now()
        try:
            self.rtcmd(rt, "create", "--bundle", b, "--pid-file", self.pidfile(cid), cid)
            pid = self.read_pid(cid)
            t1 = now()
            self.rtcmd(rt, "start", cid)
            t2 = now()
            try:
                ex = self.reaper.wait_pid_exit(pid, self.p["timeout"])
            except procs.Timeout as e:
                raise OpFailed(f"container process: {e}")
            t3 = now()
            self.rtcmd(rt, "delete", cid)
            t4 = now()
            self.reaper.reap_ready()
            cpu = self.cpu_since(mark)
        except OpFailed:
            self.force_delete(rt, cid, pid)
            raise
        self.live[rt.name].discard(cid)
        if ex and ex[0] != 0:
            raise OpFailed(f"/bin/true in the container ended with status {ex[0]:#x}")
        return {"wall": t4 - t0, "cpu": cpu, "create": t1 - t0, "start": t2 - t1,
                "wait": t3 - t2, "delete": t4 - t3,
                "init_rss": ex[1].ru_maxrss if ex else None}

    def it_run(self, rt, variant):
        b = self.bundles[variant]["true"]
        cid = self.new_id(rt)
        mark = self.cpu_mark()
        t0 = now()
        try:
            self.rtcmd(rt, "run", "--bundle", b, cid)
            t1 = now()
            self.reaper.reap_ready()
            cpu = self.cpu_since(mark)
        except OpFailed:
            self.force_delete(rt, cid)
            raise
        if os.path.exists(os.path.join(rt.root, cid)):
            self.note_once(f"{rt.name} `run` left the container's state behind "
                           f"(deleted by the harness, not timed)")
            self.force_delete(rt, cid)
        self.live[rt.name].discard(cid)
        return {"wall": t1 - t0, "cpu": cpu}

    def it_sandbox(self, rt):
        """`seerun sandbox -- /bin/true`: its own built-in root filesystem and config, under
        the default policy, so the same in every variant; it must leave nothing behind."""
        before = set(os.listdir(rt.root))
        mark = self.cpu_mark()
        job = self.run(rt.cmd("sandbox", "--", "/bin/true"))
        if not job.ok:
            raise OpFailed(job.describe())
        self.reaper.reap_ready()
        cpu = self.cpu_since(mark)
        left = set(os.listdir(rt.root)) - before
        if left:
            raise OpFailed(f"sandbox left state behind: {', '.join(sorted(left))}")
        return {"wall": job.wall, "cpu": cpu}

    def bwrap_argv(self, with_filter=False):
        """bubblewrap as like seerun's sandbox as it goes: the same namespaces (user, mount,
        pid, ipc, uts, network, cgroup), the host's /usr read-only with the merged-/usr links,
        /proc, a /dev, a /tmp tmpfs, uid and gid 1000; with_filter: and seerun's built-in
        seccomp filter (--seccomp 3: the BPF program on descriptor 3)."""
        argv = [self.bwrap, "--unshare-all", "--die-with-parent", "--ro-bind", "/usr", "/usr"]
        if with_filter:
            argv += ["--seccomp", "3"]
        for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
            p = os.path.join("/", name)
            if os.path.islink(p) and os.readlink(p).startswith("usr/"):
                argv += ["--symlink", os.readlink(p), p]
        return argv + ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
                       "--uid", "1000", "--gid", "1000", "/bin/true"]

    def load_filter(self):
        """seerun's built-in seccomp filter as a raw BPF program (struct sock_filter, as bwrap
        --seccomp reads it), from the C source the build generates
        (build/runtime/seccomp/seccomp_default_prog.c, or --seerun-filter); None and a note
        when it is not there."""
        try:
            with open(self.filter_src) as f:
                text = f.read()
        except OSError as e:
            self.missing["bwrap+filter"] = f"no filter source {self.filter_src} ({e.strerror})"
            return None
        insns = re.findall(r"\{0x([0-9a-f]+),\s*(\d+),\s*(\d+),\s*0x([0-9a-f]+)\}", text)
        m = re.search(r"sr_seccomp_default_prog_len = (\d+);", text)
        if not insns or not m or len(insns) != int(m.group(1)):
            self.missing["bwrap+filter"] = f"{self.filter_src}: not the generated filter"
            return None
        path = os.path.join(self.work, "seerun-filter.bpf")
        with open(path, "wb") as f:
            for code, jt, jf, k in insns:
                f.write(struct.pack("<HBBI", int(code, 16), int(jt), int(jf), int(k, 16)))
        self.filter_insns = len(insns)
        return path

    def it_bwrap(self, with_filter=False):
        mark = self.cpu_mark()
        job = self.run(self.bwrap_argv(with_filter),
                       open_fds=[(3, self.filter_bpf)] if with_filter else ())
        if not job.ok:
            raise OpFailed(job.describe())
        self.reaper.reap_ready()
        return {"wall": job.wall, "cpu": self.cpu_since(mark)}

    def it_floor(self, variant):
        argv = [self.floor] + (["-u"] if variant == "hardened" else []) + [self.rootfs]
        mark = self.cpu_mark()
        job = self.run(argv)
        if not job.ok:
            raise OpFailed(job.describe())
        return {"wall": job.wall, "cpu": self.cpu_since(mark)}

    def it_exec(self, rt, cid):
        mark = self.cpu_mark()
        job = self.run(rt.cmd("exec", cid, "/bin/true"))
        if not job.ok:
            if NOT_IMPLEMENTED.search(job.stderr()):
                raise NotImplementedByRuntime(job.stderr())
            raise OpFailed(job.describe())
        return {"wall": job.wall, "cpu": self.cpu_since(mark)}

    def note_once(self, text):
        if text not in self.notes:
            self.notes.append(text)

    # -- phases -----------------------------------------------------------------------------
    def interleave(self, variant, op, participants, fn, iterations=None, warmup=None):
        """participants: names; fn(name) -> sample dict.  Returns {name: series}."""
        iterations = self.p["iterations"] if iterations is None else iterations
        warmup = self.p["warmup"] if warmup is None else warmup
        out = {n: self.new_series() for n in participants}
        t_start = now()
        for i in range(warmup + iterations):
            for n in rotate(participants, i):
                ser = out[n]
                if ser.get("status"):
                    continue
                try:
                    sample = fn(n)
                except NotImplementedByRuntime as e:
                    ser["status"] = "not implemented yet"
                    first = (str(e).strip().splitlines() or [""])[0]
                    self.unimplemented.setdefault(n, {})[op] = first
                    self.note_once(f"{n}: `{op}` not implemented yet ({first})")
                    continue
                except OpFailed as e:
                    ser["failures"].append(str(e))
                    self.fail(variant, op, n, str(e))
                    continue
                if i >= warmup:
                    ser["samples"].append(sample)
        log(f"  [{variant}] {op}: {now() - t_start:.1f} s")
        return out

    def phase_lifecycle(self, variant):
        names = list(self.runtimes) + ["floor"]
        return self.interleave(variant, "lifecycle", names,
                               lambda n: self.it_floor(variant) if n == "floor"
                               else self.it_lifecycle(self.runtimes[n], variant))

    def phase_run(self, variant):
        names = list(self.runtimes) + ["floor"]
        if "seerun" in self.runtimes:
            names.append("sandbox")
            if self.bwrap:
                names.append("bwrap")
                if self.filter_bpf:
                    names.append("bwrap+filter")

        def one(n):
            if n == "floor":
                return self.it_floor(variant)
            if n == "sandbox":
                return self.it_sandbox(self.runtimes["seerun"])
            if n in ("bwrap", "bwrap+filter"):
                return self.it_bwrap(with_filter=n == "bwrap+filter")
            return self.it_run(self.runtimes[n], variant)
        return self.interleave(variant, "run", names, one)

    def phase_exec(self, variant):
        """One long-running container (sleep) per runtime; exec /bin/true into it."""
        b = self.bundles[variant]["sleep"]
        targets, setup_failed = {}, {}
        for name, rt in self.runtimes.items():
            if "exec" in self.unimplemented.get(name, {}):
                continue
            cid = self.new_id(rt)
            try:
                self.rtcmd(rt, "create", "--bundle", b, "--pid-file", self.pidfile(cid), cid)
                pid = self.read_pid(cid)
                self.rtcmd(rt, "start", cid)
                targets[name] = (cid, pid)
            except OpFailed as e:
                setup_failed[name] = str(e)
                self.fail(variant, "exec", name, "setting up the running container: " + str(e))
                self.force_delete(rt, cid)
        try:
            out = self.interleave(variant, "exec", list(targets),
                                  lambda n: self.it_exec(self.runtimes[n], targets[n][0]))
        finally:
            for name, (cid, pid) in targets.items():
                self.force_delete(self.runtimes[name], cid, pid)
        for name, msg in setup_failed.items():
            out[name] = {"samples": [], "failures": [msg]}
        for name in self.runtimes:
            if "exec" in self.unimplemented.get(name, {}):
                out[name] = {"samples": [], "failures": [], "status": "not implemented yet"}
        return out

    def concurrent_round(self, rt, variant):
        """N containers: all `create`s at once, each `start` as soon as its create is done.
        Wall: until the last start returns.  CPU: also the containers' processes."""
        n = self.p["concurrent"]
        b = self.bundles[variant]["true"]
        ids = [self.new_id(rt) for _ in range(n)]
        kind, failed, started, errors = {}, 0, [], []
        mark = self.cpu_mark()
        t0 = now()
        pending = []
        for k, cid in enumerate(ids):
            j = self.reaper.spawn(rt.cmd("create", "--bundle", b, "--pid-file",
                                         self.pidfile(cid), cid), slot=f"c{k}")
            kind[j.pid] = ("create", k, cid)
            pending.append(j)
        deadline = t0 + max(120, self.p["timeout"] * 2)
        while pending:
            try:
                done = self.reaper.wait_any(pending, max(0.1, deadline - now()))
            except procs.Timeout:
                for j in pending:
                    self.reaper.kill_job(j)
                    errors.append(f"`{os.path.basename(j.argv[0])} {kind[j.pid][0]}`: timed out")
                failed += len(pending)
                break
            for j in done:
                pending.remove(j)
                what, k, cid = kind[j.pid]
                if not j.ok:
                    failed += 1
                    errors.append(j.describe())
                elif what == "create":
                    s = self.reaper.spawn(rt.cmd("start", cid), slot=f"c{k}s")
                    kind[s.pid] = ("start", k, cid)
                    pending.append(s)
                else:
                    started.append(cid)
        t1 = now()
        for cid in started:
            try:
                self.reaper.wait_pid_exit(self.read_pid(cid), self.p["timeout"])
            except (procs.Timeout, OpFailed) as e:
                errors.append(f"{cid}: {e}")
        self.reaper.reap_ready()
        cpu = self.cpu_since(mark)
        self.delete_all(rt, ids)
        tally = self.container_tally.setdefault((variant, rt.name), [0, 0])
        tally[0] += failed
        tally[1] += n
        if not started:
            raise OpFailed(f"all {n} containers failed; first: {errors[0]}")
        if errors:
            self.fail(variant, "concurrent", rt.name,
                      f"{len(errors)} of {n} containers failed; first: {errors[0]}")
        return {"wall": t1 - t0, "cpu": cpu, "failed": failed}

    def delete_all(self, rt, ids, batch=8):
        """Untimed, a few at a time: delete --force every container of ids that exists."""
        ids = [c for c in ids if os.path.exists(os.path.join(rt.root, c))]
        for i in range(0, len(ids), batch):
            jobs = [self.reaper.spawn(rt.cmd("delete", "--force", c), slot=f"d{k}")
                    for k, c in enumerate(ids[i:i + batch])]
            try:
                self.reaper.wait_jobs(jobs, self.p["timeout"])
            except procs.Timeout:
                for j in jobs:
                    self.reaper.kill_job(j)
        for cid in ids:
            if not os.path.exists(os.path.join(rt.root, cid)):
                self.live[rt.name].discard(cid)
        self.reaper.reap_ready()

    def phase_concurrent(self, variant):
        # Failures inside a round are reported by concurrent_round itself; interleave only
        # sees a round that failed entirely.
        out = self.interleave(variant, "concurrent", list(self.runtimes),
                              lambda n: self.concurrent_round(self.runtimes[n], variant),
                              iterations=self.p["concurrent_rounds"], warmup=0)
        for name, ser in out.items():
            failed, total = self.container_tally.get((variant, name), (0, 0))
            ser["containers"] = {"failed": failed, "total": total}
        return out

    def create_pool(self, rt, bundle, ids, par):
        """Creates the containers ids, par at a time.  Returns (created ids, errors)."""
        todo, running, created, errors = list(ids), [], [], []
        cid_of = {}
        while todo or running:
            while todo and len(running) < par:
                cid = todo.pop(0)
                j = self.reaper.spawn(rt.cmd("create", "--bundle", bundle, "--pid-file",
                                             self.pidfile(cid), cid), slot=cid)
                cid_of[j.pid] = cid
                running.append(j)
            try:
                done = self.reaper.wait_any(running, self.p["timeout"])
            except procs.Timeout:
                for j in running:
                    self.reaper.kill_job(j)
                    errors.append(f"`create {cid_of[j.pid]}`: timed out")
                running = []
                continue
            for j in done:
                running.remove(j)
                if j.ok:
                    created.append(cid_of[j.pid])
                else:
                    errors.append(j.describe())
        return created, errors

    def phase_many(self, variant):
        """M containers created (not started) per runtime, as many at a time as there are
        cores; state and list with all present (interleaved); then delete them one after
        another."""
        m = self.p["many"]
        b = self.bundles[variant]["true"]
        res = {op: {} for op in ("create_many", "state", "list", "delete_many")}
        present = {}
        cpu_create = {}
        before_create, made = {}, {}
        t_phase = now()
        try:
            for name, rt in self.runtimes.items():
                # Raw: its inits (and seerun's supervisors) stay until the deletes below, which
                # wait for them to end.
                before_create[name] = set(self.reaper.children())
                cpu0 = procs.cpu_children()
                t0 = now()
                all_ids = [self.new_id(rt) for _ in range(m)]
                ids, errors = self.create_pool(rt, b, all_ids, self.p["many_parallel"])
                wall = now() - t0
                self.delete_all(rt, [c for c in all_ids if c not in set(ids)])
                cpu_create[name] = procs.cpu_children() - cpu0
                # This runtime's processes (inits, seerun's supervisors): what its deletes
                # must see end.
                made[name] = set(self.reaper.children()) - before_create[name]
                # "Created" means an init waiting for start: one that died is a failure.
                self.reaper.reap_ready()
                alive = 0
                for cid in list(ids):
                    try:
                        pid = self.read_pid(cid)
                    except OpFailed as e:
                        errors.append(str(e))
                        continue
                    if self.reaper.pid_gone(pid):
                        errors.append(f"{cid}: `create` succeeded but the container's init "
                                      f"(pid {pid}) is gone before `start`")
                    else:
                        alive += 1
                ser = self.new_series()
                if errors:
                    ser["failures"] = errors
                    self.fail(variant, "create_many", name,
                              f"{len(errors)} of {m} failed; first: {errors[0]}")
                if ids:
                    ser["samples"].append({"wall": wall, "cpu": None, "created": len(ids),
                                           "parallel": self.p["many_parallel"]})
                res["create_many"][name] = ser
                present[name] = ids
                if not alive:
                    # Nothing in the created state: state, list and delete would not measure
                    # the same thing as for the others.
                    skipped = {"samples": [], "failures": [],
                               "status": "skipped: no container in created state"}
                    for op in ("state", "list", "delete_many"):
                        res[op][name] = dict(skipped)
            names = [n for n in self.runtimes
                     if present.get(n) and not res["state"].get(n, {}).get("status")]
            seen_counts = {}

            def state(n):
                rt = self.runtimes[n]
                mark = self.cpu_mark()
                job = self.rtcmd(rt, "state", present[n][0], capture_out=True)
                out = job.stdout()
                try:
                    status = json.loads(out).get("status")
                except ValueError:
                    status = None
                if status != "created":
                    raise OpFailed(f"`state {present[n][0]}`: status {status!r}, expected "
                                   f"\"created\"")
                return {"wall": job.wall, "cpu": self.cpu_since(mark)}

            def lst(n):
                rt = self.runtimes[n]
                mark = self.cpu_mark()
                job = self.rtcmd(rt, "list", capture_out=True)
                seen_counts[n] = job.stdout().count(self.prefix)
                return {"wall": job.wall, "cpu": self.cpu_since(mark)}

            res["state"].update(self.interleave(variant, "state", names, state))
            res["list"].update(self.interleave(variant, "list", names, lst))
            for n in names:
                if seen_counts.get(n) is not None and seen_counts[n] != len(present[n]):
                    self.note_once(f"{variant}: {n} `list` showed {seen_counts[n]} of its "
                                   f"{len(present[n])} containers")
            for name in names:
                rt = self.runtimes[name]
                errors = []
                pids = []
                for cid in present[name]:
                    try:
                        pids.append(self.read_pid(cid))
                    except OpFailed:
                        pass
                mark = (procs.cpu_children(), set(self.reaper.children()) - made[name])
                t0 = now()
                for cid in present[name]:
                    try:
                        self.rtcmd(rt, "delete", "--force", cid)
                        self.live[name].discard(cid)
                    except OpFailed as e:
                        errors.append(str(e))
                wall = now() - t0
                for pid in pids:
                    try:
                        self.reaper.wait_pid_exit(pid, 10)
                    except procs.Timeout:
                        errors.append(f"init pid {pid} still running after delete")
                self.reaper.reap_ready()
                cpu = self.cpu_since(mark) + cpu_create[name]
                ser = self.new_series()
                if errors:
                    ser["failures"] = errors
                    self.fail(variant, "delete_many", name,
                              f"{len(errors)} failed; first: {errors[0]}")
                ser["samples"].append({"wall": wall, "cpu": cpu})
                res["delete_many"][name] = ser
                present[name] = []
        finally:
            for name, ids in present.items():
                self.delete_all(self.runtimes[name], ids)
        log(f"  [{variant}] {m} containers: {now() - t_phase:.1f} s")
        return res

    def phase_rss(self, variant):
        """Peak RSS of `create`, run under rss-of (see rss.c): untimed, interleaved."""
        b = self.bundles[variant]["true"]
        out_file = os.path.join(self.work, "rss-of.out")

        def one(n):
            rt = self.runtimes[n]
            cid = self.new_id(rt)
            pid = None
            try:
                job = self.run([self.rss_of, out_file] +
                               rt.cmd("create", "--bundle", b, "--pid-file", self.pidfile(cid),
                                      cid))
                if not job.ok:
                    raise OpFailed(job.describe())
                pid = self.read_pid(cid)
                with open(out_file) as f:
                    return {"create_rss": int(f.read())}
            finally:
                self.force_delete(rt, cid, pid)

        return self.interleave(variant, "rss", list(self.runtimes), one,
                               iterations=self.p["rss_iterations"], warmup=0)

    def phase_micro(self):
        """The syscall loop inside a container: no seccomp vs podman's profile, per runtime;
        and on the host, outside any container."""
        micro = self.bundles["micro"]
        cases = [{"label": "host, no container", "runtime": "host", "profile": "none"}]
        for name in self.runtimes:
            label = f"{name}, no seccomp"
            if name == "seerun" and SEERUN_BUILTIN_FILTER:
                label = f"seerun, no profile in config.json ({SEERUN_BUILTIN_FILTER})"
            cases.append({"label": label, "runtime": name, "profile": "none"})
        if "podman" in micro:
            for name in self.runtimes:
                label = f"{name} + podman's profile"
                if name == "seerun" and SEERUN_BUILTIN_FILTER:
                    label += f" (+ {SEERUN_BUILTIN_FILTER})"
                cases.append({"label": label, "runtime": name, "profile": "podman"})
        by_label = {c["label"]: c for c in cases}

        def one(label):
            c = by_label[label]
            if c["runtime"] == "host":
                job = self.run([self.syscalls_host, str(self.p["micro_calls"])],
                               capture_out=True, timeout=300)
                if not job.ok:
                    raise OpFailed(job.describe())
            else:
                rt = self.runtimes[c["runtime"]]
                cid = self.new_id(rt)
                try:
                    job = self.rtcmd(rt, "run", "--bundle", micro[c["profile"]], cid,
                                     capture_out=True, timeout=300)
                finally:
                    self.force_delete(rt, cid)
            vals = dict(re.findall(r"(\w+_ns)=([\d.]+)", job.stdout()))
            keys = ("getppid_ns", "read_ns", "getppid_cpu_ns", "read_cpu_ns")
            if not all(k in vals for k in keys):
                raise OpFailed(f"unexpected output: {job.stdout()[:200]!r}")
            sample = {k: float(vals[k]) for k in keys}
            sample["wall"] = job.wall
            return sample

        series = self.interleave("micro", "syscalls", [c["label"] for c in cases], one,
                                 iterations=self.p["micro_iterations"], warmup=0)
        note = ("The same static program (`contrib/bench/syscalls.c`) in the plain bundle "
                "(no user namespace), with and without podman's profile. ns/call of the "
                "program's own CPU time (CLOCK_THREAD_CPUTIME_ID: not inflated by other load); "
                "its elapsed times are in the JSON. Ratios against the same runtime with no "
                "filter.")
        if "podman" not in micro:
            note += " podman's profile is missing: no filtered case."
        return {"cases": cases, "series": series, "calls": self.p["micro_calls"],
                "iterations": self.p["micro_iterations"], "note": note}

    # -- the whole run ----------------------------------------------------------------------
    def guarded(self, variant, op, fn):
        """Runs a phase; a bug in the harness (an unexpected exception) is reported as a
        failure of the phase and the run goes on."""
        try:
            return fn()
        except (KeyboardInterrupt, SystemExit):
            raise
        except Exception as e:  # noqa: BLE001 - reported, not swallowed
            import traceback
            self.fail(variant, op, "harness", f"{type(e).__name__}: {e}: "
                      + traceback.format_exc().strip().splitlines()[-3].strip())
            return None

    def execute(self):
        ops = self.args.ops.split(",") if self.args.ops else ALL_OPS
        variants = [v for v in bundles.VARIANTS if v in self.bundles]
        phases = [("lifecycle", self.phase_lifecycle), ("run", self.phase_run),
                  ("exec", self.phase_exec), ("concurrent", self.phase_concurrent),
                  ("many", self.phase_many), ("rss", self.phase_rss)]
        for variant in variants:
            log(f"bench: variant {variant}")
            vres = {"ops": {}}
            self.results["variants"][variant] = vres
            for op, fn in phases:
                if op not in ops:
                    continue
                out = self.guarded(variant, op, lambda: fn(variant))
                if out is None:
                    continue
                if op == "many":
                    vres["ops"].update(out)
                else:
                    vres["ops"][op] = out
        if "steps" in ops and "seerun" in self.runtimes:
            variant = "hardened" if "hardened" in self.bundles else variants[0]
            log(f"bench: seerun's cost per step ({variant}, strace -T)")
            rt = self.runtimes["seerun"]
            out = self.guarded(variant, "steps", lambda: {
                "variant": variant,
                "steps": steps.measure(rt.path, self.bundles[variant]["true"], rt.root,
                                       n=3 if self.args.quick else 7,
                                       prefix=self.prefix + "steps")})
            if out is not None:
                self.results["steps"] = out
        if "micro" in ops:
            log("bench: seccomp micro-benchmark")
            out = self.guarded("micro", "syscalls", self.phase_micro)
            if out is not None:
                self.results["micro"] = out

    # -- facts for the report ---------------------------------------------------------------
    def resources(self):
        out = {}
        for name, rt in self.runtimes.items():
            real = os.path.realpath(rt.path)
            r = {"file_size": os.path.getsize(real)}
            sz = subprocess.run(["size", real], capture_output=True, text=True)
            try:
                r["loaded_size"] = int(sz.stdout.splitlines()[1].split()[3])
            except (IndexError, ValueError):
                pass
            od = subprocess.run(["objdump", "-p", real], capture_output=True, text=True)
            libs = [re.sub(r"^lib|\.so.*$", "", m) for m in
                    re.findall(r"NEEDED\s+(\S+)", od.stdout)]
            r["libs"] = ", ".join(lib for lib in libs if lib not in ("c", "ld-linux-x86-64")) \
                or "libc only"
            for key, op in (("create_rss", "rss"), ("init_rss", "lifecycle")):
                r[key] = {}
                for variant, vres in self.results["variants"].items():
                    ser = vres["ops"].get(op, {}).get(name)
                    if ser and ser["samples"]:
                        r[key][variant] = report.median(
                            [s[key] for s in ser["samples"] if s.get(key)])
            out[name] = r
        return out

    def versions(self):
        out = {}
        for name, rt in self.runtimes.items():
            p = subprocess.run([rt.path, "--version"], capture_output=True, text=True)
            lines = [ln.strip() for ln in p.stdout.splitlines() if ln.strip()]
            v = lines[0] if lines else "?"
            commit = next((ln for ln in lines[1:] if ln.startswith("commit")), None)
            if commit and name == "seerun":
                v += f", {commit}"
            out[name] = v
        if self.bwrap:
            p = subprocess.run([self.bwrap, "--version"], capture_output=True, text=True)
            out["bwrap"] = (p.stdout.strip().splitlines() or ["?"])[0]
        return out

    @staticmethod
    def loadavg():
        try:
            with open("/proc/loadavg") as f:
                return " ".join(f.read().split()[:3])
        except OSError:
            return "?"

    def meta(self, mode):
        cpu = "?"
        try:
            with open("/proc/cpuinfo") as f:
                cpu = re.search(r"model name\s*:\s*(.*)", f.read()).group(1).strip()
        except (OSError, AttributeError):
            pass
        return {
            "mode": mode,
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "kernel": os.uname().release, "cpu": cpu, "cores": os.cpu_count(),
            "cgroups": os.environ.get("SEERUN_BENCH_HOST_CGROUPS", cgroup_layout()),
            "runtimes": list(self.runtimes), "missing": self.missing,
            "paths": {n: rt.path for n, rt in self.runtimes.items()},
            "versions": self.versions(), "params": self.p, "seccomp": self.seccomp_meta,
            "config_from": self.spec_by,
            "load_start": self.load_start, "load_end": self.loadavg(),
            "state_fs": self.state_fs,
        }

    # -- cleanup ----------------------------------------------------------------------------
    def cgroup_leftovers(self):
        """Cgroup directories named after our containers, at the top of each hierarchy, under
        the harness's own cgroup, and in the bare /sys/fs/cgroup/unified directory (crun
        creates one there once the unified hierarchy is unmounted)."""
        bases = set()
        own = set()
        with open("/proc/self/cgroup") as f:
            for line in f:
                own.add(line.rstrip("\n").split(":", 2)[2])
        with open("/proc/self/mountinfo") as f:
            for line in f:
                parts = line.split()
                if parts[parts.index("-") + 1] in ("cgroup", "cgroup2"):
                    for o in own:
                        bases.add(os.path.normpath(parts[4] + "/" + o))
        if os.path.isdir(UNIFIED):
            bases.add(UNIFIED)
        found = []
        for base in sorted(bases):
            try:
                names = os.listdir(base)
            except OSError:
                continue
            found += [os.path.join(base, n) for n in names if n.startswith(self.prefix)]
        return found

    def leftovers(self):
        lines = []
        by_rt = {}
        for path in self.cgroup_leftovers():
            by_rt.setdefault(self.owner.get(os.path.basename(path), "?"), []).append(path)
        for name, paths in sorted(by_rt.items()):
            bare = [p for p in paths if os.path.dirname(p) == UNIFIED]
            real = [p for p in paths if os.path.dirname(p) != UNIFIED]
            if real:
                where = sorted({os.path.dirname(p) for p in real})
                lines.append(f"{name}: {len(real)} cgroup directories after delete, in "
                             f"{', '.join(where)} (removed by the harness)")
            if bare:
                lines.append(f"{name}: {len(bare)} directories in the bare {UNIFIED} (a plain "
                             f"tmpfs directory once the unified hierarchy is unmounted: an "
                             f"artifact of this set-up, removed by the harness)")
        for name, rt in self.runtimes.items():
            try:
                left = [e for e in os.listdir(rt.root) if e.startswith(self.prefix)]
            except OSError:
                left = []
            if left:
                lines.append(f"{name}: {len(left)} state directories in its --root after "
                             f"delete")
        return lines

    def cleanup(self):
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, signal.SIG_IGN)
        self.p["timeout"] = 20
        for name, rt in self.runtimes.items():
            ids = set(self.live.get(name, ()))
            try:
                ids |= {e for e in os.listdir(rt.root) if e.startswith(self.prefix)}
            except OSError:
                pass
            if ids:
                log(f"bench: cleanup: deleting {len(ids)} {name} containers")
                self.delete_all(rt, sorted(ids))
        for pid in self.reaper.children():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        deadline = now() + 5
        while self.reaper.children() and now() < deadline:
            self.reaper.reap_ready()
            time.sleep(0.01)
        for path in self.cgroup_leftovers():
            if os.path.dirname(path) == UNIFIED and UNIFIED not in mount_points():
                # The tmpfs under the unmounted unified hierarchy (shared with the host's
                # /sys/fs/cgroup): crun's directories there hold plain files.
                shutil.rmtree(path, ignore_errors=True)
                continue
            # A real cgroup: only empty directories can go, the deepest first.
            for dirpath, _, _ in sorted(os.walk(path), key=lambda t: -len(t[0])):
                try:
                    os.rmdir(dirpath)
                except OSError as e:
                    log(f"bench: cleanup: rmdir {dirpath}: {e}")


def umount_under(path):
    libc = ctypes.CDLL(None, use_errno=True)
    for mp in sorted(mount_points(), key=len, reverse=True):
        if mp == path or mp.startswith(path + "/"):
            libc.umount2(mp.encode(), 2)  # MNT_DETACH


def parse_args(argv):
    ap = argparse.ArgumentParser(prog="contrib/bench/run.sh",
                                 description="seerun vs crun vs runc, side by side")
    ap.add_argument("--quick", action="store_true", help="a ~30 s smoke run")
    ap.add_argument("-o", "--output", help="write the Markdown report to this file")
    ap.add_argument("--json", help="write the raw results (JSON) to this file")
    ap.add_argument("--seerun", help="seerun binary (default: $SEERUN_BINARY, build/seerun, "
                                     "PATH)")
    ap.add_argument("--crun", help="crun binary (default: from PATH)")
    ap.add_argument("--runc", help="runc binary (default: from PATH)")
    ap.add_argument("--bwrap", help="bubblewrap binary for the sandbox row (default: from PATH)")
    ap.add_argument("--seerun-filter", help="the C source of seerun's built-in seccomp filter, "
                    "for the bwrap+filter row (default: build/runtime/seccomp/"
                    "seccomp_default_prog.c)")
    ap.add_argument("--runtimes", help="comma-separated subset of seerun,crun,runc")
    ap.add_argument("--ops", help="comma-separated subset of " + ",".join(ALL_OPS))
    ap.add_argument("--iterations", type=int, help="iterations per operation")
    ap.add_argument("--seccomp-profile", default=seccomp_convert.DEFAULT_PROFILE)
    ap.add_argument("--variants", default="plain,hardened",
                    help="comma-separated bundle variants: plain, hardened (user namespace + "
                         "podman's seccomp profile), seccomp (the profile without user "
                         "namespace); default plain,hardened")
    ap.add_argument("--tmpdir", default="/tmp", help="where the work directory goes")
    ap.add_argument("--keep", action="store_true", help="keep the work directory (debugging)")
    ap.add_argument("--state-on-disk", action="store_true",
                    help="the runtimes' --root on the work directory's filesystem, not a tmpfs")
    ap.add_argument("--from-json", metavar="RAW.json",
                    help="run nothing: render the report of an earlier run's --json")
    return ap.parse_args(argv)


def _interrupted(signum, _frame):
    raise KeyboardInterrupt(f"signal {signum}")


def main(argv):
    args = parse_args(argv)
    if args.from_json:
        with open(args.from_json, encoding="utf-8") as f:
            text = report.render(json.load(f))
        print(text)
        if args.output:
            with open(args.output, "w", encoding="utf-8") as f:
                f.write(text + "\n")
        return 0
    if os.geteuid() != 0:
        sys.exit("bench: run as root")
    enter_private_mount_namespace(argv)
    mode = "quick" if args.quick else "full"
    params = dict(PARAMS[mode])
    if args.iterations:
        params["iterations"] = args.iterations
    signal.signal(signal.SIGTERM, _interrupted)
    signal.signal(signal.SIGHUP, _interrupted)
    procs.become_subreaper()

    work = tempfile.mkdtemp(prefix="seerun-bench.", dir=args.tmpdir)
    bench = Bench(args, params, work)
    status = 0
    try:
        t0 = now()
        bench.discover()
        for name, why in bench.missing.items():
            log(f"bench: {name} missing: {why}")
        bench.setup()
        bench.execute()
        res = bench.results
        res["meta"] = bench.meta(mode)
        res["resources"] = bench.resources()
        res["failures"] = list(bench.failures.values())
        res["leftovers"] = bench.leftovers()
        text = report.render(res)
        text += f"\n_Run time: {now() - t0:.0f} s (`contrib/bench/run.sh" \
                f"{' --quick' if args.quick else ''}`)._\n"
        print(text)
        if args.output:
            with open(args.output, "w", encoding="utf-8") as f:
                f.write(text)
            log(f"bench: report written to {args.output}")
        if args.json:
            with open(args.json, "w", encoding="utf-8") as f:
                json.dump(res, f, indent=1, default=str)
    except bundles.SetupError as e:
        log(f"bench: setup failed: {e}")
        status = 1
    except KeyboardInterrupt:
        log("bench: interrupted, cleaning up")
        status = 130
    finally:
        bench.cleanup()
        if args.keep:
            log(f"bench: kept {work}")
        else:
            umount_under(work)
            shutil.rmtree(work, ignore_errors=True)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
