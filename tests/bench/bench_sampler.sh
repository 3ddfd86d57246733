#!/bin/bash
# bench_sampler: the sidecar's own cost while it samples 50 processes at
# 1 Hz: CPU time (utime+stime) and peak RSS (VmHWM) of `oomlens-sidecar run`
# over DURATION seconds (default 60; DURATION=20 for a quicker look).
# Measures only; fails when the sidecar dies or its timeline does not show
# the 50 processes.
set -u
cd "$(dirname "$0")/../.."
B=${B:-build}
BUILD=${OOMLENS_BUILD:-$(pwd)/$B}
SIDECAR=$BUILD/bin/oomlens-sidecar
VICTIM=$BUILD/victims/leak
N=${N:-50}
DURATION=${DURATION:-60}
for f in "$SIDECAR" "$VICTIM"; do
	[ -x "$f" ] || { echo "bench_sampler: $f not built"; exit 1; }
done
SPOOL=$(mktemp -d)
PIDS=()
cleanup() {
	[ -n "${SC:-}" ] && kill "$SC" 2>/dev/null
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$SPOOL"
}
trap cleanup EXIT
for _ in $(seq "$N"); do
	"$VICTIM" --total-mb 2 --chunk-kb 512 >/dev/null &
	PIDS+=($!)
done
sleep 1
"$SIDECAR" run --standalone --spool "$SPOOL" --interval-ms 1000 \
	--pid "${PIDS[@]}" 2>"$SPOOL.log" &
SC=$!
sleep "$DURATION"
if ! kill -0 "$SC" 2>/dev/null; then
	echo "bench_sampler: sidecar died:"; cat "$SPOOL.log"; exit 1
fi
read -r -a stat <"/proc/$SC/stat"
hz=$(getconf CLK_TCK)
cpu_ms=$(( (stat[13] + stat[14]) * 1000 / hz ))
hwm=$(awk '/^VmHWM:/ {print $2}' "/proc/$SC/status")
rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$SC/status")
kill "$SC"; wait "$SC" 2>/dev/null; SC=
rm -f "$SPOOL.log"
/usr/bin/python3 - "$SPOOL/timeline.json" "$N" "$DURATION" "$cpu_ms" "$hwm" "$rss" <<'PY'
import json, sys
tl, n, dur, cpu, hwm, rss = sys.argv[1], *map(int, sys.argv[2:])
d = json.load(open(tl))
last = d["samples"][-1]
if len(last["procs"]) != n:
    sys.exit(f"bench_sampler: last sample has {len(last['procs'])} processes, want {n}")
print(f"{n} processes at 1 Hz for {dur} s ({len(d['samples'])} samples): "
      f"CPU {cpu} ms ({100.0 * cpu / (dur * 1000):.2f} % of one core), "
      f"peak RSS {hwm} KiB, RSS at the end {rss} KiB")
print(f"metric: sampler.peak_kib {hwm}")
PY
