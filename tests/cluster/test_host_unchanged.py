# SPDX-License-Identifier: Apache-2.0
"""A full up/down leaves the host as it was. Runs last, after the
uninstall (conftest.py orders it so): it stops the node."""
import os

import pytest

import hoststate
from conftest import CLUSTER_DIR, run_script


def test_down_leaves_host_as_before_up(node, host_before):
    if os.environ.get("OOMLENS_CLUSTER_KEEP"):
        pytest.skip("OOMLENS_CLUSTER_KEEP: the node may have been up "
                    "before the session, and stays up after it")
    run_script("down.sh", timeout=300)
    after = hoststate.snapshot()
    assert hoststate.diff(host_before, after) == []
    # the node's own processes are gone: no pid file names a live one
    pids = os.path.join(CLUSTER_DIR, "pids")
    assert not os.path.isdir(pids) or os.listdir(pids) == []
    # and down is idempotent
    run_script("down.sh", timeout=300)
    assert hoststate.diff(host_before, hoststate.snapshot()) == []
