"""The object operations of FakeAPI (the handler calls these): create,
update, patch of every type, server-side apply, delete (Pods' grace
periods, finalizers, namespaces), list (selectors, limit/continue,
Exact), and the size limits of etcd."""

import copy
import json
import random
import re
import uuid

from .errors import ApiError, _details, bad_request, decode_json, invalid, not_found
from .managed import (apply_conflict, del_path, fields_to_paths, get_path, owned_paths,
                      set_managed)
from .patches import _apply_merge, json_patch, merge_patch, strategic_merge
from .present import go_json
from .resources import from_storage, to_storage
from .selector import parse_field_selector, parse_label_selector
from .store import EXPIRED_CONTINUE, decode_continue, encode_continue
from .util import now_ts, yaml
from .validation import (event_errors, pod_defaults, pod_errors, pod_qos, prune,
                         schema_errors)


ETCD_MAX_REQUEST = 1536 * 1024  # etcd --max-request-bytes default
GRPC_MAX_SEND = 2 * 1024 * 1024  # etcd client gRPC send limit
GRPC_OVERHEAD = 64  # bytes the etcd Put request adds around the value
DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
GEN_CHARS = "bcdfghjklmnpqrstvwxz2456789"
SERVER_META = ("uid", "resourceVersion", "creationTimestamp", "deletionTimestamp",
               "deletionGracePeriodSeconds", "generation", "managedFields", "selfLink")


