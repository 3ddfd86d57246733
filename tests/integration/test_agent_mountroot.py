"""The agent reads the memory hierarchy through a bind mount of a subtree,
as inside a container: the kernel names the victim's cgroup from the root
of the whole hierarchy (/oomlens-test-mountroot-N/app), the agent sees it
as /app. Real OOM kills on this machine, in a private mount namespace
(unshare -m) whose host root has proc, dev and the memory hierarchy bound
in: the agent learns the subtree from its mountinfo."""
import json
import os
import re
import shutil
import subprocess
import tarfile
import time
import urllib.request

import pytest

import oomtest
from oomtest import (Agent, Cgroup, free_port, hog, require_oom_env,
                     wait_oom_ratelimit)


def bundle_members(path):
    with tarfile.open(path) as t:
        return {m.name.split("/", 1)[1]: t.extractfile(m).read()
                for m in t.getmembers() if m.isfile()}


@pytest.fixture
def cgs():
    require_oom_env()
    if shutil.which("unshare") is None:
        pytest.skip("needs unshare(1) for a private mount namespace")
    made = []

    def make(name):
        c = Cgroup("%s-%d" % (name, os.getpid()))
        made.append(c)
        return c
    yield make
    for c in made:
        c.cleanup()


@pytest.fixture
def bound_agent(cgs, tmp_path, monkeypatch):
    """Starts the agent with --host-root pointing at a tree where the
    memory hierarchy is the subtree of cgroup `inside` only."""
    agents = []

    def start(inside, watch, dev=True, extra=(), ro=False):
        root, mode = inside.root, inside.mode
        host = tmp_path / "host"
        mem = host / ("sys/fs/cgroup/memory" if mode == 1 else "sys/fs/cgroup")
        for d in (host / "proc", host / "dev", mem):
            d.mkdir(parents=True, exist_ok=True)
        wrapper = tmp_path / "agent-in-ns"
        wrapper.write_text(
            "#!/bin/sh\nset -e\n"
            f"mount --bind /proc '{host}/proc'\n"
            + (f"mount --bind /dev '{host}/dev'\n" if dev else "") +
            f"mount --bind '{inside.fs()}' '{mem}'\n"
            + (f"mount -o remount,bind,ro '{mem}'\n" if ro else "") +
            f"exec '{oomtest.AGENT}' \"$@\" --host-root '{host}'\n")
        wrapper.chmod(0o755)
        # The mounts live and die with the agent's own mount namespace.
        ns = tmp_path / "agent-ns"
        ns.write_text(f"#!/bin/sh\nexec unshare -m --propagation private '{wrapper}' \"$@\"\n")
        ns.chmod(0o755)
        monkeypatch.setattr(oomtest, "AGENT", str(ns))
        a = Agent(watch, str(tmp_path / "state"), extra)
        agents.append(a)
        return a
    yield start
    for a in agents:
        if a.proc.poll() is None:
            a.stop()


def memory_mount_root():
    """Where this process's memory hierarchy is mounted from, as the kernel
    names it: "/" on a host, "/libpod_parent/libpod-<id>" in a container."""
    with open("/proc/self/mountinfo") as f:
        for line in f:
            fields = line.split()
            opts = line.split(" - ", 1)[1].split()
            if opts[0] == "cgroup" and "memory" in opts[-1].split(","):
                return fields[3]
    return "/"


