"""Diagnosis scenarios: each a real program OOM-killed in a real memory
cgroup on this machine, with the sidecar recording it and the agent
writing the bundle. Each asserts the verdict and the ledger's main figure
against the program's own account of what it did, within the stated
tolerance."""
import json
import os
import re
import shutil
import subprocess

import pytest

from oomtest import (JAVA_DIR, Sidecar, VICTIMS, agent_env, bundle_files,
                     hog, javac, ledger_part, run_in_cgroup,
                     wait_oom_ratelimit)

MiB = 1 << 20


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    yield from agent_env(tmp_path_factory, "scenarios")


UNITS = {"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}
FIGURE = re.compile(r"(-?\d+(?:\.(\d+))?) (KiB|MiB|GiB)\b")


def figures(text):
    """(bytes, the text as printed, rounding allowance) of each size."""
    for m in FIGURE.finditer(text):
        half = 0.5 * 10 ** -len(m.group(2) or "") * UNITS[m.group(3)]
        yield float(m.group(1)) * UNITS[m.group(3)], m.group(0), half


def assert_sane_figures(diag, summary, html):
    """No figure of the diagnosis is negative or above twice the limit: the
    numbers of diagnosis.json, the summary line up to its recommendation,
    and report.html outside the evidence and recommendation lists (those
    quote the JVM's own settings, e.g. -Xmx1g, and advice), the notes card
    (it quotes what was clipped) and the kernel's report."""
    limit = diag.get("limit_bytes")
    high = 2 * limit if limit else None

    def check(v, what, half=0):
        assert v >= 0, (what, v)
        if high is not None:
            assert v - half <= high, "%s: %s above 2x the %d-byte limit" % (
                what, v, limit)

    def walk(o, where):
        if isinstance(o, dict):
            for k, v in o.items():
                if k.endswith("bytes") and isinstance(v, (int, float)) \
                        and not isinstance(v, bool):
                    check(v, where + "." + k)
                walk(v, where + "." + k)
        elif isinstance(o, list):
            for i, v in enumerate(o):
                walk(v, "%s[%d]" % (where, i))
    walk(diag, "diagnosis")
    assert diag["usage_bytes"] <= (limit or diag["usage_bytes"]) * 1.05 + (4 << 20)
    for text in (diag["summary"], summary):
        for v, s, half in figures(text.split(";")[0]):
            check(v, "summary %r: %s" % (text, s), half)
    page = re.sub(r"<ul>.*?</ul>|<div class=\"other\">.*?</div>|<pre>.*?</pre>",
                  "", html, flags=re.S)
    # the summary's advice ("raise the limit to 64 MiB", in 64 MiB steps)
    page = re.sub(r";[^<]*</p>", "</p>", page)
    for v, s, half in figures(page):
        check(v, "report.html: " + s, half)


def check_bundle(line, files):
    """Every bundle's figures, whatever the scenario."""
    diag = json.loads(files["diagnosis.json"])
    assert_sane_figures(diag, line.get("summary", ""),
                        files["report.html"].decode())
    return diag


def run_scenario(env, name, limit_mb, argv, sidecar_extra=(), timeout=90):
    """Runs argv in <cgroup>/name under a sidecar until the agent reports
    its kill. Returns (report line, diagnosis, bundle files, stdout lines
    of the victim as parsed JSON or raw text)."""
    cg, agent, tmp = env
    cg.mkdir("/" + name, limit_mb=limit_mb)
    sc = Sidecar(cg.path("/" + name), str(tmp / "spool" / name), sidecar_extra)
    wait_oom_ratelimit()  # the kernel's full report, with its memcg stats
    try:
        victim = run_in_cgroup(cg, "/" + name, argv)
        line = agent.next(timeout=timeout)
        try:
            out, _ = victim.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            victim.kill()
            out, _ = victim.communicate()
    finally:
        sc.stop()
    files = bundle_files(line["path"])
    diag = check_bundle(line, files)
    assert diag["usage_source"], diag
    lines = []
    for l in out.splitlines():
        try:
            lines.append(json.loads(l))
        except ValueError:
            lines.append(l)
    return line, diag, files, lines


def verdicts(diag):
    return [v["verdict"] for v in diag["verdicts"]]


def test_true_leak_is_native_growth(env):
    # 4 MiB every 250 ms = 16 MiB/s, into a 192 MiB limit: ~12 s of growth.
    line, diag, files, out = run_scenario(
        env, "leak", 192, [os.path.join(VICTIMS, "leak"), "--chunk-kb", "4096",
                           "--interval-ms", "250"])
    assert diag["verdict"] == "native-growth", diag["verdicts"]
    assert line["verdict"] == "native-growth"
    steps = [o for o in out if isinstance(o, dict)]
    assert len(steps) >= 20
    # ground truth: the leak's own rate, MiB/min; tolerance 30 %
    v = diag["verdicts"][0]
    rate = float(v["evidence"][0].split(" by ")[1].split(" MiB/min")[0])
    assert 16 * 60 * 0.7 <= rate <= 16 * 60 * 1.3, v["evidence"][0]
    assert "timeline.json" in files


def test_tmpfs_fill_is_tmpfs_shmem(env, tmp_path):
    mnt = tmp_path / "tmpfs"
    mnt.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1g", "oomlens-test", str(mnt)],
                   check=True)
    try:
        line, diag, files, out = run_scenario(
            env, "tmpfs", 96, [os.path.join(VICTIMS, "tmpfs_writer"), str(mnt),
                               "--file-mb", "4", "--interval-ms", "50"])
        written = max(o["written_bytes"] for o in out if isinstance(o, dict))
    finally:
        shutil.rmtree(mnt, ignore_errors=True)
        subprocess.run(["umount", str(mnt)], check=False)
    assert diag["verdict"] == "tmpfs-shmem", diag["verdicts"]
    shmem = ledger_part(diag, "shmem/tmpfs")
    # the kernel's shmem figure against the bytes the writer wrote: 10 %
    assert abs(shmem - written) <= 0.10 * written, (shmem, written)
    assert "sizeLimit" in diag["verdicts"][0]["recommendations"][0]


