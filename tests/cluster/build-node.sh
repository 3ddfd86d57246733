#!/bin/bash
# Builds the Kubernetes node programs the cluster tests run: kube-apiserver,
# kube-controller-manager, kube-scheduler and kubelet 1.20.2, from the source
# package of Debian 11 (bullseye) with Debian 12's Go 1.19 (docs/cluster.md
# says why each step is there). Cached outside build/ so `make clean` keeps
# them, in a directory keyed by version and recipe:
#   ${OOMLENS_KUBE_CACHE:-/var/cache/oomlens}/kube-<version>-<recipe hash>/bin
# (the source and Go's build cache in kube-<version>-src beside it).
# Prints the bin directory on stdout. Idempotent: a complete cache returns
# at once. Needs root for apt-get (when a package is missing) and network
# access to Debian's archive (first build only).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
VERSION=1.20.2
PKGVER=1.20.5+really1.20.2
ORIG=kubernetes_${PKGVER}.orig.tar.gz
PROGRAMS="kube-apiserver kube-controller-manager kube-scheduler kubelet"
RECIPE=$(cat "$0" "$HERE/kubelet-tunables.sed" | sha256sum | cut -c1-12)
ROOT=${OOMLENS_KUBE_CACHE:-/var/cache/oomlens}
OUT=$ROOT/kube-$VERSION-$RECIPE
log() { echo "build-node: $*" >&2; }

complete() {
	local p
	for p in $PROGRAMS; do [ -x "$OUT/bin/$p" ] || return 1; done
}
if complete; then echo "$OUT/bin"; exit 0; fi

need=""
for p in golang-1.19-go golang-github-modern-go-reflect2-dev; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		need="$need $p"
done
if [ -n "$need" ]; then
	log "installing$need"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		--no-install-recommends $need >&2
fi
GO=/usr/lib/go-1.19/bin/go

