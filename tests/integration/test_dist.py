# SPDX-License-Identifier: Apache-2.0
"""make dist's archives (scripts/dist.sh, docs/build.md: Distributables):
for each architecture in build/dist, the archives match SHA256SUMS and the
krew manifest, hold what they should, and their binaries need libc only
(the sidecar nothing: static-pie), print their version and do real work: the agent parses a kmsg fixture as
the amd64 agent does, the sidecar's pmap names a sleep process's binary.
The product images (oomlens-{agent,sidecar}-VERSION.oci.tar, one OCI
image index each, images/oci-index.sh) list exactly linux/amd64 and
linux/arm64; each image's config, labels and files are checked, and its
binary runs --version with the image's own loader and libc (the
sidecar's image has neither). The arm64 binaries run under qemu-aarch64-static called directly (binfmt
is never registered): it runs the arm64 loader of libc6-arm64-cross, which
loads the binary and that libc (--library-path). Not qemu's -L PREFIX: it
translates every absolute path that exists under PREFIX, "/" too, and the
programs open "/" then "proc" below it (common/base/host.c), and the
sidecar's pmap failed with ENOENT.
Skipped when make dist has not been run (it is not part of make test: the
first run cross-builds the arm64 static libraries, minutes)."""
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import tarfile
import time

import pytest

import distfiles
from distfiles import BUILD, DIST, REPO, SUMS, VERSION, sums
PROGS = ["oomlens-agent", "oomlens-sidecar", "oomlens-sidecar-upload",
         "kubectl-oomlens"]
# static-pie, glibc included: no loader, no libc (docs/build.md); the
# plugin alone needs libc (it resolves names through the host's NSS)
STATIC_PROGS = {"oomlens-agent", "oomlens-sidecar", "oomlens-sidecar-upload"}
FIXTURE = os.path.join(REPO, "tests", "fixtures", "kmsg",
                       "synthetic-global-6.18", "kmsg.txt")
# libc6-arm64-cross: the arm64 loader and libc
ARM64_LIBC = "/usr/aarch64-linux-gnu/lib"
ARM64_LOADER = os.path.join(ARM64_LIBC, "ld-linux-aarch64.so.1")
LOADERS = {"libc.so.6", "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1"}

pytestmark = pytest.mark.skipif(
    not os.path.exists(SUMS),
    reason=f"{DIST} not built (make dist: docs/build.md, Distributables)")


def arches():
    return distfiles.arches("oomlens")


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


def interpreter(path):
    """The program interpreter (PT_INTERP) path asks for, or None."""
    prog = subprocess.run(["readelf", "-lW", str(path)], capture_output=True,
                          text=True, check=True).stdout
    m = re.search(r"\[Requesting program interpreter: (.*)\]", prog)
    return m and m.group(1)


def runner(arch, static=False):
    """The command prefix that runs a binary of arch on this machine (a
    static one without the arm64 loader)."""
    if arch == "amd64":
        return []
    if arch != "arm64":
        pytest.fail(f"unknown architecture {arch}")
    q = qemu()
    if not q:
        pytest.skip("no qemu-aarch64-static (scripts/cross-sysroot.sh qemu)")
    if static:
        return [q]
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
        dyn = subprocess.run(["readelf", "-d", path], capture_output=True,
                             text=True, check=True).stdout
        needed = {line.split("[")[1].rstrip("]") for line in dyn.splitlines()
                  if "(NEEDED)" in line}
        if p in STATIC_PROGS:
            assert "static-pie linked" in desc, desc
            assert not needed and not interpreter(path), (needed, desc)
        else:
            assert "dynamically linked" in desc, desc
            assert needed <= LOADERS, f"{p} needs {needed - LOADERS}"


