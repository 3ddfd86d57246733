"""Watches: the chunked event stream, initial ADDED events, objects that
start or stop matching a selector, bookmarks at the times 1.20 sends
them, 410 for an RV older than the watch cache."""

import email.utils
import random
import time

from .errors import ClientGone, bad_request
from .present import go_json, present
from .selector import parse_field_selector, parse_label_selector


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


class WatchStream:
    """ApiHandler's watch verb. A part of ApiHandler (handler.py): self.q,
    self.rec and the response writing are its."""

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
