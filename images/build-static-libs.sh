#!/bin/bash
# Builds minimal static libraries from Debian bookworm's own source packages,
# for the agent's and sidecar's images only (images/images.sh): the
# installed shared libcurl and libarchive pull in Kerberos, LDAP, GnuTLS,
# libxml2 and ICU (about 45 MiB) for protocols and formats oomlens never
# uses. Usage: build-static-libs.sh [--cached] nghttp2|curl|libarchive|openssl
# Prints the prefix (lib/*.a, include/) on stdout:
#   ${OOMLENS_STATIC_CACHE:-/var/cache/oomlens}/static-<pkg>-<version>-<recipe hash>
# Idempotent: a complete prefix returns at once. The sources come through
# apt with a sources list of our own (the machine's apt configuration stays
# as it is), checked against the archive's Sources index; the first build
# needs network access to deb.debian.org. curl needs nghttp2's prefix,
# which it builds first. openssl: the libraries and headers only.
# --cached: the newest complete prefix of the current recipe already in the
# cache, or exit 1 with nothing printed; never downloads or builds (the
# Makefile asks this at each link: ~20 ms).
# --arch arm64 (or OOMLENS_ARCH=arm64): cross-built for linux/arm64 with
# Debian's cross toolchain (gcc-aarch64-linux-gnu) against the arm64
# sysroot of scripts/cross-sysroot.sh (zlib, OpenSSL's headers), for
# `make dist`; cached apart, as static-<pkg>-arm64-<version>-<recipe hash>.
# The default (amd64, the build machine's) keeps its names and hashes.
set -euo pipefail
CACHED=
ARCH=${OOMLENS_ARCH:-amd64}
while [ $# -gt 1 ]; do
	case $1 in
	--cached) CACHED=--cached; shift ;;
	--arch) ARCH=$2; shift 2 ;;
	*) break ;;
	esac
done
ROOT=${OOMLENS_STATIC_CACHE:-/var/cache/oomlens}
SRC=$ROOT/static-src
PKG=${1:?usage: $0 [--cached] [--arch amd64|arm64] nghttp2|curl|libarchive|openssl}
log() { echo "build-static-libs: $*" >&2; }
APTOPT=(-o Dir::Etc::SourceList="$SRC/apt/sources.list"
	-o Dir::Etc::SourceParts=- -o Dir::State::Lists="$SRC/apt/lists"
	-o Dir::Cache="$SRC/apt/cache"
	-o APT::Get::List-Cleanup=0 -o Debug::NoLocking=1)

# bookworm's Sources indices, main and its security updates (libarchive's
# newest fixes are only there), fetched once per sources list (delete
# $SRC/apt to refresh).
SOURCES="deb-src http://deb.debian.org/debian bookworm main
deb-src http://security.debian.org/debian-security bookworm-security main"
sources_index() {
	if compgen -G "$SRC/apt/lists/*_Sources*" >/dev/null &&
		[ "$(cat "$SRC/apt/sources.list" 2>/dev/null)" = "$SOURCES" ]; then
		return 0
	fi
	log "fetching bookworm's Sources indices"
	mkdir -p "$SRC/apt/lists/partial" "$SRC/apt/cache/archives/partial"
	echo "$SOURCES" >"$SRC/apt/sources.list"
	apt-get "${APTOPT[@]}" update >&2
}

