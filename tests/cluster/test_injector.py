# SPDX-License-Identifier: Apache-2.0
"""The sidecar injector on the real node, installed by the chart
(conftest.installed: `helm install` makes the CA and the serving
certificate with genCA/genSignedCert and sets caBundle): the webhook's two
pods behind a Service the API server reaches without kube-proxy
(--enable-aggregator-routing, tests/cluster/up.sh). An annotated
Deployment's pod comes up with the sidecar, its volumes and env, and its
OOM kill yields an OOMReport with the sidecar's pre-kill snapshot (with
the class histogram when opted in); a Go pod's kill is go-heap in the
OOMReport and its Event; an unannotated pod is untouched; with the webhook scaled to 0 pods are still
created (failurePolicy Ignore)."""
import base64
import copy
import hashlib
import io
import json
import os
import subprocess
import tarfile
import time

import pytest

from conftest import (AGENT_NS, BUILD, INJECT_NS, TOP, webhook_answers,
                      webhook_endpoints)
from kube import ApiError

SYS = AGENT_NS
APPS = INJECT_NS
SIDECAR_IMAGE = "localhost/oomlens-sidecar:" + open(os.path.join(TOP, "VERSION")).read().strip()
BUSYBOX = "localhost/oomlens-busybox:1"


def diagnose(kube):
    """The webhook pods' states and logs, for a failure message."""
    out = []
    pods = kube.get(f"/api/v1/namespaces/{SYS}/pods")["items"]
    for p in pods:
        n = p["metadata"]["name"]
        out.append(f"{n}: {json.dumps(p.get('status', {}))[:1500]}")
        try:
            out.append(kube.log(SYS, n, "webhook")[-1500:])
        except ApiError as e:
            out.append(f"(no log: {e.code})")
    return "\n".join(out)


def ready_endpoints(kube):
    return webhook_endpoints(kube)


@pytest.fixture(scope="module")
def injector(installed):
    """The installed release, once the API server reaches the webhook
    again: tests before these (test_helm_install.py's upgrade) may have
    rolled its pods since the session's install waited for it."""
    installed.wait(lambda: webhook_endpoints(installed) == 2, 120,
                   "the webhook's two endpoints")
    installed.wait(lambda: webhook_answers(installed), 60,
                   "the API server to call the webhook")
    yield installed


def app_pod(name, annotations=None):
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": APPS,
                         "annotations": annotations or {}},
            "spec": {"terminationGracePeriodSeconds": 0,
                     "containers": [{"name": "app", "image": BUSYBOX,
                                     "imagePullPolicy": "Never",
                                     "command": ["sleep", "3600"],
                                     "resources": {"limits": {
                                         "memory": "64Mi"}}}]}}


def running(kube, name, container):
    def get():
        st = kube.pod(APPS, name).get("status", {})
        for cs in st.get("containerStatuses", []):
            if cs["name"] == container and "running" in cs.get("state", {}):
                return st
        return None
    return kube.wait(get, 90, f"{name}/{container} running")


