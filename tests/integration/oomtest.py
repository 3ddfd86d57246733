"""Helpers for integration tests that make real OOM kills on this machine.

They need root, the cgroup v1 memory controller at /sys/fs/cgroup/memory
(or v2 with memory enabled) and a readable /dev/kmsg; `require_oom_env()`
skips with the reason when one is missing.
"""
import io
import json
import os
import queue
import shutil
import signal
import socket
import ssl
import subprocess
import threading
import time

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("OOMLENS_BUILD") or os.path.join(REPO, "build")
AGENT = os.path.join(BUILD, "bin", "oomlens-agent")
SIDECAR = os.path.join(BUILD, "bin", "oomlens-sidecar")
# the sidecar's uploader, which it runs from beside itself
UPLOADER = os.path.join(BUILD, "bin", "oomlens-sidecar-upload")
VICTIMS = os.path.join(BUILD, "victims")
V1_ROOT = "/sys/fs/cgroup/memory"
V2_ROOT = "/sys/fs/cgroup"


def cgroup_root():
    """The memory hierarchy's mount point and its mode, or (None, None)."""
    if os.path.exists(os.path.join(V1_ROOT, "memory.usage_in_bytes")) or \
            os.path.exists(os.path.join(V1_ROOT, "cgroup.procs")):
        return V1_ROOT, 1
    try:
        with open(os.path.join(V2_ROOT, "cgroup.controllers")) as f:
            if "memory" in f.read().split():
                return V2_ROOT, 2
    except OSError:
        pass
    return None, None


def require_oom_env():
    if os.geteuid() != 0:
        pytest.skip("needs root to create memory cgroups and read /dev/kmsg")
    root, _ = cgroup_root()
    if root is None:
        pytest.skip("no cgroup memory controller on this machine")
    try:
        fd = os.open("/dev/kmsg", os.O_RDONLY | os.O_NONBLOCK)
        os.close(fd)
    except OSError as e:
        pytest.skip(f"/dev/kmsg not readable: {e}")
    if not os.access(AGENT, os.X_OK):
        pytest.fail(f"{AGENT} not built (run make)")


class Cgroup:
    """A test memory cgroup tree under the hierarchy's root; removed (tasks
    killed first) by cleanup(), children before parents."""

    def __init__(self, name):
        self.root, self.mode = cgroup_root()
        self.name = "/" + name
        self.made = []
        self.mkdir("")

    def fs(self, sub=""):
        return os.path.join(self.root, (self.name + sub).lstrip("/"))

    def path(self, sub=""):
        return self.name + sub

    def mkdir(self, sub, limit_mb=None):
        p = self.fs(sub)
        os.makedirs(p, exist_ok=True)
        self.made.append(p)
        if self.mode == 2 and sub == "":
            self._enable_v2_memory(p)
        if limit_mb is not None:
            self.set_limit(sub, limit_mb)
        return self.path(sub)

    def _enable_v2_memory(self, p):
        parent = os.path.dirname(p)
        with open(os.path.join(parent, "cgroup.subtree_control"), "w") as f:
            f.write("+memory")

    def set_limit(self, sub, mb):
        fname = "memory.limit_in_bytes" if self.mode == 1 else "memory.max"
        with open(os.path.join(self.fs(sub), fname), "w") as f:
            f.write(str(mb << 20))
        if self.mode == 1:
            # No swap here, but keep memsw from hiding a kill if there is.
            try:
                with open(os.path.join(self.fs(sub), "memory.memsw.limit_in_bytes"), "w") as f:
                    f.write(str(mb << 20))
            except OSError:
                pass

    def read(self, sub, fname):
        with open(os.path.join(self.fs(sub), fname)) as f:
            return f.read()

    def cleanup(self):
        for p in sorted(self.made, key=len, reverse=True):
            for _ in range(50):
                try:
                    with open(os.path.join(p, "cgroup.procs")) as f:
                        pids = [int(x) for x in f.read().split()]
                except OSError:
                    pids = []
                for pid in pids:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except OSError:
                        pass
                try:
                    os.rmdir(p)
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.05)


def run_in_cgroup(cg, sub, argv, **kw):
    """Starts argv inside cgroup sub; returns the Popen (stdout piped)."""
    procs = os.path.join(cg.fs(sub), "cgroup.procs")

    def enter():
        with open(procs, "w") as f:
            f.write(str(os.getpid()))
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=enter, text=True, **kw)


