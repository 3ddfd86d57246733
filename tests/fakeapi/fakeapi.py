#!/usr/bin/env python3
"""fakeapi: a fake kube-apiserver that answers like a real v1.20.2.

Python 3 standard library only (PyYAML is used for apply bodies when present).
It is a test double for oomlens: TLS on loopback, bearer tokens and client
certificates, RBAC-like rules, core/v1 pods + events, events.k8s.io/v1 events,
the oomlens.io CRDs (schema validation, pruning, status subresource), list +
watch with bookmarks, continue tokens, compaction (410), size limits (413 /
etcd 500s), TokenReview / SubjectAccessReview, discovery and Table output for
kubectl, and fault injection through a control port.

This file is the entry point, both ways it is used: run as a script (the CLI,
main() below) and imported (`import fakeapi`; fakeapi.FakeAPI, make_tls,
make_client_cert, DEFAULT_TOKENS, ...). The server itself is the package
apiserver/ next to it, one module per concern; tests/fakeapi/README.md maps
each module to what it holds.

The real server's answers it reproduces are in tests/fixtures/kube/apiserver-1.20/
(README.md there says how they were captured); see
tests/fakeapi/README.md for the CLI, the Python API and the control calls.
"""

import argparse
import json
import os
import signal
import sys
import threading

from apiserver.crds import CRDS, OOMBUNDLE_CRD, OOMREPORT_CRD, load_crds
from apiserver.errors import ApiError
from apiserver.resources import Res, default_resources
from apiserver.server import FakeAPI
from apiserver.store import Store
from apiserver.tls import make_client_cert, make_tls
from apiserver.users import AGENT_RULES, ANONYMOUS, DEFAULT_TOKENS, User

__all__ = ["AGENT_RULES", "ANONYMOUS", "ApiError", "CRDS", "DEFAULT_TOKENS", "FakeAPI",
           "OOMBUNDLE_CRD", "OOMREPORT_CRD", "Res", "Store", "User", "default_resources",
           "load_crds",
           "main", "make_client_cert", "make_tls"]


# --------------------------------------------------------------------------
# CLI.

def main(argv=None):
    ap = argparse.ArgumentParser(description="fake kube-apiserver (v1.20.2 behaviour)")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0, help="0: pick a free port")
    ap.add_argument("--tls-dir", help="CA + server certificate (made when missing)")
    ap.add_argument("--plain-http", action="store_true", help="no TLS (debugging only)")
    ap.add_argument("--tokens", help="JSON tokens file (re-read when it changes)")
    ap.add_argument("--ready-file", help="the API port is written here when ready")
    ap.add_argument("--control-port", type=int, default=0)
    ap.add_argument("--control-file", help="the control port is written here "
                    "(default: READY_FILE.control)")
    ap.add_argument("--control-token", help="also serve /fake/<action> on the API port "
                    "to this bearer token")
    ap.add_argument("--kubeconfig", help="write a kubeconfig for this server here")
    ap.add_argument("--kubeconfig-token", default="agent-token-0123456789")
    ap.add_argument("--no-anonymous", action="store_true",
                    help="401 instead of 403 for requests without credentials")
    ap.add_argument("--no-audit", action="store_true",
                    help="no Audit-Id header (a 1.20 server without an audit policy)")
    ap.add_argument("--no-strict-namespaces", action="store_true",
                    help="accept objects in namespaces that do not exist")
    ap.add_argument("--bookmark-period", type=float, default=60.0)
    ap.add_argument("--watch-timeout", type=float, default=None,
                    help="timeout of watches without timeoutSeconds (default 1800-3600 s)")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args(argv)
    if not a.tls_dir and not a.plain_http:
        ap.error("--tls-dir is required (or --plain-http)")
    api = FakeAPI(tls_dir=a.tls_dir, tokens=a.tokens, port=a.port, host=a.host,
                  control_port=a.control_port, anonymous=not a.no_anonymous,
                  bookmark_period=a.bookmark_period, watch_timeout=a.watch_timeout,
                  verbose=a.verbose, plain_http=a.plain_http,
                  control_token=a.control_token,
                  strict_namespaces=not a.no_strict_namespaces,
                  audit=not a.no_audit).start()
    if a.kubeconfig:
        api.write_kubeconfig(a.kubeconfig, a.kubeconfig_token)
    if a.ready_file:
        _write_atomic(a.control_file or a.ready_file + ".control", "%d\n" % api.control_port)
        _write_atomic(a.ready_file, "%d\n" % api.port)
    print(json.dumps({"port": api.port, "control_port": api.control_port, "url": api.url,
                      "ca": api.ca}), flush=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    while not stop.wait(0.5):
        pass
    api.stop()
    return 0


def _write_atomic(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.rename(tmp, path)


if __name__ == "__main__":
    sys.exit(main())