def test_annotated_deployment_pod_gets_the_sidecar(injector):
    kube = injector
    dep = {"apiVersion": "apps/v1", "kind": "Deployment",
           "metadata": {"name": "web", "namespace": APPS},
           "spec": {"replicas": 1,
                    "selector": {"matchLabels": {"app": "web"}},
                    "template": {"metadata": {
                        "labels": {"app": "web"},
                        "annotations": {"oomlens.io/capture": "true",
                                        "oomlens.io/jvm-nmt": "true"}},
                        "spec": app_pod("x")["spec"]}}}
    kube.create(f"/apis/apps/v1/namespaces/{APPS}/deployments", dep)

    def the_pod():
        items = kube.get(f"/api/v1/namespaces/{APPS}/pods"
                         "?labelSelector=app%3Dweb")["items"]
        return items[0] if items else None
    p = kube.wait(the_pod, 60, "the Deployment's pod")
    spec = p["spec"]
    names = [c["name"] for c in spec["containers"]]
    assert names == ["app", "oomlens-sidecar"], names
    assert spec["shareProcessNamespace"] is True
    side = spec["containers"][1]
    assert side["image"] == SIDECAR_IMAGE
    caps = side["securityContext"]["capabilities"]
    assert caps["drop"] == ["ALL"]
    assert set(caps["add"]) == {"SYS_PTRACE", "SETUID", "SETGID", "KILL",
                                "DAC_READ_SEARCH"}
    env = {e["name"]: e for e in side["env"]}
    assert {"POD_NAME", "POD_NAMESPACE", "POD_UID", "NODE_NAME",
            "OOMLENS_LIMIT_APP"} <= set(env)
    vols = {v["name"]: v for v in spec["volumes"]}
    assert vols["oomlens-spool"]["emptyDir"]["sizeLimit"] == "256Mi"
    assert vols["oomlens-podinfo"]["downwardAPI"]["items"][0][
        "fieldRef"]["fieldPath"] == "metadata.annotations"
    app_env = {e["name"]: e.get("value") for e in spec["containers"][0]["env"]}
    assert app_env == {"OOMLENS_CONTAINER": "app",
                       "JAVA_TOOL_OPTIONS":
                       "-XX:NativeMemoryTracking=summary"}
    assert p["metadata"]["annotations"]["oomlens.io/injected"] == \
        "oomlens-sidecar"
    # the API server validated the mutated pod; the kubelet runs it: the
    # app comes up with the sidecar beside it in one PID namespace
    st = running(kube, p["metadata"]["name"], "app")
    assert any(cs["name"] == "oomlens-sidecar"
               for cs in st["containerStatuses"])


def test_unannotated_pod_untouched(injector):
    kube = injector
    made = kube.create(f"/api/v1/namespaces/{APPS}/pods", app_pod("plain"))
    assert [c["name"] for c in made["spec"]["containers"]] == ["app"]
    assert "shareProcessNamespace" not in made["spec"]
    assert "oomlens.io/injected" not in made["metadata"].get(
        "annotations", {})
    assert all(not v["name"].startswith("oomlens")
               for v in made["spec"].get("volumes", []))


def set_replicas(kube, scale, n):
    """PUT of the scale subresource without a resourceVersion: the
    Deployment controller writes its status meanwhile (409 otherwise)."""
    s = kube.get(scale)
    s["spec"]["replicas"] = n
    s["metadata"].pop("resourceVersion", None)
    kube.request("PUT", scale, s)


def test_webhook_down_pods_still_created(injector):
    kube = injector
    scale = f"/apis/apps/v1/namespaces/{SYS}/deployments/oomlens-injector/scale"
    set_replicas(kube, scale, 0)
    try:
        kube.wait(lambda: ready_endpoints(kube) == 0, 60, "no endpoints")
        # a terminating webhook pod still answers after it left the
        # Endpoints, and the API server's endpoint cache lags the object:
        # a pod created then came back mutated, as CI once saw. Wait for
        # the pods to be gone and a dry-run opted-in pod to come back as
        # it was sent.
        sel = ("app.kubernetes.io%2Fname%3Doomlens-injector,"
               "app.kubernetes.io%2Finstance%3Doomlens")
        kube.wait(lambda: not kube.get(f"/api/v1/namespaces/{SYS}/pods"
                                       f"?labelSelector={sel}")["items"],
                  90, "the webhook's pods gone")
        kube.wait(lambda: not webhook_answers(kube), 60,
                  "the API server to stop reaching the webhook")
        t0 = time.monotonic()
        made = kube.create(f"/api/v1/namespaces/{APPS}/pods",
                           app_pod("nowebhook",
                                   {"oomlens.io/capture": "true"}))
        took = time.monotonic() - t0
        assert [c["name"] for c in made["spec"]["containers"]] == ["app"]
        assert took < 10, f"creation took {took:.1f}s (timeoutSeconds 5)"
    finally:
        set_replicas(kube, scale, 2)
    kube.wait(lambda: ready_endpoints(kube) == 2, 120, "the webhook back")
    made = kube.create(f"/api/v1/namespaces/{APPS}/pods",
                       app_pod("webhookback", {"oomlens.io/capture": "true"}))
    assert "oomlens-sidecar" in [c["name"] for c in made["spec"]["containers"]]