# The newest version of source package $1 in the indices.
src_version() {
	/usr/lib/apt/apt-helper cat-file "$SRC"/apt/lists/*_Sources* |
		awk -v p="$1" '/^Package: / {m = ($2 == p)} m && /^Version: / {print $2}' |
		sort -V | tail -1
}

# want FILE: its SHA-256 in the index (empty when not listed).
want() {
	/usr/lib/apt/apt-helper cat-file "$SRC"/apt/lists/*_Sources* |
		awk -v f="$1" '$0 ~ /^Checksums-Sha256:/ {s=1; next}
			/^[A-Z]/ {s=0} s && $3 == f && !w {w = $1} END {print w}'
}

# unpack PKG VERSION DIR: the source tree in DIR, patched by dpkg-source
# when the .dsc downloads, else the orig tarball as it is.
unpack() {
	local pkg=$1 ver=$2 dir=$3 up f files
	up=${ver#*:}
	up=${up%-*}
	mkdir -p "$SRC/dl"
	# (apt-get source fails when only part is on the archive: checked below)
	(cd "$SRC/dl" && { apt-get "${APTOPT[@]}" --download-only source \
		"$pkg=$ver" >&2 || true; })
	files=()
	for f in "$SRC/dl/${pkg}_${up}".orig.tar.* "$SRC/dl/${pkg}_${ver#*:}".*; do
		[ -f "$f" ] && files+=("${f##*/}")
	done
	[ ${#files[@]} -gt 0 ] || { log "nothing of $pkg $ver downloaded"; exit 1; }
	for f in "${files[@]}"; do
		if [ "$(want "$f")" != "$(sha256sum "$SRC/dl/$f" | cut -d' ' -f1)" ]; then
			log "checksum of $f does not match the Sources index"
			exit 1
		fi
	done
	rm -rf "$dir"
	if [ -f "$SRC/dl/${pkg}_${ver#*:}.dsc" ]; then
		dpkg-source --no-check -x "$SRC/dl/${pkg}_${ver#*:}.dsc" "$dir" >&2
	else
		mkdir -p "$dir"
		for f in "$SRC/dl/${pkg}_${up}".orig.tar.*; do
			case $f in *.asc) continue ;; esac # its signature
			tar -xf "$f" -C "$dir" --strip-components=1
			break
		done
	fi
}

# Small code: each function and datum in its own section, so the image
# binaries' --gc-sections drops what oomlens never calls.
CFLAGS_STATIC="-O2 -g0 -ffunction-sections -fdata-sections -fPIE"

configure_nghttp2() {
	# Debian's orig tarball is the git tree (no configure): CMake.
	cmake -S . -B build -DCMAKE_BUILD_TYPE=None -DCMAKE_C_FLAGS="$CFLAGS" \
		-DENABLE_LIB_ONLY=ON -DENABLE_STATIC_LIB=ON -DENABLE_SHARED_LIB=OFF \
		-DENABLE_DOC=OFF -DCMAKE_INSTALL_LIBDIR=lib \
		-DCMAKE_INSTALL_PREFIX="${1#--prefix=}"
}

configure_curl() {
	# HTTP and HTTPS only, over OpenSSL; HTTP/2 through nghttp2 (the
	# client asks for it on TLS, kube_client.c). zlib for Content-Encoding.
	PKG_CONFIG_PATH=$NGHTTP2/lib/pkgconfig ./configure \
		--enable-static --disable-shared --disable-dependency-tracking \
		--with-openssl --with-nghttp2="$NGHTTP2" --with-zlib \
		--with-ca-bundle=/etc/ssl/certs/ca-certificates.crt --without-ca-path \
		--disable-ldap --disable-ldaps --disable-rtsp --disable-ftp \
		--disable-file --disable-dict --disable-telnet --disable-tftp \
		--disable-pop3 --disable-imap --disable-smtp --disable-gopher \
		--disable-mqtt --disable-smb --disable-manual --disable-ntlm-wb \
		--disable-alt-svc --disable-hsts --disable-doh --disable-netrc \
		--disable-progress-meter \
		--without-libssh2 --without-libssh --without-librtmp \
		--without-libidn2 --without-libpsl --without-brotli --without-zstd \
		--without-gssapi --without-libgsasl --without-ngtcp2 \
		--without-nghttp3 --without-quiche --without-hyper "$@"
}

configure_openssl() {
	# The same features as Debian's libcrypto.a and libssl.a (libcurl.a
	# and libwebsockets.a are built against Debian's headers), each
	# function in its own section: Debian's archives are not, and
	# --gc-sections kept 2.3 MB of libcrypto whole, all of it resident
	# once fault-around and mlockall have seen it.
	# Debian's own directories are compiled in (the configuration file,
	# engines, modules), not this cache's: installed with DESTDIR, then
	# lib/ and include/ linked where the other prefixes have them.
	./Configure no-shared no-tests --prefix=/usr \
		--libdir="lib/$MULTIARCH" --openssldir=/usr/lib/ssl
}

