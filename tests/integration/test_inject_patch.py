# SPDX-License-Identifier: Apache-2.0
"""The injector's patches applied by a JSON Patch implementation that is
not ours (Python's jsonpatch, RFC 6902), and the pods that result checked
as Kubernetes would check them (the fields the API server validates for
what the patch touches). Then the webhook itself over TLS: /healthz, a
review, garbage, a certificate swapped under it. No real OOM kill here:
no lock needed."""
import base64
import copy
import json
import os
import socket
import ssl
import subprocess
import time
import urllib.request

import jsonpatch
import pytest

from oomtest import free_port

TOP = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
BUILD = os.environ.get("OOMLENS_BUILD", os.path.join(TOP, "build"))
AGENT = os.path.join(BUILD, "bin", "oomlens-agent")
IMAGE = "oomlens-sidecar:test"
NMT = "-XX:NativeMemoryTracking=summary"
FIELD_PATHS = {"metadata.name", "metadata.namespace", "metadata.uid",
               "spec.nodeName", "metadata.annotations", "metadata.labels"}


def review(pod, op="CREATE", uid="u-1"):
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "request": {"uid": uid, "kind": {"group": "", "version": "v1",
                                             "kind": "Pod"},
                        "resource": {"group": "", "version": "v1",
                                     "resource": "pods"},
                        "operation": op, "namespace": "ns", "object": pod}}


def pod(spec, annotations=None, labels=None):
    meta = {"name": "p", "namespace": "ns"}
    if annotations is not None:
        meta["annotations"] = annotations
    if labels is not None:
        meta["labels"] = labels
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": spec}


CAPTURE = {"oomlens.io/capture": "true"}


def inject(rv, native=False, raw=None):
    """Runs `oomlens-agent inject-review`; returns the response object."""
    data = raw if raw is not None else json.dumps(rv).encode()
    p = subprocess.run([AGENT, "inject-review", "--sidecar-image", IMAGE,
                        "--native-sidecars", "true" if native else "false"],
                       input=data, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=60)
    assert p.returncode == 0, p.stderr.decode()
    out = json.loads(p.stdout)
    assert out["kind"] == "AdmissionReview"
    assert out["response"]["allowed"] is True
    return out["response"]


def applied(pod_obj, resp):
    """The pod after the response's patch, applied by jsonpatch."""
    if "patch" not in resp:
        return pod_obj
    assert resp["patchType"] == "JSONPatch"
    ops = json.loads(base64.b64decode(resp["patch"]))
    return jsonpatch.JsonPatch(ops).apply(copy.deepcopy(pod_obj))


def check_env(env, where):
    names = [e["name"] for e in env]
    for e in env:
        assert isinstance(e["name"], str) and e["name"], where
        assert ("value" in e) + ("valueFrom" in e) <= 1, (where, e)
        vf = e.get("valueFrom")
        if vf:
            assert len(vf) == 1, (where, e)
            if "fieldRef" in vf:
                assert vf["fieldRef"]["fieldPath"] in FIELD_PATHS, e
    return names


def validate_pod(p):
    """What the API server checks for the parts the patch touches."""
    spec = p["spec"]
    assert spec["containers"], "a pod needs a container"
    vols = [v["name"] for v in spec.get("volumes", [])]
    assert len(vols) == len(set(vols)), f"duplicate volumes {vols}"
    for v in spec.get("volumes", []):
        sources = [k for k in v if k != "name"]
        assert len(sources) == 1, f"volume {v['name']}: {sources}"
    all_c = spec.get("initContainers", []) + spec["containers"]
    names = [c["name"] for c in all_c]
    assert len(names) == len(set(names)), f"duplicate containers {names}"
    for c in all_c:
        assert c.get("image"), f"container {c['name']} has no image"
        check_env(c.get("env", []), c["name"])
        for m in c.get("volumeMounts", []):
            assert m["name"] in vols, f"{c['name']}: mount {m['name']}"
            assert m["mountPath"].startswith("/")
        if "restartPolicy" in c:
            assert c in spec.get("initContainers", []), \
                "restartPolicy only on init containers"
            assert c["restartPolicy"] == "Always"
        for ref in (e["valueFrom"]["resourceFieldRef"]
                    for e in c.get("env", [])
                    if "resourceFieldRef" in e.get("valueFrom", {})):
            assert ref["containerName"] in names


def sidecar_of(p, native):
    where = p["spec"]["initContainers" if native else "containers"]
    found = [c for c in where if c["name"] == "oomlens-sidecar"]
    assert len(found) == 1
    return found[0]


def app(name, **kw):
    c = {"name": name, "image": "busybox"}
    c.update(kw)
    return c


