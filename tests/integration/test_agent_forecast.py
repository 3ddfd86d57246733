"""The agent's HTTP endpoint and its forecast against real OOM kills on this
machine: the standalone agent serves /healthz, /readyz and /metrics, exports
oomlens_time_to_oom_seconds while a victim grows steadily towards its cgroup's
limit, logs the OOMPredicted warning once, and counts the kill. How early
and how right the forecast was is printed (pytest -s) and asserted."""
import http.client
import os
import re
import ssl
import subprocess
import time
import urllib.error
import urllib.request

import pytest

from oomtest import (AGENT, Agent, Cgroup, VICTIMS, free_port, make_cert,
                     require_oom_env, run_in_cgroup, swap_cert_and_wait)


@pytest.fixture
def cg():
    require_oom_env()
    c = Cgroup("oomlens-test-forecast-%d" % os.getpid())
    yield c
    c.cleanup()


def get(port, path, headers=None, ctx=None):
    scheme = "https://localhost" if ctx else "http://127.0.0.1"
    req = urllib.request.Request("%s:%d%s" % (scheme, port, path),
                                 headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=5, context=ctx) as r:
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


def status_kib(pid, field):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise AssertionError("no " + field)


def sockets(pid):
    """The process's socket fds: the connections it holds (its other fds
    come and go: the sampler's cgroup reads, a cgroup found by a rescan)."""
    n = 0
    for fd in os.listdir("/proc/%d/fd" % pid):
        try:
            n += os.readlink("/proc/%d/fd/%s" % (pid, fd)).startswith("socket:")
        except OSError:
            pass  # closed while listed
    return n


def test_idle_connections_are_capped_and_timed_out(cg, tmp_path):
    """1,000 connections to the agent's HTTP server that send nothing (what
    took it from 17 to 104 MB with 15,000): it holds at most 64, its
    memory barely moves, it closes them after its 10 s timeout, and
    /healthz answers again when they are gone."""
    import socket
    cg.mkdir("/app", limit_mb=32)
    port = free_port()
    a = Agent([cg.path()], str(tmp_path / "state"),
              ["--metrics-addr", "127.0.0.1:%d" % port])
    socks = []
    try:
        assert get(port, "/healthz")[::2] == (200, "ok\n")
        pid = a.proc.pid
        rest = status_kib(pid, "VmRSS")
        fds0 = sockets(pid)
        for _ in range(1000):
            s = socket.create_connection(("127.0.0.1", port), timeout=5)
            socks.append(s)
        time.sleep(2)
        grown = status_kib(pid, "VmRSS") - rest
        held = sockets(pid) - fds0
        assert grown < 4 << 10, "%d KiB more for idle connections" % grown
        assert 60 <= held <= 66, held
        time.sleep(10)
        closed = 0
        for s in socks:
            s.setblocking(False)
            try:
                closed += s.recv(1) == b""
            except BlockingIOError:
                pass
            except OSError:
                closed += 1
        assert closed >= 64, closed
    finally:
        for s in socks:
            s.close()
        time.sleep(0.5)
        st = get(port, "/healthz")[::2]
        assert a.stop() == 0
    assert st == (200, "ok\n")


