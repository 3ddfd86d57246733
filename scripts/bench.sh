#!/bin/bash
# make bench: runs every tests/bench/bench_*.sh and prints their figures.
# Benchmarks measure; they never fail on a number (a noisy machine would
# make that flaky) but do fail when the thing measured breaks.
set -u
cd "$(dirname "$0")/.."
export B=${B:-build}
export OOMLENS_BUILD=$(pwd)/$B
rc=0
for b in tests/bench/bench_*.sh; do
	[ -e "$b" ] || continue
	echo "== $(basename "$b" .sh)"
	if ! bash "$b"; then
		echo "bench: $(basename "$b") FAILED"; rc=1
	fi
done
exit $rc
