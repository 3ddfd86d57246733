#!/usr/bin/env python3
"""fakeapi: a fake kube-apiserver that answers like a real v1.20.2.

Python 3 standard library only (PyYAML is used for apply bodies when present).
It is a test double for oomlens: TLS on loopback, bearer tokens and client
certificates, RBAC-like rules, core/v1 pods + events, events.k8s.io/v1 events,
the oomlens.io CRDs (schema validation, pruning, status subresource), list +
watch with bookmarks, continue tokens, compaction (410), size limits (413 /
etcd 500s), TokenReview / SubjectAccessReview, discovery and Table output for
kubectl, and fault injection through a control port.

The real server's answers it reproduces are in tests/fixtures/kube/apiserver-1.20/
(README.md there says how they were captured); see
tests/fakeapi/README.md for the CLI, the Python API and the control calls.
"""

import argparse
import base64
import binascii
import copy
import email.utils
import json
import os
import random
import re
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

try:  # only for application/apply-patch+yaml bodies; JSON is valid YAML
    import yaml  # type: ignore
except ImportError:  # pragma: no cover
    yaml = None

MAX_BODY = 3 * 1024 * 1024  # apiserver request limit (413 above)
ETCD_MAX_REQUEST = 1536 * 1024  # etcd --max-request-bytes default
GRPC_MAX_SEND = 2 * 1024 * 1024  # etcd client gRPC send limit
GRPC_OVERHEAD = 64  # bytes the etcd Put request adds around the value
CHUNK_THRESHOLD = 2048  # Go net/http: bodies above get chunked encoding

VERSION_INFO = {
    "major": "1",
    "minor": "20",
    "gitVersion": "v1.20.2",
    "gitCommit": "faecb196815e248d3ecfb03c680a4507229c2a56",
    "gitTreeState": "clean",
    "buildDate": "2021-01-13T00:00:00Z",
    "goVersion": "go1.19.8",
    "compiler": "gc",
    "platform": "linux/amd64",
}
API_AUDIENCES = ["https://kubernetes.default.svc.cluster.local"]
PF_FLOWSCHEMA = "80364861-bf5b-4c83-9bce-4919f26ad436"
PF_PRIORITY = "37643b8a-81de-48e3-8b96-4e6e535e076a"
PF_FLOWSCHEMA_EXEMPT = "e1942e15-55b7-4bed-ac90-d4ca23ef0169"
PF_PRIORITY_EXEMPT = "5b14471c-38dd-41d0-8237-32545e447320"
PF_FLOWSCHEMA_ANON = "8a1ad40c-9e70-4336-b948-e3bbe60d15c3"  # global-default
PF_PRIORITY_ANON = "26c2b052-8f1d-4303-9983-404c94d00fb1"
THROTTLE_BODY = b"Too many requests, please try again later.\n"
NAME_COLUMN_DESC = (
    "Name must be unique within a namespace. Is required when creating "
    "resources, although some resources may allow a client to request the "
    "generation of an appropriate name automatically. Name is primarily "
    "intended for creation idempotence and configuration definition. Cannot "
    "be updated. More info: http://kubernetes.io/docs/user-guide/identifiers#names"
)
DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
RFC3339 = re.compile(
    r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")

# --------------------------------------------------------------------------
# Identities: the same two as the reference capture (00-rbac.yaml).

AGENT_RULES = [
    {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]},
    {"apiGroups": ["", "events.k8s.io"], "resources": ["events"],
     "verbs": ["create", "patch"]},
    {"apiGroups": ["oomlens.io"], "resources": ["oomreports", "oombundles"],
     "verbs": ["get", "list", "watch", "create", "update", "patch", "delete"]},
    {"apiGroups": ["oomlens.io"], "resources": ["oomreports/status"],
     "verbs": ["get", "update", "patch"]},
    {"apiGroups": ["authentication.k8s.io"], "resources": ["tokenreviews"],
     "verbs": ["create"]},
    {"apiGroups": ["authorization.k8s.io"], "resources": ["subjectaccessreviews"],
     "verbs": ["create"]},
]
DEFAULT_TOKENS = {
    "agent-token-0123456789": {
        "user": "system:serviceaccount:oom-system:oom-agent",
        "uid": "1001",
        "groups": ["system:serviceaccounts", "system:serviceaccounts:oom-system"],
        "rules": AGENT_RULES,
        "binding": "oomlens-agent",
    },
    "admin-token-0123456789": {
        "user": "admin",
        "uid": "1000",
        "groups": ["system:masters"],
    },
}
# what anonymous and every authenticated user may read (system:public-info-viewer,
# system:discovery)
PUBLIC_PATHS = ("/version", "/healthz", "/livez", "/readyz")
DISCOVERY_PREFIXES = ("/api", "/apis", "/openapi", "/version")


class User:
    """An authenticated identity and the RBAC-like rules that apply to it."""

    def __init__(self, name, uid="", groups=(), rules=None, binding="fakeapi"):
        self.name = name
        self.uid = uid
        self.groups = list(groups)
        self.rules = rules  # None: everything allowed
        self.binding = binding

    @classmethod
    def from_spec(cls, spec):
        groups = list(spec.get("groups") or [])
        if "system:authenticated" not in groups:
            groups.append("system:authenticated")
        return cls(spec["user"], str(spec.get("uid", "")), groups,
                   spec.get("rules"), spec.get("binding", "fakeapi"))

    def allowed(self, verb, group, resource, name=None):
        """Returns (allowed, reason) like the RBAC authorizer."""
        if "system:masters" in self.groups:
            return True, ('RBAC: allowed by ClusterRoleBinding "cluster-admin" of '
                          'ClusterRole "cluster-admin" to Group "system:masters"')
        if self.rules is None:
            if self.name == "system:anonymous":
                return False, ""
            return True, 'RBAC: allowed by ClusterRoleBinding "%s"' % self.binding
        for r in self.rules:
            if (_match(r.get("verbs"), verb) and _match(r.get("apiGroups"), group)
                    and _match(r.get("resources"), resource)
                    and (not r.get("resourceNames") or name in r["resourceNames"])):
                return True, ('RBAC: allowed by ClusterRoleBinding "%s" of ClusterRole '
                              '"%s" to User "%s"' % (self.binding, self.binding, self.name))
        return False, ""


def _match(items, value):
    return bool(items) and ("*" in items or value in items)


