#!/bin/bash
# The product images for every architecture of `make dist`, from the
# binaries of its release archives, as one OCI image index per product
# (docs/build.md, Distributables; no registry: archives only):
#   $B/dist/oomlens-agent-VERSION.oci.tar     localhost/oomlens-agent:VERSION
#   $B/dist/oomlens-sidecar-VERSION.oci.tar   localhost/oomlens-sidecar:VERSION
# Each an oci-archive (an OCI image layout, tarred) whose index lists one
# image per architecture (linux/amd64, linux/arm64). Each image is what
# images.sh puts in the amd64 image the cluster tests import (that one is
# left as it is): scratch + the binaries (products.sh) + the CA bundle +
# /tmp, the product's Containerfile, the same OCI labels. Every product's
# binaries are static-pie: no libc, no loader (a dynamic one would get
# the libc and loader it asks for: amd64's this machine's, arm64's
# bookworm's arm64 libc6, unpacked by scripts/cross-sysroot.sh libc).
# The binary is the one in oomlens-VERSION-linux-ARCH.tar.gz, byte for
# byte (stripped; images.sh's keeps its symbol table). Nothing runs inside an image while it is
# built (FROM scratch, COPY only): no emulation, no binfmt.
# The layers' files and the images' creation time are the last commit's
# time (SOURCE_DATE_EPOCH overrides it), as the release archives.
# buildah keeps its storage under $B/dist/buildah (vfs) and removes what it
# built once the archives are written.
# Usage: oci-index.sh ARCH... (amd64, arm64; the release archives exist)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/.." && pwd)
B=${B:-build}
case $B in /*) ;; *) B=$TOP/$B ;; esac
DIST=$B/dist
CTX=$DIST/oci-ctx
VERSION=$(cat "$TOP/VERSION")
PRODUCTS=(oomlens-agent oomlens-sidecar)
# shellcheck source=images/products.sh
. "$HERE/products.sh"
BUILDAH=(buildah --root "$DIST/buildah/root" --runroot "$DIST/buildah/run"
	--storage-driver vfs)
CA=/etc/ssl/certs/ca-certificates.crt
log() { echo "oci-index: $*" >&2; }
[ $# -gt 0 ] || { log "usage: $0 ARCH..."; exit 2; }
command -v buildah >/dev/null || {
	log "no buildah: apt-get install buildah (make deps DEPS=dist)"
	exit 1
}

# The labels images.sh gives (its REVISION, EPOCH, CREATED: keep in step).
REVISION=$(git -C "$TOP" rev-parse HEAD 2>/dev/null || echo unknown)
EPOCH=${SOURCE_DATE_EPOCH:-$(git -C "$TOP" log -1 --format=%ct 2>/dev/null || date +%s)}
CREATED=$(date -u -d "@$EPOCH" +%Y-%m-%dT%H:%M:%SZ)
LABELS=(--label "org.opencontainers.image.version=$VERSION"
	--label "org.opencontainers.image.revision=$REVISION"
	--label "org.opencontainers.image.created=$CREATED")

# libroot ARCH: LIBROOT, the directory whose lib/ holds ARCH's libc and
# loader at the paths they have on a Debian system, and MULTIARCH, its
# lib/ subdirectory.
libroot() {
	case $1 in
	amd64) MULTIARCH=x86_64-linux-gnu LIBROOT= ;;
	arm64) MULTIARCH=aarch64-linux-gnu
		LIBROOT=$("$TOP/scripts/cross-sysroot.sh" libc) ;;
	*) log "unknown architecture '$1' (amd64, arm64)"; exit 2 ;;
	esac
}

# copy_libs ROOTFS BIN ARCH: BIN's loader (PT_INTERP) at its path and
# each library it needs at lib/$MULTIARCH, from ARCH's LIBROOT; the
# release archives' check let only libc and the loader through. A static
# program (every product now: static-pie) needs neither: nothing is
# copied, and no libc is fetched.
copy_libs() {
	local root=$1 bin=$2 from interp lib src
	interp=$(readelf -lW "$bin" |
		sed -n 's/.*\[Requesting program interpreter: \(.*\)\]/\1/p')
	if [ -z "$interp" ]; then
		readelf -dW "$bin" | grep -q '(NEEDED)' && {
			log "$bin: libraries but no program interpreter"; exit 1; }
		return 0
	fi
	libroot "$3"
	from=$LIBROOT
	install -D -m 0755 "$(readlink -f "$from$interp")" "$root$interp"
	for lib in $(readelf -dW "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
		[ "$lib" = "$(basename "$interp")" ] && continue
		src=$from/lib/$MULTIARCH/$lib
		[ -e "$src" ] || { log "$bin needs $lib: not in $from/lib/$MULTIARCH"; exit 1; }
		install -D -m 0755 "$(readlink -f "$src")" "$root/lib/$MULTIARCH/$lib"
	done
}

# image PRODUCT ARCH: PRODUCT's image for linux/ARCH in buildah's storage,
# as localhost/PRODUCT:VERSION-ARCH.
image() {
	local name=$1 arch=$2 ctx=$CTX/$1-$2 top p progs=()
	top=oomlens-$VERSION-linux-$arch
	read -ra progs <<<"$(product_programs "$name")"
	rm -rf "$ctx"
	mkdir -p "$ctx/rootfs/usr/bin" "$ctx/bin"
	tar -xzf "$DIST/$top.tar.gz" -C "$ctx/bin" --strip-components=1 "${progs[@]/#/$top/}"
	for p in "${progs[@]}"; do
		install -m 0755 "$ctx/bin/$p" "$ctx/rootfs/usr/bin/$p"
		copy_libs "$ctx/rootfs" "$ctx/bin/$p" "$arch"
	done
	install -D -m 0644 "$CA" "$ctx/rootfs$CA"
	install -d -m 1777 "$ctx/rootfs/tmp"
	"${BUILDAH[@]}" bud --quiet --layers=false --platform "linux/$arch" \
		--timestamp "$EPOCH" "${LABELS[@]}" -f "$HERE/${name#oomlens-}.Containerfile" \
		-t "localhost/$name:$VERSION-$arch" "$ctx" >/dev/null
	rm -rf "$ctx"
}

mkdir -p "$DIST" "$CTX"
for name in "${PRODUCTS[@]}"; do
	ref=localhost/$name:$VERSION
	out=$DIST/$name-$VERSION.oci.tar
	"${BUILDAH[@]}" manifest rm "$ref" >/dev/null 2>&1 || true
	"${BUILDAH[@]}" manifest create "$ref" >/dev/null
	for arch in "$@"; do
		image "$name" "$arch"
		"${BUILDAH[@]}" manifest add "$ref" \
			"containers-storage:localhost/$name:$VERSION-$arch" >/dev/null
	done
	rm -f "$out" "$out.tmp"
	"${BUILDAH[@]}" manifest push --quiet --all --format oci "$ref" \
		"oci-archive:$out.tmp:$ref" >/dev/null
	mv "$out.tmp" "$out"
	digest=$(tar -xOf "$out" index.json | sed -n 's/.*"digest":"\(sha256:[0-9a-f]*\)".*/\1/p')
	"${BUILDAH[@]}" manifest rm "$ref" >/dev/null
	for arch in "$@"; do
		"${BUILDAH[@]}" rmi "localhost/$name:$VERSION-$arch" >/dev/null
	done
	log "$(basename "$out"): $ref, linux/{$(echo "$@" | tr ' ' ,)}, index $digest"
done
rmdir "$CTX"
