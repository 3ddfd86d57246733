#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""capture_cgpaths.py [v1|v2]: (re)writes tests/fixtures/cgpath/
<node shape>-<qos>/ from a running test node (root; default v2):

  v1  the node on this host (tests/cluster/up.sh: cgroup v1, kubelet
      --cgroup-driver cgroupfs): v1-cgroupfs-containerd-<qos>/
  v2  the qemu guest's node (tests/cluster/v2/up.sh: cgroup v2, --cgroup-
      driver systemd): v2-systemd-containerd-<qos>/

A pod of each QoS class whose container runs `sleep`, and for each the
container process's /proc/PID/cgroup (proc-cgroup), its pause (sandbox)
process's (proc-cgroup-sandbox) and what the pod mapping must make of
them (expect: uid, container ID, qos, driver, runtime, from the API). The
Burstable pod is then OOM-killed (a hog growing past its 32 MiB limit)
and the kernel's oom-kill line goes to oom-kill.txt. Each directory gets
a README with the kernel, the date and the node."""
import datetime
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "v2"))
from kube import Kube  # noqa: E402

TOP = os.path.dirname(os.path.dirname(HERE))
FIX = os.path.join(TOP, "tests", "fixtures", "cgpath")
NS = "oomlens-capture"
BUSYBOX = "localhost/oomlens-busybox:1"
QOS = {"guaranteed": {"requests": {"memory": "32Mi", "cpu": "50m"},
                      "limits": {"memory": "32Mi", "cpu": "50m"}},
       "burstable": {"requests": {"memory": "16Mi"},
                     "limits": {"memory": "32Mi"}},
       "besteffort": {}}

NODES = {
    "v1": {"dir": os.environ.get("OOMLENS_CLUSTER_DIR",
                                 "/var/lib/oomlens-cluster"),
           "shape": "v1-cgroupfs-containerd", "driver": "cgroupfs",
           # the pod's own directory in every v1 hierarchy
           "pod": lambda uid: f"/pod{uid}/",
           "what": "the v1 test node (tests/cluster/up.sh: this host, "
                   "kernel {kver}, cgroup v1, kubelet 1.20.2 --cgroup-driver "
                   "cgroupfs, containerd 1.6.20 with SystemdCgroup = false, "
                   "runc 1.1.5)"},
    "v2": {"dir": os.environ.get("OOMLENS_CLUSTER_V2_DIR",
                                 "/var/lib/oomlens-cluster-v2"),
           "shape": "v2-systemd-containerd", "driver": "systemd",
           "pod": lambda uid: f"pod{uid.replace('-', '_')}.slice",
           "what": "the v2 test node (tests/cluster/v2/up.sh: Debian 12 "
                   "guest, kernel {kver}, cgroup v2 only, systemd 252, "
                   "kubelet 1.20.2 --cgroup-driver systemd, containerd "
                   "1.6.20 with SystemdCgroup = true, runc 1.1.5)"},
}


def shell(node):
    """A function running a /bin/sh script where the node's kernel is."""
    if node == "v2":
        import guest
        return guest.sh
    return lambda script: subprocess.run(
        ["sh", "-c", script], check=True, capture_output=True,
        text=True).stdout


def pod(qos, cmd):
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"cg-{qos}", "namespace": NS},
            "spec": {"restartPolicy": "Never",
                     "terminationGracePeriodSeconds": 0,
                     "containers": [{"name": "app", "image": BUSYBOX,
                                     "imagePullPolicy": "Never",
                                     "command": cmd,
                                     "resources": QOS[qos]}]}}


def proc_cgroup_of(sh, node, comm, uid):
    """/proc/PID/cgroup of the process named comm in pod uid, whole: one
    line on v2, a line per hierarchy on v1."""
    mark = NODES[node]["pod"](uid)
    out = sh(f"for p in $(pgrep -x {comm}); do "
             f"grep -q '{mark}' /proc/$p/cgroup && "
             "cat /proc/$p/cgroup && break; done; true")
    assert mark in out, out
    return out


