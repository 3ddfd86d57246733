# SPDX-License-Identifier: Apache-2.0
"""A hostile pod against the live sidecar (real /proc, real /tmp): a FIFO
planted at /tmp/hsperfdata_<user>/<pid> by the target's own user once held
`oomlens-sidecar snapshot` in open(2) for good (jvm_detect read it without
O_NONBLOCK). Needs root (to run the target as nobody)."""
import os
import pwd
import shutil
import subprocess
import time

import pytest

BUILD = os.environ.get("OOMLENS_BUILD") or os.path.join(
    os.path.dirname(__file__), "..", "..", "build")
SIDECAR = os.path.join(BUILD, "bin", "oomlens-sidecar")


def test_planted_fifo_does_not_hang_snapshot_live(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("needs root to run the target as nobody")
    if not os.access(SIDECAR, os.X_OK):
        pytest.skip(f"{SIDECAR} not built")
    nobody = pwd.getpwnam("nobody")
    target = subprocess.Popen(
        ["sleep", "60"],
        preexec_fn=lambda: (os.setgid(nobody.pw_gid),
                            os.setuid(nobody.pw_uid)))
    perf = f"/tmp/hsperfdata_{nobody.pw_name}"
    made = not os.path.exists(perf)
    fifo = os.path.join(perf, str(target.pid))
    try:
        if made:
            os.mkdir(perf, 0o755)
            os.chown(perf, nobody.pw_uid, nobody.pw_gid)
        os.mkfifo(fifo, 0o600)
        os.chown(fifo, nobody.pw_uid, nobody.pw_gid)
        t0 = time.monotonic()
        out = tmp_path / "snap"
        p = subprocess.run([SIDECAR, "snapshot", str(target.pid), "-o",
                            str(out)], capture_output=True, text=True,
                           timeout=30)
        took = time.monotonic() - t0
        assert p.returncode == 0, p.stderr
        assert took < 10, f"snapshot took {took:.1f}s"
        pdir = out / "processes" / str(target.pid)
        assert (pdir / "pmap.txt").is_file()
        assert (pdir / "snapshot.json").is_file()
    finally:
        target.kill()
        target.wait()
        if os.path.lexists(fifo):
            os.unlink(fifo)
        if made:
            shutil.rmtree(perf, ignore_errors=True)
