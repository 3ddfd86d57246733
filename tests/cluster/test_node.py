# SPDX-License-Identifier: Apache-2.0
"""Smoke tests on the real single-node cluster (conftest.py brings it up):
what oomlens's Kubernetes claims rest on, seen on a real kubelet."""
import os
import re
import subprocess
import time

from conftest import NS, TOP

VERSION = open(os.path.join(TOP, "VERSION")).read().strip()

BUSYBOX = "localhost/oomlens-busybox:1"


def pod(name, containers, **spec):
    for c in containers:
        c.setdefault("imagePullPolicy", "Never")
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": NS},
            "spec": {"containers": containers, "restartPolicy": "Never",
                     "terminationGracePeriodSeconds": 0, **spec}}


def create_pod(kube, obj):
    kube.delete(f"/api/v1/namespaces/{NS}/pods/{obj['metadata']['name']}")
    kube.wait(lambda: not _exists(kube, obj["metadata"]["name"]), 60,
              "the old pod to go")
    return kube.create(f"/api/v1/namespaces/{NS}/pods", obj)


def _exists(kube, name):
    try:
        kube.pod(NS, name)
        return True
    except Exception:
        return False


def terminated(kube, name, container, timeout=90):
    """The container's terminated state once the kubelet reports it."""
    def get():
        st = kube.pod(NS, name)["status"]
        for cs in st.get("containerStatuses", []):
            if cs["name"] == container:
                t = cs.get("state", {}).get("terminated") or \
                    cs.get("lastState", {}).get("terminated")
                if t:
                    return t
        return None
    return kube.wait(get, timeout, f"{name}/{container} to terminate")


def test_oom_killed_pod_reason_and_kernel_cgroup_path(node):
    """64 Mi limit, a hog that grows past it: the API says OOMKilled and the
    kernel's oom-kill line names the pod's and container's cgroups exactly
    as DESIGN.md gives them for the cgroupfs driver (Burstable)."""
    obj = pod("oom-hog", [{
        "name": "hog", "image": BUSYBOX,
        "command": ["/usr/local/bin/hog", "--step-mb", "4"],
        "resources": {"requests": {"memory": "16Mi"},
                      "limits": {"memory": "64Mi"}}}])
    created = create_pod(node, obj)
    uid = created["metadata"]["uid"]
    t = terminated(node, "oom-hog", "hog")
    assert t["reason"] == "OOMKilled", t
    assert t["exitCode"] == 137, t
    cid = t["containerID"].removeprefix("containerd://")
    assert re.fullmatch(r"[0-9a-f]{64}", cid), cid
    want_pod = f"/kubepods/burstable/pod{uid}"
    want_task = f"{want_pod}/{cid}"

    def kill_line():
        out = subprocess.run(["dmesg"], stdout=subprocess.PIPE, text=True,
                             errors="replace").stdout
        return [ln for ln in out.splitlines()
                if "oom-kill:" in ln and f"task_memcg={want_task}," in ln]
    lines = node.wait(kill_line, 10, "the kernel's oom-kill line")
    assert f"oom_memcg={want_pod}," in lines[-1], lines[-1]
    assert "task=hog," in lines[-1], lines[-1]


def test_share_process_namespace_second_container_sees_first(node):
    """shareProcessNamespace: the side container's ps lists the pause
    process (catatonit) and the app's sleep."""
    obj = pod("shared-pid", [
        {"name": "app", "image": BUSYBOX, "command": ["sleep", "3601"]},
        {"name": "side", "image": BUSYBOX, "command": ["sh", "-c",
         "for i in $(seq 60); do if ps | grep -q '[s]leep 3601'; then "
         "echo SEEN; ps -o pid,comm,args; exit 0; fi; sleep 0.5; done; "
         "ps; exit 1"]}],
        shareProcessNamespace=True)
    create_pod(node, obj)
    t = terminated(node, "shared-pid", "side")
    log = node.log(NS, "shared-pid", "side")
    assert t["exitCode"] == 0, (t, log)
    assert "SEEN" in log
    assert re.search(r"^\s*1\s+catatonit\b", log, re.M), log
    assert "sleep 3601" in log
    node.delete(f"/api/v1/namespaces/{NS}/pods/shared-pid")


