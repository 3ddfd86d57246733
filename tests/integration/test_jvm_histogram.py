"""The JVM's class histogram before a real kill (docs/timeline.md, "The
class histogram"; docs/diagnosis.md, "Class histogram"): a JVM hoarding
byte[] (tests/victims/java/HeapGrower.java) in a real memory cgroup, OOM-killed while the sidecar records it
with --jvm-histogram and the standalone agent writes the bundle. Opted in
with room to walk, the bundle's jvm/class_histogram.json names [B with
most of the live bytes and its pause, the java-heap verdict names it,
and report.html and `oomlens-agent show` list it; with a bound the walk
cannot meet, it is skipped and the bundle says why (the file, the
manifest's capture, the report).

Needs root, a memory cgroup, /dev/kmsg and a JDK (skips with the reason
otherwise). Real kills: run under the host's real-kill lock."""
import json
import re
import subprocess

import pytest

from oomtest import (AGENT, JAVA_DIR, Sidecar, agent_env, bundle_files, javac,
                     run_in_cgroup, wait_oom_ratelimit)

MiB = 1 << 20
# HeapGrower holds 1 MiB byte[] (every page touched) at 10 MiB/s after 1 s
# idle, into a 192 MiB limit with -Xmx1g: a heap that outgrows its
# container slowly enough that the first threshold's snapshot comes with
# seconds left. -Xmn8m: each young collection promotes all of eden (the
# program keeps everything), touching that much tenured memory at once;
# with Serial's default young generation that was a jump of ~35 MiB, from
# under 80 % to 98 % in one sample, the limit then predicted 0.5 s away,
# and the walk skipped for it.
VICTIM = ["java", "-Xmx1g", "-Xmn8m", "-XX:+UseSerialGC", "-cp", JAVA_DIR,
          "HeapGrower", "10", "1000"]


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    javac("HeapGrower")
    yield from agent_env(tmp_path_factory, "jvmhisto")


def kill_with_sidecar(env, name, extra):
    """Runs the victim in <cgroup>/name under a sidecar with extra flags
    until the agent reports its kill: (report line, bundle files, the
    sidecar's log)."""
    cg, agent, tmp = env
    cg.mkdir("/" + name, limit_mb=192)
    spool = str(tmp / "spool" / name)
    sc = Sidecar(cg.path("/" + name), spool, extra)
    wait_oom_ratelimit()
    try:
        victim = run_in_cgroup(cg, "/" + name, VICTIM)
        line = agent.next(timeout=120)
        try:
            victim.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            victim.kill()
            victim.communicate()
    finally:
        sc.stop()
    with open(spool + ".log") as f:
        log = f.read()
    return line, bundle_files(line["path"]), log


def histogram_of(files):
    found = [n for n in files if n.endswith("/jvm/class_histogram.json")]
    assert len(found) == 1, sorted(files)
    pid = int(found[0].split("/")[1])
    return pid, json.loads(files[found[0]])