def test_run(unpacked):
    arch, root = unpacked
    top = root / "oomlens" / f"oomlens-{VERSION}-linux-{arch}"
    for p in PROGS:
        r = subprocess.run(runner(arch, p in STATIC_PROGS) + [str(top / p), "--version"],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        assert r.stdout.strip() == f"{p} {VERSION}", r.stdout

    # parse-kmsg: the same report as the amd64 agent (the everyday build's
    # when the dist has no amd64).
    r = subprocess.run(runner(arch, True) + [str(top / "oomlens-agent"),
                                             "parse-kmsg", FIXTURE],
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
        r = subprocess.run(runner(arch, True) + [str(top / "oomlens-sidecar"),
                                                 "pmap", str(sleep.pid)],
                           capture_output=True, text=True, timeout=60)
    finally:
        sleep.kill()
        sleep.wait()
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].split(":")[0].strip() == str(sleep.pid)
    name = os.path.basename(os.path.realpath(shutil.which("sleep")))
    assert any(line.split()[-1] == name for line in lines[2:] if line.split()), r.stdout


# The multi-arch images (images/oci-index.sh): one oci-archive per product,
# an OCI image layout whose index lists one image per architecture.
PRODUCTS = ["oomlens-agent", "oomlens-sidecar"]
# what each product's image holds in usr/bin (images/products.sh): the
# sidecar runs its uploader from beside itself
IMAGE_PROGS = {"oomlens-agent": ["oomlens-agent"],
               "oomlens-sidecar": ["oomlens-sidecar", "oomlens-sidecar-upload"]}
OCI_INDEX = "application/vnd.oci.image.index.v1+json"
OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
OCI_CONFIG = "application/vnd.oci.image.config.v1+json"
OCI_LAYER = "application/vnd.oci.image.layer.v1.tar+gzip"
# ELF e_machine by architecture
ELF_MACHINE = {"amd64": 62, "arm64": 183}
CA = "etc/ssl/certs/ca-certificates.crt"


class OciArchive:
    """An oci-archive read in place: its blobs checked against their
    digests and sizes as they are read."""

    def __init__(self, path):
        self.tar = tarfile.open(path)

    def json(self, name):
        return json.load(self.tar.extractfile(name))

    def blob(self, desc, media_type):
        assert desc["mediaType"] == media_type, desc
        algo, digest = desc["digest"].split(":")
        assert algo == "sha256", desc
        data = self.tar.extractfile(f"blobs/sha256/{digest}").read()
        assert len(data) == desc["size"], desc
        assert hashlib.sha256(data).hexdigest() == digest, desc
        return data

    def index(self):
        """The image index the layout's index.json names, and its ref."""
        assert self.json("oci-layout") == {"imageLayoutVersion": "1.0.0"}
        top = self.json("index.json")
        assert len(top["manifests"]) == 1, top
        desc = top["manifests"][0]
        ref = desc.get("annotations", {}).get("org.opencontainers.image.ref.name")
        return json.loads(self.blob(desc, OCI_INDEX)), ref

    def images(self):
        """{arch: (config, manifest)} of the index's images."""
        out = {}
        for desc in self.index()[0]["manifests"]:
            manifest = json.loads(self.blob(desc, OCI_MANIFEST))
            config = json.loads(self.blob(manifest["config"], OCI_CONFIG))
            out[desc["platform"]["architecture"]] = (config, manifest)
        return out

    def unpack(self, manifest, dest):
        """The image's layers, in order, into dest (plain files, directories
        and symbolic links only, none outside dest)."""
        for desc in manifest["layers"]:
            layer = tarfile.open(fileobj=io.BytesIO(self.blob(desc, OCI_LAYER)))
            for m in layer.getmembers():
                parts = m.name.split("/")
                assert not m.name.startswith("/") and ".." not in parts, m.name
                assert m.isfile() or m.isdir() or m.issym(), m.name
                assert not os.path.basename(m.name).startswith(".wh."), m.name
            layer.extractall(dest)


def oci_archive(name):
    if arches() != ["amd64", "arm64"]:
        pytest.skip(f"{DIST} holds {arches()} only (DIST_ARCHES): the images "
                    "are tested as make dist makes them, for both")
    path = os.path.join(DIST, f"{name}-{VERSION}.oci.tar")
    if not os.path.exists(path):
        pytest.fail(f"no {path}: make dist writes it (images/oci-index.sh)")
    return OciArchive(path)


def containerfile_labels(name):
    """The LABEL org.opencontainers.image.* values of the product's
    Containerfile."""
    with open(os.path.join(REPO, "images", name.split("-", 1)[1] + ".Containerfile")) as f:
        text = f.read().replace("\\\n", " ")
    labels = {}
    for line in text.splitlines():
        if line.startswith("LABEL "):
            for k, v in re.findall(r'(org\.opencontainers\.image\.[a-z]+)="([^"]*)"', line):
                labels[k] = v
    assert labels, name
    return labels


def elf_machine(path):
    with open(path, "rb") as f:
        head = f.read(20)
    assert head[:4] == b"\x7fELF" and head[4] == 2 and head[5] == 1, path
    return int.from_bytes(head[18:20], "little")


@pytest.mark.parametrize("name", PRODUCTS)
def test_image_index(name):
    oci = oci_archive(name)
    index, ref = oci.index()
    assert ref == f"localhost/{name}:{VERSION}"
    assert index["schemaVersion"] == 2 and index["mediaType"] == OCI_INDEX
    plats = [d["platform"] for d in index["manifests"]]
    assert plats == [{"architecture": "amd64", "os": "linux"},
                     {"architecture": "arm64", "os": "linux"}]


@pytest.mark.parametrize("name", PRODUCTS)
def test_image_configs(name):
    images = oci_archive(name).images()
    assert sorted(images) == ["amd64", "arm64"]
    pre = "org.opencontainers.image."
    want = containerfile_labels(name)
    assert want[pre + "title"] == name and want[pre + "licenses"] == "Apache-2.0"
    for arch, (config, manifest) in images.items():
        assert config["architecture"] == arch and config["os"] == "linux"
        assert "variant" not in config
        assert config["config"]["Entrypoint"] == [f"/usr/bin/{name}"]
        labels = config["config"]["Labels"]
        # revision: a commit of this repository (the one checked out at
        # make dist); created: that commit's time, the image's own time too
        rev = labels[pre + "revision"]
        assert len(rev) == 40 and subprocess.run(
            ["git", "-C", REPO, "cat-file", "-t", rev], capture_output=True,
            text=True).stdout.strip() == "commit", rev
        created = labels[pre + "created"]
        assert config["created"] == created, (config["created"], created)
        if "SOURCE_DATE_EPOCH" not in os.environ:
            epoch = int(subprocess.run(
                ["git", "-C", REPO, "log", "-1", "--format=%ct", rev],
                capture_output=True, text=True, check=True).stdout)
            assert created == time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                             time.gmtime(epoch)), created
        assert {k: v for k, v in labels.items() if k.startswith(pre)} == {
            **want, pre + "version": VERSION, pre + "created": created,
            pre + "revision": rev}
        assert len(manifest["layers"]) == 1, manifest
    revs = {c["config"]["Labels"][pre + "revision"] for c, _ in images.values()}
    assert len(revs) == 1, revs


