#!/bin/bash
# Builds the container images the cluster tests run, without a registry:
# docker archives in $B/images/ that tests/cluster/up.sh imports into the
# node's containerd (`ctr -n k8s.io images import`); pods use them with
# imagePullPolicy: Never. The product's images (agent, sidecar) are built
# from images/*.Containerfile, the test images from tests/images/.
#   oomlens-agent.tar    localhost/oomlens-agent:VERSION    (goal <= 15 MiB)
#   oomlens-sidecar.tar  localhost/oomlens-sidecar:VERSION  (goal <= 10 MiB)
# VERSION is the top-level VERSION file, the chart's appVersion (tests/helm
# checks that they agree): the tag helm/oomlens asks for by default.
#   pause.tar            localhost/oomlens-pause:1      (catatonit -P)
#   busybox.tar          localhost/oomlens-busybox:1    (+ build/victims/*)
#   jre17.tar            localhost/oomlens-jre17:1      (mmdebstrap, cached)
# Agent and sidecar are scratch + make's binaries (the sidecar's with its
# uploader: products.sh; static-pie: ldd lists no library, so none is
# copied) + the CA bundle; the binaries are the
# Makefile's, linked lean against static libcurl, nghttp2, libarchive and
# OpenSSL built from Debian's sources by build-static-libs.sh (cached in
# ${OOMLENS_STATIC_CACHE:-/var/cache/oomlens}/static-*; the first build
# needs deb.debian.org). buildah keeps its storage under $B/buildah (vfs:
# no mounts left behind); the JRE archive (about 2 minutes, 365 MiB) is
# cached outside $B in ${OOMLENS_IMAGE_CACHE:-/var/cache/oomlens/images},
# keyed by a hash of its recipe. Usage: images.sh [name...]
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/.." && pwd)
B=${B:-build}
case $B in /*) ;; *) B=$TOP/$B ;; esac
OUT=$B/images
CTX=$B/images/ctx
CACHE=${OOMLENS_IMAGE_CACHE:-/var/cache/oomlens/images}
# shellcheck source=images/products.sh
. "$HERE/products.sh"
VERSION=$(cat "$TOP/VERSION")
BUILDAH=(buildah --root "$B/buildah/root" --runroot "$B/buildah/run"
	--storage-driver vfs)
log() { echo "images: $*" >&2; }
MiB=$((1024 * 1024))

# copy_elf ROOT FILE DEST: FILE at ROOT/DEST plus every library ldd lists,
# at the path ldd gives (the dynamic loader included).
copy_elf() {
	local root=$1 file=$2 dest=$3 lib
	install -D -m 0755 "$file" "$root$dest"
	strip --strip-debug "$root$dest" 2>/dev/null || true
	# a static program (the Go victim) has no libraries: ldd says so, exit 1
	{ ldd "$file" 2>/dev/null || true; } |
		awk '/=> \//{print $3} /^\t\//{print $1}' |
		while read -r lib; do
			[ -e "$root$lib" ] && continue
			install -D -m 0755 "$(readlink -f "$lib")" "$root$lib"
		done
}

# containerfile NAME: the product's images/agent.Containerfile for
# oomlens-agent (sidecar alike), tests/images/NAME.Containerfile for a
# test image.
containerfile() {
	case $1 in
	oomlens-*) echo "$HERE/${1#oomlens-}.Containerfile" ;;
	*) echo "$TOP/tests/images/$1.Containerfile" ;;
	esac
}

# The OCI labels a build cannot write in its Containerfile: the version
# (VERSION), the commit the binaries were built from and when (that
# commit's time, as make dist's archives). A product image's
# Containerfile holds the rest (title, description, licenses, source).
REVISION=$(git -C "$TOP" rev-parse HEAD 2>/dev/null || echo unknown)
EPOCH=${SOURCE_DATE_EPOCH:-$(git -C "$TOP" log -1 --format=%ct 2>/dev/null || date +%s)}
CREATED=$(date -u -d "@$EPOCH" +%Y-%m-%dT%H:%M:%SZ)

# build NAME REF: NAME's Containerfile over the staged context $CTX/NAME,
# pushed as a docker archive $OUT/NAME.tar.
build() {
	local name=$1 ref=$2 file=$3 labels=()
	case $name in
	oomlens-*) labels=(--label "org.opencontainers.image.version=$VERSION"
		--label "org.opencontainers.image.revision=$REVISION"
		--label "org.opencontainers.image.created=$CREATED") ;;
	esac
	"${BUILDAH[@]}" bud --quiet --layers=false "${labels[@]}" \
		-f "$(containerfile "$name")" \
		-t "$ref" "$CTX/$name" >/dev/null
	rm -f "$file.tmp"
	"${BUILDAH[@]}" push --quiet "$ref" "docker-archive:$file.tmp:$ref" >/dev/null
	mv "$file.tmp" "$file"
	"${BUILDAH[@]}" rmi -f "$ref" >/dev/null 2>&1 || true
}

stage() { rm -rf "${CTX:?}/$1"; mkdir -p "$CTX/$1/rootfs"; }

# fresh ARCHIVE INPUT...: the archive exists and is newer than every input
# (the Containerfile and this script included by the callers).
fresh() {
	local a=$1 f
	shift
	[ -f "$a" ] || return 1
	for f in "$0" "$@"; do [ "$f" -nt "$a" ] && return 1; done
	return 0
}

# lean_bin NAME: make's $B/bin/NAME, linked lean (the Makefile's PROG_LIBS,
# docs/build.md): the static libcurl, nghttp2, libarchive and OpenSSL of
# build-static-libs.sh (built here when the cache lacks them: the first
# build needs deb.debian.org), every other library static but libc. The
# installed shared libcurl and libarchive would bring Kerberos, LDAP,
# GnuTLS, libxml2 and ICU into the images; a binary that still needs
# more than libc is refused.
lean_bin() {
	local name=$1 bin=$B/bin/$1 extra
	make -s -C "$TOP" --no-print-directory B="$B" static-libs >/dev/null
	make -C "$TOP" --no-print-directory B="$B" "$bin" >/dev/null
	extra=$(readelf -d "$bin" | awk '/\(NEEDED\)/ {print $NF}' |
		tr -d '[]' | grep -Ev '^(libc\.so\.6|ld-linux.*\.so\.[0-9])$' || true)
	if [ -n "$extra" ]; then
		log "$bin needs $(echo "$extra" | tr '\n' ' ')beyond libc and the loader: not lean"
		exit 1
	fi
}

# The agent's and sidecar's archives, with their size against the goal.
own_image() { # name goal-MiB
	local name=$1 goal=$2 r size p progs=()
	read -ra progs <<<"$(product_programs "$name")"
	for p in "${progs[@]}"; do lean_bin "$p"; done
	if ! fresh "$OUT/$name.tar" "${progs[@]/#/$B/bin/}" \
		"$(containerfile "$name")" "$TOP/VERSION"; then
		stage "$name"
		r=$CTX/$name/rootfs
		for p in "${progs[@]}"; do copy_elf "$r" "$B/bin/$p" "/usr/bin/$p"; done
		install -D -m 0644 /etc/ssl/certs/ca-certificates.crt \
			"$r/etc/ssl/certs/ca-certificates.crt"
		install -d -m 1777 "$r/tmp"
		build "$name" "localhost/$name:$VERSION" "$OUT/$name.tar"
	fi
	size=$(stat -c %s "$OUT/$name.tar")
	echo "images: $name.tar $((size * 10 / MiB / 10)).$((size * 10 / MiB % 10)) MiB (goal <= $goal MiB)"
	if [ "$size" -gt $((goal * MiB)) ]; then
		log "$name.tar is over its goal of $goal MiB"
		exit 1
	fi
}

pause_image() {
	fresh "$OUT/pause.tar" /usr/bin/catatonit "$(containerfile pause)" &&
		return 0
	stage pause
	install -D -m 0755 /usr/bin/catatonit "$CTX/pause/rootfs/catatonit"
	build pause localhost/oomlens-pause:1 "$OUT/pause.tar"
}

busybox_image() {
	local r=$CTX/busybox/rootfs a v
	fresh "$OUT/busybox.tar" /bin/busybox "$(containerfile busybox)" \
		"$B"/victims/* && return 0
	stage busybox
	install -D -m 0755 /bin/busybox "$r/bin/busybox"
	for a in $(/bin/busybox --list-full); do
		[ -e "$r/$a" ] || { mkdir -p "$r/$(dirname "$a")"; ln -s /bin/busybox "$r/$a"; }
	done
	install -d -m 1777 "$r/tmp"
	for v in "$B"/victims/*; do
		[ -f "$v" ] && [ -x "$v" ] && copy_elf "$r" "$v" "/usr/local/bin/$(basename "$v")"
	done
	build busybox localhost/oomlens-busybox:1 "$OUT/busybox.tar"
}

# mmdebstrap with the machine's own apt sources; man pages and docs left
# out (the JRE's postinst still needs usr/share/man/man1: the setup hook).
jre_image() {
	local key cached
	key=$( (cat "$(containerfile jre17)"; declare -f jre_image) |
		sha256sum | cut -c1-12)
	cached=$CACHE/jre17-$key.tar
	if [ ! -f "$cached" ]; then
		log "building the JRE 17 image (about 2 minutes, cached in $cached)"
		mkdir -p "$CACHE"
		stage jre17
		mmdebstrap --quiet --variant=minbase --include=openjdk-17-jre-headless \
			--dpkgopt='path-exclude=/usr/share/man/*' \
			--dpkgopt='path-exclude=/usr/share/doc/*' \
			--dpkgopt='path-exclude=/usr/share/locale/*' \
			--setup-hook='mkdir -p "$1/usr/share/man/man1"' \
			bookworm "$CTX/jre17/rootfs.tar" >&2
		build jre17 localhost/oomlens-jre17:1 "$cached.tmp"
		mv "$cached.tmp" "$cached"
		rm -rf "$CTX/jre17"
	fi
	ln -f "$cached" "$OUT/jre17.tar" 2>/dev/null || cp "$cached" "$OUT/jre17.tar"
}

mkdir -p "$OUT" "$CTX"
names=("$@")
[ ${#names[@]} -eq 0 ] && names=(oomlens-agent oomlens-sidecar pause busybox jre17)
for n in "${names[@]}"; do
	case $n in
	oomlens-agent) own_image oomlens-agent 15 ;;
	oomlens-sidecar) own_image oomlens-sidecar 10 ;;
	pause) pause_image ;;
	busybox) busybox_image ;;
	jre17) jre_image ;;
	*) log "unknown image '$n'"; exit 2 ;;
	esac
done
ls -l "$OUT"/*.tar
