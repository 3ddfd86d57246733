#!/bin/bash
# bench_runtime_detect: the cost of the sidecar's first look at a process
# (every runtime's detect, then the first sight of the one that answers),
# per process and runtime, on idle live processes: a C program (no
# runtime: every detect says no), our Go victim, Debian's gojq (a stripped
# Go binary nobody here wrote), Node.js, CPython. Wall time per look
# (median, p95 of ROUNDS) and the bench's peak RSS; a JVM is looked at by
# run_jvm.c, not by this table (bench_jcmd.sh measures its attach).
# Measures only; fails when a look fails.
set -u
cd "$(dirname "$0")/../.." || exit 2
B=${B:-build}
ROUNDS=${ROUNDS:-200}
make -s B="$B" "$B/liboomlens.a" victims >/dev/null || exit 1
mkdir -p "$B/bench"
bin=$B/bench/bench_runtime_detect
${CC:-cc} -std=gnu11 -O2 -D_GNU_SOURCE -Icommon -o "$bin" \
	tests/bench/bench_runtime_detect.c "$B/liboomlens.a" \
	$(make -s --no-print-directory print-PROG_LIBS) || exit 1

PIDS=()
ARGS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
}
trap cleanup EXIT
start() { # label command...
	"${@:2}" >/dev/null 2>&1 &
	PIDS+=($!)
	ARGS+=("$1=$!")
}
start "C (sleep)" sleep 600
[ -x "$B/victims/go-orders" ] && start "Go (go-orders)" "$B/victims/go-orders" --idle 600s
if command -v gojq >/dev/null; then # gojq waits on a pipe that stays open
	fifo=$(mktemp -u /tmp/oomlens-bench-fifo-XXXXXX)
	mkfifo "$fifo"
	sleep 600 >"$fifo" &
	PIDS+=($!)
	gojq . <"$fifo" >/dev/null 2>&1 &
	PIDS+=($!)
	ARGS+=("Go (Debian gojq)=$!")
	rm -f "$fifo"
fi
command -v node >/dev/null && start "Node.js" node -e 'setInterval(() => {}, 1000)'
[ -x /usr/bin/python3 ] && start "CPython (Debian)" /usr/bin/python3 -c 'import time; time.sleep(600)'
sleep 2 # each has mapped its runtime
"$bin" "$ROUNDS" "${ARGS[@]}"
