"""The benchmark's root filesystem, C programs and OCI bundles.

One root filesystem (busybox-static, contrib/make-busybox-rootfs.sh, plus the static
bench-syscalls program) is shared by every bundle; each bundle is a directory with a
config.json whose root.path is that root filesystem's absolute path.  Every runtime runs the
same bundles.

Variants:
- "plain": the config as `runc spec` writes it, non-interactive (terminal false), no seccomp,
  no user namespace.
- "hardened": the same plus a user namespace (container 0 -> host 100000, size 65536) and
  podman's default seccomp profile (seccomp_convert.py).
- "seccomp" (only on request, --variants): plain plus podman's profile, no user namespace.
"""

import json
import os
import shutil
import stat
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
MAKE_ROOTFS = os.path.join(TOP, "contrib", "make-busybox-rootfs.sh")

USERNS_MAP = [{"containerID": 0, "hostID": 100000, "size": 65536}]
SLEEP_ARGS = ["/bin/sleep", "1000000"]
SYSCALLS_BIN = "/bin/bench-syscalls"
VARIANTS = ("plain", "hardened", "seccomp")


class SetupError(Exception):
    pass


def _run(argv, **kw):
    p = subprocess.run(argv, capture_output=True, text=True, **kw)
    if p.returncode != 0:
        raise SetupError(f"{' '.join(argv)}: exit {p.returncode}: {p.stderr.strip()}")
    return p.stdout


def build_c(workdir, cc="cc"):
    """Builds floor (dynamic, like the runtimes), bench-syscalls and rss-of (static).
    Returns {name: path}."""
    if not shutil.which(cc):
        raise SetupError(f"{cc} not found (apt-get install gcc)")
    out = {}
    for name, src, static in (("floor", "floor.c", False), ("syscalls", "syscalls.c", True),
                              ("rss", "rss.c", True)):
        out[name] = os.path.join(workdir, "bin", name)
        os.makedirs(os.path.dirname(out[name]), exist_ok=True)
        _run([cc, "-O2", "-Wall"] + (["-static"] if static else []) +
             ["-o", out[name], os.path.join(HERE, src)])
    return out


def make_rootfs(workdir, syscalls_bin):
    """The busybox-static root filesystem, usable by the user namespace's root (host uid
    100000): every file is readable by others and every directory or executable is
    executable by others, up from the filesystem root."""
    busybox = shutil.which("busybox") or "/bin/busybox"
    if not os.path.exists(busybox):
        raise SetupError("busybox not found (apt-get install busybox-static)")
    if "statically linked" not in subprocess.run(["file", "-L", busybox], capture_output=True,
                                                 text=True).stdout and \
            subprocess.run(["ldd", busybox], capture_output=True, text=True).returncode == 0:
        raise SetupError(f"{busybox} is dynamically linked (apt-get install busybox-static)")
    rootfs = os.path.join(workdir, "rootfs")
    _run(["sh", MAKE_ROOTFS, rootfs])
    shutil.copy(syscalls_bin, os.path.join(rootfs, SYSCALLS_BIN.lstrip("/")))
    for dirpath, dirnames, filenames in os.walk(rootfs):
        for name in dirnames + filenames + ["."]:
            p = os.path.normpath(os.path.join(dirpath, name))
            st = os.lstat(p)
            if stat.S_ISLNK(st.st_mode):
                continue
            mode = st.st_mode | stat.S_IROTH
            if stat.S_ISDIR(st.st_mode) or st.st_mode & stat.S_IXUSR:
                mode |= stat.S_IXOTH
            os.chmod(p, stat.S_IMODE(mode))
    # The path to it must be traversable too: the work directory is ours (mkdtemp makes it
    # 0700), the ones above it are not ours to change.
    os.chmod(workdir, 0o755)
    d = os.path.dirname(workdir)
    while d not in ("/", ""):
        if not os.stat(d).st_mode & stat.S_IXOTH:
            raise SetupError(f"{d} is not searchable by others: the user namespace's root "
                             "could not reach the rootfs (use --tmpdir)")
        d = os.path.dirname(d)
    return rootfs


def base_config(workdir, runtimes):
    """config.json as `runc spec` writes it (or, without runc, as seerun's or crun's spec
    does).  Returns (config, which runtime wrote it)."""
    order = ["runc", "seerun", "crun"]
    for name in order:
        rt = runtimes.get(name)
        if not rt:
            continue
        d = os.path.join(workdir, "spec-" + name)
        os.makedirs(d)
        try:
            _run([rt.path, "spec"], cwd=d)
            with open(os.path.join(d, "config.json"), encoding="utf-8") as f:
                return json.load(f), name
        except (SetupError, OSError, ValueError):
            continue
        finally:
            shutil.rmtree(d, ignore_errors=True)
    raise SetupError("no runtime could write a default config.json (`spec`)")


def plain_config(base, rootfs, args):
    c = json.loads(json.dumps(base))
    c["process"]["terminal"] = False
    c["process"]["args"] = list(args)
    c["root"]["path"] = rootfs
    return c


def add_userns(c):
    ns = c["linux"].setdefault("namespaces", [])
    if not any(n.get("type") == "user" for n in ns):
        ns.append({"type": "user"})
    c["linux"]["uidMappings"] = json.loads(json.dumps(USERNS_MAP))
    c["linux"]["gidMappings"] = json.loads(json.dumps(USERNS_MAP))
    return c


def add_seccomp(c, seccomp):
    c["linux"]["seccomp"] = json.loads(json.dumps(seccomp))
    return c


def write_bundle(workdir, name, config):
    d = os.path.join(workdir, "bundles", name)
    os.makedirs(d, exist_ok=True)
    os.chmod(d, 0o755)
    # The root filesystem inside the bundle (a hard-linked copy), as containerd lays bundles
    # out: seerun idmaps a plain-directory root only there (or below rootfs.idmapPaths).
    root = config["root"]["path"]
    if os.path.isabs(root):
        own = os.path.join(d, "rootfs")
        if not os.path.exists(own):
            shutil.copytree(root, own, symlinks=True, copy_function=os.link)
        config = dict(config, root=dict(config["root"], path="rootfs"))
    with open(os.path.join(d, "config.json"), "w", encoding="utf-8") as f:
        json.dump(config, f, indent=1)
    return d


def make_bundles(workdir, base, rootfs, seccomp, micro_calls, wanted=("plain", "hardened")):
    """Returns {variant: {"true": dir, "sleep": dir}} for the wanted variants plus
    {"micro": {case: dir}}.  seccomp None: no variant and no micro-benchmark case with a
    profile."""
    variants = {"plain": lambda c: c}
    if seccomp is not None:
        variants["hardened"] = lambda c: add_seccomp(add_userns(c), seccomp)
        variants["seccomp"] = lambda c: add_seccomp(c, seccomp)
    out = {}
    for v, harden in variants.items():
        if v not in wanted:
            continue
        out[v] = {
            "true": write_bundle(workdir, v + "-true", harden(plain_config(base, rootfs,
                                                                           ["/bin/true"]))),
            "sleep": write_bundle(workdir, v + "-sleep", harden(plain_config(base, rootfs,
                                                                             SLEEP_ARGS))),
        }
    # The micro-benchmark isolates the filter: no user namespace in either case.
    args = [SYSCALLS_BIN, str(micro_calls)]
    micro = {"none": write_bundle(workdir, "micro-none", plain_config(base, rootfs, args))}
    if seccomp is not None:
        micro["podman"] = write_bundle(workdir, "micro-podman",
                                       add_seccomp(plain_config(base, rootfs, args), seccomp))
    out["micro"] = micro
    return out
