#!/bin/bash
# Starts a single-node Kubernetes 1.20 test cluster from Debian's packages
# (docs/cluster.md gives every flag and why): etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler, containerd with its own config,
# and kubelet; or, with --apiserver-only, etcd and kube-apiserver (seconds).
# Prints the admin kubeconfig's path on stdout. Idempotent: what already
# runs is left running. Nothing of the host's configuration changes (no
# sysctl, /etc, iptables rule or ip_forward); stop with down.sh.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
MODE=node
[ "${1:-}" = --apiserver-only ] && MODE=apiserver
[ "$(id -u)" -eq 0 ] || { log "needs root"; exit 1; }
IP=$(node_ip)
[ -n "$IP" ] || { log "no non-loopback IPv4 address for the node"; exit 1; }

# OOMLENS_KUBE_BIN: a directory of already built node programs
KBIN=${OOMLENS_KUBE_BIN:-$("$CL_HERE/build-node.sh")}
mkdir -p "$RUN"/{pids,logs,pki,run,etcd,manifests,kubelet,cni/net.d,cni/ipam}

# Host paths the node's programs create on their own (kubelet 1.20 writes
# /var/lib/kubelet/device-plugins even with --root-dir): down.sh removes
# those that were not there before.
if [ ! -f "$RUN/host-paths" ]; then
	for p in $HOST_PATHS; do [ -e "$p" ] || echo "$p"; done >"$RUN/host-paths"
fi

ETCD_DIR=$(etcd_dir)

# start NAME BINARY ARGS...: in its own session, logs in $RUN/logs; the pid
# file holds pid and binary path.
start() {
	local name=$1 bin=$2
	shift 2
	pid_alive "$name" && return 0
	setsid "$bin" "$@" >"$RUN/logs/$name.log" 2>&1 </dev/null &
	echo "$! $(readlink -f "$bin")" >"$RUN/pids/$name.pid"
	log "started $name ($!)"
}

# wait_for WHAT SECONDS COMMAND...
wait_for() {
	local what=$1 secs=$2
	shift 2
	for _ in $(seq $((secs * 5))); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	log "$what not ready after ${secs}s; log tail:"
	tail -n 20 "$RUN/logs/$what.log" >&2 || true
	exit 1
}

"$CL_HERE/pki.sh" "$RUN" "$IP" "$NODE"
P=$RUN/pki

start etcd "$ETCD_DIR/usr/bin/etcd" --name oomlens --data-dir "$RUN/etcd" \
	--listen-client-urls "http://127.0.0.1:$ETCD_PORT" \
	--advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
	--listen-peer-urls "http://127.0.0.1:$((ETCD_PORT + 1))" \
	--initial-advertise-peer-urls "http://127.0.0.1:$((ETCD_PORT + 1))" \
	--initial-cluster "oomlens=http://127.0.0.1:$((ETCD_PORT + 1))" \
	--quota-backend-bytes 2147483648
wait_for etcd 20 curl -fsS "http://127.0.0.1:$ETCD_PORT/health"

# Without a controller-manager no `default` ServiceAccount appears: the
# apiserver-only mode turns its admission plugin off.
ADMISSION=(--enable-admission-plugins NodeRestriction)
[ $MODE = apiserver ] && ADMISSION+=(--disable-admission-plugins ServiceAccount)
start kube-apiserver "$KBIN/kube-apiserver" \
	--etcd-servers "http://127.0.0.1:$ETCD_PORT" \
	--bind-address 0.0.0.0 --secure-port "$API_PORT" --insecure-port 0 \
	--advertise-address "$IP" \
	--tls-cert-file "$P/apiserver.crt" --tls-private-key-file "$P/apiserver.key" \
	--client-ca-file "$P/ca.crt" --token-auth-file "$P/tokens.csv" \
	--authorization-mode Node,RBAC "${ADMISSION[@]}" --allow-privileged \
	--service-cluster-ip-range "$SVC_RANGE" \
	--service-account-key-file "$P/sa.pub" \
	--service-account-signing-key-file "$P/sa.key" \
	--service-account-issuer https://kubernetes.default.svc \
	--kubelet-client-certificate "$P/apiserver-kubelet.crt" \
	--kubelet-client-key "$P/apiserver-kubelet.key" \
	--kubelet-certificate-authority "$P/ca.crt" \
	--kubelet-preferred-address-types InternalIP \
	--enable-aggregator-routing --event-ttl 1h
wait_for kube-apiserver 60 curl -fsS --cacert "$P/ca.crt" \
	"https://127.0.0.1:$API_PORT/readyz"

if [ $MODE = node ]; then
	start kube-controller-manager "$KBIN/kube-controller-manager" \
		--kubeconfig "$RUN/controller-manager.kubeconfig" \
		--use-service-account-credentials \
		--service-account-private-key-file "$P/sa.key" \
		--root-ca-file "$P/ca.crt" --leader-elect=false \
		--flex-volume-plugin-dir "$RUN/kcm-volume-plugins" \
		--port 0 --secure-port 0
	start kube-scheduler "$KBIN/kube-scheduler" \
		--kubeconfig "$RUN/scheduler.kubeconfig" --leader-elect=false \
		--port 0 --secure-port 0
	"$CL_HERE/node.sh" "$KBIN" "$IP"
fi
echo "$RUN/admin.kubeconfig"
