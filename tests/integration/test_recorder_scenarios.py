# SPDX-License-Identifier: Apache-2.0
"""The flight recorder under fast growth (issue 12): real OOM kills with
the sidecar recording and the agent writing the bundle. Each asserts the
verdict, that the timeline reaches the kill (the last sample is within
two fast intervals of it) and that no snapshot completed after the kill
is used. Run under the host lock (/tmp/oomlens-realkill.lock)."""
import json
import os
import signal
import subprocess
import time

import pytest

from oomtest import (JAVA_DIR, Sidecar, VICTIMS, agent_env, bundle_files,
                     javac, run_in_cgroup, wait_oom_ratelimit)

MiB = 1 << 20
FAST_MS = 100
# The last sample in the bundle may be one fast interval before the kill
# (the sampler's period), plus one more when the agent copied the timeline
# between a sample and its write (the flusher writes right after each
# sample: ms, but under load it can be late), plus 100 ms for the
# sampler's wake-up under contention and the kill time's own error (the
# kmsg clock offset, ~1 ms): measured here 253 ms once at load 29 on 2
# cores (other suites running), 41-125 ms otherwise. Goal of issue 12:
# max gap <= 2 x the adaptive interval (bench_gap.sh measures it).
MAX_GAP_MS = 2 * FAST_MS + 100


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    yield from agent_env(tmp_path_factory, "recorder")


class CpuHog:
    """A busy loop per core at nice -5 (above the sidecar's priority unless
    it may raise its own), each bounded by timeout(1)."""

    def __init__(self, seconds=150):
        # Each in a process group of its own: killing timeout(1) alone
        # would leave its busy child running for good.
        self.procs = [subprocess.Popen(
            ["timeout", str(seconds), "nice", "-n", "-5", "sh", "-c",
             "while :; do :; done"], start_new_session=True)
            for _ in range(os.cpu_count() or 1)]

    def stop(self):
        for p in self.procs:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait()


def run(env, name, limit_mb, argv, hog=False, timeout=120):
    cg, agent, tmp = env
    cg.mkdir("/" + name, limit_mb=limit_mb)
    sc = Sidecar(cg.path("/" + name), str(tmp / "spool" / name),
                 ["--fast-interval-ms", str(FAST_MS)])
    wait_oom_ratelimit()
    cpu = CpuHog() if hog else None
    try:
        start_ms = time.time() * 1000
        victim = run_in_cgroup(cg, "/" + name, argv)
        line = agent.next(timeout=timeout)
        try:
            out, _ = victim.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            victim.kill()
            out, _ = victim.communicate()
    finally:
        if cpu:
            cpu.stop()
        sc.stop()
    files = bundle_files(line["path"])
    run.start_ms, run.out = start_ms, out
    return line, files


def check_recorder(files):
    """The timeline reaches the kill; the snapshot used is pre-kill."""
    man = json.loads(files["manifest.json"])
    tl = json.loads(files["timeline.json"])
    kill = man["killed_at_ms"]
    before = [s for s in tl["samples"] if s["t_ms"] <= kill]
    assert before, "no sample before the kill"
    gap = kill - before[-1]["t_ms"]
    assert gap <= MAX_GAP_MS, (gap, [s["t_ms"] - kill for s in tl["samples"][-8:]])
    # fast sampling near the limit: the last second has >= 5 samples
    last_s = [s for s in before if kill - s["t_ms"] <= 1000]
    assert len(last_s) >= 5, [s["t_ms"] - kill for s in before[-10:]]
    sc = man.get("sidecar") or {}
    if sc.get("snapshot"):
        snap = json.loads(files["spool/snapshot.json"])
        assert snap["t_ms"] <= kill and snap["after_kill"] is False, snap
        assert sc["snapshot_ms"] <= kill
    for s in tl["snapshots"]:
        if s.get("after_kill"):
            assert s["dir"].split("/")[-1] != sc.get("snapshot"), s
    return man, tl, gap


def check_java_heap(files, limit_mb):
    diag = json.loads(files["diagnosis.json"])
    assert diag["verdict"] == "java-heap", diag["verdicts"]
    assert "native-growth" not in [v["verdict"] for v in diag["verdicts"]]
    v = diag["verdicts"][0]
    rec = v["recommendations"][0]
    assert "-Xmx" in rec and "MaxRAMPercentage" in rec, rec
    xmx = int(rec.split("-Xmx")[1].split("M")[0])
    # limit minus the native part (a JVM 17 here: 40-120 MiB) minus 10 %
    assert 0.3 * limit_mb <= xmx <= 0.85 * limit_mb, rec
    assert any("configured to outgrow" in e for e in v["evidence"]), v
    for p in diag["ledger"]:
        assert "age_s" in p, p
    return diag


def test_jvm_heap_outgrows_container(env):
    javac("HeapGrower")
    limit = 300
    line, files = run(env, "jvm", limit,
                      ["java", "-Xmx1g", "-cp", JAVA_DIR, "HeapGrower",
                       "16", "2000"])
    man, tl, gap = check_recorder(files)
    check_java_heap(files, limit)
    # the configuration check happened before the kill, in the timeline
    ev = [e for e in tl["events"] if e["kind"] == "jvm-configured-to-outgrow"]
    assert ev and ev[0]["t_ms"] < man["killed_at_ms"], tl["events"]
    j = tl["jvms"][0]
    assert j["max_heap"] == 1 << 30 and j["heap_outgrows"] is True, j
    assert j["heap_ranges"] and j["limit"] == limit * MiB, j
    # the heap's mappings are named in the report's largest mappings
    assert b"java heap (" in files["report.html"]
    print("gap before the kill: %d ms" % gap)


def test_jvm_heap_outgrows_container_under_cpu_hog(env):
    javac("HeapGrower")
    limit = 300
    line, files = run(env, "jvmhog", limit,
                      ["java", "-Xmx1g", "-cp", JAVA_DIR, "HeapGrower",
                       "16", "2000"], hog=True, timeout=180)
    man, tl, gap = check_recorder(files)
    check_java_heap(files, limit)
    print("gap before the kill under a CPU hog: %d ms" % gap)


def test_c_growing_50mib_s_is_native_growth(env):
    # 5 MiB every 100 ms = 50 MiB/s into 640 MiB: ~12 s of growth, enough
    # for the steady-growth verdict (>= 10 s of timeline)
    line, files = run(env, "c50", 640,
                      [os.path.join(VICTIMS, "leak"), "--chunk-kb", "5120",
                       "--interval-ms", "100"])
    man, tl, gap = check_recorder(files)
    diag = json.loads(files["diagnosis.json"])
    assert diag["verdict"] == "native-growth", diag["verdicts"]
    v = diag["verdicts"][0]
    rate = float(v["evidence"][0].split(" by ")[1].split(" ")[0])
    unit = v["evidence"][0].split(" by ")[1].split(" ")[1]
    mib_min = rate * (1024 if unit.startswith("GiB") else 1)
    # against what the leak really did (asked 3000 MiB/min; a loaded host
    # slows it): its last allocated_bytes over the time from its start to
    # the kill; 35 % (the regression also sees the sidecar's idle start)
    held = [json.loads(l)["allocated_bytes"] for l in run.out.splitlines()
            if l.startswith("{")]
    truth = held[-1] / MiB / ((man["killed_at_ms"] - run.start_ms) / 60000)
    assert abs(mib_min - truth) <= 0.35 * truth, (v["evidence"][0], truth)
    print("gap before the kill: %d ms" % gap)
