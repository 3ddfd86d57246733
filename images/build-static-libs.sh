#!/bin/bash
# Builds minimal static libraries from Debian bookworm's own source packages,
# for the agent's and sidecar's images only (images/images.sh): the
# installed shared libcurl and libarchive pull in Kerberos, LDAP, GnuTLS,
# libxml2 and ICU (about 45 MiB) for protocols and formats oomlens never
# uses. Usage: build-static-libs.sh nghttp2|curl|libarchive|openssl
# Prints the prefix (lib/*.a, include/) on stdout:
#   ${OOMLENS_STATIC_CACHE:-/var/cache/oomlens}/static-<pkg>-<version>-<recipe hash>
# Idempotent: a complete prefix returns at once. The sources come through
# apt with a sources list of our own (the machine's apt configuration stays
# as it is), checked against the archive's Sources index; the first build
# needs network access to deb.debian.org. curl needs nghttp2's prefix,
# which it builds first. openssl: the libraries and headers only.
set -euo pipefail
ROOT=${OOMLENS_STATIC_CACHE:-/var/cache/oomlens}
SRC=$ROOT/static-src
PKG=${1:?usage: $0 nghttp2|curl|libarchive|openssl}
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

case $PKG in
nghttp2 | curl | libarchive | openssl) ;;
*) log "unknown package '$PKG'"; exit 2 ;;
esac
NGHTTP2=
MULTIARCH=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
[ "$PKG" = curl ] && NGHTTP2=$("$0" nghttp2)
sources_index
VER=$(src_version "$PKG")
[ -n "$VER" ] || { log "no $PKG in bookworm's Sources index"; exit 1; }
RECIPE=$( (declare -f "configure_$PKG"; echo "$CFLAGS_STATIC $NGHTTP2") |
	sha256sum | cut -c1-12)
OUT=$ROOT/static-$PKG-${VER#*:}-$RECIPE
if [ -f "$OUT/.complete" ]; then echo "$OUT"; exit 0; fi

log "building static $PKG $VER (a few minutes; cached in $OUT)"
TREE=$SRC/$PKG-${VER#*:}
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
"configure_$PKG" --prefix="$OUT" >&2 2>&1 || {
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
	ln -s "root/usr/lib/$MULTIARCH" "$OUT/lib"
	ln -s root/usr/include "$OUT/include"
else
	make install >&2
fi
touch "$OUT/.complete"
echo "$OUT"
