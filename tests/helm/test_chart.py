"""helm/oomlens with the real helm binary (build/tools/bin/helm, from
`make deps DEPS=test`): lint --strict, template with the default and
non-default values, package; the values schema refuses a wrong type and an
unknown key; our policy on every rendered object (privileged only on the
agent, with its reason; drop ALL elsewhere; no secrets/configmaps RBAC;
resources and probes; pinned image tags); and manifests/ does not drift
from the chart (scripts/render-manifests.sh). Server-side validation of the
same objects runs in the cluster suite (tests/cluster/test_helm_install.py
when present)."""

import json
import os
import re
import subprocess
import tarfile

import pytest
import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BUILD = os.environ.get("OOMLENS_BUILD") or os.path.join(ROOT, "build")
HELM = os.environ.get("OOMLENS_HELM") or os.path.join(BUILD, "tools", "bin", "helm")
CHART = os.path.join(ROOT, "helm", "oomlens")

pytestmark = pytest.mark.skipif(not os.access(HELM, os.X_OK),
                                reason="no helm: `make deps DEPS=test` puts one in build/tools/bin")

VALUE_SETS = {
    "default": [],
    "everything-on": ["--set", "metrics.serviceMonitor.enabled=true", "--set", "dashboard.enabled=true",
                      "--set", "sidecar.namespaces={shop,batch}", "--set", "metrics.insecure=true",
                      "--set", "log.format=json", "--set", "log.level=debug",
                      "--set", "namespaces={shop,batch}", "--set", "excludeNamespaces={kube-system}",
                      "--set", "image.digest=sha256:" + "ab" * 32,
                      "--set", "retention.node.keep=20", "--set", "retention.node.maxBytes=64Mi"],
    "unprivileged": ["--set", "privileged=false", "--set", "sidecar.namespaces={shop}",
                     "--set", "sidecar.serviceAccount=app"],
    "platform": ["--set", "metrics.serviceMonitor.enabled=true", "--set", "metrics.prometheusRule.enabled=true",
                 "--set", "imagePullSecrets[0].name=regcred", "--set", "fullnameOverride=lens",
                 "--set", "nameOverride=oz", "--set", "injector.replicas=1",
                 "--set", "injector.sidecar.image.digest=sha256:" + "cd" * 32,
                 "--set", "updateStrategy.rollingUpdate.maxUnavailable=2", "--set", "priorityClassName=",
                 "--set", "rbac.aggregateToDefaultRoles=false", "--set", "metrics.tls.enabled=true"],
    "test-node": ["--set", "image.tag=dev", "--set", "image.pullPolicy=Never", "--set", "hostNetwork=true",
                  "--set", "apiServer.host=127.0.0.1", "--set", "apiServer.port=6443",
                  "--set", "probes.enabled=true",
                  "--set", "retention.keepPerNamespace=5", "--set", "retention.maxAge=2h",
                  "--set", "retention.maxBytesPerNamespace=4Mi", "--set", "retention.interval=30s",
                  "--set", "bundle.maxSize=128Ki"],
}
ENV = dict(os.environ, HELM_CACHE_HOME="/tmp/oomlens-helm-cache", HELM_CONFIG_HOME="/tmp/oomlens-helm-config",
           HELM_DATA_HOME="/tmp/oomlens-helm-data")


def helm(*args, check=True):
    r = subprocess.run([HELM] + list(args), capture_output=True, text=True, env=ENV, timeout=120)
    if check:
        assert r.returncode == 0, r.stderr
    return r


def render(*extra):
    out = helm("template", "oomlens", CHART, "--namespace", "oomlens-system", "--include-crds", *extra).stdout
    return [d for d in yaml.safe_load_all(out) if d]


def test_lint_strict():
    # As a current cluster (helm's default is 1.20, where the injector's
    # PodDisruptionBudget is the deprecated policy/v1beta1) and as the
    # test node's 1.20 without the injector.
    for name, args in VALUE_SETS.items():
        r = helm("lint", "--strict", "--kube-version", "1.29.0", CHART, *args)
        assert "0 chart(s) failed" in r.stdout, (name, r.stdout)
        r = helm("lint", "--strict", "--kube-version", "1.20.2", CHART,
                 "--set", "injector.enabled=false", *args)
        assert "0 chart(s) failed" in r.stdout, (name, r.stdout)


