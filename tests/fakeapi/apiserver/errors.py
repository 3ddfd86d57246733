"""Errors answered as Status objects (ApiError and the common ones:
404 NotFound, 400 BadRequest, 422 Invalid), a JSON body or its 400,
and ClientGone (the client went away mid-request)."""

import json
import random


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


def decode_json(body):
    if not body:
        raise bad_request("the body of the request was in an unknown format - accepted "
                          "media types include: application/json, application/yaml, "
                          "application/vnd.kubernetes.protobuf")
    try:
        return json.loads(body)
    except ValueError as e:
        raise bad_request("couldn't get version/kind; json parse error: %s" % e)


class ClientGone(Exception):
    pass
