# SPDX-License-Identifier: Apache-2.0
"""The options both programs share (--host-root, --log-level, --log-json,
--no-seccomp), parsed once before any subcommand: they work before the
subcommand and among its arguments, and a bad one is a usage error (exit
2) whose message names the option. Runs the real binaries; needs neither
root nor a cgroup (the host root is a fixture tree)."""
import os
import shutil
import subprocess

import pytest

BUILD = os.environ.get("OOMLENS_BUILD") or os.path.join(
    os.path.dirname(__file__), "..", "..", "build")
AGENT = os.path.join(BUILD, "bin", "oomlens-agent")
SIDECAR = os.path.join(BUILD, "bin", "oomlens-sidecar")
FIX = os.path.join(os.path.dirname(__file__), "..", "fixtures")
PID = "4242"


def run(*args):
    return subprocess.run(list(args), capture_output=True, text=True,
                          timeout=30)


@pytest.fixture(scope="module")
def fakeroot(tmp_path_factory):
    """A host root with one process (the 'hostile' smaps capture)."""
    root = tmp_path_factory.mktemp("root")
    d = root / "proc" / PID
    d.mkdir(parents=True)
    for f in ["status", "cmdline", "smaps", "smaps_rollup"]:
        shutil.copy(os.path.join(FIX, "smaps", "hostile", f), d / f)
    return str(root)


@pytest.mark.parametrize("where", ["before", "after", "after-equals",
                                   "end"])
def test_host_root_is_taken_wherever_it_stands(fakeroot, where):
    args = {
        "before": ["--host-root", fakeroot, "pmap", PID],
        "after": ["pmap", "--host-root", fakeroot, PID],
        "after-equals": ["pmap", f"--host-root={fakeroot}", PID],
        "end": ["pmap", PID, "--host-root", fakeroot],
    }[where]
    p = run(SIDECAR, *args)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith(f"{PID}:   /usr/bin/python3 /tmp/hostile.py")


def test_log_options_before_the_command_reach_the_log(fakeroot):
    # a pid the fake root does not have: one error line, as JSON
    p = run(SIDECAR, "--log-json", "--log-level", "debug", "pmap",
            "--host-root", fakeroot, "999")
    assert p.returncode == 1
    line = p.stderr.strip().splitlines()[-1]
    assert line.startswith('{"ts":"') and '"level":"error"' in line, line
    p = run(SIDECAR, "--log-level", "error", "pmap", "--host-root",
            fakeroot, "999")
    assert p.returncode == 1
    assert "level=error" in p.stderr


BAD = [
    (["--log-level", "x"],
     "--log-level: expected one of error,warn,info,debug, got 'x'"),
    (["--log-level=loud"],
     "--log-level: expected one of error,warn,info,debug, got 'loud'"),
    (["--host-root="], "--host-root: expected a directory, got ''"),
    (["--log-json=yes"], "--log-json: takes no value, got 'yes'"),
    (["--no-seccomp=1"], "--no-seccomp: takes no value, got '1'"),
]


@pytest.mark.parametrize("prog,cmd", [(AGENT, "run"), (AGENT, "show"),
                                      (AGENT, "parse-kmsg"),
                                      (SIDECAR, "run"), (SIDECAR, "pmap"),
                                      (SIDECAR, "jcmd")])
@pytest.mark.parametrize("bad,msg", BAD)
def test_bad_option_names_it_and_exits_2(prog, cmd, bad, msg):
    name = os.path.basename(prog)
    for args in ([*bad, cmd], [cmd, *bad]):
        p = run(prog, *args)
        assert p.returncode == 2, (args, p.stderr)
        assert p.stderr.splitlines()[0] == f"{name}: {msg}", (args,
                                                              p.stderr)


@pytest.mark.parametrize("prog", [AGENT, SIDECAR])
def test_missing_value_and_unknown_global(prog):
    name = os.path.basename(prog)
    p = run(prog, "run", "--log-level")
    assert p.returncode == 2
    assert p.stderr.splitlines()[0] == f"{name}: --log-level: requires a value"
    p = run(prog, "--bogus", "run")
    assert p.returncode == 2
    assert p.stderr.splitlines()[0] == f"{name}: --bogus: unknown option"
    p = run(prog, "--log-json")
    assert p.returncode == 2 and "usage:" in p.stderr
    p = run(prog, "--log-json", "--help")
    assert p.returncode == 0 and "--host-root DIR" in p.stdout


def test_jcmd_passes_its_operands_on():
    # after PID, words are the JVM's: --log-json is not taken (and pid 1
    # is no JVM we may attach to: exit 1, not a usage error)
    p = run(SIDECAR, "jcmd", "--timeout", "100", "1", "VM.version",
            "--log-level", "x")
    assert p.returncode == 1, p.stderr
    assert "expected one of" not in p.stderr


@pytest.mark.parametrize("prog", [AGENT, SIDECAR])
@pytest.mark.parametrize("spelling", [["--version"], ["version"],
                                      ["--log-level", "debug", "--version"]])
def test_version_is_the_projects(prog, spelling):
    with open(os.path.join(os.path.dirname(__file__), "..", "..", "VERSION")) as f:
        want = f.read().strip()
    r = subprocess.run([prog, *spelling], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "%s %s\n" % (os.path.basename(prog), want)