@pytest.mark.parametrize("native", [False, True])
def test_annotated_pod_patched_valid_and_idempotent(native):
    before = pod({"containers": [app("web"), app("side.car")],
                  "initContainers": [app("init")]},
                 annotations=dict(CAPTURE), labels={"app": "x"})
    resp = inject(review(before), native)
    after = applied(before, resp)
    validate_pod(after)
    s = sidecar_of(after, native)
    assert s["image"] == IMAGE
    assert s["securityContext"]["capabilities"] == {
        "drop": ["ALL"],
        "add": ["SYS_PTRACE", "SETUID", "SETGID", "KILL", "DAC_READ_SEARCH"]}
    assert s["securityContext"]["readOnlyRootFilesystem"] is True
    env = {e["name"]: e for e in s["env"]}
    assert env["POD_UID"]["valueFrom"]["fieldRef"]["fieldPath"] == \
        "metadata.uid"
    assert env["NODE_NAME"]["valueFrom"]["fieldRef"]["fieldPath"] == \
        "spec.nodeName"
    assert env["OOMLENS_LIMIT_SIDE_CAR"]["valueFrom"]["resourceFieldRef"] \
        == {"containerName": "side.car", "resource": "limits.memory"}
    assert {m["mountPath"] for m in s["volumeMounts"]} == \
        {"/var/run/oomlens-spool", "/etc/oomlens"}
    if native:
        assert after["spec"]["initContainers"][0]["name"] == "init"
    assert after["spec"]["shareProcessNamespace"] is True
    vols = {v["name"]: v for v in after["spec"]["volumes"]}
    assert vols["oomlens-spool"]["emptyDir"]["sizeLimit"] == "256Mi"
    assert [i["fieldRef"]["fieldPath"] for i in
            vols["oomlens-podinfo"]["downwardAPI"]["items"]] == \
        ["metadata.annotations", "metadata.labels"]
    assert after["metadata"]["annotations"]["oomlens.io/injected"] == \
        "oomlens-sidecar"
    assert after["metadata"]["annotations"]["oomlens.io/capture"] == "true"
    for c in after["spec"]["containers"]:
        if c["name"] != "oomlens-sidecar":
            assert {"name": "OOMLENS_CONTAINER", "value": c["name"]} in \
                c["env"]
    # the API server calls again after another webhook changed the pod
    # (reinvocationPolicy IfNeeded): nothing more
    again = inject(review(after), native)
    assert "patch" not in again and "warnings" not in again


def test_unannotated_pod_untouched():
    before = pod({"containers": [app("web")]}, annotations={"a": "b"})
    resp = inject(review(before))
    assert resp == {"uid": "u-1", "allowed": True}


def test_existing_java_tool_options_extended_never_replaced():
    before = pod({"containers": [
        app("a"),
        app("b", env=[{"name": "JAVA_TOOL_OPTIONS", "value": "-Xmx1g"}]),
        app("c", env=[{"name": "JAVA_TOOL_OPTIONS", "valueFrom": {
            "configMapKeyRef": {"name": "m", "key": "k"}}}]),
        app("d", env=[{"name": "X", "value": "1"}])]},
        annotations={**CAPTURE, "oomlens.io/jvm-nmt": "true"})
    resp = inject(review(before))
    after = applied(before, resp)
    validate_pod(after)
    jto = {c["name"]: {e["name"]: e for e in c.get("env", [])}
           .get("JAVA_TOOL_OPTIONS") for c in after["spec"]["containers"]}
    assert jto["a"]["value"] == NMT
    assert jto["b"]["value"] == "-Xmx1g " + NMT
    assert "valueFrom" in jto["c"] and "value" not in jto["c"]
    assert jto["d"]["value"] == NMT
    assert [e["name"] for e in after["spec"]["containers"][3]["env"]][0] \
        == "X", "appended, the user's env first"
    assert any("container c" in w for w in resp["warnings"])


@pytest.mark.parametrize("spec,why", [
    ({"hostPID": True}, "hostPID"),
    ({"shareProcessNamespace": False}, "shareProcessNamespace: false"),
])
def test_refused_pods_admitted_unchanged_with_warning(spec, why):
    before = pod({"containers": [app("web")], **spec},
                 annotations=dict(CAPTURE))
    resp = inject(review(before))
    assert "patch" not in resp
    assert len(resp["warnings"]) == 1 and why in resp["warnings"][0]


@pytest.mark.parametrize("raw", [b"", b"{", b"\x00\xff", b"[1,2]",
                                 b'{"request": 5}'])
def test_malformed_review_allowed_with_warning(raw):
    resp = inject(None, raw=raw)
    assert "patch" not in resp
    assert "could not be read" in resp["warnings"][0]


