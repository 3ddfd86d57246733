"""The API port's HTTP handler: TLS handshake, reading bodies (size
limit), authentication, faults, response writing (headers, chunking),
routing of the non-resource paths (discovery, /version, /openapi/v2,
/fake/<action>)."""

import email.utils
import json
import ssl
import time
import uuid
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qs, unquote, urlsplit

from .control import control_call
from .discovery import (OPENAPI_PB, VERSION_INFO, _pb_bytes, _pb_str, api_groups,
                        discovery_resources)
from .errors import ApiError, ClientGone, bad_request
from .faults import _kill_sock
from .present import go_json, go_json_pretty
from .users import ANONYMOUS, DISCOVERY_PREFIXES, PUBLIC_PATHS
from .verbs import ResourceVerbs
from .watch import WatchStream


MAX_BODY = 3 * 1024 * 1024  # apiserver request limit (413 above)
CHUNK_THRESHOLD = 2048  # Go net/http: bodies above get chunked encoding
PF_FLOWSCHEMA = "80364861-bf5b-4c83-9bce-4919f26ad436"
PF_PRIORITY = "37643b8a-81de-48e3-8b96-4e6e535e076a"
PF_FLOWSCHEMA_EXEMPT = "e1942e15-55b7-4bed-ac90-d4ca23ef0169"
PF_PRIORITY_EXEMPT = "5b14471c-38dd-41d0-8237-32545e447320"
PF_FLOWSCHEMA_ANON = "8a1ad40c-9e70-4336-b948-e3bbe60d15c3"  # global-default
PF_PRIORITY_ANON = "26c2b052-8f1d-4303-9983-404c94d00fb1"
THROTTLE_BODY = b"Too many requests, please try again later.\n"


class _Answered(Exception):
    """The response was written; stop routing."""


