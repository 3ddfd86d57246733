#!/bin/bash
# ssh.sh CMD...: runs CMD as root in the running v2 node's guest (through
# qemu's forward of its sshd, with the key up.sh made).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
v2_ssh "$@"
