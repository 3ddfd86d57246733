# SPDX-License-Identifier: Apache-2.0
"""Opting in under Pod Security, on the real node (docs/injector.md, Pod
Security). Kubernetes 1.20 has no Pod Security admission: the namespaces
carry the `pod-security.kubernetes.io/enforce` labels a 1.23+ cluster
enforces, the chart's four webhooks send their pods to the level's path,
and the pods the API server stored are checked with `oomlens-agent
pss-check`, the function the admission's rules are written down in
(docs/security.md). Each injected pod must run, and a JVM under
restricted, whose sidecar has its uid and no capability, is OOM-killed
and reported with the sidecar's pre-kill snapshot."""
import base64
import glob
import json
import os
import subprocess

import pytest

from conftest import AGENT_NS, BUILD, agent_pods, recreate_namespace
from kube import ApiError
from test_injector import (BUSYBOX, JRE, VICTIMS, bundle_files,
                           compile_victim, injector,  # noqa: F401
                           wait_ready_report)

AGENT = os.path.join(BUILD, "bin", "oomlens-agent")
LEVELS = ("baseline", "restricted")
NS = {lv: f"oomlens-pss-{lv}" for lv in LEVELS}
HARDENED = {"allowPrivilegeEscalation": False,
            "capabilities": {"drop": ["ALL"]},
            "seccompProfile": {"type": "RuntimeDefault"}}
IDS = {"runAsUser": 1000, "runAsGroup": 1000, "runAsNonRoot": True}


@pytest.fixture(scope="module")
def levels(injector):  # noqa: F811
    """The two namespaces, opted in, each labelled with its level."""
    for lv in LEVELS:
        recreate_namespace(injector, NS[lv], {
            "oomlens.io/injection": "enabled",
            "pod-security.kubernetes.io/enforce": lv})
    yield injector
    for lv in LEVELS:
        try:
            injector.delete(f"/api/v1/namespaces/{NS[lv]}")
        except ApiError:
            pass


def pss_check(pod, level):
    r = subprocess.run([AGENT, "pss-check", "--level", level],
                       input=json.dumps(pod), capture_output=True, text=True,
                       timeout=60)
    assert r.returncode in (0, 1), r.stderr
    return r.returncode == 0, r.stdout


def sleeper(name, ns, pod_sc=None, app_sc=None):
    spec = {"terminationGracePeriodSeconds": 0,
            "containers": [{"name": "app", "image": BUSYBOX,
                            "imagePullPolicy": "Never",
                            "command": ["sleep", "3600"],
                            "resources": {"limits": {"memory": "64Mi"}}}]}
    if pod_sc:
        spec["securityContext"] = pod_sc
    if app_sc:
        spec["containers"][0]["securityContext"] = app_sc
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": ns,
                         "annotations": {"oomlens.io/capture": "true"}},
            "spec": spec}


def sidecar(pod):
    found = [c for c in pod["spec"]["containers"]
             if c["name"] == "oomlens-sidecar"]
    return found[0] if found else None


def both_running(kube, ns, name):
    """The app and the sidecar running, neither restarted."""
    def get():
        st = kube.pod(ns, name).get("status", {})
        up = {cs["name"] for cs in st.get("containerStatuses", [])
              if "running" in cs.get("state", {}) and
              cs.get("restartCount", 0) == 0}
        return st if up == {"app", "oomlens-sidecar"} else None
    return kube.wait(get, 90, f"{ns}/{name}'s app and sidecar running")


def sidecar_log_with(kube, ns, name, text, timeout=60):
    """The sidecar's log once it has text; its tail in the failure."""
    got = [""]

    def has():
        got[0] = kube.log(ns, name, "oomlens-sidecar")
        return got[0] if text in got[0] else None
    try:
        return kube.wait(has, timeout, f"{text!r} in {ns}/{name}'s sidecar")
    except AssertionError as e:
        raise AssertionError(f"{e}\n{got[0][-3000:]}")


