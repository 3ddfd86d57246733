"""Cluster mode of oomlens-agent against the fake API server
(tests/fakeapi): start-up errors, and real OOM kills in a cgroup shaped as
the kubelet's systemd driver makes it (kubepods.slice/…-pod<uid_>.slice/
cri-containerd-<id>.scope) whose pod the fake serves. Each kill must become
exactly one OOMReport (Ready, pod + container named), one OOMBundle (sha256
of its data) and one Event per container whose count goes up.

The kill tests need root and take the real-kill lock:
  flock /tmp/oomlens-realkill.lock env OOMLENS_BUILD=$PWD/build \\
      python3 -m pytest -q tests/integration/test_cluster_fakeapi.py"""
import base64
import contextlib
import hashlib
import json
import os
import re
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

from oomtest import (AGENT, VICTIMS, AgentProcess, Cgroup, Zeros, free_port,
                     hog, require_oom_env, run_in_cgroup, wait_oom_ratelimit)

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "fakeapi"))
import fakeapi  # noqa: E402

ADMIN = "admin-token-0123456789"
NODE = "oomlens-test-node"
CID = "4b5ce8a2f0c9d1e3a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4"


@pytest.fixture
def api(tmp_path):
    a = fakeapi.FakeAPI(tls_dir=str(tmp_path / "tls")).start()
    yield a
    a.stop()


def call(api, method, path, body=None, ctype="application/json"):
    ctx = ssl.create_default_context(cafile=api.ca)
    req = urllib.request.Request(api.url + path, method=method,
                                 data=json.dumps(body).encode() if body else None,
                                 headers={"Authorization": "Bearer " + ADMIN,
                                          "Content-Type": ctype})
    try:
        with urllib.request.urlopen(req, context=ctx, timeout=10) as r:
            return r.status, json.loads(r.read() or b"{}")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")


def run_agent(args, env_extra, timeout=10):
    env = dict(os.environ, **env_extra)
    return subprocess.run([AGENT, "run", *args], env=env, capture_output=True,
                          text=True, timeout=timeout)


def test_missing_node_name_is_named(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "NODE_NAME"}
    r = subprocess.run([AGENT, "run", "--state-dir", str(tmp_path / "s")], env=env,
                       capture_output=True, text=True, timeout=10)
    assert r.returncode == 2
    assert "NODE_NAME is not set" in r.stderr
    assert "fieldPath: spec.nodeName" in r.stderr


def test_missing_state_dir_and_standalone_flags_are_named(tmp_path):
    r = run_agent([], {"NODE_NAME": NODE})
    assert r.returncode == 2 and "--state-dir is required" in r.stderr
    r = run_agent(["--state-dir", str(tmp_path), "--watch", "/x"], {"NODE_NAME": NODE})
    assert r.returncode == 2 and "are for --standalone" in r.stderr
    r = run_agent(["--state-dir", str(tmp_path), "--max-age", "soon"],
                  {"NODE_NAME": NODE})
    assert r.returncode == 2 and "--max-age" in r.stderr


def test_not_in_a_cluster_without_kubeconfig(tmp_path):
    require_oom_env()
    cg = Cgroup("kubepods.slice")
    env = {"NODE_NAME": NODE, "KUBERNETES_SERVICE_HOST": ""}
    try:
        r = run_agent(["--state-dir", str(tmp_path)], env)
    finally:
        cg.cleanup()
    assert r.returncode == 1
    assert "not running in a cluster" in r.stderr, r.stderr
    assert "--kubeconfig" in r.stderr


def test_exec_plugin_kubeconfig_is_refused(tmp_path, api):
    kc = tmp_path / "kc"
    kc.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "c", "cluster": {"server": api.url,
                                                "certificate-authority": api.ca}}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
        "users": [{"name": "u", "user": {"exec": {
            "apiVersion": "client.authentication.k8s.io/v1",
            "command": "/bin/true"}}}]}))
    require_oom_env()
    cg = Cgroup("kubepods.slice")
    try:
        r = run_agent(["--state-dir", str(tmp_path / "s"), "--kubeconfig", str(kc)],
                      {"NODE_NAME": NODE})
    finally:
        cg.cleanup()
    assert r.returncode == 1
    assert "exec credential plugin" in r.stderr, r.stderr


class ClusterAgent(AgentProcess):
    """oomlens-agent run in cluster mode, its stdout lines collected; its
    /metrics on 127.0.0.1:metrics_port."""

    def __init__(self, api, kubeconfig, state_dir, extra=(), node=NODE):
        self.metrics_port = free_port()
        super().__init__(
            [AGENT, "run", "--state-dir", state_dir, "--kubeconfig", kubeconfig,
             "--log-level", "debug", "--metrics-addr",
             "127.0.0.1:%d" % self.metrics_port,
             *extra],
            env=dict(os.environ, NODE_NAME=node))

    def metrics(self):
        """/metrics as {series: value}, a series as the exposition writes
        it (`name` or `name{label="value"}`). Needs --metrics-insecure."""
        url = "http://127.0.0.1:%d/metrics" % self.metrics_port
        with urllib.request.urlopen(url, timeout=5) as r:
            text = r.read().decode()
        got = {}
        for line in text.splitlines():
            if line and not line.startswith("#"):
                name, _, value = line.rpartition(" ")
                got[name] = float(value)
        return got


def make_pod(api, name, annotations=None, owners=None):
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": name, "annotations": annotations or {}},
           "spec": {"nodeName": NODE, "containers": [{
               "name": "app", "image": "hog:1",
               "resources": {"limits": {"memory": "32Mi"}}}]}}
    if owners:
        pod["metadata"]["ownerReferences"] = owners
    code, obj = call(api, "POST", "/api/v1/namespaces/default/pods", pod)
    assert code == 201, obj
    uid = obj["metadata"]["uid"]
    obj["status"] = {"phase": "Running", "containerStatuses": [{
        "name": "app", "restartCount": 0, "containerID": "containerd://" + CID,
        "image": "hog:1", "imageID": "", "ready": True,
        "state": {"running": {}}, "lastState": {}}]}
    code, obj = call(api, "PUT", "/api/v1/namespaces/default/pods/%s/status" % name,
                     obj)
    assert code == 200, obj
    return uid


def pod_cgroup(uid):
    require_oom_env()
    cg = Cgroup("kubepods.slice")
    sub = ("/kubepods-burstable.slice/kubepods-burstable-pod%s.slice"
           % uid.replace("-", "_"))
    cg.mkdir("/kubepods-burstable.slice")
    cg.mkdir(sub)
    cg.mkdir(sub + "/cri-containerd-%s.scope" % CID, limit_mb=32)
    return cg, sub + "/cri-containerd-%s.scope" % CID


def wait_for(fn, timeout=15, what=""):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = fn()
        if v:
            return v
        time.sleep(0.1)
    raise AssertionError("timed out waiting for " + what)


def reports(api):
    try:
        code, obj = call(api, "GET",
                         "/apis/oomlens.io/v1alpha1/namespaces/default/oomreports")
    except urllib.error.URLError:
        return []  # the API is down on purpose
    assert code == 200
    return obj["items"]


def events(api):
    code, obj = call(api, "GET", "/api/v1/namespaces/default/events"
                     "?fieldSelector=reason%3DOOMKilled")
    assert code == 200
    return obj["items"]


@pytest.fixture
def node(api, tmp_path):
    if os.geteuid() != 0:
        pytest.skip("needs root for memory cgroups and /dev/kmsg")
    kc = str(tmp_path / "kubeconfig")
    api.write_kubeconfig(kc)
    uid = make_pod(api, "victim")
    cg, ctr = pod_cgroup(uid)
    agent = ClusterAgent(api, kc, str(tmp_path / "state"))
    yield api, cg, ctr, uid, agent
    if agent.proc.poll() is None:
        agent.stop()
    cg.cleanup()


