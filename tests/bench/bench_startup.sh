#!/bin/bash
# bench_startup: each program's start — `--version` of oomlens-agent,
# oomlens-sidecar and kubectl-oomlens as make linked them (docs/build.md):
# median and p90 wall time and peak RSS over RUNS runs (default 50) — and
# the privilege drop a run mode makes once started (capabilities and
# no_new_privs, then with the seccomp allow-list), each in RUNS fresh
# children (tests/bench/bench_startup.c). Prints the link too: lean (the
# static cache) or Debian's shared libraries. Measures only; fails when a
# program fails.
set -u
cd "$(dirname "$0")/../.." || exit 2
B=${B:-build}
RUNS=${RUNS:-50}
make -s B="$B" all >/dev/null || exit 1
mkdir -p "$B/bench"
bin=$B/bench/bench_startup
# shellcheck disable=SC2046 # the link line: words
${CC:-cc} -std=gnu11 -O2 -D_GNU_SOURCE -Icommon -o "$bin" \
	tests/bench/bench_startup.c "$B/liboomlens.a" \
	$(make -s --no-print-directory print-PROG_LIBS) || exit 1
needed=$(readelf -d "$B/bin/oomlens-sidecar" | grep -c '(NEEDED)')
echo "startup: link $(make -s --no-print-directory print-LINK_KIND), oomlens-sidecar needs $needed shared objects"
rc=0
for p in oomlens-agent oomlens-sidecar kubectl-oomlens; do
	"$bin" spawn "$RUNS" "$B/bin/$p" --version || rc=1
done
"$bin" privs "$RUNS" || rc=1
exit $rc
