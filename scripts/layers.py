#!/usr/bin/env python3
"""Checks the layering of common/ and of the programs built on it
(docs/architecture.md):

1. every #include of a project header names a layer (common/) or a room
   (a program's) that the including one may use: lower layers never
   include higher ones, a room only the rooms its row of ROOMS names;
2. no cycle among the project's headers;
3. no cycle among modules (one .c file each) in who calls whom, read from
   the objects' symbol tables, in common/ and in each program: two
   modules that need each other are one module, or share a lower one;
4. no call from a module into a layer or room its row does not name.

Usage: layers.py [--root ROOT] [BUILD_DIR]. Exits 1 on a finding,
printing each one. ROOT (default: this checkout) is where the sources
are; tests/scripts/test_layers.py runs it on planted trees."""
import fnmatch
import os
import re
import subprocess
import sys

# Who may include whom in common/. Programs may use every layer.
ALLOWED = {
    "base": set(),
    "kernel": {"base"},
    "inspect": {"base", "kernel"},
    "kube": {"base"},
    "forensics": {"base", "kernel", "inspect", "forensics/runtimes"},
    # one file per runtime (runtime.h): they use the diagnosis' types and
    # its frame (forensics/diagnosis_frame.c); diagnosis.c loops over
    # their table. The module check below keeps the two from calling
    # each other both ways.
    "forensics/runtimes": {"base", "kernel", "inspect", "forensics"},
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)

# The programs, each a folder cut into rooms. A room is named by patterns
# of paths relative to the folder (the first room that matches a file
# owns it; a file no room matches is a finding, so a new file is placed
# here). "calls" is what else the room may call and include, besides
# itself, the program's shared headers and all of common/. Shared headers
# hold the types the rooms pass each other; they may include any room's
# header, and hold no code.
PROGRAMS = {
    "agent": {
        "dir": "agent/src",
        "shared": ["agent.h", "commands.h"],
        "rooms": {
            # main.c dispatches, cmd_*.c are the subcommands: they start
            # whatever their mode needs; run_*.[ch] plug a mode into
            # run (cluster mode's hooks and sources: run_cluster.c, and
            # its late snapshot: run_late_snap.c; standalone
            # publishing's hooks: run_standalone.c)
            "top": (["main.c", "cmd_*.c", "run_*"],
                    {"detector", "kill", "publish", "obs", "injector"}),
            "detector": (["detector/*"], set()),
            "kill": (["kill/*"], {"detector", "obs"}),
            "publish": (["publish/*"], {"obs"}),
            "obs": (["obs/*"], set()),
            "injector": (["injector/*"], {"obs"}),
        },
    },
    "sidecar": {
        "dir": "sidecar/src",
        "shared": ["commands.h"],
        "rooms": {
            "main": (["main.c"], {"cmd"}),
            # cmd_trim.c uses cmd_malloc_stats.c's glibc trim
            "cmd": (["cmd_*.c"], {"run", "pod"}),
            # pod mode: the Downward API, annotations, uploads
            "pod": (["pod*"], {"run"}),
            # the flight recorder's threads and their parts
            "run": (["run*"], set()),
        },
    },
    # the sidecar's uploader, a program of its own (sidecar/upload/main.c)
    "sidecar-upload": {
        "dir": "sidecar/upload",
        "shared": [],
        "rooms": {
            "main": (["main.c"], {"upload"}),
            "upload": (["upload.*"], set()),
        },
    },
    "plugin": {
        "dir": "kubectl-oomlens/src",
        "shared": ["plugin.h"],
        "rooms": {
            "main": (["main.c"], {"args", "complete", "commands", "cmd", "util"}),
            # the command line, parsed alike for commands and completion
            "args": (["args.c"], {"commands", "util"}),
            # kubectl_complete-oomlens: candidates from the table
            "complete": (["complete.c"], {"args", "commands", "util"}),
            # the table of commands points at what runs each
            "commands": (["commands.c"], {"cmd", "util"}),
            "cmd": (["cmd_*.c"], {"util"}),
            "util": (["util.c"], set()),
        },
    },
}