def test_kill_becomes_report_bundle_event_once(node):
    api, cg, ctr, uid, agent = node
    wait_for(lambda: any("pod watch" in l or "ready" in l for l in agent.stderr),
             what="agent ready")
    time.sleep(1)  # the pod snapshot reaches the detector
    wait_oom_ratelimit()
    victim, _, rc = hog(cg, ctr, "--step-mb", "4")
    assert rc == -9
    line = agent.lines.get(timeout=10)
    items = wait_for(lambda: [r for r in reports(api)
                              if r.get("status", {}).get("phase") == "Ready"],
                     what="a Ready OOMReport\n" + agent.log())
    assert len(items) == 1
    r = items[0]
    assert r["metadata"]["name"] == line["id"]
    assert r["metadata"]["labels"] == {
        "oomlens.io/node": NODE, "oomlens.io/pod": "victim",
        "oomlens.io/container": "app", "oomlens.io/verdict": r["spec"]["verdict"]}
    assert r["spec"]["pod"] == "victim" and r["spec"]["podUID"] == uid
    assert r["spec"]["container"] == "app"
    assert r["spec"]["containerID"] == CID
    assert r["spec"]["process"]["pid"] == victim
    assert r["status"]["bundleStored"] is True
    assert [(c["type"], c["status"], c["reason"])
            for c in r["status"]["conditions"]] == [
        ("Ready", "True", "Published"), ("BundleStored", "True", "Stored")]
    code, b = call(api, "GET", "/apis/oomlens.io/v1alpha1/namespaces/default/"
                   "oombundles/" + line["id"])
    assert code == 200
    data = base64.b64decode(b["spec"]["data"])
    assert hashlib.sha256(data).hexdigest() == b["spec"]["sha256"]
    assert b["spec"]["size"] == len(data) == os.path.getsize(line["path"])
    assert b["metadata"]["ownerReferences"][0]["kind"] == "OOMReport"
    assert b["metadata"]["ownerReferences"][0]["uid"] == r["metadata"]["uid"]
    ev = wait_for(lambda: events(api), what="the Event\n" + agent.log())
    assert len(ev) == 1 and ev[0]["count"] == 1 and ev[0]["type"] == "Warning"
    # the command it names works as written (kubectl-oomlens/README.md)
    assert ev[0]["message"].endswith("; kubectl oomlens show -n default " + line["id"])
    assert ev[0]["involvedObject"]["uid"] == uid
    assert (ev[0]["source"]["component"], ev[0]["reportingComponent"],
            ev[0]["reportingInstance"]) == (
        "oomlens-agent", "oomlens.io/agent", "oomlens-agent-" + NODE)
    # the manifest carries the pod
    import tarfile
    with tarfile.open(line["path"]) as t:
        man = json.load(t.extractfile(line["id"] + "/manifest.json"))
    assert man["pod"]["name"] == "victim" and man["pod"]["uid"] == uid
    assert man["container"] == "app"
    assert man["pod"]["containers"][0]["limits"]["memory"] == "32Mi"
    # a second kill of the same container: a second report, the Event's count 2
    wait_oom_ratelimit()
    hog(cg, ctr, "--step-mb", "4")
    wait_for(lambda: len([r for r in reports(api)
                          if r.get("status", {}).get("phase") == "Ready"]) == 2,
             what="two reports\n" + agent.log())
    ev = wait_for(lambda: [e for e in events(api) if e["count"] == 2],
                  what="count 2\n" + agent.log())
    assert len(events(api)) == 1


def test_events_json_drops_expired_entries_and_the_oldest_over_its_cap(
        api, tmp_path):
    """STATE/events.json (each kill Event's count) loses the entries whose
    Event the API server has deleted (1 h after its last write) and, past
    512 KiB, its oldest entries with a warning; it no longer starts again
    empty once it passes 1 MiB. A real kill's Event writes it."""
    if os.geteuid() != 0:
        pytest.skip("needs root for memory cgroups and /dev/kmsg")
    kc = str(tmp_path / "kubeconfig")
    api.write_kubeconfig(kc)
    uid = make_pod(api, "victim")
    cg, ctr = pod_cgroup(uid)
    state = tmp_path / "state"
    state.mkdir()
    now_ms = int(time.time() * 1000)
    ids = ["%08d-0000-4000-8000-000000000000/app" % i for i in range(6000)]
    seeded = {k: {"count": 1, "report": "oom-0123abcd-%d" % i,
                  "sent_ms": now_ms - 3_000_000 + i}
              for i, k in enumerate(ids)}
    seeded["gone/app"] = {"count": 4, "report": "oom-x-1",
                          "sent_ms": now_ms - 2 * 3600 * 1000}
    seeded["legacy/app"] = {"count": 2, "report": "oom-x-2"}
    (state / "events.json").write_text(json.dumps(seeded, separators=(",", ":")))
    assert 600_000 < os.path.getsize(state / "events.json") < 1 << 20
    agent = ClusterAgent(api, kc, str(state))
    try:
        time.sleep(1)
        wait_oom_ratelimit()
        hog(cg, ctr, "--step-mb", "4")
        ev = wait_for(lambda: events(api), what="the Event\n" + agent.log())
        assert ev[0]["count"] == 1
        # the agent saves the count once the API server has answered: the
        # Event can be seen first
        got = wait_for(lambda: (lambda g: g if uid + "/app" in g else None)(
            json.loads((state / "events.json").read_text())),
            what="the Event's count saved\n" + agent.log())
        assert os.path.getsize(state / "events.json") <= 512 << 10
        assert got[uid + "/app"]["count"] == 1
        assert now_ms <= got[uid + "/app"]["sent_ms"] <= time.time() * 1000
        assert "gone/app" not in got, "its Event expired an hour ago"
        # an entry of an earlier agent, unstamped: one more lifetime
        assert got["legacy/app"]["count"] == 2
        assert now_ms <= got["legacy/app"]["sent_ms"]
        kept = [k for k in ids if k in got]
        dropped = len(ids) - len(kept)
        assert dropped > 0 and kept == ids[dropped:], "the oldest went"
        warn = [l for l in agent.stderr if "oldest entries" in l]
        assert len(warn) == 1 and "dropped its %d oldest" % dropped in warn[0], \
            agent.log()
    finally:
        agent.stop()
        cg.cleanup()


def test_reports_keep_spares_the_bundles_the_queue_still_needs(
        api, tmp_path):
    """Cluster mode, --reports-keep 1: two kills while the API is away stay
    on the node (both wait in the publish queue: a warning, nothing
    removed); once both are published a third kill's round removes the
    first two kills' files, .tar.gz and .html together."""
    if os.geteuid() != 0:
        pytest.skip("needs root for memory cgroups and /dev/kmsg")
    kc = str(tmp_path / "kubeconfig")
    api.write_kubeconfig(kc)
    uid = make_pod(api, "victim")
    cg, ctr = pod_cgroup(uid)
    state = tmp_path / "state"
    agent = ClusterAgent(api, kc, str(state), ["--reports-keep", "1"])
    reports_dir = state / "reports"

    def files(*ids):
        return sorted(i + s for i in ids for s in (".html", ".tar.gz"))
    try:
        time.sleep(1.5)
        api.go_down(12, expire=True)
        wait_oom_ratelimit()
        hog(cg, ctr, "--step-mb", "4")
        first = agent.lines.get(timeout=10)["id"]
        wait_oom_ratelimit()
        hog(cg, ctr, "--step-mb", "4")
        second = agent.lines.get(timeout=10)["id"]
        # the round runs after the kill's line is printed
        warn = wait_for(lambda: [l for l in agent.stderr
                                 if "nothing removed" in l],
                        what="the round\n" + agent.log())
        assert len(warn) == 1 and "2 kept past a limit, the publish queue " \
            "needs them" in warn[0], agent.log()
        assert sorted(os.listdir(reports_dir)) == files(first, second), \
            agent.log()
        wait_for(lambda: not [f for f in os.listdir(state / "queue")
                              if f.endswith(".json")],
                 timeout=60, what="the queue drained\n" + agent.log())
        assert sorted(r["metadata"]["name"] for r in reports(api)) == \
            sorted([first, second])
        wait_oom_ratelimit()
        hog(cg, ctr, "--step-mb", "4")
        third = agent.lines.get(timeout=10)["id"]
        done = wait_for(lambda: [l for l in agent.stderr
                                 if "reports: removed" in l],
                        what="the round\n" + agent.log())
        assert sorted(os.listdir(reports_dir)) == files(third), agent.log()
        assert len(done) == 1 and "removed the files of 2 kill(s)" in done[0] \
            and "2 over --reports-keep 1" in done[0], agent.log()
    finally:
        agent.stop()
        cg.cleanup()