def test_kill_through_a_bound_subtree_names_victim_and_both_paths(cgs, bound_agent):
    base = memory_mount_root().rstrip("/")
    inside = cgs("oomlens-test-mountroot")
    inside.mkdir("/app", limit_mb=32)
    agent = bound_agent(inside, ["/app"])
    log = "".join(agent.stderr)
    assert 'kernel path \\"%s\\" (known)' % (base + inside.path()) in log, agent.log()
    wait_oom_ratelimit()
    victim, _, rc = hog(inside, "/app", "--step-mb", "4")
    assert rc == -9
    line = agent.next()
    assert line["cgroup"] == "/app", agent.log()
    assert [v["pid"] for v in line["victims"]] == [victim]
    assert line["victims"][0]["comm"] == "hog"
    files = bundle_members(line["path"])
    man = json.loads(files["manifest.json"])
    assert man["cgroup"] == "/app"
    assert man["cgroup_kernel"] == base + inside.path("/app")
    assert man["oom_memcg_kernel"] == base + inside.path("/app")
    assert man["cgroup_mount"] == {"state": "known",
                                   "kernel_path": base + inside.path(),
                                   "namespace_path": base + inside.path()}
    # The kernel's own text keeps the kernel's path.
    assert "task_memcg=%s" % (base + inside.path("/app")) in files["kernel/oom.txt"].decode()
    # Read through the mount: the cgroup's limit, not the hierarchy root's.
    assert man["cgroup_state"]["limit_bytes"] == 32 << 20
    assert agent.stop() == 0


def test_kill_outside_the_mount_is_logged_once_with_both_paths(cgs, bound_agent):
    inside = cgs("oomlens-test-mountroot")
    inside.mkdir("/app", limit_mb=32)
    outside = cgs("oomlens-test-mountroot-out")
    outside.mkdir("/x", limit_mb=24)
    agent = bound_agent(inside, ["/app"])
    for _ in range(2):
        wait_oom_ratelimit()
        victim, _, rc = hog(outside, "/x", "--step-mb", "4")
        assert rc == -9
    assert agent.drain(1.0) == [], agent.log()
    # Only this test's cgroup: kills elsewhere on the host (another
    # program's) may be logged too, once each.
    warned = [l for l in agent.stderr if "outside the memory cgroup mount" in l
              and outside.path("/x") in l]
    assert len(warned) == 1, agent.log()
    assert outside.path("/x") in warned[0] and inside.path() in warned[0]
    assert '(\\"hog\\")' in warned[0], warned[0]
    assert agent.stop() == 0


def test_without_the_kernel_log_kills_are_still_reported(cgs, bound_agent):
    """The chart's privileged: false: no /dev/kmsg in the agent's host
    root (an unprivileged container's device cgroup denies it). The agent
    starts, says what it cannot see, and a kill is still bundled from the
    cgroup's own counters: no victims' names, how_found "notification"."""
    inside = cgs("oomlens-test-nokmsg")
    inside.mkdir("/app", limit_mb=32)
    agent = bound_agent(inside, ["/app"], dev=False)
    assert "running without the kernel log" in "".join(agent.stderr), agent.log()
    wait_oom_ratelimit()
    man = counted_kill(inside, agent)
    assert man["kernel_report_complete"] is False
    assert agent.stop() == 0


def counted_kill(inside, agent):
    """A hog killed in /app, bundled from the cgroup's counter alone (no
    kernel log): its manifest."""
    _, _, rc = hog(inside, "/app", "--step-mb", "4")
    assert rc == -9
    line = agent.next(timeout=20)
    assert line["cgroup"] == "/app", agent.log()
    man = json.loads(bundle_members(line["path"])["manifest.json"])
    assert man["how_found"] == "notification", man
    assert man["cgroup_state"]["events"]["oom_kill"] >= 1, man["cgroup_state"]
    return man


