#!/usr/bin/env python3
"""The stages of the tutorial, read from the one place that declares them: every script asks here.

    python3 tools/stages.py                  every stage and step: base, kind, tcgen05, key, style, idea
    python3 tools/stages.py --readme         the stage table of README.md (docs/plot.py writes it there)
    python3 tools/stages.py --json           the same facts as JSON, for scripts in other languages

Where each fact comes from:

- CMakeLists.txt, its add_gemm_stage(<folder> [MIN_SM n] [BASE folder] [STEPS file...]) lines: the stages,
  their teaching order (the order of the lines), MIN_SM (90 where left out, as common/stage.cmake), the base
  (BASE, else the stage on the line above) and the steps (the kernel files, in teaching order; the last is the
  stage itself). A stage whose base is not the stage on the line above is a *branch* (09_gemv BASE
  04_tma_mbarrier); a stage without BASE continues the line of the stage above it, branch or not.
- Each step's kernel file: its `kStage{"<id>", "<idea>", ...}` declaration (the first two string literals after
  `kStage{`, adjacent literals joined, whatever follows), the type its launch() takes (the kind, below), whether
  it includes common/ptx/tcgen05.cuh or says gemm::kUsesTcgen05 (uses_tcgen05), and its first __global__
  function (the kernel Nsight Compute profiles).
- The kind of problem a stage computes. The benchmarks record it in their JSON context as "kind":
  "fp32_gemm", "nvfp4_gemm", "nvfp4_gemv" (and later kinds by their names). Where a run lacks it (results
  written before the key existed), kind_of_run() falls back: "gemv" (the first GEMV's spelling) is
  "nvfp4_gemv"; otherwise the stage's kind from its kernel file: launch(const gemm::Fp32GemmArgs&) is
  "fp32_gemm", launch(const gemm::Nvfp4GemvArgs&) "nvfp4_gemv", any other type "nvfp4_gemm".
- The style of a series in every plot (style()): the colour and marker at the step's position in teaching
  order in a fixed palette (positions 0-10 are the colours the plots had when they were drawn by hand), so a
  new stage gets the next free pair and needs no edit here.

A new stage therefore needs its folder and its add_gemm_stage line, nothing in any script. Standard library only.
"""
import argparse
import functools
import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_MIN_SM = 90

# The kinds of problem the benchmarks name in their JSON context ("kind"). A kind not listed here is still
# accepted: a name ending in "_gemv" is measured like a GEMV (GB/s against a streaming read), any other like a
# GEMM (TFLOP/s).
KINDS = {
    "fp32_gemm": "FP32 GEMM on CUDA cores (C = A * B^T, FP32 in and out)",
    "nvfp4_gemm": "NVFP4 GEMM (packed E2M1, E4M3 block scales, FP16 C)",
    "nvfp4_gemv": "NVFP4 GEMV (N = 1): the weights streamed once; measured in GB/s",
    "nvfp4_group_gemm": "NVFP4 group GEMM (G GEMMs of their own sizes in one call: a MoE layer's experts)",
}
LEGACY_KINDS = {"gemv": "nvfp4_gemv"}
ARGS_KIND = {"Fp32GemmArgs": "fp32_gemm", "Nvfp4GemvArgs": "nvfp4_gemv", "Nvfp4GemmArgs": "nvfp4_gemm",
             "Nvfp4GroupGemmArgs": "nvfp4_group_gemm"}
FALLBACK_KIND = "nvfp4_gemm"

# One colour and one marker per step, by its position in teaching order (00, 01, 02, 03, 04, 05's first step,
# 05, 06, 07, 08, 09, then the stages to come). Library peers are black and greys (docs/plotting.py), never one
# of these.
PALETTE = ["#8c564b", "#e377c2", "#17becf", "#bcbd22", "#9467bd", "#6baed6", "#1f77b4", "#ff7f0e", "#2ca02c",
           "#d62728", "#7f7f7f", "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#3182bd", "#e6550d",
           "#31a354", "#756bb1"]
MARKERS = ["o", "s", "D", "v", "P", "h", "o", "s", "D", "^", "X", "p", "*", "<", ">", "d", "H", "8", "v", "P"]
UNKNOWN_STYLE = dict(color="#555555", marker="*")  # a series of no stage in CMakeLists.txt