def test_api_down_across_a_kill_is_delivered_once(node):
    api, cg, ctr, uid, agent = node
    time.sleep(1)
    api.go_down(4, expire=True)
    wait_oom_ratelimit()
    hog(cg, ctr, "--step-mb", "4")
    line = agent.lines.get(timeout=10)
    assert os.path.exists(line["path"]), "saved on the node first"
    items = wait_for(lambda: [r for r in reports(api)
                              if r.get("status", {}).get("phase") == "Ready"],
                     timeout=30, what="the report after the outage\n" + agent.log())
    assert [r["metadata"]["name"] for r in items] == [line["id"]]


def test_opted_out_pod_is_not_reported(api, tmp_path):
    if os.geteuid() != 0:
        pytest.skip("needs root for memory cgroups and /dev/kmsg")
    kc = str(tmp_path / "kubeconfig")
    api.write_kubeconfig(kc)
    uid = make_pod(api, "quiet", {"oomlens.io/capture": "false",
                                  "oomlens.io/trim": "always"})
    cg, ctr = pod_cgroup(uid)
    agent = ClusterAgent(api, kc, str(tmp_path / "state"))
    try:
        time.sleep(1.5)
        wait_oom_ratelimit()
        hog(cg, ctr, "--step-mb", "4")
        wait_for(lambda: any("not reported" in l for l in agent.stderr),
                 what="the skip\n" + agent.log())
        time.sleep(1)
        assert reports(api) == []
        code, obj = call(api, "GET", "/api/v1/namespaces/default/events"
                         "?fieldSelector=reason%3DOOMLensConfig")
        assert [e["involvedObject"]["name"] for e in obj["items"]] == ["quiet"]
        assert "oomlens.io/trim" in obj["items"][0]["message"]
    finally:
        agent.stop()
        cg.cleanup()


def events_by(api, reason):
    code, obj = call(api, "GET", "/api/v1/namespaces/default/events"
                     "?fieldSelector=reason%3D" + reason)
    assert code == 200
    return obj["items"]


def cluster_only(api, tmp_path):
    """A kubeconfig for the fake and an empty kubepods.slice (the agent
    needs one to start)."""
    if os.geteuid() != 0:
        pytest.skip("needs root for memory cgroups and /dev/kmsg")
    require_oom_env()
    kc = str(tmp_path / "kubeconfig")
    api.write_kubeconfig(kc)
    return kc


def test_bad_annotation_is_one_oomlensconfig_event(api, tmp_path):
    """No kill: a pod's bad oomlens.io/ values become one Warning Event
    naming each annotation, its value and the default used; its later
    watch events (status updates) add none; a new bad value one more."""
    kc = cluster_only(api, tmp_path)
    make_pod(api, "badcfg", {"oomlens.io/trim": "always",
                             "oomlens.io/thresholds": "90,80"})
    cg = Cgroup("kubepods.slice")
    agent = ClusterAgent(api, kc, str(tmp_path / "state"))
    try:
        ev = wait_for(lambda: events_by(api, "OOMLensConfig"),
                      what="the OOMLensConfig Event\n" + agent.log())
        assert len(ev) == 1
        e = ev[0]
        assert e["type"] == "Warning"
        assert e["involvedObject"]["name"] == "badcfg"
        assert e["involvedObject"]["kind"] == "Pod"
        assert e["source"]["component"] == "oomlens-agent"
        assert e["source"]["host"] == NODE
        m = e["message"]
        assert ('oomlens.io/trim: "always" must be off, test or on-pressure;'
                ' using the default "off"') in m, m
        assert 'oomlens.io/thresholds: "90,80"' in m, m
        assert 'using the default "80,90,95"' in m, m
        # watch events of the same pod with the same values: no new Event
        for _ in range(3):
            code, obj = call(api, "GET", "/api/v1/namespaces/default/pods/badcfg")
            obj["status"]["phase"] = "Running"
            obj["status"].setdefault("conditions", []).append(
                {"type": "Ready", "status": "True"})
            code, _ = call(api, "PUT",
                           "/api/v1/namespaces/default/pods/badcfg/status", obj)
            assert code == 200
        time.sleep(2)
        assert len(events_by(api, "OOMLensConfig")) == 1, agent.log()
        # another bad value: one more
        code, obj = call(api, "PATCH", "/api/v1/namespaces/default/pods/badcfg",
                         {"metadata": {"annotations": {"oomlens.io/trim": "x"}}},
                         ctype="application/merge-patch+json")
        assert code == 200, obj
        ev = wait_for(lambda: [e for e in events_by(api, "OOMLensConfig")
                               if 'trim: "x"' in e["message"]],
                      what="the second Event\n" + agent.log())
        assert len(ev) == 1
        time.sleep(1)
        assert len(events_by(api, "OOMLensConfig")) == 2
        assert agent.proc.poll() is None, "the agent lives"
    finally:
        agent.stop()
        cg.cleanup()


def test_not_injected_annotation_is_one_oomlensconfig_event(api, tmp_path):
    """No kill: the injector's oomlens.io/not-injected reason becomes one
    Warning Event per pod, `oomlens sidecar not injected: <reason>`. The
    value is whoever may annotate the pod's: control bytes are '?', a long
    one is cut to 256 bytes ending in "..."; the pod's later watch events
    and a changed value make no more Events."""
    kc = cluster_only(api, tmp_path)
    why = ("the namespace enforces Pod Security \"restricted\": a sidecar "
           "without SYS_PTRACE cannot read the app's memory")
    make_pod(api, "plain", {"oomlens.io/capture": "true",
                            "oomlens.io/not-injected": why})
    hostile = "line one\nline two \x1b[2J\x07" + "\u00e9" * 200
    make_pod(api, "hostile", {"oomlens.io/capture": "true",
                              "oomlens.io/not-injected": hostile})
    cg = Cgroup("kubepods.slice")
    agent = ClusterAgent(api, kc, str(tmp_path / "state"))
    try:
        ev = wait_for(lambda: len(events_by(api, "OOMLensConfig")) == 2 and
                      events_by(api, "OOMLensConfig"),
                      what="the two OOMLensConfig Events\n" + agent.log())
        by = {e["involvedObject"]["name"]: e for e in ev}
        assert sorted(by) == ["hostile", "plain"], by
        for e in ev:
            assert e["type"] == "Warning"
            assert e["involvedObject"]["kind"] == "Pod"
            assert e["source"]["component"] == "oomlens-agent"
        assert by["plain"]["message"] == "oomlens sidecar not injected: " + why
        # 23 bytes, then 2-byte characters up to byte 253 at most: 115 of
        # them (253 bytes), and "..."
        assert by["hostile"]["message"] == (
            "oomlens sidecar not injected: line one?line two ?[2J?"
            + "\u00e9" * 115 + "..."), by["hostile"]["message"]
        assert len(by["hostile"]["message"].encode()) - \
            len("oomlens sidecar not injected: ") <= 256
        said = [l for l in agent.stderr if "oomlens sidecar not injected" in l]
        assert len(said) == 2, said
        # watch events of the pods, and a new value: nothing more
        code, obj = call(api, "GET", "/api/v1/namespaces/default/pods/plain")
        obj["status"]["conditions"] = [{"type": "Ready", "status": "True"}]
        code, _ = call(api, "PUT",
                       "/api/v1/namespaces/default/pods/plain/status", obj)
        assert code == 200
        for i in range(3):
            code, obj = call(
                api, "PATCH", "/api/v1/namespaces/default/pods/hostile",
                {"metadata": {"annotations": {
                    "oomlens.io/not-injected": "spam %d" % i}}},
                ctype="application/merge-patch+json")
            assert code == 200, obj
        time.sleep(2)
        assert len(events_by(api, "OOMLensConfig")) == 2, agent.log()
        assert not [l for l in agent.stderr if "spam" in l], agent.log()
        assert agent.proc.poll() is None, "the agent lives"
    finally:
        agent.stop()
        cg.cleanup()


