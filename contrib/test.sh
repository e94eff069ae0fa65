#!/bin/sh
# Builds seerun and runs every test: the unit tests (plain, and under AddressSanitizer and
# UndefinedBehaviorSanitizer with leak detection), a clang pass for gotos past cleanup
# variables (a guard: contrib/check-gotos.sh allows no goto in runtime/ or oci/), bounded
# fuzzing of the config and policy parsers (the config fuzzer also applies every built-in
# profile to what it parses), of the egress proxy's parsers and of `seerun review` over an
# audit log, the integration tests against the real binary as root (with the kill-point build
# for the crash tests, and podman, containerd and Docker driving seerun), and the integration
# tests once more against the ASan+UBSan build.
#
# Build directories: build (setup.sh), build-asan (--enable-sanitizers), build-kp
# (--enable-kill-points: a test-only binary that kills itself at a named step; never install
# it).  FUZZ_SECONDS, FUZZ_POLICY_SECONDS, FUZZ_EGRESS_SECONDS and FUZZ_REVIEW_SECONDS bound the fuzzing; SEERUN_SKIP_ASAN_INTEGRATION=1
# skips the second integration run (for a quick local check, not for CI).
#
# Measured on the 2-core development VM (busy with other work): about 12.5 minutes in all
# (setup.sh ~1, unit tests plain and under ASan ~2, kill-point build ~0.5, fuzzing ~2,
# integration ~2.5, integration under ASan ~4.7), well inside CI's 40-minute budget, so the
# ASan run is the whole suite (less the engine tests), not a subset.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/contrib/setup.sh"
# The engine tests (podman, containerd, Docker driving seerun) are part of the suite: their
# engines come from Debian too.
"$top/contrib/setup-engines.sh"
cd "$top"
jobs=$(nproc)
t0=$(date +%s)
stage() { echo "== $* (at $(( $(date +%s) - t0 ))s) =="; }

stage "unit tests"
make -C build check

stage "clang: no goto jumps past a cleanup variable (gcc accepts it and frees garbage)"
# shellcheck disable=SC2046
clang -fsyntax-only -w -D_GNU_SOURCE -Ibuild $(for d in oci oci/common runtime/*/; do echo "-I$d"; done) \
  $(pkg-config --cflags yajl libseccomp libcap libselinux nettle libsystemd) \
  $(pkg-config --cflags criu 2>/dev/null) runtime/*/*.c oci/*.c oci/common/*.c

stage "no goto in runtime/ or oci/ (cleanup attributes instead; contrib/goto-allow)"
contrib/check-gotos.sh

stage "layers: no include by a path (each folder's include path is what enforces the order)"
if grep -rn '#include "[^"]*/' runtime oci tools tests/unit --include='*.c' --include='*.h'; then
  echo "an #include by a path above would reach past the layer order (docs/HACKING.md)" >&2
  exit 1
fi

stage "exports: one prefix per file (sr_<stem>_, the stem naming the file; contrib/export-stems)"
contrib/check-exports.sh build

stage "unit tests under ASan+UBSan (LeakSanitizer on)"
mkdir -p build-asan
(cd build-asan && { [ -f Makefile ] || ../configure -q --enable-sanitizers; } &&
  make -j"$jobs" check >/dev/null) || { cat build-asan/tests/unit/*.log; exit 1; }

stage "kill-point build (test-only)"
mkdir -p build-kp
(cd build-kp && { [ -f Makefile ] || ../configure -q --enable-kill-points; } &&
  make -j"$jobs" seerun >/dev/null)

stage "config parser (and the pure policy on what it parses), policy, egress and audit log (review) fuzzing (libFuzzer, ASan+UBSan, bounded)"
# Into a log, not a pipe: a crash must fail this script (sh has no pipefail).
if ! make -C build fuzz FUZZ_SECONDS="${FUZZ_SECONDS:-60}" \
    FUZZ_POLICY_SECONDS="${FUZZ_POLICY_SECONDS:-30}" FUZZ_EGRESS_SECONDS="${FUZZ_EGRESS_SECONDS:-30}" \
    FUZZ_REVIEW_SECONDS="${FUZZ_REVIEW_SECONDS:-30}" \
    >build/fuzz.log 2>&1; then
  tail -60 build/fuzz.log
  exit 1
fi
grep -E '^Done [0-9]+ runs' build/fuzz.log

stage "integration tests"
SEERUN_BINARY="$top/build/seerun" SEERUN_KILLPOINT_BINARY="$top/build-kp/seerun" \
  /usr/bin/python3 -m pytest -q tests/integration

if [ "${SEERUN_SKIP_ASAN_INTEGRATION:-0}" != 1 ]; then
  stage "integration tests against the ASan+UBSan build"
  # LeakSanitizer is off here (it stays on for the unit tests): the runtime's processes fork
  # without exec and end with _exit, and those that do reach exit run inside containers, where
  # it cannot stop the world; leaks are the unit tests' and the fuzzers' to find.  A report of
  # a process whose exit status nobody checks still fails the run: reports go to files too.
  # The kill-point tests skip (they need build-kp, already run above); so do the engine tests
  # (-m "not engines": podman, containerd and Docker start seerun with an environment of their
  # own, which these options would not reach).
  rm -f build-asan/asan-report.*
  ASAN_OPTIONS="detect_leaks=0:log_path=$top/build-asan/asan-report" \
    UBSAN_OPTIONS="print_stacktrace=1:log_path=$top/build-asan/asan-report" \
    SEERUN_BINARY="$top/build-asan/seerun" /usr/bin/python3 -m pytest -q -m "not engines" \
    tests/integration
  if ls build-asan/asan-report.* >/dev/null 2>&1; then
    cat build-asan/asan-report.*
    echo "sanitizer reports above: failing" >&2
    exit 1
  fi
fi
stage "all tests passed"
