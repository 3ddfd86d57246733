"""kubectl-oomlens (kubectl-oomlens/src/) against tests/fakeapi/fakeapi.py seeded with
OOMReports and OOMBundles: the table, -o json|yaml|wide, --pod, --since,
-A; show; get with its sha256/size checks and the hostile-archive refusal;
--extract into a fresh directory named by the report (never the archive's
own top directory, never over an existing file); open without a display,
and open rendering its own page (never the bundle's report.html); describe
pod; the exit codes; credentials from the
kubeconfig (contexts, --context, -n, an exec plugin); and the same binary
found by the real kubectl as a plugin (`kubectl oomlens ...`).

No root, no real kill: the bundles are built here with tarfile."""

import base64
import datetime
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile

import pytest
import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "fakeapi"))
import fakeapi  # noqa: E402

BUILD = os.environ.get("OOMLENS_BUILD") or os.path.join(ROOT, "build")
CLI = os.path.join(BUILD, "bin", "kubectl-oomlens")
KUBECTL = os.path.join(BUILD, "tools", "bin", "kubectl")
ADMIN = "admin-token-0123456789"

VICTIM = ("Memory cgroup out of memory: Killed process 4242 (java) "
          "total-vm:2097152kB, anon-rss:60000kB, file-rss:512kB, shmem-rss:0kB")


def iso(dt):
    return dt.strftime("%Y-%m-%dT%H:%M:%SZ")


def tgz(entries):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as t:
        for name, data, kind in entries:
            i = tarfile.TarInfo(name)
            if kind == "sym":
                i.type, i.linkname = tarfile.SYMTYPE, data
                t.addfile(i)
                continue
            i.size = len(data)
            t.addfile(i, io.BytesIO(data))
    return buf.getvalue()


def good_bundle(bid, pod):
    man = {"schema": "oomlens.io/bundle/v1", "id": bid, "node": "node1",
           "cgroup": "/kubepods/burstable/pod-uid/abc", "captured_at": "2026-11-30T10:00:00Z",
           "pod": {"namespace": "default", "name": pod},
           "victims": [{"pid": 4242, "comm": "java", "anon_rss_kb": 60000}]}
    diag = {"summary": "the Java heap grew to -Xmx",
            "usage_bytes": 64 << 20, "limit_bytes": 64 << 20, "usage_source": "cgroup",
            "verdicts": [{"verdict": "heap-growth", "confidence": 80,
                          "evidence": ["heap used 58 MiB of 60 MiB"],
                          "recommendations": ["raise the limit above -Xmx + 30 MiB"]}],
            "ledger": [{"name": "java heap", "bytes": 58 << 20, "source": "jvm"}]}
    return tgz([(bid + "/manifest.json", json.dumps(man).encode(), "reg"),
                (bid + "/diagnosis.json", json.dumps(diag).encode(), "reg"),
                (bid + "/kernel/oom.txt", (VICTIM + "\n").encode(), "reg"),
                (bid + "/report.html", b"<html><body>report of " + bid.encode() + b"</body></html>", "reg")])


def bundle_obj(name, data, sha=None, size=None):
    return {"apiVersion": "oomlens.io/v1alpha1", "kind": "OOMBundle",
            "metadata": {"name": name},
            "spec": {"data": base64.b64encode(data).decode(),
                     "sha256": sha or hashlib.sha256(data).hexdigest(),
                     "size": len(data) if size is None else size}}


def report_obj(name, pod, killed, verdict="heap-growth", comm="java", bundle=None):
    return {"apiVersion": "oomlens.io/v1alpha1", "kind": "OOMReport",
            # the agent's labels (agent/src/publish/cluster_publish.c), and one
            # of a user's own
            "metadata": {"name": name, "labels": {"oomlens.io/node": "node1",
                                                  "oomlens.io/pod": pod,
                                                  "oomlens.io/container": "app",
                                                  "oomlens.io/verdict": verdict,
                                                  "app": pod.split("-")[0]}},
            "spec": {"pod": pod, "container": "app", "node": "node1", "killedAt": iso(killed),
                     "process": {"pid": 4242, "comm": comm, "anonRSS": 61440000},
                     "limit": 64 << 20, "usage": 64 << 20, "verdict": verdict,
                     "summary": "java heap grew", "bundle": bundle or name}}


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    if not os.access(CLI, os.X_OK):
        pytest.skip("build/bin/kubectl-oomlens not built (make all)")
    tmp = tmp_path_factory.mktemp("kcli")
    api = fakeapi.FakeAPI(tls_dir=str(tmp / "tls")).start()
    now = datetime.datetime.now(datetime.timezone.utc)
    api.load("oomreports", "default", [
        report_obj("web-1-r1", "web-1", now - datetime.timedelta(hours=30)),
        report_obj("web-1-r2", "web-1", now - datetime.timedelta(minutes=5)),
        report_obj("hog-r1", "hog", now - datetime.timedelta(hours=2), verdict="native-leak",
                   comm="hog\x1b]0;pwned\x07"),
        report_obj("bad-sha", "web-1", now - datetime.timedelta(days=3)),
        report_obj("evil", "web-1", now - datetime.timedelta(days=4)),
        report_obj("nobundle", "web-1", now - datetime.timedelta(days=5)),
    ])
    api.load("oomreports", "oom-system", [report_obj("other-r1", "db-0", now)])
    good = good_bundle("web-1-r2", "web-1")
    api.load("oombundles", "default", [
        bundle_obj("web-1-r2", good),
        bundle_obj("web-1-r1", good_bundle("web-1-r1", "web-1")),
        bundle_obj("hog-r1", good_bundle("hog-r1", "hog")),
        bundle_obj("bad-sha", good, sha="00" * 32),
        bundle_obj("evil", tgz([("evil/manifest.json", b"{}", "reg"),
                                ("evil/../../escaped", b"pwned", "reg")])),
        bundle_obj("snap-web-1", good_bundle("snap-web-1", "web-1")),
    ])
    kc = api.write_kubeconfig(str(tmp / "kc"), ADMIN)
    e = type("Env", (), {})()
    e.api, e.tmp, e.kc, e.good = api, tmp, kc, good
    e.home = tmp / "home"
    e.home.mkdir()
    yield e
    api.stop()