def test_own_namespace_and_pdb(injector):
    kube = injector
    pdb = None
    for v in ("v1", "v1beta1"):
        try:
            pdb = kube.get(f"/apis/policy/{v}/namespaces/{SYS}/"
                           "poddisruptionbudgets/oomlens-injector")
            break
        except ApiError:
            continue
    assert pdb and pdb["spec"]["minAvailable"] == 1
    mwc = kube.get("/apis/admissionregistration.k8s.io/v1/"
                   "mutatingwebhookconfigurations/oomlens-injector")
    # one webhook per Pod Security level (docs/injector.md)
    assert {w["name"]: w["clientConfig"]["service"]["path"]
            for w in mwc["webhooks"]} == {
        "restricted.injector.oomlens.io": "/mutate-pods/restricted",
        "baseline.injector.oomlens.io": "/mutate-pods/baseline",
        "privileged.injector.oomlens.io": "/mutate-pods/privileged",
        "unlabelled.injector.oomlens.io": "/mutate-pods/privileged"}
    for w in mwc["webhooks"]:
        assert (w["failurePolicy"], w["timeoutSeconds"],
                w["sideEffects"]) == ("Ignore", 5, "None")
    # a pod in the webhook's own namespace, even annotated, is not sent
    pod = copy.deepcopy(app_pod("selfns", {"oomlens.io/capture": "true"}))
    pod["metadata"]["namespace"] = SYS
    made = kube.create(f"/api/v1/namespaces/{SYS}/pods", pod)
    assert [c["name"] for c in made["spec"]["containers"]] == ["app"]
    kube.delete(f"/api/v1/namespaces/{SYS}/pods/selfns")


JRE = "localhost/oomlens-jre17:1"
VICTIMS = os.path.join(BUILD, "victims", "java")
REPORTS = f"/apis/oomlens.io/v1alpha1/namespaces/{APPS}/oomreports"
BUNDLES = f"/apis/oomlens.io/v1alpha1/namespaces/{APPS}/oombundles"


def compile_victim(name):
    """tests/victims/java/NAME.java into VICTIMS, as the integration suite
    does, so that this suite alone (make test-cluster) has its classes."""
    if not os.path.exists(os.path.join(VICTIMS, name + ".class")):
        os.makedirs(VICTIMS, exist_ok=True)
        src = os.path.join(TOP, "tests", "victims", "java", name + ".java")
        subprocess.run(["javac", "-nowarn", "-d", VICTIMS, src], check=True,
                       timeout=120)


def jvm_pod(name, java=("-XX:+UseSerialGC",), grow=("16", "8000"),
            annotations=None):
    """A JVM allowed a 1 GiB heap in a 256 MiB container, growing its live
    heap at 16 MiB/s after 8 s of rest (the sidecar takes its JVM facts
    while it is healthy): the most common JVM OOM on Kubernetes. Its
    classes come from the build tree (a test-only hostPath). java: its
    options besides -Xmx1g; grow: HeapGrower's MiB/s and idle ms;
    annotations: besides oomlens.io/capture."""
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": APPS,
                         "annotations": {"oomlens.io/capture": "true",
                                         **(annotations or {})}},
            "spec": {"restartPolicy": "Never",
                     "terminationGracePeriodSeconds": 0,
                     "containers": [{
                         "name": "app", "image": JRE,
                         "imagePullPolicy": "Never",
                         "command": ["java", "-Xmx1g", *java,
                                     "-cp", "/victims", "HeapGrower",
                                     *grow],
                         "resources": {"requests": {"memory": "64Mi"},
                                       "limits": {"memory": "256Mi"}},
                         "volumeMounts": [{"name": "victims",
                                           "mountPath": "/victims",
                                           "readOnly": True}]}],
                     "volumes": [{"name": "victims", "hostPath": {
                         "path": VICTIMS, "type": "Directory"}}]}}


def bundle_files(kube, name, bundles=BUNDLES):
    """The OOMBundle's tar.gz (sha256 checked): {path in the bundle:
    bytes}."""
    b = kube.get(f"{bundles}/{name}")
    data = base64.b64decode(b["spec"]["data"])
    assert hashlib.sha256(data).hexdigest() == b["spec"]["sha256"]
    out = {}
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as t:
        for m in t.getmembers():
            if m.isfile():  # below the bundle's one top directory
                out[m.name.split("/", 1)[1]] = t.extractfile(m).read()
    return out