def sources(root):
    for sub in sorted(ALLOWED):
        d = os.path.join(root, "common", sub)
        if not os.path.isdir(d):
            continue
        for name in sorted(os.listdir(d)):
            if name.endswith((".c", ".h")):
                yield sub, os.path.join(d, name)


def resolve(root, sub, inc):
    """The path of an included project header, or None (a system one)."""
    first = inc.split("/", 1)[0]
    if "/" in inc and first in ALLOWED:
        return os.path.join(root, "common", inc)
    local = os.path.join(root, "common", sub, inc)
    return local if os.path.exists(local) else None


def includes(path):
    with open(path, encoding="utf-8") as f:
        return INCLUDE.findall(f.read())


def check_includes(root):
    bad, graph = [], {}
    for sub, path in sources(root):
        deps = graph.setdefault(path, set())
        for inc in includes(path):
            target = resolve(root, sub, inc)
            if target is None:
                continue
            tsub = os.path.relpath(os.path.dirname(target),
                                   os.path.join(root, "common"))
            if tsub != sub and tsub not in ALLOWED[sub]:
                bad.append(f"{os.path.relpath(path, root)}: includes "
                           f"\"{inc}\" ({sub} may use: "
                           f"{', '.join(sorted(ALLOWED[sub])) or 'nothing'})")
            if target.endswith(".h"):
                deps.add(target)
    return bad, graph


