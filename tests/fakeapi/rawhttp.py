"""A raw HTTP/1.1-over-TLS client for testing fakeapi byte for byte: it
keeps header order, 100 Continue answers, chunk boundaries and arrival
times, and whether a chunked stream ended with its final chunk."""

import json
import re
import socket
import ssl
import time


class Response:
    def __init__(self):
        self.informational = []  # e.g. [100]
        self.status = None
        self.headers = []  # [(name, value)] in wire order
        self.body = b""
        self.chunks = []  # raw chunk payloads when chunked
        self.chunk_times = []  # seconds after the request was sent
        self.chunked = False
        self.complete = True  # False: the stream was cut before its end
        self.elapsed = 0.0

    def header(self, name):
        for k, v in self.headers:
            if k.lower() == name.lower():
                return v
        return None

    def header_names(self):
        return [k for k, _ in self.headers]

    def json(self):
        return json.loads(self.body)

    def events(self):
        return [json.loads(line) for line in self.body.split(b"\n") if line.strip()]


class RawClient:
    def __init__(self, port, ca=None, host="127.0.0.1", cert=None, key=None,
                 user_agent="oomlens-agent/0.1 (reference-capture)"):
        self.port, self.ca, self.host = port, ca, host
        self.cert, self.key = cert, key
        self.user_agent = user_agent

    def connect(self, timeout=30):
        sock = socket.create_connection((self.host, self.port), timeout=timeout)
        if self.ca is None:
            return sock
        ctx = ssl.create_default_context(cafile=self.ca)
        if self.cert:
            ctx.load_cert_chain(self.cert, self.key)
        return ctx.wrap_socket(sock, server_hostname=self.host)

    def request(self, method, path, token=None, body=b"", headers=None, expect100=None,
                timeout=30):
        """One request on a fresh connection. expect100: send `Expect:
        100-continue` and wait for the interim answer (default: bodies > 1 MiB,
        as curl and libcurl do)."""
        if isinstance(body, str):
            body = body.encode()
        if expect100 is None:
            expect100 = len(body) > 1024 * 1024
        h = {"Host": "%s:%d" % (self.host, self.port), "User-Agent": self.user_agent,
             "Accept": "application/json"}
        if token:
            h["Authorization"] = "Bearer " + token
        h.update(headers or {})
        if body or method in ("POST", "PUT", "PATCH"):
            h["Content-Length"] = str(len(body))
        if expect100:
            h["Expect"] = "100-continue"
        head = "%s %s HTTP/1.1\r\n" % (method, path) + "".join(
            "%s: %s\r\n" % kv for kv in h.items() if kv[1] is not None) + "\r\n"
        s = self.connect(timeout)
        f = s.makefile("rb")
        r = Response()
        t0 = time.monotonic()
        try:
            s.sendall(head.encode())
            if expect100:
                code, _ = self._read_head(f)
                r.informational.append(code)
                if code != 100:
                    raise AssertionError("expected 100 Continue, got %d" % code)
            if body:
                s.sendall(body)
            while True:
                r.status, r.headers = self._read_head(f)
                if r.status >= 200:
                    break
                r.informational.append(r.status)
            self._read_body(f, r, t0, method)
        finally:
            r.elapsed = time.monotonic() - t0
            f.close()
            s.close()
        return r

    @staticmethod
    def _read_head(f):
        line = f.readline()
        if not line:
            raise ConnectionError("connection closed before a status line")
        m = re.match(rb"HTTP/1\.1 (\d{3})", line)
        if not m:
            raise AssertionError("bad status line %r" % line)
        hdrs = []
        while True:
            ln = f.readline()
            if ln in (b"\r\n", b"\n", b""):
                break
            k, _, v = ln.decode("latin-1").partition(":")
            hdrs.append((k.strip(), v.strip()))
        return int(m.group(1)), hdrs

    def _read_body(self, f, r, t0, method):
        te = dict((k.lower(), v) for k, v in r.headers).get("transfer-encoding", "")
        cl = dict((k.lower(), v) for k, v in r.headers).get("content-length")
        if method == "HEAD":
            return
        if "chunked" in te.lower():
            r.chunked = True
            parts = []
            try:
                self._read_chunks(f, r, t0, parts)
            except (ssl.SSLError, OSError):
                r.complete = False  # cut mid-stream
            r.body = b"".join(parts)
        elif cl is not None:
            r.body = f.read(int(cl))
        else:
            r.body = f.read()

    @staticmethod
    def _read_chunks(f, r, t0, parts):
        while True:
            line = f.readline()
            if not line:
                r.complete = False
                break
            n = int(line.strip() or b"0", 16)
            if n == 0:
                f.readline()
                break
            data = f.read(n)
            crlf = f.read(2)
            if len(data) < n or crlf != b"\r\n":
                r.complete = False
                parts.append(data)
                break
            r.chunks.append(data)
            r.chunk_times.append(time.monotonic() - t0)
            parts.append(data)
