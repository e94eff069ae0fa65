#!/bin/sh
# The main job, from nothing: installs the dependencies, builds seerun, and runs an
# untrusted-looking script with `seerun sandbox` -- a hardened container seerun builds itself
# from the host's /usr (nothing is downloaded) -- showing what the script could and could not
# do, the files it produced, and the result document.  Run as root.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/contrib/setup.sh"
seerun="$top/build/seerun"

work=$(mktemp -d /tmp/seerun-demo.XXXXXX)
trap 'rm -rf "$work"' EXIT
cat >"$work/untrusted.sh" <<'SCRIPT'
echo "I am $(id)"
echo "my uid on the host: $(awk '{print $2}' /proc/self/uid_map)"
echo "capabilities: $(grep CapEff /proc/self/status | cut -f2)  no_new_privs: $(grep NoNewPrivs /proc/self/status | cut -f2)  seccomp: $(grep '^Seccomp:' /proc/self/status | cut -f2)"
cat /etc/shadow 2>/dev/null && echo "read /etc/shadow!" || echo "/etc/shadow: not there"
ls /root /home 2>/dev/null && echo "saw home directories!" || echo "/root, /home: not there"
echo x > /usr/bin/x 2>/dev/null && echo "wrote /usr!" || echo "/usr: read-only"
python3 -c 'import urllib.request; urllib.request.urlopen("http://deb.debian.org", timeout=2)' 2>/dev/null && echo "network!" || echo "network: none"
python3 -c 'import os; os.unshare(os.CLONE_NEWUSER)' 2>/dev/null && echo "unshare worked!" || echo "unshare: denied"
python3 -c 'print("computed:", sum(i * i for i in range(10**6)))' > /out/result.txt
ln -s /etc/passwd /out/sneaky-link
echo "wrote /out/result.txt"
SCRIPT
chmod 644 "$work/untrusted.sh"

echo "== seerun sandbox (the built-in policy's default profile) =="
status=0
"$seerun" sandbox --ro "$work/untrusted.sh:/job/run.sh" --out "$work/out" --timeout 30 \
  --memory 256m --json="$work/result.json" -- sh /job/run.sh || status=$?
echo "== exit status: $status; collected into $work/out: =="
ls -l "$work/out"
cat "$work/out/result.txt"
echo "== result document (also in the audit log /var/log/seerun/audit.jsonl) =="
/usr/bin/python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
short = {k: v for k, v in r.items() if k != "decisions"}
print(json.dumps(short, indent=2))
print(len(r.get("decisions", [])), "policy decisions, e.g.:")
for d in [d for d in r.get("decisions", []) if d.get("kind") == "enforced"][:3]:
    print(" ", d["field"], "->", d.get("reason"))
' "$work/result.json"
