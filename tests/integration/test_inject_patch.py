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
import urllib.error
import urllib.request

import jsonpatch
import pytest

from oomtest import free_port, make_cert, swap_cert_and_wait

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


def inject(rv, native=False, raw=None, level=None):
    """Runs `oomlens-agent inject-review`; returns the response object."""
    data = raw if raw is not None else json.dumps(rv).encode()
    extra = ["--pod-security", level] if level else []
    p = subprocess.run([AGENT, "inject-review", "--sidecar-image", IMAGE,
                        "--native-sidecars", "true" if native else "false",
                        *extra],
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


def pss_check(p, level):
    """`oomlens-agent pss-check`: (admitted, its lines)."""
    r = subprocess.run([AGENT, "pss-check", "--level", level],
                       input=json.dumps(p), capture_output=True, text=True,
                       timeout=60)
    assert r.returncode in (0, 1), r.stderr
    return r.returncode == 0, r.stdout


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
    ({"volumes": [{"name": "oomlens-spool", "hostPath": {"path": "/"}}]},
     "own volume oomlens-spool (hostPath)"),
])
def test_refused_pods_admitted_unchanged_with_warning(spec, why):
    before = pod({"containers": [app("web")], **spec},
                 annotations=dict(CAPTURE))
    resp = inject(review(before))
    assert len(resp["warnings"]) == 1 and why in resp["warnings"][0]
    after = applied(before, resp)
    assert after["spec"] == before["spec"]
    assert after["metadata"]["annotations"] == dict(
        CAPTURE, **{"oomlens.io/not-injected":
                    resp["warnings"][0].removeprefix("oomlens: ")})


@pytest.mark.parametrize("raw", [b"", b"{", b"\x00\xff", b"[1,2]",
                                 b'{"request": 5}'])
def test_malformed_review_allowed_with_warning(raw):
    resp = inject(None, raw=raw)
    assert "patch" not in resp
    assert "could not be read" in resp["warnings"][0]


def test_huge_pod_patch_applies():
    """300 containers of 40 variables each, 100 volumes: about the largest
    pod the injector reads (a 14 MiB tree; over 16 MiB it admits the pod
    unread)."""
    cs = [app(f"c{i}", env=[{"name": f"V{j}", "value": str(j)}
                            for j in range(40)]) for i in range(300)]
    before = pod({"containers": cs, "volumes": [
        {"name": f"v{i}", "emptyDir": {}} for i in range(100)]},
        annotations={**CAPTURE, "oomlens.io/jvm-nmt": "true",
                     "a~b/c": "escaped"})
    after = applied(before, inject(review(before)))
    validate_pod(after)
    assert len(after["spec"]["containers"]) == 301
    assert len(after["spec"]["volumes"]) == 102
    assert all(len(c["env"]) == 42 for c in after["spec"]["containers"]
               if c["name"] != "oomlens-sidecar")
    assert after["metadata"]["annotations"]["a~b/c"] == "escaped"


# ---- the webhook itself, over TLS ----

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


# Pod and container securityContexts as users write them, each admitted at
# the levels listed (the pod before injection); the app container is
# "app", the recorded one.
HARDENED = {"allowPrivilegeEscalation": False,
            "capabilities": {"drop": ["ALL"]},
            "seccompProfile": {"type": "RuntimeDefault"}}
SHAPES = [
    # (name, pod securityContext, app securityContext, sidecar uid or None)
    ("none", None, None, None),
    ("pod-uid", {"runAsUser": 1000, "runAsGroup": 1000,
                 "runAsNonRoot": True}, dict(HARDENED), 1000),
    ("container-uid", {"runAsNonRoot": True},
     dict(HARDENED, runAsUser=1001, runAsGroup=3000), 1001),
    ("override", {"runAsUser": 1000, "runAsNonRoot": True},
     dict(HARDENED, runAsUser=1002), 1002),
    ("nonroot-no-uid", {"runAsNonRoot": True}, dict(HARDENED), None),
    ("root", {"runAsUser": 0}, None, None),
    ("fsgroup-seccomp-pod", {"runAsUser": 1000, "runAsGroup": 1000,
                             "fsGroup": 2000, "runAsNonRoot": True,
                             "seccompProfile": {"type": "RuntimeDefault"}},
     {"allowPrivilegeEscalation": False,
      "capabilities": {"drop": ["ALL"]}}, 1000),
]


