# SPDX-License-Identifier: Apache-2.0
"""The OOMReport API as kubectl users meet it, on the real node's API
server with the CRDs the chart installed (docs/cluster-mode.md, The
OOMReport API): `kubectl explain` has descriptions, `kubectl get oomlens`
finds both kinds, a Deployment's kill is labelled by its workload and
`kubectl wait --for=condition=Ready` returns on it; and the fake API
server (tests/fakeapi, which reads the same CRD files) answers discovery
and a Table list as this server does."""
import json
import os
import subprocess
import sys
import time

import pytest

from conftest import KUBECTL, TOP, recreate_namespace

sys.path.insert(0, os.path.join(TOP, "tests", "fakeapi"))
import fakeapi  # noqa: E402
from rawhttp import RawClient  # noqa: E402

NS = "oomlens-crds"
BUSYBOX = "localhost/oomlens-busybox:1"
REPORTS = f"/apis/oomlens.io/v1alpha1/namespaces/{NS}/oomreports"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"


@pytest.fixture(scope="module")
def kube(agent):
    recreate_namespace(agent, NS)
    yield agent
    agent.delete(f"/apis/apps/v1/namespaces/{NS}/deployments/hogdep")


def kubectl(kube, *args, timeout=90):
    env = dict(os.environ, KUBECONFIG=kube.kubeconfig)
    return subprocess.run([KUBECTL, *args], env=env, capture_output=True,
                          text=True, timeout=timeout)


@pytest.mark.parametrize("field, words", [
    ("oomreport", "One OOM kill of a container"),
    ("oomreport.spec.killedAt", "When the kernel killed the process"),
    ("oomreport.spec.workload", "top controller"),
    ("oomreport.status.conditions", "kubectl wait"),
    ("oombundle.spec", "The bundle's bytes"),
])
def test_kubectl_explain(kube, field, words):
    r = kubectl(kube, "explain", field)
    assert r.returncode == 0, r.stderr
    assert words in " ".join(r.stdout.split()), r.stdout


def hog_deployment():
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "hogdep", "namespace": NS},
            "spec": {"replicas": 1,
                     "selector": {"matchLabels": {"app": "hogdep"}},
                     "template": {
                         "metadata": {"labels": {"app": "hogdep"}},
                         "spec": {"terminationGracePeriodSeconds": 0,
                                  "containers": [{
                                      "name": "hog", "image": BUSYBOX,
                                      "imagePullPolicy": "Never",
                                      "command": ["/usr/local/bin/hog",
                                                  "--step-mb", "4"],
                                      "resources": {
                                          "requests": {"memory": "16Mi"},
                                          "limits": {"memory": "48Mi"}}}]}}}}


@pytest.fixture(scope="module")
def deployment_report(kube):
    """The first Ready report of the Deployment's crash-looping pod; the
    Deployment is scaled to 0 once it is there."""
    kube.create(f"/apis/apps/v1/namespaces/{NS}/deployments",
                hog_deployment())

    def ready():
        for r in kube.get(REPORTS)["items"]:
            if r["spec"]["pod"].startswith("hogdep-") and \
                    r.get("status", {}).get("phase") == "Ready":
                return r
        return None
    try:
        r = kube.wait(ready, 180, "a Ready report of the Deployment's pod")
    finally:
        scale = f"/apis/apps/v1/namespaces/{NS}/deployments/hogdep/scale"
        s = kube.get(scale)
        s["spec"]["replicas"] = 0
        s["metadata"].pop("resourceVersion", None)
        kube.request("PUT", scale, s)
    return r


def test_deployment_kill_is_labelled_by_its_workload(kube, deployment_report):
    r = deployment_report
    labels = r["metadata"]["labels"]
    assert (labels["oomlens.io/workload-kind"],
            labels["oomlens.io/workload"]) == ("Deployment", "hogdep"), labels
    assert r["spec"]["workload"] == {"kind": "Deployment", "name": "hogdep"}
    got = kubectl(kube, "get", "oomreports", "-n", NS, "-o", "name",
                  "-l", "oomlens.io/workload-kind=Deployment,"
                  "oomlens.io/workload=hogdep")
    assert got.returncode == 0, got.stderr
    assert f"oomreport.oomlens.io/{r['metadata']['name']}" in \
        got.stdout.split(), got.stdout


