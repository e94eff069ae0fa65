#!/bin/sh
# Checkpoint and restore times, seerun beside runc on the same CRIU (issue 18 e); as root.
# See contrib/bench/checkpoint.py and contrib/bench/README.md.
set -eu
exec /usr/bin/python3 "$(dirname "$0")/checkpoint.py" "$@"
