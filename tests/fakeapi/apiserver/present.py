"""Presentation: JSON written the way the apiserver writes it (Go's
escaping, the indented form for curl/wget), objects in the key order
of their Go types (custom resources sorted), and the Event fields Go
always writes or omits."""

import json

from .resources import from_storage


def go_json(obj):
    """Compact JSON with Go's HTML escaping of <, > and &."""
    s = json.dumps(obj, separators=(",", ":"), ensure_ascii=False)
    return s.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026") \
        .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def go_json_pretty(obj, level=0):
    """Indented JSON as the apiserver writes it for curl/ and wget/ clients
    (an empty object is written as an indented empty line)."""
    ind = "  " * (level + 1)
    if isinstance(obj, dict):
        if not obj:
            return "{\n" + ind + "\n" + "  " * level + "}"
        items = [ind + go_json(k) + ": " + go_json_pretty(v, level + 1)
                 for k, v in obj.items()]
        return "{\n" + ",\n".join(items) + "\n" + "  " * level + "}"
    if isinstance(obj, list):
        if not obj:
            return "[]"
        items = [ind + go_json_pretty(v, level + 1) for v in obj]
        return "[\n" + ",\n".join(items) + "\n" + "  " * level + "]"
    return go_json(obj)


def sort_rec(obj):
    """Custom resources come out with every map's keys sorted (unstructured)."""
    if isinstance(obj, dict):
        return {k: sort_rec(obj[k]) for k in sorted(obj)}
    if isinstance(obj, list):
        return [sort_rec(v) for v in obj]
    return obj


def reorder(d, order):
    if not isinstance(d, dict):
        return d
    out = {k: d[k] for k in order if k in d}
    for k, v in d.items():
        if k not in out:
            out[k] = v
    return out


META_ORDER = ["name", "generateName", "namespace", "selfLink", "uid", "resourceVersion",
              "generation", "creationTimestamp", "deletionTimestamp",
              "deletionGracePeriodSeconds", "labels", "annotations", "ownerReferences",
              "finalizers", "clusterName", "managedFields"]
MF_ORDER = ["manager", "operation", "apiVersion", "time", "fieldsType", "fieldsV1"]
POD_SPEC_ORDER = [
    "volumes", "initContainers", "containers", "ephemeralContainers", "restartPolicy",
    "terminationGracePeriodSeconds", "activeDeadlineSeconds", "dnsPolicy",
    "nodeSelector", "serviceAccountName", "serviceAccount",
    "automountServiceAccountToken", "nodeName", "hostNetwork", "hostPID", "hostIPC",
    "shareProcessNamespace", "securityContext", "imagePullSecrets", "hostname",
    "subdomain", "affinity", "schedulerName", "tolerations", "hostAliases",
    "priorityClassName", "priority", "dnsConfig", "readinessGates", "runtimeClassName",
    "enableServiceLinks", "preemptionPolicy", "overhead", "topologySpreadConstraints"]
CONTAINER_ORDER = [
    "name", "image", "command", "args", "workingDir", "ports", "envFrom", "env",
    "resources", "volumeMounts", "volumeDevices", "livenessProbe", "readinessProbe",
    "startupProbe", "lifecycle", "terminationMessagePath", "terminationMessagePolicy",
    "imagePullPolicy", "securityContext", "stdin", "stdinOnce", "tty"]
POD_STATUS_ORDER = ["phase", "conditions", "message", "reason", "nominatedNodeName",
                    "hostIP", "podIP", "podIPs", "startTime", "initContainerStatuses",
                    "containerStatuses", "qosClass", "ephemeralContainerStatuses"]
CSTATUS_ORDER = ["name", "state", "lastState", "ready", "restartCount", "image",
                 "imageID", "containerID", "started"]
COND_ORDER = ["type", "status", "lastProbeTime", "lastTransitionTime", "reason", "message"]
OBJREF_ORDER = ["kind", "namespace", "name", "uid", "apiVersion", "resourceVersion",
                "fieldPath"]
