#!/bin/bash
# guest-node.sh STATE: the v2 node inside the qemu guest (run by the unit
# oomlens-node that oomlens-boot starts; up.sh copies this file into the
# state directory STATE, shared from the host at the same path). Starts
# etcd, kube-apiserver, kube-controller-manager, kube-scheduler, containerd
# and kubelet as systemd units of their own (systemd-run), from the host's
# caches (the host root is at /host, read-only): the same binaries and
# flags as the v1 node (../up.sh, ../node.sh), except what the v2 node is
# for: containerd with SystemdCgroup = true and runc-oomgroup (the
# memory.oom.group=1 of kubelet >= 1.28), kubelet --cgroup-driver systemd,
# and what a VM needs no longer (the guest is ours: default oom_score_adj).
# Each step's time since boot goes to STATE/logs/guest-steps.log.
set -euo pipefail
STATE=$1
# shellcheck source=/dev/null
. "$STATE/guest.env" # KBIN ETCD_DIR IMAGES REPO BUILD NODE IP POD_SUBNET
H=/host
P=$STATE/pki
RUN=/var/lib/oomlens-cluster # the guest's own disk (values-node.yaml's paths)
SOCK=$RUN/run/containerd.sock
BRIDGE=oomlens0
POD_GW=${POD_SUBNET%.*}.1
CTR=(ctr --address "$SOCK" -n k8s.io)
mkdir -p "$STATE/logs" "$RUN"/{run,etcd,manifests,kubelet,cni/net.d,cni/ipam}
STEPS=$STATE/logs/guest-steps.log
: >"$STEPS"
step() { echo "$(cut -d' ' -f1 /proc/uptime) $*" >>"$STEPS"; }
step "guest-node.sh started"

# unit NAME BINARY ARGS...: a transient service, restarted on failure,
# its output in the journal (journalctl -u oomlens-NAME).
unit() {
	local name=$1
	shift
	systemctl is-active -q "oomlens-$name" && return 0
	systemctl reset-failed "oomlens-$name" 2>/dev/null || true
	systemd-run -q --unit "oomlens-$name" -p Restart=on-failure \
		-p RestartSec=2 "${UNIT_PROPS[@]}" "$@"
	UNIT_PROPS=()
}
UNIT_PROPS=()
wait_for() { # WHAT SECONDS COMMAND...
	local what=$1 secs=$2
	shift 2
	for _ in $(seq "$secs"); do
		"$@" >/dev/null 2>&1 && { step "$what"; return 0; }
		sleep 1
	done
	step "FAILED: $what after ${secs}s"
	exit 1
}

modprobe -a overlay bridge veth br_netfilter 2>/dev/null || true
# The checkout and its build tree at their host paths (read-only), as on
# the v1 node: the suite's hostPath volumes (the Java victims' classes)
# name them.
for d in $REPO $BUILD; do
	mountpoint -q "$d" && continue
	mkdir -p "$d"
	mount --bind "$H$d" "$d"
done

unit etcd "$H$ETCD_DIR/usr/bin/etcd" --name oomlens --data-dir "$RUN/etcd" \
	--listen-client-urls http://127.0.0.1:12379 \
	--advertise-client-urls http://127.0.0.1:12379 \
	--listen-peer-urls http://127.0.0.1:12380 \
	--initial-advertise-peer-urls http://127.0.0.1:12380 \
	--initial-cluster oomlens=http://127.0.0.1:12380 \
	--quota-backend-bytes 2147483648
wait_for "etcd healthy" 300 curl -fsS http://127.0.0.1:12379/health

unit kube-apiserver "$H$KBIN/kube-apiserver" \
	--etcd-servers http://127.0.0.1:12379 \
	--bind-address 0.0.0.0 --secure-port 6443 --insecure-port 0 \
	--advertise-address "$IP" \
	--tls-cert-file "$P/apiserver.crt" --tls-private-key-file "$P/apiserver.key" \
	--client-ca-file "$P/ca.crt" --token-auth-file "$P/tokens.csv" \
	--authorization-mode Node,RBAC --enable-admission-plugins NodeRestriction \
	--allow-privileged --service-cluster-ip-range 10.96.0.0/16 \
	--service-account-key-file "$P/sa.pub" \
	--service-account-signing-key-file "$P/sa.key" \
	--service-account-issuer https://kubernetes.default.svc \
	--kubelet-client-certificate "$P/apiserver-kubelet.crt" \
	--kubelet-client-key "$P/apiserver-kubelet.key" \
	--kubelet-certificate-authority "$P/ca.crt" \
	--kubelet-preferred-address-types InternalIP \
	--enable-aggregator-routing --event-ttl 1h

