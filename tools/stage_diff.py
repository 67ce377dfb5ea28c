#!/usr/bin/env python3
"""The lesson diff between two steps of the tutorial, the size of every step, and carrying a fix forward.

    tools/stage_diff.py 04 05_tcgen05_2cta/kernel_1cta.cuh   # what step 1 of stage 05 adds to stage 04
    tools/stage_diff.py 05_tcgen05_2cta/kernel_1cta.cuh 05   # what the CTA pair adds (05 = its kernel.cuh)
    tools/stage_diff.py --list                               # every kernel file: the main line, then the branches
    tools/stage_diff.py --table                              # every step's code lines against its base
    tools/stage_diff.py --table --write docs/stage_diffs.md  # the same, into the docs (--check: compare)
    tools/stage_diff.py --propagate 05_tcgen05_2cta/kernel.cuh [--from REV] [--dry-run]
                                                             # carry a fix into every later step

A step is one kernel file. A stage folder holds one (kernel.cuh), or several when CMakeLists.txt
says `add_gemm_stage(<folder> STEPS kernel_1cta kernel)`: its kernel files in teaching order,
kernel.cuh being the stage itself (a step after it is a variant the stage does not adopt). A stage that branches off the main line says which stage it builds on
(`add_gemm_stage(09_gemv BASE 04_tma_mbarrier)`); --list shows it after the main line, marked, and
--table compares it with that base. Everything is read from the add_gemm_stage lines (tools/stages.py),
so a new stage needs no edit here.

A and B are kernel files, stage folders (their kernel.cuh) or stage numbers ("04"). The diff shows
each file from its include guard down (the header, a short list of what changed, is left out) with
stage numbers normalised (stage04 and stage05_1cta both read stageNN), so only the idea is left.

Code lines (--table, and the last line of a diff) count what a reader must read as code: comments,
blank lines and whitespace-only changes are left out, as in the project's codediff check, and stage
numbers are normalised as above (which is why a table entry can be a few lines below codediff's).

--propagate FILE: a later step repeats the kernel of the step it builds on, so a fix to copied code goes
into the earliest step that has it and is carried forward from there. FILE's change is its working-tree
text against FILE at --from (default HEAD). Every step that builds on FILE (the later steps of its line,
and the branches that build on one of them) gets that change by a three-way merge (git merge-file: base =
FILE at REV, ours = the later step, theirs = FILE now; FILE's namespace, stage05 say, is read as the later
step's, stage06, so a changed line that names it lands in the later step's spelling). Each file is
reported "merged cleanly", "already has the change", or "conflict (N hunks)": conflict markers are left
in the file to resolve by hand (the later step changed the same lines: the fix must be adapted there).
--dry-run writes nothing. The diff-size table follows, to show what each step now adds.

Standard library and git only.
"""
import argparse
import difflib
import os
import re
import signal
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stages as stage_facts  # noqa: E402  (tools/stages.py: the add_gemm_stage lines)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STAGE_NUMBER = re.compile(r"\bstage\d\d(?:_[A-Za-z0-9]+)?\b")
NAMESPACE = re.compile(r"^namespace\s+(stage\d\d(?:_[A-Za-z0-9]+)?)\s*\{", re.M)


def read_stages(root):
    """The stages of CMakeLists.txt in teaching order (tools/stages.py)."""
    return stage_facts.read(root)


def exists(root, f):
    return os.path.exists(os.path.join(root, f))


def base_of(step, stages):
    """The step a step builds on: the step before it in its stage, else its base stage's last step."""
    i = step.stage.steps.index(step)
    if i > 0:
        return step.stage.steps[i - 1]
    return stage_facts.base_step(step.stage, stages)


def ordered_steps(stages):
    """Every step, the main line first, then the branches, each in teaching order."""
    return ([st for s in stage_facts.main_line(stages) for st in s.steps]
            + [st for s in stage_facts.branches(stages) for st in s.steps])


def main_line(stages, root):
    """Kernel files of the main line in teaching order (those that exist)."""
    return [f for s in stage_facts.main_line(stages) for f in s.files() if exists(root, f)]


def listing(stages, root):
    """--list: the main line's kernel files, then each branch's, marked with what it branches from."""
    lines = main_line(stages, root)
    for s in stage_facts.branches(stages):
        for i, f in enumerate(s.files()):
            if not exists(root, f):
                continue
            if s.branch and i == 0:
                mark = f"(branch from {s.base})"
            else:
                mark = f"(on the branch of {s.branch_root.folder})"
            lines.append(f"{f:<36} {mark}")
    return lines


def steps_with_bases(stages, root):
    """(step file, base file or None) for every existing step, the main line first."""
    out = []
    for st in ordered_steps(stages):
        if not exists(root, st.file):
            continue
        base = base_of(st, stages)
        # A missing step in between (a stage not written yet) is skipped: compare with the last that exists.
        while base is not None and not exists(root, base.file):
            base = base_of(base, stages)
        out.append((st.file, base.file if base else None))
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


# --- --propagate: carry a fix forward -------------------------------------------------------------------------

def descendants(rel, stages):
    """The steps that build on the step of file `rel`, directly or through others, in teaching order."""
    target = next((st for st in stage_facts.steps(stages) if st.file == rel), None)
    if target is None:
        return None
    out = []
    for st in stage_facts.steps(stages):
        b = base_of(st, stages)
        while b is not None and b is not target:
            b = base_of(b, stages)
        if b is target:
            out.append(st)
    return out


