"""Storage: every object under one global resourceVersion, the event
history watches are served from (Entry), snapshots at an older RV,
compaction, and the continue tokens of paged lists."""

import base64
import binascii
import json
import threading

from .errors import bad_request


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
