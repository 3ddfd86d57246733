"""report.html in a real headless browser (Debian's chromium): it renders,
makes no network request, shows the key figures; a screenshot is kept as a
test artefact in build/test-artifacts/."""
import json
import os
import shutil
import subprocess

import pytest

from oomtest import (AGENT, BUILD, Agent, Cgroup, Sidecar, VICTIMS,
                     bundle_files, require_oom_env, run_in_cgroup,
                     wait_oom_ratelimit)

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
         "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync",
         "--disable-default-apps", "--disable-extensions"]


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    require_oom_env()
    if not CHROMIUM:
        pytest.skip("chromium not installed (make deps installs it)")
    tmp = tmp_path_factory.mktemp("report")
    cg = Cgroup("oomlens-test-report-%d" % os.getpid())
    try:
        cg.mkdir("/app", limit_mb=64)
        agent = Agent([cg.path()], str(tmp / "state"),
                      ["--spool-dir", str(tmp / "spool")])
        sc = Sidecar(cg.path("/app"), str(tmp / "spool" / "app"))
        wait_oom_ratelimit()
        p = run_in_cgroup(cg, "/app", [os.path.join(VICTIMS, "hog"),
                                       "--name", "<b>x&y", "--step-mb", "2",
                                       "--delay-ms", "60"])
        line = agent.next(timeout=60)
        p.communicate(timeout=10)
        sc.stop()
        agent.stop()
    finally:
        cg.cleanup()
    return line, tmp


def chromium(tmp, *args):
    return subprocess.run([CHROMIUM, *FLAGS, "--user-data-dir=%s" % (tmp / "profile"),
                           *args], capture_output=True, text=True, timeout=120)


def test_report_renders_offline_with_its_figures(bundle):
    line, tmp = bundle
    html = line["report_html"]
    files = bundle_files(line["path"])
    assert files["report.html"].decode() == open(html).read()
    diag = json.loads(files["diagnosis.json"])
    netlog = tmp / "netlog.json"
    dom = chromium(tmp, "--log-net-log=%s" % netlog, "--dump-dom",
                   "file://" + html)
    assert dom.returncode == 0, dom.stderr[-2000:]
    text = dom.stdout
    # the verdict, the victim (escaped, not markup), the usage at the kill
    assert diag["verdict"] in text
    assert "&lt;b&gt;x&amp;y" in text and "<b>x&y" not in text
    assert "%d MiB" % round(diag["usage_bytes"] / 2**20) in text
    assert "Where the memory was at the kill" in text
    assert "Timeline: the last" in text, "the sidecar's timeline is drawn"
    assert "<script" not in open(html).read()
    # no request left the page (the browser's own update and time checks,
    # initiator "not an origin", are not the page's)
    assert page_requests(netlog) == []


def page_requests(netlog):
    """URLs the page asked for: net-log requests with a page initiator."""
    urls = []
    for e in json.loads(netlog.read_text())["events"]:
        p = e.get("params", {})
        if "url" in p and p.get("initiator") not in (None, "not an origin") \
                and not p["url"].startswith("file://"):
            urls.append(p["url"])
    return urls


def test_the_request_check_sees_a_page_request(bundle, tmp_path):
    """The check above can fail: a page with one image from loopback is
    caught (nothing listens there, the request is still made)."""
    _, tmp = bundle
    page = tmp_path / "leaky.html"
    page.write_text('<img src="http://127.0.0.1:9/leak.png">')
    netlog = tmp_path / "netlog.json"
    r = chromium(tmp, "--log-net-log=%s" % netlog, "--dump-dom",
                 "file://%s" % page)
    assert r.returncode == 0
    assert any("127.0.0.1:9/leak.png" in u for u in page_requests(netlog))


def test_report_screenshot_is_kept(bundle):
    line, tmp = bundle
    art = os.path.join(BUILD, "test-artifacts")
    os.makedirs(art, exist_ok=True)
    shot = os.path.join(art, "report.png")
    if os.path.exists(shot):
        os.unlink(shot)
    r = chromium(tmp, "--window-size=1200,1700", "--screenshot=%s" % shot,
                 "file://" + line["report_html"])
    assert r.returncode == 0, r.stderr[-2000:]
    with open(shot, "rb") as f:
        head = f.read(8)
    assert head == b"\x89PNG\r\n\x1a\n"
    assert os.path.getsize(shot) > 20000, "a blank page is much smaller"


def test_show_prints_the_same_verdict(bundle):
    line, _ = bundle
    r = subprocess.run([AGENT, "show", line["path"]], capture_output=True,
                       text=True, check=True)
    assert "verdict " + line["verdict"] in r.stdout
    assert "\033[" not in r.stdout, "no colour when not a tty"
    assert "ledger (usage" in r.stdout
