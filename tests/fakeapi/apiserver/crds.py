"""The oomlens.io CRDs the fake serves: read from manifests/crds/*.yaml,
the files users apply, so the fake never drifts from them; and their
storage version hashes (a hash of group/version/kind, the same for every
schema: the real server's answer in 10-discovery-oomlens.http)."""
import os

import yaml

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
CRD_DIR = os.path.join(_ROOT, "manifests", "crds")


def load_crds(*paths):
    """The CustomResourceDefinitions in the YAML files paths, in order."""
    out = []
    for p in paths:
        with open(p) as f:
            out += [d for d in yaml.safe_load_all(f)
                    if d and d.get("kind") == "CustomResourceDefinition"]
    return out


OOMREPORT_CRD, OOMBUNDLE_CRD = load_crds(
    os.path.join(CRD_DIR, "oomreports.yaml"),
    os.path.join(CRD_DIR, "oombundles.yaml"))
CRDS = [OOMREPORT_CRD, OOMBUNDLE_CRD]
STORAGE_HASH = {"oomreports": "vYtDOciUYx8=", "oombundles": "+ub28jGNWmc="}
