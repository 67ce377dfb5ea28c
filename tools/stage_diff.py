#!/usr/bin/env python3
"""The lesson diff between two steps of the tutorial, and the size of every step.

    tools/stage_diff.py 04 05_tcgen05_2cta/kernel_1cta.cuh   # what step 1 of stage 05 adds to stage 04
    tools/stage_diff.py 05_tcgen05_2cta/kernel_1cta.cuh 05   # what the CTA pair adds (05 = its last step)
    tools/stage_diff.py --list                               # the main line's kernel files, in teaching order
    tools/stage_diff.py --table                              # every step's code lines against its base
    tools/stage_diff.py --table --write docs/stage_diffs.md  # the same, into the docs (--check: compare)

A step is one kernel file. A stage folder holds one (kernel.cuh), or several when CMakeLists.txt
says `add_gemm_stage(<folder> STEPS kernel_1cta kernel)`: its kernel files in teaching order, the
last being the stage itself. A stage that branches off the main line says which stage it builds on
(`add_gemm_stage(09_gemv BASE 04_tma_mbarrier)`); it is left out of --list and compared with that
base in --table. Everything is read from the add_gemm_stage lines, so a new stage needs no edit here.

A and B are kernel files, stage folders (their last step) or stage numbers ("04"). The diff shows
each file from its include guard down (the header, a short list of what changed, is left out) with
stage numbers normalised (stage04 and stage05_1cta both read stageNN), so only the idea is left.

Code lines (--table, and the last line of a diff) count what a reader must read as code: comments,
blank lines and whitespace-only changes are left out, as in the project's codediff check, and stage
numbers are normalised as above (which is why a table entry can be a few lines below codediff's).

Standard library only.
"""
import argparse
import difflib
import os
import re
import signal
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STAGE_NUMBER = re.compile(r"\bstage\d\d(?:_[A-Za-z0-9]+)?\b")


class Stage:
    def __init__(self, folder, steps, base):
        self.folder, self.steps, self.base = folder, steps, base

    def files(self):
        return [f"{self.folder}/{s}.cuh" for s in self.steps]


def read_stages(root):
    """The add_gemm_stage() calls of CMakeLists.txt, in order."""
    text = open(os.path.join(root, "CMakeLists.txt"), encoding="utf-8").read()
    text = re.sub(r"#[^\n]*", "", text)  # CMake comments
    stages = []
    for m in re.finditer(r"\badd_gemm_stage\s*\(([^)]*)\)", text):
        words = m.group(1).split()
        if not words:
            continue
        folder, steps, base, key = words[0], [], None, None
        for w in words[1:]:
            if w in ("STEPS", "BASE"):
                key = w
            elif key == "STEPS":
                steps.append(w)
            elif key == "BASE":
                base, key = w, None
        stages.append(Stage(folder, steps or ["kernel"], base))
    return stages


def main_line(stages, root):
    """Kernel files of the main line in teaching order (those that exist)."""
    return [f for s in stages if s.base is None for f in s.files() if os.path.exists(os.path.join(root, f))]


def steps_with_bases(stages, root):
    """(step file, base file or None) for every existing step, the main line first."""
    last_step = {s.folder: s.files()[-1] for s in stages}
    out, previous = [], None
    for s in stages:
        if s.base is not None:
            continue
        for f in s.files():
            if os.path.exists(os.path.join(root, f)):
                out.append((f, previous))
                previous = f
    for s in stages:
        if s.base is None:
            continue
        prev = last_step.get(s.base, f"{s.base}/kernel.cuh")
        for f in s.files():
            if os.path.exists(os.path.join(root, f)):
                out.append((f, prev))
                prev = f
    return out


def resolve(arg, stages, root):
    """A kernel file from a path, a folder or a stage number."""
    path = arg if os.path.isabs(arg) else os.path.join(root, arg)
    if os.path.isfile(path):
        return os.path.relpath(path, root) if not os.path.isabs(arg) else arg
    for s in stages:
        if arg.rstrip("/") == s.folder or (len(arg) == 2 and s.folder.startswith(arg)):
            return s.files()[-1]
    sys.exit(f"stage_diff.py: '{arg}' is neither a kernel file nor a stage folder or number of CMakeLists.txt")


