#!/bin/sh
# Makes a minimal root filesystem at $1 from the host's busybox-static: the binary, a symlink
# per applet, and just enough of /etc.
set -eu
root=$1
busybox=$(command -v busybox || echo /bin/busybox)
mkdir -p "$root/bin" "$root/dev" "$root/proc" "$root/sys" "$root/etc" "$root/tmp" "$root/root" "$root/var/tmp" "$root/run"
cp "$busybox" "$root/bin/busybox"
for applet in $("$busybox" --list); do
  [ "$applet" = busybox ] || ln -sf busybox "$root/bin/$applet"
done
printf 'root:x:0:0:root:/root:/bin/sh\nuser:x:1000:1000:user:/home/user:/bin/sh\n' >"$root/etc/passwd"
printf 'root:x:0:\ntty:x:5:\nuser:x:1000:\n' >"$root/etc/group"
chmod 1777 "$root/tmp"
echo "$root"
