# SPDX-License-Identifier: Apache-2.0
"""Escape sequences planted by a pod reach a terminal only as text: a
victim's comm in `oomlens-agent show`, mapped file names in
`oomlens-sidecar pmap` (live process, compared with procps for normal
names), a fake JVM's reply in `oomlens-sidecar jcmd` (live socket). Needs
no cgroup and no kill."""
import io
import json
import mmap
import os
import socket
import subprocess
import sys
import tarfile
import time

import pytest

BUILD = os.environ.get("OOMLENS_BUILD") or os.path.join(
    os.path.dirname(__file__), "..", "..", "build")
AGENT = os.path.join(BUILD, "bin", "oomlens-agent")
SIDECAR = os.path.join(BUILD, "bin", "oomlens-sidecar")
OSC = "\x1b]0;pwned\x07"


def need(p):
    if not os.access(p, os.X_OK):
        pytest.skip(f"{p} not built")


def test_show_escapes_victim_comm(tmp_path):
    need(AGENT)
    man = {"schema": "oomlens.io/bundle/v1", "id": "oom-esc-1",
           "cgroup": "/demo/app\x1b[2J", "node": "n", "captured_at": "t",
           "victims": [{"pid": 42, "comm": "java" + OSC,
                        "anon_rss_kb": 100}]}
    data = json.dumps(man).encode()
    path = tmp_path / "b.tar.gz"
    with tarfile.open(path, "w:gz") as t:
        ti = tarfile.TarInfo("oom-esc-1/manifest.json")
        ti.size = len(data)
        t.addfile(ti, io.BytesIO(data))
    r = subprocess.run([AGENT, "show", str(path)], capture_output=True,
                       timeout=30)
    assert r.returncode == 0, r.stderr
    assert b"\x1b" not in r.stdout and b"\x07" not in r.stdout
    assert b"killed  pid 42 (java\\x1b]0;pwned\\x07)" in r.stdout
    assert b"cgroup  /demo/app\\x1b[2J\n" in r.stdout


MAPPER = r"""
import mmap, sys, time
ms = []
for n in sys.argv[1:]:
    f = open(n, "rb")
    ms.append(mmap.mmap(f.fileno(), 4096, prot=mmap.PROT_READ))
print("ready", flush=True)
time.sleep(60)
"""


def test_pmap_escapes_file_names_and_matches_procps(tmp_path):
    need(SIDECAR)
    if not os.access("/usr/bin/pmap", os.X_OK):
        pytest.skip("no procps pmap")
    bad = tmp_path / ("lib" + OSC + "\x1b[31mred.so")
    good = tmp_path / "libnormal-é.so"
    for p in (bad, good):
        p.write_bytes(b"x" * 4096)
    m = subprocess.Popen([sys.executable, "-c", MAPPER, str(bad), str(good)],
                         stdout=subprocess.PIPE, text=True)
    try:
        assert m.stdout.readline().strip() == "ready"
        ours = subprocess.run([SIDECAR, "pmap", "--no-redact", str(m.pid)],
                              capture_output=True, timeout=30).stdout
        ref = subprocess.run(["pmap", "-X", str(m.pid)],
                             capture_output=True, timeout=30).stdout
    finally:
        m.kill()
        m.wait()
    assert b"\x1b" not in ours and b"\x07" not in ours
    assert b"lib?]0;pwned??[31mred.so\n" in ours
    # procps -X prints the name raw: everything else is byte-identical.
    def rows(out):
        return [ln for ln in out.split(b"\n")
                if ln.endswith(b" libnormal-\xc3\xa9.so")]
    mine, theirs = rows(ours), rows(ref)
    assert mine and mine == theirs


FAKE_JVM = r"""
import mmap, os, socket, sys
lib = sys.argv[1]
f = open(lib, "rb")
m = mmap.mmap(f.fileno(), 4096, prot=mmap.PROT_READ)
path = "/tmp/.java_pid%d" % os.getpid()
# as HotSpot does: a socket left by an earlier process of this pid (a JVM
# the suite OOM-killed cannot remove its own) is stale
try:
    os.unlink(path)
except FileNotFoundError:
    pass
s = socket.socket(socket.AF_UNIX)
s.bind(path)
s.listen(4)
print("ready", flush=True)
try:
    for _ in range(4):
        c, _ = s.accept()
        req = c.recv(65536)
        if b"getversion" in req:
            c.sendall(b"-1\n")
        else:
            c.sendall(b"0\nheap \x1b]0;pwned\x07 ok\n\x1b[2Jdone\n")
        c.close()
finally:
    os.unlink(path)
"""


def test_jcmd_escapes_a_fake_jvm_reply(tmp_path):
    need(SIDECAR)
    lib = tmp_path / "libjvm.so"
    lib.write_bytes(b"x" * 4096)
    j = subprocess.Popen([sys.executable, "-c", FAKE_JVM, str(lib)],
                         stdout=subprocess.PIPE, text=True)
    try:
        assert j.stdout.readline().strip() == "ready"
        r = subprocess.run([SIDECAR, "jcmd", "--timeout", "5000",
                            str(j.pid), "GC.heap_info"],
                           capture_output=True, timeout=30)
    finally:
        j.kill()
        j.wait()
        try:
            os.unlink(f"/tmp/.java_pid{j.pid}")
        except FileNotFoundError:
            pass
    assert r.returncode == 0, r.stderr
    assert b"\x1b" not in r.stdout and b"\x07" not in r.stdout
    assert b"heap \\x1b]0;pwned\\x07 ok\n\\x1b[2Jdone\n" in r.stdout
