#!/usr/bin/env python3
"""Turn the benchmark JSON in docs/data/ into the plots in docs/plots/ and the result tables.

    python3 docs/plot.py            redraw docs/plots/*.svg, rewrite the tables between
                                    <!-- results:begin --> / <!-- results:end --> in docs/README.md
                                    and in each stage's README.md
    python3 docs/plot.py --check    validate every docs/data/*.json and render everything into a
                                    temporary folder; changes nothing. A synthetic data set with every
                                    label checks that variants are drawn and that no EMULATED row is
                                    drawn or gets a ratio. Exit code 1 on a failure, 77 (ctest's
                                    "skipped") when matplotlib is missing.

Each docs/data/<stage>.json is one run of bench_stageNN (Google Benchmark JSON): the stage, its
predecessor and a library peer, timed in the same process, and possibly variants of the stage (other
configurations of its kernel, e.g. "05_tcgen05_2cta BN=128"). The label of each benchmark is its role
("stage", "variant", "predecessor", "peer"), followed by " EMULATED" where the row ran its tcgen05
instructions through the software emulator (a Hopper GPU): such a row's time measures the emulator, so
it never enters a plot and never gets a ratio; the tables list it with its time and the words
"EMULATED (not performance)". The counters hold TFLOP/s, GB/s, M, N, K, L. A run whose context
"tcgen05" starts with EMULATED is titled as such and left out of the overview altogether.
"""
import argparse
import json
import os
import pathlib
import re
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
DATA = ROOT / "docs" / "data"
PLOTS = ROOT / "docs" / "plots"
BEGIN, END = "<!-- results:begin -->", "<!-- results:end -->"
REQUIRED_CONTEXT = ["stage", "gpu", "sm_count", "sm_clock_max_mhz", "clocks_now", "driver_cuda_version",
                    "runtime_cuda_version", "commit", "tcgen05", "date"]
REQUIRED_COUNTERS = ["TFLOP/s", "GB/s", "M", "N", "K", "L"]
ROLE_STYLE = {"stage": dict(marker="o", lw=2.2), "variant": dict(marker="D", lw=1.8, ls="-."),
              "predecessor": dict(marker="s", lw=1.4, ls="--"), "peer": dict(marker="^", lw=1.4, ls=":")}
# The rows that are the stage itself: its own, and other configurations of its kernel.
OWN_ROLES = ("stage", "variant")
# A label may follow its role with this word: tcgen05 ran in the emulator, the time is not performance.
EMULATED = "EMULATED"
EMULATED_TEXT = "EMULATED (not performance)"
# Benchmarks that are not GEMMs (stage 03's quantizer and the copy it is measured against; stage 09's
# streaming-read ceiling).
BANDWIDTH_ROLES = ("quantizer", "copy", "stream")


class DataError(Exception):
    pass


