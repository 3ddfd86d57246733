"""The sidecar's snap-<pod> upload when its service account may not write
OOMBundles (the chart's default: no sidecar.namespaces, no Role): one line
says so on the first 401/403 and nothing is tried again, no bundle is built
in the spool again, and the spool keeps every snapshot (the node agent
reads it there). Other errors keep their retry with the next snapshot.
Real pods of rootful podman and real OOM kills, as test_sidecar_pod.py,
whose fixtures these are, against tests/fakeapi: run under the host
lock."""
import json
import os
import shutil
import sys

import pytest

from test_sidecar_pod import pod, podman, write_annotations  # noqa: F401

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "fakeapi"))
import fakeapi  # noqa: E402

UID = "11111111-2222-3333-4444-555555555555"
SA_USER = "system:serviceaccount:default:default"
BUNDLES = "/apis/oomlens.io/v1alpha1/namespaces/default/oombundles"
NO_RIGHT = ("no right to write OOMBundles in default (%d): snapshots stay "
            "in the spool, which the node agent reads; no more uploads")


@pytest.fixture
def api(tmp_path):
    a = fakeapi.FakeAPI(tls_dir=str(tmp_path / "tls")).start()
    yield a
    a.stop()


def run_pod(pod, api, tmp_path, token):
    """The app (OOM-killed at 96 MiB after two thresholds) and the sidecar
    with the service account `token`; the sidecar's output, once it has
    exited 0 after the kill."""
    env, root, create = pod
    sa = tmp_path / "sa"
    sa.mkdir()
    (sa / "token").write_text(token)
    shutil.copy(api.ca, str(sa / "ca.crt"))
    (sa / "namespace").write_text("default")
    name = create(share="pid,ipc,uts,net", network="host")
    write_annotations(root, 'oomlens.io/thresholds="50,90"\n')
    podman(env, "run", "-d", "--name", name + "-app", "--pod", name,
           "--memory", "96m", "--rootfs", root, "/bin/hog",
           "--step-mb", "1", "--delay-ms", "300")
    r = podman(env, "run", "--name", name + "-side", "--pod", name,
               "--cap-add", "SYS_PTRACE", "-e", "POD_NAME=demo",
               "-e", "POD_NAMESPACE=default", "-e", "POD_UID=" + UID,
               "-e", "KUBERNETES_SERVICE_HOST=127.0.0.1",
               "-e", "KUBERNETES_SERVICE_PORT=%d" % api.port,
               "-v", "%s:/var/run/secrets/kubernetes.io/serviceaccount:ro"
               % sa, "--rootfs", root, "/bin/oomlens-sidecar", "run",
               "--spool", "/spool", check=False, timeout=120)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    return out, os.path.join(root, "spool")


def bundle_requests(api):
    with api.flock:
        return [(q["method"], q["status"]) for q in api.requests
                if q["path"].startswith(BUNDLES)]


@pytest.mark.parametrize("status", [403, 401])
def test_sidecar_without_upload_right_says_so_once_and_keeps_the_spool(
        pod, api, tmp_path, status):
    """403: a service account without the Role (the chart's default);
    401: a token the API server does not know. One request, one line, then
    the snapshots go on into the spool only."""
    token = "sidecar-token-0123456789"
    if status == 403:
        # the pod's own service account, bound to nothing: RBAC denies
        api.add_token(token, SA_USER, groups=[
            "system:serviceaccounts", "system:serviceaccounts:default"],
            rules=[])
    out, spool = run_pod(pod, api, tmp_path, token)
    lines = out.splitlines()
    said = [l for l in lines if "no right to write OOMBundles" in l]
    assert len(said) == 1, out
    assert NO_RIGHT % status in said[0], said
    if status == 403:
        # the API server's own sentence (the fake's as the real 1.20's)
        assert ('oombundles.oomlens.io \\"snap-demo\\" is forbidden: User '
                '\\"%s\\" cannot patch resource \\"oombundles\\" in API '
                'group \\"oomlens.io\\" in the namespace \\"default\\"'
                % SA_USER) in said[0], said
    else:
        assert "Unauthorized" in said[0], said
    assert not [l for l in lines if "uploaded OOMBundle" in l
                or "retrying with the next snapshot" in l], out
    # one server-side apply, refused (on a 401 the client reads the token
    # file again and repeats the request once: a rotated token); none after
    assert bundle_requests(api) == [("PATCH", status)] * (
        2 if status == 401 else 1), bundle_requests(api)
    # every snapshot taken is in the spool, and no upload archive
    taken = [l for l in lines if "snapshot taken: reason=" in l]
    assert len(taken) >= 2, out
    snaps = os.listdir(os.path.join(spool, "snapshots"))
    assert len(snaps) == len(taken), (snaps, taken)
    for s in snaps:
        assert os.path.exists(os.path.join(spool, "snapshots", s,
                                           "snapshot.json")), s
    assert ".snap-upload.tar.gz" not in os.listdir(spool)
    tl = json.load(open(os.path.join(spool, "timeline.json")))
    assert max(x["usage"] for x in tl["samples"]) >= 0.9 * (96 << 20)


def test_sidecar_upload_other_errors_keep_their_retry(pod, api, tmp_path):
    """A 500 is not a refusal: the next snapshot is uploaded."""
    api.fail(1, code=500, message="etcdserver: leader changed",
             path=BUNDLES)
    out, _ = run_pod(pod, api, tmp_path, "agent-token-0123456789")
    lines = out.splitlines()
    assert not [l for l in lines if "no right to write" in l], out
    retry = [l for l in lines if "retrying with the next snapshot" in l]
    assert len(retry) == 1 and "leader changed" in retry[0], out
    assert [l for l in lines if "uploaded OOMBundle default/snap-demo" in l], \
        out
    reqs = bundle_requests(api)
    assert reqs[0] == ("PATCH", 500) and ("PATCH", 201) in reqs[1:], reqs


def test_sidecar_without_its_uploader_says_so_and_keeps_the_spool(
        pod, api, tmp_path):
    """oomlens-sidecar-upload missing beside the sidecar (a binary copied
    alone): one line says the snapshots stay in the spool, the recording
    goes on to the kill, and nothing reaches the API server."""
    _, root, _ = pod
    os.unlink(os.path.join(root, "bin", "oomlens-sidecar-upload"))
    out, spool = run_pod(pod, api, tmp_path, "agent-token-0123456789")
    lines = out.splitlines()
    said = [l for l in lines if "no oomlens-sidecar-upload beside this "
            "program" in l]
    assert len(said) == 1 and "level=warn" in said[0], out
    assert "snapshots stay in the spool" in said[0], said
    assert not [l for l in lines if "uploaded OOMBundle" in l
                or "prog=oomlens-sidecar-upload" in l], out
    assert bundle_requests(api) == []
    taken = [l for l in lines if "snapshot taken: reason=" in l]
    assert len(taken) >= 2, out
    assert len(os.listdir(os.path.join(spool, "snapshots"))) == len(taken)
