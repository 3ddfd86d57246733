# Shared by up.sh and down.sh: where the test node keeps its state and how
# its processes are found again. Sourced, not run.
# shellcheck shell=bash disable=SC2034 # variables for the scripts that source it
CL_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CL_TOP=$(cd "$CL_HERE/../.." && pwd)
B=${B:-build}
case $B in /*) ;; *) B=$CL_TOP/$B ;; esac
# One node per host: fixed ports, one state directory outside build/ (so
# `make clean` never deletes a directory with live mounts under it).
RUN=${OOMLENS_CLUSTER_DIR:-/var/lib/oomlens-cluster}
SOCK=$RUN/run/containerd.sock
NODE=oomlens-node
API_PORT=${OOMLENS_API_PORT:-6443}
ETCD_PORT=${OOMLENS_ETCD_PORT:-12379}
BRIDGE=oomlens0
POD_SUBNET=${OOMLENS_POD_SUBNET:-10.244.0.0/24}
POD_GW=${POD_SUBNET%.*}.1
SVC_RANGE=10.96.0.0/16
CACHE=${OOMLENS_KUBE_CACHE:-/var/cache/oomlens}
ETCD_VERSION=3.4.23-4+b4
# Paths kubelet, containerd and CNI write to whatever their flags say;
# down.sh removes the ones that did not exist before the first up.
HOST_PATHS="/var/lib/kubelet /var/log/pods /var/log/containers /var/lib/cni
/run/containerd /usr/libexec/kubernetes"
CTR=(ctr --address "$SOCK" -n k8s.io)

log() { echo "cluster: $*" >&2; }

# pid_alive NAME: the process started as NAME still runs (the pid file's
# process has the binary the file names, so a recycled pid is not ours).
pid_alive() {
	local f=$RUN/pids/$1.pid pid exe
	[ -f "$f" ] || return 1
	read -r pid exe <"$f" || return 1
	[ -n "$pid" ] && [ -d "/proc/$pid" ] || return 1
	[ "$(readlink "/proc/$pid/exe" 2>/dev/null)" = "$exe" ]
}

# stop_pid NAME: SIGTERM, up to 10 s, then SIGKILL; removes the pid file.
stop_pid() {
	local f=$RUN/pids/$1.pid pid exe
	if pid_alive "$1"; then
		read -r pid exe <"$f"
		kill -TERM "$pid" 2>/dev/null || true
		for _ in $(seq 100); do
			[ -d "/proc/$pid" ] || break
			sleep 0.1
		done
		[ -d "/proc/$pid" ] && kill -KILL "$pid" 2>/dev/null
		log "stopped $1 ($pid)"
	fi
	rm -f "$f"
}

node_ip() {
	ip -4 route get 1.1.1.1 2>/dev/null |
		awk '{for (i = 1; i < NF; i++) if ($i == "src") {print $(i + 1); exit}}'
}

# etcd_dir: Debian 12's etcd-server $ETCD_VERSION, extracted once into the
# cache (installing it would enable a service); prints its directory.
etcd_dir() {
	local d=$CACHE/etcd-$ETCD_VERSION tmp
	if [ ! -x "$d/usr/bin/etcd" ]; then
		log "extracting etcd-server $ETCD_VERSION into $d"
		# (each step checked: a command substitution runs this without
		# the caller's set -e)
		tmp=$(mktemp -d) || return 1
		chmod 0755 "$tmp" # apt downloads as _apt
		(cd "$tmp" && apt-get download "etcd-server=$ETCD_VERSION" >&2) &&
			mkdir -p "$d.tmp" &&
			dpkg-deb -x "$tmp"/etcd-server_*.deb "$d.tmp" ||
			{ rm -rf "$tmp" "$d.tmp"; return 1; }
		rm -rf "$tmp" "$d"
		mv "$d.tmp" "$d" || return 1
	fi
	echo "$d"
}