ANONYMOUS = User("system:anonymous", "", ["system:unauthenticated"], rules=[])

# --------------------------------------------------------------------------
# TLS material, made with the openssl CLI.


def _openssl(*args):
    subprocess.run(["openssl"] + list(args), check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def make_tls(tls_dir):
    """Makes ca.crt/ca.key and server.crt/server.key (SAN IP:127.0.0.1 and
    DNS:localhost) in tls_dir unless they exist. Returns a dict of paths."""
    os.makedirs(tls_dir, exist_ok=True)
    p = {k: os.path.join(tls_dir, k) for k in
         ("ca.crt", "ca.key", "server.crt", "server.key")}
    if not os.path.exists(p["ca.crt"]):
        _openssl("req", "-x509", "-newkey", "ec", "-pkeyopt",
                 "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", p["ca.key"],
                 "-out", p["ca.crt"], "-days", "3650", "-subj", "/CN=fakeapi-ca",
                 "-addext", "basicConstraints=critical,CA:TRUE",
                 "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    if not os.path.exists(p["server.crt"]):
        _sign(tls_dir, "server", "/CN=kube-apiserver",
              "subjectAltName=IP:127.0.0.1,DNS:localhost\n"
              "extendedKeyUsage=serverAuth\n")
    return {"ca": p["ca.crt"], "ca_key": p["ca.key"], "cert": p["server.crt"],
            "key": p["server.key"]}


def make_client_cert(tls_dir, name, user, groups=()):
    """Makes <name>.crt/<name>.key signed by the CA of tls_dir for a client
    certificate login as `user` (CN) in `groups` (O). Returns (crt, key)."""
    make_tls(tls_dir)
    subj = "/CN=" + user + "".join("/O=" + g for g in groups)
    _sign(tls_dir, name, subj, "extendedKeyUsage=clientAuth\n")
    return (os.path.join(tls_dir, name + ".crt"), os.path.join(tls_dir, name + ".key"))


def _sign(tls_dir, name, subj, ext):
    key = os.path.join(tls_dir, name + ".key")
    csr = os.path.join(tls_dir, name + ".csr")
    crt = os.path.join(tls_dir, name + ".crt")
    extf = os.path.join(tls_dir, name + ".ext")
    with open(extf, "w") as f:
        f.write("basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\n"
                + ext)
    _openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
             "-nodes", "-keyout", key, "-out", csr, "-subj", subj)
    _openssl("x509", "-req", "-in", csr, "-CA", os.path.join(tls_dir, "ca.crt"),
             "-CAkey", os.path.join(tls_dir, "ca.key"), "-CAcreateserial",
             "-out", crt, "-days", "3650", "-extfile", extf)
    os.unlink(csr)
    os.unlink(extf)


# --------------------------------------------------------------------------
# The CRDs, as in manifests/crds/*.yaml (a test checks they stay equal).

OOMREPORT_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "oomreports.oomlens.io"},
    "spec": {
        "group": "oomlens.io",
        "scope": "Namespaced",
        "names": {"plural": "oomreports", "singular": "oomreport", "kind": "OOMReport",
                  "listKind": "OOMReportList", "shortNames": ["oomr"]},
        "versions": [{
            "name": "v1alpha1", "served": True, "storage": True,
            "subresources": {"status": {}},
            "additionalPrinterColumns": [
                {"name": "Pod", "type": "string", "jsonPath": ".spec.pod"},
                {"name": "Container", "type": "string", "jsonPath": ".spec.container"},
                {"name": "Process", "type": "string", "jsonPath": ".spec.process.comm"},
                {"name": "Verdict", "type": "string", "jsonPath": ".spec.verdict"},
                {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
            ],
            "schema": {"openAPIV3Schema": {
                "type": "object",
                "properties": {
                    "apiVersion": {"type": "string"},
                    "kind": {"type": "string"},
                    "metadata": {"type": "object"},
                    "spec": {
                        "type": "object",
                        "required": ["pod", "container"],
                        "properties": {
                            "pod": {"type": "string"},
                            "podUID": {"type": "string"},
                            "container": {"type": "string"},
                            "containerID": {"type": "string"},
                            "node": {"type": "string"},
                            "killedAt": {"type": "string", "format": "date-time"},
                            "process": {
                                "type": "object",
                                "properties": {
                                    "pid": {"type": "integer"},
                                    "comm": {"type": "string"},
                                    "anonRSS": {"type": "integer", "format": "int64"},
                                    "fileRSS": {"type": "integer", "format": "int64"},
                                    "shmemRSS": {"type": "integer", "format": "int64"},
                                },
                            },
                            "limit": {"type": "integer", "format": "int64"},
                            "usage": {"type": "integer", "format": "int64"},
                            "verdict": {"type": "string"},
                            "summary": {"type": "string"},
                            "bundle": {"type": "string"},
                        },
                    },
                    "status": {
                        "type": "object",
                        "properties": {
                            "phase": {"type": "string"},
                            "bundleStored": {"type": "boolean"},
                            "message": {"type": "string"},
                        },
                    },
                },
            }},
        }],
    },
}
OOMBUNDLE_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "oombundles.oomlens.io"},
    "spec": {
        "group": "oomlens.io",
        "scope": "Namespaced",
        "names": {"plural": "oombundles", "singular": "oombundle", "kind": "OOMBundle",
                  "listKind": "OOMBundleList"},
        "versions": [{
            "name": "v1alpha1", "served": True, "storage": True,
            "additionalPrinterColumns": [
                {"name": "Size", "type": "integer", "jsonPath": ".spec.size"},
                {"name": "SHA256", "type": "string", "jsonPath": ".spec.sha256",
                 "priority": 1},
                {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
            ],
            "schema": {"openAPIV3Schema": {
                "type": "object",
                "properties": {
                    "apiVersion": {"type": "string"},
                    "kind": {"type": "string"},
                    "metadata": {"type": "object"},
                    "spec": {
                        "type": "object",
                        "required": ["data", "sha256", "size"],
                        "properties": {
                            "data": {"type": "string", "format": "byte",
                                     "description": "base64 of the bundle tar.gz"},
                            "sha256": {"type": "string",
                                       "description": "hex sha256 of the decoded data"},
                            "size": {"type": "integer", "format": "int64",
                                     "description": "decoded size in bytes"},
                        },
                    },
                },
            }},
        }],
    },
}
CRDS = [OOMREPORT_CRD, OOMBUNDLE_CRD]
STORAGE_HASH = {"oomreports": "vYtDOciUYx8=", "oombundles": "+ub28jGNWmc="}

