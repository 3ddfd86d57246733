# SPDX-License-Identifier: Apache-2.0
"""oomlens on the v2 node (OOMLENS_NODE=v2), installed as users install it
(conftest.installed: helm install of the chart with values-node.yaml) on
cgroup v2 with the systemd driver and memory.oom.group=1 on each
container. With test_agent_node.py's C victim (run-tests.sh runs it on
this node too): a group kill of three processes is one OOMReport whose
bundle lists all three victims, and an agent stopped across a kill and
restarted reports that kill once and nothing again; with the chart's
cgroupReadOnly the agent's cgroup mount is read-only and a kill is
reported as before."""
import json
import os
import time

from conftest import (AGENT_NS, RELEASE, TOP, VALUES, agent_pods,
                      agent_ready, helm)
import guest
import test_agent_node as tan
from test_injector import bundle_files

HOG = "/usr/local/bin/hog"


def group_victim(name):
    """Three hogs in one container (two in the background, the third the
    container's main process): the first OOM kills all three. Over
    seconds, as tan.victim() on this node (docs/cluster.md, The v2
    node: a kill a second after the start is reason Error)."""
    obj = tan.victim(name)
    obj["spec"]["containers"][0]["command"] = [
        "sh", "-c", f"{HOG} --step-mb 1 --delay-ms 200 & "
        f"{HOG} --step-mb 1 --delay-ms 200 & "
        f"exec {HOG} --step-mb 4 --delay-ms 250"]
    return obj


def test_group_kill_is_one_report_with_every_victim(agent):
    kube = agent
    kube.ensure_namespace(tan.NS)
    uid = tan.create_pod(kube, group_victim("group"))["metadata"]["uid"]
    t = tan.terminated(kube, "group", timeout=300)
    assert tan.oom_killed(t), t
    (r,) = tan.settle_once(kube, "group", secs=10)
    tan.check_report(kube, r, "group", uid)
    files = bundle_files(kube, r["metadata"]["name"], tan.BUNDLES)
    oom = json.loads(files["kernel/oom.json"])
    pids = {v["pid"] for v in oom["victims"]}
    assert len(pids) == 3, oom["victims"]
    assert "memory.oom.group" in files["kernel/oom.txt"].decode(), \
        files["kernel/oom.txt"][:2000]
    tan.one_event(kube, "group", uid, 1)


def agent_guest_pid(kube):
    """The guest pid of the DaemonSet's agent (the injector's pods run the
    same binary), once its pod is Ready."""
    puid = tan.wait_agent(kube, timeout=300)["metadata"]["uid"].replace(
        "-", "_")
    pid = guest.sh("for p in $(pgrep -x oomlens-agent); do "
                   f"grep -q 'pod{puid}.slice' /proc/$p/cgroup && echo $p; "
                   "done; true").split()
    assert len(pid) == 1, pid
    return pid[0]


def cgroup_mount_options(pid):
    """The per-mount options of the agent's /host/sys/fs/cgroup."""
    for line in guest.sh(f"cat /proc/{pid}/mountinfo").splitlines():
        f = line.split()
        if f[4] == "/host/sys/fs/cgroup":
            return set(f[5].split(","))
    raise AssertionError(f"no /host/sys/fs/cgroup in {pid}'s mountinfo")


def upgrade(kube, *sets):
    """The release upgraded with values-node.yaml and sets; returns the new
    agent pod once it is Ready (the old one gone: one host port)."""
    old = {p["metadata"]["uid"] for p in agent_pods(kube)}
    helm(kube, "upgrade", RELEASE, os.path.join(TOP, "helm", "oomlens"),
         "-n", AGENT_NS, "-f", VALUES, *sets, "--timeout", "4m")
    return kube.wait(lambda: (lambda p: p if p and p["metadata"]["uid"]
                              not in old else None)(agent_ready(kube)),
                     300, "the upgraded agent Ready")


def test_read_only_cgroup_mount(agent):
    """cgroupReadOnly, the value for cgroup v2 nodes: the agent's cgroup
    mount is read-only (its mountinfo says ro), it says nothing of missing
    notifications (v2 writes nothing there), and a kill is one OOMReport
    naming pod and container, the victim named from the kernel's report.
    The release is upgraded back to the suite's values after."""
    kube = agent
    kube.ensure_namespace(tan.NS)
    before = cgroup_mount_options(agent_guest_pid(kube))
    assert "rw" in before, before
    try:
        pod = upgrade(kube, "--set", "cgroupReadOnly=true")
        c = pod["spec"]["containers"][0]
        assert {"name": "cgroup", "mountPath": "/host/sys/fs/cgroup",
                "readOnly": True} in c["volumeMounts"], c["volumeMounts"]
        opts = cgroup_mount_options(agent_guest_pid(kube))
        assert "ro" in opts and "rw" not in opts, opts
        log = kube.log(AGENT_NS, pod["metadata"]["name"], "agent")
        assert "(cgroup v2)" in log, log[-2000:]
        assert "notifications are off" not in log, log[-2000:]
        uid = tan.create_pod(kube, tan.victim("readonly"))["metadata"]["uid"]
        t = tan.terminated(kube, "readonly", timeout=300)
        assert tan.oom_killed(t), t
        (r,) = tan.settle_once(kube, "readonly", secs=10)
        tan.check_report(kube, r, "readonly", uid)
        tan.one_event(kube, "readonly", uid, 1)
    finally:
        kube.delete(f"/api/v1/namespaces/{tan.NS}/pods/readonly")
        upgrade(kube)
    assert "rw" in cgroup_mount_options(agent_guest_pid(kube))


def triggered_victim(name):
    """A hog that starts growing when /tmp/go appears in its container."""
    obj = tan.victim(name)
    obj["spec"]["containers"][0]["command"] = [
        "sh", "-c", "while [ ! -e /tmp/go ]; do sleep 0.2; done; "
        f"exec {HOG} --step-mb 4"]
    return obj


def test_agent_restarted_across_a_kill(agent):
    """The agent is stopped (SIGSTOP in the guest) when the victim is
    killed, then killed (SIGKILL: the kubelet restarts its container):
    the new process reports that kill once, and no earlier kill again."""
    kube = agent
    kube.ensure_namespace(tan.NS)
    old = {r["metadata"]["name"] for r in kube.get(tan.REPORTS)["items"]}
    uid = tan.create_pod(kube, triggered_victim("across"))["metadata"]["uid"]
    kube.wait(lambda: tan._pod(kube, "across")["status"].get("phase") ==
              "Running", 300, "the victim to run")
    pid = [agent_guest_pid(kube)]
    guest.sh(f"kill -STOP {pid[0]}")
    try:
        cid = tan._pod(kube, "across")["status"]["containerStatuses"][0][
            "containerID"].removeprefix("containerd://")
        guest.sh(f"ctr --address /var/lib/oomlens-cluster/run/"
                 f"containerd.sock -n k8s.io task exec --exec-id go {cid} "
                 "touch /tmp/go")
        t = tan.terminated(kube, "across", timeout=300)
        assert tan.oom_killed(t), t
        time.sleep(2)
        assert tan.reports(kube, "across", ready=False) == []
    finally:
        guest.sh(f"kill -KILL {pid[0]}; kill -CONT {pid[0]}", check=False)
    tan.wait_agent(kube, timeout=300)
    (r,) = tan.settle_once(kube, "across", secs=15)
    tan.check_report(kube, r, "across", uid)
    tan.one_event(kube, "across", uid, 1)
    now = {r["metadata"]["name"] for r in kube.get(tan.REPORTS)["items"]}
    assert now - old == {r["metadata"]["name"]}, (now - old)
