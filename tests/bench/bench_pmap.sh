#!/bin/bash
# bench_pmap: `oomlens-sidecar pmap PID` against procps `pmap -X PID` on the
# same stopped process with >= 1,000 mappings (the mmap_heavy victim), in
# the same run: median wall time and peak RSS (/usr/bin/time %M) of each,
# and the ratios. Measures only; fails when a command fails or the two
# tables disagree on the number of rows.
set -u
cd "$(dirname "$0")/../.."
B=${B:-build}
BUILD=${OOMLENS_BUILD:-$(pwd)/$B}
SIDECAR=$BUILD/bin/oomlens-sidecar
VICTIM=$BUILD/victims/mmap_heavy
MAPS=${MAPS:-5000}
RUNS=${RUNS:-7}
command -v pmap >/dev/null || { echo "bench_pmap: skipped: no procps pmap"; exit 0; }
[ -x /usr/bin/time ] || { echo "bench_pmap: skipped: no /usr/bin/time (make deps)"; exit 0; }
for f in "$SIDECAR" "$VICTIM"; do
	[ -x "$f" ] || { echo "bench_pmap: $f not built"; exit 1; }
done
OUT=$(mktemp)
"$VICTIM" --maps "$MAPS" >"$OUT" &
PID=$!
trap 'kill -CONT $PID 2>/dev/null; kill $PID 2>/dev/null; wait $PID 2>/dev/null; rm -f "$OUT"' EXIT
for _ in $(seq 100); do [ -s "$OUT" ] && break; sleep 0.1; done
[ -s "$OUT" ] || { echo "bench_pmap: victim did not start"; exit 1; }
kill -STOP $PID

/usr/bin/python3 - "$RUNS" "$PID" "$SIDECAR" <<'PY'
import statistics, subprocess, sys, tempfile, time

runs, pid, sidecar = int(sys.argv[1]), sys.argv[2], sys.argv[3]
cmds = {"oomlens-sidecar pmap": [sidecar, "pmap", pid],
        "procps pmap -X": ["pmap", "-X", pid]}

def run(cmd):
    t0 = time.perf_counter()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    wall = (time.perf_counter() - t0) * 1000
    if p.returncode != 0:
        sys.exit(f"bench_pmap: {' '.join(cmd)} failed: {p.stderr[:300]!r}")
    return wall, p.stdout

def peak_kib(cmd):
    # /usr/bin/time is a small C parent: Python's own high-water mark does
    # not leak into the child's ru_maxrss.
    with tempfile.NamedTemporaryFile("r") as f:
        subprocess.run(["/usr/bin/time", "-f", "%M", "-o", f.name] + cmd,
                       stdout=subprocess.DEVNULL, check=True)
        return int(f.read().split()[-1])

rows, res = {}, {}
for name, cmd in cmds.items():
    run(cmd)  # warm-up
    walls = []
    for _ in range(runs):
        w, out = run(cmd)
        walls.append(w)
    rows[name] = out.count(b"\n")
    res[name] = (statistics.median(walls), max(peak_kib(cmd) for _ in range(3)))
if rows["oomlens-sidecar pmap"] != rows["procps pmap -X"]:
    sys.exit(f"bench_pmap: row counts differ: {rows}")
maps = rows["procps pmap -X"] - 4
for name, (w, m) in res.items():
    print(f"{name:22s} wall {w:8.1f} ms (median of {runs})   peak RSS {m:6d} KiB")
(ow, om), (pw, pm) = res["oomlens-sidecar pmap"], res["procps pmap -X"]
print(f"mappings: {maps}; ratio sidecar/procps: wall {ow / pw:.2f}x, "
      f"peak RSS {om / pm:.2f}x")
print(f"metric: pmap.speedup {pw / ow:.2f}")
print(f"metric: pmap.rss_ratio {om / pm:.3f}")
PY