def show(path):
    r = subprocess.run([AGENT, "show", path], capture_output=True, text=True,
                       timeout=30)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_histogram_before_the_kill_names_the_hoarded_class(env):
    line, files, log = kill_with_sidecar(env, "taken", ["--jvm-histogram"])
    pid, h = histogram_of(files)
    assert h["taken"] is True, (h, log)
    assert h["pid"] == pid and h["trigger"].startswith("threshold-"), h
    top = h["top"][0]
    assert top["class"] == "[B" and top["module"].startswith("java.base@"), h
    # HeapGrower's heap is its byte[]: at the first threshold of 192 MiB
    # it held tens of MiB of them, nearly all the live bytes
    assert top["bytes"] >= 64 * MiB, top
    assert top["bytes"] >= 0.9 * h["total_bytes"], h
    assert top["instances"] >= 64, top
    assert h["total_known"] is True and h["classes"] > 100, h
    assert len(h["top"]) == 20
    assert [r["bytes"] for r in h["top"]] == sorted(
        (r["bytes"] for r in h["top"]), reverse=True)
    # the pause: the JVM's safepoint time, within the command's wall time
    # (both bracket the same call; the walk of a few hundred arrays is
    # milliseconds), and bounded by the budget it was given
    assert h["safepoints"] >= 1, h
    assert 0 < h["pause_us"] <= h["wall_us"] + 2000, h
    assert h["wall_us"] < h["budget_ms"] * 1000, h
    assert h["estimate_ms"] <= h["budget_ms"] <= 1000, h
    assert h["heap_used"] >= top["bytes"] * 0.9, h
    assert "class histogram of pid %d" % pid in log, log
    # the verdict names it, with its share of the live heap
    diag = json.loads(files["diagnosis.json"])
    assert diag["verdict"] == "java-heap", diag["verdicts"]
    v = diag["verdicts"][0]
    ev = [e for e in v["evidence"] if e.startswith("class histogram pid %d" % pid)]
    assert ev, v["evidence"]
    m = re.search(r"the top class is byte\[\] \(\[B\), (\d+) MiB in (\d+) "
                  r"instances, (\d+)% of the", ev[0])
    assert m, ev[0]
    assert int(m.group(1)) == round(top["bytes"] / MiB), (ev[0], top)
    assert int(m.group(2)) == top["instances"]
    assert int(m.group(3)) >= 90, ev[0]
    assert any(r.startswith("find what holds the byte[] instances")
               for r in v["recommendations"]), v["recommendations"]
    # report.html: the card and its first row
    html = files["report.html"].decode()
    assert "<h2>Class histogram of pid %d</h2>" % pid in html
    assert re.search(r"<tr><td class=\"n\">1</td><td>byte\[\] \(\[B\)</td>"
                     r"<td class=\"n\">%d</td>" % top["instances"], html), html
    assert "GC.class_histogram at threshold-" in html
    # oomlens-agent show: the same table
    out = show(line["path"])
    assert "Class histogram of pid %d" % pid in out, out
    assert re.search(r"\n\s+1 byte\[\] \(\[B\)\s+%d\s+%d MiB\s+\d+\.\d%%\n"
                     % (top["instances"], round(top["bytes"] / MiB)), out), out


def test_histogram_a_walk_over_the_bound_is_skipped_and_said(env):
    # a real bound: the longest pause the user accepts, 20 ms, below any
    # heap's estimate (20 ms of fixed cost, plus the heap's used size at
    # 250 MiB/s)
    line, files, log = kill_with_sidecar(
        env, "skipped", ["--jvm-histogram", "--jvm-histogram-max-pause-ms", "20"])
    pid, h = histogram_of(files)
    assert h["taken"] is False, h
    assert "top" not in h and "pause_us" not in h, h
    assert h["budget_ms"] == 20 and h["estimate_ms"] > 20, h
    assert h["heap_used"] > 32 * MiB, h
    why = h["why"]
    assert re.fullmatch(r"heap \d+ MiB used: its walk would take about \d+ ms "
                        r"at 250 MiB/s, more than the 20 ms allowed "
                        r"\(--jvm-histogram-max-pause-ms\)", why), why
    assert "%d ms" % h["estimate_ms"] in why
    # the manifest's capture says it too, for that pid
    man = json.loads(files["manifest.json"])
    miss = [m for m in man["capture"]["not_captured"]
            if m["what"] == "jvm class histogram"]
    assert miss == [{"what": "jvm class histogram", "pid": pid, "why": why}], \
        man["capture"]
    assert "msg=\"class histogram of pid" not in log, log
    diag = json.loads(files["diagnosis.json"])
    assert diag["verdict"] == "java-heap", diag["verdicts"]
    assert not any("class histogram" in e for e in diag["verdicts"][0]["evidence"])
    html = files["report.html"].decode()
    assert "<h2>Class histogram of pid %d</h2>" % pid in html
    assert "not taken (threshold-" in html and "more than the 20 ms allowed" in html
    assert "byte[] ([B)" not in html
    out = show(line["path"])
    assert "  not taken (threshold-" in out, out
