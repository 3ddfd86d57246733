# SPDX-License-Identifier: Apache-2.0
"""Every non-default value installs: the chart installed on the real node
with the values the main install (values-node.yaml) leaves at their
defaults, and the agent becomes Ready, not only rendered. Runs after the
main release is uninstalled (conftest.py orders it: the agent uses the
node's host port), in few installs, values that do not interact
combined:

- A: the ServiceMonitor, the PrometheusRule and the dashboard (the
  prometheus-operator CRDs applied from tests/fixtures/prometheus-operator/,
  the objects read back unpruned, a wrong type refused by the API server),
  the injector off, nameOverride, fullnameOverride, imagePullSecrets,
  nodeSelector and a required nodeAffinity on this node, updateStrategy,
  no priority class, the snap-<pod> upload fallback for every service
  account of the namespace (sidecar.namespaces alone).
- B: the injector with one replica (no PodDisruptionBudget), image
  digests when the node reports one for the local images. certManager is
  only shown refused without cert-manager's CRDs (no cert-manager on the
  node, nor in Debian or npm: test_cert_manager_needs_its_crds).
- C: privileged=false (the degraded mode: no /dev/kmsg) with
  cgroupReadOnly and a real kill reported, and the upload fallback for
  one service account (sidecar.namespaces + sidecar.serviceAccount).

The main install (values-node.yaml) has no sidecar.namespaces, the
default: test_helm_install.py shows its sidecars get no right."""
import base64
import hashlib
import json
import os
import re
import socket
import ssl
import subprocess
import time

import pytest
import yaml

from conftest import (AGENT_NS, BUILD, CLUSTER_DIR, KUBECTL, RELEASE, TOP, VALUES,
                      agent_pods, helm,
                      recreate_namespace)
from kube import ApiError
import test_agent_node as tan

CHART = os.path.join(TOP, "helm", "oomlens")
VERSION = open(os.path.join(TOP, "VERSION")).read().strip()
NS = "oomlens-values"
FIX = os.path.join(TOP, "tests", "fixtures", "prometheus-operator")
MON = f"/apis/monitoring.coreos.com/v1/namespaces/{NS}"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


def kubectl(kube, *args):
    return subprocess.run([KUBECTL, "--kubeconfig", kube.kubeconfig, *args],
                          capture_output=True, text=True, timeout=120)


def can_i(kube, verb, what, who, ns=NS):
    p = kubectl(kube, "auth", "can-i", verb, what, "-n", ns, "--as", who)
    answer = p.stdout.strip()
    assert answer in ("yes", "no"), (p.stdout, p.stderr)
    return answer == "yes"


def check_upload_fallback(kube, release_name, allowed, refused):
    """The fallback's Role as the API server applies it: `allowed` (a
    service account of NS) may write OOMBundles in NS, nothing else;
    `refused` (None or another one) may not; neither elsewhere."""
    role = kube.get(f"/apis/rbac.authorization.k8s.io/v1/namespaces/{NS}/"
                    f"roles/{release_name}-sidecar")
    assert role["rules"] == [{"apiGroups": ["oomlens.io"],
                              "resources": ["oombundles"],
                              "verbs": ["create", "patch"]}]
    who = f"system:serviceaccount:{NS}:{allowed}"
    for verb in ("create", "patch"):
        assert can_i(kube, verb, "oombundles.oomlens.io", who), verb
    for verb in ("get", "list", "update", "delete"):
        assert not can_i(kube, verb, "oombundles.oomlens.io", who), verb
    assert not can_i(kube, "create", "oomreports.oomlens.io", who)
    assert not can_i(kube, "get", "secrets", who)
    assert not can_i(kube, "create", "oombundles.oomlens.io", who,
                     ns="default")
    if refused:
        assert not can_i(kube, "create", "oombundles.oomlens.io",
                         f"system:serviceaccount:{NS}:{refused}")


