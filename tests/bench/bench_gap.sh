#!/bin/bash
# bench_gap: sampling gap before an OOM kill, with and without a CPU hog
# (tests/bench/bench_gap.py). Real kills: takes the host lock. Skips
# (exit 0 with a note) without root or a memory cgroup.
set -u
cd "$(dirname "$0")/../.."
B=${B:-build}
export OOMLENS_BUILD=${OOMLENS_BUILD:-$(pwd)/$B}
if [ "$(id -u)" != 0 ]; then
	echo "bench_gap: needs root (memory cgroups, OOM kills); skipped"
	exit 0
fi
exec flock /tmp/oomlens-realkill.lock /usr/bin/python3 tests/bench/bench_gap.py