def run(env, *args, kc=None, extra_env=None, prog=None, cwd=None):
    environ = dict(os.environ, HOME=str(env.home), KUBECONFIG=kc or env.kc,
                   PATH=os.path.dirname(CLI) + ":" + os.environ.get("PATH", ""))
    for k in ("KUBERNETES_SERVICE_HOST", "DISPLAY", "WAYLAND_DISPLAY"):
        environ.pop(k, None)
    environ.update(extra_env or {})
    return subprocess.run((prog or [CLI]) + list(args), env=environ, capture_output=True,
                          timeout=60, cwd=cwd or str(env.tmp))


def test_list_table_newest_first(env):
    r = run(env, "list")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.decode().splitlines()
    assert lines[0].split() == ["NAME", "POD", "CONTAINER", "PROCESS", "VERDICT", "AGE"]
    names = [ln.split()[0] for ln in lines[1:]]
    assert names == ["web-1-r2", "hog-r1", "web-1-r1", "bad-sha", "evil", "nobundle"]
    row = lines[1].split()
    assert row[1:5] == ["web-1", "app", "java", "heap-growth"] and row[5] in ("5m", "4m", "299s")
    # a comm with an OSC escape is shown, never sent to the terminal
    assert b"\x1b" not in r.stdout and b"\x07" not in r.stdout


def test_list_filters_and_namespaces(env):
    r = run(env, "list", "--pod", "web-1", "--since", "24h")
    assert r.returncode == 0, r.stderr
    assert [ln.split()[0] for ln in r.stdout.decode().splitlines()[1:]] == ["web-1-r2"]
    r = run(env, "list", "-A")
    lines = r.stdout.decode().splitlines()
    assert lines[0].split()[:2] == ["NAMESPACE", "NAME"]
    assert ("oom-system", "other-r1") in [tuple(ln.split()[:2]) for ln in lines[1:]]
    assert len(lines) == 8
    r = run(env, "list", "-n", "oom-system", "-o", "wide")
    lines = r.stdout.decode().splitlines()
    assert lines[0].split() == ["NAME", "POD", "CONTAINER", "PROCESS", "VERDICT", "AGE",
                                "NODE", "PID", "LIMIT", "BUNDLE"]
    assert lines[1].split()[6:] == ["node1", "4242", "64Mi", "other-r1"]
    r = run(env, "list", "-n", "kube-public")
    assert r.returncode == 0 and r.stdout == b"" and b"No OOM reports" in r.stderr


def test_list_json_and_yaml_agree(env):
    j = run(env, "list", "--pod", "hog", "-o", "json")
    y = run(env, "list", "--pod", "hog", "-o", "yaml")
    assert j.returncode == 0 and y.returncode == 0, (j.stderr, y.stderr)
    doc = json.loads(j.stdout)
    assert doc["kind"] == "List" and [i["metadata"]["name"] for i in doc["items"]] == ["hog-r1"]
    assert yaml.safe_load(y.stdout) == doc
    assert doc["items"][0]["spec"]["process"]["comm"] == "hog\x1b]0;pwned\x07"


def test_show_prints_verdict_ledger_and_victim(env):
    r = run(env, "show", "web-1-r2")
    assert r.returncode == 0, r.stderr
    out = r.stdout.decode()
    for want in ("heap-growth", "heap used 58 MiB", "raise the limit", "java heap",
                 "Killed process 4242 (java)", "web-1-r2"):
        assert want in out, (want, out)


def test_download_writes_checked_bundle_and_extracts(env, tmp_path):
    r = run(env, "download", "web-1-r2", cwd=str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "web-1-r2.tar.gz").read_bytes() == env.good
    r = run(env, "download", "web-1-r2", "-")
    assert r.stdout == env.good
    r = run(env, "download", "web-1-r2", "--extract", str(tmp_path / "x"))
    assert r.returncode == 0, r.stderr
    assert b"heap-growth" in (tmp_path / "x" / "web-1-r2" / "diagnosis.json").read_bytes()
    # the page beside it is ours, rendered from the data: not the pod's HTML
    page = (tmp_path / "x" / "web-1-r2" / "report.html").read_bytes()
    assert b"report of web-1-r2" not in page and b"OOM kill of java" in page
    assert b"Content-Security-Policy" in page
    # a sidecar's snap-<pod> bundle by its own name
    r = run(env, "download", "snap-web-1", str(tmp_path / "snap.tgz"))
    assert r.returncode == 0, r.stderr
    assert tarfile.open(tmp_path / "snap.tgz").getnames()[0].startswith("snap-web-1")


def test_download_refuses_bad_sha_and_escaping_entries(env, tmp_path):
    r = run(env, "download", "bad-sha", str(tmp_path / "b.tgz"))
    assert r.returncode == 5 and b"sha256" in r.stderr
    assert not (tmp_path / "b.tgz").exists()
    r = run(env, "download", "evil", "--extract", str(tmp_path / "e"))
    assert r.returncode == 5, r.stderr
    assert b"refused" in r.stderr
    assert not (tmp_path / "escaped").exists() and not (tmp_path / "e").exists()
    r = run(env, "show", "evil")
    assert r.returncode == 5


def test_size_mismatch_is_refused(env, tmp_path):
    """.spec.size disagreeing with the data: the API takes it (the schema
    cannot relate the two), the client refuses it."""
    env.api.load("oombundles", "default", [bundle_obj("sized", env.good, size=len(env.good) + 1)])
    env.api.load("oomreports", "default", [report_obj(
        "sized", "x", datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc))])
    r = run(env, "download", "sized", str(tmp_path / "s.tgz"))
    assert r.returncode == 5 and b"size" in r.stderr