def wait_ready_report(kube, reports, name, story):
    """The Ready OOMReport of pod name under the list path reports; story()
    says what the pod did when it does not come."""
    def ready_report():
        for r in kube.get(reports)["items"]:
            if r["spec"]["pod"] == name and \
                    r.get("status", {}).get("phase") == "Ready":
                return r
        return None
    try:
        return kube.wait(ready_report, 240, f"{name}'s Ready OOMReport")
    except AssertionError as e:
        raise AssertionError(f"{e}\n{story()}")


def test_oom_kill_of_injected_pod_has_snapshot(injector):
    """The injected sidecar records the JVM before the kill; the agent's
    report of the kill is java-heap and its bundle carries the sidecar's
    pre-kill snapshot."""
    kube = injector
    name = "jvm-heap"
    kube.wait(lambda: ready_endpoints(kube) == 2, 120, "the webhook")
    compile_victim("HeapGrower")
    made = kube.create(f"/api/v1/namespaces/{APPS}/pods", jvm_pod(name))
    assert "oomlens-sidecar" in [c["name"] for c in made["spec"]
                                 ["containers"]], made["spec"]
    uid = made["metadata"]["uid"]

    r = wait_ready_report(kube, REPORTS, name,
                          lambda: pod_story(kube, name))
    spec = r["spec"]
    assert (spec["container"], spec["podUID"]) == ("app", uid), spec
    assert spec["process"]["comm"] == "java", spec
    assert spec["limit"] == 256 << 20, spec
    assert spec["verdict"] == "java-heap", (spec, pod_story(kube, name))
    files = bundle_files(kube, r["metadata"]["name"])
    # the sidecar's spool, and its snapshot of the JVM (pid as the pod's
    # PID namespace numbers it)
    assert "spool/manifest.json" in files, sorted(files)
    jvm = [f for f in files if f.startswith("processes/") and
           f.endswith("/jvm/heap_info.json")]
    assert jvm, sorted(files)
    man = json.loads(files["manifest.json"])
    assert man["pod"]["name"] == name, man
    diag = json.loads(files["diagnosis.json"])
    assert diag["verdict"] == "java-heap", diag
    assert "Xmx" in json.dumps(diag), diag


def test_jvm_histogram_opted_in_names_the_top_class(injector):
    """oomlens.io/jvm-histogram: "true" on the pod: the injected sidecar
    reads it (the Downward API) and takes the JVM's class histogram at the
    first threshold; the bundle the agent publishes names byte[] as the
    top class, in its file and in the java-heap verdict's evidence. The
    victim as in tests/integration/test_jvm_histogram.py: 10 MiB/s after
    1 s, -Xmn8m so that no young collection jumps past the thresholds."""
    kube = injector
    name = "jvm-histo"
    kube.wait(lambda: ready_endpoints(kube) == 2, 120, "the webhook")
    compile_victim("HeapGrower")
    made = kube.create(f"/api/v1/namespaces/{APPS}/pods", jvm_pod(
        name, java=("-Xmn8m", "-XX:+UseSerialGC"), grow=("10", "1000"),
        annotations={"oomlens.io/jvm-histogram": "true"}))
    assert "oomlens-sidecar" in [c["name"] for c in made["spec"]
                                 ["containers"]], made["spec"]
    r = wait_ready_report(kube, REPORTS, name,
                          lambda: pod_story(kube, name))
    files = bundle_files(kube, r["metadata"]["name"])
    diag = json.loads(files["diagnosis.json"])
    found = [f for f in files if f.endswith("/jvm/class_histogram.json")]
    assert r["spec"]["verdict"] == "java-heap", (
        r["spec"], diag["verdicts"], diag["ledger"], sorted(files),
        [files[f][:600] for f in found], pod_story(kube, name))
    assert len(found) == 1, sorted(files)
    h = json.loads(files[found[0]])
    assert h["taken"] is True, (h, pod_story(kube, name))
    top = h["top"][0]
    assert top["class"] == "[B", h
    assert top["bytes"] >= 0.9 * h["total_bytes"], h
    assert len(h["top"]) == 20 and h["pause_us"] > 0, h
    ev = [e for v in diag["verdicts"] if v["verdict"] == "java-heap"
          for e in v["evidence"] if "the top class is byte[] ([B)" in e]
    assert ev, diag["verdicts"]