def test_read_only_cgroup_mount_on_v1_still_reports_kills(cgs, bound_agent):
    """The chart's cgroupReadOnly (meant for cgroup v2 nodes) installed on
    a v1 node: cgroup.event_control cannot be written, so no OOM
    notification. The agent starts anyway (it used to exit: a crash loop
    in the DaemonSet), says why, and a kill is reported from the kernel
    log as before, victim named."""
    inside = cgs("oomlens-test-romount")
    inside.mkdir("/app", limit_mb=32)
    if inside.mode != 1:
        pytest.skip("cgroup v1 only: v2 writes nothing to the cgroup fs")
    agent = bound_agent(inside, ["/app"], ro=True)
    log = "".join(agent.stderr)
    assert "cgroup v1 OOM notifications are off" in log, agent.log()
    assert "Read-only file system" in log, agent.log()
    assert re.search(r"watching 1 memory cgroups \(cgroup v1\)", log), \
        agent.log()
    wait_oom_ratelimit()
    victim, _, rc = hog(inside, "/app", "--step-mb", "4")
    assert rc == -9
    line = agent.next(timeout=20)
    assert line["cgroup"] == "/app", agent.log()
    assert [v["pid"] for v in line["victims"]] == [victim]
    man = json.loads(bundle_members(line["path"])["manifest.json"])
    assert man["how_found"] == "kernel-report", man
    assert man["cgroup_state"]["limit_bytes"] == 32 << 20
    assert agent.drain(1.0) == [], agent.log()
    assert agent.stop() == 0


def test_read_only_cgroup_mount_on_v1_without_the_kernel_log(cgs,
                                                             bound_agent):
    """Read-only cgroup mount and no /dev/kmsg (cgroupReadOnly and
    privileged: false on a v1 node): nothing notifies the agent, and the
    kill is still bundled from the counter its periodic re-read finds."""
    inside = cgs("oomlens-test-romount-nokmsg")
    inside.mkdir("/app", limit_mb=32)
    if inside.mode != 1:
        pytest.skip("cgroup v1 only: v2 writes nothing to the cgroup fs")
    agent = bound_agent(inside, ["/app"], dev=False, ro=True)
    log = "".join(agent.stderr)
    assert "cgroup v1 OOM notifications are off" in log, agent.log()
    assert "running without the kernel log" in log, agent.log()
    counted_kill(inside, agent)
    assert agent.drain(1.0) == [], agent.log()
    assert agent.stop() == 0


def unreported(port):
    """oomlens_unreported_kills_total by its bundled label."""
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port,
                                timeout=5) as r:
        text = r.read().decode()
    return {m.group(1): float(m.group(2)) for m in re.finditer(
        r'^oomlens_unreported_kills_total\{bundled="(\w+)"\} (\S+)$',
        text, re.M)}


def test_without_the_kernel_log_a_second_kill_is_counted_and_said(
        cgs, bound_agent):
    """Two kills of one cgroup a moment apart, no /dev/kmsg: the first is
    bundled, the second, whose bundle would repeat it (no victim, the same
    cgroup), is counted in oomlens_unreported_kills_total and logged with
    why. Before, the second was taken for the first and dropped without a
    word."""
    inside = cgs("oomlens-test-nokmsg-twice")
    inside.mkdir("/app", limit_mb=32)
    port = free_port()
    agent = bound_agent(inside, ["/app"], dev=False,
                        extra=["--metrics-addr", "127.0.0.1:%d" % port,
                               "--metrics-insecure"])
    t0 = time.monotonic()
    for _ in range(2):
        _, _, rc = hog(inside, "/app", "--step-mb", "4")
        assert rc == -9
    assert time.monotonic() - t0 < 8, "both kills within the 10 s gap"
    line = agent.next(timeout=20)
    assert line["cgroup"] == "/app", agent.log()
    man = json.loads(bundle_members(line["path"])["manifest.json"])
    assert man["how_found"] == "notification", man
    deadline = time.monotonic() + 10
    said = []
    while not said and time.monotonic() < deadline:
        said = [l for l in agent.stderr if "counted, not bundled" in l]
        time.sleep(0.2)
    assert len(said) == 1, agent.log()
    assert "1 kill(s)" in said[0] and '\\"/app\\"' in said[0], said[0]
    assert agent.drain(1.0) == [], "one bundle: " + agent.log()
    assert unreported(port) == {"true": 1.0, "false": 1.0}
    assert agent.stop() == 0
    end = "1 without a kernel report counted, not bundled"
    deadline = time.monotonic() + 3
    while end not in "".join(agent.stderr) and time.monotonic() < deadline:
        time.sleep(0.1)  # its last line, read by another thread
    assert end in "".join(agent.stderr), agent.log()
