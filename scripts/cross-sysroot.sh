#!/bin/bash
# The arm64 half of `make dist` (scripts/dist.sh): a sysroot holding
# bookworm's arm64 -dev packages of the libraries the programs link from
# Debian (json-c, libyaml, libwebsockets, libseccomp, libcap, zlib, and the
# OpenSSL and libuv headers libwebsockets.h includes), and qemu-user-static
# to run what the cross build makes. Usage:
#   cross-sysroot.sh [--cached] sysroot   prints the sysroot (usr/include,
#       usr/lib/aarch64-linux-gnu): ${OOMLENS_STATIC_CACHE:-/var/cache/oomlens}
#       /sysroot-arm64-<recipe hash>
#   cross-sysroot.sh [--cached] libc      prints a directory holding
#       bookworm's arm64 libc6 as it installs (lib/ld-linux-aarch64.so.1,
#       lib/aarch64-linux-gnu/libc.so.6): what an arm64 image of a dynamic
#       program would carry (images/oci-index.sh; every product is
#       static-pie now); apart from the sysroot, whose path is part of
#       the arm64 static libraries' recipe hash
#   cross-sysroot.sh [--cached] qemu      prints a qemu-aarch64-static to run
#       arm64 binaries with: the installed one, else the one of bookworm's
#       qemu-user-static .deb unpacked in the cache (never installed, so
#       nothing registers binfmt handlers)
# The machine's apt configuration and dpkg's architecture list stay as they
# are: the .debs come through apt-get download with a sources list, lists
# and status of our own (APT::Architecture=arm64), and are unpacked with
# dpkg-deb -x, never installed. The first run needs deb.debian.org.
# --cached: what is already complete, or exit 1 with nothing printed.
set -euo pipefail
CACHED=
[ "${1:-}" = --cached ] && { CACHED=1; shift; }
WHAT=${1:?usage: $0 [--cached] sysroot|libc|qemu}
ROOT=${OOMLENS_STATIC_CACHE:-/var/cache/oomlens}
APTDIR=$ROOT/cross-apt
log() { echo "cross-sysroot: $*" >&2; }

# The -dev packages and the runtime packages holding their .so links'
# targets (configure scripts link test programs against them).
PKGS="libjson-c-dev libjson-c5 libyaml-dev libyaml-0-2 libwebsockets-dev
libwebsockets17 libseccomp-dev libseccomp2 libcap-dev libcap2 zlib1g-dev
zlib1g libssl-dev libssl3 libuv1-dev libuv1"
SOURCES="deb http://deb.debian.org/debian bookworm main
deb http://security.debian.org/debian-security bookworm-security main"

# aptget ARCH ARGS...: apt-get on our own lists for ARCH (arm64, amd64).
aptget() {
	local arch=$1
	shift
	mkdir -p "$APTDIR/$arch/lists/partial" "$APTDIR/$arch/cache/archives/partial"
	: >>"$APTDIR/$arch/status"
	apt-get -o Dir::Etc::SourceList="$APTDIR/$arch/sources.list" \
		-o Dir::Etc::SourceParts=- -o Dir::State::Lists="$APTDIR/$arch/lists" \
		-o Dir::State::status="$APTDIR/$arch/status" \
		-o Dir::Cache="$APTDIR/$arch/cache" -o APT::Architecture="$arch" \
		-o APT::Architectures="$arch" -o APT::Get::List-Cleanup=0 \
		-o Debug::NoLocking=1 -o APT::Sandbox::User=root "$@"
}

# index ARCH: bookworm's Packages indices for ARCH, fetched once (delete
# $APTDIR to refresh).
index() {
	if compgen -G "$APTDIR/$1/lists/*_Packages*" >/dev/null &&
		[ "$(cat "$APTDIR/$1/sources.list" 2>/dev/null)" = "$SOURCES" ]; then
		return 0
	fi
	log "fetching bookworm's $1 Packages indices"
	mkdir -p "$APTDIR/$1"
	echo "$SOURCES" >"$APTDIR/$1/sources.list"
	aptget "$1" update >&2
}

# unpack ARCH DIR PKG...: the newest .debs of PKG... (apt checks them
# against the signed indices) unpacked into DIR.
unpack() {
	local arch=$1 dir=$2 deb
	shift 2
	rm -rf "$dir.tmp" "$dir.debs"
	mkdir -p "$dir.tmp" "$dir.debs"
	(cd "$dir.debs" && aptget "$arch" download "$@" >&2)
	for deb in "$dir.debs"/*.deb; do
		dpkg-deb -x "$deb" "$dir.tmp"
	done
	# what each .deb was, for the record
	(cd "$dir.debs" && ls) >"$dir.tmp/.debs"
	rm -rf "$dir.debs"
}

# tree NAME PKGS: the arm64 packages PKGS (one string, the recipe hashes
# it as written) unpacked into ROOT/NAME-arm64-<recipe> (printed), found
# there when complete (with --cached: nothing else). The
# .so links are absolute (/lib/...) in some packages: they are made to
# point inside the tree, so that -L (and a loader run from it) finds their
# targets.
tree() {
	local name=$1 pkgs=$2 out l
	out=$ROOT/$name-arm64-$( (echo "$pkgs $SOURCES"; declare -f unpack) |
		sha256sum | cut -c1-12)
	if [ -f "$out/.complete" ]; then echo "$out"; exit 0; fi
	[ -z "$CACHED" ] || exit 1
	index arm64
	log "unpacking arm64 $(wc -w <<<"$pkgs") package(s) into $out"
	# shellcheck disable=SC2086 # one word a package
	unpack arm64 "$out" $pkgs
	find "$out.tmp" -type l -lname '/*' | while read -r l; do
		ln -sfn "$out$(readlink "$l")" "$l"
	done
	touch "$out.tmp/.complete"
	rm -rf "$out"
	mv "$out.tmp" "$out"
	echo "$out"
}

case $WHAT in
sysroot)
	tree sysroot "$PKGS"
	;;
libc)
	tree libc libc6
	;;
qemu)
	if command -v qemu-aarch64-static >/dev/null; then
		command -v qemu-aarch64-static
		exit 0
	fi
	OUT=$ROOT/qemu-user-static-$(echo "$SOURCES" | sha256sum | cut -c1-12)
	if [ -x "$OUT/usr/bin/qemu-aarch64-static" ]; then
		echo "$OUT/usr/bin/qemu-aarch64-static"
		exit 0
	fi
	[ -z "$CACHED" ] || exit 1
	index amd64
	log "unpacking qemu-user-static into $OUT (not installed)"
	unpack amd64 "$OUT" qemu-user-static
	rm -rf "$OUT"
	mv "$OUT.tmp" "$OUT"
	echo "$OUT/usr/bin/qemu-aarch64-static"
	;;
*) log "unknown '$WHAT'"; exit 2 ;;
esac
