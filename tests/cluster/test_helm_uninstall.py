# SPDX-License-Identifier: Apache-2.0
"""`helm uninstall` leaves nothing of the release but what Helm keeps on
purpose: the CRDs (crds/ is never deleted) and so the OOMReports and
OOMBundles the agents wrote. Runs after every other test that uses the
installed release (conftest.py orders it so)."""
import yaml

from conftest import AGENT_NS, RELEASE, VICTIMS_NS, agent_pods, helm

REPORTS = f"/apis/oomlens.io/v1alpha1/namespaces/{VICTIMS_NS}/oomreports"
CLUSTER_SCOPED = {"ClusterRole", "ClusterRoleBinding", "Namespace",
                  "MutatingWebhookConfiguration", "CustomResourceDefinition"}


def path_of(obj):
    """An object's own path, from its apiVersion and kind."""
    api = obj["apiVersion"]
    prefix = "/api/v1" if api == "v1" else f"/apis/{api}"
    kind, md = obj["kind"], obj["metadata"]
    plural = kind.lower() + "s"
    if kind in CLUSTER_SCOPED:
        return f"{prefix}/{plural}/{md['name']}"
    ns = md.get("namespace", AGENT_NS)
    return f"{prefix}/namespaces/{ns}/{plural}/{md['name']}"


def names(kube, path):
    return [o["metadata"]["name"] for o in kube.get(path)["items"]]


def test_uninstall_leaves_crds_and_reports(installed):
    kube = installed
    before = names(kube, REPORTS)
    assert before, "the suite's kills left no report to keep"
    manifest = helm(kube, "get", "manifest", RELEASE, "-n", AGENT_NS).stdout
    paths = [path_of(o) for o in yaml.safe_load_all(manifest) if o]
    assert len(paths) >= 10, paths
    assert all(kube.exists(p) for p in paths), paths
    helm(kube, "uninstall", RELEASE, "-n", AGENT_NS, "--wait", "--timeout",
         "3m")
    kube.wait(lambda: not agent_pods(kube), 120, "the agent pods to go")
    assert [p for p in paths if kube.exists(p)] == []
    crds = names(kube, "/apis/apiextensions.k8s.io/v1/"
                 "customresourcedefinitions")
    assert {"oomreports.oomlens.io", "oombundles.oomlens.io"} <= set(crds)
    assert names(kube, REPORTS) == before
