"""Small helpers: RFC 3339 timestamps, Go's HumanDuration, a simple
JSONPath, and PyYAML when present."""

import re
import time

try:  # only for application/apply-patch+yaml bodies; JSON is valid YAML
    import yaml  # type: ignore
except ImportError:  # pragma: no cover
    yaml = None


RFC3339 = re.compile(
    r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")


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
