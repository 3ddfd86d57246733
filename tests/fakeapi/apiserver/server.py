"""FakeAPI, the fake apiserver: its state, its life cycle (listen, stop,
go down and back), and a kubeconfig for it. Its methods come in parts:
Tokens (users.py), Faults (faults.py), Control (control.py), Objects
(objects.py)."""

import copy
import json
import ssl
import threading
import time
from http.server import ThreadingHTTPServer

from .control import Control, ControlHandler
from .faults import Faults, _kill_sock
from .handler import ApiHandler
from .objects import Objects
from .resources import default_resources
from .store import Store
from .tls import make_tls
from .users import DEFAULT_TOKENS, Tokens


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 64

    def handle_error(self, request, client_address):
        if getattr(self, "api", None) is not None and self.api.verbose:
            super().handle_error(request, client_address)


class FakeAPI(Tokens, Faults, Control, Objects):
    """The fake apiserver. FakeAPI(tls_dir=...).start(); .url, .ca, .stop().
    Fault injection: close_watches(), stall(), go_down(), throttle(), fail(),
    compact(), add_token(), remove_token(); or the control port (see README)."""

    def __init__(self, tls_dir=None, tokens=None, port=0, host="127.0.0.1",
                 control_port=0, anonymous=True, bookmark_period=60.0,
                 watch_timeout=None, crds=None, verbose=False, plain_http=False,
                 control_token=None, strict_namespaces=True, audit=True,
                 namespaces=("default", "kube-system", "kube-public", "kube-node-lease",
                             "oom-system", "oomlens-system")):
        self.resources = default_resources(crds)
        self.by_gvr = {(r.group, r.version, r.plural): r for r in self.resources}
        self.by_key = {r.key: r for r in self.resources}
        self.store = Store()
        self.host, self.port, self.control_port = host, port, control_port
        self.tls_dir, self.plain_http = tls_dir, plain_http
        self.anonymous = anonymous
        self.bookmark_period = float(bookmark_period)
        # The real 1.20 server sends 1 or 2 bookmarks before a 5 s timeout
        # (measured): the one just before the end comes or not.
        # "random" (default), "always" (the golden replay), "never".
        self.bookmark_last = "random"
        self.watch_timeout = watch_timeout  # default for watches without timeoutSeconds
        self.verbose = verbose
        self.control_token = control_token
        self.strict_namespaces = strict_namespaces
        self.audit = audit  # 1.20 sends Audit-Id only with auditing configured
        self.flock = threading.Lock()
        self.tokens_file = tokens if isinstance(tokens, str) else None
        self.tokens_mtime = None
        self.tokens = copy.deepcopy(DEFAULT_TOKENS if tokens is None or
                                    self.tokens_file else tokens)
        self.extra_tokens = {}
        self.removed_tokens = set()
        self.faults = {"stall": [], "throttle": [], "fail": [], "cut": []}
        self.watch_gen = 0
        self.conns = set()
        self.watch_socks = set()
        self.requests = []
        self.httpd = None
        self.ctl = None
        self.up = False
        self.ssl_ctx = None
        self.tls = None
        self.down_until = 0.0
        self.restarts = 0
        self.life = threading.Lock()  # start/stop/down/up one at a time
        self.stopped = False
        self.down_gen = 0
        with self.store.cond:
            for ns in namespaces:
                self._insert(self.by_key["namespaces"], {"metadata": {"name": ns}},
                             "fakeapi", "Update")
        self._load_tokens()

    @property
    def url(self):
        return "%s://%s:%d" % ("http" if self.plain_http else "https", self.host, self.port)

    @property
    def ca(self):
        return self.tls["ca"] if self.tls else None

    def start(self):
        """Starts listening (API and control port). Returns self."""
        if not self.plain_http:
            if not self.tls_dir:
                raise ValueError("tls_dir is required unless plain_http")
            self.tls = make_tls(self.tls_dir)
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(self.tls["cert"], self.tls["key"])
            ctx.load_verify_locations(self.tls["ca"])
            ctx.verify_mode = ssl.CERT_OPTIONAL  # client certificates are a login
            ctx.set_alpn_protocols(["http/1.1"])
            self.ssl_ctx = ctx
        self._serve_api()
        self.ctl = _Server((self.host, self.control_port), ControlHandler)
        self.ctl.api = self
        self.control_port = self.ctl.server_address[1]
        threading.Thread(target=self.ctl.serve_forever, kwargs={"poll_interval": 0.1},
                         daemon=True).start()
        return self

    def stop(self):
        """Stops both servers and drops every connection."""
        with self.life:
            self.stopped = True
            self._stop_api()
        if self.ctl:
            self.ctl.shutdown()
            self.ctl.server_close()
            self.ctl = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *a):
        self.stop()

    def _serve_api(self):
        last = None
        for _ in range(50):
            try:
                httpd = _Server((self.host, self.port), ApiHandler)
                break
            except OSError as e:  # the old socket may linger for a moment
                last = e
                time.sleep(0.1)
        else:
            raise last
        if self.ssl_ctx:
            httpd.socket = self.ssl_ctx.wrap_socket(httpd.socket, server_side=True,
                                                    do_handshake_on_connect=False)
        httpd.api = self
        self.port = httpd.server_address[1]
        self.httpd = httpd
        self.up = True
        threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.1},
                         daemon=True).start()

    def _stop_api(self):
        httpd, self.httpd = self.httpd, None
        self.up = False
        if httpd:
            httpd.shutdown()
            httpd.server_close()
        with self.flock:
            conns = list(self.conns)
        for c in conns:
            _kill_sock(c)
        with self.store.cond:
            self.store.cond.notify_all()

    def track(self, sock, add, watch=False):
        with self.flock:
            s = self.watch_socks if watch else self.conns
            if add:
                s.add(sock)
            else:
                s.discard(sock)

    def write_kubeconfig(self, path, token="agent-token-0123456789", cert=None, key=None,
                         namespace="default"):
        """Writes a kubeconfig (JSON, which kubectl reads as YAML) for this server."""
        user = {"token": token} if token else {}
        if cert:
            user = {"client-certificate": cert, "client-key": key}
        cfg = {"apiVersion": "v1", "kind": "Config", "current-context": "fake",
               "clusters": [{"name": "fake", "cluster": {"server": self.url,
                                                         "certificate-authority": self.ca}}],
               "users": [{"name": "fake", "user": user}],
               "contexts": [{"name": "fake", "context": {"cluster": "fake", "user": "fake",
                                                         "namespace": namespace}}]}
        with open(path, "w") as f:
            json.dump(cfg, f, indent=1)
        return path
