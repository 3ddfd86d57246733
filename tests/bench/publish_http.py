"""Standalone publishing over N real OOM kills: kill -> the collector's
2xx (p50, p90, max), and the agent's peak RSS and CPU without and with
--publish-url (bench_publish_http.sh)."""
import json
import os
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(__file__)
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
from oomtest import Agent, Cgroup, cgroup_root, free_port, hog  # noqa: E402
from test_publish_http import Collector, make_ca, parts  # noqa: E402


def cost(agent):
    """(peak RSS KiB, CPU ms) of the agent so far."""
    status = open("/proc/%d/status" % agent.proc.pid).read()
    hwm = int([l.split()[1] for l in status.splitlines()
               if l.startswith("VmHWM:")][0])
    ticks = open("/proc/%d/stat" % agent.proc.pid).read().rsplit(")", 1)[1]
    ticks = ticks.split()
    return hwm, (int(ticks[11]) + int(ticks[12])) * 1000 // \
        os.sysconf("SC_CLK_TCK")


def run(cg, n, extra, col=None):
    """n kills under an agent with extra; its (peak RSS, CPU, idle RSS
    after start) and, with a collector, each kill's delivery latency."""
    lat = []
    with tempfile.TemporaryDirectory() as state:
        agent = Agent([cg.path()], state, extra)
        time.sleep(0.5)
        idle = cost(agent)[0]
        try:
            for _ in range(n):
                hog(cg, "/app", "--step-mb", "8")
                agent.next()
                if col is None:
                    continue
                want = len(lat) + 1
                deadline = time.monotonic() + 30
                while len(col.accepted()) < want:
                    assert time.monotonic() < deadline, agent.log()
                    time.sleep(0.002)
                post = col.accepted()[-1]
                report = json.loads(parts(post)["report"][1])
                lat.append(post["at_ms"] - report["killed_at_ms"])
            hwm, cpu = cost(agent)
        finally:
            assert agent.stop() == 0
    return hwm, cpu, idle, lat


def main():
    n = int(sys.argv[1])
    if os.geteuid() != 0 or cgroup_root()[0] is None:
        print("publish_http: skipped: needs root and a memory cgroup "
              "controller")
        return 0
    cg = Cgroup("oomlens-bench-publish-http-%d" % os.getpid())
    tls = tempfile.mkdtemp()
    try:
        cg.mkdir("/app", limit_mb=16)
        ca, crt, key = make_ca(tls, "bench")
        port = free_port()
        col = Collector(port, crt, key)
        plain = run(cg, n, [])
        pub = run(cg, n, ["--publish-url", "https://127.0.0.1:%d/oom" % port,
                          "--publish-ca-file", ca], col)
        col.stop()
    finally:
        cg.cleanup()
    lat = sorted(pub[3])
    assert len(lat) == n and len(col.posts) == n, (len(lat), len(col.posts))
    p = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))]
    print("publish_http: %d real kills, kill -> the collector's 2xx: median "
          "%.1f ms, p90 %.1f ms, max %.1f ms"
          % (n, statistics.median(lat), p(0.90), lat[-1]))
    print("publish_http: the agent without --publish-url: RSS %d KiB after "
          "start, peak %d KiB, CPU %d ms for %d kills"
          % (plain[2], plain[0], plain[1], n))
    print("publish_http: the agent with it: RSS %d KiB after start, peak "
          "%d KiB, CPU %d ms for %d kills" % (pub[2], pub[0], pub[1], n))
    print("metric: publish_http.p50_ms %.1f" % statistics.median(lat))
    print("metric: publish_http.peak_kib_more %d" % (pub[0] - plain[0]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