@pytest.fixture(params=[(n, a) for n in PRODUCTS for a in ("amd64", "arm64")],
                ids=lambda p: f"{p[0]}-{p[1]}")
def image_root(request, tmp_path):
    """The image's files, unpacked; and the release archive's top
    directory, with the image's programs."""
    name, arch = request.param
    images = oci_archive(name).images()
    assert arch in images, f"no linux/{arch} image in {name}'s index"
    oci_archive(name).unpack(images[arch][1], tmp_path / "root")
    top = f"oomlens-{VERSION}-linux-{arch}"
    for p in IMAGE_PROGS[name]:
        extract(os.path.join(DIST, f"{top}.tar.gz"), tmp_path / "release",
                f"{top}/{p}")
    return name, arch, tmp_path / "root", tmp_path / "release" / top


def test_image_contents(image_root):
    name, arch, root, release = image_root
    files = sorted(str(p.relative_to(root)) for p in root.rglob("*")
                   if not p.is_dir())
    assert (root / "tmp").is_dir() and (root / "tmp").stat().st_mode & 0o7777 == 0o1777
    # the release archive's binaries, byte for byte
    for p in IMAGE_PROGS[name]:
        assert (root / "usr" / "bin" / p).read_bytes() == \
            (release / p).read_bytes(), p
    with open("/" + CA, "rb") as f:
        assert (root / CA).read_bytes() == f.read()
    # static-pie, every product: the binaries and the CA bundle, no
    # loader, no libc
    assert files == sorted([f"usr/bin/{p}" for p in IMAGE_PROGS[name]] + [CA])
    for p in IMAGE_PROGS[name]:
        assert p in STATIC_PROGS
        assert elf_machine(root / "usr" / "bin" / p) == ELF_MACHINE[arch]
        assert interpreter(root / "usr" / "bin" / p) is None


def test_image_runs(image_root):
    """The image's binaries run by themselves (static-pie), and in the
    image's files as a root (chroot, when root)."""
    name, arch, root, _ = image_root
    run = [] if arch == "amd64" else runner(arch)[:1]
    for p in IMAGE_PROGS[name]:
        r = subprocess.run(run + [str(root / "usr" / "bin" / p), "--version"],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        assert r.stdout.strip() == f"{p} {VERSION}", r.stdout
    if os.geteuid() != 0 or not shutil.which("chroot"):
        return
    if run:  # qemu is static: it runs in the chroot, binfmt untouched
        shutil.copy(run[0], root / "tmp" / "qemu-aarch64-static")
        run = ["/tmp/qemu-aarch64-static"]
    for p in IMAGE_PROGS[name]:
        r = subprocess.run(["chroot", str(root)] + run + [f"/usr/bin/{p}", "--version"],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        assert r.stdout.strip() == f"{p} {VERSION}", r.stdout
