"""Detection latency over N real OOM kills (median, p90, p99, max)."""
import os
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "integration"))
from oomtest import Agent, Cgroup, cgroup_root, hog  # noqa: E402


def main():
    n = int(sys.argv[1])
    if os.geteuid() != 0 or cgroup_root()[0] is None:
        print("latency: skipped: needs root and a memory cgroup controller")
        return 0
    cg = Cgroup("oomlens-bench-latency-%d" % os.getpid())
    try:
        cg.mkdir("/app", limit_mb=16)
        with tempfile.TemporaryDirectory() as state:
            agent = Agent([cg.path()], state)
            lat = []
            for _ in range(n):
                hog(cg, "/app", "--step-mb", "8")
                lat.append(agent.next()["detect_latency_us"])
            status = open("/proc/%d/status" % agent.proc.pid).read()
            hwm = [l.split()[1] for l in status.splitlines() if l.startswith("VmHWM:")][0]
            ticks = open("/proc/%d/stat" % agent.proc.pid).read().rsplit(")", 1)[1].split()
            cpu_ms = (int(ticks[11]) + int(ticks[12])) * 1000 // os.sysconf("SC_CLK_TCK")
            assert agent.stop() == 0
    finally:
        cg.cleanup()
    lat.sort()
    p = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))]
    print("latency: %d real kills: median %.2f ms, p90 %.2f ms, p99 %.2f ms, max %.2f ms"
          % (n, statistics.median(lat) / 1e3, p(0.90) / 1e3, p(0.99) / 1e3, lat[-1] / 1e3))
    print("latency: the agent's own cost for them: peak RSS %s KiB, CPU %d ms "
          "(%.1f ms per kill, bundle and report included)"
          % (hwm, cpu_ms, cpu_ms / n))
    return 0


if __name__ == "__main__":
    sys.exit(main())
