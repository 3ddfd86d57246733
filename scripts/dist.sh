#!/bin/bash
# make dist: the release archives, for linux/amd64 and linux/arm64, in
# $B/dist (docs/build.md, Distributables):
#   oomlens-<version>-linux-<arch>.tar.gz   oomlens-agent, oomlens-sidecar,
#       oomlens-sidecar-upload (the sidecar's uploader),
#       kubectl-oomlens (stripped), LICENSE, README, in one top directory
#   kubectl-oomlens-<version>-linux-<arch>.tar.gz   bin/kubectl-oomlens and
#       LICENSE: the krew archive
#   SHA256SUMS   of every archive
#   oomlens.yaml   the krew manifest, from kubectl-oomlens/krew.yaml with
#       both platforms and their archives' sha256
#   oomlens-agent-<version>.oci.tar, oomlens-sidecar-<version>.oci.tar
#       the product images, one OCI image index each with an image per
#       architecture, from the binaries of these archives
#       (images/oci-index.sh)
# The binaries are the lean link's (docs/build.md): everything static but
# libc. amd64 is the everyday build ($B/bin, make); arm64 is cross-built
# with Debian's gcc-aarch64-linux-gnu into its own tree ($B/dist/arm64)
# against the arm64 static libraries (images/build-static-libs.sh --arch
# arm64) and the sysroot of scripts/cross-sysroot.sh, both built on first
# use (the first time needs deb.debian.org). Each binary is checked: it
# needs libc and the loader and nothing else.
# Environment: DIST_URL (where the archives will be published, the krew
# manifest's uri; the default is a placeholder), DIST_ARCHES ("amd64
# arm64"), JOBS (make -j, 2), MAKE.
set -euo pipefail
cd "$(dirname "$0")/.."
B=${B:-build}
MAKE=${MAKE:-make}
JOBS=${JOBS:-2}
VERSION=$(cat VERSION)
DIST_URL=${DIST_URL:-https://github.com/oomlens/oomlens/releases/download/v$VERSION}
ARCHES=${DIST_ARCHES:-amd64 arm64}
DIST=$B/dist
PROGS=(oomlens-agent oomlens-sidecar oomlens-sidecar-upload kubectl-oomlens)
STATIC_PKGS="nghttp2 curl libarchive openssl"
log() { echo "dist: $*" >&2; }

# Reproducible archives: the last commit's time, names sorted, root-owned.
EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}
tarball() { # OUT DIR ENTRY...: ENTRY... of DIR, gzip without a name or time
	local out=$1 dir=$2
	shift 2
	tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$EPOCH" \
		--format=gnu -C "$dir" -cf - "$@" | gzip -9n >"$out"
}

# check BIN: the lean link's promise, libc and its loader only (none for
# the static-pie programs).
check() {
	local bin=$1 needed
	file -b "$bin" | grep -Eq 'statically linked|static-pie linked|dynamically linked' || {
		log "$bin: not an executable: $(file -b "$bin")"; exit 1; }
	needed=$(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' |
		{ grep -Ev '^(libc\.so\.6|ld-linux-(x86-64|aarch64)\.so\.[12])$' || true; } |
		paste -sd' ')
	[ -z "$needed" ] || {
		log "$bin needs more than libc: $needed (is the static cache there? make static-libs)"
		exit 1
	}
}

# build_amd64: the everyday lean build's programs, in $B/bin.
build_amd64() {
	nice -n 15 "$MAKE" --no-print-directory -j"$JOBS" B="$B" \
		"${PROGS[@]/#/$B/bin/}" >&2
	case $("$MAKE" -s --no-print-directory B="$B" print-LINK_KIND) in
	"lean (static cache)") ;;
	*) log "amd64: no static cache: make static-libs first"; exit 1 ;;
	esac
	BIN=$B/bin
}

