# SPDX-License-Identifier: Apache-2.0
"""make dist's archives (scripts/dist.sh, docs/build.md: Distributables):
for each architecture in build/dist, the archives match SHA256SUMS and the
krew manifest, hold what they should, and their binaries need libc only,
print their version and do real work: the agent parses a kmsg fixture as
the amd64 agent does, the sidecar's pmap names a sleep process's binary.
The arm64 binaries run under qemu-aarch64-static called directly (binfmt
is never registered): it runs the arm64 loader of libc6-arm64-cross, which
loads the binary and that libc (--library-path). Not qemu's -L PREFIX: it
translates every absolute path that exists under PREFIX, "/" too, and the
programs open "/" then "proc" below it (common/base/host.c), and the
sidecar's pmap failed with ENOENT.
Skipped when make dist has not been run (it is not part of make test: the
first run cross-builds the arm64 static libraries, minutes)."""
import hashlib
import json
import os
import shutil
import subprocess
import tarfile

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("OOMLENS_BUILD") or os.path.join(REPO, "build")
DIST = os.path.join(BUILD, "dist")
SUMS = os.path.join(DIST, "SHA256SUMS")
with open(os.path.join(REPO, "VERSION")) as f:
    VERSION = f.read().strip()
PROGS = ["oomlens-agent", "oomlens-sidecar", "kubectl-oomlens"]
FIXTURE = os.path.join(REPO, "tests", "fixtures", "kmsg",
                       "synthetic-global-6.18", "kmsg.txt")
# libc6-arm64-cross: the arm64 loader and libc
ARM64_LIBC = "/usr/aarch64-linux-gnu/lib"
ARM64_LOADER = os.path.join(ARM64_LIBC, "ld-linux-aarch64.so.1")
LOADERS = {"libc.so.6", "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1"}

pytestmark = pytest.mark.skipif(
    not os.path.exists(SUMS),
    reason=f"{DIST} not built (make dist: docs/build.md, Distributables)")


def sums():
    out = {}
    if os.path.exists(SUMS):
        with open(SUMS) as f:
            for line in f:
                digest, name = line.split()
                out[name] = digest
    return out


def arches():
    prefix, suffix = f"oomlens-{VERSION}-linux-", ".tar.gz"
    return sorted(n[len(prefix):-len(suffix)] for n in sums()
                  if n.startswith(prefix) and n.endswith(suffix)) or ["none"]


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def extract(archive, dest, member=None):
    """Unpacks archive (or one member) into dest, refusing members that
    would land outside it (bookworm's Python 3.11.2 has no tarfile filter)."""
    with tarfile.open(archive) as t:
        for m in t.getmembers():
            parts = m.name.split("/")
            assert not m.name.startswith("/") and ".." not in parts, m.name
            assert m.isfile() or m.isdir(), m.name
        if member:
            t.extract(member, dest)
        else:
            t.extractall(dest)


def qemu():
    """qemu-aarch64-static: installed, or unpacked by cross-sysroot.sh."""
    r = subprocess.run([os.path.join(REPO, "scripts", "cross-sysroot.sh"),
                        "--cached", "qemu"], capture_output=True, text=True)
    return r.stdout.strip() if r.returncode == 0 else None


def runner(arch):
    """The command prefix that runs a binary of arch on this machine."""
    if arch == "amd64":
        return []
    if arch != "arm64":
        pytest.fail(f"unknown architecture {arch}")
    q = qemu()
    if not q:
        pytest.skip("no qemu-aarch64-static (scripts/cross-sysroot.sh qemu)")
    if not os.path.exists(ARM64_LOADER):
        pytest.skip(f"no {ARM64_LOADER} (apt-get install libc6-arm64-cross)")
    return [q, ARM64_LOADER, "--library-path", ARM64_LIBC]


@pytest.fixture(params=arches())
def unpacked(request, tmp_path):
    arch = request.param
    if arch == "none":
        pytest.fail(f"no oomlens-{VERSION}-linux-*.tar.gz in {SUMS}")
    for name in (f"oomlens-{VERSION}-linux-{arch}.tar.gz",
                 f"kubectl-oomlens-{VERSION}-linux-{arch}.tar.gz"):
        extract(os.path.join(DIST, name), tmp_path / name.split(f"-{VERSION}-")[0])
    return arch, tmp_path


