#!/bin/bash
# Runs the OCI runtime-tools validation suite (opencontainers/runtime-tools' validation/)
# against a runtime, one test program at a time, and counts the programs that pass: exit status
# 0, no "not ok" test point, and no error reported in a YAML block that follows no test point.
# A program may print no test point at all (plan "1..0"): the lifecycle programs (poststart,
# prestart_fail, ...) and the *_fail ones print nothing when the runtime did right, and report a
# failure only as such a YAML block ({"error": ...}) -- "every line ok" would count the first as
# failures, "exit 0 and no not ok" the second as passes.
# By hand, not in CI (issue 17): it needs Go >= 1.21 and the suite's sources.
#
#   contrib/conformance/runtime-tools.sh [RUNTIME]     # default: seerun, permissive profile
#
# RUNTIME_TOOLS_SRC: a checkout of runtime-tools (else cloned from GitHub into the work dir).
# WORK: where Go, the build and the per-test outputs go (default /tmp/seerun-runtime-tools).
# Go comes from bookworm-backports through a private apt list; the system's sources are not
# touched.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
work=${WORK:-/tmp/seerun-runtime-tools}
mkdir -p "$work"
work=$(cd "$work" && pwd)

go_root="$work/go/usr/lib/go-1.22"
if [ ! -x "$go_root/bin/go" ]; then
  mkdir -p "$work/apt/lists/partial" "$work/debs"
  echo 'deb http://deb.debian.org/debian bookworm-backports main' > "$work/apt/sources.list"
  apt_opts=(-o Dir::Etc::sourcelist="$work/apt/sources.list" -o Dir::Etc::sourceparts=-
            -o Dir::State::Lists="$work/apt/lists")
  apt-get -q "${apt_opts[@]}" update >/dev/null
  (cd "$work/debs" && apt-get -q "${apt_opts[@]}" download golang-1.22-go golang-1.22-src)
  for d in "$work"/debs/*.deb; do dpkg -x "$d" "$work/go"; done
fi
export PATH="$go_root/bin:$PATH" GOROOT="$go_root" GOFLAGS=-mod=vendor GOTOOLCHAIN=local \
  GOPATH="$work/gopath" GOCACHE="$work/gocache"

src="$work/runtime-tools"
if [ ! -d "$src" ]; then
  git clone -q "${RUNTIME_TOOLS_SRC:-https://github.com/opencontainers/runtime-tools}" "$src"
fi
make -C "$src" -s runtimetest validation-executables >/dev/null

runtime=${1:-}
if [ -z "$runtime" ]; then
  # seerun under its audit-only permissive profile (configs applied as written), with its own
  # state root, audit log and user namespace registry in the work dir.
  [ -x "$top/build/seerun" ] || { echo "runtime-tools.sh: build seerun first (build/seerun)" >&2; exit 1; }
  python3 - "$top" "$work" <<'PY'
import json, sys
top, work = sys.argv[1:]
p = json.load(open(f"{top}/contrib/policy/default.json"))
p["profiles"]["permissive"] = json.load(open(f"{top}/contrib/policy/risk-classes.json"))["profiles"]["permissive"]
p["auditLog"] = f"{work}/audit/audit.jsonl"
# The suite's bundles live in the temporary directory.
for prof in p["profiles"].values():
    prof.setdefault("rootfs", {})["idmapPaths"] = ["/tmp"]
p["userNamespaces"]["registry"] = f"{work}/userns/ranges"
json.dump(p, open(f"{work}/policy.json", "w"), indent=1)
PY
  chmod 644 "$work/policy.json"
  cat > "$work/seerun-permissive" <<SH
#!/bin/sh
exec "$top/build/seerun" --root "$work/state" --policy "$work/policy.json" --profile permissive "\$@"
SH
  chmod +x "$work/seerun-permissive"
  runtime="$work/seerun-permissive"
fi

# The verdict on one program's output (stdout and stderr, as written): "pass" or why not.
verdict() {
  awk '
    /^  ---$/ { yaml = 1; stray = !point; next }
    /^  \.\.\.$/ { yaml = 0; point = 0; next }
    yaml && stray && /^    "error": "./ { orphan++ }
    yaml { next }
    /^not ok / { notok++; point = 1 }
    /^ok / { point = 1 }
    END {
      if (notok) print notok " not ok"
      else if (orphan) print "an error reported outside any test point"
      else print "pass"
    }' "$1"
}

out="$work/out.$(basename "$runtime")"
rm -rf "$out" && mkdir -p "$out"
# The programs find rootfs-<arch>.tar.gz and runtimetest in the current directory.
cd "$src"
pass=0 total=0
for t in validation/*/*.t; do
  name=$(basename "$t" .t)
  rc=0
  RUNTIME="$runtime" timeout 120 "$t" > "$out/$name" 2>&1 || rc=$?
  total=$((total + 1))
  v=$(verdict "$out/$name")
  if [ "$rc" -eq 0 ] && [ "$v" = pass ]; then
    pass=$((pass + 1)); echo "PASS $name"
  else
    [ "$v" = pass ] && v="exit $rc" || v="exit $rc; $v"
    echo "FAIL $name ($v; see $out/$name)"
  fi
done
echo "runtime-tools $(git -C "$src" describe --always --tags): $pass of $total programs pass with $runtime"