def test_child_victim_is_child_process(env):
    line, diag, files, out = run_scenario(
        env, "child", 64, [os.path.join(VICTIMS, "hog"), "--child",
                           "--step-mb", "2", "--delay-ms", "100"])
    child = [o["pid"] for o in out if isinstance(o, dict) and o["event"] == "child"][0]
    assert [v["pid"] for v in line["victims"]] == [child]
    assert "child-process" in verdicts(diag)
    v = diag["verdicts"][verdicts(diag).index("child-process")]
    assert str(child) in v["evidence"][0]


def test_sudden_spike_after_idle_is_spike(env):
    # 8 MiB held for 4 s, then 16 MiB steps with no pause into 128 MiB
    line, diag, files, out = run_scenario(
        env, "spike", 128, [os.path.join(VICTIMS, "hog"), "--base-mb", "8",
                            "--idle-ms", "4000", "--step-mb", "16"])
    assert diag["verdict"] == "spike", diag["verdicts"]
    v = diag["verdicts"][0]
    # from about the 8 MiB it idled at (plus the process's own ~1-3 MiB)
    low = float(v["evidence"][0].split("went from ")[1].split(" MiB")[0])
    assert 8 <= low <= 16, v["evidence"][0]


def test_glibc_retention_c(env):
    line, diag, files, out = run_scenario(
        env, "retention", 256,
        [os.path.join(VICTIMS, "retention"), "--threads", "8",
         "--mb-per-thread", "6", "--mode", "grow", "--interval-ms", "1500"],
        sidecar_extra=["--allocator-probe", "ptrace", "--trim", "test",
                       "--thresholds", "60,70,80"])
    assert diag["verdict"] == "glibc-retention", diag["verdicts"]
    assert any(n.endswith("/allocator.json") for n in files)
    kept = ledger_part(diag, "glibc retention")
    used = ledger_part(diag, "glibc heap in use")
    truth = [o for o in out if isinstance(o, dict) and "mallinfo2" in o][-1]
    free_b = truth["mallinfo2"]["fordblks"]
    # retained = arena RSS − in use; the victim's own free bytes in its
    # arenas (fordblks) is that figure measured from inside: 35 %
    assert abs(kept - free_b) <= 0.35 * free_b, (kept, free_b)
    assert used > 0
    assert "MALLOC_ARENA_MAX=2" in diag["verdicts"][0]["recommendations"][0]
    # the bundle holds the timeline up to the kill and a snapshot before it
    man = json.loads(files["manifest.json"])
    tl = json.loads(files["timeline.json"])
    assert man["sidecar"]["snapshot_ms"] < man["killed_at_ms"]
    # timeline.json is the sidecar's file as the agent found it: the
    # sidecar may sample once more between the kill and the capture (as
    # check_recorder in test_recorder_scenarios.py allows); the newest
    # sample before the kill is the one that counts
    before = [s for s in tl["samples"] if s["t_ms"] <= man["killed_at_ms"]]
    assert before, "no sample before the kill"
    # the last sample's age at the kill, printed for the loaded-machine
    # runs (pytest -s) the issue asks to report
    print("glibc_retention_c: last sample %d ms before the kill"
          % (man["killed_at_ms"] - before[-1]["t_ms"]))
    assert man["killed_at_ms"] - before[-1]["t_ms"] < 2000
    assert any(s["reason"].startswith("threshold-") for s in tl["snapshots"])
    pid = line["victims"][0]["pid"]
    for f in ("status", "pmap.txt", "arenas.json", "allocator.json"):
        assert "processes/%d/%s" % (pid, f) in files, f
    # --trim test: malloc_trim at the top threshold proves the retention,
    # and the diagnosis says what it gave back
    trims = [t for t in tl["trims"] if t["pid"] == pid]
    assert len(trims) == 1, tl["trims"]
    # it keeps every 64th block, so the holes cannot all go back: measured
    # here 216 -> 115 MiB; a quarter at least
    assert trims[0]["rss_after"] < trims[0]["rss_before"] * 0.75, trims[0]
    assert any("trim test on pid %d" % pid in e
               for e in diag["verdicts"][0]["evidence"]), diag["verdicts"][0]


