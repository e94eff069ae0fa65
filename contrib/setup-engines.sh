#!/bin/sh
# Installs, from Debian's packages, the container engines that the engine tests drive
# (`pytest -m engines`, tests/integration/test_{podman,containerd,docker}.py): podman with conmon
# and its network stack, containerd with ctr and the runc shim, Docker (docker.io), and
# debootstrap with the archive keyring, which the tests use to build a Debian image once. Run as
# root, after contrib/setup.sh. Safe to run again.
#
# It starts no daemon and changes no engine configuration: each test module starts its own
# daemon with private state, configuration and socket, and removes it afterwards. (On a machine
# with systemd, Debian's docker.io and containerd packages start their system daemons when
# installed; the tests never use their sockets and leave them alone.)
set -eu
export DEBIAN_FRONTEND=noninteractive
pkgs="podman conmon containerd docker.io runc debootstrap debian-archive-keyring busybox-static
python3-pytest python3-yaml"
missing=
for p in $pkgs; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
done
if [ -n "$missing" ]; then
  apt-get update -q
  # Without the recommended extras (slirp4netns, fuse-overlayfs, uidmap, cgroupfs-mount, git,
  # apparmor, ...): the tests run rootful, with overlay storage, without network.
  # shellcheck disable=SC2086
  apt-get install -y -q --no-install-recommends $missing
fi
echo "engines: $(podman --version); containerd $(containerd --version | awk '{print $3}');" \
  "$(dockerd --version)"
