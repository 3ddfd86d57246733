"""oomlens-sidecar-upload by itself (sidecar/upload/): what the sidecar
tells it on its stdin, one byte per new snapshot and the end of file at its
stop, against tests/fakeapi. The pod's service account is made in a mount
namespace of the test's own (a tmpfs on /run, as a pod has it); the spool
is the sidecar's own, of a test memory cgroup with one sleeping process
(--limit makes its thresholds cross at once). Root only (unshare -m, the
cgroup); no OOM kill, no podman."""
import base64
import io
import json
import os
import shutil
import ssl
import subprocess
import tarfile
import time
import urllib.request

import pytest

from oomtest import UPLOADER, Cgroup, Sidecar, cgroup_root, run_in_cgroup
from test_sidecar_upload_rights import (  # noqa: F401 (api: a fixture)
    BUNDLES, NO_RIGHT, UID, api, bundle_requests)

# the service account where the in-cluster configuration looks for it
SA_SETUP = """set -e
mount -t tmpfs none /run
d=/run/secrets/kubernetes.io/serviceaccount
if [ -n "$TEST_TOKEN" ]; then
	mkdir -p $d
	printf %s "$TEST_TOKEN" >$d/token
	cp "$TEST_CA" $d/ca.crt
	printf default >$d/namespace
fi
exec "$@"
"""

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("unshare") or
    cgroup_root()[0] is None,
    reason="needs root, unshare (a mount namespace for the service "
           "account) and a memory cgroup hierarchy")


@pytest.fixture(scope="module")
def spool(tmp_path_factory):
    """(spool directory, its cgroup): two snapshots or more, as the
    sidecar writes them."""
    cg = Cgroup("oomlens-test-uploader-%d" % os.getpid())
    try:
        app = run_in_cgroup(cg, "", ["sleep", "60"])
        d = str(tmp_path_factory.mktemp("uploader") / "spool")
        sc = Sidecar(cg.path(), d, extra=["--limit", "100000"])
        snaps = os.path.join(d, "snapshots")
        end = time.monotonic() + 20
        while time.monotonic() < end and not (
                os.path.isdir(snaps) and len(os.listdir(snaps)) >= 2):
            time.sleep(0.05)
        assert sc.stop() == 0
        app.kill()
        app.wait()
        assert len(os.listdir(snaps)) >= 2, open(d + ".log").read()
        yield d, cg.path()
    finally:
        cg.cleanup()


def start(api, tmp_path, spool_cg, token="agent-token-0123456789"):
    src, cgroup = spool_cg
    spool = tmp_path / "spool"
    shutil.copytree(src, spool)
    env = dict(os.environ, KUBERNETES_SERVICE_HOST="127.0.0.1",
               KUBERNETES_SERVICE_PORT=str(api.port), TEST_TOKEN=token or "",
               TEST_CA=api.ca)
    return subprocess.Popen(
        ["unshare", "-m", "sh", "-c", SA_SETUP, "sh", UPLOADER, "run",
         "--namespace", "default", "--pod", "demo", "--uid", UID,
         "--container", "app", "--spool", str(spool), "--cgroup", cgroup],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, env=env, text=True), spool


def wait_for(api, n, timeout=20):
    end = time.monotonic() + timeout
    while len(bundle_requests(api)) < n and time.monotonic() < end:
        time.sleep(0.05)
    return bundle_requests(api)


def test_each_new_snapshot_then_the_pending_one_at_the_stop(api, tmp_path,
                                                            spool):
    """The first byte is uploaded at once; two more within the 10 s gap
    make one pending upload, which the end of file sends at once."""
    p, copy = start(api, tmp_path, spool)
    p.stdin.write("s")
    p.stdin.flush()
    assert wait_for(api, 1) == [("PATCH", 201)], p.stdout.read()
    p.stdin.write("ss")
    p.stdin.flush()
    time.sleep(0.5)
    assert len(bundle_requests(api)) == 1  # the gap holds them
    p.stdin.close()
    out = p.stdout.read()
    assert p.wait(timeout=30) == 0, out
    assert bundle_requests(api) == [("PATCH", 201), ("PATCH", 200)], out
    ups = [l for l in out.splitlines()
           if "uploaded OOMBundle default/snap-demo" in l]
    assert len(ups) == 2, out
    assert "privileges dropped: capabilities 0x0" in out, out
    # what the API server holds: the spool's bundle, owned by the Pod
    ctx = ssl.create_default_context(cafile=api.ca)
    req = urllib.request.Request(api.url + BUNDLES + "/snap-demo", headers={
        "Authorization": "Bearer admin-token-0123456789"})
    obj = json.load(urllib.request.urlopen(req, context=ctx, timeout=10))
    owner = obj["metadata"]["ownerReferences"][0]
    assert (owner["kind"], owner["name"], owner["uid"]) == ("Pod", "demo", UID)
    with tarfile.open(fileobj=io.BytesIO(
            base64.b64decode(obj["spec"]["data"]))) as t:
        names = t.getnames()
    assert any(n.endswith("/timeline.json") for n in names), names
    assert any("/spool/" in n and n.endswith("/snapshot.json")
               for n in names), names
    assert not os.path.exists(copy / ".snap-upload.tar.gz")


def test_nothing_new_nothing_uploaded(api, tmp_path, spool):
    p, _ = start(api, tmp_path, spool)
    p.stdin.close()
    out = p.stdout.read()
    assert p.wait(timeout=30) == 0, out
    assert bundle_requests(api) == [], out


def test_a_refusal_ends_it_while_the_sidecar_goes_on(api, tmp_path, spool):
    """401 (a token the API server does not know): one line, and the
    uploader exits with its stdin still open; the sidecar's later bytes go
    nowhere."""
    p, _ = start(api, tmp_path, spool, token="unknown-token-0123456789")
    p.stdin.write("s")
    p.stdin.flush()
    out = p.stdout.read()  # until it exits: stdin is still open
    assert p.wait(timeout=30) == 0, out
    said = [l for l in out.splitlines() if "no right to write OOMBundles" in l]
    assert len(said) == 1 and NO_RIGHT % 401 in said[0], out
    assert not [l for l in out.splitlines() if "uploaded OOMBundle" in l]
    p.stdin.close()


def test_no_service_account_says_so_and_exits(api, tmp_path, spool):
    p, _ = start(api, tmp_path, spool, token=None)
    out = p.stdout.read()
    assert p.wait(timeout=30) == 0, out
    assert "no service account in this pod: snapshots stay in the spool" \
        in out, out
    p.stdin.close()
    assert bundle_requests(api) == []


def test_its_options_are_checked():
    r = subprocess.run([UPLOADER, "run", "--namespace", "default"],
                       capture_output=True, text=True)
    assert r.returncode == 2
    assert ("--namespace, --pod, --uid, --container, --spool and --cgroup "
            "are all needed") in r.stderr, r.stderr
    r = subprocess.run([UPLOADER, "--version"], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.startswith("oomlens-sidecar-upload "), r
