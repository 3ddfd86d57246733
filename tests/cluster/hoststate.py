# SPDX-License-Identifier: Apache-2.0
"""What a test node must leave as it found it: sysctls, /etc/containerd,
/etc/cni, iptables, network links, mounts and the paths kubelet writes."""
import hashlib
import os
import re
import subprocess

# sysctls that are counters or change on their own
VOLATILE = re.compile(
    r"^(fs\.(dentry-state|inode-nr|inode-state|file-nr|aio-nr|quota\.)"
    r"|kernel\.(random\.|ns_last_pid|pty\.nr|tainted|sched_domain)"
    r"|net\.netfilter\.nf_conntrack_count|.*\.stable_secret"
    r"|net\.ipv4\.tcp_fastopen_key|vm\.stat_refresh|kernel\.perf_event)")


NODE_MOUNTS = ("/var/lib/oomlens-cluster", "/var/lib/kubelet", "/run/netns",
               "/var/run/netns", "/run/containerd", "/var/lib/cni")


def sysctls():
    out = subprocess.run(["sysctl", "-a"], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True).stdout
    res = {}
    for line in out.splitlines():
        k, _, v = line.partition(" = ")
        if not VOLATILE.match(k):
            res[k] = v
    return res


def tree(path):
    """name -> sha256 of every file below path (symlinks by target)."""
    res = {}
    for root, dirs, files in os.walk(path):
        for n in sorted(dirs + files):
            p = os.path.join(root, n)
            if os.path.islink(p):
                res[p] = "-> " + os.readlink(p)
            elif os.path.isfile(p):
                with open(p, "rb") as f:
                    res[p] = hashlib.sha256(f.read()).hexdigest()
            else:
                res[p] = "dir"
    return res


def iptables():
    res = {}
    for tool in ("iptables-save", "ip6tables-save"):
        try:
            out = subprocess.run([tool], stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL, text=True).stdout
        except FileNotFoundError:
            continue
        res[tool] = [re.sub(r"\[\d+:\d+\]", "", ln)
                     for ln in out.splitlines() if not ln.startswith("#")]
    return res


def snapshot():
    links = subprocess.run(["ip", "-o", "link", "show"],
                           stdout=subprocess.PIPE, text=True).stdout
    with open("/proc/self/mountinfo") as f:
        # only where the node mounts: other programs on the host may
        # mount and unmount elsewhere meanwhile
        mounts = sorted(m for m in (ln.split()[4] for ln in f)
                        if m.startswith(NODE_MOUNTS))
    return {
        "sysctl": sysctls(),
        "etc": {**tree("/etc/containerd"), **tree("/etc/cni")},
        "iptables": iptables(),
        "links": sorted(n for n in (ln.split(":")[1].strip().split("@")[0]
                                    for ln in links.splitlines())
                        if n.startswith("oomlens")),
        "mounts": mounts,
        "paths": {p: os.path.exists(p) for p in (
            "/var/lib/kubelet", "/var/log/pods", "/var/log/containers",
            "/var/lib/cni", "/run/containerd", "/usr/libexec/kubernetes",
            "/sys/fs/cgroup/memory/kubepods",
            "/sys/fs/cgroup/unified/kubepods")},
        "netns": sorted(os.listdir("/var/run/netns"))
        if os.path.isdir("/var/run/netns") else [],
    }


def diff(a, b):
    """Human-readable differences between two snapshots (empty: none)."""
    out = []
    for key in a:
        x, y = a[key], b[key]
        if x == y:
            continue
        if isinstance(x, dict):
            for k in sorted(set(x) | set(y)):
                if x.get(k) != y.get(k):
                    out.append(f"{key}: {k}: {x.get(k)!r} -> {y.get(k)!r}")
        else:
            out.append(f"{key}: {x!r} -> {y!r}")
    return out
