# SPDX-License-Identifier: Apache-2.0
"""Commands in the v2 node's guest (through ssh.sh: qemu's forward of the
guest's sshd, with the key up.sh made)."""
import os
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))


def sh(script, timeout=120, check=True):
    """Runs script under the guest's /bin/sh as root; returns stdout."""
    p = subprocess.run([os.path.join(HERE, "ssh.sh"), "sh", "-c",
                        _quote(script)], capture_output=True, text=True,
                       timeout=timeout)
    if check and p.returncode != 0:
        raise AssertionError(f"guest: {script!r} exited {p.returncode}:\n"
                             f"{p.stdout[-2000:]}\n{p.stderr[-2000:]}")
    return p.stdout


def _quote(s):
    return "'" + s.replace("'", "'\\''") + "'"


def pod_slice(uid, qos="burstable"):
    """The systemd driver's pod cgroup (relative to the cgroup2 root)."""
    u = uid.replace("-", "_")
    if qos == "guaranteed":
        return f"kubepods.slice/kubepods-pod{u}.slice"
    return (f"kubepods.slice/kubepods-{qos}.slice/"
            f"kubepods-{qos}-pod{u}.slice")


def container_scope(uid, cid, qos="burstable"):
    """containerd's scope of container cid in that pod."""
    return f"{pod_slice(uid, qos)}/cri-containerd-{cid}.scope"