# build_arm64: the cross build, in $B/dist/arm64/bin.
build_arm64() {
	local sysroot p prefix libdirs=() incdirs=() obj=$B/dist/arm64
	command -v aarch64-linux-gnu-gcc >/dev/null || {
		log "no aarch64-linux-gnu-gcc: apt-get install gcc-aarch64-linux-gnu libc6-dev-arm64-cross"
		exit 1
	}
	sysroot=$(scripts/cross-sysroot.sh sysroot)
	for p in $STATIC_PKGS; do
		prefix=$(nice -n 15 images/build-static-libs.sh --arch arm64 "$p")
		libdirs+=("-L$prefix/lib")
		incdirs+=("-isystem $prefix/include")
	done
	# The Makefile finds the arm64 static prefixes through OOMLENS_ARCH.
	# The sysroot's -L comes after the static prefixes' (given here first
	# too): its Debian libssl.a and libcrypto.a must not win over the
	# cache's. The headers: curl's and libarchive's from their prefixes
	# (amd64 takes Debian's -dev of the same versions), the rest from the
	# sysroot, all system headers as on the build machine.
	OOMLENS_ARCH=arm64 nice -n 15 "$MAKE" --no-print-directory -j"$JOBS" \
		B="$obj" CC=aarch64-linux-gnu-gcc AR=aarch64-linux-gnu-ar \
		CFLAGS="-O2 -g ${incdirs[*]} -isystem $sysroot/usr/include -isystem $sysroot/usr/include/aarch64-linux-gnu" \
		LDFLAGS="${libdirs[*]} -L$sysroot/usr/lib/aarch64-linux-gnu" \
		"${PROGS[@]/#/$obj/bin/}" >&2
	case $(OOMLENS_ARCH=arm64 "$MAKE" -s --no-print-directory B="$obj" print-LINK_KIND) in
	"lean (static cache)") ;;
	*) log "arm64: the Makefile did not find the arm64 static cache"; exit 1 ;;
	esac
	BIN=$obj/bin
}

mkdir -p "$DIST"
rm -f "$DIST"/*.tar.gz "$DIST"/*.oci.tar "$DIST/SHA256SUMS" "$DIST/oomlens.yaml"
for arch in $ARCHES; do
	t0=$SECONDS
	case $arch in
	amd64) build_amd64; STRIP="strip" ;;
	arm64) build_arm64; STRIP=aarch64-linux-gnu-strip ;;
	*) log "unknown architecture '$arch' (amd64, arm64)"; exit 2 ;;
	esac
	stage=$DIST/stage-$arch
	top=oomlens-$VERSION-linux-$arch
	rm -rf "$stage"
	mkdir -p "$stage/$top" "$stage/krew/bin"
	for p in "${PROGS[@]}"; do
		"$STRIP" -o "$stage/$top/$p" "$BIN/$p"
		check "$stage/$top/$p"
	done
	cp LICENSE "$stage/$top/"
	cat >"$stage/$top/README" <<-EOF
		oomlens $VERSION for linux/$arch: Kubernetes OOM-kill forensics.

		  oomlens-agent    the node agent (a DaemonSet: helm/oomlens)
		  oomlens-sidecar  the per-pod sidecar and its tools (pmap, trim, ...)
		  oomlens-sidecar-upload
		                   the sidecar's uploader, which it runs from
		                   beside itself in a pod (keep them together)
		  kubectl-oomlens  the kubectl plugin: put it on PATH, then
		                   kubectl oomlens list | show | download

		All static (glibc included) but kubectl-oomlens, which needs glibc
		2.36 or later. Each prints its usage with --help. Source,
		documentation and licence: LICENSE (this directory).
	EOF
	tarball "$DIST/$top.tar.gz" "$stage" "$top"
	cp "$stage/$top/kubectl-oomlens" "$stage/krew/bin/"
	cp LICENSE "$stage/krew/"
	tarball "$DIST/kubectl-oomlens-$VERSION-linux-$arch.tar.gz" "$stage/krew" bin LICENSE
	rm -rf "$stage"
	log "$arch: $top.tar.gz, kubectl-oomlens-$VERSION-linux-$arch.tar.gz ($((SECONDS - t0)) s)"
done
(cd "$DIST" && sha256sum -- *.tar.gz >SHA256SUMS)

# The krew manifest: the template's head, then its platform entry (the
# last item, from "  - selector:") once per architecture.
tmpl=kubectl-oomlens/krew.yaml
subst() { # ARCH SHA256: stdin with the template's variables put in
	sed -e "s|\${VERSION}|$VERSION|g" -e "s|\${DIST_URL}|$DIST_URL|g" \
		-e "s|\${ARCH}|$1|g" -e "s|\${SHA256}|$2|g"
}
{
	echo "# generated by make dist (scripts/dist.sh) from $tmpl"
	sed '/^  - selector:/,$d' "$tmpl" | grep -v '^#' | subst "" ""
	for arch in $ARCHES; do
		sum=$(awk -v f="kubectl-oomlens-$VERSION-linux-$arch.tar.gz" \
			'$2 == f {print $1}' "$DIST/SHA256SUMS")
		sed -n '/^  - selector:/,$p' "$tmpl" | subst "$arch" "$sum"
	done
} >"$DIST/oomlens.yaml"

# The images, from the binaries just archived.
t0=$SECONDS
# shellcheck disable=SC2086 # one word an architecture
B=$B images/oci-index.sh $ARCHES
log "images: $((SECONDS - t0)) s"
log "$DIST: $(cd "$DIST" && echo *.tar.gz SHA256SUMS oomlens.yaml *.oci.tar)"
