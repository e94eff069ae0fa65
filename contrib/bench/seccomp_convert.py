"""Converts a Docker/podman seccomp profile (seccomp.json) into config.json's linux.seccomp.

It filters the rules the way podman does (containers/common pkg/seccomp, setupSeccomp) for a
container with the default capability set on x86_64:
- a rule is dropped if its excludes.arches has our arch, if any of its excludes.caps is in the
  capability set, or if the kernel is at least its excludes.minKernel;
- a rule is kept only if its includes.arches (when given) has our arch, all of its includes.caps
  are in the capability set, and the kernel is at least its includes.minKernel.
The architectures are the archMap entry of x86_64 with its sub-architectures.

seerun refuses syscall names that libseccomp does not know at all (where runc and crun skip
them), so those names are dropped and counted.  Names libseccomp knows on another architecture
only (arm_fadvise64_64, ...) are kept: every runtime skips them on x86.
"""

import ctypes
import ctypes.util
import json
import os
import re
import shutil
import subprocess

# The profile shipped by Debian's golang-github-containers-common (newer Debian:
# containers-common).
DEFAULT_PROFILE = "/usr/share/containers/seccomp.json"
CONTAINERS_CONF = "/usr/share/containers/containers.conf"

# podman's default capabilities (containers.conf default_capabilities) when containers.conf
# does not say.
PODMAN_DEFAULT_CAPS = ["CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "NET_BIND_SERVICE",
                       "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT"]

# Go's GOARCH names (what podman compares includes/excludes.arches with) and libseccomp's.
NATIVE_ARCH = "amd64"
NATIVE_SCMP_ARCH = "SCMP_ARCH_X86_64"
X86_64_ARCHES = ["SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"]


def default_capabilities(conf_path=CONTAINERS_CONF):
    """podman's default capability set, as CAP_ names: containers.conf's default_capabilities
    if it is set there (uncommented), else podman's built-in list."""
    caps = None
    try:
        text = open(conf_path, encoding="utf-8").read()
        m = re.search(r"^\s*default_capabilities\s*=\s*\[(.*?)\]", text, re.M | re.S)
        if m:
            caps = re.findall(r'"([A-Z_]+)"', m.group(1))
    except OSError:
        pass
    caps = caps or PODMAN_DEFAULT_CAPS
    return ["CAP_" + c if not c.startswith("CAP_") else c for c in caps]


def kernel_version():
    m = re.match(r"(\d+)\.(\d+)", os.uname().release)
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


def _parse_kernel(s):
    m = re.match(r"(\d+)\.(\d+)", s or "")
    return (int(m.group(1)), int(m.group(2))) if m else None


class SyscallResolver:
    """Whether libseccomp knows a syscall name: seccomp_syscall_resolve_name() through ctypes,
    or scmp_sys_resolver (package seccomp) if the library cannot be loaded."""

    SCMP_ERROR = -1

    def __init__(self):
        self._fn = None
        self.how = None
        for name in ("libseccomp.so.2", ctypes.util.find_library("seccomp")):
            if not name:
                continue
            try:
                lib = ctypes.CDLL(name)
                fn = lib.seccomp_syscall_resolve_name
                fn.argtypes = [ctypes.c_char_p]
                fn.restype = ctypes.c_int
                self._fn = fn
                self.how = "libseccomp (ctypes)"
                break
            except (OSError, AttributeError):
                continue
        if self._fn is None and shutil.which("scmp_sys_resolver"):
            self.how = "scmp_sys_resolver"

    def known(self, name):
        """True/False, or None if nothing can tell."""
        if self._fn is not None:
            return self._fn(name.encode()) != self.SCMP_ERROR
        if self.how == "scmp_sys_resolver":
            out = subprocess.run(["scmp_sys_resolver", name], capture_output=True, text=True)
            try:
                return int(out.stdout.strip()) != self.SCMP_ERROR
            except ValueError:
                return False
        return None


def convert(profile, caps, kernel=None, resolver=None):
    """Returns (linux.seccomp dict, stats dict)."""
    kernel = kernel or kernel_version()
    resolver = resolver or SyscallResolver()
    capset = set(caps)
    stats = {"rules_in": len(profile.get("syscalls", [])), "rules_kept": 0,
             "rules_dropped": 0, "names_kept": 0, "unknown_names": [],
             "resolver": resolver.how or "none (no name dropped)"}

    out = {"defaultAction": profile["defaultAction"]}
    if profile.get("defaultErrnoRet") is not None:
        out["defaultErrnoRet"] = profile["defaultErrnoRet"]
    if profile.get("archMap"):
        arches = []
        for a in profile["archMap"]:
            if a.get("architecture") == NATIVE_SCMP_ARCH:
                arches = [a["architecture"]] + list(a.get("subArchitectures") or [])
        out["architectures"] = arches or X86_64_ARCHES
    elif profile.get("architectures"):
        out["architectures"] = list(profile["architectures"])
    else:
        out["architectures"] = X86_64_ARCHES

    rules = []
    for call in profile.get("syscalls", []):
        inc = call.get("includes") or {}
        exc = call.get("excludes") or {}
        keep = True
        if NATIVE_ARCH in (exc.get("arches") or []):
            keep = False
        if any(c in capset for c in (exc.get("caps") or [])):
            keep = False
        mk = _parse_kernel(exc.get("minKernel"))
        if mk and kernel >= mk:
            keep = False
        if inc.get("arches") and NATIVE_ARCH not in inc["arches"]:
            keep = False
        if any(c not in capset for c in (inc.get("caps") or [])):
            keep = False
        mk = _parse_kernel(inc.get("minKernel"))
        if mk and kernel < mk:
            keep = False
        if not keep:
            stats["rules_dropped"] += 1
            continue

        names = []
        for n in call.get("names") or ([call["name"]] if call.get("name") else []):
            if resolver.known(n) is False:
                stats["unknown_names"].append(n)
            else:
                names.append(n)
        if not names:
            stats["rules_dropped"] += 1
            continue
        rule = {"names": names, "action": call["action"]}
        if call.get("errnoRet") is not None:
            rule["errnoRet"] = call["errnoRet"]
        if call.get("args"):
            rule["args"] = [{k: a[k] for k in ("index", "value", "valueTwo", "op") if k in a}
                            for a in call["args"]]
        rules.append(rule)
        stats["rules_kept"] += 1
        stats["names_kept"] += len(names)
    out["syscalls"] = rules
    return out, stats


def load_and_convert(path=DEFAULT_PROFILE):
    """(linux.seccomp, stats), or (None, reason) if the profile is not there."""
    if not os.path.exists(path):
        return None, (f"{path} not found (Debian 12: apt-get install "
                      "golang-github-containers-common; later Debian: containers-common)")
    with open(path, encoding="utf-8") as f:
        profile = json.load(f)
    caps = default_capabilities()
    seccomp, stats = convert(profile, caps)
    stats["profile"] = path
    stats["caps"] = caps
    return seccomp, stats


if __name__ == "__main__":
    import sys
    sc, st = load_and_convert(sys.argv[1] if len(sys.argv) > 1 else DEFAULT_PROFILE)
    json.dump(sc, sys.stdout, indent=1)
    print(file=sys.stderr)
    print(json.dumps(st), file=sys.stderr)
