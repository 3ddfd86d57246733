"""Validation and defaults per resource: custom resources pruned and
validated against their structural schema, Pod defaults, QoS class
and errors, Event errors (core/v1 and events.k8s.io/v1)."""

import base64
import binascii
import json

from .util import parse_ts


def jtype(v):
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    if isinstance(v, dict):
        return "object"
    return "null"


def prune(schema, val, top=True):
    """Drops fields the structural schema does not know and nulls of
    non-nullable fields, as the apiserver does for custom resources."""
    if not isinstance(val, dict) or schema.get("type") != "object":
        if isinstance(val, list) and isinstance(schema.get("items"), dict):
            for v in val:
                prune(schema["items"], v, False)
        return
    props = schema.get("properties")
    if props is None or schema.get("x-kubernetes-preserve-unknown-fields"):
        return
    for k in list(val):
        if top and k in ("apiVersion", "kind", "metadata"):
            continue
        if k not in props:
            del val[k]
        elif val[k] is None and not props[k].get("nullable"):
            del val[k]
        else:
            prune(props[k], val[k], False)


def schema_errors(schema, val, path, errs):
    """Appends (reason, field, message) for every violation of schema."""
    t = schema.get("type")
    want = {"object": dict, "array": list, "string": str, "boolean": bool}.get(t)
    ok = True
    if t == "integer":
        ok = (isinstance(val, int) and not isinstance(val, bool)) or \
            (isinstance(val, float) and val.is_integer())
    elif t == "number":
        ok = isinstance(val, (int, float)) and not isinstance(val, bool)
    elif want is not None:
        ok = isinstance(val, want)
    if not ok:
        errs.append(("FieldValueInvalid", path, 'Invalid value: "%s": %s in body must be '
                     'of type %s: "%s"' % (jtype(val), path, t, jtype(val))))
        return
    fmt = schema.get("format")
    if t == "string" and fmt in ("byte", "date-time") and not _format_ok(fmt, val):
        q = json.dumps(val, ensure_ascii=False)
        errs.append(("FieldValueInvalid", path, "Invalid value: %s: %s in body must be of "
                     "type %s: %s" % (q, path, fmt, q)))
    if "enum" in schema and val not in schema["enum"]:
        errs.append(("FieldValueNotSupported", path, "Unsupported value: %s"
                     % json.dumps(val)))
    if t == "object":
        for r in schema.get("required", []):
            if r not in val:
                errs.append(("FieldValueRequired", _join(path, r), "Required value"))
        for k, sub in (schema.get("properties") or {}).items():
            if k in val and k != "metadata":
                schema_errors(sub, val[k], _join(path, k), errs)
    elif t == "array" and isinstance(schema.get("items"), dict):
        for i, v in enumerate(val):
            schema_errors(schema["items"], v, "%s[%d]" % (path, i), errs)


def _join(path, k):
    return k if not path else path + "." + k


def _format_ok(fmt, val):
    if fmt == "date-time":
        return parse_ts(val) is not None
    try:
        base64.b64decode(val.replace("\n", "").replace("\r", ""), validate=True)
        return True
    except (binascii.Error, ValueError):
        return False


def pod_qos(spec):
    reqs, lims, guaranteed = False, False, True
    for c in spec.get("containers") or []:
        r = (c.get("resources") or {}).get("requests") or {}
        lm = (c.get("resources") or {}).get("limits") or {}
        reqs |= bool(r)
        lims |= bool(lm)
        for k in ("cpu", "memory"):
            if k not in lm or r.get(k, lm.get(k)) != lm.get(k):
                guaranteed = False
    if not reqs and not lims:
        return "BestEffort"
    return "Guaranteed" if guaranteed else "Burstable"


def pod_defaults(obj):
    spec = obj.setdefault("spec", {})
    for c in spec.get("containers") or []:
        if not isinstance(c, dict):
            continue
        res = c.setdefault("resources", {})
        if res.get("limits"):
            req = res.setdefault("requests", {})
            for k, v in res["limits"].items():
                req.setdefault(k, v)
        c.setdefault("terminationMessagePath", "/dev/termination-log")
        c.setdefault("terminationMessagePolicy", "File")
        img = str(c.get("image", ""))
        tag = img.rsplit("/", 1)[-1]
        latest = "@" not in img and (":" not in tag or tag.endswith(":latest"))
        c.setdefault("imagePullPolicy", "Always" if latest else "IfNotPresent")
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("securityContext", {})
    spec.setdefault("schedulerName", "default-scheduler")
    tol = spec.setdefault("tolerations", [])
    for key in ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"):
        if not any(isinstance(t, dict) and t.get("key") == key for t in tol):
            tol.append({"key": key, "operator": "Exists", "effect": "NoExecute",
                        "tolerationSeconds": 300})
    spec.setdefault("priority", 0)
    spec.setdefault("enableServiceLinks", True)
    spec.setdefault("preemptionPolicy", "PreemptLowerPriority")


def pod_errors(obj):
    errs = []
    cs = (obj.get("spec") or {}).get("containers")
    if not cs or not isinstance(cs, list):
        errs.append(("FieldValueRequired", "spec.containers", "Required value"))
        return errs
    for i, c in enumerate(cs):
        if not isinstance(c, dict):
            errs.append(("FieldValueInvalid", "spec.containers[%d]" % i,
                         "Invalid value: must be an object"))
            continue
        for f in ("name", "image"):
            if not c.get(f):
                errs.append(("FieldValueRequired", "spec.containers[%d].%s" % (i, f),
                             "Required value"))
    return errs


def event_errors(res, obj):
    errs = []
    ns = obj["metadata"].get("namespace", "")
    if res.group == "":
        ins = (obj.get("involvedObject") or {}).get("namespace")
        if ins and ins != ns:
            errs.append(("FieldValueInvalid", "involvedObject.namespace",
                         'Invalid value: "%s": does not match event.namespace' % ins))
        return errs
    for f in ("eventTime", "reportingController", "reportingInstance", "action", "reason"):
        if not obj.get(f):
            errs.append(("FieldValueRequired", f, "Required value"))
    if obj.get("type") not in ("Normal", "Warning"):
        errs.append(("FieldValueInvalid", "type", 'Invalid value: "%s": has invalid value'
                     % obj.get("type", "")))
    if len(obj.get("note") or "") > 1024:
        errs.append(("FieldValueTooLong", "note", "Too long: must have at most 1024 bytes"))
    return errs
