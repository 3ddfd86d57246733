#!/bin/bash
# bench_jvm_histogram: the class histogram on ~512 MiB heaps, oomlens's
# (`oomlens-sidecar class-histogram`, as the sidecar takes it before a
# kill) against the JDK's `jcmd PID GC.class_histogram` on the same JVM, in
# the same run: the JVM's pause (its safepoint time, sun.rt.safepointTime,
# read around each call), the caller's wall time, the bytes written and
# the caller's peak RSS; medians of RUNS, the two taking turns. Three heaps: 2,000,000 orders of
# small objects under G1 and under SerialGC (~460 MiB used, 13 million
# objects: the walk's worst case per byte), and 512 x 1 MiB byte[] under
# G1 (the walk's cost is per object, not per byte).
# Measures only; fails when either command fails or prints no histogram.
set -u
cd "$(dirname "$0")/../.."
B=${B:-build}
BUILD=${OOMLENS_BUILD:-$(pwd)/$B}
SIDECAR=$BUILD/bin/oomlens-sidecar
JDK=${JDK:-/usr/lib/jvm/java-17-openjdk-amd64}
RUNS=${RUNS:-3}
if [ ! -x "$JDK/bin/jcmd" ] || ! command -v javac >/dev/null; then
	echo "bench_jvm_histogram: skipped: no JDK with jcmd at $JDK"; exit 0
fi
[ -x "$SIDECAR" ] || { echo "bench_jvm_histogram: $SIDECAR not built"; exit 1; }
CLASSES=$BUILD/victims/java
mkdir -p "$CLASSES"
javac -nowarn -d "$CLASSES" tests/victims/java/HeapHog.java || exit 1
# Zoo is the fixtures' program (tests/fixtures/jvm/README.md), kept as .txt
SRC=$(mktemp -d)
cp tests/fixtures/jvm/Zoo.java.txt "$SRC/Zoo.java"
javac -nowarn -encoding UTF-8 -d "$CLASSES" "$SRC/Zoo.java" || exit 1
rm -rf "$SRC"

PIDS=()
OUTS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	rm -f "${OUTS[@]}"
}
trap cleanup EXIT
start() { # label java-args...
	local out
	out=$(mktemp)
	OUTS+=("$out")
	"$JDK/bin/java" "${@:2}" >"$out" 2>&1 &
	PIDS+=($!)
	LABELS+=("$1")
	READY+=("$out")
}
LABELS=()
READY=()
start "2,000,000 orders, G1" -Xmx1500m -cp "$CLASSES" Zoo 2000000
start "2,000,000 orders, Serial" -Xmx1500m -XX:+UseSerialGC -cp "$CLASSES" Zoo 2000000
start "512 x 1 MiB byte[], G1" -Xmx2g -cp "$CLASSES" HeapHog 512
for i in "${!PIDS[@]}"; do
	for _ in $(seq 600); do grep -q ready "${READY[$i]}" && break; sleep 0.1; done
	grep -q ready "${READY[$i]}" ||
		{ echo "bench_jvm_histogram: JVM ${LABELS[$i]} did not start"; exit 1; }
done

/usr/bin/python3 - "$RUNS" "$SIDECAR" "$JDK/bin/jcmd" "${#PIDS[@]}" \
	"${PIDS[@]}" "${LABELS[@]}" <<'PY'
import json, statistics, subprocess, sys, tempfile, time

runs, sidecar, jcmd, n = int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])
pids, labels = sys.argv[5:5 + n], sys.argv[5 + n:5 + 2 * n]

def counters(pid):
    out = subprocess.run([jcmd, pid, "PerfCounter.print"], capture_output=True,
                         text=True).stdout
    c = {}
    for line in out.splitlines():
        k, _, v = line.partition("=")
        if k in ("sun.rt.safepointTime", "sun.os.hrt.frequency"):
            c[k] = int(v)
    return c

def pause_ms(before, after):
    return (after["sun.rt.safepointTime"] - before["sun.rt.safepointTime"]) \
        * 1000.0 / before["sun.os.hrt.frequency"]

def timed(cmd):
    """wall ms, stdout, peak KiB (from /usr/bin/time, a small C parent)"""
    with tempfile.NamedTemporaryFile("r") as rss:
        t0 = time.perf_counter()
        p = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", rss.name] + cmd,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        wall = (time.perf_counter() - t0) * 1000
        return wall, p.returncode, p.stdout, int(rss.read().split()[-1])

def ours(pid):
    before = counters(pid)
    wall, rc, out, kib = timed([sidecar, "class-histogram", "--json",
                                "--max-pause-ms", "60000", pid])
    after = counters(pid)
    try:
        j = json.loads(out)
    except ValueError:
        j = {}
    if rc != 0 or not j.get("taken") or not j.get("top"):
        sys.exit(f"bench_jvm_histogram: oomlens-sidecar class-histogram {pid}: {out[:300]!r}")
    return {"wall": wall, "pause": pause_ms(before, after), "own_pause": j["pause_us"] / 1000,
            "out": len(out), "reply": j["reply_bytes"], "rss": kib,
            "estimate": j["estimate_ms"], "used": j["heap_used"],
            "objects": j["total_instances"], "top": j["top"][0]["class"]}

def jdk(pid):
    before = counters(pid)
    wall, rc, out, kib = timed([jcmd, pid, "GC.class_histogram"])
    after = counters(pid)
    if rc != 0 or b"Total" not in out:
        sys.exit(f"bench_jvm_histogram: jcmd {pid} GC.class_histogram: {out[:300]!r}")
    return {"wall": wall, "pause": pause_ms(before, after), "out": len(out), "rss": kib}

def med(rows, k):
    return statistics.median(r[k] for r in rows)

for pid, label in zip(pids, labels):
    ours(pid)  # warm-up: the first call starts the attach listener
    a, b = [], []
    for _ in range(runs):  # in turns: the heap's state is the same for both
        a.append(ours(pid))
        b.append(jdk(pid))
    print(f"{label}: heap used {a[0]['used'] >> 20} MiB, {a[0]['objects'] / 1e6:.1f} M live "
          f"objects, top {a[0]['top']}")
    print(f"  {'oomlens-sidecar class-histogram':32s} pause {med(a, 'pause'):7.1f} ms "
          f"(its own count {med(a, 'own_pause'):7.1f})  wall {med(a, 'wall'):7.1f} ms  "
          f"out {med(a, 'out') / 1024:6.1f} KiB (reply {med(a, 'reply') / 1024:.1f})  "
          f"peak RSS {max(r['rss'] for r in a):6d} KiB  estimate {a[0]['estimate']} ms")
    print(f"  {'JDK jcmd GC.class_histogram':32s} pause {med(b, 'pause'):7.1f} ms "
          f"{'':24s}wall {med(b, 'wall'):7.1f} ms  out {med(b, 'out') / 1024:6.1f} KiB"
          f"{'':13s}peak RSS {max(r['rss'] for r in b):6d} KiB   ({runs} runs)")
PY
