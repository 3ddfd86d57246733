# SPDX-License-Identifier: Apache-2.0
"""A full up/down leaves the host as it was. Runs last, after the
uninstall (conftest.py orders it so): it stops the node."""
import os
import re
import socket

import pytest

import hoststate
from conftest import CLUSTER_DIR, V2, run_script

# What only a v1 node changes (its bridge and veths, mounts, host paths,
# network namespaces): another checkout's v1 node may come and go while
# the v2 session runs, and the v2 node touches none of them (its own
# checks are below).
V1_FOOTPRINT = re.compile(r"oomlens0|\.veth|^(mounts|paths|netns|links): ")


def changes(before, after):
    d = hoststate.diff(before, after)
    return [x for x in d if not V1_FOOTPRINT.search(x)] if V2 else d


def v2_left():
    """What the v2 node could leave: mounts under its state directory or
    the cache, and its qemu forwards listening."""
    left = []
    with open("/proc/self/mountinfo") as f:
        left += [m for m in (ln.split()[4] for ln in f)
                 if m.startswith((CLUSTER_DIR + "/", "/var/cache/oomlens/"))]
    for port in (int(os.environ.get("OOMLENS_V2_API_PORT", 16443)),
                 int(os.environ.get("OOMLENS_V2_SSH_PORT", 16022))):
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                left.append(f"127.0.0.1:{port} listening")
    return left


def test_down_leaves_host_as_before_up(node, host_before):
    if os.environ.get("OOMLENS_CLUSTER_KEEP"):
        pytest.skip("OOMLENS_CLUSTER_KEEP: the node may have been up "
                    "before the session, and stays up after it")
    run_script("down.sh", timeout=300)
    after = hoststate.snapshot()
    assert changes(host_before, after) == []
    if V2:
        assert v2_left() == []
    # the node's own processes are gone: no pid file names a live one
    pids = os.path.join(CLUSTER_DIR, "pids")
    assert not os.path.isdir(pids) or os.listdir(pids) == []
    # and down is idempotent
    run_script("down.sh", timeout=300)
    assert changes(host_before, hoststate.snapshot()) == []
