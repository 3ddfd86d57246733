# SPDX-License-Identifier: Apache-2.0
"""bench_gap: the flight recorder's blind spot before a kill (issue 12).
KILLS real OOM kills (default 10) of a C leak growing 50 MiB/s into a
192 MiB cgroup, with the sidecar (--interval-ms 250 --fast-interval-ms
100) and the agent; then the same with a CPU hog (a busy loop per core at
nice -5). For each kill: gap = killed_at_ms - the newest timeline sample
in the bundle at or before it. Prints median and max per condition, and
the sidecar's CPU time, peak RSS and VmLck. Measures; fails only when a
kill or a bundle is missing. Needs root, a memory cgroup and the host
lock (bench_gap.sh takes it)."""
import json
import os
import signal
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..",
                                "integration"))
from oomtest import (Agent, Cgroup, Sidecar, VICTIMS, bundle_files,  # noqa
                     cpu_ticks, require_oom_env, run_in_cgroup, status_kib)

KILLS = int(os.environ.get("KILLS", "10"))
FAST_MS = 100


def cpu_ms(pid):
    return cpu_ticks(pid) * 1000 // os.sysconf("SC_CLK_TCK")


def one_kill(cg, agent, tmp, name, hog):
    cg.mkdir("/" + name, limit_mb=192)
    sc = Sidecar(cg.path("/" + name), os.path.join(tmp, "spool", name),
                 ["--fast-interval-ms", str(FAST_MS)])
    hogs = []
    if hog:
        # own process groups: killing timeout(1) alone leaves its child
        hogs = [subprocess.Popen(["timeout", "60", "nice", "-n", "-5", "sh",
                                  "-c", "while :; do :; done"],
                                 start_new_session=True)
                for _ in range(os.cpu_count() or 1)]
    t0 = time.time()
    try:
        v = run_in_cgroup(cg, "/" + name,
                          [os.path.join(VICTIMS, "leak"), "--chunk-kb",
                           "5120", "--interval-ms", "100"])
        line = agent.next(timeout=60)
        v.wait(timeout=10)
        cost = (cpu_ms(sc.proc.pid), status_kib(sc.proc.pid, "VmHWM"),
                status_kib(sc.proc.pid, "VmLck"), time.time() - t0)
    finally:
        for h in hogs:
            try:
                os.killpg(h.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            h.wait()
        sc.stop()
    files = bundle_files(line["path"])
    man = json.loads(files["manifest.json"])
    tl = json.loads(files["timeline.json"])
    kill = man["killed_at_ms"]
    before = [s["t_ms"] for s in tl["samples"] if s["t_ms"] <= kill]
    return kill - before[-1], cost


def main():
    require_oom_env()
    tmp = "/tmp/oomlens-bench-gap-%d" % os.getpid()
    cg = Cgroup("oomlens-bench-gap-%d" % os.getpid())
    agent = Agent([cg.path()], os.path.join(tmp, "state"),
                  ["--spool-dir", os.path.join(tmp, "spool")])
    try:
        for hog in (False, True):
            gaps, costs = [], []
            for i in range(KILLS):
                gap, cost = one_kill(cg, agent, tmp,
                                     "%s%d" % ("hog" if hog else "k", i), hog)
                gaps.append(gap)
                costs.append(cost)
            cpu = statistics.median(c[0] / (c[3] * 1000.0) for c in costs)
            print("%s: %d kills, gap before the kill: median %d ms, max %d "
                  "ms (goal <= %d ms); sidecar CPU %.1f %% of a core, peak "
                  "RSS %d KiB, VmLck %d KiB" %
                  ("with a CPU hog (nice -5, every core)" if hog
                   else "no hog", len(gaps), statistics.median(gaps),
                   max(gaps), 2 * FAST_MS, cpu * 100,
                   max(c[1] for c in costs), max(c[2] for c in costs)))
            sys.stdout.flush()
    finally:
        agent.stop()
        cg.cleanup()
        subprocess.run(["rm", "-rf", tmp])


if __name__ == "__main__":
    main()