def test_forecast_below_60s_is_one_oompredicted_event(api, tmp_path):
    """No kill: a container that grows 2 MiB/s towards its 32 MiB limit and
    stops at 22 MiB gets one OOMPredicted Event on its pod (fieldPath of
    the container), with usage, limit, growth and seconds, and no second
    one while it keeps being predicted within 10 minutes."""
    kc = cluster_only(api, tmp_path)
    uid = make_pod(api, "grower")
    cg, ctr = pod_cgroup(uid)
    agent = ClusterAgent(api, kc, str(tmp_path / "state"))
    p = None
    try:
        time.sleep(1.5)  # the pod snapshot reaches the detector
        p = run_in_cgroup(cg, ctr, [os.path.join(VICTIMS, "hog"),
                                    "--step-mb", "1", "--delay-ms", "500",
                                    "--max-mb", "22"])
        ev = wait_for(lambda: events_by(api, "OOMPredicted"), timeout=40,
                      what="the OOMPredicted Event\n" + agent.log())
        assert len(ev) == 1
        e = ev[0]
        assert e["type"] == "Warning"
        io = e["involvedObject"]
        assert (io["kind"], io["name"], io["uid"]) == ("Pod", "grower", uid)
        assert io["fieldPath"] == "spec.containers{app}"
        assert e["source"]["component"] == "oomlens-agent"
        m = re.match(r"container app is predicted to reach its memory limit "
                     r"in (\d+) s: usage ([\d.]+) MiB of 32\.0 MiB, growing "
                     r"([\d.]+) MiB/s", e["message"])
        assert m, e["message"]
        secs, usage, rate = int(m.group(1)), float(m.group(2)), float(m.group(3))
        assert 0 <= secs < 60
        assert 4 < usage < 32
        assert 1.2 < rate < 3, rate  # 2 MiB/s
        # still growing, still predicted: no second Event
        time.sleep(4)
        assert len(events_by(api, "OOMPredicted")) == 1, agent.log()
        assert reports(api) == [], "no kill, no report"
    finally:
        if p:
            p.kill()
            p.wait()
        agent.stop()
        cg.cleanup()


# ---- the pod's uploaded snapshot, OOMBundle snap-<pod> ----

BUNDLES = "/apis/oomlens.io/v1alpha1/namespaces/default/oombundles"


def tgz(entries):
    """A tar.gz of (name, bytes | ("symlink", target)) entries."""
    import io
    import tarfile
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as t:
        for name, data in entries:
            ti = tarfile.TarInfo(name)
            if isinstance(data, tuple):
                ti.type, ti.linkname = tarfile.SYMTYPE, data[1]
                t.addfile(ti)
            else:
                ti.size = len(data)
                t.addfile(ti, io.BytesIO(data))
    return buf.getvalue()


def snap_files(top, t_ms):
    """What the sidecar uploads (sidecar/src/pod_upload.c: spool_attach()
    into a bundle named snap-<pod>)."""
    return [
        (top + "/manifest.json", b'{"trigger":"pre-kill-snapshot","pod":'
                                 b'{"uid":"someone-else"}}'),
        (top + "/timeline.json", b'{"samples":[]}'),
        (top + "/spool/manifest.json",
         b'{"schema":"oomlens.io/spool/v1","cgroup":null,"pids":[42]}'),
        (top + "/spool/snapshot.json", json.dumps(
            {"reason": "threshold", "t_ms": t_ms, "usage": 26 << 20,
             "limit": 32 << 20, "pids": [42]}).encode()),
        (top + "/processes/42/cmdline.txt", b"hog --step-mb 4"),
        (top + "/report.html", b"<p>not ours to keep</p>"),
    ]


def snap_object(pod, uid, payload, **spec):
    o = {"apiVersion": "oomlens.io/v1alpha1", "kind": "OOMBundle",
         "metadata": {"name": "snap-" + pod, "ownerReferences": [{
             "apiVersion": "v1", "kind": "Pod", "name": pod, "uid": uid}]},
         "spec": {"data": base64.b64encode(payload).decode(),
                  "size": len(payload),
                  "sha256": hashlib.sha256(payload).hexdigest()}}
    o["spec"].update(spec)
    return o


@pytest.fixture
def snap_node(api, tmp_path):
    """An opted-in pod whose spool the node does not show (no kubelet dir
    under the agent's --kubelet-root), its cgroup and the agent."""
    if os.geteuid() != 0:
        pytest.skip("needs root for memory cgroups and /dev/kmsg")
    kc = str(tmp_path / "kubeconfig")
    api.write_kubeconfig(kc)
    uid = make_pod(api, "snappy", {"oomlens.io/capture": "true"})
    cg, ctr = pod_cgroup(uid)
    agent = ClusterAgent(api, kc, str(tmp_path / "state"),
                         ["--kubelet-root", str(tmp_path / "kubelet")])
    yield api, cg, ctr, uid, agent
    if agent.proc.poll() is None:
        agent.stop()
    cg.cleanup()


def kill_and_report(api, cg, ctr, agent, n_before):
    """One kill; its stdout line and the Ready report once published."""
    import queue
    wait_oom_ratelimit()
    _, _, rc = hog(cg, ctr, "--step-mb", "4")
    assert rc == -9, "the hog was not killed"
    try:
        line = agent.lines.get(timeout=15)
    except queue.Empty:
        raise AssertionError("no bundle written\n" + agent.log())
    wait_for(lambda: [r for r in reports(api) if r["metadata"]["name"] == line["id"]
                      and r.get("status", {}).get("phase") == "Ready"],
             timeout=20, what="report %s Ready\n%s" % (line["id"], agent.log()))
    assert len(reports(api)) == n_before + 1
    return line


def bundle_names(path):
    import tarfile
    with tarfile.open(path) as t:
        return set(t.getnames())


def test_snap_bundle_is_the_pre_kill_snapshot(snap_node):
    api, cg, ctr, uid, agent = snap_node
    now_ms = int(time.time() * 1000)
    data = tgz(snap_files("snap-snappy", now_ms - 3000))
    code, obj = call(api, "POST", BUNDLES, snap_object("snappy", uid, data))
    assert code == 201, obj
    time.sleep(1.5)  # the pod snapshot reaches the detector
    line = kill_and_report(api, cg, ctr, agent, 0)
    want = "report %s: pre-kill snapshot from OOMBundle default/snap-snappy" \
        % line["id"]
    assert any(want in l for l in agent.stderr), agent.log()
    names = bundle_names(line["path"])
    top = line["id"] + "/"
    assert {top + "spool/snapshot.json", top + "spool/manifest.json",
            top + "timeline.json", top + "processes/42/cmdline.txt"} <= names
    import tarfile
    with tarfile.open(line["path"]) as t:
        man = json.load(t.extractfile(top + "manifest.json"))
        html = t.extractfile(top + "report.html").read()
    assert man["spool"]["oombundle"] == "default/snap-snappy"
    assert 2.0 <= man["spool"]["snapshot_age_s"] < 60
    # attributed by where it was found, not by its own manifest
    assert man["pod"]["uid"] == uid and man["pod"]["name"] == "snappy"
    assert b"not ours to keep" not in html
    # what the API holds is the bundle with the snapshot
    code, b = call(api, "GET", BUNDLES + "/" + line["id"])
    assert code == 200
    got = base64.b64decode(b["spec"]["data"])
    assert got == open(line["path"], "rb").read()