def test_open_without_display_prints_path(env):
    r = run(env, "open", "hog-r1")
    assert r.returncode == 0, r.stderr
    path = r.stdout.decode().strip()
    assert path.endswith("/hog-r1/report.html") and os.path.isfile(path)
    page = open(path, "rb").read()
    # rendered from the bundle's data, not the bundle's own report.html
    assert b"report of hog-r1" not in page and b"OOM kill of java" in page
    assert b"no display" in r.stderr
    # the other files are there, extracted, beside it
    assert os.path.isfile(os.path.join(os.path.dirname(path), "diagnosis.json"))
    shutil.rmtree(os.path.dirname(os.path.dirname(path)))


def tree(root):
    """Every path below root: its type, mode and content (or link)."""
    out = {}
    for d, dirs, files in os.walk(root):
        for n in dirs + files:
            p = os.path.join(d, n)
            st = os.lstat(p)
            if os.path.islink(p):
                what = ("link", os.readlink(p))
            elif os.path.isdir(p):
                what = ("dir", None)
            else:
                what = ("file", open(p, "rb").read())
            out[os.path.relpath(p, root)] = what + (st.st_mode & 0o7777,)
    return out


def seed(env, name, data):
    env.api.load("oombundles", "default", [bundle_obj(name, data)])
    env.api.load("oomreports", "default", [report_obj(
        name, "x", datetime.datetime(2026, 1, 2, tzinfo=datetime.timezone.utc))])


def test_extract_of_a_dot_ssh_bundle_stays_in_its_report_directory(env, tmp_path):
    """Security review (issue 26): the archive chose its own top directory,
    so a bundle whose top is .ssh extracted into a home directory replaced
    ~/.ssh/authorized_keys. Now it lands in <DIR>/<report>/, fresh."""
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "authorized_keys").write_bytes(b"ssh-ed25519 AAAA owner\n")
    seed(env, "sshy", tgz([(".ssh/manifest.json", b"{}", "reg"),
                           (".ssh/authorized_keys", b"ssh-ed25519 AAAA attacker\n", "reg"),
                           (".ssh/config.d/x", b"Host *\n", "reg")]))
    before = tree(home)
    r = run(env, "download", "sshy", "--extract", str(home))
    assert r.returncode == 0, r.stderr
    assert ("extracted %s/sshy" % home).encode() in r.stderr
    after = tree(home)
    changed = sorted(p for p in set(before) | set(after) if before.get(p) != after.get(p))
    assert changed == ["sshy", "sshy/authorized_keys", "sshy/config.d",
                       "sshy/config.d/x", "sshy/manifest.json", "sshy/report.html"], changed
    assert after["sshy/authorized_keys"] == ("file", b"ssh-ed25519 AAAA attacker\n", 0o640)
    assert after["sshy"][2] == 0o750 and after["sshy/config.d"][2] == 0o750


def test_extract_never_overwrites_and_never_follows_a_planted_link(env, tmp_path):
    d = tmp_path / "x"
    r = run(env, "download", "web-1-r2", "--extract", str(d))
    assert r.returncode == 0, r.stderr
    (d / "web-1-r2" / "diagnosis.json").write_bytes(b"mine")
    before = tree(tmp_path)
    r = run(env, "download", "web-1-r2", "--extract", str(d))
    assert r.returncode == 1 and b"exists" in r.stderr, r.stderr
    assert tree(tmp_path) == before
    # a symlink where the report directory goes: refused, not followed
    (tmp_path / "y").mkdir()
    (tmp_path / "elsewhere").mkdir()
    os.symlink(tmp_path / "elsewhere", tmp_path / "y" / "web-1-r2")
    r = run(env, "download", "web-1-r2", "--extract", str(tmp_path / "y"))
    assert r.returncode == 1 and b"exists" in r.stderr, r.stderr
    assert os.listdir(tmp_path / "elsewhere") == []


@pytest.mark.parametrize("kind", ["dotdot", "absolute", "symlink", "twice", "file-then-dir"])
def test_extract_refuses_hostile_members(env, tmp_path, kind):
    """Nothing is written outside the report's directory, and a refused
    bundle leaves no report directory behind."""
    out = tmp_path / "outside"
    out.mkdir()
    entries = {
        "dotdot": [("r/a/../../../outside/x", b"pwned", "reg")],
        "absolute": [(str(out / "x"), b"pwned", "reg")],
        "symlink": [("r/ln", str(out), "sym"), ("r/ln/x", b"pwned", "reg")],
        "twice": [("r/a.txt", b"first", "reg"), ("r/a.txt", b"second", "reg")],
        "file-then-dir": [("r/a", b"file", "reg"), ("r/a/b", b"pwned", "reg")],
    }[kind]
    name = "hostile-" + kind
    seed(env, name, tgz([("r/manifest.json", b"{}", "reg")] + entries))
    d = tmp_path / "d"
    d.mkdir()
    r = run(env, "download", name, "--extract", str(d))
    assert r.returncode == 5 and b"refused" in r.stderr, (r.returncode, r.stderr)
    assert os.listdir(out) == [] and os.listdir(d) == [], tree(tmp_path)


