"""oomlens-sidecar in a pod (no --standalone), with real pods made by rootful
podman (DESIGN.md "Pods without a kubelet": a shared PID namespace with a
pause process as PID 1, one memory cgroup per container, runc): the sidecar
finds the app container, records it through /proc/<pid>/root/sys/fs/cgroup,
takes the snapshots the annotations ask for until the app is OOM-killed,
reloads the annotations when they change, and refuses a pod without a
shared PID namespace with what to add to the spec. Real OOM kills: run
under the host lock."""
import base64
import hashlib
import itertools
import json
import os
import shutil
import ssl
import subprocess
import sys
import time
import urllib.request

import pytest

from oomtest import BUILD, SIDECAR, UPLOADER, VICTIMS, require_oom_env

CONF = """[containers]
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
"""


# Podman's storage for these pods, apart from the host's: the vfs driver in
# a directory of the build's own. The containers run from --rootfs; the
# storage holds only the pods' pause image. In a container whose root is
# overlayfs (make test-fresh) podman's overlay driver cannot mount, and a
# storage first set up with overlay refuses any other driver.
STORAGE = """[storage]
driver = "vfs"
graphroot = "{root}/graph"
runroot = "{root}/run"
"""


POD_SEQ = itertools.count()


def podman(env, *args, check=True, **kw):
    r = subprocess.run(["podman", *args], env=env, capture_output=True,
                       text=True, **kw)
    if check and r.returncode != 0:
        pytest.fail("podman %s: exit %d: %s" % (" ".join(args), r.returncode,
                                                r.stderr.strip()[-800:]))
    return r


def make_rootfs(root):
    """The sidecar, its uploader, the app and the libraries they link,
    nothing else."""
    for d in ("proc", "sys", "dev", "tmp", "bin", "etc/oomlens", "spool"):
        os.makedirs(os.path.join(root, d), exist_ok=True)
    for b in (SIDECAR, UPLOADER, os.path.join(VICTIMS, "hog")):
        shutil.copy(b, os.path.join(root, "bin"))
        out = subprocess.run(["ldd", b], capture_output=True, text=True).stdout
        for tok in out.split():
            if tok.startswith("/") and os.path.exists(tok):
                dst = os.path.join(root, tok.lstrip("/"))
                os.makedirs(os.path.dirname(dst), exist_ok=True)
                shutil.copy(os.path.realpath(tok), dst)


@pytest.fixture
def pod(tmp_path, monkeypatch):
    require_oom_env()
    if not shutil.which("podman") or not shutil.which("runc"):
        pytest.skip("needs podman and runc")
    # conmon, which podman starts, writes a file named "oom" into its
    # working directory when the container is OOM-killed: podman runs
    # from the test's own directory, never from the checkout
    monkeypatch.chdir(tmp_path)
    conf = tmp_path / "containers.conf"
    conf.write_text(CONF)
    storage = tmp_path / "storage.conf"
    storage.write_text(STORAGE.format(root=os.path.join(BUILD, "podman")))
    env = dict(os.environ, CONTAINERS_CONF=str(conf),
               CONTAINERS_STORAGE_CONF=str(storage))
    # a name of its own per test: a pod a failed test left cannot fail
    # the next one
    name = "oomlens-test-pod-%d-%d" % (os.getpid(), next(POD_SEQ))
    root = str(tmp_path / "rootfs")
    make_rootfs(root)
    made = []

    def create(share="pid,ipc,uts,net", network="none"):
        podman(env, "pod", "create", "--name", name, "--share", share,
               "--network", network)
        made.append(name)
        return name
    yield env, root, create
    for n in made:
        podman(env, "pod", "rm", "-f", n, check=False)


def write_annotations(root, text):
    p = os.path.join(root, "etc/oomlens/annotations")
    with open(p + ".new", "w") as f:
        f.write(text)
    os.rename(p + ".new", p)  # as kubelet swaps its ..data link


SIDE_ENV = ["-e", "POD_NAME=demo", "-e", "POD_NAMESPACE=ns1",
            "-e", "POD_UID=11111111-2222-3333-4444-555555555555"]


