"""The agent's HTTP endpoint and its forecast against real OOM kills on this
machine: the standalone agent serves /healthz, /readyz and /metrics, exports
oomlens_seconds_to_oom while a victim grows steadily towards its cgroup's
limit, logs the OOMPredicted warning once, and counts the kill. How early
and how right the forecast was is printed (pytest -s) and asserted."""
import os
import re
import time
import urllib.error
import urllib.request

import pytest

from oomtest import (Agent, Cgroup, VICTIMS, free_port, require_oom_env,
                     run_in_cgroup)


@pytest.fixture
def cg():
    require_oom_env()
    c = Cgroup("oomlens-test-forecast-%d" % os.getpid())
    yield c
    c.cleanup()


def get(port, path, headers=None):
    req = urllib.request.Request("http://127.0.0.1:%d%s" % (port, path),
                                 headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            return r.status, r.headers, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read().decode()


def series(text, name, **labels):
    """The value of name{labels...} in an exposition, or None."""
    for line in text.splitlines():
        m = re.match(r'^%s\{(.*)\} (\S+)$' % re.escape(name), line)
        if not m:
            continue
        got = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(1)))
        if all(got.get(k) == v for k, v in labels.items()):
            return float(m.group(2))
    return None


def scalar(text, name):
    m = re.search(r'^%s (\S+)$' % re.escape(name), text, re.M)
    return float(m.group(1)) if m else None


def test_health_and_metrics_need_auth_without_insecure(cg, tmp_path):
    cg.mkdir("/app", limit_mb=32)
    port = free_port()
    a = Agent([cg.path()], str(tmp_path / "state"),
              ["--metrics-addr", "127.0.0.1:%d" % port])
    try:
        st, _, body = get(port, "/healthz")
        assert (st, body) == (200, "ok\n")
        st, _, body = get(port, "/readyz")
        assert (st, body) == (200, "ok\n")
        assert get(port, "/nope")[0] == 404
        # standalone has no API server to review a token: refused, and
        # the message says how to allow it
        st, _, body = get(port, "/metrics",
                          {"Authorization": "Bearer abc"})
        assert st == 503 and "--metrics-insecure" in body
    finally:
        assert a.stop() == 0


def test_forecast_comes_before_the_kill(cg, tmp_path):
    limit_mb = 96
    cg.mkdir("/app", limit_mb=limit_mb)
    port = free_port()
    agent = Agent([cg.path()], str(tmp_path / "state"),
                  ["--metrics-addr", "127.0.0.1:%d" % port,
                   "--metrics-insecure"])
    try:
        st, hdr, text = get(port, "/metrics")
        assert st == 200
        assert hdr["Content-Type"].startswith("text/plain; version=0.0.4")
        assert series(text, "oomlens_build_info") == 1
        assert "oomlens_seconds_to_oom{" not in text  # idle: no series
        time.sleep(3)  # a flat start, as a real container has
        # 1 MiB every 400 ms: ~2.5 MiB/s, the limit in ~38 s
        p = run_in_cgroup(cg, "/app", [os.path.join(VICTIMS, "hog"),
                                       "--step-mb", "1", "--delay-ms", "400"])
        t_start = time.monotonic()
        preds = []  # (t, predicted seconds)
        t_kill = None
        while time.monotonic() - t_start < 90:
            _, _, text = get(port, "/metrics")
            now = time.monotonic()
            v = series(text, "oomlens_seconds_to_oom",
                       container=cg.path("/app"))
            if v is not None:
                preds.append((now, v))
            if p.poll() is not None:
                t_kill = now
                break
            time.sleep(0.25)
        assert t_kill is not None, "the hog was not killed"
        assert p.returncode == -9
        line = agent.next()
        assert line["cgroup"] == cg.path("/app")
        # the kill time from the kernel's side: the report line arrives
        # detect_latency after it (our poll may be up to 0.25 s late)
        t_kill = min(t_kill, time.monotonic() - line["detect_latency_us"] / 1e6)
        assert preds, "no prediction before the kill;\n" + agent.log()
        first_t, first_v = preds[0]
        lead = t_kill - first_t
        errs = [(round(t_kill - t, 1), round(t + v - t_kill, 1))
                for t, v in preds if t_kill - t >= 5]
        late = [abs(e) for left, e in errs if left <= 30]
        print("\nforecast: first prediction %.1f s before the kill "
              "(said %.1f s); from 30 s before: max error %.1f s over %d "
              "reads" % (lead, first_v, max(late or [0]), len(late)))
        assert lead >= 20, (lead, preds[:5])
        # every prediction from 25 s before the kill on is right within
        # 25 % of the time left (at least 3 s)
        for left, err in errs:
            if left <= 25:
                assert abs(err) <= max(3.0, 0.25 * left), (left, err, errs)
        warned = [l for l in agent.stderr if "oom predicted" in l]
        assert len(warned) == 1, agent.log()
        # after the kill the series goes (the timeline starts over)
        time.sleep(3)
        _, _, text = get(port, "/metrics")
        assert series(text, "oomlens_seconds_to_oom",
                      container=cg.path("/app")) is None, text
        assert series(text, "oomlens_oom_kills_total",
                      container=cg.path("/app"),
                      verdict=line.get("verdict", "")) == 1, text
        assert scalar(text, "oomlens_detect_latency_seconds_count") == 1
        assert series(text, "oomlens_kmsg_reports_total",
                      complete="true") >= 1
        assert scalar(text, "oomlens_watched_cgroups") == 2
    finally:
        assert agent.stop() == 0
