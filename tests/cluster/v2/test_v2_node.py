# SPDX-License-Identifier: Apache-2.0
"""The v2 node itself (OOMLENS_NODE=v2, tests/cluster/v2/up.sh): systemd is
the guest's init, cgroup v2 is the only hierarchy, pods get the systemd
driver's slices and scopes, and each container's cgroup has
memory.oom.group=1 (runc-oomgroup: what kubelet >= 1.28 sets) while the
pod sandbox's has not. A real OOM kill of a Burstable pod: OOMKilled, and
the kernel's report names the scope."""
import guest

NS = "oomlens-smoke"
BUSYBOX = "localhost/oomlens-busybox:1"


def pod(name, cmd, limit="64Mi", request="16Mi"):
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": NS},
            "spec": {"restartPolicy": "Never",
                     "terminationGracePeriodSeconds": 0,
                     "containers": [{
                         "name": "c", "image": BUSYBOX,
                         "imagePullPolicy": "Never", "command": cmd,
                         "resources": {"requests": {"memory": request},
                                       "limits": {"memory": limit}}}]}}


def run(node, obj, timeout=300):
    name = obj["metadata"]["name"]
    node.delete(f"/api/v1/namespaces/{NS}/pods/{name}")
    node.wait(lambda: not node.exists(f"/api/v1/namespaces/{NS}/pods/{name}"),
              120, "the old pod to go")
    return node.create(f"/api/v1/namespaces/{NS}/pods", obj)


def test_guest_is_systemd_on_cgroup_v2(node):
    out = guest.sh("cat /proc/1/comm; stat -fc %T /sys/fs/cgroup; "
                   "ls /sys/fs/cgroup | grep -c '^memory$' || true; "
                   "systemctl is-active oomlens-kubelet oomlens-containerd")
    lines = out.split()
    assert lines[0] == "systemd", out
    assert lines[1] == "cgroup2fs", out
    assert lines[2] == "0", out  # no v1 memory hierarchy
    assert lines[3:] == ["active", "active"], out
    assert "kubepods.slice" in guest.sh("ls /sys/fs/cgroup")


def test_pod_scopes_and_oom_group(node):
    uid = run(node, pod("v2-shape", ["sleep", "3600"]))["metadata"]["uid"]
    p = node.wait(lambda: (x := node.pod(NS, "v2-shape"))["status"].get(
        "phase") == "Running" and x, 300, "the pod to run")
    cid = p["status"]["containerStatuses"][0]["containerID"].removeprefix(
        "containerd://")
    scope = guest.container_scope(uid, cid)
    out = guest.sh(f"cd /sys/fs/cgroup/{guest.pod_slice(uid)} && "
                   f"cat cri-containerd-{cid}.scope/memory.oom.group && "
                   "for d in cri-containerd-*.scope; do "
                   "echo $d $(cat $d/memory.oom.group); done")
    lines = out.strip().splitlines()
    assert lines[0] == "1", out
    # the sandbox (pause) scope: the kubelet sets nothing there
    others = [ln for ln in lines[1:] if cid not in ln]
    assert len(others) == 1 and others[0].endswith(" 0"), out
    pid_cg = guest.sh("for p in $(pgrep -x sleep); do cat /proc/$p/cgroup; "
                      "done")
    assert f"0::/{scope}\n" in pid_cg, pid_cg
    node.delete(f"/api/v1/namespaces/{NS}/pods/v2-shape")


def test_oom_kill_names_the_scope(node):
    # 4 MiB per 250 ms: the kill comes seconds after the start (a kill
    # about a second after it was seen reported as reason Error, exit 137:
    # docs/cluster.md, The v2 node)
    uid = run(node, pod("v2-hog", ["/usr/local/bin/hog", "--step-mb", "4",
                                   "--delay-ms", "250"]))["metadata"]["uid"]

    def term():
        for cs in node.pod(NS, "v2-hog")["status"].get(
                "containerStatuses", []):
            if cs.get("state", {}).get("terminated"):
                return cs
        return None
    cs = node.wait(term, 300, "v2-hog to terminate")
    t = cs["state"]["terminated"]
    assert t["reason"] == "OOMKilled" and t["exitCode"] == 137, t
    cid = t["containerID"].removeprefix("containerd://")
    dmesg = guest.sh("dmesg | grep 'oom-kill:' | tail -n 5")
    scope = guest.container_scope(uid, cid)
    # pod and container have the same limit: the kernel may blame either
    assert any(f"oom_memcg=/{m},task_memcg=/{scope}," in dmesg
               for m in (guest.pod_slice(uid), scope)), dmesg
