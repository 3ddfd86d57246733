# SPDX-License-Identifier: Apache-2.0
"""End to end on cgroup v1, the sidecar alone (needs root): the retention
victim grows in a memory cgroup of 200 MiB, crosses 80/90/95 % and is
OOM-killed; the spool must hold the timeline up to the kill and three
snapshots taken before it."""
import json
import os
import signal
import subprocess
import time

import pytest

BUILD = os.environ.get("OOMLENS_BUILD") or os.path.join(
    os.path.dirname(__file__), "..", "..", "build")
SIDECAR = os.path.join(BUILD, "bin", "oomlens-sidecar")
VICTIMS = os.path.join(BUILD, "victims")
MEMCG = "/sys/fs/cgroup/memory"
LIMIT = 200 << 20


def need_env():
    if os.geteuid() != 0:
        pytest.skip("needs root to create a memory cgroup")
    if not os.path.exists(os.path.join(MEMCG, "memory.limit_in_bytes")):
        pytest.skip("no cgroup v1 memory hierarchy at " + MEMCG)
    for p in [SIDECAR, os.path.join(VICTIMS, "retention")]:
        if not os.access(p, os.X_OK):
            pytest.skip(f"{p} not built")


@pytest.fixture
def cgroup():
    name = f"oomlens-test-sidecar-{os.getpid()}"
    path = os.path.join(MEMCG, name)
    os.mkdir(path)
    try:
        with open(os.path.join(path, "memory.limit_in_bytes"), "w") as f:
            f.write(str(LIMIT))
        yield "/" + name, path
    finally:
        for _ in range(50):
            with open(os.path.join(path, "cgroup.procs")) as f:
                pids = [int(x) for x in f.read().split()]
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            try:
                os.rmdir(path)
                break
            except OSError:
                time.sleep(0.1)


def oom_kills(path):
    with open(os.path.join(path, "memory.oom_control")) as f:
        for line in f:
            k, v = line.split()
            if k == "oom_kill":
                return int(v)
    return 0


def test_retention_victim_crosses_thresholds_and_is_killed(cgroup, tmp_path):
    need_env()
    rel, path = cgroup
    spool = tmp_path / "spool"
    sc = subprocess.Popen([SIDECAR, "run", "--standalone", "--cgroup", rel,
                           "--spool", str(spool), "--interval-ms", "200"],
                          stderr=subprocess.PIPE, text=True)
    victim = None
    try:
        time.sleep(0.5)
        # The victim joins the cgroup before exec: all its memory counts.
        victim = subprocess.Popen(
            ["sh", "-c", f"echo $$ > {path}/cgroup.procs && exec "
             f"{VICTIMS}/retention --threads 4 --mb-per-thread 1 "
             "--mode grow --interval-ms 500"], stdout=subprocess.PIPE)
        deadline = time.time() + 60
        while victim.poll() is None and time.time() < deadline:
            time.sleep(0.2)
        assert victim.returncode == -signal.SIGKILL, "OOM-killed"
        assert oom_kills(path) >= 1
        time.sleep(1.5)  # one more sample and timeline write
    finally:
        if victim and victim.poll() is None:
            victim.kill()
            victim.wait()
        sc.send_signal(signal.SIGTERM)
        _, err = sc.communicate(timeout=10)
    assert sc.returncode == 0, err

    manifest = json.loads((spool / "manifest.json").read_text())
    assert manifest["cgroup"] == rel
    assert manifest["schema"] == "oomlens.io/spool/v1"
    tl = json.loads((spool / "timeline.json").read_text())
    procs = [p for p in tl["processes"] if p["name"] == "retention"]
    assert len(procs) == 1 and procs[0]["end_ms"] is not None
    end_ms = procs[0]["end_ms"]
    samples = tl["samples"]
    assert all(s["limit"] == LIMIT for s in samples)
    # The timeline reaches the kill: the last sample with the victim alive
    # is within 1 s of its end, and its usage was above 90 %.
    alive = [s for s in samples if any(p["rss_kb"] > 0 for p in s["procs"])]
    print("retention_victim: last sample %d ms before the victim's end"
          % (end_ms - alive[-1]["t_ms"]))
    assert end_ms - alive[-1]["t_ms"] <= 1000
    assert max(s["usage"] for s in samples) > 0.9 * LIMIT
    reasons = {s["reason"] for s in tl["snapshots"]}
    assert {"threshold-80", "threshold-90", "threshold-95"} <= reasons, \
        [round(100 * s["usage"] / LIMIT, 1) for s in samples[-15:]]
    for s in tl["snapshots"]:
        assert s["t_ms"] < end_ms, "snapshots taken before the kill"
    dirs = sorted(p.name for p in (spool / "snapshots").iterdir())
    assert len(dirs) == 3, dirs
    complete = 0
    for d in dirs:
        snap = spool / "snapshots" / d
        meta = json.loads((snap / "snapshot.json").read_text())
        pdir = snap / "processes" / str(meta["pids"][0])
        pmeta = json.loads((pdir / "snapshot.json").read_text())
        if not (pdir / "arenas.json").exists():
            # Taken as the kernel killed it: partial, and it says so.
            assert pmeta["truncated"] is True
            assert any(e["file"] == "smaps" for e in pmeta["errors"])
            continue
        arenas = json.loads((pdir / "arenas.json").read_text())
        assert arenas["arena_heaps"] == 4
        assert arenas["arena_rss_kb"] > 0.7 * 0.7 * LIMIT / 1024
        assert (pdir / "pmap.txt").stat().st_size > 1000
        complete += 1
    assert complete >= 2
