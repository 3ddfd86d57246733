"""The standalone agent against real OOM kills on this machine's memory
cgroup (v1 here): every kill in a watched subtree becomes exactly one
bundle, with the kernel's report and the cgroup's counters."""
import json
import os
import subprocess
import tarfile
import time

import pytest

from oomtest import Agent, Cgroup, hog, require_oom_env, wait_oom_ratelimit


@pytest.fixture
def cg(request):
    require_oom_env()
    c = Cgroup("oomlens-test-agent-%d" % os.getpid())
    yield c
    c.cleanup()


@pytest.fixture
def agent_factory(cg, tmp_path):
    agents = []

    def start(watch=None, state=None, extra=()):
        a = Agent(watch or [cg.path()], str(state or tmp_path / "state"), extra)
        agents.append(a)
        return a
    yield start
    for a in agents:
        if a.proc.poll() is None:
            a.stop()


def bundle_members(path):
    with tarfile.open(path) as t:
        return {m.name.split("/", 1)[1]: t.extractfile(m).read()
                for m in t.getmembers() if m.isfile()}


def test_single_kill_gives_one_bundle_with_the_kernel_report(cg, agent_factory):
    cg.mkdir("/app", limit_mb=32)
    agent = agent_factory()
    wait_oom_ratelimit()  # a full report, not a rate-limited line
    victim, events, rc = hog(cg, "/app", "--step-mb", "4")
    assert rc == -9, "the hog must die of SIGKILL"
    line = agent.next()
    assert line["cgroup"] == cg.path("/app")
    assert [v["pid"] for v in line["victims"]] == [victim]
    assert line["victims"][0]["comm"] == "hog"
    # the victim held about the limit when killed (32 MiB, 4 MiB steps)
    assert 20 * 1024 <= line["victims"][0]["anon_rss_kb"] <= 33 * 1024
    assert 0 < line["detect_latency_us"] < 1_000_000
    files = bundle_members(line["path"])
    man = json.loads(files["manifest.json"])
    assert man["schema"] == "oomlens.io/bundle/v1"
    assert man["id"] == line["id"]
    assert man["cgroup"] == cg.path("/app")
    assert "Killed process %d (hog)" % victim in files["kernel/oom.txt"].decode()
    oom = json.loads(files["kernel/oom.json"])
    assert oom["victims"][0]["pid"] == victim
    assert oom["complete"] is True
    assert b"total_rss" in files["cgroup/memory.stat"] or b"anon" in files["cgroup/memory.stat"]
    limit = man["cgroup_state"]["limit_bytes"]
    assert limit == 32 << 20
    assert agent.stop() == 0
    assert agent.drain(0.1) == []


def twenty_kills(cg, agent):
    victims = []
    for _ in range(20):
        pid, _, rc = hog(cg, "/app", "--step-mb", "8")
        assert rc == -9
        victims.append(pid)
    lines = [agent.next() for _ in range(20)]
    # 2.5 s: past the 2 s after which an unclaimed notification would
    # become a bundle of its own
    assert agent.drain(2.5) == [], "no extra report; " + agent.log()
    # Past 10 reports in 5 s the kernel prints bare "Killed process" lines
    # and each is matched to its notification: every kill once, though
    # not always in kill order.
    got = sorted(v["pid"] for l in lines for v in l["victims"])
    assert got == sorted(victims), agent.log()
    assert all(len(l["victims"]) == 1 for l in lines), agent.log()
    assert all(l["cgroup"] == cg.path("/app") for l in lines)
    assert len({l["id"] for l in lines}) == 20
    reports = os.listdir(os.path.join(agent.state_dir, "reports"))
    assert len([r for r in reports if r.endswith(".tar.gz")]) == 20
    assert agent.stop() == 0


def test_twenty_kills_in_a_row_give_exactly_twenty_bundles(cg, agent_factory):
    cg.mkdir("/app", limit_mb=16)
    twenty_kills(cg, agent_factory())


@pytest.fixture
def busy_cpu():
    """A CPU taken by a busy loop of higher priority than the agent's."""
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("needs 2 CPUs: one for the tests, one to starve")
    cpu = max(os.sched_getaffinity(0))
    spin = subprocess.Popen(["nice", "-n", "-10", "sh", "-c", "while :; do :; done"],
                            preexec_fn=lambda: os.sched_setaffinity(0, {cpu}))
    yield cpu
    spin.kill()
    spin.wait()


def test_twenty_kills_with_a_starved_agent(cg, agent_factory, busy_cpu):
    # The agent shares its CPU with a busier process: it reads each
    # notification late, after the victim is gone and the next one runs,
    # and often counts several kills at once. Each still gets its bundle.
    cg.mkdir("/app", limit_mb=16)
    agent = agent_factory()
    os.sched_setaffinity(agent.proc.pid, {busy_cpu})
    twenty_kills(cg, agent)


