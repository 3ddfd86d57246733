# SPDX-License-Identifier: Apache-2.0
"""The chart installed for real on the test node (conftest.installed):
`helm test` passes, the agent's service account may do what the agent
does and nothing on secrets or configmaps, and the plain manifests pass
the API server's own validation (server-side dry run); namespace users
bound to the built-in view/edit roles reach the reports (aggregated
roles); renders of the installed release are equal and an upgrade keeps
the webhook's certificate. The uninstall is checked last, in
test_helm_uninstall.py; the other values, after it, in
test_helm_values.py."""
import os
import subprocess

import pytest
import yaml

from conftest import (AGENT_NS, INJECT_NS, KUBECTL, RELEASE, TOP, VALUES,
                      VICTIMS_NS, helm)

CHART = os.path.join(TOP, "helm", "oomlens")

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


def test_sidecars_get_no_right_by_default(installed):
    """The default install (no sidecar.namespaces): a pod's service account
    in the suite's opted-in namespaces may write no OOMBundle, nor read
    one; the chart renders no Role for them. Pre-kill snapshots reach the
    agent through the node (test_injector.py)."""
    for ns in (VICTIMS_NS, INJECT_NS):
        who = f"system:serviceaccount:{ns}:default"
        for verb in ("create", "patch", "update", "get"):
            assert not can_i(installed, verb, "oombundles.oomlens.io",
                             ns=ns, who=who), (ns, verb)
        assert not can_i(installed, "create", "oomreports.oomlens.io",
                         ns=ns, who=who)
        roles = installed.get(f"/apis/rbac.authorization.k8s.io/v1/"
                              f"namespaces/{ns}/roles")["items"]
        assert not [r for r in roles
                    if r["metadata"]["name"].endswith("-sidecar")], roles
    # the review is honest: the agent's own account may
    assert can_i(installed, "create", "oombundles.oomlens.io")


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


def bind(kube, ns, name, role, user):
    kube.delete(f"/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/"
                f"rolebindings/{name}")
    kube.create(f"/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/"
                "rolebindings", {
                    "apiVersion": "rbac.authorization.k8s.io/v1",
                    "kind": "RoleBinding",
                    "metadata": {"name": name, "namespace": ns},
                    "roleRef": {"apiGroup": "rbac.authorization.k8s.io",
                                "kind": "ClusterRole", "name": role},
                    "subjects": [{"apiGroup": "rbac.authorization.k8s.io",
                                  "kind": "User", "name": user}]})


def test_namespace_view_and_edit_users_reach_the_reports(installed):
    """The chart's ClusterRoles aggregate into the built-in view and edit
    roles (the controller-manager's clusterrole-aggregation controller
    merges them): a user bound to view in a namespace lists and reads its
    OOMReports and OOMBundles and deletes nothing; bound to edit, deletes;
    neither reaches another namespace."""
    kube = installed
    bind(kube, VICTIMS_NS, "oomlens-test-viewer", "view", "ns-viewer")
    bind(kube, VICTIMS_NS, "oomlens-test-editor", "edit", "ns-editor")
    kube.wait(lambda: can_i(kube, "list", "oomreports.oomlens.io",
                            who="ns-viewer") and
              can_i(kube, "delete", "oomreports.oomlens.io",
                    who="ns-editor"),
              60, "the aggregated rules in view and edit")
    for verb in ("get", "list", "watch"):
        for what in ("oomreports.oomlens.io", "oombundles.oomlens.io"):
            assert can_i(kube, verb, what, who="ns-viewer"), (verb, what)
            assert can_i(kube, verb, what, who="ns-editor"), (verb, what)
    for what in ("oomreports.oomlens.io", "oombundles.oomlens.io"):
        assert not can_i(kube, "delete", what, who="ns-viewer"), what
        assert not can_i(kube, "create", what, who="ns-viewer"), what
        assert can_i(kube, "delete", what, who="ns-editor"), what
        assert not can_i(kube, "list", what, ns="default", who="ns-viewer")
    # and the real request, not only the review
    p = kubectl(kube, "get", "oomreports.oomlens.io", "-n", VICTIMS_NS,
                "--as", "ns-viewer")
    assert p.returncode == 0, p.stderr
    # authorization comes before the lookup: refused whether it exists
    p = kubectl(kube, "delete", "oomreports.oomlens.io", "oom-none", "-n",
                VICTIMS_NS, "--as", "ns-viewer", "--dry-run=server")
    assert p.returncode != 0 and "forbidden" in p.stderr, (p.stdout,
                                                          p.stderr)
    for name in ("oomlens-test-viewer", "oomlens-test-editor"):
        kube.delete(f"/apis/rbac.authorization.k8s.io/v1/namespaces/"
                    f"{VICTIMS_NS}/rolebindings/{name}")