class Objects:
    """FakeAPI's object operations. A part of FakeAPI (server.py), whose
    __init__ sets the state used here: store, by_key,
    strict_namespaces."""

    def sget(self, res, ns, name):
        """The stored object in the form of res's API (call with cond held)."""
        return from_storage(res, self.store.get(res.skey, ns, name))

    def swrite(self, res, etype, obj, old):
        """Stores obj (given in res's form); returns obj with its new RV."""
        stored = self.store.write(res.skey, etype, to_storage(res, obj),
                                  to_storage(res, old))
        obj["metadata"] = stored["metadata"]
        return obj

    def need_namespace(self, ns):
        if self.strict_namespaces and ns and \
                self.store.get("namespaces", "", ns) is None:
            r = self.by_key["namespaces"]
            raise not_found(r, ns)

    def prepare(self, res, obj, old=None, sub=None):
        """Defaults, prunes and validates obj (pure). Raises ApiError 422."""
        name = obj["metadata"].get("name", "")
        if not res.builtin:
            prune(res.schema, obj)
            errs = []
            schema_errors(res.schema, obj, "", errs)
        elif res.kind == "Pod":
            if old is None:
                pod_defaults(obj)
            for c in (obj.get("status") or {}).get("conditions") or []:
                if isinstance(c, dict):
                    c.setdefault("lastProbeTime", None)
                    c.setdefault("lastTransitionTime", None)
            errs = pod_errors(obj)
        elif res.kind == "Event":
            errs = event_errors(res, obj)
        elif res.kind == "Namespace":
            obj.setdefault("spec", {"finalizers": ["kubernetes"]})
            obj["status"] = (old or {}).get("status") or {"phase": "Active"}
            errs = []
        else:
            errs = []
        if errs:
            raise invalid(res, name, errs)

    def check_size(self, obj):
        n = len(go_json(obj).encode())
        if n + GRPC_OVERHEAD > GRPC_MAX_SEND:
            raise ApiError(500, "", "rpc error: code = ResourceExhausted desc = trying to "
                           "send message larger than max (%d vs. %d)"
                           % (n + GRPC_OVERHEAD, GRPC_MAX_SEND), None)
        if n > ETCD_MAX_REQUEST:
            raise ApiError(500, "", "etcdserver: request is too large")

    def new_object(self, res, ns, obj):
        """Checks a create body and fills its name (generateName). Pure."""
        meta = obj.get("metadata")
        if meta is None:
            meta = obj["metadata"] = {}
        if not isinstance(meta, dict):
            raise bad_request("metadata must be an object")
        if res.namespaced:
            if meta.get("namespace") and meta["namespace"] != ns:
                raise bad_request("the namespace of the provided object does not match "
                                  "the namespace sent on the request")
            meta["namespace"] = ns
        else:
            meta.pop("namespace", None)
        if not meta.get("name"):
            if meta.get("generateName"):
                meta["name"] = meta["generateName"] + "".join(
                    random.choice(GEN_CHARS) for _ in range(5))
            else:
                raise invalid(res, "", [("FieldValueRequired", "metadata.name",
                                         "Required value: name or generateName is "
                                         "required")])
        name = meta["name"]
        if res.kind != "Event" and (len(name) > 253 or not DNS1123_SUBDOMAIN.match(name)):
            raise invalid(res, name, [(
                "FieldValueInvalid", "metadata.name",
                'Invalid value: "%s": a lowercase RFC 1123 subdomain must consist of lower '
                "case alphanumeric characters, '-' or '.', and must start and end with an "
                "alphanumeric character (e.g. 'example.com', regex used for validation is "
                "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
                % name)])
        for k in SERVER_META:
            meta.pop(k, None)
        if res.status and "status" in obj:
            del obj["status"]  # dropped on create (status subresource)
        obj["apiVersion"], obj["kind"] = res.api_version, res.kind
        return obj

    def create(self, res, ns, obj, manager, op="Update"):
        """POST: returns the stored object. Raises ApiError."""
        obj = self.new_object(res, ns, obj)
        fields_from = copy.deepcopy(obj)
        self.prepare(res, obj)
        with self.store.cond:
            self.need_namespace(ns)
            if self.sget(res, ns, obj["metadata"]["name"]) is not None:
                raise ApiError(409, "AlreadyExists", '%s "%s" already exists'
                               % (res.qualified(), obj["metadata"]["name"]),
                               _details(res, obj["metadata"]["name"]))
            return self._insert(res, obj, manager, op, fields_from)

    def _insert(self, res, obj, manager, op, fields_from=None):
        meta = obj.setdefault("metadata", {})
        meta["uid"] = str(uuid.uuid4())
        meta["creationTimestamp"] = now_ts()
        if not res.builtin:
            meta["generation"] = 1
        obj["apiVersion"], obj["kind"] = res.api_version, res.kind
        if res.kind == "Pod":
            obj["status"] = {"phase": "Pending", "qosClass": pod_qos(obj.get("spec", {}))}
        if res.kind == "Namespace":
            obj.setdefault("spec", {"finalizers": ["kubernetes"]})
            obj.setdefault("status", {"phase": "Active"})
        owned = owned_paths(res, fields_from) if op == "Apply" else owned_paths(res, obj)
        set_managed(obj, manager, op, res.api_version, owned)
        self.check_size(obj)
        return self.swrite(res, "ADDED", obj, None)

    def conflict(self, res, name):
        return ApiError(409, "Conflict", 'Operation cannot be fulfilled on %s "%s": the '
                        "object has been modified; please apply your changes to the "
                        "latest version and try again" % (res.qualified(), name),
                        _details(res, name))

    def update(self, res, ns, name, sub, new, manager, op="Update", fields_from=None,
               require_rv=True, force=True):
        """PUT (and the end of PATCH/apply): returns (object, changed)."""
        meta = new.get("metadata")
        if not isinstance(meta, dict):
            meta = new["metadata"] = {}
        if meta.get("name", name) != name:
            raise bad_request("the name of the object (%s) does not match the name on "
                              "the URL (%s)" % (meta.get("name"), name))
        with self.store.cond:
            old = self.sget(res, ns, name)
            if old is None:
                raise not_found(res, name)
            rv = meta.get("resourceVersion")
            if require_rv and not rv:
                raise invalid(res, name, [("FieldValueInvalid", "metadata.resourceVersion",
                                           "Invalid value: 0x0: must be specified for an "
                                           "update")])
            if rv and rv != old["metadata"]["resourceVersion"]:
                raise self.conflict(res, name)
            if meta.get("uid") and meta["uid"] != old["metadata"]["uid"]:
                raise ApiError(409, "Conflict", "Precondition failed: UID in precondition: "
                               "%s, UID in object meta: %s"
                               % (old["metadata"]["uid"], meta["uid"]), _details(res, name))
            obj = self._merge_update(res, old, new, sub)
            self.prepare(res, obj, old, sub)
            return self._finish_update(res, old, obj, manager, op, fields_from or new,
                                       sub, force)

    def _merge_update(self, res, old, new, sub):
        om = old["metadata"]
        if sub == "status":
            obj = copy.deepcopy(old)
            if "status" in new:
                obj["status"] = copy.deepcopy(new["status"])
            else:
                obj.pop("status", None)
            return obj
        obj = copy.deepcopy(new)
        m = obj["metadata"]
        for k in ("uid", "creationTimestamp", "namespace", "name", "deletionTimestamp",
                  "deletionGracePeriodSeconds", "generation", "selfLink"):
            if k in om:
                m[k] = om[k]
            else:
                m.pop(k, None)
        m["managedFields"] = copy.deepcopy(om.get("managedFields") or [])
        if res.status:
            if "status" in old:
                obj["status"] = copy.deepcopy(old["status"])
            else:
                obj.pop("status", None)
        obj["apiVersion"], obj["kind"] = res.api_version, res.kind
        return obj

    def _finish_update(self, res, old, obj, manager, op, fields_from, sub=None,
                       force=True):
        if not res.builtin:
            skip = ("metadata", "status") if res.status else ("metadata",)
            changed = any(obj.get(k) != old.get(k) for k in set(obj) | set(old)
                          if k not in skip)
            obj["metadata"]["generation"] = old["metadata"].get("generation", 1) + changed
        obj["metadata"]["resourceVersion"] = old["metadata"]["resourceVersion"]
        if _same(obj, old):
            return old, False
        if op == "Apply":
            set_managed(obj, manager, op, res.api_version,
                        owned_paths(res, fields_from, sub), steal=force, replace=True)
        else:  # an update owns what it changed; the others lose it
            changed = {p for p in owned_paths(res, obj, sub)
                       if get_path(old, p) != get_path(obj, p)}
            set_managed(obj, manager, op, res.api_version, changed)
        self.check_size(obj)
        m = obj["metadata"]
        if m.get("deletionTimestamp") and not m.get("finalizers") and res.kind != "Pod":
            self.swrite(res, "DELETED", obj, old)
            return obj, True
        return self.swrite(res, "MODIFIED", obj, old), True

    def patch(self, res, ns, name, sub, ctype, body, manager, force, field_manager):
        """PATCH of every type. Returns (code, object)."""
        if ctype == "application/apply-patch+yaml":
            return self.apply(res, ns, name, sub, body, field_manager, force)
        if ctype not in ("application/merge-patch+json", "application/json-patch+json",
                         "application/strategic-merge-patch+json") or \
                (ctype == "application/strategic-merge-patch+json" and not res.builtin):
            accepted = ["application/json-patch+json", "application/merge-patch+json",
                        "application/apply-patch+yaml"]
            if res.builtin:
                accepted.insert(2, "application/strategic-merge-patch+json")
            raise ApiError(415, "UnsupportedMediaType", "the body of the request was in an "
                           "unknown format - accepted media types include: "
                           + ", ".join(accepted))
        p = decode_json(body)
        with self.store.cond:
            old = self.sget(res, ns, name)
            if old is None:
                raise not_found(res, name)
            try:
                if ctype == "application/json-patch+json":
                    new = json_patch(old, p)
                elif ctype == "application/merge-patch+json":
                    if not isinstance(p, dict):
                        raise ValueError("merge patch must be an object")
                    new = merge_patch(old, p)
                else:
                    if not isinstance(p, dict):
                        raise ValueError("strategic merge patch must be an object")
                    new = strategic_merge(old, p)
            except ValueError as e:
                raise ApiError(422 if ctype.startswith("application/json-patch") else 400,
                               "Invalid" if ctype.startswith("application/json-patch")
                               else "BadRequest", str(e))
            prv = p.get("metadata", {}).get("resourceVersion") if isinstance(p, dict) \
                else None
            if prv and prv != old["metadata"]["resourceVersion"]:
                raise self.conflict(res, name)
            if not isinstance(new, dict):
                raise bad_request("patch result is not an object")
            new.setdefault("metadata", {})["resourceVersion"] = \
                old["metadata"]["resourceVersion"]
            obj, _ = self.update(res, ns, name, sub, new, manager, "Update",
                                 p if isinstance(p, dict) else new)
            return 200, obj

    def apply(self, res, ns, name, sub, body, field_manager, force=False):
        """Server-side apply: creates (201) or merges the configuration into the
        live object; fields this manager applied before and dropped now are
        removed unless another manager owns them; without force, changing a
        field another manager owns is a 409 conflict."""
        if not field_manager:
            raise ApiError(422, "Invalid", 'PatchOptions.meta.k8s.io "" is invalid: '
                           "fieldManager: Required value: is required for apply patch",
                           {"group": "meta.k8s.io", "kind": "PatchOptions", "causes": [
                               {"reason": "FieldValueRequired", "message": "Required value: "
                                "is required for apply patch", "field": "fieldManager"}]})
        try:
            p = yaml.safe_load(body) if yaml else json.loads(body)
        except Exception as e:  # yaml.YAMLError or ValueError
            raise bad_request("error decoding YAML: %s" % e)
        if not isinstance(p, dict):
            raise bad_request("error decoding YAML: the apply configuration must be an "
                              "object")
        p = json.loads(json.dumps(p, default=str))  # YAML timestamps → strings
        meta = p.setdefault("metadata", {})
        if not isinstance(meta, dict) or meta.setdefault("name", name) != name:
            raise bad_request("the name of the object (%s) does not match the name on the "
                              "URL (%s)" % (meta.get("name"), name))
        if p.get("apiVersion") not in (None, res.api_version) or \
                p.get("kind") not in (None, res.kind):
            raise bad_request("the API version in the data (%s) does not match the "
                              "expected API version (%s)"
                              % (p.get("apiVersion"), res.api_version))
        with self.store.cond:
            old = self.sget(res, ns, name)
            if old is None:
                if sub:
                    raise not_found(res, name)
                return 201, self.create(res, ns, p, field_manager, "Apply")
            cfg = owned_paths(res, p, sub)
            prev, others = set(), []
            for e in old["metadata"].get("managedFields") or []:
                ps = fields_to_paths(e.get("fieldsV1"))
                if e.get("manager") == field_manager and e.get("operation") == "Apply":
                    prev = ps
                else:
                    others.append((e, ps))
            if not force:
                conflicts = [(e, q) for e, ps in others for q in sorted(cfg & ps)
                             if get_path(old, q) != get_path(p, q)]
                if conflicts:
                    raise apply_conflict(conflicts)
            merged = strategic_merge(old, p) if res.builtin else _apply_merge(old, p)
            for q in prev - cfg:
                if not any(q in ps for _, ps in others):
                    del_path(merged, q)
            merged["metadata"]["resourceVersion"] = old["metadata"]["resourceVersion"]
            obj, _ = self.update(res, ns, name, sub, merged, field_manager, "Apply", p,
                                 force=force)
            return 200, obj

    def delete(self, res, ns, name, opts, grace):
        """DELETE: returns (object-or-Status, is_status)."""
        pre = opts.get("preconditions") or {}
        with self.store.cond:
            old = self.sget(res, ns, name)
            if old is None:
                raise not_found(res, name)
            om = old["metadata"]
            kindq = res.kind + ("." + res.group if res.group else "")
            if pre.get("uid") and pre["uid"] != om["uid"]:
                raise ApiError(409, "Conflict", 'Operation cannot be fulfilled on %s "%s": '
                               "the UID in the precondition (%s) does not match the UID in "
                               "record (%s). The object might have been deleted and then "
                               "recreated" % (kindq, name, pre["uid"], om["uid"]),
                               _details(res, name, res.kind))
            if pre.get("resourceVersion") and pre["resourceVersion"] != om["resourceVersion"]:
                raise ApiError(409, "Conflict", 'Operation cannot be fulfilled on %s "%s": '
                               "the ResourceVersion in the precondition (%s) does not match "
                               "the ResourceVersion in record (%s). The object might have "
                               "been modified" % (kindq, name, pre["resourceVersion"],
                                                  om["resourceVersion"]),
                               _details(res, name, res.kind))
            if res.kind == "Pod":
                return self._delete_pod(res, old, grace), False
            if om.get("finalizers"):
                if om.get("deletionTimestamp"):
                    return old, False
                obj = copy.deepcopy(old)
                obj["metadata"]["deletionTimestamp"] = now_ts()
                obj["metadata"]["deletionGracePeriodSeconds"] = 0
                return self.swrite(res, "MODIFIED", obj, old), False
            if res.kind == "Namespace":
                for key, bucket in list(self.store.objects.items()):
                    for (ons, oname), o in list(bucket.items()):
                        if ons == name and key != "namespaces":
                            self.store.write(key, "DELETED", copy.deepcopy(o), o)
                obj = copy.deepcopy(old)
                obj["status"] = {"phase": "Terminating"}
                self.swrite(res, "DELETED", copy.deepcopy(obj), old)
                return obj, False
            self.swrite(res, "DELETED", copy.deepcopy(old), old)
            d = _details(res, name)
            d["uid"] = om["uid"]
            return {"kind": "Status", "apiVersion": "v1", "metadata": {},
                    "status": "Success", "details": d}, True

    def _delete_pod(self, res, old, grace):
        spec, om = old.get("spec") or {}, old["metadata"]
        g = spec.get("terminationGracePeriodSeconds", 30) if grace is None else int(grace)
        if (old.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
            g = 0
        if g > 0:
            if om.get("deletionTimestamp") and \
                    om.get("deletionGracePeriodSeconds", 0) <= g:
                return old
            obj = copy.deepcopy(old)
            obj["metadata"]["deletionTimestamp"] = now_ts(g)
            obj["metadata"]["deletionGracePeriodSeconds"] = g
            return self.swrite(res, "MODIFIED", obj, old)
        obj = copy.deepcopy(old)
        obj["metadata"]["deletionTimestamp"] = now_ts()
        obj["metadata"]["deletionGracePeriodSeconds"] = 0
        self.swrite(res, "MODIFIED", obj, old)
        self.swrite(res, "DELETED", copy.deepcopy(obj), obj)
        return obj

    def list_objects(self, res, ns, q):
        """LIST: returns (items, list_rv, continue_token, remaining)."""
        lsel = parse_label_selector(q.get("labelSelector"))
        fsel = parse_field_selector(res, q.get("fieldSelector"))
        try:
            limit = int(q.get("limit") or 0)
        except ValueError:
            raise bad_request("limit: invalid value %r" % q.get("limit"))
        cont, start = q.get("continue"), ""
        with self.store.cond:
            st = self.store
            if cont:
                tok = decode_continue(cont)
                start = tok["start"]
                if 0 <= tok["rv"] < st.compacted_rv:
                    raise ApiError(410, "Expired", EXPIRED_CONTINUE, None, {
                        "continue": encode_continue(-1, start)})
                rv = st.rv if tok["rv"] < 0 else tok["rv"]
                objs = st.snapshot(res.skey, None if tok["rv"] < 0 else rv)
            elif q.get("resourceVersionMatch") == "Exact":
                try:
                    rv = int(q.get("resourceVersion", ""))
                except ValueError:
                    raise bad_request("resourceVersionMatch: Exact requires resourceVersion")
                if rv < st.compacted_rv:
                    raise ApiError(410, "Expired",
                                   "The resourceVersion for the provided list is too old.")
                objs = st.snapshot(res.skey, min(rv, st.rv))
            else:
                rv = st.rv
                objs = st.snapshot(res.skey)
        keyed = []
        for (ons, oname), o in objs.items():
            if ns and ons != ns:
                continue
            k = oname if ns or not res.namespaced else ons + "/" + oname
            if k <= start if start else False:
                continue
            if lsel((o.get("metadata") or {}).get("labels")) and fsel(o):
                keyed.append((k, o))
        keyed.sort(key=lambda t: t[0])
        token, remaining = None, None
        if limit > 0 and len(keyed) > limit:
            token = encode_continue(rv, keyed[limit - 1][0] + "\x00")
            if not q.get("labelSelector") and not q.get("fieldSelector"):
                remaining = len(keyed) - limit
            keyed = keyed[:limit]
        return [o for _, o in keyed], rv, token, remaining


def _same(a, b):
    """Equal apart from managedFields (a no-op write keeps the RV)."""
    def strip(o):
        o = dict(o)
        o["metadata"] = {k: v for k, v in o["metadata"].items() if k != "managedFields"}
        return o
    return strip(a) == strip(b)
