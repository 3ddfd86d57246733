# SPDX-License-Identifier: Apache-2.0
"""Test victim: a Python worker that renders report rows and keeps every
one in a list (a cache nobody trims), in a 200 MiB container. Per MiB it
keeps ~4,000 rows of ~100 characters (str objects under pymalloc's 512-byte
limit: its 256 KiB / 1 MiB arenas) and 16 detail fragments of 24 KiB (over
that limit and under glibc's mmap threshold: the glibc heap), beside one
8 MiB read buffer allocated at start (over the threshold: its own mmap).
So the Python heap is the growth, held by the interpreter's own
allocators.

Idles IDLE_MS first, then appends RATE MiB/s of rows, printing "held N"
every 16 MiB; with STOP_MIB > 0 it stops growing there and sleeps (to
capture it mid-growth).
Usage: python3 rows.py [RATE [IDLE_MS [STOP_MIB]]]"""
import os
import sys
import time

rate = float(sys.argv[1]) if len(sys.argv) > 1 else 16
idle = float(sys.argv[2]) if len(sys.argv) > 2 else 2000
stop = int(sys.argv[3]) if len(sys.argv) > 3 else 0
ROWS_PER_MIB = 4096
FRAGMENT_EVERY = 256  # rows; 16 fragments per MiB
FRAGMENT = 24 << 10

read_buffer = bytearray(8 << 20)
for off in range(0, len(read_buffer), 4096):
    read_buffer[off] = 1
rows = []


def render(i):
    row = (f"<tr><td>{i}</td><td>order-{i:08d}</td>"
           f"<td>{i * 7 % 1000}.{i % 100:02d}</td><td>pending</td></tr>")
    if i % FRAGMENT_EVERY == 0:
        return row, (row * (FRAGMENT // len(row) + 1))[:FRAGMENT]
    return row, None


print(f"start {os.getpid()}", flush=True)
time.sleep(idle / 1000)
t0 = time.monotonic()
i = 0
mib = 0
while True:
    for _ in range(ROWS_PER_MIB // 16):
        row, frag = render(i)
        rows.append(row)
        if frag is not None:
            rows.append(frag)
        i += 1
    if i % ROWS_PER_MIB == 0:
        mib += 1
        if mib % 16 == 0:
            print(f"held {mib}", flush=True)
        if stop and mib >= stop:
            print(f"stopped {mib}", flush=True)
            while True:
                time.sleep(3600)
    # paced: the i-th row is due at i / (rate * ROWS_PER_MIB) seconds
    wait = t0 + i / (rate * ROWS_PER_MIB) - time.monotonic()
    if wait > 0:
        time.sleep(wait)
