#!/bin/sh
# No goto in runtime/ or oci/ (issue 12 item 5): a function releases what it holds with the
# cleanup attributes of oci/common/cleanup.h, and a sequence undone as a unit on failure is a
# function of its own whose caller undoes it (docs/HACKING.md, Conventions).  Comments are
# stripped first (gcc -fpreprocessed keeps the lines), so only code counts.  A file that
# needs one (a retry loop that is clearer so) is listed in contrib/goto-allow with how many
# and why; more than listed fails, and so does a listed file with fewer (the list stays true).
# Usage: contrib/check-gotos.sh
set -eu
cd "$(dirname "$0")/.."
allow=contrib/goto-allow
[ -r "$allow" ] || { echo "check-gotos: cannot read $allow" >&2; exit 1; }
CC=${CC:-gcc}
found=$(mktemp)
code=$(mktemp)
trap 'rm -f "$found" "$code"' EXIT
for f in $(find runtime oci -name '*.[ch]' | sort); do
  # Into a file, not a pipe: a file gcc cannot read must fail the check (sh has no pipefail).
  "$CC" -w -fpreprocessed -dD -E "$f" >"$code"
  # Line 1 of the output is gcc's line marker: source line N is output line N+1.
  awk -v f="$f" 'NR > 1 && /(^|[^A-Za-z0-9_])goto([^A-Za-z0-9_]|$)/ { print f ":" NR - 1 ": " $0 }' \
    "$code"
done >"$found"
# The allowed count per file against what was found.
sed 's/#.*//' "$allow" | awk -v list="$allow" '
  FILENAME == "-" { if (NF >= 2) allowed[$1] = $2; next }
  { f = substr($0, 1, index($0, ":") - 1); n[f]++; line[f] = line[f] $0 "\n" }
  END {
    for (f in n)
      if (n[f] > allowed[f] + 0) {
        printf "%s%s: %d goto(s), %d allowed (%s)\n", line[f], f, n[f], allowed[f], list > "/dev/stderr"
        bad++
      }
    for (f in allowed)
      if (n[f] + 0 < allowed[f]) {
        printf "%s: %s allows %d goto(s) but has %d: lower or remove the line\n", list, f,
          allowed[f], n[f] > "/dev/stderr"
        bad++
      }
    if (bad) {
      print "goto in runtime/ or oci/: release with _cleanup_*_ (oci/common/cleanup.h), or make the" \
        " steps undone as a unit a function whose caller undoes them (docs/HACKING.md)" > "/dev/stderr"
      exit 1
    }
  }' - "$found"
