# SPDX-License-Identifier: Apache-2.0
"""The plugin installed by a real krew from make dist's manifest and
archives (build/dist/oomlens.yaml, kubectl-oomlens-VERSION-linux-ARCH.tar.gz),
as a user would: `kubectl krew install --manifest=... --archive=...`, then
`kubectl oomlens --version` and `--help`, `kubectl krew list` and
`kubectl krew uninstall oomlens`, once per architecture in SHA256SUMS, each
in its own KREW_ROOT. krew picks the platform by KREW_OS/KREW_ARCH; the
arm64 plugin runs under qemu-aarch64-static as in test_dist.py. Also: krew
refuses an archive whose sha256 is not the manifest's, and krew's own
validate-krew-manifest (when it sits beside the krew binary) passes the
manifest, its archives served from a loopback HTTP server.

Optional and local: krew is not on this machine nor in Debian, and CI
cannot fetch its source. OOMLENS_KREW names a kubectl-krew binary (krew
v0.4.1 was built from its source with Debian 12's Go 1.19 for the check in
kubectl-oomlens/README.md); unset, everything here skips. Nothing leaves
the machine: the plugin index krew insists on for list and uninstall is an
empty local git repository (KREW_DEFAULT_INDEX_URI), and the upgrade check
is off (KREW_NO_UPGRADE_CHECK, set by the kubectl-krew wrapper on PATH)."""
import functools
import hashlib
import http.server
import os
import shutil
import subprocess
import tarfile
import threading

import pytest

import distfiles
from distfiles import BUILD, DIST, REPO, SUMS, VERSION, sums
MANIFEST = os.path.join(DIST, "oomlens.yaml")
KREW = os.environ.get("OOMLENS_KREW")
# libc6-arm64-cross: the arm64 loader and libc (as test_dist.py)
ARM64_LIBC = "/usr/aarch64-linux-gnu/lib"
ARM64_LOADER = os.path.join(ARM64_LIBC, "ld-linux-aarch64.so.1")


def find_kubectl():
    """OOMLENS_KUBECTL, else make deps DEPS=test's, else one on PATH."""
    for path in (os.environ.get("OOMLENS_KUBECTL"),
                 os.path.join(BUILD, "tools", "bin", "kubectl")):
        if path and os.access(path, os.X_OK):
            return path
    return shutil.which("kubectl")


def why_skip():
    if not KREW:
        return ("OOMLENS_KREW unset: the path of a kubectl-krew binary (krew "
                "is not installed here and CI cannot fetch its source)")
    if not os.access(KREW, os.X_OK):
        return f"OOMLENS_KREW={KREW} is not an executable file"
    if not (os.path.exists(SUMS) and os.path.exists(MANIFEST)):
        return f"{DIST} not built (make dist: docs/build.md, Distributables)"
    if not find_kubectl():
        return "no kubectl: `make deps DEPS=test` puts one in build/tools/bin"
    if not shutil.which("git"):
        return "no git: krew clones its (here local, empty) plugin index"
    return None


pytestmark = pytest.mark.skipif(why_skip() is not None, reason=why_skip() or "")


def arches():
    return distfiles.arches("kubectl-oomlens")


def archive(arch):
    return os.path.join(DIST, f"kubectl-oomlens-{VERSION}-linux-{arch}.tar.gz")


def archive_member(arch, name):
    with tarfile.open(archive(arch)) as t:
        return t.extractfile(name).read()


