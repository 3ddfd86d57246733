"""The cgroup watcher on real cgroup v2 (kernel 6.1 in the qemu guest).

Runs the same Criterion binary as the v1 integration test,
tests/integration/itest_cgroup_live.c, inside the guest (the host root is
shared read-only and used as a chroot): real OOM kills must come as CGE_OOM
with delta 1 for the victim's cgroup (memory.events.local), nested cgroups
created later must be watched, rmdir must be CGE_REMOVED.
"""

import os
import re

import pytest

import vmlib


@pytest.fixture
def itest(vm):
    path = os.path.join(vmlib.build_dir(), "itests", "itest_cgroup_live")
    if not os.access(path, os.X_OK):
        pytest.skip(f"{path} not built (make test-integration)")
    return path


def test_watcher_on_real_cgroup_v2(run_guest, outdir, itest):
    code, log = run_guest(f"""
set -u
# Criterion keeps its arena in /dev/shm.
mkdir -p /host/dev/shm && mount -t tmpfs shm /host/dev/shm
chroot /host {itest} --jobs 1 --verbose >/out/itest.log 2>&1
echo "itest exit $?"
cat /out/itest.log
ls /sys/fs/cgroup | grep oomlens-test-cgroup && exit 9
exit 0
""", timeout=120, outdir=str(outdir))
    out = (outdir / "itest.log").read_text()
    assert code == 0, log
    syn = re.search(r"Tested: (\d+) \| Passing: (\d+) \| Failing: (\d+)",
                    out)
    assert syn, out
    tested, passing, failing = map(int, syn.groups())
    assert "[SKIP]" not in out, out
    src = os.path.join(os.path.dirname(__file__), "..", "integration",
                       "itest_cgroup_live.c")
    with open(src) as f:
        want = len(re.findall(r"^Test\(", f.read(), re.M))
    assert want >= 6
    assert (tested, passing, failing) == (want, want, 0), out
    assert "itest exit 0" in log, log