def agents(kube, name="oomlens"):
    return kube.get(f"/api/v1/namespaces/{NS}/pods?labelSelector="
                    f"app.kubernetes.io%2Fname%3D{name},"
                    "app.kubernetes.io%2Fcomponent%3Dagent")["items"]


def ready_agent(kube, name):
    """A Running, Ready agent pod whose log says it watches the cgroups."""
    for p in agents(kube, name):
        if p["status"].get("phase") != "Running" or \
                p["metadata"].get("deletionTimestamp"):
            continue
        if not any(c["type"] == "Ready" and c["status"] == "True"
                   for c in p["status"].get("conditions", [])):
            continue
        log = kube.log(NS, p["metadata"]["name"], "agent")
        if "watching" in log and "memory cgroups" in log:
            return p
    return None


def no_agents_left(kube):
    """Nothing of an earlier release in NS (its DaemonSet holds the host
    port)."""
    return not kube.get(f"/api/v1/namespaces/{NS}/pods")["items"]


@pytest.fixture(scope="module")
def values_ns(node):
    """The main release is gone by now (test_helm_uninstall.py ran; run
    alone, one an earlier run kept is removed): a namespace of our own,
    the pull secret the values name."""
    kube = node
    start = time.monotonic()
    helm(kube, "uninstall", RELEASE, "-n", AGENT_NS, "--wait", check=False)
    kube.wait(lambda: not agent_pods(kube), 120, "the main release's agent")
    recreate_namespace(kube, NS)
    cfg = json.dumps({"auths": {"registry.example": {"auth": "dTpw"}}})
    kube.create(f"/api/v1/namespaces/{NS}/secrets", {
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "regcred", "namespace": NS},
        "type": "kubernetes.io/dockerconfigjson",
        "data": {".dockerconfigjson": base64.b64encode(
            cfg.encode()).decode()}})
    yield kube
    kube.delete(f"/api/v1/namespaces/{NS}")
    print(f"\ntest_helm_values: {time.monotonic() - start:.0f} s")


def for_1_20(text):
    """The published CRD as the node's 1.20 API server takes it: it reads
    `default: ""` (v0.93.0 puts it on the name of every Secret and
    ConfigMap reference, 19 times in servicemonitors) as null and refuses
    the whole CRD ("must be of type string"). Only those lines go, and
    only under a `name:` property; nothing else of the schema changes."""
    lines, out, dropped = text.split("\n"), [], 0
    for i, line in enumerate(lines):
        if line.strip() == 'default: ""' and lines[i - 1].strip() == "name:":
            dropped += 1
            continue
        out.append(line)
    assert dropped == text.count('default: ""'), "a default elsewhere"
    return "\n".join(out)


@pytest.fixture(scope="module")
def monitoring_crds(values_ns, tmp_path_factory):
    kube = values_ns
    tmp = tmp_path_factory.mktemp("crds")
    for name in sorted(os.listdir(FIX)):
        if name.endswith(".yaml"):
            (tmp / name).write_text(for_1_20(open(os.path.join(FIX, name)).read()))
    p = kubectl(kube, "apply", "--server-side", "--force-conflicts", "-f",
                str(tmp))
    assert p.returncode == 0, p.stderr
    for crd in ("servicemonitors", "prometheusrules"):
        # status.conditions is null until the apiserver has looked at it
        kube.wait(lambda: any(
            c["type"] == "Established" and c["status"] == "True"
            for c in (kube.get(f"{CRDS}/{crd}.monitoring.coreos.com")
                      .get("status") or {}).get("conditions") or []),
            60, crd + " established")
    yield kube
    for crd in ("servicemonitors", "prometheusrules"):
        kube.delete(f"{CRDS}/{crd}.monitoring.coreos.com")


