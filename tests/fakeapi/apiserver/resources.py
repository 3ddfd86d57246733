"""The resource table: Res (one served group/version/plural), the
resources a CRD makes, the built-in ones, and the conversion of
events.k8s.io/v1 Events to and from their core/v1 storage form."""

from .crds import CRDS


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
