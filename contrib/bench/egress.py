#!/usr/bin/python3
"""The egress proxy, measured (issue 15): as root,

    contrib/bench/egress.py [--seerun build/seerun] [--mib 1024] [--requests 200]

- throughput of one large download over loopback, through the proxy (busybox wget inside a
  container with io.seerun.network=proxy) against the same client on the host, direct;
- the time a small request takes, through the proxy and direct (the difference is the added
  latency per connection: accept, parse, judge, connect);
- the supervisor's and the proxy's RSS, idle and after the downloads;
- the start cost: CPU time of `seerun run` of /bin/true with and without the proxy.

Everything stays on this machine: the origin listens on 127.0.0.1, its name is pinned in the
benchmark's own policy, which lists 127.0.0.1 in allowAddresses.
"""
import argparse
import http.server
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))


class Handler(http.server.BaseHTTPRequestHandler):
    size = 0

    def do_GET(self):
        n = self.size if self.path == "/big" else 16
        self.send_response(200)
        self.send_header("Content-Length", str(n))
        self.end_headers()
        chunk = b"\0" * (1 << 20)
        left = n
        while left:
            k = min(left, len(chunk))
            self.wfile.write(chunk[:k])
            left -= k

    def log_message(self, *a):
        pass


def cpu_of_children():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seerun", default=os.environ.get("SEERUN_BINARY",
                                                       os.path.join(TOP, "build", "seerun")))
    ap.add_argument("--mib", type=int, default=1024)
    ap.add_argument("--requests", type=int, default=200)
    ap.add_argument("--starts", type=int, default=30)
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("egress.py: run as root")
    Handler.size = a.mib << 20
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    port = srv.server_address[1]
    tmp = tempfile.mkdtemp(prefix="seerun-egress-bench.")
    root = os.path.join(tmp, "state")
    try:
        with open(os.path.join(TOP, "contrib", "policy", "default.json")) as f:
            policy = json.load(f)
        policy["auditLog"] = os.path.join(tmp, "audit", "audit.jsonl")
        os.makedirs(os.path.dirname(policy["auditLog"]))
        policy["userNamespaces"]["registry"] = os.path.join(tmp, "userns", "ranges")
        # The benchmark's root filesystem is outside its bundle: listed, so it is idmapped.
        policy["profiles"]["default"].setdefault("rootfs", {})["idmapPaths"] = [tmp]
        policy["profiles"]["default"]["network"]["egress"] = {
            "allow": [f"origin.bench:{port}"], "pins": {"origin.bench": "127.0.0.1"},
            "allowAddresses": ["127.0.0.1/32"]}
        ppath = os.path.join(tmp, "policy.json")
        with open(ppath, "w") as f:
            json.dump(policy, f)
        rootfs = os.path.join(tmp, "rootfs")
        subprocess.run([os.path.join(TOP, "contrib", "make-busybox-rootfs.sh"), rootfs],
                       check=True, capture_output=True)
        g = [a.seerun, "--root", root, "--policy", ppath]
        bundle = os.path.join(tmp, "bundle")
        os.makedirs(bundle)
        subprocess.run(g + ["spec", "--bundle", bundle], check=True)
        with open(os.path.join(bundle, "config.json")) as f:
            base = json.load(f)
        base["root"]["path"] = rootfs
        base["process"]["terminal"] = False

        def write(args, proxy):
            c = json.loads(json.dumps(base))
            c["process"]["args"] = args
            if proxy:
                c["annotations"] = {"io.seerun.network": "proxy"}
            with open(os.path.join(bundle, "config.json"), "w") as f:
                json.dump(c, f)

        busybox = shutil.which("busybox") or "/bin/busybox"
        url = f"http://origin.bench:{port}"

        def timed(cmd, **kw):
            t = time.monotonic()
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, **kw)
            return time.monotonic() - t

        # Throughput: the whole download, inside (through the proxy) and on the host (direct).
        # The container's own start and teardown are timed alone and taken off.
        write(["true"], True)
        start_s = statistics.median(timed(g + ["run", "--bundle", bundle, f"t{i}"])
                                    for i in range(3))
        write(["sh", "-c", f"wget -q -O /dev/null {url}/big"], True)
        via = [timed(g + ["run", "--bundle", bundle, f"b{i}"]) - start_s for i in range(3)]
        direct = [timed([busybox, "wget", "-q", "-O", "/dev/null",
                         f"http://127.0.0.1:{port}/big"]) for _ in range(3)]
        # Small requests: N in one container, through the proxy; the same N on the host.
        n = a.requests
        write(["sh", "-c", f"i=0; while [ $i -lt {n} ]; do wget -q -O /dev/null {url}/s; "
                           "i=$((i+1)); done"], True)
        small_via = timed(g + ["run", "--bundle", bundle, "small"])
        write(["sh", "-c", f"i=0; while [ $i -lt {n} ]; do i=$((i+1)); done"], True)
        small_base = timed(g + ["run", "--bundle", bundle, "small0"])
        small_direct = timed(["sh", "-c", f"i=0; while [ $i -lt {n} ]; do {busybox} wget -q -O "
                                          f"/dev/null http://127.0.0.1:{port}/s; i=$((i+1)); done"])
        # RSS: a container that stays, idle, then after one download.
        write(["sleep", "600"], True)
        subprocess.run(g + ["run", "--detach", "--bundle", bundle, "rss"], check=True)
        with open(os.path.join(root, "rss", "state.json")) as f:
            sup = json.load(f)["supervisor"]["pid"]
        proxy = open(f"/proc/{sup}/task/{sup}/children").read().split()[0]
        idle = (rss_kib(sup), rss_kib(proxy))
        subprocess.run(g + ["exec", "rss", "wget", "-q", "-O", "/dev/null", f"{url}/big"],
                       check=True)
        busy = (rss_kib(sup), rss_kib(proxy))
        subprocess.run(g + ["delete", "--force", "rss"], check=True)
        # Start cost: run /bin/true, alternating with and without the proxy.
        cpu = {True: [], False: []}
        for i in range(a.starts):
            for p in (False, True):
                write(["true"], p)
                c0 = cpu_of_children()
                subprocess.run(g + ["run", "--bundle", bundle, f"s{i}{int(p)}"], check=True)
                cpu[p].append((cpu_of_children() - c0) * 1000)
        mib = a.mib
        print(f"# egress proxy ({time.strftime('%Y-%m-%d')}, load {os.getloadavg()[0]:.1f})\n")
        print("| figure | through the proxy | direct | ratio |\n|---|--:|--:|--:|")
        tv, td = statistics.median(via), statistics.median(direct)
        print(f"| {mib} MiB over loopback, MiB/s (median of 3) | {mib / tv:.0f} | {mib / td:.0f} "
              f"| {td / tv:.2f} |")
        per_via = (small_via - small_base) / n * 1000
        per_direct = small_direct / n * 1000
        print(f"| one small request, ms ({n}, wget each) | {per_via:.2f} | {per_direct:.2f} | "
              f"+{per_via - per_direct:.2f} ms |")
        print(f"| supervisor / proxy RSS idle, KiB | {idle[0]} / {idle[1]} | | |")
        print(f"| supervisor / proxy RSS after {mib} MiB, KiB | {busy[0]} / {busy[1]} | | |")
        cp, cn = statistics.median(cpu[True]), statistics.median(cpu[False])
        print(f"| `run` /bin/true, CPU ms (median of {a.starts}) | {cp:.1f} | {cn:.1f} "
              f"(no proxy) | +{cp - cn:.1f} ms |")
    finally:
        subprocess.run([a.seerun, "--root", root, "list", "-q"], capture_output=True)
        if os.path.isdir(root):
            for cid in os.listdir(root):
                if not cid.startswith("."):
                    subprocess.run([a.seerun, "--root", root, "--policy",
                                    os.path.join(tmp, "policy.json"), "delete", "--force", cid],
                                   capture_output=True)
        srv.shutdown()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
