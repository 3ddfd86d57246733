"""Standalone mode's publishing (--publish-url, docs/publish-http.md): a
real standalone agent, real OOM kills in a test cgroup, and a small HTTPS
collector written here (a CA and its server certificate made by the test
with openssl). Each kill must arrive as one multipart POST whose bundle
unpacks to the kill's (the victim's pid), with the bearer token and an
Idempotency-Key that stays the same across retries; 5xx and a collector
that is down are retried until it answers 2xx, once; an agent restarted
with an item queued posts it once; a 4xx gives the item up into
queue/failed/ with a clear log line; the token is in no log and no file
of the state dir.

The kill tests need root and take the real-kill lock:
  flock /tmp/oomlens-realkill.lock env OOMLENS_BUILD=$PWD/build \\
      python3 -m pytest -q tests/integration/test_publish_http.py"""
import email.parser
import email.policy
import hashlib
import io
import json
import os
import ssl
import subprocess
import tarfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from oomtest import (AGENT, Agent, Cgroup, free_port, hog, require_oom_env,
                     wait_oom_ratelimit)

TOKEN = "collector-token-5f0e1d2c3b4a69788796a5b4c3d2e1f0"


def openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True,
                   capture_output=True)


def make_ca(d, name):
    """A CA (name.ca.crt) and a server certificate it signed for localhost
    and 127.0.0.1: (ca path, cert path, key path)."""
    os.makedirs(d, exist_ok=True)
    ca_key, ca_crt = name + ".ca.key", name + ".ca.crt"
    key, csr, crt = name + ".key", name + ".csr", name + ".crt"
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
            ca_key, "-out", ca_crt, "-days", "1", "-subj",
            "/CN=oomlens test CA " + name, cwd=d)
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out",
            csr, "-subj", "/CN=localhost", cwd=d)
    with open(os.path.join(d, name + ".ext"), "w") as f:
        f.write("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    openssl("x509", "-req", "-in", csr, "-CA", ca_crt, "-CAkey", ca_key,
            "-CAcreateserial", "-out", crt, "-days", "1", "-extfile",
            name + ".ext", cwd=d)
    return (os.path.join(d, ca_crt), os.path.join(d, crt),
            os.path.join(d, key))


class Collector:
    """An HTTPS server on 127.0.0.1:port that records every POST to
    /oom/in and answers each with the next status of answers (201 once
    they run out). accepted() are the 2xx ones."""

    def __init__(self, port, crt, key, answers=()):
        self.posts, self.answers = [], list(answers)
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def do_POST(self):
                n = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(n)
                with outer.lock:
                    status = outer.answers.pop(0) if outer.answers else 201
                    outer.posts.append({"path": self.path,
                                        "headers": dict(self.headers),
                                        "body": body, "status": status,
                                        "at_ms": time.time() * 1000})
                reply = b'{"ok": true}' if status < 300 else \
                    b"no: this collector refuses it"
                self.send_response(status)
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(crt, key)
        self.httpd.socket = ctx.wrap_socket(self.httpd.socket,
                                            server_side=True)
        threading.Thread(target=self.httpd.serve_forever,
                         daemon=True).start()

    def accepted(self):
        with self.lock:
            return [p for p in self.posts if p["status"] < 300]

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def wait_for(cond, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return
        time.sleep(0.1)
    raise AssertionError("timed out waiting for " + what)


def parts(post):
    """{name: (headers, bytes)} of a multipart/form-data POST."""
    ctype = post["headers"]["Content-Type"]
    assert ctype.startswith("multipart/form-data; boundary="), ctype
    msg = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        b"Content-Type: " + ctype.encode() + b"\r\n\r\n" + post["body"])
    got = {}
    for p in msg.iter_parts():
        name = p.get_param("name", header="content-disposition")
        got[name] = (p, p.get_payload(decode=True))
    return got


def bundle_manifest(data):
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as t:
        for m in t.getmembers():
            if m.name.endswith("/manifest.json"):
                return json.load(t.extractfile(m))
    raise AssertionError("no manifest.json in the posted bundle")


def files_hold(root, needle):
    """Paths of the files under root whose bytes hold needle."""
    found = []
    for d, _, names in os.walk(root):
        for n in names:
            p = os.path.join(d, n)
            if not os.path.islink(p) and needle in open(p, "rb").read():
                found.append(p)
    return found


@pytest.fixture
def env(tmp_path):
    require_oom_env()
    cg = Cgroup("oomlens-test-publish-%d" % os.getpid())
    cg.mkdir("/app", limit_mb=32)
    tls = str(tmp_path / "tls")
    ca, crt, key = make_ca(tls, "collector")
    token = tmp_path / "token"
    token.write_text(TOKEN + "\n")
    yield cg, tmp_path, ca, crt, key, str(token)
    cg.cleanup()