def test_pod_mode_records_the_app_until_its_kill(pod):
    env, root, create = pod
    name = create()
    write_annotations(root, 'oomlens.io/capture="true"\n'
                      'oomlens.io/jvm="maybe"\n'
                      'oomlens.io/thresholds="50,90"\n')
    podman(env, "run", "-d", "--name", name + "-app", "--pod", name,
           "--memory", "96m", "-e", "OOMLENS_CONTAINER=app",
           "--rootfs", root, "/bin/hog", "--step-mb", "1", "--delay-ms", "300")
    side = subprocess.Popen(
        ["podman", "run", "--name", name + "-side", "--pod", name,
         "--cap-add", "SYS_PTRACE", *SIDE_ENV, "--rootfs", root,
         "/bin/oomlens-sidecar", "run", "--spool", "/spool"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    time.sleep(4)
    write_annotations(root, 'oomlens.io/thresholds="50,90"\n')
    out, _ = side.communicate(timeout=90)
    assert side.returncode == 0, out
    assert 'oomlens.io/jvm=\\"maybe\\": expected auto or off' in out, out
    assert 'recording container \\"app\\"' in out, out
    assert "through its cgroup under /proc/" in out, out
    assert "changed: reloading" in out, out
    assert "snapshot taken: reason=threshold-50" in out, out
    assert "snapshot taken: reason=threshold-90" in out, out
    assert "stopped: cgroup removed" in out, out
    st = podman(env, "inspect", name + "-app", "--format",
                "{{.State.ExitCode}}").stdout.strip()
    assert st == "137", "the app must have been OOM-killed"
    tl = json.load(open(os.path.join(root, "spool/timeline.json")))
    limits = {s["limit"] for s in tl["samples"] if s["limit"]}
    assert limits == {96 << 20}, limits
    top = max(s["usage"] for s in tl["samples"])
    assert top >= 0.9 * (96 << 20), top
    # the two thresholds, and maybe the growth prediction (< 10 s left)
    assert 2 <= len(os.listdir(os.path.join(root, "spool/snapshots"))) <= 3


def test_pod_without_shared_pid_namespace_is_refused(pod):
    env, root, create = pod
    name = create(share="ipc,uts,net")
    r = podman(env, "run", "--name", name + "-side", "--pod", name,
               *SIDE_ENV, "--rootfs", root, "/bin/oomlens-sidecar", "run",
               check=False)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "shareProcessNamespace: true" in r.stderr, r.stderr
    assert 'PID 1 is "this sidecar"' in r.stderr, r.stderr


def test_pod_mode_needs_the_downward_api(pod):
    env, root, create = pod
    name = create()
    r = podman(env, "run", "--name", name + "-side", "--pod", name,
               "-e", "POD_NAME=demo", "--rootfs", root,
               "/bin/oomlens-sidecar", "run", check=False)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "POD_NAMESPACE POD_UID" in r.stdout + r.stderr


def test_pod_mode_uploads_the_snapshot_bundle(pod, tmp_path):
    """With a service account (token + CA of tests/fakeapi), each new heavy
    snapshot becomes OOMBundle snap-<pod> owned by the Pod."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))), "fakeapi"))
    import fakeapi
    env, root, create = pod
    api = fakeapi.FakeAPI(tls_dir=str(tmp_path / "tls")).start()
    try:
        sa = tmp_path / "sa"
        sa.mkdir()
        (sa / "token").write_text("agent-token-0123456789")
        shutil.copy(api.ca, str(sa / "ca.crt"))
        (sa / "namespace").write_text("default")
        name = create(share="pid,ipc,uts,net", network="host")
        write_annotations(root, 'oomlens.io/thresholds="50,90"\n')
        podman(env, "run", "-d", "--name", name + "-app", "--pod", name,
               "--memory", "96m", "--rootfs", root, "/bin/hog",
               "--step-mb", "1", "--delay-ms", "300")
        r = podman(env, "run", "--name", name + "-side", "--pod", name,
                   "--cap-add", "SYS_PTRACE", "-e", "POD_NAME=demo",
                   "-e", "POD_NAMESPACE=default",
                   "-e", "POD_UID=11111111-2222-3333-4444-555555555555",
                   "-e", "KUBERNETES_SERVICE_HOST=127.0.0.1",
                   "-e", "KUBERNETES_SERVICE_PORT=%d" % api.port,
                   "-v", "%s:/var/run/secrets/kubernetes.io/serviceaccount:ro"
                   % sa, "--rootfs", root, "/bin/oomlens-sidecar", "run",
                   "--spool", "/spool", check=False, timeout=120)
        out = r.stdout + r.stderr
        assert r.returncode == 0, out
        assert "uploaded OOMBundle default/snap-demo" in out, out
        ups = [l for l in out.splitlines() if "uploaded OOMBundle" in l]
        assert 1 <= len(ups) <= 3, ups  # 2-3 snapshots, 10 s apart at most
        ctx = ssl.create_default_context(cafile=api.ca)
        req = urllib.request.Request(
            api.url + "/apis/oomlens.io/v1alpha1/namespaces/default/"
            "oombundles/snap-demo",
            headers={"Authorization": "Bearer admin-token-0123456789"})
        obj = json.load(urllib.request.urlopen(req, context=ctx, timeout=10))
        owner = obj["metadata"]["ownerReferences"][0]
        assert (owner["kind"], owner["name"], owner["uid"]) == \
            ("Pod", "demo", "11111111-2222-3333-4444-555555555555")
        data = base64.b64decode(obj["spec"]["data"])
        assert len(data) == obj["spec"]["size"] <= 900 * 1024
        assert hashlib.sha256(data).hexdigest() == obj["spec"]["sha256"]
        tar = tmp_path / "snap.tar.gz"
        tar.write_bytes(data)
        names = subprocess.run(["tar", "tzf", str(tar)], capture_output=True,
                               text=True, check=True).stdout.split()
        assert "snap-demo/timeline.json" in names, names
        assert "snap-demo/spool/snapshot.json" in names, names
        man = json.loads(subprocess.run(
            ["tar", "xzOf", str(tar), "snap-demo/manifest.json"],
            capture_output=True, text=True, check=True).stdout)
        assert man["pod"]["name"] == "demo" and man["pod"]["uid"].startswith("1111")
    finally:
        api.stop()
