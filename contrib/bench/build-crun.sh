#!/bin/sh
# Builds Debian trixie's crun (1.21) from its source package's release tarball in a scratch
# directory, for `contrib/bench/run.sh --crun DIR/crun-1.21/crun` (issue 19).  Never run by CI;
# nothing goes into the tree or the system's apt configuration:
#
#   contrib/bench/build-crun.sh [DIR]        (default DIR: /tmp/crun-trixie; as root for apt)
#
# trixie's source index is fetched with a private sources list, list and cache directories
# under DIR (apt verifies it against trixie's signed InRelease); the orig tarball named there
# is downloaded from deb.debian.org's pool and checked against the index's SHA-256.  It builds
# with Debian 12's libraries (build-essential pkg-config libyajl-dev libseccomp-dev libcap-dev
# libsystemd-dev; contrib/setup.sh installs them), without CRIU support (`make`, not `make crun`:
# only the whole build generates git-version.h); Debian's patches (the
# .debian.tar.xz) are not applied, so this is upstream's 1.21 release.
set -eu
dir=${1:-/tmp/crun-trixie}
version=1.21
mirror=http://deb.debian.org/debian
mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial"
cd "$dir"
echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror trixie main" \
  >sources.list
apt_private="-o Dir::Etc::sourcelist=$dir/sources.list -o Dir::Etc::sourceparts=- \
  -o Dir::State::Lists=$dir/lists -o Dir::Cache=$dir/cache"
# shellcheck disable=SC2086
apt-get $apt_private update >/dev/null

# The crun stanza of trixie's Sources index (compressed as apt keeps it: lz4, xz, gz or plain).
index=$(ls lists/*trixie_main_source_Sources* | head -n 1)
case "$index" in
*.lz4) cat_index="lz4cat" ;;
*.xz) cat_index="xzcat" ;;
*.gz) cat_index="zcat" ;;
*) cat_index="cat" ;;
esac
stanza=$($cat_index "$index" | awk '/^Package: crun$/ {p = 1} p && /^$/ {exit} p')
[ -n "$stanza" ] || { echo "build-crun: no crun in trixie's source index" >&2; exit 1; }
echo "$stanza" | grep -q "^Version: $version-" ||
  { echo "build-crun: trixie's crun is not $version: $(echo "$stanza" | grep ^Version)" >&2; exit 1; }
pool=$(echo "$stanza" | awk '/^Directory:/ {print $2}')
tarball=crun_$version.orig.tar.gz
sum=$(echo "$stanza" | awk -v f="$tarball" '/^Checksums-Sha256:/ {s = 1; next} s && /^ / && $3 == f {print $1; exit} s && !/^ / {s = 0}')
[ -n "$sum" ] || { echo "build-crun: no SHA-256 of $tarball in the index" >&2; exit 1; }

[ -f "$tarball" ] || curl -fsSL -o "$tarball.part" "$mirror/$pool/$tarball"
[ -f "$tarball" ] || mv "$tarball.part" "$tarball"
echo "$sum  $tarball" | sha256sum -c - >/dev/null ||
  { echo "build-crun: $tarball does not match the index's SHA-256 $sum" >&2; rm -f "$tarball"; exit 1; }

rm -rf "crun-$version"
tar xzf "$tarball"
cd "crun-$version"
./configure --disable-criu >configure.log 2>&1 || { tail -20 configure.log >&2; exit 1; }
make -j"$(nproc)" >make.log 2>&1 || { tail -20 make.log >&2; exit 1; }
./crun --version | head -n 1
echo "build-crun: $dir/crun-$version/crun"