def _bomb():
    """96 MiB of zeros in a ~100 KiB tar.gz: beyond the reader's inflate
    ratio."""
    import io
    import tarfile

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz", compresslevel=9) as t:
        ti = tarfile.TarInfo("snap-snappy/processes/42/smaps.txt")
        ti.size = 96 << 20
        t.addfile(ti, io.BufferedReader(Zeros(ti.size), 1 << 20))
    return buf.getvalue()


def noise(n):
    """n bytes gzip cannot shrink (the same ones every run)."""
    import random
    return random.Random(n).randbytes(n)


def hostile_cases(uid, now_ms):
    good = tgz(snap_files("snap-snappy", now_ms - 3000))
    other = "00000000-1111-2222-3333-444444444444"
    return [
        ("missing", None, "there is none"),
        ("size is a string", snap_object("snappy", uid, good, size=str(len(good))),
         "spec.size is not an integer"),
        ("data is a number", snap_object("snappy", uid, good, data=12),
         "spec.data is not a string"),
        ("sha256 is an object", snap_object("snappy", uid, good, sha256={"x": 1}),
         "spec.sha256"),
        ("huge", snap_object("snappy", uid, good, size=2 << 20), "larger than 900 KiB"),
        # honest objects over the sidecar's budget (incompressible data): the
        # size is refused before a byte is decoded; past 2 MiB of answer the
        # transfer stops (a real API server stores at most 1.5 MiB)
        ("1 MiB of data", snap_object("snappy", uid, tgz(
            snap_files("snap-snappy", now_ms - 3000)
            + [("snap-snappy/processes/42/smaps.txt", noise(1 << 20))])),
         "larger than 900 KiB (size 10"),
        ("an answer over 2 MiB", snap_object("snappy", uid, tgz(
            snap_files("snap-snappy", now_ms - 3000)
            + [("snap-snappy/processes/42/smaps.txt", noise(1700 << 10))])),
         "larger than 900 KiB: the API's answer is over 2048 KiB"),
        ("bad base64", snap_object("snappy", uid, good, data="@@@@" * 8),
         "not base64"),
        ("sha mismatch", snap_object("snappy", uid, good, sha256="0" * 64),
         "sha256 of the data"),
        ("wrong owner uid", snap_object("snappy", other, good), "not owned by pod"),
        ("dot-dot entry", snap_object("snappy", uid, tgz(
            snap_files("snap-snappy", now_ms - 3000)
            + [("snap-snappy/../../etc/x", b"x")])), "outside the bundle"),
        ("symlink entry", snap_object("snappy", uid, tgz(
            snap_files("snap-snappy", now_ms - 3000)
            + [("snap-snappy/processes/42/maps", ("symlink", "/etc/shadow"))])),
         "symlink"),
        ("gzip bomb", snap_object("snappy", uid, _bomb()), "inflates beyond"),
        ("another top directory", snap_object("snappy", uid, tgz(
            snap_files("snap-other", now_ms - 3000))), "outside the bundle"),
        ("taken after the kill", snap_object("snappy", uid, tgz(
            snap_files("snap-snappy", now_ms + 3600 * 1000))),
         "taken after the kill"),
    ]


def test_hostile_snap_bundles_are_refused_and_reports_still_published(snap_node):
    """Each hostile OOMBundle snap-<pod> (planted past the API's validation
    where a real server would refuse it): the agent lives, says why in one
    log line and publishes the report without a snapshot."""
    api, cg, ctr, uid, agent = snap_node
    time.sleep(1.5)
    cases = hostile_cases(uid, int(time.time() * 1000))
    for i, (what, obj, why) in enumerate(cases):
        call(api, "DELETE", BUNDLES + "/snap-snappy")
        if obj is not None:
            api.plant("oombundles", "default", obj)
        line = kill_and_report(api, cg, ctr, agent, i)
        want = ("report %s: OOMBundle default/snap-snappy not used: "
                % line["id"])
        got = [l for l in agent.stderr if want in l]
        assert got and why in got[0], (what, got, agent.log())
        assert "published without the pre-kill snapshot" in got[0]
        assert line["id"] + "/spool/snapshot.json" not in bundle_names(line["path"]), what
        assert agent.proc.poll() is None, what



def _stopped_while_waiting_for_its_snap(api, tmp_path, pod, stop):
    """A kill of pod waits on its snap-<pod> while the publisher is held up
    by the API (the fetch of snap-<pod> stalls: the kill always waits);
    stop(agent) ends the agent and checks what it left. The kill must be
    in the durable queue, and the next start must publish it, once, with
    the node's bundle."""
    if os.geteuid() != 0:
        pytest.skip("needs root for memory cgroups and /dev/kmsg")
    kc = str(tmp_path / "kubeconfig")
    api.write_kubeconfig(kc)
    api.stall(60, count=1, path="/oombundles/snap-" + pod)
    uid = make_pod(api, pod, {"oomlens.io/capture": "true",
                              "oomlens.io/trim": "always"})
    cg, ctr = pod_cgroup(uid)
    extra = ["--kubelet-root", str(tmp_path / "kubelet")]
    agent = ClusterAgent(api, kc, str(tmp_path / "state"), extra)
    again = None
    try:
        time.sleep(1.5)  # the pod snapshot reaches the detector
        wait_oom_ratelimit()
        _, _, rc = hog(cg, ctr, "--step-mb", "4")
        assert rc == -9, "the hog was not killed"
        line = agent.lines.get(timeout=15)
        wait_for(lambda: any("asking for OOMBundle default/snap-" + pod in l
                             for l in agent.stderr), what="the snap request")
        stop(agent)
        queued = os.listdir(str(tmp_path / "state" / "queue"))
        assert line["id"] + ".json" in queued, (queued, agent.log())
        assert reports(api) == []
        with api.flock:
            api.faults["stall"].clear()
        again = ClusterAgent(api, kc, str(tmp_path / "state"), extra)
        wait_for(lambda: [r for r in reports(api)
                          if r["metadata"]["name"] == line["id"]
                          and r.get("status", {}).get("phase") == "Ready"],
                 timeout=20, what="the report from the queue\n"
                 + again.log())
        assert any("1 reports queued from before" in l for l in again.stderr), \
            again.log()
        assert [r["metadata"]["name"] for r in reports(api)] == [line["id"]]
        code, b = call(api, "GET", BUNDLES + "/" + line["id"])
        assert code == 200
        assert base64.b64decode(b["spec"]["data"]) == \
            open(line["path"], "rb").read()
    finally:
        for a in (agent, again):
            if a is not None and a.proc.poll() is None:
                a.stop()
        cg.cleanup()


def test_kill_handed_over_at_shutdown_is_published_by_the_next_start(
        api, tmp_path):
    """The agent is stopped (SIGTERM) while the kill is only in the
    detector's hand-over: stopping hands it over, with what it has."""
    def stop(agent):
        assert agent.stop() == 0, agent.log()
        assert any("stopping before its pod's snapshot came" in l
                   for l in agent.stderr), agent.log()
    _stopped_while_waiting_for_its_snap(api, tmp_path, "snappy", stop)


def test_kill_of_an_agent_killed_by_force_is_published_by_the_next_start(
        api, tmp_path):
    """The agent is SIGKILLed (the OOM killer, a node drain that gives up,
    kubectl delete --force): nothing runs at stop. The kill was staged in
    the durable queue when its case was saved (its bundle is written once,
    by the next start)."""
    def stop(agent):
        agent.proc.kill()
        agent.proc.wait(timeout=10)
    _stopped_while_waiting_for_its_snap(api, tmp_path, "forced", stop)