class Step:
    """One kernel file: what `tools/stage_diff.py` diffs and the registry registers."""

    def __init__(self, stage, name, index):
        self.stage, self.name, self.index = stage, name, index
        self.file = f"{stage.folder}/{name}.cuh"
        self.last = False  # the stage itself: its file is kernel.cuh (else the stage's last step)
        self.id = self.idea = self.launch_args = self.kernel = None
        self.uses_tcgen05 = False
        self.position = None

    @property
    def key(self):
        """"05" for the stage itself (kernel.cuh), "05a", "05b", ... by position for its other steps."""
        return self.stage.number if self.last else self.stage.number + "abcdefghijklmnopqrstuvwxyz"[self.index]

    @property
    def kind(self):
        return ARGS_KIND.get(self.launch_args, FALLBACK_KIND if self.launch_args else None)

    def __repr__(self):
        return f"Step({self.file})"


class Stage:
    def __init__(self, folder, min_sm, base, explicit_base, step_names):
        self.folder, self.min_sm, self.base, self.explicit_base = folder, min_sm, base, explicit_base
        self.number = folder[:2]
        self.steps = [Step(self, n, i) for i, n in enumerate(step_names)]
        # The stage itself is kernel.cuh; steps before it lead up to it, a step after it is a variant
        # the stage does not adopt (12_svdquant's interleave). Without a kernel.cuh: the last step.
        main = next((st for st in self.steps if st.name == "kernel"), self.steps[-1])
        main.last = True
        self.branch = False       # its base is not the stage on the line above
        self.branch_root = None   # the first stage of the branch it is on (itself for the stage that branches)
        self.recorded_kind = None  # the "kind" of docs/data/<folder>.json, where it has one

    @property
    def last_step(self):
        """The stage itself (see Stage.__init__): what later stages build on and the tables name."""
        return next(st for st in self.steps if st.last)

    @property
    def id(self):
        return self.last_step.id or self.folder

    @property
    def idea(self):
        return self.last_step.idea

    @property
    def kind(self):
        """The kind its committed results record (docs/data/<folder>.json, context "kind"), else its kernel's."""
        return self.recorded_kind or self.last_step.kind or FALLBACK_KIND

    @property
    def uses_tcgen05(self):
        return self.last_step.uses_tcgen05

    @property
    def on_main_line(self):
        return self.branch_root is None

    def files(self):
        return [s.file for s in self.steps]

    def __repr__(self):
        return f"Stage({self.folder})"


def _strip_cmake_comments(text):
    return re.sub(r"#[^\n]*", "", text)


def parse_cmake(text):
    """[(folder, min_sm, BASE or None, [step names])] of the add_gemm_stage() calls, in order."""
    out = []
    for m in re.finditer(r"\badd_gemm_stage\s*\(([^)]*)\)", _strip_cmake_comments(text)):
        words = m.group(1).split()
        if not words:
            continue
        folder, steps, base, min_sm, key = words[0], [], None, DEFAULT_MIN_SM, None
        for w in words[1:]:
            if w in ("STEPS", "BASE", "MIN_SM"):
                key = w
            elif key == "STEPS":
                steps.append(w)
            elif key == "BASE":
                base, key = w, None
            elif key == "MIN_SM":
                min_sm, key = int(w) if w.isdigit() else w, None
        out.append((folder, min_sm, base, steps or ["kernel"]))
    return out


def _code_tokens(text, start):
    """From `start`: ("str", value) for each string literal, ("sep", char) for , } ; and nothing for comments
    and whitespace; stops at the end of the text."""
    i, n = start, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j + 1
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
        elif c == '"':
            j, value = i + 1, []
            while j < n and text[j] != '"':
                if text[j] == "\\" and j + 1 < n:
                    value.append(text[j:j + 2].encode().decode("unicode_escape"))
                    j += 2
                else:
                    value.append(text[j])
                    j += 1
            yield ("str", "".join(value))
            i = j + 1
        elif c.isspace():
            i += 1
        else:
            yield ("sep" if c in ",};" else "code", c)
            i += 1


def parse_kstage(text):
    """(id, idea) of the kStage declaration of a kernel file's text: the first two string literals after
    `kStage{` (adjacent literals joined, as C++ joins them); None where there is no such declaration."""
    m = re.search(r"\bkStage\s*\{", text)
    if not m:
        return None
    groups, current, open_literal = [], None, False
    for kind, value in _code_tokens(text, m.end()):
        if kind == "str":
            current = (current or "") + value
            open_literal = True
            continue
        if open_literal:
            groups.append(current)
            current, open_literal = None, False
            if len(groups) == 2:
                break
        if kind == "sep" and value in "};":
            break
    if open_literal and len(groups) < 2:
        groups.append(current)
    if len(groups) < 2:
        return None
    return groups[0], groups[1]


