# Shared by the v2 node's up.sh, down.sh and ssh.sh: the same helpers as
# the v1 node's (../lib.sh), with the v2 node's state directory, ports and
# guest address. Sourced, not run.
# shellcheck shell=bash disable=SC2034 # variables for the scripts that source it
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
V2_HERE=$CL_HERE/v2
RUN=${OOMLENS_CLUSTER_V2_DIR:-/var/lib/oomlens-cluster-v2}
# Host ends of qemu's port forwards (loopback only): the guest's API
# server (6443 inside) and sshd. Not the v1 node's 6443, so both nodes can
# be up at once.
V2_API_PORT=${OOMLENS_V2_API_PORT:-16443}
V2_SSH_PORT=${OOMLENS_V2_SSH_PORT:-16022}
# qemu's user network gives the guest this address (its eth0).
V2_IP=10.0.2.15
QEMU=qemu-system-x86_64

log() { echo "cluster-v2: $*" >&2; }

# v2_ssh CMD...: runs CMD in the guest as root (the key up.sh made; the
# host's ~/.ssh is neither read nor written).
v2_ssh() {
	ssh -F /dev/null -i "$RUN/ssh/id" -p "$V2_SSH_PORT" \
		-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null \
		-o LogLevel=ERROR -o ConnectTimeout=10 -o BatchMode=yes \
		root@127.0.0.1 "$@"
}