def namespace_of(text):
    m = NAMESPACE.search(text)
    return m.group(1) if m else None


def git(root, *args):
    return subprocess.run(["git", "-C", root, *args], capture_output=True)


def merge(ours, base, theirs, labels):
    """git merge-file on three texts: (merged text, number of conflicts)."""
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for name, text in (("ours", ours), ("base", base), ("theirs", theirs)):
            path = os.path.join(tmp, name)
            with open(path, "w", encoding="utf-8", newline="") as f:
                f.write(text)
            paths.append(path)
        cmd = ["git", "merge-file", "-p"]
        for label in labels:
            cmd += ["-L", label]
        p = subprocess.run(cmd + paths, capture_output=True)
        if p.returncode < 0 or p.returncode > 127:
            sys.exit(f"stage_diff.py: git merge-file failed: {p.stderr.decode(errors='replace').strip()}")
        return p.stdout.decode("utf-8"), p.returncode


def propagate(rel, rev, root, stages, dry_run=False, out=None):
    """Carries the working-tree change of kernel file `rel` (against `rev`) into every step that builds on it.
    Returns 0 when every file merged cleanly, 1 on a conflict, 2 when there is nothing to carry."""
    out = out or sys.stdout
    targets = descendants(rel, stages)
    if targets is None:
        print(f"stage_diff.py: {rel} is not a step of CMakeLists.txt (its add_gemm_stage lines)", file=sys.stderr)
        return 2
    shown = git(root, "show", f"{rev}:./{rel}")
    if shown.returncode != 0:
        print(f"stage_diff.py: no {rel} at {rev}: {shown.stderr.decode(errors='replace').strip()}", file=sys.stderr)
        return 2
    base = shown.stdout.decode("utf-8")
    with open(os.path.join(root, rel), encoding="utf-8", newline="") as f:
        theirs = f.read()
    if base == theirs:
        print(f"{rel} is unchanged against {rev}: nothing to carry forward", file=out)
        return 2
    ns = namespace_of(theirs) or namespace_of(base)
    conflicts = 0
    print(f"carrying the change of {rel} (against {rev}) forward{' (dry run: nothing written)' if dry_run else ''}:",
          file=out)
    for st in targets:
        path = os.path.join(root, st.file)
        if not os.path.exists(path):
            continue
        with open(path, encoding="utf-8", newline="") as f:
            ours = f.read()
        own = namespace_of(ours)
        b, t = base, theirs
        if ns and own and ns != own:  # FILE's namespace read as the later step's
            pattern = re.compile(r"\b" + re.escape(ns) + r"\b")
            b, t = pattern.sub(own, b), pattern.sub(own, t)
        merged, n = merge(ours, b, t, [st.file, f"{rel} at {rev}", rel])
        if n:
            status = f"conflict ({n} hunk{'s' if n > 1 else ''})"
            conflicts += 1
        elif merged == ours:
            status = "already has the change"
        else:
            status = "merged cleanly"
        if merged != ours and not dry_run:
            with open(path, "w", encoding="utf-8", newline="") as f:
                f.write(merged)
        print(f"  {st.file:<36} {status}", file=out)
    if not targets:
        print("  (no step builds on it)", file=out)
    if conflicts and not dry_run:
        print(f"{conflicts} file{'s' if conflicts > 1 else ''} with conflicts: resolve the <<<<<<< / >>>>>>> "
              "markers by hand (the later step changed the same lines)", file=out)
    return 1 if conflicts else 0


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("a", nargs="?", help="the earlier step: kernel file, stage folder or stage number")
    p.add_argument("b", nargs="?", help="the later step")
    p.add_argument("--list", action="store_true", help="every kernel file: the main line, then the branches")
    p.add_argument("--table", action="store_true", help="every step's code lines against the step it builds on")
    p.add_argument("--write", metavar="FILE", help="with --table: write the table document to FILE")
    p.add_argument("--check", metavar="FILE", help="with --table: exit 1 if FILE is not the current table document")
    p.add_argument("--propagate", metavar="FILE",
                   help="carry FILE's change (working tree against --from) into every step that builds on it")
    p.add_argument("--from", dest="rev", default="HEAD", metavar="REV",
                   help="with --propagate: the revision FILE's change is taken against (default HEAD)")
    p.add_argument("--dry-run", action="store_true", help="with --propagate: report, write nothing")
    p.add_argument("--root", default=ROOT, help="the project's root (default: this script's parent folder)")
    p.add_argument("--code", action="store_true", help="A B: show only code lines (what the count counts)")
    args = p.parse_args(argv)
    root = os.path.abspath(args.root)
    stages = read_stages(root)

    if args.list:
        print("\n".join(listing(stages, root)))
        return 0
    if args.propagate:
        rel = resolve(args.propagate, stages, root)
        rel = os.path.relpath(rel, root) if os.path.isabs(rel) else rel
        rc = propagate(rel, args.rev, root, stages, args.dry_run)
        if rc != 2:
            sys.stdout.write("\n" + table(stages, root))
        return rc
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
        p.error("give two steps (A B), --list, --table or --propagate FILE")
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
