"""tests/fakeapi/fakeapi.py beyond the golden captures: fault injection
(watch cut, stall, down + back, 429, 5xx, compaction), watch resume and
bookmarks, token rotation, client certificates, sizes, the control port and
the CLI. Everything runs on loopback."""

import json
import os
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
FAKEAPI = os.path.join(ROOT, "tests", "fakeapi", "fakeapi.py")
sys.path.insert(0, os.path.join(ROOT, "tests", "fakeapi"))
import fakeapi  # noqa: E402
from rawhttp import RawClient  # noqa: E402

AGENT = "agent-token-0123456789"
ADMIN = "admin-token-0123456789"
JSON = {"Content-Type": "application/json"}
REPORTS = "/apis/oomlens.io/v1alpha1/namespaces/default/oomreports"


@pytest.fixture
def api(tmp_path):
    a = fakeapi.FakeAPI(tls_dir=str(tmp_path / "tls")).start()
    try:
        yield a
    finally:
        a.stop()


@pytest.fixture
def c(api):
    return RawClient(api.port, api.ca)


def pod(name, node="node1", labels=None):
    return json.dumps({"apiVersion": "v1", "kind": "Pod",
                       "metadata": {"name": name, "labels": labels or {"app": name}},
                       "spec": {"nodeName": node, "containers": [
                           {"name": "c", "image": "busybox:1.36"}]}})


def report(name, **spec):
    s = {"pod": "p", "container": "c"}
    s.update(spec)
    return json.dumps({"apiVersion": "oomlens.io/v1alpha1", "kind": "OOMReport",
                       "metadata": {"name": name}, "spec": s})


def create_pod(c, name, node="node1", labels=None):
    r = c.request("POST", "/api/v1/namespaces/default/pods", token=ADMIN,
                  body=pod(name, node, labels), headers=JSON)
    assert r.status == 201, r.body
    return r.json()


class Watch(threading.Thread):
    """A watch request running in the background."""

    def __init__(self, c, path, token=AGENT):
        super().__init__(daemon=True)
        self.c, self.path, self.token = c, path, token
        self.r = self.e = None
        self.start()

    def run(self):
        try:
            self.r = self.c.request("GET", self.path, token=self.token, timeout=60)
        except Exception as e:  # reported by result()
            self.e = e

    def result(self, timeout=30):
        self.join(timeout)
        assert not self.is_alive(), "watch did not end"
        if self.e:
            raise self.e
        return self.r


def wait_watchers(api, n, timeout=5):
    end = time.time() + timeout
    while time.time() < end:
        if api.state()["watches"] >= n:
            return
        time.sleep(0.02)
    raise AssertionError("watch not registered")


def test_close_watches_cuts_stream_mid_way(api, c):
    create_pod(c, "a")
    w = Watch(c, "/api/v1/pods?watch=1&timeoutSeconds=30")
    wait_watchers(api, 1)
    assert api.close_watches() == 1
    r = w.result(5)
    assert r.status == 200 and not r.complete, "no final chunk: the stream was cut"
    assert [e["type"] for e in r.events()] == ["ADDED"]
    assert r.elapsed < 5


def test_watch_resume_from_rv_misses_and_repeats_nothing(api, c):
    rvs = [create_pod(c, "p%d" % i)["metadata"]["resourceVersion"] for i in range(3)]
    r = c.request("GET", "/api/v1/pods?watch=1&timeoutSeconds=1&resourceVersion=" + rvs[0],
                  token=AGENT)
    ev = r.events()
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in ev] == [
        ("ADDED", "p1"), ("ADDED", "p2")]
    assert [e["object"]["metadata"]["resourceVersion"] for e in ev] == rvs[1:]
    r = c.request("GET", "/api/v1/pods?watch=1&timeoutSeconds=1&resourceVersion=" + rvs[2],
                  token=AGENT)
    assert r.events() == [] and r.complete


