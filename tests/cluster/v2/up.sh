#!/bin/bash
# Starts the v2 test node (docs/cluster.md, "The v2 node"): the same
# Kubernetes 1.20 programs as the v1 node, inside a qemu guest (TCG) that
# boots Debian 12's 6.1 kernel with systemd as init and cgroup v2 only;
# containerd with SystemdCgroup = true, kubelet --cgroup-driver systemd,
# memory.oom.group=1 on each container (runc-oomgroup). The guest's API
# server is forwarded to 127.0.0.1:$V2_API_PORT and its sshd to
# 127.0.0.1:$V2_SSH_PORT (loopback only). Prints the admin kubeconfig's
# path on stdout, and each step's time on stderr. Idempotent: a running
# node is left running. The host's configuration is not touched: qemu's
# user network makes no host interface, the guest's writes go to a
# temporary overlay qemu drops at exit (-drive snapshot=on); stop with
# down.sh.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" -eq 0 ] || { log "needs root"; exit 1; }
command -v "$QEMU" >/dev/null || { log "$QEMU not installed"; exit 1; }
T0=$(date +%s.%N)
took() { log "$(awk -v a="$T0" -v b="$(date +%s.%N)" 'BEGIN {printf "%6.1f s", b - a}')  $*"; }

KCFG=$RUN/admin.kubeconfig
token() { awk -F, '$2 == "admin" {print $1}' "$RUN/pki/tokens.csv"; }
ready() {
	curl -fsS --max-time 10 --cacert "$RUN/pki/ca.crt" \
		-H "Authorization: Bearer $(token)" \
		"https://127.0.0.1:$V2_API_PORT/api/v1/nodes/$NODE" 2>/dev/null |
		python3 -c 'import json,sys
c = json.load(sys.stdin)["status"].get("conditions", [])
sys.exit(0 if any(x["type"] == "Ready" and x["status"] == "True" for x in c) else 1)' 2>/dev/null
}
if pid_alive qemu && ready; then
	took "node $NODE Ready (already running)"
	echo "$KCFG"
	exit 0
fi

GUEST=$("$V2_HERE/build-root.sh")
took "guest root, kernel, initramfs: $GUEST"
KBIN=${OOMLENS_KUBE_BIN:-$("$CL_HERE/build-node.sh")}
ETCD_DIR=$(etcd_dir)
took "node programs: $KBIN"
mkdir -p "$RUN"/{pids,logs,ssh}
OOMLENS_API_PORT=6443 "$CL_HERE/pki.sh" "$RUN" "$V2_IP" "$NODE"
# the host's admin kubeconfig reaches the guest's API server through the
# forward (the certificate's SANs include 127.0.0.1)
sed -i "s#server: https://127.0.0.1:6443\$#server: https://127.0.0.1:$V2_API_PORT#" "$KCFG"
[ -f "$RUN/ssh/id" ] || ssh-keygen -q -t ed25519 -N '' -C oomlens-v2 -f "$RUN/ssh/id"
install -m 0755 "$V2_HERE/guest-node.sh" "$V2_HERE/runc-oomgroup" "$RUN/"
cat >"$RUN/guest.env" <<ENV
KBIN=$KBIN
ETCD_DIR=$ETCD_DIR
IMAGES=$B/images
REPO=$CL_TOP
BUILD=$B
NODE=$NODE
IP=$V2_IP
POD_SUBNET=$POD_SUBNET
ENV
took "PKI, ssh key, guest settings in $RUN"

if ! pid_alive qemu; then
	# snapshot=on: the guest's writes go to a temporary overlay qemu
	# makes (in TMPDIR, the state directory, unlinked at once) and drops at
	# exit; each boot is a new node on the cached root
	rm -f "$RUN/qmp.sock" "$RUN/logs/guest-steps.log" # the last boot's
	: >"$RUN/logs/serial.log"
	TMPDIR=$RUN setsid "$QEMU" -name oomlens-v2 -accel tcg,thread=multi -cpu max \
		-smp "${OOMLENS_V2_SMP:-2}" -m "${OOMLENS_V2_MEM:-4096}" -M pc \
		-nodefaults -no-reboot -display none \
		-serial "file:$RUN/logs/serial.log" \
		-qmp "unix:$RUN/qmp.sock,server=on,wait=off" \
		-kernel "$GUEST/vmlinux" -initrd "$GUEST/initrd.cpio" \
		-append "console=ttyS0 rdinit=/init panic=-1 tsc=reliable net.ifnames=0 systemd.unified_cgroup_hierarchy=1 systemd.show_status=1 oomlens.state=$RUN" \
		-drive "file=$GUEST/root.ext4,if=virtio,format=raw,snapshot=on,cache=unsafe" \
		-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
		-virtfs "local,path=$RUN,mount_tag=state,security_model=none,multidevs=remap" \
		-netdev "user,id=n0,restrict=on,hostfwd=tcp:127.0.0.1:$V2_API_PORT-:6443,hostfwd=tcp:127.0.0.1:$V2_SSH_PORT-:22" \
		-device virtio-net-pci,netdev=n0 \
		>"$RUN/logs/qemu.log" 2>&1 </dev/null &
	echo "$! $(readlink -f "$(command -v "$QEMU")")" >"$RUN/pids/qemu.pid"
	# qemu is its own session (setsid), so its own scheduler autogroup
	# where the kernel groups by session (sched_autogroup_enabled): other
	# sessions' builds and tests, even under nice 19, otherwise take an
	# equal share of the CPU each, and the guest's API server answered
	# in 13 s instead of 0.1 s (measured 2026-12-07, four nice 19 sessions
	# beside). Its group's weight raised for qemu alone: undone when it
	# exits, nothing else on the host changed.
	[ ! -w "/proc/$!/autogroup" ] ||
		echo "${OOMLENS_V2_AUTOGROUP_NICE:--10}" >"/proc/$!/autogroup" || true
	took "started qemu ($!)"
fi

# Waits for the node, printing the guest's steps (guest-node.sh's log on
# the state share) as they come.
shown=0
show_steps() {
	local n
	[ -f "$RUN/logs/guest-steps.log" ] || return 0
	n=$(wc -l <"$RUN/logs/guest-steps.log")
	[ "$n" -gt "$shown" ] || return 0
	tail -n +$((shown + 1)) "$RUN/logs/guest-steps.log" | head -n $((n - shown)) |
		while read -r up what; do took "guest ${up}s after boot: $what"; done
	shown=$n
}
booted=0
for _ in $(seq "${OOMLENS_V2_TIMEOUT:-1200}"); do
	pid_alive qemu || { log "qemu exited:"; tail -n 30 "$RUN/logs/qemu.log" \
		"$RUN/logs/serial.log" >&2; exit 1; }
	if [ $booted = 0 ] && grep -q "Reached target.*Multi-User" "$RUN/logs/serial.log" 2>/dev/null; then
		took "guest booted (systemd reached multi-user.target)"
		booted=1
	fi
	show_steps
	if grep -q FAILED "$RUN/logs/guest-steps.log" 2>/dev/null; then
		break
	fi
	if grep -q "all images imported" "$RUN/logs/guest-steps.log" 2>/dev/null &&
		ready; then
		show_steps
		took "node $NODE Ready"
		echo "$KCFG"
		exit 0
	fi
	sleep 1
done
log "node $NODE not Ready; kubelet's journal tail:"
v2_ssh journalctl -u oomlens-kubelet -u oomlens-node -n 40 --no-pager >&2 || true
exit 1
