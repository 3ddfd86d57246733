"""pytest fixtures for the cgroup v2 VM tests (see tests/vm/README.md).

run_guest(script_text, timeout=60, **kw) -> (guest_exit_code, serial_log)
boots Debian's 6.1 kernel in qemu (TCG) with a busybox initramfs and runs
script_text as root in it; the whole module skips, with the reason printed,
when qemu or the kernel cannot be had.
"""

import os
import subprocess

import pytest

import vmlib

_prepared = {}


def _prepare():
    """Runs prepare.sh once per session; returns None or why it failed."""
    if "why" not in _prepared:
        why = None
        if not vmlib.shutil.which(vmlib.QEMU):
            why = f"{vmlib.QEMU} not installed (make deps)"
        else:
            try:
                r = subprocess.run([os.path.join(vmlib.HERE, "prepare.sh")],
                                   capture_output=True, text=True,
                                   timeout=600)
                if r.returncode != 0:
                    tail = (r.stdout + r.stderr).strip().splitlines()[-3:]
                    why = "prepare.sh failed: " + " | ".join(tail)
            except subprocess.TimeoutExpired:
                why = "prepare.sh took more than 600 s"
            why = why or vmlib.unavailable()
        _prepared["why"] = why
    return _prepared["why"]


@pytest.fixture(scope="session")
def vm():
    """The vmlib module, once the kernel and initramfs are in place."""
    why = _prepare()
    if why:
        pytest.skip(f"no cgroup v2 guest: {why}")
    return vmlib


@pytest.fixture
def run_guest(vm):
    """run_guest(script_text, timeout=60, share_root=True, outdir=None,
    env=None) -> (exit_code, serial_log); see vmlib.run_guest."""
    return vm.run_guest


@pytest.fixture
def outdir(tmp_path):
    """A host folder the guest can write: /out (and /tmp/out in the
    chroot)."""
    d = tmp_path / "out"
    d.mkdir()
    os.chmod(d, 0o777)
    return d