INJ = f"/apis/apps/v1/namespaces/{AGENT_NS}/deployments/{RELEASE}-injector"
TLS = f"/api/v1/namespaces/{AGENT_NS}/secrets/{RELEASE}-injector-tls"
MWC = ("/apis/admissionregistration.k8s.io/v1/"
       f"mutatingwebhookconfigurations/{RELEASE}-injector")


def rendered(kube, *extra):
    """The chart rendered for the installed release; with
    --dry-run=server Helm's lookup reads the cluster."""
    out = helm(kube, "template", RELEASE, CHART, "-n", AGENT_NS, "-f",
               VALUES, "--skip-tests", *extra).stdout
    return out, {(d["kind"], d["metadata"]["name"]): d
                 for d in yaml.safe_load_all(out) if d}


def test_renders_of_the_installed_release_are_equal_and_keep_its_cert(
        installed):
    """GitOps: two renders against the installed release are byte for
    byte the same, and carry the installed Secret and caBundle (lookup);
    an upgrade leaves the certificate and the webhook pods as they were.
    An offline render (no lookup) makes a new certificate: what the
    lookup saves us from."""
    kube = installed
    live = kube.get(TLS)["data"]
    ca = kube.get(MWC)["webhooks"][0]["clientConfig"]["caBundle"]
    assert live["ca.crt"] == ca
    one, objs = rendered(kube, "--dry-run=server")
    two, _ = rendered(kube, "--dry-run=server")
    assert one == two
    secret = objs[("Secret", f"{RELEASE}-injector-tls")]
    assert secret["data"] == live
    mwc = objs[("MutatingWebhookConfiguration", f"{RELEASE}-injector")]
    assert mwc["webhooks"][0]["clientConfig"]["caBundle"] == ca
    _, offline = rendered(kube)
    assert offline[("Secret", f"{RELEASE}-injector-tls")]["data"][
        "tls.crt"] != live["tls.crt"]
    # the injector's objects carry the standard labels
    dep = objs[("Deployment", f"{RELEASE}-injector")]
    for labels in (dep["metadata"]["labels"], secret["metadata"]["labels"],
                   dep["spec"]["template"]["metadata"]["labels"]):
        assert labels["app.kubernetes.io/managed-by"] == "Helm"
        assert labels["app.kubernetes.io/component"] == "injector"
        assert labels["app.kubernetes.io/part-of"] == "oomlens"
        assert labels["app.kubernetes.io/instance"] == RELEASE
    before = kube.get(INJ)
    pods = sorted(p["metadata"]["name"] for p in kube.get(
        f"/api/v1/namespaces/{AGENT_NS}/pods?labelSelector="
        "app.kubernetes.io%2Fname%3Doomlens-injector")["items"])
    assert len(pods) == 2, pods
    helm(kube, "upgrade", RELEASE, CHART, "-n", AGENT_NS, "-f", VALUES,
         "--wait", "--timeout", "3m")
    assert kube.get(TLS)["data"] == live
    assert kube.get(MWC)["webhooks"][0]["clientConfig"]["caBundle"] == ca
    after = kube.get(INJ)
    assert after["metadata"]["generation"] == \
        before["metadata"]["generation"]
    assert sorted(p["metadata"]["name"] for p in kube.get(
        f"/api/v1/namespaces/{AGENT_NS}/pods?labelSelector="
        "app.kubernetes.io%2Fname%3Doomlens-injector")["items"]) == pods
