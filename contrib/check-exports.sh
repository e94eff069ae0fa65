#!/bin/sh
# One exported prefix per file (issue 12 item 6): every function or object a runtime file
# exports (nm on its object in BUILD), and every static inline function a header defines,
# is sr_<stem> or sr_<stem>_..., where <stem> names the file: its name without .c/.h, or the
# short stem contrib/export-stems gives it.  A name is the file's whose stem is the longest
# that matches it, so sr_policy_apply_x belongs to policy_apply.c, not policy.c, and a name no
# stem matches, or that matches another file's stem, fails.  main() and the libFuzzer entry
# point are exempt.  Usage: contrib/check-exports.sh [BUILD]
set -eu
build=$(cd "${1:-build}" && pwd)
cd "$(dirname "$0")/.."
table=contrib/export-stems
[ -r "$table" ] || { echo "check-exports: cannot read $table" >&2; exit 1; }
{
  # The stems: every source and header, then the table's short stems over their defaults.
  find oci runtime tools -name '*.[ch]' | sed -E 's|^(.*)\.[ch]$|\1|' | sort -u |
    while read -r f; do echo "stem ${f##*/} ${f##*/}"; done
  # Generated sources (policy_default.c, seccomp_default_prog.c) are in the build directory.
  find "$build" -name '*.c' ! -path '*/tests/*' | sed -E 's|^.*/(.*)\.c$|stem \1 \1|'
  sed 's/#.*//' "$table" | awk 'NF == 2 { print "stem", $1, $2 }'
  # What the objects export (the object's name carries its source's: lib<x>_a-<src>.o).
  find "$build" -name '*.o' ! -path '*/tests/*' | sort | while read -r o; do
    src=$(basename "$o" .o); src=${src#*-}
    nm -g --defined-only "$o" | awk -v f="$src" -v o="$o" \
      '$2 ~ /^[TDBRCGSVW]$/ { print "sym", f, $3, o, "object" }'
  done
  # What the headers define inline.
  grep -Hn -E '^static inline [^(]*\bsr_[a-z0-9_]+\(' $(find oci runtime -name '*.h') |
    sed -E 's|^([^:]*)/([^/:]*)\.h:([0-9]+):.*\b(sr_[a-z0-9_]+)\(.*|sym \2 \4 \1/\2.h:\3 header|'
} | awk '
  $1 == "stem" { stem[$2] = $3; next }
  $3 == "main" || $3 == "LLVMFuzzerTestOneInput" { next }
  !($2 in stem) { next }  # an object left behind by a source that is gone
  {
    own = stem[$2]
    if ($5 == "object") exports[$2] = 1
    best = ""
    for (f in stem) {
      s = "sr_" stem[f]
      if (($3 == s || index($3, s "_") == 1) && length(stem[f]) > length(best))
        best = stem[f]
    }
    if (best != own) {
      printf "%s: %s is outside %s.*'"'"'s prefix sr_%s_ (%s)\n", $4, $3, $2, own,
        best == "" ? "no file has its prefix" : "sr_" best "_ is another file'"'"'s" > "/dev/stderr"
      bad++
    }
  }
  END {
    # Two objects may not share a stem (a header may take the stem of the files it serves).
    for (f in exports) {
      if (stem[f] in owner) {
        printf "stem %s is both %s.* and %s.*\n", stem[f], owner[stem[f]], f > "/dev/stderr"
        bad++
      }
      owner[stem[f]] = f
    }
    if (bad) { printf "%d name(s) outside their file'"'"'s prefix (the stems: %s)\n", bad, "'"$table"'" > "/dev/stderr"; exit 1 }
  }'
