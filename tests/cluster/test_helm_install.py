# SPDX-License-Identifier: Apache-2.0
"""The chart installed for real on the test node (conftest.installed):
`helm test` passes, the agent's service account may do what the agent
does and nothing on secrets or configmaps, and the plain manifests pass
the API server's own validation (server-side dry run). The uninstall is
checked last, in test_helm_uninstall.py."""
import os
import subprocess

import pytest

from conftest import AGENT_NS, KUBECTL, RELEASE, TOP, VICTIMS_NS, helm

SA = f"system:serviceaccount:{AGENT_NS}:{RELEASE}-agent"


def kubectl(kube, *args, check=False):
    if not os.access(KUBECTL, os.X_OK):
        pytest.fail(f"no kubectl at {KUBECTL}: make deps DEPS=test")
    return subprocess.run([KUBECTL, "--kubeconfig", kube.kubeconfig, *args],
                          capture_output=True, text=True, timeout=120,
                          check=check)


def can_i(kube, verb, what, ns=VICTIMS_NS, who=SA):
    p = kubectl(kube, "auth", "can-i", verb, what, "-n", ns, "--as", who)
    answer = p.stdout.strip()
    assert answer in ("yes", "no"), (p.stdout, p.stderr)
    return answer == "yes"


def test_helm_test_passes(installed):
    """The chart's test pod reads the agent's /readyz."""
    p = helm(installed, "test", RELEASE, "-n", AGENT_NS, "--timeout", "2m")
    assert "oomlens-test-readyz" in p.stdout, p.stdout
    assert "Phase:          Succeeded" in p.stdout, p.stdout


@pytest.mark.parametrize("verb,what,allowed", [
    ("create", "oomreports.oomlens.io", True),
    ("patch", "oomreports.oomlens.io/status", True),
    ("create", "oombundles.oomlens.io", True),
    ("delete", "oomreports.oomlens.io", True),  # retention
    ("watch", "pods", True),
    ("create", "events", True),
    ("get", "replicasets.apps", True),
    ("get", "cronjobs.batch", True),
    ("get", "secrets", False),
    ("list", "secrets", False),
    ("get", "configmaps", False),
    ("create", "pods", False),
    ("delete", "pods", False),
    ("patch", "nodes", False),
])
def test_agent_rights_are_exactly_its_work(installed, verb, what, allowed):
    assert can_i(installed, verb, what) is allowed, (verb, what)


def test_sidecar_may_write_only_bundles_in_opted_in_namespaces(installed):
    """The sidecar's Role (sidecar.namespaces) lets a pod's service account
    write OOMBundles there, and nothing else."""
    who = f"system:serviceaccount:{VICTIMS_NS}:default"
    assert can_i(installed, "create", "oombundles.oomlens.io", who=who)
    assert can_i(installed, "update", "oombundles.oomlens.io", who=who)
    assert not can_i(installed, "create", "oomreports.oomlens.io", who=who)
    assert not can_i(installed, "get", "secrets", who=who)
    assert not can_i(installed, "create", "oombundles.oomlens.io",
                     ns="default", who="system:serviceaccount:default:default")


def test_plain_manifests_pass_server_side_dry_run(installed):
    """manifests/ (rendered from the chart) is what the API server of a
    real cluster accepts: every object validated by it, nothing stored."""
    p = kubectl(installed, "apply", "--dry-run=server", "-f",
                os.path.join(TOP, "manifests", "crds"), "-f",
                os.path.join(TOP, "manifests", "oomlens.yaml"))
    assert p.returncode == 0, p.stderr
    out = p.stdout
    for obj in ("customresourcedefinition.apiextensions.k8s.io/"
                "oomreports.oomlens.io", "daemonset.apps/oomlens-agent",
                "clusterrole.rbac.authorization.k8s.io/oomlens-agent"):
        assert obj in out, out
    assert "(server dry run)" in out, out
