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

# OOMLENS_NODE=v2: the session's node is the v2 one (tests/cluster/v2/:
# cgroup v2 and the systemd driver in a qemu guest) and the suite is the
# v2 subset (tests/cluster/v2/test_*.py and the files run-tests.sh names);
# otherwise the v1 node on this host, and v2/ is not collected.
V2 = os.environ.get("OOMLENS_NODE") == "v2"
NODE_DIR = os.path.join(HERE, "v2") if V2 else HERE
collect_ignore = [] if V2 else ["v2"]

# Tests that run last, in this order, whatever their file names: the
# uninstall needs every other test of the installed release done, the
# other values' installs need the release gone (the agent's host port),
# and the host check stops the node.
LAST = ("test_helm_uninstall.py", "test_helm_values.py",
        "test_host_unchanged.py")


def pytest_collection_modifyitems(session, config, items):
    """Moves the LAST files' tests to the end (a stable sort: every other
    test keeps its order)."""
    def rank(item):
        name = os.path.basename(item.nodeid.split("::", 1)[0])
        return LAST.index(name) + 1 if name in LAST else 0
    items.sort(key=rank)


def _env():
    env = dict(os.environ)
    build = env.get("OOMLENS_BUILD", os.path.join(TOP, "build"))
    env["B"] = build
    return env


def run_script(name, *args, timeout=3600):
    """Runs the node's NAME (up.sh, down.sh: tests/cluster/ or, with
    OOMLENS_NODE=v2, tests/cluster/v2/); returns its stdout's last line."""
    p = subprocess.run([os.path.join(NODE_DIR, name), *args], env=_env(),
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
    # the v2 node's kills happen in its guest, with a /dev/kmsg of its own
    if not os.environ.get("OOMLENS_LOCKED") and not V2:
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
AGENT_LABEL = "app.kubernetes.io/component%3Dagent"
CLUSTER_DIR = (os.environ.get("OOMLENS_CLUSTER_V2_DIR",
                             "/var/lib/oomlens-cluster-v2") if V2 else
               os.environ.get("OOMLENS_CLUSTER_DIR",
                              "/var/lib/oomlens-cluster"))


BUILD = os.environ.get("OOMLENS_BUILD", os.path.join(TOP, "build"))
HELM = os.environ.get("OOMLENS_HELM") or os.path.join(BUILD, "tools", "bin",
                                                      "helm")
KUBECTL = os.path.join(BUILD, "tools", "bin", "kubectl")
VALUES = os.path.join(HERE, "values-node.yaml")
RELEASE = "oomlens"
# the namespaces values-node.yaml names for the sidecars' RBAC (the chart
# makes a Role in each: they exist first)
VICTIMS_NS = "oomlens-victims"
INJECT_NS = "oomlens-inject-apps"


def helm(kube, *args, timeout=300, check=True):
    """Runs the real helm (make deps DEPS=test) against the node."""
    env = dict(os.environ, KUBECONFIG=kube.kubeconfig,
               HELM_CACHE_HOME="/tmp/oomlens-helm-cache",
               HELM_CONFIG_HOME="/tmp/oomlens-helm-config",
               HELM_DATA_HOME="/tmp/oomlens-helm-data")
    p = subprocess.run([HELM, *args], env=env, capture_output=True,
                       text=True, timeout=timeout)
    if check and p.returncode != 0:
        raise AssertionError(f"helm {' '.join(args)} exited "
                             f"{p.returncode}:\n{p.stdout[-2000:]}"
                             f"\n{p.stderr[-2000:]}")
    return p


def agent_pods(kube):
    return kube.get(f"/api/v1/namespaces/{AGENT_NS}/pods"
                    f"?labelSelector={AGENT_LABEL}")["items"]


def agent_ready(kube):
    """The agent pod once it runs and has said it watches the cgroups."""
    for p in agent_pods(kube):
        if p["status"].get("phase") != "Running" or \
                p["metadata"].get("deletionTimestamp"):
            continue
        ready = any(c["type"] == "Ready" and c["status"] == "True"
                    for c in p["status"].get("conditions", []))
        log = kube.log(AGENT_NS, p["metadata"]["name"], "agent")
        if ready and "watching" in log and "memory cgroups" in log:
            return p
    return None


def recreate_namespace(kube, name, labels=None):
    """NAME empty, as a new user's namespace (an earlier run's pods and
    reports go with the old one)."""
    kube.delete(f"/api/v1/namespaces/{name}")
    kube.wait(lambda: not kube.exists(f"/api/v1/namespaces/{name}"), 180,
              f"namespace {name} to go")
    kube.create("/api/v1/namespaces", {
        "apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": name, "labels": labels or {}}})
    kube.ensure_namespace(name)


