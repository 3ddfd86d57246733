#!/bin/bash
# make demo: a real OOM kill on this machine, explained.
# Creates a demo memory cgroup (v1 or v2, whichever the host has), starts
# the agent on it, runs victims that get OOM-killed, prints the agent's
# report line and the bundle path of each kill. Needs root.
set -euo pipefail
cd "$(dirname "$0")/.."
B=${B:-build}
AGENT=$B/bin/oomlens-agent
SIDECAR=$B/bin/oomlens-sidecar
DEMO=${DEMO_CGROUP:-oomlens-demo}
STATE=${DEMO_STATE:-$B/demo}

die() { echo "demo: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "needs root (memory cgroups and /dev/kmsg)"

if [ -e /sys/fs/cgroup/memory/cgroup.procs ]; then
	MODE=v1 ROOT=/sys/fs/cgroup/memory LIMIT_FILE=memory.limit_in_bytes
elif grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
	MODE=v2 ROOT=/sys/fs/cgroup LIMIT_FILE=memory.max
	echo +memory > $ROOT/cgroup.subtree_control
else
	die "no cgroup memory controller on this machine"
fi

cleanup() {
	for p in "${SIDECARS[@]}"; do kill -TERM "$p" 2>/dev/null; done
	[ -n "${AGENT_PID:-}" ] && kill -TERM "$AGENT_PID" 2>/dev/null && wait "$AGENT_PID" 2>/dev/null
	for d in $(find "$ROOT/$DEMO" -depth -type d 2>/dev/null); do
		for p in $(cat "$d/cgroup.procs" 2>/dev/null); do kill -9 "$p" 2>/dev/null || true; done
		rmdir "$d" 2>/dev/null || true
	done
}
trap cleanup EXIT

mkdir -p "$ROOT/$DEMO"
[ $MODE = v2 ] && echo +memory > "$ROOT/$DEMO/cgroup.subtree_control"
rm -rf "$STATE"; mkdir -p "$STATE"

echo "demo: cgroup $MODE, demo cgroup /$DEMO, state in $STATE"
mkdir -p "$STATE/spool"
"$AGENT" run --standalone --watch "/$DEMO" --state-dir "$STATE" \
	--spool-dir "$STATE/spool" >"$STATE/agent.out" 2>"$STATE/agent.log" &
AGENT_PID=$!
for _ in $(seq 100); do grep -q 'msg="ready"' "$STATE/agent.log" && break; sleep 0.05; done
grep -q 'msg="ready"' "$STATE/agent.log" || { cat "$STATE/agent.log"; die "agent did not start"; }

SIDECARS=()
# run_victim NAME LIMIT_MB CMD...: runs CMD in /$DEMO/NAME with the limit,
# a sidecar recording it into its own spool ($SIDECAR_OPTS added).
run_victim() {
	local name=$1 mb=$2; shift 2
	mkdir -p "$ROOT/$DEMO/$name"
	echo $((mb << 20)) > "$ROOT/$DEMO/$name/$LIMIT_FILE"
	echo
	echo "demo: victim '$name' ($*) in /$DEMO/$name, limit ${mb} MiB"
	"$SIDECAR" run --standalone --cgroup "/$DEMO/$name" \
		--spool "$STATE/spool/$name" --interval-ms 250 ${SIDECAR_OPTS:-} \
		>"$STATE/sidecar-$name.log" 2>&1 &
	SIDECARS+=($!)
	sleep 0.3
	local before
	before=$(wc -l < "$STATE/agent.out")
	sh -c 'echo $$ > "$1/cgroup.procs"; shift; exec "$@"' sh \
		"$ROOT/$DEMO/$name" "$@" >"$STATE/$name.out" 2>&1 &
	wait $! 2>/dev/null || true
	for _ in $(seq 100); do
		[ "$(wc -l < "$STATE/agent.out")" -gt "$before" ] && break
		sleep 0.05
	done
	local line
	line=$(tail -n +$((before + 1)) "$STATE/agent.out" | head -n1)
	[ -n "$line" ] || { tail "$STATE/agent.log"; die "no report for '$name'"; }
	echo "agent: $line"
	python3 - "$line" <<'PY'
import json, sys
r = json.loads(sys.argv[1])
v = r["victims"][0] if r["victims"] else {}
print("demo: killed pid %s (%s) in %s, %s kB anon; detected %.1f ms after the kill"
      % (v.get("pid"), v.get("comm"), r["cgroup"], v.get("anon_rss_kb"),
         r["detect_latency_us"] / 1000.0))
if r.get("verdict"):
    print("demo: verdict: %s — %s" % (r["verdict"], r.get("summary", "")))
print("demo: bundle %s" % r["path"])
if r.get("report_html"):
    print("demo: report %s" % r["report_html"])
PY
}

run_victim hog 48 "$B/victims/hog" --step-mb 4 --delay-ms 100
# The second seed: freed memory kept by glibc's arenas. The sidecar asks
# glibc itself (mallinfo2 through ptrace) how much is really in use, and
# trims once at its top threshold (80 % here) to prove it.
SIDECAR_OPTS="--allocator-probe ptrace --trim test --thresholds 60,70,80" \
run_victim retention 256 "$B/victims/retention" --threads 8 --mb-per-thread 6 \
	--mode grow --interval-ms 1500

# A JVM whose heap grows past the limit: the bundle carries its NMT summary
# and heap info (processes/<pid>/jvm/), taken by the sidecar before the kill.
if command -v java >/dev/null && command -v javac >/dev/null; then
	mkdir -p "$B/victims/java"
	javac -nowarn -d "$B/victims/java" tests/victims/java/HeapHog.java
	run_victim jvm 160 java -XX:NativeMemoryTracking=summary -Xmx512m \
		-XX:+UseSerialGC -cp "$B/victims/java" HeapHog 400 15
else
	echo "demo: no java/javac: JVM victim skipped"
fi

# A Python worker keeping every row it renders: the sidecar detects
# CPython (its executable's _PyRuntime), notes at first sight that
# nothing bounds its heap below the limit, and the verdict is the Python
# heap's (pymalloc arenas), with tracemalloc and memray to find the lines.
if command -v python3 >/dev/null; then
	run_victim python 200 python3 tests/victims/python/rows.py 16 2000
else
	echo "demo: no python3: Python victim skipped"
fi

echo
echo "demo: done. Bundles in $STATE/reports/ (tar tzf to list, 'tar xzf' to open)."