# --------------------------------------------------------------------------
# Resource table.

CRUD_VERBS = ["create", "delete", "deletecollection", "get", "list", "patch",
              "update", "watch"]
CR_VERBS = ["delete", "deletecollection", "get", "list", "patch", "create", "update",
            "watch"]  # the apiextensions server's order


class Res:
    """One served resource (a group/version/plural)."""

    def __init__(self, group, version, plural, kind, singular="", namespaced=True,
                 builtin=True, short=(), verbs=None, status=False, schema=None,
                 columns=None, create_only=False, categories=()):
        self.group, self.version, self.plural, self.kind = group, version, plural, kind
        self.singular = singular
        self.namespaced = namespaced
        self.builtin = builtin
        self.short = list(short)
        self.verbs = verbs or CRUD_VERBS
        self.status = status
        self.schema = schema
        self.columns = columns
        self.create_only = create_only
        self.categories = list(categories)
        self.api_version = version if not group else group + "/" + version
        self.key = plural if not group else plural + "." + group
        self.skey = self.key  # where the objects are stored
        self.list_kind = kind + "List"

    def qualified(self):
        """pods, oomreports.oomlens.io: the name used in error messages."""
        return self.key


def crd_resource(crd):
    spec = crd["spec"]
    ver = spec["versions"][0]
    cols = []
    for c in ver.get("additionalPrinterColumns", []):
        cols.append({"name": c["name"], "type": c["type"], "format": c.get("format", ""),
                     "description": c.get("description") or
                     "Custom resource definition column (in JSONPath format): "
                     + c["jsonPath"],
                     "priority": c.get("priority", 0), "jsonPath": c["jsonPath"]})
    names = spec["names"]
    r = Res(spec["group"], ver["name"], names["plural"], names["kind"],
            singular=names.get("singular", ""), namespaced=spec["scope"] == "Namespaced",
            builtin=False, short=names.get("shortNames", ()), verbs=CR_VERBS,
            status="status" in ver.get("subresources", {}),
            schema=ver["schema"]["openAPIV3Schema"], columns=cols,
            categories=names.get("categories", ()))
    r.list_kind = names.get("listKind", names["kind"] + "List")
    return r


def default_resources(crds=None):
    res = [
        Res("", "v1", "pods", "Pod", namespaced=True, short=["po"], status=True,
            categories=["all"]),
        Res("", "v1", "events", "Event", short=["ev"]),
        Res("", "v1", "configmaps", "ConfigMap", short=["cm"]),
        Res("", "v1", "secrets", "Secret"),
        Res("", "v1", "nodes", "Node", namespaced=False, short=["no"], status=True),
        Res("", "v1", "namespaces", "Namespace", namespaced=False, short=["ns"],
            status=True, verbs=["create", "delete", "get", "list", "patch", "update",
                                "watch"]),
        Res("events.k8s.io", "v1", "events", "Event", short=["ev"]),  # skey: see below
        Res("authentication.k8s.io", "v1", "tokenreviews", "TokenReview",
            namespaced=False, verbs=["create"], create_only=True),
        Res("authorization.k8s.io", "v1", "subjectaccessreviews", "SubjectAccessReview",
            namespaced=False, verbs=["create"], create_only=True),
    ]
    for crd in (crds if crds is not None else CRDS):
        res.append(crd_resource(crd))
    for r in res:  # one storage for both Event APIs, as in the real server
        if r.key == "events.events.k8s.io":
            r.skey = "events"
    return res


# events.k8s.io/v1 field ↔ core/v1 field (the storage form is core/v1)
EV_FIELDS = [("regarding", "involvedObject"), ("note", "message"),
             ("reportingController", "reportingComponent"),
             ("deprecatedSource", "source"), ("deprecatedFirstTimestamp", "firstTimestamp"),
             ("deprecatedLastTimestamp", "lastTimestamp"), ("deprecatedCount", "count")]


def ev_to_storage(o):
    o = dict(o)
    for a, b in EV_FIELDS:
        if a in o:
            o[b] = o.pop(a)
    o["apiVersion"] = "v1"
    return o


def ev_from_storage(o):
    o = dict(o)
    for a, b in EV_FIELDS:
        if b in o:
            o[a] = o.pop(b)
    o["apiVersion"] = "events.k8s.io/v1"
    return o


def to_storage(res, o):
    return ev_to_storage(o) if res.skey != res.key and o is not None else o


def from_storage(res, o):
    if res.skey != res.key and o is not None and o.get("apiVersion") == "v1":
        return ev_from_storage(o)
    return o


# --------------------------------------------------------------------------
# Errors.


class ApiError(Exception):
    """An error answered as a Status object."""

    def __init__(self, code, reason, message, details=None, meta=None):
        super().__init__(message)
        self.code, self.reason, self.message = code, reason, message
        self.details, self.meta = details, meta

    def body(self):
        d = {"kind": "Status", "apiVersion": "v1", "metadata": self.meta or {},
             "status": "Failure", "message": self.message}
        if self.reason:
            d["reason"] = self.reason
        if self.details is not None:
            d["details"] = self.details
        d["code"] = self.code
        return d


def _details(res, name=None, kind=None):
    d = {}
    if name is not None:
        d["name"] = name
    if res.group:
        d["group"] = res.group
    d["kind"] = kind or res.plural
    return d


def not_found(res, name):
    return ApiError(404, "NotFound", '%s "%s" not found' % (res.qualified(), name),
                    _details(res, name))


def bad_request(msg):
    return ApiError(400, "BadRequest", msg)


def invalid(res, name, causes):
    """causes: list of (reason, field, message)."""
    parts = ["%s: %s" % (f, m) for _, f, m in causes]
    text = parts[0] if len(parts) == 1 else "[" + ", ".join(parts) + "]"
    kindq = res.kind + ("." + res.group if res.group else "")
    d = _details(res, name, res.kind)
    # The real server's cause order is not stable (measured): shuffle them so
    # that no client comes to rely on an order. The message keeps the
    # validation order.
    d["causes"] = [{"reason": r, "message": m, "field": f} for r, f, m in causes]
    random.shuffle(d["causes"])
    return ApiError(422, "Invalid", '%s "%s" is invalid: %s' % (kindq, name, text), d)