def parse_label(label):
    """A benchmark's label as (role, emulated): "stage" -> ("stage", False), "variant EMULATED" ->
    ("variant", True); None for anything else."""
    words = str(label or "").split()
    if words and words[0] in ROLE_STYLE and words[1:] in ([], [EMULATED]):
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
            extras.append(dict(name=b.get("run_name", b["name"]).split("/")[0], role=b["label"],
                               shape=b.get("run_name", b["name"]).split("/")[1], gbps=float(b["GB/s"]),
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


def stamp(ctx):
    return (f"{ctx['gpu']} | SM clock max {ctx['sm_clock_max_mhz']} MHz | CUDA runtime {ctx['runtime_cuda_version']}, "
            f"driver {ctx['driver_cuda_version']} | {ctx['date'][:10]} | commit {ctx['commit']}")


def plot_stage(plt, run, out_dir, audit=None):
    results = performance(run["results"])
    left_out = emulated_names(run["results"])
    squares = sorted({shape_key(r) for r in results if is_square(shape_key(r))})
    others = sorted({shape_key(r) for r in results if not is_square(shape_key(r))})
    extras = run.get("extras", [])
    panels = (1 if squares else 0) + (1 if others else 0) + (1 if extras else 0)
    fig, axes = plt.subplots(1, max(1, panels), figsize=(6.5 * max(1, panels), 4.6), squeeze=False)
    axes = list(axes[0])
    if not panels:
        axes[0].axis("off")
        axes[0].text(0.5, 0.5, "nothing to plot: every row ran tcgen05 EMULATED\n(their times are in the results "
                     "table, as EMULATED)", ha="center", va="center", fontsize=10)
    impls = []
    for r in results:
        if (r["impl"], r["role"]) not in impls:
            impls.append((r["impl"], r["role"]))
    if squares:
        ax = axes.pop(0)
        for impl, role in impls:
            pts = sorted((r["M"], r["tflops"]) for r in results if r["impl"] == impl and is_square(shape_key(r)))
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], label=f"{impl} ({role})", **ROLE_STYLE[role])
        ax.set_xscale("log", base=2)
        ax.set_xticks([s[0] for s in squares], [str(s[0]) for s in squares])
        ax.set_xlabel("M = N = K")
        ax.set_ylabel("TFLOP/s (2MNK / time)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    if others:
        ax = axes.pop(0)
        width = 0.8 / max(1, len(impls))
        for i, (impl, role) in enumerate(impls):
            vals = []
            for key in others:
                match = [r["tflops"] for r in results if r["impl"] == impl and shape_key(r) == key]
                vals.append(match[0] if match else 0.0)
            ax.bar([j + i * width for j in range(len(others))], vals, width, label=f"{impl} ({role})")
        ax.set_xticks([j + width * (len(impls) - 1) / 2 for j in range(len(others))], [shape_text(k) for k in others],
                      fontsize=8)
        ax.set_xlabel("M x N x K")
        ax.set_ylabel("TFLOP/s")
        ax.grid(alpha=0.3, axis="y")
        ax.legend(fontsize=8)
    if extras:
        ax = axes.pop(0)
        shapes = sorted({e["shape"] for e in extras})
        names = []
        for e in extras:
            if e["name"] not in names:
                names.append(e["name"])
        width = 0.8 / len(names)
        for i, name in enumerate(names):
            vals = [next((e["gbps"] for e in extras if e["name"] == name and e["shape"] == sh), 0.0) for sh in shapes]
            ax.bar([j + i * width for j in range(len(shapes))], vals, width, label=name)
        ax.set_xticks([j + width * (len(names) - 1) / 2 for j in range(len(shapes))], shapes, fontsize=8)
        ax.set_ylabel("GB/s (fewest bytes the operation must move)")
        ax.grid(alpha=0.3, axis="y")
        ax.legend(fontsize=7)
    title = f"{run['stage']}: {run['ctx'].get('stage_idea', '')}"
    if run["emulated"]:
        title += "\nEMULATED tcgen05: these timings are NOT performance"
    if left_out:
        title += f"\nnot drawn (tcgen05 EMULATED, no performance meaning): {', '.join(left_out)}"
    fig.suptitle(title, fontsize=10)
    fig.text(0.5, 0.005, stamp(run["ctx"]), ha="center", fontsize=7, color="0.35")
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    path = out_dir / f"{run['stage']}.svg"
    if audit is not None:
        audit.append(drawn(fig, path.name))
    fig.savefig(path, metadata={"Date": None})
    plt.close(fig)
    return path


def is_gemv(run):
    return run["ctx"].get("kind") == "gemv"


def gemv_ceiling(run):
    """Per shape text ("7168x1x16384"), the fastest streaming-read row: the ceiling of a GEMV run."""
    best = {}
    for e in run.get("extras", []):
        if e["role"] == "stream" and e["gbps"] > best.get(e["shape"], (0, None))[0]:
            best[e["shape"]] = (e["gbps"], e)
    return {k: v[1] for k, v in best.items()}


def plot_gemv(plt, run, out_dir, audit=None):
    """Stage 09 (kind "gemv"): GB/s per shape for the stage, the streaming-read ceiling, the base and the
    peers (left), and every configuration as a fraction of the ceiling (right)."""
    results = performance(run["results"])
    ceiling = gemv_ceiling(run)
    keys = sorted({shape_key(r) for r in results}, key=lambda k: (k[0] * k[2] * k[3], k))
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(15, 5.2))
    impls = list(dict.fromkeys((r["impl"], r["role"]) for r in results))
    main = [("stream read (best)", "ceiling")] + [i for i in impls if i[1] != "variant"]
    width = 0.8 / len(main)
    for i, (impl, role) in enumerate(main):
        if role == "ceiling":
            vals = [ceiling[shape_text(k)]["gbps"] if shape_text(k) in ceiling else 0.0 for k in keys]
            style = dict(color="0.75", edgecolor="black", hatch="//")
        else:
            vals = [next((r["gbps"] for r in results if r["impl"] == impl and shape_key(r) == k), 0.0) for k in keys]
            style = {}
        ax.bar([j + i * width for j in range(len(keys))], vals, width, label=f"{impl} ({role})", **style)
    ax.set_xticks([j + width * (len(main) - 1) / 2 for j in range(len(keys))], [shape_text(k) for k in keys],
                  fontsize=7, rotation=30, ha="right")
    ax.set_xlabel("M x N x K (x L)")
    ax.set_yscale("log")
    ax.set_ylabel("GB/s (bytes a GEMV must move / time; log scale)")
    ax.grid(alpha=0.3, axis="y")
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.25), ncol=2)
    own = [i for i in impls if i[1] in OWN_ROLES]
    for impl, role in own:
        pts = [(j, r["gbps"] / ceiling[shape_text(k)]["gbps"]) for j, k in enumerate(keys) for r in results
               if r["impl"] == impl and shape_key(r) == k and shape_text(k) in ceiling]
        ax2.plot([p[0] for p in pts], [p[1] for p in pts], label=impl, **ROLE_STYLE[role])
    ax2.axhline(1.0, color="black", lw=0.8)
    ax2.set_xticks(range(len(keys)), [shape_text(k) for k in keys], fontsize=7, rotation=30, ha="right")
    ax2.set_ylabel("fraction of the streaming-read ceiling (same bytes, same run)")
    ax2.grid(alpha=0.3)
    ax2.legend(fontsize=7)
    fig.suptitle(f"{run['stage']}: {run['ctx'].get('stage_idea', '')}", fontsize=10)
    fig.text(0.5, 0.005, stamp(run["ctx"]), ha="center", fontsize=7, color="0.35")
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    path = out_dir / f"{run['stage']}.svg"
    if audit is not None:
        audit.append(drawn(fig, path.name))
    fig.savefig(path, metadata={"Date": None})
    plt.close(fig)
    return path