def test_watch_selector_transitions(api, c):
    create_pod(c, "a", labels={"tier": "web"})
    lst = c.request("GET", "/api/v1/pods?labelSelector=tier%3Dweb", token=AGENT).json()
    rv = lst["metadata"]["resourceVersion"]
    w = Watch(c, "/api/v1/namespaces/default/pods?watch=1&timeoutSeconds=2&"
              "labelSelector=tier%3Dweb&resourceVersion=" + rv)
    wait_watchers(api, 1)
    for labels in ({"tier": "db"}, {"tier": "web"}):
        r = c.request("PATCH", "/api/v1/namespaces/default/pods/a", token=ADMIN,
                      body=json.dumps({"metadata": {"labels": labels}}),
                      headers={"Content-Type": "application/strategic-merge-patch+json"})
        assert r.status == 200
    create_pod(c, "b", labels={"tier": "db"})
    r = w.result()
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in r.events()] == [
        ("DELETED", "a"), ("ADDED", "a")]


def test_watch_too_old_after_down_and_back(api, c):
    o = create_pod(c, "a")
    rv = o["metadata"]["resourceVersion"]
    api.go_down(1.0)
    with pytest.raises(OSError):
        c.request("GET", "/version", timeout=2)
    time.sleep(1.3)
    r = c.request("GET", "/api/v1/namespaces/default/pods/a", token=AGENT)
    assert r.status == 200 and r.json()["metadata"]["uid"] == o["metadata"]["uid"]
    # even the newest RV the client saw is older than the restarted cache
    r = c.request("GET", "/api/v1/pods?watch=1&timeoutSeconds=5&resourceVersion=" + rv,
                  token=AGENT)
    ev = r.events()
    assert len(ev) == 1 and ev[0]["type"] == "ERROR"
    assert ev[0]["object"]["code"] == 410 and ev[0]["object"]["reason"] == "Expired"
    assert r.elapsed < 2
    # relist, then the watch from the list's RV works and sees new writes only
    lrv = c.request("GET", "/api/v1/pods", token=AGENT).json()["metadata"]["resourceVersion"]
    assert int(lrv) > int(rv)
    w = Watch(c, "/api/v1/pods?watch=1&timeoutSeconds=1&resourceVersion=" + lrv)
    wait_watchers(api, 1)
    create_pod(c, "b")
    r = w.result()
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in r.events()] == [
        ("ADDED", "b")]


def test_down_drops_open_watches(api, c):
    w = Watch(c, "/api/v1/pods?watch=1&timeoutSeconds=30")
    wait_watchers(api, 1)
    api.go_down(0.5)
    r = w.result(5)
    assert not r.complete
    time.sleep(0.8)
    assert c.request("GET", "/version").status == 200
    assert api.state()["restarts"] == 1


def test_stall_delays_next_response(api, c):
    api.stall(2.0, count=1, path="/version")
    r = c.request("GET", "/version")
    assert r.status == 200 and r.elapsed >= 2.0
    r = c.request("GET", "/version")
    assert r.elapsed < 1.5, "only the next request is stalled"


def test_throttle_429_then_ok(api, c):
    api.throttle(2, retry_after=3)
    for _ in range(2):
        r = c.request("GET", "/api/v1/pods", token=AGENT)
        assert r.status == 429
        assert r.header("Retry-After") == "3"
        assert r.header("Content-Type") == "text/plain; charset=utf-8"
        assert r.body == b"Too many requests, please try again later.\n"
        assert r.header("X-Kubernetes-Pf-Flowschema-Uid") is None
    assert c.request("GET", "/api/v1/pods", token=AGENT).status == 200


def test_fail_injects_status(api, c):
    api.fail(1, code=503, message="etcd is sad", reason="ServiceUnavailable",
             retry_after=2)
    r = c.request("GET", "/api/v1/pods", token=AGENT)
    assert r.status == 503 and r.header("Retry-After") == "2"
    assert r.json()["reason"] == "ServiceUnavailable" and r.json()["code"] == 503
    assert c.request("GET", "/api/v1/pods", token=AGENT).status == 200


