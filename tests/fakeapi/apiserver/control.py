"""The control calls: FakeAPI's load/plant/generate/reset/state and the
request log, control() (one action by name), and the control port's
handler (plain HTTP on loopback)."""

import copy
import json
import sys
import uuid
from http.server import BaseHTTPRequestHandler

from .errors import ApiError
from .util import now_ts


class Control:
    """FakeAPI's control actions (the control port's POST /<action>). A
    part of FakeAPI (server.py); the object writes are Objects'."""

    def resource(self, name):
        """A served resource by key (oomreports.oomlens.io) or plural."""
        r = self.by_key.get(name) or next(
            (r for r in self.resources if r.plural == name and r.group != "events.k8s.io"),
            None)
        if r is None:
            raise KeyError(name)
        return r

    def load(self, resource, namespace, objects):
        """Creates objects server-side (defaults and validation apply, one
        ADDED event each). Returns {"created": n, "rv": last RV}."""
        res = self.resource(resource)
        n = 0
        for o in objects:
            self.create(res, namespace if res.namespaced else None, copy.deepcopy(o),
                        "fakeapi-load")
            n += 1
        return {"created": n, "rv": self.store.rv}

    def plant(self, resource, namespace, obj):
        """Stores obj as given, past defaults and validation: what a reader
        of untrusted objects must survive although a real API server would
        refuse it (a wrong JSON type). metadata must be an object with a
        name. Returns the stored object."""
        res = self.resource(resource)
        obj = copy.deepcopy(obj)
        meta = obj["metadata"]
        if res.namespaced:
            meta["namespace"] = namespace
        meta.setdefault("uid", str(uuid.uuid4()))
        meta.setdefault("creationTimestamp", now_ts())
        with self.store.cond:
            old = self.sget(res, namespace, meta["name"])
            return self.swrite(res, "MODIFIED" if old else "ADDED", obj, old)

    def generate_pods(self, count, namespace="default", node="node1", prefix="pod-"):
        """Creates `count` Pending pods named prefix0, prefix1, … on `node`."""
        tmpl = {"apiVersion": "v1", "kind": "Pod", "metadata": {"labels": {"app": "bench"}},
                "spec": {"nodeName": node, "containers": [{
                    "name": "c", "image": "busybox:1.36",
                    "resources": {"limits": {"memory": "16Mi"}}}]}}
        objs = []
        for i in range(count):
            o = copy.deepcopy(tmpl)
            o["metadata"]["name"] = "%s%d" % (prefix, i)
            objs.append(o)
        return self.load("pods", namespace, objs)

    def reset(self):
        """Drops every object except namespaces (and the history)."""
        with self.store.cond:
            for key in list(self.store.objects):
                if key != "namespaces":
                    self.store.objects[key] = {}
            self.store.history = []

    def control(self, action, p):
        """Runs one control action (the control port's POST /<action>)."""
        if action == "close-watches":
            return {"closed": self.close_watches()}
        if action == "stall":
            self.stall(p.get("seconds", 1), p.get("count", 1), p.get("path"))
        elif action == "throttle":
            self.throttle(p.get("count", 1), p.get("retry_after", 1), p.get("path"))
        elif action == "fail":
            self.fail(p.get("count", 1), p.get("code", 500),
                      p.get("message", "fakeapi: injected failure"), p.get("reason", ""),
                      p.get("path"), p.get("retry_after"))
        elif action == "cut-after-continue":
            self.cut_after_continue(p.get("count", 1), p.get("path"))
        elif action == "down":
            self.go_down(p.get("seconds", 1), p.get("expire", True))
        elif action == "compact":
            return {"compacted": self.compact(p.get("rv"))}
        elif action == "tokens":
            for tok, spec in (p.get("add") or {}).items():
                if isinstance(spec, str):
                    spec = {"user": spec}
                self.add_token(tok, spec["user"], spec.get("groups", ()),
                               spec.get("rules"), spec.get("uid", ""))
            for tok in p.get("remove") or []:
                self.remove_token(tok)
        elif action == "config":
            for k in ("anonymous", "bookmark_period", "watch_timeout", "audit",
                      "bookmark_last"):
                if k in p:
                    setattr(self, k, p[k])
        elif action == "load":
            return self.load(p.get("resource", "pods"), p.get("namespace", "default"),
                             p.get("objects") or [])
        elif action == "generate-pods":
            return self.generate_pods(int(p.get("count", 1)), p.get("namespace", "default"),
                                      p.get("node", "node1"), p.get("prefix", "pod-"))
        elif action == "reset":
            self.reset()
        elif action == "clear-requests":
            with self.flock:
                self.requests = []
        else:
            raise KeyError(action)
        return {"ok": True}

    def state(self):
        with self.store.cond:
            st = {"rv": self.store.rv, "compacted_rv": self.store.compacted_rv,
                  "watch_floor": self.store.watch_floor}
        with self.flock:
            st.update({"port": self.port, "up": self.up, "watches": len(self.watch_socks),
                       "connections": len(self.conns), "requests": len(self.requests),
                       "restarts": self.restarts})
        return st

    def log(self, rec):
        with self.flock:
            self.requests.append(rec)
            if len(self.requests) > 20000:
                del self.requests[:10000]
        if self.verbose:
            sys.stderr.write("fakeapi: %(method)s %(path)s -> %(status)s (%(user)s)\n" % rec)


def control_call(api, method, action, body):
    if method == "GET" and action == "state":
        return api.state()
    if method == "GET" and action == "requests":
        with api.flock:
            return list(api.requests)
    p = json.loads(body) if body.strip() else {}
    return api.control(action, p)


class ControlHandler(BaseHTTPRequestHandler):
    """The control port: plain HTTP on loopback. GET /state, GET /requests,
    POST /<action> with a JSON body (see FakeAPI.control)."""
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def _do(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else b""
        try:
            out = control_call(self.server.api, self.command, self.path.strip("/"), body)
            code = 200
        except KeyError as e:
            out, code = {"error": "unknown action or resource %s" % e}, 404
        except ApiError as e:  # e.g. a `load` object the API refuses
            out, code = e.body(), e.code
        except (ValueError, TypeError) as e:
            out, code = {"error": str(e)}, 400
        data = (json.dumps(out) + "\n").encode()
        self.send_response_only(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = _do