def test_https_serves_every_path_and_follows_its_certificate(cg, tmp_path):
    """--metrics-tls-cert/--metrics-tls-key: HTTPS only (a plain request
    gets no answer), the same paths, and a certificate replaced in place
    (a Secret volume's swap) is served without a restart."""
    cg.mkdir("/app", limit_mb=32)
    crt, key = make_cert(str(tmp_path), "metrics")
    port = free_port()
    a = Agent([cg.path()], str(tmp_path / "state"),
              ["--metrics-addr", "127.0.0.1:%d" % port,
               "--metrics-tls-cert", crt, "--metrics-tls-key=" + key,
               "--metrics-insecure"])
    try:
        ctx = ssl.create_default_context(cafile=crt)
        assert get(port, "/healthz", ctx=ctx)[::2] == (200, "ok\n")
        assert get(port, "/readyz", ctx=ctx)[::2] == (200, "ok\n")
        st, hdrs, body = get(port, "/metrics", ctx=ctx)
        assert st == 200
        assert re.search(r'^oomlens_build_info\{version="[^"]+"\} 1$',
                         body, re.M), body[:400]
        assert get(port, "/nope", ctx=ctx)[0] == 404
        with pytest.raises((OSError, http.client.HTTPException)):
            get(port, "/healthz")
        # oomlens-agent probe (helm test's client when the port is HTTPS)
        url = "https://localhost:%d/readyz" % port

        def probe(*args):
            p = subprocess.run([AGENT, "probe", *args], capture_output=True,
                               text=True, timeout=20)
            return p.returncode, p.stdout, p.stderr
        assert probe("--ca", crt, url)[:2] == (0, "ok\n")
        assert probe("--insecure", url)[:2] == (0, "ok\n")
        rc, _, err = probe(url)  # the system's CAs do not know it
        assert rc == 1 and "certificate" in err, err
        rc, out, err = probe("--ca", crt, url.replace("readyz", "nope"))
        assert (rc, out) == (1, "not found\n") and "HTTP 404" in err, err
        assert probe("--ca", crt, "--insecure", url)[0] == 2
        assert probe()[0] == 2
        swap_cert_and_wait(port, crt, key, str(tmp_path))
        ctx2 = ssl.create_default_context(cafile=crt)
        assert get(port, "/healthz", ctx=ctx2)[::2] == (200, "ok\n")
        with pytest.raises(urllib.error.URLError) as e:
            get(port, "/healthz", ctx=ctx)  # the first CA is not it
        assert isinstance(e.value.reason, ssl.SSLCertVerificationError)
        assert "https on" in "".join(a.stderr)
        assert 'certificate \\"%s\\" reloaded' % crt in "".join(a.stderr)
    finally:
        assert a.stop() == 0


@pytest.mark.parametrize("args, says", [
    (["--metrics-tls-cert", "/x.crt"], "go together"),
    (["--metrics-tls-key=/x.key"], "go together"),
    (["--metrics-tls-cert"], "--metrics-tls-cert needs a value"),
])
def test_https_options_incomplete_are_refused(tmp_path, args, says):
    p = subprocess.run([AGENT, "run", "--standalone", "--watch", "/x",
                        "--state-dir", str(tmp_path)] + args,
                       capture_output=True, text=True, timeout=10)
    assert (p.returncode, says in p.stderr) == (2, True), p.stderr


def test_https_with_an_unreadable_certificate_does_not_start(cg, tmp_path):
    cg.mkdir("/app", limit_mb=32)
    p = subprocess.run([AGENT, "run", "--standalone", "--watch", cg.path(),
                        "--state-dir", str(tmp_path / "state"),
                        "--metrics-addr", "127.0.0.1:%d" % free_port(),
                        "--metrics-tls-cert", str(tmp_path / "no.crt"),
                        "--metrics-tls-key", str(tmp_path / "no.key")],
                       capture_output=True, text=True, timeout=10)
    assert p.returncode != 0
    assert "no.crt" in p.stderr and "No such file" in p.stderr, p.stderr


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
        assert "oomlens_time_to_oom_seconds{" not in text  # idle: no series
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
            v = series(text, "oomlens_time_to_oom_seconds",
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
        assert series(text, "oomlens_time_to_oom_seconds",
                      container=cg.path("/app")) is None, text
        # standalone: counted by its verdict alone, no cgroup path (an
        # unbounded label); exactly these labels, no pod
        kills = [l for l in text.splitlines()
                 if l.startswith("oomlens_oom_kills_total{")]
        assert kills == ['oomlens_oom_kills_total{namespace="",container="",'
                         'verdict="%s",owner_kind="",owner=""} 1'
                         % (line.get("verdict") or "unknown")], text
        assert series(text, "oomlens_metrics_series_dropped_total",
                      family="oomlens_oom_kills_total") == 0, text
        assert scalar(text, "oomlens_detect_latency_seconds_count") == 1
        assert series(text, "oomlens_kmsg_reports_total",
                      complete="true") >= 1
        assert scalar(text, "oomlens_watched_cgroups") == 2
    finally:
        assert agent.stop() == 0