def test_compaction_expires_continue_and_watch(api, c):
    for i in range(3):
        create_pod(c, "p%d" % i)
    r = c.request("GET", "/api/v1/pods?limit=1", token=AGENT).json()
    tok, rv = r["metadata"]["continue"], r["metadata"]["resourceVersion"]
    assert r["metadata"]["remainingItemCount"] == 2
    create_pod(c, "p3")  # after the first page: not in the consistent list
    r = c.request("GET", "/api/v1/pods?limit=5&continue=" + tok, token=AGENT).json()
    assert [o["metadata"]["name"] for o in r["items"]] == ["p1", "p2"]
    assert r["metadata"]["resourceVersion"] == rv
    api.compact()
    r = c.request("GET", "/api/v1/pods?limit=5&continue=" + tok, token=AGENT)
    assert r.status == 410 and r.json()["reason"] == "Expired"
    fresh = r.json()["metadata"]["continue"]
    r = c.request("GET", "/api/v1/pods?limit=5&continue=" + fresh, token=AGENT)
    assert [o["metadata"]["name"] for o in r.json()["items"]] == ["p1", "p2", "p3"]
    # a watch from before the compaction is still served from the watch
    # cache (measured on 1.20.2): p3 comes, no 410
    r = c.request("GET", "/api/v1/pods?watch=1&timeoutSeconds=2&resourceVersion=" + rv,
                  token=AGENT)
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in r.events()] == [
        ("ADDED", "p3")]
    # only Exact lists below the compaction get 410
    r = c.request("GET", "/api/v1/pods?resourceVersionMatch=Exact&resourceVersion=" + rv,
                  token=AGENT)
    assert r.status == 410 and r.json()["reason"] == "Expired"
    r = c.request("GET", "/api/v1/pods?continue=garbage", token=AGENT)
    assert r.status == 400 and r.json()["reason"] == "BadRequest"


def test_bookmarks_only_when_rv_moves(api, c):
    api.bookmark_period = 0.5
    r = c.request("GET", "/api/v1/pods?watch=1&allowWatchBookmarks=true&timeoutSeconds=2&"
                  "resourceVersion=%d" % api.state()["rv"], token=AGENT)
    assert r.events() == [], "no write, no bookmark"
    rv0 = api.state()["rv"]
    w = Watch(c, "/api/v1/pods?watch=1&fieldSelector=spec.nodeName%%3Dnode1&"
              "allowWatchBookmarks=true&timeoutSeconds=2&resourceVersion=%d" % rv0)
    wait_watchers(api, 1)
    o = create_pod(c, "other", node="node2")  # filtered out, but moves the RV
    ev = w.result().events()
    assert ev and all(e["type"] == "BOOKMARK" for e in ev)
    assert ev[0]["object"]["metadata"]["resourceVersion"] == o["metadata"]["resourceVersion"]
    assert ev[0]["object"]["spec"] == {"containers": None}


def test_token_rotation_through_tokens_file(tmp_path):
    tokens = tmp_path / "tokens.json"
    tokens.write_text(json.dumps({"tokens": {"t1": {"user": "u1", "rules": None}}}))
    api = fakeapi.FakeAPI(tls_dir=str(tmp_path / "tls"), tokens=str(tokens)).start()
    try:
        c = RawClient(api.port, api.ca)
        assert c.request("GET", "/api/v1/pods", token="t1").status == 200
        assert c.request("GET", "/api/v1/pods", token=AGENT).status == 401
        time.sleep(0.01)
        tokens.write_text(json.dumps({"tokens": {"t2": {"user": "u1", "rules": [
            {"apiGroups": [""], "resources": ["pods"], "verbs": ["list"]}]}}}))
        os.utime(tokens, ns=(time.time_ns(), time.time_ns() + 10**9))
        assert c.request("GET", "/api/v1/pods", token="t1").status == 401
        assert c.request("GET", "/api/v1/pods", token="t2").status == 200
        r = c.request("GET", "/api/v1/namespaces/default/pods/x", token="t2")
        assert r.status == 403 and 'cannot get resource "pods"' in r.json()["message"]
        tokens.write_text("{not json")
        os.utime(tokens, ns=(time.time_ns(), time.time_ns() + 2 * 10**9))
        assert c.request("GET", "/api/v1/pods", token="t2").status == 200, \
            "a broken file keeps the old tokens"
    finally:
        api.stop()


