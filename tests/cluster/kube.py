# SPDX-License-Identifier: Apache-2.0
"""A minimal Kubernetes API client over urllib + ssl for the cluster suite:
the tests depend on the API server, not on kubectl."""
import json
import ssl
import time
import urllib.error
import urllib.request

import yaml


class ApiError(Exception):
    def __init__(self, code, body):
        super().__init__(f"HTTP {code}: {body[:400]}")
        self.code = code
        self.body = body


class Kube:
    """Talks to the server a kubeconfig (as up.sh writes it: one cluster,
    one token user) names."""

    def __init__(self, kubeconfig):
        with open(kubeconfig) as f:
            cfg = yaml.safe_load(f)
        cluster = cfg["clusters"][0]["cluster"]
        self.server = cluster["server"].rstrip("/")
        self.token = cfg["users"][0]["user"]["token"]
        self.ctx = ssl.create_default_context(
            cafile=cluster["certificate-authority"])

    def request(self, method, path, body=None, raw=False, timeout=30,
                headers=None):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.server + path, data=data,
                                     method=method)
        req.add_header("Authorization", "Bearer " + self.token)
        for k, v in (headers or {}).items():
            req.add_header(k, v)
        if data is not None:
            req.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(req, context=self.ctx,
                                        timeout=timeout) as r:
                out = r.read().decode(errors="replace")
        except urllib.error.HTTPError as e:
            raise ApiError(e.code, e.read().decode(errors="replace"))
        return out if raw else json.loads(out)

    def get(self, path):
        return self.request("GET", path)

    def exists(self, path):
        """Whether GET path finds the object (404: no; other errors
        raise)."""
        try:
            self.get(path)
            return True
        except ApiError as e:
            if e.code == 404:
                return False
            raise

    def create(self, path, obj):
        return self.request("POST", path, obj)

    def delete(self, path):
        try:
            return self.request("DELETE", path,
                                {"kind": "DeleteOptions", "apiVersion": "v1",
                                 "gracePeriodSeconds": 0})
        except ApiError as e:
            if e.code != 404:
                raise
            return None

    # where each kind the suite applies lives: (API prefix, plural,
    # namespaced)
    KINDS = {
        "Namespace": ("/api/v1", "namespaces", False),
        "ServiceAccount": ("/api/v1", "serviceaccounts", True),
        "ClusterRole": ("/apis/rbac.authorization.k8s.io/v1", "clusterroles",
                        False),
        "ClusterRoleBinding": ("/apis/rbac.authorization.k8s.io/v1",
                               "clusterrolebindings", False),
        "DaemonSet": ("/apis/apps/v1", "daemonsets", True),
        "CustomResourceDefinition": ("/apis/apiextensions.k8s.io/v1",
                                     "customresourcedefinitions", False),
    }

    def path_of(self, obj):
        """The collection path of obj's kind (in its namespace)."""
        prefix, plural, namespaced = self.KINDS[obj["kind"]]
        if namespaced:
            return (f"{prefix}/namespaces/{obj['metadata']['namespace']}"
                    f"/{plural}")
        return f"{prefix}/{plural}"

    def apply(self, obj):
        """Creates obj, or replaces the one of its name (resourceVersion
        taken from the stored object)."""
        base = self.path_of(obj)
        try:
            return self.create(base, obj)
        except ApiError as e:
            if e.code != 409:
                raise
        path = f"{base}/{obj['metadata']['name']}"
        cur = self.get(path)
        obj = json.loads(json.dumps(obj))
        obj["metadata"]["resourceVersion"] = \
            cur["metadata"]["resourceVersion"]
        return self.request("PUT", path, obj)

    def watch_lines(self, path, timeout):
        """A watch (path with ?watch=1...) as a generator of decoded events,
        ending after timeout seconds or with the stream."""
        req = urllib.request.Request(self.server + path)
        req.add_header("Authorization", "Bearer " + self.token)
        with urllib.request.urlopen(req, context=self.ctx,
                                    timeout=timeout) as r:
            for line in r:
                if line.strip():
                    yield json.loads(line)

    def ensure_namespace(self, name):
        try:
            self.create("/api/v1/namespaces",
                        {"apiVersion": "v1", "kind": "Namespace",
                         "metadata": {"name": name}})
        except ApiError as e:
            if e.code != 409:
                raise
        # the controller-manager creates the namespace's default
        # ServiceAccount; pods are refused until it exists
        self.wait(lambda: self.get(
            f"/api/v1/namespaces/{name}/serviceaccounts/default"),
            30, "default ServiceAccount")

    def pod(self, ns, name):
        return self.get(f"/api/v1/namespaces/{ns}/pods/{name}")

    def log(self, ns, name, container):
        return self.request(
            "GET", f"/api/v1/namespaces/{ns}/pods/{name}/log"
            f"?container={container}", raw=True)

    @staticmethod
    def wait(fn, timeout, what):
        """Calls fn until it returns something true (ApiError counts as
        not yet); returns that value or raises AssertionError."""
        end = time.monotonic() + timeout
        last = None
        while time.monotonic() < end:
            try:
                v = fn()
                if v:
                    return v
            except ApiError as e:
                last = e
            time.sleep(0.3)
        raise AssertionError(f"timed out after {timeout}s waiting for "
                             f"{what} (last error: {last})")