def hog(cg, sub, *args):
    """Runs the hog victim in the cgroup until it is killed; returns
    (pid of the victim, parsed JSON events)."""
    p = run_in_cgroup(cg, sub, [os.path.join(VICTIMS, "hog"), *args])
    out, err = p.communicate(timeout=60)
    events = [json.loads(l) for l in out.splitlines() if l.startswith("{")]
    victim = None
    for e in events:
        if e["event"] in ("start", "child"):
            victim = e["pid"]
    return victim, events, p.returncode


class AgentProcess:
    """An oomlens-agent process started with args; its stdout lines (one
    JSON object a kill) collected, its stderr kept; returns once it logs
    "ready" (or raises with its log when it does not start)."""

    def __init__(self, args, env=None):
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True,
                                     env=env)
        self.lines = queue.Queue()
        self.stderr = []
        ready = threading.Event()

        def out():
            for line in self.proc.stdout:
                self.lines.put(json.loads(line))

        def err():
            for line in self.proc.stderr:
                self.stderr.append(line)
                if "msg=\"ready\"" in line:
                    ready.set()
            ready.set()
        threading.Thread(target=out, daemon=True).start()
        threading.Thread(target=err, daemon=True).start()
        if not ready.wait(10) or self.proc.poll() is not None:
            raise AssertionError("agent did not start:\n" + "".join(self.stderr))

    def next(self, timeout=10):
        try:
            return self.lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError("no report line within %ss; agent log:\n%s"
                                 % (timeout, "".join(self.stderr[-30:])))

    def log(self, tail=60):
        """The agent's last log lines, for an assertion's message."""
        return "agent log:\n" + "".join(self.stderr[-tail:])

    def drain(self, wait=0.5):
        time.sleep(wait)
        got = []
        while not self.lines.empty():
            got.append(self.lines.get())
        return got

    def stop(self):
        """Stops the agent; its exit status. Every manifest it wrote was
        checked against forensics/manifest.h: a mismatch it logged fails
        the test that ran it."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        rc = self.proc.wait(timeout=10)
        bad = [l for l in self.stderr if "(docs/manifest.md)" in l]
        assert not bad, "manifest does not match its description:\n" + \
            "".join(bad[:5])
        return rc


class Agent(AgentProcess):
    """oomlens-agent run --standalone, its stdout lines collected."""

    def __init__(self, watch, state_dir, extra=()):
        self.state_dir = state_dir
        args = [AGENT, "run", "--standalone", "--state-dir", state_dir,
                "--log-level", "debug"]
        for w in watch:
            args += ["--watch", w]
        super().__init__(args + list(extra))


class Sidecar:
    """oomlens-sidecar run --standalone on one cgroup, writing a spool."""

    def __init__(self, cgroup_path, spool, extra=()):
        self.spool = spool
        os.makedirs(os.path.dirname(spool), exist_ok=True)
        self.log = open(spool + ".log", "w")
        self.proc = subprocess.Popen(
            [SIDECAR, "run", "--standalone", "--cgroup", cgroup_path,
             "--spool", spool, "--interval-ms", "250", *extra],
            stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 10
        while not os.path.exists(os.path.join(spool, "manifest.json")):
            if self.proc.poll() is not None or time.time() > deadline:
                raise AssertionError("sidecar did not start: "
                                     + open(spool + ".log").read())
            time.sleep(0.05)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        rc = self.proc.wait(timeout=10)
        self.log.close()
        return rc


def bundle_files(path):
    """{name inside the bundle dir: bytes} of a bundle .tar.gz."""
    import tarfile
    with tarfile.open(path) as t:
        return {m.name.split("/", 1)[1]: t.extractfile(m).read()
                for m in t.getmembers() if m.isfile()}


def ledger_part(diag, name):
    for p in diag["ledger"]:
        if p["name"] == name:
            return p["bytes"]
    return 0


def free_port():
    """A free TCP port on 127.0.0.1: another agent or server on this host
    may hold a default one."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def status_kib(pid, key):
    """A kB field of /proc/PID/status (VmRSS, VmHWM, RssAnon...); 0 when
    the kernel does not show it."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def cpu_ticks(pid):
    """User + system CPU of a process so far, in clock ticks."""
    with open("/proc/%d/stat" % pid) as f:
        st = f.read().rsplit(")", 1)[1].split()
    return int(st[11]) + int(st[12])


def wait_oom_ratelimit():
    """The kernel prints at most 10 full OOM reports per 5 s, then bare
    "Killed process" lines. A test that wants a full report waits until 5 s
    have passed since the last OOM kill anyone made on this host."""
    last = None
    fd = os.open("/dev/kmsg", os.O_RDONLY | os.O_NONBLOCK)
    try:
        while True:
            try:
                rec = os.read(fd, 8192)
            except BlockingIOError:
                break
            except BrokenPipeError:
                continue
            head, _, text = rec.partition(b";")
            if b"Killed process" in text:
                last = int(head.split(b",")[2])
    finally:
        os.close(fd)
    if last is None:
        return
    now = time.clock_gettime(time.CLOCK_MONOTONIC) * 1e6
    wait = (last + 5.2e6 - now) / 1e6
    if wait > 0:
        time.sleep(min(wait, 6))


class Zeros(io.RawIOBase):
    """A file of n zero bytes that never sits in memory (the body of a
    gzip bomb's tar entry)."""

    def __init__(self, n):
        self.left = n

    def readable(self):
        return True

    def readinto(self, b):
        k = min(len(b), self.left)
        b[:k] = bytes(k)
        self.left -= k
        return k


JAVA_DIR = os.path.join(BUILD, "victims", "java")
SRC_JAVA = os.path.join(os.path.dirname(__file__), "..", "victims", "java")


def javac(name):
    """Compiles tests/victims/java/NAME.java into JAVA_DIR (skips the test
    on a machine without a JDK)."""
    if shutil.which("javac") is None or shutil.which("java") is None:
        pytest.skip("no JDK (javac/java) on this machine")
    os.makedirs(JAVA_DIR, exist_ok=True)
    subprocess.run(["javac", "-nowarn", "-d", JAVA_DIR,
                    os.path.join(SRC_JAVA, name + ".java")], check=True)


def agent_env(tmp_path_factory, name):
    """A module's scenario setting: test cgroup oomlens-test-NAME-<pid>
    watched by a standalone agent with a spool dir. Yields (cgroup,
    agent, tmp) and cleans both up (a generator for a fixture)."""
    require_oom_env()
    tmp = tmp_path_factory.mktemp(name)
    cg = Cgroup("oomlens-test-%s-%d" % (name, os.getpid()))
    agent = Agent([cg.path()], str(tmp / "state"),
                  ["--spool-dir", str(tmp / "spool")])
    yield cg, agent, tmp
    agent.stop()
    cg.cleanup()


def make_cert(d, name, cn="localhost"):
    """A self-signed certificate for localhost and 127.0.0.1 in d:
    (cert path, key path)."""
    key, crt = os.path.join(d, name + ".key"), os.path.join(d, name + ".crt")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048",
                    "-nodes", "-keyout", key, "-out", crt, "-days", "1",
                    "-subj", "/CN=" + cn, "-addext",
                    "subjectAltName=DNS:localhost,IP:127.0.0.1"],
                   check=True, capture_output=True)
    return crt, key


def peer_cert(port):
    """The PEM certificate a TLS server on 127.0.0.1:port presents."""
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        with ctx.wrap_socket(s, server_hostname="localhost") as t:
            der = t.getpeercert(binary_form=True)
    return ssl.DER_cert_to_PEM_cert(der).strip()


def swap_cert_and_wait(port, crt, key, d):
    """Replaces the pair a server on port was started with by a new one
    (renamed over both, as a Secret volume swaps them) and waits until it
    is the one served; asserts it was (and that it differs)."""
    first = peer_cert(port)
    assert first == open(crt).read().strip()
    crt2, key2 = make_cert(d, "swapped", "second")
    os.rename(key2, key)
    os.rename(crt2, crt)
    want = open(crt).read().strip()
    assert want != first
    deadline = time.time() + 10
    while peer_cert(port) != want and time.time() < deadline:
        time.sleep(0.2)
    assert peer_cert(port) == want, "the new certificate is served"
