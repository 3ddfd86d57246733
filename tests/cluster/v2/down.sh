#!/bin/bash
# Stops the v2 test node up.sh started: the qemu guest named by its pid
# file (the guest's writes lived in qemu's temporary overlay, gone with
# it: the next up boots a new node). Nothing else on the host was changed by up:
# no interface, mount, cgroup or sysctl; qemu's forwards close with it.
# The cached guest root, PKI and ssh key stay; --purge removes the state
# directory too. Idempotent.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" -eq 0 ] || { log "needs root"; exit 1; }
[ -d "$RUN" ] || exit 0
T0=$(date +%s.%N)
if pid_alive qemu; then
	# systemd in the guest stops the pods' units; the disk is thrown
	# away, so a guest that does not finish in time is simply ended
	v2_ssh systemctl poweroff >/dev/null 2>&1 &
	read -r pid _ <"$RUN/pids/qemu.pid"
	for _ in $(seq 300); do
		[ -d "/proc/$pid" ] || break
		sleep 0.1
	done
	stop_pid qemu
	wait
fi
rm -f "$RUN/pids/qemu.pid" "$RUN/qmp.sock"
if [ "${1:-}" = --purge ]; then
	rm -rf "$RUN"
	log "purged $RUN"
fi
log "down in $(awk -v a="$T0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f s", b - a}')"
exit 0