class ApiHandler(ResourceVerbs, WatchStream, BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # no 40 ms Nagle/delayed-ACK stalls
    wbufsize = 65536  # one write per response; flushed explicitly

    def setup(self):
        if isinstance(self.request, ssl.SSLSocket):
            self.request.settimeout(10)
            self.request.do_handshake()
            self.request.settimeout(None)
        super().setup()
        self.server.api.track(self.request, True)

    def finish(self):
        try:
            super().finish()
        except OSError:
            pass
        self.server.api.track(self.request, False)

    def log_message(self, fmt, *args):
        pass

    def handle_expect_100(self):
        self.send_response_only(100)
        self.end_headers()
        self.wfile.flush()  # the writer is buffered
        if self.server.api._take("cut", self.path):
            _kill_sock(self.request)
            self.close_connection = True
            return False
        return True

    def do_GET(self):
        self.dispatch()

    do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = do_GET

    # ---- response writing

    def respond(self, code, body, ctype="application/json", audit=True, pf=True,
                extra=None, close=False):
        hdrs = {"Cache-Control": "no-cache, private", "Content-Type": ctype}
        if audit and self.server.api.audit:
            hdrs["Audit-Id"] = str(uuid.uuid4())
        if pf and self.user is not None:
            fs, pl = PF_FLOWSCHEMA, PF_PRIORITY
            if "system:masters" in self.user.groups:
                fs, pl = PF_FLOWSCHEMA_EXEMPT, PF_PRIORITY_EXEMPT
            elif self.user is ANONYMOUS:
                fs, pl = PF_FLOWSCHEMA_ANON, PF_PRIORITY_ANON
            hdrs["X-Kubernetes-Pf-Flowschema-Uid"] = fs
            hdrs["X-Kubernetes-Pf-Prioritylevel-Uid"] = pl
        if code in (403, 429):
            hdrs["X-Content-Type-Options"] = "nosniff"
        hdrs.update(extra or {})
        self.rec["status"] = code
        self.send_response_only(code)
        for k in sorted(hdrs):
            self.send_header(k, hdrs[k])
        self.send_header("Date", email.utils.formatdate(usegmt=True))
        chunked = len(body) > CHUNK_THRESHOLD
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Content-Length", str(len(body)))
        if close:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        if self.command == "HEAD":
            return
        if chunked:
            for i in range(0, len(body), 32768):
                part = body[i:i + 32768]
                self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
            self.wfile.write(b"0\r\n\r\n")
        else:
            self.wfile.write(body)
        self.wfile.flush()

    def send_json(self, code, d, audit=True, pf=True, extra=None, close=False):
        # Go's json.Encoder ends compact output with a newline
        text = go_json_pretty(d) if self.pretty else go_json(d) + "\n"
        self.respond(code, text.encode(), audit=audit, pf=pf, extra=extra, close=close)

    def send_error_status(self, e, close=False):
        self.rec["reason"] = e.reason
        self.send_json(e.code, e.body(), pf=e.code != 401, close=close,
                       extra={"Retry-After": str(e.retry_after)}
                       if getattr(e, "retry_after", None) else None)

    # ---- request reading

    def read_body(self):
        """The request body (Content-Length or chunked). Over 3 MiB: everything
        is read and dropped, then 413 (the apiserver's answer)."""
        te = self.headers.get("Transfer-Encoding", "").lower()
        if "chunked" in te:
            parts, total = [], 0
            while True:
                line = self.rfile.readline(1024)
                if not line:
                    raise ClientGone()
                n = int(line.split(b";")[0].strip() or b"0", 16)
                if n == 0:
                    while self.rfile.readline(1024) not in (b"\r\n", b"\n", b""):
                        pass
                    break
                data = self.rfile.read(n)
                self.rfile.readline(8)
                total += n
                if total <= MAX_BODY:
                    parts.append(data)
            body = b"".join(parts) if total <= MAX_BODY else None
        else:
            try:
                n = int(self.headers.get("Content-Length") or 0)
            except ValueError:
                raise bad_request("invalid Content-Length")
            if n > MAX_BODY:
                left = n
                while left > 0:
                    got = self.rfile.read(min(left, 1 << 16))
                    if not got:
                        raise ClientGone()
                    left -= len(got)
                body = None
            else:
                body = self.rfile.read(n) if n else b""
                if len(body) < n:
                    raise ClientGone()
        return body  # None: too large

    # ---- dispatch

    def dispatch(self):
        api = self.server.api
        url = urlsplit(self.path)
        self.q = {k: v[0] for k, v in parse_qs(url.query, keep_blank_values=True).items()}
        self.ua = self.headers.get("User-Agent", "")
        self.pretty = self.ua.startswith(("curl/", "wget/")) or \
            self.q.get("pretty") in ("true", "1")
        self.user = None
        self.rec = {"time": time.time(), "method": self.command, "path": url.path,
                    "query": url.query, "user": None, "status": None,
                    "user_agent": self.ua,
                    "content_type": self.headers.get("Content-Type", ""),
                    "accept": self.headers.get("Accept", "")}
        try:
            f = api._take("stall", url.path)
            if f:
                time.sleep(f["seconds"])
            body = self.read_body()
            self.rec["bytes"] = len(body or b"")
            if url.path.startswith("/fake/") and api.control_token:
                return self.fake_control(url.path[len("/fake/"):], body or b"")
            self.user = self.impersonate(self.authenticate())
            self.rec["user"] = self.user.name
            if body is None:
                e = ApiError(413, "RequestEntityTooLarge",
                             "Request entity too large: limit is %d" % MAX_BODY)
                e.close = True
                raise e
            self.faults(url.path)
            self.route(url.path, body)
        except ApiError as e:
            try:
                self.send_error_status(e, close=getattr(e, "close", False))
            except OSError:
                self.close_connection = True
        except (ClientGone, OSError):
            self.close_connection = True
        finally:
            api.log(self.rec)

    def authenticate(self):
        api = self.server.api
        h = self.headers.get("Authorization")
        if h:
            if h.startswith("Bearer "):
                u = api.lookup_token(h[7:].strip())
                if u:
                    return u
            raise ApiError(401, "Unauthorized", "Unauthorized")
        if isinstance(self.request, ssl.SSLSocket):
            cert = self.request.getpeercert()
            if cert:
                cn, orgs = "", []
                for rdn in cert.get("subject", ()):
                    for k, v in rdn:
                        if k == "commonName":
                            cn = v
                        elif k == "organizationName":
                            orgs.append(v)
                if cn:
                    u = api.user_by_name(cn, orgs + ["system:authenticated"], None)
                    if orgs and "system:masters" in orgs:
                        u.rules = None
                    return u
        if api.anonymous:
            return ANONYMOUS
        raise ApiError(401, "Unauthorized", "Unauthorized")

    def impersonate(self, user):
        """Impersonate-User and Impersonate-Group, as the real server's
        impersonation filter takes them: the caller needs the verb
        impersonate on users (and on groups), else 403 naming it; the
        request then runs as that user, in the groups asked for (plus
        system:authenticated), with the rules of the user's token here when
        it has one. Groups without a user are the real server's 500."""
        name = self.headers.get("Impersonate-User")
        groups = self.headers.get_all("Impersonate-Group") or []
        if not name:
            if groups:
                raise ApiError(500, "InternalError",
                               "Internal error occurred: requested %s without "
                               "impersonating a user" % groups)
            return user
        for kind, value in [("users", name)] + [("groups", g) for g in groups]:
            if not user.allowed("impersonate", "", kind, value)[0]:
                raise ApiError(403, "Forbidden",
                               '%s "%s" is forbidden: User "%s" cannot impersonate '
                               'resource "%s" in API group "" at the cluster scope'
                               % (kind, value, user.name, kind))
        self.rec["impersonated_by"] = user.name
        self.rec["groups"] = groups
        return self.server.api.user_by_name(name, groups + ["system:authenticated"])

    def faults(self, path):
        api = self.server.api
        f = api._take("throttle", path)
        if f:
            self.rec["status"] = 429
            self.respond(429, THROTTLE_BODY, ctype="text/plain; charset=utf-8", pf=False,
                         extra={"Retry-After": str(f["retry_after"])})
            raise _Answered()
        f = api._take("fail", path)
        if f:
            e = ApiError(f["code"], f["reason"], f["message"])
            if f.get("retry_after") is not None:
                e.retry_after = f["retry_after"]
            raise e

    def forbidden_path(self, path):
        raise ApiError(403, "Forbidden", 'forbidden: User "%s" cannot %s path "%s"'
                       % (self.user.name, self.command.lower(), path), {})

    def route(self, path, body):
        try:
            self._route(path, body)
        except _Answered:
            pass

    def _route(self, path, body):
        api = self.server.api
        parts = [unquote(p) for p in path.strip("/").split("/")] if path.strip("/") else []
        anon = self.user is ANONYMOUS
        if path in PUBLIC_PATHS:
            if path == "/version":
                text = json.dumps(VERSION_INFO, indent=2)
                return self.respond(200, text.encode())
            return self.respond(200, b"ok", ctype="text/plain; charset=utf-8")
        if parts[:2] == ["api", "v1"] and len(parts) > 2:
            return self.resource(api, "", "v1", parts[2:], body)
        if len(parts) > 3 and parts[0] == "apis":
            return self.resource(api, parts[1], parts[2], parts[3:], body)
        if anon and path.startswith(DISCOVERY_PREFIXES):
            self.forbidden_path(path)
        if path == "/api":
            return self.send_json(200, {"kind": "APIVersions", "versions": ["v1"],
                                        "serverAddressByClientCIDRs": [{
                                            "clientCIDR": "0.0.0.0/0",
                                            "serverAddress": "%s:%d" % (api.host,
                                                                        api.port)}]})
        if path == "/openapi/v2":
            return self.openapi_v2()
        if path == "/apis":
            return self.send_json(200, {"kind": "APIGroupList", "apiVersion": "v1",
                                        "groups": api_groups(api)})
        if parts[:2] == ["api", "v1"] and len(parts) == 2:
            return self.send_json(200, {"kind": "APIResourceList", "groupVersion": "v1",
                                        "resources": discovery_resources(api, "", "v1")})
        if len(parts) in (2, 3) and parts[0] == "apis":
            for g in api_groups(api):
                if g["name"] != parts[1]:
                    continue
                if len(parts) == 2:
                    return self.send_json(200, dict({"kind": "APIGroup",
                                                     "apiVersion": "v1"}, **g))
                if any(v["version"] == parts[2] for v in g["versions"]):
                    return self.send_json(200, {
                        "kind": "APIResourceList", "apiVersion": "v1",
                        "groupVersion": parts[1] + "/" + parts[2],
                        "resources": discovery_resources(api, parts[1], parts[2])})
        self.respond(404, b"404 page not found\n", ctype="text/plain; charset=utf-8")

    def openapi_v2(self):
        """An OpenAPI v2 document without definitions: kubectl then skips its
        client-side validation of our types (the server validates)."""
        if "protobuf" in self.headers.get("Accept", ""):
            info = _pb_str(1, "Kubernetes") + _pb_str(2, VERSION_INFO["gitVersion"])
            doc = _pb_str(1, "2.0") + _pb_bytes(2, info)
            return self.respond(200, doc, ctype=OPENAPI_PB)
        self.send_json(200, {"swagger": "2.0", "info": {
            "title": "Kubernetes", "version": VERSION_INFO["gitVersion"]},
            "paths": {}, "definitions": {}})

    # ---- control through the API port (only with the control token)

    def fake_control(self, action, body):
        api = self.server.api
        if self.headers.get("Authorization") != "Bearer " + api.control_token:
            return self.respond(404, b"404 page not found\n",
                                ctype="text/plain; charset=utf-8")
        self.user = None
        try:
            out = control_call(api, self.command, action, body)
        except KeyError:
            return self.respond(404, b'{"error":"unknown action"}\n')
        self.respond(200, (json.dumps(out) + "\n").encode())
