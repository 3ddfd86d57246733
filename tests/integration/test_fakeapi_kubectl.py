"""The installed kubectl (client only) against tests/fakeapi/fakeapi.py over
TLS with a kubeconfig written here: what kubectl prints is what a user of a
real cluster would see, so the fake answers discovery, Table output, create,
errors and a raw watch the way kubectl expects."""

import json
import os
import re
import shutil
import subprocess
import sys
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "fakeapi"))
import fakeapi  # noqa: E402
from rawhttp import RawClient  # noqa: E402


def find_kubectl():
    """OOMLENS_KUBECTL, else the one `make deps` puts under the build tree
    (Debian 12 packages no kubectl), else one on PATH."""
    build = os.environ.get("OOMLENS_BUILD") or os.path.join(ROOT, "build")
    for path in (os.environ.get("OOMLENS_KUBECTL"),
                 os.path.join(build, "tools", "bin", "kubectl")):
        if path and os.access(path, os.X_OK):
            return path
    return shutil.which("kubectl")


KUBECTL = find_kubectl()
pytestmark = pytest.mark.skipif(
    KUBECTL is None, reason="no kubectl: `make deps DEPS=test` puts one in build/tools/bin")
AGENT = "agent-token-0123456789"
ADMIN = "admin-token-0123456789"

REPORT_YAML = """\
apiVersion: oomlens.io/v1alpha1
kind: OOMReport
metadata:
  name: {name}
  namespace: default
  labels: {{oomlens.io/node: node1}}
spec:
  pod: web-1
  container: app
  node: node1
  killedAt: "2026-11-30T10:00:00Z"
  process: {{pid: {pid}, comm: java, anonRSS: 15990784, fileRSS: 524288, shmemRSS: 0}}
  limit: 16777216
  usage: 16773120
  verdict: heap-growth
  summary: java heap grew to -Xmx
"""


class Env:
    def __init__(self, api, tmp):
        self.api = api
        self.tmp = tmp
        self.home = tmp / "home"
        self.home.mkdir()
        self.kc_agent = api.write_kubeconfig(str(tmp / "kc-agent"), AGENT)
        self.kc_admin = api.write_kubeconfig(str(tmp / "kc-admin"), ADMIN)
        self.kc_bad = api.write_kubeconfig(str(tmp / "kc-bad"), "not-a-valid-token")
        self.raw = RawClient(api.port, api.ca)

    def kubectl(self, *args, kc=None, timeout=60):
        env = dict(os.environ, HOME=str(self.home), KUBECONFIG=kc or self.kc_agent)
        env.pop("KUBERNETES_SERVICE_HOST", None)
        return subprocess.run([KUBECTL] + list(args), env=env, capture_output=True,
                              text=True, timeout=timeout)

    def create_pod(self, name, node, ns="default"):
        body = {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": name, "namespace": ns, "labels": {"app": name}},
                "spec": {"nodeName": node, "containers": [{
                    "name": "c", "image": "busybox",
                    "resources": {"limits": {"memory": "16Mi"}}}]}}
        r = self.raw.request("POST", "/api/v1/namespaces/%s/pods" % ns, token=ADMIN,
                             body=json.dumps(body),
                             headers={"Content-Type": "application/json"})
        assert r.status == 201, r.body
        return r.json()


@pytest.fixture
def env(tmp_path):
    api = fakeapi.FakeAPI(tls_dir=str(tmp_path / "tls")).start()
    try:
        yield Env(api, tmp_path)
    finally:
        api.stop()


def table(stdout):
    """kubectl's column output → (header, rows) split on runs of 2+ spaces."""
    import re
    lines = [ln for ln in stdout.splitlines() if ln.strip()]
    split = [re.split(r"\s{2,}", ln.strip()) for ln in lines]
    return split[0], split[1:]


def test_kubectl_get_pods_all_namespaces(env):
    env.create_pod("victim-1", "node1")
    env.create_pod("bystander", "node2", ns="kube-system")
    p = env.kubectl("get", "pods", "-A")
    assert p.returncode == 0, p.stderr
    header, rows = table(p.stdout)
    assert header == ["NAMESPACE", "NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    assert sorted(r[:5] for r in rows) == [
        ["default", "victim-1", "0/1", "Pending", "0"],
        ["kube-system", "bystander", "0/1", "Pending", "0"]]
    p = env.kubectl("get", "pods", "-o", "wide", "-n", "default")
    header, rows = table(p.stdout)
    assert header[:7] == ["NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE"]
    assert rows[0][0] == "victim-1" and rows[0][6] == "node1"


def test_kubectl_get_oomreports_printer_columns(env):
    p = env.kubectl("get", "oomreports", "-n", "default")
    assert p.returncode == 0, p.stderr
    assert "No resources found in default namespace." in p.stderr
    killed_at = time.strftime("%Y-%m-%dT%H:%M:%SZ",
                              time.gmtime(time.time() - 300))
    r = env.raw.request("POST", "/apis/oomlens.io/v1alpha1/namespaces/default/oomreports",
                        token=AGENT, headers={"Content-Type": "application/json"},
                        body=json.dumps({"apiVersion": "oomlens.io/v1alpha1",
                                         "kind": "OOMReport",
                                         "metadata": {"name": "victim-1-c-1"},
                                         "spec": {"pod": "victim-1", "container": "c",
                                                  "node": "node1",
                                                  "killedAt": killed_at,
                                                  "process": {"comm": "java", "pid": 7},
                                                  "verdict": "glibc-retention"}}))
    assert r.status == 201, r.body
    p = env.kubectl("get", "oomreports", "-n", "default")
    assert p.returncode == 0, p.stderr
    header, rows = table(p.stdout)
    # the CRD's columns (the real server's answer for them: cluster
    # test_crds.py); KILLED is the kill's time, as an age
    assert header == ["NAME", "POD", "CONTAINER", "NODE", "VERDICT", "KILLED"]
    assert rows[0][:5] == ["victim-1-c-1", "victim-1", "c", "node1",
                           "glibc-retention"]
    assert re.fullmatch(r"5m[0-9]{0,2}s?", rows[0][5]), rows[0]
    p = env.kubectl("get", "oomreports", "-n", "default", "-o", "wide")
    header, rows = table(p.stdout)
    assert header[-3:] == ["PROCESS", "WORKLOAD", "SUMMARY"]
    assert rows[0][6] == "java"
    p = env.kubectl("get", "oomr", "victim-1-c-1", "-o", "jsonpath={.spec.process.pid}")
    assert (p.returncode, p.stdout) == (0, "7"), p.stderr