def test_app_version_is_the_project_version():
    chart = yaml.safe_load(open(os.path.join(CHART, "Chart.yaml")))
    version = open(os.path.join(ROOT, "VERSION")).read().strip()
    assert chart["appVersion"] == version
    values = yaml.safe_load(open(os.path.join(CHART, "values.yaml")))
    assert values["image"]["tag"] == version


def test_package(tmp_path):
    helm("package", CHART, "--destination", str(tmp_path))
    pkg = tmp_path / "oomlens-0.1.0.tgz"
    names = tarfile.open(pkg).getnames()
    for want in ("oomlens/Chart.yaml", "oomlens/values.schema.json", "oomlens/crds/oomreports.yaml",
                 "oomlens/templates/daemonset.yaml", "oomlens/dashboards/oomlens.json"):
        assert want in names
    assert len(render()) == len([d for d in yaml.safe_load_all(helm(
        "template", "oomlens", str(pkg), "-n", "oomlens-system", "--include-crds").stdout) if d])


@pytest.mark.parametrize("args,err", [
    (["--set", "metrics.port=abc"], "metrics.port: Invalid type"),
    (["--set", "privileged=yes"], "privileged: Invalid type"),
    (["--set", "cgroupReadOnly=v2"], "cgroupReadOnly: Invalid type"),
    (["--set", "nosuchkey=1"], "Additional property nosuchkey is not allowed"),
    (["--set", "metrics.nosuch=1"], "Additional property nosuch is not allowed"),
    (["--set", "image.tag=latest"], "image.tag"),
    (["--set", "log.level=loud"], "log.level"),
    (["--set", "hostPaths.proc=relative"], "hostPaths.proc"),
    (["--set", "injector.replcas=2"], "Additional property replcas is not allowed"),
    (["--set", "injector.timeoutSeconds=60"], "injector.timeoutSeconds"),
    (["--set", "injector.sidecar.nativeSidecars=maybe"], "injector.sidecar.nativeSidecars"),
    (["--set", "injector.sidecar.image.tag=latest"], "injector.sidecar.image.tag"),
    (["--set", "imagePullSecrets[0].nmae=x"], "imagePullSecrets"),
    (["--set", "injector.sidecar.image.digest=sha256:12"], "injector.sidecar.image.digest"),
    (["--set", "updateStrategy.rollingUpdate.maxUnavailable=0"], "maxUnavailable"),
    (["--set", "fullnameOverride=Bad_Name"], "fullnameOverride"),
    (["--set", "metrics.prometheusRule.forecastSeconds=soon"], "forecastSeconds"),
    (["--set", "retention.node.keep=0"], "retention.node.keep"),
    (["--set", "retention.node.maxBytes=256MB"], "retention.node.maxBytes"),
])
def test_schema_refuses(args, err):
    r = helm("template", "x", CHART, *args, check=False)
    assert r.returncode != 0 and err in r.stderr, r.stderr


def kinds(docs):
    return sorted(d["kind"] for d in docs)


