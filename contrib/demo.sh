#!/bin/sh
# The main job, from nothing: installs the dependencies, builds seerun, and runs a command in a
# container whose root filesystem is made here from busybox-static (no image download), showing
# what the process inside sees.  Run as root.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/contrib/setup.sh"
seerun="$top/build/seerun"

work=$(mktemp -d /tmp/seerun-demo.XXXXXX)
trap '"$seerun" --root "$work/state" delete --force demo >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
"$top/contrib/make-busybox-rootfs.sh" "$work/rootfs" >/dev/null
"$seerun" spec --bundle "$work"
/usr/bin/python3 - "$work" <<'PY'
import json, sys
path = sys.argv[1] + "/config.json"
c = json.load(open(path))
c["root"]["path"] = sys.argv[1] + "/rootfs"
c["process"]["terminal"] = False
c["process"]["args"] = ["sh", "-c", """
echo "inside: $(id)  hostname=$(hostname)  pid=$$"
echo "processes visible:"; ps -o pid,user,args
echo "network interfaces: $(ls /sys/class/net | tr '\\n' ' ')"
echo "capabilities: $(grep CapEff /proc/self/status)"
echo "no_new_privs: $(grep NoNewPrivs /proc/self/status | cut -f2)"
touch /etc/x 2>/dev/null && echo "root filesystem: WRITABLE" || echo "root filesystem: read-only"
"""]
json.dump(c, open(path, "w"), indent=2)
PY
echo "== seerun run demo =="
"$seerun" --root "$work/state" run --bundle "$work" demo
echo "== exit status: $? =="
