# SPDX-License-Identifier: Apache-2.0
"""oomlens-sidecar malloc-stats / trim / snapshot --allocator-probe on live
glibc processes (ptrace from outside): the figures equal the victims' own
mallinfo2, trim returns the retained arena RSS, refusals are clear."""
import json
import os
import select
import subprocess
import tempfile

import pytest

BUILD = os.environ.get("OOMLENS_BUILD") or os.path.join(
    os.path.dirname(__file__), "..", "..", "build")
SIDECAR = os.path.join(BUILD, "bin", "oomlens-sidecar")
VICTIMS = os.path.join(BUILD, "victims")
SRC = os.path.join(os.path.dirname(__file__), "..", "victims")


def need(path):
    if not os.access(path, os.X_OK):
        pytest.skip(f"{path} not built (make B=... all victims)")


class Victim:
    """A victim on pipes; reads its JSON lines with a timeout."""

    def __init__(self, argv):
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE)
        self.buf = b""

    def line(self, timeout=10.0):
        while b"\n" not in self.buf:
            r, _, _ = select.select([self.p.stdout], [], [], timeout)
            if not r:
                raise AssertionError("victim did not answer")
            chunk = os.read(self.p.stdout.fileno(), 65536)
            if not chunk:
                raise AssertionError("victim exited")
            self.buf += chunk
        out, self.buf = self.buf.split(b"\n", 1)
        return json.loads(out)

    def cmd(self, c):
        self.p.stdin.write(c.encode())
        self.p.stdin.flush()
        return self.line()

    def wait_in_read(self):
        path = f"/proc/{self.p.pid}/syscall"
        for _ in range(5000):
            with open(path) as f:
                if f.read().startswith("0 "):
                    return
        raise AssertionError("victim never blocked in read()")

    def close(self):
        self.p.kill()
        self.p.wait()


@pytest.fixture
def reader():
    need(SIDECAR)
    need(os.path.join(VICTIMS, "ptcall_reader"))
    v = Victim([os.path.join(VICTIMS, "ptcall_reader"), "4", "16"])
    assert v.line()["ready"] is True
    v.wait_in_read()
    yield v
    v.close()


def sidecar(*args, check=True):
    r = subprocess.run([SIDECAR, *args], capture_output=True, text=True,
                       timeout=30)
    if check:
        assert r.returncode == 0, r.stderr
    return r


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


def test_malloc_stats_json_equals_the_victims_own_mallinfo2(reader):
    out = json.loads(sidecar("malloc-stats", "--json", "--xml",
                             str(reader.p.pid)).stdout)
    own = reader.cmd("m")  # taken right after its read() returns
    assert own["read"] == 1 and own["errno"] == 0
    mine = out["mallinfo2"]
    # malloc_info's memstream ran after mallinfo2 and its freed chunks
    # sit in the tcache (counted as in use): compare what it cannot move
    for k in ("arena", "hblks", "hblkhd", "ordblks", "smblks", "fsmblks"):
        assert mine[k] == own["mallinfo2"][k], k
    assert abs(mine["uordblks"] - own["mallinfo2"]["uordblks"]) < 4096
    assert out["arena_count"] == 5
    assert sum(a["system_bytes"] for a in out["arenas"]) == mine["arena"]
    assert out["retained_bytes"] == mine["fordblks"]
    assert out["retained_bytes"] > 4 * 15 * 2**20  # 63/64 of 4 x 16 MiB


def test_malloc_stats_exact_without_xml(reader):
    out = json.loads(sidecar("malloc-stats", "--json",
                             str(reader.p.pid)).stdout)
    own = reader.cmd("m")
    assert out["mallinfo2"] == own["mallinfo2"]
    assert out["arenas"] == []


def test_malloc_stats_text(reader):
    out = sidecar("malloc-stats", str(reader.p.pid)).stdout
    assert f"{reader.p.pid}: glibc malloc" in out
    assert "free (retained):" in out and "in use:" in out


def test_retention_victim_figures():
    need(SIDECAR)
    path = os.path.join(VICTIMS, "retention")
    need(path)
    v = Victim([path, "--threads", "3", "--mb-per-thread", "8"])
    try:
        own = v.line()
        out = json.loads(sidecar("malloc-stats", "--json", "--xml",
                                 str(v.p.pid)).stdout)
        # the victim printed before allocating for its own printout;
        # system bytes and the arena count cannot have moved
        assert out["mallinfo2"]["arena"] == own["mallinfo2"]["arena"]
        assert out["mallinfo2"]["hblkhd"] == own["mallinfo2"]["hblkhd"]
        assert out["arena_count"] == own["arenas"]
        assert abs(out["mallinfo2"]["fordblks"] -
                   own["mallinfo2"]["fordblks"]) < 64 * 1024
    finally:
        v.close()


def test_trim_returns_most_arena_rss_and_victim_answers(reader):
    before = rss_kb(reader.p.pid)
    r = sidecar("trim", "--json", str(reader.p.pid))
    out = json.loads(r.stdout)
    assert out["method"] == "malloc_trim" and out["released"] == 1
    assert out["rss_before_bytes"] >= 60 * 2**20
    assert out["rss_after_bytes"] * 2 < out["rss_before_bytes"]
    assert out["difference_bytes"] == (out["rss_after_bytes"] -
                                       out["rss_before_bytes"])
    assert rss_kb(reader.p.pid) * 2 < before
    assert reader.cmd("p") == {"read": 1, "errno": 0, "cmd": "p"}
    text = sidecar("trim", str(reader.p.pid)).stdout
    assert "malloc_trim(0) via ptrace" in text and "rss before:" in text


def test_refusal_is_clear_for_a_static_binary():
    need(SIDECAR)
    with tempfile.TemporaryDirectory(prefix="oomlens-test-ptcall-") as d:
        exe = os.path.join(d, "static_reader")
        b = subprocess.run(["cc", "-static", "-O1", "-o", exe,
                            os.path.join(SRC, "ptcall_reader.c"),
                            "-lpthread"], capture_output=True)
        if b.returncode != 0:
            pytest.skip("cannot link statically: " + b.stderr.decode()[-200:])
        v = Victim([exe, "1", "1"])
        try:
            v.line()
            r = sidecar("malloc-stats", str(v.p.pid), check=False)
            assert r.returncode == 1
            assert "statically linked" in r.stderr
            r = sidecar("trim", str(v.p.pid), check=False)
            assert r.returncode == 1 and "statically linked" in r.stderr
            assert v.cmd("p") == {"read": 1, "errno": 0, "cmd": "p"}
        finally:
            v.close()


def test_snapshot_allocator_probe(reader):
    with tempfile.TemporaryDirectory(prefix="oomlens-test-ptcall-") as d:
        sidecar("snapshot", str(reader.p.pid), "-o", d,
                "--allocator-probe", "ptrace")
        pdir = os.path.join(d, "processes", str(reader.p.pid))
        with open(os.path.join(pdir, "allocator.json")) as f:
            a = json.load(f)
        with open(os.path.join(pdir, "snapshot.json")) as f:
            assert "allocator.json" in json.load(f)["files"]
        own = reader.cmd("m")["mallinfo2"]
        assert a["source"] == "ptrace" and a["arena_count"] == 5
        assert a["mallinfo2"]["arena"] == own["arena"]
        assert abs(a["retained_bytes"] - own["fordblks"]) < 4096
        # off (the default) writes nothing
        sidecar("snapshot", str(reader.p.pid), "-o", d + "/off")
        assert not os.path.exists(os.path.join(
            d, "off", "processes", str(reader.p.pid), "allocator.json"))