# The source and the Go build cache depend on the version only; the
# binaries on the recipe too.
WORK=$ROOT/kube-$VERSION-src
mkdir -p "$WORK"
# The source: bullseye's orig tarball, fetched through apt with a sources
# list of our own so the machine's apt configuration stays as it is. Only
# the tarball is on the archive today (the .dsc and .debian.tar.xz answer
# 404); its checksum is checked against the archive's Sources index.
if [ ! -f "$WORK/$ORIG.ok" ]; then
	log "fetching the kubernetes $PKGVER source from bullseye"
	mkdir -p "$WORK/apt/lists/partial"
	echo "deb-src http://deb.debian.org/debian bullseye main" \
		>"$WORK/apt/sources.list"
	APTOPT=(-o Dir::Etc::SourceList="$WORK/apt/sources.list"
		-o Dir::Etc::SourceParts=- -o Dir::State::Lists="$WORK/apt/lists"
		-o APT::Get::List-Cleanup=0 -o Debug::NoLocking=1)
	apt-get "${APTOPT[@]}" update >&2
	(cd "$WORK" && apt-get "${APTOPT[@]}" --download-only source \
		kubernetes >&2 || true)
	[ -f "$WORK/$ORIG" ] || { log "no $ORIG downloaded"; exit 1; }
	want=$(/usr/lib/apt/apt-helper cat-file "$WORK"/apt/lists/*_Sources* |
		awk -v f="$ORIG" '$0 ~ /^Checksums-Sha256:/ {s=1; next}
			/^[A-Z]/ {s=0} s && $3 == f && !w {w = $1}
			END {print w}')
	got=$(sha256sum "$WORK/$ORIG" | cut -d' ' -f1)
	if [ -z "$want" ] || [ "$want" != "$got" ]; then
		log "checksum of $ORIG: got $got, the archive says '${want}'"
		exit 1
	fi
	touch "$WORK/$ORIG.ok"
fi

# GOPATH mode: the tarball's vendor/ is what it builds with (modules mode
# wants go.mod updates that -mod=vendor forbids).
GOPATH=$WORK/gopath
TREE=$GOPATH/src/k8s.io/kubernetes
if [ ! -d "$TREE/cmd" ]; then
	log "unpacking"
	mkdir -p "$TREE"
	tar xzf "$WORK/$ORIG" -C "$TREE" --strip-components=1
	# vendored reflect2 1.0.1 crashes under Go >= 1.18 (fatal error: fault
	# in mapiterinit on the first custom-resource create): Debian's 1.0.2.
	rm -rf "$TREE/vendor/github.com/modern-go/reflect2"
	cp -r /usr/share/gocode/src/github.com/modern-go/reflect2 \
		"$TREE/vendor/github.com/modern-go/reflect2"
	rm -f "$TREE/vendor/github.com/modern-go/reflect2/go.mod"
fi
export GOPATH GO111MODULE=off CGO_ENABLED=0 GOFLAGS=
export GOCACHE=$WORK/gocache
cd "$TREE"

# pkg/generated/openapi is generated upstream by a make step the tarball
# does not carry out: build the vendored openapi-gen and run it over every
# package tagged +k8s:openapi-gen (as build/root/Makefile.generated_files).
if [ ! -f pkg/generated/openapi/zz_generated.openapi.go ]; then
	log "generating pkg/generated/openapi"
	$GO build -o "$WORK/openapi-gen" ./vendor/k8s.io/kube-openapi/cmd/openapi-gen
	dirs=$(find -L . \( -path ./_output -o -path ./.git -o -path ./staging \
		-o -path ./third_party -o -path '*/testdata' \) -prune -o \
		-name '*.go' -print |
		{ xargs grep --color=never -l '^// *+k8s:openapi-gen=' || true; } |
		grep -v -e '^./vendor/k8s.io/code-generator/' \
			-e '^./vendor/k8s.io/sample-apiserver/' |
		xargs -n1 dirname | sed 's#^\./#k8s.io/kubernetes/#' |
		LC_ALL=C sort -u | paste -sd, -)
	# (grep exits 1 on a batch without a tag: xargs then says 123)
	[ -n "$dirs" ] || { log "no +k8s:openapi-gen packages found"; exit 1; }
	"$WORK/openapi-gen" --logtostderr -i "$dirs" \
		-p k8s.io/kubernetes/pkg/generated/openapi -O zz_generated.openapi \
		-h vendor/k8s.io/code-generator/hack/boilerplate.go.txt \
		-r "$WORK/openapi-violations.report" >&2
fi

# kubelet changes host sysctls (vm.overcommit_memory, kernel.panic, ...)
# unless --protect-kernel-defaults, which refuses to start here: an overlay
# of one file makes it log the differences instead.
mkdir -p "$WORK/overlay"
CMF=pkg/kubelet/cm/container_manager_linux.go
sed -f "$HERE/kubelet-tunables.sed" "$CMF" >"$WORK/overlay/container_manager_linux.go"
if cmp -s "$CMF" "$WORK/overlay/container_manager_linux.go"; then
	log "the kubelet tunables change did not apply to $CMF"; exit 1
fi
printf '{"Replace":{"%s":"%s"}}\n' "$TREE/$CMF" \
	"$WORK/overlay/container_manager_linux.go" >"$WORK/overlay.json"

LDFLAGS="-s -w"
for kv in gitVersion=v$VERSION gitMajor=1 gitMinor=20 gitTreeState=clean \
	buildDate=2021-01-13T00:00:00Z; do
	for pkg in k8s.io/kubernetes/vendor/k8s.io/component-base/version \
		k8s.io/kubernetes/vendor/k8s.io/client-go/pkg/version; do
		LDFLAGS="$LDFLAGS -X $pkg.$kv"
	done
done
mkdir -p "$OUT/bin"
for p in $PROGRAMS; do
	[ -x "$OUT/bin/$p" ] && continue
	log "building $p (minutes on 2 cores; cached in $OUT)"
	$GO build -overlay "$WORK/overlay.json" -ldflags "$LDFLAGS" \
		-o "$OUT/bin/$p.tmp" "./cmd/$p"
	mv "$OUT/bin/$p.tmp" "$OUT/bin/$p"
done
"$OUT/bin/kube-apiserver" --version >&2
echo "$OUT/bin"