GO_ORDERS = os.path.join(BUILD, "victims", "go-orders")


@pytest.mark.skipif(not os.path.exists(GO_ORDERS),
                    reason="no Go victim: Debian's golang-go builds it "
                    "(scripts/deps.sh test, then make; the busybox image "
                    "carries build/victims)")
def test_go_pod_kill_is_go_heap_in_report_and_event(injector):
    """A Go service in an opted-in pod (tests/victims/go/orders.go, 256 KiB
    orders kept in a map at 60 a second after 8 s, no GOMEMLIMIT) is
    killed at its 200 MiB limit: the OOMReport's verdict and summary and
    the kill's Event name the Go heap and GOMEMLIMIT, the bundle has the
    sidecar's go/facts.json, and the secret in its environment is in no
    file of the bundle."""
    kube = injector
    name = "go-orders"
    kube.wait(lambda: ready_endpoints(kube) == 2, 120, "the webhook")
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": name, "namespace": APPS,
                        "annotations": {"oomlens.io/capture": "true"}},
           "spec": {"restartPolicy": "Never",
                    "terminationGracePeriodSeconds": 0,
                    "containers": [{
                        "name": "app", "image": BUSYBOX,
                        "imagePullPolicy": "Never",
                        "command": ["/usr/local/bin/go-orders", "--rate",
                                    "60", "--idle", "8s"],
                        "env": [{"name": "ORDERS_DB_PASSWORD",
                                 "value": "hunter2-go-pod"}],
                        "resources": {"requests": {"memory": "64Mi"},
                                      "limits": {"memory": "200Mi"}}}]}}
    made = kube.create(f"/api/v1/namespaces/{APPS}/pods", pod)
    assert "oomlens-sidecar" in [c["name"] for c in made["spec"]
                                 ["containers"]], made["spec"]
    uid = made["metadata"]["uid"]
    r = wait_ready_report(kube, REPORTS, name,
                          lambda: pod_story(kube, name))
    spec = r["spec"]
    assert spec["process"]["comm"] == "go-orders", spec
    assert spec["verdict"] == "go-heap", (spec, pod_story(kube, name))
    assert spec["summary"].startswith("go-heap:GOMEMLIMIT unset"), spec
    assert "GOMEMLIMIT=" in spec["summary"], spec
    files = bundle_files(kube, r["metadata"]["name"])
    found = [f for f in files if f.startswith("processes/") and
             f.endswith("/go/facts.json")]
    assert len(found) == 1, sorted(files)
    facts = json.loads(files[found[0]])
    assert facts["gomemlimit_set"] is False and facts["gogc"] == 100, facts
    assert facts["version"].startswith("go1."), facts
    diag = json.loads(files["diagnosis.json"])
    assert diag["verdict"] == "go-heap", diag["verdicts"]
    assert any("go tool pprof" in x
               for x in diag["verdicts"][0]["recommendations"]), diag
    for f, data in files.items():
        assert b"hunter2-go-pod" not in data, f

    def kill_event():
        items = kube.get(f"/api/v1/namespaces/{APPS}/events?fieldSelector="
                         f"involvedObject.name%3D{name}")["items"]
        return [e for e in items if e["reason"] == "OOMKilled" and
                e["involvedObject"].get("uid") == uid and
                e["source"].get("component") == "oomlens-agent"]
    (e,) = kube.wait(kill_event, 60, "the kill's Event")
    assert e["message"].startswith(
        "container app OOM-killed (pid "), e["message"]
    assert " go-orders): go-heap: go-heap:GOMEMLIMIT unset" in \
        e["message"], e["message"]
    assert e["message"].endswith(
        f"kubectl oomlens show -n {APPS} {r['metadata']['name']}"), e


def pod_story(kube, name):
    """The pod's status and its sidecar's log tail, for a failure."""
    try:
        p = kube.pod(APPS, name)
        out = [json.dumps(p.get("status", {}))[:2000]]
        out.append(kube.log(APPS, name, "oomlens-sidecar")[-3000:])
        return "\n".join(out)
    except ApiError as e:
        return f"(pod: {e.code})"
