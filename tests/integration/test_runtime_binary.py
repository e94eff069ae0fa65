"""The runtime binary cannot be reached for writing from inside a container (CVE-2019-5736)."""
import os
import subprocess
import time

import pytest

from conftest import wait_for

HELPERS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "helpers")


@pytest.fixture(scope="session")
def exe_grabber(tmp_path_factory):
    out = tmp_path_factory.mktemp("helpers") / "exe_grabber"
    subprocess.run(["cc", "-static", "-O2", "-o", str(out), os.path.join(HELPERS, "exe_grabber.c")],
                   check=True)
    return out


def test_a_ptrace_capable_container_without_userns_cannot_write_the_runtime_binary(
        seerun, bundle, exe_grabber, tmp_path):
    # The worst case the config can ask for: no user namespace, CAP_SYS_PTRACE, so the
    # non-dumpable runtime processes' /proc/<pid>/exe are open to it.
    results = tmp_path / "results"
    results.mkdir()
    for s in ("bounding", "effective", "permitted"):
        bundle.process["capabilities"][s] += ["CAP_SYS_PTRACE", "CAP_DAC_OVERRIDE"]
    bundle.config["mounts"] += [
        {"destination": "/grabber", "type": "none", "source": str(exe_grabber), "options": ["bind", "ro"]},
        {"destination": "/results", "type": "none", "source": str(results), "options": ["bind"]},
    ]
    bundle.shell("/grabber 4 /grabber /bin/busybox > /results/out 2>&1")
    cid = seerun.id()
    seerun.cmd("run", "-d", "--bundle", bundle.write(), cid, check=True)
    deadline = time.monotonic() + 3.5
    while time.monotonic() < deadline:
        seerun.cmd("exec", cid, "true", check=True)
    wait_for(lambda: (results / "out").exists() and "grabbed" in (results / "out").read_text(),
             what="the grabber's count")
    out = (results / "out").read_text()
    grabbed = int(out.split("grabbed")[1])
    assert grabbed > 0, "the attack never caught a runtime process: the test proves nothing\n" + out
    assert "WRITABLE" not in out, out