def start_agent(cg, tmp_path, url, ca, token):
    return Agent([cg.path()], str(tmp_path / "state"),
                 ["--publish-url", url, "--publish-ca-file", ca,
                  "--publish-token-file", token])


def kill(cg):
    wait_oom_ratelimit()
    victim, _, rc = hog(cg, "/app", "--step-mb", "4")
    assert rc == -9
    return victim


def queue_files(tmp_path, sub=""):
    d = tmp_path / "state" / "queue" / sub
    return sorted(f for f in os.listdir(d) if f.endswith(".json")) \
        if d.exists() else []


def test_a_kill_is_posted_with_its_bundle_and_token_5xx_retried(env):
    cg, tmp_path, ca, crt, key, token = env
    port = free_port()
    col = Collector(port, crt, key, answers=[503, 500])
    agent = start_agent(cg, tmp_path, "https://127.0.0.1:%d/oom/in?src=t"
                        % port, ca, token)
    try:
        victim = kill(cg)
        line = agent.next()
        wait_for(lambda: col.accepted(), 30,
                 "the POST accepted\n" + agent.log())
        wait_for(lambda: not queue_files(tmp_path), 10,
                 "the queue drained\n" + agent.log())
        time.sleep(1)  # nothing more may come
    finally:
        assert agent.stop() == 0
        col.stop()
    posts = col.posts
    assert [p["status"] for p in posts] == [503, 500, 201], agent.log()
    keys = {p["headers"]["Idempotency-Key"] for p in posts}
    assert keys == {"%s/%s" % (os.uname().nodename, line["id"])}, keys
    for p in posts:
        assert p["path"] == "/oom/in?src=t"
        assert p["headers"]["Authorization"] == "Bearer " + TOKEN
        assert p["headers"]["User-Agent"].startswith("oomlens-agent/")
    got = parts(posts[-1])
    assert set(got) == {"report", "bundle"}
    rep_part, rep = got["report"]
    assert rep_part.get_content_type() == "application/json"
    report = json.loads(rep)
    assert report["schema"] == "oomlens.io/kill/v1"
    assert report["id"] == line["id"]
    assert report["victim"]["pid"] == victim
    assert report["cgroup"] == cg.path("/app")
    assert report["node"] == os.uname().nodename
    assert report["limit"] == 32 << 20
    bun_part, bundle = got["bundle"]
    assert bun_part.get_content_type() == "application/gzip"
    assert bun_part.get_filename() == line["id"] + ".tar.gz"
    assert report["bundle"] == {
        "name": line["id"] + ".tar.gz", "size": len(bundle),
        "sha256": hashlib.sha256(bundle).hexdigest()}
    on_disk = open(line["path"], "rb").read()
    assert bundle == on_disk, "the bundle as the node keeps it"
    man = bundle_manifest(bundle)
    assert [v["pid"] for v in man["victims"]] == [victim], man["victims"]
    assert man["cgroup"] == cg.path("/app")
    # retried twice, each logged with the collector's answer
    retries = [l for l in agent.stderr if "; retry" in l]
    assert len(retries) == 2 and "answered 503" in retries[0], retries
    assert any("posted to https://127.0.0.1:%d/oom/in (201)" % port in l
               for l in agent.stderr), agent.log()
    # it posted from under the steady state's seccomp list (net_privs)
    assert any("privileges dropped" in l and "seccomp on" in l
               for l in agent.stderr), agent.log()
    # the token is in no log line and no file the agent wrote
    assert not [l for l in agent.stderr if TOKEN in l]
    assert not files_hold(str(tmp_path / "state"), TOKEN.encode())
    assert not files_hold(str(tmp_path / "state"), b"Bearer")


def test_a_collector_down_at_first_gets_the_kill_once(env):
    cg, tmp_path, ca, crt, key, token = env
    port = free_port()  # nothing listens there yet
    agent = start_agent(cg, tmp_path, "https://127.0.0.1:%d/oom" % port,
                        ca, token)
    col = None
    try:
        kill(cg)
        line = agent.next()
        wait_for(lambda: sum("; retry" in l for l in agent.stderr) >= 2, 20,
                 "two retries while the collector is down\n" + agent.log())
        assert queue_files(tmp_path) == [line["id"] + ".json"]
        col = Collector(port, crt, key)
        wait_for(lambda: col.accepted(), 30,
                 "the POST once the collector is up\n" + agent.log())
        wait_for(lambda: not queue_files(tmp_path), 10, "the queue drained")
        time.sleep(2)
    finally:
        assert agent.stop() == 0
        if col:
            col.stop()
    assert len(col.posts) == 1, [p["status"] for p in col.posts]
    assert json.loads(parts(col.posts[0])["report"][1])["id"] == line["id"]
    assert any("Connection refused" in l or "connect" in l.lower()
               for l in agent.stderr if "; retry" in l), agent.log()