def gemv_table(run):
    """Stage 09's results table: time, GB/s and the fraction of the streaming-read ceiling per row."""
    ceiling = gemv_ceiling(run)
    lines = [f"**{run['stage']}**: {stamp(run['ctx'])}", "",
             "| shape (M x N x K x L) | implementation | role | time us | GB/s | of stream read | time / stage's |",
             "|---|---|---|---|---|---|---|"]
    by = {}
    for r in run["results"]:
        by.setdefault(shape_key(r), []).append(r)
    for key in sorted(by, key=lambda k: (k[0] * k[2] * k[3], k)):
        st = next((r for r in by[key] if r["role"] == "stage"), None)
        c = ceiling.get(shape_text(key))
        if c:
            lines.append(f"| {shape_text(key)} | stream read (best of the run) | ceiling | {1e3 * c['ms']:.2f} | "
                         f"{c['gbps']:.0f} | 1 | - |")
        for r in by[key]:
            frac = f"{r['gbps'] / c['gbps']:.3f}" if c else "-"
            vs = f"{r['ms'] / st['ms']:.2f}" if st and r is not st else "-"
            lines.append(f"| {shape_text(key)} | {r['impl']} | {r['role']} | {1e3 * r['ms']:.2f} | {r['gbps']:.0f} | "
                         f"{frac} | {vs} |")
    return "\n".join(lines) + "\n"


