#!/usr/bin/env python3
"""Turn the benchmark JSON in docs/data/ into the plots in docs/plots/ and the result tables.

    python3 docs/plot.py                      redraw docs/plots/<stage>.svg, overview.svg and the bank maps, and
                                              rewrite the generated sections of docs/README.md, README.md and each
                                              stage's README.md (the tables between <!-- results:begin --> and
                                              <!-- results:end -->, and the like); a file is written only when
                                              it changes, and the script says which changed
    python3 docs/plot.py --check              change nothing; exit 1 when a plot or a generated section is stale
                                              (its data changed, or it is not what this script draws), when
                                              data is malformed, or when a self-test on synthetic data fails;
                                              also runs the --check of docs/b200_model.py, timeline.py,
                                              tile_order.py and pipeline_diagram.py. Exit 77 (ctest's
                                              "skipped") when everything that could be checked passed but the
                                              plots could not be compared: matplotlib missing, or not the
                                              version pinned in docs/requirements.txt.
    python3 docs/plot.py --results DIR [--out OUT]
                                              your own GPU: draw the benchmark JSON in DIR (written there by the
                                              run_bench_stageNN targets with -DGEMM_RESULTS_DIR=DIR) beside the
                                              committed docs/data, one column each, into OUT (default DIR/plots),
                                              with the result tables in OUT/results.md. docs/ is not touched, and
                                              any matplotlib version will do.

Plots are byte-for-byte reproducible only with the matplotlib pinned in docs/requirements.txt; the script
refuses to redraw docs/plots with another (docs/plotting.py). Every SVG records which data it was drawn from
and a fingerprint of it, so --check notices changed data with any matplotlib, or none.

Each docs/data/<stage>.json is one run of bench_stageNN (Google Benchmark JSON): the stage, its predecessor and a
library peer, timed in the same process, and possibly variants of the stage (other configurations of its
kernel, e.g. stage 05's first step, "05_tcgen05_1cta"). The label of each benchmark is its role ("stage", "variant",
"predecessor", "peer"), followed by " EMULATED" where the row ran its tcgen05 instructions through the software
emulator (a Hopper GPU): such a row's time measures the emulator, so it never enters a plot and never gets a
ratio; the tables list it with its time and the words "EMULATED (not performance)". A run whose context
"tcgen05" starts with EMULATED is drawn from what it can show instead: the B200 MODEL of the stage against its
predecessor (docs/data/b200_model.json, docs/b200_model.py) and the stage's test results on that GPU
(docs/data/tests/<stage>.json, docs/test_results.py).

The plots are data-driven: every docs/data/*.json with benchmarks is a stage; a stage folder without one is
reported. A new stage needs a line in STAGE_STYLE (docs/plotting.py) and in LESSONS below.
"""
import argparse
import json
import pathlib
import re
import subprocess
import sys
import tempfile
import textwrap

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import plotting  # noqa: E402  (docs/plotting.py)
from plotting import series_key, series_style, stage_key, stage_style  # noqa: E402

ROOT = plotting.ROOT
DATA = ROOT / "docs" / "data"
PLOTS = ROOT / "docs" / "plots"
TESTS = "tests"              # docs/data/tests/<stage>.json: a stage's test results (docs/test_results.py)
MODEL = "b200_model.json"    # docs/data/b200_model.json: the B200 MODEL (docs/b200_model.py)
BEGIN, END = "<!-- results:begin -->", "<!-- results:end -->"
REQUIRED_CONTEXT = ["stage", "gpu", "sm_count", "sm_clock_max_mhz", "clocks_now", "driver_cuda_version",
                    "runtime_cuda_version", "commit", "tcgen05", "date"]
REQUIRED_COUNTERS = ["TFLOP/s", "GB/s", "M", "N", "K", "L"]
ROLES = ("stage", "variant", "predecessor", "peer")
ROLE_STYLE = dict.fromkeys(ROLES)  # the labels a benchmark row may carry (styles: docs/plotting.py)
# The rows that are the stage itself: its own, and other configurations of its kernel.
OWN_ROLES = ("stage", "variant")
# A label may follow its role with this word: tcgen05 ran in the emulator, the time is not performance.
EMULATED = "EMULATED"
EMULATED_TEXT = "EMULATED (not performance)"
# Benchmarks that are not GEMMs (stage 03's quantizer and the copy it is measured against; stage 09's
# streaming-read kernel, the ceiling of a GEMV: it reads the bytes a GEMV must move and does nothing else).
BANDWIDTH_ROLES = ("quantizer", "copy", "stream")
# The shapes the summary table of docs/README.md quotes: a large square, and the M = 128 decode-like shape.
SUMMARY_SHAPES = ((4096, 4096, 4096, 1), (128, 7168, 16384, 1))
# A GEMV's (stage 09): the three problems of the GPU MODE NVFP4 GEMV competition (M x 1 x K x L).
GEMV_SUMMARY_SHAPES = ((7168, 1, 16384, 1), (4096, 1, 7168, 8), (7168, 1, 2048, 4))
# What each stage adds and teaches, for the summary table of docs/README.md (one line per stage).
LESSONS = {
    "00": ("one thread per output", "coalescing with K-major operands"),
    "01": ("shared-memory and register tiles, a register prefetch", "reuse and arithmetic intensity"),
    "02": ("128-byte XOR swizzle, 16-byte accesses", "bank conflicts, measured and removed"),
    "03": ("NVFP4: quantizer, packed E2M1 + blocked E4M3 scales, CUDA-core decode", "the format, bit for bit"),
    "04": ("TMA tensor maps, a full/empty mbarrier ring",
           "asynchronous copies; why a compute-bound kernel does not care"),
    # Stage 05 comes in two steps; the B200 model has each (05a: the first), so its table gives each a row.
    "05": ("`tcgen05` block-scaled MMA, Tensor Memory, then 2-CTA pairs (`cta_group::2`, 256 x 256 tiles)",
           "descriptors, TMEM budgets, commits"),
    "05a": ("`tcgen05` block-scaled MMA, Tensor Memory, one CTA (`cta_group::1`, 128 x 128 tiles)",
            "descriptors, TMEM budgets, commits"),
    "06": ("persistent pairs, static schedule, warp roles, two accumulators", "keeping every part of the SM busy"),
    "07": ("TMEM -> registers -> swizzled smem -> TMA store", "an epilogue that leaves the SM asynchronously"),
    "08": ("split-K for small M, deterministic reduction, per-stream workspace", "filling the SMs when tiles are few"),
    "09": ("NVFP4 GEMV (N = 1) at DRAM speed on the CUDA cores, branches from 04",
           "a memory-bound kernel: bytes, not FLOPs"),
}


class DataError(Exception):
    pass


def parse_label(label):
    """A benchmark's label as (role, emulated): "stage" -> ("stage", False), "variant EMULATED" ->
    ("variant", True); None for anything else."""
    words = str(label or "").split()
    if words and words[0] in ROLES and words[1:] in ([], [EMULATED]):
        return words[0], len(words) == 2
    return None


