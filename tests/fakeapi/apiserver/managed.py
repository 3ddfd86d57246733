"""managedFields: field ownership (server-side apply), approximated with
leaf paths: maps are walked, lists are atomic, labels/annotations are
owned key by key; FieldsV1 to and from paths; the 409 of an apply
conflict."""

from .errors import ApiError
from .util import now_ts


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
