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
import threading
import time

import pytest

from oomtest import (AGENT, JAVA_DIR, Sidecar, VICTIMS, agent_env,
                     bundle_files, hog, javac, ledger_part, run_in_cgroup,
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


def feed_stdin(victim, chunks, mib_per_s):
    """Writes the text chunks to the victim's stdin at mib_per_s, from this
    process (outside the victim's cgroup), until the victim goes away."""
    def run():
        t0, sent = time.monotonic(), 0
        try:
            for c in chunks:
                victim.stdin.write(c)
                victim.stdin.flush()
                sent += len(c)
                ahead = sent / (mib_per_s * MiB) - (time.monotonic() - t0)
                if ahead > 0:
                    time.sleep(ahead)
        except (BrokenPipeError, OSError, ValueError):
            pass  # killed: the pipe is gone
    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


def run_scenario(env, name, limit_mb, argv, sidecar_extra=(), timeout=90,
                 victim_env=None, feed=None):
    """Runs argv in <cgroup>/name under a sidecar until the agent reports
    its kill (victim_env: the victim's environment, else ours; feed:
    (text chunks, MiB/s) written to its stdin, else it has none).
    Returns (report line, diagnosis, bundle files, stdout lines of the
    victim as parsed JSON or raw text)."""
    cg, agent, tmp = env
    cg.mkdir("/" + name, limit_mb=limit_mb)
    sc = Sidecar(cg.path("/" + name), str(tmp / "spool" / name), sidecar_extra)
    wait_oom_ratelimit()  # the kernel's full report, with its memcg stats
    kw = {"env": victim_env} if victim_env else {}
    kw["stdin"] = subprocess.PIPE if feed else subprocess.DEVNULL
    try:
        victim = run_in_cgroup(cg, "/" + name, argv, **kw)
        if feed:
            feed_stdin(victim, *feed)
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


GO_ORDERS = os.path.join(VICTIMS, "go-orders")


@pytest.mark.skipif(not os.path.exists(GO_ORDERS),
                    reason="no Go victim: Debian's golang-go builds it "
                    "(scripts/deps.sh test, then make)")
def test_go_map_of_orders_is_go_heap(env):
    # A Go service keeping every 256 KiB order in a map, 60 a second
    # (15 MiB/s) into a 200 MiB limit, without GOMEMLIMIT; the environment
    # holds a secret that must not reach the bundle.
    line, diag, files, out = run_scenario(
        env, "go-orders", 200, [GO_ORDERS, "--rate", "60"],
        victim_env={"PATH": "/usr/bin:/bin",
                    "ORDERS_DB_PASSWORD": "hunter2-go"})
    assert diag["verdict"] == "go-heap", diag["verdicts"]
    assert line["verdict"] == "go-heap"
    v = diag["verdicts"][0]
    assert v["basis"] == "measured" and v["detail"] == "GOMEMLIMIT unset"
    pid = line["victims"][0]["pid"]
    facts = json.loads(files["processes/%d/go/facts.json" % pid])
    assert facts["gomemlimit_set"] is False and facts["gogc"] == 100
    assert facts["version"].startswith("go1.")
    # the heap's RSS against the victim's own account: at most what the
    # runtime had mapped for its heap when it last printed (HeapSys, once
    # a second: 15 MiB more may have come before the snapshot), and most
    # of the process
    heap = ledger_part(diag, "go heap")
    sys_max = max(o["heap_sys"] for o in out if isinstance(o, dict))
    assert 0.3 * diag["usage_bytes"] <= heap <= sys_max * 1.05 + 16 * MiB, \
        (heap, sys_max)
    assert facts["heap_rss"] * 2 >= facts["rss"], facts
    assert "GOMEMLIMIT unset: the Go runtime does not know the container's " \
        "limit (200 MiB)" in v["evidence"][1], v["evidence"]
    # the remedy in Go's terms: GOMEMLIMIT = 90 % of the limit minus the
    # non-heap RSS measured, and a heap profile
    m = re.match(r"GOMEMLIMIT=(\d+)MiB \(90% of the 200 MiB limit minus "
                 r"the (\d+) (KiB|MiB) non-heap RSS measured\)",
                 v["recommendations"][0])
    assert m, v["recommendations"]
    nonheap = facts["rss"] - facts["heap_rss"]
    assert int(m.group(1)) == (200 * MiB * 9 // 10 - nonheap) // MiB, \
        (m.group(0), nonheap)
    assert "net/http/pprof" in v["recommendations"][1]
    assert "go tool pprof" in v["recommendations"][1]
    assert diag["summary"].startswith("go-heap:GOMEMLIMIT unset, ")
    # no native-growth: the growth was the Go heap's; its arenas (laid out
    # as glibc's) are not glibc's
    assert "native-growth" not in verdicts(diag)
    assert "glibc-retention" not in verdicts(diag)
    assert not [p for p in diag["ledger"] if p["name"].startswith("glibc")]
    # at first sight, in the timeline, before the kill
    tl = json.loads(files["timeline.json"])
    ev = [e for e in tl["events"] if e["kind"] == "go-memlimit-unset"]
    assert ev and ev[0]["pid"] == pid, tl["events"]
    assert "GOMEMLIMIT unset: the Go runtime does not know the container's " \
        "limit (200 MiB)" in ev[0]["text"]
    man = json.loads(files["manifest.json"])
    assert ev[0]["t_ms"] < man["killed_at_ms"]
    # report.html and show carry the verdict and its remedy
    html = files["report.html"].decode()
    assert "go-heap" in html and "GOMEMLIMIT=" in html and "pprof" in html
    assert "go heap (arena)" in html  # its row of the largest mappings
    show = subprocess.run([AGENT, "show", line["path"]], capture_output=True,
                          text=True, timeout=30)
    assert show.returncode == 0, show.stderr
    assert "go-heap" in show.stdout and "GOMEMLIMIT=" in show.stdout
    # only GOMEMLIMIT and GOGC were read of the environment
    for name, data in files.items():
        assert b"hunter2-go" not in data, name



NODE = shutil.which("node")
RUNTIME_VICTIMS = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                               "..", "victims")


def warm_page_cache(path):
    """Reads a program once from here, so that its page cache is charged
    to this cgroup and not to the victim's: seen here on a cold cache, a
    200 MiB cgroup holding 48 MB of node's own text and data sat at its
    limit for over 60 s without a kill (its own pages reclaimed and read
    back, over and over) instead of being killed in ~20 s."""
    with open(path, "rb") as f:
        while f.read(1 << 20):
            pass


def held_mib(out):
    """The victim's own account: the last "held N" it printed (MiB)."""
    held = [int(l.split()[1]) for l in out
            if isinstance(l, str) and l.startswith("held ")]
    assert held, out
    return held[-1]


def check_runtime_bundle(line, diag, files, runtime, secret):
    """What every runtime's real kill shares: report.html and show carry
    the verdict, the facts file is there, and nothing of the victim's
    environment but the keys its parser reads reached the bundle."""
    pid = line["victims"][0]["pid"]
    facts = json.loads(files["processes/%d/%s/facts.json" % (pid, runtime)])
    assert facts["pid"] == pid and facts["environ_read"] is True, facts
    assert facts["limit"] == 200 * MiB, facts
    show = subprocess.run([AGENT, "show", line["path"]], capture_output=True,
                          text=True, timeout=30)
    assert show.returncode == 0, show.stderr
    assert diag["verdict"] in show.stdout, show.stdout
    for name, data in files.items():
        assert secret not in data, name
    tl = json.loads(files["timeline.json"])
    man = json.loads(files["manifest.json"])
    return pid, facts, tl, man, show.stdout


@pytest.mark.skipif(NODE is None, reason="no node: Debian's nodejs runs the "
                    "Node.js victim (scripts/deps.sh test)")
def test_node_sessions_map_is_node_heap(env):
    # A Node.js service keeping every session in a Map, 16 MiB/s after
    # 2 s idle, with --max-old-space-size=4096 in a 200 MiB limit (the
    # issue's kill: V8 was allowed a heap 20x the limit); the environment
    # holds a secret that must not reach the bundle.
    warm_page_cache(os.path.realpath(NODE))
    line, diag, files, out = run_scenario(
        env, "node-sessions", 200,
        [NODE, "--max-old-space-size=4096",
         os.path.join(RUNTIME_VICTIMS, "node", "sessions.js"), "16", "2000"],
        victim_env={"PATH": "/usr/bin:/bin",
                    "SESSIONS_DB_PASSWORD": "hunter2-node"}, timeout=120)
    print("node-sessions: " + diag["summary"])
    assert diag["verdict"] == "node-heap", diag["verdicts"]
    assert line["verdict"] == "node-heap"
    v = diag["verdicts"][0]
    assert v["basis"] == "measured" and v["confidence"] == 85, v
    assert v["detail"] == "--max-old-space-size above the limit", v
    pid, facts, tl, man, show = check_runtime_bundle(
        line, diag, files, "node", b"hunter2-node")
    assert facts["detected_by"] in ("symbol", "libnode"), facts
    assert facts["max_old_space_size"] == 4096, facts
    assert facts["max_old_from"] == "command line", facts
    # V8's limit with the flag: old space and 3 semi-spaces of 1 MiB
    assert facts["heap_limit"] == 4099 * MiB, facts
    # the V8 heap against the victim's own account: the capture had
    # 67,144 kB of V8 pages at "held 100" (tests/fixtures/node/README.md),
    # 0.66 MiB a "MiB"; the snapshot is up to ~1 s (16 "MiB") before the
    # last "held" line: 25 %
    heap = ledger_part(diag, "node heap")
    held = held_mib(out)
    assert 0.66 * (held - 16) * 0.75 * MiB <= heap \
        <= 0.66 * (held + 16) * 1.25 * MiB, (heap, held)
    assert heap >= 0.5 * diag["usage_bytes"], (heap, diag["usage_bytes"])
    assert heap <= facts["v8_heap_rss"] and facts["v8_heap_rss"] * 2 >= \
        facts["rss"], facts
    assert "pid %d (Node.js): the V8 heap" % pid in v["evidence"][0]
    assert "Node may grow it to 4099 MiB, 20.5x the 200 MiB limit" in \
        v["evidence"][0], v["evidence"]
    assert "--max-old-space-size=4096 (command line)" in v["evidence"][2], \
        v["evidence"]
    # the remedy in V8's terms: the old space that fits, 90 % of the limit
    # less what the snapshot measured outside the heap and the young
    # generation; a snapshot near the limit and a heap profile
    m = re.match(r"--max-old-space-size=(\d+) \(command line or "
                 r"NODE_OPTIONS\): 90% of the 200 MiB limit less ([\d.]+) "
                 r"MiB measured outside the V8 heap and 3 MiB of young "
                 r"generation", v["recommendations"][0])
    assert m, v["recommendations"]
    nonheap = facts["rss"] - facts["v8_heap_rss"]
    assert int(m.group(1)) == (200 * MiB * 9 // 10 - nonheap - 3 * MiB) \
        // MiB, (m.group(0), nonheap)
    assert "--heapsnapshot-near-heap-limit=1" in v["recommendations"][1]
    assert "--heap-prof" in v["recommendations"][2]
    assert diag["summary"].startswith(
        "node-heap:--max-old-space-size above the limit, "), diag["summary"]
    # the growth was the V8 heap's: no native-growth
    assert "native-growth" not in verdicts(diag)
    # at first sight, in the timeline, before the kill
    ev = [e for e in tl["events"] if e["kind"] == "node-heap-limit-above-limit"]
    assert ev and ev[0]["pid"] == pid, tl["events"]
    assert "V8's heap limit 4099 MiB (--max-old-space-size=4096 from the " \
        "command line) is above the container's limit (200 MiB)" in \
        ev[0]["text"], ev[0]
    assert ev[0]["t_ms"] < man["killed_at_ms"]
    html = files["report.html"].decode()
    assert "node-heap" in html and "--max-old-space-size=" in html
    assert "--heapsnapshot-near-heap-limit" in html
    assert "node heap (V8 pages)" in html  # its rows of the largest mappings
    assert "--max-old-space-size=" in show


PYTHON = "/usr/bin/python3"  # Debian's interpreter, not a pyenv shim


@pytest.mark.skipif(not os.access(PYTHON, os.X_OK),
                    reason="no /usr/bin/python3 to run the Python victim")
def test_python_rows_list_is_python_heap(env):
    # A Python worker keeping every rendered row in a list, 16 MiB/s after
    # 2 s idle, in a 200 MiB limit; a secret in its environment.
    line, diag, files, out = run_scenario(
        env, "python-rows", 200,
        [PYTHON, os.path.join(RUNTIME_VICTIMS, "python", "rows.py"), "16",
         "2000"],
        victim_env={"PATH": "/usr/bin:/bin",
                    "ROWS_DB_PASSWORD": "hunter2-python"})
    print("python-rows: " + diag["summary"])
    assert diag["verdict"] == "python-heap", diag["verdicts"]
    assert line["verdict"] == "python-heap"
    v = diag["verdicts"][0]
    assert v["basis"] == "measured" and v["confidence"] == 70, v
    assert v["detail"] == "pymalloc arenas", v
    pid, facts, tl, man, show = check_runtime_bundle(
        line, diag, files, "python", b"hunter2-python")
    assert facts["version"] == "3.11" and facts["pymalloc"] is True, facts
    # Debian links libpython into python3.11: detected by _PyRuntime
    assert facts["detected_by"] in ("symbol", "libpython"), facts
    assert facts["pythonmalloc"] == "" and facts["tracemalloc"] == 0, facts
    assert facts["address_space_limit"] is None, facts
    # the rows (~100-character str under pymalloc's 512 bytes) in its
    # arenas, the 24 KiB fragments in glibc's heap, the 8 MiB read buffer
    # mmap'd apart: the victim's design
    assert facts["pymalloc_rss"] > facts["glibc_heap_rss"] > 0, facts
    assert facts["mmap_rss"] >= 8 * MiB, facts
    # the ledger: pymalloc's arenas and the buffers before glibc's heap
    names = [p["name"] for p in diag["ledger"]]
    assert names.index("python heap") < names.index("python buffers") < \
        names.index("glibc arenas (in-use unknown)"), names
    heap = ledger_part(diag, "python heap") + \
        ledger_part(diag, "python buffers") + \
        ledger_part(diag, "glibc arenas (in-use unknown)")
    assert abs(v["bytes"] - heap) < 4 << 10, (v["bytes"], heap)
    # against the victim's own account: the capture had 103 MiB of the
    # three at "held 100" (tests/fixtures/python/README.md), its 8 MiB
    # buffer included; the snapshot is up to ~1 s (16 MiB) before the
    # last "held" line: 20 %
    held = held_mib(out)
    assert (held - 16) * 0.8 * MiB <= heap <= (held + 16 + 8) * 1.2 * MiB, \
        (heap, held)
    assert "pid %d (CPython 3.11): the Python heap" % pid in v["evidence"][0]
    # the remedy in Python's terms: tracemalloc and memray; glibc's heap
    # is not the larger part, so not glibc's advice
    assert v["recommendations"][0].startswith(
        "tracemalloc: PYTHONTRACEMALLOC=25"), v["recommendations"]
    assert v["recommendations"][1].startswith("memray: memray run"), \
        v["recommendations"]
    assert not [r for r in v["recommendations"] if "MALLOC_ARENA_MAX" in r]
    assert diag["summary"].startswith("python-heap:pymalloc arenas, "), \
        diag["summary"]
    assert "native-growth" not in verdicts(diag)
    ev = [e for e in tl["events"] if e["kind"] == "python-heap-unbounded"]
    assert ev and ev[0]["pid"] == pid, tl["events"]
    assert "pid %d (CPython 3.11): nothing bounds its heap below the " \
        "container's limit (200 MiB)" % pid in ev[0]["text"], ev[0]
    assert ev[0]["t_ms"] < man["killed_at_ms"]
    html = files["report.html"].decode()
    assert "python-heap" in html and "tracemalloc" in html
    assert "memray" in html
    assert "python heap (pymalloc arenas)" in html
    assert "tracemalloc" in show


# Programs nobody here wrote, from Debian, outgrowing a 200 MiB limit on
# their own: the verdict must name their runtime's heap from what the
# process is, not from a victim of ours. Each has a secret in its
# environment that must not reach the bundle.

def orders_yaml(path, mib):
    """A YAML list of orders, about mib MiB, each a small mapping with
    unique strings and two order lines: parsed, every order is a few
    objects of the runtime's heap."""
    with open(path, "w") as f:
        i = 0
        while f.tell() < mib * MiB:
            f.write("".join(
                "- id: %d\n  customer: c%08d\n  note: n%x\n  lines:\n"
                "  - {sku: s%06d, qty: %d}\n  - {sku: t%06d, qty: %d}\n"
                % (n, n, n * 2654435761, n * 7 % 999999, n % 9,
                   n * 13 % 999999, n % 7) for n in range(i, i + 1000)))
            i += 1000
    return path


def order_lines():
    """JSON orders, one a line, each unique, forever."""
    n = 0
    while True:
        yield "".join(json.dumps(
            {"id": i, "customer": "c%08d" % i,
             "lines": [{"sku": "s%06d" % (i * 7 % 999999), "qty": i % 9,
                        "note": "x%x" % (i * 2654435761)}] * 4}) + "\n"
            for i in range(n, n + 200))
        n += 200


GOJQ = shutil.which("gojq")


@pytest.mark.skipif(GOJQ is None, reason="no gojq: Debian's gojq is the Go "
                    "program nobody here wrote (scripts/deps.sh test)")
def test_debian_gojq_collecting_its_input_is_go_heap(env):
    # Debian's gojq (a stripped Go binary) collecting a stream of JSON
    # orders into one array, `gojq -n '[inputs] | length'`, fed 2 MiB/s
    # (~9x that in its heap), without GOMEMLIMIT.
    warm_page_cache(os.path.realpath(GOJQ))
    line, diag, files, out = run_scenario(
        env, "gojq-inputs", 200, [GOJQ, "-n", "[inputs] | length"],
        victim_env={"PATH": "/usr/bin:/bin",
                    "JQ_DB_PASSWORD": "hunter2-gojq"},
        feed=(order_lines(), 2), timeout=120)
    print("gojq: " + diag["summary"])
    assert diag["verdict"] == "go-heap", diag["verdicts"]
    assert line["verdict"] == "go-heap"
    v = diag["verdicts"][0]
    assert v["detail"] == "GOMEMLIMIT unset", v
    pid = line["victims"][0]["pid"]
    assert line["victims"][0]["comm"] == "gojq", line["victims"]
    facts = json.loads(files["processes/%d/go/facts.json" % pid])
    # found from its .go.buildinfo, which stripping keeps
    assert facts["version"].startswith("go1."), facts
    assert facts["gomemlimit_set"] is False and facts["gogc"] == 100, facts
    heap = ledger_part(diag, "go heap")
    assert heap >= 0.5 * diag["usage_bytes"], (heap, diag["usage_bytes"])
    assert v["recommendations"][0].startswith("GOMEMLIMIT="), v
    assert "go tool pprof" in v["recommendations"][1], v
    assert "native-growth" not in verdicts(diag)
    for name, data in files.items():
        assert b"hunter2-gojq" not in data, name


JS_YAML = "/usr/bin/js-yaml"


@pytest.mark.skipif(NODE is None or not os.path.exists(JS_YAML),
                    reason="no node or js-yaml: Debian's node-js-yaml is the "
                    "Node.js program nobody here wrote (scripts/deps.sh test)")
def test_debian_js_yaml_parsing_a_large_file_is_node_heap(env, tmp_path):
    # Debian's js-yaml converting a 24 MiB YAML file to JSON, with
    # NODE_OPTIONS=--max-old-space-size=4096 as a user sets it: the parsed
    # document outgrows the 200 MiB limit in V8's heap.
    src = orders_yaml(str(tmp_path / "orders.yaml"), 24)
    warm_page_cache(os.path.realpath(NODE))
    warm_page_cache(src)
    line, diag, files, out = run_scenario(
        env, "js-yaml", 200, [NODE, os.path.realpath(JS_YAML), src],
        victim_env={"PATH": "/usr/bin:/bin",
                    "NODE_PATH": "/usr/share/nodejs",
                    "NODE_OPTIONS": "--max-old-space-size=4096",
                    "YAML_DB_PASSWORD": "hunter2-js-yaml"}, timeout=120)
    print("js-yaml: " + diag["summary"])
    assert diag["verdict"] == "node-heap", diag["verdicts"]
    assert line["verdict"] == "node-heap"
    v = diag["verdicts"][0]
    assert v["detail"] == "--max-old-space-size above the limit", v
    pid, facts, tl, man, show = check_runtime_bundle(
        line, diag, files, "node", b"hunter2-js-yaml")
    assert facts["max_old_space_size"] == 4096, facts
    assert facts["max_old_from"] == "NODE_OPTIONS", facts
    heap = ledger_part(diag, "node heap")
    assert heap >= 0.5 * diag["usage_bytes"], (heap, diag["usage_bytes"])
    assert v["recommendations"][0].startswith("--max-old-space-size="), v
    assert "--heapsnapshot-near-heap-limit=1" in v["recommendations"][1]
    assert "native-growth" not in verdicts(diag)


YQ = "/usr/bin/yq"


@pytest.mark.skipif(not os.path.exists(YQ),
                    reason="no yq: Debian's yq is the Python program nobody "
                    "here wrote (scripts/deps.sh test)")
def test_debian_yq_loading_a_large_file_is_python_heap(env, tmp_path):
    # Debian's yq (PyYAML's loader, then jq) converting a 24 MiB YAML
    # file: the loaded document, small dicts and strs, outgrows the
    # 200 MiB limit in pymalloc's arenas.
    src = orders_yaml(str(tmp_path / "orders.yaml"), 24)
    warm_page_cache(src)
    line, diag, files, out = run_scenario(
        env, "yq", 200, [PYTHON, YQ, ".", src],
        victim_env={"PATH": "/usr/bin:/bin",
                    "YQ_DB_PASSWORD": "hunter2-yq"}, timeout=120)
    print("yq: " + diag["summary"])
    assert diag["verdict"] == "python-heap", diag["verdicts"]
    assert line["verdict"] == "python-heap"
    v = diag["verdicts"][0]
    assert v["detail"] == "pymalloc arenas", v
    pid, facts, tl, man, show = check_runtime_bundle(
        line, diag, files, "python", b"hunter2-yq")
    assert facts["version"] == "3.11" and facts["pymalloc"] is True, facts
    # the kernel merges arenas with glibc's mmap'd chunks (PyYAML's
    # buffers, the lists' arrays): split at their headers, the arenas
    # are still most of the usage
    assert facts["split"] == "headers", facts
    assert facts["pymalloc_rss"] >= 0.5 * diag["usage_bytes"], facts
    assert v["recommendations"][0].startswith("tracemalloc:"), v
    assert "native-growth" not in verdicts(diag)