def load(path):
    with open(path) as f:
        doc = json.load(f)
    ctx = doc.get("context", {})
    missing = [k for k in REQUIRED_CONTEXT if k not in ctx]
    if missing:
        raise DataError(f"{path}: context lacks {missing}")
    rows = [b for b in doc.get("benchmarks", []) if b.get("run_type", "iteration") == "iteration"]
    medians = [b for b in doc.get("benchmarks", []) if b.get("aggregate_name") == "median"]
    rows = medians or rows
    if not rows:
        raise DataError(f"{path}: no benchmark results")
    extras = []
    for b in rows:
        if "error_occurred" in b and b["error_occurred"]:
            raise DataError(f"{path}: {b['name']} failed: {b.get('error_message')}")
        if b.get("label") in BANDWIDTH_ROLES:
            if "GB/s" not in b:
                raise DataError(f"{path}: {b['name']} lacks GB/s")
            shape = (shape_text((int(b["M"]), int(b["N"]), int(b["K"]), int(b.get("L", 1)))) if "M" in b
                     else b.get("run_name", b["name"]).split("/")[1])
            extras.append(dict(name=b.get("run_name", b["name"]).split("/")[0], role=b["label"],
                               shape=shape, gbps=float(b["GB/s"]),
                               ms=float(b["real_time"]) * {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[b["time_unit"]]))
            continue
        lacking = [c for c in REQUIRED_COUNTERS if c not in b]
        if lacking:
            raise DataError(f"{path}: {b['name']} lacks counters {lacking}")
        if parse_label(b.get("label")) is None:
            raise DataError(f"{path}: {b['name']} has no role label ({', '.join(ROLE_STYLE)}, optionally followed "
                            f"by ' {EMULATED}'): {b.get('label')!r}")
    results = []
    for b in rows:
        if b.get("label") in BANDWIDTH_ROLES:
            continue
        impl = b.get("run_name", b["name"]).split("/")[0]
        role, emulated = parse_label(b["label"])
        results.append(dict(impl=impl, role=role, emulated=emulated,
                            M=int(b["M"]), N=int(b["N"]), K=int(b["K"]), L=int(b["L"]),
                            tflops=float(b["TFLOP/s"]), gbps=float(b["GB/s"]),
                            ms=float(b["real_time"]) * {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[b["time_unit"]]))
    return dict(path=pathlib.Path(path), stage=ctx["stage"], ctx=ctx, results=results, extras=extras,
                emulated=str(ctx["tcgen05"]).startswith("EMULATED"))


def performance(results):
    """The rows whose time is performance: every row but those that ran tcgen05 EMULATED. Every plot
    draws from this and nothing else; table_rows() gives EMULATED rows their time and no ratio."""
    return [r for r in results if not r["emulated"]]


def emulated_names(results):
    return sorted({f"{r['impl']} ({r['role']})" for r in results if r["emulated"]})


def shape_key(r):
    return (r["M"], r["N"], r["K"], r["L"])


def shape_text(key):
    m, n, k, l = key
    return f"{m}x{n}x{k}" + (f"x{l}" if l > 1 else "")


def is_square(key):
    return key[0] == key[1] == key[2] and key[3] == 1


def load_model(data_dir=DATA):
    """docs/data/b200_model.json, or None."""
    path = pathlib.Path(data_dir) / MODEL
    if not path.exists():
        return None
    doc = json.loads(path.read_text())
    if "shapes" not in doc:
        raise DataError(f"{path}: not a docs/b200_model.py file (no 'shapes')")
    return dict(path=path, doc=doc)


def load_tests(data_dir, stage):
    """docs/data/tests/<stage>.json (docs/test_results.py), or None."""
    path = pathlib.Path(data_dir) / TESTS / f"{stage}.json"
    if not path.exists():
        return None
    doc = json.loads(path.read_text())
    for key in ("gpu", "tcgen05", "suites", "totals", "commit", "date"):
        if key not in doc:
            raise DataError(f"{path}: lacks {key!r} (write it with docs/test_results.py)")
    return dict(path=path, doc=doc)


def load_runs(data_dir):
    """Every benchmark run in a folder, sorted by stage, each with its tests record and the files it is drawn
    from."""
    data_dir = pathlib.Path(data_dir)
    runs = []
    for p in sorted(data_dir.glob("*.json")):
        try:
            doc = json.loads(p.read_text())
        except json.JSONDecodeError as e:
            raise DataError(f"{p}: not JSON ({e})")
        if isinstance(doc, dict) and "benchmarks" in doc:
            run = load(p)
            run["tests"] = load_tests(data_dir, run["stage"])
            runs.append(run)
    return sorted(runs, key=lambda r: r["stage"])


def missing_data(runs, data_dir=DATA):
    """Stage folders of the repository with no benchmark JSON in data_dir: reported, never a crash."""
    have = {r["stage"] for r in runs}
    folders = sorted(p.name for p in ROOT.iterdir() if p.is_dir() and stage_key(p.name) and (p / "bench.cu").exists())
    return [f for f in folders if f not in have]


def stamp(ctx):
    return (f"{ctx['gpu']} | SM clock max {ctx['sm_clock_max_mhz']} MHz | CUDA runtime {ctx['runtime_cuda_version']}, "
            f"driver {ctx['driver_cuda_version']} | {ctx['date'][:10]} | commit {ctx['commit']}")


def short_stamp(ctx):
    return f"{ctx['gpu']}, CUDA {ctx['runtime_cuda_version']}, {ctx['date'][:10]}, commit {str(ctx['commit'])[:7]}"


def sources(run, model):
    """The files a run's plot is drawn from."""
    paths = [run["path"]]
    if run["emulated"]:
        if model:
            paths.append(model["path"])
        if run.get("tests"):
            paths.append(run["tests"]["path"])
    return paths


def series_label(impl, role):
    return f"{impl} ({role})" if role != "peer" else impl


def impls_of(results):
    out = []
    for role in ROLES:
        for r in results:
            if r["role"] == role and (r["impl"], role) not in out:
                out.append((r["impl"], role))
    return out


# --- Panels: each draws one axis and returns nothing; every panel has a title ---------------------------------

def log_limits(ax, values, pad=1.6):
    """A log axis that shows every value with a little room, never a decade of empty space below."""
    values = [v for v in values if v > 0]
    if values:
        ax.set_ylim(min(values) / pad, max(values) * pad)


def panel_squares(ax, results):
    vals = []
    for impl, role in impls_of(results):
        pts = sorted((r["M"], r["tflops"]) for r in results if r["impl"] == impl and r["role"] == role
                     and is_square(shape_key(r)))
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], label=series_label(impl, role), **series_style(impl, role))
            vals += [p[1] for p in pts]
    xs = sorted({r["M"] for r in results if is_square(shape_key(r))})
    ax.set_xscale("log", base=2)
    ax.set_xticks(xs, [str(x) for x in xs])
    ax.minorticks_off()
    ax.set_yscale("log")
    log_limits(ax, vals)
    ax.set_xlabel("M = N = K")
    ax.set_ylabel("TFLOP/s (log scale)")
    ax.grid(alpha=0.3, which="both")
    ax.set_title("TFLOP/s on square problems")


def panel_shapes(ax, results, keys):
    vals = []
    series = impls_of(results)
    for j, (impl, role) in enumerate(series):
        dodge = (j - (len(series) - 1) / 2) * 0.1  # side by side, so that close values do not hide each other
        pts = [(i + dodge, r["tflops"]) for i, key in enumerate(keys) for r in results
               if r["impl"] == impl and r["role"] == role and shape_key(r) == key]
        if pts:
            style = dict(series_style(impl, role), ls="none", ms=8)
            ax.plot([p[0] for p in pts], [p[1] for p in pts], label=series_label(impl, role), **style)
            vals += [p[1] for p in pts]
    ax.set_xticks(range(len(keys)), [shape_text(k) for k in keys], fontsize=8.5)
    ax.set_xlim(-0.5, len(keys) - 0.5)
    ax.set_yscale("log")
    log_limits(ax, vals)
    ax.set_xlabel("M x N x K")
    ax.set_ylabel("TFLOP/s (log scale)")
    ax.grid(alpha=0.3, which="both", axis="y")
    ax.set_title("TFLOP/s on M = 128 (decode-like) problems" if all(k[0] == 128 for k in keys)
                 else "TFLOP/s on other shapes")


def ratio_bars(ax, labels, ratios, colour, what, ref_label):
    """Bars of a ratio from zero, a line at 1 (= the reference), each bar labelled with its value."""
    xs = range(len(labels))
    ax.bar(xs, ratios, 0.6, color=colour, alpha=0.85)
    top = max(max(ratios), 1.0) * 1.18
    for x, v in zip(xs, ratios):
        ax.text(x, v + top * 0.015, f"{v:.3g}x", ha="center", va="bottom", fontsize=8.5)
    ax.axhline(1.0, color="black", lw=1, ls="--")
    ax.text(0.01, 0.985, f"dashed line: 1 = {ref_label}", ha="left", va="top", fontsize=8, transform=ax.transAxes)
    ax.set_ylim(0, top)
    ax.set_xlim(-0.6, len(labels) - 0.4)
    ax.set_xticks(list(xs), labels, fontsize=8.5, rotation=20 if len(labels) > 4 else 0,
                  ha="right" if len(labels) > 4 else "center")
    ax.set_ylabel(what)
    ax.grid(alpha=0.3, axis="y")


def panel_ratio(ax, stage_name, results):
    """The stage against its predecessor (or, with none, its peer) at every shape: the lesson as a ratio."""
    own = [r for r in results if r["role"] == "stage"]
    keys = sorted({shape_key(r) for r in own}, key=lambda k: (not is_square(k), k))
    ref_role = "predecessor" if any(r["role"] == "predecessor" for r in results) else "peer"
    labels, ratios, ref = [], [], None
    for key in keys:
        s = next(r for r in own if shape_key(r) == key)
        o = next((r for r in results if r["role"] == ref_role and shape_key(r) == key), None)
        if o and o["tflops"] > 0:
            labels.append(shape_text(key))
            ratios.append(s["tflops"] / o["tflops"])
            ref = o["impl"]
    if not ratios:
        ax.axis("off")
        ax.text(0.5, 0.5, f"no {ref_role} measured beside the stage", ha="center", va="center", transform=ax.transAxes)
        ax.set_title("stage / predecessor")
        return
    ratio_bars(ax, labels, ratios, stage_style(stage_name)[0]["color"],
               f"TFLOP/s of the stage / TFLOP/s of the {ref_role}", ref)
    ax.set_title(f"{stage_name} / {ref}" + (" (its predecessor)" if ref_role == "predecessor" else " (the library peer)"))


def panel_bandwidth(ax, extras):
    shapes = sorted({e["shape"] for e in extras})
    names = list(dict.fromkeys(e["name"] for e in extras))
    width = 0.8 / len(names)
    greys = ["black", "#bcbd22", "#dbdb8d", "#7f7f7f"]
    copy = {e["shape"]: e["gbps"] for e in extras if e["role"] == "copy"}
    for i, name in enumerate(names):
        vals = [next((e["gbps"] for e in extras if e["name"] == name and e["shape"] == sh), 0.0) for sh in shapes]
        xs = [j + (i - (len(names) - 1) / 2) * width for j in range(len(shapes))]
        ax.bar(xs, vals, width, label=name, color=greys[i % len(greys)], edgecolor="black", lw=0.5)
        for x, v, sh in zip(xs, vals, shapes):
            if sh in copy and copy[sh] > 0:
                ax.text(x, v, f"{100 * v / copy[sh]:.0f}%", ha="center", va="bottom", fontsize=8)
    ax.set_xticks(range(len(shapes)), shapes, fontsize=8.5)
    ax.set_ylim(0, max(e["gbps"] for e in extras) * 1.15)
    ax.set_xlabel("elements quantized (rows x columns); % = of the device copy")
    ax.set_ylabel("GB/s (fewest bytes the operation must move)")
    ax.grid(alpha=0.3, axis="y")
    ax.set_title("the quantizer against a device-to-device copy")


def model_series(model, stage_name):
    """[(M, N, K, predicted TFLOP/s upper bound)] of a stage (or a variant with a key of its own, such as 05a)
    in the B200 model, or None when it has none."""
    key = series_key(stage_name)
    shapes = model["doc"]["shapes"] if model else []
    for k in (key, (key or "")[:2]):
        if shapes and k in shapes[0]["stages"]:
            return [(s["M"], s["N"], s["K"], s["flops"] / s["stages"][k]["bound"] / 1e12) for s in shapes]
    return None


def model_same_as(model, stage_name):
    key = stage_key(stage_name)
    shapes = model["doc"]["shapes"] if model else []
    st = shapes[0]["stages"].get(key, {}) if shapes else {}
    return st.get("same_as")


def modelled_variants(model, run):
    """The variants of a run that the B200 model has a series of their own for (stage 05's first step)."""
    names = dict.fromkeys(r["impl"] for r in run["results"] if r["role"] == "variant")
    return [n for n in names if series_key(n) != series_key(run["stage"]) and model_series(model, n)
            and series_key(n) in model["doc"]["shapes"][0]["stages"]]


