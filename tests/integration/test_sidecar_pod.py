"""oomlens-sidecar in a pod (no --standalone), with real pods made by rootful
podman (DESIGN.md "Pods without a kubelet": a shared PID namespace with a
pause process as PID 1, one memory cgroup per container, runc): the sidecar
finds the app container, records it through /proc/<pid>/root/sys/fs/cgroup,
takes the snapshots the annotations ask for until the app is OOM-killed,
reloads the annotations when they change, and refuses a pod without a
shared PID namespace with what to add to the spec. Real OOM kills: run
under the host lock."""
import json
import os
import shutil
import subprocess
import time

import pytest

from oomtest import BUILD, SIDECAR, VICTIMS, require_oom_env

CONF = """[containers]
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
"""


def podman(env, *args, check=True, **kw):
    return subprocess.run(["podman", *args], env=env, check=check,
                          capture_output=True, text=True, **kw)


def make_rootfs(root):
    """The two binaries and the libraries they link, nothing else."""
    for d in ("proc", "sys", "dev", "tmp", "bin", "etc/oomlens", "spool"):
        os.makedirs(os.path.join(root, d), exist_ok=True)
    for b in (SIDECAR, os.path.join(VICTIMS, "hog")):
        shutil.copy(b, os.path.join(root, "bin"))
        out = subprocess.run(["ldd", b], capture_output=True, text=True).stdout
        for tok in out.split():
            if tok.startswith("/") and os.path.exists(tok):
                dst = os.path.join(root, tok.lstrip("/"))
                os.makedirs(os.path.dirname(dst), exist_ok=True)
                shutil.copy(os.path.realpath(tok), dst)


@pytest.fixture
def pod(tmp_path):
    require_oom_env()
    if not shutil.which("podman") or not shutil.which("runc"):
        pytest.skip("needs podman and runc")
    conf = tmp_path / "containers.conf"
    conf.write_text(CONF)
    env = dict(os.environ, CONTAINERS_CONF=str(conf))
    name = "oomlens-test-pod-%d" % os.getpid()
    root = str(tmp_path / "rootfs")
    make_rootfs(root)
    made = []

    def create(share="pid,ipc,uts,net"):
        podman(env, "pod", "create", "--name", name, "--share", share,
               "--network", "none")
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