def test_tokens_through_control_port(api, c):
    def ctl(action, body):
        req = urllib.request.Request("http://127.0.0.1:%d/%s" % (api.control_port, action),
                                     data=json.dumps(body).encode(), method="POST")
        return json.loads(urllib.request.urlopen(req, timeout=5).read())
    assert ctl("tokens", {"add": {"new-token": {"user": "bob", "groups": ["g"]}},
                          "remove": [AGENT]}) == {"ok": True}
    assert c.request("GET", "/api/v1/pods", token=AGENT).status == 401
    assert c.request("GET", "/api/v1/pods", token="new-token").status == 200
    r = c.request("POST", "/apis/authentication.k8s.io/v1/tokenreviews", token=ADMIN,
                  body=json.dumps({"spec": {"token": "new-token"}}), headers=JSON)
    assert r.status == 201
    assert r.json()["status"]["user"] == {"username": "bob", "uid": "",
                                          "groups": ["g", "system:authenticated"]}
    assert ctl("throttle", {"count": 1}) == {"ok": True}
    assert c.request("GET", "/version").status == 429
    st = json.loads(urllib.request.urlopen("http://127.0.0.1:%d/state" % api.control_port,
                                           timeout=5).read())
    assert st["port"] == api.port and st["up"] is True
    log = json.loads(urllib.request.urlopen("http://127.0.0.1:%d/requests"
                                            % api.control_port, timeout=5).read())
    assert [(x["method"], x["path"], x["status"]) for x in log[-2:]] == [
        ("POST", "/apis/authentication.k8s.io/v1/tokenreviews", 201), ("GET", "/version", 429)]


def test_client_certificate_login(api, tmp_path):
    crt, key = fakeapi.make_client_cert(api.tls_dir, "alice", "alice", ["devs"])
    c = RawClient(api.port, api.ca, cert=crt, key=key)
    r = c.request("GET", "/api/v1/pods")
    assert r.status == 200
    crt, key = fakeapi.make_client_cert(api.tls_dir, "root", "root", ["system:masters"])
    r = RawClient(api.port, api.ca, cert=crt, key=key).request(
        "POST", "/api/v1/namespaces/default/pods", body=pod("x"), headers=JSON)
    assert r.status == 201
    assert r.json()["metadata"]["managedFields"][0]["manager"] == "oomlens-agent"


def test_anonymous_and_unknown_tokens(api, c):
    r = c.request("GET", "/api/v1/pods")
    assert r.status == 403 and "system:anonymous" in r.json()["message"]
    assert c.request("GET", "/version").status == 200
    assert c.request("GET", "/api/v1/pods", token="nope").status == 401
    r = c.request("GET", "/api/v1/pods", headers={"Authorization": "Basic eDp5"})
    assert r.status == 401
    api.anonymous = False
    assert c.request("GET", "/api/v1/pods").status == 401


def test_sizes(api, c):
    data = "A" * (1536 * 1024)  # valid base64, object just over 1.5 MiB
    body = json.dumps({"apiVersion": "oomlens.io/v1alpha1", "kind": "OOMBundle",
                       "metadata": {"name": "big"},
                       "spec": {"data": data, "sha256": "x", "size": 1}})
    r = c.request("POST", "/apis/oomlens.io/v1alpha1/namespaces/default/oombundles",
                  token=AGENT, body=body, headers=JSON)
    assert r.informational == [100]
    assert r.status == 500 and r.json() == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": "etcdserver: request is too large", "code": 500}
    body = "x" * (3 * 1024 * 1024 + 1)
    r = c.request("POST", "/apis/oomlens.io/v1alpha1/namespaces/default/oombundles",
                  token=AGENT, body=body, headers=JSON)
    assert r.status == 413 and r.header("Connection") == "close"
    assert r.json()["reason"] == "RequestEntityTooLarge"
    # chunked request bodies are read too
    s = c.connect()
    s.sendall(b"POST " + REPORTS.encode() + b" HTTP/1.1\r\nHost: x\r\nAuthorization: "
              b"Bearer " + AGENT.encode() + b"\r\nContent-Type: application/json\r\n"
              b"Transfer-Encoding: chunked\r\n\r\n")
    b = report("chunked-1").encode()
    s.sendall(b"%x\r\n%s\r\n0\r\n\r\n" % (len(b), b))
    head = s.recv(65536)
    s.close()
    assert head.startswith(b"HTTP/1.1 201 ")


