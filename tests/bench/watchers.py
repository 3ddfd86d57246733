"""Holds N pod watches on a real API server, one per simulated node
(fieldSelector spec.nodeName=<prefix><i>), the way N agents' pod watches
do, and says how long one pod's event takes to reach its node's watch.
  watchers.py URL CA TOKEN N PREFIX
Prints: watches open, seconds to open them, the event's delay. Runs until
its stdin closes (the caller measures the API server meanwhile)."""
import json
import resource
import select
import socket
import ssl
import sys
import time
import urllib.request


def main():
    url, ca, token, n, prefix = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
    host, port = url.split("//")[1].split(":")
    ctx = ssl.create_default_context(cafile=ca)
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    socks = []
    t0 = time.monotonic()
    for i in range(n):
        s = ctx.wrap_socket(socket.create_connection((host, int(port))), server_hostname=host)
        s.sendall(("GET /api/v1/pods?watch=1&fieldSelector=spec.nodeName%%3D%s%d HTTP/1.1\r\n"
                   "Host: %s\r\nAuthorization: Bearer %s\r\n\r\n" % (prefix, i, host, token)).encode())
        s.setblocking(False)
        socks.append(s)
    opened = time.monotonic() - t0
    # one pod on the last node: how long until its watch sees it
    body = {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "watch-probe-%d" % int(time.time())},
            "spec": {"nodeName": "%s%d" % (prefix, n - 1),
                     "containers": [{"name": "c", "image": "busybox"}]}}
    req = urllib.request.Request(url + "/api/v1/namespaces/default/pods", method="POST",
                                 data=json.dumps(body).encode(),
                                 headers={"Authorization": "Bearer " + token,
                                          "Content-Type": "application/json"})
    last = socks[-1]
    got = b""
    t1 = time.monotonic()
    urllib.request.urlopen(req, context=ctx, timeout=30).read()
    delay = None
    while time.monotonic() - t1 < 30:
        r, _, _ = select.select(socks, [], [], 1)
        for s in r:
            try:
                data = s.recv(1 << 16)
            except (ssl.SSLWantReadError, BlockingIOError):
                continue
            if s is last:
                got += data
        if b"watch-probe" in got:
            delay = time.monotonic() - t1
            break
    print("watches %d opened in %.1f s; a pod's event reached its node's watch in %s"
          % (n, opened, "%.3f s" % delay if delay is not None else "more than 30 s"), flush=True)
    sys.stdin.read()  # hold until told


main()
