#!/bin/bash
# node.sh KBIN IP: the node half of up.sh: the pod bridge, containerd with
# a config of its own, the test images imported, and kubelet; waits for the
# node to be Ready. docs/cluster.md says why each setting is there.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
KBIN=$1 IP=$2
P=$RUN/pki

# The bridge with its gateway address set here (CNI's isGateway would turn
# on ip_forward): the host reaches pod IPs, nothing is routed or masqueraded.
if ! ip link show "$BRIDGE" >/dev/null 2>&1; then
	ip link add "$BRIDGE" type bridge
	ip addr add "$POD_GW/${POD_SUBNET#*/}" dev "$BRIDGE"
fi
ip link set "$BRIDGE" up
cat >"$RUN/cni/net.d/10-oomlens.conflist" <<EOF
{
  "cniVersion": "0.4.0",
  "name": "oomlens",
  "plugins": [{
    "type": "bridge", "bridge": "$BRIDGE",
    "isGateway": false, "isDefaultGateway": false, "ipMasq": false,
    "hairpinMode": false,
    "ipam": {
      "type": "host-local",
      "ranges": [[{"subnet": "$POD_SUBNET", "gateway": "$POD_GW"}]],
      "dataDir": "$RUN/cni/ipam"
    }
  }]
}
EOF

cat >"$RUN/containerd.toml" <<EOF
version = 2
root = "$RUN/containerd/root"
state = "$RUN/containerd/state"
[grpc]
  address = "$SOCK"
[ttrpc]
  address = "$SOCK.ttrpc"
[plugins."io.containerd.internal.v1.opt"]
  path = "$RUN/containerd/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "localhost/oomlens-pause:1"
  restrict_oom_score_adj = true
  disable_apparmor = true
  enable_selinux = false
  netns_mounts_under_state_dir = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$RUN/cni/net.d"
    max_conf_num = 1
EOF
if ! pid_alive containerd; then
	setsid /usr/bin/containerd --config "$RUN/containerd.toml" \
		>"$RUN/logs/containerd.log" 2>&1 </dev/null &
	echo "$! /usr/bin/containerd" >"$RUN/pids/containerd.pid"
	log "started containerd ($!)"
fi
for _ in $(seq 100); do
	"${CTR[@]}" version >/dev/null 2>&1 && break
	sleep 0.2
done
"${CTR[@]}" version >/dev/null || { tail "$RUN/logs/containerd.log" >&2; exit 1; }

# Images: imported again when an archive's content differs from the one
# imported last (by sha256: another checkout's archive of the same name
# may be newer or older than ours).
mkdir -p "$RUN/imported"
for a in "$B"/images/*.tar; do
	[ -f "$a" ] || continue
	st=$RUN/imported/$(basename "$a")
	sum=$(sha256sum "$a" | cut -d' ' -f1)
	[ -f "$st" ] && [ "$(cat "$st")" = "$sum" ] && continue
	"${CTR[@]}" images import "$a" >/dev/null
	echo "$sum" >"$st"
	log "imported $(basename "$a")"
done

# kubelet 1.20 writes a few paths outside --root-dir (device-plugin socket,
# pod logs): up.sh noted which were missing before, down.sh removes them.
K=$RUN/kubelet
mkdir -p "$K/pki" "$K/volume-plugins" "$K/seccomp"
if ! pid_alive kubelet; then
	setsid "$KBIN/kubelet" \
		--kubeconfig "$RUN/kubelet.kubeconfig" \
		--hostname-override "$NODE" --node-ip "$IP" --address "$IP" \
		--container-runtime remote \
		--container-runtime-endpoint "unix://$SOCK" \
		--cgroup-driver cgroupfs --cgroups-per-qos=true --cgroup-root / \
		--enforce-node-allocatable pods --fail-swap-on=false \
		--make-iptables-util-chains=false --oom-score-adj 0 \
		--max-open-files 20000 \
		--root-dir "$K" --pod-manifest-path "$RUN/manifests" \
		--cert-dir "$K/pki" --volume-plugin-dir "$K/volume-plugins" \
		--seccomp-profile-root "$K/seccomp" \
		--image-gc-high-threshold 100 --image-gc-low-threshold 99 \
		--tls-cert-file "$P/kubelet.crt" --tls-private-key-file "$P/kubelet.key" \
		--client-ca-file "$P/ca.crt" --anonymous-auth=false \
		--authentication-token-webhook --authorization-mode Webhook \
		--read-only-port 0 --healthz-port 0 \
		--protect-kernel-defaults=false \
		>"$RUN/logs/kubelet.log" 2>&1 </dev/null &
	echo "$! $(readlink -f "$KBIN/kubelet")" >"$RUN/pids/kubelet.pid"
	log "started kubelet ($!)"
fi

# Ready: the node's Ready condition, read with the admin token.
token=$(awk -F, '$2 == "admin" {print $1}' "$P/tokens.csv")
ready() {
	curl -fsS --cacert "$P/ca.crt" -H "Authorization: Bearer $token" \
		"https://127.0.0.1:$API_PORT/api/v1/nodes/$NODE" 2>/dev/null |
		python3 -c 'import json,sys
c = json.load(sys.stdin)["status"].get("conditions", [])
sys.exit(0 if any(x["type"] == "Ready" and x["status"] == "True" for x in c) else 1)' 2>/dev/null
}
for _ in $(seq 120); do
	ready && { log "node $NODE Ready"; exit 0; }
	pid_alive kubelet || break
	sleep 1
done
log "node $NODE not Ready; kubelet log tail:"
tail -n 30 "$RUN/logs/kubelet.log" >&2
exit 1
