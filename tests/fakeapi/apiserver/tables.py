"""Table output (Accept: application/json;as=Table): columns and cells
of CRD printer columns, kubectl's Pod and Event columns."""

import copy
import time

from .present import present, present_meta
from .util import human_duration, json_path, parse_ts


NAME_COLUMN_DESC = (
    "Name must be unique within a namespace. Is required when creating "
    "resources, although some resources may allow a client to request the "
    "generation of an appropriate name automatically. Name is primarily "
    "intended for creation idempotence and configuration definition. Cannot "
    "be updated. More info: http://kubernetes.io/docs/user-guide/identifiers#names"
)
POD_COLUMNS = [
    ("Ready", "string", "The aggregate readiness state of this pod for accepting "
     "traffic.", 0),
    ("Status", "string", "The aggregate status of the containers in this pod.", 0),
    ("Restarts", "integer", "The number of times the containers in this pod have been "
     "restarted.", 0),
    ("Age", "string", "CreationTimestamp is a timestamp representing the server time "
     "when this object was created.", 0),
    ("IP", "string", "IP address allocated to the pod. Routable at least within the "
     "cluster. Empty if not yet allocated.", 1),
    ("Node", "string", "NodeName is a request to schedule this pod onto a specific node.",
     1),
    ("Nominated Node", "string", "nominatedNodeName is set when this pod preempts other "
     "pods on the node.", 1),
    ("Readiness Gates", "string", "If specified, all readiness gates will be evaluated "
     "for pod readiness.", 1),
]
EVENT_COLUMNS = [
    ("Last Seen", "string", "", 0), ("Type", "string", "", 0), ("Reason", "string", "", 0),
    ("Object", "string", "", 0), ("Message", "string", "", 0),
]


def table_columns(res):
    name = {"name": "Name", "type": "string", "format": "name",
            "description": NAME_COLUMN_DESC, "priority": 0}
    if res.columns is not None:
        return [name] + [{k: c[k] for k in ("name", "type", "format", "description",
                                            "priority")} for c in res.columns]
    if res.kind == "Pod":
        cols = POD_COLUMNS
    elif res.kind == "Event" and res.group == "":
        return [{"name": n, "type": t, "format": "", "description": d, "priority": p}
                for n, t, d, p in EVENT_COLUMNS]
    else:
        return [name, {"name": "Created At", "type": "date", "format": "",
                       "description": "", "priority": 0}]
    return [name] + [{"name": n, "type": t, "format": "", "description": d,
                      "priority": p} for n, t, d, p in cols]


def _age(ts):
    t = parse_ts(ts)
    return "<unknown>" if t is None else human_duration(time.time() - t)


def table_cells(res, o):
    m = o.get("metadata") or {}
    if res.columns is not None:
        cells = [m.get("name")]
        for c in res.columns:
            v = json_path(o, c["jsonPath"])
            cells.append(_age(v) if c["type"] == "date" and v is not None else v)
        return cells
    if res.kind == "Pod":
        st = o.get("status") or {}
        cs = st.get("containerStatuses") or []
        total = len((o.get("spec") or {}).get("containers") or [])
        ready = sum(1 for c in cs if c.get("ready"))
        reason = st.get("reason") or st.get("phase") or ""
        for c in cs:
            s = c.get("state") or {}
            if s.get("waiting", {}).get("reason"):
                reason = s["waiting"]["reason"]
            elif s.get("terminated", {}).get("reason"):
                reason = s["terminated"]["reason"]
        if m.get("deletionTimestamp"):
            reason = "Terminating"
        return [m.get("name"), "%d/%d" % (ready, total), reason,
                sum(int(c.get("restartCount", 0)) for c in cs),
                _age(m.get("creationTimestamp")), st.get("podIP") or "<none>",
                (o.get("spec") or {}).get("nodeName") or "<none>",
                st.get("nominatedNodeName") or "<none>", "<none>"]
    if res.kind == "Event" and res.group == "":
        io = o.get("involvedObject") or {}
        return [_age(o.get("lastTimestamp") or o.get("eventTime")), o.get("type", ""),
                o.get("reason", ""), "%s/%s" % (str(io.get("kind", "")).lower(),
                                                io.get("name", "")), o.get("message", "")]
    return [m.get("name"), m.get("creationTimestamp")]


def make_table(res, objs, rv, token, include):
    rows = []
    for o in objs:
        row = {"cells": table_cells(res, o)}
        if include == "Object":
            row["object"] = present(res, o)
        elif include != "None":
            row["object"] = {"kind": "PartialObjectMetadata",
                             "apiVersion": "meta.k8s.io/v1",
                             "metadata": present_meta(copy.deepcopy(o["metadata"]))}
        rows.append(row)
    meta = {"resourceVersion": str(rv)}
    if token:
        meta["continue"] = token
    return {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": meta,
            "columnDefinitions": table_columns(res), "rows": rows}
