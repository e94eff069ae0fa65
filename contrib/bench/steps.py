"""seerun's cost per step, from `strace -f -T -y` of `seerun run`: each system call is put in
the step its syscall name or the file it acts on belongs to, and the steps' system time (as
strace measures it, so inflated: read the shares, not the absolute values) and call counts are
summed.  No build of seerun is needed.

    python3 contrib/bench/steps.py --seerun build/seerun --bundle DIR [--root DIR] [-n 5]

Steps: policy (the policy file, the bundle's config.json, the facts about host paths judged
by descriptor: O_PATH opens, their fstat, statx, statmount, readlink of /proc/self/fd),
registry (/var/lib/seerun: the user namespace registry and the state-roots record), cgroup
(/sys/fs/cgroup), mounts (the mount API, pivot_root, and what the container's processes do in
its root filesystem), seccomp (the seccomp call and the filter cache), audit (the audit log),
state (the state directory below --root), process (clone, exec, wait, signals), other.
"""

import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile

MOUNT_CALLS = {"open_tree", "move_mount", "fsopen", "fsconfig", "fsmount", "mount_setattr",
               "mount", "umount2", "pivot_root", "fspick", "chroot"}
# Blocking for another process (the child's steps, the container's exit): no CPU of this one.
WAIT_CALLS = {"wait4", "waitid", "poll", "ppoll", "recvfrom", "recvmsg", "read_sync", "flock",
              "epoll_wait", "select", "pselect6"}
PROCESS_CALLS = {"clone", "clone3", "vfork", "fork", "execve", "execveat", "kill", "pidfd_open", "pidfd_send_signal", "rt_sigaction", "rt_sigprocmask",
                 "exit_group", "prctl", "setresuid", "setresgid", "setgroups", "capset",
                 "capget", "unshare", "setns", "sethostname", "setsid", "poll", "ppoll",
                 "signalfd4", "sendto", "sendmsg", "socketpair",
                 "close_range"}
POLICY_CALLS = {"statx", "statmount", "readlink", "readlinkat"}
STEPS = ("policy", "registry", "cgroup", "mounts", "seccomp", "audit", "state", "process",
         "other", "waiting")
LINE = re.compile(r"^(\d+)\s+(?:<\.\.\. )?([a-z0-9_]+)(?: resumed>)?\(?(.*?)<(\d+\.\d+)>$")


def classify(pid, main_pid, call, args, root, audit="audit.jsonl"):
    if call in WAIT_CALLS:
        return "waiting"
    if call == "seccomp" or "/.seccomp-cache" in args:
        return "seccomp"
    if audit in args:
        return "audit"
    if "/var/lib/seerun" in args:
        return "registry"
    if "/sys/fs/cgroup" in args:
        return "cgroup"
    if call in MOUNT_CALLS:
        return "mounts"
    if root and (root + "/") in args or (root and args.startswith(f"{root}>")):
        return "state"
    if call in PROCESS_CALLS:
        return "process"
    if pid != main_pid:
        return "mounts"  # the container's own setup in its root filesystem
    if (call in POLICY_CALLS or "O_PATH" in args or "config.json" in args or
            "/etc/seerun" in args or "AT_EMPTY_PATH" in args or '".."' in args):
        return "policy"
    return "other"


def parse(path, root):
    steps = {s: [0, 0.0] for s in STEPS}
    main_pid = None
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = LINE.match(line.rstrip())
            if not m:
                continue
            pid, call, args, secs = int(m.group(1)), m.group(2), m.group(3), float(m.group(4))
            if main_pid is None:
                main_pid = pid
            s = classify(pid, main_pid, call, args, root)
            steps[s][0] += 1
            steps[s][1] += secs
    return steps


def measure(seerun, bundle, root, n=5, prefix=None):
    """{step: (calls per run, ms per run)}, the median over n runs of `seerun run`."""
    if not shutil.which("strace"):
        raise RuntimeError("strace not found (apt-get install strace)")
    root = os.path.realpath(root)
    prefix = prefix or f"steps{os.getpid()}"
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(n):
            out = os.path.join(tmp, f"trace{i}")
            p = subprocess.run(["strace", "-f", "-T", "-y", "-qq", "-o", out, seerun, "--root",
                                root, "run", "--bundle", bundle, f"{prefix}-{i}"],
                               capture_output=True, text=True)
            if p.returncode != 0:
                raise RuntimeError(f"seerun run under strace: exit {p.returncode}: "
                                   f"{p.stderr.strip()[:300]}")
            runs.append(parse(out, root))
    result = {}
    for s in STEPS:
        calls = sorted(r[s][0] for r in runs)
        ms = sorted(r[s][1] * 1000 for r in runs)
        result[s] = (calls[len(calls) // 2], ms[len(ms) // 2])
    return result


def table(result):
    total_calls = sum(c for c, _ in result.values())
    total_ms = sum(m for s, (_, m) in result.items() if s != "waiting")
    lines = ["| step | system calls | system time under strace | share |",
             "|---|--:|--:|--:|"]
    for s in STEPS:
        c, m = result[s]
        share = "" if s == "waiting" else f"{100 * m / total_ms if total_ms else 0:.0f}%"
        lines.append(f"| {s} | {c} | {m:.2f} ms | {share} |")
    lines.append(f"| total (without waiting) | {total_calls} | {total_ms:.2f} ms | |")
    return "\n".join(lines)


def main(argv):
    ap = argparse.ArgumentParser(prog="contrib/bench/steps.py", description=__doc__.split("\n")[0])
    ap.add_argument("--seerun", required=True)
    ap.add_argument("--bundle", required=True)
    ap.add_argument("--root", help="state root (default: a temporary directory)")
    ap.add_argument("-n", type=int, default=5)
    a = ap.parse_args(argv)
    if a.root:
        print(table(measure(a.seerun, a.bundle, a.root, a.n)))
        return 0
    with tempfile.TemporaryDirectory() as root:
        print(table(measure(a.seerun, a.bundle, root, a.n)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