def node_name(kube):
    """The node's name and its kubernetes.io/hostname label (the host's
    name: the kubelet's --hostname-override names the node only)."""
    (node,) = kube.get("/api/v1/nodes")["items"]
    return (node["metadata"]["name"],
            node["metadata"]["labels"]["kubernetes.io/hostname"])


def wait_ready(kube, name, what):
    """ready_agent() waited for; on a timeout the pods' state and the
    agent's log say why."""
    try:
        return kube.wait(lambda: ready_agent(kube, name), 150, what)
    except AssertionError:
        for p in kube.get(f"/api/v1/namespaces/{NS}/pods")["items"]:
            print(p["metadata"]["name"], json.dumps(p["status"])[:3000])
            try:
                print(kube.log(NS, p["metadata"]["name"],
                               p["spec"]["containers"][0]["name"])[-3000:])
            except ApiError as e:
                print(e)
        raise


def install(kube, release, *sets):
    for old in ("vals", "valsb", "valsc"):  # what a failed test left
        helm(kube, "uninstall", old, "-n", NS, "--wait", check=False)
    kube.wait(lambda: no_agents_left(kube), 120, "an earlier release's pods")
    t = time.monotonic()
    helm(kube, "install", release, CHART, "-n", NS, "-f", VALUES,
         *sets, "--timeout", "3m")
    return t


def install_ready(kube, release, letter, name, what, *sets):
    """install(), then its agent Ready (the release gone again if not);
    prints how long it took."""
    t = install(kube, release, *sets)
    try:
        pod = wait_ready(kube, name, what)
    except AssertionError:
        uninstall(kube, release)
        raise
    print(f"\ninstall {letter} to agent Ready: {time.monotonic() - t:.0f} s")
    return pod


def uninstall(kube, release):
    helm(kube, "uninstall", release, "-n", NS, "--wait", "--timeout", "3m")
    kube.wait(lambda: no_agents_left(kube), 120, "the release's pods to go")


def check_metrics_tls(kube, pod, ep, sets):
    """metrics.tls installed: the agent Ready through HTTPS probes, the
    ServiceMonitor scraping https with the Secret's CA and the Service's
    name, /metrics answering over TLS only (with that CA and name; a
    plain request gets no answer), and renders of the installed release
    equal, keeping the installed certificate (lookup), as the webhook's."""
    secret = f"/api/v1/namespaces/{NS}/secrets/lens-a-agent-metrics-tls"
    live = kube.get(secret)["data"]
    assert ep["scheme"] == "https"
    assert ep["tlsConfig"] == {
        "serverName": f"lens-a-agent.{NS}.svc",
        "ca": {"secret": {"name": "lens-a-agent-metrics-tls",
                          "key": "ca.crt"}}}
    c = pod["spec"]["containers"][0]
    assert c["readinessProbe"]["httpGet"]["scheme"] == "HTTPS"
    port = c["ports"][0]["containerPort"]
    ctx = ssl.create_default_context(
        cadata=base64.b64decode(live["ca.crt"]).decode())
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
        with ctx.wrap_socket(raw,
                             server_hostname=f"lens-a-agent.{NS}.svc") as t:
            t.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n"
                      b"Connection: close\r\n\r\n")
            answer = b""
            while chunk := t.recv(65536):
                answer += chunk
    assert answer.startswith(b"HTTP/1.1 401"), answer[:300]
    assert b"bearer token" in answer, answer[:300]
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
        raw.sendall(b"GET /readyz HTTP/1.1\r\nHost: x\r\n\r\n")
        raw.settimeout(10)
        try:
            plain = raw.recv(4096)
        except OSError:
            plain = b""
    assert not plain.startswith(b"HTTP/1.1 200"), plain
    renders = [helm(kube, "template", "vals", CHART, "-n", NS, "-f", VALUES,
                    *sets, "--skip-tests", "--dry-run=server").stdout
               for _ in range(2)]
    assert renders[0] == renders[1]
    (mine,) = [d for d in yaml.safe_load_all(renders[0]) if d and
               d["kind"] == "Secret" and
               d["metadata"]["name"] == "lens-a-agent-metrics-tls"]
    assert mine["data"] == live
    p = helm(kube, "test", "vals", "-n", NS, "--logs", "--timeout", "2m",
             check=False)
    if p.returncode != 0:
        print(kube.log(NS, pod["metadata"]["name"], c["name"])[-4000:])
    # helm leaves a test pod; the next install waits for an empty namespace
    kube.delete(f"/api/v1/namespaces/{NS}/pods/lens-a-test-readyz")
    assert p.returncode == 0 and "ok" in p.stdout, p.stdout + p.stderr