def test_updates_conflicts_and_status(api, c):
    r = c.request("POST", REPORTS, token=AGENT, headers=JSON,
                  body=report("r1", verdict="a"))
    o = r.json()
    assert r.status == 201 and "status" not in o and o["metadata"]["generation"] == 1
    o["spec"]["verdict"] = "b"
    o["status"] = {"phase": "ignored-on-main-resource"}
    r = c.request("PUT", REPORTS + "/r1", token=AGENT, headers=JSON, body=json.dumps(o))
    assert r.status == 200
    new = r.json()
    assert new["spec"]["verdict"] == "b" and "status" not in new
    assert new["metadata"]["generation"] == 2
    assert int(new["metadata"]["resourceVersion"]) > int(o["metadata"]["resourceVersion"])
    r = c.request("PUT", REPORTS + "/r1", token=AGENT, headers=JSON, body=json.dumps(o))
    assert r.status == 409 and r.json()["reason"] == "Conflict"
    del o["metadata"]["resourceVersion"]
    r = c.request("PUT", REPORTS + "/r1", token=AGENT, headers=JSON, body=json.dumps(o))
    assert r.status == 422
    r = c.request("PATCH", REPORTS + "/r1/status", token=AGENT,
                  headers={"Content-Type": "application/merge-patch+json"},
                  body=json.dumps({"status": {"phase": "Published"},
                                   "spec": {"verdict": "ignored"}}))
    assert r.status == 200
    assert r.json()["status"] == {"phase": "Published"}
    assert r.json()["spec"]["verdict"] == "b" and r.json()["metadata"]["generation"] == 2
    # a no-op patch keeps the RV
    rv = r.json()["metadata"]["resourceVersion"]
    r = c.request("PATCH", REPORTS + "/r1", token=AGENT,
                  headers={"Content-Type": "application/merge-patch+json"},
                  body=json.dumps({"spec": {"verdict": "b"}}))
    assert r.json()["metadata"]["resourceVersion"] == rv
    # json patch, unknown fields pruned, strategic merge refused for CRs
    r = c.request("PATCH", REPORTS + "/r1", token=AGENT,
                  headers={"Content-Type": "application/json-patch+json"},
                  body=json.dumps([{"op": "replace", "path": "/spec/verdict", "value": "c"},
                                   {"op": "add", "path": "/spec/bogus", "value": 1}]))
    assert r.status == 200 and r.json()["spec"]["verdict"] == "c"
    assert "bogus" not in r.json()["spec"]
    r = c.request("PATCH", REPORTS + "/r1", token=AGENT,
                  headers={"Content-Type": "application/strategic-merge-patch+json"},
                  body="{}")
    assert r.status == 415
    r = c.request("PATCH", REPORTS + "/r1?fieldManager=x", token=AGENT,
                  headers={"Content-Type": "application/apply-patch+yaml"},
                  body="spec: [unclosed")
    assert r.status == 400
    r = c.request("DELETE", REPORTS + "/r1/status", token=AGENT)
    assert r.status == 405 and r.json()["reason"] == "MethodNotAllowed"
    assert c.request("GET", REPORTS + "/r1", token=AGENT).status == 200


