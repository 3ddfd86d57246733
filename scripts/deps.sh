#!/bin/sh
# Installs the Debian packages oomlens needs to build and test. Idempotent:
# only what is missing is installed; without root it prints the command.
set -eu
PKGS="gcc make libcurl4-openssl-dev libjson-c-dev libwebsockets-dev
libcriterion-dev zlib1g-dev libyaml-dev python3 python3-pytest python3-yaml procps
cppcheck clang-format qemu-system-x86 busybox-static openssl
openjdk-17-jdk-headless kmod cpio chromium
musl-tools libjemalloc2 gdb strace time
containerd runc containernetworking-plugins buildah mmdebstrap catatonit
golang-1.19-go golang-github-modern-go-reflect2-dev iproute2 curl"
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
	echo "deps: missing packages:$missing" >&2
	echo "deps: run: sudo apt-get update && sudo apt-get install -y$missing" >&2
	exit 1
fi
echo "deps: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