def panel_model(ax, model, stage_name, predecessor, variants=()):
    """B200 MODEL: the stage's predicted TFLOP/s upper bound against its predecessor's (and its modelled
    variants'), and the speed of light."""
    mine = model_series(model, stage_name)
    theirs = model_series(model, predecessor) if predecessor else None
    shapes = model["doc"]["shapes"]
    xs = range(len(shapes))
    vals = []
    if theirs:
        ax.plot(xs, [t for *_, t in theirs], label=f"{predecessor} (predecessor), MODEL",
                **dict(series_style(predecessor, "predecessor"), **plotting.MODEL_MARK, ms=9, ls="none"))
        vals += [t for *_, t in theirs]
    for name in variants:
        pts = model_series(model, name)
        ax.plot(xs, [t for *_, t in pts], label=f"{name} (variant), MODEL",
                **dict(series_style(name, "variant"), **plotting.MODEL_MARK, ms=9, ls="none"))
        vals += [t for *_, t in pts]
    ax.plot(xs, [t for *_, t in mine], label=f"{stage_name} (stage), MODEL",
            **dict(series_style(stage_name, "stage"), **plotting.MODEL_MARK, ms=9, ls="none"))
    vals += [t for *_, t in mine]
    sol = [s["sol"]["tflops"] for s in shapes]
    ax.plot(xs, sol, label="speed of light: max(FLOPs / peak, min bytes / bandwidth)", **plotting.SOL_STYLE)
    vals += sol
    ax.set_xticks(list(xs), [f"{s['M']}x{s['N']}x{s['K']}" for s in shapes], fontsize=8, rotation=20, ha="right")
    ax.set_yscale("log")
    log_limits(ax, vals, pad=1.4)
    ax.set_ylabel("predicted TFLOP/s (upper bound, log)")
    ax.grid(alpha=0.3, which="both", axis="y")
    ax.set_title("B200 MODEL: the most TFLOP/s the tiling allows", color=plotting.MODEL_COLOR)


def panel_model_ratio(ax, model, stage_name, predecessor, variants=()):
    """B200 MODEL: the stage's bound over its predecessor's (with no modelled predecessor, over its modelled
    variant's, the stage's first step; with neither, over SOL)."""
    mine = model_series(model, stage_name)
    theirs = model_series(model, predecessor) if predecessor else None
    shapes = model["doc"]["shapes"]
    labels = [f"{s['M']}x{s['N']}x{s['K']}" for s in shapes]
    colour = stage_style(stage_name)[0]["color"]
    if not theirs and variants:
        step = model_series(model, variants[0])
        ratios = [a[3] / b[3] for a, b in zip(mine, step)]
        ratio_bars(ax, labels, ratios, colour, "predicted TFLOP/s, stage / variant", variants[0])
        ax.set_title(f"B200 MODEL: {stage_name} / {variants[0]}\n(its variant, modelled apart; "
                     f"{predecessor or 'its predecessor'} has none)", color=plotting.MODEL_COLOR)
        return
    if theirs:
        ratios = [a[3] / b[3] for a, b in zip(mine, theirs)]
        ratio_bars(ax, labels, ratios, colour, "predicted TFLOP/s, stage / predecessor", predecessor)
        title = f"B200 MODEL: {stage_name} / {predecessor}"
        same = model_same_as(model, stage_name)
        if same and stage_key(predecessor) == same:
            title += "\n(the model gives both the same bound)"
        ax.set_title(title, color=plotting.MODEL_COLOR)
    else:
        ratios = [a[3] / s["sol"]["tflops"] for a, s in zip(mine, shapes)]
        ratio_bars(ax, labels, ratios, colour, "predicted TFLOP/s / speed of light", "speed of light")
        ax.set_title(f"B200 MODEL: {stage_name} / speed of light\n"
                     f"({predecessor or 'its predecessor'} has no B200 model)", color=plotting.MODEL_COLOR)


def panel_tests(ax, tests, stage_name, data_hint):
    """The stage's GPU test results on the GPU that ran them: what an emulated run can show."""
    if not tests:
        ax.axis("off")
        ax.text(0.5, 0.5, f"no test results recorded for {stage_name}\n({data_hint}/{TESTS}/{stage_name}.json: "
                "docs/test_results.py)", ha="center", va="center", transform=ax.transAxes)
        ax.set_title("correctness")
        return
    doc = tests["doc"]
    suites = {n: s for n, s in doc["suites"].items() if "Gpu" in n}
    names = sorted(suites, key=lambda n: (-(suites[n]["passed"] + suites[n]["failed"] + suites[n]["skipped"]), n))
    ys = range(len(names))
    passed = [suites[n]["passed"] for n in names]
    failed = [suites[n]["failed"] for n in names]
    skipped = [suites[n]["skipped"] for n in names]
    ax.barh(ys, passed, color="#2ca02c", label="passed")
    ax.barh(ys, failed, left=passed, color="#d62728", label="failed")
    ax.barh(ys, skipped, left=[p + f for p, f in zip(passed, failed)], color="#bbbbbb", label="skipped")
    for y, n in zip(ys, names):
        s = suites[n]
        total = s["passed"] + s["failed"] + s["skipped"]
        ax.text(total, y, f" {s['passed']} of {total} passed" + (f", {s['failed']} FAILED" if s["failed"] else ""),
                va="center", fontsize=8.5)
    ax.set_yticks(list(ys), names, fontsize=8.5)
    ax.set_ylim(len(names) - 0.4, -0.6)
    top = max([p + f + s for p, f, s in zip(passed, failed, skipped)] + [1])
    ax.set_xlim(0, top * 1.25)
    ax.set_xlabel("GPU tests per test suite")
    ax.grid(alpha=0.3, axis="x")
    t = doc["gpu_totals"] if "gpu_totals" in doc else doc["totals"]
    mode = "tcgen05 EMULATED" if str(doc["tcgen05"]).startswith("EMULATED") else "native tcgen05"
    ax.set_title(f"Correctness on {doc['gpu']}, {mode}: {t['passed']} of {t['passed'] + t['failed'] + t['skipped']} "
                 f"GPU tests passed against the CPU reference\n(driver {doc.get('driver', '?')}, CUDA "
                 f"{doc.get('cuda', '?')}, commit {str(doc['commit'])[:7]}, {doc['date']})")


# --- Stage 09: a GEMV, measured in GB/s against the streaming-read ceiling of the same run ---------------------

def is_gemv(run):
    """A GEMV run (context "kind": "gemv", stage 09): its unit is GB/s, its ceiling the streaming-read rows."""
    return run["ctx"].get("kind") == "gemv"


def gemv_ceiling(run):
    """{shape text: the fastest streaming-read row of that shape}: the ceiling of a GEMV run."""
    best = {}
    for e in run.get("extras", []):
        if e["role"] == "stream" and e["gbps"] > best.get(e["shape"], {"gbps": 0.0})["gbps"]:
            best[e["shape"]] = e
    return best


def gemv_keys(run):
    """The shapes of a GEMV run, smallest to largest by the bytes the weights take (M x K x L)."""
    return sorted({shape_key(r) for r in run["results"]}, key=lambda k: (k[0] * k[2] * k[3], k))


CEILING_LABEL = "streaming read (best of the run): the ceiling"
CEILING_STYLE = dict(color="white", edgecolor="black", hatch="////", lw=0.6)


def gemv_bars(ax, run, keys, series, value):
    """Grouped bars, one group per shape: series = [(label, style, {shape key: row})]; returns the bars' x."""
    width = 0.8 / len(series)
    placed = []
    for i, (label, style, rows) in enumerate(series):
        xs = [j + (i - (len(series) - 1) / 2) * width for j in range(len(keys))]
        vals = [value(rows[k]) if k in rows else 0.0 for k in keys]
        ax.bar(xs, vals, width, label=label, **style)
        placed.append((xs, vals, label))
    ax.set_xticks(range(len(keys)), [shape_text(k) for k in keys], fontsize=8.5, rotation=20, ha="right")
    ax.set_xlim(-0.5, len(keys) - 0.5)
    ax.set_xlabel("M x N x K (x L): the weights are M x K, the vector K, per batch")
    return placed


def gemv_series(run, keys, roles):
    """(label, bar style, {key: row}) per measured implementation of the given roles, in role order."""
    results = performance(run["results"])
    out = []
    for impl, role in impls_of([r for r in results if r["role"] in roles]):
        rows = {shape_key(r): r for r in results if r["impl"] == impl and r["role"] == role}
        style = series_style(impl, role)
        out.append((series_label(impl, role), dict(color=style["color"], edgecolor="black", lw=0.4), rows))
    return out


def panel_gemv_bandwidth(ax, run):
    """GB/s per shape: the ceiling, the stage, its base (04) and the peer."""
    keys = gemv_keys(run)
    ceiling = {k: dict(gbps=c["gbps"]) for k in keys for c in [gemv_ceiling(run).get(shape_text(k))] if c}
    series = [(CEILING_LABEL, CEILING_STYLE, ceiling)] + gemv_series(run, keys, ("stage", "predecessor", "peer"))
    placed = gemv_bars(ax, run, keys, series, lambda r: r["gbps"])
    ax.set_yscale("log")
    log_limits(ax, [v for _, vals, _ in placed for v in vals], pad=1.5)
    ax.set_ylabel("GB/s = bytes a GEMV must move / time (log)")
    ax.grid(alpha=0.3, which="both", axis="y")
    ax.set_title("GB/s of the stage, the ceiling, its base and the library peer")


def panel_gemv_fraction(ax, run):
    """The same rows as fractions of the ceiling of their shape (1 = the streaming read)."""
    keys = gemv_keys(run)
    ceiling = gemv_ceiling(run)
    keys = [k for k in keys if shape_text(k) in ceiling]
    series = gemv_series(run, keys, ("stage", "peer", "predecessor"))
    placed = gemv_bars(ax, run, keys, series, lambda r: r["gbps"] / ceiling[shape_text(shape_key(r))]["gbps"])
    for xs, vals, label in placed:
        for x, v in zip(xs, vals):
            if v > 0:
                ax.text(x, v + 0.01, f"{v:.2f}" if v >= 0.01 else f"{v:.1g}", ha="center", va="bottom", fontsize=6.5,
                        rotation=90)
    ax.axhline(1.0, color="black", lw=1, ls="--")
    ax.text(0.005, 0.985, "dashed line: 1 = the streaming read of the same shape, same run", ha="left", va="top",
            fontsize=8, transform=ax.transAxes)
    ax.set_ylim(0, 1.25)
    ax.set_ylabel("GB/s / GB/s of the streaming read")
    ax.grid(alpha=0.3, axis="y")
    ax.set_title("As a fraction of the streaming-read ceiling")


