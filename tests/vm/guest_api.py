#!/usr/bin/env python3
"""The fake API server inside the qemu guest, for the agent in cluster mode.

Run in the guest's chroot of the host root (the guest has no network but
its loopback): `python3 guest_api.py DIR NODE POD...` serves the fake
kube-apiserver of tests/fakeapi on 127.0.0.1, writes DIR/kubeconfig (the
agent's token), creates each POD on NODE as Running with one container
`app` whose containerID is POD's index in CONTAINER_IDS, writes
DIR/uids ("name uid" per line) and DIR/ready, then waits (at most
--wait seconds) for an OOMReport in phase Ready and writes DIR/reports.json
(the OOMReport list) and DIR/<report>.tar.gz (its OOMBundle's data, as
stored). It keeps serving until SIGTERM. TLS material is read from
DIR/tls when the host made it there (the guest is slow at making keys).
"""

import argparse
import base64
import json
import os
import signal
import ssl
import sys
import threading
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "fakeapi"))

import fakeapi  # noqa: E402

ADMIN = "admin-token-0123456789"
CONTAINER_IDS = ["%064x" % (0x4b5ce8a2 + i) for i in range(8)]
REPORTS = "/apis/oomlens.io/v1alpha1/namespaces/default/oomreports"
BUNDLES = "/apis/oomlens.io/v1alpha1/namespaces/default/oombundles"


def call(api, method, path, body=None):
    ctx = ssl.create_default_context(cafile=api.ca)
    req = urllib.request.Request(
        api.url + path, method=method,
        data=json.dumps(body).encode() if body is not None else None,
        headers={"Authorization": "Bearer " + ADMIN,
                 "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, context=ctx, timeout=10) as r:
            return r.status, json.loads(r.read() or b"{}")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")


def make_pod(api, node, name, cid):
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": name},
           "spec": {"nodeName": node, "containers": [{
               "name": "app", "image": "hog:1",
               "resources": {"limits": {"memory": "256Mi"}}}]}}
    code, obj = call(api, "POST", "/api/v1/namespaces/default/pods", pod)
    if code != 201:
        raise SystemExit("pod %s: %d %s" % (name, code, obj))
    obj["status"] = {"phase": "Running", "containerStatuses": [{
        "name": "app", "restartCount": 0, "containerID": "containerd://" + cid,
        "image": "hog:1", "imageID": "", "ready": True,
        "state": {"running": {}}, "lastState": {}}]}
    code, obj = call(api, "PUT",
                     "/api/v1/namespaces/default/pods/%s/status" % name, obj)
    if code != 200:
        raise SystemExit("pod %s status: %d %s" % (name, code, obj))
    return obj["metadata"]["uid"]


def wait_ready_report(api, out, wait):
    end = time.monotonic() + wait
    while time.monotonic() < end:
        code, lst = call(api, "GET", REPORTS)
        ready = [r for r in lst.get("items", [])
                 if r.get("status", {}).get("phase") == "Ready"]
        if code == 200 and ready:
            with open(os.path.join(out, "reports.json"), "w") as f:
                json.dump(lst, f, indent=1)
            for r in ready:
                name = r["metadata"]["name"]
                code, b = call(api, "GET", BUNDLES + "/" + name)
                if code == 200:
                    with open(os.path.join(out, name + ".tar.gz"), "wb") as f:
                        f.write(base64.b64decode(b["spec"]["data"]))
            return True
        time.sleep(0.3)
    return False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("node")
    ap.add_argument("pods", nargs="+")
    ap.add_argument("--wait", type=float, default=60)
    o = ap.parse_args()
    api = fakeapi.FakeAPI(tls_dir=os.path.join(o.dir, "tls")).start()
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    api.write_kubeconfig(os.path.join(o.dir, "kubeconfig"))
    with open(os.path.join(o.dir, "uids"), "w") as f:
        for i, name in enumerate(o.pods):
            f.write("%s %s\n" % (name, make_pod(api, o.node, name,
                                                 CONTAINER_IDS[i])))
    open(os.path.join(o.dir, "ready"), "w").close()
    ok = wait_ready_report(api, o.dir, o.wait)
    open(os.path.join(o.dir, "done" if ok else "timeout"), "w").close()
    stop.wait()
    api.stop()


if __name__ == "__main__":
    main()
