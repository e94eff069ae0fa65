#!/bin/sh
# The side-by-side benchmark of seerun, crun and runc (issue 7).  As root:
#
#   contrib/bench/run.sh [--quick] [-o report.md] [--json raw.json] [--seerun PATH]
#                        [--crun PATH] [--runc PATH] [--bwrap PATH]
#
# Installs nothing: it uses whichever of crun and runc are there (Debian: apt-get install crun
# runc; or --crun/--runc PATH), bubblewrap for the sandbox row (apt-get install bubblewrap;
# or --bwrap PATH) and podman's seccomp profile if it is there (Debian 12: golang-github-containers-common).
# See contrib/bench/README.md.
set -eu
exec /usr/bin/python3 "$(dirname "$0")/bench.py" "$@"