def test_sums_and_manifest():
    yaml = pytest.importorskip("yaml")
    got = sums()
    assert set(got) == {f"{kind}-{VERSION}-linux-{a}.tar.gz"
                        for a in arches() for kind in ("oomlens", "kubectl-oomlens")}
    for name, digest in got.items():
        assert sha256(os.path.join(DIST, name)) == digest, name
    with open(os.path.join(DIST, "oomlens.yaml")) as f:
        m = yaml.safe_load(f)
    assert m["kind"] == "Plugin" and m["metadata"]["name"] == "oomlens"
    assert m["spec"]["version"] == f"v{VERSION}"
    plats = {p["selector"]["matchLabels"]["arch"]: p for p in m["spec"]["platforms"]}
    assert sorted(plats) == arches()
    for arch, p in plats.items():
        name = f"kubectl-oomlens-{VERSION}-linux-{arch}.tar.gz"
        assert p["selector"]["matchLabels"]["os"] == "linux"
        assert p["sha256"] == got[name]
        assert p["uri"].endswith("/" + name)
        assert p["bin"] == "kubectl-oomlens"
        assert {"from": "bin/kubectl-oomlens", "to": "."} in p["files"]


def test_archives(unpacked):
    arch, root = unpacked
    top = root / "oomlens" / f"oomlens-{VERSION}-linux-{arch}"
    assert sorted(os.listdir(top)) == sorted(PROGS + ["LICENSE", "README"])
    krew = root / "kubectl-oomlens"
    assert sorted(os.listdir(krew)) == ["LICENSE", "bin"]
    assert os.listdir(krew / "bin") == ["kubectl-oomlens"]
    with open(os.path.join(REPO, "LICENSE"), "rb") as f:
        lic = f.read()
    assert (top / "LICENSE").read_bytes() == lic == (krew / "LICENSE").read_bytes()
    assert (top / "kubectl-oomlens").read_bytes() == \
        (krew / "bin" / "kubectl-oomlens").read_bytes()
    machine = {"amd64": "x86-64", "arm64": "ARM aarch64"}[arch]
    for p in PROGS:
        path = str(top / p)
        desc = subprocess.run(["file", "-b", path], capture_output=True,
                              text=True, check=True).stdout
        assert machine in desc and "stripped" in desc and "not stripped" not in desc, desc
        assert "statically linked" in desc or "dynamically linked" in desc, desc
        dyn = subprocess.run(["readelf", "-d", path], capture_output=True,
                             text=True, check=True).stdout
        needed = {line.split("[")[1].rstrip("]") for line in dyn.splitlines()
                  if "(NEEDED)" in line}
        assert needed <= LOADERS, f"{p} needs {needed - LOADERS}"


def test_run(unpacked):
    arch, root = unpacked
    top = root / "oomlens" / f"oomlens-{VERSION}-linux-{arch}"
    run = runner(arch)
    for p in PROGS:
        r = subprocess.run(run + [str(top / p), "--version"], capture_output=True,
                           text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        assert r.stdout.strip() == f"{p} {VERSION}", r.stdout

    # parse-kmsg: the same report as the amd64 agent (the everyday build's
    # when the dist has no amd64).
    r = subprocess.run(run + [str(top / "oomlens-agent"), "parse-kmsg", FIXTURE],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    ref_agent = os.path.join(BUILD, "bin", "oomlens-agent")
    if arch == "amd64":
        ref_agent = str(top / "oomlens-agent")
    elif "amd64" in arches():
        member = f"oomlens-{VERSION}-linux-amd64/oomlens-agent"
        extract(os.path.join(DIST, f"oomlens-{VERSION}-linux-amd64.tar.gz"),
                root / "amd64", member)
        ref_agent = str(root / "amd64" / member)
    if not os.access(ref_agent, os.X_OK):
        pytest.skip(f"no amd64 agent to compare with ({ref_agent}: make)")
    ref = subprocess.run([ref_agent, "parse-kmsg", FIXTURE], capture_output=True,
                         text=True, timeout=60, check=True).stdout
    got = [json.loads(line) for line in r.stdout.splitlines() if line.strip()]
    want = [json.loads(line) for line in ref.splitlines() if line.strip()]
    assert got and [v["pid"] for g in got for v in g["victims"]] == \
        [v["pid"] for w in want for v in w["victims"]] == [7777]
    assert got == want

    # pmap of a real process: the mappings of the sleep binary are named.
    sleep = subprocess.Popen(["sleep", "60"])
    try:
        r = subprocess.run(run + [str(top / "oomlens-sidecar"), "pmap",
                                  str(sleep.pid)],
                           capture_output=True, text=True, timeout=60)
    finally:
        sleep.kill()
        sleep.wait()
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].split(":")[0].strip() == str(sleep.pid)
    name = os.path.basename(os.path.realpath(shutil.which("sleep")))
    assert any(line.split()[-1] == name for line in lines[2:] if line.split()), r.stdout