def test_a_monitored_renamed_pinned_no_injector(monitoring_crds):
    kube = monitoring_crds
    node, hostname = node_name(kube)
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{
            "key": "kubernetes.io/hostname", "operator": "In",
            "values": [hostname]}]}]}}}
    sets = ["--set", "metrics.serviceMonitor.enabled=true",
            "--set", "metrics.prometheusRule.enabled=true",
            "--set", "dashboard.enabled=true",
            "--set", "injector.enabled=false",
            "--set", "nameOverride=lens",
            "--set", "fullnameOverride=lens-a",
            "--set", "imagePullSecrets[0].name=regcred",
            "--set", "nodeSelector.kubernetes\\.io/os=linux",
            "--set-json", "affinity=" + json.dumps(affinity),
            "--set", "updateStrategy.rollingUpdate.maxUnavailable=2",
            "--set", "priorityClassName=",
            "--set", f"sidecar.namespaces={{{NS}}}",
            "--set", "metrics.tls.enabled=true"]
    pod = install_ready(kube, "vals", "A", "lens", "the agent Ready", *sets)
    spec = pod["spec"]
    assert spec["imagePullSecrets"] == [{"name": "regcred"}]
    assert spec["nodeSelector"] == {"kubernetes.io/os": "linux"}
    # the DaemonSet controller pins each pod to its node (matchFields
    # metadata.name in place of the required terms): the template has ours
    assert spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"][0]["matchFields"][0]["values"] == [node]
    assert "priorityClassName" not in spec and spec["nodeName"] == node
    assert pod["metadata"]["name"].startswith("lens-a-agent-")
    ds = kube.get(f"/apis/apps/v1/namespaces/{NS}/daemonsets/lens-a-agent")
    assert ds["spec"]["template"]["spec"]["affinity"] == affinity
    assert ds["spec"]["updateStrategy"]["rollingUpdate"][
        "maxUnavailable"] == 2
    # the monitoring objects as the API server stored them: nothing pruned
    sm = kube.get(f"{MON}/servicemonitors/lens-a-agent")
    (ep,) = sm["spec"]["endpoints"]
    assert ep["honorLabels"] is True
    assert ep["relabelings"] == [{
        "sourceLabels": ["__meta_kubernetes_pod_node_name"],
        "targetLabel": "node", "action": "replace"}]
    svc = kube.get(f"/api/v1/namespaces/{NS}/services/lens-a-agent")
    assert sm["spec"]["selector"]["matchLabels"].items() <= \
        svc["metadata"]["labels"].items()
    rule = kube.get(f"{MON}/prometheusrules/lens-a-agent")
    alerts = [r["alert"] for r in rule["spec"]["groups"][0]["rules"]]
    # every alert the chart's template has, in its order: nothing pruned
    template = open(os.path.join(CHART, "templates", "prometheusrule.yaml")).read()
    assert alerts == re.findall(r"^\s*- alert: (\w+)$", template, re.M)
    assert "OOMLensAgentDown" in alerts
    (down,) = [r for r in rule["spec"]["groups"][0]["rules"]
               if r["alert"] == "OOMLensAgentDown"]
    assert 'job="lens-a-agent"' in down["expr"] and down["for"] == "5m"
    cm = kube.get(f"/api/v1/namespaces/{NS}/configmaps/lens-a-dashboard")
    assert json.loads(cm["data"]["oomlens.json"])["uid"] == "oomlens"
    # the API server validates against the schema (a wrong type refused)
    bad = json.loads(json.dumps(sm))
    bad["metadata"] = {"name": "bad", "namespace": NS}
    bad["spec"]["endpoints"][0]["honorLabels"] = "yes"
    with pytest.raises(ApiError) as e:
        kube.create(f"{MON}/servicemonitors", bad)
    assert e.value.code == 422 and "honorLabels" in e.value.body
    assert not kube.exists("/apis/admissionregistration.k8s.io/v1/"
                           "mutatingwebhookconfigurations/lens-a-injector")
    assert not kube.get(f"/apis/apps/v1/namespaces/{NS}/deployments")[
        "items"]
    # every service account of the namespace (group
    # system:serviceaccounts:<ns>)
    check_upload_fallback(kube, "lens-a", "default", None)
    check_metrics_tls(kube, pod, ep, sets)
    uninstall(kube, "vals")


