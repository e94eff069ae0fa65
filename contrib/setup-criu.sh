#!/bin/sh
# Installs CRIU 4.1.x into /usr/local (criu in /usr/local/sbin, libcriu and criu.pc in
# /usr/local/lib/<multiarch>) unless a usable one is already there: version 4.0 or newer and
# `criu check` passing.  Debian 12's criu 3.17.1 cannot dump on current kernels ("vdso:
# Unexpected rt vDSO area bounds"), so the upstream release is built from the source tarball
# that Debian's archive carries for trixie (criu 4.1.1-1), pinned by its SHA-256.  Run as root.
set -eu

CRIU_VERSION=4.1.1
CRIU_TARBALL=criu_$CRIU_VERSION.orig.tar.xz
CRIU_URL=${CRIU_URL:-http://deb.debian.org/debian/pool/main/c/criu/$CRIU_TARBALL}
CRIU_SHA256=f80a66cb3726bb2116266d4759ce3bcbfab7abdb6b6d430bf20dd41911717afe
PREFIX=/usr/local

usable() { # criu binary: version >= 4.0 and the kernel check passes
  v=$("$1" --version 2>/dev/null | sed -n 's/^Version: \([0-9]*\)\..*/\1/p')
  [ -n "$v" ] && [ "$v" -ge 4 ] && "$1" check >/dev/null 2>&1
}

if [ -x "$PREFIX/sbin/criu" ] && usable "$PREFIX/sbin/criu" &&
    pkg-config --atleast-version=4.0 criu 2>/dev/null; then
  echo "criu: $("$PREFIX/sbin/criu" --version | head -1) already installed"
  exit 0
fi

export DEBIAN_FRONTEND=noninteractive
apt-get install -y -q --no-install-recommends \
  build-essential pkg-config curl xz-utils ca-certificates python3 python3-protobuf \
  libprotobuf-c-dev protobuf-c-compiler libprotobuf-dev protobuf-compiler \
  libnl-3-dev libnet1-dev libcap-dev libbsd-dev uuid-dev libnftables-dev libgnutls28-dev \
  >/dev/null

work=$(mktemp -d /tmp/seerun-criu.XXXXXX)
trap 'rm -rf "$work"' EXIT
if ! curl -fsS --retry 3 -o "$work/$CRIU_TARBALL" "$CRIU_URL"; then
  echo "setup-criu: cannot download $CRIU_URL" >&2
  exit 1
fi
if ! echo "$CRIU_SHA256  $work/$CRIU_TARBALL" | sha256sum -c --quiet -; then
  echo "setup-criu: $CRIU_URL: SHA-256 mismatch (want $CRIU_SHA256)" >&2
  exit 1
fi
tar -xJf "$work/$CRIU_TARBALL" -C "$work"
cd "$work/criu-$CRIU_VERSION"
# SKIP_PIP_INSTALL: the Python bindings would be installed with pip, which needs the network.
make -j"$(nproc)" criu lib >"$work/build.log" 2>&1 || { tail -40 "$work/build.log"; exit 1; }
make install-criu install-lib PREFIX="$PREFIX" SKIP_PIP_INSTALL=1 >"$work/install.log" 2>&1 ||
  { tail -40 "$work/install.log"; exit 1; }
ldconfig
if ! usable "$PREFIX/sbin/criu"; then
  echo "setup-criu: $PREFIX/sbin/criu is installed but 'criu check' fails on this kernel:" >&2
  "$PREFIX/sbin/criu" check >&2 || true
  exit 1
fi
echo "criu: $("$PREFIX/sbin/criu" --version | head -1) installed in $PREFIX"
