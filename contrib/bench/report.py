"""Statistics and the Markdown report of a benchmark run (see bench.py for the data)."""

import math

# Operations in report order: key -> (label, kind).  kind "per-iteration": median and p90 of
# the samples; "total": one sample per runtime (a batch), shown as is.
OPS = [
    ("lifecycle", "lifecycle of /bin/true (create, start, wait, delete)", "per-iteration"),
    ("run", "`run` /bin/true", "per-iteration"),
    ("exec", "`exec` /bin/true into a running container", "per-iteration"),
    ("concurrent", "{concurrent} containers created + started concurrently", "per-iteration"),
    ("create_many", "create {many} containers, {many_parallel} at a time", "total"),
    ("state", "`state` with {many} containers present", "per-iteration"),
    ("list", "`list` with {many} containers present", "per-iteration"),
    ("delete_many", "delete the {many}, one after another", "total"),
]


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    if n == 0:
        return None
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def p90(xs):
    """Nearest-rank 90th percentile."""
    xs = sorted(xs)
    if not xs:
        return None
    return xs[max(0, math.ceil(0.9 * len(xs)) - 1)]


def fmt_time(s):
    if s is None:
        return "—"
    if s >= 1:
        return f"{s:.2f} s"
    if s >= 0.01:
        return f"{s * 1e3:.1f} ms"
    return f"{s * 1e3:.2f} ms"


def fmt_size(n):
    if n is None:
        return "—"
    if n >= 1 << 20:
        return f"{n / (1 << 20):.2f} MiB"
    return f"{n / 1024:.0f} KiB"


def fmt_kib(kb):
    return "—" if kb is None else f"{kb / 1024:.1f} MiB"


def fmt_ratio(a, b):
    if a is None or b is None or b == 0:
        return "—"
    return f"{a / b:.2f}×"


def series_stats(series, key):
    xs = [s[key] for s in series.get("samples", []) if s.get(key) is not None]
    return median(xs), p90(xs), len(xs)


def _cell(series, key, kind, with_p90=True):
    if series is None:
        return "—"
    if series.get("status"):
        return series["status"]
    med, hi, n = series_stats(series, key)
    if n == 0:
        return "failed" if series.get("failures") else "—"
    text = fmt_time(med)
    if kind == "per-iteration" and with_p90 and n > 1:
        text += f" (p90 {fmt_time(hi)})"
    nf = len(series.get("failures", []))
    if nf:
        text += f", {nf} failed"
    return text


def _median_of(series, key):
    """The median that a ratio may use: none for a series with more failures than samples."""
    if not series or series.get("status"):
        return None
    if len(series.get("failures", [])) >= max(1, len(series.get("samples", []))):
        return None
    return series_stats(series, key)[0]


def _table(lines, header, rows, align=None):
    lines.append("| " + " | ".join(header) + " |")
    lines.append("|" + "|".join(align or ["---"] * len(header)) + "|")
    for r in rows:
        lines.append("| " + " | ".join(r) + " |")
    lines.append("")


