"""Label and field selectors: parsed into predicates, 400 for what the
real server refuses. (Not named selectors.py: that is a standard
library module.)"""

import re

from .errors import bad_request
from .util import json_path


def parse_label_selector(s):
    """Returns a predicate over a labels dict. Raises ApiError 400."""
    reqs = []
    s = (s or "").strip()
    if not s:
        return lambda labels: True
    # split on commas not inside parentheses
    parts, depth, cur = [], 0, ""
    for ch in s:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    key_re = r"[A-Za-z0-9]([-A-Za-z0-9_./]*[A-Za-z0-9])?"
    val_re = r"([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?"
    for p in parts:
        p = p.strip()
        m = re.match(r"^(%s)\s+(in|notin)\s+\((.*)\)$" % key_re, p)
        if m:
            vals = {v.strip() for v in m.group(4).split(",")}
            reqs.append((m.group(1), m.group(3), vals))
            continue
        m = re.match(r"^(%s)\s*(==|=|!=)\s*(%s)$" % (key_re, val_re), p)
        if m:
            reqs.append((m.group(1), m.group(3), m.group(4)))
            continue
        m = re.match(r"^(!?)\s*(%s)$" % key_re, p)
        if m:
            reqs.append((m.group(2), "!" if m.group(1) else "exists", None))
            continue
        raise bad_request("unable to parse requirement: invalid label selector %r" % p)

    def pred(labels):
        labels = labels or {}
        for k, op, v in reqs:
            has = k in labels
            if op in ("=", "==") and labels.get(k) != v:
                return False
            if op == "!=" and has and labels.get(k) == v:
                return False
            if op == "in" and (not has or labels[k] not in v):
                return False
            if op == "notin" and has and labels[k] in v:
                return False
            if op == "exists" and not has:
                return False
            if op == "!" and has:
                return False
        return True
    return pred


FIELD_LABELS = {
    "pods": ["metadata.name", "metadata.namespace", "spec.nodeName", "spec.restartPolicy",
             "spec.schedulerName", "spec.serviceAccountName", "status.phase",
             "status.podIP", "status.nominatedNodeName"],
    "events": ["metadata.name", "metadata.namespace", "involvedObject.kind",
               "involvedObject.namespace", "involvedObject.name", "involvedObject.uid",
               "involvedObject.apiVersion", "involvedObject.resourceVersion",
               "involvedObject.fieldPath", "reason", "reportingComponent", "source",
               "type"],
    "events.events.k8s.io": ["metadata.name", "metadata.namespace", "regarding.kind",
                             "regarding.namespace", "regarding.name", "regarding.uid",
                             "reason", "reportingController", "type"],
    "namespaces": ["metadata.name", "status.phase"],
}


def parse_field_selector(res, s):
    """Returns a predicate over an object. Raises ApiError 400."""
    s = (s or "").strip()
    if not s:
        return lambda obj: True
    allowed = FIELD_LABELS.get(res.key, ["metadata.name", "metadata.namespace"])
    reqs = []
    for p in s.split(","):
        m = re.match(r"^\s*([A-Za-z0-9_.]+)\s*(==|!=|=)\s*(.*?)\s*$", p)
        if not m:
            raise bad_request("invalid selector: '%s'; can't understand '%s'" % (s, p))
        if m.group(1) not in allowed:
            raise bad_request('"%s" is not a known field selector: only "%s"'
                              % (m.group(1), ", ".join(["metadata.name",
                                                        "metadata.namespace"])))
        reqs.append((m.group(1), m.group(2), m.group(3)))

    def pred(obj):  # obj is in the storage form (core/v1 for both Event APIs)
        for f, op, v in reqs:
            if res.skey != res.key:
                f = f.replace("regarding.", "involvedObject.").replace(
                    "reportingController", "reportingComponent")
            if f == "source" and res.skey == "events":
                got = json_path(obj, "source.component")
            else:
                got = json_path(obj, "." + f)
            got = "" if got is None else str(got)
            if (op != "!=") != (got == v):
                return False
        return True
    return pred
