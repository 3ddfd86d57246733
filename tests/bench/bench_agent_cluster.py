# SPDX-License-Identifier: Apache-2.0
"""bench_agent_cluster: the cluster-mode agent's own cost on a full node
(issue 15's Measure: goals <= 8 MiB RSS, <= 1 % of a core).

The fake API server (tests/fakeapi) serves PODS pods (default 110, the
kubelet's default maximum) on the agent's node with CONTAINERS containers
in all (default 500); each container has a real memory cgroup with a limit
in the systemd driver's layout (kubepods.slice/kubepods-<qos>.slice/
kubepods-<qos>-pod<uid_>.slice/cri-containerd-<id>.scope), no processes.
`oomlens-agent run` (cluster mode) watches them all and samples each at
1 Hz for DURATION seconds (default 60). Prints watched cgroups, the pods
its pod watch was served, RSS (now and peak) and CPU % of one core between
t = 10 s and the end. Measures only; fails when the agent dies or watches
fewer than CONTAINERS cgroups. Needs root and the host lock (the tree's
name is shared with the integration tests: bench_agent_cluster.sh takes
the lock); removes every cgroup it made, also on failure or SIGTERM."""
import json
import os
import secrets
import signal
import ssl
import sys
import tempfile
import time
import urllib.request
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
sys.path.insert(0, os.path.join(HERE, "..", "fakeapi"))
from oomtest import (AGENT, AgentProcess, Cgroup, cgroup_root,  # noqa: E402
                     cpu_ticks, free_port, status_kib)
import fakeapi  # noqa: E402

NODE = "oomlens-bench-node"
PODS = int(os.environ.get("PODS", "110"))
CONTAINERS = int(os.environ.get("CONTAINERS", "500"))
DURATION = int(os.environ.get("DURATION", "60"))
WARMUP = 10  # start-up (LIST, first scan) is not the steady cost
QOS = ("burstable", "besteffort", "guaranteed")


def pod_object(i, n_containers):
    """Pod i, Running, its containers' IDs in containerStatuses."""
    uid = str(uuid.uuid4())
    qos = QOS[i % len(QOS)]
    ctrs, sts = [], []
    for c in range(n_containers):
        cid = secrets.token_hex(32)
        ctrs.append({"name": "c%d" % c, "image": "app:1",
                     "resources": {"limits": {"memory": "64Mi"}}})
        sts.append({"name": "c%d" % c, "restartCount": 0, "ready": True,
                    "containerID": "containerd://" + cid, "image": "app:1",
                    "imageID": "", "state": {"running": {}}, "lastState": {}})
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "pod-%03d" % i, "uid": uid,
                         "namespace": "default", "labels": {"app": "bench"}},
            "spec": {"nodeName": NODE, "containers": ctrs},
            "status": {"phase": "Running", "qosClass": qos.capitalize(),
                       "containerStatuses": sts}}


def make_node(api, cg):
    """PODS pods holding CONTAINERS containers, each a cgroup with a
    limit."""
    for qos in QOS[:2]:  # Guaranteed pods sit directly under kubepods.slice
        cg.mkdir("/kubepods-%s.slice" % qos)
    for i in range(PODS):
        n = CONTAINERS // PODS + (1 if i < CONTAINERS % PODS else 0)
        pod = pod_object(i, n)
        api.plant("pods", "default", pod)
        qos = QOS[i % len(QOS)]
        uid_ = pod["metadata"]["uid"].replace("-", "_")
        if qos == "guaranteed":
            sub = "/kubepods-pod%s.slice" % uid_
        else:
            sub = "/kubepods-%s.slice/kubepods-%s-pod%s.slice" % (qos, qos, uid_)
        cg.mkdir(sub)
        for st in pod["status"]["containerStatuses"]:
            cid = st["containerID"].split("//", 1)[1]
            cg.mkdir("%s/cri-containerd-%s.scope" % (sub, cid), limit_mb=64)


def foreign_cgroups():
    """Cgroups already under kubepods.slice (a crashed test's): watched
    too, so they are named in the output."""
    top = os.path.join(cgroup_root()[0], "kubepods.slice")
    return sum(len(dirs) for _, dirs, _ in os.walk(top))


def scrape(port, name):
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port,
                                timeout=10) as r:
        for line in r.read().decode().splitlines():
            if line.startswith(name + " "):
                return int(float(line.split()[1]))
    return None