def panel_gemv_variants(ax, run):
    """Every configuration of the stage (the stage and its variants) as a fraction of the ceiling, one cell
    per shape: which design choice matters where."""
    keys = gemv_keys(run)
    ceiling = gemv_ceiling(run)
    keys = [k for k in keys if shape_text(k) in ceiling]
    own = [r for r in performance(run["results"]) if r["role"] in OWN_ROLES]
    names = list(dict.fromkeys(r["impl"] for role in OWN_ROLES for r in own if r["role"] == role))
    grid = [[next((r["gbps"] / ceiling[shape_text(k)]["gbps"] for r in own if r["impl"] == name and shape_key(r) == k),
                  float("nan")) for k in keys] for name in names]
    lo = min([v for row in grid for v in row if v == v] + [1.0])
    image = ax.imshow(grid, cmap="RdYlGn", vmin=min(0.5, lo), vmax=1.0, aspect="auto")
    for i, row in enumerate(grid):
        for j, v in enumerate(row):
            if v == v:
                ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=8,
                        fontweight="bold" if i == 0 else "normal")
    ax.set_xticks(range(len(keys)), [shape_text(k) for k in keys], fontsize=8.5, rotation=20, ha="right")
    ax.set_yticks(range(len(names)), [f"{n} (the stage)" if i == 0 else n for i, n in enumerate(names)], fontsize=8.5)
    ax.set_xlabel("M x N x K (x L)")
    ax.figure.colorbar(image, ax=ax, fraction=0.03, pad=0.01, label="of the streaming read")
    ax.set_title("Every configuration of the stage as a fraction of the ceiling (each variant changes one choice)")


def gemv_table(run, variants=True):
    """A GEMV run's results: per shape the ceiling, then each row's time, GB/s, fraction of the ceiling and
    time against the stage's. Without `variants`, only the stage, its base and the peer."""
    ceiling = gemv_ceiling(run)
    lines = [f"**{run['stage']}** (GEMV: GB/s = the bytes a GEMV must move / time): {stamp(run['ctx'])}", "",
             "| shape (M x N x K x L) | implementation | role | time us | GB/s | of stream read | time / stage's |",
             "|---|---|---|---|---|---|---|"]
    for key in gemv_keys(run):
        rows = [r for r in run["results"] if shape_key(r) == key and (variants or r["role"] != "variant")]
        st = next((r for r in rows if r["role"] == "stage" and not r["emulated"]), None)
        c = ceiling.get(shape_text(key))
        if c:
            lines.append(f"| {shape_text(key)} | streaming read (best of the run) | ceiling | {1e3 * c['ms']:.2f} | "
                         f"{c['gbps']:.0f} | 1 | - |")
        for r in rows:
            if r["emulated"]:
                lines.append(f"| {shape_text(key)} | {r['impl']} | {r['role']} | {1e3 * r['ms']:.2f} | "
                             f"{EMULATED_TEXT} | - | - |")
                continue
            frac = f"{r['gbps'] / c['gbps']:.3f}" if c else "-"
            vs = f"{r['ms'] / st['ms']:.2f}" if st and r is not st else "-"
            lines.append(f"| {shape_text(key)} | {r['impl']} | {r['role']} | {1e3 * r['ms']:.2f} | {r['gbps']:.0f} | "
                         f"{frac} | {vs} |")
    return "\n".join(lines) + "\n"


def predecessor_of(run):
    return next((r["impl"] for r in run["results"] if r["role"] == "predecessor"), None)


def panels_of(run, model):
    """The panels of a run's plot, as (kind, draw(ax)) pairs, in reading order."""
    results = performance(run["results"])
    stage = run["stage"]
    if is_gemv(run):
        return [("gemv_bandwidth", lambda ax: panel_gemv_bandwidth(ax, run)),
                ("gemv_fraction", lambda ax: panel_gemv_fraction(ax, run)),
                ("gemv_variants", lambda ax: panel_gemv_variants(ax, run))]
    if run["emulated"]:
        out = []
        pred = predecessor_of(run)
        if model and model_series(model, stage):
            variants = modelled_variants(model, run)
            out.append(("model", lambda ax: panel_model(ax, model, stage, pred, variants)))
            out.append(("model_ratio", lambda ax: panel_model_ratio(ax, model, stage, pred, variants)))
        if run.get("tests") or not out:  # without a record the title says so, rather than an empty panel
            out.append(("tests", lambda ax: panel_tests(ax, run.get("tests"), stage, run["path"].parent.name)))
        return out
    squares = sorted({shape_key(r) for r in results if is_square(shape_key(r))})
    others = sorted({shape_key(r) for r in results if not is_square(shape_key(r))})
    out = []
    if squares:
        out.append(("squares", lambda ax: panel_squares(ax, results)))
    if others:
        out.append(("shapes", lambda ax: panel_shapes(ax, results, others)))
    out.append(("ratio", lambda ax: panel_ratio(ax, stage, results)))
    if run.get("extras"):
        out.append(("bandwidth", lambda ax: panel_bandwidth(ax, run["extras"])))
    return out


def figure_legend(fig, axes, ncol=3):
    """One legend for the figure, under its panels, never over data: a series has one style everywhere."""
    handles, labels = [], []
    for ax in axes:
        for h, l in zip(*ax.get_legend_handles_labels()):
            if l not in labels:
                handles.append(h)
                labels.append(l)
    if handles:
        try:
            fig.legend(handles, labels, loc="outside lower center", ncol=min(ncol, len(labels)), frameon=False)
        except ValueError:  # matplotlib < 3.7 (--results accepts any version): below the panels, inside
            fig.legend(handles, labels, loc="lower center", ncol=min(ncol, len(labels)), frameon=False)


def wrap(text, width=115):
    return "\n".join(textwrap.fill(line, width) for line in text.split("\n"))


def run_title(run):
    title = f"{run['stage']}: {run['ctx'].get('stage_idea', '')}"
    if run["emulated"]:
        title += (f"\nOn the {run['ctx']['gpu']} tcgen05 ran EMULATED, so its times are not performance and are not "
                  "drawn. Drawn instead: the B200 MODEL of the stage, and its test results")
        if not run.get("tests"):
            title += (f" (none recorded in {run['path'].parent.name}/{TESTS}/{run['stage']}.json: the stage's README "
                      "says what was run and checked)")
    else:
        title += f"\nmeasured on {stamp(run['ctx'])}"
    return wrap(title)


def plot_stage(plt, run, model, audit=None):
    """A stage's figure as SVG bytes: panels two to a row (an odd last one spans the row; a GEMV's, one to a row:
    they have ten shapes each), one legend below."""
    panels = panels_of(run, model)
    per_row = 1 if is_gemv(run) else 2
    rows = (len(panels) + per_row - 1) // per_row
    fig = plt.figure(figsize=(11, 0.9 + 3.9 * rows), layout="constrained")
    grid = fig.add_gridspec(rows, 2)
    axes = []
    for i, (kind, draw) in enumerate(panels):
        last_alone = per_row == 1 or (i == len(panels) - 1 and len(panels) % 2 == 1)
        ax = fig.add_subplot(grid[i // per_row, :] if last_alone else grid[i // 2, i % 2])
        draw(ax)
        axes.append(ax)
    figure_legend(fig, axes)
    fig.suptitle(run_title(run), fontsize=10.5)
    data = plotting.svg_bytes(fig, plotting.source_line(sources(run, model)))
    if audit is not None:
        audit.append(drawn(fig, f"{run['stage']}.svg"))
    plt.close(fig)
    return data


def plot_beside(plt, docs_run, your_run, model, audit=None):
    """--results: the committed run (left, or above for a GEMV) and yours (right, or below), one row (pair of
    rows) per kind of panel, each on one y scale; the two GPUs never share a panel."""
    cols = [(f"docs/data: {docs_run['ctx']['gpu']}", docs_run) if docs_run else None,
            (f"yours: {your_run['ctx']['gpu']}", your_run)]
    kinds = []
    per_col = []
    for col in cols:
        p = dict(panels_of(col[1], model)) if col else {}
        per_col.append(p)
        kinds += [k for k in p if k not in kinds]
    # A GEMV's panels have ten shapes each: too many for half a row, so the two runs go one above the other.
    stacked = is_gemv(your_run) or bool(docs_run and is_gemv(docs_run))
    rows = 2 * len(kinds) if stacked else len(kinds)
    fig = plt.figure(figsize=(11, 1.0 + 3.6 * rows), layout="constrained")
    grid = fig.add_gridspec(rows, 1 if stacked else 2)
    axes = []
    for row, kind in enumerate(kinds):
        row_axes = []
        for c, (col, p) in enumerate(zip(cols, per_col)):
            ax = fig.add_subplot(grid[2 * row + c, 0] if stacked else grid[row, c])
            if col is None or kind not in p:
                ax.axis("off")
                ax.text(0.5, 0.5, "no committed run of this stage" if col is None else "nothing of this kind",
                        ha="center", va="center", transform=ax.transAxes)
                continue
            p[kind](ax)
            ax.set_title(f"{col[0]}\n{ax.get_title()}", fontsize=9.5)
            row_axes.append(ax)
        if len(row_axes) == 2 and kind not in ("tests", "gemv_variants"):
            lo = min(a.get_ylim()[0] for a in row_axes)
            hi = max(a.get_ylim()[1] for a in row_axes)
            for a in row_axes:
                a.set_ylim(lo, hi)
        axes += row_axes
    figure_legend(fig, axes)
    fig.suptitle(wrap(f"{your_run['stage']}: your run beside the committed one\nyours: {stamp(your_run['ctx'])}"
                      + (f"\ncommitted: {stamp(docs_run['ctx'])}" if docs_run else "")), fontsize=10)
    data = plotting.svg_bytes(fig)
    if audit is not None:
        audit.append(drawn(fig, f"{your_run['stage']}.svg"))
    plt.close(fig)
    return data


def overview_groups(runs):
    """Measured GEMM runs grouped by where they ran: {(source, gpu): [runs]}. Emulated runs are left out, and
    GEMV runs (GB/s at N = 1, no square problems: their own plot)."""
    groups = {}
    for run in runs:
        if not run["emulated"] and not is_gemv(run):
            groups.setdefault((run.get("source", "docs/data"), run["ctx"]["gpu"]), []).append(run)
    return groups


def plot_overview(plt, runs, audit=None):
    """Every measured stage on square problems, one panel per GPU (never two GPUs in one panel)."""
    groups = overview_groups(runs)
    n = max(1, len(groups))
    fig, axes = plt.subplots(n, 1, figsize=(11, 0.8 + 4.6 * n), layout="constrained", squeeze=False)
    axes = [a[0] for a in axes]
    used = []
    for ax, ((source, gpu), group) in zip(axes, sorted(groups.items())):
        peers = {}
        for run in group:
            results = [r for r in performance(run["results"]) if is_square(shape_key(r))]
            for role in OWN_ROLES:
                for impl in dict.fromkeys(r["impl"] for r in results if r["role"] == role):
                    pts = sorted((r["M"], r["tflops"]) for r in results if r["impl"] == impl and r["role"] == role)
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], label=run["stage"] if role == "stage" else impl,
                            **series_style(impl, role))
            for r in results:
                if r["role"] == "peer":
                    peers.setdefault(r["impl"], {})[r["M"]] = r["tflops"]  # the latest stage's run of it
            used.append(run)
        for name, pts in peers.items():
            ax.plot(sorted(pts), [pts[x] for x in sorted(pts)], label=name, **series_style(name, "peer"))
        xs = sorted({x for line in ax.get_lines() for x in line.get_xdata()})
        ax.set_xscale("log", base=2)
        ax.set_xticks(xs, [str(int(x)) for x in xs])
        ax.minorticks_off()
        ax.set_yscale("log")
        log_limits(ax, [y for line in ax.get_lines() for y in line.get_ydata()])
        ax.set_xlabel("M = N = K")
        ax.set_ylabel("TFLOP/s (log scale)")
        ax.grid(alpha=0.3, which="both")
        ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
        ax.set_title(f"Every measured stage on square problems, {gpu}" + ("" if source == "docs/data" else f" ({source})"))
    if not groups:
        axes[0].axis("off")
        axes[0].text(0.5, 0.5, "no measured runs", ha="center", va="center")
    emulated = [r["stage"] for r in runs if r["emulated"]]
    note = ""
    if emulated:
        gpus = sorted({r["ctx"]["gpu"] for r in runs if r["emulated"]})
        note = (f"Not drawn: {', '.join(emulated)} (tcgen05 emulated on {', '.join(gpus)}, so no performance; "
                "their B200 model is in b200_model.svg)")
    gemvs = [r["stage"] for r in runs if is_gemv(r) and not r["emulated"]]
    if gemvs:
        note += ("; " if note else "Not drawn: ") + f"{', '.join(gemvs)} (a GEMV, N = 1: GB/s in its own plot)"
    envs = {}
    for r in used:
        c = r["ctx"]
        envs.setdefault(f"{c['gpu']}, CUDA {c['runtime_cuda_version']}, driver {c['driver_cuda_version']}", set()).update(
            {c["date"][:10], str(c["commit"])[:7]})
    stamps = "; ".join(f"{k}: {', '.join(sorted(v))}" for k, v in sorted(envs.items()))
    fig.suptitle(wrap("Every measured stage" + (f"\n{note}" if note else "") + f"\n{stamps}", 130), fontsize=9.5)
    data = plotting.svg_bytes(fig, plotting.source_line([r["path"] for r in used]) if used else "")
    if audit is not None:
        audit.append(drawn(fig, "overview.svg"))
    plt.close(fig)
    return data