def plot_overview(plt, runs, out_dir, audit=None):
    fig, ax = plt.subplots(figsize=(8, 5))
    peers = {}
    skipped = []
    xs = set()
    for run in runs:
        if run["emulated"]:
            skipped.append(run["stage"])
            continue
        skipped += [f"{run['stage']}: {name}" for name in emulated_names(run["results"])]
        results = [r for r in performance(run["results"]) if is_square(shape_key(r))]
        xs.update(r["M"] for r in results)
        color = None
        for role in OWN_ROLES:  # the stage's line first, its variants after it in the same colour, dash-dotted
            for impl in dict.fromkeys(r["impl"] for r in results if r["role"] == role):
                pts = sorted((r["M"], r["tflops"]) for r in results if r["impl"] == impl and r["role"] == role)
                line, = ax.plot([p[0] for p in pts], [p[1] for p in pts], color=color,
                                label=run["stage"] if role == "stage" else impl,
                                **(dict(marker="o") if role == "stage" else dict(marker="D", ls="-.")))
                color = color or line.get_color()
        for r in results:
            if r["role"] == "peer":
                peers.setdefault(r["impl"], {})[r["M"]] = r["tflops"]
    for name, pts in peers.items():
        ax.plot(sorted(pts), [pts[x] for x in sorted(pts)], color="black", ls=":", marker="^", label=name)
    ax.set_xscale("log", base=2)
    xs = sorted(xs)
    ax.set_xticks(xs, [str(x) for x in xs])
    ax.set_yscale("log")
    ax.set_xlabel("M = N = K")
    ax.set_ylabel("TFLOP/s (log scale)")
    ax.grid(alpha=0.3, which="both")
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8)
    title = "Every stage on square problems"
    if skipped:
        title += f"\nnot shown (tcgen05 emulated, no performance meaning):\n{', '.join(skipped)}"
    ax.set_title(title, fontsize=10)
    envs = {}  # of the runs drawn: an emulated run's GPU did not produce any point of this plot
    for r in runs:
        if r["emulated"]:
            continue
        c = r["ctx"]
        key = f"{c['gpu']} | SM clock max {c['sm_clock_max_mhz']} MHz | CUDA {c['runtime_cuda_version']}, driver " \
              f"{c['driver_cuda_version']}"
        envs.setdefault(key, set()).update({c["date"][:10], c["commit"][:7]})
    fig.text(0.5, 0.005, " / ".join(f"{k} | {', '.join(sorted(v))}" for k, v in sorted(envs.items())), ha="center",
             fontsize=6, color="0.35")
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    path = out_dir / "overview.svg"
    if audit is not None:
        audit.append(drawn(fig, path.name))
    fig.savefig(path, metadata={"Date": None})
    plt.close(fig)
    return path


def plot_bank_map(plt, path, doc, out_dir):
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
    target = out_dir / path.name.replace(".json", ".svg")
    fig.savefig(target, metadata={"Date": None})
    plt.close(fig)
    return target


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
        note = " (tcgen05 EMULATED: not performance)" if run["emulated"] else ""
        lines.append(f"\n**{run['stage']}**{note}: {stamp(run['ctx'])}\n")
        lines += head + table_rows(run)
    return "\n".join(lines).strip() + "\n"


def rewrite_between_markers(path, body, begin=BEGIN, end=END):
    text = path.read_text()
    pattern = re.compile(re.escape(begin) + ".*?" + re.escape(end), re.S)
    if not pattern.search(text):
        return False
    path.write_text(pattern.sub(lambda _: f"{begin}\n{body}{end}", text))
    return True


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
    for ax in fig.axes:
        for line in ax.get_lines():
            values += [float(v) for v in line.get_ydata()]
        values += [float(p.get_height()) for p in ax.patches if hasattr(p, "get_height")]
        if ax.get_legend():
            labels += [t.get_text() for t in ax.get_legend().get_texts()]
    return dict(name=name, values=values, labels=labels)


