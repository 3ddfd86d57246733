"""`oomlens-agent show` on hostile bundles: each is refused with a clear
message, exit code 1, and bounded memory (peak RSS from /usr/bin/time -v).

No real OOM kill and no root needed: the archives are built here with
Python's tarfile into a temp dir.
"""
import gzip
import io
import os
import re
import subprocess
import tarfile

import pytest

from oomtest import AGENT, Zeros

TIME = "/usr/bin/time"
MIB = 1 << 20


def build(path, entries, level=1):
    """entries: (TarInfo, data-or-None) pairs, written to a .tar.gz."""
    with tarfile.open(path, "w:gz", compresslevel=level,
                      format=tarfile.PAX_FORMAT) as t:
        for info, data in entries:
            if data is None and info.isreg() and info.size:
                t.addfile(info, io.BufferedReader(Zeros(info.size)))
            else:
                t.addfile(info, io.BytesIO(data) if data is not None else None)


def reg(name, data=b"x"):
    i = tarfile.TarInfo(name)
    i.size = len(data)
    return i, data


def special(name, kind, link=""):
    i = tarfile.TarInfo(name)
    i.type = kind
    i.linkname = link
    return i, None


def zeros(name, size):
    i = tarfile.TarInfo(name)
    i.size = size
    return i, None


def show(path):
    """Runs show under /usr/bin/time -v: (exit code, stderr, peak RSS KiB)."""
    if not os.access(TIME, os.X_OK):
        pytest.skip("/usr/bin/time is not installed")
    r = subprocess.run([TIME, "-v", AGENT, "show", str(path)],
                       capture_output=True, text=True, timeout=120)
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", r.stderr)
    assert m, r.stderr
    return r.returncode, r.stderr, int(m.group(1))


def good_manifest():
    return reg("b/manifest.json", b'{"schema": "oomlens.io/bundle/v1"}')


CASES = {
    "dotdot": ([good_manifest(), reg("b/../../etc/cron.d/x")],
               "outside the bundle directory"),
    "absolute": ([reg("/etc/cron.d/x")], "outside the bundle directory"),
    "second_top_dir": ([good_manifest(), reg("c/x")],
                       "outside the bundle directory"),
    "symlink": ([good_manifest(),
                 special("b/kernel", tarfile.SYMTYPE, "/etc")],
                "symlink"),
    "hardlink": ([good_manifest(),
                  special("b/x", tarfile.LNKTYPE, "b/manifest.json")],
                 "hardlink"),
    "fifo": ([good_manifest(), special("b/x", tarfile.FIFOTYPE)], "FIFO"),
    "device": ([good_manifest(), special("b/x", tarfile.CHRTYPE)], "device"),
    # 1 GiB of zeros in one entry (~1 MB gzip'd): the header is refused
    "bomb_one_entry": ([good_manifest(), zeros("b/x", 1 << 30)],
                       "size caps"),
    # 24 entries of 24 MiB, each under the entry cap: the total is refused
    "bomb_many_entries": ([good_manifest()] +
                          [zeros(f"b/x{i}", 24 * MIB) for i in range(24)],
                          "size caps"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_show_refuses_hostile_bundle(tmp_path, case):
    entries, message = CASES[case]
    path = tmp_path / f"{case}.tar.gz"
    build(path, entries)
    code, err, rss_kb = show(path)
    assert code == 1, err
    assert "cannot read bundle" in err and message in err, err
    # the old reader inflated up to 1 GiB (1.97 GB RSS seen); the caps
    # allow 64 MiB of files plus one entry being read
    assert rss_kb < 160 * 1024, f"peak RSS {rss_kb} KiB"


@pytest.mark.parametrize("claim,message", [
    (30 * MIB, "size caps"),   # over the caps: refused from the header
    (2 * MIB, "damaged"),      # under them: the stream ends first
])
def test_show_refuses_header_that_lies_about_its_size(tmp_path, claim,
                                                      message):
    good = tmp_path / "good.tar"
    with tarfile.open(good, "w", format=tarfile.USTAR_FORMAT) as t:
        for info, data in (reg("b/manifest.json", b"A" * 1000),
                           reg("b/x", b"B" * 10)):
            t.addfile(info, io.BytesIO(data))
    raw = bytearray(good.read_bytes())
    raw[124:136] = b"%011o\0" % claim
    raw[148:156] = b" " * 8
    raw[148:156] = b"%06o\0 " % sum(raw[:512])
    path = tmp_path / "lie.tar.gz"
    path.write_bytes(gzip.compress(bytes(raw)))
    code, err, rss_kb = show(path)
    assert code == 1, err
    assert "cannot read bundle" in err and message in err, err
    assert rss_kb < 64 * 1024, f"peak RSS {rss_kb} KiB"


def test_show_refuses_240k_entries_quickly(tmp_path):
    # the old reader took 75 s here (a linear scan per file added)
    blk = io.BytesIO()
    for i in range(240000):
        info = tarfile.TarInfo(f"b/p/{i}")
        blk.write(info.tobuf(format=tarfile.USTAR_FORMAT))
    blk.write(bytes(1024))
    path = tmp_path / "many.tar.gz"
    path.write_bytes(gzip.compress(blk.getvalue(), compresslevel=1))
    code, err, rss_kb = show(path)
    assert code == 1, err
    assert "too many entries" in err, err
    assert rss_kb < 64 * 1024, f"peak RSS {rss_kb} KiB"