def test_objects_per_value_set():
    agent = ["CustomResourceDefinition"] * 2 + [
        "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Service", "DaemonSet", "Pod",
        "ClusterRole", "ClusterRole"]  # the agent's; aggregated to view, to edit
    assert kinds(render("--set", "injector.enabled=false")) == sorted(agent)
    # opting pods in needs no chart value, and by default their service
    # accounts get no Role (the agent reads the spools through the node)
    assert not {"Role", "RoleBinding"} & set(kinds(render()))
    injector = [k for k in kinds(render()) if k not in agent or
                kinds(render()).count(k) > agent.count(k)]
    assert "MutatingWebhookConfiguration" in injector and "Deployment" in injector
    assert "PodDisruptionBudget" in injector
    on = render(*VALUE_SETS["everything-on"])
    assert kinds(on).count("Role") == 2 and kinds(on).count("RoleBinding") == 2
    assert "ServiceMonitor" in kinds(on) and "ConfigMap" in kinds(on)
    dash = json.loads(next(d for d in on if d["kind"] == "ConfigMap")["data"]["oomlens.json"])
    exprs = " ".join(t["expr"] for p in dash["panels"] for t in p["targets"])
    for metric in ("oomlens_oom_kills_total", "oomlens_detect_latency_seconds",
                   "oomlens_publish_latency_seconds", "oomlens_publish_failures_total",
                   "oomlens_publish_queue_depth", "oomlens_watched_cgroups"):
        assert metric in exprs
    ds = next(d for d in on if d["kind"] == "DaemonSet")
    c = ds["spec"]["template"]["spec"]["containers"][0]
    assert c["image"].endswith("@sha256:" + "ab" * 32)
    assert {"--metrics-insecure", "--log-json", "--log-level=debug", "--namespaces=shop,batch",
            "--exclude-namespaces=kube-system", "--reports-keep=20",
            "--reports-max-bytes=64Mi"} <= set(c["args"])
    role = next(d for d in on if d["kind"] == "Role")
    assert role["rules"] == [{"apiGroups": ["oomlens.io"], "resources": ["oombundles"],
                              "verbs": ["create", "patch"]}]
    rb = next(d for d in on if d["kind"] == "RoleBinding" and d["metadata"]["namespace"] == "shop")
    assert rb["subjects"] == [{"kind": "Group", "apiGroup": "rbac.authorization.k8s.io",
                               "name": "system:serviceaccounts:shop"}]
    un = render(*VALUE_SETS["unprivileged"])
    rb = next(d for d in un if d["kind"] == "RoleBinding")
    assert rb["subjects"][0] == {"kind": "ServiceAccount", "name": "app", "namespace": "shop"}
    ds = next(d for d in un if d["kind"] == "DaemonSet")
    c = ds["spec"]["template"]["spec"]["containers"][0]
    assert c["securityContext"]["privileged"] is False
    assert "kmsg" not in [m["name"] for m in c["volumeMounts"]]
    # the cgroup fs: writable by default (cgroup v1's event_control),
    # read-only with cgroupReadOnly, and every other mount as it was
    for sets, ro in (((), None), (("--set", "cgroupReadOnly=true"), True),
                     (("--set", "cgroupReadOnly=false"), None)):
        ds = next(d for d in render(*sets) if d["kind"] == "DaemonSet")
        mounts = ds["spec"]["template"]["spec"]["containers"][0]["volumeMounts"]
        cg = next(m for m in mounts if m["name"] == "cgroup")
        assert cg == dict({"name": "cgroup", "mountPath": "/host/sys/fs/cgroup"},
                          **({"readOnly": True} if ro else {})), cg
        assert {m["name"]: m.get("readOnly") for m in mounts if m["name"] != "cgroup"} == \
            {"proc": True, "kmsg": None, "pods": True, "state": None}
    tn = render(*VALUE_SETS["test-node"])
    ds = next(d for d in tn if d["kind"] == "DaemonSet")
    c = ds["spec"]["template"]["spec"]["containers"][0]
    assert c["image"] == "localhost/oomlens-agent:dev" and c["imagePullPolicy"] == "Never"
    assert {"name": "KUBERNETES_SERVICE_HOST", "value": "127.0.0.1"} in c["env"]
    assert ds["spec"]["template"]["spec"]["hostNetwork"] is True
    assert {"--keep-per-namespace=5", "--max-age=2h", "--max-bytes-per-namespace=4Mi",
            "--retention-interval=30s", "--bundle-max-size=128Ki"} <= set(c["args"])
    # the node's copies: the defaults, as the agent's own
    assert {"--reports-keep=200", "--reports-max-bytes=256Mi"} <= set(c["args"])