def body(path):
    """The file from its include guard down, stage numbers normalised."""
    lines = open(path, encoding="utf-8", errors="replace").read().splitlines()
    for i, line in enumerate(lines):
        if line.strip() == "#pragma once":
            lines = lines[i:]
            break
    return [STAGE_NUMBER.sub("stageNN", line) for line in lines]


def code_lines(lines):
    """The lines a reader must read as code: no comments, no blank lines, whitespace collapsed."""
    text = re.sub(r"/\*.*?\*/", "", "\n".join(lines), flags=re.S)
    out = []
    for line in text.splitlines():
        line = re.sub(r"\s+", " ", re.sub(r"//.*$", "", line)).strip()
        if line and line != "#pragma once":
            out.append(line)
    return out


def count(old, new):
    """(changed, added, removed) code lines between two kernel files."""
    add = rem = 0
    for line in difflib.unified_diff(code_lines(body(old)), code_lines(body(new)), lineterm="", n=0):
        if line.startswith("+") and not line.startswith("+++"):
            add += 1
        elif line.startswith("-") and not line.startswith("---"):
            rem += 1
    return add + rem, add, rem


def table(stages, root):
    rows = ["| step | builds on | code lines | added | removed |", "| --- | --- | ---: | ---: | ---: |"]
    for f, base in steps_with_bases(stages, root):
        if base is None:
            rows.append(f"| {f} | (first step) | | | |")
            continue
        if not os.path.exists(os.path.join(root, base)):
            rows.append(f"| {f} | {base} (missing) | | | |")
            continue
        n, add, rem = count(os.path.join(root, base), os.path.join(root, f))
        rows.append(f"| {f} | {base} | {n} | {add} | {rem} |")
    return "\n".join(rows) + "\n"


def table_document(stages, root):
    return ("# How big each step is\n\n"
            "Generated by `tools/stage_diff.py --table --write docs/stage_diffs.md`; do not edit by hand.\n\n"
            "Code lines between each step's kernel file and the step it builds on: comments, blank lines,\n"
            "whitespace-only changes and the header are left out, and stage numbers are normalised\n"
            "(`stage04` and `stage05` read the same), so a count that does not normalise them comes out a few\n"
            "lines higher (the namespace's two lines, the stage's name in error messages).\n"
            "`tools/stage_diff.py A B` prints the diff itself.\n\n"
            + table(stages, root))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("a", nargs="?", help="the earlier step: kernel file, stage folder or stage number")
    p.add_argument("b", nargs="?", help="the later step")
    p.add_argument("--list", action="store_true", help="the main line's kernel files in teaching order")
    p.add_argument("--table", action="store_true", help="every step's code lines against the step it builds on")
    p.add_argument("--write", metavar="FILE", help="with --table: write the table document to FILE")
    p.add_argument("--check", metavar="FILE", help="with --table: exit 1 if FILE is not the current table document")
    p.add_argument("--root", default=ROOT, help="the project's root (default: this script's parent folder)")
    p.add_argument("--code", action="store_true", help="A B: show only code lines (what the count counts)")
    args = p.parse_args(argv)
    root = os.path.abspath(args.root)
    stages = read_stages(root)

    if args.list:
        print("\n".join(main_line(stages, root)))
        return 0
    if args.table:
        if args.write or args.check:
            doc = table_document(stages, root)
            if args.check:
                current = open(args.check, encoding="utf-8").read() if os.path.exists(args.check) else ""
                if current != doc:
                    print(f"{args.check} is out of date: run tools/stage_diff.py --table --write {args.check}",
                          file=sys.stderr)
                    return 1
                return 0
            open(args.write, "w", encoding="utf-8").write(doc)
            print(f"wrote {args.write}")
            return 0
        sys.stdout.write(table(stages, root))
        return 0
    if not (args.a and args.b):
        p.error("give two steps (A B), --list or --table")
    old, new = resolve(args.a, stages, root), resolve(args.b, stages, root)
    po = old if os.path.isabs(old) else os.path.join(root, old)
    pn = new if os.path.isabs(new) else os.path.join(root, new)
    a, b = body(po), body(pn)
    if args.code:
        a, b = code_lines(a), code_lines(b)
    for line in difflib.unified_diff(a, b, fromfile=old, tofile=new, lineterm=""):
        print(line)
    n, add, rem = count(po, pn)
    print(f"# {n} code lines ({add} added, {rem} removed): {old} -> {new}")
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` ends quietly
    sys.exit(main())
