"""Identities: the default tokens (the reference capture's, 00-rbac.yaml),
User and its RBAC-like rules, anonymous, and the token lookups of
FakeAPI (a tokens file re-read when it changes, tokens added or
removed at run time)."""

import json
import os
import sys


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


class Tokens:
    """FakeAPI's tokens and users: who a request is. A part of FakeAPI
    (server.py), whose __init__ sets what is used here: tokens,
    tokens_file, extra_tokens, removed_tokens, flock."""

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
