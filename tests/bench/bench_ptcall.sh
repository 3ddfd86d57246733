#!/bin/bash
# bench_ptcall: `oomlens-sidecar malloc-stats PID` and `trim PID` against
# gdb doing the same from outside (`gdb -p PID -batch -ex 'call …'`), on the
# same retention victim in the same run: median wall time, peak RSS of the
# tool (/usr/bin/time %M), the ratios, and how long the target was held:
# the window in which /proc/PID/status shows a tracer (sampled), plus the
# stop time ptcall reports itself. gdb stops every thread for its whole
# window; ptcall stops one thread for a part of its window.
# Measures only; fails when a command fails. ~15 s (RUNS=2).
set -u
cd "$(dirname "$0")/../.."
B=${B:-build}
BUILD=${OOMLENS_BUILD:-$(pwd)/$B}
SIDECAR=$BUILD/bin/oomlens-sidecar
VICTIM=$BUILD/victims/ptcall_reader
RUNS=${RUNS:-2}
[ -x "$SIDECAR" ] && [ -x "$VICTIM" ] || {
	echo "bench_ptcall: $SIDECAR or $VICTIM not built"; exit 1; }
command -v gdb >/dev/null || { echo "bench_ptcall: skipped: no gdb"; exit 0; }
[ -x /usr/bin/time ] || { echo "bench_ptcall: skipped: no /usr/bin/time"; exit 0; }

/usr/bin/python3 - "$RUNS" "$SIDECAR" "$VICTIM" <<'PY'
import json, os, statistics, subprocess, sys, tempfile, threading, time

runs, sidecar, victim = int(sys.argv[1]), sys.argv[2], sys.argv[3]
v = subprocess.Popen([victim, "4", "16"], stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
assert b"ready" in v.stdout.readline()
pid = str(v.pid)

def traced_windows(stop, out):
    """Samples TracerPid; appends each traced window's length (ms)."""
    start = None
    path = f"/proc/{pid}/status"
    while not stop.is_set():
        with open(path) as f:
            t = f.read().split("TracerPid:")[1].split()[0] != "0"
        now = time.perf_counter()
        if t and start is None:
            start = now
        elif not t and start is not None:
            out.append((now - start) * 1000)
            start = None

def run(cmd):
    with tempfile.NamedTemporaryFile("r") as rss:
        t0 = time.perf_counter()
        p = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", rss.name] + cmd,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        wall = (time.perf_counter() - t0) * 1000
        if p.returncode != 0:
            sys.exit(f"bench_ptcall: {' '.join(cmd)} failed: {p.stdout[-300:]!r}")
        return wall, int(rss.read().split()[-1]), p.stdout

def gdb(expr):
    return ["gdb", "-p", pid, "-batch", "-nx", "-q", "-ex", f"call {expr}"]

cases = [
    ("malloc-stats", [sidecar, "malloc-stats", "--json", pid],
     gdb("(void)malloc_stats()")),
    ("trim", [sidecar, "trim", "--json", pid], gdb("(int)malloc_trim(0)")),
]
res = {}
for name, ours, theirs in cases:
    for tool, cmd in (("oomlens-sidecar", ours), ("gdb", theirs)):
        walls, peaks, held, selfstop = [], [], [], []
        for _ in range(runs):
            stop, win = threading.Event(), []
            th = threading.Thread(target=traced_windows, args=(stop, win))
            th.start()
            wall, peak, out = run(cmd)
            time.sleep(0.05)
            stop.set(); th.join()
            walls.append(wall); peaks.append(peak); held.append(sum(win))
            if tool == "oomlens-sidecar":
                j = json.loads(out.decode().splitlines()[-1])
                selfstop.append((j.get("probe") or j)["stopped_us"] / 1000)
        res[(name, tool)] = (statistics.median(walls), max(peaks))
        extra = (f"   1 thread stopped {statistics.median(selfstop):6.2f} ms"
                 if selfstop else "   all threads stopped while traced")
        print(f"{name:13s} {tool:16s} wall {res[(name, tool)][0]:8.1f} ms"
              f"   peak RSS {res[(name, tool)][1]:7d} KiB"
              f"   traced {statistics.median(held):7.1f} ms{extra}"
              f"   ({runs} runs)"
              + ("" if min(held) > 0 else
                 "; traced window shorter than the /proc sampling"))
    o, g = res[(name, "oomlens-sidecar")], res[(name, "gdb")]
    print(f"{name:13s} {'ratio gdb/ours':16s} wall {g[0] / o[0]:8.1f}x   "
          f"   peak RSS {g[1] / o[1]:7.1f}x")
    key = name.replace("-", "_")
    print(f"metric: {key}.speedup {g[0] / o[0]:.1f}")
    print(f"metric: {key}.lighter {g[1] / o[1]:.1f}")
v.stdin.write(b"p"); v.stdin.flush()
ans = json.loads(v.stdout.readline())
v.kill(); v.wait()
if ans.get("read") != 1:
    sys.exit(f"bench_ptcall: victim's read() broke: {ans}")
print("victim still answers after all calls: read() = 1")
PY