def test_open_renders_its_own_page_never_the_bundles(env, tmp_path):
    """Security review (issue 26): open showed the bundle's own
    report.html (the pod's HTML, <script> and all) in the browser. It now
    renders the page from the bundle's data, escaped, under a CSP that
    forbids scripts."""
    man = {"schema": "oomlens.io/bundle/v1", "id": "h", "node": "n<script>x</script>",
           "pod": {"namespace": "default", "name": "p"},
           "victims": [{"pid": 7, "comm": "<script>alert(2)</script>"}]}
    diag = {"summary": "<script>alert(3)</script>", "verdicts": [
        {"verdict": "native-leak", "confidence": 50,
         "evidence": ["<img src=x onerror=alert(4)>"]}]}
    seed(env, "scripted", tgz([
        ("h/manifest.json", json.dumps(man).encode(), "reg"),
        ("h/diagnosis.json", json.dumps(diag).encode(), "reg"),
        ("h/report.html", b"<html><script>alert(1)</script>bundle page</html>", "reg")]))
    bindir = tmp_path / "bin"
    bindir.mkdir()
    seen = tmp_path / "seen.html"
    opener = bindir / "xdg-open"
    opener.write_text('#!/bin/sh\nprintf %%s "$1" > "%s.path"\ncp "$1" "%s"\n' % (seen, seen))
    opener.chmod(0o755)
    r = run(env, "open", "scripted", extra_env={
        "DISPLAY": ":99", "PATH": "%s:%s" % (bindir, os.environ.get("PATH", ""))})
    assert r.returncode == 0, r.stderr
    path = r.stdout.decode().strip()
    assert open(str(seen) + ".path").read() == path
    assert path.endswith("/scripted/report.html")
    page = seen.read_text()
    assert "<script" not in page.lower() and "bundle page" not in page
    assert "<img" not in page and "&lt;img src=x" in page
    assert ('<meta http-equiv="Content-Security-Policy" content="default-src '
            "'none'; style-src 'unsafe-inline'; img-src data:\">") in page
    assert "script-src" not in page
    assert "&lt;script&gt;alert(2)&lt;/script&gt;" in page
    assert os.stat(path).st_mode & 0o7777 == 0o640
    shutil.rmtree(os.path.dirname(os.path.dirname(path)))


def test_describe_pod_newest_first(env):
    r = run(env, "describe", "pod", "web-1")
    assert r.returncode == 0, r.stderr
    out = r.stdout.decode()
    order = [out.index("Report " + n) for n in ("web-1-r2", "web-1-r1", "bad-sha", "evil")]
    assert order == sorted(order)
    assert "OOM kills:  5" in out and "hog-r1" not in out


def test_exit_codes(env, tmp_path):
    r = run(env, "show", "no-such-report")
    assert r.returncode == 3 and b"NotFound" in r.stderr
    r = run(env, "download", "nobundle")  # the report exists, its bundle not
    assert r.returncode == 3
    assert r.stderr.decode().splitlines()[-1] == (
        "kubectl-oomlens: report nobundle names the OOMBundle nobundle, "
        "which namespace default does not hold"), r.stderr
    assert run(env, "list", "--since", "soon").returncode == 2
    assert run(env, "frobnicate").returncode == 2
    assert run(env, "list", "--bogus").returncode == 2
    assert run(env, "show").returncode == 2
    bad = env.api.write_kubeconfig(str(tmp_path / "kc-bad"), "not-a-valid-token")
    r = run(env, "list", kc=bad)
    assert r.returncode == 4 and b"Unauthorized" in r.stderr
    env.api.add_token("reader-token-0123456789", "reader", rules=[
        {"apiGroups": ["oomlens.io"], "resources": ["oomreports"], "verbs": ["get", "list"]}])
    rd = env.api.write_kubeconfig(str(tmp_path / "kc-rd"), "reader-token-0123456789")
    assert run(env, "list", kc=rd).returncode == 0
    r = run(env, "download", "web-1-r2", kc=rd, cwd=str(tmp_path))
    assert r.returncode == 4 and b"Forbidden" in r.stderr
    r = run(env, "list", kc=str(tmp_path / "missing"))
    assert r.returncode == 1
    assert run(env, "--version").stdout.decode().startswith("kubectl-oomlens ")


def test_contexts_namespace_and_exec_plugin(env, tmp_path):
    """Two contexts in one kubeconfig: the current one's namespace is the
    default, --context picks the other; its user is an exec plugin."""
    plugin = tmp_path / "cred.sh"
    plugin.write_text("#!/bin/sh\necho '{\"apiVersion\":\"client.authentication.k8s.io/v1\","
                      "\"kind\":\"ExecCredential\",\"status\":{\"token\":\"%s\"}}'\n" % ADMIN)
    plugin.chmod(0o755)
    kc = {"apiVersion": "v1", "kind": "Config", "current-context": "a",
          "clusters": [{"name": "c", "cluster": {"server": env.api.url,
                                                 "certificate-authority": env.api.ca}}],
          "users": [{"name": "tok", "user": {"token": "not-a-valid-token"}},
                    {"name": "ex", "user": {"exec": {
                        "apiVersion": "client.authentication.k8s.io/v1",
                        "command": str(plugin), "interactiveMode": "Never"}}}],
          "contexts": [{"name": "a", "context": {"cluster": "c", "user": "tok"}},
                       {"name": "b", "context": {"cluster": "c", "user": "ex",
                                                 "namespace": "oom-system"}}]}
    path = tmp_path / "kc-ctx"
    path.write_text(json.dumps(kc))
    assert run(env, "list", kc=str(path)).returncode == 4
    r = run(env, "list", "--context", "b", kc=str(path))
    assert r.returncode == 0, r.stderr
    assert [ln.split()[0] for ln in r.stdout.decode().splitlines()[1:]] == ["other-r1"]
    r = run(env, "--context=b", "list", "-n", "default", "--kubeconfig", str(path), kc="/nonexistent")
    assert r.returncode == 0 and b"web-1-r2" in r.stdout
    # completion: --context offers the kubeconfig's contexts, and the one
    # typed decides whose names (context b's namespace, its exec user)
    r = run(env, "__complete", "list", "--context", "", kc=str(path))
    assert r.stdout.decode().splitlines() == ["a", "b", ":4"], r.stdout
    r = run(env, "__complete", "--kubeconfig", str(path), "--context=", kc="/nonexistent")
    assert r.stdout.decode().splitlines() == ["a", "b", ":4"], r.stdout
    r = run(env, "__complete", "--context=b", "show", "", kc=str(path))
    assert r.stdout.decode().splitlines() == ["other-r1", ":4"], r.stdout