@contextlib.contextmanager
def case_left_by_a_killed_agent(api, tmp_path, pod):
    """A kill of pod waits on its snap-<pod> (the API holds the fetch)
    when the agent is SIGKILLed: its bundle is not written yet, the kill
    is a case beside its staged item. Yields what the next start needs
    (c.start() starts it); the API answers again by then."""
    import types
    if os.geteuid() != 0:
        pytest.skip("needs root for memory cgroups and /dev/kmsg")
    kc = str(tmp_path / "kubeconfig")
    api.write_kubeconfig(kc)
    api.stall(60, count=1, path="/oombundles/snap-" + pod)
    uid = make_pod(api, pod, {"oomlens.io/capture": "true"})
    cg, ctr = pod_cgroup(uid)
    state = tmp_path / "state"
    extra = ["--kubelet-root", str(tmp_path / "kubelet")]
    agents = [ClusterAgent(api, kc, str(state), extra)]
    try:
        agent = agents[0]
        time.sleep(1.5)  # the pod snapshot reaches the detector
        wait_oom_ratelimit()
        before_ms = int(time.time() * 1000)
        _, _, rc = hog(cg, ctr, "--step-mb", "4")
        assert rc == -9, "the hog was not killed"
        line = agent.lines.get(timeout=15)
        # the line of a kill still to be finished: no verdict, no size
        assert "verdict" not in line and "bundle_bytes" not in line, line
        wait_for(lambda: any("asking for OOMBundle default/snap-" + pod in l
                             for l in agent.stderr), what="the snap request")
        agent.proc.kill()
        agent.proc.wait(timeout=10)
        queued = sorted(os.listdir(str(state / "queue")))
        assert line["id"] + ".json" in queued, (queued, agent.log())
        assert line["id"] + ".case.tar.gz" in queued, (queued, agent.log())
        assert not os.path.exists(line["path"]), \
            "written before its end\n" + agent.log()
        with api.flock:
            api.faults["stall"].clear()

        def start():
            agents.append(ClusterAgent(api, kc, str(state), extra))
            return agents[-1]
        yield types.SimpleNamespace(uid=uid, state=state, line=line,
                                    before_ms=before_ms, start=start,
                                    case=state / "queue" /
                                    (line["id"] + ".case.tar.gz"))
    finally:
        for a in agents:
            if a.proc.poll() is None:
                a.stop()
        cg.cleanup()


def test_case_left_by_a_killed_agent_is_finished_once_with_its_snapshot(
        api, tmp_path):
    """The next start takes the case up, asks for the snapshot again (the
    pod uploaded it meanwhile), and writes the bundle once, with the
    snapshot, then publishes it."""
    with case_left_by_a_killed_agent(api, tmp_path, "resumed") as c:
        line = c.line
        data = tgz(snap_files("snap-resumed", c.before_ms - 2000))
        code, obj = call(api, "POST", BUNDLES,
                         snap_object("resumed", c.uid, data))
        assert code == 201, obj
        again = c.start()
        wait_for(lambda: [r for r in reports(api)
                          if r["metadata"]["name"] == line["id"]
                          and r.get("status", {}).get("phase") == "Ready"],
                 timeout=30, what="the report of the case\n" + again.log())
        assert any("1 reports queued from before (1 of them to be finished "
                   "first)" in l for l in again.stderr), again.log()
        want = "report %s: its case (queue/%s.case.tar.gz) was left" \
            % (line["id"], line["id"])
        assert any(want in l for l in again.stderr), again.log()
        assert any("report %s: pre-kill snapshot from OOMBundle "
                   "default/snap-resumed" % line["id"] in l
                   for l in again.stderr), again.log()
        written = [l for l in again.stderr
                   if "report %s: bundle written" % line["id"] in l]
        assert len(written) == 1, again.log()
        top = line["id"] + "/"
        import tarfile
        with tarfile.open(line["path"]) as t:
            man = json.load(t.extractfile(top + "manifest.json"))
            names = t.getnames()
        assert top + "spool/snapshot.json" in names
        assert man["spool"]["oombundle"] == "default/snap-resumed"
        assert man["pod"]["uid"] == c.uid
        assert man["killed_at_ms"] >= c.before_ms
        assert top + ".unfinished.json" not in names
        assert top + "diagnosis.json" in names
        assert not c.case.exists()
        code, b = call(api, "GET", BUNDLES + "/" + line["id"])
        assert code == 200
        assert base64.b64decode(b["spec"]["data"]) == \
            open(line["path"], "rb").read()
        # its item was staged without a verdict: it has the bundle's now
        rep = [r for r in reports(api) if r["metadata"]["name"] == line["id"]]
        assert man["summary"], man
        assert (rep[0]["spec"]["verdict"], rep[0]["spec"]["summary"]) == \
            (man["verdict"], man["summary"]), rep


@pytest.mark.parametrize("left", ["written", "unreadable", "no-item"])
def test_a_start_finishes_what_a_killed_agent_left_of_a_case(
        api, tmp_path, left):
    """What a stop between the case's writes leaves, the next start ends
    without losing what is there, and without writing a bundle twice: a
    bundle already written is published as it is, a case that cannot be
    read back is reported without its evidence, and a case without its item
    (the agent stopped between the two, so before it saved its progress:
    the kernel's report is read again) is finished once, then handed over
    when the report comes back."""
    with case_left_by_a_killed_agent(api, tmp_path, "left-" + left) as c:
        line, item = c.line, c.state / "queue" / (c.line["id"] + ".json")
        planted = tgz([(line["id"] + "/manifest.json", b"{}")])
        if left == "written":
            with open(line["path"], "wb") as f:
                f.write(planted)
        elif left == "unreadable":
            # the progress saved past the kill's report (its last record's
            # sequence, from the case's kernel/oom.txt): not read again
            import tarfile
            with tarfile.open(str(c.case)) as t:
                oom = t.extractfile(line["id"] + "/kernel/oom.txt").read()
            last = int(oom.decode().strip().split("\n")[-1].split(",")[1])
            st = json.loads((c.state / "state.json").read_text())
            st["last_seq"] = str(max(int(st["last_seq"]), last))
            (c.state / "state.json").write_text(json.dumps(st))
            c.case.write_bytes(b"not a case")
        else:
            item.unlink()
            # the progress as it was before the kill's report
            seq = int(line["id"].rsplit("-", 1)[1])
            st = json.loads((c.state / "state.json").read_text())
            st["last_seq"] = str(seq - 1)
            (c.state / "state.json").write_text(json.dumps(st))
        again = c.start()
        wait_for(lambda: [r for r in reports(api)
                          if r["metadata"]["name"] == line["id"]],
                 timeout=30, what="the report\n" + again.log())
        code, b = call(api, "GET", BUNDLES + "/" + line["id"])
        if left == "written":
            assert code == 200, b
            assert base64.b64decode(b["spec"]["data"]) == planted
            assert not any("bundle written" in l for l in again.stderr), \
                again.log()
        elif left == "unreadable":
            assert any("its case queue/%s.case.tar.gz cannot be read back"
                       % line["id"] in l for l in again.stderr), again.log()
            wait_for(lambda: not item.exists(), timeout=20,
                     what="the item published\n" + again.log())
            assert call(api, "GET", BUNDLES + "/" + line["id"])[0] == 404
            assert not os.path.exists(line["path"])
        else:
            for want in ("report %s: its case had no publish item",
                         "report %s: its bundle was saved before the "
                         "agent's last stop, not queued; queued as it is"):
                assert any(want % line["id"] in l for l in again.stderr), \
                    again.log()
            assert code == 200, b
            import tarfile
            with tarfile.open(line["path"]) as t:
                assert line["id"] + "/diagnosis.json" in t.getnames()
                man = json.load(t.extractfile(line["id"] + "/manifest.json"))
            assert base64.b64decode(b["spec"]["data"]) == \
                open(line["path"], "rb").read()
            # the item made from the bundle: its verdict read back
            rep = [r for r in reports(api)
                   if r["metadata"]["name"] == line["id"]]
            assert man["summary"], man
            assert (rep[0]["spec"]["verdict"], rep[0]["spec"]["summary"]) == \
                (man["verdict"], man["summary"]), rep
        assert not c.case.exists(), again.log()


