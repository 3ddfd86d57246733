# SPDX-License-Identifier: Apache-2.0
"""oomlens-sidecar run against a fixture host root (--host-root): a cgroup
v2 tree and /proc files copied from tests/fixtures/smaps. Drives usage
across thresholds by rewriting memory.current, adds and removes processes,
removes the cgroup. Needs neither root nor a real cgroup."""
import json
import os
import shutil
import signal
import subprocess
import time

import pytest

BUILD = os.environ.get("OOMLENS_BUILD") or os.path.join(
    os.path.dirname(__file__), "..", "..", "build")
SIDECAR = os.path.join(BUILD, "bin", "oomlens-sidecar")
FIX = os.path.join(os.path.dirname(__file__), "..", "fixtures", "smaps")
LIMIT = 200_000_000


def write(path, text):
    tmp = f"{path}.tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.rename(tmp, path)


def add_proc(root, pid, fixture):
    d = root / "proc" / str(pid)
    d.mkdir(parents=True)
    for f in ["status", "cmdline", "smaps", "smaps_rollup"]:
        shutil.copy(os.path.join(FIX, fixture, f), d / f)
    (d / "cgroup").write_text("0::/demo/app\n")


def wait_for(pred, what, timeout=10):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            v = pred()
            if v:
                return v
        except (OSError, ValueError, KeyError):
            pass
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def timeline(spool):
    return json.loads((spool / "timeline.json").read_text())


def reasons(spool):
    return [s["reason"] for s in timeline(spool)["snapshots"]]


def thresholds(spool):
    """The threshold snapshots' reasons; a jump in usage also predicts the
    limit within seconds, which adds time-to-limit snapshots between."""
    rs = reasons(spool)
    assert all(r.startswith("threshold-") or r == "time-to-limit" for r in rs), rs
    return [r for r in rs if r.startswith("threshold-")]


@pytest.fixture
def fake(tmp_path):
    if not os.access(SIDECAR, os.X_OK):
        pytest.skip(f"{SIDECAR} not built")
    root = tmp_path / "root"
    cg = root / "sys" / "fs" / "cgroup"
    app = cg / "demo" / "app"
    app.mkdir(parents=True)
    (cg / "cgroup.controllers").write_text("cpu memory pids\n")
    write(app / "memory.max", f"{LIMIT}\n")
    write(app / "memory.current", f"{LIMIT // 2}\n")
    write(app / "cgroup.procs", "101\n")
    add_proc(root, 101, "retention")
    spool = tmp_path / "spool"
    sc = subprocess.Popen([SIDECAR, "run", "--standalone", "--host-root",
                           str(root), "--cgroup", "/demo/app", "--spool",
                           str(spool), "--interval-ms", "50",
                           "--predict-s", "0"],
                          stderr=subprocess.PIPE, text=True)
    yield root, app, spool, sc
    if sc.poll() is None:
        sc.send_signal(signal.SIGKILL)
        sc.wait()


def set_usage(app, pct):
    write(app / "memory.current", f"{LIMIT * pct // 100}\n")


