"""oomlens-sidecar in a pod in the shapes the injector gives it under Pod
Security baseline and restricted (docs/sidecar-pod.md, "What each shape
captures"), with the real pods of test_sidecar_pod.py (its fixture: rootful
podman, runc, a shared PID namespace): the app is OOM-killed for real while
the sidecar runs as the app's uid with no capability at all, or as root
with only SETUID, SETGID and KILL, or as a uid that is not the app's. Each
test reads the spool the sidecar wrote and its manifest's "capture"
section. Real OOM kills: run under the host lock."""
import json
import os
import subprocess

from test_sidecar_pod import SIDE_ENV, pod, podman, write_annotations  # noqa: F401

LIMIT = 64 << 20
USER = ["--user", "1000:1000"]
NO_CAPS = ["--cap-drop=all", "--security-opt", "no-new-privileges"]
SETID_CAPS = ["--cap-drop=all", "--cap-add=SETUID,SETGID,KILL"]


def start_app(env, root, name, user, extra_env=()):
    """The hog in its own container of the pod, at most LIMIT; returns the
    container's ID."""
    os.makedirs(os.path.join(root, "spool"), exist_ok=True)
    os.chmod(os.path.join(root, "spool"), 0o777)  # an emptyDir's mode
    return podman(env, "run", "-d", "--name", name + "-app", "--pod", name,
                  "--memory", str(LIMIT), *user, *extra_env,
                  "--rootfs", root, "/bin/hog", "--step-mb", "1",
                  "--delay-ms", "150").stdout.strip()


def run_sidecar(env, root, name, args, level):
    r = podman(env, "run", "--name", name + "-side", "--pod", name, *args,
               *SIDE_ENV, "-e", "OOMLENS_POD_SECURITY=" + level,
               "--rootfs", root, "/bin/oomlens-sidecar", "run", "--spool",
               "/spool", check=False, timeout=120)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    st = podman(env, "inspect", name + "-app", "--format",
                "{{.State.ExitCode}}").stdout.strip()
    assert st == "137", "the app must have been OOM-killed: " + out
    return out


def spool(root):
    d = os.path.join(root, "spool")
    man = json.load(open(os.path.join(d, "manifest.json")))
    tl = json.load(open(os.path.join(d, "timeline.json")))
    snaps = sorted(os.listdir(os.path.join(d, "snapshots")))
    return d, man, tl, snaps


def misses(man):
    return {(m["what"], m.get("pid", 0)): m["why"]
            for m in man["capture"]["not_captured"]}


def snapshot_files(d, snaps):
    """The files of each process in the newest snapshot, by pid."""
    procs = os.path.join(d, "snapshots", snaps[-1], "processes")
    return {int(p): set(os.listdir(os.path.join(procs, p)))
            for p in os.listdir(procs)}


def test_restricted_sidecar_as_the_apps_uid_without_capabilities(pod):
    """Restricted, uid known: both 1000:1000, the sidecar with no
    capability and no_new_privs. The app's smaps are its own uid's: the
    snapshots have them; only the allocator probe is missing."""
    env, root, create = pod
    name = create()
    write_annotations(root, 'oomlens.io/thresholds="50,90"\n')
    start_app(env, root, name, USER, ["-e", "OOMLENS_CONTAINER=app"])
    out = run_sidecar(env, root, name, [*USER, *NO_CAPS], "restricted")
    assert 'recording container \\"app\\"' in out, out
    assert "through its cgroup under /proc/" in out, out
    assert "snapshot taken: reason=threshold-90" in out, out
    d, man, tl, snaps = spool(root)
    cap = man["capture"]
    assert (cap["pod_security"], cap["uid"], cap["gid"]) == \
        ("restricted", 1000, 1000), cap
    assert cap["capabilities"] == [], cap
    miss = misses(man)
    assert set(miss) == {("allocator probe", 0)}, miss
    assert "without CAP_SYS_PTRACE" in miss[("allocator probe", 0)]
    assert {s["limit"] for s in tl["samples"] if s["limit"]} == {LIMIT}
    assert max(s["usage"] for s in tl["samples"]) >= 0.9 * LIMIT
    files = snapshot_files(d, snaps)
    assert files and all({"pmap.txt", "classes.json", "smaps_rollup"} <= f
                         for f in files.values()), files
    st = os.stat(os.path.join(d, "manifest.json"))
    assert (st.st_uid, st.st_gid) == (1000, 1000)