# ---- the publish queue's metrics (docs/metrics.md) ----

LATENCY = "oomlens_publish_latency_seconds"
DEPTH = "oomlens_publish_queue_depth"
FAILURES = "oomlens_publish_failures_total"


def failures(m):
    """{reason: count} of oomlens_publish_failures_total."""
    return {re.match(r'.*\{reason="([^"]*)"\}$', k).group(1): v
            for k, v in m.items() if k.startswith(FAILURES + "{")}


def kill_line(cg, ctr, agent):
    """One kill; (its stdout line, the wall time just before the victim
    started, the wall time its line came)."""
    import queue
    wait_oom_ratelimit()
    t0 = time.time()
    _, _, rc = hog(cg, ctr, "--step-mb", "4")
    assert rc == -9, "the hog was not killed"
    try:
        line = agent.lines.get(timeout=15)
    except queue.Empty:
        raise AssertionError("no bundle written\n" + agent.log())
    return line, t0, time.time()


def test_publish_metrics_latency_failures_and_queue_depth(api, tmp_path):
    """The publisher's three families, scraped from the agent's /metrics
    across real kills: the latency observed once a kill, from the kill to
    its report and bundle stored, within what the test itself measured;
    the queue depth 1 while a kill waits and 0 once published; a failed
    call counted under its reason (the fake answering 500: http_5xx; the
    fake down: connect). A kill left in the queue by an agent stopped
    while the API is down is in the next agent's depth at its start, and
    its latency, observed by that agent, counts the whole wait."""
    kc = cluster_only(api, tmp_path)
    uid = make_pod(api, "victim")
    cg, ctr = pod_cgroup(uid)
    state = str(tmp_path / "state")
    agent = ClusterAgent(api, kc, state, ["--metrics-insecure"])
    again = None
    try:
        m = agent.metrics()
        assert (m[DEPTH], m[LATENCY + "_count"]) == (0, 0), m
        time.sleep(1.5)  # the pod snapshot reaches the detector

        # 1. published at once: one observation, within the kill's own
        # time line; nothing failed
        line, t0, _ = kill_line(cg, ctr, agent)
        wait_for(lambda: agent.metrics()[LATENCY + "_count"] == 1,
                 what="the latency observed\n" + agent.log())
        t1 = time.time()
        m = agent.metrics()
        first = m[LATENCY + "_sum"]
        assert 0 < first <= t1 - t0 + 0.05 and first < 30, (first, t1 - t0)
        assert m[LATENCY + '_bucket{le="+Inf"}'] == 1
        wait_for(lambda: events(api), what="the Event\n" + agent.log())
        wait_for(lambda: agent.metrics()[DEPTH] == 0, what="depth 0")
        assert failures(agent.metrics()) == {}, agent.metrics()

        # 2. the API answers 500 to every OOMReport call: the kill waits
        api.fail(1000, code=500, path="/oomreports")
        line, t0, t_line = kill_line(cg, ctr, agent)
        wait_for(lambda: failures(agent.metrics()).get("http_5xx", 0) >= 2,
                 what="two failed calls\n" + agent.log())
        m = agent.metrics()
        assert m[DEPTH] == 1, m
        assert m[LATENCY + "_count"] == 1, "nothing stored: no observation"
        assert set(failures(m)) == {"http_5xx"}, failures(m)
        with api.flock:
            api.faults["fail"].clear()
        t_back = time.time()
        wait_for(lambda: agent.metrics()[DEPTH] == 0, timeout=30,
                 what="the kill published after the 500s\n" + agent.log())
        t1 = time.time()
        m = agent.metrics()
        assert m[LATENCY + "_count"] == 2, m
        second = m[LATENCY + "_sum"] - first
        assert t_back - t_line <= second <= t1 - t0 + 0.05, \
            (second, t_back - t_line, t1 - t0)
        n5xx = failures(m)["http_5xx"]
        assert [r["metadata"]["name"] for r in reports(api)
                if r["metadata"]["name"] == line["id"]] == [line["id"]]

        # 3. the API down across a kill: connect; the agent stopped and
        # started again while it is down
        wait_oom_ratelimit()
        down_s = 12
        t_down = time.time()
        api.go_down(down_s, expire=True)
        line, t0, t_line = kill_line(cg, ctr, agent)
        wait_for(lambda: failures(agent.metrics()).get("connect", 0) >= 1,
                 what="a refused connection\n" + agent.log())
        m = agent.metrics()
        assert m[DEPTH] == 1 and m[LATENCY + "_count"] == 2, m
        assert failures(m)["http_5xx"] == n5xx, "no new 5xx"
        assert agent.stop() == 0, agent.log()
        assert line["id"] + ".json" in os.listdir(os.path.join(state, "queue"))
        again = ClusterAgent(api, kc, state, ["--metrics-insecure"])
        m = again.metrics()
        assert time.time() < t_down + down_s, "the API came back too soon"
        assert m[DEPTH] == 1, ("the queue loaded at start", m)
        assert m[LATENCY + "_count"] == 0, m
        wait_for(lambda: again.metrics()[DEPTH] == 0, timeout=60,
                 what="the kill published by the next agent\n"
                 + again.log())
        t1 = time.time()
        m = again.metrics()
        assert m[LATENCY + "_count"] == 1, m
        third = m[LATENCY + "_sum"]
        # the whole wait, the restart included: long, and true
        assert t_down + down_s - t_line <= third <= t1 - t0 + 0.05, \
            (third, t_down + down_s - t_line, t1 - t0)
        assert [r["metadata"]["name"] for r in reports(api)
                if r["metadata"]["name"] == line["id"]] == [line["id"]]
        assert len(reports(api)) == 3
        print("publish latency: at once %.3f s, through 500s %.1f s, across "
              "an outage and a restart %.1f s; failed calls: http_5xx %d "
              "(first agent), connect %d (second agent)"
              % (first, second, third, n5xx, failures(m).get("connect", 0)))
    finally:
        for a in (agent, again):
            if a is not None and a.proc.poll() is None:
                a.stop()
        cg.cleanup()


def test_kills_of_a_workloads_pods_are_one_series(api, tmp_path):
    """oomlens_oom_kills_total counts by workload, not by pod: two pods of
    one ReplicaSet (the top of their owner chain: the fake serves no
    ReplicaSets, so the agent reads no owner above it), each killed once,
    are one series of 2 labelled by the ReplicaSet, with no pod label;
    nothing dropped."""
    kc = cluster_only(api, tmp_path)
    rs = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-7d9f",
           "uid": "7d9f0000-0000-4000-8000-000000000001", "controller": True}]
    uids = [make_pod(api, name, owners=rs) for name in ("web-7d9f-x2", "web-7d9f-q8")]
    cg, first = pod_cgroup(uids[0])
    second = ("/kubepods-burstable.slice/kubepods-burstable-pod%s.slice"
              % uids[1].replace("-", "_"))
    cg.mkdir(second)
    second += "/cri-containerd-%s.scope" % CID
    cg.mkdir(second, limit_mb=32)
    agent = ClusterAgent(api, kc, str(tmp_path / "state"), ["--metrics-insecure"])
    try:
        # the pod snapshots reach the detector, and both containers have
        # a flat timeline before their growth: the same verdict for both
        time.sleep(6)
        lines = [kill_line(cg, ctr, agent)[0] for ctr in (first, second)]
        assert [l["cgroup"].endswith(c) for l, c in zip(lines, (first, second))] == [True, True]
        verdicts = [l.get("verdict", "") for l in lines]
        assert verdicts[0] == verdicts[1], verdicts  # else two series by verdict
        m = agent.metrics()
        kills = {k: v for k, v in m.items() if k.startswith("oomlens_oom_kills_total{")}
        assert kills == {'oomlens_oom_kills_total{namespace="default",container="app",'
                         'verdict="%s",owner_kind="ReplicaSet",owner="web-7d9f"}'
                         % verdicts[0]: 2}, (kills, agent.log())
        print("kills of two pods of one ReplicaSet: %s" % kills)
        assert m['oomlens_metrics_series_dropped_total{family="oomlens_oom_kills_total"}'] == 0
    finally:
        agent.stop()
        cg.cleanup()