def test_c_unprivileged(values_ns):
    """privileged=false: the degraded mode (no /dev/kmsg; kills seen
    through the cgroups' OOM events), its agent Ready and saying so; the
    upload fallback bound to one service account. With cgroupReadOnly (a
    value for cgroup v2 nodes) on this v1 node too: the mount's top is
    read-only, the memory hierarchy below it is not, and a real kill is one
    OOMReport."""
    kube = values_ns
    pod = install_ready(kube, "valsc", "C", "oomlens",
                        "the unprivileged agent Ready",
                        "--set", "privileged=false",
                        "--set", "cgroupReadOnly=true",
                        "--set", "injector.enabled=false",
                        "--set", f"sidecar.namespaces={{{NS}}}",
                        "--set", "sidecar.serviceAccount=app")
    c = pod["spec"]["containers"][0]
    assert c["securityContext"]["privileged"] is False
    assert c["securityContext"]["capabilities"] == {
        "drop": ["ALL"], "add": ["DAC_READ_SEARCH", "SYS_PTRACE"]}
    assert "kmsg" not in [m["name"] for m in c["volumeMounts"]]
    assert {"name": "cgroup", "mountPath": "/host/sys/fs/cgroup",
            "readOnly": True} in c["volumeMounts"], c["volumeMounts"]
    log = kube.log(NS, pod["metadata"]["name"], c["name"])
    assert "running without the kernel log" in log, log[-2000:]
    # v1's hierarchies are mounts of their own below /sys/fs/cgroup, and
    # readOnly covers the top of the recursive bind only (runc 1.1.5; no
    # recursive read-only before Kubernetes 1.30): the memory hierarchy
    # stays writable, the notifications are registered as usual (a
    # read-only hierarchy: tests/integration/test_agent_mountroot.py)
    assert "notifications are off" not in log, log[-2000:]
    # the one service account named, not the namespace's others
    check_upload_fallback(kube, "valsc-oomlens", "app", "default")
    kube.ensure_namespace(tan.NS)
    uid = tan.create_pod(kube, tan.victim("readonly"))["metadata"]["uid"]
    assert tan.terminated(kube, "readonly")["reason"] == "OOMKilled"
    (r,) = tan.settle_once(kube, "readonly", secs=6)
    assert (r["spec"]["pod"], r["spec"]["container"], r["spec"]["podUID"]) \
        == ("readonly", "hog", uid), r["spec"]
    assert r["status"]["bundleStored"] is True, r["status"]
    tan.one_event(kube, "readonly", uid, 1)
    kube.delete(f"/api/v1/namespaces/{tan.NS}/pods/readonly")
    uninstall(kube, "valsc")


