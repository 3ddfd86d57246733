"""The verbs on a resource path: routing of /api/v1/... and
/apis/G/V/..., RBAC authorization, body decoding, get, list (or a
Table), create, update, patch, delete, deletecollection, and the
TokenReview / SubjectAccessReview answers."""

import json

from .errors import ApiError, bad_request, decode_json, not_found
from .managed import fields_v1
from .present import present
from .resources import Res
from .tables import make_table
from .util import now_ts, yaml


API_AUDIENCES = ["https://kubernetes.default.svc.cluster.local"]


class ResourceVerbs:
    """ApiHandler's resource verbs (the watch verb is in watch.py). A part
    of ApiHandler (handler.py): self.q, self.user, self.ua and
    send_json()/respond() are its."""

    def resource(self, api, group, version, rest, body):
        watch = False
        if rest[0] == "watch":
            watch, rest = True, rest[1:]
        ns = None
        if len(rest) >= 3 and rest[0] == "namespaces" and rest[2] not in ("status",
                                                                         "finalize"):
            ns, rest = rest[1], rest[2:]
        res = api.by_gvr.get((group, version, rest[0])) if rest else None
        if res is None and rest and len(rest) <= 3:
            # authorization runs before routing: unknown resources get 403 first
            ghost = Res(group, version, rest[0], rest[0])
            w = self.q.get("watch") in ("1", "true") or watch
            verb = {"GET": "get" if len(rest) > 1 else ("watch" if w else "list"),
                    "POST": "create", "PUT": "update", "PATCH": "patch",
                    "DELETE": "delete" if len(rest) > 1 else "deletecollection"}.get(
                        self.command, "get")
            self.authorize(verb, ghost, rest[2] if len(rest) > 2 else None, ns,
                           rest[1] if len(rest) > 1 else None)
        if res is None or len(rest) > 3 or (len(rest) == 3 and not (
                rest[2] == "status" and res.status)) or (ns and not res.namespaced):
            if not any(r.group == group and r.version == version for r in api.resources):
                return self.respond(404, b"404 page not found\n",
                                    ctype="text/plain; charset=utf-8")
            raise ApiError(404, "NotFound", "the server could not find the requested "
                           "resource", {})
        name = rest[1] if len(rest) > 1 else None
        sub = rest[2] if len(rest) > 2 else None
        watch = watch or self.q.get("watch") in ("1", "true")
        m = self.command
        verb = {"GET": "get" if name else ("watch" if watch else "list"), "HEAD": "get",
                "POST": "create", "PUT": "update", "PATCH": "patch",
                "DELETE": "delete" if name else "deletecollection"}.get(m)
        if verb is None or verb not in res.verbs or (m == "POST" and name) or \
                (sub and m in ("POST", "DELETE")):
            raise ApiError(405, "MethodNotAllowed", "the server does not allow this method "
                           "on the requested resource", {})
        if watch and name:  # a watch on one object is a field-selected watch
            verb = "watch"
        self.authorize(verb, res, sub, ns, name)
        if self.q.get("dryRun") and m not in ("GET", "HEAD"):
            raise bad_request("fakeapi: dryRun is not supported (nothing was written)")
        manager = self.q.get("fieldManager") or self.ua.split("/")[0] or "unknown"
        if res.create_only:
            return self.review(api, res, body)
        if watch:
            if name:
                self.q["fieldSelector"] = "metadata.name=" + name
            return self.watch(api, res, ns)
        if m in ("GET", "HEAD") and not name:
            return self.list(api, res, ns)
        if res.namespaced and ns is None and m != "GET":
            raise ApiError(405, "MethodNotAllowed", "the server does not allow this method "
                           "on the requested resource", {})
        if m in ("GET", "HEAD"):
            with api.store.cond:
                o = api.sget(res, ns, name)
            if o is None:
                raise not_found(res, name)
            return self.send_object(200, res, o, single=True)
        if m == "POST":
            obj = self.decode_body(res, body)
            return self.send_object(201, res, api.create(res, ns, obj, manager))
        if m == "PUT":
            obj = self.decode_body(res, body)
            o, _ = api.update(res, ns, name, sub, obj, manager)
            return self.send_object(200, res, o)
        if m == "PATCH":
            ctype = self.headers.get("Content-Type", "").split(";")[0].strip()
            code, o = api.patch(res, ns, name, sub, ctype, body.decode("utf-8", "replace"),
                                manager, self.q.get("force") == "true",
                                self.q.get("fieldManager"))
            return self.send_object(code, res, o)
        if m == "DELETE" and name:
            return self.delete(api, res, ns, name, body)
        return self.delete_collection(api, res, ns, body)

    def authorize(self, verb, res, sub, ns, name):
        resource = res.plural + ("/" + sub if sub else "")
        ok, _ = self.user.allowed(verb, res.group, resource, name)
        if ok:
            return
        what = '%s "%s"' % (res.qualified(), name) if name else res.qualified()
        where = ('in the namespace "%s"' % ns) if ns else "at the cluster scope"
        d = {}
        if name:
            d["name"] = name
        if res.group:
            d["group"] = res.group
        d["kind"] = res.plural
        raise ApiError(403, "Forbidden", '%s is forbidden: User "%s" cannot %s resource '
                       '"%s" in API group "%s" %s' % (what, self.user.name, verb, resource,
                                                      res.group, where), d)

    def decode_body(self, res, body):
        ctype = self.headers.get("Content-Type", "application/json").split(";")[0].strip()
        if ctype in ("application/yaml", "application/x-yaml") and yaml is not None:
            try:
                obj = json.loads(json.dumps(yaml.safe_load(body), default=str))
            except Exception as e:
                raise bad_request("error decoding YAML: %s" % e)
        elif ctype in ("application/json", ""):
            obj = decode_json(body)
        else:
            raise ApiError(415, "UnsupportedMediaType", "the body of the request was in an "
                           "unknown format - accepted media types include: "
                           "application/json, application/yaml, "
                           "application/vnd.kubernetes.protobuf")
        if not isinstance(obj, dict):
            raise bad_request("couldn't get version/kind; json parse error: expected an "
                              "object")
        av, kind = obj.get("apiVersion"), obj.get("kind")
        if av and av != res.api_version:
            raise bad_request("the API version in the data (%s) does not match the expected "
                              "API version (%s)" % (av, res.api_version))
        if kind and kind != res.kind:
            raise bad_request("the kind in the data (%s) does not match the expected kind "
                              "(%s)" % (kind, res.kind))
        return obj

    def wants_table(self):
        return "as=Table" in self.headers.get("Accept", "")

    def send_object(self, code, res, o, single=False):
        if single and self.wants_table():
            with self.server.api.store.cond:
                rv = self.server.api.store.rv
            return self.send_json(code, make_table(res, [o], rv, None,
                                                   self.q.get("includeObject", "Metadata")))
        self.send_json(code, present(res, o))

    def list(self, api, res, ns):
        items, rv, token, remaining = api.list_objects(res, ns, self.q)
        if self.wants_table():
            return self.send_json(200, make_table(res, items, rv, token,
                                                  self.q.get("includeObject", "Metadata")))
        if res.builtin:
            meta = {"resourceVersion": str(rv)}
            if token:
                meta["continue"] = token
            if remaining:
                meta["remainingItemCount"] = remaining
            out = []
            for o in items:
                p = present(res, o)
                p.pop("kind", None)
                p.pop("apiVersion", None)
                out.append(p)
            return self.send_json(200, {"kind": res.list_kind, "apiVersion": res.api_version,
                                        "metadata": meta, "items": out})
        meta = {"continue": token or "", "resourceVersion": str(rv)}
        if remaining:
            meta["remainingItemCount"] = remaining
        self.send_json(200, {"apiVersion": res.api_version,
                             "items": [present(res, o) for o in items],
                             "kind": res.list_kind, "metadata": meta})

    def delete(self, api, res, ns, name, body):
        opts = {}
        if body.strip():
            opts = decode_json(body)
            if not isinstance(opts, dict):
                raise bad_request("DeleteOptions must be an object")
        grace = self.q.get("gracePeriodSeconds", opts.get("gracePeriodSeconds"))
        try:
            grace = None if grace in (None, "") else int(grace)
        except ValueError:
            raise bad_request("gracePeriodSeconds: invalid value %r" % grace)
        o, is_status = api.delete(res, ns, name, opts, grace)
        if is_status:
            return self.send_json(200, o)
        self.send_object(200, res, o)

    def delete_collection(self, api, res, ns, body):
        items, _, _, _ = api.list_objects(res, ns, {k: v for k, v in self.q.items()
                                                    if k in ("labelSelector",
                                                             "fieldSelector")})
        done = []
        for o in items:
            try:
                d, _ = api.delete(res, ns or o["metadata"].get("namespace"),
                                  o["metadata"]["name"], {}, 0)
                done.append(o)
            except ApiError:
                pass
        with api.store.cond:
            rv = api.store.rv
        self.send_json(200, {"kind": res.list_kind, "apiVersion": res.api_version,
                             "metadata": {"resourceVersion": str(rv)},
                             "items": [present(res, o) for o in done]})

    def review(self, api, res, body):
        obj = self.decode_body(res, body)
        spec = obj.get("spec") or {}
        mf = {"manager": self.ua.split("/")[0] or "unknown", "operation": "Update",
              "apiVersion": res.api_version, "time": now_ts(), "fieldsType": "FieldsV1",
              "fieldsV1": fields_v1({"spec": spec})}
        out = {"kind": res.kind, "apiVersion": res.api_version,
               "metadata": {"creationTimestamp": None, "managedFields": [mf]}, "spec": spec}
        if res.kind == "TokenReview":
            u = api.lookup_token(str(spec.get("token", "")))
            if u:
                out["status"] = {"authenticated": True, "user": {
                    "username": u.name, "uid": u.uid, "groups": u.groups},
                    "audiences": spec.get("audiences") or API_AUDIENCES}
            else:
                out["status"] = {"user": {}, "error": "invalid bearer token"}
        else:
            u = api.user_by_name(spec.get("user", ""), spec.get("groups") or [])
            ra = spec.get("resourceAttributes")
            if ra:
                resource = ra.get("resource", "") + ("/" + ra["subresource"]
                                                     if ra.get("subresource") else "")
                ok, why = u.allowed(ra.get("verb", ""), ra.get("group", ""), resource,
                                    ra.get("name"))
            else:
                ok, why = "system:authenticated" in u.groups, ""
            out["status"] = {"allowed": True, "reason": why} if ok else {"allowed": False}
        self.send_json(201, out)