def test_every_agent_argument_is_an_option_the_agent_takes(tmp_path):
    """The agent parses the arguments the chart renders for it, under every
    value set: the chart once passed --cgroup-driver, which the agent does
    not take, and every agent exited 2 (`run: unrecognized option`). The
    built agent is the judge: with NODE_NAME unset it parses all its
    options and stops at the first check after them."""
    agent = os.path.join(BUILD, "bin", "oomlens-agent")
    if not os.access(agent, os.X_OK):
        pytest.fail(agent + " not built (run make)")
    env = {k: v for k, v in os.environ.items() if k != "NODE_NAME"}
    for name, sets in VALUE_SETS.items():
        for d in render(*sets):
            if d["kind"] != "DaemonSet":
                continue
            args = d["spec"]["template"]["spec"]["containers"][0]["args"]
            assert args[0] == "run", args
            r = subprocess.run([agent] + args, capture_output=True, text=True,
                               timeout=10, env=env, cwd=str(tmp_path))
            assert "unrecognized option" not in r.stderr, (name, r.stderr)
            assert "NODE_NAME is not set" in r.stderr, (name, args, r.stderr)


def test_a_removed_cgroup_driver_value_is_refused_at_install():
    """cgroupDriver is gone (the agent reads both drivers' paths): the
    strict schema refuses it at install rather than rendering an agent
    that cannot start."""
    r = helm("template", "t", CHART, "--set", "cgroupDriver=systemd", check=False)
    assert r.returncode != 0 and "cgroupDriver" in r.stderr, r.stderr


def pod_specs(doc):
    if doc["kind"] == "Pod":
        return [doc["spec"]]
    if doc["kind"] in ("DaemonSet", "Deployment", "StatefulSet", "Job"):
        return [doc["spec"]["template"]["spec"]]
    return []


def check_policy(docs, raw_text):
    """Our rules, on any rendered set of objects."""
    for d in docs:
        if d["kind"] in ("ClusterRole", "Role"):
            for rule in d["rules"]:
                res = set(rule.get("resources", []))
                assert not res & {"secrets", "configmaps", "*"}, (d["metadata"]["name"], rule)
                assert "*" not in rule.get("verbs", []) and "*" not in rule.get("apiGroups", [])
        for spec in pod_specs(d):
            for c in spec.get("containers", []) + spec.get("initContainers", []):
                where = "%s/%s" % (d["metadata"]["name"], c["name"])
                image = c["image"]
                assert re.search(r":[^/:@]+(@sha256:[0-9a-f]{64})?$", image) and not image.endswith(":latest"), where
                res = c.get("resources", {})
                assert res.get("requests", {}).get("memory") and res.get("limits", {}).get("memory"), where
                sc = c.get("securityContext", {})
                assert sc.get("readOnlyRootFilesystem") is True, where
                if sc.get("privileged"):
                    assert d["kind"] == "DaemonSet" and c["name"] == "agent", where
                else:
                    assert sc.get("allowPrivilegeEscalation") is False, where
                    assert sc.get("capabilities", {}).get("drop") == ["ALL"], where
                if d["kind"] == "DaemonSet":
                    assert c["livenessProbe"]["httpGet"]["path"] == "/healthz", where
                    assert c["readinessProbe"]["httpGet"]["path"] == "/readyz", where
    if any(c.get("securityContext", {}).get("privileged")
           for d in docs for s in pod_specs(d) for c in s["containers"]):
        # the reason sits next to the switch
        assert re.search(r"# oomlens-privileged: /dev/kmsg\..*\n(\s+#.*\n)+\s+privileged: true", raw_text)


@pytest.mark.parametrize("name", sorted(VALUE_SETS))
def test_policy(name):
    args = VALUE_SETS[name]
    raw = helm("template", "oomlens", CHART, "-n", "oomlens-system", *args).stdout
    check_policy([d for d in yaml.safe_load_all(raw) if d], raw)


def test_policy_catches_a_violation():
    """The checker itself fails on what it is meant to catch."""
    docs = render()
    bad = json.loads(json.dumps(docs))
    next(d for d in bad if d["kind"] == "ClusterRole")["rules"].append(
        {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]})
    with pytest.raises(AssertionError):
        check_policy(bad, "")
    bad = json.loads(json.dumps(docs))
    next(d for d in bad if d["kind"] == "Pod")["spec"]["containers"][0]["securityContext"]["privileged"] = True
    with pytest.raises(AssertionError):
        check_policy(bad, "")