# After the build, amd64 only: OpenSSL's x86_64cpuid.pl puts a call of
# OPENSSL_cpuid_setup() in .init, so every program linked with libcrypto
# ran it at start (cpuid, getenv) and faulted in two 64 KiB windows of text
# and one of .rodata for it: 176 KiB of the sidecar's `--version` RSS
# (median of 11). OPENSSL_init_crypto() runs it anyway (ossl_init_base),
# which libcurl and libwebsockets call before any TLS; a libcrypto call
# made before that (SHA256 of a bundle) takes OpenSSL's portable code,
# with the same results.
post_openssl() {
	local a="$OUT/root/usr/lib/$MULTIARCH/libcrypto.a" t
	local o=libcrypto-lib-x86_64cpuid.o
	t=$(mktemp -d)
	(cd "$t" && ar x "$a" "$o" && objcopy --remove-section=.init "$o" &&
		ar r "$a" "$o")
	rm -rf "$t"
}

configure_libarchive() {
	# The bundle writer's path only: pax_restricted tar through zlib's
	# gzip (forensics/bundle.c). Without xml2/expat the xar writer is a
	# stub, so the format table no longer drags libxml2 and ICU in.
	./configure --enable-static --disable-shared \
		--disable-dependency-tracking \
		--without-xml2 --without-expat --without-openssl --without-nettle \
		--without-mbedtls --without-cng --without-lzma --without-zstd \
		--without-lz4 --without-bz2lib --without-libb2 --without-iconv \
		--disable-acl --disable-xattr --disable-bsdtar --disable-bsdcpio \
		--disable-bsdcat --with-zlib "$@"
}

# The cross build (--arch arm64). configure_* stay as they are (their text
# is the amd64 recipe's hash); the cross compiler comes in through the
# environment (CC, a CMake toolchain file) and --host, and OpenSSL, whose
# Configure takes the target only as an argument, has its own line below.
CROSS=aarch64-linux-gnu
cross_env() {
	export CC=$CROSS-gcc AR=$CROSS-ar RANLIB=$CROSS-ranlib STRIP=$CROSS-strip
	export CPPFLAGS="-I$SYSROOT/usr/include -I$SYSROOT/usr/include/$CROSS"
	export LDFLAGS="-L$SYSROOT/usr/lib/$CROSS -Wl,-rpath-link,$SYSROOT/usr/lib/$CROSS:$SYSROOT/lib/$CROSS"
	# the sysroot's .pc files only, never the build machine's
	export PKG_CONFIG_LIBDIR=$SYSROOT/usr/lib/$CROSS/pkgconfig:$SYSROOT/usr/share/pkgconfig
	cat >"$TREE/.oomlens-toolchain.cmake" <<-EOF
		set(CMAKE_SYSTEM_NAME Linux)
		set(CMAKE_SYSTEM_PROCESSOR aarch64)
		set(CMAKE_C_COMPILER $CROSS-gcc)
		set(CMAKE_FIND_ROOT_PATH $SYSROOT)
		set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
		set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
		set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
	EOF
	export CMAKE_TOOLCHAIN_FILE=$TREE/.oomlens-toolchain.cmake
}
# configure_openssl's options (keep them in step), for linux-aarch64; CC,
# AR and RANLIB unset: Configure puts the prefix in front of its own.
cross_configure_openssl() {
	env -u CC -u AR -u RANLIB -u CPPFLAGS -u LDFLAGS ./Configure linux-aarch64 \
		--cross-compile-prefix=$CROSS- no-shared no-tests --prefix=/usr \
		--libdir="lib/$MULTIARCH" --openssldir=/usr/lib/ssl
}
cross_configure() {
	case $PKG in
	openssl) cross_configure_openssl ;;
	nghttp2) configure_nghttp2 "$@" ;;
	*) "configure_$PKG" "$@" --host=$CROSS ;;
	esac
}

