"""Discovery: /version's answer, the APIResourceList and APIGroupList
documents, and the bytes of the protobuf OpenAPI v2 document."""

from .crds import STORAGE_HASH


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