def pods_served(api):
    """Pods the agent's pod LIST (fieldSelector spec.nodeName) returns:
    what its cache holds, as the agent does not say."""
    listed = [r for r in api.requests
              if r["method"] == "GET" and r["path"] == "/api/v1/pods" and
              "spec.nodeName" in r["query"] and "watch" not in r["query"]
              and r["status"] == 200]
    if not listed:
        return 0
    ctx = ssl.create_default_context(cafile=api.ca)
    req = urllib.request.Request(
        api.url + "/api/v1/pods?fieldSelector=spec.nodeName%3D" + NODE,
        headers={"Authorization": "Bearer agent-token-0123456789"})
    with urllib.request.urlopen(req, context=ctx, timeout=10) as r:
        return len(json.load(r)["items"])


def measure(agent, port):
    """(watched, cpu %, seconds, {VmRSS, VmHWM, RssAnon, RssFile: KiB})
    over WARMUP..DURATION."""
    pid, hz = agent.proc.pid, os.sysconf("SC_CLK_TCK")
    time.sleep(WARMUP)
    t0, c0 = time.monotonic(), cpu_ticks(pid)
    time.sleep(max(DURATION - WARMUP, 1))
    if agent.proc.poll() is not None:
        sys.exit("bench_agent_cluster: the agent died (exit %s)\n%s"
                 % (agent.proc.returncode, agent.log()))
    c1, t1 = cpu_ticks(pid), time.monotonic()
    mem = {k: status_kib(pid, k) for k in ("VmRSS", "VmHWM", "RssAnon",
                                           "RssFile")}
    watched = scrape(port, "oomlens_watched_cgroups")
    pct = 100.0 * (c1 - c0) / hz / (t1 - t0)
    return watched, pct, t1 - t0, mem


def logged_watch_count(agent):
    for line in agent.stderr:
        if "watching " in line and "memory cgroups" in line:
            return int(line.split("watching ", 1)[1].split()[0])
    return None


def run(tmp):
    api = fakeapi.FakeAPI(tls_dir=os.path.join(tmp, "tls")).start()
    cg = agent = None
    before = foreign_cgroups()
    try:
        cg = Cgroup("kubepods.slice")
        make_node(api, cg)
        kc = api.write_kubeconfig(os.path.join(tmp, "kubeconfig"))
        port = free_port()
        agent = AgentProcess(
            [AGENT, "run", "--state-dir", os.path.join(tmp, "state"),
             "--kubeconfig", kc, "--metrics-addr", "127.0.0.1:%d" % port,
             "--metrics-insecure"], env=dict(os.environ, NODE_NAME=NODE))
        watched, pct, secs, mem = measure(agent, port)
        logged = logged_watch_count(agent)
        pods = pods_served(api)
    finally:
        if agent is not None and agent.proc.poll() is None:
            agent.stop()
        if cg is not None:
            cg.cleanup()
        api.stop()
    print("agent-cluster: %s cgroups watched (logged at start: %s), %d pods "
          "served to its pod watch, %d container cgroups sampled at 1 Hz: "
          "RSS %.1f MiB (peak %.1f; anonymous %.1f, file %.1f), CPU %.2f %% "
          "of a core over %.0f s"
          % (watched, logged, pods, CONTAINERS, mem["VmRSS"] / 1024,
             mem["VmHWM"] / 1024, mem["RssAnon"] / 1024,
             mem["RssFile"] / 1024, pct, secs))
    if before:
        print("agent-cluster: note: kubepods.slice already held %d cgroups "
              "(not the bench's, counted above, left alone)" % before)
    if watched is None or watched < CONTAINERS:
        sys.exit("bench_agent_cluster: watches %s cgroups, want >= %d\n%s"
                 % (watched, CONTAINERS, agent.log()))


def main():
    if os.geteuid() != 0 or cgroup_root()[1] != 1:
        print("bench_agent_cluster: needs root and the cgroup v1 memory "
              "controller; skipped")
        return
    if not os.access(AGENT, os.X_OK):
        sys.exit("bench_agent_cluster: %s not built" % AGENT)

    def term(signum, frame):
        raise SystemExit("bench_agent_cluster: signal %d, cleaning up" % signum)
    signal.signal(signal.SIGTERM, term)
    signal.signal(signal.SIGHUP, term)
    with tempfile.TemporaryDirectory(prefix="oomlens-bench-agent-") as tmp:
        run(tmp)


if __name__ == "__main__":
    main()