def test_thresholds_processes_and_spool(fake):
    root, app, spool, sc = fake
    wait_for(lambda: len(timeline(spool)["samples"]) >= 3, "samples")
    tl = timeline(spool)
    assert tl["snapshots"] == []
    assert tl["samples"][-1]["limit"] == LIMIT
    assert tl["samples"][-1]["usage"] == LIMIT // 2
    manifest = json.loads((spool / "manifest.json").read_text())
    assert manifest["cgroup"] == "/demo/app"
    assert manifest["cgroup_mode"] == 2
    assert manifest["pids"] == [101]

    set_usage(app, 85)
    wait_for(lambda: thresholds(spool) == ["threshold-80"], "80 % snapshot")

    # A new process in the cgroup (in a child cgroup) is picked up.
    add_proc(root, 102, "jvm17")
    (app / "ctr").mkdir()
    write(app / "ctr" / "cgroup.procs", "102\n")
    wait_for(lambda: json.loads((spool / "manifest.json").read_text())
             ["pids"] == [101, 102], "pid 102 in the manifest")

    # A jump over 90 and 95: the highest is snapshotted (90 too, at most).
    set_usage(app, 97)
    wait_for(lambda: thresholds(spool)[-1:] == ["threshold-95"], "95 %")
    assert thresholds(spool) in (["threshold-80", "threshold-95"],
                                 ["threshold-80", "threshold-90", "threshold-95"])
    newest = spool / next(s["dir"] for s in timeline(spool)["snapshots"]
                          if s["reason"] == "threshold-95")
    meta = json.loads((newest / "snapshot.json").read_text())
    assert meta["pids"] == [101, 102]
    assert meta["usage"] == LIMIT * 97 // 100
    # The snapshot's table is the procps golden of the same smaps.
    ours = (newest / "processes" / "101" / "pmap.txt").read_text()
    golden = open(os.path.join(FIX, "retention", "pmap-X.txt")).read()
    assert ours.splitlines()[1:] == golden.splitlines()[1:]
    arenas = json.loads((newest / "processes" / "101" / "arenas.json")
                        .read_text())
    assert arenas["arena_heaps"] == 4
    assert (newest / "processes" / "102" / "classes.json").exists()

    # A process that goes away is kept with its end time.
    shutil.rmtree(root / "proc" / "101")
    write(app / "cgroup.procs", "")
    wait_for(lambda: [p for p in timeline(spool)["processes"]
                      if p["pid"] == 101 and p["end_ms"]], "end of 101")

    # Below 95-5 and 80-5: re-armed; crossing again snapshots again.
    before = len(thresholds(spool))
    set_usage(app, 70)
    time.sleep(0.3)
    set_usage(app, 82)
    wait_for(lambda: thresholds(spool)[before:] == ["threshold-80"], "80 % again")
    set_usage(app, 50)
    time.sleep(0.3)
    set_usage(app, 99)
    wait_for(lambda: thresholds(spool)[before + 1:][-1:] == ["threshold-95"],
             "95 % again")
    again = thresholds(spool)[before:]
    assert again[0] == "threshold-80" and again[-1] == "threshold-95", again
    dirs = sorted(p.name for p in (spool / "snapshots").iterdir())
    assert len(dirs) == 3, "newest 3 kept"
    assert dirs == sorted(os.path.basename(s["dir"]) for s in
                          timeline(spool)["snapshots"][-3:])

    # The cgroup goes away: the sidecar writes its last timeline and exits.
    shutil.rmtree(app)
    _, err = sc.communicate(timeout=10)
    assert sc.returncode == 0, err
    assert "cgroup removed" in err
    last = timeline(spool)
    assert [p["end_ms"] is not None for p in last["processes"]] == \
        [True, True]


def test_bad_arguments():
    if not os.access(SIDECAR, os.X_OK):
        pytest.skip(f"{SIDECAR} not built")
    for args in [["--standalone", "--spool", "/tmp/x"],
                 ["--standalone", "--cgroup", "/a", "--pid", "1",
                  "--spool", "/tmp/x"],
                 ["--standalone", "--pid", "1", "--spool", "/tmp/x",
                  "--thresholds", "80,abc"],
                 ["--standalone", "--pid", "-3", "--spool", "/tmp/x"],
                 ["--standalone", "--pid", "1", "--spool", "/tmp/x",
                  "--interval-ms", "0"],
                 ["--pid", "1", "--spool", "/tmp/x"]]:
        r = subprocess.run([SIDECAR, "run"] + args, capture_output=True,
                           text=True, timeout=10)
        assert r.returncode == 2, (args, r.stderr)
        assert "usage:" in r.stderr


def test_pid_mode_with_limit(tmp_path):
    """--pid without a cgroup: usage is the RSS sum, --limit the limit; the
    sidecar stops once every watched process is gone."""
    if not os.access(SIDECAR, os.X_OK):
        pytest.skip(f"{SIDECAR} not built")
    root = tmp_path / "root"
    add_proc(root, 201, "retention")  # VmRSS 36384 kB
    spool = tmp_path / "spool"
    sc = subprocess.Popen([SIDECAR, "run", "--standalone", "--host-root",
                           str(root), "--pid", "201", "--limit", "38M",
                           "--spool", str(spool), "--interval-ms", "50"],
                          stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: reasons(spool) == ["threshold-90"], "93 % of 38M")
        s = timeline(spool)["samples"][-1]
        assert s["usage"] == 36384 * 1024 and s["limit"] == 38 << 20
        assert s["procs"][0]["anon_kb"] > 30000
        shutil.rmtree(root / "proc" / "201")
        _, err = sc.communicate(timeout=10)
    finally:
        if sc.poll() is None:
            sc.kill()
            sc.wait()
    assert sc.returncode == 0, err
    assert "all processes exited" in err
    assert timeline(spool)["processes"][0]["end_ms"] is not None
    assert json.loads((spool / "manifest.json").read_text())["cgroup"] is None