@pytest.mark.skipif(not os.access(KUBECTL, os.X_OK), reason="no build/tools/bin/kubectl")
def test_kubectl_plugin_discovery(env):
    r = run(env, "plugin", "list", prog=[KUBECTL])
    assert b"kubectl-oomlens" in r.stdout, (r.stdout, r.stderr)
    r = run(env, "oomlens", "list", "--pod", "hog", prog=[KUBECTL])
    assert r.returncode == 0, r.stderr
    assert r.stdout.decode().splitlines()[1].split()[:2] == ["hog-r1", "hog"]
    r = run(env, "oomlens", "show", "nope", prog=[KUBECTL])
    assert r.returncode == 3


def test_flags_in_every_form_kubectl_takes(env):
    """-n ns, -nns, --namespace ns, --namespace=ns, before or after the
    command and its operands; -A; -l over the reports' labels; -o name."""
    names = lambda r: [ln.split()[0] for ln in r.stdout.decode().splitlines()[1:]]
    for args in (["-n", "oom-system", "list"], ["list", "-noom-system"],
                 ["list", "--namespace", "oom-system"], ["--namespace=oom-system", "list"]):
        r = run(env, *args)
        assert r.returncode == 0 and names(r) == ["other-r1"], (args, r.stdout, r.stderr)
    r = run(env, "list", "-l", "app=hog")
    assert r.returncode == 0 and names(r) == ["hog-r1"], r.stdout
    r = run(env, "list", "--selector=app in (hog,db)", "-A")
    assert r.returncode == 0, r.stderr
    assert sorted(ln.split()[1] for ln in r.stdout.decode().splitlines()[1:]) == [
        "hog-r1", "other-r1"], r.stdout
    r = run(env, "list", "-l", "app=web", "-o", "name")
    assert r.stdout.decode().split() == ["oomreport.oomlens.io/" + n for n in (
        "web-1-r2", "web-1-r1", "bad-sha", "evil", "nobundle")], r.stdout
    r = run(env, "show", "--", "web-1-r2")  # "--" ends the options
    assert r.returncode == 0, r.stderr
    # the labels the agent puts on its reports
    r = run(env, "list", "-l", "oomlens.io/verdict=native-leak")
    assert r.returncode == 0 and names(r) == ["hog-r1"], (r.stdout, r.stderr)
    r = run(env, "list", "-A", "--selector", "oomlens.io/pod in (db-0,hog)", "-o", "name")
    assert sorted(r.stdout.decode().split()) == [
        "oomreport.oomlens.io/hog-r1", "oomreport.oomlens.io/other-r1"], r.stdout
    r = run(env, "list", "-loomlens.io/pod=web-1,oomlens.io/verdict!=heap-growth")
    assert r.returncode == 0 and names(r) == [], r.stdout


def test_get_prints_reports_and_the_old_download_form_is_answered(env, tmp_path):
    r = run(env, "get", "hog-r1", "web-1-r2")
    assert r.returncode == 0, r.stderr
    rows = [ln.split()[:2] for ln in r.stdout.decode().splitlines()]
    assert rows == [["NAME", "POD"], ["hog-r1", "hog"], ["web-1-r2", "web-1"]], r.stdout
    r = run(env, "get", "hog-r1", "missing", "-o", "json")
    assert r.returncode == 3
    assert [i["metadata"]["name"] for i in json.loads(r.stdout)["items"]] == ["hog-r1"]
    assert b'Error from server (NotFound): oomreports.oomlens.io "missing" not found' in r.stderr
    for old in (["get", "web-1-r2", "-o", str(tmp_path / "f.tgz")],
                ["get", "web-1-r2", "--extract", str(tmp_path / "d")]):
        r = run(env, *old, cwd=str(tmp_path))
        assert r.returncode == 2, (old, r.stderr)
        assert b"kubectl oomlens download REPORT [FILE|-] [--extract DIR]" in r.stderr
        assert os.listdir(tmp_path) == [], old
    assert run(env, "save", "web-1-r2", str(tmp_path / "s.tgz")).returncode == 0
    assert (tmp_path / "s.tgz").read_bytes() == env.good


def test_get_without_a_name_lists_as_kubectl_get_does(env):
    """`kubectl get oomreports` with no name lists them: so does get, with
    list's answer byte for byte, -A and -l included; kubectl's two
    refusals (a name across all namespaces, a name with a selector)."""
    for args in ([], ["-A"], ["-o", "json"], ["-l", "oomlens.io/pod=web-1", "-o", "name"]):
        g, l = run(env, "get", *args), run(env, "list", *args)
        assert g.returncode == 0 and g.stdout == l.stdout and g.stdout, (args, g.stderr)
    assert b"\noom-system   other-r1 " in run(env, "get", "-A").stdout
    for args, says in ((["get", "hog-r1", "-A"], b"by name across all namespaces"),
                       (["get", "hog-r1", "-l", "a=b"], b"with a selector (-l)")):
        r = run(env, *args)
        assert r.returncode == 2 and says in r.stderr, (args, r.stderr)
        assert r.stdout == b"", args


def test_flags_a_command_does_not_take_are_refused(env):
    for args, what in ((["show", "web-1-r2", "--since", "1h"], b"show does not take --since"),
                       (["open", "web-1-r2", "-A"], b"open does not take -A/--all-namespaces"),
                       (["describe", "pod", "web-1", "-o", "json"],
                        b"describe does not take -o/--output"),
                       (["download", "web-1-r2", "-l", "a=b"], b"download does not take -l"),
                       (["list", "--extract", "x"], b"list does not take --extract"),
                       (["list", "--frob"], b"unknown option --frob"),
                       (["list", "-x"], b"unknown option -x"),
                       (["list", "-n"], b"-n needs a value"),
                       (["list", "-o", "table"], b"expected json, yaml, wide or name"),
                       (["show", "a", "b"], b"usage: kubectl oomlens show REPORT"),
                       (["--context", "x", "show"], b"show: too few operands"),
                       (["--as-group", "g", "list"], b"--as-group needs --as"),
                       (["list", "--request-timeout", "soon"], b"--request-timeout")):
        r = run(env, *args)
        assert r.returncode == 2 and what in r.stderr, (args, r.stderr)