@pytest.mark.parametrize("level", LEVELS)
def test_app_uid_sidecar_admitted_and_runs(levels, level):
    """A pod that states its ids gets a sidecar with those ids and no
    capability; the stored pod passes its namespace's level; both
    containers run (the sidecar found the app as its own uid)."""
    kube = levels
    ns = NS[level]
    made = kube.create(f"/api/v1/namespaces/{ns}/pods",
                       sleeper("ids", ns, dict(IDS), dict(HARDENED)))
    ok, why = pss_check(made, level)
    assert ok, f"{level} would refuse the injected pod: {why}"
    side = sidecar(made)
    assert side, made["metadata"].get("annotations")
    sc = side["securityContext"]
    assert (sc["runAsUser"], sc["runAsGroup"], sc["runAsNonRoot"]) == \
        (1000, 1000, True)
    assert sc["capabilities"] == {"drop": ["ALL"]}
    env = {e["name"]: e.get("value") for e in side["env"]}
    assert env["OOMLENS_POD_SECURITY"] == level
    both_running(kube, ns, "ids")
    # logfmt: the quotes inside msg are escaped
    log = sidecar_log_with(kube, ns, "ids", r'recording container \"app\"')
    assert "through its cgroup" in log, log[-2000:]


def test_baseline_without_uid_gets_the_root_setid_sidecar(levels):
    kube = levels
    ns = NS["baseline"]
    made = kube.create(f"/api/v1/namespaces/{ns}/pods", sleeper("noids", ns))
    ok, why = pss_check(made, "baseline")
    assert ok, why
    side = sidecar(made)
    sc = side["securityContext"]
    assert sc["runAsUser"] == 0
    assert sc["capabilities"] == {"drop": ["ALL"],
                                  "add": ["SETUID", "SETGID", "KILL"]}
    # and restricted would have refused that one
    assert not pss_check(made, "restricted")[0]
    both_running(kube, ns, "noids")


def test_restricted_without_uid_is_left_alone_and_said(levels):
    kube = levels
    ns = NS["restricted"]
    made = kube.create(f"/api/v1/namespaces/{ns}/pods",
                       sleeper("noids", ns, {"runAsNonRoot": True},
                               dict(HARDENED)))
    assert [c["name"] for c in made["spec"]["containers"]] == ["app"]
    why = made["metadata"]["annotations"]["oomlens.io/not-injected"]
    assert "Pod Security restricted" in why and "runAsUser" in why, why
    assert "shareProcessNamespace" not in made["spec"]
    ok, out = pss_check(made, "restricted")
    assert ok, out


def heap_grower_pod(kube, ns, name, ids=True):
    """HeapGrower (1 GiB heap in a 256 MiB container, 16 MiB/s after 8 s)
    as uid 1000 under restricted (ids=False: as the image's root, with the
    runtime's default capabilities): its classes from a ConfigMap (a
    hostPath would break baseline)."""
    compile_victim("HeapGrower")
    data = {os.path.basename(f): base64.b64encode(open(f, "rb").read())
            .decode() for f in glob.glob(os.path.join(VICTIMS,
                                                      "HeapGrower*.class"))}
    assert data
    kube.create(f"/api/v1/namespaces/{ns}/configmaps", {
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "victims", "namespace": ns},
        "binaryData": data})
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": name, "namespace": ns,
                        "annotations": {"oomlens.io/capture": "true"}},
           "spec": {"restartPolicy": "Never",
                    "terminationGracePeriodSeconds": 0,
                    "securityContext": dict(
                        IDS, seccompProfile={"type": "RuntimeDefault"}),
                     "containers": [{
                         "name": "app", "image": JRE,
                         "imagePullPolicy": "Never",
                         "command": ["java", "-Xmx1g", "-XX:+UseSerialGC",
                                     "-cp", "/victims", "HeapGrower", "16",
                                     "8000"],
                         "securityContext": {
                             "allowPrivilegeEscalation": False,
                             "capabilities": {"drop": ["ALL"]}},
                         "resources": {"requests": {"memory": "64Mi"},
                                       "limits": {"memory": "256Mi"}},
                         "volumeMounts": [{"name": "victims",
                                           "mountPath": "/victims",
                                           "readOnly": True}]}],
                     "volumes": [{"name": "victims",
                                  "configMap": {"name": "victims"}}]}}
    if not ids:
        del pod["spec"]["securityContext"]
        del pod["spec"]["containers"][0]["securityContext"]
    return pod


