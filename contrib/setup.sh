#!/bin/sh
# Installs what seerun needs on Debian 12 (build tools, libraries, test tools) and builds it in
# ./build.  Run as root.  Safe to run again.
set -eu
cd "$(dirname "$0")/.."

export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends \
  build-essential autoconf automake libtool pkg-config git \
  libyajl-dev libseccomp-dev libcap-dev libselinux1-dev libsystemd-dev nettle-dev \
  busybox-static python3 python3-pytest openssl curl iproute2 \
  dbus-daemon python3-dbus python3-gi \
  clang libclang-rt-14-dev >/dev/null

# CRIU 4.1 for checkpoint/restore (built from Debian's source tarball when not installed).
contrib/setup-criu.sh

./autogen.sh >/dev/null
mkdir -p build
cd build
[ -f Makefile ] || ../configure -q
make -j"$(nproc)" >/dev/null
echo "seerun built: $(pwd)/seerun"