def test_kubectl_wait_for_ready_and_bundle_stored(kube, deployment_report):
    name = deployment_report["metadata"]["name"]
    for cond in ("Ready", "BundleStored"):
        t0 = time.monotonic()
        w = kubectl(kube, "wait", "-n", NS, f"--for=condition={cond}",
                    f"oomreport/{name}", "--timeout=60s")
        assert w.returncode == 0, w.stderr
        assert "condition met" in w.stdout, w.stdout
        assert time.monotonic() - t0 < 30
    conds = {c["type"]: c for c in kube.get(f"{REPORTS}/{name}")["status"]
             ["conditions"]}
    assert conds["Ready"]["reason"] == "Published"
    assert conds["BundleStored"]["reason"] == "Stored"


def test_get_oomlens_category_and_columns(kube, deployment_report):
    name = deployment_report["metadata"]["name"]
    got = kubectl(kube, "get", "oomlens", "-n", NS, "-o", "name")
    assert got.returncode == 0, got.stderr
    names = got.stdout.split()
    assert f"oomreport.oomlens.io/{name}" in names, names
    assert f"oombundle.oomlens.io/{name}" in names, names
    wide = kubectl(kube, "get", "oomreports", "-n", NS, "-o", "wide")
    head = wide.stdout.splitlines()[0].split()
    assert head == ["NAME", "POD", "CONTAINER", "NODE", "VERDICT", "KILLED",
                    "PROCESS", "WORKLOAD", "SUMMARY"], wide.stdout
    row = next(line for line in wide.stdout.splitlines()
               if line.startswith(name)).split()
    assert row[3] == deployment_report["spec"]["node"]
    assert row[7] == "hogdep"


def answers(get):
    """Discovery's oomlens.io resources and an OOMReport Table, from the
    request function get(path, accept) -> JSON."""
    disc = get("/apis/oomlens.io/v1alpha1", "application/json")
    table = get(f"{REPORTS}/table-probe", TABLE)
    return (sorted(disc["resources"], key=lambda r: r["name"]),
            table["columnDefinitions"], table["rows"][0]["cells"])


def test_fake_answers_discovery_and_tables_as_the_real_server(kube, tmp_path):
    probe = {"apiVersion": "oomlens.io/v1alpha1", "kind": "OOMReport",
             "metadata": {"name": "table-probe", "namespace": NS},
             "spec": {"pod": "web-1", "podUID": "u-1", "container": "app",
                      "node": "node1", "killedAt": "2026-12-01T10:00:00Z",
                      "workload": {"kind": "Deployment", "name": "web"},
                      "process": {"pid": 42, "comm": "java"},
                      "verdict": "java-heap", "summary": "java-heap: x"}}
    kube.create(REPORTS, probe)
    real = answers(lambda p, a: kube.request("GET", p,
                                             headers={"Accept": a}))
    api = fakeapi.FakeAPI(tls_dir=str(tmp_path / "tls"),
                          namespaces=("default", NS)).start()
    try:
        c = RawClient(api.port, api.ca)
        admin = "admin-token-0123456789"
        r = c.request("POST", REPORTS, token=admin,
                      body=json.dumps(probe),
                      headers={"Content-Type": "application/json"})
        assert r.status == 201, r.body

        def fake_get(p, a):
            resp = c.request("GET", p, token=admin, headers={"Accept": a})
            assert resp.status == 200, resp.body
            return json.loads(resp.body)
        fake = answers(fake_get)
    finally:
        api.stop()
    assert fake[0] == real[0], "discovery"
    assert fake[1] == real[1], "Table columns"
    assert fake[2] == real[2], "Table cells"
