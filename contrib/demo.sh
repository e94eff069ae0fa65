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
echo "container root is host uid: $(awk '{print $2}' /proc/self/uid_map) (user namespace)"
echo "processes visible:"; ps -o pid,user,comm
echo "network interfaces: $(ls /sys/class/net | tr '\\n' ' ')"
echo "capabilities: $(grep CapEff /proc/self/status)"
echo "no_new_privs: $(grep NoNewPrivs /proc/self/status | cut -f2)  seccomp mode: $(grep '^Seccomp:' /proc/self/status | cut -f2)"
wget -q -T 2 -O /dev/null http://deb.debian.org/ 2>/dev/null && echo "network: REACHABLE" || echo "network: none (loopback only)"
mount -t tmpfs none /mnt 2>/dev/null && echo "mount: ALLOWED" || echo "mount: denied"
touch /etc/x 2>/dev/null && echo "root filesystem: WRITABLE" || echo "root filesystem: read-only"
"""]
json.dump(c, open(path, "w"), indent=2)
PY
echo "== seerun run demo (the built-in policy's default profile) =="
status=0
"$seerun" --root "$work/state" run --bundle "$work" demo || status=$?
echo "== exit status: $status; last audit lines (/var/log/seerun/audit.jsonl): =="
echo "$(grep '"id":"demo"' /var/log/seerun/audit.jsonl | grep -c '"event":"decision"') policy decisions recorded, for example:"
grep '"id":"demo"' /var/log/seerun/audit.jsonl | grep '"event":"decision"' | grep -m 3 '"kind":"enforced"'
grep '"id":"demo"' /var/log/seerun/audit.jsonl | tail -n 1
