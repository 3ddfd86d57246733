"""The agent's memory under a hostile pod's spool: what a pod writes into
its own spool (sparse files that use no disk, JSON texts whose parse tree
is a hundred times their size) is read within one byte budget per pod and
parsed within a tree budget, so a real kill's capture keeps the agent's
peak RSS far under the chart's 128 MiB limit, and the memory is given
back once the bundle is written.

Each test makes a real OOM kill in a test cgroup and reads the agent's
VmHWM and VmRSS from /proc."""
import json
import os
import time

import pytest

from oomtest import (Agent, Cgroup, bundle_files, hog, require_oom_env,
                     status_kib, wait_oom_ratelimit)

MiB = 1 << 20
SPOOL_FILE_MAX = 8 * MiB      # common/forensics/spool.c, per file
PEAK_BOUND_MIB = 64           # half the chart's limit (values.yaml)


@pytest.fixture
def env(tmp_path):
    require_oom_env()
    cg = Cgroup("oomlens-test-hostile-spool-%d" % os.getpid())
    cg.mkdir("/evil", limit_mb=16)
    agent = Agent([cg.path()], str(tmp_path / "state"),
                  ["--spool-dir", str(tmp_path / "spool")])
    yield cg, agent, tmp_path / "spool" / "evil"
    agent.stop()
    cg.cleanup()


def costly_json(size, head=b'{"samples":[', tail=b"]}"):
    """A valid JSON text of about size bytes made of empty arrays: json-c
    spends ~150 bytes on each two-byte `[]`."""
    n = (size - len(head) - len(tail)) // 3
    return head + b",".join([b"[]"] * n) + tail


def sparse(path, size):
    with open(path, "wb") as f:
        f.truncate(size)


def hostile_spool(spool, cgroup):
    """A spool that passes every per-file check: its manifest names the
    killed cgroup, each file is under its cap."""
    snap = spool / "snapshots" / "1" / "processes" / "1"
    snap.mkdir(parents=True)
    (spool / "manifest.json").write_text(json.dumps(
        {"schema": "oomlens.io/spool/v1", "cgroup": cgroup, "pids": [1]}))
    (spool / "timeline.json").write_bytes(costly_json(SPOOL_FILE_MAX - 64))
    # just under the tree budget (BUNDLE_JSON_MAX_TREE, 32 MiB): parsed
    (spool / "snapshots" / "1" / "snapshot.json").write_bytes(costly_json(
        600 * 1024, b'{"reason":"threshold","t_ms":1,"pids":[1],"x":['))
    # the newest snapshot's metadata: 780 KB of {} is a 200 MB tree, not
    # parsed, so that snapshot is not picked
    (spool / "snapshots" / "2").mkdir()
    (spool / "snapshots" / "2" / "snapshot.json").write_bytes(costly_json(
        780 * 1024, b'{"reason":"threshold","t_ms":2,"pids":[1],"x":[')
        .replace(b"[]", b"{}"))
    for i in range(48):  # 384 MiB that use no disk
        sparse(snap / ("f%02d" % i), SPOOL_FILE_MAX)
    (snap / "maps.json").write_bytes(costly_json(SPOOL_FILE_MAX - 64,
                                                 b'{"maps":[', b"]}"))


def test_a_hostile_spool_keeps_the_agent_far_under_its_limit(env):
    cg, agent, spool = env
    hostile_spool(spool, cg.path("/evil"))
    pid = agent.proc.pid
    before = status_kib(pid, "VmRSS")
    wait_oom_ratelimit()
    _, _, rc = hog(cg, "/evil", "--step-mb", "4")
    assert rc == -9, "the hog was not killed"
    line = agent.next(timeout=60)
    files = bundle_files(line["path"])
    man = json.loads(files["manifest.json"])
    # the spool was this cgroup's and was read, within the budget
    assert man["sidecar"]["dir"].endswith("/evil"), man.get("sidecar")
    assert "spool/manifest.json" in files
    assert "spool/snapshot.json" in files
    assert man["sidecar"]["snapshot"] == "1", man["sidecar"]
    assert "timeline.json" in files  # kept as evidence
    peak = status_kib(pid, "VmHWM") >> 10
    assert peak < PEAK_BOUND_MIB, "agent peak %d MiB (was %d KiB before)\n%s" \
        % (peak, before, agent.log())
    cut = {t["path"]: t["reason"] for t in man.get("truncated", [])}
    budget = [p for p, why in cut.items() if "budget" in why]
    assert budget, "nothing was refused for the pod's budget: %s" % cut
    assert "47 more files left out" in cut.get("spool/", ""), cut
    raw = sum(len(v) for k, v in files.items() if k.startswith("processes/"))
    assert raw < 16 * MiB, raw
    # the timeline is read one sample at a time: each `[]` is refused
    # alone (not an object), counted in one note, the file never cut
    assert "timeline.json" not in cut, cut
    n = (SPOOL_FILE_MAX - 64 - len(b'{"samples":[') - len(b"]}")) // 3
    notes = json.loads(files["diagnosis.json"])["notes"]
    want = ("timeline.json: %d samples not objects or over "
            "BUNDLE_JSON_MAX_TREE alone: ignored" % n)
    assert want in notes, notes
    # given back: once the bundle is written the agent is near where it
    # started (the heap's top is trimmed, large buffers were mmap'd)
    deadline = time.time() + 5
    while status_kib(pid, "VmRSS") > before + 8 * 1024 and \
            time.time() < deadline:
        time.sleep(0.2)
    after = status_kib(pid, "VmRSS")
    assert after < before + 8 * 1024, (before, after, peak)
