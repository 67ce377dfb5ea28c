"""--check: the self-test on synthetic data, and the comparison of every plot and generated section with what the
package would write now.
"""
import json
import pathlib
import re
import subprocess
import sys
import tempfile

import plotting
import stages
from .data import DataError, EMULATED, EMULATED_TEXT, REQUIRED_CONTEXT, ROOT, gemv_ceiling, measure, load_runs, rel
from .panels import CEILING_LABEL, PANELS
from .figures import overview_groups, plot_beside, plot_overview, plot_sources, plot_stage, render_all
from .readme import gemv_table, generated_texts, gpu_sentences, table

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


def gemv_self_test(plt, folder):
    """A synthetic GEMV run (kind "gemv"): the streaming-read rows are its ceiling, never a benchmark row; its plot
    draws the ceiling, the stage, the base and the peer; its table gives each row's fraction of the ceiling."""
    failures = []
    ctx = {k: "synthetic" for k in REQUIRED_CONTEXT}
    ctx.update(stage="96_synthetic_gemv", stage_idea="synthetic GEMV of docs/plot.py --check", tcgen05="not used",
               date="2000-01-01T00:00:00", kind="nvfp4_gemv")
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
        if plot_overview(plt, [run]) and any(measure(r) == "gemv" for g in overview_groups([run]).values() for r in g):
            failures.append("overview: a GEMV run is drawn among the GEMMs")
    return failures


def kind_self_test(runs):
    """The panels follow the run's kind: a recorded kind wins, the first GEMV's spelling "gemv" is a GEMV, a run
    without one takes its stage's (tools/stages.py), and a kind no script knows yet is measured by its name."""
    failures = []
    base = dict(runs[0], kind=None)
    for ctx_kind, stage, want in (("nvfp4_gemv", "99_synthetic", "gemv"), ("gemv", "99_synthetic", "gemv"),
                                  ("fp32_gemm", "99_synthetic", "gemm"), ("group_gemm", "99_synthetic", "gemm"),
                                  ("int4_gemv", "99_synthetic", "gemv"),
                                  (None, "99_synthetic", "gemm")):
        ctx = {k: v for k, v in dict(base["ctx"], stage=stage, kind=ctx_kind).items() if v is not None}
        got = measure(dict(base, ctx=ctx, kind=stages.kind_of_run(ctx)))
        if got != want:
            failures.append(f"kind {ctx_kind!r}: measured like a {got}, not a {want}")
        if got not in PANELS:
            failures.append(f"kind {ctx_kind!r}: no panels for {got!r}")
    for s in stages.read():
        ctx = {"stage": s.folder}
        if stages.kind_of_run(ctx) != s.kind:
            failures.append(f"{s.folder}: a run without a kind is not given its stage's ({s.kind})")
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
        failures += kind_self_test(runs)
        sentence = gpu_sentences(runs)
        if "Stage 98 ran on a **synthetic** with `tcgen05` emulated" not in sentence or \
                "Stage 99 was measured on a **synthetic**." not in sentence:
            failures.append(f"the GPU sentence is wrong: {sentence!r}")
    return failures


OTHER_CHECKS = ["b200_model.py", "timeline.py", "tile_order.py", "pipeline_diagram.py", "test_results.py"]


def check(plt, why, runs, model, bank_maps, others=True):
    failures, notes = [], []
    failures += self_test(plt)
    readme = ROOT / "README.md"
    if stages.README_BEGIN not in readme.read_text():
        failures.append(f"README.md lacks the stage table's markers {stages.README_BEGIN} / {stages.README_END}")
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
