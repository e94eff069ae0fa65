#!/usr/bin/python3
"""Checkpoint and restore times of a small container: seerun beside runc, on the same CRIU
(issue 18 e).  As root:

    contrib/bench/checkpoint.sh [--iterations N] [-o report.md] [--seerun PATH] [--runc PATH]
                                [--criu PATH]

The container is a busybox shell counting into /dev/shm (a few hundred KiB of memory).  seerun
runs it under its default policy (user namespace, read-only root, seccomp, audit log: what it
restores is checked before it resumes); runc runs the bundle as `runc spec` writes it (no user
namespace: runc 1.1.5 cannot restore one from its own 0600 image directory).  Runs alternate
between the runtimes; the figures are medians of the wall time and of the CPU time of the
command and everything it waited for (criu included).
"""
import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
COUNTER = "i=0; while true; do i=$((i+1)); echo $i > /dev/shm/count; sleep 0.02; done"


def timed(argv, cwd=None):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    r = subprocess.run(argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        raise SystemExit(f"failed: {' '.join(argv)}: {r.stderr.strip()}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def count_of(pid):
    try:
        with open(f"/proc/{pid}/root/dev/shm/count") as f:
            return int(f.read().strip() or 0)
    except (OSError, ValueError):
        return 0


def wait_counting(pid, above=2, timeout=20):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if count_of(pid) > above:
            return count_of(pid)
        time.sleep(0.01)
    raise SystemExit(f"the container (pid {pid}) does not count")


class Runtime:
    def __init__(self, name, argv, bundle):
        self.name, self.argv, self.bundle = name, argv, bundle

    def pid(self, cid):
        r = subprocess.run(self.argv + ["state", cid], capture_output=True, text=True,
                           check=True)
        return json.loads(r.stdout)["pid"]

    def once(self, cid, img):
        subprocess.run(self.argv + ["run", "-d", "--bundle", self.bundle, cid],
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=True)
        try:
            wait_counting(self.pid(cid))
            ck = timed(self.argv + ["checkpoint", "--image-path", img, cid])
            rs = timed(self.argv + ["restore", "-d", "--image-path", img, "--bundle",
                                    self.bundle, cid], cwd=self.bundle)
            pid = self.pid(cid)
            last = count_of(pid)
            wait_counting(pid, above=last + 1)
            return ck, rs
        finally:
            subprocess.run(self.argv + ["delete", "--force", cid], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
            shutil.rmtree(img, ignore_errors=True)


def main(argv):
    ap = argparse.ArgumentParser(prog="contrib/bench/checkpoint.sh")
    ap.add_argument("--iterations", type=int, default=7)
    ap.add_argument("-o", "--output", help="write the Markdown report to this file")
    ap.add_argument("--seerun", default=os.environ.get("SEERUN_BINARY",
                                                       os.path.join(TOP, "build", "seerun")))
    ap.add_argument("--runc", default=shutil.which("runc"))
    ap.add_argument("--criu", default="/usr/local/sbin/criu")
    a = ap.parse_args(argv)
    if os.geteuid() != 0:
        raise SystemExit("run as root")
    work = tempfile.mkdtemp(prefix="seerun-bench-cr.")
    try:
        rootfs = os.path.join(work, "rootfs")
        subprocess.run([os.path.join(TOP, "contrib", "make-busybox-rootfs.sh"), rootfs],
                       check=True, capture_output=True)
        bundle = os.path.join(work, "bundle")
        os.mkdir(bundle)
        subprocess.run([a.seerun, "spec", "--bundle", bundle], check=True)
        with open(os.path.join(bundle, "config.json")) as f:
            config = json.load(f)
        config["root"]["path"] = rootfs
        config["process"]["terminal"] = False
        config["process"]["args"] = ["sh", "-c", COUNTER]
        with open(os.path.join(bundle, "config.json"), "w") as f:
            json.dump(config, f)
        with open(os.path.join(TOP, "contrib", "policy", "default.json")) as f:
            policy = json.load(f)
        policy["auditLog"] = os.path.join(work, "audit.jsonl")
        policy["userNamespaces"]["registry"] = os.path.join(work, "userns", "ranges")
        with open(os.path.join(work, "policy.json"), "w") as f:
            json.dump(policy, f)
        runtimes = [Runtime("seerun", [a.seerun, "--root", os.path.join(work, "seerun"),
                                       "--policy", os.path.join(work, "policy.json"),
                                       "--criu", a.criu], bundle)]
        if a.runc:
            runtimes.append(Runtime("runc", [a.runc, "--root", os.path.join(work, "runc"),
                                             "--criu", a.criu], bundle))
        results = {r.name: {"checkpoint": [], "restore": []} for r in runtimes}
        for i in range(a.iterations):
            for rt in runtimes[i % len(runtimes):] + runtimes[:i % len(runtimes)]:
                ck, rs = rt.once(f"bench-cr-{rt.name}", os.path.join(work, f"img-{rt.name}"))
                results[rt.name]["checkpoint"].append(ck)
                results[rt.name]["restore"].append(rs)
        version = subprocess.run([a.criu, "--version"], capture_output=True,
                                 text=True).stdout.split("\n")[0]
        lines = [f"Checkpoint and restore of a small container ({a.iterations} runs each, "
                 f"medians; {version}; load average {os.getloadavg()[0]:.1f})", "",
                 "| operation | " + " | ".join(r.name for r in runtimes) + " |",
                 "|---|" + "--:|" * len(runtimes)]
        for op in ("checkpoint", "restore"):
            for k, what in ((0, "wall"), (1, "CPU")):
                cells = [f"{statistics.median(x[k] for x in results[r.name][op]) * 1000:.0f} ms"
                         for r in runtimes]
                lines.append(f"| {op}, {what} | " + " | ".join(cells) + " |")
        report = "\n".join(lines) + "\n"
        print(report)
        if a.output:
            with open(a.output, "w") as f:
                f.write(report)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main(sys.argv[1:])
