#!/usr/bin/python3
"""A realistic job, bare and in `seerun sandbox` (issue 19): as root,

    contrib/bench/job.py [--seerun build/seerun] [--runs 40]

A Python script that imports json, re, collections, hashlib and pathlib, counts the words of
/etc/passwd and writes 200 small JSON files to /tmp, run with the host's /usr/bin/python3:
bare (env -i, its /tmp a fresh directory on /dev/shm) and as `seerun sandbox -- python3 -c`
under the default policy, interleaved (the order swapped every round, two rounds of warm-up).
Medians of the CPU time of every process involved (the harness is a child subreaper and waits
for every descendant after each run, the sandbox's supervisor among them) and of the wall time;
the difference is the whole sandbox's overhead on this job.  The load average is printed: the
wall figures depend on it.
"""
import argparse
import ctypes
import os
import resource
import shutil
import statistics
import subprocess
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = ("import json, re, collections, hashlib, pathlib, os\n"
          "c = collections.Counter(re.findall(r'\\w+', open('/etc/passwd').read()))\n"
          "for i in range(200):\n"
          "    pathlib.Path(f'/tmp/f{i}.json').write_text(json.dumps({'i': i, 'h': "
          "hashlib.sha256(str(i).encode()).hexdigest()}))\n")


def cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def reap():
    """Every descendant reparented to us, until none is left."""
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return


def main():
    ap = argparse.ArgumentParser(prog="contrib/bench/job.py")
    ap.add_argument("--seerun", default=os.environ.get(
        "SEERUN_BINARY", os.path.join(HERE, "..", "..", "build", "seerun")))
    ap.add_argument("--runs", type=int, default=40)
    args = ap.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("job.py: run as root")
    ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    bare_tmp = tempfile.mkdtemp(dir="/dev/shm", prefix="seerun-job.")
    root = tempfile.mkdtemp(dir="/dev/shm", prefix="seerun-job-root.")
    cmds = {
        "bare": ["env", "-i", "PATH=/usr/bin:/bin", "HOME=/tmp", "/usr/bin/python3", "-c",
                 SCRIPT.replace("/tmp/", bare_tmp + "/")],
        "sandbox": [os.path.abspath(args.seerun), "--root", root, "sandbox", "--", "python3",
                    "-c", SCRIPT],
    }
    res = {k: [] for k in cmds}
    load_before = open("/proc/loadavg").read().split()[:3]
    try:
        for i in range(args.runs + 2):
            for k in (list(cmds) if i % 2 == 0 else list(cmds)[::-1]):
                c0, t0 = cpu(), time.monotonic()
                subprocess.run(cmds[k], check=True, stdout=subprocess.DEVNULL)
                wall = time.monotonic() - t0
                reap()
                if i >= 2:
                    res[k].append((cpu() - c0, wall))
    finally:
        shutil.rmtree(bare_tmp, ignore_errors=True)
        shutil.rmtree(root, ignore_errors=True)
    load_after = open("/proc/loadavg").read().split()[:3]
    med = {k: (statistics.median(x[0] for x in v) * 1000, statistics.median(x[1] for x in v) * 1000)
           for k, v in res.items()}
    print(f"load average before / after: {' '.join(load_before)} / {' '.join(load_after)}")
    print("| python job | CPU (ms) | wall (ms) |")
    print("|---|--:|--:|")
    for k, (c, w) in med.items():
        print(f"| {k} | {c:.1f} | {w:.1f} |")
    print(f"| sandbox overhead | {med['sandbox'][0] - med['bare'][0]:+.1f} | "
          f"{med['sandbox'][1] - med['bare'][1]:+.1f} |")


if __name__ == "__main__":
    main()
