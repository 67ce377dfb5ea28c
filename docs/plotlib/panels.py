"""The panels of a stage's plot: each draws one axis and returns nothing; every panel has a title. Which panels a
run gets is decided by its kind (panels_of).
"""
import plotting
from plotting import series_style, stage_key, stage_style
from .data import (OWN_ROLES, short_commit, TESTS, gemv_ceiling, gemv_keys, impls_of, measure, is_square, model_same_as, model_series,
    modelled_variants, performance, predecessor_of, series_label, shape_key, shape_text)

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
                 f"{doc.get('cuda', '?')}, commit {short_commit(doc['commit'])}, {doc['date']})")


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


def panel_gemv_gpus(ax, run):
    """The stage's fraction of the streaming read on every GPU it was measured on (this run, then the runs of
    docs/data/timing under the same rotation rule), at the shapes all of them share: each fraction against
    the ceiling measured in its own run."""
    runs = [run] + run.get("other_gpus", [])
    shared = set.intersection(*[set(shape_text(k) for k in gemv_keys(r)) & set(gemv_ceiling(r)) for r in runs])
    keys = [k for k in gemv_keys(run) if shape_text(k) in shared]
    series = []
    for r in runs:
        ceiling = gemv_ceiling(r)
        rows = {shape_key(x): dict(fraction=x["gbps"] / ceiling[shape_text(shape_key(x))]["gbps"])
                for x in performance(r["results"]) if x["role"] == "stage" and shape_text(shape_key(x)) in shared}
        label = f"{r['stage']}, {r['ctx']['gpu']}"
        series.append((label, dict(color=GPU_COLOURS[len(series) % len(GPU_COLOURS)], edgecolor="black", lw=0.4), rows))
    placed = gemv_bars(ax, run, keys, series, lambda x: x["fraction"])
    for xs, vals, _ in placed:
        for x, v in zip(xs, vals):
            if v > 0:
                ax.text(x, v + 0.01, f"{v:.3f}", ha="center", va="bottom", fontsize=7, rotation=90)
    ax.axhline(1.0, color="black", lw=1, ls="--")
    ax.text(0.005, 0.985, "; ".join(f"{r['ctx']['gpu']}: {str(r['ctx']['date'])[:10]}, commit {short_commit(r['ctx']['commit'])}"
                                    for r in runs), ha="left", va="top", fontsize=8, transform=ax.transAxes)
    ax.set_ylim(0, 1.25)
    ax.set_ylabel("GB/s / GB/s of the streaming read")
    ax.grid(alpha=0.3, axis="y")
    ax.set_title("The stage on each GPU, as a fraction of that GPU's streaming read (same rotation rule)")


GPU_COLOURS = ["#2ca02c", "#98df8a", "#1f77b4", "#aec7e8"]


def gemv_panels(run, model):
    """A GEMV's panels: GB/s, the fraction of the streaming-read ceiling, every configuration of the stage, and
    where it was measured on more than one GPU, the fraction on each."""
    out = [("gemv_bandwidth", lambda ax: panel_gemv_bandwidth(ax, run)),
           ("gemv_fraction", lambda ax: panel_gemv_fraction(ax, run)),
           ("gemv_variants", lambda ax: panel_gemv_variants(ax, run))]
    if run.get("other_gpus"):
        out.append(("gemv_gpus", lambda ax: panel_gemv_gpus(ax, run)))
    return out


def gemm_panels(run, model):
    """A GEMM's panels: TFLOP/s on squares and other shapes, the ratio to the predecessor, and the bandwidth of
    non-GEMM rows; for a run whose tcgen05 ran EMULATED, the B200 MODEL and the test results instead."""
    results = performance(run["results"])
    stage = run["stage"]
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


# The panels of each way a kind is measured (data.measure: tools/stages.py's measured_like of the run's "kind"),
# and how many of them share a row (a GEMV's have ten shapes each: one to a row).
PANELS = {"gemm": gemm_panels, "gemv": gemv_panels}
PANELS_PER_ROW = {"gemm": 2, "gemv": 1}


def panels_of(run, model):
    """The panels of a run's plot, as (name, draw(ax)) pairs, in reading order, chosen by the run's kind."""
    return PANELS[measure(run)](run, model)