def test_usage_errors_are_one_line_and_a_hint(env):
    """What is wrong on one line, then where to look; nothing on stdout."""
    for args, want in ((["show", "a", "b"],
                        ["kubectl-oomlens: show: unexpected operand 'b'",
                         "usage: kubectl oomlens show REPORT"]),
                       (["frobnicate", "-n", "x"],
                        ["kubectl-oomlens: unknown command 'frobnicate'",
                         "`kubectl oomlens --help` lists the commands and their options."]),
                       (["list", "--namespace"],
                        ["kubectl-oomlens: --namespace needs a value",
                         "`kubectl oomlens --help` lists the commands and their options."]),
                       (["open", "r", "--pod", "p"],
                        ["kubectl-oomlens: open does not take --pod",
                         "usage: kubectl oomlens open REPORT"]),
                       (["describe", "pod", "p", "-A"],
                        ["kubectl-oomlens: describe does not take -A/--all-namespaces",
                         "usage: kubectl oomlens describe pod POD"]),
                       (["list", "-o", "table"],
                        ["kubectl-oomlens: -o: expected json, yaml, wide or name, got 'table'",
                         "usage: kubectl oomlens list [-n NS | -A] [-l SELECTOR] [--pod P] "
                         "[--since 24h] [-o json|yaml|wide|name]"])):
        r = run(env, *args)
        assert r.returncode == 2 and r.stdout == b"", (args, r.stdout)
        assert r.stderr.decode().splitlines() == want, (args, r.stderr)


def test_each_command_has_its_help(env):
    for cmd, want in (("list", b"usage: kubectl oomlens list [-n NS | -A] [-l SELECTOR]"),
                      ("download", b"usage: kubectl oomlens download REPORT [FILE|-]"),
                      ("save", b"usage: kubectl oomlens download REPORT"),
                      ("describe", b"usage: kubectl oomlens describe pod POD")):
        for args in ([cmd, "--help"], [cmd, "-h"], ["help", cmd]):
            r = run(env, *args)
            assert r.returncode == 0 and r.stdout.startswith(want), (args, r.stdout)
            assert b"--request-timeout" in r.stdout
    r = run(env, "--help")
    assert r.returncode == 0 and b"commands:" in r.stdout and b"download REPORT" in r.stdout


def test_show_of_a_missing_report_names_the_report(env):
    """show REPORT falls back to a bundle of that name (snap-<pod>); when
    neither exists the error is about the report the user typed."""
    r = run(env, "show", "no-such")
    assert r.returncode == 3
    assert r.stderr.decode().strip() == \
        'Error from server (NotFound): oomreports.oomlens.io "no-such" not found'


def test_request_timeout_is_honoured_and_hostile_as_refused(env):
    """--request-timeout bounds a request the server stalls (8 s here: the
    default 30 s would wait it out and succeed). --as reaches the server
    as Impersonate-User (the real node checks the answer:
    tests/cluster/test_agent_node.py); a value that would end the header is
    refused before anything is sent."""
    env.api.stall(8, count=1, path="/apis/oomlens.io/v1alpha1/namespaces/default/oomreports")
    r = run(env, "list", "--request-timeout", "1s")
    assert r.returncode == 1 and b"imeout" in r.stderr, r.stderr
    assert run(env, "list", "--request-timeout=0").returncode == 0
    r = run(env, "list", "--as", "bad\rname")
    assert r.returncode == 2 and b"control character" in r.stderr, r.stderr


def test_as_and_as_group_impersonate(env, tmp_path):
    """--as/--as-group reach the server as Impersonate-User/-Group: the
    request runs with the impersonated user's rights (the fake API does
    what the real impersonation filter does), and a caller without the
    right to impersonate is refused by the server."""
    env.api.add_token("lister-token-0123456789", "lister", rules=[
        {"apiGroups": ["oomlens.io"], "resources": ["oomreports"], "verbs": ["list"]}])
    n = len(env.api.requests)
    r = run(env, "list", "--as", "lister", "-o", "name")
    assert r.returncode == 0, r.stderr
    assert "oomreport.oomlens.io/web-1-r2" in r.stdout.decode().split()
    seen = [q for q in env.api.requests[n:] if q["path"].endswith("/oomreports")]
    assert [(q["user"], q.get("impersonated_by")) for q in seen] == [("lister", "admin")]
    r = run(env, "show", "web-1-r2", "--as=lister")  # no get on oomreports
    assert r.returncode == 4 and b'User "lister" cannot get resource' in r.stderr, r.stderr
    r = run(env, "list", "--as", "nobody")
    assert r.returncode == 4 and b'User "nobody" cannot list' in r.stderr, r.stderr
    n = len(env.api.requests)
    r = run(env, "list", "--as", "nobody", "--as-group", "system:masters",
            "--as-group=ops")
    assert r.returncode == 0, r.stderr
    assert [q.get("groups") for q in env.api.requests[n:]
            if q["path"].endswith("/oomreports")] == [["system:masters", "ops"]]
    agent = env.api.write_kubeconfig(str(tmp_path / "kc-agent"), "agent-token-0123456789")
    r = run(env, "list", "--as", "admin", kc=agent)
    assert r.returncode == 4, r.stderr
    assert (b'users "admin" is forbidden: User "system:serviceaccount:oom-system:oom-agent" '
            b'cannot impersonate resource "users"') in r.stderr, r.stderr