def cycles(graph):
    """Strongly connected components with more than one node (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1 or v in graph.get(v, ()):
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in list(graph):
        if v not in index:
            visit(v)
    return out


def symbols(obj):
    res = subprocess.run(["nm", "--defined-only", "-g", obj],
                         capture_output=True, text=True, check=True)
    defined = {l.split()[-1] for l in res.stdout.splitlines() if l.strip()}
    res = subprocess.run(["nm", "-u", obj], capture_output=True, text=True,
                         check=True)
    used = {l.split()[-1] for l in res.stdout.splitlines() if l.strip()}
    return defined, used


def call_graph(objects):
    """{module: {modules it calls}} from {module: object file}."""
    defs, uses = {}, {}
    for mod, obj in sorted(objects.items()):
        defined, used = symbols(obj)
        uses[mod] = used
        for s in defined:
            defs[s] = mod
    return {m: {defs[s] for s in u if s in defs and defs[s] != m}
            for m, u in uses.items()}


def module_graph(build):
    objdir = os.path.join(build, "obj", "common")
    objects = {}
    for sub in sorted(ALLOWED):
        d = os.path.join(objdir, sub)
        if not os.path.isdir(d):
            continue
        for name in sorted(os.listdir(d)):
            if name.endswith(".o"):
                objects[f"{sub}/{name[:-2]}"] = os.path.join(d, name)
    return call_graph(objects)


def check_common(root, build):
    findings, graph = check_includes(root)
    for comp in cycles(graph):
        findings.append("include cycle: " +
                        " -> ".join(os.path.relpath(p, root) for p in comp))
    if not os.path.isdir(os.path.join(root, "common")):
        return findings, {}
    mods = module_graph(build)
    if not mods:
        findings.append(f"no objects under {build}/obj/common: build first")
    for comp in cycles(mods):
        findings.append("modules that call each other: " + ", ".join(comp))
    for m, deps in sorted(mods.items()):
        sub = m.rsplit("/", 1)[0]
        for d in sorted(deps):
            dsub = d.rsplit("/", 1)[0]
            if dsub != sub and dsub not in ALLOWED[sub]:
                findings.append(f"{m} calls into {d} ({sub} may use: "
                                f"{', '.join(sorted(ALLOWED[sub])) or 'nothing'})")
    return findings, mods


# ---- the programs ----

def room_of(prog, rel):
    """The room of a file (relative to the program's folder): a room's
    name, "shared" for a shared header, or None."""
    if rel in prog["shared"]:
        return "shared"
    for room, (patterns, _) in prog["rooms"].items():
        if any(fnmatch.fnmatchcase(rel, p) for p in patterns):
            return room
    return None


def may_use(prog, room, other):
    if room == other or other == "shared" or room == "shared":
        return True
    return other in prog["rooms"][room][1]


def program_files(root, prog):
    top = os.path.join(root, prog["dir"])
    for d, _, names in sorted(os.walk(top)):
        for name in sorted(names):
            if name.endswith((".c", ".h")):
                path = os.path.join(d, name)
                yield os.path.relpath(path, top), path


def resolve_in_program(root, prog, path, inc):
    """A program's include: beside the file, then from the program's folder
    (-Iagent/src); a common/ header or a system one is None."""
    for base in (os.path.dirname(path), os.path.join(root, prog["dir"])):
        cand = os.path.normpath(os.path.join(base, inc))
        if os.path.exists(cand):
            return cand
    return None


def check_program(root, build, name, prog):
    """Findings for one program: rooms of files, includes, calls, cycles.
    Returns (findings, number of modules, number of calls)."""
    top = os.path.join(root, prog["dir"])
    findings, hgraph, rooms, objects = [], {}, {}, {}
    if not os.path.isdir(top):
        return findings, 0, 0

    def allowed(room):
        return ", ".join(sorted(prog["rooms"][room][1])) or "no other room"

    for rel, path in program_files(root, prog):
        room = room_of(prog, rel)
        rooms[rel] = room
        if room is None:
            findings.append(f"{prog['dir']}/{rel} is in no room of "
                            f"{name}'s table (scripts/layers.py PROGRAMS)")
            continue
        if room == "shared" and rel.endswith(".c"):
            findings.append(f"{prog['dir']}/{rel}: a shared header's name "
                            "on a source file")
        deps = hgraph.setdefault(path, set())
        for inc in includes(path):
            target = resolve_in_program(root, prog, path, inc)
            if target is None:
                continue
            trel = os.path.relpath(target, top)
            troom = room_of(prog, trel)
            if troom is not None and not may_use(prog, room, troom):
                findings.append(f"{prog['dir']}/{rel}: includes \"{inc}\" "
                                f"(room {troom}; {room} may use: "
                                f"{allowed(room)})")
            if target.endswith(".h"):
                deps.add(target)
        if rel.endswith(".c"):
            obj = os.path.join(build, "obj", prog["dir"], rel[:-2] + ".o")
            if os.path.exists(obj):
                objects[rel[:-2]] = obj
            else:
                findings.append(f"no object {obj}: build first")
    for comp in cycles(hgraph):
        findings.append("include cycle: " +
                        " -> ".join(os.path.relpath(p, root) for p in comp))
    mods = call_graph(objects)
    for comp in cycles(mods):
        findings.append(f"{name}: modules that call each other: " +
                        ", ".join(f"{prog['dir']}/{m}" for m in comp))
    for m, deps in sorted(mods.items()):
        room = rooms[m + ".c"]
        for d in sorted(deps):
            droom = rooms[d + ".c"]
            if not may_use(prog, room, droom):
                findings.append(f"{name}: {prog['dir']}/{m} calls into "
                                f"{prog['dir']}/{d} (room {droom}; {room} "
                                f"may use: {allowed(room)})")
    return findings, len(mods), sum(len(d) for d in mods.values())


def main(argv):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    args = list(argv)
    if args[:1] == ["--root"] and len(args) >= 2:
        root = os.path.abspath(args[1])
        del args[:2]
    build = args[0] if args else os.path.join(root, "build")
    findings, mods = check_common(root, build)
    summary = [f"common/ {len(mods)} modules, "
               f"{sum(len(d) for d in mods.values())} calls"]
    for name, prog in PROGRAMS.items():
        found, n_mods, n_calls = check_program(root, build, name, prog)
        findings += found
        if n_mods:
            summary.append(f"{name} {n_mods} modules, {n_calls} calls")
    for f in findings:
        print(f"lint: layers: {f}")
    if not findings:
        print(f"lint: layers ok ({'; '.join(summary)} between them, "
              "no cycle)")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
