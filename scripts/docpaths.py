#!/usr/bin/env python3
"""Checks that every repository path a README.md or docs/*.md names
exists, so a moved or renamed file cannot leave a stale name behind.

Conservative on purpose: only a name that starts with one of the
repository's top-level folders and a slash, made of path characters
only: in a backquoted span, its first word (`agent/src/kill/capture.c`,
`tests/cluster/up.sh --apiserver-only`, `scripts/`); outside spans, a
bare word standing alone (a table's cells often leave the backquotes
out: | agent/src/run_late_snap.c |). A placeholder (`<module>`, `*`,
`{a,b}`, `$B`), a part of a URL or anything under build/ is not a name
to check.
A path ending in "/" must be a folder. Markdown links to files
(`[text](docs/x.md)`, relative to the document) are checked too. Names relative to the document's
own folder are not checked, nor what git ignores (a cache a script
makes), nor the few names of NOT_REPO that only look like ours.

Usage: docpaths.py [ROOT]. Prints each stale name with its file and
line; exits 1 when there is one."""
import os
import re
import subprocess
import sys

SPAN = re.compile(r"`([^`\n]+)`")
LINK = re.compile(r"\]\(([^)\s#]+)(?:#[^)\s]*)?\)")
# a bare name: a path not inside a longer word, URL or placeholder
BARE = re.compile(r"(?<![\w/.<{$*~-])([A-Za-z0-9_+-]+/[A-Za-z0-9_.+-]+"
                  r"(?:/[A-Za-z0-9_.+-]+)*/?)(?![\w/<>{}*$-])")
PATH = re.compile(r"[A-Za-z0-9_.+-]+(/[A-Za-z0-9_.+-]+)*/?")
# generated trees, named in docs as places, not files
SKIP = ("build", "build-asan", "build-fuzz", "build-werror")
# names that start like a repository folder but are not the repository's:
# the bundle's agent/ directory (docs/architecture.md, The bundle)
NOT_REPO = {"agent/timeline.json"}


def documents(root):
    out = subprocess.run(["git", "ls-files", "--cached", "--others",
                          "--exclude-standard", "*README.md", "docs/*.md"],
                         cwd=root, capture_output=True, text=True,
                         check=True).stdout.split()
    return sorted(set(p for p in out
                      if os.path.basename(p) == "README.md"
                      or p.startswith("docs/")))


def top_folders(root):
    return {n for n in os.listdir(root)
            if os.path.isdir(os.path.join(root, n)) and n != ".git"
            and n not in SKIP}


def names(text, tops, here):
    """(line number, path) of each checkable name in a document; here is
    the document's folder, for its links."""
    for no, line in enumerate(text.splitlines(), 1):
        for target in LINK.findall(line):
            if not re.match(r"[a-z]+:", target):
                yield no, os.path.normpath(os.path.join(here, target))
        # bare names: in a table's cells (where a span's backquotes are
        # often left out) and in prose, outside spans and links
        bare = LINK.sub("", SPAN.sub(" ", line))
        for word in BARE.findall(bare):
            first = word.split("/", 1)[0]
            word = word.rstrip(".,;:")
            if first in tops and word not in NOT_REPO and "/" in word:
                yield no, word
        for span in SPAN.findall(line):
            word = span.split()[0] if span.split() else ""
            first = word.split("/", 1)[0]
            if "/" not in word or first not in tops:
                continue
            if not PATH.fullmatch(word):
                continue  # a placeholder, a glob, a URL...
            word = word.rstrip(".,;:")
            if word not in NOT_REPO:
                yield no, word


def ignored(root, paths):
    """The paths among these that git ignores (checked as given)."""
    if not paths:
        return set()
    out = subprocess.run(["git", "check-ignore", "--stdin"], cwd=root,
                         input="\n".join(paths), capture_output=True,
                         text=True).stdout
    return set(out.split())


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else \
        os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    tops = top_folders(root)
    found = []
    for doc in documents(root):
        with open(os.path.join(root, doc), encoding="utf-8") as f:
            text = f.read()
        found += [(doc, no, path) for no, path in
                  names(text, tops, os.path.dirname(doc))]
    skip = ignored(root, sorted({p for _, _, p in found}))
    stale, checked = [], 0
    for doc, no, path in found:
        if path in skip:
            continue
        checked += 1
        full = os.path.join(root, path)
        ok = os.path.isdir(full) if path.endswith("/") else \
            os.path.exists(full)
        if not ok:
            stale.append(f"{doc}:{no}: `{path}` does not exist")
    for s in stale:
        print(f"lint: doc paths: {s}")
    if not stale:
        print(f"lint: doc paths ok ({checked} names)")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
