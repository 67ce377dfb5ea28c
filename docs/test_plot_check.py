#!/usr/bin/env python3
"""ctest plot_check_catches_changed_data: docs/plot.py --check must fail when a number in docs/data changed.

On a copy of the source tree: --check passes on the committed data, then one number of docs/data/00_naive.json
is tripled and --check must fail, naming the stale plot and table. Exit 0 when both hold, 1 when either does
not, 77 (ctest's "skipped") when the first --check could only skip (matplotlib missing or not the pinned
version): the changed number is still caught then, from the data fingerprints and the tables.
"""
import json
import pathlib
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
SKIP = shutil.ignore_patterns(".git", "build", "build-*", ".venv", "__pycache__")


def check(tree):
    p = subprocess.run([sys.executable, str(tree / "docs" / "plot.py"), "--check", "--no-other-checks"],
                       capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def main():
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        tree = pathlib.Path(tmp) / "src"
        shutil.copytree(ROOT, tree, ignore=SKIP)
        rc_committed, out = check(tree)
        if rc_committed not in (0, 77):
            failures.append(f"--check fails on the committed data (exit {rc_committed}):\n{out}")
        data = tree / "docs" / "data" / "00_naive.json"
        doc = json.loads(data.read_text())
        row = next(b for b in doc["benchmarks"] if b.get("label") == "stage")
        row["TFLOP/s"] *= 3
        data.write_text(json.dumps(doc, indent=2))
        rc, out = check(tree)
        if rc != 1:
            failures.append(f"--check did not fail after a number in 00_naive.json was tripled (exit {rc}):\n{out}")
        for stale in ("docs/plots/00_naive.svg is stale", "00_naive/README.md: a generated section is stale"):
            if stale not in out:
                failures.append(f"--check did not say {stale!r}:\n{out}")
    for f in failures:
        print(f"FAILED: {f}")
    if failures:
        return 1
    print("--check catches a tripled number in docs/data/00_naive.json (stale plot and table)")
    if rc_committed == 77:
        print("SKIPPED: on the committed data --check could not compare the plots' bytes (matplotlib missing or "
              "not the version in docs/requirements.txt)")
        return 77
    print("and passes on the committed data")
    return 0


if __name__ == "__main__":
    sys.exit(main())