def test_manifests_do_not_drift(tmp_path):
    out = tmp_path / "oomlens.yaml"
    subprocess.run([os.path.join(ROOT, "scripts", "render-manifests.sh"), str(out)], check=True,
                   env=dict(ENV, B=BUILD, HELM=HELM), timeout=120)
    assert out.read_text() == open(os.path.join(ROOT, "manifests", "oomlens.yaml")).read(), \
        "manifests/oomlens.yaml is stale: run scripts/render-manifests.sh"
    for crd in ("oomreports.yaml", "oombundles.yaml"):
        assert open(os.path.join(CHART, "crds", crd)).read() == \
            open(os.path.join(ROOT, "manifests", "crds", crd)).read(), crd
    kust = yaml.safe_load(open(os.path.join(ROOT, "manifests", "kustomization.yaml")))
    for r in kust["resources"]:
        assert os.path.exists(os.path.join(ROOT, "manifests", r)), r


def test_examples_are_opted_in():
    ex = os.path.join(ROOT, "manifests", "examples")
    files = sorted(f for f in os.listdir(ex) if f.endswith(".yaml"))
    assert len(files) >= 2
    for f in files:
        raw = open(os.path.join(ex, f)).read()
        d = yaml.safe_load(raw)
        spec = d["spec"]["template"]["spec"]
        assert spec["shareProcessNamespace"] is True, f
        assert d["spec"]["template"]["metadata"]["annotations"]["oomlens.io/capture"] == "true"
        vols = {v["name"]: v for v in spec["volumes"]}
        assert "emptyDir" in vols["oomlens-spool"] and "downwardAPI" in vols["oomlens-podinfo"], f
        side = next(c for c in spec["containers"] if c["name"] == "oomlens-sidecar")
        assert side["securityContext"]["capabilities"] == {"drop": ["ALL"], "add": ["SYS_PTRACE", "SETUID", "SETGID"]}
        assert {m["name"] for m in side["volumeMounts"]} == {"oomlens-spool", "oomlens-podinfo"}
        check_policy([d], raw)


def by_kind(docs, kind, name=None):
    return [d for d in docs if d["kind"] == kind and (name is None or d["metadata"]["name"] == name)]


def test_scheduling_naming_and_registry_values():
    """Linux nodes by default; affinity, updateStrategy, pull secrets for
    the agent and the webhook; digests for the agent, the webhook and the
    sidecar the webhook injects; names from fullnameOverride/nameOverride."""
    docs = render()
    (ds,) = by_kind(docs, "DaemonSet")
    spec = ds["spec"]["template"]["spec"]
    assert spec["nodeSelector"] == {"kubernetes.io/os": "linux"}
    assert ds["spec"]["updateStrategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1}}
    assert "imagePullSecrets" not in spec and "affinity" not in spec
    (dep,) = by_kind(docs, "Deployment")
    assert dep["spec"]["template"]["spec"]["nodeSelector"] == {"kubernetes.io/os": "linux"}
    d1, d2 = "sha256:" + "ab" * 32, "sha256:" + "cd" * 32
    aff = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "pool", "operator": "In", "values": ["apps"]}]}]}}}
    docs = render("--set", "imagePullSecrets[0].name=regcred", "--set", "imagePullSecrets[1]=other",
                  "--set", "image.digest=" + d1, "--set", "injector.sidecar.image.digest=" + d2,
                  "--set-json", "affinity=" + json.dumps(aff),
                  "--set", "updateStrategy.rollingUpdate.maxUnavailable=10%",
                  "--set", "priorityClassName=", "--set", "fullnameOverride=lens", "--set", "nameOverride=oz")
    (ds,) = by_kind(docs, "DaemonSet", "lens-agent")
    spec = ds["spec"]["template"]["spec"]
    assert spec["imagePullSecrets"] == [{"name": "regcred"}, {"name": "other"}]
    assert spec["affinity"] == aff and "priorityClassName" not in spec
    assert ds["spec"]["updateStrategy"]["rollingUpdate"] == {"maxUnavailable": "10%"}
    assert spec["containers"][0]["image"] == "localhost/oomlens-agent:0.1.0@" + d1
    assert ds["spec"]["selector"]["matchLabels"]["app.kubernetes.io/name"] == "oz"
    (dep,) = by_kind(docs, "Deployment", "lens-injector")
    pspec = dep["spec"]["template"]["spec"]
    assert pspec["imagePullSecrets"] == [{"name": "regcred"}, {"name": "other"}]
    web = pspec["containers"][0]
    assert web["image"] == "localhost/oomlens-agent:0.1.0@" + d1
    assert "--sidecar-image=localhost/oomlens-sidecar:0.1.0@" + d2 in web["args"]
    assert by_kind(docs, "Secret", "lens-injector-tls") and by_kind(docs, "Service", "lens-agent")
    assert by_kind(docs, "MutatingWebhookConfiguration", "lens-injector")
    # a webhook image of its own does not take the agent's digest
    (dep,) = by_kind(render("--set", "image.digest=" + d1, "--set", "injector.image.repository=reg/hook"),
                     "Deployment")
    assert dep["spec"]["template"]["spec"]["containers"][0]["image"] == "reg/hook:0.1.0"
    # release names: oomlens keeps oomlens-*, another gets <release>-oomlens-*
    names = {d["metadata"]["name"] for d in yaml.safe_load_all(
        helm("template", "shop", CHART, "-n", "x").stdout) if d}
    assert {"shop-oomlens-agent", "shop-oomlens-injector", "shop-oomlens-view"} <= names