def wait_agent(kube, timeout=90):
    """agent_ready(), waited for: after an API server outage the agent
    (and the kubelet's view of it) takes a few seconds to be Ready again."""
    return kube.wait(lambda: agent_ready(kube), timeout,
                     "the agent pod to be Ready")


@pytest.fixture(scope="session")
def installed(node):
    """oomlens installed as users install it: `helm install` of helm/oomlens
    (CRDs, RBAC, the agent DaemonSet, the injector with its certificates)
    with values-node.yaml. Yields the Kube client once the agent watches
    and the webhook has its two endpoints."""
    if not os.access(HELM, os.X_OK):
        pytest.fail(f"no helm at {HELM}: make deps DEPS=test installs it")
    helm(node, "uninstall", RELEASE, "-n", AGENT_NS, "--wait", check=False)
    recreate_namespace(node, VICTIMS_NS)
    recreate_namespace(node, INJECT_NS, {"oomlens.io/injection": "enabled"})
    # an earlier run's agent pod whose image was re-imported under it can
    # stay Terminating on this kubelet (1.20): removed at once
    for p in agent_pods(node):
        node.delete(f"/api/v1/namespaces/{AGENT_NS}/pods/"
                    f"{p['metadata']['name']}")
    node.wait(lambda: not agent_pods(node), 120, "an earlier agent to go")
    # Helm installs crds/ only when they are missing and never upgrades
    # them: CRDs an earlier run left are upgraded as docs/cluster-mode.md
    # tells users to (The OOMReport API), a fresh node gets them from Helm
    if node.exists("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"
                   "oomreports.oomlens.io"):
        r = subprocess.run(
            [KUBECTL, "apply", "-f", os.path.join(TOP, "helm", "oomlens",
                                                  "crds")],
            env=dict(os.environ, KUBECONFIG=node.kubeconfig),
            capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
    helm(node, "install", RELEASE, os.path.join(TOP, "helm", "oomlens"),
         "-n", AGENT_NS, "--create-namespace", "-f", VALUES, "--wait",
         "--timeout", "4m")
    node.wait(lambda: agent_ready(node), 120, "the agent pod to watch")
    node.wait(lambda: webhook_endpoints(node) == 2, 120,
              "the webhook's two endpoints")
    node.wait(lambda: webhook_answers(node), 60,
              "the API server to call the webhook")
    yield node


@pytest.fixture(scope="session")
def agent(installed):
    yield installed


def webhook_answers(kube):
    """Whether the API server reaches the webhook: an opted-in pod created
    with dryRun=All comes back with the sidecar (the webhook has no side
    effects). The Endpoints object can be read before the API server's own
    endpoint cache has it; a pod created in that gap is admitted without
    the sidecar (failurePolicy Ignore, "no endpoints available" in its
    log), as a test once was."""
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "webhook-probe", "namespace": INJECT_NS,
                        "annotations": {"oomlens.io/capture": "true"}},
           "spec": {"containers": [{"name": "app",
                                    "image": "localhost/oomlens-busybox:1",
                                    "command": ["sleep", "1"]}]}}
    made = kube.create(f"/api/v1/namespaces/{INJECT_NS}/pods?dryRun=All", pod)
    return "oomlens-sidecar" in [c["name"] for c in made["spec"]["containers"]]


def webhook_endpoints(kube):
    """Ready addresses behind the injector's Service."""
    try:
        ep = kube.get(f"/api/v1/namespaces/{AGENT_NS}/endpoints/"
                      "oomlens-injector")
    except Exception:
        return 0
    return sum(len(s.get("addresses", [])) for s in ep.get("subsets", []))


def apiserver_stop():
    """Stops the node's kube-apiserver alone (by its pid file)."""
    subprocess.run(["bash", "-c", f'. "{HERE}/lib.sh"; stop_pid '
                    "kube-apiserver"], env=_env(), check=True, timeout=60)


def apiserver_start():
    """Starts what is not running (up.sh is idempotent): the apiserver."""
    run_script("up.sh", timeout=300)