def plot_bank_map(plt, path, doc):
    """One warp's 16-byte shared-memory reads as wavefronts: x = bank, y = wavefront, a box per lane."""
    from matplotlib.patches import Rectangle
    layouts = doc["layouts"]
    fig, axes = plt.subplots(1, len(layouts), figsize=(6 * len(layouts), 5.2), squeeze=False)
    lanes_per_phase = 128 // doc["width_bytes"]
    for ax, (name, layout) in zip(axes[0], layouts.items()):
        y0 = 0
        lanes = layout["lanes"]
        for first in range(0, len(lanes), lanes_per_phase):
            phase = lanes[first:first + lanes_per_phase]
            seen = {}  # bank group -> distinct addresses already placed in this phase
            for a in phase:
                group = (a["byte"] // doc["width_bytes"]) % (128 // doc["width_bytes"])
                addrs = seen.setdefault(group, [])
                if a["byte"] not in addrs:
                    addrs.append(a["byte"])
                level = addrs.index(a["byte"])
                ax.add_patch(Rectangle((group * 4, y0 + level), 4, 1, facecolor=f"C{first // lanes_per_phase}",
                                       edgecolor="white", alpha=0.75))
                ax.text(group * 4 + 2, y0 + level + 0.5, f"L{a['lane']} r{a['row']}", ha="center",
                        va="center", fontsize=5.5)
            y0 += max(len(v) for v in seen.values())
        ax.set_xlim(0, 32)
        ax.set_ylim(y0, 0)
        ax.set_xticks(range(0, 33, 4))
        ax.set_xlabel("bank")
        ax.set_ylabel("wavefront")
        ax.set_title(f"{name}: {layout['wavefronts']} wavefronts (ideal {layout['ideal']})", fontsize=10)
    fig.suptitle(f"{doc['stage']}: {doc['access']}\n(colour = phase of {lanes_per_phase} lanes; "
                 "lanes 16-31 read the rows of lanes 0-15)", fontsize=9)
    fig.tight_layout()
    data = plotting.svg_bytes(fig, plotting.source_line([path]))
    plt.close(fig)
    return data


def table_rows(run):
    """One row per stage or variant result and shape; an EMULATED one shows its time and no performance."""
    by = {}
    for r in run["results"]:
        by.setdefault(shape_key(r), []).append(r)
    rows = []
    for key in sorted(by, key=lambda k: (not is_square(k), k)):
        group = by[key]
        pred = next((r for r in group if r["role"] == "predecessor"), None)
        peer = next((r for r in group if r["role"] == "peer"), None)
        for s in [r for role in OWN_ROLES for r in group if r["role"] == role]:
            name = run["stage"] if s["role"] == "stage" else s["impl"]
            if s["emulated"]:
                rows.append(f"| {name} | {shape_text(key)} | {s['ms']:.3f} | {EMULATED_TEXT} | - | - | - |")
                continue

            def ratio(other):
                if other and other["emulated"]:
                    return f"- ({EMULATED})"
                return f"{s['tflops'] / other['tflops']:.3g}x" if other and other["tflops"] > 0 else "-"
            if peer and not peer["emulated"]:
                peer_text = f"{ratio(peer)} ({peer['impl']}: {peer['tflops']:.2f} TFLOP/s)"
            else:
                peer_text = f"- ({peer['impl']}: {EMULATED_TEXT})" if peer else "-"
            rows.append(f"| {name} | {shape_text(key)} | {s['ms']:.3f} | {s['tflops']:.2f} | {s['gbps']:.0f} | "
                        f"{ratio(pred)} | {peer_text} |")
    return rows


def table(runs):
    head = ["| stage | shape | time ms | TFLOP/s | GB/s | vs predecessor | vs peer (peer: its TFLOP/s) |",
            "|---|---|---|---|---|---|---|"]
    lines = []
    for run in runs:
        if is_gemv(run):
            lines.append("\n" + gemv_table(run, variants=len(runs) == 1))
            continue
        note = " (tcgen05 EMULATED: not performance)" if run["emulated"] else ""
        lines.append(f"\n**{run['stage']}**{note}: {stamp(run['ctx'])}\n")
        lines += head + table_rows(run)
    return "\n".join(lines).strip() + "\n"


def between_markers(text, body, begin=BEGIN, end=END):
    """`text` with `body` between the markers, or None when the markers are missing."""
    pattern = re.compile(re.escape(begin) + ".*?" + re.escape(end), re.S)
    if not pattern.search(text):
        return None
    return pattern.sub(lambda _: f"{begin}\n{body}{end}", text)


BW_BEGIN, BW_END = "<!-- bandwidth:begin -->", "<!-- bandwidth:end -->"


def bandwidth_table(run):
    """The non-GEMM benchmarks of a run, each against the device copy of the same shape."""
    extras = run.get("extras", [])
    copy = {e["shape"]: e["gbps"] for e in extras if e["role"] == "copy"}
    lines = [f"{stamp(run['ctx'])}", "", "| operation | shape | time ms | GB/s | of device copy |", "|---|---|---|---|---|"]
    for e in extras:
        frac = f"{100 * e['gbps'] / copy[e['shape']]:.1f}%" if e["shape"] in copy else "-"
        lines.append(f"| {e['name']} | {e['shape']} | {e['ms']:.3f} | {e['gbps']:.0f} | {frac} |")
    return "\n".join(lines) + "\n"


def ncu_table(doc):
    """A docs/ncu_metrics.py file as a markdown table."""
    def v(metrics, name):
        return metrics.get(name, {}).get("value", float("nan"))
    shape = "x".join(str(v) for v in doc["shape"]) if "shape" in doc else f"{doc['size']}^3"
    if doc.get("tcgen05", "").startswith("EMULATED"):
        # Timings, pipes and stalls of an emulated run describe the emulator. The shared-memory stores
        # are the kernel's own (the emulator keeps its state in global memory).
        lines = [f"Nsight Compute {doc['ncu'].split()[1] if len(doc['ncu'].split()) > 1 else doc['ncu']} on "
                 f"{doc['gpu']}, {shape}, first launch, tcgen05 EMULATED: shared-memory stores only "
                 "(`python3 docs/ncu_metrics.py`):", "",
                 "| stage | shared stores (warp instructions) | store wavefronts | wavefronts per store | "
                 "store bank conflicts |", "|---|---|---|---|---|"]
        for stage, entry in doc["stages"].items():
            m = entry["metrics"]
            stores = v(m, "sm__sass_inst_executed_op_shared_st.sum")
            waves = v(m, "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum")
            lines.append(f"| {stage} | {stores:,.0f} | {waves:,.0f} | {waves / stores if stores else float('nan'):.2f} | "
                         f"{v(m, 'l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum'):,.0f} |")
        return "\n".join(lines) + "\n"
    lines = [f"Nsight Compute {doc['ncu'].split()[1] if len(doc['ncu'].split()) > 1 else doc['ncu']} on "
             f"{doc['gpu']}, {shape}, first launch (`python3 docs/ncu_metrics.py`):", "",
             "| stage | registers / thread | shared loads | load wavefronts | load bank conflicts | shared stores | store wavefronts | "
             "store bank conflicts | FMA pipe active | DRAM throughput | warps active | long_scoreboard | "
             "top stall reasons (cycles per issued instruction) |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for stage, entry in doc["stages"].items():
        m = entry["metrics"]
        stalls = sorted(((v(m, k), k.split("stalled_")[1].split("_per_issue")[0]) for k in m
                         if "issue_stalled" in k and not k.split("stalled_")[1].startswith("selected")),
                        reverse=True)[:3]
        lines.append(
            f"| {stage} | {v(m, 'launch__registers_per_thread'):.0f} | "
            f"{v(m, 'sm__sass_inst_executed_op_shared_ld.sum'):,.0f} | "
            f"{v(m, 'l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum'):,.0f} | "
            f"{v(m, 'l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum'):,.0f} | "
            f"{v(m, 'sm__sass_inst_executed_op_shared_st.sum'):,.0f} | "
            f"{v(m, 'l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum'):,.0f} | "
            f"{v(m, 'l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum'):,.0f} | "
            f"{v(m, 'sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active'):.1f}% | "
            f"{v(m, 'dram__throughput.avg.pct_of_peak_sustained_elapsed'):.1f}% | "
            f"{v(m, 'sm__warps_active.avg.pct_of_peak_sustained_active'):.1f}% | "
            f"{v(m, 'smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio'):.2f} | "
            + ", ".join(f"{name} {val:.2f}" for val, name in stalls) + " |")
    return "\n".join(lines) + "\n"


# --- Generated prose: which GPU produced what, and what each layer adds (from the data, never typed in) -------

GPUS_BEGIN, GPUS_END = "<!-- gpus:begin -->", "<!-- gpus:end -->"
LAYERS_BEGIN, LAYERS_END = "<!-- layers:begin -->", "<!-- layers:end -->"


def stage_span(stages):
    """['00_naive', '01_x', '02_y'] -> '00-02'; ['05_a', '07_b'] -> '05, 07'."""
    keys = [stage_key(s) for s in stages]
    nums = [int(k[:2]) for k in keys]
    if len(keys) > 2 and all(k.isdigit() for k in keys) and nums == list(range(nums[0], nums[0] + len(nums))):
        return f"{keys[0]}-{keys[-1]}"
    return ", ".join(keys)


def article(gpu):
    return "an" if re.match(r"(?i)[aeiou]|NVIDIA|H\d|RTX", gpu) and not gpu.lower().startswith("u") else "a"


def gpu_sentences(runs):
    """One sentence per (GPU, emulated or not), in stage order, from the runs' own contexts."""
    groups = []
    for run in runs:
        key = (run["ctx"]["gpu"], run["emulated"])
        if groups and groups[-1][0] == key:
            groups[-1][1].append(run["stage"])
        else:
            groups.append((key, [run["stage"]]))
    out = []
    for (gpu, emulated), stages in groups:
        span = stage_span(stages)
        word = "Stage" if len(stages) == 1 else "Stages"
        if emulated:
            out.append(f"{word} {span} ran on {article(gpu)} **{gpu}** with `tcgen05` emulated: those runs are "
                       "correctness results, and their times mean nothing.")
        else:
            out.append(f"{word} {span} {'was' if len(stages) == 1 else 'were'} measured on {article(gpu)} **{gpu}**.")
    return " ".join(out)


def gpus_section(runs):
    return (gpu_sentences(runs) if runs else "No benchmark data yet.") + "\n"


def find(run, impl_role, key):
    return next((r for r in run["results"] if shape_key(r) == key and not r["emulated"]
                 and (r["role"] == impl_role or r["impl"] == impl_role)), None)


def layers_section(runs, model):
    """The two tables of docs/README.md's "What each layer adds": measured stages at SUMMARY_SHAPES, and the
    tcgen05 stages by their test results and the B200 model."""
    def lesson(stage, i):
        return LESSONS.get(stage_key(stage), ("-", "-"))[i]
    def link(stage):
        return f"[{stage}](../{stage}/README.md)" if (ROOT / stage).is_dir() else stage
    measured = [r for r in runs if not r["emulated"] and not is_gemv(r)]
    emulated = [r for r in runs if r["emulated"]]
    gemvs = [r for r in runs if is_gemv(r) and not r["emulated"]]
    lines = []
    gpus = sorted({r["ctx"]["gpu"] for r in measured})
    if measured:
        gpu = " / ".join(gpus)
        heads = [f"{gpu}, {shape_text(k)}" if not is_square(k) else f"{gpu}, {k[0]}^3" for k in SUMMARY_SHAPES]
        lines += [f"Measured: TFLOP/s on the {gpu} at {' and '.join(shape_text(k) for k in SUMMARY_SHAPES)} "
                  "([the tables below](#results)); in brackets, against the stage before.", "",
                  f"| stage | adds | {heads[0]} | {heads[1]} | what it teaches |", "| --- | --- | --- | --- | --- |"]
        for i, run in enumerate(measured):
            cells = []
            for key in SUMMARY_SHAPES:
                s, p = find(run, "stage", key), find(run, "predecessor", key)
                if not s:
                    cells.append("-")
                    continue
                text = f"{s['tflops']:.3g}" + (" TFLOP/s" if i == 0 and key == SUMMARY_SHAPES[0] else "")
                if p and p["tflops"] > 0:
                    text += f" ({s['tflops'] / p['tflops']:.2g}x)"
                cells.append(text)
            lines.append(f"| {link(run['stage'])} | {lesson(run['stage'], 0)} | {cells[0]} | {cells[1]} | "
                         f"{lesson(run['stage'], 1)} |")
    if emulated:
        tested = sorted({r["tests"]["doc"]["gpu"] for r in emulated if r.get("tests")}) or \
            sorted({r["ctx"]["gpu"] for r in emulated})
        heads = [f"B200 MODEL, {k[0]}^3" if is_square(k) else f"B200 MODEL, {shape_text(k)}" for k in SUMMARY_SHAPES]
        lines += ["", "The tensor-core stages: their GPU tests on the " + " / ".join(tested) + " (tcgen05 emulated), "
                  "and the B200 MODEL's lower bound on time at the same shapes, an upper bound on TFLOP/s "
                  "([b200_model.md](b200_model.md)).", "",
                  f"| stage | adds | tests ({' / '.join(tested)}, emulated) | {heads[0]} | {heads[1]} |",
                  "| --- | --- | --- | --- | --- |"]
        for run in emulated:
            t = run["tests"]["doc"]["totals"] if run.get("tests") else None
            tests = f"{t['passed']} of {t['passed'] + t['failed'] + t['skipped']} pass" if t else "not recorded"
            # A stage whose first step the model has apart (05a) gets a row for that step first.
            # Its tests row stays on the stage: the record does not say which step a suite belongs to.
            steps = [(series_key(v), f"{link(run['stage'])}, step 1: `{v}`", LESSONS.get(series_key(v), ("-",))[0],
                      "not recorded apart")
                     for v in (modelled_variants(model, run) if model else [])]
            steps.append((stage_key(run["stage"]), link(run["stage"]) + (", step 2" if steps else ""),
                          lesson(run["stage"], 0), tests))
            for key_, name, adds, tests in steps:
                cells = []
                same = model_same_as(model, run["stage"]) if key_ == stage_key(run["stage"]) else None
                for key in SUMMARY_SHAPES:
                    shape = next((s for s in (model["doc"]["shapes"] if model else [])
                                  if (s["M"], s["N"], s["K"], s["L"]) == key), None)
                    st = shape["stages"].get(key_) if shape else None
                    if not st:
                        cells.append("-")
                    elif same:
                        cells.append(f"same bound as {same}")
                    else:
                        cells.append(f">= {st['bound'] * 1e6:.3g} us (<= {shape['flops'] / st['bound'] / 1e12:.0f} TFLOP/s)")
                lines.append(f"| {name} | {adds} | {tests} | {cells[0]} | {cells[1]} |")
    if gemvs:
        lines += ["", "Off the GEMM path: a GEMV (N = 1) moves every byte of the weights once and does 2 FLOPs per "
                  "weight, so DRAM bounds it and its measure is GB/s, against a streaming read of the same bytes in "
                  "the same run ([09's tables](../09_gemv/README.md)):", "",
                  "| stage | adds | " + " | ".join(f"{r['ctx']['gpu']}, {shape_text(k)}" for r in gemvs[:1]
                                                    for k in GEMV_SUMMARY_SHAPES) + " | what it teaches |",
                  "| --- | --- | " + "--- | " * len(GEMV_SUMMARY_SHAPES) + "--- |"]
        for run in gemvs:
            ceiling = gemv_ceiling(run)
            cells = []
            for key in GEMV_SUMMARY_SHAPES:
                s, p = find(run, "stage", key), find(run, "predecessor", key)
                c = ceiling.get(shape_text(key))
                if not s or not c:
                    cells.append("-")
                    continue
                cells.append(f"{s['gbps']:.0f} GB/s, {s['gbps'] / c['gbps']:.2f} of the stream"
                             + (f" ({s['gbps'] / p['gbps']:.0f}x {p['impl'][:2]})" if p and p["gbps"] > 0 else ""))
            lines.append(f"| {link(run['stage'])} | {lesson(run['stage'], 0)} | " + " | ".join(cells)
                         + f" | {lesson(run['stage'], 1)} |")
            peers = [(p["impl"], p["gbps"] / ceiling[shape_text(k)]["gbps"]) for k in GEMV_SUMMARY_SHAPES
                     for p in [find(run, "peer", k)] if p and shape_text(k) in ceiling]
            if peers:
                lo, hi = min(f for _, f in peers), max(f for _, f in peers)
                lines += ["", f"For scale: {peers[0][0]} reaches {lo:.2f}-{hi:.2f} of the stream at the same shapes "
                              f"on the {run['ctx']['gpu']}."]
    big = SUMMARY_SHAPES[0]
    scale = []
    for run in reversed(measured):
        for r in run["results"]:
            if r["role"] == "peer" and shape_key(r) == big and r["impl"] not in [s[0] for s in scale]:
                scale.append((r["impl"], r["tflops"], run["ctx"]["gpu"]))
    if scale:
        lines += ["", f"For scale, at {big[0]}^3: " + "; ".join(f"{name} ran at {v:.0f} TFLOP/s on the {gpu}"
                                                                 for name, v, gpu in scale) + "."]
        last = measured[-1]
        s, p = find(last, "stage", big), find(last, "peer", big)
        if s and p and p["tflops"] > 0:
            lines[-1] += (f" The last GEMM stage on CUDA cores, {last['stage']}, reaches {100 * s['tflops'] / p['tflops']:.0f}% "
                          f"of {p['impl']}.")
    if model:
        shape = next((s for s in model["doc"]["shapes"] if (s["M"], s["N"], s["K"], s["L"]) == big), None)
        peak = model["doc"]["figures"]["nvfp4_dense_flops"]["value"]
        if shape:
            lines.append(f"The B200's published dense NVFP4 rate is {peak / 1e15:g} PFLOP/s, so its speed of light at "
                         f"{big[0]}^3 is {shape['sol']['t'] * 1e6:.3g} us.")
    return "\n".join(lines).strip() + "\n"


# --- Self-test on synthetic data ----------------------------------------------------------------------------

# The synthetic data set of --check. Every EMULATED row of it runs at this TFLOP/s, which no other row
# has: a plot that shows the value, or a table that prints it, has let an EMULATED row through.
SENTINEL_TFLOPS = 4242.0


def synthetic_docs():
    """Google Benchmark JSON as the harness writes it, for two stages: 99_synthetic, native, with a variant;
    98_synthetic_emu, whose stage, variant and predecessor ran tcgen05 EMULATED."""
    def doc(stage, tcgen05, rows, extras=()):
        ctx = {k: "synthetic" for k in REQUIRED_CONTEXT}
        ctx.update(stage=stage, stage_idea="synthetic data of docs/plot.py --check", tcgen05=tcgen05,
                   date="2000-01-01T00:00:00")
        benchmarks = []
        for impl, label, m, n, k, tflops in rows:
            benchmarks.append({"name": f"{impl}/{m}x{n}x{k}/manual_time", "run_name": f"{impl}/{m}x{n}x{k}/manual_time",
                               "run_type": "iteration", "time_unit": "ms",
                               "real_time": 42.0 if label.endswith(EMULATED) else 2 * m * n * k / (tflops * 1e9),
                               "TFLOP/s": tflops, "GB/s": 1.0, "M": m, "N": n, "K": k, "L": 1, "label": label})
        for name, label, gbps in extras:
            benchmarks.append({"name": f"{name}/64x64", "run_name": f"{name}/64x64", "run_type": "iteration",
                               "real_time": 1.0, "time_unit": "ms", "GB/s": gbps, "label": label})
        return {"context": ctx, "benchmarks": benchmarks}
    shapes = [(256, 256, 256), (512, 512, 512), (128, 7168, 2048)]
    native = [(impl, label, *sh, f * sh[0] / 256) for sh in shapes
              for impl, label, f in (("99_synthetic", "stage", 1.0), ("99_synthetic BN=128", "variant", 0.8),
                                     ("98_prev", "predecessor", 0.5), ("peer", "peer", 2.0))]
    emulated = [(impl, label, *sh, SENTINEL_TFLOPS if label.endswith(EMULATED) else 3.0) for sh in shapes
                for impl, label in (("98_synthetic_emu", "stage EMULATED"), ("98_synthetic_emu BN=128", "variant EMULATED"),
                                    ("97_prev_emu", "predecessor EMULATED"), ("peer", "peer"))]
    return {"99_synthetic": doc("99_synthetic", "not used", native,
                                [("copy", "copy", 2.0), ("quantize", "quantizer", 1.5)]),
            "98_synthetic_emu": doc("98_synthetic_emu", "EMULATED (timings are not performance)", emulated)}


def drawn(fig, name):
    """What a figure shows: every y value of its lines and bars, and its legend entries."""
    values, labels = [], []
    legends = list(fig.legends)
    for ax in fig.axes:
        for line in ax.get_lines():
            values += [float(v) for v in line.get_ydata()]
        values += [float(p.get_height()) for p in ax.patches if hasattr(p, "get_height")]
        values += [float(p.get_width()) for p in ax.patches if hasattr(p, "get_width")]
        if ax.get_legend():
            legends.append(ax.get_legend())
    for legend in legends:
        labels += [t.get_text() for t in legend.get_texts()]
    return dict(name=name, values=values, labels=labels)


def gemv_self_test(plt, folder):
    """A synthetic GEMV run (kind "gemv"): the streaming-read rows are its ceiling, never a benchmark row; its plot
    draws the ceiling, the stage, the base and the peer; its table gives each row's fraction of the ceiling."""
    failures = []
    ctx = {k: "synthetic" for k in REQUIRED_CONTEXT}
    ctx.update(stage="96_synthetic_gemv", stage_idea="synthetic GEMV of docs/plot.py --check", tcgen05="not used",
               date="2000-01-01T00:00:00", kind="gemv")
    benchmarks = []
    for m, k, l in ((1024, 4096, 1), (2048, 2048, 4)):
        nbytes = l * (m * k // 2 + m * k // 16)
        for name, label, gbps in (("stream read, 1 chunk", "stream", 2000.0), ("stream read, 2 chunks", "stream", 2500.0),
                                  ("96_synthetic_gemv", "stage", 2250.0), ("96 other choice", "variant", 1250.0),
                                  ("95_prev", "predecessor", 50.0), ("cuBLAS FP16 GEMV on dequantized weights", "peer", 500.0)):
            row = {"name": f"{name}/{m}x1x{k}" + (f"x{l}" if l > 1 else ""), "run_type": "iteration", "time_unit": "us",
                   "real_time": nbytes / gbps / 1e3, "GB/s": gbps, "M": m, "N": 1, "K": k, "L": l, "label": label}
            if label != "stream":
                row["TFLOP/s"] = 2 * m * k * l / (row["real_time"] * 1e6)
            benchmarks.append(row)
    folder.mkdir()
    (folder / "96_synthetic_gemv.json").write_text(json.dumps({"context": ctx, "benchmarks": benchmarks}))
    run = load_runs(folder)[0]
    if {r["impl"] for r in run["results"]} & {"stream read, 1 chunk", "stream read, 2 chunks"}:
        failures.append("gemv: a streaming-read row was taken for a benchmark row")
    if sorted(round(c["gbps"]) for c in gemv_ceiling(run).values()) != [2500, 2500]:
        failures.append(f"gemv: the ceiling is not the best streaming read of each shape: {gemv_ceiling(run)}")
    text = gemv_table(run)
    for want in ("| 1024x1x4096 | streaming read (best of the run) | ceiling |", "| 96_synthetic_gemv | stage |",
                 "| 0.900 |", "| 0.500 |", "| 96 other choice | variant |"):
        if want not in text:
            failures.append(f"gemv table lacks {want!r}")
    if "96 other choice" in gemv_table(run, variants=False):
        failures.append("gemv table without variants lists a variant")
    if plt is not None:
        audit = []
        plot_stage(plt, run, None, audit)
        labels = audit[0]["labels"]
        for want in (CEILING_LABEL, "96_synthetic_gemv (stage)", "95_prev (predecessor)",
                     "cuBLAS FP16 GEMV on dequantized weights"):
            if want not in labels:
                failures.append(f"gemv plot: no legend entry {want!r}: {labels}")
        if not any(abs(v - 0.9) < 1e-9 for v in audit[0]["values"]):
            failures.append("gemv plot: the stage's fraction of the ceiling (0.9) is not drawn")
        if plot_overview(plt, [run]) and any(is_gemv(r) for g in overview_groups([run]).values() for r in g):
            failures.append("overview: a GEMV run is drawn among the GEMMs")
    return failures


def self_test(plt):
    """The synthetic data through load(), the plots and the tables; returns the list of failures."""
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        for stem, doc in synthetic_docs().items():
            (pathlib.Path(tmp) / f"{stem}.json").write_text(json.dumps(doc))
        runs = load_runs(tmp)
        bad = synthetic_docs()["99_synthetic"]
        bad["benchmarks"][0]["label"] = "stage SLOW"
        (pathlib.Path(tmp) / "bad" ).mkdir()
        (pathlib.Path(tmp) / "bad" / "bad.json").write_text(json.dumps(bad))
        try:
            load_runs(pathlib.Path(tmp) / "bad")
            failures.append("load() accepted the label 'stage SLOW'")
        except DataError:
            pass
        emu_impls = {r["impl"] for run in runs for r in run["results"] if r["emulated"]}
        if emu_impls != {"98_synthetic_emu", "98_synthetic_emu BN=128", "97_prev_emu"}:
            failures.append(f"EMULATED labels were not recognised: {sorted(emu_impls)}")
        audit = []
        if plt is not None:
            for run in runs:
                plot_stage(plt, run, None, audit)
            plot_overview(plt, runs, audit)
            # The same EMULATED rows in a run whose context does not say EMULATED: the rows must still stay out.
            plot_overview(plt, runs + [dict(runs[0], emulated=False)], audit)
            yours = dict(runs[1], ctx=dict(runs[1]["ctx"], gpu="another GPU"), source="yours")
            plot_beside(plt, runs[1], yours, None, audit)
            plot_overview(plt, runs + [yours], audit)
        for fig in audit:
            if SENTINEL_TFLOPS in fig["values"]:
                failures.append(f"{fig['name']}: an EMULATED row is drawn in a performance panel")
            for label in fig["labels"]:
                if any(label == impl or label.startswith(impl + " (") for impl in emu_impls):
                    failures.append(f"{fig['name']}: an EMULATED row has the legend entry {label!r}")
        labels = {}
        for fig in audit:
            labels.setdefault(fig["name"], []).extend(fig["labels"])
        if plt is not None:
            if "99_synthetic BN=128 (variant)" not in labels.get("99_synthetic.svg", []):
                failures.append("99_synthetic.svg: the variant is not drawn")
            if "99_synthetic BN=128" not in labels.get("overview.svg", []):
                failures.append("overview.svg: the variant is not drawn")
        text = table(runs)
        if f"{SENTINEL_TFLOPS:.2f}" in text:
            failures.append("table: an EMULATED row's TFLOP/s is printed")
        ratio = re.compile(r"^\d[\d.e+-]*x\b")
        rows = [[c.strip() for c in line.strip().strip("|").split("|")] for line in text.splitlines() if line.startswith("| ")]
        rows = [c for c in rows if c[0] != "stage"]
        emulated_rows = [c for c in rows if c[0] in emu_impls]
        for c in emulated_rows:
            if c[3] != EMULATED_TEXT or c[4:] != ["-", "-", "-"]:
                failures.append(f"table: EMULATED row shows performance or a ratio: {c}")
        if len(emulated_rows) != 6:  # stage and variant of 98_synthetic_emu at three shapes
            failures.append(f"table: {len(emulated_rows)} EMULATED rows instead of 6")
        variant_rows = [c for c in rows if c[0] == "99_synthetic BN=128"]
        if len(variant_rows) != 3 or not all(ratio.match(c[5]) and ratio.match(c[6]) for c in variant_rows):
            failures.append(f"table: the variant's rows are missing or lack ratios: {variant_rows}")
        failures += gemv_self_test(plt, pathlib.Path(tmp) / "gemv")
        sentence = gpu_sentences(runs)
        if "Stage 98 ran on a **synthetic** with `tcgen05` emulated" not in sentence or \
                "Stage 99 was measured on a **synthetic**." not in sentence:
            failures.append(f"the GPU sentence is wrong: {sentence!r}")
    return failures


# --- What the script writes -----------------------------------------------------------------------------------

def generated_texts(runs, model):
    """{file: its new text} for every file with a generated section; files without the markers are skipped."""
    texts = {}

    def put(path, body, begin=BEGIN, end=END):
        if not path.exists():
            return
        new = between_markers(texts.get(path, path.read_text()), body, begin, end)
        if new is not None:
            texts[path] = new
    for run in runs:
        readme = ROOT / run["stage"] / "README.md"
        put(readme, table([run]))
        if run["extras"] and not is_gemv(run):
            put(readme, bandwidth_table(run), BW_BEGIN, BW_END)
    # Each ncu file fills the <!-- ncu:<file stem> --> section of the READMEs of its stages.
    for ncu_path in sorted(DATA.glob("ncu_*.json")) + sorted(DATA.glob("bank_conflicts.json")):
        doc = json.loads(ncu_path.read_text())
        for stage in doc["stages"]:
            put(ROOT / stage / "README.md", ncu_table(doc), f"<!-- ncu:{ncu_path.stem}:begin -->",
                f"<!-- ncu:{ncu_path.stem}:end -->")
    docs_readme = ROOT / "docs" / "README.md"
    put(docs_readme, table(runs) if runs else "No benchmark data yet.\n")
    put(docs_readme, gpus_section(runs), GPUS_BEGIN, GPUS_END)
    put(docs_readme, layers_section(runs, model), LAYERS_BEGIN, LAYERS_END)
    put(ROOT / "README.md", gpus_section(runs), GPUS_BEGIN, GPUS_END)
    return texts


def plot_sources(runs, model, bank_maps):
    """{plot file: the data files it is drawn from}."""
    out = {PLOTS / f"{run['stage']}.svg": sources(run, model) for run in runs}
    if runs:
        out[PLOTS / "overview.svg"] = [r["path"] for group in overview_groups(runs).values() for r in group]
    for path, _ in bank_maps:
        out[PLOTS / path.name.replace(".json", ".svg")] = [path]
    return out


def render_all(plt, runs, model, bank_maps):
    """{plot file: SVG bytes}."""
    out = {PLOTS / f"{run['stage']}.svg": plot_stage(plt, run, model) for run in runs}
    if runs:
        out[PLOTS / "overview.svg"] = plot_overview(plt, runs)
    for path, doc in bank_maps:
        out[PLOTS / path.name.replace(".json", ".svg")] = plot_bank_map(plt, path, doc)
    return out


OTHER_CHECKS = ["b200_model.py", "timeline.py", "tile_order.py", "pipeline_diagram.py", "test_results.py"]


def rel(path):
    try:
        return str(pathlib.Path(path).resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


def check(plt, why, runs, model, bank_maps, others=True):
    failures, notes = [], []
    failures += self_test(plt)
    for path, new in generated_texts(runs, model).items():
        if path.read_text() != new:
            failures.append(f"{rel(path)}: a generated section is stale: run python3 docs/plot.py")
    for path, srcs in plot_sources(runs, model, bank_maps).items():
        if not path.exists():
            failures.append(f"{rel(path)} is missing: run python3 docs/plot.py")
        elif plotting.recorded_digest(path) != plotting.digest(srcs):
            failures.append(f"{rel(path)} is stale: it was not drawn from the current "
                            f"{', '.join(rel(s) for s in srcs)}: run python3 docs/plot.py")
    compared = False
    if plt is not None and why is None:
        for path, data in render_all(plt, runs, model, bank_maps).items():
            if path.exists() and path.read_bytes() != data:
                failures.append(f"{rel(path)} is not what docs/plot.py draws now: run python3 docs/plot.py")
        compared = True
    if others:
        for script in OTHER_CHECKS:
            p = subprocess.run([sys.executable, str(ROOT / "docs" / script), "--check"], capture_output=True, text=True)
            if p.returncode == 77:
                notes.append(f"docs/{script} --check skipped: {p.stdout.strip().splitlines()[-1] if p.stdout.strip() else ''}")
            elif p.returncode != 0:
                failures.append(f"docs/{script} --check failed:\n    " + "\n    ".join((p.stdout + p.stderr).strip().splitlines()))
    print(f"checked {len(runs)} benchmark runs, {len(plot_sources(runs, model, bank_maps))} plots (their data"
          f"{' and their bytes' if compared else ''}), the generated sections of "
          f"{len(generated_texts(runs, model))} READMEs" + (f", and {', '.join(OTHER_CHECKS)}" if others else ""))
    for n in notes:
        print(n)
    for f in failures:
        print(f"FAILED: {f}")
    if failures:
        return 1
    if not compared:
        print(f"SKIPPED: the plots' bytes were not compared: {why}")
        return 77
    return 0


def results_mode(plt, why, runs, model, results_dir, out_dir):
    results_dir = pathlib.Path(results_dir).resolve()
    out_dir = pathlib.Path(out_dir).resolve() if out_dir else results_dir / "plots"
    docs = (ROOT / "docs").resolve()
    if out_dir == docs or docs in out_dir.parents:
        print(f"--out {out_dir}: inside docs/, which --results never touches; choose another folder")
        return 2
    if not results_dir.is_dir():
        print(f"--results {results_dir}: no such folder")
        return 2
    try:
        yours = load_runs(results_dir)
    except (DataError, KeyError, ValueError) as e:
        print(f"bad data in {results_dir}: {e}")
        return 1
    if not yours:
        print(f"--results {results_dir}: no benchmark JSON there (cmake -DGEMM_RESULTS_DIR={results_dir} ..., then "
              "cmake --build build --target run_bench_stage00 or bench)")
        return 1
    if plt is None:
        print(why)
        return 1
    if why:
        print(f"note: {why.split(':')[0]}; fine for your own plots")
    for run in yours:
        run["source"] = results_dir.name
    by_stage = {r["stage"]: r for r in runs}
    for run in yours:
        path = out_dir / f"{run['stage']}.svg"
        plotting.write_if_changed(path, plot_beside(plt, by_stage.get(run["stage"]), run, model))
        print("wrote", path)
    path = out_dir / "overview.svg"
    plotting.write_if_changed(path, plot_overview(plt, [by_stage[r["stage"]] for r in yours if r["stage"] in by_stage]
                                                  + yours))
    print("wrote", path)
    path = out_dir / "results.md"
    plotting.write_if_changed(path, f"# Your results ({results_dir})\n\n{gpus_section(yours)}\n{table(yours)}")
    print("wrote", path)
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="change nothing; exit 1 if a plot or a table is stale")
    ap.add_argument("--no-other-checks", action="store_true", help="with --check: skip the other scripts' checks")
    ap.add_argument("--results", metavar="DIR", help="draw the benchmark JSON in DIR beside docs/data")
    ap.add_argument("--out", metavar="OUT", help="with --results: where the plots go (default DIR/plots)")
    args = ap.parse_args()
    if args.out and not args.results:
        ap.error("--out goes with --results")
    plt, why = plotting.pyplot()
    try:
        runs = load_runs(DATA)
        model = load_model()
        for p in sorted(DATA.glob("ncu_*.json")):
            if "stages" not in json.loads(p.read_text()):
                raise DataError(f"{p}: not an ncu_metrics.py file")
        bank_maps = [(p, json.loads(p.read_text())) for p in sorted(DATA.glob("*_bank_map.json"))]
    except (DataError, json.JSONDecodeError, KeyError, ValueError) as e:
        print(f"bad data: {e}")
        return 1
    for folder in missing_data(runs):
        print(f"note: no data for {folder}: docs/data/{folder}.json is missing "
              f"(cmake --build build --target run_bench_stage{folder[:2]}); it has no plot")
    for run in runs:
        if run["emulated"] and not run.get("tests"):
            print(f"note: no test results for {run['stage']} (docs/data/{TESTS}/{run['stage']}.json, docs/test_results.py)")
        if not stage_style(run["stage"])[1]:
            print(f"note: {run['stage']} has no style in STAGE_STYLE (docs/plotting.py): drawn in grey")

    if args.results:
        return results_mode(plt, why, runs, model, args.results, args.out)
    if args.check:
        return check(plt, why, runs, model, bank_maps, others=not args.no_other_checks)

    changed = []
    for path, new in generated_texts(runs, model).items():
        if plotting.write_if_changed(path, new):
            changed.append(path)
    if plt is None or why:
        for path in changed:
            print("updated", rel(path))
        print(f"plots NOT redrawn: {why}")
        return 1
    for path, data in render_all(plt, runs, model, bank_maps).items():
        if plotting.write_if_changed(path, data):
            changed.append(path)
    for path in changed:
        print("updated", rel(path))
    if not changed:
        print("nothing changed: every plot and generated section is current")
    return 0


if __name__ == "__main__":
    sys.exit(main())