def test_every_object_has_the_standard_labels():
    for d in render("--set", "metrics.serviceMonitor.enabled=true", "--set", "dashboard.enabled=true",
                    "--set", "metrics.prometheusRule.enabled=true", "--set", "sidecar.namespaces={shop}"):
        if d["kind"] == "CustomResourceDefinition":
            continue
        labels = d["metadata"].get("labels", {})
        where = (d["kind"], d["metadata"]["name"])
        for k in ("app.kubernetes.io/name", "app.kubernetes.io/instance", "app.kubernetes.io/version",
                  "app.kubernetes.io/managed-by", "app.kubernetes.io/part-of", "helm.sh/chart"):
            assert k in labels, (where, k)
        if "injector" in d["metadata"]["name"]:
            assert labels["app.kubernetes.io/component"] == "injector", where
            assert labels["app.kubernetes.io/name"] == "oomlens-injector", where


def test_pdb_only_over_more_than_one_webhook_replica():
    assert len(by_kind(render(), "PodDisruptionBudget")) == 1
    assert by_kind(render("--set", "injector.replicas=1"), "PodDisruptionBudget") == []
    assert by_kind(render("--set", "injector.podDisruptionBudget.enabled=false"), "PodDisruptionBudget") == []


def test_aggregated_roles():
    roles = {d["metadata"]["name"]: d for d in by_kind(render(), "ClusterRole")}
    view, edit = roles["oomlens-view"], roles["oomlens-edit"]
    assert view["metadata"]["labels"]["rbac.authorization.k8s.io/aggregate-to-view"] == "true"
    assert edit["metadata"]["labels"]["rbac.authorization.k8s.io/aggregate-to-edit"] == "true"
    assert view["rules"] == [{"apiGroups": ["oomlens.io"], "resources": ["oomreports", "oombundles"],
                              "verbs": ["get", "list", "watch"]}]
    assert edit["rules"] == [{"apiGroups": ["oomlens.io"], "resources": ["oomreports", "oombundles"],
                              "verbs": ["delete", "deletecollection"]}]
    assert set(d["metadata"]["name"] for d in by_kind(
        render("--set", "rbac.aggregateToDefaultRoles=false"), "ClusterRole")) == {"oomlens-agent"}


def test_offline_renders_make_a_new_certificate_each_time():
    """Without a cluster (no lookup) each render makes a new CA: why the
    chart reads the installed Secret back (tests/cluster/test_helm_install.py
    shows that renders against the installed release are equal)."""
    one = by_kind(render(), "Secret")[0]["data"]["ca.crt"]
    two = by_kind(render(), "Secret")[0]["data"]["ca.crt"]
    assert one != two


