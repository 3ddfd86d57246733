"""Fault injection: cut watches, stall, throttle (429), fail (a Status),
cut after 100 Continue, go down and come back (a restart), compact."""

import socket
import ssl
import threading
import time


def _kill_sock(s):
    try:
        if isinstance(s, ssl.SSLSocket):
            socket.socket.shutdown(s, socket.SHUT_RDWR)
        else:
            s.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


class Faults:
    """FakeAPI's faults. A part of FakeAPI (server.py), whose __init__ sets
    the state used here (faults, flock, store, watch_socks, life, …);
    go_down() calls its _stop_api() and _serve_api(). The handler
    takes a pending fault with _take()."""

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
