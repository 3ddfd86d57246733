# SPDX-License-Identifier: Apache-2.0
"""Privileges in the steady state, read from the live /proc/<pid>/status
of the real programs: after start-up `oomlens-agent run` and
`oomlens-sidecar run` keep only the capabilities docs/privileges.md lists
(permitted = effective = bounding, nothing inheritable or ambient), have
NoNewPrivs 1 and a seccomp filter (Seccomp: 2), or none with --no-seccomp.
Needs root (a memory cgroup for the agent, /dev/kmsg)."""
import os
import subprocess
import sys
import time

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from oomtest import Agent, Cgroup, require_oom_env  # noqa: E402

BUILD = os.environ.get("OOMLENS_BUILD") or os.path.join(
    os.path.dirname(__file__), "..", "..", "build")
SIDECAR = os.path.join(BUILD, "bin", "oomlens-sidecar")
AGENT = os.path.join(BUILD, "bin", "oomlens-agent")

# linux/capability.h
CAP_KILL, CAP_SETGID, CAP_SETUID = 5, 6, 7
CAP_DAC_READ_SEARCH, CAP_SYS_PTRACE, CAP_SYSLOG = 2, 19, 34
AGENT_RUN = 1 << CAP_DAC_READ_SEARCH
SIDECAR_RUN = sum(1 << c for c in (CAP_SYS_PTRACE, CAP_SETUID, CAP_SETGID,
                                   CAP_KILL, CAP_DAC_READ_SEARCH))


def status(pid):
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            out[k] = v.strip()
    return out


def expect_steady(pid, caps, seccomp):
    s = status(pid)
    assert int(s["CapEff"], 16) == caps, s["CapEff"]
    assert int(s["CapPrm"], 16) == caps, s["CapPrm"]
    assert int(s["CapBnd"], 16) == caps, s["CapBnd"]
    assert int(s["CapInh"], 16) == 0
    assert int(s["CapAmb"], 16) == 0
    assert s["NoNewPrivs"] == "1"
    assert s["Seccomp"] == ("2" if seccomp else "0")


def wait_log(proc, text, timeout=10):
    deadline = time.time() + timeout
    seen = []
    while time.time() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        seen.append(line)
        if text in line:
            return line
    raise AssertionError(f"no '{text}' in log:\n" + "".join(seen))


@pytest.fixture
def root_only():
    if os.geteuid() != 0:
        pytest.skip("needs root: capabilities to drop")


@pytest.mark.parametrize("seccomp", [True, False])
def test_sidecar_run_steady_state_live(root_only, tmp_path, seccomp):
    app = subprocess.Popen(["sleep", "60"])
    args = [SIDECAR, "run", "--standalone", "--pid", str(app.pid),
            "--spool", str(tmp_path / "spool"), "--interval-ms", "100"]
    if not seccomp:
        args.insert(1, "--no-seccomp")
    sc = subprocess.Popen(args, stderr=subprocess.PIPE, text=True)
    try:
        line = wait_log(sc, "privileges dropped")
        assert ("seccomp on" if seccomp else "seccomp off") in line, line
        time.sleep(0.3)  # a few samples in the steady state
        assert sc.poll() is None
        expect_steady(sc.pid, SIDECAR_RUN, seccomp)
        # the sampler still works under the filter
        assert (tmp_path / "spool").is_dir()
    finally:
        sc.terminate()
        rc = sc.wait(timeout=10)
        app.kill()
        app.wait()
    assert rc == 0


def test_sidecar_clears_an_ambient_capability_it_was_started_with(
        root_only, tmp_path):
    # a runtime may start a container's process with ambient capabilities:
    # none survives the drop (the kernel clears it once the inheritable
    # set is emptied; PR_CAP_AMBIENT_CLEAR_ALL besides)
    app = subprocess.Popen(["sleep", "60"])
    sc = subprocess.Popen(
        ["setpriv", "--inh-caps", "+sys_nice", "--ambient-caps", "+sys_nice",
         SIDECAR, "run", "--standalone", "--pid", str(app.pid),
         "--spool", str(tmp_path / "spool"), "--interval-ms", "100"],
        stderr=subprocess.PIPE, text=True)
    try:
        wait_log(sc, "privileges dropped")
        expect_steady(sc.pid, SIDECAR_RUN, True)
    finally:
        sc.terminate()
        sc.wait(timeout=10)
        app.kill()
        app.wait()


def test_agent_run_steady_state_live(root_only, tmp_path):
    require_oom_env()
    cg = Cgroup("oomlens-test-privs-%d" % os.getpid())
    try:
        cg.mkdir("/a", limit_mb=64)
        agent = Agent([cg.path()], str(tmp_path / "state"))
        try:
            assert any("privileges dropped" in l and "seccomp on" in l
                       for l in agent.stderr), agent.log()
            expect_steady(agent.proc.pid, AGENT_RUN, True)
        finally:
            agent.stop()
    finally:
        cg.cleanup()


def test_one_shot_commands_drop_to_their_set(root_only, tmp_path):
    # show keeps no capability: root without CAP_DAC_OVERRIDE or
    # CAP_DAC_READ_SEARCH cannot open a mode-0000 file
    f = tmp_path / "bundle.tar.gz"
    f.write_bytes(b"x")
    os.chmod(f, 0)
    p = subprocess.run([AGENT, "show", str(f)], capture_output=True,
                       text=True, timeout=10)
    assert p.returncode == 1
    assert "Permission denied" in p.stderr, p.stderr