def test_a_bundle_planted_under_the_reports_name_is_replaced(api, tmp_path):
    """Security review (issue 26): anyone who may create OOMBundles in the
    namespace (the sidecar Role binds all its ServiceAccounts) can plant
    one under the next report's predictable name; the agent took its 409
    as "already published" and the planted one stood as the evidence.
    Now the report carries the agent's bundleSHA256 and bundleSize, and a
    409 is checked against the stored object's data: a planted bundle
    (self-consistent spec) is deleted and the agent's stored."""
    kc = cluster_only(api, tmp_path)
    uid = make_pod(api, "victim")
    cg, ctr = pod_cgroup(uid)
    agent = ClusterAgent(api, kc, str(tmp_path / "state"))
    try:
        time.sleep(1.5)  # the pod snapshot reaches the detector
        api.fail(1000, code=503, path="/oombundles")  # the bundle waits
        line, _, _ = kill_line(cg, ctr, agent)
        rep = wait_for(lambda: [r for r in reports(api)
                                if r["metadata"]["name"] == line["id"]],
                       what="the report\n" + agent.log())[0]
        with open(line["path"], "rb") as f:
            ours = f.read()
        assert rep["spec"]["bundleSHA256"] == hashlib.sha256(ours).hexdigest()
        assert rep["spec"]["bundleSize"] == len(ours)
        planted = tgz([(line["id"] + "/manifest.json", b'{"verdict":"spike"}')])
        api.plant("oombundles", "default", {
            "apiVersion": "oomlens.io/v1alpha1", "kind": "OOMBundle",
            "metadata": {"name": line["id"]},
            "spec": {"data": base64.b64encode(planted).decode(),
                     "size": len(planted),
                     "sha256": hashlib.sha256(planted).hexdigest()}})
        with api.flock:
            api.faults["fail"].clear()
        wait_for(lambda: [r for r in reports(api)
                          if r["metadata"]["name"] == line["id"] and
                          r.get("status", {}).get("phase") == "Ready"],
                 timeout=30, what="the report Ready\n" + agent.log())
        code, b = call(api, "GET", BUNDLES + "/" + line["id"])
        assert code == 200
        assert base64.b64decode(b["spec"]["data"]) == ours, agent.log()
        assert any("was not written by this agent" in l and "its data differs"
                   in l for l in agent.stderr), agent.log()
    finally:
        agent.stop()
        cg.cleanup()


def test_retention_per_namespace_across_nodes_two_agents_agree(api, tmp_path):
    """Issue 29: retention is per namespace across the cluster, not per
    node. Two agents (this node's and another's) each apply it to every
    namespace where they have a report, to all its reports whatever their
    node, and delete the same ones: the newest kept within the count and
    the bytes of bundles (spec.bundleSize), nothing older than --max-age,
    a kept report's bundle never touched. A namespace where neither has a
    report is left alone."""
    kc = cluster_only(api, tmp_path)
    api_v = "/apis/oomlens.io/v1alpha1/namespaces/%s/"

    def plant(ns, name, node, age_s, size):
        api.plant("oomreports", ns, {
            "apiVersion": "oomlens.io/v1alpha1", "kind": "OOMReport",
            "metadata": {"name": name, "labels": {"oomlens.io/node": node},
                         "creationTimestamp": time.strftime(
                             "%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - age_s))},
            "spec": {"pod": "p", "node": node, "bundle": name, "bundleSize": size}})
        api.plant("oombundles", ns, {
            "apiVersion": "oomlens.io/v1alpha1", "kind": "OOMBundle",
            "metadata": {"name": name}, "spec": {"data": "", "size": 0}})

    other = "oomlens-other-node"
    # a: bytes decide (1 MiB): 100 + 800 KiB fit, the next does not and
    # neither does any older one, however small
    for name, node, age, size in [("a1", other, 10, 100 << 10), ("a2", NODE, 20, 800 << 10),
                                  ("a3", other, 30, 200 << 10), ("a4", NODE, 40, 10 << 10)]:
        plant("a", name, node, age, size)
    # c: the count (3) and the age (1 d)
    for name, node, age in [("c1", NODE, 1), ("c2", other, 2), ("c3", other, 3),
                            ("c4", other, 4), ("c5", other, 5)]:
        plant("c", name, node, age, 1000)
    plant("d", "d1", NODE, 1, 1000)
    plant("d", "d2", other, 2 * 86400, 1000)
    # e: only the other node's reports, more than the count
    for i in range(5):
        plant("e", "e%d" % i, other, 10 + i, 1000)
    api.plant("oombundles", "a", {"apiVersion": "oomlens.io/v1alpha1", "kind": "OOMBundle",
                                  "metadata": {"name": "snap-p"}, "spec": {"data": "", "size": 0}})

    def names(ns, what):
        code, obj = call(api, "GET", api_v % ns + what)
        assert code == 200
        return sorted(o["metadata"]["name"] for o in obj["items"])

    limits = ["--keep-per-namespace", "3", "--max-bytes-per-namespace", "1Mi",
              "--max-age", "1d", "--retention-interval", "1s"]
    want = {"a": ["a1", "a2"], "c": ["c1", "c2", "c3"], "d": ["d1"],
            "e": ["e0", "e1", "e2", "e3", "e4"]}
    cg = Cgroup("kubepods.slice")
    ours = ClusterAgent(api, kc, str(tmp_path / "s1"), extra=limits)
    try:
        wait_for(lambda: all(names(ns, "oomreports") == w for ns, w in want.items()),
                 what="retention's deletes\n" + ours.log())
        time.sleep(1)
        kc2 = str(tmp_path / "kc2")
        api.write_kubeconfig(kc2)
        theirs = ClusterAgent(api, kc2, str(tmp_path / "s2"), extra=limits, node=other)
        try:
            # e is the other agent's: cut to the newest 3 by it alone
            want["e"] = ["e0", "e1", "e2"]
            wait_for(lambda: names("e", "oomreports") == want["e"],
                     what="the other agent's retention\n" + theirs.log())
            time.sleep(2)  # more rounds of both
        finally:
            theirs.stop()
        for ns, w in want.items():
            assert names(ns, "oomreports") == w, (ns, ours.log(), theirs.log())
            # bundles went with their reports; snap-p is not a report's
            assert names(ns, "oombundles") == sorted(w + (["snap-p"] if ns == "a" else []))
        # the other agent found nothing more to delete where ours had been
        assert "namespace e: deleted 2 reports" in "".join(theirs.stderr)
        elsewhere = [l for l in theirs.stderr if "retention: namespace" in l and
                     "namespace e:" not in l]
        assert elsewhere, theirs.log()  # it looked at a, c and d too
        assert all("0 to drop, none deleted here" in l for l in elsewhere), theirs.log()
        logs = "".join(ours.stderr)
        assert "retention: namespace a: deleted 2 reports (0 beyond 3 kept, 2 beyond " \
               "1048576 bytes of bundles, 0 older than 86400 s)" in logs, ours.log()
        assert "retention: namespace c: deleted 2 reports (2 beyond 3 kept" in logs
        assert "retention: namespace d: deleted 1 reports (0 beyond 3 kept, 0 beyond " \
               "1048576 bytes of bundles, 1 older than 86400 s)" in logs
        assert "namespace e" not in logs
    finally:
        ours.stop()
        cg.cleanup()