OWNER_ORDER = ["apiVersion", "kind", "name", "uid", "controller", "blockOwnerDeletion"]
TOP_ORDER = {
    ("", "Pod"): ["kind", "apiVersion", "metadata", "spec", "status"],
    ("", "Namespace"): ["kind", "apiVersion", "metadata", "spec", "status"],
    ("", "Event"): ["kind", "apiVersion", "metadata", "involvedObject", "reason",
                    "message", "source", "firstTimestamp", "lastTimestamp", "count",
                    "type", "eventTime", "series", "action", "related",
                    "reportingComponent", "reportingInstance"],
    ("events.k8s.io", "Event"): [
        "kind", "apiVersion", "metadata", "eventTime", "series", "reportingController",
        "reportingInstance", "action", "reason", "regarding", "related", "note", "type",
        "deprecatedSource", "deprecatedFirstTimestamp", "deprecatedLastTimestamp",
        "deprecatedCount"],
}


def present(res, obj):
    """The object as the server writes it: key order of its Go type."""
    if not res.builtin:
        return sort_rec(obj)
    if res.kind == "Event":
        obj = event_output(res, from_storage(res, obj))
    o = reorder(obj, TOP_ORDER.get((res.group, res.kind), ["kind", "apiVersion", "metadata"]))
    if isinstance(o.get("metadata"), dict):
        o["metadata"] = present_meta(o["metadata"])
    for k in ("involvedObject", "regarding", "related"):
        if isinstance(o.get(k), dict):
            o[k] = reorder(o[k], OBJREF_ORDER)
    if res.kind == "Pod":
        spec = reorder(o.get("spec"), POD_SPEC_ORDER)
        if isinstance(spec, dict) and isinstance(spec.get("containers"), list):
            spec["containers"] = [reorder(c, CONTAINER_ORDER) for c in spec["containers"]]
        if spec is not None:
            o["spec"] = spec
        st = reorder(o.get("status"), POD_STATUS_ORDER)
        if isinstance(st, dict):
            if isinstance(st.get("containerStatuses"), list):
                st["containerStatuses"] = [reorder(c, CSTATUS_ORDER)
                                           for c in st["containerStatuses"]]
            if isinstance(st.get("conditions"), list):
                st["conditions"] = [reorder(c, COND_ORDER) for c in st["conditions"]]
            o["status"] = st
    return o


def present_meta(m):
    m = reorder(m, META_ORDER)
    if isinstance(m.get("ownerReferences"), list):
        m["ownerReferences"] = [reorder(r, OWNER_ORDER) for r in m["ownerReferences"]]
    if isinstance(m.get("managedFields"), list):
        m["managedFields"] = [reorder(e, MF_ORDER) for e in m["managedFields"]]
    return m


def event_output(res, obj):
    """The fields Go always writes (no omitempty) and drops (omitempty)."""
    obj = dict(obj)
    if res.group == "":
        for k, v in (("involvedObject", {}), ("source", {}), ("firstTimestamp", None),
                     ("lastTimestamp", None), ("eventTime", None),
                     ("reportingComponent", ""), ("reportingInstance", "")):
            obj.setdefault(k, v)
        for k in ("reason", "message", "type", "action"):
            if obj.get(k) == "":
                del obj[k]
        if not obj.get("count"):
            obj.pop("count", None)
    else:
        for k, v in (("eventTime", None), ("regarding", {}), ("deprecatedSource", {}),
                     ("deprecatedFirstTimestamp", None), ("deprecatedLastTimestamp", None)):
            obj.setdefault(k, v)
        for k in ("reportingController", "reportingInstance", "action", "reason", "note",
                  "type"):
            if obj.get(k) == "":
                del obj[k]
        if not obj.get("deprecatedCount"):
            obj.pop("deprecatedCount", None)
    return obj
