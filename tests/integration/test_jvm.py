"""oomlens-sidecar jcmd / trim / snapshot against real HotSpot JVMs on this
machine (Debian 12's openjdk-17, and Debian 13's openjdk-25 in the root
`make deps DEPS=test` builds for it): the attach protocol in C (v1 and
v2), its safety rules, and the glibc-retention seed case.

Needs root (other uids, mount namespaces) and javac/java; skips with the
reason otherwise. JVMs are shared between tests where possible (start-up
costs ~1 s each on 2 shared cores).
"""
import glob
import json
import os
import pwd
import re
import shutil
import socket
import subprocess
import tempfile
import time

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("OOMLENS_BUILD") or os.path.join(REPO, "build")
SIDECAR = os.path.join(BUILD, "bin", "oomlens-sidecar")
CLASSES = os.path.join(BUILD, "victims", "java")
JDK17 = "/usr/lib/jvm/java-17-openjdk-amd64"
# JDK 25 (attach protocol v2) runs in a Debian 13 root (scripts/deps.sh,
# install_jdk25_root: its glibc is newer than the host's), chrooted in a
# mount namespace of its own as a container would run it; JDK25 is the
# JDK's path inside that root.
JDK25 = "/usr/lib/jvm/java-25-openjdk-amd64"


def jdk25_root():
    """The root deps.sh built (OOMLENS_JDK25_ROOT overrides), or None."""
    env = os.environ.get("OOMLENS_JDK25_ROOT")
    cache = os.environ.get("OOMLENS_KUBE_CACHE", "/var/cache/oomlens")
    roots = [env] if env else [r for r in sorted(glob.glob(cache + "/jdk25-root-*"))
                               if not r.endswith((".log", ".tmp"))]
    for r in roots:
        if os.access(r + java_bin(JDK25), os.X_OK):
            return r
    return None


def in_root(root):
    """A Jvm prefix (or a command's) that runs it chrooted in root, with
    its own /proc and the test classes at their host path, in a private
    mount namespace that goes with the process."""
    script = ('R=$1; shift; mount -t proc proc "$R/proc" && '
              'mkdir -p "$R$C" && mount --bind "$C" "$R$C" && '
              'exec chroot "$R" "$@"')
    return ["env", "C=" + CLASSES, "unshare", "-m", "--propagation", "private",
            "sh", "-c", script, "jdk25", root]
LIGHT = ["-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"]


def java_bin(jdk):
    return os.path.join(jdk, "bin", "java")


@pytest.fixture(scope="module", autouse=True)
def classes():
    global CLASSES
    if os.geteuid() != 0:
        pytest.skip("JVM attach tests need root (other uids, mount namespaces)")
    if not os.access(java_bin(JDK17), os.X_OK) or not shutil.which("javac"):
        pytest.skip("no openjdk-17 java/javac (apt-get install openjdk-17-jdk-headless)")
    if not os.access(SIDECAR, os.X_OK):
        pytest.fail(f"{SIDECAR} not built (run make)")
    os.makedirs(CLASSES, exist_ok=True)
    src = os.path.join(REPO, "tests", "victims", "java")
    sources = [os.path.join(src, f) for f in sorted(os.listdir(src)) if f.endswith(".java")]

    def stale(java):  # javac takes seconds here: only when a source changed
        cls = os.path.join(CLASSES, os.path.basename(java)[:-5] + ".class")
        return not os.path.exists(cls) or os.path.getmtime(cls) < os.path.getmtime(java)
    if any(stale(f) for f in sources):
        subprocess.run(["javac", "-nowarn", "-XDsuppressNotes", "-d", CLASSES] + sources,
                       check=True, capture_output=True)
    # Tests give JVMs a private tmpfs on /tmp: a checkout under /tmp would
    # hide its own classes from them. Serve the classes from /var/tmp then.
    built, outside = CLASSES, None
    if os.path.realpath(CLASSES).startswith("/tmp/"):
        outside = tempfile.mkdtemp(prefix="oomlens-classes-", dir="/var/tmp")
        os.chmod(outside, 0o755)  # JVMs run as nobody too
        for f in os.listdir(CLASSES):
            shutil.copy(os.path.join(CLASSES, f), outside)
        CLASSES = outside
    yield CLASSES
    CLASSES = built
    if outside:
        shutil.rmtree(outside, ignore_errors=True)


