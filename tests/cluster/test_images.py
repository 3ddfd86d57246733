# SPDX-License-Identifier: Apache-2.0
"""The product images as `make images` writes them (docker archives in
build/images/, the ones the node imports): each one's OCI labels, read
from the image config inside the archive."""

import json
import os
import subprocess
import tarfile

import pytest

from conftest import BUILD, TOP

VERSION = open(os.path.join(TOP, "VERSION")).read().strip()


def image_config(archive):
    with tarfile.open(archive) as t:
        manifest = json.load(t.extractfile("manifest.json"))
        assert len(manifest) == 1, manifest
        return json.load(t.extractfile(manifest[0]["Config"]))


@pytest.mark.parametrize("name", ["oomlens-agent", "oomlens-sidecar"])
def test_product_image_has_its_oci_labels(name):
    archive = os.path.join(BUILD, "images", name + ".tar")
    if not os.path.exists(archive):
        pytest.skip(archive + " not built (make images)")
    cfg = image_config(archive)
    labels = cfg["config"]["Labels"]
    pre = "org.opencontainers.image."
    assert labels[pre + "title"] == name
    assert labels[pre + "version"] == VERSION
    assert labels[pre + "licenses"] == "Apache-2.0"
    assert labels[pre + "source"].startswith("https://")
    assert name.split("-", 1)[1] in labels[pre + "description"]
    # a commit of this repository (the one checked out at the build)
    rev = labels[pre + "revision"]
    assert len(rev) == 40 and int(rev, 16) >= 0, rev
    kind = subprocess.run(["git", "-C", TOP, "cat-file", "-t", rev],
                          capture_output=True, text=True)
    assert kind.stdout.strip() == "commit", (rev, kind.stderr)
    created = labels[pre + "created"]
    assert created.endswith("Z") and created[:2] == "20", created
    assert cfg["architecture"] == "amd64" and cfg["os"] == "linux"