# --------------------------------------------------------------------------
# JSON encoding the way the apiserver writes it.


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


# --------------------------------------------------------------------------
# Small helpers.


def now_ts(offset=0.0):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + offset))


def parse_ts(s):
    """RFC 3339 → epoch seconds, or None."""
    if not isinstance(s, str) or not RFC3339.match(s):
        return None
    try:
        import datetime
        s2 = s.replace("z", "Z").replace("Z", "+00:00").replace(" ", "T").replace("t", "T")
        return datetime.datetime.fromisoformat(s2).timestamp()
    except ValueError:
        return None


def human_duration(seconds):
    """k8s.io/apimachinery/pkg/util/duration.HumanDuration."""
    if seconds < -1:
        return "<invalid>"
    s = int(max(seconds, 0))
    if s < 120:
        return "%ds" % s
    m = s // 60
    if m < 10:
        return "%dm%ds" % (m, s % 60) if s % 60 else "%dm" % m
    if m < 180:
        return "%dm" % m
    h = m // 60
    if h < 8:
        return "%dh%dm" % (h, m % 60) if m % 60 else "%dh" % h
    if h < 48:
        return "%dh" % h
    if h < 24 * 8:
        return "%dd%dh" % (h // 24, h % 24) if h % 24 else "%dd" % (h // 24)
    if h < 24 * 365 * 2:
        return "%dd" % (h // 24)
    if h < 24 * 365 * 8:
        y = h // (24 * 365)
        return "%dy%dd" % (y, (h // 24) % 365)
    return "%dy" % (h // (24 * 365))


def json_path(obj, path):
    """Evaluates a simple .a.b.c JSONPath; None when absent."""
    cur = obj
    for part in [p for p in path.strip().lstrip("{").rstrip("}").split(".") if p]:
        if isinstance(cur, dict) and part in cur:
            cur = cur[part]
        else:
            return None
    return cur


def merge_patch(target, patch):
    """RFC 7386 JSON merge patch."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = copy.deepcopy(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge_patch(out.get(k), v)
    return out


# merge keys of strategic merge patch for the lists we serve
SMP_KEYS = {"containers": "name", "initContainers": "name", "ephemeralContainers": "name",
            "containerStatuses": "name", "initContainerStatuses": "name",
            "conditions": "type", "volumes": "name", "env": "name", "volumeMounts":
            "mountPath", "ownerReferences": "uid", "imagePullSecrets": "name",
            "ports": "containerPort", "hostAliases": "ip", "podIPs": "ip"}


def strategic_merge(target, patch):
    """A strategic merge patch: merge patch, but lists with a merge key are
    merged by that key; $patch: replace/delete and $-directives honoured."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    if patch.get("$patch") == "replace":
        return {k: copy.deepcopy(v) for k, v in patch.items() if not k.startswith("$")}
    out = copy.deepcopy(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if k.startswith("$"):
            continue
        if v is None:
            out.pop(k, None)
        elif (k in SMP_KEYS and isinstance(v, list) and isinstance(out.get(k), list)):
            out[k] = _smp_list(out[k], v, SMP_KEYS[k])
        elif isinstance(v, dict):
            out[k] = strategic_merge(out.get(k), v)
        else:
            out[k] = copy.deepcopy(v)
    return out


def _smp_list(cur, patch, key):
    cur = copy.deepcopy(cur)
    for item in patch:
        if not isinstance(item, dict) or key not in item:
            return copy.deepcopy(patch)
        idx = next((i for i, c in enumerate(cur)
                    if isinstance(c, dict) and c.get(key) == item[key]), None)
        if item.get("$patch") == "delete":
            if idx is not None:
                del cur[idx]
        elif idx is None:
            cur.append({k: v for k, v in item.items() if not k.startswith("$")})
        else:
            cur[idx] = strategic_merge(cur[idx], item)
    return cur


def json_patch(doc, ops):
    """RFC 6902 JSON patch. Raises ValueError."""
    doc = copy.deepcopy(doc)
    if not isinstance(ops, list):
        raise ValueError("json patch must be a list")

    def walk(path):
        if not path.startswith("/"):
            raise ValueError("invalid path %r" % path)
        parts = [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]
        cur = doc
        for p in parts[:-1]:
            cur = cur[int(p)] if isinstance(cur, list) else cur[p]
        return cur, parts[-1]

    def get(path):
        parent, last = walk(path)
        return parent[int(last)] if isinstance(parent, list) else parent[last]

    def add(path, value):
        parent, last = walk(path)
        if isinstance(parent, list):
            parent.insert(len(parent) if last == "-" else int(last), value)
        else:
            parent[last] = value

    def remove(path):
        parent, last = walk(path)
        if isinstance(parent, list):
            del parent[int(last)]
        else:
            del parent[last]

    try:
        for op in ops:
            o, path = op.get("op"), op.get("path", "")
            if o == "add":
                add(path, copy.deepcopy(op["value"]))
            elif o == "remove":
                remove(path)
            elif o == "replace":
                remove(path)
                add(path, copy.deepcopy(op["value"]))
            elif o == "move":
                v = get(op["from"])
                remove(op["from"])
                add(path, v)
            elif o == "copy":
                add(path, copy.deepcopy(get(op["from"])))
            elif o == "test":
                if get(path) != op.get("value"):
                    raise ValueError("test failed for %s" % path)
            else:
                raise ValueError("unknown op %r" % o)
    except (KeyError, IndexError, TypeError, AttributeError) as e:
        raise ValueError("json patch failed: %s" % e)
    return doc


def fields_v1(obj, top=True):
    """A plausible FieldsV1 set for the fields present in obj."""
    out = {}
    for k, v in obj.items():
        if top and k in ("apiVersion", "kind"):
            continue
        if top and k == "metadata":
            m = {}
            for mk in ("labels", "annotations", "ownerReferences", "finalizers"):
                if isinstance(v, dict) and mk in v:
                    sub = fields_v1(v[mk], False) if isinstance(v[mk], dict) else {}
                    sub["."] = {}
                    m["f:" + mk] = dict(sorted(sub.items()))
            if m:
                out["f:metadata"] = m
            continue
        if isinstance(v, dict):
            sub = fields_v1(v, False)
            sub["."] = {}
            out["f:" + k] = dict(sorted(sub.items()))
        else:
            out["f:" + k] = {}
    return out


# Field ownership (server-side apply), approximated with leaf paths: maps are
# walked, lists are atomic, labels/annotations are owned key by key.

def owned_paths(res, obj, sub=None):
    """The leaf paths a write of obj sets."""
    out = set()
    for k, v in (obj or {}).items():
        if k in ("apiVersion", "kind"):
            continue
        if k == "metadata":
            if isinstance(v, dict):
                for mk in ("labels", "annotations"):
                    if isinstance(v.get(mk), dict):
                        out.update(("metadata", mk, lk) for lk in v[mk])
                out.update(("metadata", mk) for mk in ("ownerReferences", "finalizers")
                           if mk in v)
            continue
        if res.status and (k == "status") != (sub == "status"):
            continue
        _leaves(v, (k,), out)
    return out


def _leaves(v, prefix, out):
    if isinstance(v, dict) and v:
        for k, x in v.items():
            _leaves(x, prefix + (k,), out)
    else:
        out.add(prefix)


def paths_to_fields(paths):
    root = {}
    for p in sorted(paths):
        cur = root
        for part in p:
            cur = cur.setdefault("f:" + part, {})
    return root


def fields_to_paths(fv, prefix=()):
    out = set()
    for k, v in (fv or {}).items():
        if not k.startswith("f:"):
            continue
        p = prefix + (k[2:],)
        sub = fields_to_paths(v, p) if isinstance(v, dict) else set()
        out |= sub if sub else {p}
    return out


def get_path(obj, path):
    cur = obj
    for part in path:
        if not isinstance(cur, dict) or part not in cur:
            return (False, None)
        cur = cur[part]
    return (True, cur)


def del_path(obj, path):
    parents, cur = [], obj
    for part in path[:-1]:
        if not isinstance(cur, dict) or part not in cur:
            return
        parents.append((cur, part))
        cur = cur[part]
    if isinstance(cur, dict):
        cur.pop(path[-1], None)
    for d, k in reversed(parents[1:]):  # drop maps left empty (not top-level ones)
        if d[k] == {}:
            del d[k]


def path_str(path):
    return "".join("." + p for p in path)


def set_managed(obj, manager, operation, api_version, paths, steal=True, replace=False):
    """Records that (manager, operation) owns `paths`; with steal the other
    managers lose them; replace (apply) makes them the entry's whole set,
    else (update) they are added to it."""
    meta = obj.setdefault("metadata", {})
    entries, mine = [], set()
    for e in meta.get("managedFields") or []:
        ps = fields_to_paths(e.get("fieldsV1"))
        if e.get("manager") == manager and e.get("operation") == operation:
            mine = ps
            continue
        if steal:
            ps -= set(paths)
        if ps:
            entries.append(dict(e, fieldsV1=paths_to_fields(ps)))
    mine = set(paths) if replace else mine | set(paths)
    if mine or operation == "Apply":
        entries.append({"manager": manager, "operation": operation,
                        "apiVersion": api_version, "time": now_ts(),
                        "fieldsType": "FieldsV1", "fieldsV1": paths_to_fields(mine)})
    meta["managedFields"] = entries


def apply_conflict(conflicts):
    """409 for apply conflicts: [(managedFields entry, path)], as 1.20 words it."""
    def who(e):
        if e.get("operation") == "Update":
            return '"%s" using %s at %s' % (e.get("manager"), e.get("apiVersion"),
                                           e.get("time"))
        return '"%s"' % e.get("manager")
    causes = [{"reason": "FieldManagerConflict", "message": "conflict with " + who(e),
               "field": path_str(p)} for e, p in conflicts]
    if len(conflicts) == 1:
        e, p = conflicts[0]
        msg = "Apply failed with 1 conflict: conflict with %s: %s" % (who(e), path_str(p))
    else:
        lines = []
        for w in sorted({who(e) for e, _ in conflicts}):
            lines.append("conflicts with %s:" % w)
            lines.extend("- " + path_str(p) for e, p in conflicts if who(e) == w)
        msg = "Apply failed with %d conflicts: %s" % (len(conflicts), "\n".join(lines))
    return ApiError(409, "Conflict", msg, {"causes": causes})


# --------------------------------------------------------------------------
# Selectors.


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


# --------------------------------------------------------------------------
# The store: objects, a global resourceVersion, the event history for watches.


class Entry:
    __slots__ = ("rv", "key", "type", "obj", "old", "js")

    def __init__(self, rv, key, etype, obj, old):
        self.rv, self.key, self.type, self.obj, self.old = rv, key, etype, obj, old
        self.js = None


class Store:
    """All objects, keyed by resource key and (namespace, name). Objects are
    never mutated once stored (writers store fresh copies)."""

    def __init__(self, start_rv=100):
        self.cond = threading.Condition()
        self.rv = start_rv
        self.objects = {}
        self.history = []
        self.base = 0  # absolute index of history[0]
        self.res_rv = {}
        self.compacted_rv = 0  # etcd compaction: lists at older RVs get 410
        self.watch_floor = 0  # oldest RV the watch cache can start from

    def get(self, key, ns, name):
        return self.objects.get(key, {}).get((ns or "", name))

    def write(self, key, etype, obj, old):
        """Stores obj (ADDED/MODIFIED) or removes it (DELETED) at a new RV.
        Call with cond held. Returns obj."""
        self.rv += 1
        obj["metadata"]["resourceVersion"] = str(self.rv)
        k = (obj["metadata"].get("namespace", ""), obj["metadata"]["name"])
        bucket = self.objects.setdefault(key, {})
        if etype == "DELETED":
            bucket.pop(k, None)
        else:
            bucket[k] = obj
        self.history.append(Entry(self.rv, key, etype, obj, old))
        self.res_rv[key] = self.rv
        self.cond.notify_all()
        return obj

    def snapshot(self, key, rv=None):
        """The objects of a resource as they were at rv (None: now)."""
        objs = dict(self.objects.get(key, {}))
        if rv is None:
            return objs
        for e in reversed(self.history):
            if e.rv <= rv:
                break
            if e.key != key:
                continue
            k = (e.obj["metadata"].get("namespace", ""), e.obj["metadata"]["name"])
            if e.type == "ADDED":
                objs.pop(k, None)
            else:
                objs[k] = e.old
        return objs

    def compact(self, rv=None):
        # etcd forgets old revisions, the apiserver's watch cache does not:
        # measured on 1.20.2, a watch from an RV older than a compaction is
        # still served from the cache (only Exact lists and old continue
        # tokens get 410). The history stays for the watch cache; a restart
        # (go_down expire) is what moves watch_floor.
        rv = self.rv if rv is None else min(int(rv), self.rv)
        self.compacted_rv = max(self.compacted_rv, rv)
        return self.compacted_rv

    def since(self, pos):
        """History entries from absolute index pos on, and the next pos."""
        i = max(pos - self.base, 0)
        return self.history[i:], self.base + len(self.history)

    def pos_after(self, rv):
        i = 0
        while i < len(self.history) and self.history[i].rv <= rv:
            i += 1
        return self.base + i


# --------------------------------------------------------------------------
# Object preparation: defaults, pruning, validation.

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


GEN_CHARS = "bcdfghjklmnpqrstvwxz2456789"
SERVER_META = ("uid", "resourceVersion", "creationTimestamp", "deletionTimestamp",
               "deletionGracePeriodSeconds", "generation", "managedFields", "selfLink")


class FakeAPI:
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

    # ---- lifecycle

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

    # ---- tokens and users

    def _load_tokens(self):
        if not self.tokens_file:
            return
        try:
            st = os.stat(self.tokens_file)
        except OSError:
            return
        if st.st_mtime_ns == self.tokens_mtime:
            return
        try:
            with open(self.tokens_file) as f:
                d = json.load(f)
        except (OSError, ValueError) as e:
            sys.stderr.write("fakeapi: tokens file %r unreadable (%s), keeping the old "
                             "tokens\n" % (self.tokens_file, e))
            return
        self.tokens = d.get("tokens", d) if isinstance(d, dict) else {}
        if isinstance(d, dict) and "anonymous" in d:
            self.anonymous = bool(d["anonymous"])
        self.tokens_mtime = st.st_mtime_ns

    def lookup_token(self, token):
        with self.flock:
            self._load_tokens()
            if token in self.removed_tokens:
                return None
            spec = self.extra_tokens.get(token) or self.tokens.get(token)
        if isinstance(spec, str):
            spec = {"user": spec}
        return User.from_spec(spec) if spec else None

    def user_by_name(self, name, groups, unknown_rules=()):
        """The user of that name with the rules of its token; unknown users get
        unknown_rules (nothing by default, None = everything)."""
        with self.flock:
            specs = list(self.tokens.values()) + list(self.extra_tokens.values())
        for s in specs:
            if isinstance(s, dict) and s.get("user") == name:
                u = User.from_spec(s)
                u.groups = list(groups) or u.groups
                return u
        return User(name, "", groups,
                    rules=None if unknown_rules is None else list(unknown_rules))

    def add_token(self, token, user, groups=(), rules=None, uid=""):
        with self.flock:
            self.removed_tokens.discard(token)
            self.extra_tokens[token] = {"user": user, "groups": list(groups),
                                        "rules": rules, "uid": uid}

    def remove_token(self, token):
        with self.flock:
            self.extra_tokens.pop(token, None)
            self.removed_tokens.add(token)

    # ---- faults

    def close_watches(self):
        """Cuts every open watch stream mid-stream (no terminating chunk)."""
        with self.store.cond:
            self.watch_gen += 1
            self.store.cond.notify_all()
        with self.flock:
            socks = list(self.watch_socks)
        for s in socks:
            _kill_sock(s)
        return len(socks)

    def stall(self, seconds, count=1, path=None):
        """Delays the next `count` requests (matching `path`) by `seconds`."""
        with self.flock:
            self.faults["stall"].append({"seconds": float(seconds), "count": int(count),
                                         "path": path})

    def throttle(self, count, retry_after=1, path=None):
        """Answers the next `count` requests with 429 + Retry-After."""
        with self.flock:
            self.faults["throttle"].append({"count": int(count), "path": path,
                                            "retry_after": retry_after})

    def fail(self, count, code=500, message="fakeapi: injected failure", reason="",
             path=None, retry_after=None):
        """Answers the next `count` requests with a Status of `code`."""
        with self.flock:
            self.faults["fail"].append({"count": int(count), "code": int(code),
                                        "message": message, "reason": reason,
                                        "path": path, "retry_after": retry_after})

    def cut_after_continue(self, count=1, path=None):
        """The next `count` requests that ask `Expect: 100-continue` get the
        interim `100 Continue` and then a closed connection: no final status
        (a proxy or an apiserver dying mid-upload)."""
        with self.flock:
            self.faults["cut"].append({"count": int(count), "path": path})

    def _take(self, kind, path):
        with self.flock:
            for f in self.faults[kind]:
                if f["count"] > 0 and (not f["path"] or f["path"] in path):
                    f["count"] -= 1
                    if f["count"] == 0:
                        self.faults[kind].remove(f)
                    return f
        return None

    def go_down(self, seconds, expire=True):
        """Stops listening and drops all connections; listens again on the same
        port after `seconds` with the state kept. With expire (a real restart):
        the global revision moves on by one (in a cluster, leader-election
        leases alone write every 2 s) and the watch cache restarts there, so a
        watch from any earlier RV gets 410."""
        with self.life:
            self._stop_api()
            with self.store.cond:
                if expire:
                    self.store.rv += 1
                    self.store.watch_floor = self.store.rv
            self.down_until = time.time() + float(seconds)
            self.restarts += 1
            self.down_gen += 1
            gen = self.down_gen

        def back():
            time.sleep(float(seconds))
            with self.life:  # a later down() or stop() wins
                if gen == self.down_gen and not self.stopped and self.httpd is None:
                    self._serve_api()
        threading.Thread(target=back, daemon=True).start()

    def compact(self, rv=None):
        """etcd compaction: continue tokens and Exact lists older than rv get
        410, and so do watches from older RVs. Returns the compacted RV."""
        with self.store.cond:
            return self.store.compact(rv)

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

    # ---- object operations (the handler calls these)

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


def _apply_merge(live, applied):
    """Custom resources: maps merge, lists and scalars are replaced."""
    out = copy.deepcopy(live)
    for k, v in applied.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = _apply_merge(out[k], v)
        elif v is None:
            out.pop(k, None)
        else:
            out[k] = copy.deepcopy(v)
    return out


EXPIRED_CONTINUE = (
    "The provided continue parameter is too old to display a consistent list result. "
    "You can start a new list without the continue parameter, or use the continue token "
    "in this response to retrieve the remainder of the results. Continuing with the "
    "provided token results in an inconsistent list - objects that were created, "
    "modified, or deleted between the time the first chunk was returned and now may "
    "show up in the list.")


def encode_continue(rv, start):
    raw = json.dumps({"v": "meta.k8s.io/v1", "rv": rv, "start": start},
                     separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode_continue(tok):
    try:
        raw = base64.urlsafe_b64decode(tok + "=" * (-len(tok) % 4))
        d = json.loads(raw)
        if d.get("v") != "meta.k8s.io/v1" or not isinstance(d.get("rv"), int) or \
                not isinstance(d.get("start"), str):
            raise ValueError("bad fields")
        return d
    except (ValueError, binascii.Error, AttributeError):
        raise bad_request("continue key is not valid: incorrect encoded start "
                          "resourceVersion (version meta.k8s.io/v1)")


def decode_json(body):
    if not body:
        raise bad_request("the body of the request was in an unknown format - accepted "
                          "media types include: application/json, application/yaml, "
                          "application/vnd.kubernetes.protobuf")
    try:
        return json.loads(body)
    except ValueError as e:
        raise bad_request("couldn't get version/kind; json parse error: %s" % e)


def _kill_sock(s):
    try:
        if isinstance(s, ssl.SSLSocket):
            socket.socket.shutdown(s, socket.SHUT_RDWR)
        else:
            s.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 64

    def handle_error(self, request, client_address):
        if getattr(self, "api", None) is not None and self.api.verbose:
            super().handle_error(request, client_address)


# --------------------------------------------------------------------------
# Discovery and tables.

def discovery_resources(api, group, version):
    out = []
    for r in api.resources:
        if (r.group, r.version) != (group, version):
            continue
        d = {"name": r.plural, "singularName": r.singular, "namespaced": r.namespaced,
             "kind": r.kind, "verbs": r.verbs}
        if r.short:
            d["shortNames"] = r.short
        if r.categories:
            d["categories"] = r.categories
        if r.plural in STORAGE_HASH and r.group == "oomlens.io":
            d["storageVersionHash"] = STORAGE_HASH[r.plural]
        out.append(d)
        if r.status:
            out.append({"name": r.plural + "/status", "singularName": "",
                        "namespaced": r.namespaced, "kind": r.kind,
                        "verbs": ["get", "patch", "update"]})
    return out


def api_groups(api):
    groups = []
    for g in sorted({r.group for r in api.resources if r.group}):
        vers = sorted({r.version for r in api.resources if r.group == g})
        gv = [{"groupVersion": g + "/" + v, "version": v} for v in vers]
        groups.append({"name": g, "versions": gv, "preferredVersion": gv[0]})
    return groups


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


def bookmark_object(res, rv):
    if not res.builtin:
        return {"apiVersion": res.api_version, "kind": res.kind,
                "metadata": {"resourceVersion": str(rv)}}
    o = {"kind": res.kind, "apiVersion": res.api_version,
         "metadata": {"resourceVersion": str(rv), "creationTimestamp": None}}
    if res.kind == "Pod":
        o.update({"spec": {"containers": None}, "status": {}})
    elif res.kind == "Event" and res.group == "":
        o.update({"involvedObject": {}, "source": {}, "firstTimestamp": None,
                  "lastTimestamp": None, "eventTime": None, "reportingComponent": "",
                  "reportingInstance": ""})
    elif res.kind == "Event":
        o.update({"eventTime": None, "regarding": {}, "deprecatedSource": {},
                  "deprecatedFirstTimestamp": None, "deprecatedLastTimestamp": None})
    elif res.kind == "Namespace":
        o.update({"spec": {}, "status": {}})
    return o


def next_bookmark(prev, timeout, period):
    """Bookmark times (seconds after the watch started) as observed on 1.20:
    min(period, timeout-2.2) first, then min(prev+period, timeout-1.1)."""
    if prev is None:
        cands = [period]
        if timeout is not None:
            cands.append(timeout - 2.2 if timeout > 2.2 else timeout - 1.1)
        t = min(cands)
        return t if t > 0 else None
    t = prev + period
    if timeout is not None and timeout - 1.1 > prev + 0.01:
        t = min(t, timeout - 1.1)
    return t


# --------------------------------------------------------------------------
# HTTP.

class ClientGone(Exception):
    pass


class ApiHandler(BaseHTTPRequestHandler):
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
            self.user = self.authenticate()
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

    # ---- watch

    def watch(self, api, res, ns):
        lsel = parse_label_selector(self.q.get("labelSelector"))
        fsel = parse_field_selector(res, self.q.get("fieldSelector"))

        def match(o):
            return o is not None and (not ns or o["metadata"].get("namespace") == ns) and \
                lsel((o.get("metadata") or {}).get("labels")) and fsel(o)

        try:
            timeout = float(self.q.get("timeoutSeconds") or 0)
        except ValueError:
            raise bad_request("timeoutSeconds: invalid value")
        if timeout <= 0:  # the server's choice: --min-request-timeout × [1, 2)
            timeout = api.watch_timeout or random.uniform(1800, 3600)
        bookmarks = self.q.get("allowWatchBookmarks") in ("true", "1")
        rv_s = self.q.get("resourceVersion", "")
        st = api.store
        initial, error = [], None
        with st.cond:
            gen = api.watch_gen
            if rv_s not in ("", "0"):
                try:
                    start_rv = int(rv_s)
                except ValueError:
                    raise bad_request('invalid resource version "%s"' % rv_s)
                floor = st.watch_floor  # not compacted_rv: see compact()
                if start_rv < floor:
                    error = {"kind": "Status", "apiVersion": "v1", "metadata": {},
                             "status": "Failure", "message": "too old resource version: "
                             "%d (%d)" % (start_rv, floor), "reason": "Expired",
                             "code": 410}
                pos = st.pos_after(start_rv)
            else:
                start_rv = st.rv
                for (ons, oname), o in sorted(st.objects.get(res.skey, {}).items()):
                    if match(o):
                        initial.append(("ADDED", o))
                pos = st.base + len(st.history)
        self.rec["status"] = 200
        self.send_response_only(200)
        self.send_header("Cache-Control", "no-cache, private")
        self.send_header("Content-Type", "application/json")
        self.send_header("Date", email.utils.formatdate(usegmt=True))
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.wfile.flush()
        api.track(self.request, True, watch=True)
        try:
            if error:
                self.send_event("ERROR", error)
            else:
                for t, o in initial:
                    self.send_event(t, present(res, o))
                self.watch_loop(api, res, match, pos, start_rv, timeout, bookmarks, gen)
                if api.watch_gen != gen or not api.up:
                    raise ClientGone()  # cut mid-stream
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (ClientGone, OSError):
            self.close_connection = True
        finally:
            api.track(self.request, False, watch=True)

    def watch_loop(self, api, res, match, pos, start_rv, timeout, bookmarks, gen):
        st = api.store
        t0 = time.monotonic()
        next_bm = next_bookmark(None, timeout, api.bookmark_period) if bookmarks else None
        while True:
            with st.cond:
                while True:
                    if api.watch_gen != gen or not api.up:
                        return
                    entries, newpos = st.since(pos)
                    now = time.monotonic() - t0
                    if entries or now >= timeout or (next_bm is not None and now >= next_bm):
                        break
                    wake = timeout if next_bm is None else min(timeout, next_bm)
                    st.cond.wait(max(0.01, min(wake - now, 1.0)))
                pos = newpos
                res_rv = st.res_rv.get(res.skey, 0)
            for e in entries:
                if e.key != res.skey:
                    continue
                self.send_entry(res, e, match)
            now = time.monotonic() - t0
            if now >= timeout:
                return
            if next_bm is not None and now >= next_bm:
                if res_rv > start_rv and self.bookmark_wanted(api, next_bm, timeout):
                    self.send_event("BOOKMARK", bookmark_object(res, res_rv))
                next_bm = next_bookmark(next_bm, timeout, api.bookmark_period)

    @staticmethod
    def bookmark_wanted(api, at, timeout):
        """The bookmark just before the timeout is sent or not as
        api.bookmark_last says; the others always."""
        if timeout is None or at < timeout - 1.2 or api.bookmark_last == "always":
            return True
        return api.bookmark_last != "never" and random.random() < 0.5

    def send_entry(self, res, e, match):
        new_m = match(e.obj)
        if e.type == "ADDED":
            t = "ADDED" if new_m else None
        elif e.type == "DELETED":
            t = "DELETED" if match(e.old) or new_m else None
        else:
            old_m = match(e.old)
            t = "MODIFIED" if new_m and old_m else "ADDED" if new_m else \
                "DELETED" if old_m else None
        if t is None:
            return
        if t == e.type:
            if e.js is None:
                e.js = go_json(present(res, e.obj))
            js = e.js
        else:
            js = go_json(present(res, e.obj))
        self.write_chunk(('{"type":"%s","object":%s}\n' % (t, js)).encode())

    def send_event(self, etype, obj):
        self.write_chunk(('{"type":"%s","object":%s}\n' % (etype, go_json(obj))).encode())

    def write_chunk(self, data):
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

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


OPENAPI_PB = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"  # kube-openapi


def _pb_bytes(field, data):
    n, var = len(data), b""
    while True:
        var += bytes([(n & 0x7F) | (0x80 if n > 0x7F else 0)])
        n >>= 7
        if not n:
            break
    return bytes([field << 3 | 2]) + var + data


def _pb_str(field, s):
    return _pb_bytes(field, s.encode())


class _Answered(Exception):
    """The response was written; stop routing."""


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


# --------------------------------------------------------------------------
# CLI.

def main(argv=None):
    ap = argparse.ArgumentParser(description="fake kube-apiserver (v1.20.2 behaviour)")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0, help="0: pick a free port")
    ap.add_argument("--tls-dir", help="CA + server certificate (made when missing)")
    ap.add_argument("--plain-http", action="store_true", help="no TLS (debugging only)")
    ap.add_argument("--tokens", help="JSON tokens file (re-read when it changes)")
    ap.add_argument("--ready-file", help="the API port is written here when ready")
    ap.add_argument("--control-port", type=int, default=0)
    ap.add_argument("--control-file", help="the control port is written here "
                    "(default: READY_FILE.control)")
    ap.add_argument("--control-token", help="also serve /fake/<action> on the API port "
                    "to this bearer token")
    ap.add_argument("--kubeconfig", help="write a kubeconfig for this server here")
    ap.add_argument("--kubeconfig-token", default="agent-token-0123456789")
    ap.add_argument("--no-anonymous", action="store_true",
                    help="401 instead of 403 for requests without credentials")
    ap.add_argument("--no-audit", action="store_true",
                    help="no Audit-Id header (a 1.20 server without an audit policy)")
    ap.add_argument("--no-strict-namespaces", action="store_true",
                    help="accept objects in namespaces that do not exist")
    ap.add_argument("--bookmark-period", type=float, default=60.0)
    ap.add_argument("--watch-timeout", type=float, default=None,
                    help="timeout of watches without timeoutSeconds (default 1800-3600 s)")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args(argv)
    if not a.tls_dir and not a.plain_http:
        ap.error("--tls-dir is required (or --plain-http)")
    api = FakeAPI(tls_dir=a.tls_dir, tokens=a.tokens, port=a.port, host=a.host,
                  control_port=a.control_port, anonymous=not a.no_anonymous,
                  bookmark_period=a.bookmark_period, watch_timeout=a.watch_timeout,
                  verbose=a.verbose, plain_http=a.plain_http,
                  control_token=a.control_token,
                  strict_namespaces=not a.no_strict_namespaces,
                  audit=not a.no_audit).start()
    if a.kubeconfig:
        api.write_kubeconfig(a.kubeconfig, a.kubeconfig_token)
    if a.ready_file:
        _write_atomic(a.control_file or a.ready_file + ".control", "%d\n" % api.control_port)
        _write_atomic(a.ready_file, "%d\n" % api.port)
    print(json.dumps({"port": api.port, "control_port": api.control_port, "url": api.url,
                      "ca": api.ca}), flush=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    while not stop.wait(0.5):
        pass
    api.stop()
    return 0


def _write_atomic(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.rename(tmp, path)


if __name__ == "__main__":
    sys.exit(main())
