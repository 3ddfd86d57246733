"""scripts/layers.py on planted trees: real objects compiled here, read
through nm as make lint reads the build's, so that a cycle or a call
across rooms is reported and the exit status is 1; and its tables
themselves (every room named exists, no two rooms may use each other)."""
import os
import shutil
import subprocess
import sys

import pytest

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LAYERS = os.path.join(TOP, "scripts", "layers.py")
sys.path.insert(0, os.path.join(TOP, "scripts"))
import layers  # noqa: E402

CC = os.environ.get("CC", "cc")


def plant(root, files):
    """Writes {path: C text} under root and compiles each .c into
    root/build/obj/<path>.o, as the Makefile does."""
    if shutil.which(CC) is None or shutil.which("nm") is None:
        pytest.fail(f"{CC} and nm are needed (make deps)")
    for rel, text in files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
    for rel in files:
        if rel.endswith(".c"):
            obj = os.path.join(root, "build", "obj", rel[:-2] + ".o")
            os.makedirs(os.path.dirname(obj), exist_ok=True)
            subprocess.run([CC, "-c", "-o", obj, "-I", os.path.join(root, "agent/src"),
                            os.path.join(root, rel)], check=True)


def run(root):
    p = subprocess.run([sys.executable, LAYERS, "--root", str(root),
                        os.path.join(str(root), "build")],
                       capture_output=True, text=True)
    return p.returncode, p.stdout.splitlines()


def fn(name, calls=()):
    body = "".join(f"\t{c}();\n" for c in calls)
    decls = "".join(f"void {c}(void);\n" for c in calls)
    return f"{decls}void {name}(void);\nvoid {name}(void)\n{{\n{body}}}\n"


def test_two_agent_modules_that_call_each_other_fail(tmp_path):
    plant(tmp_path, {
        "agent/src/main.c": fn("main_fn", ["a_fn"]),
        "agent/src/detector/a.c": fn("a_fn", ["b_fn"]),
        "agent/src/detector/b.c": fn("b_fn", ["a_fn"]),
    })
    rc, out = run(tmp_path)
    assert rc == 1
    assert out == ["lint: layers: agent: modules that call each other: "
                   "agent/src/detector/a, agent/src/detector/b"]


def test_a_cycle_through_three_modules_and_two_rooms_is_one_finding(tmp_path):
    plant(tmp_path, {
        "agent/src/main.c": fn("main_fn", ["publish"]),
        "agent/src/publish/pub.c": fn("publish", ["sample"]),
        "agent/src/obs/sample.c": fn("sample", ["hist"]),
        "agent/src/obs/hist.c": fn("hist", ["publish"]),
    })
    rc, out = run(tmp_path)
    assert rc == 1
    assert ("lint: layers: agent: modules that call each other: "
            "agent/src/obs/hist, agent/src/obs/sample, "
            "agent/src/publish/pub") in out
    # the call back is also one the table forbids
    assert ("lint: layers: agent: agent/src/obs/hist calls into "
            "agent/src/publish/pub (room publish; obs may use: "
            "no other room)") in out
    assert len(out) == 2


def test_main_and_its_mode_calling_each_other_fail_in_the_sidecar(tmp_path):
    # the shape the sidecar had: main's privileges read by cmd_run
    plant(tmp_path, {
        "sidecar/src/main.c": fn("main_fn", ["cmd_run"]) + "int run_privs = 1;\n",
        "sidecar/src/cmd_run.c": "extern int run_privs;\n" + fn("cmd_run") +
        "int get(void);\nint get(void)\n{\n\treturn run_privs;\n}\n",
    })
    rc, out = run(tmp_path)
    assert rc == 1
    assert ("lint: layers: sidecar: modules that call each other: "
            "sidecar/src/cmd_run, sidecar/src/main") in out
    assert ("lint: layers: sidecar: sidecar/src/cmd_run calls into "
            "sidecar/src/main (room main; cmd may use: pod, run)") in out


def test_a_cycle_in_common_fails(tmp_path):
    plant(tmp_path, {
        "common/base/x.c": fn("x_fn", ["y_fn"]),
        "common/base/y.c": fn("y_fn", ["x_fn"]),
    })
    rc, out = run(tmp_path)
    assert rc == 1
    assert out == ["lint: layers: modules that call each other: base/x, base/y"]


def test_an_upward_include_and_a_file_in_no_room_fail(tmp_path):
    plant(tmp_path, {
        "agent/src/kill/capture.h": "void capture(void);\n",
        "agent/src/kill/capture.c": '#include "kill/capture.h"\n' + fn("capture"),
        "agent/src/obs/metrics.c": '#include "kill/capture.h"\n' + fn("metrics"),
        "agent/src/stray/x.c": fn("x_fn"),
    })
    rc, out = run(tmp_path)
    assert rc == 1
    assert sorted(out) == sorted([
        'lint: layers: agent/src/obs/metrics.c: includes "kill/capture.h" '
        "(room kill; obs may use: no other room)",
        "lint: layers: agent/src/stray/x.c is in no room of agent's table "
        "(scripts/layers.py PROGRAMS)",
    ])


def test_calls_down_the_rooms_pass(tmp_path):
    plant(tmp_path, {
        "agent/src/agent.h": "struct agent { int x; };\n",
        "agent/src/main.c": fn("main_fn", ["cmd_run"]),
        "agent/src/cmd_run.c": '#include "agent.h"\n' + fn("cmd_run", ["capture", "correlate"]),
        "agent/src/kill/capture.c": '#include "agent.h"\n' + fn("capture", ["correlate", "metrics"]),
        "agent/src/detector/correlate.c": fn("correlate"),
        "agent/src/obs/metrics.c": fn("metrics"),
    })
    rc, out = run(tmp_path)
    assert rc == 0, out
    assert out == ["lint: layers ok (common/ 0 modules, 0 calls; agent 5 "
                   "modules, 5 calls between them, no cycle)"]


def test_cycles_on_a_synthetic_graph():
    g = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"},
         "f": set()}
    assert sorted(layers.cycles(g)) == [["a", "b", "c"], ["e"]]


def test_the_tables_name_rooms_that_exist_and_no_two_rooms_use_each_other():
    for name, prog in layers.PROGRAMS.items():
        rooms = prog["rooms"]
        graph = {}
        for room, (_, calls) in rooms.items():
            assert calls <= set(rooms), (name, room, calls - set(rooms))
            graph[room] = set(calls)
        assert layers.cycles(graph) == [], name
    # common/'s layers name layers that exist; forensics/ and
    # forensics/runtimes/ may include each other (the module check keeps
    # them from calling each other both ways), no other two
    for sub, uses in layers.ALLOWED.items():
        assert uses <= set(layers.ALLOWED), (sub, uses)
    both = {tuple(sorted((a, b))) for a, uses in layers.ALLOWED.items()
            for b in uses if a in layers.ALLOWED[b]}
    assert both == {("forensics", "forensics/runtimes")}


def test_every_file_of_the_programs_is_in_a_room():
    for name, prog in layers.PROGRAMS.items():
        files = list(layers.program_files(TOP, prog))
        assert files, name
        for rel, _ in files:
            assert layers.room_of(prog, rel) is not None, f"{name}: {rel}"
