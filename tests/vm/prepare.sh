#!/bin/bash
# Prepares the cgroup v2 test guest. Idempotent: what exists is reused.
#   1. apt-get download the linux-image-6.1*-amd64 package that
#      linux-image-amd64 depends on, into the cache (tests/vm/cache/ or
#      $OOMLENS_VM_CACHE); unpack it with dpkg-deb -x (no install hooks);
#   2. build the static guest helpers (exitcode, hog, kmsgclock) with
#      gcc -static;
#   3. vmlib.py prepare: extract the uncompressed vmlinux from the vmlinuz
#      once, and build the initramfs (busybox-static, guest/init, helpers,
#      virtio + 9p modules).
# Exits non-zero with a message naming what is missing.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
CACHE=${OOMLENS_VM_CACHE:-$HERE/cache}
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
mkdir -p "$CACHE"
cd "$CACHE"
# One preparation at a time (parallel test runs share the cache).
exec 9>"$CACHE/.lock"
flock 9

pick_kernel_pkg() {
	apt-cache depends linux-image-amd64 2>/dev/null |
		sed -n 's/^ *Depends: \(linux-image-6\.1[^ ]*-amd64\)$/\1/p' |
		head -n1
}

newest_deb() { # glob
	# shellcheck disable=SC2012,SC2086 # $1 is a glob
	ls -1 $1 2>/dev/null | sort -V | tail -n1
}

fetch_kernel() {
	local pkg deb
	pkg=$(pick_kernel_pkg)
	if [ -z "$pkg" ] && [ "$(id -u)" -eq 0 ]; then
		apt-get update -qq >/dev/null 2>&1 || true
		pkg=$(pick_kernel_pkg)
	fi
	if [ -n "$pkg" ]; then
		deb=$(newest_deb "${pkg}_*.deb")
		if [ -z "$deb" ]; then
			echo "vm: apt-get download $pkg" >&2
			apt-get download "$pkg" >/dev/null 2>&1 ||
				apt-get download "$pkg" >&2 || true
			deb=$(newest_deb "${pkg}_*.deb")
		fi
	fi
	# No apt metadata or no mirror: whatever was fetched before.
	[ -n "$deb" ] || deb=$(newest_deb "linux-image-6.1*-amd64_*.deb")
	if [ -z "$deb" ]; then
		echo "vm: cannot get linux-image-amd64's kernel package" >&2
		exit 1
	fi
	for old in linux-image-*.deb; do
		[ "$old" = "$deb" ] || rm -f "$old"
	done
	echo "$deb"
}

deb=$(fetch_kernel)
stamp="rootfs/.unpacked-${deb%.deb}"
if [ ! -e "$stamp" ]; then
	echo "vm: unpacking $deb" >&2
	rm -rf rootfs vmlinux
	mkdir -p rootfs
	dpkg-deb -x "$deb" rootfs
	touch "$stamp"
fi

build_static() { # name
	local src="$HERE/guest/$1.c" bin="$CACHE/$1"
	if [ ! -x "$bin" ] || [ "$src" -nt "$bin" ]; then
		gcc -std=gnu11 -O2 -Wall -static -s -o "$bin.tmp" "$src"
		mv "$bin.tmp" "$bin"
	fi
}
build_static exitcode
build_static hog
build_static kmsgclock

rebuild=0
[ -e initrd.cpio ] && [ -e vmlinux ] || rebuild=1
for f in "$HERE/guest/init" "$HERE/vmlib.py" "$HERE/prepare.sh" exitcode hog \
	kmsgclock "$stamp"; do
	[ initrd.cpio -nt "$f" ] 2>/dev/null || rebuild=1
done
if [ $rebuild = 1 ]; then
	"$PY" "$HERE/vmlib.py" prepare "$CACHE/rootfs" \
		exitcode="$CACHE/exitcode" hog="$CACHE/hog" \
		kmsgclock="$CACHE/kmsgclock"
fi
echo "vm: ready: $CACHE/vmlinux $CACHE/initrd.cpio ($(cat kernel-version))"
