#!/usr/bin/python3
"""The activity record, measured (issue 16): as root,

    contrib/bench/activity.py [--seerun build/seerun] [--runs 20] [--denials 100000]
                              [--baseline OTHER-SEERUN]

The same policy twice (the shipped default profile, and a copy with "activity": {"record":
false}), interleaved run by run:

- the start cost: wall and CPU time of `seerun run` of /bin/true (the record costs a supervisor
  process per container, its sockets, and the hand-over of the seccomp listener);
- a job that is denied nothing (a shell that writes, reads and lists 500 files);
- a job that is denied DENIALS times (keyctl in a loop): each denial is a round trip to the
  supervisor with the record on, an errno from the filter with it off;
- realistic jobs through `seerun sandbox` (the host's /usr): a Python script that imports a few
  standard modules and writes 200 files to /tmp and 20 to /out, and compiling and running a
  small C program (cc's temporary files in /tmp).  With the record on, the supervisor takes a
  baseline of every writable place at create and walks them when the job ends (the files
  changed), besides the rest of the record.

Medians; CPU time is that of every process involved (children's rusage: the harness is a
subreaper, and after each run, outside its wall time, it waits for what was reparented to it,
the containers' supervisors among them, which may still be ending when seerun returns).  The
load average is printed with the table: the wall figures depend on it, the CPU figures much
less.
"""
import argparse
import ctypes
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
PROBE = os.path.join(TOP, "tests", "integration", "helpers", "activity_probe.c")


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def reap_orphans():
    """Waits for every process reparented to this subreaper (a container's supervisor ends by
    itself once its record is written): their CPU time is the run's too."""
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return