def self_test(plt, out):
    """The synthetic data through load(), the plots and the tables; returns the list of failures."""
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        runs = []
        for stem, doc in synthetic_docs().items():
            (pathlib.Path(tmp) / f"{stem}.json").write_text(json.dumps(doc))
            runs.append(load(pathlib.Path(tmp) / f"{stem}.json"))
        bad = synthetic_docs()["99_synthetic"]
        bad["benchmarks"][0]["label"] = "stage SLOW"
        (pathlib.Path(tmp) / "bad.json").write_text(json.dumps(bad))
        try:
            load(pathlib.Path(tmp) / "bad.json")
            failures.append("load() accepted the label 'stage SLOW'")
        except DataError:
            pass
    emu_impls = {r["impl"] for run in runs for r in run["results"] if r["emulated"]}
    if emu_impls != {"98_synthetic_emu", "98_synthetic_emu BN=128", "97_prev_emu"}:
        failures.append(f"EMULATED labels were not recognised: {sorted(emu_impls)}")
    audit = []
    for run in runs:
        plot_stage(plt, run, out, audit)
    plot_overview(plt, runs, out, audit)
    # The same EMULATED rows in a run whose context does not say EMULATED: the rows must still stay out.
    plot_overview(plt, runs + [dict(runs[1], emulated=False)], out, audit)
    for fig in audit:
        if SENTINEL_TFLOPS in fig["values"]:
            failures.append(f"{fig['name']}: an EMULATED row is drawn in a performance panel")
        for label in fig["labels"]:
            if any(label == impl or label.startswith(impl + " (") for impl in emu_impls):
                failures.append(f"{fig['name']}: an EMULATED row has the legend entry {label!r}")
    labels = {fig["name"]: fig["labels"] for fig in audit}
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
    return failures


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="validate and render into a temporary folder only")
    args = ap.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: nothing plotted (pip install matplotlib)")
        return 77 if args.check else 1
    plt.rcParams["svg.hashsalt"] = "nvfp4-gemm"  # stable ids: regenerated plots diff cleanly

    try:
        runs = [load(p) for p in sorted(DATA.glob("*.json")) if "benchmarks" in json.loads(p.read_text())]
        for p in sorted(DATA.glob("ncu_*.json")):
            if "stages" not in json.loads(p.read_text()):
                raise DataError(f"{p}: not an ncu_metrics.py file")
        bank_maps = [(p, json.loads(p.read_text())) for p in sorted(DATA.glob("*_bank_map.json"))]
    except (DataError, json.JSONDecodeError, KeyError, ValueError) as e:
        print(f"bad data: {e}")
        return 1

    if args.check:
        with tempfile.TemporaryDirectory() as tmp:
            out = pathlib.Path(tmp)
            failures = self_test(plt, out)
            audit = []
            for run in runs:
                (plot_gemv if is_gemv(run) else plot_stage)(plt, run, out, audit)
                if is_gemv(run):
                    gemv_table(run)
            plot_overview(plt, runs, out, audit)
            for path, doc in bank_maps:
                plot_bank_map(plt, path, doc, out)
            table(runs)
            for run in runs:
                bandwidth_table(run)
            for ncu_path in sorted(DATA.glob("ncu_*.json")) + sorted(DATA.glob("bank_conflicts.json")):
                ncu_table(json.loads(ncu_path.read_text()))
            rendered = sorted(p.name for p in out.iterdir())
        # The real data too: no EMULATED row of it may reach a plot's legend.
        for run in runs:
            for name in emulated_names(run["results"]):
                failures += [f"{fig['name']}: EMULATED {name} is drawn" for fig in audit if name in fig["labels"]]
        print(f"checked {len(runs)} data files; rendered {len(rendered)} plots: {', '.join(rendered)}")
        for failure in failures:
            print(f"FAILED: {failure}")
        return 1 if failures else 0

    PLOTS.mkdir(parents=True, exist_ok=True)
    for run in runs:
        print("wrote", (plot_gemv if is_gemv(run) else plot_stage)(plt, run, PLOTS).relative_to(ROOT))
        stage_readme = ROOT / run["stage"] / "README.md"
        if stage_readme.exists() and rewrite_between_markers(stage_readme, gemv_table(run) if is_gemv(run)
                                                             else table([run])):
            print("updated", stage_readme.relative_to(ROOT))
        if run["extras"] and stage_readme.exists() and not is_gemv(run):
            rewrite_between_markers(stage_readme, bandwidth_table(run), BW_BEGIN, BW_END)
    if runs:
        print("wrote", plot_overview(plt, runs, PLOTS).relative_to(ROOT))
    for path, doc in bank_maps:
        print("wrote", plot_bank_map(plt, path, doc, PLOTS).relative_to(ROOT))
    # Each ncu file fills the <!-- ncu:<file stem> --> section of the READMEs of its stages.
    for ncu_path in sorted(DATA.glob("ncu_*.json")) + sorted(DATA.glob("bank_conflicts.json")):
        doc = json.loads(ncu_path.read_text())
        begin, end = f"<!-- ncu:{ncu_path.stem}:begin -->", f"<!-- ncu:{ncu_path.stem}:end -->"
        for stage in doc["stages"]:
            target = ROOT / stage / "README.md"
            if target.exists() and rewrite_between_markers(target, ncu_table(doc), begin, end):
                print("updated", target.relative_to(ROOT))
    readme = ROOT / "docs" / "README.md"
    if readme.exists() and rewrite_between_markers(readme, table(runs) if runs else "No benchmark data yet.\n"):
        print("updated", readme.relative_to(ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
