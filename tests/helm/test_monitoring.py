# SPDX-License-Identifier: Apache-2.0
"""The chart's Prometheus Operator objects and dashboard, rendered: the
ServiceMonitor keeps the victim's labels (honorLabels) and adds the node;
every metric an alert or a panel names is one the agent exports (read from
agent/src/obs/metrics_agent.c, not from a list here); the alerts fire on
the series they are meant for and stay silent otherwise (Debian's promtool
`test rules`, over synthetic series); both objects validate against the
prometheus-operator CRDs' published schemas (tests/fixtures/
prometheus-operator/). The API server's own acceptance of them is in
tests/cluster/test_helm_values.py."""

import json
import os
import re
import shutil
import subprocess

import pytest
import yaml

from test_chart import ROOT, render

FIXTURES = os.path.join(ROOT, "tests", "fixtures", "prometheus-operator")
METRICS_C = os.path.join(ROOT, "agent", "src", "obs", "metrics_agent.c")
ON = ["--set", "metrics.serviceMonitor.enabled=true", "--set", "metrics.prometheusRule.enabled=true",
      "--set", "dashboard.enabled=true"]
# Debian 12's prometheus package carries promtool; it is extracted, not
# installed (installing would start a Prometheus service).
PROM_DEB = "prometheus"
PROM_CACHE = os.environ.get("OOMLENS_PROMTOOL_CACHE", "/var/cache/oomlens/promtool")


def exported_metrics():
    """The families the agent registers, histograms with their series."""
    src = open(METRICS_C).read()
    names = set(re.findall(r'"(oomlens_[a-z_]+)"', src))
    hist = set(re.findall(r'metrics_add\(\s*reg,\s*"(oomlens_[a-z_]+)",[^;]*METRIC_HISTOGRAM', src))
    assert len(names) >= 10 and "oomlens_detect_latency_seconds" in hist, (names, hist)
    for h in hist:
        names |= {h + "_bucket", h + "_sum", h + "_count"}
    return names


def named_metrics(expr):
    return set(re.findall(r"\b(oomlens_[a-z_]+)", expr))


def objects(kind, *extra):
    return [d for d in render(*ON, *extra) if d["kind"] == kind]


def rule_groups(*extra):
    (rule,) = objects("PrometheusRule", *extra)
    return rule["spec"]["groups"]


def test_service_monitor_keeps_the_victims_labels_and_adds_the_node():
    (sm,) = objects("ServiceMonitor")
    (ep,) = sm["spec"]["endpoints"]
    assert ep["honorLabels"] is True
    assert {"sourceLabels": ["__meta_kubernetes_pod_node_name"], "targetLabel": "node",
            "action": "replace"} in ep["relabelings"]
    assert ep["port"] == "http" and ep["path"] == "/metrics"
    assert ep["bearerTokenFile"].endswith("/serviceaccount/token")
    (svc,) = [d for d in render(*ON) if d["kind"] == "Service" and d["metadata"]["name"] == "oomlens-agent"]
    assert sm["spec"]["selector"]["matchLabels"].items() <= svc["metadata"]["labels"].items()
    assert sm["spec"]["namespaceSelector"] == {"matchNames": ["oomlens-system"]}
    (ep,) = objects("ServiceMonitor", "--set", "metrics.insecure=true")[0]["spec"]["endpoints"]
    assert "bearerTokenFile" not in ep


TLS = ["--set", "metrics.tls.enabled=true"]