def test_kubectl_get_oombundles_wide_shows_sha256(env):
    body = {"apiVersion": "oomlens.io/v1alpha1", "kind": "OOMBundle",
            "metadata": {"name": "b1"},
            "spec": {"data": "aGVsbG8=", "sha256": "2cf24dba5fb0a30e", "size": 5}}
    r = env.raw.request("POST", "/apis/oomlens.io/v1alpha1/namespaces/default/oombundles",
                        token=AGENT, body=json.dumps(body),
                        headers={"Content-Type": "application/json"})
    assert r.status == 201, r.body
    header, rows = table(env.kubectl("get", "oombundles").stdout)
    assert header == ["NAME", "SIZE", "AGE"] and rows[0][:2] == ["b1", "5"]
    header, rows = table(env.kubectl("get", "oombundles", "-o", "wide").stdout)
    assert header == ["NAME", "SIZE", "SHA256", "AGE"]
    assert rows[0][:3] == ["b1", "5", "2cf24dba5fb0a30e"]


def test_kubectl_create_f_oomreport(env):
    f = env.tmp / "report.yaml"
    f.write_text(REPORT_YAML.format(name="web-1-app-20261130t100000z", pid=4242))
    p = env.kubectl("create", "-f", str(f))
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "oomreport.oomlens.io/web-1-app-20261130t100000z created"
    r = env.raw.request("GET", "/apis/oomlens.io/v1alpha1/namespaces/default/oomreports/"
                        "web-1-app-20261130t100000z", token=AGENT)
    assert r.status == 200
    o = r.json()
    assert o["spec"]["process"] == {"pid": 4242, "comm": "java", "anonRSS": 15990784,
                                    "fileRSS": 524288, "shmemRSS": 0}
    assert o["spec"]["killedAt"] == "2026-11-30T10:00:00Z"
    assert o["metadata"]["labels"] == {"oomlens.io/node": "node1"}
    assert o["metadata"]["managedFields"][0]["manager"] == "kubectl-create"
    p = env.kubectl("create", "-f", str(f))
    assert p.returncode == 1
    assert "AlreadyExists" in p.stderr and "already exists" in p.stderr


def test_kubectl_create_f_invalid_is_422(env):
    f = env.tmp / "bad.yaml"
    f.write_text(REPORT_YAML.format(name="bad-1", pid='"4242"'))
    p = env.kubectl("create", "-f", str(f))
    assert p.returncode == 1
    assert 'OOMReport "bad-1" is invalid' in p.stderr  # kubectl rewords the Status
    assert "spec.process.pid in body must be of type integer" in p.stderr
    r = env.raw.request("GET", "/apis/oomlens.io/v1alpha1/namespaces/default/oomreports/"
                        "bad-1", token=AGENT)
    assert r.status == 404


def test_kubectl_get_raw_watch(env):
    env.create_pod("victim-1", "node1")
    env.create_pod("victim-2", "node2")
    t0 = time.monotonic()
    p = env.kubectl("get", "--raw", "/api/v1/pods?watch=1&timeoutSeconds=2")
    took = time.monotonic() - t0
    assert p.returncode == 0, p.stderr
    events = [json.loads(ln) for ln in p.stdout.splitlines() if ln.strip()]
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [
        ("ADDED", "victim-1"), ("ADDED", "victim-2")]
    assert all(e["object"]["kind"] == "Pod" for e in events)
    assert 1.8 < took < 20, "the watch ends at timeoutSeconds"


def test_kubectl_errors(env):
    p = env.kubectl("get", "secrets")
    assert p.returncode == 1
    assert ('secrets is forbidden: User "system:serviceaccount:oom-system:oom-agent" '
            'cannot list resource "secrets"') in p.stderr
    p = env.kubectl("get", "pods", kc=env.kc_bad)
    assert p.returncode == 1
    assert "Unauthorized" in p.stderr or "must be logged in" in p.stderr
    p = env.kubectl("get", "oomreports", "missing")
    assert p.returncode == 1
    assert 'oomreports.oomlens.io "missing" not found' in p.stderr


def test_kubectl_delete_pod_graceful_then_force(env):
    env.create_pod("victim-3", "node1")
    p = env.kubectl("delete", "pod", "victim-3", "--wait=false", kc=env.kc_admin)
    assert p.returncode == 0, p.stderr
    header, rows = table(env.kubectl("get", "pods").stdout)
    assert rows[0][:3] == ["victim-3", "0/1", "Terminating"], "no kubelet: it stays"
    p = env.kubectl("delete", "pod", "victim-3", "--grace-period=0", "--force",
                    kc=env.kc_admin)
    assert p.returncode == 0, p.stderr
    assert 'pod "victim-3" force deleted' in p.stdout
    p = env.kubectl("get", "pods")
    assert "No resources found" in p.stderr
