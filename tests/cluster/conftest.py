# SPDX-License-Identifier: Apache-2.0
"""The cluster suite's node: brought up once per session (tests/cluster/
up.sh builds or finds the cached node programs) and down at the end. Pods
here get OOM-killed, so the session holds the host's real-kill lock (run-
tests.sh takes it already; a direct pytest run takes it here)."""
import fcntl
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

from kube import Kube  # noqa: E402
import hoststate  # noqa: E402

NS = "oomlens-smoke"


def _env():
    env = dict(os.environ)
    build = env.get("OOMLENS_BUILD", os.path.join(TOP, "build"))
    env["B"] = build
    return env


def run_script(name, *args, timeout=3600):
    """Runs tests/cluster/NAME; returns its stdout's last line."""
    p = subprocess.run([os.path.join(HERE, name), *args], env=_env(),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=timeout)
    if p.returncode != 0:
        raise AssertionError(f"{name} {' '.join(args)} exited "
                             f"{p.returncode}:\n{p.stderr[-3000:]}")
    lines = p.stdout.strip().splitlines()
    return lines[-1] if lines else ""


@pytest.fixture(scope="session")
def host_before():
    return hoststate.snapshot()


@pytest.fixture(scope="session")
def node(host_before):
    if os.geteuid() != 0:
        pytest.skip("the test node needs root")
    lock = None
    if not os.environ.get("OOMLENS_LOCKED"):
        lock = open(os.path.join(os.environ.get("TMPDIR", "/tmp"),
                                 "oomlens-realkill.lock"), "w")
        fcntl.flock(lock, fcntl.LOCK_EX)
    try:
        kubeconfig = run_script("up.sh")
        kube = Kube(kubeconfig)
        kube.kubeconfig = kubeconfig
        kube.ensure_namespace(NS)
        yield kube
    finally:
        # OOMLENS_CLUSTER_KEEP=1: leave the node up for the next run (a
        # developer's loop; up.sh finds it running)
        if not os.environ.get("OOMLENS_CLUSTER_KEEP"):
            run_script("down.sh", timeout=300)
        if lock:
            lock.close()


AGENT_NS = "oomlens-system"
AGENT_LABEL = "app.kubernetes.io/name%3Doomlens-agent"
CLUSTER_DIR = os.environ.get("OOMLENS_CLUSTER_DIR", "/var/lib/oomlens-cluster")


def manifests(*dirs):
    """The YAML documents of manifests/DIR/*.yaml, in file-name order."""
    import yaml
    docs = []
    for d in dirs:
        full = os.path.join(TOP, "manifests", d)
        for name in sorted(os.listdir(full)):
            if name.endswith(".yaml"):
                with open(os.path.join(full, name)) as f:
                    docs += [x for x in yaml.safe_load_all(f) if x]
    return docs


def agent_for_node(ds):
    """The shipped DaemonSet, adapted to the test node only where the node
    differs: the kubelet's root is under the harness's state dir, and the
    agent's state goes there too (the host stays as it was)."""
    for v in ds["spec"]["template"]["spec"]["volumes"]:
        if v["name"] == "pods":
            v["hostPath"]["path"] = f"{CLUSTER_DIR}/kubelet/pods"
        if v["name"] == "state":
            v["hostPath"]["path"] = f"{CLUSTER_DIR}/agent-state"
    return ds


def agent_pods(kube):
    return kube.get(f"/api/v1/namespaces/{AGENT_NS}/pods"
                    f"?labelSelector={AGENT_LABEL}")["items"]


def agent_ready(kube):
    """The agent pod once it runs and has said it watches the cgroups."""
    for p in agent_pods(kube):
        if p["status"].get("phase") != "Running" or \
                p["metadata"].get("deletionTimestamp"):
            continue
        log = kube.log(AGENT_NS, p["metadata"]["name"], "agent")
        if "watching" in log and "memory cgroups" in log:
            return p
    return None


@pytest.fixture(scope="session")
def agent(node):
    """The agent DaemonSet from manifests/ (CRDs, RBAC, DaemonSet) running
    on the node; yields the Kube client."""
    for obj in manifests("crds"):
        node.apply(obj)
    for obj in manifests("crds"):
        name = obj["metadata"]["name"]
        node.wait(lambda: any(
            c["type"] == "Established" and c["status"] == "True"
            for c in node.get("/apis/apiextensions.k8s.io/v1/"
                              f"customresourcedefinitions/{name}")
            .get("status", {}).get("conditions", [])), 30, f"CRD {name}")
    order = ["Namespace", "ServiceAccount", "ClusterRole",
             "ClusterRoleBinding", "DaemonSet"]
    for obj in sorted(manifests("agent"),
                      key=lambda o: order.index(o["kind"])):
        if obj["kind"] == "DaemonSet":
            obj = agent_for_node(obj)
        node.apply(obj)
    node.wait(lambda: agent_ready(node), 90, "the agent pod to watch")
    yield node


def apiserver_stop():
    """Stops the node's kube-apiserver alone (by its pid file)."""
    subprocess.run(["bash", "-c", f'. "{HERE}/lib.sh"; stop_pid '
                    "kube-apiserver"], env=_env(), check=True, timeout=60)


def apiserver_start():
    """Starts what is not running (up.sh is idempotent): the apiserver."""
    run_script("up.sh", timeout=300)