def timed(argv):
    cpu0, t0 = children_cpu(), time.monotonic()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
    wall = time.monotonic() - t0
    reap_orphans()
    return wall, children_cpu() - cpu0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seerun", default=os.environ.get("SEERUN_BINARY",
                                                        os.path.join(TOP, "build", "seerun")))
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--denials", type=int, default=100000)
    ap.add_argument("--baseline", help="another seerun binary, measured interleaved with the "
                    "first (before and after a change)")
    a = ap.parse_args()
    ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    work = tempfile.mkdtemp(prefix="sr-bench-activity-")
    probe_dir = tempfile.mkdtemp(prefix="sr-bench-activity-probe-")
    try:
        os.chmod(probe_dir, 0o755)
        os.chmod(work, 0o755)  # the containers' users (their own ranges) walk into rootfs
        subprocess.run(["cc", "-static", "-O2", "-o", os.path.join(probe_dir, "probe"), PROBE],
                       check=True)
        rootfs = os.path.join(work, "rootfs")
        subprocess.run([os.path.join(TOP, "contrib", "make-busybox-rootfs.sh"), rootfs],
                       check=True, capture_output=True)
        for d in ("var/tmp", "run", "probe"):  # mount points the container cannot make
            os.makedirs(os.path.join(rootfs, d), exist_ok=True)
        with open(os.path.join(TOP, "contrib", "policy", "default.json")) as f:
            policy = json.load(f)
        policy["auditLog"] = os.path.join(work, "audit", "audit.jsonl")
        policy["userNamespaces"]["registry"] = os.path.join(work, "userns")
        policy["profiles"]["off"] = {"base": "default", "description": "record off",
                                     "activity": {"record": False}}
        ppath = os.path.join(work, "policy.json")
        with open(ppath, "w") as f:
            json.dump(policy, f)
        bundle = os.path.join(work, "bundle")
        os.mkdir(bundle)
        subprocess.run([a.seerun, "spec", "--bundle", bundle], check=True)
        with open(os.path.join(bundle, "config.json")) as f:
            cfg = json.load(f)
        cfg["root"]["path"] = rootfs
        cfg["process"]["terminal"] = False
        cfg["mounts"].append({"destination": "/probe", "type": "none", "source": probe_dir,
                              "options": ["bind", "ro"]})
        csrc = os.path.join(probe_dir, "hello.c")
        with open(csrc, "w") as f:
            f.write("#include <stdio.h>\n#include <string.h>\nint main(void){char b[64];"
                    "for(int i=0;i<1000;i++)snprintf(b,sizeof b,\"%d\",i);"
                    "printf(\"%s %zu\\n\",b,strlen(b));return 0;}\n")
        py = ("import json, re, collections, hashlib, pathlib, os\n"
              "c = collections.Counter(re.findall(r'\\w+', open('/etc/passwd').read()))\n"
              "for i in range(200):\n"
              "    pathlib.Path(f'/tmp/f{i}.json').write_text(json.dumps({'i': i, 'h': "
              "hashlib.sha256(str(i).encode()).hexdigest()}))\n"
              "for i in range(20):\n"
              "    pathlib.Path(f'/out/r{i}.txt').write_text(str(sorted(c.items())))\n")
        sandbox_jobs = {
            "sandbox: python, 220 files written": ["python3", "-c", py],
            "sandbox: cc hello.c && ./hello": ["sh", "-c", "cc -O2 -o /tmp/hello /src/hello.c && "
                                               "/tmp/hello > /out/hello.txt"],
        }
        jobs = {
            "run /bin/true": ["true"],
            "500 files, nothing denied": ["sh", "-c", "for i in $(seq 500); do echo $i > /tmp/f$i;"
                                          " done; cat /tmp/f* > /dev/null; ls /tmp > /dev/null"],
            f"{a.denials} denials": ["/probe/probe", f"keyctl:{a.denials}"],
        }
        root = os.path.join(work, "state")
        results = {}
        load0 = " ".join(open("/proc/loadavg").read().split()[:3])
        n = 0
        # Each binary (--baseline: another build, e.g. the one before a change) with the
        # record on and off, interleaved run by run, the order turned every other run.
        binaries = [("", a.seerun)] + ([("baseline ", a.baseline)] if a.baseline else [])
        order = [(label, exe, profile) for label, exe in binaries
                 for profile in ("default", "off")]
        for job, args in list(jobs.items()) + list(sandbox_jobs.items()):
            if job not in sandbox_jobs:
                cfg["process"]["args"] = args
                with open(os.path.join(bundle, "config.json"), "w") as f:
                    json.dump(cfg, f)
            runs = a.runs if "denials" not in job else max(3, a.runs // 5)
            for i in range(runs):
                for label, exe, profile in (order if i % 2 == 0 else order[::-1]):
                    n += 1
                    if job in sandbox_jobs:
                        argv = [exe, "--root", root, "--policy", ppath, "--profile", profile,
                                "sandbox", "--name", f"bench-{n}", "--ro", f"{probe_dir}:/src",
                                "--", *args]
                    else:
                        argv = [exe, "--root", root, "--policy", ppath, "--profile", profile,
                                "run", "--bundle", bundle, f"bench-{n}"]
                    results.setdefault((job, label, profile), []).append(timed(argv))
        print("load average before / after: %s / %s" % (load0, " ".join(
            open("/proc/loadavg").read().split()[:3])))
        # The fastest run of each too: on a shared machine the least disturbed one.
        print("| job | record on: wall / CPU (ms) | record off: wall / CPU (ms) | wall cost | "
              "fastest on / off (ms) |")
        print("|---|---|---|---|---|")
        for label, _ in binaries:
            for job in list(jobs) + list(sandbox_jobs):
                on = results[(job, label, "default")]
                off = results[(job, label, "off")]
                med = lambda v, k: statistics.median(x[k] for x in v) * 1000
                low = lambda v: min(x[0] for x in v) * 1000
                print(f"| {label}{job} | {med(on, 0):.1f} / {med(on, 1):.1f} | "
                      f"{med(off, 0):.1f} / {med(off, 1):.1f} | "
                      f"{(med(on, 0) / med(off, 0) - 1) * 100:+.1f}% | "
                      f"{low(on):.1f} / {low(off):.1f} |")
    finally:
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(probe_dir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