def test_crds_missing_is_said(env, tmp_path):
    api = fakeapi.FakeAPI(tls_dir=str(tmp_path / "tls"), crds=[]).start()
    try:
        kc = api.write_kubeconfig(str(tmp_path / "kc"), ADMIN)
        for args in (["list"], ["show", "x"], ["get", "x"]):
            r = run(env, *args, kc=kc)
            assert r.returncode == 3, (args, r.stderr)
            assert (b"kubectl-oomlens: the oomlens CRDs are not installed in this cluster "
                    b"(it does not serve oomreports.oomlens.io): helm install oomlens "
                    b"helm/oomlens -n oomlens-system --create-namespace, or kubectl apply "
                    b"-k manifests/\n") in r.stderr, (args, r.stderr)
    finally:
        api.stop()


def test_completion(env):
    """kubectl_complete-oomlens / __complete: commands, flags, formats,
    report and namespace names from the API, files where files go."""
    def comp(*words):
        r = run(env, "__complete", *words)
        assert r.returncode == 0, r.stderr
        lines = r.stdout.decode().splitlines()
        return [ln.split("\t")[0] for ln in lines[:-1]], lines[-1]
    assert comp("") == (["list", "get", "show", "download", "open", "describe"], ":4")
    assert comp("d") == (["download", "describe"], ":4")
    got, directive = comp("show", "web")
    assert sorted(got) == ["web-1-r1", "web-1-r2"] and directive == ":4"
    assert sorted(comp("-n", "oom-system", "open", "")[0]) == ["other-r1"]
    assert comp("list", "-o", "") == (["json", "yaml", "wide", "name"], ":4")
    assert "--selector" in comp("list", "--s")[0] and "--since" in comp("list", "--s")[0]
    assert "--extract" not in comp("show", "--")[0]
    assert comp("download", "web-1-r2", "")[1] == ":0"
    assert comp("download", "--extract", "")[1] == ":0"
    assert comp("describe", "") == (["pod"], ":4")
    assert {"web-1", "hog"} <= set(comp("describe", "pod", "")[0])
    assert "db-0" not in comp("describe", "pod", "")[0]  # oom-system's
    assert "oom-system" in comp("-n", "")[0]
    # the namespace in every form the command line takes it
    for ns in (["--namespace=oom-system"], ["-noom-system"], ["--namespace", "oom-system"]):
        assert comp(*ns, "open", "")[0] == ["other-r1"], ns
        assert comp("show", *ns, "")[0] == ["other-r1"], ns
    assert comp("open", "--namespace=oom-") == (["oom-system"], ":4")
    assert comp("list", "--output=y") == (["yaml"], ":4")
    # an option half typed or unknown before the word does not matter
    assert comp("--frob", "show", "hog")[0] == ["hog-r1"]
    # --as reaches the API: names only of what that user may list
    assert comp("--as", "nobody", "show", "")[0] == []


def test_completion_offers_nothing_without_an_api(env, tmp_path):
    """No API server (or no kubeconfig): no names, the directive still
    printed, within the completion's timeout; nothing but the protocol on
    stdout."""
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    with open(env.kc) as f:
        cfg = yaml.safe_load(f)
    for cl in cfg["clusters"]:
        cl["cluster"]["server"] = "https://127.0.0.1:%d" % port
    kc = tmp_path / "kc-down"
    kc.write_text(yaml.safe_dump(cfg))
    for words in (["show", ""], ["-n", ""], ["describe", "pod", ""]):
        r = run(env, "__complete", *words, kc=str(kc))
        assert r.returncode == 0 and r.stdout == b":4\n", (words, r.stdout)
    r = run(env, "__complete", "show", "", kc=str(tmp_path / "none"))
    assert r.returncode == 0 and r.stdout == b":4\n", r.stdout


@pytest.mark.skipif(not os.access(KUBECTL, os.X_OK), reason="no build/tools/bin/kubectl")
def test_kubectl_completes_the_plugin(env):
    """The real kubectl finds kubectl_complete-oomlens beside the plugin."""
    r = run(env, "__complete", "oomlens", "sh", prog=[KUBECTL])
    assert r.returncode == 0, r.stderr
    assert r.stdout.decode().splitlines()[0].split("\t")[0] == "show", r.stdout


def test_show_prints_a_jvms_class_histogram(env):
    """A bundle whose JVM's class histogram was taken before the kill
    (jvm/class_histogram.json, as the sidecar writes it): show prints the
    table of its top classes, Java's spelling beside the JVM's, and the
    pause; a class name with an escape sequence is shown, never obeyed."""
    bid = "histo-r1"
    histo = {"pid": 4242, "t_ms": 1, "trigger": "threshold-80", "taken": True,
             "heap_used": 135475200, "estimate_ms": 536, "budget_ms": 1000,
             "wall_us": 5662, "pause_us": 5314, "safepoints": 1,
             "reply_bytes": 21310, "truncated": False, "classes": 243,
             "total_instances": 25027, "total_bytes": 68242152,
             "total_known": True,
             "top": [{"class": "[B", "module": "java.base@17.0.15",
                      "instances": 7336, "bytes": 67445088},
                     {"class": "Evil\x1b]0;pwned\x07", "module": "",
                      "instances": 3, "bytes": 176384}]}
    data = good_bundle(bid, "web-1")
    with tarfile.open(fileobj=io.BytesIO(data)) as t:
        entries = [(m.name, t.extractfile(m).read(), "reg") for m in t.getmembers()]
    entries += [(bid + "/processes/4242/snapshot.json",
                 b'{"pid":4242,"name":"java","rss_kb":150000}', "reg"),
                (bid + "/processes/4242/jvm/class_histogram.json",
                 json.dumps(histo).encode(), "reg")]
    seed(env, bid, tgz(entries))
    r = run(env, "show", bid)
    assert r.returncode == 0, r.stderr
    out = r.stdout.decode()
    assert "Class histogram of pid 4242" in out, out
    assert "the JVM paused 5.3 ms, 5.7 ms wall; 243 classes" in out, out
    assert re.search(r"\n\s+1 byte\[\] \(\[B\)\s+7336\s+64 MiB\s+98\.8%\n", out), out
    assert "\x1b]0;" not in out and "Evil?]0;pwned?" in out, out


