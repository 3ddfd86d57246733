"""The VM harness itself: exit codes through isa-debug-exit, cgroup v2 with
the memory controller, the host root as a chroot, panics and timeouts."""

import os

SCRIPT = r"""
uname -r
grep -qw memory /sys/fs/cgroup/cgroup.subtree_control || exit 3
grep -q '^cgroup2 /sys/fs/cgroup cgroup2' /proc/mounts || exit 4
# The host root is a read-only chroot with its own /tmp, /proc and cgroup2.
chroot /host /bin/sh -c 'echo chroot-ok >/tmp/x && cat /tmp/x' || exit 5
chroot /host /bin/sh -c 'touch /etc/oomlens-vm-probe' 2>/dev/null && exit 6
chroot /host test -f /sys/fs/cgroup/cgroup.controllers || exit 7
test -d "/host$OOMLENS_REPO/tests/vm" || exit 8
echo guest-wrote >/out/probe
exit 42
"""


def test_exit_code_cgroup2_and_host_chroot(run_guest, outdir):
    code, log = run_guest(SCRIPT, outdir=str(outdir))
    assert code == 42, log
    assert "6.1." in log
    assert "chroot-ok" in log
    assert (outdir / "probe").read_text() == "guest-wrote\n"
    assert not os.path.exists("/etc/oomlens-vm-probe")


def test_panic_is_not_success(run_guest, vm):
    code, log = run_guest("echo c >/proc/sysrq-trigger; sleep 5; exit 0",
                          share_root=False)
    assert code == vm.EXIT_NO_DEBUG_EXIT, log
    assert "Kernel panic" in log or "sysrq" in log.lower(), log


def test_timeout_kills_the_guest(run_guest, vm):
    code, _ = run_guest("sleep 100", timeout=2, share_root=False)
    assert code == vm.EXIT_TIMEOUT
