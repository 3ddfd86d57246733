#!/usr/bin/env python3
"""Checks the layering of common/ (docs/architecture.md):

1. every #include of a project header names a subsystem the including
   subsystem may use (lower layers never include higher ones);
2. no cycle among the project's headers;
3. no cycle among modules (one .c file each) in who calls whom, read from
   the objects' symbol tables: two modules that need each other are one
   module, or share a lower one.

Usage: layers.py BUILD_DIR. Exits 1 on a finding, printing each one."""
import os
import re
import subprocess
import sys

# Who may include whom. Programs (agent/, sidecar/, tests/) may use them all.
ALLOWED = {
    "base": set(),
    "kernel": {"base"},
    "inspect": {"base", "kernel"},
    "kube": {"base"},
    "forensics": {"base", "kernel", "inspect"},
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def sources(root):
    for sub in sorted(ALLOWED):
        d = os.path.join(root, "common", sub)
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


def check_includes(root):
    bad, graph = [], {}
    for sub, path in sources(root):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        deps = graph.setdefault(path, set())
        for inc in INCLUDE.findall(text):
            target = resolve(root, sub, inc)
            if target is None:
                continue
            tsub = os.path.basename(os.path.dirname(target))
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


def module_graph(build):
    objdir = os.path.join(build, "obj", "common")
    defs, uses = {}, {}
    for sub in sorted(ALLOWED):
        d = os.path.join(objdir, sub)
        if not os.path.isdir(d):
            continue
        for name in sorted(os.listdir(d)):
            if name.endswith(".o"):
                mod = f"{sub}/{name[:-2]}"
                defined, used = symbols(os.path.join(d, name))
                uses[mod] = used
                for s in defined:
                    defs[s] = mod
    graph = {m: {defs[s] for s in u if s in defs and defs[s] != m}
             for m, u in uses.items()}
    return graph


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "build")
    findings, graph = check_includes(root)
    for comp in cycles(graph):
        findings.append("include cycle: " +
                        " -> ".join(os.path.relpath(p, root) for p in comp))
    mods = module_graph(build)
    if not mods:
        findings.append(f"no objects under {build}/obj/common: build first")
    for comp in cycles(mods):
        findings.append("modules that call each other: " + ", ".join(comp))
    for sub_from, deps in ((m.split("/")[0], d) for m, d in mods.items()):
        pass
    for m, deps in sorted(mods.items()):
        sub = m.split("/")[0]
        for d in sorted(deps):
            dsub = d.split("/")[0]
            if dsub != sub and dsub not in ALLOWED[sub]:
                findings.append(f"{m} calls into {d} ({sub} may use: "
                                f"{', '.join(sorted(ALLOWED[sub])) or 'nothing'})")
    for f in findings:
        print(f"lint: layers: {f}")
    if not findings:
        print(f"lint: layers ok ({len(mods)} modules, "
              f"{sum(len(d) for d in mods.values())} calls between them)")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