# The pod network, as on the v1 node (../node.sh): a bridge with the
# gateway address, CNI bridge + host-local, nothing routed or masqueraded.
if ! ip link show "$BRIDGE" >/dev/null 2>&1; then
	ip link add "$BRIDGE" type bridge
	ip addr add "$POD_GW/${POD_SUBNET#*/}" dev "$BRIDGE"
fi
ip link set "$BRIDGE" up
cat >"$RUN/cni/net.d/10-oomlens.conflist" <<CNI
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
CNI

install -m 0755 "$STATE/runc-oomgroup" /usr/local/sbin/runc-oomgroup
cat >"$RUN/containerd.toml" <<TOML
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
  disable_apparmor = true
  enable_selinux = false
  netns_mounts_under_state_dir = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = true
        BinaryName = "/usr/local/sbin/runc-oomgroup"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$RUN/cni/net.d"
    max_conf_num = 1
TOML
# as Debian's containerd.service: the shims outlive a containerd restart
UNIT_PROPS=(-p Delegate=yes -p KillMode=process -p LimitNOFILE=1048576
	-p TasksMax=infinity -p OOMScoreAdjust=-999)
unit containerd /usr/bin/containerd --config "$RUN/containerd.toml"
wait_for "containerd answers" 120 "${CTR[@]}" version

# import_images small|large: the archives of `make images` (the host's
# build/images), the small ones (pause, busybox, the agent's and sidecar's)
# before kubelet starts, the large ones (the JRE's) while it does.
import_images() {
	local a size
	for a in "$H$IMAGES"/*.tar; do
		[ -f "$a" ] || continue
		size=$(stat -c %s "$a")
		if [ "$1" = small ]; then [ "$size" -lt 100000000 ] || continue
		else [ "$size" -ge 100000000 ] || continue; fi
		"${CTR[@]}" images import "$a" >/dev/null
		step "imported $(basename "$a") ($((size >> 20)) MiB)"
	done
}
import_images small

wait_for "kube-apiserver ready" 600 curl -fsS --cacert "$P/ca.crt" \
	https://127.0.0.1:6443/readyz
unit kube-controller-manager "$H$KBIN/kube-controller-manager" \
	--kubeconfig "$STATE/controller-manager.kubeconfig" \
	--use-service-account-credentials \
	--service-account-private-key-file "$P/sa.key" \
	--root-ca-file "$P/ca.crt" --leader-elect=false \
	--flex-volume-plugin-dir "$RUN/kcm-volume-plugins" \
	--port 0 --secure-port 0
unit kube-scheduler "$H$KBIN/kube-scheduler" \
	--kubeconfig "$STATE/scheduler.kubeconfig" --leader-elect=false \
	--port 0 --secure-port 0

K=$RUN/kubelet
mkdir -p "$K/pki" "$K/volume-plugins" "$K/seccomp"
unit kubelet "$H$KBIN/kubelet" \
	--kubeconfig "$STATE/kubelet.kubeconfig" \
	--hostname-override "$NODE" --node-ip "$IP" --address "$IP" \
	--container-runtime remote \
	--container-runtime-endpoint "unix://$SOCK" \
	--cgroup-driver systemd --cgroups-per-qos=true --cgroup-root / \
	--enforce-node-allocatable pods --fail-swap-on=false \
	--make-iptables-util-chains=false \
	--root-dir "$K" --pod-manifest-path "$RUN/manifests" \
	--cert-dir "$K/pki" --volume-plugin-dir "$K/volume-plugins" \
	--seccomp-profile-root "$K/seccomp" \
	--image-gc-high-threshold 100 --image-gc-low-threshold 99 \
	--tls-cert-file "$P/kubelet.crt" --tls-private-key-file "$P/kubelet.key" \
	--client-ca-file "$P/ca.crt" --anonymous-auth=false \
	--authentication-token-webhook --authorization-mode Webhook \
	--read-only-port 0 --healthz-port 0 \
	--protect-kernel-defaults=false
step "kubelet started"
import_images large
# The controller-manager is up when its service-account controller has
# made the default namespace's ServiceAccount: a pod created before that is
# refused ("serviceaccount default not found"), and on a slow guest the
# controller-manager's first start can exit on API timeouts (systemd
# restarts it), so the node is handed over only once it has done its work.
ADMIN=$(awk -F, '$2 == "admin" {print $1}' "$P/tokens.csv")
wait_for "controller-manager made the default ServiceAccount" 600 \
	curl -fsS --cacert "$P/ca.crt" -H "Authorization: Bearer $ADMIN" \
	https://127.0.0.1:6443/api/v1/namespaces/default/serviceaccounts/default
step "all images imported"
