#!/bin/bash
# bench_agent_cluster: the cluster-mode agent's RSS and CPU with 500
# container cgroups watched and sampled at 1 Hz and a 110-pod cache
# (tests/bench/bench_agent_cluster.py; DURATION seconds, default 60).
# Its kubepods.slice tree is the integration tests' too: takes the host
# lock while it exists. Skips (exit 0 with a note) without root.
set -u
cd "$(dirname "$0")/../.."
B=${B:-build}
export OOMLENS_BUILD=${OOMLENS_BUILD:-$(pwd)/$B}
if [ "$(id -u)" != 0 ]; then
	echo "bench_agent_cluster: needs root (memory cgroups, /dev/kmsg); skipped"
	exit 0
fi
exec flock /tmp/oomlens-realkill.lock /usr/bin/python3 tests/bench/bench_agent_cluster.py