@pytest.mark.parametrize("level", ["privileged", "baseline", "restricted"])
@pytest.mark.parametrize("native", [False, True])
@pytest.mark.parametrize("shape", SHAPES, ids=[s[0] for s in SHAPES])
def test_no_level_and_shape_yields_a_pod_the_level_refuses(level, native,
                                                           shape):
    """Every level x securityContext shape, the patch applied by jsonpatch
    and the result checked by pss-check: the injected pod is admitted
    wherever the pod itself was, and the sidecar is the one the level
    allows; or the pod is left as it was, annotated with why."""
    _, psc, asc, uid = shape
    spec = {"containers": [app("app", **({"securityContext": asc}
                                         if asc else {}))]}
    if psc:
        spec["securityContext"] = psc
    before = pod(spec, annotations=dict(CAPTURE))
    resp = inject(review(before), native=native, level=level)
    after = applied(before, resp)
    validate_pod(after)
    was, _ = pss_check(before, level)
    now, why = pss_check(after, level)
    assert now or not was, f"{level} refuses the injected pod: {why}"
    ann = after["metadata"]["annotations"]
    if level == "restricted" and uid is None:
        assert "oomlens.io/not-injected" in ann
        assert after["spec"] == before["spec"]
        assert ann["oomlens.io/not-injected"] in resp["warnings"][0]
        return
    assert "oomlens.io/not-injected" not in ann
    side = sidecar_of(after, native)
    sc = side["securityContext"]
    env = {e["name"]: e.get("value") for e in side["env"]}
    assert env["OOMLENS_POD_SECURITY"] == level
    if level == "privileged":
        assert sc["runAsUser"] == 0 and "SYS_PTRACE" in sc["capabilities"][
            "add"]
    elif uid is not None:
        assert (sc["runAsUser"], sc["runAsNonRoot"]) == (uid, True)
        assert sc["capabilities"] == {"drop": ["ALL"]}
        gid = (asc or {}).get("runAsGroup", (psc or {}).get("runAsGroup"))
        assert sc.get("runAsGroup") == gid
    else:
        assert sc["runAsUser"] == 0
        assert sc["capabilities"]["add"] == ["SETUID", "SETGID", "KILL"]


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
    # the level in the path: restricted, no uid: annotated, not injected
    st, body = post(port, ctx, json.dumps(review(before)).encode(),
                    "/mutate-pods/restricted")
    after = applied(before, json.loads(body)["response"])
    assert "oomlens.io/not-injected" in after["metadata"]["annotations"]
    assert after["spec"] == before["spec"]
    st, body = post(port, ctx, json.dumps(review(before)).encode(),
                    "/mutate-pods/baseline")
    side = sidecar_of(applied(before, json.loads(body)["response"]), False)
    assert side["securityContext"]["capabilities"]["add"] == [
        "SETUID", "SETGID", "KILL"]
    for path, code in (("/mutate-pods/unknown", 404),
                       ("/mutate-pods/baseline", 405)):
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(f"https://localhost:{port}{path}",
                                   context=ctx, timeout=10)
        assert e.value.code == code, path
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
    swap_cert_and_wait(port, crt, key, str(tmp))
    ctx2 = ssl.create_default_context(cafile=crt)
    st, _ = post(port, ctx2, b"{}")
    assert st == 200