def test_nested_cgroup_is_reported_by_its_own_path(cg, agent_factory):
    cg.mkdir("/a")
    cg.mkdir("/a/b", limit_mb=24)
    agent = agent_factory()
    victim, _, _ = hog(cg, "/a/b")
    line = agent.next()
    assert line["cgroup"] == cg.path("/a/b")
    assert line["victims"][0]["pid"] == victim


def test_child_process_is_the_victim_not_its_parent(cg, agent_factory):
    cg.mkdir("/app", limit_mb=32)
    agent = agent_factory()
    victim, events, rc = hog(cg, "/app", "--child")
    parent = events[0]["pid"]
    assert victim != parent
    assert rc == 0, "the parent survives"
    assert events[-1] == {"event": "child-ended", "pid": victim, "signal": 9}
    line = agent.next()
    assert [v["pid"] for v in line["victims"]] == [victim]


def test_restart_between_kills_neither_loses_nor_repeats(cg, agent_factory, tmp_path):
    cg.mkdir("/app", limit_mb=16)
    state = tmp_path / "state"
    first = agent_factory(state=state)
    v1, _, _ = hog(cg, "/app")
    assert first.next()["victims"][0]["pid"] == v1
    assert first.stop() == 0
    v2, _, _ = hog(cg, "/app")  # while no agent runs
    second = agent_factory(state=state)
    line = second.next()
    assert line["victims"][0]["pid"] == v2
    assert second.drain(1.0) == [], "the first kill is not repeated"
    v3, _, _ = hog(cg, "/app")
    assert second.next()["victims"][0]["pid"] == v3
    assert len([f for f in os.listdir(state / "reports") if f.endswith(".tar.gz")]) == 3


def test_report_met_again_after_a_forced_stop_is_not_captured_twice(
        cg, agent_factory, tmp_path):
    """An agent stopped by force after it wrote a kill's bundle but before
    it saved its progress meets the same kernel report at its next start:
    the bundle (its id is the report's boot and sequence) stays the one
    already written, and no second line is printed."""
    cg.mkdir("/app", limit_mb=16)
    state = tmp_path / "state"
    first = agent_factory(state=state)
    wait_oom_ratelimit()
    v1, _, _ = hog(cg, "/app")
    line = first.next()
    assert line["victims"][0]["pid"] == v1
    assert first.stop() == 0
    before = os.stat(line["path"])
    # the progress as it was before the kill: the last record before its
    # report, whose sequence ends the id
    seq = int(line["id"].rsplit("-", 1)[1])
    st = json.loads((state / "state.json").read_text())
    assert int(st["last_seq"]) >= seq
    st["last_seq"] = str(seq - 1)
    (state / "state.json").write_text(json.dumps(st))
    second = agent_factory(state=state)
    want = "report %s: captured before the agent's last stop" % line["id"]
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not any(
            want in l for l in second.stderr):
        time.sleep(0.1)
    assert any(want in l for l in second.stderr), second.log()
    assert second.drain(0.5) == [], "no second line for the same kill"
    after = os.stat(line["path"])
    assert (after.st_ino, after.st_mtime_ns, after.st_size) == \
        (before.st_ino, before.st_mtime_ns, before.st_size)
    assert sorted(f for f in os.listdir(state / "reports")
                  if f.endswith(".tar.gz")) == [line["id"] + ".tar.gz"]


def test_cgroup_created_after_start_is_watched(cg, agent_factory):
    agent = agent_factory()
    cg.mkdir("/late")
    cg.mkdir("/late/deeper", limit_mb=16)
    victim, _, _ = hog(cg, "/late/deeper")
    line = agent.next()
    assert line["cgroup"] == cg.path("/late/deeper")
    assert line["victims"][0]["pid"] == victim


def test_hostile_process_name_survives(cg, agent_factory):
    cg.mkdir("/app", limit_mb=16)
    agent = agent_factory()
    name = "a b)(c\\d"
    victim, _, _ = hog(cg, "/app", "--name", name)
    line = agent.next()
    assert line["victims"][0]["pid"] == victim
    assert line["victims"][0]["comm"] == name


def test_kill_outside_the_watched_subtree_is_ignored(cg, agent_factory):
    cg.mkdir("/watched")
    cg.mkdir("/other", limit_mb=16)
    agent = agent_factory(watch=[cg.path("/watched")])
    hog(cg, "/other")
    assert agent.drain(1.0) == []
    assert agent.stop() == 0