case $PKG in
nghttp2 | curl | libarchive | openssl) ;;
*) log "unknown package '$PKG'"; exit 2 ;;
esac
case $ARCH in
amd64) NAME=static-$PKG ;;
arm64)
	NAME=static-$PKG-arm64
	SYSROOT=$("$(dirname "$0")/../scripts/cross-sysroot.sh" $CACHED sysroot) || {
		log "no arm64 sysroot (scripts/cross-sysroot.sh sysroot)"
		exit 1
	}
	command -v $CROSS-gcc >/dev/null || [ -n "$CACHED" ] || {
		log "no $CROSS-gcc: apt-get install gcc-aarch64-linux-gnu libc6-dev-arm64-cross"
		exit 1
	}
	;;
*) log "unknown architecture '$ARCH' (amd64, arm64)"; exit 2 ;;
esac
NGHTTP2=
# shellcheck disable=SC2086 # $CACHED: empty or one word
[ "$PKG" = curl ] && NGHTTP2=$("$0" $CACHED --arch "$ARCH" nghttp2)
RECIPE=$( (declare -f "configure_$PKG"; echo "$CFLAGS_STATIC $NGHTTP2"
	if [ "$PKG$ARCH" = opensslamd64 ]; then declare -f post_openssl; fi
	# the cross recipe besides, for arm64 only
	if [ "$ARCH" != amd64 ]; then
		declare -f cross_env
		if [ "$PKG" = openssl ]; then declare -f cross_configure_openssl
		else declare -f cross_configure; fi
		echo "$ARCH $SYSROOT"
	fi) |
	sha256sum | cut -c1-12)
if [ -n "$CACHED" ]; then
	found=$(for d in "$ROOT/$NAME"-*-"$RECIPE"; do
		[ -f "$d/.complete" ] && echo "$d"
	done | sort -V | tail -1)
	[ -n "$found" ] || exit 1
	echo "$found"
	exit 0
fi
MULTIARCH=$(dpkg-architecture -a"$ARCH" -qDEB_HOST_MULTIARCH 2>/dev/null)
sources_index
VER=$(src_version "$PKG")
[ -n "$VER" ] || { log "no $PKG in bookworm's Sources index"; exit 1; }
OUT=$ROOT/$NAME-${VER#*:}-$RECIPE
if [ -f "$OUT/.complete" ]; then echo "$OUT"; exit 0; fi

log "building static $PKG $VER for $ARCH (a few minutes; cached in $OUT)"
TREE=$SRC/${NAME#static-}-${VER#*:}
unpack "$PKG" "$VER" "$TREE"
cd "$TREE"
# dpkg-source's patches may leave configure older than configure.ac:
# the shipped configure is what we run, so make must not regenerate it.
# One time for all (touch -r): a plain touch gives each file its own
# nanoseconds, and a config.h.in a few microseconds older than the
# aclocal.m4 touched after it sent libarchive's make to autoheader.
touch "$TREE/.oomlens-stamp"
find . \( -name configure -o -name Makefile.in -o -name aclocal.m4 \
	-o -name config.h.in \) -exec touch -r "$TREE/.oomlens-stamp" {} +
export CFLAGS=$CFLAGS_STATIC
MAKEDIR=. # CMake builds out of tree
[ "$PKG" = nghttp2 ] && MAKEDIR=build
CONFIGURE=configure_$PKG
[ "$ARCH" = amd64 ] || { cross_env; CONFIGURE=cross_configure; }
"$CONFIGURE" --prefix="$OUT" >&2 2>&1 || {
	log "configure failed: $TREE/config.log"
	exit 1
}
rm -rf "$OUT"
cd "$MAKEDIR"
BUILD_TARGET=
[ "$PKG" = openssl ] && BUILD_TARGET=build_libs
# shellcheck disable=SC2086 # empty: the default target
make -j"$(nproc)" $BUILD_TARGET >&2
if [ "$PKG" = openssl ]; then
	make DESTDIR="$OUT/root" install_dev >&2
	[ "$ARCH" = amd64 ] && post_openssl
	ln -s "root/usr/lib/$MULTIARCH" "$OUT/lib"
	ln -s root/usr/include "$OUT/include"
else
	make install >&2
fi
touch "$OUT/.complete"
echo "$OUT"