def test_metrics_over_https_the_agent_the_probes_and_the_monitor_agree():
    """metrics.tls: the agent serves HTTPS with the Secret's pair, the
    probes ask over HTTPS, and the ServiceMonitor scrapes https with the
    Secret's CA, checking the Service's name (the targets are pod IPs)."""
    docs = render(*ON, *TLS)
    (sec,) = [d for d in docs if d["kind"] == "Secret" and d["metadata"]["name"].endswith("-metrics-tls")]
    (ds,) = [d for d in docs if d["kind"] == "DaemonSet"]
    (sm,) = [d for d in docs if d["kind"] == "ServiceMonitor"]
    pod = ds["spec"]["template"]["spec"]
    c = pod["containers"][0]
    assert {"--metrics-tls-cert=/etc/oomlens-metrics/tls.crt",
            "--metrics-tls-key=/etc/oomlens-metrics/tls.key"} <= set(c["args"])
    assert c["livenessProbe"]["httpGet"]["scheme"] == "HTTPS"
    assert c["readinessProbe"]["httpGet"]["scheme"] == "HTTPS"
    (m,) = [m for m in c["volumeMounts"] if m["name"] == "metrics-tls"]
    assert (m["mountPath"], m["readOnly"]) == ("/etc/oomlens-metrics", True)
    (v,) = [v for v in pod["volumes"] if v["name"] == "metrics-tls"]
    assert v["secret"]["secretName"] == sec["metadata"]["name"]
    assert [i["key"] for i in v["secret"]["items"]] == ["tls.crt", "tls.key"]
    (ep,) = sm["spec"]["endpoints"]
    assert ep["scheme"] == "https"
    assert ep["tlsConfig"] == {"serverName": "oomlens-agent.oomlens-system.svc",
                               "ca": {"secret": {"name": sec["metadata"]["name"], "key": "ca.crt"}}}
    assert "bearerTokenFile" in ep
    # the pair is for that name and signed by that CA
    import base64
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        for k in ("tls.crt", "ca.crt"):
            open(os.path.join(d, k), "wb").write(base64.b64decode(sec["data"][k]))
        r = subprocess.run(["openssl", "verify", "-CAfile", os.path.join(d, "ca.crt"),
                            "-verify_hostname", "oomlens-agent.oomlens-system.svc", os.path.join(d, "tls.crt")],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stdout + r.stderr
    # off: plain HTTP everywhere, no Secret
    docs = render(*ON)
    (ds,) = [d for d in docs if d["kind"] == "DaemonSet"]
    c = ds["spec"]["template"]["spec"]["containers"][0]
    assert not [a for a in c["args"] if a.startswith("--metrics-tls")]
    assert c["readinessProbe"]["httpGet"]["scheme"] == "HTTP"
    assert not [d for d in docs if d["kind"] == "Secret" and "metrics" in d["metadata"]["name"]]
    (sm,) = [d for d in docs if d["kind"] == "ServiceMonitor"]
    assert "scheme" not in sm["spec"]["endpoints"][0]


def test_helm_test_asks_readyz_over_the_ports_scheme():
    """helm test: plain HTTP with busybox's wget; HTTPS with the agent's
    own image (`oomlens-agent probe`: busybox's TLS offers only SHA-1
    signatures, which the agent's OpenSSL refuses)."""
    def test_pod(*extra):
        (pod,) = [d for d in render(*extra) if d["metadata"]["name"].endswith("-test-readyz")]
        return pod["spec"]["containers"][0]
    c = test_pod()
    assert c["image"].startswith("busybox:")
    assert c["command"][-1] == "http://oomlens-agent.oomlens-system.svc:9477/readyz"
    c = test_pod(*TLS)
    (ds,) = [d for d in render(*TLS) if d["kind"] == "DaemonSet"]
    assert c["image"] == ds["spec"]["template"]["spec"]["containers"][0]["image"]
    assert c["args"] == ["probe", "--insecure", "--timeout", "10",
                         "https://oomlens-agent.oomlens-system.svc:9477/readyz"]
    c = test_pod(*TLS, "--set", "tests.readyzURL=http://127.0.0.1:9477/readyz")
    assert c["args"][-1] == "https://127.0.0.1:9477/readyz"


def test_metrics_tls_from_a_users_secret_or_cert_manager():
    docs = render(*ON, *TLS, "--set", "metrics.tls.secretName=corp-metrics",
                  "--set-json", 'metrics.serviceMonitor.tlsConfig={"insecureSkipVerify": true}')
    assert not [d for d in docs if d["kind"] == "Secret" and "metrics" in d["metadata"]["name"]]
    (ds,) = [d for d in docs if d["kind"] == "DaemonSet"]
    (v,) = [v for v in ds["spec"]["template"]["spec"]["volumes"] if v["name"] == "metrics-tls"]
    assert v["secret"]["secretName"] == "corp-metrics"
    (sm,) = [d for d in docs if d["kind"] == "ServiceMonitor"]
    assert sm["spec"]["endpoints"][0]["tlsConfig"] == {"insecureSkipVerify": True}
    # cert-manager: the Certificate writes the Secret the agent mounts
    docs = render(*TLS, "--set", "metrics.tls.certManager.enabled=true")
    certs = {d["metadata"]["name"]: d for d in docs if d["kind"] == "Certificate"}
    assert set(certs) == {"oomlens-agent", "oomlens-agent-ca"}, set(certs)
    assert certs["oomlens-agent"]["spec"]["secretName"] == "oomlens-agent-metrics-tls"
    assert certs["oomlens-agent"]["spec"]["dnsNames"][0] == "oomlens-agent.oomlens-system.svc"
    assert not [d for d in docs if d["kind"] == "Secret" and "metrics" in d["metadata"]["name"]]
    docs = render(*TLS, "--set", "metrics.tls.certManager.enabled=true",
                  "--set", "metrics.tls.certManager.issuerRef.name=corp",
                  "--set", "metrics.tls.certManager.issuerRef.kind=ClusterIssuer")
    certs = [d for d in docs if d["kind"] == "Certificate"]
    assert [c["spec"]["issuerRef"] for c in certs] == [{"name": "corp", "kind": "ClusterIssuer"}]
    assert not [d for d in docs if d["kind"] == "Issuer"]


def test_prometheus_rule_is_off_by_default_and_has_the_six_alerts():
    assert not [d for d in render() if d["kind"] == "PrometheusRule"]
    rules = rule_groups()[0]["rules"]
    assert [r["alert"] for r in rules] == ["OOMLensOOMPredicted", "OOMLensOOMKilled",
                                           "OOMLensPublishQueueStuck", "OOMLensKernelReportsLost",
                                           "OOMLensMetricsSeriesDropped", "OOMLensAgentDown"]
    for r in rules:
        assert r["labels"]["severity"] in ("info", "warning", "critical"), r
        anchor = r["runbook_url"] if "runbook_url" in r else r["annotations"]["runbook_url"]
        assert anchor.endswith("docs/metrics.md#" + r["alert"].lower()), anchor
        # the runbook exists, under the heading the anchor names
        assert re.search(r"^### %s$" % r["alert"], open(os.path.join(ROOT, "docs", "metrics.md")).read(),
                         re.M), r["alert"]
    custom = rule_groups("--set", "metrics.prometheusRule.forecastSeconds=120",
                         "--set", "metrics.prometheusRule.queueStuckFor=30m",
                         "--set", "metrics.prometheusRule.labels.release=kube-prom")
    assert "< 120" in custom[0]["rules"][0]["expr"]
    assert "[30m]" in custom[0]["rules"][2]["expr"]
    assert "30m" in custom[0]["rules"][2]["annotations"]["description"]
    assert objects("PrometheusRule", "--set", "metrics.prometheusRule.labels.release=kube-prom")[0][
        "metadata"]["labels"]["release"] == "kube-prom"


def test_alerts_and_panels_name_only_exported_metrics():
    have = exported_metrics()
    used = set()
    for r in rule_groups()[0]["rules"]:
        used |= named_metrics(r["expr"])
    (cm,) = objects("ConfigMap")
    dash = json.loads(cm["data"]["oomlens.json"])
    for p in dash["panels"]:
        for t in p["targets"]:
            used |= named_metrics(t["expr"])
    assert used and used <= have, used - have
    # every family but the build info and the trim counters is looked at
    assert {"oomlens_time_to_oom_seconds", "oomlens_oom_kills_total", "oomlens_publish_queue_depth",
            "oomlens_kmsg_reports_total", "oomlens_metrics_series_dropped_total"} <= used


def test_dashboard_groups_by_the_victim_and_the_node():
    """Kills by the victim's namespace, workload and container (honorLabels
    keeps them; the family has no pod label), the forecast by its pod, the
    node for the agent's own figures; never the scrape target's instance
    or exported_* labels; a forecast panel."""
    (cm,) = objects("ConfigMap")
    dash = json.loads(cm["data"]["oomlens.json"])
    exprs = [t["expr"] for p in dash["panels"] for t in p["targets"]]
    text = " ".join(exprs)
    assert "exported_" not in text and "by (instance)" not in text
    assert any("oomlens_time_to_oom_seconds" in e for e in exprs)
    for e in exprs:
        if "oomlens_oom_kills_total" in e:
            assert re.search(r"by \(namespace, (verdict|owner_kind, owner, container)\)", e), e
            assert "pod" not in e, e
            assert "unless oomlens_oom_kills_total offset" in e, e  # a new series' first kill
        if re.search(r"queue_depth|watched_cgroups|failures_total|kmsg_reports|series_dropped", e):
            assert "by (node" in e, e


# ---- the alerts, evaluated by Prometheus's own promtool ----

def promtool():
    """promtool: on PATH, in the cache, or extracted from Debian 12's
    prometheus package (apt-get download, then its ./usr/bin/promtool out
    of dpkg-deb --fsys-tarfile) into the cache."""
    found = shutil.which("promtool") or os.environ.get("OOMLENS_PROMTOOL")
    cached = os.path.join(PROM_CACHE, "usr", "bin", "promtool")
    for p in (found, cached):
        if p and os.access(p, os.X_OK):
            return p
    if os.geteuid() != 0:
        pytest.skip("no promtool and not root to fetch Debian's prometheus package")
    work = PROM_CACHE + ".tmp"
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    r = subprocess.run(["apt-get", "download", PROM_DEB], cwd=work, capture_output=True, text=True,
                       timeout=600)
    debs = [f for f in os.listdir(work) if f.endswith(".deb")]
    assert r.returncode == 0 and debs, "apt-get download prometheus: " + r.stderr[-1000:]
    deb = os.path.join(work, debs[0])
    # promtool alone (the package's other 90 MiB are Prometheus itself)
    subprocess.run("dpkg-deb --fsys-tarfile '%s' | tar -x -C '%s' ./usr/bin/promtool" % (deb, work),
                   shell=True, check=True, timeout=300)
    os.unlink(deb)
    shutil.rmtree(PROM_CACHE, ignore_errors=True)
    os.rename(work, PROM_CACHE)
    return cached


SM = {"job": "oomlens-agent", "namespace": "oomlens-system", "node": "node-a", "instance": "10.0.0.5:9477"}


def series(name, labels, values):
    return {"series": name + "{" + ",".join('%s="%s"' % kv for kv in sorted(labels.items())) + "}",
            "values": values}


def alert(name, when, labels=None, annotations=None):
    return {"eval_time": when, "alertname": name,
            "exp_alerts": [] if labels is None else [{"exp_labels": labels,
                                                      "exp_annotations": annotations}]}


def killed(book, when, owner, verdict):
    """OOMLensOOMKilled for one kill of container app in namespace shop, of
    a pod owned by owner ((kind, name)) or by nobody (None)."""
    labels = {"severity": "warning", "namespace": "shop", "container": "app", "verdict": verdict}
    if owner:
        labels.update(owner_kind=owner[0], owner=owner[1])
    return alert("OOMLensOOMKilled", when, labels, {
        "summary": "shop %s: container app OOM-killed (%s)" % (
            "%s/%s" % owner if owner else "(a pod without an owner)", verdict),
        "description": "1 OOM kill(s) in the last 10 minutes, verdict %s: kubectl oomlens list -n shop" % verdict,
        "runbook_url": book + "#oomlensoomkilled"})


def rule_tests(book):
    """Synthetic series (1 min steps) and what each alert must say. The
    victim's labels are the series' own, as honorLabels keeps them."""
    victim = dict(SM, namespace="shop", pod="web-7d9f", container="app")
    # kills are counted by workload, never by pod: a bare pod's owner is ""
    # (an empty label is no label to Prometheus)
    workload = dict(SM, namespace="shop", container="app", owner_kind="Deployment", owner="web")
    old = dict(workload, owner_kind="", owner="", verdict="limit-too-low")
    new = dict(workload, verdict="java-heap")
    dropped = dict(SM, family="oomlens_oom_kills_total")
    return [{
        "interval": "1m",
        "input_series": [
            series("oomlens_time_to_oom_seconds", victim, "_x4 50 40 stale"),
            series("oomlens_time_to_oom_seconds", dict(victim, container="idle"), "900x5"),
            # a workload's first kill at 15 min: the series appears at 1
            series("oomlens_oom_kills_total", new, "_x15 1x40"),
            # a series seen for long, one more kill at 31 min
            series("oomlens_oom_kills_total", old, "3x30 4x30"),
            series("oomlens_publish_queue_depth", SM, "0 0 2x25"),
            series("oomlens_kmsg_reports_total", dict(SM, complete="true"), "1x40"),
            series("oomlens_kmsg_reports_total", dict(SM, complete="false"), "_x7 1x30"),
            series("up", SM, "1x3 0x20"),
            # registered at 0 from the start; one series refused at 21 min
            series("oomlens_metrics_series_dropped_total", dropped, "0x20 1x20"),
            series("oomlens_metrics_series_dropped_total",
                   dict(SM, family="oomlens_time_to_oom_seconds"), "0x40"),
        ],
        "alert_rule_test": [
            alert("OOMLensOOMPredicted", "5m", {
                "severity": "warning", "namespace": "shop", "pod": "web-7d9f", "container": "app",
                "node": "node-a"}, {
                "summary": "shop/web-7d9f: container app reaches its memory limit in 40s",
                "description": "The agent on node-a forecasts an OOM kill of app in shop/web-7d9f "
                               "at its current memory growth.",
                "runbook_url": book + "#oomlensoompredicted"}),
            alert("OOMLensOOMPredicted", "8m"),  # the prediction went (the kill)
            alert("OOMLensOOMKilled", "12m"),  # nothing new
            killed(book, "16m", ("Deployment", "web"), "java-heap"),
            killed(book, "35m", None, "limit-too-low"),
            alert("OOMLensOOMKilled", "48m"),  # both kills over 10 minutes old
            alert("OOMLensPublishQueueStuck", "10m"),
            alert("OOMLensPublishQueueStuck", "18m", {
                "severity": "warning", "node": "node-a", "instance": "10.0.0.5:9477"}, {
                "summary": "node-a: 2 OOM kill(s) saved on the node and not published",
                "description": "The agent on node-a has had kills waiting in its publish queue "
                               "for 15m: their reports are not in the API yet.",
                "runbook_url": book + "#oomlenspublishqueuestuck"}),
            alert("OOMLensKernelReportsLost", "5m"),
            alert("OOMLensKernelReportsLost", "9m", {
                "severity": "info", "node": "node-a", "instance": "10.0.0.5:9477"}, {
                "summary": "node-a: kernel OOM reports read incomplete",
                "description": "1 kernel OOM report(s) on node-a lost lines in the last 30 minutes "
                               "(printk rate limit or ring overrun): their reports lack the kernel part.",
                "runbook_url": book + "#oomlenskernelreportslost"}),
            alert("OOMLensMetricsSeriesDropped", "10m"),  # all at 0
            alert("OOMLensMetricsSeriesDropped", "30m", {
                "severity": "warning", "node": "node-a", "instance": "10.0.0.5:9477",
                "family": "oomlens_oom_kills_total"}, {
                "summary": "node-a: metric oomlens_oom_kills_total is full, new series are not counted",
                "description": "The agent on node-a could not create 1 series of oomlens_oom_kills_total "
                               "in the last hour (its cap of 4096 label sets, or no memory): those updates "
                               "are missing from it.",
                "runbook_url": book + "#oomlensmetricsseriesdropped"}),
            alert("OOMLensAgentDown", "6m"),  # down for 3 min: not yet
            alert("OOMLensAgentDown", "10m", dict(SM, severity="critical"), {
                "summary": "oomlens agent 10.0.0.5:9477 is not scraped",
                "description": "An oomlens agent (or every one) has not answered /metrics for a "
                               "while: OOM kills on its node are not explained.",
                "runbook_url": book + "#oomlensagentdown"}),
        ]}, {
        # no agent scraped at all (the ServiceMonitor selects nothing)
        "interval": "1m",
        "input_series": [series("oomlens_watched_cgroups", SM, "5x10")],
        "alert_rule_test": [
            alert("OOMLensAgentDown", "2m"),
            alert("OOMLensAgentDown", "7m", {"severity": "critical", "job": "oomlens-agent",
                                             "namespace": "oomlens-system"}, {
                "summary": "no oomlens agent is scraped",
                "description": "An oomlens agent (or every one) has not answered /metrics for a "
                               "while: OOM kills on its node are not explained.",
                "runbook_url": book + "#oomlensagentdown"}),
        ]}]


def test_alerts_fire_on_their_series_and_only_then(tmp_path):
    tool = promtool()
    groups = rule_groups()
    (rules_file := tmp_path / "oomlens-rules.yaml").write_text(yaml.safe_dump({"groups": groups}))
    r = subprocess.run([tool, "check", "rules", str(rules_file)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "SUCCESS: 6 rules found" in r.stdout, r.stdout + r.stderr
    book = groups[0]["rules"][0]["annotations"]["runbook_url"].split("#")[0]
    tests = tmp_path / "oomlens-rules-test.yaml"
    tests.write_text(yaml.safe_dump({"rule_files": [rules_file.name], "evaluation_interval": "1m",
                                     "tests": rule_tests(book)}))
    r = subprocess.run([tool, "test", "rules", str(tests)], capture_output=True, text=True, timeout=120,
                       cwd=str(tmp_path))
    assert r.returncode == 0 and "SUCCESS" in r.stdout, r.stdout + r.stderr


def test_promtool_catches_a_wrong_expectation(tmp_path):
    """The harness can fail: the same series with the kill alert expected
    one evaluation too early (the first kill's series is not there yet)."""
    tool = promtool()
    groups = rule_groups()
    (tmp_path / "r.yaml").write_text(yaml.safe_dump({"groups": groups}))
    book = groups[0]["rules"][0]["annotations"]["runbook_url"].split("#")[0]
    cases = rule_tests(book)
    t = cases[0]["alert_rule_test"]
    good = next(a for a in t if a["alertname"] == "OOMLensOOMKilled" and a["eval_time"] == "16m")
    cases[0]["alert_rule_test"] = [dict(good, eval_time="14m")]
    (tests := tmp_path / "t.yaml").write_text(yaml.safe_dump({"rule_files": ["r.yaml"], "tests": cases[:1]}))
    r = subprocess.run([tool, "test", "rules", str(tests)], capture_output=True, text=True, timeout=120,
                       cwd=str(tmp_path))
    assert r.returncode != 0 and "FAILED" in (r.stdout + r.stderr), r.stdout + r.stderr


# ---- offline validation against the published CRD schemas ----

def crd_schema(plural):
    crd = yaml.safe_load(open(os.path.join(FIXTURES, "monitoring.coreos.com_%s.yaml" % plural)))
    (v,) = [v for v in crd["spec"]["versions"] if v["name"] == "v1"]
    return v["schema"]["openAPIV3Schema"]


def violations(obj, schema, path="$"):
    """Structural-schema checks as the API server makes them for a custom
    resource: types, enums, required, patterns, and fields the schema does
    not know (the API server would prune them silently: a typo'd field
    would be lost). x-kubernetes-int-or-string and preserve-unknown-fields
    honoured."""
    out = []
    if schema.get("x-kubernetes-int-or-string"):
        if not isinstance(obj, (int, str)) or isinstance(obj, bool):
            out.append("%s: not int-or-string" % path)
        return out
    t = schema.get("type")
    types = {"object": dict, "array": list, "string": str, "boolean": bool, "integer": int,
             "number": (int, float)}
    if t and not isinstance(obj, types[t]) or (t in ("integer", "number") and isinstance(obj, bool)):
        return ["%s: %r is not %s" % (path, obj, t)]
    if "enum" in schema and obj not in schema["enum"]:
        out.append("%s: %r not in %s" % (path, obj, schema["enum"]))
    if "pattern" in schema and isinstance(obj, str) and not re.search(schema["pattern"], obj):
        out.append("%s: %r does not match %s" % (path, obj, schema["pattern"]))
    if "minLength" in schema and isinstance(obj, str) and len(obj) < schema["minLength"]:
        out.append("%s: shorter than %d" % (path, schema["minLength"]))
    if isinstance(obj, dict):
        for req in schema.get("required", []):
            if req not in obj:
                out.append("%s: %s required" % (path, req))
        props = schema.get("properties", {})
        for k, v in obj.items():
            if k in props:
                out += violations(v, props[k], path + "." + k)
            elif "additionalProperties" in schema and isinstance(schema["additionalProperties"], dict):
                out += violations(v, schema["additionalProperties"], path + "." + k)
            elif not schema.get("x-kubernetes-preserve-unknown-fields") and path != "$.metadata":
                out.append("%s.%s: unknown field" % (path, k))
    if isinstance(obj, list) and "items" in schema:
        for i, v in enumerate(obj):
            out += violations(v, schema["items"], "%s[%d]" % (path, i))
    return out


@pytest.mark.parametrize("kind,plural", [("ServiceMonitor", "servicemonitors"),
                                         ("PrometheusRule", "prometheusrules")])
def test_objects_validate_against_the_published_crds(kind, plural):
    schema = crd_schema(plural)
    for extra in ([], ["--set", "metrics.insecure=true"],
                  ["--set", "metrics.tls.enabled=true"]):
        (obj,) = objects(kind, *extra)
        assert violations(obj, schema) == [], kind
    # the checker sees what it is for
    bad = json.loads(json.dumps(obj))
    if kind == "ServiceMonitor":
        bad["spec"]["endpoints"][0]["honorLabels"] = "yes"
        bad["spec"]["endpoints"][0]["relabellings"] = []
    else:
        bad["spec"]["groups"][0]["rules"][0]["for"] = "five minutes"
        bad["spec"]["groups"][0]["nmae"] = "x"
    assert len(violations(bad, schema)) == 2, violations(bad, schema)


def test_fixture_readme_names_source_and_version():
    readme = open(os.path.join(FIXTURES, "README.md")).read()
    for plural in ("servicemonitors", "prometheusrules"):
        crd = yaml.safe_load(open(os.path.join(FIXTURES, "monitoring.coreos.com_%s.yaml" % plural)))
        assert crd["metadata"]["annotations"]["operator.prometheus.io/version"] in readme
        assert "monitoring.coreos.com_%s.yaml" % plural in readme
