# SPDX-License-Identifier: Apache-2.0
"""The cluster suite's node: brought up once per session (tests/cluster/
up.sh builds or finds the cached node programs) and down at the end. Pods
here get OOM-killed, so the session holds the host's real-kill lock (run-
tests.sh takes it already; a direct pytest run takes it here)."""
import fcntl
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

from kube import Kube  # noqa: E402
import hoststate  # noqa: E402

NS = "oomlens-smoke"


def _env():
    env = dict(os.environ)
    build = env.get("OOMLENS_BUILD", os.path.join(TOP, "build"))
    env["B"] = build
    return env


def run_script(name, *args, timeout=3600):
    """Runs tests/cluster/NAME; returns its stdout's last line."""
    p = subprocess.run([os.path.join(HERE, name), *args], env=_env(),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=timeout)
    if p.returncode != 0:
        raise AssertionError(f"{name} {' '.join(args)} exited "
                             f"{p.returncode}:\n{p.stderr[-3000:]}")
    lines = p.stdout.strip().splitlines()
    return lines[-1] if lines else ""


@pytest.fixture(scope="session")
def host_before():
    return hoststate.snapshot()


@pytest.fixture(scope="session")
def node(host_before):
    if os.geteuid() != 0:
        pytest.skip("the test node needs root")
    lock = None
    if not os.environ.get("OOMLENS_LOCKED"):
        lock = open(os.path.join(os.environ.get("TMPDIR", "/tmp"),
                                 "oomlens-realkill.lock"), "w")
        fcntl.flock(lock, fcntl.LOCK_EX)
    try:
        kubeconfig = run_script("up.sh")
        kube = Kube(kubeconfig)
        kube.kubeconfig = kubeconfig
        kube.ensure_namespace(NS)
        yield kube
    finally:
        run_script("down.sh", timeout=300)
        if lock:
            lock.close()