def test_restricted_jvm_kill_reported_with_the_sidecars_snapshot(levels):
    """The sidecar as the JVM's uid, without a capability, attaches to it
    and snapshots it before the kill; the report is java-heap and its
    bundle says the level and what the sidecar could not capture."""
    kube = levels
    ns = NS["restricted"]
    name = "jvm-restricted"
    made = kube.create(f"/api/v1/namespaces/{ns}/pods",
                       heap_grower_pod(kube, ns, name))
    ok, why = pss_check(made, "restricted")
    assert ok, why
    assert sidecar(made), made["metadata"].get("annotations")
    reports = f"/apis/oomlens.io/v1alpha1/namespaces/{ns}/oomreports"

    def story():
        try:
            return kube.log(ns, name, "oomlens-sidecar")[-3000:]
        except ApiError:
            return ""
    r = wait_ready_report(kube, reports, name, story)
    spec = r["spec"]
    assert spec["verdict"] == "java-heap", spec
    files = bundle_files(kube, r["metadata"]["name"],
                         f"/apis/oomlens.io/v1alpha1/namespaces/{ns}/"
                         "oombundles")
    jvm = [f for f in files if f.startswith("processes/") and
           f.endswith("/jvm/heap_info.json")]
    assert jvm, sorted(files)
    # the JVM's memory map, read as its uid without SYS_PTRACE
    snaps = [json.loads(files[f]) for f in files
             if f.startswith("processes/") and f.endswith("/snapshot.json")]
    java = [s for s in snaps if s["name"] == "java"]
    assert java and java[0]["rss_kb"] > 0, snaps
    assert "smaps_rollup" in java[0]["files"], java[0]
    # what the sidecar ran as, carried by the agent into the manifest
    cap = json.loads(files["manifest.json"])["capture"]
    assert (cap["pod_security"], cap["uid"], cap["gid"],
            cap["capabilities"]) == ("restricted", 1000, 1000, []), cap
    missed = {n["what"] for n in cap["not_captured"]}
    assert "smaps" not in missed and "jvm attach" not in missed, cap
    assert missed <= {"allocator probe"}, cap


def agent_story(kube):
    """The agent's lines about spools and the capture (why a bundle has no
    sidecar part), for a failure's message."""
    out = []
    for p in agent_pods(kube):
        log = kube.log(AGENT_NS, p["metadata"]["name"], "agent")
        out += [ln for ln in log.splitlines()
                if "spool" in ln or "capture" in ln or "warn" in ln]
    return "\n".join(out[-40:])


def test_baseline_root_jvm_kill_reported_and_what_was_missed_said(levels):
    """Under baseline a pod that states no uid gets the root sidecar with
    SETUID/SETGID/KILL only; its JVM runs as root with the runtime's
    default capabilities, which that sidecar may not read: the kill is
    still reported (the agent's own evidence), and the bundle says what
    the sidecar missed and why."""
    kube = levels
    ns = NS["baseline"]
    name = "jvm-root"
    made = kube.create(f"/api/v1/namespaces/{ns}/pods",
                       heap_grower_pod(kube, ns, name, ids=False))
    ok, why = pss_check(made, "baseline")
    assert ok, why
    assert sidecar(made)["securityContext"]["runAsUser"] == 0
    reports = f"/apis/oomlens.io/v1alpha1/namespaces/{ns}/oomreports"

    def story():
        try:
            return kube.log(ns, name, "oomlens-sidecar")[-3000:]
        except ApiError:
            return ""
    r = wait_ready_report(kube, reports, name, story)
    assert r["spec"]["container"] == "app" and r["spec"]["verdict"], r
    files = bundle_files(kube, r["metadata"]["name"],
                         f"/apis/oomlens.io/v1alpha1/namespaces/{ns}/"
                         "oombundles")
    man = json.loads(files["manifest.json"])
    if "capture" not in man:
        print("bundle:", sorted(files), "\nsidecar:", story(),
              "\nagent:", agent_story(kube))
    assert "capture" in man, "no sidecar spool in the bundle"
    cap = man["capture"]
    assert (cap["pod_security"], cap["uid"], cap["capabilities"]) == \
        ("baseline", 0, ["KILL", "SETGID", "SETUID"]), cap
    missed = {n["what"]: n["why"] for n in cap["not_captured"]}
    assert "smaps" in missed or "cgroup" in missed, (cap, story())