LAUNCH_ARGS = re.compile(r"\bvoid\s+launch\s*\(\s*const\s+(?:gemm\s*::\s*)?(\w+)\s*&")
GLOBAL_KERNEL = re.compile(r"__global__\s+void\s+(?:__\w+__\s*\([^()]*(?:\([^()]*\)[^()]*)*\)\s*)*(\w+)\s*\(")


def read_step(step, root):
    path = os.path.join(root, step.file)
    if not os.path.exists(path):
        return
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    declared = parse_kstage(text)
    if declared:
        step.id, step.idea = declared
    m = LAUNCH_ARGS.search(text)
    step.launch_args = m.group(1) if m else None
    m = GLOBAL_KERNEL.search(text)
    step.kernel = m.group(1) if m else None
    step.uses_tcgen05 = ('#include "common/ptx/tcgen05.cuh"' in text or "kUsesTcgen05" in text
                         or re.search(r"uses_tcgen05\s*=\s*\*/\s*true", text) is not None)


def recorded_kind(path):
    """The kind a benchmark JSON records in its context, legacy spellings mapped; None without one."""
    try:
        with open(path, encoding="utf-8") as f:
            kind = json.load(f).get("context", {}).get("kind")
    except (OSError, ValueError, AttributeError):
        return None
    return LEGACY_KINDS.get(kind, kind) if kind else None


@functools.lru_cache(maxsize=None)
def _read_cached(root):
    return tuple(_read(root))


def read(root=None):
    """Every stage of CMakeLists.txt in teaching order, each with its steps and their facts (cached per root)."""
    return list(_read_cached(os.path.abspath(root or ROOT)))


def _read(root):
    with open(os.path.join(root, "CMakeLists.txt"), encoding="utf-8") as f:
        text = f.read()
    stages, by_folder = [], {}
    position = 0
    for folder, min_sm, base, steps in parse_cmake(text):
        previous = stages[-1] if stages else None
        s = Stage(folder, min_sm, base or (previous.folder if previous else None), base is not None, steps)
        s.branch = previous is not None and s.base != previous.folder
        if s.branch:
            s.branch_root = s
        elif previous is not None:
            s.branch_root = previous.branch_root
        for step in s.steps:
            step.position = position
            position += 1
            read_step(step, root)
        s.recorded_kind = recorded_kind(os.path.join(root, "docs", "data", folder + ".json"))
        stages.append(s)
        by_folder[folder] = s
    return stages


def main_line(stages):
    return [s for s in stages if s.on_main_line]


def branches(stages):
    return [s for s in stages if not s.on_main_line]


def steps(stages):
    return [step for s in stages for step in s.steps]


def base_step(stage, stages):
    """The step a stage's first step builds on: its base's last step (None for the first stage)."""
    base = find(stage.base, stages) if stage.base else None
    return base.last_step if base else None


def find(name, stages=None):
    """The stage of a folder name, a step id, a stage number ("04") or a series name that starts with one
    ("05_tcgen05_1cta BN=128"); None if there is none."""
    stages = read() if stages is None else stages
    name = str(name or "").rstrip("/")
    for s in stages:
        if name == s.folder or name == s.number or any(name == st.id for st in s.steps):
            return s
    st = find_step(name, stages)
    return st.stage if st else None


def find_step(name, stages=None):
    """The step a series name belongs to: the longest step id or stage folder it starts with."""
    stages = read() if stages is None else stages
    name = str(name or "")
    best, best_len = None, -1
    for s in stages:
        for st in s.steps:
            for prefix in (st.id, s.folder if st.last else None):
                if prefix and (name == prefix or name.startswith(prefix + " ") or name.startswith(prefix + "/")) \
                        and len(prefix) > best_len:
                    best, best_len = st, len(prefix)
    return best


def number_key(name):
    """'05a_tcgen05_step' -> '05a' (and '05a' -> '05a'); None for a name that does not start like a stage's."""
    m = re.match(r"(\d\d[a-z]?)(?:_|$)", str(name))
    return m.group(1) if m else None


def key(name, stages=None):
    """The key of a series: the key of the step it belongs to ("05a" for stage 05's first step, benchmarked as
    its variant "05_tcgen05_1cta"), else the number it starts with."""
    st = find_step(name, stages)
    return st.key if st else number_key(name)


