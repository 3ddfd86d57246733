"""STATE/reports/ kept within --reports-keep and --reports-max-bytes by a
real standalone agent: the oldest kills' files removed together at start
and after a real OOM kill's bundle, foreign files and symlinks left alone,
one log line per round."""
import os
import subprocess
import time

import pytest

from oomtest import AGENT, Agent, Cgroup, hog, require_oom_env, wait_oom_ratelimit


@pytest.fixture
def cg():
    require_oom_env()
    c = Cgroup("oomlens-test-retention-%d" % os.getpid())
    yield c
    c.cleanup()


def plant(d, name, age_s, size=100):
    p = os.path.join(d, name)
    with open(p, "wb") as f:
        f.write(b"x" * size)
    t = time.time() - age_s
    os.utime(p, (t, t))
    return p


def listing(d):
    return sorted(os.listdir(d))


def rounds(agent):
    return [l for l in agent.stderr if "reports: removed" in l]


def test_reports_keep_and_max_bytes_with_a_real_kill(cg, tmp_path):
    state = tmp_path / "state"
    reports = state / "reports"
    reports.mkdir(parents=True)
    # three earlier kills, oldest first: a bundle with its report, a
    # report alone (its bundle was never written), a global OOM's three
    plant(reports, "oom-old1.tar.gz", 300)
    plant(reports, "oom-old1.html", 300)
    plant(reports, "oom-old2.html", 200)
    for f in ("oom-old3.tar.gz", "oom-old3.html", "oom-old3.node-oom.txt"):
        plant(reports, f, 100)
    # not a kill's: never counted, never removed, never followed
    plant(reports, "notes.txt", 1000)
    outside = plant(tmp_path, "outside.tar.gz", 1000)
    os.symlink(outside, reports / "oom-old0.tar.gz")

    cg.mkdir("/app", limit_mb=32)
    agent = Agent([cg.path()], str(state), ["--reports-keep", "2"])
    # at start: three kills, two kept, the oldest one's pair removed
    assert listing(reports) == [
        "notes.txt", "oom-old0.tar.gz", "oom-old2.html", "oom-old3.html",
        "oom-old3.node-oom.txt", "oom-old3.tar.gz"], agent.log()
    assert len(rounds(agent)) == 1, agent.log()
    assert "removed the files of 1 kill(s), 200 bytes: 1 over " \
        "--reports-keep 2, 0 over" in rounds(agent)[0]

    wait_oom_ratelimit()
    _, _, rc = hog(cg, "/app", "--step-mb", "4")
    assert rc == -9
    line = agent.next()
    new = line["id"]
    # the round runs after the kill's line is printed
    deadline = time.monotonic() + 10
    while len(rounds(agent)) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    # after the kill's bundle: the report alone goes, the newest two stay
    assert listing(reports) == sorted([
        "notes.txt", "oom-old0.tar.gz", "oom-old3.html",
        "oom-old3.node-oom.txt", "oom-old3.tar.gz",
        new + ".tar.gz", new + ".html"]), agent.log()
    assert len(rounds(agent)) == 2, agent.log()
    assert "removed the files of 1 kill(s), 100 bytes: 1 over " \
        "--reports-keep 2" in rounds(agent)[1]
    assert agent.stop() == 0

    # by bytes at the next start: the new kill's files fit, old3 does not
    new_bytes = sum(os.path.getsize(reports / (new + s))
                    for s in (".tar.gz", ".html"))
    agent = Agent([cg.path()], str(state),
                  ["--reports-max-bytes", str(new_bytes + 100)])
    try:
        assert listing(reports) == sorted([
            "notes.txt", "oom-old0.tar.gz", new + ".tar.gz",
            new + ".html"]), agent.log()
        r = rounds(agent)
        assert len(r) == 1 and "1 kill(s), 300 bytes: 0 over " \
            "--reports-keep 200, 1 over --reports-max-bytes %d" \
            % (new_bytes + 100) in r[0], agent.log()
    finally:
        assert agent.stop() == 0
    assert os.path.exists(outside)


@pytest.mark.parametrize("args,err", [
    (["--reports-keep", "0"], 'run: --reports-keep "0": a number of kills >= 1'),
    (["--reports-keep", "2x"], 'run: --reports-keep "2x"'),
    (["--reports-max-bytes", "12X"], 'run: --reports-max-bytes "12X": a size > 0'),
    (["--reports-max-bytes", "0"], 'run: --reports-max-bytes "0"'),
])
def test_bad_limits_are_usage_errors(tmp_path, args, err):
    r = subprocess.run([AGENT, "run", "--standalone", "--watch", "/x",
                        "--state-dir", str(tmp_path / "s"), *args],
                       capture_output=True, text=True, timeout=10)
    assert r.returncode == 2 and err in r.stderr, r.stderr
    assert not (tmp_path / "s").exists(), "refused before anything is made"
