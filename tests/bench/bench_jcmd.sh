#!/bin/bash
# bench_jcmd: `oomlens-sidecar jcmd PID VM.native_memory summary` against the
# JDK's `jcmd PID VM.native_memory summary` and, when installed (Debian's
# jattach package), `jattach PID jcmd "VM.native_memory summary"` on the same
# JVM, in the same run: median wall time and peak RSS (/usr/bin/time %M of
# each call), and the ratios; ours and jattach called in turns.
# Measures only; fails when either command fails or prints no NMT summary.
set -u
cd "$(dirname "$0")/../.."
B=${B:-build}
BUILD=${OOMLENS_BUILD:-$(pwd)/$B}
SIDECAR=$BUILD/bin/oomlens-sidecar
JDK=${JDK:-/usr/lib/jvm/java-17-openjdk-amd64}
RUNS=${RUNS:-5}
if [ ! -x "$JDK/bin/jcmd" ] || ! command -v javac >/dev/null; then
	echo "bench_jcmd: skipped: no JDK with jcmd at $JDK"; exit 0
fi
[ -x "$SIDECAR" ] || { echo "bench_jcmd: $SIDECAR not built"; exit 1; }
CLASSES=$BUILD/victims/java
mkdir -p "$CLASSES"
javac -nowarn -d "$CLASSES" tests/victims/java/HeapHog.java || exit 1
OUT=$(mktemp)
"$JDK/bin/java" -XX:NativeMemoryTracking=summary -Xmx128m -cp "$CLASSES" \
	HeapHog 16 >"$OUT" 2>&1 &
PID=$!
trap 'kill $PID 2>/dev/null; wait $PID 2>/dev/null; rm -f "$OUT"' EXIT
for _ in $(seq 100); do grep -q ready "$OUT" && break; sleep 0.1; done
grep -q ready "$OUT" || { echo "bench_jcmd: JVM did not start"; exit 1; }

JATTACH=$(command -v jattach || true)
[ -n "$JATTACH" ] || echo "bench_jcmd: no jattach (apt-get install jattach): not compared"
/usr/bin/python3 - "$RUNS" "$SIDECAR jcmd $PID" "$JDK/bin/jcmd $PID" \
	"${JATTACH:+$JATTACH $PID jcmd}" <<'PY'
import statistics, subprocess, sys, tempfile, time

runs = int(sys.argv[1])
cmds = {"oomlens-sidecar jcmd": (sys.argv[2].split(), ["VM.native_memory", "summary"]),
        "JDK jcmd": (sys.argv[3].split(), ["VM.native_memory", "summary"])}
if sys.argv[4]:
    # jattach takes the jcmd's command line as one argument
    cmds["jattach"] = (sys.argv[4].split(), ["VM.native_memory summary"])

def check(cmd, rc, text):
    if rc != 0 or b"Native Memory Tracking:" not in text:
        sys.exit(f"bench_jcmd: {' '.join(cmd)} failed: {text[:300]!r}")

def wall_ms(cmd, args):
    t0 = time.perf_counter()
    p = subprocess.run(cmd + args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    wall = time.perf_counter() - t0
    check(cmd, p.returncode, p.stdout)
    return wall * 1000

def peak_kib(cmd, args):
    # From /usr/bin/time (a small C parent): a child forked or vforked from
    # Python carries Python's ~11 MiB high-water mark into its ru_maxrss.
    with tempfile.NamedTemporaryFile("r") as rss:
        p = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", rss.name] + cmd + args,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        check(cmd, p.returncode, p.stdout)
        return int(rss.read().split()[-1])

# The calls of the two light commands (ours, jattach) take turns, so that
# both see the same JVM and the same load: measured one after the other,
# 100 calls of the JDK's jcmd in between, their ratio moved by a third from
# run to run. The JDK's jcmd, 100 times slower, is measured on its own.
res, walls = {}, {name: [] for name in cmds}
for name, (cmd, args) in cmds.items():
    wall_ms(cmd, args)  # warm-up: the first call starts the attach listener
light = [name for name in cmds if name != "JDK jcmd"]
for _ in range(runs):
    for name in light:
        walls[name].append(wall_ms(*cmds[name]))
walls["JDK jcmd"] = [wall_ms(*cmds["JDK jcmd"]) for _ in range(runs)]
for name, (cmd, args) in cmds.items():
    res[name] = (statistics.median(walls[name]),
                 max(peak_kib(cmd, args) for _ in range(runs)))
    print(f"{name:22s} wall median {res[name][0]:8.2f} ms   peak RSS {res[name][1]:7d} KiB"
          f"   ({runs} runs)")
ours, jdk = res["oomlens-sidecar jcmd"], res["JDK jcmd"]
print(f"{'ratio (JDK / ours)':22s} wall {jdk[0] / ours[0]:8.1f}x      "
      f"peak RSS {jdk[1] / ours[1]:7.1f}x")
print(f"metric: jcmd.speedup {jdk[0] / ours[0]:.1f}")
print(f"metric: jcmd.lighter {jdk[1] / ours[1]:.1f}")
if "jattach" in res:
    ja = res["jattach"]
    print(f"{'ratio (ours / jattach)':22s} wall {ours[0] / ja[0]:8.2f}x      "
          f"peak RSS {ours[1] / ja[1]:7.2f}x")
    print(f"metric: jcmd.vs_jattach {ours[0] / ja[0]:.2f}")
PY