def test_huge_pod_patch_applies():
    cs = [app(f"c{i}", env=[{"name": f"V{j}", "value": str(j)}
                            for j in range(100)]) for i in range(300)]
    before = pod({"containers": cs, "volumes": [
        {"name": f"v{i}", "emptyDir": {}} for i in range(100)]},
        annotations={**CAPTURE, "oomlens.io/jvm-nmt": "true",
                     "a~b/c": "escaped"})
    after = applied(before, inject(review(before)))
    validate_pod(after)
    assert len(after["spec"]["containers"]) == 301
    assert len(after["spec"]["volumes"]) == 102
    assert all(len(c["env"]) == 102 for c in after["spec"]["containers"]
               if c["name"] != "oomlens-sidecar")
    assert after["metadata"]["annotations"]["a~b/c"] == "escaped"


# ---- the webhook itself, over TLS ----

def make_cert(d, name, cn="localhost"):
    key, crt = os.path.join(d, name + ".key"), os.path.join(d, name + ".crt")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048",
                    "-nodes", "-keyout", key, "-out", crt, "-days", "1",
                    "-subj", "/CN=" + cn, "-addext",
                    "subjectAltName=DNS:localhost,IP:127.0.0.1"],
                   check=True, capture_output=True)
    return crt, key


def peer_cn(port):
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        with ctx.wrap_socket(s, server_hostname="localhost") as t:
            der = t.getpeercert(binary_form=True)
    return ssl.DER_cert_to_PEM_cert(der)


@pytest.fixture
def webhook(tmp_path):
    crt, key = make_cert(str(tmp_path), "a", "first")
    port = free_port()
    p = subprocess.Popen([AGENT, "webhook", "--tls-cert", crt, "--tls-key",
                          key, "--addr", f"127.0.0.1:{port}",
                          "--sidecar-image", IMAGE, "--native-sidecars",
                          "false", "--cert-check-interval", "1"],
                         stderr=subprocess.PIPE)
    ctx = ssl.create_default_context(cafile=crt)
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.05)
    yield p, port, ctx, crt, key, tmp_path
    p.terminate()
    err = p.communicate(timeout=10)[1].decode()
    assert p.returncode == 0, err
    assert "seccomp on" in err or "sanitizer" in err or "off" in err, err


def post(port, ctx, body, path="/mutate-pods"):
    rq = urllib.request.Request(f"https://localhost:{port}{path}",
                                data=body, method="POST",
                                headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(rq, context=ctx, timeout=10) as r:
        return r.status, r.read()


def test_webhook_serves_reviews_over_tls(webhook):
    p, port, ctx, *_ = webhook
    with urllib.request.urlopen(f"https://localhost:{port}/healthz",
                                context=ctx, timeout=10) as r:
        assert (r.status, r.read()) == (200, b"ok\n")
    before = pod({"containers": [app("web")]}, annotations=dict(CAPTURE))
    st, body = post(port, ctx, json.dumps(review(before, uid="x-9")).encode())
    assert st == 200
    resp = json.loads(body)["response"]
    assert resp["uid"] == "x-9"
    validate_pod(applied(before, resp))
    st, body = post(port, ctx, b"\x00not json")
    assert st == 200, "malformed: allowed with a warning, never a 500"
    assert json.loads(body)["response"]["allowed"] is True
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(f"https://localhost:{port}/other",
                               context=ctx, timeout=10)
    assert e.value.code == 404
    assert p.poll() is None


def test_webhook_reloads_its_certificate(webhook):
    p, port, ctx, crt, key, tmp = webhook
    first = peer_cn(port)
    assert first.strip() == open(crt).read().strip()
    crt2, key2 = make_cert(str(tmp), "b", "second")
    # a Secret volume swaps the files: rename over both
    os.rename(key2, key)
    os.rename(crt2, crt)
    want = open(crt).read()
    for _ in range(50):
        if peer_cn(port).strip() == want.strip():
            break
        time.sleep(0.2)
    assert peer_cn(port).strip() == want.strip(), "new certificate served"
    assert want.strip() != first.strip()
    ctx2 = ssl.create_default_context(cafile=crt)
    st, _ = post(port, ctx2, b"{}")
    assert st == 200


def test_webhook_large_review_in_many_chunks(webhook):
    """A review of about 3 MiB (the API server's request limit) arrives
    in many TLS records; one over 8 MiB is refused with 413."""
    p, port, ctx, *_ = webhook
    cs = [app(f"c{i}", env=[{"name": f"V{j}", "value": "x" * 60}
                            for j in range(100)]) for i in range(300)]
    before = pod({"containers": cs}, annotations=dict(CAPTURE))
    body = json.dumps(review(before)).encode()
    assert len(body) > 2 << 20
    st, out = post(port, ctx, body)
    assert st == 200
    after = applied(before, json.loads(out)["response"])
    validate_pod(after)
    assert after["spec"]["containers"][-1]["name"] == "oomlens-sidecar"
    with pytest.raises(urllib.error.HTTPError) as e:
        post(port, ctx, b" " * (9 << 20))
    assert e.value.code == 413
    assert p.poll() is None