def image_digest(kube, repo):
    """repo's digest as the node reports its images, or None."""
    (node,) = kube.get("/api/v1/nodes")["items"]
    for img in node["status"].get("images", []):
        for n in img.get("names") or []:
            if n.startswith(repo + "@sha256:"):
                return n.split("@", 1)[1]
    return None


def test_cert_manager_needs_its_crds(values_ns):
    """certManager=true renders cert-manager's Issuer and Certificate:
    without cert-manager's CRDs the API server refuses the install, which
    is what a user without cert-manager meets (and why this suite cannot
    install it: no cert-manager on the node)."""
    kube = values_ns
    p = helm(kube, "install", "cm", CHART, "-n", NS, "-f", VALUES,
             "--set", "injector.certManager.enabled=true", "--dry-run=server",
             check=False)
    assert p.returncode != 0
    assert "cert-manager.io/v1" in p.stderr and "Certificate" in p.stderr, \
        p.stderr


def test_b_single_replica_injector_with_digests(values_ns):
    """One webhook replica: no PodDisruptionBudget (it would block every
    drain); the digests, when the node knows them, in the agent's, the
    webhook's and the injected sidecar's image."""
    kube = values_ns
    agent_d = image_digest(kube, "localhost/oomlens-agent")
    side_d = image_digest(kube, "localhost/oomlens-sidecar")
    sets = ["--set", "injector.replicas=1",
            "--set", "fullnameOverride=lens-b",
            "--set-json", 'injector.namespaceSelector={"matchLabels": '
            '{"oomlens.io/values-test": "enabled"}}']
    if agent_d:
        sets += ["--set", "image.digest=" + agent_d]
    if side_d:
        sets += ["--set", "injector.sidecar.image.digest=" + side_d]
    pod = install_ready(kube, "valsb", "B", "oomlens", "the agent Ready",
                        *sets, "--wait")
    print(f"digests: agent {agent_d}, sidecar {side_d}")
    for v in ("v1", "v1beta1"):
        try:
            kube.get(f"/apis/policy/{v}/namespaces/{NS}/"
                     "poddisruptionbudgets/lens-b-injector")
            pytest.fail("a PodDisruptionBudget over one replica")
        except ApiError as e:
            assert e.code == 404
    dep = kube.get(f"/apis/apps/v1/namespaces/{NS}/deployments/"
                   "lens-b-injector")
    assert dep["status"].get("readyReplicas") == 1
    web = dep["spec"]["template"]["spec"]["containers"][0]
    side = next(a for a in web["args"] if a.startswith("--sidecar-image="))
    if agent_d:
        assert pod["spec"]["containers"][0]["image"].endswith("@" + agent_d)
        assert web["image"].endswith("@" + agent_d)
    if side_d:
        assert side.endswith("@" + side_d)
    else:
        assert side == "--sidecar-image=localhost/oomlens-sidecar:" + VERSION, side
    uninstall(kube, "valsb")


RET_NS = "oomlens-retention"
OTHER_NODE = "oomlens-node-b"
OOMLENS_API = "/apis/oomlens.io/v1alpha1/namespaces/" + RET_NS


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def sa_kubeconfig(kube, pod, path):
    """A kubeconfig with the token of the agent pod's ServiceAccount (1.20
    still makes a token Secret for each): a second agent with exactly the
    chart's agent RBAC."""
    sa = kube.get(f"/api/v1/namespaces/{NS}/serviceaccounts/"
                  f"{pod['spec']['serviceAccountName']}")
    (ref,) = [s for s in sa["secrets"] if "token" in s["name"]]
    sec = kube.get(f"/api/v1/namespaces/{NS}/secrets/{ref['name']}")["data"]
    ca = path.with_suffix(".ca")
    ca.write_bytes(base64.b64decode(sec["ca.crt"]))
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": "node", "cluster": {
            "server": "https://127.0.0.1:6443",
            "certificate-authority": str(ca)}}],
        "users": [{"name": "agent", "user": {
            "token": base64.b64decode(sec["token"]).decode()}}],
        "contexts": [{"name": "c", "context": {"cluster": "node",
                                               "user": "agent"}}],
        "current-context": "c"}))
    return str(path)