def render(res):
    meta = res["meta"]
    names = meta["runtimes"]            # present runtimes, seerun first
    peers = [n for n in names if n != "seerun"]
    fmt = {"concurrent": meta["params"]["concurrent"], "many": meta["params"]["many"],
           "many_parallel": meta["params"].get("many_parallel", 1)}
    lines = []
    add = lines.append

    add(f"## seerun benchmark ({meta['mode']})")
    add("")
    add(f"{meta['date']} · kernel {meta['kernel']} · {meta['cpu']} · {meta['cores']} cores · "
        f"{meta['cgroups']} · load average {meta.get('load_start', '?')} at the start, "
        f"{meta.get('load_end', '?')} at the end")
    add("")
    if meta.get("state_fs"):
        add(f"State roots (every runtime's --root): {meta['state_fs']}.")
        add("")
    try:
        busy = max(float(meta["load_start"].split()[0]),
                   float(meta["load_end"].split()[0])) > meta["cores"]
    except (KeyError, ValueError, IndexError, AttributeError, TypeError):
        busy = False
    if busy:
        add("**The machine was busy (load average above its core count): absolute times are "
            "inflated and noisy; the interleaved ratios and the CPU times hold up better.**")
        add("")
    for n in names:
        add(f"- **{n}**: {meta['versions'].get(n, '?')} (`{meta['paths'].get(n, '?')}`)")
    for n, why in meta.get("missing", {}).items():
        add(f"- **{n}**: missing ({why})")
    add(f"- floor: `contrib/bench/floor.c`: clone into new mount, pid, ipc, uts, net namespaces "
        f"(hardened: + user namespace), bind the rootfs, mount /proc, pivot_root, exec "
        f"/bin/true; no cgroup, /dev, seccomp or state")
    add(f"- bundles: config.json from `{meta.get('config_from', '?')} spec`, terminal false, "
        f"args /bin/true, read-only busybox-static rootfs (`contrib/make-busybox-rootfs.sh`)")
    p = meta["params"]
    add(f"- iterations: {p['iterations']} per operation per runtime, interleaved (one of each "
        f"runtime in turn, the order rotated every round), inside one private mount namespace "
        f"with /sys/fs/cgroup/unified unmounted (cgroup v1 for all); {p['concurrent_rounds']} "
        f"round(s) of {p['concurrent']} concurrent containers")
    add("- wall: median (p90); CPU: user+system time of every process involved (runtime, its "
        "children, the container's processes, reaped by the harness as child subreaper), "
        "median; ratios are seerun's median over the peer's (below 1: seerun is faster)")
    sc = meta.get("seccomp")
    if sc and sc.get("rules_kept") is not None:
        add(f"- hardened: user namespace 0→100000 (65536) + `{sc['profile']}` converted as "
            f"podman does for its default capabilities on x86_64: {sc['rules_kept']} of "
            f"{sc['rules_in']} rules, {sc['names_kept']} syscall names; "
            f"{len(sc['unknown_names'])} names unknown to libseccomp dropped"
            + (f" ({', '.join(sc['unknown_names'])})" if sc["unknown_names"] else "")
            + f" (checked with {sc['resolver']})")
        if "seccomp" in res["variants"]:
            add("- seccomp: plain + the same converted profile, no user namespace")
    elif sc:
        add(f"- variants with seccomp (hardened, seccomp) skipped: {sc.get('skipped')}")
    add("")

    for variant, vres in res["variants"].items():
        add(f"### {variant}")
        add("")
        header = ["operation", ""] + names + ["floor"] + [f"seerun ÷ {n}" for n in peers]
        rows = []
        for key, label, kind in OPS:
            if key not in vres["ops"]:
                continue
            ops = vres["ops"][key]
            label = label.format(**fmt)
            metrics = [("wall", "wall")]
            if key == "delete_many":
                # The inits' CPU (their set-up during create) is only known once they are
                # reaped, after delete: so create's CPU is counted here.
                metrics.append(("cpu", "CPU (create + delete)"))
            elif key != "create_many":
                metrics.append(("cpu", "CPU"))
            for i, (k, mlabel) in enumerate(metrics):
                row = [label if i == 0 else "", mlabel]
                for n in names:
                    row.append(_cell(ops.get(n), k, kind, with_p90=(k == "wall")))
                row.append(_cell(ops.get("floor"), k, kind, with_p90=(k == "wall"))
                           if "floor" in ops else "")
                s = _median_of(ops.get("seerun"), k)
                for n in peers:
                    row.append(fmt_ratio(s, _median_of(ops.get(n), k)))
                rows.append(row)
            if key == "concurrent":
                row = ["", "failed containers"]
                for n in names:
                    c = (ops.get(n) or {}).get("containers")
                    row.append(f"{c['failed']} of {c['total']}" if c else "—")
                rows.append(row + [""] * (len(header) - len(row)))
        _table(lines, header, rows,
               ["---", "---"] + ["--:"] * (len(header) - 2))

        sb = vres["ops"].get("run", {}).get("sandbox")
        if sb and sb.get("samples"):
            run = vres["ops"]["run"].get("seerun")
            add(f"`seerun sandbox -- /bin/true` (its built-in root filesystem from the host's "
                f"/usr, generated config, default policy; the same in every variant): wall "
                f"{_cell(sb, 'wall', 'per-iteration', with_p90=True)}, CPU "
                f"{_cell(sb, 'cpu', 'per-iteration', with_p90=False)}; seerun `run` here: wall "
                f"{_cell(run, 'wall', 'per-iteration', with_p90=True)}, CPU "
                f"{_cell(run, 'cpu', 'per-iteration', with_p90=False)}.")
            bwraps = [("bwrap", "bubblewrap beside it (`bwrap --unshare-all`, /usr read-only, "
                      "/proc, /dev, /tmp tmpfs, uid 1000, no seccomp filter)", "bwrap"),
                     ("bwrap+filter", "The same bwrap with seerun's built-in seccomp filter "
                      "(`--seccomp`, the program the sandbox loads, like for like on that step)",
                      "this")]
            for name, what, short in bwraps:
                bw = vres["ops"]["run"].get(name)
                if bw and bw.get("samples"):
                    ratio = ""
                    a, b = _median_of(sb, "cpu"), _median_of(bw, "cpu")
                    if a and b:
                        ratio = f"; sandbox ÷ {short} CPU {a / b:.2f}"
                    add("")
                    add(f"{what}: wall {_cell(bw, 'wall', 'per-iteration', with_p90=True)}, CPU "
                        f"{_cell(bw, 'cpu', 'per-iteration', with_p90=False)}{ratio}.")
                elif bw and bw.get("failures"):
                    add("")
                    add(f"{name} failed: {bw['failures'][0][:300]}")
            add("")
        elif sb and sb.get("failures"):
            add(f"`seerun sandbox -- /bin/true` failed: {sb['failures'][0][:300]}")
            add("")

        lc = vres["ops"].get("lifecycle")
        if lc:
            add(f"Lifecycle steps ({variant}, median):")
            add("")
            rows = []
            for n in names:
                ser = lc.get(n)
                if not ser or ser.get("status"):
                    continue
                rows.append([n] + [fmt_time(series_stats(ser, k)[0])
                                   for k in ("create", "start", "wait", "delete")])
            _table(lines, ["runtime", "create", "start", "wait for exit", "delete"], rows,
                   ["---", "--:", "--:", "--:", "--:"])

    add("### size and memory")
    add("")
    rows = []
    variants = list(res["variants"])
    for n in names:
        r = res["resources"].get(n, {})
        row = [n, fmt_size(r.get("file_size")), fmt_size(r.get("loaded_size")),
               r.get("libs", "—")]
        for v in variants:
            row.append(fmt_kib(r.get("create_rss", {}).get(v)))
        for v in variants:
            row.append(fmt_kib(r.get("init_rss", {}).get(v)))
        rows.append(row)
    _table(lines, ["runtime", "binary file", "text+data+bss", "shared libraries"] +
           [f"`create` peak RSS ({v})" for v in variants] +
           [f"container init peak RSS ({v})" for v in variants], rows,
           ["---"] + ["--:"] * 2 + ["---"] + ["--:"] * 2 * len(variants))
    add("`create` peak RSS: ru_maxrss of the `create` command (and any child it waited for), "
        "run from a small static program (`rss.c`, like `/usr/bin/time -f %M`; /bin/true alone "
        "shows about 1 MiB this way), not the container's init; median of "
        f"{meta['params']['rss_iterations']}. Container init peak RSS: the init process from "
        "clone to its exit (the runtime's code in the container, e.g. `runc init`, then "
        "/bin/true), reaped by the harness; median over the lifecycle iterations.")
    add("")

    micro = res.get("micro")
    if micro:
        add(f"### seccomp cost inside the container ({micro['calls']:,} calls each, median "
            f"of {micro['iterations']})")
        add("")
        rows = []
        base = {}
        for case in micro["cases"]:
            ser = micro["series"].get(case["label"], {})
            if case["profile"] == "none":
                base[case["runtime"]] = ser
        for case in micro["cases"]:
            ser = micro["series"].get(case["label"], {})
            if ser.get("status"):
                rows.append([case["label"], ser["status"], "", "", ""])
                continue
            g = series_stats(ser, "getppid_cpu_ns")[0]
            r = series_stats(ser, "read_cpu_ns")[0]
            b = base.get(case["runtime"], {})
            bg = None if b.get("status") else series_stats(b, "getppid_cpu_ns")[0]
            br = None if b.get("status") else series_stats(b, "read_cpu_ns")[0]
            rows.append([case["label"],
                         "—" if g is None else f"{g:.0f}",
                         "—" if r is None else f"{r:.0f}",
                         fmt_ratio(g, bg) if case["profile"] != "none" else "",
                         fmt_ratio(r, br) if case["profile"] != "none" else ""])
        _table(lines, ["case", "getppid() ns/call", "read(/dev/zero, 1) ns/call",
                       "getppid vs no filter", "read vs no filter"], rows,
               ["---", "--:", "--:", "--:", "--:"])
        if micro.get("note"):
            add(micro["note"])
            add("")

    st = res.get("steps")
    if st:
        add(f"### seerun's cost per step (`run` of /bin/true, {st['variant']} bundle, "
            "`strace -f -T` aggregated by contrib/bench/steps.py; median of the runs)")
        add("")
        add("System calls per step, and their time as strace measures it (inflated by "
            "strace: read the shares). \"waiting\" is time blocked on another process.")
        add("")
        import steps as _steps
        add(_steps.table({k: tuple(v) for k, v in st["steps"].items()}))
        add("")

    if res.get("leftovers"):
        add("### left behind")
        add("")
        for line in res["leftovers"]:
            add(f"- {line}")
        add("")

    if res["failures"]:
        add("### failures")
        add("")
        for f in res["failures"]:
            msg = f["message"].replace("\n", " ⏎ ")
            if len(msg) > 700:
                msg = msg[:700] + " …"
            times = f" (×{f['count']})" if f.get("count", 1) > 1 else ""
            add(f"- {f['variant']} / {f['op']} / **{f['runtime']}**{times}: {msg}")
        add("")
    if res.get("notes"):
        add("### notes")
        add("")
        for n in res["notes"]:
            add(f"- {n}")
        add("")
    return "\n".join(lines)