def style(name, stages=None):
    """(dict(color, marker), known) of a series: its step's place in the palette; (UNKNOWN_STYLE, False) for a
    name of no stage."""
    stages = read() if stages is None else stages
    st = find_step(name, stages)
    if st is None:
        k = number_key(name)
        s = next((x for x in stages if k and (x.number == k or x.number == k[:2])), None)
        if s is None:
            return dict(UNKNOWN_STYLE), False
        st = next((x for x in s.steps if x.key == k), s.last_step)
    return dict(color=PALETTE[st.position % len(PALETTE)], marker=MARKERS[st.position % len(MARKERS)]), True


def kind_of_run(ctx, stages=None):
    """The kind of a benchmark run from its JSON context: "kind" where recorded, else the fallback described at
    the top of this file."""
    kind = ctx.get("kind")
    if kind:
        return LEGACY_KINDS.get(kind, kind)
    s = find(ctx.get("stage"), stages)
    return s.kind if s else FALLBACK_KIND


def measured_like(kind):
    """"gemv" or "gemm": what a kind is measured in (GB/s against the streaming read, or TFLOP/s)."""
    return "gemv" if str(kind).endswith("_gemv") else "gemm"


def tcgen05_stages(stages=None):
    stages = read() if stages is None else stages
    return [s for s in stages if s.uses_tcgen05]


def describe_set(folders, stages=None):
    """Words for a set of stages where the words exist ("the tcgen05 stages", "the CUDA-core stages"), else
    their numbers: used where generated prose names a group of stages."""
    stages = read() if stages is None else stages
    folders = [f for f in folders]
    numbers = [find(f, stages).number if find(f, stages) else (number_key(f) or f) for f in folders]
    if folders and set(folders) == {s.folder for s in tcgen05_stages(stages)}:
        return "the `tcgen05` stages (" + ", ".join(numbers) + ")"
    return ", ".join(numbers)


# --- The README's stage table ----------------------------------------------------------------------------------

README_BEGIN, README_END = "<!-- stages:begin -->", "<!-- stages:end -->"


def readme_table(stages=None, link_prefix=""):
    """The stage table of README.md: a row per stage, branches included, in teaching order."""
    stages = read() if stages is None else stages
    rows = ["| stage | builds on | MIN_SM | adds |", "| --- | --- | --- | --- |"]
    for s in stages:
        if s.base is None:
            builds = "-"
        elif s.branch:
            builds = f"{s.base}, as a branch"
        else:
            builds = s.base
        needs = f"{s.min_sm}" + (", `tcgen05`" if s.uses_tcgen05 else "")
        if len(s.steps) > 1:
            adds = f"in {len(s.steps)} steps: " + "; then ".join(
                f"{st.idea or '-'} (`{st.name}.cuh`)" for st in s.steps)
        else:
            adds = s.idea or "-"
        rows.append(f"| [{s.folder}]({link_prefix}{s.folder}/README.md) | {builds} | {needs} | {adds} |")
    return "\n".join(rows) + "\n"


def as_json(stages):
    return [dict(folder=s.folder, number=s.number, min_sm=s.min_sm, base=s.base, branch=s.branch,
                 branch_root=s.branch_root.folder if s.branch_root else None, kind=s.kind,
                 uses_tcgen05=s.uses_tcgen05,
                 steps=[dict(file=st.file, id=st.id, idea=st.idea, key=st.key, kind=st.kind, kernel=st.kernel,
                             uses_tcgen05=st.uses_tcgen05, style=style(st.id or st.file, stages)[0])
                        for st in s.steps]) for s in stages]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--readme", action="store_true", help="print README.md's stage table")
    ap.add_argument("--json", action="store_true", help="every fact as JSON")
    ap.add_argument("--root", default=ROOT, help="the project's root (default: this script's parent folder)")
    args = ap.parse_args(argv)
    stages = read(args.root)
    if args.readme:
        sys.stdout.write(readme_table(stages))
    elif args.json:
        print(json.dumps(as_json(stages), indent=2))
    else:
        for s in stages:
            where = f"branch from {s.base}" if s.branch else (f"on {s.base}" if s.base else "first")
            print(f"{s.folder}  MIN_SM {s.min_sm}  {where}  kind {s.kind}" + ("  tcgen05" if s.uses_tcgen05 else ""))
            for st in s.steps:
                print(f"    {st.file}  id {st.id}  key {st.key}  kernel {st.kernel}  style {style(st.id or '', stages)[0]}"
                      f"\n        {st.idea}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
