#!/bin/bash
# Builds (or finds) the v2 node's guest: a Debian 12 root made with
# mmdebstrap (systemd as init, dbus, udev, containerd, runc, the CNI
# plugins, iptables, openssh-server, jq), Debian 12's own 6.1 kernel
# (linux-image-amd64's dependency, unpacked, keeping the merged-/usr
# symlinks: no initramfs hook) with its modules in the root, the root as an ext4 image
# (mkfs.ext4 -d: nothing is mounted on the host), the uncompressed vmlinux
# and a small busybox initramfs that loads the virtio/ext4 modules and
# switches root to the image with systemd as PID 1. Cached outside build/:
#   ${OOMLENS_KUBE_CACHE:-/var/cache/oomlens}/v2-root-<recipe hash>/
#     root.ext4 vmlinux initrd.cpio kernel-version
# keyed by this script, initrd-init, mkinitrd.py, guest-boot and the kernel
# package's name. Prints that directory on stdout. Idempotent. Needs root and
# Debian's archive (first build only); the host's apt configuration and
# /etc stay as they are (mmdebstrap works in a directory of its own).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=${OOMLENS_KUBE_CACHE:-/var/cache/oomlens}
log() { echo "v2-root: $*" >&2; }
PACKAGES=systemd,systemd-sysv,dbus,udev,kmod,iproute2,iptables,procps,\
containerd,runc,containernetworking-plugins,openssh-server,ca-certificates,\
curl,jq,util-linux,mount
KPKG=$(apt-cache depends linux-image-amd64 2>/dev/null |
	sed -n 's/^ *Depends: \(linux-image-6\.1[^ ]*-amd64\)$/\1/p' | head -n1)
[ -n "$KPKG" ] || { log "no linux-image-6.1 package known to apt"; exit 1; }
RECIPE=$( (cat "$0" "$HERE/initrd-init" "$HERE/mkinitrd.py" "$HERE/guest-boot"
	echo "$KPKG") |
	sha256sum | cut -c1-12)
OUT=$ROOT/v2-root-$RECIPE
if [ -f "$OUT/done" ]; then echo "$OUT"; exit 0; fi

mkdir -p "$ROOT"
exec 9>"$ROOT/.v2-root.lock"
flock 9
if [ -f "$OUT/done" ]; then echo "$OUT"; exit 0; fi
t0=$(date +%s)
WORK=$OUT.tmp
# mmdebstrap (root mode) mounts /proc, /sys and /dev parts in the root it
# builds: an interrupted build leaves none behind
cleanup() {
	local m
	for m in $(findmnt -rn -o TARGET | grep "^$WORK/" | sort -r || true); do
		umount "$m" 2>/dev/null || umount -l "$m" || true
	done
}
trap cleanup EXIT
cleanup
rm -rf --one-file-system "$WORK"
mkdir -p "$WORK/deb"
chmod 0755 "$WORK" "$WORK/deb" # apt downloads as _apt
(cd "$WORK/deb" && apt-get download "$KPKG" >&2)
KDEB=$(ls "$WORK"/deb/*.deb)

# The guest's own configuration (hostname, network, units) is written by
# the hooks below; the node's programs and settings come at boot from the
# host (tests/cluster/v2/guest-node.sh), so they change without a rebuild.
log "mmdebstrap bookworm ($PACKAGES)"
mmdebstrap --variant=apt --include="$PACKAGES" \
	--dpkgopt='path-exclude=/usr/share/man/*' \
	--dpkgopt='path-exclude=/usr/share/doc/*' \
	--dpkgopt='path-exclude=/usr/share/locale/*' \
	--customize-hook="dpkg-deb --fsys-tarfile '$KDEB' |
		tar -x --keep-directory-symlink -C \"\$1\"" \
	--customize-hook='depmod -b "$1" -a "$(ls "$1/lib/modules")"' \
	--customize-hook="cp '$HERE/guest-boot' \"\$1/usr/local/sbin/oomlens-boot\"" \
	--customize-hook='set -e
r=$1
echo oomlens-node >"$r/etc/hostname"
printf "127.0.0.1 localhost\n127.0.1.1 oomlens-node\n" >"$r/etc/hosts"
: >"$r/etc/fstab"
# the node runs its own containerd (guest-node.sh) with a config of its own
ln -sf /dev/null "$r/etc/systemd/system/containerd.service"
for u in apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer \
	fstrim.timer systemd-timesyncd.service getty@tty1.service; do
	ln -sf /dev/null "$r/etc/systemd/system/$u"
done
mkdir -p "$r/etc/systemd/network" "$r/etc/systemd/journald.conf.d"
# qemu user networking: 10.0.2.15, the host at 10.0.2.2; net.ifnames=0
printf "[Match]\nName=eth0\n[Network]\nAddress=10.0.2.15/24\nGateway=10.0.2.2\nLinkLocalAddressing=no\nIPv6AcceptRA=no\n" \
	>"$r/etc/systemd/network/10-eth0.network"
ln -sf /lib/systemd/system/systemd-networkd.service \
	"$r/etc/systemd/system/multi-user.target.wants/systemd-networkd.service"
printf "[Journal]\nStorage=volatile\nRuntimeMaxUse=64M\n" \
	>"$r/etc/systemd/journald.conf.d/oomlens.conf"
chmod 0755 "$r/usr/local/sbin/oomlens-boot"
cat >"$r/etc/systemd/system/oomlens-boot.service" <<UNIT
[Unit]
Description=oomlens test node (tests/cluster/v2/guest-node.sh from the host)
Wants=network-online.target
After=network.target systemd-networkd.service dbus.service
Before=ssh.service
[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/usr/local/sbin/oomlens-boot
StandardOutput=journal+console
[Install]
WantedBy=multi-user.target
UNIT
ln -sf /etc/systemd/system/oomlens-boot.service \
	"$r/etc/systemd/system/multi-user.target.wants/oomlens-boot.service"
sed -i "s/^#\?PasswordAuthentication.*/PasswordAuthentication no/" "$r/etc/ssh/sshd_config"
echo "UseDNS no" >>"$r/etc/ssh/sshd_config"
rm -f "$r/etc/machine-id"; : >"$r/etc/machine-id"' \
	bookworm "$WORK/root" http://deb.debian.org/debian >&2
t1=$(date +%s)
log "root built in $((t1 - t0)) s ($(du -sm "$WORK/root" | cut -f1) MiB)"

KVER=$(ls "$WORK/root/lib/modules")
echo "$KVER" >"$WORK/kernel-version"
python3 "$HERE/mkinitrd.py" "$WORK/root" "$WORK" >&2
# 8 GiB, sparse: the images imported at boot and the pods' layers
mkfs.ext4 -q -F -L oomlens-v2 -d "$WORK/root" "$WORK/root.ext4" 8G
rm -rf "$WORK/root" "$WORK/deb"
touch "$WORK/done"
rm -rf "$OUT"
mv "$WORK" "$OUT"
log "guest ready in $(($(date +%s) - t0)) s: $OUT"
echo "$OUT"