class Jvm:
    """A victim JVM; `prefix` wraps the command (setpriv, unshare). Waits
    for its "ready" line; kill() is idempotent."""

    def __init__(self, main, args=(), flags=(), jdk=JDK17, prefix=(), cwd=None):
        self.out = tempfile.TemporaryFile()
        cmd = list(prefix) + [java_bin(jdk)] + LIGHT + list(flags) + \
            ["-cp", CLASSES, main] + [str(a) for a in args]
        if prefix and prefix[-1].endswith("exec"):  # a shell line: append
            cmd = list(prefix[:-1]) + [prefix[-1] + " " + " ".join(cmd[len(prefix):])]
        self.proc = subprocess.Popen(cmd, stdout=self.out, stderr=subprocess.STDOUT,
                                     cwd=cwd or tempfile.gettempdir())
        self.pid = self.proc.pid
        deadline = time.monotonic() + 30
        while "ready" not in self.output():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.kill()
                pytest.fail(f"JVM {cmd} did not start: {self.output()}")
            time.sleep(0.05)

    def output(self):
        self.out.seek(0)
        return self.out.read().decode(errors="replace")

    def alive(self):
        return self.proc.poll() is None

    def tmp(self, name=""):
        return f"/proc/{self.pid}/root/tmp/{name}"

    def rss_kb(self):
        with open(f"/proc/{self.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        raise AssertionError("no VmRSS")

    def kill(self):
        """SIGTERM first so the JVM removes its socket and hsperfdata."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for leftover in (f"/tmp/.java_pid{self.pid}", f"/tmp/.attach_pid{self.pid}"):
            if os.path.lexists(leftover):
                os.unlink(leftover)


def sidecar(*args, timeout=60):
    t0 = time.monotonic()
    r = subprocess.run([SIDECAR] + [str(a) for a in args], capture_output=True,
                       text=True, timeout=timeout)
    r.elapsed = time.monotonic() - t0
    return r


@pytest.fixture(scope="module")
def nmt_jvm(classes):
    j = Jvm("HeapHog", [16], ["-XX:NativeMemoryTracking=summary"])
    yield j
    j.kill()


@pytest.fixture(scope="module")
def plain_jvm(classes):
    j = Jvm("HeapHog", [8])
    yield j
    j.kill()


def test_jvm_nmt_on_summary_and_snapshot(nmt_jvm, tmp_path):
    r = sidecar("jcmd", nmt_jvm.pid, "VM.native_memory", "summary")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"{nmt_jvm.pid}:\n")
    assert "Native Memory Tracking:" in r.stdout
    assert "Total: reserved=" in r.stdout
    r = sidecar("snapshot", nmt_jvm.pid, "-o", tmp_path)
    assert r.returncode == 0, r.stderr
    jdir = tmp_path / "processes" / str(nmt_jvm.pid) / "jvm"
    nmt = json.loads((jdir / "native_memory.json").read_text())
    assert nmt["enabled"] is True
    assert nmt["committed"] > 16 << 20 and nmt["threads"] > 5
    heap_cat = [c for c in nmt["categories"] if c["name"] == "Java Heap"][0]
    assert heap_cat["reserved"] == 128 << 20  # -Xmx128m
    heap = json.loads((jdir / "heap_info.json").read_text())
    assert heap["collector"] == "Serial"
    assert heap["used"] >= 16 << 20  # HeapHog holds 16 x 1 MiB
    assert heap["max"] == 128 << 20
    assert "Tenured" in (jdir / "heap_info.txt").read_text() or \
        "tenured" in (jdir / "heap_info.txt").read_text()
    att = json.loads((jdir / "attach.json").read_text())
    assert att["attached"] is True and att["protocol"] == 1
    # JDK 17 has no System.native_heap_info: recorded, no file.
    nhi = [c for c in att["commands"] if c["command"] == "System.native_heap_info"][0]
    assert nhi["status"] != 0
    assert not (jdir / "native_heap_info.xml").exists()
    assert not any("VM.info" in c["command"] for c in att["commands"])


def test_jvm_jcmd_output_same_as_jdk_jcmd(nmt_jvm):
    for cmd in (["VM.flags"], ["VM.version"], ["help"]):
        ours = sidecar("jcmd", nmt_jvm.pid, *cmd)
        jdk = subprocess.run([os.path.join(JDK17, "bin", "jcmd"), str(nmt_jvm.pid)] + cmd,
                             capture_output=True, text=True, timeout=60)
        assert ours.returncode == 0 and jdk.returncode == 0
        assert ours.stdout == jdk.stdout, cmd


def test_jvm_reply_cap_truncates_and_says_so(nmt_jvm):
    full = sidecar("jcmd", nmt_jvm.pid, "help")
    r = sidecar("jcmd", "--max-reply", 100, nmt_jvm.pid, "help")
    assert r.returncode == 1
    assert "truncated at 100 bytes" in r.stderr
    assert full.stdout.startswith(r.stdout) and len(r.stdout) < len(full.stdout)
    assert r.stdout.count("\n") >= 2


def test_jvm_vanished_process_and_bad_usage():
    p = subprocess.Popen(["true"])
    p.wait()
    r = sidecar("jcmd", p.pid, "VM.uptime")
    assert r.returncode == 1 and "No such process" in r.stderr
    assert sidecar("jcmd", "notapid", "VM.uptime").returncode == 2
    assert sidecar("jcmd", 1).returncode == 2
    assert sidecar("trim").returncode == 2


def test_jvm_unknown_command_fails(nmt_jvm):
    r = sidecar("jcmd", nmt_jvm.pid, "No.such_command")
    assert r.returncode == 1
    assert "Unknown diagnostic command" in r.stdout


def test_jvm_trigger_file_removed_and_no_thread_dump(plain_jvm):
    # plain_jvm's listener is not running yet: this attach starts it.
    assert not os.path.exists(plain_jvm.tmp(f".java_pid{plain_jvm.pid}"))
    r = sidecar("jcmd", plain_jvm.pid, "VM.uptime")
    assert r.returncode == 0, r.stderr
    assert os.path.exists(plain_jvm.tmp(f".java_pid{plain_jvm.pid}"))
    cwd = os.readlink(f"/proc/{plain_jvm.pid}/cwd")
    for d in (cwd, plain_jvm.tmp()):
        assert not os.path.exists(os.path.join(d, f".attach_pid{plain_jvm.pid}"))
    assert "Full thread dump" not in plain_jvm.output()


def test_jvm_nmt_off_says_so(plain_jvm, tmp_path):
    r = sidecar("jcmd", plain_jvm.pid, "VM.native_memory", "summary")
    assert r.returncode == 0
    assert "Native memory tracking is not enabled" in r.stdout
    r = sidecar("snapshot", plain_jvm.pid, "-o", tmp_path)
    nmt = json.loads((tmp_path / "processes" / str(plain_jvm.pid) / "jvm" /
                      "native_memory.json").read_text())
    assert nmt["enabled"] is False and "NMT is not enabled" in nmt["note"]


def _bind_unix(path, listen):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(path)
    os.chmod(path, 0o600)
    if listen:
        s.listen(8)
    return s


def test_jvm_stale_socket_and_silent_listener(plain_jvm):
    assert sidecar("jcmd", plain_jvm.pid, "VM.uptime").returncode == 0
    sock = plain_jvm.tmp(f".java_pid{plain_jvm.pid}")
    os.unlink(sock)
    s = _bind_unix(sock, listen=False)
    st = os.stat(sock)
    s.close()  # the file stays, nobody listens: ECONNREFUSED
    # Like a restarted container that kept /tmp: the stale socket is
    # replaced and the listener restarted.
    r = sidecar("jcmd", "--timeout", 2000, plain_jvm.pid, "VM.uptime")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"{plain_jvm.pid}:\n")
    assert os.stat(sock).st_ino != st.st_ino
    assert r.elapsed < 1.5
    os.unlink(sock)
    s = _bind_unix(sock, listen=True)  # accepts, never answers
    try:
        r = sidecar("jcmd", "--timeout", 500, plain_jvm.pid, "VM.uptime")
    finally:
        s.close()
        os.unlink(sock)
    assert r.returncode == 1 and "deadline" in r.stderr
    assert 0.4 < r.elapsed < 3
    # A listening socket planted by another user: not connected to.
    s = _bind_unix(sock, listen=True)
    try:
        os.chown(sock, pwd.getpwnam("nobody").pw_uid, -1)
        r = sidecar("jcmd", "--timeout", 2000, plain_jvm.pid, "VM.uptime")
        s.settimeout(0.2)
        with pytest.raises(socket.timeout):
            s.accept()  # nobody connected
    finally:
        s.close()
        os.unlink(sock)
    assert r.returncode == 1 and "not owned by the JVM" in r.stderr
    assert plain_jvm.alive()


def test_jvm_disable_attach_mechanism_no_signal(classes):
    j = Jvm("HeapHog", [4], ["-XX:+DisableAttachMechanism"])
    try:
        r = sidecar("jcmd", j.pid, "VM.uptime")
        assert r.returncode == 1
        assert "DisableAttachMechanism" in r.stderr and "no signal" in r.stderr
        time.sleep(0.2)
        assert "Full thread dump" not in j.output()  # no SIGQUIT was sent
        assert not os.path.exists(j.tmp(f".attach_pid{j.pid}"))
        assert j.alive()
    finally:
        j.kill()


def test_jvm_xrs_listener_at_start_then_gone(classes):
    j = Jvm("HeapHog", [4], ["-Xrs", "-XX:+StartAttachListener"])
    try:
        r = sidecar("jcmd", j.pid, "VM.uptime")
        assert r.returncode == 0, r.stderr
        # A stale socket cannot be replaced without SIGQUIT: clear error.
        sock = j.tmp(f".java_pid{j.pid}")
        os.rename(sock, sock + ".real")
        _bind_unix(sock, listen=False).close()
        r = sidecar("jcmd", j.pid, "VM.uptime")
        assert r.returncode == 1 and "stale attach socket" in r.stderr
        assert os.path.exists(sock) and j.alive()
        os.rename(sock + ".real", sock)
        assert sidecar("jcmd", j.pid, "VM.uptime").returncode == 0
        # Without the socket the only way in is SIGQUIT, which would kill
        # an -Xrs JVM: refuse with a clear error instead.
        os.unlink(sock)
        r = sidecar("jcmd", j.pid, "VM.uptime")
        assert r.returncode == 1
        assert "SIGQUIT" in r.stderr and "StartAttachListener" in r.stderr
        time.sleep(0.2)
        assert j.alive()
    finally:
        j.kill()


def test_jvm_running_as_other_uid(classes):
    nobody = pwd.getpwnam("nobody")
    # cwd "/" is not writable by nobody: the trigger file falls back to /tmp.
    j = Jvm("HeapHog", [4], prefix=["setpriv", "--reuid=nobody", "--regid=nogroup",
                                     "--clear-groups"], cwd="/")
    try:
        r = sidecar("jcmd", j.pid, "VM.uptime")
        assert r.returncode == 0, r.stderr
        st = os.stat(j.tmp(f".java_pid{j.pid}"))
        assert st.st_uid == nobody.pw_uid
        assert not os.path.exists(j.tmp(f".attach_pid{j.pid}"))
        assert os.geteuid() == 0
    finally:
        j.kill()


def test_jvm_caller_not_root_same_uid_works_other_uid_refused(classes, nmt_jvm):
    as_nobody = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
    j = Jvm("HeapHog", [4], prefix=as_nobody, cwd="/")
    try:
        r = subprocess.run(as_nobody + [SIDECAR, "jcmd", str(j.pid), "VM.uptime"],
                           capture_output=True, text=True, timeout=30, cwd="/")
        assert r.returncode == 0, r.stderr
        assert r.stdout.startswith(f"{j.pid}:\n")
        # nobody cannot reach root's JVM: a clear error, no signal.
        r = subprocess.run(as_nobody + [SIDECAR, "jcmd", str(nmt_jvm.pid), "VM.uptime"],
                           capture_output=True, text=True, timeout=30, cwd="/")
        assert r.returncode == 1 and "permission denied" in r.stderr
        assert nmt_jvm.alive()
    finally:
        j.kill()


def test_jvm_private_tmp_namespace_and_symlink_refused(classes, nmt_jvm):
    j = Jvm("HeapHog", [4], prefix=["unshare", "-m", "--propagation", "private", "sh", "-c",
                                     "mount -t tmpfs tmpfs /tmp && exec"])
    try:
        r = sidecar("jcmd", j.pid, "VM.uptime")
        assert r.returncode == 0, r.stderr
        inside = j.tmp(f".java_pid{j.pid}")
        assert os.path.exists(inside)
        assert not os.path.exists(f"/tmp/.java_pid{j.pid}")  # not on the host
        # A symlink planted where the socket was, pointing at another
        # JVM's socket: never followed.
        os.unlink(inside)
        other = f"/proc/{nmt_jvm.pid}/root/tmp/.java_pid{nmt_jvm.pid}"
        assert os.path.exists(other)
        os.symlink(other, inside)
        r = sidecar("jcmd", j.pid, "VM.uptime")
        assert r.returncode == 1 and "symlink" in r.stderr
        assert r.stdout == ""
        assert j.alive()
    finally:
        j.kill()


def test_jvm_pid1_in_own_pid_and_mount_namespace(classes):
    # A container's view: the JVM is PID 1 with a private /tmp; the socket
    # is .java_pid1 there, reached from here by its host pid.
    j = Jvm("HeapHog", [4], prefix=["unshare", "-p", "-f", "-m", "--mount-proc", "sh", "-c",
                                     "mount -t tmpfs tmpfs /tmp && exec"])
    host_pid = None
    try:
        kids = []
        for t in os.listdir(f"/proc/{j.pid}/task"):
            with open(f"/proc/{j.pid}/task/{t}/children") as f:
                kids += f.read().split()
        assert len(kids) == 1
        host_pid = int(kids[0])
        with open(f"/proc/{host_pid}/status") as f:
            nspid = [l.split()[1:] for l in f if l.startswith("NSpid:")][0]
        assert nspid == [str(host_pid), "1"]
        r = sidecar("jcmd", host_pid, "VM.uptime")
        assert r.returncode == 0, r.stderr
        assert r.stdout.startswith(f"{host_pid}:\n")
        assert os.path.exists(f"/proc/{host_pid}/root/tmp/.java_pid1")
        assert not os.path.exists(f"/proc/{host_pid}/root/tmp/.attach_pid1")
    finally:
        if host_pid:  # PID 1 of its namespace: unshare does not forward
            os.kill(host_pid, 15)
        j.kill()


def test_jvm_trim_gives_retained_native_memory_back(classes):
    threads, mb = 8, 32
    freed = threads * mb << 20
    j = Jvm("NativeChurn", [threads, mb], ["-XX:NativeMemoryTracking=summary"])
    try:
        before_kb = j.rss_kb()
        # glibc kept the freed blocks: RSS still holds most of them.
        assert before_kb * 1024 > 0.7 * freed, before_kb
        r = sidecar("trim", "--json", j.pid)
        assert r.returncode == 0, r.stderr
        t = json.loads(r.stdout)
        after_kb = j.rss_kb()
        assert t["command"] == "System.trim_native_heap"
        assert abs(t["rss_before"] - before_kb * 1024) < 0.1 * freed
        assert abs(t["rss_after"] - after_kb * 1024) < 0.05 * freed
        # Most of the freed memory went back to the kernel.
        assert (before_kb - after_kb) * 1024 > 0.6 * freed, (before_kb, after_kb)
        assert t["rss_diff"] == t["rss_after"] - t["rss_before"]
        assert 0 < t["duration_us"] < 5_000_000
        assert "Trim native heap" in t["output"]
        r = sidecar("trim", j.pid)
        assert r.returncode == 0
        assert "rss before:" in r.stdout and "time taken:" in r.stdout
    finally:
        j.kill()


def test_jvm_trim_uses_the_jvm_command_only_for_jvms(plain_jvm):
    # Non-JVMs take the glibc malloc_trim branch (ptcall, tested there);
    # a JVM is trimmed by its own diagnostic command.
    r = sidecar("trim", "--json", plain_jvm.pid)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["command"] == "System.trim_native_heap"


def test_jvm_jdk25_protocol_v2(classes, tmp_path):
    root = jdk25_root()
    if not root:
        pytest.skip("no JDK 25 root: make deps DEPS=test builds it "
                    "(Debian 13's openjdk-25, mmdebstrap)")
    j = Jvm("HeapHog", [8], ["-XX:NativeMemoryTracking=summary"], jdk=JDK25,
            prefix=in_root(root))
    try:
        r = sidecar("jcmd", j.pid, "VM.version")
        assert r.returncode == 0, r.stderr
        assert "JDK 25." in r.stdout
        jdk = subprocess.run(in_root(root) + [os.path.join(JDK25, "bin", "jcmd"),
                                              str(j.pid), "VM.flags"],
                             capture_output=True, text=True, timeout=60)
        assert jdk.returncode == 0 and "-XX:" in jdk.stdout, jdk.stderr
        assert sidecar("jcmd", j.pid, "VM.flags").stdout == jdk.stdout
        # streaming=0: the status is the command's own, not an early 0.
        r = sidecar("jcmd", j.pid, "No.such_command")
        assert r.returncode == 1 and "Unknown diagnostic command" in r.stdout
        r = sidecar("snapshot", j.pid, "-o", tmp_path)
        assert r.returncode == 0, r.stderr
        jdir = tmp_path / "processes" / str(j.pid) / "jvm"
        assert json.loads((jdir / "attach.json").read_text())["protocol"] == 2
        assert (jdir / "native_heap_info.xml").read_text().startswith("<malloc version=")
        mi = json.loads((jdir / "native_heap_info.json").read_text())
        assert mi["arena_count"] >= 1 and mi["system_current"] > 0
        nmt = json.loads((jdir / "native_memory.json").read_text())
        assert nmt["enabled"] and nmt["threads"] > 5
        r = sidecar("trim", "--json", j.pid)
        assert r.returncode == 0 and json.loads(r.stdout)["rss_after"] > 0
    finally:
        j.kill()


def test_jvm_oom_kill_in_cgroup_snapshot_has_nmt_before_kill(classes, tmp_path):
    root = "/sys/fs/cgroup/memory"
    if not os.path.exists(os.path.join(root, "cgroup.procs")):
        pytest.skip("no cgroup v1 memory hierarchy at /sys/fs/cgroup/memory")
    cg = os.path.join(root, "oomlens-test-jvm-1")
    os.makedirs(cg, exist_ok=True)
    sc = java = None
    try:
        with open(os.path.join(cg, "memory.limit_in_bytes"), "w") as f:
            f.write(str(160 << 20))
        spool = tmp_path / "spool"
        sc = subprocess.Popen([SIDECAR, "run", "--standalone", "--cgroup",
                               "/oomlens-test-jvm-1", "--spool", str(spool),
                               "--interval-ms", "250"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.3)
        java = subprocess.Popen(
            ["sh", "-c", 'echo $$ > "$1/cgroup.procs"; shift; exec "$@"', "sh", cg,
             java_bin(JDK17), "-XX:NativeMemoryTracking=summary", "-Xmx512m",
             "-XX:+UseSerialGC", "-cp", CLASSES, "HeapHog", "400", "15"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        assert java.wait(60) == -9  # SIGKILL from the OOM killer
        snaps = sorted(spool.glob("snapshots/*/processes/*/jvm/native_memory.json"))
        assert snaps, list(spool.rglob("*"))
        nmt = json.loads(snaps[-1].read_text())
        assert nmt["enabled"] is True and nmt["committed"] > 32 << 20
        heap = json.loads((snaps[-1].parent / "heap_info.json").read_text())
        assert heap["collector"] == "Serial" and heap["used"] > 32 << 20
        # every file the run mode wrote is 0640, every directory 0750
        # (security review, issue 26: jvm/heap_rss.json was 0644)
        assert list(spool.glob("snapshots/*/processes/*/jvm/heap_rss.json"))
        modes = {str(p.relative_to(spool)): p.lstat().st_mode & 0o7777
                 for p in spool.rglob("*")}
        wrong = {p: oct(m) for p, m in modes.items()
                 if m != (0o750 if (spool / p).is_dir() else 0o640)}
        assert not wrong, wrong
    finally:
        for p in (java, sc):
            if p and p.poll() is None:
                p.kill()
                p.wait()
        if java:  # an OOM-killed JVM leaves its socket and perfdata behind
            for f in (f"/tmp/.java_pid{java.pid}", f"/tmp/hsperfdata_root/{java.pid}"):
                if os.path.lexists(f):
                    os.unlink(f)
        with open(os.path.join(cg, "cgroup.procs")) as f:
            for pid in f.read().split():
                try:
                    os.kill(int(pid), 9)
                except ProcessLookupError:
                    pass
        for _ in range(50):
            try:
                os.rmdir(cg)
                break
            except OSError:
                time.sleep(0.1)


def test_jvm_class_histogram_matches_jcmd_and_is_bounded(nmt_jvm):
    """oomlens-sidecar class-histogram against the JDK's jcmd on the same
    JVM: the same classes with the same bytes (HeapHog's 16 MiB of byte[]
    first; within 1 %: each attach allocates a little), its pause measured
    by the JVM's own safepoint counters; a bound the walk cannot meet is
    refused before the JVM is touched, with the reason."""
    r = sidecar("class-histogram", "--json", nmt_jvm.pid)
    assert r.returncode == 0, r.stderr
    ours = json.loads(r.stdout)
    jdk = subprocess.run([os.path.join(JDK17, "bin", "jcmd"), str(nmt_jvm.pid),
                          "GC.class_histogram"], capture_output=True, text=True,
                         timeout=60)
    assert jdk.returncode == 0, jdk.stderr
    rows = {}
    for line in jdk.stdout.splitlines():
        f = line.split()
        if len(f) >= 4 and f[0].endswith(":") and f[0][:-1].isdigit():
            rows[f[3]] = (int(f[1]), int(f[2]))
    assert ours["taken"] and ours["top"][0]["class"] == "[B", ours
    assert ours["top"][0]["bytes"] >= 16 << 20
    assert abs(ours["classes"] - len(rows)) <= 3, (ours["classes"], len(rows))
    for c in ours["top"][:5]:
        inst, nbytes = rows[c["class"]]
        assert abs(inst - c["instances"]) <= 0.01 * inst + 2, (c, inst)
        assert abs(nbytes - c["bytes"]) <= 0.01 * nbytes + 64, (c, nbytes)
    assert ours["safepoints"] >= 1 and 0 < ours["pause_us"] <= ours["wall_us"] + 2000
    text = sidecar("class-histogram", nmt_jvm.pid)
    assert text.returncode == 0
    assert re.search(r"\n\s+1\s+\d+\s+\d+\s+\d+\.\d%  byte\[\] \(\[B\)\n", text.stdout), \
        text.stdout
    r = sidecar("class-histogram", "--max-pause-ms", "1", nmt_jvm.pid)
    assert r.returncode == 1 and r.stdout == "", r
    assert re.search(r"not taken: heap \d+ MiB used: its walk would take about \d+ ms "
                     r"at 250 MiB/s, more than the 1 ms allowed \(--max-pause-ms\)",
                     r.stderr), r.stderr
    assert sidecar("class-histogram", "--max-pause-ms", "0", nmt_jvm.pid).returncode == 2
    assert sidecar("class-histogram").returncode == 2
