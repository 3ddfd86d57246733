#!/bin/bash
# Stops the test node up.sh started, and only that: the processes named by
# its pid files, every container and sandbox in its containerd, their
# network namespaces, mounts below its state directory, the pod cgroups,
# the bridge, and the host paths kubelet/containerd/CNI created (those that
# did not exist before the first up). etcd data, certificates and imported
# images stay (a stop + start is like a node reboot); --purge removes them
# too. Idempotent.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" -eq 0 ] || { log "needs root"; exit 1; }
[ -d "$RUN" ] || exit 0

stop_pid kubelet

# Sandboxes and containers, through containerd while it still runs: the
# tasks are killed (so their shims exit), the network namespaces the CRI
# bind-mounted are unmounted (their veths go with them).
netns=()
if pid_alive containerd; then
	for id in $("${CTR[@]}" containers list -q 2>/dev/null); do
		ns=$("${CTR[@]}" containers info "$id" 2>/dev/null | python3 -c '
import json, sys
spec = json.load(sys.stdin).get("Spec") or {}
for n in spec.get("linux", {}).get("namespaces", []):
    if n.get("type") == "network" and "/netns/" in n.get("path", ""):
        print(n["path"])' 2>/dev/null)
		[ -n "$ns" ] && netns+=("$ns")
		"${CTR[@]}" tasks kill -s SIGKILL "$id" >/dev/null 2>&1
		for _ in $(seq 50); do
			"${CTR[@]}" tasks delete "$id" >/dev/null 2>&1 && break
			"${CTR[@]}" tasks list -q 2>/dev/null | grep -qx "$id" || break
			sleep 0.1
		done
		"${CTR[@]}" containers delete "$id" >/dev/null 2>&1
	done
fi
for ns in "${netns[@]}"; do
	umount "$ns" 2>/dev/null
	rm -f "$ns"
done
stop_pid containerd
for name in kube-scheduler kube-controller-manager kube-apiserver etcd; do
	stop_pid "$name"
done

# Mounts left below the state directory or the paths the node created
# (sandbox /dev/shm, secret volumes, overlay roots), innermost first.
prefixes=("$RUN/")
if [ -f "$RUN/host-paths" ]; then
	while read -r p; do [ -n "$p" ] && prefixes+=("$p/"); done <"$RUN/host-paths"
fi
for _ in 1 2 3; do
	left=0
	while read -r m; do
		for pre in "${prefixes[@]}"; do
			case $m/ in "$pre"*)
				umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
				left=1 ;;
			esac
		done
	done < <(findmnt -rn -o TARGET | sed 's/\\x20/ /g' | sort -r)
	[ $left = 0 ] && break
done

# Pod cgroups: kubelet's /kubepods tree in every hierarchy, leaves first.
for h in /sys/fs/cgroup/*/kubepods /sys/fs/cgroup/kubepods; do
	[ -d "$h" ] || continue
	find "$h" -depth -type d -exec rmdir {} + 2>/dev/null
	[ -d "$h" ] && log "could not remove $h"
done

ip link del "$BRIDGE" 2>/dev/null
rm -rf "$RUN/cni/ipam"
if [ -f "$RUN/host-paths" ]; then
	while read -r p; do [ -n "$p" ] && rm -rf "$p"; done <"$RUN/host-paths"
	rm -f "$RUN/host-paths"
fi
if [ "${1:-}" = --purge ]; then
	rm -rf "$RUN"
	log "purged $RUN"
fi
exit 0