def test_webhook_pods_roll_exactly_when_the_certificate_changes():
    """checksum/tls is the certificate the Secret carries (one made per
    render, shared by the Secret, the caBundle and the annotation): an
    upgrade that reuses the installed certificate leaves the pods be."""
    import hashlib
    docs = render()
    (sec,) = by_kind(docs, "Secret")
    (mwc,) = by_kind(docs, "MutatingWebhookConfiguration")
    (dep,) = by_kind(docs, "Deployment")
    d = sec["data"]
    assert mwc["webhooks"][0]["clientConfig"]["caBundle"] == d["ca.crt"]
    want = hashlib.sha256(json.dumps({"ca": d["ca.crt"], "crt": d["tls.crt"], "key": d["tls.key"]},
                                     separators=(",", ":")).encode()).hexdigest()
    assert dep["spec"]["template"]["metadata"]["annotations"]["checksum/tls"] == want


def selects(sel, labels):
    """A namespaceSelector applied to a namespace's labels, as the API
    server applies it (matchLabels and matchExpressions ANDed)."""
    for k, v in (sel.get("matchLabels") or {}).items():
        if labels.get(k) != v:
            return False
    for e in sel.get("matchExpressions") or []:
        k, op, vals = e["key"], e["operator"], e.get("values", [])
        ok = {"In": k in labels and labels[k] in vals,
              "NotIn": k not in labels or labels[k] not in vals,
              "Exists": k in labels,
              "DoesNotExist": k not in labels}[op]
        if not ok:
            return False
    return True


ENFORCE = "pod-security.kubernetes.io/enforce"


def paths_by_label(webhooks):
    """For each enforce label value (None: no label), the paths of the
    webhooks an opted-in namespace is sent to."""
    out = {}
    for value in (None, "privileged", "baseline", "restricted", "Baseline"):
        labels = {"oomlens.io/injection": "enabled",
                  "kubernetes.io/metadata.name": "apps"}
        if value is not None:
            labels[ENFORCE] = value
        out[value] = [w["clientConfig"]["service"]["path"] for w in webhooks
                      if selects(w["namespaceSelector"], labels)]
    return out


@pytest.mark.parametrize("default", [None, "baseline"])
def test_each_namespace_reaches_one_webhook_of_its_level(default):
    """The four webhooks' selectors split opted-in namespaces by their Pod
    Security label: each is sent to exactly one, whose path is its level
    (an unknown value: restricted; none: injector.podSecurity.defaultLevel);
    a namespace not opted in, or the release's own, to none."""
    extra = ["--set", f"injector.podSecurity.defaultLevel={default}"] \
        if default else []
    (mwc,) = by_kind(render(*extra), "MutatingWebhookConfiguration")
    assert paths_by_label(mwc["webhooks"]) == {
        None: [f"/mutate-pods/{default or 'privileged'}"],
        "privileged": ["/mutate-pods/privileged"],
        "baseline": ["/mutate-pods/baseline"],
        "restricted": ["/mutate-pods/restricted"],
        "Baseline": ["/mutate-pods/restricted"]}
    for labels in ({ENFORCE: "baseline"},
                   {"oomlens.io/injection": "enabled", ENFORCE: "baseline",
                    "kubernetes.io/metadata.name": "oomlens-system"}):
        assert not [w for w in mwc["webhooks"]
                    if selects(w["namespaceSelector"], labels)], labels


def test_plain_manifests_split_namespaces_as_the_chart_does():
    docs = [d for d in yaml.safe_load_all(
        open(os.path.join(ROOT, "manifests", "injector", "injector.yaml")))
        if d and d["kind"] == "MutatingWebhookConfiguration"]
    (mwc,) = docs
    (chart,) = by_kind(render(), "MutatingWebhookConfiguration")
    assert paths_by_label(mwc["webhooks"]) == \
        paths_by_label(chart["webhooks"])
    assert [w["name"] for w in mwc["webhooks"]] == \
        [w["name"] for w in chart["webhooks"]]