def runner(arch):
    """The command prefix that runs the plugin of arch on this machine."""
    if arch == "amd64":
        return []
    if arch != "arm64":
        pytest.fail(f"unknown architecture {arch}")
    r = subprocess.run([os.path.join(REPO, "scripts", "cross-sysroot.sh"),
                        "--cached", "qemu"], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip("no qemu-aarch64-static (scripts/cross-sysroot.sh qemu)")
    if not os.path.exists(ARM64_LOADER):
        pytest.skip(f"no {ARM64_LOADER} (apt-get install libc6-arm64-cross)")
    return [r.stdout.strip(), ARM64_LOADER, "--library-path", ARM64_LIBC]


class Krew:
    """kubectl and kubectl-krew on a PATH of their own, a HOME and an empty
    local plugin index, in tmp; run() is `kubectl ARGS` for one KREW_ROOT
    and architecture."""

    def __init__(self, tmp):
        self.tmp = tmp
        self.bin = tmp / "tools"
        self.bin.mkdir()
        # A wrapper, not a link: validate-krew-manifest runs `kubectl krew`
        # with an environment of its own, and krew's upgrade check (on
        # unless KREW_NO_UPGRADE_CHECK is set) asks GitHub in 40% of runs.
        wrapper = self.bin / "kubectl-krew"
        wrapper.write_text("#!/bin/sh\nKREW_NO_UPGRADE_CHECK=1 exec "
                           f"'{os.path.abspath(KREW)}' \"$@\"\n")
        wrapper.chmod(0o755)
        os.symlink(os.path.abspath(find_kubectl()), self.bin / "kubectl")
        (tmp / "home").mkdir()
        self.index = tmp / "index"
        (self.index / "plugins").mkdir(parents=True)
        (self.index / "plugins" / ".keep").touch()
        git = ["git", "-C", str(self.index), "-c", "user.name=test",
               "-c", "user.email=test@localhost", "-c", "init.defaultBranch=master"]
        for args in (["init", "-q"], ["add", "-A"],
                     ["commit", "-q", "-m", "an empty krew index"]):
            subprocess.run(git + args, check=True, capture_output=True)

    def env(self, root, arch):
        return {
            "PATH": os.pathsep.join([str(root / "bin"), str(self.bin),
                                     "/usr/sbin", "/usr/bin", "/sbin", "/bin"]),
            "HOME": str(self.tmp / "home"),
            "KREW_ROOT": str(root),
            "KREW_OS": "linux",
            "KREW_ARCH": arch,
            "KREW_NO_UPGRADE_CHECK": "1",
            "KREW_DEFAULT_INDEX_URI": str(self.index),
        }

    def run(self, root, arch, *args):
        return subprocess.run(["kubectl", *args], env=self.env(root, arch),
                              stdin=subprocess.DEVNULL, capture_output=True,
                              text=True, timeout=120)


@pytest.fixture
def krew(tmp_path):
    return Krew(tmp_path)


def receipt(root):
    yaml = pytest.importorskip("yaml")
    with open(root / "receipts" / "oomlens.yaml") as f:
        return yaml.safe_load(f)


@pytest.mark.parametrize("arch", arches())
def test_install_run_uninstall(krew, tmp_path, arch):
    if arch == "none":
        pytest.fail(f"no kubectl-oomlens-{VERSION}-linux-*.tar.gz in {SUMS}")
    root = tmp_path / f"root-{arch}"
    r = krew.run(root, arch, "krew", "version")
    assert r.returncode == 0, r.stderr
    assert ["DetectedPlatform", f"linux/{arch}"] in [l.split() for l in r.stdout.splitlines()]
    r = krew.run(root, arch, "krew", "update")
    assert r.returncode == 0, r.stderr

    r = krew.run(root, arch, "krew", "install", f"--manifest={MANIFEST}",
                 f"--archive={archive(arch)}")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Installed plugin: oomlens" in r.stdout + r.stderr

    # The receipt: the manifest as installed, its platform for arch with
    # the sha256 of SHA256SUMS; installed from a file, not an index.
    rec = receipt(root)
    assert rec["metadata"]["name"] == "oomlens"
    assert rec["spec"]["version"] == f"v{VERSION}"
    plats = [p for p in rec["spec"]["platforms"]
             if p["selector"]["matchLabels"] == {"os": "linux", "arch": arch}]
    assert len(plats) == 1
    name = os.path.basename(archive(arch))
    assert plats[0]["sha256"] == sums()[name]
    assert plats[0]["sha256"] == hashlib.sha256(open(archive(arch), "rb").read()).hexdigest()
    assert rec["status"]["source"]["name"] == "detached"

    # What krew put down: the archive's binary and LICENSE, and the link
    # on PATH.
    store = root / "store" / "oomlens" / f"v{VERSION}"
    assert sorted(os.listdir(store)) == ["LICENSE", "kubectl-oomlens"]
    binary = store / "kubectl-oomlens"
    assert binary.read_bytes() == archive_member(arch, "bin/kubectl-oomlens")
    with open(os.path.join(REPO, "LICENSE"), "rb") as f:
        assert (store / "LICENSE").read_bytes() == f.read()
    link = root / "bin" / "kubectl-oomlens"
    assert os.path.realpath(link) == os.path.realpath(binary)
    desc = subprocess.run(["file", "-b", str(binary)], capture_output=True,
                          text=True, check=True).stdout
    assert {"amd64": "x86-64", "arm64": "ARM aarch64"}[arch] in desc, desc

    # It runs: through kubectl's plugin lookup where the machine can run
    # it, else the installed file under qemu.
    if arch == "amd64":
        version = krew.run(root, arch, "oomlens", "--version")
        usage = krew.run(root, arch, "oomlens", "--help")
    else:
        run = runner(arch)
        version = subprocess.run(run + [str(link), "--version"], capture_output=True,
                                 text=True, timeout=120)
        usage = subprocess.run(run + [str(link), "--help"], capture_output=True,
                               text=True, timeout=120)
    assert version.returncode == 0, version.stderr
    assert version.stdout.strip() == f"kubectl-oomlens {VERSION}"
    assert usage.returncode == 0, usage.stderr
    assert usage.stdout.splitlines()[0] == "usage: kubectl oomlens COMMAND [options]"

    # krew list (not a terminal: one name a line; v0.4.1 prefixes a plugin
    # installed from a manifest with "detached/").
    r = krew.run(root, arch, "krew", "list")
    assert r.returncode == 0, r.stderr
    assert [l.split("/")[-1] for l in r.stdout.split()] == ["oomlens"], r.stdout

    r = krew.run(root, arch, "krew", "uninstall", "oomlens")
    assert r.returncode == 0, r.stderr
    assert "Uninstalled plugin: oomlens" in r.stdout + r.stderr
    assert not (root / "store" / "oomlens").exists()
    assert not os.path.lexists(link)
    assert not (root / "receipts" / "oomlens.yaml").exists()
    if arch == "amd64":
        assert krew.run(root, arch, "oomlens", "--version").returncode != 0


def test_checksum_refused(krew, tmp_path):
    """One platform's entry with the other's archive: krew checks the
    sha256 of an --archive too, and installs nothing."""
    have = arches()
    if len(have) < 2:
        pytest.skip(f"one architecture in {SUMS}: {have}")
    arch, other = have[0], have[1]
    root = tmp_path / "root"
    r = krew.run(root, arch, "krew", "install", f"--manifest={MANIFEST}",
                 f"--archive={archive(other)}")
    assert r.returncode != 0
    want, got = sums()[os.path.basename(archive(arch))], sums()[os.path.basename(archive(other))]
    assert f"checksum does not match, want: {want}, got {got}" in r.stderr, r.stderr
    assert not (root / "store" / "oomlens").exists()
    assert not (root / "receipts" / "oomlens.yaml").exists()


class Quiet(http.server.SimpleHTTPRequestHandler):
    got = []

    def log_message(self, *args):
        pass

    def do_GET(self):
        Quiet.got.append(self.path)
        super().do_GET()


def test_validate_krew_manifest(krew, tmp_path):
    """krew's validate-krew-manifest (the krew index's check): structure,
    every platform used and none overlapping, then each platform
    installed by `kubectl krew install --manifest` (downloading its uri)
    with a LICENSE among the installed files. The uri is DIST_URL's
    placeholder: the manifest is checked with DIST_URL a loopback server
    of build/dist, as make dist DIST_URL=... would write it."""
    validator = os.environ.get("OOMLENS_KREW_VALIDATE") or \
        os.path.join(os.path.dirname(os.path.abspath(KREW)), "validate-krew-manifest")
    if not os.access(validator, os.X_OK):
        pytest.skip(f"no {validator} (krew's cmd/validate-krew-manifest; "
                    "OOMLENS_KREW_VALIDATE names it elsewhere)")
    Quiet.got = []
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Quiet, directory=DIST))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        lines = []
        with open(MANIFEST) as f:
            for line in f:
                key, _, value = line.partition("uri: ")
                if value and not key.strip():
                    line = f"{key}uri: {url}/{value.strip().rsplit('/', 1)[1]}\n"
                lines.append(line)
        (tmp_path / "m").mkdir()
        local = tmp_path / "m" / "oomlens.yaml"  # named after the plugin
        local.write_text("".join(lines))
        r = subprocess.run([validator, "-manifest", str(local)],
                           env=krew.env(tmp_path / "unused", "amd64"),
                           stdin=subprocess.DEVNULL, capture_output=True,
                           text=True, timeout=300)
    finally:
        server.shutdown()
        server.server_close()
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    assert "structural validation OK" in out
    assert "no overlapping spec.platform[].selector" in out
    assert f"all {len(arches())} spec.platforms installed fine" in out, out
    assert sorted(Quiet.got) == sorted(
        f"/{os.path.basename(archive(a))}" for a in arches())