def status_mib(pid, field):
    """A memory figure of /proc/PID/status (VmHWM: the peak resident
    memory, VmRSS: now), MiB."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no " + field)


def hwm_mib(pid):
    return status_mib(pid, "VmHWM")


def rss_mib(pid):
    return status_mib(pid, "VmRSS")


# the chart's memory limit of the webhook (values.yaml injector.resources)
WEBHOOK_LIMIT_MIB = 64


def big_pod(env_per, restricted=False):
    """300 containers of env_per 60-byte variables, opted in; under
    restricted, with a uid so that the sidecar is injected."""
    sc = dict(HARDENED) if restricted else None
    cs = [app(f"c{i}", env=[{"name": f"V{j}", "value": "x" * 60}
                            for j in range(env_per)],
              **({"securityContext": sc} if sc else {}))
          for i in range(300)]
    spec = {"containers": cs}
    if restricted:
        spec["securityContext"] = {"runAsUser": 1000, "runAsNonRoot": True}
    return pod(spec, annotations=dict(CAPTURE))


def test_webhook_large_review_in_many_chunks(webhook):
    """A review of 690 KB (300 containers of 25 variables, a 9 MiB tree
    when parsed) arrives in many TLS records and is patched, at restricted
    too, where the patched copy is checked against the level: the webhook's
    peak stays under half the chart's limit, and the memory is given back.
    A body over 8 MiB is refused with 413."""
    p, port, ctx, *_ = webhook
    time.sleep(0.5)
    rest = rss_mib(p.pid)
    for path, restricted in (("/mutate-pods", False),
                             ("/mutate-pods/restricted", True)):
        before = big_pod(25, restricted)
        body = json.dumps(review(before)).encode()
        assert len(body) > 670_000
        st, out = post(port, ctx, body, path)
        assert st == 200
        after = applied(before, json.loads(out)["response"])
        validate_pod(after)
        side = after["spec"]["containers"][-1]
        assert side["name"] == "oomlens-sidecar"
        if restricted:
            assert side["securityContext"]["runAsUser"] == 1000
    assert hwm_mib(p.pid) < WEBHOOK_LIMIT_MIB / 2, hwm_mib(p.pid)
    assert rss_mib(p.pid) < rest + 4, (rest, rss_mib(p.pid))
    with pytest.raises(urllib.error.HTTPError) as e:
        post(port, ctx, b" " * (9 << 20))
    assert e.value.code == 413
    assert p.poll() is None


def test_webhook_review_too_costly_to_parse(webhook):
    """What took the webhook to 1 GB before, sent straight to it: 3.6 MB
    of "{}," in a review (a 950 MiB tree) is refused with 413 when it has
    no uid to answer, and answered unread when it has; a real pod of 2.7
    MB (300 containers of 100 variables, a 36 MiB tree) is admitted as is,
    with a warning saying why. The webhook never goes past half its
    limit, and answers the next review."""
    p, port, ctx, *_ = webhook
    flood = b"{}," * 1200000 + b"{}"
    for uid in (None, "u-flood"):
        rq = (b'{"apiVersion":"admission.k8s.io/v1","kind":'
              b'"AdmissionReview","request":{"x":[' + flood + b"]" +
              (b',"uid":"%s"' % uid.encode() if uid else b"") + b"}}")
        if uid is None:
            with pytest.raises(urllib.error.HTTPError) as e:
                post(port, ctx, rq)
            assert e.value.code == 413
        else:
            st, out = post(port, ctx, rq)
            r = json.loads(out)["response"]
            assert (st, r["uid"], r["allowed"]) == (200, uid, True)
            assert "patch" not in r
    before = big_pod(100)
    body = json.dumps(review(before, uid="u-big")).encode()
    assert len(body) > 2600 << 10
    st, out = post(port, ctx, body)
    r = json.loads(out)["response"]
    assert (st, r["uid"], r["allowed"]) == (200, "u-big", True)
    assert "patch" not in r
    assert "too large to read" in r["warnings"][0]
    assert "not injected" in r["warnings"][0]
    assert hwm_mib(p.pid) < WEBHOOK_LIMIT_MIB / 2, hwm_mib(p.pid)
    small = pod({"containers": [app("web")]}, annotations=dict(CAPTURE))
    st, out = post(port, ctx, json.dumps(review(small)).encode())
    assert st == 200 and "patch" in json.loads(out)["response"]
    assert p.poll() is None


def idle_flood(port, n):
    """n connections that send nothing."""
    socks = []
    for _ in range(n):
        s = socket.socket()
        s.settimeout(5)
        s.connect(("127.0.0.1", port))
        socks.append(s)
    return socks


def closed_by_peer(s):
    """Whether the server has closed s (EOF or reset), without waiting."""
    s.setblocking(False)
    try:
        return s.recv(1) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def test_webhook_idle_connections_are_capped_and_timed_out(webhook):
    """1,000 connections that send nothing: the webhook holds at most 64
    of them (the rest wait in the kernel's backlog), its memory barely
    moves, it closes them after its 10 s timeout, and it answers again
    when they are gone."""
    p, port, ctx, *_ = webhook
    time.sleep(0.5)
    rest = rss_mib(p.pid)
    socks = idle_flood(port, 1000)
    try:
        time.sleep(2)
        assert rss_mib(p.pid) < rest + 6, (rest, rss_mib(p.pid))
        fds = len(os.listdir(f"/proc/{p.pid}/fd"))
        assert 64 <= fds < 80, fds
        time.sleep(10)
        assert sum(closed_by_peer(s) for s in socks) >= 64
    finally:
        for s in socks:
            s.close()
    st, _ = post(port, ctx, b"{}")
    assert st == 200
    assert p.poll() is None