def plant(kube, name, size):
    """A report and its bundle as another node's agent publishes them
    (label oomlens.io/node, the bundle owned by its report); spec.bundleSize
    says `size` bytes, the bytes retention counts."""
    data = b"\x1f\x8b" + name.encode()
    r = kube.create(f"{OOMLENS_API}/oomreports", {
        "apiVersion": "oomlens.io/v1alpha1", "kind": "OOMReport",
        "metadata": {"name": name, "labels": {"oomlens.io/node": OTHER_NODE}},
        "spec": {"pod": "elsewhere", "container": "app", "node": OTHER_NODE,
                 "bundle": name, "bundleSize": size}})
    kube.create(f"{OOMLENS_API}/oombundles", {
        "apiVersion": "oomlens.io/v1alpha1", "kind": "OOMBundle",
        "metadata": {"name": name, "ownerReferences": [{
            "apiVersion": "oomlens.io/v1alpha1", "kind": "OOMReport",
            "name": name, "uid": r["metadata"]["uid"]}]},
        "spec": {"data": base64.b64encode(data).decode(), "size": len(data),
                 "sha256": hashlib.sha256(data).hexdigest()}})
    time.sleep(1.1)  # creationTimestamp has seconds: one each


def names(kube, what):
    return sorted(o["metadata"]["name"]
                  for o in kube.get(f"{OOMLENS_API}/{what}")["items"])


def retention_lines(log):
    return [l for l in log.splitlines()
            if f"retention: namespace {RET_NS}:" in l]


def deleted(lines):
    return sum(int(re.search(r"deleted (\d+) reports", l).group(1))
               for l in lines if "deleted" in l and "none deleted" not in l)