def test_validation_causes(api, c):
    r = c.request("POST", REPORTS, token=AGENT, headers=JSON,
                  body=json.dumps({"metadata": {"name": "x"},
                                   "spec": {"killedAt": "yesterday", "process": []}}))
    assert r.status == 422
    causes = r.json()["details"]["causes"]
    assert {(x["reason"], x["field"]) for x in causes} == {
        ("FieldValueRequired", "spec.pod"), ("FieldValueRequired", "spec.container"),
        ("FieldValueInvalid", "spec.killedAt"), ("FieldValueInvalid", "spec.process")}
    r = c.request("POST", REPORTS, token=AGENT, headers=JSON,
                  body=json.dumps({"metadata": {"name": "Bad_Name"},
                                   "spec": {"pod": "p", "container": "c"}}))
    assert r.status == 422 and r.json()["details"]["causes"][0]["field"] == "metadata.name"
    r = c.request("POST", REPORTS, token=AGENT, headers=JSON,
                  body=json.dumps({"metadata": {"generateName": "gen-"},
                                   "spec": {"pod": "p", "container": "c"}}))
    assert r.status == 201 and r.json()["metadata"]["name"].startswith("gen-")
    assert len(r.json()["metadata"]["name"]) == 9
    r = c.request("POST", "/apis/oomlens.io/v1alpha1/namespaces/nope/oomreports",
                  token=AGENT, headers=JSON, body=report("r"))
    assert r.status == 404 and r.json()["message"] == 'namespaces "nope" not found'
    r = c.request("POST", REPORTS, token=AGENT, headers=JSON, body="{broken")
    assert r.status == 400 and r.json()["reason"] == "BadRequest"
    r = c.request("GET", "/api/v1/pods?fieldSelector=spec.bogus%3Dx", token=AGENT)
    assert r.status == 400
    r = c.request("GET", "/api/v1/pods?labelSelector=a%20in%20(x", token=AGENT)
    assert r.status == 400


def test_hostile_input_does_not_kill_the_server(api, c):
    s = c.connect()
    s.sendall(b"GARBAGE\r\n\r\n")
    s.recv(4096)
    s.close()
    s = socket.create_connection(("127.0.0.1", api.port))  # plain text on a TLS port
    s.sendall(b"GET /version HTTP/1.1\r\n\r\n")
    s.close()
    s = c.connect()
    s.sendall(b"POST " + REPORTS.encode() + b" HTTP/1.1\r\nHost: x\r\n"
              b"Content-Length: 1000\r\n\r\n{")  # then the client vanishes
    s.close()
    r = c.request("GET", "/api/v1/namespaces/default/pods/%2E%2E%2Fetc", token=AGENT)
    assert r.status == 404
    assert c.request("GET", "/version").status == 200


