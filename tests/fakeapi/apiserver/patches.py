"""Patches: JSON merge patch (RFC 7386), strategic merge patch (merge
keys of the lists we serve), JSON patch (RFC 6902), and the merge
server-side apply does for custom resources."""

import copy


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