def test_jvm_heap_exhaustion_is_java_heap(env):
    javac("HeapHog")
    line, diag, files, out = run_scenario(
        env, "jvmheap", 192,
        ["java", "-XX:NativeMemoryTracking=summary", "-Xmx1g",
         "-XX:+UseSerialGC", "-cp", JAVA_DIR, "HeapHog", "800", "25"],
        timeout=120)
    assert diag["verdict"] == "java-heap", diag["verdicts"]
    heap = ledger_part(diag, "jvm heap")
    assert heap >= 0.5 * diag["usage_bytes"], (heap, diag["usage_bytes"])
    assert any(n.endswith("/jvm/heap_info.txt") for n in files)


def test_jvm_direct_buffers_are_jvm_native(env):
    javac("DirectHog")
    line, diag, files, out = run_scenario(
        env, "jvmdirect", 256,
        ["java", "-XX:NativeMemoryTracking=summary", "-Xmx64m",
         "-XX:MaxDirectMemorySize=2g", "-cp", JAVA_DIR, "DirectHog", "1000", "25"],
        timeout=120)
    assert diag["verdict"] == "jvm-native", diag["verdicts"]
    assert diag["verdicts"][0]["detail"] == "Other"
    held = max(int(l.split()[1]) for l in out if isinstance(l, str) and l.startswith("direct "))
    other = ledger_part(diag, "jvm Other")
    # NMT "Other" at the snapshot against the direct MiB the program held
    # by then (it printed every 16 MiB and kept growing): 35 %
    assert abs(other / MiB - held) <= 0.35 * held, (other / MiB, held)
    assert "MaxDirectMemorySize" in diag["verdicts"][0]["recommendations"][0]
    # NMT growth: the first-sight baseline and the snapshot's summary
    # (jvm/nmt_history.json) name "Other" as what grew, with its MiB
    pid = line["victims"][0]["pid"]
    hist = json.loads(files["processes/%d/jvm/nmt_history.json" % pid])
    assert hist["entries"][0]["source"] == "first-sight", hist
    first, last = hist["entries"][0], hist["entries"][-1]
    grown = last["committed"]["Other"] - first["committed"].get("Other", 0)
    assert grown >= 0.5 * held * MiB, (grown, held)
    ev = diag["verdicts"][0]["evidence"]
    assert any(e.startswith("grew most: Other +") for e in ev), ev
    assert any("NMT committed outside the heap grew by" in e for e in ev), ev