def test_baseline_root_sidecar_reads_smaps_through_the_fsuid_switch(pod):
    """Baseline, uid unknown: the sidecar as root with only SETUID, SETGID
    and KILL, the app as 1000:1000. /proc/<pid>/root, environ and smaps are
    refused to root without CAP_SYS_PTRACE and read under the app's fs
    ids."""
    env, root, create = pod
    name = create()
    write_annotations(root, 'oomlens.io/thresholds="50,90"\n')
    start_app(env, root, name, USER, ["-e", "OOMLENS_CONTAINER=app"])
    out = run_sidecar(env, root, name, SETID_CAPS, "baseline")
    assert 'recording container \\"app\\"' in out, out  # environ read
    assert "through its cgroup under /proc/" in out, out  # root followed
    assert "snapshot taken: reason=threshold-90" in out, out
    d, man, tl, snaps = spool(root)
    cap = man["capture"]
    assert (cap["pod_security"], cap["uid"], cap["gid"]) == \
        ("baseline", 0, 0), cap
    assert cap["capabilities"] == ["KILL", "SETGID", "SETUID"], cap
    assert set(misses(man)) == {("allocator probe", 0)}, man
    files = snapshot_files(d, snaps)
    assert files and all({"pmap.txt", "classes.json", "smaps_rollup"} <= f
                         for f in files.values()), files
    assert {s["limit"] for s in tl["samples"] if s["limit"]} == {LIMIT}


def test_sidecar_of_another_uid_says_what_it_could_not_read(pod):
    """The sidecar as 1000:1000 without capabilities, the app as root: its
    /proc/<pid>/root and smaps are out of reach. The sidecar records the
    app by its pids (RSS from the world-readable status) with the Downward
    API limit, and says in the manifest what it could not capture."""
    env, root, create = pod
    name = create()
    write_annotations(root, 'oomlens.io/thresholds="50,90"\n')
    cid = start_app(env, root, name, [])
    limit_env = "OOMLENS_LIMIT_%s=%d" % (cid[:12].upper(), LIMIT)
    out = run_sidecar(env, root, name, [*USER, *NO_CAPS, "-e", limit_env],
                      "nonsense")
    assert 'OOMLENS_POD_SECURITY=\\"nonsense\\": expected privileged' in out
    assert "by its pids" in out, out
    assert "stopped: all processes exited" in out, out
    d, man, tl, snaps = spool(root)
    cap = man["capture"]
    assert (cap["pod_security"], cap["uid"], cap["gid"]) == \
        (None, 1000, 1000), cap
    miss = misses(man)
    assert "uid 0 differs from the sidecar's 1000" in miss[("cgroup", 0)], miss
    pids = [p for (w, p) in miss if w == "smaps"]
    assert len(pids) == 1 and pids[0] > 1, miss
    assert "uid 0 differs from the sidecar's 1000" in miss[("smaps", pids[0])]
    # the timeline still has the app, from /proc/<pid>/status
    assert {s["limit"] for s in tl["samples"] if s["limit"]} == {LIMIT}
    # usage is the RSS sum of the pids: file pages the cgroup was not
    # charged for (the shared libc) count too, so it may pass the limit
    top = max(s["usage"] for s in tl["samples"])
    assert 0.5 * LIMIT <= top <= 1.1 * LIMIT, top
    files = snapshot_files(d, snaps)
    assert files and all("status" in f and "pmap.txt" not in f
                         for f in files.values()), files
