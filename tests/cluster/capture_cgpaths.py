#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""capture_cgpaths.py: (re)writes tests/fixtures/cgpath/v2-systemd-
containerd-<qos>/ from the running v2 node (up.sh; root): a pod of each QoS
class whose container runs `sleep`, and for each the container process's
/proc/PID/cgroup (proc-cgroup), its pause (sandbox) process's
(proc-cgroup-sandbox) and what the pod mapping must make of them (expect:
uid, container ID, qos, driver, runtime, from the API). The Burstable pod
is then OOM-killed (a hog of 64 MiB in a 32 MiB container) and the
kernel's oom-kill line goes to oom-kill.txt. Each directory gets a README
with the kernel, the date and the node."""
import datetime
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import guest  # noqa: E402
from kube import Kube  # noqa: E402

TOP = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
FIX = os.path.join(TOP, "tests", "fixtures", "cgpath")
NS = "oomlens-capture"
BUSYBOX = "localhost/oomlens-busybox:1"
KCFG = os.path.join(os.environ.get("OOMLENS_CLUSTER_V2_DIR",
                                   "/var/lib/oomlens-cluster-v2"),
                    "admin.kubeconfig")
QOS = {"guaranteed": {"requests": {"memory": "32Mi", "cpu": "50m"},
                      "limits": {"memory": "32Mi", "cpu": "50m"}},
       "burstable": {"requests": {"memory": "16Mi"},
                     "limits": {"memory": "32Mi"}},
       "besteffort": {}}


def pod(qos, cmd):
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"cg-{qos}", "namespace": NS},
            "spec": {"restartPolicy": "Never",
                     "terminationGracePeriodSeconds": 0,
                     "containers": [{"name": "app", "image": BUSYBOX,
                                     "imagePullPolicy": "Never",
                                     "command": cmd,
                                     "resources": QOS[qos]}]}}


def proc_cgroup_of(comm, uid):
    """/proc/PID/cgroup of the process named comm in pod uid."""
    u = uid.replace("-", "_")
    out = guest.sh(f"for p in $(pgrep -x {comm}); do "
                   f"grep -q 'pod{u}.slice' /proc/$p/cgroup && "
                   "cat /proc/$p/cgroup; done; true")
    assert out.startswith("0::/"), out
    return out.splitlines()[0] + "\n"


def main():
    k = Kube(KCFG)
    k.ensure_namespace(NS)
    kver = guest.sh("uname -r").strip()
    today = datetime.date.today().isoformat()
    for qos in QOS:
        name = f"cg-{qos}"
        k.delete(f"/api/v1/namespaces/{NS}/pods/{name}")
        k.wait(lambda: not k.exists(f"/api/v1/namespaces/{NS}/pods/{name}"),
               120, "the old pod to go")
        made = k.create(f"/api/v1/namespaces/{NS}/pods",
                        pod(qos, ["sleep", "3600"]))
        uid = made["metadata"]["uid"]
        p = k.wait(lambda: (x := k.pod(NS, name))["status"].get("phase") ==
                   "Running" and x, 300, f"{name} to run")
        cid = p["status"]["containerStatuses"][0]["containerID"]
        assert p["status"]["qosClass"].lower() == qos, p["status"]
        d = os.path.join(FIX, f"v2-systemd-containerd-{qos}")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "proc-cgroup"), "w") as f:
            f.write(proc_cgroup_of("sleep", uid))
        with open(os.path.join(d, "proc-cgroup-sandbox"), "w") as f:
            f.write(proc_cgroup_of("catatonit", uid))
        with open(os.path.join(d, "expect"), "w") as f:
            f.write(f"uid={uid}\nid={cid.removeprefix('containerd://')}\n"
                    f"qos={p['status']['qosClass']}\ndriver=systemd\n"
                    "runtime=containerd\n")
        if qos == "burstable":
            k.delete(f"/api/v1/namespaces/{NS}/pods/{name}")
            k.wait(lambda: not k.exists(
                f"/api/v1/namespaces/{NS}/pods/{name}"), 120, "it to go")
            made = k.create(f"/api/v1/namespaces/{NS}/pods", pod(
                qos, ["/usr/local/bin/hog", "--step-mb", "4"]))
            uid = made["metadata"]["uid"]

            def term():
                for cs in k.pod(NS, name)["status"].get(
                        "containerStatuses", []):
                    if cs.get("state", {}).get("terminated"):
                        return cs["state"]["terminated"]
                return None
            t = k.wait(term, 300, "the hog to be killed")
            # the kubelet may say Error: seen once for a kill a second
            # after the start (docs/cluster.md, The v2 node)
            assert t["exitCode"] == 137, t
            u = uid.replace("-", "_")
            line = guest.sh(f"dmesg | grep 'oom-kill:.*pod{u}' | tail -n1")
            with open(os.path.join(d, "oom-kill.txt"), "w") as f:
                f.write(line.split("] ", 1)[1])
            with open(os.path.join(d, "expect-oom-kill"), "w") as f:
                kid = t["containerID"].removeprefix("containerd://")
                f.write(f"uid={uid}\nid={kid}\nqos=Burstable\n"
                        "driver=systemd\nruntime=containerd\n")
        with open(os.path.join(d, "README.md"), "w") as f:
            f.write(f"# v2-systemd-containerd-{qos}\n\nReal, captured "
                    f"{today} by tests/cluster/v2/capture_cgpaths.py on the "
                    "v2 test node (tests/cluster/v2/up.sh: Debian 12 guest, "
                    f"kernel {kver}, cgroup v2 only, systemd 252, kubelet "
                    "1.20.2 --cgroup-driver systemd, containerd 1.6.20 with "
                    "SystemdCgroup = true, runc 1.1.5). A "
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