def test_rate_limited_kills_elsewhere_are_not_taken_for_ours(cg, agent_factory):
    # More than 10 OOM reports in 5 s: the kernel prints later kills as a
    # bare "Killed process" line, without a cgroup. Kills in a cgroup the
    # agent does not watch must not be given ours.
    cg.mkdir("/watched")
    cg.mkdir("/watched/app", limit_mb=16)
    cg.mkdir("/other", limit_mb=16)
    agent = agent_factory(watch=[cg.path("/watched")])
    for _ in range(12):
        hog(cg, "/other", "--step-mb", "8")
    victim, _, _ = hog(cg, "/watched/app", "--step-mb", "8")
    for _ in range(3):
        hog(cg, "/other", "--step-mb", "8")
    line = agent.next()
    assert [v["pid"] for v in line["victims"]] == [victim], agent.log()
    assert line["cgroup"] == cg.path("/watched/app")
    assert agent.drain(2.5) == []


def test_kill_without_sidecar_is_diagnosed_from_the_agents_cgroup_timeline(
        cg, agent_factory):
    # No sidecar, as a pod that did not opt in: the bundle still has the
    # agent's own 1 Hz cgroup timeline up to the kill (agent/timeline.json),
    # and the diagnosis reads the steady growth from it instead of
    # "unknown ... the timeline is missing (no sidecar)".
    cg.mkdir("/app", limit_mb=64)
    agent = agent_factory()
    wait_oom_ratelimit()
    # 4 MiB every 0.5 s: about 8 s to the 64 MiB limit, ~8 samples
    victim, _, rc = hog(cg, "/app", "--step-mb", "4", "--delay-ms", "500")
    assert rc == -9
    line = agent.next()
    assert [v["pid"] for v in line["victims"]] == [victim]
    files = bundle_members(line["path"])
    assert "timeline.json" not in files
    man = json.loads(files["manifest.json"])
    tl = json.loads(files["agent/timeline.json"])
    assert tl["schema"] == "oomlens.io/agent-timeline/v1"
    assert tl["source"] == "agent 1 Hz cgroup sampler"
    assert tl["killed_at_ms"] == man["killed_at_ms"]
    assert len(tl["cgroups"]) == 1, "oom_memcg is the victim's cgroup"
    series = tl["cgroups"][0]
    assert series["cgroup"] == man["cgroup"] == cg.path("/app")
    assert series["task_memcg"] and series["oom_memcg"]
    before = [s for s in series["samples"] if s["t_ms"] <= man["killed_at_ms"]]
    assert len(before) >= 3, series
    assert all(s["limit"] == 64 << 20 for s in before)
    assert all(0 <= s["usage"] <= (64 << 20) + (4 << 20) for s in before)
    # 1 Hz, wall clock, and the newest within ~1 s of the kill
    gaps = [b["t_ms"] - a["t_ms"] for a, b in zip(before, before[1:])]
    assert all(900 <= g <= 1100 for g in gaps), gaps
    assert man["killed_at_ms"] - before[-1]["t_ms"] <= 1500
    assert before[-1]["usage"] > before[0]["usage"] + (16 << 20), before
    diag = json.loads(files["diagnosis.json"])
    assert diag["verdict"] != "unknown", diag
    top = diag["verdicts"][0]
    assert top["verdict"] == "native-growth", diag
    assert "agent's cgroup timeline" in top["evidence"][0], top
    assert "grew steadily at" in top["evidence"][0], top
    assert 0 < top["bytes"] <= diag["limit_bytes"] == 64 << 20
    assert line["verdict"] == "native-growth"
    print("\nagent timeline: %d samples before the kill; %s"
          % (len(before), top["evidence"][0]))
    assert agent.stop() == 0


def test_container_killed_soon_after_it_appeared_has_a_timeline(
        cg, agent_factory):
    # A cgroup made after the agent started and killed ~4 s later (a
    # container that runs out at start-up): the agent's timeline of it
    # starts within about a tick of its creation, not at the next periodic
    # walk of the tree (every 5 s).
    import time
    wait_oom_ratelimit()
    started = time.monotonic()
    agent = agent_factory()
    # half a second after the agent's second walk (ticks 0 and 5 s): the
    # next walk would come only after the kill
    assert agent.drain(max(0.1, started + 5.6 - time.monotonic())) == []
    created_ms = int(time.time() * 1000)
    cg.mkdir("/quick", limit_mb=32)
    victim, _, rc = hog(cg, "/quick", "--step-mb", "4", "--delay-ms", "500")
    assert rc == -9
    line = agent.next()
    assert [v["pid"] for v in line["victims"]] == [victim]
    files = bundle_members(line["path"])
    man = json.loads(files["manifest.json"])
    tl = json.loads(files["agent/timeline.json"])
    series = [s for s in tl["cgroups"] if s["cgroup"] == cg.path("/quick")]
    assert series, tl
    before = [s for s in series[0]["samples"]
              if s["t_ms"] <= man["killed_at_ms"]]
    assert before, series
    first = before[0]["t_ms"] - created_ms
    assert 0 <= first <= 1600, (first, man["killed_at_ms"] - created_ms)
    assert len(before) >= 2, series
    assert agent.stop() == 0
