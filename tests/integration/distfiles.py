# SPDX-License-Identifier: Apache-2.0
"""What make dist left in build/dist (scripts/dist.sh), for the tests that
check its archives (test_dist.py) and install them (test_krew.py)."""
import os

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("OOMLENS_BUILD") or os.path.join(REPO, "build")
DIST = os.path.join(BUILD, "dist")
SUMS = os.path.join(DIST, "SHA256SUMS")
with open(os.path.join(REPO, "VERSION")) as f:
    VERSION = f.read().strip()


def sums():
    """SHA256SUMS as {file name: hex digest}; {} before make dist."""
    out = {}
    if os.path.exists(SUMS):
        with open(SUMS) as f:
            for line in f:
                digest, name = line.split()
                out[name] = digest
    return out


def arches(name):
    """The architectures of NAME-VERSION-linux-ARCH.tar.gz in SHA256SUMS,
    sorted; ["none"] when there is none (a parametrised test then fails
    by name instead of vanishing)."""
    prefix, suffix = f"{name}-{VERSION}-linux-", ".tar.gz"
    return sorted(n[len(prefix):-len(suffix)] for n in sums()
                  if n.startswith(prefix) and n.endswith(suffix)) or ["none"]