def recreate(k, name, obj):
    k.delete(f"/api/v1/namespaces/{NS}/pods/{name}")
    k.wait(lambda: not k.exists(f"/api/v1/namespaces/{NS}/pods/{name}"),
           120, "the old pod to go")
    return k.create(f"/api/v1/namespaces/{NS}/pods", obj)


def capture_kill(k, sh, node, d, name):
    """The Burstable pod again, its container OOM-killed: oom-kill.txt
    and expect-oom-kill."""
    uid = recreate(k, name, pod("burstable", [
        "/usr/local/bin/hog", "--step-mb", "1", "--delay-ms",
        "250"]))["metadata"]["uid"]

    def term():
        for cs in k.pod(NS, name)["status"].get("containerStatuses", []):
            if cs.get("state", {}).get("terminated"):
                return cs["state"]["terminated"]
        return None
    t = k.wait(term, 300, "the hog to be killed")
    assert t["exitCode"] == 137, t
    mark = NODES[node]["pod"](uid)
    line = sh(f"dmesg | grep 'oom-kill:.*{mark}' | tail -n1")
    assert line, f"no oom-kill line for {mark}"
    with open(os.path.join(d, "oom-kill.txt"), "w") as f:
        f.write(line.split("] ", 1)[1])
    with open(os.path.join(d, "expect-oom-kill"), "w") as f:
        kid = t["containerID"].removeprefix("containerd://")
        f.write(f"uid={uid}\nid={kid}\nqos=Burstable\n"
                f"driver={NODES[node]['driver']}\nruntime=containerd\n")


def main():
    node = sys.argv[1] if len(sys.argv) > 1 else "v2"
    if node not in NODES:
        sys.exit(f"usage: {sys.argv[0]} [v1|v2]")
    n = NODES[node]
    sh = shell(node)
    k = Kube(os.path.join(n["dir"], "admin.kubeconfig"))
    k.ensure_namespace(NS)
    kver = sh("uname -r").strip()
    today = datetime.date.today().isoformat()
    for qos in QOS:
        name = f"cg-{qos}"
        uid = recreate(k, name, pod(qos, ["sleep", "3600"]))["metadata"][
            "uid"]
        p = k.wait(lambda: (x := k.pod(NS, name))["status"].get("phase") ==
                   "Running" and x, 300, f"{name} to run")
        cid = p["status"]["containerStatuses"][0]["containerID"]
        assert p["status"]["qosClass"].lower() == qos, p["status"]
        d = os.path.join(FIX, f"{n['shape']}-{qos}")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "proc-cgroup"), "w") as f:
            f.write(proc_cgroup_of(sh, node, "sleep", uid))
        with open(os.path.join(d, "proc-cgroup-sandbox"), "w") as f:
            f.write(proc_cgroup_of(sh, node, "catatonit", uid))
        with open(os.path.join(d, "expect"), "w") as f:
            f.write(f"uid={uid}\nid={cid.removeprefix('containerd://')}\n"
                    f"qos={p['status']['qosClass']}\n"
                    f"driver={n['driver']}\nruntime=containerd\n")
        if qos == "burstable":
            capture_kill(k, sh, node, d, name)
        with open(os.path.join(d, "README.md"), "w") as f:
            f.write(f"# {n['shape']}-{qos}\n\nReal, captured {today} by "
                    "tests/cluster/capture_cgpaths.py on "
                    + n["what"].format(kver=kver) + ". A "
                    f"{p['status']['qosClass']} pod with one container "
                    "(`sleep`): `proc-cgroup` is its process's "
                    "/proc/PID/cgroup, `proc-cgroup-sandbox` the pause "
                    "process's (catatonit), `expect` what the pod mapping "
                    "must find (from the pod's status)."
                    + (" `oom-kill.txt`: the kernel's oom-kill line for a "
                       "second pod of the same name whose container (`hog`, "
                       "32 MiB limit) was OOM-killed, `expect-oom-kill` its "
                       "pod and container." if qos == "burstable" else "")
                    + "\n")
        print(f"captured {d}")
        k.delete(f"/api/v1/namespaces/{NS}/pods/{name}")


if __name__ == "__main__":
    main()