def test_d_retention_two_agents_and_budget(values_ns, tmp_path):
    """Issue 29 on the real node, with the chart's non-default retention and
    bundle values installed: a kill's bundle within bundle.maxSize (64Ki);
    two agents (the chart's, and a second one as another node's with the
    same limits and the chart's agent RBAC) apply retention per namespace
    to one namespace and converge: the newest reports within 1 MiB of
    bundles kept, each older one deleted once by one of them, the kept
    reports' bundles untouched (the real one's data still its report's
    sha256), nothing more deleted in later rounds."""
    kube = values_ns
    pod = install_ready(kube, "valsd", "D", "oomlens", "the agent Ready",
                "--set", "retention.keepPerNamespace=4",
                "--set", "retention.maxBytesPerNamespace=1Mi",
                "--set", "retention.maxAge=2d",
                "--set", "retention.interval=3s",
                "--set", "retention.node.keep=5",
                "--set", "retention.node.maxBytes=64Mi",
                "--set", "bundle.maxSize=64Ki",
                "--set", "injector.enabled=false")
    args = pod["spec"]["containers"][0]["args"]
    for a in ("--keep-per-namespace=4", "--max-bytes-per-namespace=1Mi",
              "--max-age=2d", "--retention-interval=3s", "--reports-keep=5",
              "--reports-max-bytes=64Mi", "--bundle-max-size=64Ki"):
        assert a in args, args
    other = None
    try:
        recreate_namespace(kube, RET_NS)
        # oldest first: two of the other node's (400 KiB each), a real
        # kill here, two more of the other node's
        plant(kube, "b1", 400 << 10)
        plant(kube, "b2", 400 << 10)
        kube.create(f"/api/v1/namespaces/{RET_NS}/pods", {
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "hog", "namespace": RET_NS},
            "spec": {"restartPolicy": "Never",
                     "terminationGracePeriodSeconds": 0,
                     "containers": [{
                         "name": "hog", "image": "localhost/oomlens-busybox:1",
                         "imagePullPolicy": "Never",
                         "command": ["/usr/local/bin/hog", "--step-mb", "4"],
                         "resources": {"requests": {"memory": "16Mi"},
                                       "limits": {"memory": "64Mi"}}}]}})
        (real,) = kube.wait(
            lambda: [r for r in kube.get(f"{OOMLENS_API}/oomreports")["items"]
                     if r["spec"].get("pod") == "hog" and
                     r.get("status", {}).get("phase") == "Ready"],
            120, "the real kill's Ready report")
        a = real["metadata"]["name"]
        size = real["spec"]["bundleSize"]
        assert 0 < size <= 64 << 10, real["spec"]
        # within 1 MiB so far (a, b2, b1): the chart's agent kept all
        time.sleep(4)
        assert names(kube, "oomreports") == sorted([a, "b1", "b2"])
        time.sleep(1.1)
        # the other node's agent, running before the last two come
        kc = sa_kubeconfig(kube, pod, tmp_path / "agent.kubeconfig")
        other = subprocess.Popen(
            [os.path.join(BUILD, "bin", "oomlens-agent"), "run",
             "--state-dir", str(tmp_path / "state"), "--kubeconfig", kc,
             "--host-root", "/", "--kubelet-root", f"{CLUSTER_DIR}/kubelet",
             "--keep-per-namespace", "4", "--max-bytes-per-namespace", "1Mi",
             "--max-age", "2d", "--retention-interval", "3s",
             "--metrics-addr", f"127.0.0.1:{free_port()}",
             "--log-level", "debug"],
            env=dict(os.environ, NODE_NAME=OTHER_NODE),
            stdout=subprocess.DEVNULL, stderr=open(tmp_path / "b.log", "w"))
        plant(kube, "b3", 400 << 10)
        plant(kube, "b4", 400 << 10)
        # newest first: b4 + b3 + a fit in 1 MiB, b2 does not: b2 and b1 go
        want = sorted([a, "b3", "b4"])
        kube.wait(lambda: names(kube, "oomreports") == want, 60,
                  "retention's deletes")
        kube.wait(lambda: names(kube, "oombundles") == want, 60,
                  "the dropped reports' bundles to go")
        log_b = lambda: (tmp_path / "b.log").read_text()  # noqa: E731
        # both agents have looked at the namespace since
        kube.wait(lambda: len(retention_lines(log_b())) >= 2, 30,
                  "the second agent's retention rounds")
        time.sleep(7)  # two more rounds of each: nothing more goes
        assert names(kube, "oomreports") == want
        assert names(kube, "oombundles") == want
        b = kube.get(f"{OOMLENS_API}/oombundles/{a}")
        data = base64.b64decode(b["spec"]["data"])
        assert hashlib.sha256(data).hexdigest() == real["spec"]["bundleSHA256"]
        assert len(data) == size
        log_a = kube.log(NS, pod["metadata"]["name"], "agent")
        lines_a, lines_b = retention_lines(log_a), retention_lines(log_b())
        assert lines_a and lines_b, (log_a[-3000:], log_b()[-3000:])
        # each dropped report deleted once, by one or the other agent,
        # both for the bytes of bundles
        assert deleted(lines_a) + deleted(lines_b) == 2, (lines_a, lines_b)
        for l in lines_a + lines_b:
            if "deleted" in l and "none deleted" not in l:
                assert "0 beyond 4 kept" in l and "0 older than" in l, l
        # and the later rounds of both found the namespace as planned
        assert "3 reports, 0 to drop" in lines_a[-1], lines_a
        assert "3 reports, 0 to drop" in lines_b[-1], lines_b
        assert other.poll() is None, log_b()[-3000:]
    finally:
        if other:
            other.terminate()
            other.wait(timeout=30)
        kube.delete(f"/api/v1/namespaces/{RET_NS}")
        uninstall(kube, "valsd")