def test_a_restarted_agent_posts_its_queued_kill_once(env):
    """The first agent does not trust the collector's certificate (another
    CA): TLS fails, the kill waits in queue/. The next agent, given the
    right CA, posts it once at its start."""
    cg, tmp_path, ca, crt, key, token = env
    other_ca, _, _ = make_ca(str(tmp_path / "tls"), "other")
    port = free_port()
    col = Collector(port, crt, key)
    url = "https://127.0.0.1:%d/oom" % port
    agent = start_agent(cg, tmp_path, url, other_ca, token)
    try:
        kill(cg)
        line = agent.next()
        wait_for(lambda: any("; retry" in l for l in agent.stderr), 20,
                 "a TLS failure retried\n" + agent.log())
    finally:
        assert agent.stop() == 0
    assert col.posts == [], "no request over an unverified connection"
    assert queue_files(tmp_path) == [line["id"] + ".json"]
    assert queue_files(tmp_path, "failed") == []
    agent = start_agent(cg, tmp_path, url, ca, token)
    try:
        assert any("1 reports queued from before" in l
                   for l in agent.stderr), agent.log()
        wait_for(lambda: col.accepted(), 30,
                 "the queued kill posted\n" + agent.log())
        wait_for(lambda: not queue_files(tmp_path), 10, "the queue drained")
        time.sleep(2)
        assert agent.drain() == [], "no kill captured again"
    finally:
        assert agent.stop() == 0
        col.stop()
    assert len(col.posts) == 1
    report = json.loads(parts(col.posts[0])["report"][1])
    assert report["id"] == line["id"]
    assert col.posts[0]["headers"]["Idempotency-Key"].endswith(
        "/" + line["id"])


def test_a_4xx_gives_the_kill_up_into_queue_failed(env):
    cg, tmp_path, ca, crt, key, token = env
    port = free_port()
    col = Collector(port, crt, key, answers=[400])
    agent = start_agent(cg, tmp_path, "https://127.0.0.1:%d/oom" % port,
                        ca, token)
    try:
        kill(cg)
        line = agent.next()
        wait_for(lambda: queue_files(tmp_path, "failed"), 30,
                 "the item given up\n" + agent.log())
        time.sleep(2)
    finally:
        assert agent.stop() == 0
        col.stop()
    assert len(col.posts) == 1, "a 4xx is not retried"
    assert queue_files(tmp_path) == []
    assert queue_files(tmp_path, "failed") == [line["id"] + ".json"]
    gave_up = [l for l in agent.stderr if "giving up" in l]
    assert len(gave_up) == 1, agent.log()
    assert "report %s: post: https://127.0.0.1:%d/oom answered 400: " \
        "no: this collector refuses it" % (line["id"], port) in gave_up[0]
    assert "kept in queue/failed" in gave_up[0]
    failed = json.load(open(tmp_path / "state" / "queue" / "failed" /
                            (line["id"] + ".json")))
    assert failed["target"] == "http" and failed["step"] == "post"
    assert "answered 400" in failed["last_error"]
    assert os.path.exists(line["path"]), "the bundle stays on the node"


@pytest.mark.parametrize("args,err", [
    (["--publish-url", "http://127.0.0.1:1/oom"], "not an https:// URL"),
    (["--publish-url", "https://u:p@127.0.0.1:1/oom"], "not an https:// URL"),
    (["--publish-url", "https://127.0.0.1:1/oom", "--publish-token-file",
      "/nonexistent/token"],
     '--publish-token-file \\"/nonexistent/token\\": No such file'),
    (["--publish-url", "https://127.0.0.1:1/oom", "--publish-ca-file",
      "/nonexistent/ca"],
     '--publish-ca-file \\"/nonexistent/ca\\": No such file'),
])
def test_bad_publish_options_stop_the_start(tmp_path, args, err):
    require_oom_env()
    cg = Cgroup("oomlens-test-publish-opt-%d" % os.getpid())
    try:
        r = subprocess.run([AGENT, "run", "--standalone", "--watch",
                            cg.path(), "--state-dir", str(tmp_path / "s"),
                            *args], capture_output=True, text=True,
                           timeout=10)
    finally:
        cg.cleanup()
    assert r.returncode == 1, r.stderr
    assert err in r.stderr, r.stderr


@pytest.mark.parametrize("args,err", [
    (["--standalone", "--watch", "/x", "--publish-token-file", "/t"],
     "go with --publish-url"),
    (["--publish-url", "https://h/oom"], "are for --standalone"),
])
def test_publish_options_out_of_place_are_usage_errors(tmp_path, args, err):
    env = dict(os.environ, NODE_NAME="n")
    r = subprocess.run([AGENT, "run", "--state-dir", str(tmp_path / "s"),
                        *args], capture_output=True, text=True, timeout=10,
                       env=env)
    assert r.returncode == 2, r.stderr
    assert err in r.stderr, r.stderr