def test_jvm_blind_to_its_limit_is_java_heap_with_both_limits(env):
    # -XX:-UseContainerSupport: the JVM sizes its default heap from the
    # host's RAM, not from its 192 MiB; VM.info at first sight says so
    javac("HeapHog")
    line, diag, files, out = run_scenario(
        env, "jvmblind", 192,
        ["java", "-XX:-UseContainerSupport", "-XX:+UseSerialGC",
         "-cp", JAVA_DIR, "HeapHog", "800", "25"],
        timeout=120)
    assert diag["verdict"] == "java-heap", diag["verdicts"]
    tl = json.loads(files["timeline.json"])
    facts = tl["jvms"][0]
    assert facts["container"]["found"] is False, facts
    assert facts["container"]["believed_from"] == "physical memory"
    with open("/proc/meminfo") as f:
        ram = int(f.readline().split()[1]) * 1024
    assert facts["jvm_limit"] == ram - ram % 1024, (facts["jvm_limit"], ram)
    assert any(e["kind"] == "jvm-limit-mismatch" for e in tl["events"]), tl
    ev = diag["verdicts"][0]["evidence"]
    assert any("believes its memory limit is" in e and
               "(physical memory: it sees no container limit)" in e and
               "the cgroup's limit is 192 MiB" in e for e in ev), ev
    assert any("UseContainerSupport" in r
               for r in diag["verdicts"][0]["recommendations"])


# The demo's own victims (scripts/demo.sh), each checked for sane figures
# by run_scenario like every scenario here.
def test_demo_hog(env):
    line, diag, files, out = run_scenario(
        env, "demohog", 48, [os.path.join(VICTIMS, "hog"), "--step-mb", "4",
                             "--delay-ms", "100"])
    assert diag["usage_source"] == "kernel report at the kill", diag
    assert diag["limit_bytes"] == 48 * MiB
    assert line["victims"][0]["pid"] > 0


def test_demo_jvm_heap_above_the_limit(env):
    # SerialGC with -Xmx512m in 160 MiB: the heap's committed size may pass
    # the limit (untouched pages are not charged); the verdict's figure is
    # what was resident.
    javac("HeapHog")
    line, diag, files, out = run_scenario(
        env, "demojvm", 160,
        ["java", "-XX:NativeMemoryTracking=summary", "-Xmx512m",
         "-XX:+UseSerialGC", "-cp", JAVA_DIR, "HeapHog", "400", "15"],
        timeout=120)
    assert diag["verdict"] == "java-heap", diag["verdicts"]
    assert diag["verdicts"][0]["bytes"] <= diag["usage_bytes"]


def test_rate_limited_kills_keep_sane_figures(env):
    # 14 kills in a row: past 10 full reports in 5 s the kernel prints only
    # "Killed process" lines, without usage or memcg stats. Those bundles
    # take the usage from the cgroup read at the notification, its peak or
    # the timeline, and say which.
    cg, agent, tmp = env
    cg.mkdir("/burst", limit_mb=16)
    sc = Sidecar(cg.path("/burst"), str(tmp / "spool" / "burst"), ())
    wait_oom_ratelimit()
    try:
        for _ in range(14):
            _, _, rc = hog(cg, "/burst", "--step-mb", "2")
            assert rc == -9
        lines = [agent.next(timeout=30) for _ in range(14)]
    finally:
        sc.stop()
    sources = []
    for line in lines:
        files = bundle_files(line["path"])
        diag = check_bundle(line, files)
        assert diag["limit_bytes"] == 16 * MiB, diag
        sources.append(diag["usage_source"])
    assert sources.count("kernel report at the kill") <= 10, sources
    assert any(s != "kernel report at the kill" for s in sources), sources
