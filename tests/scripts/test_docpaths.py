"""scripts/docpaths.py on a planted repository: each stale name a
README.md or docs/*.md gives is reported with its line, in a backquoted
span, a link or bare (a table's cells), and the exit status is 1; what is
not a repository name (a placeholder, a URL, a bundle path, a name under
build/ or one git ignores) is left alone."""
import os
import subprocess
import sys

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOCPATHS = os.path.join(TOP, "scripts", "docpaths.py")

README = """# planted
| module | files |
|---|---|
| late | agent/src/run_late.c, agent/src/kill/late.c |
| kept | `agent/src/kill/capture.c`, [its doc](docs/kill.md) |

Bare in prose: agent/src/gone.c. Spans: `agent/src/gone2.c --flag`,
`scripts/`, `tests/nothere/`. A link: [x](docs/missing.md).
Not names: `agent/src/<module>.c`, agent/src/*.c, {agent,common}/x.c,
https://example.org/agent/src/no.c, the bundle's agent/timeline.json,
build/obj/agent/x.o, `cache/made.txt`, agent/src/kill/capture.c.
"""


def plant(root):
    files = {"agent/src/run_late.c": "", "agent/src/kill/capture.c": "",
             "scripts/x.sh": "", "docs/kill.md": "# kill\n",
             "cache/.keep": "", "tests/.keep": "", ".gitignore": "cache/made.txt\n",
             "README.md": README}
    for rel, text in files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
    subprocess.run(["git", "init", "-q", str(root)], check=True)


def run(root):
    p = subprocess.run([sys.executable, DOCPATHS, str(root)],
                       capture_output=True, text=True)
    return p.returncode, p.stdout.splitlines()


def test_stale_names_are_reported_bare_spanned_and_linked(tmp_path):
    plant(tmp_path)
    rc, out = run(tmp_path)
    assert rc == 1, out
    assert sorted(out) == sorted([
        "lint: doc paths: README.md:4: `agent/src/kill/late.c` does not exist",
        "lint: doc paths: README.md:7: `agent/src/gone.c` does not exist",
        "lint: doc paths: README.md:7: `agent/src/gone2.c` does not exist",
        "lint: doc paths: README.md:8: `tests/nothere/` does not exist",
        "lint: doc paths: README.md:8: `docs/missing.md` does not exist",
    ]), out


def test_a_true_document_passes(tmp_path):
    plant(tmp_path)
    with open(os.path.join(tmp_path, "README.md"), "w") as f:
        f.write("| a | agent/src/run_late.c, `agent/src/kill/capture.c` |\n"
                "See [kill](docs/kill.md) and scripts/x.sh.\n")
    rc, out = run(tmp_path)
    assert rc == 0, out
    assert out == ["lint: doc paths ok (4 names)"], out