def test_cli_ready_file_and_sigterm(tmp_path):
    ready = tmp_path / "ready"
    kc = tmp_path / "kc"
    p = subprocess.Popen([sys.executable, FAKEAPI, "--port", "0", "--tls-dir",
                          str(tmp_path / "tls"), "--ready-file", str(ready),
                          "--kubeconfig", str(kc)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    try:
        end = time.time() + 30
        while not ready.exists() and time.time() < end and p.poll() is None:
            time.sleep(0.05)
        port = int(ready.read_text())
        ctl = int((tmp_path / "ready.control").read_text())
        info = json.loads(p.stdout.readline())
        assert (info["port"], info["control_port"]) == (port, ctl)
        c = RawClient(port, str(tmp_path / "tls" / "ca.crt"))
        assert c.request("GET", "/api/v1/pods", token=AGENT).status == 200
        cfg = json.loads(kc.read_text())
        assert cfg["clusters"][0]["cluster"]["server"] == "https://127.0.0.1:%d" % port
        ctx = ssl.create_default_context(cafile=str(tmp_path / "tls" / "ca.crt"))
        with socket.create_connection(("127.0.0.1", port)) as raw:
            with ctx.wrap_socket(raw, server_hostname="localhost") as s:
                assert s.version() in ("TLSv1.2", "TLSv1.3")  # SAN DNS:localhost
    finally:
        p.send_signal(signal.SIGTERM)
        assert p.wait(10) == 0


def test_events_one_storage_two_apis(api, c):
    """events.k8s.io/v1 and core/v1 Events are the same objects, converted."""
    ev = {"apiVersion": "events.k8s.io/v1", "kind": "Event",
          "metadata": {"name": "victim-2.1", "namespace": "default"},
          "eventTime": "2026-11-30T09:29:59.887586Z",
          "reportingController": "oomlens.io/agent", "reportingInstance": "node1",
          "action": "Diagnose", "reason": "OOMForensics", "type": "Warning",
          "regarding": {"apiVersion": "v1", "kind": "Pod", "namespace": "default",
                        "name": "victim-2", "uid": "u-2"},
          "note": "container c OOM-killed"}
    r = c.request("POST", "/apis/events.k8s.io/v1/namespaces/default/events", token=AGENT,
                  body=json.dumps(ev), headers=JSON)
    assert r.status == 201, r.body
    assert r.json()["deprecatedSource"] == {} and r.json()["note"] == ev["note"]
    r = c.request("GET", "/api/v1/namespaces/default/events?fieldSelector="
                  "involvedObject.name%3Dvictim-2", token=ADMIN)
    (core,) = r.json()["items"]
    assert core["involvedObject"]["uid"] == "u-2"
    assert core["message"] == "container c OOM-killed"
    assert core["reportingComponent"] == "oomlens.io/agent"
    assert core["source"] == {} and core["firstTimestamp"] is None
    assert "regarding" not in core and "note" not in core
    r = c.request("PATCH", "/api/v1/namespaces/default/events/victim-2.1", token=AGENT,
                  body=json.dumps({"count": 2}),
                  headers={"Content-Type": "application/merge-patch+json"})
    assert r.status == 200 and r.json()["count"] == 2
    r = c.request("GET", "/apis/events.k8s.io/v1/namespaces/default/events?fieldSelector="
                  "regarding.name%3Dvictim-2", token=ADMIN)
    (v1,) = r.json()["items"]
    assert v1["deprecatedCount"] == 2 and v1["regarding"]["name"] == "victim-2"
    assert "apiVersion" not in v1 and v1["deprecatedSource"] == {}  # list items
    assert r.json()["apiVersion"] == "events.k8s.io/v1"
    bad = dict(ev, metadata={"name": "x"})
    del bad["eventTime"]
    r = c.request("POST", "/apis/events.k8s.io/v1/namespaces/default/events", token=AGENT,
                  body=json.dumps(bad), headers=JSON)
    assert r.status == 422 and r.json()["details"]["causes"][0]["field"] == "eventTime"


def test_bulk_load_for_benchmarks(api, c):
    rv0 = api.state()["rv"]
    w = Watch(c, "/api/v1/pods?watch=1&timeoutSeconds=3&fieldSelector=spec.nodeName%%3Dn7"
              "&resourceVersion=%d" % rv0)
    wait_watchers(api, 1)
    assert api.control("generate-pods", {"count": 300, "node": "n7"}) == {
        "created": 300, "rv": rv0 + 300}
    out = api.control("load", {"resource": "oomreports", "objects": [
        json.loads(report("r%d" % i)) for i in range(3)]})
    assert out["created"] == 3
    ev = w.result().events()
    assert len(ev) == 300 and {e["type"] for e in ev} == {"ADDED"}
    assert ev[-1]["object"]["metadata"]["name"] == "pod-299"
    r = c.request("GET", "/api/v1/pods?limit=500", token=AGENT).json()
    assert len(r["items"]) == 300 and "continue" not in r["metadata"]
    with pytest.raises(Exception):
        api.control("load", {"resource": "oomreports", "objects": [{"spec": {}}]})


def test_server_side_apply_ownership(api, c):
    """Apply removes the fields its manager dropped, and without force it
    conflicts with fields another manager set to something else."""
    def apply(body, manager="agent", force=False):
        q = "?fieldManager=%s%s" % (manager, "&force=true" if force else "")
        return c.request("PATCH", REPORTS + "/r1" + q, token=AGENT, body=json.dumps(body),
                         headers={"Content-Type": "application/apply-patch+yaml"})
    cfg = {"apiVersion": "oomlens.io/v1alpha1", "kind": "OOMReport",
           "metadata": {"name": "r1", "labels": {"a": "1"}},
           "spec": {"pod": "p", "container": "c", "verdict": "v1", "summary": "s"}}
    r = apply(cfg)
    assert r.status == 201
    assert [(e["manager"], e["operation"]) for e in r.json()["metadata"]["managedFields"]] \
        == [("agent", "Apply")]
    # another manager changes the verdict with a merge patch (an Update)
    r = c.request("PATCH", REPORTS + "/r1", token=AGENT, body=json.dumps(
        {"spec": {"verdict": "v2"}}), headers={"Content-Type": "application/merge-patch+json"})
    assert r.status == 200
    # re-applying v1 without force: conflict with the Update manager
    r = apply(cfg)
    assert r.status == 409 and r.json()["reason"] == "Conflict"
    cause = r.json()["details"]["causes"][0]
    assert cause["reason"] == "FieldManagerConflict" and cause["field"] == ".spec.verdict"
    assert r.json()["message"].startswith("Apply failed with 1 conflict: conflict with "
                                          '"oomlens-agent" using oomlens.io/v1alpha1 at ')
    # the same value is no conflict (shared ownership)
    r = apply(dict(cfg, spec=dict(cfg["spec"], verdict="v2")))
    assert r.status == 200
    # force takes the field; dropping summary and the label removes them
    r = apply({"apiVersion": "oomlens.io/v1alpha1", "kind": "OOMReport",
               "metadata": {"name": "r1"},
               "spec": {"pod": "p", "container": "c", "verdict": "v3"}}, force=True)
    assert r.status == 200, r.body
    o = r.json()
    assert o["spec"] == {"pod": "p", "container": "c", "verdict": "v3"}
    assert "labels" not in o["metadata"]
    r = apply(cfg, manager="")
    assert r.status == 422 and "fieldManager" in r.json()["message"]


def test_control_token_on_api_port_and_dry_run(tmp_path):
    api = fakeapi.FakeAPI(tls_dir=str(tmp_path / "tls"), control_token="ctl-secret").start()
    try:
        c = RawClient(api.port, api.ca)
        r = c.request("POST", "/fake/throttle", token="ctl-secret", body='{"count": 1}')
        assert r.status == 200 and r.json() == {"ok": True}
        assert c.request("GET", "/version").status == 429
        r = c.request("GET", "/fake/state", token=AGENT)
        assert r.status == 404, "control calls need the control token"
        r = c.request("GET", "/fake/state", token="ctl-secret")
        assert r.json()["port"] == api.port
        r = c.request("POST", REPORTS + "?dryRun=All", token=AGENT, headers=JSON,
                      body=report("dry"))
        assert r.status == 400 and "dryRun" in r.json()["message"]
        assert c.request("GET", REPORTS + "/dry", token=AGENT).status == 404
    finally:
        api.stop()


def test_control_port_errors(api):
    def post(action, body):
        req = urllib.request.Request("http://127.0.0.1:%d/%s" % (api.control_port, action),
                                     data=body.encode(), method="POST")
        try:
            with urllib.request.urlopen(req, timeout=5) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read())
    assert post("no-such-action", "{}")[0] == 404
    assert post("stall", "{not json")[0] == 400
    code, body = post("load", json.dumps({"resource": "oomreports", "objects": [
        {"metadata": {"name": "x"}, "spec": {}}]}))
    assert code == 422 and body["reason"] == "Invalid"
    assert post("load", json.dumps({"resource": "widgets"}))[0] == 404
    assert post("generate-pods", json.dumps({"count": 2}))[1]["created"] == 2


def test_validation_cause_order_is_not_stable(api, c):
    """As on the real server: the same invalid object twice may list its
    causes in another order (clients must not rely on one)."""
    body = json.dumps({"metadata": {"name": "x"},
                       "spec": {"killedAt": "yesterday", "process": []}})
    orders = set()
    for _ in range(12):
        r = c.request("POST", REPORTS, token=AGENT, headers=JSON, body=body)
        assert r.status == 422
        orders.add(tuple(x["field"] for x in r.json()["details"]["causes"]))
    assert len(orders) > 1, orders
    assert all(len(o) == 4 for o in orders)


def test_bookmarks_one_or_two_before_timeout(api, c):
    """A 5 s watch gets 1 or 2 bookmarks, as measured on 1.20.2: the one
    just before the timeout comes or not."""
    api.bookmark_period = 60
    counts = set()
    for i in range(6):
        rv0 = api.state()["rv"]
        w = Watch(c, "/api/v1/pods?watch=1&fieldSelector=spec.nodeName%%3Dnode1&"
                  "allowWatchBookmarks=true&timeoutSeconds=5&resourceVersion=%d" % rv0)
        wait_watchers(api, 1)
        create_pod(c, "bm%d" % i, node="node2")  # moves the RV, filtered out
        ev = w.result().events()
        assert ev and all(e["type"] == "BOOKMARK" for e in ev)
        counts.add(len(ev))
        if counts == {1, 2}:
            break
    assert counts <= {1, 2} and counts, counts