def test_privileged_daemonset_reads_kmsg_and_host_cgroups(node):
    """A privileged DaemonSet pod with hostPath /dev/kmsg and /sys/fs/cgroup
    reads kernel records and finds its own pod cgroup among the host's."""
    script = (
        "dd if=/dev/kmsg bs=8192 count=3 2>/dev/null | sed 's/^/KMSG /'; "
        "d=/host/cgroup/memory/kubepods/besteffort/pod$POD_UID; "
        "if [ -d $d ]; then echo CGROUP-OK $(ls $d | wc -l); fi; "
        "ls /host/cgroup/memory/kubepods; sleep 3600")
    ds = {"apiVersion": "apps/v1", "kind": "DaemonSet",
          "metadata": {"name": "kmsg-reader", "namespace": NS},
          "spec": {
              "selector": {"matchLabels": {"app": "kmsg-reader"}},
              "template": {
                  "metadata": {"labels": {"app": "kmsg-reader"}},
                  "spec": {
                      "terminationGracePeriodSeconds": 0,
                      "containers": [{
                          "name": "reader", "image": BUSYBOX,
                          "imagePullPolicy": "Never",
                          "command": ["sh", "-c", script],
                          "env": [{"name": "POD_UID", "valueFrom": {
                              "fieldRef": {"fieldPath": "metadata.uid"}}}],
                          "securityContext": {"privileged": True},
                          "volumeMounts": [
                              {"name": "kmsg", "mountPath": "/dev/kmsg"},
                              {"name": "cg", "mountPath": "/host/cgroup",
                               "readOnly": True}]}],
                      "volumes": [
                          {"name": "kmsg", "hostPath": {
                              "path": "/dev/kmsg", "type": "CharDevice"}},
                          {"name": "cg", "hostPath": {
                              "path": "/sys/fs/cgroup",
                              "type": "Directory"}}]}}}}
    base = f"/apis/apps/v1/namespaces/{NS}/daemonsets"
    node.delete(f"{base}/kmsg-reader")
    node.wait(lambda: not _ds_exists(node, base), 60, "the old DaemonSet")
    node.create(base, ds)

    def running_pod():
        pods = node.get(f"/api/v1/namespaces/{NS}/pods"
                        "?labelSelector=app%3Dkmsg-reader")["items"]
        for p in pods:
            if p["status"].get("phase") == "Running":
                return p
        return None
    p = node.wait(running_pod, 90, "the DaemonSet's pod to run")
    assert p["spec"]["nodeName"] == "oomlens-node"
    name = p["metadata"]["name"]

    def log_done():
        log = node.log(NS, name, "reader")
        return log if "burstable" in log or "besteffort" in log else None
    log = node.wait(log_done, 30, "the reader's output")
    kmsg = [ln for ln in log.splitlines() if ln.startswith("KMSG ")]
    assert len(kmsg) == 3, log
    # /dev/kmsg records: "prio,seq,usec,flags;text"
    assert all(re.match(r"KMSG \d+,\d+,\d+,[-c+];", ln) for ln in kmsg), kmsg
    assert re.search(r"^CGROUP-OK \d+$", log, re.M), log
    node.delete(f"{base}/kmsg-reader")


def _ds_exists(kube, base):
    try:
        kube.get(f"{base}/kmsg-reader")
        return True
    except Exception:
        return False


def test_agent_image_runs_in_a_pod(node):
    """Our own scratch image: the binary and exactly its libraries load."""
    obj = pod("agent-help", [{
        "name": "agent", "image": "localhost/oomlens-agent:" + VERSION,
        "command": ["/usr/bin/oomlens-agent", "--help"]}])
    create_pod(node, obj)
    t = terminated(node, "agent-help", "agent")
    log = node.log(NS, "agent-help", "agent")
    assert t["exitCode"] == 0, (t, log)
    assert "usage: oomlens-agent" in log
    assert "parse-kmsg" in log
    node.delete(f"/api/v1/namespaces/{NS}/pods/agent-help")


def test_up_is_idempotent_and_apiserver_only_mode_answers(node):
    """A second up (either mode) leaves the running node as it is."""
    from conftest import run_script
    t0 = time.monotonic()
    assert run_script("up.sh", "--apiserver-only") == node.kubeconfig
    assert run_script("up.sh") == node.kubeconfig
    assert time.monotonic() - t0 < 60
    n = node.get("/api/v1/nodes/oomlens-node")
    ready = [c for c in n["status"]["conditions"] if c["type"] == "Ready"]
    assert ready and ready[0]["status"] == "True"