def test_the_bundle_is_checked_against_its_report_not_itself(env, tmp_path):
    """Security review (issue 26): anyone who may create OOMBundles in a
    namespace could plant one under a report's name with a spec.sha256
    that matches its own data. The report's bundleSHA256 and bundleSize
    (the agent's) decide: a self-consistent planted bundle is refused by
    show, download and open; the agent's own passes with no warning; a
    report without a digest is said so on stderr."""
    ours = good_bundle("signed-r1", "web-1")
    planted = good_bundle("signed-r2", "web-1")
    when = datetime.datetime(2026, 1, 3, tzinfo=datetime.timezone.utc)
    for name, data, given in (("signed-r1", ours, ours),
                              ("signed-r2", planted, ours)):
        rep = report_obj(name, "web-1", when)
        rep["spec"]["bundleSHA256"] = hashlib.sha256(given).hexdigest()
        rep["spec"]["bundleSize"] = len(given)
        env.api.load("oomreports", "default", [rep])
        env.api.load("oombundles", "default", [bundle_obj(name, data)])
    r = run(env, "show", "signed-r1")
    assert r.returncode == 0, r.stderr
    assert b"bundleSHA256" not in r.stderr, r.stderr
    for args in (["show", "signed-r2"],
                 ["download", "signed-r2", str(tmp_path / "p.tgz")],
                 ["download", "signed-r2", "--extract", str(tmp_path / "x")]):
        r = run(env, *args)
        assert r.returncode == 5, (args, r.stderr)
        assert b"not the agent's bundle, refused" in r.stderr, r.stderr
        assert hashlib.sha256(ours).hexdigest().encode() in r.stderr
    assert not (tmp_path / "p.tgz").exists() and not (tmp_path / "x").exists()
    # a report without the digest (hand-made): said, checked against itself
    r = run(env, "show", "web-1-r2")
    assert r.returncode == 0, r.stderr
    assert b"gives no bundleSHA256" in r.stderr, r.stderr


def needed_libs(path):
    """The DT_NEEDED entries of an ELF file, as readelf prints them."""
    out = subprocess.run(["readelf", "-d", path], capture_output=True, text=True,
                         check=True).stdout
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)


def lean_link():
    """Whether make linked the programs against the static libraries
    (build-static-libs.sh's cache): then libc is all they load."""
    stamp = os.path.join(BUILD, "link-libs.txt")
    return os.path.exists(stamp) and "-Wl,-Bstatic" in open(stamp).read()


def test_plugin_runs_in_a_minimal_root(env, tmp_path):
    """Issue 25: the plugin a user downloads runs where only it and libc are:
    a root holding the binary, the dynamic loader and libc (no /etc: no
    passwd, hosts, resolver or CA store, no /usr), the kubeconfig with its
    CA inline. list, show and download answer as on the host. With the
    static cache the binary needs libc alone; linked against Debian's shared
    libraries (no cache) their closure is copied in and that check is off."""
    chroot = shutil.which("chroot")
    if os.geteuid() != 0 or not chroot:
        pytest.skip("chroot(8) as root needed")
    root = tmp_path / "root"
    (root / "tmp").mkdir(parents=True)
    (root / "home").mkdir()
    shutil.copy2(CLI, root / "kubectl-oomlens")
    needed = needed_libs(CLI)
    if lean_link():
        # glibc: libc and its loader, nothing else
        assert "libc.so.6" in needed and all(
            n == "libc.so.6" or n.startswith("ld-linux") for n in needed), needed
    # the loader and every library ldd resolves, at their paths
    ldd = subprocess.run(["ldd", CLI], capture_output=True, text=True, check=True).stdout
    libs = re.findall(r"(/\S+) \(0x", ldd)
    assert any("ld-linux" in p for p in libs), ldd
    for p in libs:
        dst = root / p.lstrip("/")
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(os.path.realpath(p), dst)
    files = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
    assert len(files) == 1 + len(libs), files
    cfg = json.load(open(env.kc))
    cluster = cfg["clusters"][0]["cluster"]
    cluster["certificate-authority-data"] = base64.b64encode(
        open(cluster.pop("certificate-authority"), "rb").read()).decode()
    (root / "kc").write_text(json.dumps(cfg))

    def jailed(*args):
        return subprocess.run([chroot, str(root), "/kubectl-oomlens"] + list(args),
                              env={"KUBECONFIG": "/kc", "HOME": "/home", "PATH": "/"},
                              capture_output=True, timeout=60)

    r = jailed("--version")
    assert r.returncode == 0 and r.stdout.startswith(b"kubectl-oomlens "), r
    host, jail = run(env, "list", "-A"), jailed("list", "-A")
    assert jail.returncode == 0, jail.stderr
    strip_age = lambda out: [ln.rsplit(None, 1)[0] for ln in out.decode().splitlines()]
    assert strip_age(jail.stdout) == strip_age(host.stdout) and len(host.stdout) > 0
    r = jailed("show", "web-1-r2")
    assert r.returncode == 0 and b"Killed process 4242 (java)" in r.stdout, r.stderr
    r = jailed("download", "web-1-r2", "/tmp/b.tgz")
    assert r.returncode == 0, r.stderr
    assert (root / "tmp" / "b.tgz").read_bytes() == env.good
    # a report with no bundle: the error names the report, through the jail
    r = jailed("download", "nobundle", "/tmp/n.tgz")
    assert r.returncode != 0 and b"nobundle" in r.stderr, r
