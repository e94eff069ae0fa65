#!/bin/sh
# Builds seerun and runs every test: the unit tests (plain and under AddressSanitizer and
# UndefinedBehaviorSanitizer) and the integration tests, which run the real binary as root.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/contrib/setup.sh"
cd "$top"

echo "== unit tests =="
make -C build check

echo "== unit tests under ASan+UBSan =="
mkdir -p build-asan
(cd build-asan && { [ -f Makefile ] || ../configure -q --enable-sanitizers; } && make -j"$(nproc)" check >/dev/null) || {
  cat build-asan/tests/unit/*.log; exit 1; }

echo "== config parser fuzzing (libFuzzer, ASan+UBSan, bounded) =="
make -C build fuzz FUZZ_SECONDS="${FUZZ_SECONDS:-60}" 2>&1 | tail -3

echo "== integration tests =="
SEERUN_BINARY="$top/build/seerun" /usr/bin/python3 -m pytest -q tests/integration
